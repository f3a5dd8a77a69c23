import COpenCV
import FacewireImage
import Foundation

/// A square region of an image that a landmark model looks at: `size` image pixels on a side, centred at `center`,
/// rotated by `angleDegrees`.
///
/// The angle has the sense of ``DetectedFace/faceAngle`` (the eye line's `atan2(dy, dx)` in y-down image
/// coordinates): the crop's x axis points along `(cos a, sin a)` in the image, so an ROI with the face's roll shows
/// the face upright. Crop coordinate `q` (each in `0...N` for an N × N network input) shows the image point
/// `center + (size / N) · R(a) · (q − N/2)`; see `COpenCV.h` for the sampling details.
public struct FaceROI: Sendable, Equatable {
    /// The centre, in image pixels.
    public var center: FacePoint
    /// The side, in image pixels.
    public var size: Float
    /// The rotation in degrees (positive: clockwise on screen, like a face's roll).
    public var angleDegrees: Float

    /// Creates an ROI.
    public init(center: FacePoint, size: Float, angleDegrees: Float = 0) {
        self.center = center
        self.size = size
        self.angleDegrees = angleDegrees
    }

    var cValue: fwcv_roi {
        fwcv_roi(center_x: center.x, center_y: center.y, size: size, angle_degrees: angleDegrees)
    }
}

/// One output of a landmark network: the model's name for it and its number of floats.
public struct LandmarkNetOutput: Sendable, Equatable {
    public var name: String
    public var count: Int
}

/// What ``FaceMeshModel/run(_:roi:)`` finds.
public struct FaceMeshOutput: Sendable, Equatable {
    /// The 468 MediaPipe face-mesh points, in image pixels; `z` is relative depth on the same scale as `x` (smaller
    /// is nearer the camera).
    public var points: [SIMD3<Float>]
    /// The model's face-presence probability, in `0...1`.
    public var presence: Float
    /// A blur measure: the variance of the 3 × 3 Laplacian of the grey 192 × 192 crop over its central half (grey
    /// levels 0...255). Higher is sharper; compare between frames of one face rather than across faces.
    public var sharpness: Float
}

/// What ``IrisModel/run(_:roi:mirror:)`` finds, in image pixels.
public struct IrisOutput: Sendable, Equatable {
    /// The 71 eye-contour and eyebrow points.
    public var contour: [SIMD3<Float>]
    /// The 5 iris points: the centre first, then four points on the iris edge.
    public var iris: [SIMD3<Float>]
}

/// Owns one `fwcv_landmark_net` (a cv::dnn network and its buffers). Shared by the three models.
final class LandmarkNet {
    let handle: OpaquePointer
    let path: String
    let inputCount: Int
    let outputs: [LandmarkNetOutput]
    let outputTotal: Int
    private var errorText = [CChar](repeating: 0, count: 1024)

    init(path: String, kind: Int32, what: String) throws {
        guard FileSystem.isReadableFile(path) else {
            throw DetectionError(.modelNotFound, "\(what) file not found or not readable: \(path)")
        }
        var errorText = [CChar](repeating: 0, count: 1024)
        let created = errorText.withUnsafeMutableBufferPointer { fwcv_landmark_net_create(path, kind, $0.baseAddress, $0.count) }
        guard let created else {
            let message = cErrorMessage(errorText)
            throw DetectionError(.modelLoadFailed, message.isEmpty ? "cannot load \(what) \(path)" : message)
        }
        handle = created
        self.path = path
        inputCount = fwcv_landmark_net_input_count(created)
        outputs = (0..<fwcv_landmark_net_output_count(created)).map { index in
            var count = 0
            let name = fwcv_landmark_net_output_name(created, index, &count).map { String(cString: $0) } ?? ""
            return LandmarkNetOutput(name: name, count: count)
        }
        outputTotal = outputs.reduce(0) { $0 + $1.count }
    }

    deinit { fwcv_landmark_net_destroy(handle) }

    /// Calls a C function that writes an error message and returns 0 on success.
    func call(_ what: String, _ body: (UnsafeMutablePointer<CChar>, Int) -> Int32) throws {
        let status = errorText.withUnsafeMutableBufferPointer { body($0.baseAddress!, $0.count) }
        guard status == 0 else {
            let message = cErrorMessage(errorText)
            throw DetectionError(.detectionFailed, message.isEmpty ? "\(what) failed" : message)
        }
    }

    /// Calls `body` with the image's pixels and the C ROI.
    func withImage(
        _ image: PixelImage, roi: FaceROI, what: String,
        _ body: (UnsafePointer<UInt8>?, Int32, Int32, Int32, Int32, UnsafePointer<fwcv_roi>, UnsafeMutablePointer<CChar>, Int) -> Int32
    ) throws {
        guard image.width > 0, image.height > 0 else {
            throw DetectionError(.invalidImage, "\(what): empty image (\(image.width)x\(image.height))")
        }
        var cROI = roi.cValue
        try image.bytes.withUnsafeBufferPointer { pixels in
            try call(what) { err, length in
                body(
                    pixels.baseAddress, Int32(image.width), Int32(image.height), Int32(image.stride),
                    Int32(image.format.channels), &cROI, err, length)
            }
        }
    }

