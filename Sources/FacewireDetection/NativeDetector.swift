import FacewireVocabulary
import FacewireOpenCV
import FacewireImage

/// Owns one native detector (``OpenCVFaceDetector``) and turns its results into ``DetectedFace`` values. Shared by
/// the backends.
final class NativeDetector {
    private let detector: OpenCVFaceDetector
    let inputWidth: Int?
    let scoreThreshold: Float
    let maxFaces: Int
    /// Whether tilted faces get their landmarks refined (the 5-landmark backends; see ``refineAngle``).
    var refineTilted = false
    /// Whether the base width grows with large images (``baseWidth(forImageWidth:)``): the backends' default width,
    /// not one the user chose.
    var widthFollowsImage = false

    /// Most reduction the default width allows: a 1920-wide frame runs at 480, not 320. Measured on the crowd clip
    /// (1920×1080, faces 40–120 px): CenterFace found 290 faces at 320 and 502 at 480 (YuNet 421 at 320), at 1.8× the
    /// detector's time (BENCHMARKS.md, "Crowds"). Frames up to 1280 wide are unchanged.
    static let maxDownscale = 4
    /// The most the default width grows to (a 4K frame: 640, not 960).
    static let maxFollowingWidth = 640

    /// ``inputWidth``, raised when ``widthFollowsImage`` to a multiple of 32 at least `imageWidth` / ``maxDownscale``
    /// (at most ``maxFollowingWidth``).
    func baseWidth(forImageWidth imageWidth: Int) -> Int? {
        guard let inputWidth, widthFollowsImage else { return inputWidth }
        return Self.followingWidth(base: inputWidth, imageWidth: imageWidth)
    }

    /// `base`, raised to a multiple of 32 at least `imageWidth` / ``maxDownscale``, at most ``maxFollowingWidth``.
    static func followingWidth(base: Int, imageWidth: Int) -> Int {
        let wanted = (min(max(imageWidth, 0), 65_536) + 32 * maxDownscale - 1) / (32 * maxDownscale) * 32
        return max(base, min(wanted, maxFollowingWidth))
    }

    /// Loads the detector `kind` after checking the settings and its file.
    static func create(
        what: String, path: String,
        inputWidth: Int?, scoreThreshold: Float, maxFaces: Int,
        _ kind: OpenCVFaceDetector.Kind
    ) throws -> NativeDetector {
        try validate(inputWidth: inputWidth, scoreThreshold: scoreThreshold, maxFaces: maxFaces)
        guard FileSystem.isReadableFile(path) else {
            throw DetectionError(.modelNotFound, "\(what) file not found or not readable: \(path)")
        }
        let detector: OpenCVFaceDetector
        do {
            detector = try OpenCVFaceDetector(kind, maxFaces: maxFaces)
        } catch {
            throw DetectionError(.modelLoadFailed, "cannot load \(what) \(path): \(error.message(or: "unknown error"))")
        }
        return NativeDetector(detector: detector, inputWidth: inputWidth, scoreThreshold: scoreThreshold, maxFaces: maxFaces)
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

    private init(detector: OpenCVFaceDetector, inputWidth: Int?, scoreThreshold: Float, maxFaces: Int) {
        self.detector = detector
        self.inputWidth = inputWidth
        self.scoreThreshold = scoreThreshold
        self.maxFaces = maxFaces
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
        let count: Int
        do {
            count = try detector.detect(image, inputWidth: inputWidth ?? 0)
        } catch {
            throw DetectionError(.detectionFailed, error.message(or: "detection failed"))
        }
        // Faces come best first: those at or above the threshold are a prefix.
        let kept = (0..<count).prefix { detector.score(at: $0) >= scoreThreshold }.count
        if refineTilted, kept > 0 {
            do {
                try detector.refineTilted(image, count: kept, minAngle: Self.refineAngle, minHeight: Self.refineMinHeight)
            } catch {
                throw DetectionError(.detectionFailed, error.message(or: "landmark refinement failed"))
            }
        }
        return (0..<kept).map { Self.convert(detector.face(at: $0)) }
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
    static func convert(_ face: OpenCVFace) -> DetectedFace {
        let l = face.landmarks
        let points: [FacePoint] = [
            FacePoint(x: l[0], y: l[1]), FacePoint(x: l[2], y: l[3]), FacePoint(x: l[4], y: l[5]),
            FacePoint(x: l[6], y: l[7]), FacePoint(x: l[8], y: l[9]),
        ]
        var leftEye: FacePoint?
        var rightEye: FacePoint?
        var nose: FacePoint?
        var mouth: FacePoint?
        if face.landmarkCount >= 2 {
            let (a, b) = (points[0], points[1])
            (leftEye, rightEye) = a.x <= b.x ? (a, b) : (b, a)
        }
        if face.landmarkCount >= 5 {
            nose = points[2]
            mouth = FacePoint.midpoint(points[3], points[4])
        }
        var result = DetectedFace(
            bounds: FaceRect(x: face.x, y: face.y, width: face.width, height: face.height),
            leftEye: leftEye, rightEye: rightEye, mouth: mouth, nose: nose, confidence: face.score)
        if face.landmarkCount >= 5 {
            result.mouthCorners = points[3].x <= points[4].x ? (points[3], points[4]) : (points[4], points[3])
        }
        return result
    }
}
