import FacewireRuntime
import Foundation

/// Opens the right ``FrameSource`` for a path.
///
/// * `-` → ``MJPEGStreamSource`` on standard input (a motion-JPEG byte stream, e.g. from `ffmpeg -f mjpeg -`)
/// * `/dev/video*`, or a device of the simulation → ``V4L2Camera``
/// * a folder → ``ImageFolderSource``
/// * a file with an image extension (`.jpg`, `.jpeg`, `.png`, `.bmp`, `.ppm`, `.webp`, ...) → ``ImageFileSource``
/// * a URL (`rtsp://`, `http://`, ...) → a ``VideoFileSource`` read continuously by a ``LatestFrameSource``
/// * any other file → ``VideoFileSource`` (OpenCV/FFmpeg decides whether it can read it; motion JPEG is passed
///   through undecoded)
///
/// - Parameters:
///   - path: the source.
///   - loop: start again at the end (files and folders).
///   - jpegQuality: quality (1...100) for frames that have to be encoded; JPEG is passed through.
///   - camera: what to ask a camera for (its quality is `jpegQuality`).
///   - backend: how cameras are reached (``V4L2Backends/current()`` by default).
///   - counters: where sources count what they drop or repair.
/// - Returns: a source that is not yet shared with any other thread; move it to the capture thread.
/// - Throws: ``FrameSourceError`` with `.notFound`, `.notSupported`, `.cannotOpen` or `.emptyFolder`.
public func openFrameSource(
    _ path: String, loop: Bool, jpegQuality: Int, camera: V4L2Camera.Settings = V4L2Camera.Settings(),
    backend: V4L2Backend? = nil, counters: Counters? = nil
) throws -> sending any FrameSource {
    if path == "-" {
        return MJPEGStreamSource(fd: 0, counters: counters)
    }
    var cameras = backend
    if cameras == nil, path.hasPrefix("/dev/") { cameras = try V4L2Backends.current() }
    if let cameras, path.hasPrefix("/dev/video") || cameras.devicePaths().contains(path) {
        var settings = camera
        settings.jpegQuality = jpegQuality
        return try V4L2Camera(path: path, backend: cameras, settings: settings, counters: counters)
    }
    if path.contains("://"), !path.hasPrefix("file://") {
        // A network stream paces itself: read it continuously and keep the newest frame.
        return LatestFrameSource(
            wrapping: try VideoFileSource(path: path, loop: false, jpegQuality: jpegQuality, counters: counters), counters: counters)
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
    return try VideoFileSource(path: path, loop: loop, jpegQuality: jpegQuality, counters: counters)
}

/// Which ``V4L2Backend`` cameras are reached through.
public enum V4L2Backends {
    /// The environment variable that names a ``SimulatedV4L2/Script`` file to use instead of libv4l2.
    public static let simulationVariable = "FACEWIRE_V4L2_SIMULATION"

    /// Makes the simulated backend from a script file; set at start-up by the binary (FacewireTesting's
    /// `SimulatedV4L2`, which lives beside the other test doubles, not in this module). Nil: no simulation.
    nonisolated(unsafe) public static var makeSimulation: ((String) throws -> V4L2Backend)?

    /// libv4l2, or the simulation when `FACEWIRE_V4L2_SIMULATION` names a script.
    public static func current() throws -> V4L2Backend {
        if let script = ProcessInfo.processInfo.environment[simulationVariable], !script.isEmpty {
            guard let makeSimulation else {
                throw FrameSourceError(.cannotOpen, "\(simulationVariable)=\(script): this build has no V4L2 simulation")
            }
            do {
                return try makeSimulation(script)
            } catch {
                throw FrameSourceError(.cannotOpen, "\(simulationVariable)=\(script): cannot read the simulation script: \(error)")
            }
        }
        return LibV4L2()
    }
}
