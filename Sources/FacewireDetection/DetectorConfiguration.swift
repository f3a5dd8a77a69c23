import FacewireOpenCV

/// What detector to build and how; turn it into a detector with ``makeFaceDetector(_:)``.
public struct DetectorConfiguration: Sendable, Equatable {
    /// Detection backends.
    public enum Backend: String, Sendable, Equatable, CaseIterable {
        /// YuNet 2022mar through `cv::FaceDetectorYN` (needs the model file).
        case yunet
        /// CenterFace through `cv::dnn` (needs `centerface.onnx`).
        case centerface
        /// OpenCV's Haar cascade (ships with `opencv-data`; no model download needed).
        case cascade
        /// Pick from the model path's file name, or search the model directories when there is no path,
        /// falling back to the cascade (see ``DetectorConfiguration/resolve(environment:)``).
        case auto
        /// A test tool: no detection, a fixed face after ``DetectorConfiguration/syntheticMilliseconds`` of waiting
        /// (``SyntheticDetector``).
        case synthetic
        /// A test tool: no detection, no wait and no face (``SyntheticDetector`` with 0 ms): the transport alone.
        case noop
    }

    /// Which backend to use.
    public var backend: Backend
    /// The model file (the face cascade XML for ``Backend/cascade``); `nil` searches
    /// ``DetectorConfiguration/defaultModelSearchPaths(environment:)``.
    public var modelPath: String?
    /// Width images are scaled to before detection; `nil` uses the backend's measured default.
    public var inputWidth: Int?
    /// Minimum confidence in `0...1`; `nil` uses the backend's default.
    public var scoreThreshold: Float?
    /// Most faces the detector returns per image, best first (``AnalysisOptions/maxFaces`` then keeps fewer).
    public var maxFaces: Int
    /// Whether the 5-landmark backends refine the landmarks of tilted faces on an upright crop (default on).
    public var refineLandmarks: Bool
    /// How long the ``Backend/synthetic`` test detector waits per frame, in milliseconds.
    public var syntheticMilliseconds: Int = 50
    /// What runs the detector's network; `nil`: OpenVINO where its library is found
    /// (``DetectorConfiguration/openVINOSearchPaths(environment:)``), OpenCV otherwise.
    public var runtime: InferenceRuntime?

    /// Creates a configuration. The defaults pick a backend automatically.
    public init(
        backend: Backend = .auto, modelPath: String? = nil, inputWidth: Int? = nil, scoreThreshold: Float? = nil,
        maxFaces: Int = AnalysisOptions.maxFacesLimit, refineLandmarks: Bool = true
    ) {
        self.backend = backend
        self.modelPath = modelPath
        self.inputWidth = inputWidth
        self.scoreThreshold = scoreThreshold
        self.maxFaces = maxFaces
        self.refineLandmarks = refineLandmarks
    }
}
