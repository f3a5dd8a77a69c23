import COpenCV
import FacewireImage

/// One face as the native detectors report it, in the pixel coordinates of the image given.
public struct OpenCVFace: Sendable, Equatable {
    public var x: Float, y: Float, width: Float, height: Float
    public var score: Float
    /// Landmark points filled in ``landmarks``: 5 for YuNet and CenterFace, 2 (the eyes) or 0 for the cascade.
    public var landmarkCount: Int
    /// (x, y) pairs in the model's own order (YuNet and CenterFace: the subject's right eye, left eye, nose, right
    /// mouth corner, left mouth corner): order eyes by x, not by index. Always 10 values.
    public var landmarks: [Float]

    public init(x: Float, y: Float, width: Float, height: Float, score: Float, landmarkCount: Int, landmarks: [Float]) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
        self.score = score
        self.landmarkCount = landmarkCount
        self.landmarks = landmarks
    }
}

/// A native face detector (`fwcv_detector`: YuNet, CenterFace or a Haar cascade) and its result buffer.
/// Not thread-safe: one per thread.
public final class OpenCVFaceDetector {
    /// Which detector, and its model files and settings.
    public enum Kind: Sendable {
        case yunet(modelPath: String, scoreThreshold: Float, nmsThreshold: Float, topK: Int, runtime: InferenceRuntime)
        case centerFace(modelPath: String, scoreThreshold: Float, nmsThreshold: Float, runtime: InferenceRuntime)
        case cascade(facePath: String, eyeCascadePath: String?)
    }

    private let handle: OpaquePointer
    private var buffer: [fwcv_face]

    /// Loads the detector, with room for `maxFaces` faces per image.
    /// - Throws: ``OpenCVError`` with OpenCV's message when the model cannot be loaded.
    public init(_ kind: Kind, maxFaces: Int) throws(OpenCVError) {
        let (handle, message) = OpenCVCall.run { err, length -> OpaquePointer? in
            switch kind {
            case .yunet(let path, let score, let nms, let topK, let runtime):
                return fwcv_yunet_create(path, score, nms, Int32(clamping: topK), runtime.code, err, length)
            case .centerFace(let path, let score, let nms, let runtime):
                return fwcv_centerface_create(path, score, nms, runtime.code, err, length)
            case .cascade(let facePath, let eyePath):
                return fwcv_cascade_create(facePath, eyePath, err, length)
            }
        }
        guard let handle else { throw OpenCVError(message: message) }
        self.handle = handle
        buffer = [fwcv_face](repeating: fwcv_face(), count: max(0, maxFaces))
    }

    deinit { fwcv_detector_destroy(handle) }

    /// Detects faces in `image` (grey or BGR), the detector run at `inputWidth` (0: its own choice).
    /// - Returns: the number of faces found (at most the capacity), best first; read them with ``face(at:)``.
    /// - Throws: ``OpenCVError`` on failure.
    public func detect(_ image: PixelImage, inputWidth: Int) throws(OpenCVError) -> Int {
        let capacity = buffer.count
        let count = try image.bytes.withUnsafeBufferPointer { pixels throws(OpenCVError) in
            try buffer.withUnsafeMutableBufferPointer { faces throws(OpenCVError) in
                try OpenCVCall.status { err, length in
                    fwcv_detect(
                        handle, pixels.baseAddress, Int32(image.width), Int32(image.height), Int32(image.stride),
                        Int32(image.format.channels), Int32(inputWidth), faces.baseAddress, Int32(capacity), err, length)
                }
            }
        }
        // The shim writes at most `capacity`; clamp anyway, as the buffer is indexed by what it says.
        return min(Int(count), capacity)
    }

