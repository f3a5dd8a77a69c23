import FacewireImage

/// A single image file as a source: one frame, or the same frame forever with `loop`.
///
/// JPEG files are sent as they are; other formats are decoded with OpenCV and encoded to JPEG
/// (see ``ImageFolderSource`` for the rules). The file is read once, when the source is created.
/// Not thread-safe.
public final class ImageFileSource: FrameSource {
    /// The image file.
    public let path: String
    /// Whether ``next()`` keeps returning the frame.
    public let loop: Bool
    /// Always `nil`: a still image has no rate of its own.
    public let nominalFPS: Double? = nil
    /// The frame this source returns.
    public let frame: SourceFrame
    private var delivered = false

    /// Reads and checks the image.
    /// - Parameters:
    ///   - path: a `.jpg`/`.jpeg`, `.png`, `.bmp`, `.ppm`/`.pgm`/`.pnm`, `.webp` or `.tif` file.
    ///   - loop: return the frame forever instead of once.
    ///   - jpegQuality: quality when the image has to be re-encoded (default 85).
    ///   - limits: size limits for the file and the image.
    ///   - validateJPEG: decode JPEG files once to make sure they are complete.
    /// - Throws: ``FrameSourceError`` `.notSupported` for an unknown extension, `.cannotOpen` when the
    ///   file cannot be read or decoded.
    public init(
        path: String, loop: Bool = false, jpegQuality: Int = 85, limits: ImageLimits = .standard,
        validateJPEG: Bool = true
    ) throws {
        guard let kind = ImageFileKind(path: path) else {
            throw FrameSourceError(.notSupported, "'\(path)' does not have an image file extension")
        }
        self.path = path
        self.loop = loop
        do {
            let loader = try StillImageLoader(limits: limits, jpegQuality: jpegQuality, validateJPEG: validateJPEG)
            frame = try loader.load(path: path, kind: kind)
        } catch {
            throw FrameSourceError(.cannotOpen, "cannot use image '\(path)': \(error)")
        }
    }

    public var description: String {
        "image \(path) (\(frame.width)×\(frame.height), \(frame.reencoded ? "re-encoded" : "passthrough"))"
    }

    public func next() throws -> SourceFrame? {
        if delivered, !loop { return nil }
        delivered = true
        return frame
    }
}
