import FacewireImage
import Foundation

/// The image files of a folder, in name order, as frames.
///
/// * Only files with an image extension are used (`.jpg`, `.jpeg`, `.png`, `.bmp`, `.ppm`, `.pgm`,
///   `.pbm`, `.pnm`, `.webp`, `.tif`, `.tiff`, any case); other files and hidden files are ignored.
///   Sub-folders are not searched. Names sort by Unicode code points (`img10` before `img2`: pad numbers).
/// * JPEG files are sent byte for byte, with their stored size and EXIF orientation. Other formats are
///   decoded with OpenCV (upright) and encoded to JPEG at `jpegQuality`.
/// * A file that cannot be used (unreadable, corrupt, too large) is skipped and recorded in ``skipped``
///   once; it is not retried on later loops.
///
/// Not thread-safe.
public final class ImageFolderSource: FrameSource {
    /// The folder.
    public let directory: String
    /// Whether the folder starts again after the last file.
    public let loop: Bool
    /// Always `nil`: still images have no rate of their own.
    public let nominalFPS: Double? = nil
    /// The image files still in rotation (full paths, in name order). Skipped files are removed.
    public private(set) var files: [String]
    /// Files left out so far, with reasons.
    public private(set) var skipped: [SkippedFile] = []
    /// Frames returned so far, over all loops.
    public private(set) var framesRead = 0

    /// How many files were skipped.
    public var skippedCount: Int { skipped.count }
    /// JPEG validation decodes done so far (each file's content is validated once, not on every loop).
    var validations: Int { loader.validations }

    private var kinds: [String: ImageFileKind]
    private var index = 0
    private let loader: StillImageLoader

    /// Lists the folder.
    /// - Parameters:
    ///   - directory: the folder to read.
    ///   - loop: start again after the last file.
    ///   - jpegQuality: quality for re-encoded (non-JPEG) files, default 85.
    ///   - limits: size limits for each file and image.
    ///   - validateJPEG: decode each JPEG once (at 1/8 scale) so corrupt files are skipped here.
    /// - Throws: ``FrameSourceError`` `.notFound`, `.cannotOpen` (not a readable folder) or `.emptyFolder`.
    public init(
        directory: String, loop: Bool = false, jpegQuality: Int = 85, limits: ImageLimits = .standard,
        validateJPEG: Bool = true
    ) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else {
            throw FrameSourceError(.notFound, "folder '\(directory)' does not exist")
        }
        guard isDirectory.boolValue else {
            throw FrameSourceError(.cannotOpen, "'\(directory)' is not a folder")
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw FrameSourceError(.cannotOpen, "cannot list '\(directory)': \(error.localizedDescription)")
        }
        let base = directory.hasSuffix("/") ? directory : directory + "/"
        var kinds: [String: ImageFileKind] = [:]
        var files: [String] = []
        for name in names.sorted(by: { Array($0.unicodeScalars.map(\.value)).lexicographicallyPrecedes($1.unicodeScalars.map(\.value)) })
        where !name.hasPrefix(".") {
            let path = base + name
            guard let kind = ImageFileKind(path: name) else { continue }
            var isSubdirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isSubdirectory), !isSubdirectory.boolValue
            else { continue }
            files.append(path)
            kinds[path] = kind
        }
        guard !files.isEmpty else {
            throw FrameSourceError(.emptyFolder, "folder '\(directory)' has no image files")
        }
        self.directory = directory
        self.loop = loop
        self.files = files
        self.kinds = kinds
        do {
            loader = try StillImageLoader(limits: limits, jpegQuality: jpegQuality, validateJPEG: validateJPEG)
        } catch {
            throw FrameSourceError(.cannotOpen, "\(error)")
        }
    }

    public var description: String {
        var text = "folder \(directory) (\(files.count) images"
        if !skipped.isEmpty { text += ", \(skipped.count) skipped" }
        return text + ")"
    }

    /// Returns the next usable file as a frame, skipping (and recording) unusable ones.
    /// - Returns: `nil` after the last file unless `loop` is set.
    /// - Throws: ``FrameSourceError`` `.noReadableImages` once every file has been skipped.
    public func next() throws -> SourceFrame? {
        while true {
            if index >= files.count {
                if files.isEmpty {
                    let reasons = skipped.prefix(3).map(\.description).joined(separator: "; ")
                    throw FrameSourceError(
                        .noReadableImages,
                        "none of the \(skipped.count) image files in '\(directory)' could be read (\(reasons))")
                }
                guard loop else { return nil }
                index = 0
            }
            let path = files[index]
            do {
                let frame = try loader.load(path: path, kind: kinds[path] ?? .other)
                index += 1
                framesRead += 1
                return frame
            } catch {
                skipped.append(SkippedFile(path: path, reason: "\(error)"))
                files.remove(at: index)
                kinds[path] = nil
            }
        }
    }
}