    /// Refines the landmarks of the first `count` faces of the last ``detect(_:inputWidth:)`` where they are tilted
    /// by `minAngle` degrees or more and at least `minHeight` px tall (`fwcv_refine_tilted`), in place.
    /// - Throws: ``OpenCVError`` on failure.
    public func refineTilted(_ image: PixelImage, count: Int, minAngle: Float, minHeight: Float) throws(OpenCVError) {
        let count = min(count, buffer.count)
        try image.bytes.withUnsafeBufferPointer { pixels throws(OpenCVError) in
            try buffer.withUnsafeMutableBufferPointer { faces throws(OpenCVError) in
                try OpenCVCall.check { err, length in
                    fwcv_refine_tilted(
                        handle, pixels.baseAddress, Int32(image.width), Int32(image.height), Int32(image.stride),
                        Int32(image.format.channels), faces.baseAddress, Int32(count), minAngle, minHeight, err, length)
                }
            }
        }
    }

    /// Face `index` (below what ``detect(_:inputWidth:)`` returned) of the last detection.
    public func face(at index: Int) -> OpenCVFace {
        let face = buffer[index]
        let l = face.landmarks
        return OpenCVFace(
            x: face.x, y: face.y, width: face.width, height: face.height, score: face.score,
            landmarkCount: Int(face.landmark_count), landmarks: [l.0, l.1, l.2, l.3, l.4, l.5, l.6, l.7, l.8, l.9])
    }

    /// The score of face `index` of the last detection.
    public func score(at index: Int) -> Float { buffer[index].score }
}

@available(*, unavailable, message: "OpenCVFaceDetector owns a native detector and its buffers: use one per thread")
extension OpenCVFaceDetector: Sendable {}

/// The cascade smile and eyes-closed classifiers (`fwcv_attributes`). Not thread-safe: one per thread.
public final class OpenCVFaceAttributes {
    private let handle: OpaquePointer

    /// What the classifiers found (`fwcv_face_attributes_result`); a nil score means that classifier did not run.
    public struct Result: Sendable, Equatable {
        public var smileScore: Float?
        public var hasSmile = false
        public var leftEyeClosedScore: Float?
        public var rightEyeClosedScore: Float?
        public var leftEyeClosed = false
        public var rightEyeClosed = false
    }

    /// Which classifiers to run (bits of `FWCV_ATTRIBUTE_*`).
    public static let smile = Int(FWCV_ATTRIBUTE_SMILE)
    public static let eyes = Int(FWCV_ATTRIBUTE_EYES)

    /// Loads the cascades from `cascadeDirectory` (nil: Debian's `/usr/share/opencv4/haarcascades`).
    /// - Throws: ``OpenCVError`` when they cannot be loaded.
    public init(cascadeDirectory: String?) throws(OpenCVError) {
        let (handle, message) = OpenCVCall.run { fwcv_attributes_create(cascadeDirectory, $0, $1) }
        guard let handle else { throw OpenCVError(message: message) }
        self.handle = handle
    }

    deinit { fwcv_attributes_destroy(handle) }

    /// Classifies one face of `image` given its 5 landmarks (10 floats, the detector's order), running the
    /// classifiers in `which` (bits ``smile``, ``eyes``).
    /// - Throws: ``OpenCVError`` on failure.
    public func classify(_ image: PixelImage, landmarks: [Float], which: Int) throws(OpenCVError) -> Result {
        precondition(landmarks.count == 10, "five landmarks, x and y each")
        var result = fwcv_face_attributes_result()
        try image.bytes.withUnsafeBufferPointer { pixels throws(OpenCVError) in
            try landmarks.withUnsafeBufferPointer { points throws(OpenCVError) in
                try OpenCVCall.check { err, length in
                    fwcv_face_attributes(
                        handle, pixels.baseAddress, Int32(image.width), Int32(image.height), Int32(image.stride),
                        Int32(image.format.channels), points.baseAddress, Int32(which), &result, err, length)
                }
            }
        }
        var out = Result()
        if result.smile_valid != 0 {
            out.smileScore = result.smile_score
            out.hasSmile = result.has_smile != 0
        }
        if result.eyes_valid != 0 {
            out.leftEyeClosedScore = result.left_eye_closed_score
            out.leftEyeClosed = result.left_eye_closed != 0
            out.rightEyeClosedScore = result.right_eye_closed_score
            out.rightEyeClosed = result.right_eye_closed != 0
        }
        return out
    }
}

@available(*, unavailable, message: "OpenCVFaceAttributes owns cascades: use one per thread")
extension OpenCVFaceAttributes: Sendable {}
