import COpenCV
import FacewireImage

/// A square region of an image for the landmark networks (`fwcv_roi`): side `size` image pixels, centred at
/// (`centerX`, `centerY`), rotated by `angleDegrees` (the sense of a face's roll).
public struct OpenCVRegion: Sendable, Equatable {
    public var centerX: Float, centerY: Float, size: Float, angleDegrees: Float

    public init(centerX: Float, centerY: Float, size: Float, angleDegrees: Float) {
        self.centerX = centerX
        self.centerY = centerY
        self.size = size
        self.angleDegrees = angleDegrees
    }

    var cValue: fwcv_roi { fwcv_roi(center_x: centerX, center_y: centerY, size: size, angle_degrees: angleDegrees) }
}

/// One ONNX landmark network run with cv::dnn (`fwcv_landmark_net`): MediaPipe's face mesh or iris model, or an
/// expression classifier. Not thread-safe: one per thread.
public final class OpenCVLandmarkNet {
    /// The network kinds (`FWCV_NET_*`).
    public enum Kind: Sendable {
        case mesh, iris, emotion

        var cValue: Int32 {
            switch self {
            case .mesh: FWCV_NET_MESH
            case .iris: FWCV_NET_IRIS
            case .emotion: FWCV_NET_EMOTION
            }
        }
    }

    /// Points per kind's outputs.
    public static let meshPoints = Int(FWCV_MESH_POINTS)
    public static let irisContourPoints = Int(FWCV_IRIS_CONTOUR_POINTS)
    public static let irisPoints = Int(FWCV_IRIS_POINTS)
    public static let emotionClasses = Int(FWCV_EMOTION_CLASSES)

    private let handle: OpaquePointer
    /// Floats the network takes.
    public let inputCount: Int
    /// Its outputs, in the documented order: (name, floats).
    public let outputs: [(name: String, count: Int)]

    /// Loads the model at `path`, to be run by `runtime`, and checks its shapes against `kind`'s.
    /// - Throws: ``OpenCVError`` (naming the file) when it cannot be loaded or its shapes are not the kind's.
    public init(path: String, kind: Kind, runtime: InferenceRuntime = .opencv) throws(OpenCVError) {
        let (handle, message) = OpenCVCall.run { fwcv_landmark_net_create(path, kind.cValue, runtime.code, $0, $1) }
        guard let handle else { throw OpenCVError(message: message) }
        self.handle = handle
        inputCount = fwcv_landmark_net_input_count(handle)
        outputs = (0..<fwcv_landmark_net_output_count(handle)).map { index in
            var count = 0
            let name = fwcv_landmark_net_output_name(handle, index, &count).map { String(cString: $0) } ?? ""
            return (name, count)
        }
    }

    deinit { fwcv_landmark_net_destroy(handle) }

    /// How many input shapes (batch sizes) have a network compiled for them alone: OpenVINO compiles one for a batch
    /// size that recurs, which runs faster than the network of any batch size; 0 on OpenCV.
    public var staticShapes: Int { fwcv_landmark_net_static_shapes(handle) }

    /// The most regions one ``faceMeshes(_:regions:)`` or ``irises(_:regions:)`` call takes.
    public static let maxBatch = 128

    /// The face mesh on each of `regions` of `image` (at most ``maxBatch``; in one inference on OpenVINO): 468
    /// (x, y, z) points in image pixels, the face-presence score and the crop's sharpness, in the regions' order.
    public func faceMeshes(_ image: PixelImage, regions: [OpenCVRegion]) throws(OpenCVError)
        -> [(points: [SIMD3<Float>], presence: Float, sharpness: Float)]
    {
        guard !regions.isEmpty else { return [] }
        var results = [fwcv_mesh_result](repeating: fwcv_mesh_result(), count: regions.count)
        let rois = regions.map(\.cValue)
        try runBatch(image) { pixels, width, height, stride, channels, err, length in
            rois.withUnsafeBufferPointer { rois in
                results.withUnsafeMutableBufferPointer { out in
                    fwcv_face_mesh_batch(
                        handle, pixels, width, height, stride, channels, rois.baseAddress, Int32(rois.count), out.baseAddress,
                        err, length)
                }
            }
        }
        return results.indices.map { i in
            (Self.points(&results[i].points, count: Self.meshPoints), results[i].presence, results[i].sharpness)
        }
    }

    /// The face mesh on one region (``faceMeshes(_:regions:)``).
    public func faceMesh(_ image: PixelImage, region: OpenCVRegion) throws(OpenCVError)
        -> (points: [SIMD3<Float>], presence: Float, sharpness: Float)
    {
        try faceMeshes(image, regions: [region])[0]
    }