    func runRaw(_ input: [Float], what: String) throws -> [Float] {
        guard input.count == inputCount else {
            throw DetectionError(.invalidConfiguration, "\(what) takes \(inputCount) input values, got \(input.count)")
        }
        var output = [Float](repeating: 0, count: outputTotal)
        var written = 0
        try input.withUnsafeBufferPointer { input in
            try output.withUnsafeMutableBufferPointer { output in
                try call(what) { err, length in
                    fwcv_landmark_net_run_raw(
                        handle, input.baseAddress, input.count, output.baseAddress, output.count, &written, err, length)
                }
            }
        }
        return Array(output.prefix(written))
    }

    /// Reads `count` (x, y, z) triples from a C float array (imported as a tuple).
    static func points<T>(_ tuple: inout T, count: Int) -> [SIMD3<Float>] {
        withUnsafeBytes(of: &tuple) { raw in
            let floats = raw.bindMemory(to: Float.self)
            precondition(floats.count >= count * 3)
            return (0..<count).map { SIMD3(floats[3 * $0], floats[3 * $0 + 1], floats[3 * $0 + 2]) }
        }
    }

    /// The first readable `fileName` in the model search directories, or `nil`.
    static func find(_ fileName: String, environment: [String: String]) -> String? {
        DetectorConfiguration.defaultModelSearchPaths(environment: environment)
            .map { "\($0)/\(fileName)" }
            .first(where: FileSystem.isReadableFile)
    }
}

/// MediaPipe's face mesh (`face_landmark.onnx`, converted from the TFLite model): 468 points and a face-presence
/// score from a 192 × 192 RGB crop of the face. One instance per thread.
public final class FaceMeshModel: LandmarkModel {
    /// The model file name looked for in the model search directories.
    public static let modelFileName = "face_landmark.onnx"
    /// The network's input side in pixels.
    public static let inputSize = 192
    /// Indices of a few face-mesh points (MediaPipe's numbering; "right"/"left" are the subject's).
    public enum Point {
        public static let noseTip = 1
        public static let rightEyeOuterCorner = 33, rightEyeInnerCorner = 133
        public static let leftEyeInnerCorner = 362, leftEyeOuterCorner = 263
    }

    private let net: LandmarkNet

    /// The model's path.
    public var modelPath: String { net.path }
    /// The network's outputs in the order ``runRaw(_:)`` concatenates them (landmarks, then the presence logit).
    public var outputs: [LandmarkNetOutput] { net.outputs }


    /// Loads the model and checks its shapes.
    /// - Throws: ``DetectionError`` `.modelNotFound` (no readable file at `modelPath`) or `.modelLoadFailed` (OpenCV
    ///   cannot load it, or its inputs and outputs are not the face mesh's).
    public init(modelPath: String) throws {
        net = try LandmarkNet(path: modelPath, kind: FWCV_NET_MESH, what: "face mesh model")
    }

    /// Runs the mesh on `roi` of `image` (grey or BGR).
    /// - Throws: ``DetectionError`` `.detectionFailed` (e.g. an invalid ROI) or `.invalidImage`.
    public func run(_ image: PixelImage, roi: FaceROI) throws -> FaceMeshOutput {
        var result = fwcv_mesh_result()
        try net.withImage(image, roi: roi, what: "face mesh") { pixels, width, height, stride, channels, cROI, err, length in
            fwcv_face_mesh(net.handle, pixels, width, height, stride, channels, cROI, &result, err, length)
        }
        return FaceMeshOutput(
            points: LandmarkNet.points(&result.points, count: Int(FWCV_MESH_POINTS)), presence: result.presence,
            sharpness: result.sharpness)
    }

    /// Runs the network on an exactly prepared input (1 × 3 × 192 × 192 floats, RGB planes, byte / 255) and returns
    /// its raw outputs concatenated: 1404 landmark values (crop pixels), then the presence logit.
    public func runRaw(_ input: [Float]) throws -> [Float] {
        try net.runRaw(input, what: "face mesh")
    }
}

@available(*, unavailable, message: "FaceMeshModel owns a cv::dnn network and its buffers: use one per thread")
extension FaceMeshModel: Sendable {}

/// MediaPipe's iris model (`iris_landmark.onnx`): 71 eye-contour and brow points and 5 iris points from a 64 × 64
/// RGB crop of one eye. It is trained on the subject's left eye: run the right eye with `mirror: true`. One instance
/// per thread.
public final class IrisModel: LandmarkModel {
    /// The model file name looked for in the model search directories.
    public static let modelFileName = "iris_landmark.onnx"
    /// The network's input side in pixels.
    public static let inputSize = 64

