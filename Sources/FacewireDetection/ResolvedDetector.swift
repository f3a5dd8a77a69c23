import FacewireOpenCV

/// A ``DetectorConfiguration`` with every choice made: the concrete backend, model file and parameters.
/// Build the detector with ``makeDetector()``; show ``note`` to the user when it is set.
public struct ResolvedDetector: Sendable, Equatable {
    /// The concrete backend (never ``DetectorConfiguration/Backend/auto``).
    public var backend: DetectorConfiguration.Backend
    /// The model file; for the cascade, `nil` means OpenCV's default frontal-face cascade.
    public var modelPath: String?
    /// Width images are scaled to before detection.
    public var inputWidth: Int
    /// Whether ``inputWidth`` is the backend's default, which grows for frames wider than 1280 (the CNN backends:
    /// ``NativeDetector/baseWidth(forImageWidth:)``); false when the user chose the width.
    public var inputWidthFollowsImage = false
    /// Minimum confidence.
    public var scoreThreshold: Float
    /// Most faces returned per image.
    public var maxFaces: Int
    /// Whether tilted faces get their landmarks refined (YuNet and CenterFace).
    public var refineLandmarks: Bool
    /// How long the synthetic test detector waits per frame, in milliseconds.
    public var syntheticMilliseconds: Int = 50
    /// What runs the network (OpenVINO only once its library is loaded).
    public var runtime: InferenceRuntime = .opencv
    /// Why the choice differs from what was asked (for example the cascade fallback), or `nil`.
    public var note: String?

    /// Creates a resolved configuration.
    public init(
        backend: DetectorConfiguration.Backend, modelPath: String?, inputWidth: Int, scoreThreshold: Float,
        maxFaces: Int, refineLandmarks: Bool = true, note: String? = nil
    ) {
        self.backend = backend
        self.modelPath = modelPath
        self.inputWidth = inputWidth
        self.scoreThreshold = scoreThreshold
        self.maxFaces = maxFaces
        self.refineLandmarks = refineLandmarks
        self.note = note
    }

    /// Loads the model and returns a new detector (one per thread).
    /// - Throws: ``DetectionError``.
    public func makeDetector() throws -> any FaceDetector {
        switch backend {
        case .yunet, .centerface:
            guard let modelPath else {
                throw DetectionError(.invalidConfiguration, "the \(backend.rawValue) backend needs a model path")
            }
            if backend == .yunet {
                return try YuNetDetector(
                    modelPath: modelPath, scoreThreshold: scoreThreshold, inputWidth: inputWidth, maxFaces: maxFaces,
                    refineLandmarks: refineLandmarks, runtime: runtime, widthFollowsImage: inputWidthFollowsImage)
            }
            return try CenterFaceDetector(
                modelPath: modelPath, scoreThreshold: scoreThreshold, inputWidth: inputWidth, maxFaces: maxFaces,
                refineLandmarks: refineLandmarks, runtime: runtime, widthFollowsImage: inputWidthFollowsImage)
        case .synthetic:
            return try SyntheticDetector(milliseconds: syntheticMilliseconds)
        case .noop:
            return try SyntheticDetector(milliseconds: 0, reportsFace: false)
        case .cascade, .auto:
            return try CascadeDetector(
                faceCascadePath: modelPath, scoreThreshold: scoreThreshold, inputWidth: inputWidth, maxFaces: maxFaces)
        }
    }
}
