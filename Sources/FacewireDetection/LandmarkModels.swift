import FacewireVocabulary
import FacewireOpenCV
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

    var region: OpenCVRegion {
        OpenCVRegion(centerX: center.x, centerY: center.y, size: size, angleDegrees: angleDegrees)
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

/// Owns one ``OpenCVLandmarkNet`` (a cv::dnn network and its buffers) and maps its errors. Shared by the three
/// models.
final class LandmarkNet {
    let net: OpenCVLandmarkNet
    let path: String
    let outputs: [LandmarkNetOutput]

    init(path: String, kind: OpenCVLandmarkNet.Kind, what: String, runtime: InferenceRuntime) throws {
        guard FileSystem.isReadableFile(path) else {
            throw DetectionError(.modelNotFound, "\(what) file not found or not readable: \(path)")
        }
        do {
            net = try OpenCVLandmarkNet(path: path, kind: kind, runtime: runtime)
        } catch {
            throw DetectionError(.modelLoadFailed, error.message(or: "cannot load \(what) \(path)"))
        }
        self.path = path
        outputs = net.outputs.map { LandmarkNetOutput(name: $0.name, count: $0.count) }
    }

    /// Runs one of the network's calls on `image`, after checking it is not empty; errors become
    /// ``DetectionError`` `.detectionFailed`.
    func run<T>(_ image: PixelImage, what: String, _ body: (OpenCVLandmarkNet) throws(OpenCVError) -> T) throws -> T {
        guard image.width > 0, image.height > 0 else {
            throw DetectionError(.invalidImage, "\(what): empty image (\(image.width)x\(image.height))")
        }
        return try call(what) { () throws(OpenCVError) -> T in try body(net) }
    }

    func runRaw(_ input: [Float], what: String) throws -> [Float] {
        guard input.count == net.inputCount else {
            throw DetectionError(.invalidConfiguration, "\(what) takes \(net.inputCount) input values, got \(input.count)")
        }
        return try call(what) { () throws(OpenCVError) -> [Float] in try net.runRaw(input) }
    }

    private func call<T>(_ what: String, _ body: () throws(OpenCVError) -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw DetectionError(.detectionFailed, error.message(or: "\(what) failed"))
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
    public init(modelPath: String, runtime: InferenceRuntime = .opencv) throws {
        net = try LandmarkNet(path: modelPath, kind: .mesh, what: "face mesh model", runtime: runtime)
    }

    /// Runs the mesh on `roi` of `image` (grey or BGR).
    /// - Throws: ``DetectionError`` `.detectionFailed` (e.g. an invalid ROI) or `.invalidImage`.
    public func run(_ image: PixelImage, roi: FaceROI) throws -> FaceMeshOutput {
        try run(image, rois: [roi])[0]
    }

    /// Runs the mesh on each of `rois` of `image` (at most ``OpenCVLandmarkNet/maxBatch``), in one inference when
    /// OpenVINO runs it; the outputs in the ROIs' order.
    /// - Throws: ``DetectionError`` `.detectionFailed` (e.g. an invalid ROI) or `.invalidImage`.
    public func run(_ image: PixelImage, rois: [FaceROI]) throws -> [FaceMeshOutput] {
        let results = try net.run(image, what: "face mesh") { net throws(OpenCVError) in
            try net.faceMeshes(image, regions: rois.map(\.region))
        }
        return results.map { FaceMeshOutput(points: $0.points, presence: $0.presence, sharpness: $0.sharpness) }
    }

    /// Runs the network on an exactly prepared input (1 × 3 × 192 × 192 floats, RGB planes, byte / 255) and returns
    /// its raw outputs concatenated: 1404 landmark values (crop pixels), then the presence logit.
    public func runRaw(_ input: [Float]) throws -> [Float] {
        try net.runRaw(input, what: "face mesh")
    }

    /// How many batch sizes have a network compiled for them alone (``OpenCVLandmarkNet/staticShapes``).
    public var staticShapes: Int { net.net.staticShapes }
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
    public init(modelPath: String, runtime: InferenceRuntime = .opencv) throws {
        net = try LandmarkNet(path: modelPath, kind: .iris, what: "iris model", runtime: runtime)
    }

    /// Runs the iris model on `roi` of `image` (grey or BGR). With `mirror` the crop is flipped horizontally before
    /// inference (MediaPipe does so for the subject's right eye); the points come back in image pixels either way.
    /// - Throws: ``DetectionError`` `.detectionFailed` or `.invalidImage`.
    public func run(_ image: PixelImage, roi: FaceROI, mirror: Bool) throws -> IrisOutput {
        try run(image, rois: [(roi, mirror)])[0]
    }

    /// Runs the iris model on each of `rois` of `image` (each flipped first when its `mirror` is set; at most
    /// ``OpenCVLandmarkNet/maxBatch``), in one inference when OpenVINO runs it; the outputs in the ROIs' order.
    /// - Throws: ``DetectionError`` `.detectionFailed` or `.invalidImage`.
    public func run(_ image: PixelImage, rois: [(roi: FaceROI, mirror: Bool)]) throws -> [IrisOutput] {
        let results = try net.run(image, what: "iris") { net throws(OpenCVError) in
            try net.irises(image, regions: rois.map { ($0.roi.region, $0.mirror) })
        }
        return results.map { IrisOutput(contour: $0.contour, iris: $0.iris) }
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
    public static let classCount = OpenCVLandmarkNet.emotionClasses
    /// The index of "happy".
    public static let happy = 3

    private let net: LandmarkNet

    /// The model's path.
    public var modelPath: String { net.path }
    /// The network's one output.
    public var outputs: [LandmarkNetOutput] { net.outputs }


    /// Loads the model and checks its shapes.
    /// - Throws: ``DetectionError`` `.modelNotFound` or `.modelLoadFailed`.
    public init(modelPath: String, runtime: InferenceRuntime = .opencv) throws {
        net = try LandmarkNet(path: modelPath, kind: .emotion, what: "emotion model", runtime: runtime)
    }

    /// The model's 7 outputs for the grey crop of `roi`.
    /// - Throws: ``DetectionError`` `.detectionFailed` or `.invalidImage`.
    public func run(_ image: PixelImage, roi: FaceROI) throws -> [Float] {
        try net.run(image, what: "emotion") { net throws(OpenCVError) in try net.emotion(image, region: roi.region) }
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