    private let net: LandmarkNet

    /// The model's path.
    public var modelPath: String { net.path }
    /// The network's outputs in the order ``runRaw(_:)`` concatenates them (contour and brows, then the iris).
    public var outputs: [LandmarkNetOutput] { net.outputs }


    /// Loads the model and checks its shapes.
    /// - Throws: ``DetectionError`` `.modelNotFound` or `.modelLoadFailed`.
    public init(modelPath: String) throws {
        net = try LandmarkNet(path: modelPath, kind: FWCV_NET_IRIS, what: "iris model")
    }

    /// Runs the iris model on `roi` of `image` (grey or BGR). With `mirror` the crop is flipped horizontally before
    /// inference (MediaPipe does so for the subject's right eye); the points come back in image pixels either way.
    /// - Throws: ``DetectionError`` `.detectionFailed` or `.invalidImage`.
    public func run(_ image: PixelImage, roi: FaceROI, mirror: Bool) throws -> IrisOutput {
        var result = fwcv_iris_result()
        try net.withImage(image, roi: roi, what: "iris") { pixels, width, height, stride, channels, cROI, err, length in
            fwcv_iris(net.handle, pixels, width, height, stride, channels, cROI, mirror ? 1 : 0, &result, err, length)
        }
        return IrisOutput(
            contour: LandmarkNet.points(&result.contour, count: Int(FWCV_IRIS_CONTOUR_POINTS)),
            iris: LandmarkNet.points(&result.iris, count: Int(FWCV_IRIS_POINTS)))
    }

    /// Runs the network on an exactly prepared input (1 × 3 × 64 × 64 floats, RGB planes, byte / 255) and returns
    /// its raw outputs concatenated: 213 contour values, then 15 iris values (crop pixels).
    public func runRaw(_ input: [Float]) throws -> [Float] {
        try net.runRaw(input, what: "iris")
    }
}

@available(*, unavailable, message: "IrisModel owns a cv::dnn network and its buffers: use one per thread")
extension IrisModel: Sendable {}

/// A seven-class facial-expression classifier (`fer_emotion.onnx`) on a 64 × 64 grey crop of the face: 7 class
/// probabilities, index 3 being "happy" (FER-2013's class order). One instance per thread.
public final class EmotionModel: LandmarkModel {
    /// The model file name looked for in the model search directories.
    public static let modelFileName = "fer_emotion.onnx"
    /// The network's input side in pixels.
    public static let inputSize = 64
    /// The number of classes.
    public static let classCount = Int(FWCV_EMOTION_CLASSES)
    /// The index of "happy".
    public static let happy = 3

    private let net: LandmarkNet

    /// The model's path.
    public var modelPath: String { net.path }
    /// The network's one output.
    public var outputs: [LandmarkNetOutput] { net.outputs }


    /// Loads the model and checks its shapes.
    /// - Throws: ``DetectionError`` `.modelNotFound` or `.modelLoadFailed`.
    public init(modelPath: String) throws {
        net = try LandmarkNet(path: modelPath, kind: FWCV_NET_EMOTION, what: "emotion model")
    }

    /// The model's 7 outputs for the grey crop of `roi`.
    /// - Throws: ``DetectionError`` `.detectionFailed` or `.invalidImage`.
    public func run(_ image: PixelImage, roi: FaceROI) throws -> [Float] {
        var probabilities = [Float](repeating: 0, count: Self.classCount)
        try probabilities.withUnsafeMutableBufferPointer { out in
            try net.withImage(image, roi: roi, what: "emotion") { pixels, width, height, stride, channels, cROI, err, length in
                fwcv_emotion(net.handle, pixels, width, height, stride, channels, cROI, out.baseAddress, err, length)
            }
        }
        return probabilities
    }

    /// Runs the network on an exactly prepared input (1 × 1 × 64 × 64 floats, (byte / 255 − 0.5) · 2).
    public func runRaw(_ input: [Float]) throws -> [Float] {
        try net.runRaw(input, what: "emotion")
    }
}

@available(*, unavailable, message: "EmotionModel owns a cv::dnn network and its buffers: use one per thread")
extension EmotionModel: Sendable {}

/// What the landmark models share: a file name looked for in the model directories.
public protocol LandmarkModel: AnyObject {
    /// The model file name looked for in the model search directories.
    static var modelFileName: String { get }
}

extension LandmarkModel {
    /// ``modelFileName`` in ``DetectorConfiguration/defaultModelSearchPaths(environment:)``, or `nil`.
    public static func findModel(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        LandmarkNet.find(modelFileName, environment: environment)
    }
}
