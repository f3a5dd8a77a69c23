import FacewireVocabulary
import FacewireImage

/// Something that finds faces in an image.
///
/// **Threading:** detectors own native OpenCV state and are not thread-safe, hence not `Sendable`. Create one
/// per thread and keep it for the thread's lifetime (creation loads the model). ``detect(_:inputWidth:)`` blocks
/// while OpenCV runs; call it from your own worker thread.
public protocol FaceDetector: AnyObject {
    /// Finds faces in `image` (grey or BGR), best first, in `image`'s pixel coordinates.
    /// - Parameters:
    ///   - image: the image to search.
    ///   - inputWidth: the width to scale the image to before running the model (aspect kept), or `nil` to run
    ///     at the image's own size. Results are always in `image`'s coordinates.
    /// - Throws: ``DetectionError`` when the image or the width is invalid, or OpenCV fails.
    func detect(_ image: PixelImage, inputWidth: Int?) throws -> [DetectedFace]

    /// The base width the detector scales images to (the "low accuracy" width, see ``AnalysisOptions``), or
    /// `nil` when it runs at the image's own size. ``FrameAnalyzer`` uses it to decode JPEGs only as large as
    /// needed.
    var inputWidth: Int? { get }
}

extension FaceDetector {
    /// Default: the detector runs at the image's own size.
    public var inputWidth: Int? { nil }

    /// Finds faces at the detector's base ``inputWidth``.
    public func detect(_ image: PixelImage) throws -> [DetectedFace] {
        try detect(image, inputWidth: inputWidth)
    }
}
