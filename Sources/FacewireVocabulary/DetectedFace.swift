import Foundation

/// One face found in an image, in that image's pixel coordinates (origin top left, y down).
///
/// Landmarks are named by their position **in the image**, not by the subject's anatomy: ``leftEye`` is the
/// eye with the smaller x (for an upright frontal face, the subject's right eye). Every landmark is optional
/// because not every backend provides it (cascades give at most the eyes).
public struct DetectedFace: Sendable, Equatable {
    /// The face's bounding box, clipped to the image.
    public var bounds: FaceRect
    /// The eye on the image's left side (smaller x).
    public var leftEye: FacePoint?
    /// The eye on the image's right side (larger x).
    public var rightEye: FacePoint?
    /// The mouth centre: the midpoint of the two mouth corners.
    public var mouth: FacePoint?
    /// The tip of the nose.
    public var nose: FacePoint?
    /// The mouth corners on the image's left and right, when the backend gives them (used by the classifiers).
    public var mouthCorners: (left: FacePoint, right: FacePoint)? {
        get { mouthLeft.flatMap { l in mouthRight.map { (l, $0) } } }
        set { mouthLeft = newValue?.left; mouthRight = newValue?.right }
    }
    public var mouthLeft: FacePoint?
    public var mouthRight: FacePoint?
    /// Roll of the face in degrees (CIFaceFeature's faceAngle). Equal to ``roll`` when the face mesh measured it;
    /// otherwise from the eye line:
    /// `atan2(rightEye.y - leftEye.y, rightEye.x - leftEye.x)` in degrees, in `-90...90`.
    ///
    /// 0 means the eyes are level. Because y points down, a **positive** angle means the face is turned
    /// **clockwise** on screen (the image-right eye is lower). `nil` when either eye is missing.
    public var faceAngle: Float?
    /// The detector's confidence. YuNet and CenterFace give a probability in `0...1`; the cascade maps its
    /// neighbour count `n` to `n / (n + 5)`.
    public var confidence: Float
    /// Yaw (turn left/right) in degrees: positive when the face turns toward the image's right. From the face mesh
    /// when ``attributeSource`` is `.mesh` and the pose classifier ran, else from the 5 landmarks' geometry (see
    /// ``yawAngle(leftEye:rightEye:nose:)``). `nil` without both eyes and the nose.
    public var yaw: Float?
    /// Pitch (nod) in degrees from the face mesh: positive when the face turns up. `nil` when the mesh did not run.
    public var pitch: Float?
    /// Roll in degrees from the face mesh, in the sense of ``faceAngle``. `nil` when the mesh did not run.
    public var roll: Float?
    /// How usable the face is, 0...1 (size, sharpness, pose); `nil` when the quality classifier did not run.
    public var quality: Float?
    /// Classifier bits (`DetectionSettings.classifiers`: 1 smile, 2 eyes) whose results were left out because the face
    /// cannot tell (too dark or flat, or too low a quality): never a guess (SPEC 11.7).
    public var withheld: UInt32 = 0
    /// The expressions asked for (SPEC 11.8), one reading each, in ``FacialAction`` order; empty when none ran.
    public var actions: [ActionReading] = []
    /// What the attributes were measured on; `nil` when no classifier ran.
    public var attributeSource: AttributeSource?
    /// The landmark list asked for (``AnalysisOptions/landmarks``), or `nil`.
    public var landmarks: FaceLandmarks?
    /// The mean colour of the face's skin regions (the pulse classifier), measured in the decoded image; empty when
    /// it did not run or found no region.
    public var skin: [SkinSample] = []
    /// Skin regions outlined by the face mesh instead of placed from the eyes (the pulse classifier, when the mesh
    /// ran on the face): the forehead only; empty otherwise.
    public var meshSkin: [SkinSample] = []
    /// The smile and eyes-closed classifiers' results; `nil` fields mean the classifier did not run.
    public var expression: FaceExpression

    /// Creates a face. ``faceAngle`` is computed from the eyes when it is not given.
    public init(
        bounds: FaceRect, leftEye: FacePoint? = nil, rightEye: FacePoint? = nil, mouth: FacePoint? = nil,
        nose: FacePoint? = nil, faceAngle: Float? = nil, confidence: Float, yaw: Float? = nil,
        expression: FaceExpression = FaceExpression()
    ) {
        self.bounds = bounds
        self.leftEye = leftEye
        self.rightEye = rightEye
        self.mouth = mouth
        self.nose = nose
        self.faceAngle = faceAngle ?? Self.rollAngle(leftEye: leftEye, rightEye: rightEye)
        self.confidence = confidence
        self.yaw = yaw ?? Self.yawAngle(leftEye: leftEye, rightEye: rightEye, nose: nose)
        self.expression = expression
    }

    /// The roll angle in degrees for two eyes (see ``faceAngle``), or `nil` if either is missing.
    public static func rollAngle(leftEye: FacePoint?, rightEye: FacePoint?) -> Float? {
        guard let left = leftEye, let right = rightEye else { return nil }
        let dx = Double(right.x - left.x)
        let dy = Double(right.y - left.y)
        guard dx != 0 || dy != 0 else { return nil }
        return Float(atan2(dy, dx) * 180 / Double.pi)
    }

    /// How far the nose tip sits in depth in front of the eye centres, as a fraction of half the inter-ocular
    /// distance: the `d/e` of the yaw model in ``yawAngle(leftEye:rightEye:nose:)``.
    public static let noseDepthRatio: Double = 1 / 0.92