    /// The iris model on each of `regions` of `image` (each flipped first when its `mirror` is set; at most
    /// ``maxBatch``; in one inference on OpenVINO): 71 contour and 5 iris (x, y, z) points in image pixels.
    public func irises(_ image: PixelImage, regions: [(region: OpenCVRegion, mirror: Bool)]) throws(OpenCVError)
        -> [(contour: [SIMD3<Float>], iris: [SIMD3<Float>])]
    {
        guard !regions.isEmpty else { return [] }
        var results = [fwcv_iris_result](repeating: fwcv_iris_result(), count: regions.count)
        let rois = regions.map(\.region.cValue)
        let mirror = regions.map { Int32($0.mirror ? 1 : 0) }
        try runBatch(image) { pixels, width, height, stride, channels, err, length in
            rois.withUnsafeBufferPointer { rois in
                mirror.withUnsafeBufferPointer { mirror in
                    results.withUnsafeMutableBufferPointer { out in
                        fwcv_iris_batch(
                            handle, pixels, width, height, stride, channels, rois.baseAddress, mirror.baseAddress,
                            Int32(rois.count), out.baseAddress, err, length)
                    }
                }
            }
        }
        return results.indices.map { i in
            (Self.points(&results[i].contour, count: Self.irisContourPoints), Self.points(&results[i].iris, count: Self.irisPoints))
        }
    }

    /// The iris model on one region (``irises(_:regions:)``).
    public func iris(_ image: PixelImage, region: OpenCVRegion, mirror: Bool) throws(OpenCVError)
        -> (contour: [SIMD3<Float>], iris: [SIMD3<Float>])
    {
        try irises(image, regions: [(region, mirror)])[0]
    }

    /// The expression classifier's 7 outputs on the grey crop of `region`.
    public func emotion(_ image: PixelImage, region: OpenCVRegion) throws(OpenCVError) -> [Float] {
        var probabilities = [Float](repeating: 0, count: Self.emotionClasses)
        try probabilities.withUnsafeMutableBufferPointer { out throws(OpenCVError) in
            try run(image, region) { pixels, width, height, stride, channels, roi, err, length in
                fwcv_emotion(handle, pixels, width, height, stride, channels, roi, out.baseAddress, err, length)
            }
        }
        return probabilities
    }

    /// Runs the network on an exactly prepared input of ``inputCount`` floats; its outputs concatenated.
    public func runRaw(_ input: [Float]) throws(OpenCVError) -> [Float] {
        var output = [Float](repeating: 0, count: outputs.reduce(0) { $0 + $1.count })
        var written = 0
        try input.withUnsafeBufferPointer { input throws(OpenCVError) in
            try output.withUnsafeMutableBufferPointer { output throws(OpenCVError) in
                try OpenCVCall.check { err, length in
                    fwcv_landmark_net_run_raw(
                        handle, input.baseAddress, input.count, output.baseAddress, output.count, &written, err, length)
                }
            }
        }
        return Array(output.prefix(written))
    }

    private func runBatch(
        _ image: PixelImage, _ body: (UnsafePointer<UInt8>?, Int32, Int32, Int32, Int32, UnsafeMutablePointer<CChar>, Int) -> Int32
    ) throws(OpenCVError) {
        try image.bytes.withUnsafeBufferPointer { pixels throws(OpenCVError) in
            try OpenCVCall.check { err, length in
                body(pixels.baseAddress, Int32(image.width), Int32(image.height), Int32(image.stride), Int32(image.format.channels), err, length)
            }
        }
    }

    private func run(
        _ image: PixelImage, _ region: OpenCVRegion,
        _ body: (UnsafePointer<UInt8>?, Int32, Int32, Int32, Int32, UnsafePointer<fwcv_roi>, UnsafeMutablePointer<CChar>, Int) -> Int32
    ) throws(OpenCVError) {
        var roi = region.cValue
        try image.bytes.withUnsafeBufferPointer { pixels throws(OpenCVError) in
            try OpenCVCall.check { err, length in
                body(
                    pixels.baseAddress, Int32(image.width), Int32(image.height), Int32(image.stride),
                    Int32(image.format.channels), &roi, err, length)
            }
        }
    }

    /// Reads `count` (x, y, z) triples from a C float array (imported as a tuple).
    private static func points<T>(_ tuple: inout T, count: Int) -> [SIMD3<Float>] {
        withUnsafeBytes(of: &tuple) { raw in
            let floats = raw.bindMemory(to: Float.self)
            precondition(floats.count >= count * 3)
            return (0..<count).map { SIMD3(floats[3 * $0], floats[3 * $0 + 1], floats[3 * $0 + 2]) }
        }
    }
}

@available(*, unavailable, message: "OpenCVLandmarkNet owns a cv::dnn network and its buffers: use one per thread")
extension OpenCVLandmarkNet: Sendable {}
