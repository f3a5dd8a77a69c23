import FacewireImage

/// Something that finds faces in an image.
///
/// **Threading:** detectors own native OpenCV state and are not thread-safe, hence not `Sendable`. Create one
/// per thread and keep it for the thread's lifetime (creation loads the model). ``detect(_:)`` blocks while
/// OpenCV runs; call it from your own worker thread.
public protocol FaceDetector: AnyObject {
    /// Finds faces in `image` (grey or BGR), best first, in `image`'s pixel coordinates.
    /// - Throws: ``DetectionError`` when the image is invalid or OpenCV fails.
    func detect(_ image: PixelImage) throws -> [DetectedFace]

    /// The width the detector scales images to before running, or `nil` when it runs at the image's own size.
    /// ``FrameAnalyzer`` uses it to decode JPEGs only as large as needed.
    var inputWidth: Int? { get }
}

extension FaceDetector {
    /// Default: the detector runs at the image's own size.
    public var inputWidth: Int? { nil }
}
