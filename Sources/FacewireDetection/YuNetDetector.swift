import FacewireVocabulary
import FacewireOpenCV
import FacewireImage

/// YuNet (OpenCV's `FaceDetectorYN`, model `face_detection_yunet_2022mar.onnx`): boxes with five landmarks.
///
/// OpenCV 4.6 can only load the 2022mar model (not the older `yunet.onnx` nor 2023mar). Images smaller than
/// 64 px are padded internally, because YuNet fails on them. One instance per thread.
public final class YuNetDetector: FaceDetector {
    /// The model file name the detector is usually distributed under.
    public static let modelFileName = "face_detection_yunet_2022mar.onnx"
    /// Default input width: AP on the DEV set is highest at 320 px, and it is the fastest (see BENCHMARKS.md).
    public static let defaultInputWidth = 320
    /// Default score threshold.
    public static let defaultScoreThreshold: Float = 0.6

    /// Faces at or above this score may start a track (``FaceDetector/trackScore``): ByteTrack's high threshold, which
    /// suits YuNet's scores (its report threshold, 0.6, lets 4 faces through on the 17 face-free images).
    public static let defaultTrackScore: Float = 0.7

    private let native: NativeDetector

    /// The width images are scaled to before detection (`nil`: each image's own size).
    public var inputWidth: Int? { native.inputWidth }

    /// ``inputWidth``, raised for large images when it is the default (``NativeDetector/baseWidth(forImageWidth:)``).
    public func inputWidth(forImageWidth imageWidth: Int) -> Int? { native.baseWidth(forImageWidth: imageWidth) }

    public var trackScore: Float? { Self.defaultTrackScore }

    /// Loads the model.
    /// - Parameters:
    ///   - modelPath: path to `face_detection_yunet_2022mar.onnx`.
    ///   - scoreThreshold: minimum confidence in `0...1`.
    ///   - nmsThreshold: IoU above which overlapping boxes are merged.
    ///   - inputWidth: width to scale images to before detection; `nil` runs at each image's size.
    ///   - maxFaces: most faces returned per image (best first).
    ///   - refineLandmarks: re-detect tilted faces on an upright crop for better landmarks and `faceAngle` (costs
    ///     one small extra detection per tilted face at least 40 px tall).
    ///   - runtime: what runs the network (OpenVINO only once ``OpenVINOLibrary/load(_:)`` succeeded; the same
    ///     faces as `FaceDetectorYN`).
    /// - Throws: ``DetectionError`` `.modelNotFound`, `.modelLoadFailed` or `.invalidConfiguration`.
    public init(
        modelPath: String, scoreThreshold: Float = YuNetDetector.defaultScoreThreshold, nmsThreshold: Float = 0.3,
        inputWidth: Int? = YuNetDetector.defaultInputWidth, maxFaces: Int = AnalysisOptions.maxFacesLimit,
        refineLandmarks: Bool = true, runtime: InferenceRuntime = .opencv, widthFollowsImage: Bool = false
    ) throws {
        native = try NativeDetector.create(
            what: "YuNet model", path: modelPath, inputWidth: inputWidth, scoreThreshold: scoreThreshold,
            maxFaces: maxFaces,
            .yunet(modelPath: modelPath, scoreThreshold: scoreThreshold, nmsThreshold: nmsThreshold, topK: 5000, runtime: runtime))
        native.refineTilted = refineLandmarks
        native.widthFollowsImage = widthFollowsImage
    }

    /// Finds faces, best first, in `image`'s coordinates.
    public func detect(_ image: PixelImage, inputWidth: Int?) throws -> [DetectedFace] {
        try native.detect(image, inputWidth: inputWidth)
    }
}
