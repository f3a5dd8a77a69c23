import COpenCV
import FacewireImage

/// Owns one `fwcv_detector` and turns its C results into ``DetectedFace`` values. Shared by the backends.
final class NativeDetector {
    private let handle: OpaquePointer
    let inputWidth: Int?
    let scoreThreshold: Float
    let maxFaces: Int
    /// Whether tilted faces get their landmarks refined (the 5-landmark backends; see ``refineAngle``).
    var refineTilted = false
    private var buffer: [fwcv_face]

    static let errorLength = 1024

    /// Calls a C constructor with an error buffer and wraps the result.
    static func create(
        what: String, path: String,
        inputWidth: Int?, scoreThreshold: Float, maxFaces: Int,
        _ make: (UnsafeMutablePointer<CChar>, Int) -> OpaquePointer?
    ) throws -> NativeDetector {
        try validate(inputWidth: inputWidth, scoreThreshold: scoreThreshold, maxFaces: maxFaces)
        guard FileSystem.isReadableFile(path) else {
            throw DetectionError(.modelNotFound, "\(what) file not found or not readable: \(path)")
        }
        var errorText = [CChar](repeating: 0, count: errorLength)
        let handle = errorText.withUnsafeMutableBufferPointer { buffer -> OpaquePointer? in
            guard let base = buffer.baseAddress else { return nil }
            return make(base, buffer.count)
        }
        guard let handle else {
            let message = cErrorMessage(errorText)
            throw DetectionError(.modelLoadFailed, "cannot load \(what) \(path): \(message.isEmpty ? "unknown error" : message)")
        }
        return NativeDetector(handle: handle, inputWidth: inputWidth, scoreThreshold: scoreThreshold, maxFaces: maxFaces)
    }

    static func validate(inputWidth: Int?) throws {
        if let inputWidth, !(16...8192).contains(inputWidth) {
            throw DetectionError(.invalidConfiguration, "input width \(inputWidth) is outside 16...8192")
        }
    }

    static func validate(inputWidth: Int?, scoreThreshold: Float, maxFaces: Int) throws {
        try validate(inputWidth: inputWidth)
        guard scoreThreshold.isFinite, (0...1).contains(scoreThreshold) else {
            throw DetectionError(.invalidConfiguration, "score threshold \(scoreThreshold) is outside 0...1")
        }
        guard (1...10_000).contains(maxFaces) else {
            throw DetectionError(.invalidConfiguration, "max faces \(maxFaces) is outside 1...10000")
        }
    }

    private init(handle: OpaquePointer, inputWidth: Int?, scoreThreshold: Float, maxFaces: Int) {
        self.handle = handle
        self.inputWidth = inputWidth
        self.scoreThreshold = scoreThreshold
        self.maxFaces = maxFaces
        self.buffer = [fwcv_face](repeating: fwcv_face(), count: maxFaces)
    }

    deinit {
        fwcv_detector_destroy(handle)
    }

    func detect(_ image: PixelImage, inputWidth: Int?) throws -> [DetectedFace] {
        try Self.validate(inputWidth: inputWidth)
        let channels = image.format.channels
        guard image.width > 0, image.height > 0 else {
            throw DetectionError(.invalidImage, "image is empty (\(image.width)×\(image.height))")
        }
        guard image.width <= 1 << 15, image.height <= 1 << 15,
              image.stride >= image.width * channels,
              image.bytes.count >= image.stride * (image.height - 1) + image.width * channels
        else {
            throw DetectionError(
                .invalidImage,
                "inconsistent image: \(image.width)×\(image.height), stride \(image.stride), \(image.bytes.count) bytes")
        }
        var errorText = [CChar](repeating: 0, count: Self.errorLength)
        let capacity = buffer.count
        let count = image.bytes.withUnsafeBufferPointer { pixels in
            buffer.withUnsafeMutableBufferPointer { faces in
                errorText.withUnsafeMutableBufferPointer { err in
                    fwcv_detect(
                        handle, pixels.baseAddress, Int32(image.width), Int32(image.height), Int32(image.stride),
                        Int32(channels), Int32(inputWidth ?? 0), faces.baseAddress, Int32(capacity),
                        err.baseAddress, err.count)
                }
            }
        }
        guard count >= 0 else {
            let message = cErrorMessage(errorText)
            throw DetectionError(.detectionFailed, message.isEmpty ? "detection failed" : message)
        }
        // Faces come best first: those at or above the threshold are a prefix.
        let kept = buffer.prefix(Int(count)).prefix { $0.score >= scoreThreshold }.count
        if refineTilted, kept > 0 {
            let refined = image.bytes.withUnsafeBufferPointer { pixels in
                buffer.withUnsafeMutableBufferPointer { faces in
                    errorText.withUnsafeMutableBufferPointer { err in
                        fwcv_refine_tilted(
                            handle, pixels.baseAddress, Int32(image.width), Int32(image.height), Int32(image.stride),
                            Int32(channels), faces.baseAddress, Int32(kept), Self.refineAngle, Self.refineMinHeight,
                            err.baseAddress, err.count)
                    }
                }
            }
            guard refined >= 0 else {
                let message = cErrorMessage(errorText)
                throw DetectionError(.detectionFailed, message.isEmpty ? "landmark refinement failed" : message)
            }
        }
        return buffer.prefix(kept).map(Self.convert)
    }

    /// Faces whose eye line reads at least this many degrees off level get their landmarks refined on an upright
    /// crop (see `fwcv_refine_tilted`). The landmark models under-read roll: at the 8° first used, DEV faces truly
    /// tilted 10–13° read 6–7° and were left out, and 11% of faces rotated 30° missed their angle by over 5°; at 5°
    /// that is 4–6% (BENCHMARKS.md).
    static let refineAngle: Float = 5

    /// Faces shorter than this (pixels of the image given) are not refined: on DEV faces 20–40 px tall the
    /// refinement moved the median angle error by 0.02° (3.31° → 3.29°) while costing 40% of its time.
    static let refineMinHeight: Float = 40

    /// Converts a C face: eyes are assigned by x order, the mouth is the midpoint of the corners.
    static func convert(_ face: fwcv_face) -> DetectedFace {
        let l = face.landmarks
        let points: [FacePoint] = [
            FacePoint(x: l.0, y: l.1), FacePoint(x: l.2, y: l.3), FacePoint(x: l.4, y: l.5),
            FacePoint(x: l.6, y: l.7), FacePoint(x: l.8, y: l.9),
        ]
        var leftEye: FacePoint?
        var rightEye: FacePoint?
        var nose: FacePoint?
        var mouth: FacePoint?
        if face.landmark_count >= 2 {
            let (a, b) = (points[0], points[1])
            (leftEye, rightEye) = a.x <= b.x ? (a, b) : (b, a)
        }
        if face.landmark_count >= 5 {
            nose = points[2]
            mouth = FacePoint.midpoint(points[3], points[4])
        }
        var result = DetectedFace(
            bounds: FaceRect(x: face.x, y: face.y, width: face.width, height: face.height),
            leftEye: leftEye, rightEye: rightEye, mouth: mouth, nose: nose, confidence: face.score)
        if face.landmark_count >= 5 {
            result.mouthCorners = points[3].x <= points[4].x ? (points[3], points[4]) : (points[4], points[3])
        }
        return result
    }
}

/// The NUL-terminated message a C shim function wrote into `buffer` (empty when it wrote none).
func cErrorMessage(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