    /// Yaw in degrees from three landmarks, with a rigid-head model: eyes at `±e` and the nose tip `d` in front
    /// of them. Turning the head by θ moves the projected nose off the eye midpoint by `d·sin θ` while the
    /// projected half inter-ocular distance shrinks to `e·cos θ`, so, measured along the (roll-corrected) eye
    /// line, `offset / halfIOD = (d/e)·tan θ` and θ = atan(offset / (halfIOD · d/e)).
    ///
    /// Positive when the nose lies to the image's right of the eye midpoint (the face turns toward the image's
    /// right). `nil` when a point is missing or the eyes coincide.
    public static func yawAngle(leftEye: FacePoint?, rightEye: FacePoint?, nose: FacePoint?) -> Float? {
        guard let left = leftEye, let right = rightEye, let nose else { return nil }
        let ex = Double(right.x - left.x)
        let ey = Double(right.y - left.y)
        let distance = (ex * ex + ey * ey).squareRoot()
        guard distance > 0 else { return nil }
        let midX = Double(left.x + right.x) / 2
        let midY = Double(left.y + right.y) / 2
        let offset = ((Double(nose.x) - midX) * ex + (Double(nose.y) - midY) * ey) / distance
        let ratio = offset / (distance / 2 * noseDepthRatio)
        return Float(atan(ratio) * 180 / Double.pi)
    }

    /// This face with every coordinate multiplied by `sx` horizontally and `sy` vertically (for example to map
    /// from a downscaled image back to full resolution). ``faceAngle`` and ``yaw`` are recomputed from the points
    /// unless the mesh measured them; every other attribute is kept.
    public func scaled(x sx: Float, y sy: Float) -> DetectedFace {
        func point(_ p: FacePoint?) -> FacePoint? { p.map { FacePoint(x: $0.x * sx, y: $0.y * sy) } }
        var face = self
        face.bounds = FaceRect(x: bounds.x * sx, y: bounds.y * sy, width: bounds.width * sx, height: bounds.height * sy)
        face.leftEye = point(leftEye)
        face.rightEye = point(rightEye)
        face.mouth = point(mouth)
        face.nose = point(nose)
        face.mouthLeft = point(mouthLeft)
        face.mouthRight = point(mouthRight)
        face.landmarks = landmarks.map { FaceLandmarks(scheme: $0.scheme, points: $0.points.map { FacePoint(x: $0.x * sx, y: $0.y * sy) }) }
        if roll == nil { face.faceAngle = Self.rollAngle(leftEye: face.leftEye, rightEye: face.rightEye) }
        if pitch == nil { face.yaw = Self.yawAngle(leftEye: face.leftEye, rightEye: face.rightEye, nose: face.nose) }
        return face
    }

    /// The detector's 5 points in the order of ``LandmarkScheme/five``, or `nil` when one is missing.
    public var fivePoints: [FacePoint]? {
        guard let leftEye, let rightEye, let nose, let mouthLeft, let mouthRight else { return nil }
        return [leftEye, rightEye, nose, mouthLeft, mouthRight]
    }
}

/// What a face's attributes were measured on.
public enum AttributeSource: String, Sendable, Equatable {
    /// The 468-point face mesh (and the iris model for the eyes).
    case mesh
    /// The detector's 5 landmarks: the face was too small for the mesh, the mesh found no face in its crop, or the
    /// frame's mesh budget was spent.
    case landmarks
}

/// The landmark list of one face.
public enum LandmarkScheme: String, Sendable, Equatable {
    /// Image-left eye, image-right eye, nose tip, image-left mouth corner, image-right mouth corner.
    case five
    /// MediaPipe's 468-point face mesh, in its index order.
    case mesh
}

/// A face's landmark list, in the image's coordinates.
public struct FaceLandmarks: Sendable, Equatable {
    public var scheme: LandmarkScheme
    public var points: [FacePoint]
    public init(scheme: LandmarkScheme, points: [FacePoint]) {
        self.scheme = scheme
        self.points = points
    }
}

/// What the smile and eyes-closed classifiers found on one face. Scores are in `0...1`; a `nil` score means the
/// classifier did not run (switched off, or the face lacked the landmarks it needs), and its flag is then false.
public struct FaceExpression: Sendable, Equatable {
    /// The smile classifier's score; `hasSmile` is `smileScore >= ` its operating point.
    public var smileScore: Float?
    public var hasSmile: Bool
    /// The eyes-closed classifier's score for the eye on the image's left (smaller x).
    public var leftEyeClosedScore: Float?
    public var leftEyeClosed: Bool
    /// The same for the eye on the image's right.
    public var rightEyeClosedScore: Float?
    public var rightEyeClosed: Bool
    /// How open the eye on the image's left is, 0 (shut) ... 1 (wide open); measured on the mesh and iris models
    /// only (`nil` on the 5-landmark fallback).
    public var leftEyeOpenness: Float?
    /// The same for the eye on the image's right.
    public var rightEyeOpenness: Float?

    public init(
        smileScore: Float? = nil, hasSmile: Bool = false, leftEyeClosedScore: Float? = nil, leftEyeClosed: Bool = false,
        rightEyeClosedScore: Float? = nil, rightEyeClosed: Bool = false, leftEyeOpenness: Float? = nil,
        rightEyeOpenness: Float? = nil
    ) {
        self.smileScore = smileScore
        self.hasSmile = hasSmile
        self.leftEyeClosedScore = leftEyeClosedScore
        self.leftEyeClosed = leftEyeClosed
        self.rightEyeClosedScore = rightEyeClosedScore
        self.rightEyeClosed = rightEyeClosed
        self.leftEyeOpenness = leftEyeOpenness
        self.rightEyeOpenness = rightEyeOpenness
    }
}
