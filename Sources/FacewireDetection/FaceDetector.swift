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

    /// The base width for an upright image `imageWidth` pixels wide: ``inputWidth``, or more for a large image when
    /// the detector's width follows the image (the CNN backends at their default width: ``NativeDetector``).
    func inputWidth(forImageWidth imageWidth: Int) -> Int?

    /// The confidence at or above which this detector's faces may start a track: its own score distribution's
    /// operating point, carried to the collector in `FrameResult.track_score` (SPEC 6.2). nil: the collector's
    /// default (0.7).
    var trackScore: Float? { get }
}

extension FaceDetector {
    /// Default: the detector runs at the image's own size.
    public var inputWidth: Int? { nil }

    /// Default: ``inputWidth`` whatever the image.
    public func inputWidth(forImageWidth imageWidth: Int) -> Int? { inputWidth }

    /// Default: none (the collector's default applies).
    public var trackScore: Float? { nil }

    /// Finds faces at the detector's base ``inputWidth``.
    public func detect(_ image: PixelImage) throws -> [DetectedFace] {
        try detect(image, inputWidth: inputWidth)
    }
}
