import Foundation

/// Opens the right ``FrameSource`` for a path.
///
/// * a folder → ``ImageFolderSource``
/// * a file with an image extension (`.jpg`, `.jpeg`, `.png`, `.bmp`, `.ppm`, `.webp`, ...) → ``ImageFileSource``
/// * any other file → ``VideoFileSource`` (OpenCV/FFmpeg decides whether it can read it)
/// * `/dev/video*` → not supported yet (camera capture comes later)
///
/// - Parameters:
///   - path: the folder, image or video.
///   - loop: start again at the end.
///   - jpegQuality: quality (1...100) for frames that have to be encoded; JPEG files are passed through.
/// - Returns: a source that is not yet shared with any other thread; move it to the capture thread.
/// - Throws: ``FrameSourceError`` with `.notFound`, `.notSupported`, `.cannotOpen` or `.emptyFolder`.
public func openFrameSource(_ path: String, loop: Bool, jpegQuality: Int) throws -> sending any FrameSource {
    if path.hasPrefix("/dev/video") {
        throw FrameSourceError(.notSupported, "camera capture ('\(path)') is not supported yet; use a video file or a folder")
    }
    var isDirectory: ObjCBool = false
    guard !path.isEmpty, FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
        throw FrameSourceError(.notFound, "'\(path)' does not exist")
    }
    if isDirectory.boolValue {
        return try ImageFolderSource(directory: path, loop: loop, jpegQuality: jpegQuality)
    }
    guard FileManager.default.isReadableFile(atPath: path) else {
        throw FrameSourceError(.cannotOpen, "'\(path)' is not readable")
    }
    if ImageFileKind(path: path) != nil {
        return try ImageFileSource(path: path, loop: loop, jpegQuality: jpegQuality)
    }
    return try VideoFileSource(path: path, loop: loop, jpegQuality: jpegQuality)
}
