import FacewireProtocol
import FacewireVocabulary

/// What the imaging needs of a face: where it is, which track it belongs to and how it is rolled, in pixels of the
/// **upright** frame (the frame's EXIF orientation applied, SPEC §11.3), origin top left, y down.
///
/// Built from a wire `Face` (``init(face:label:)``) or by hand. Nothing is checked here: the imaging functions take
/// whatever values arrive (NaN, infinite, negative, huge, outside the image) and say what they do with them.
public struct FaceDrawing: Sendable, Equatable {
    /// An axis-aligned rectangle: left, top, width, height (the vocabulary's one box).
    public typealias Box = FaceRect
    /// A point (the vocabulary's one point).
    public typealias Point = FacePoint

    /// The face's bounding box.
    public var bounds: Box
    /// The collector's tracking ID; 0 = not tracked (drawn without an ID).
    public var trackingID: UInt64
    /// Roll in degrees, the sense of `face_angle`: positive = turned clockwise on screen (the image-right eye lower).
    /// `nil` (or a non-finite value) means level.
    public var roll: Float?
    /// The eye on the image's left (smaller x).
    public var leftEye: Point?
    /// The eye on the image's right.
    public var rightEye: Point?
    /// The mouth's centre.
    public var mouth: Point?
    /// Extra text drawn under the ID, for example "smile" (ASCII; other characters are drawn as `?`).
    public var label: String?

    public init(
        bounds: Box, trackingID: UInt64 = 0, roll: Float? = nil, leftEye: Point? = nil, rightEye: Point? = nil,
        mouth: Point? = nil, label: String? = nil
    ) {
        self.bounds = bounds
        self.trackingID = trackingID
        self.roll = roll
        self.leftEye = leftEye
        self.rightEye = rightEye
        self.mouth = mouth
        self.label = label
    }

    /// The drawing of a wire `Face`: its bounds, tracking ID, `face_angle` as the roll, eyes and mouth (each when
    /// present).
    public init(face: Facewire_V1_Face, label: String? = nil) {
        self.init(
            bounds: Box(x: face.bounds.x, y: face.bounds.y, width: face.bounds.width, height: face.bounds.height),
            trackingID: face.trackingID,
            roll: face.hasFaceAngle ? face.faceAngle : nil,
            leftEye: face.hasLeftEye ? Point(x: face.leftEye.x, y: face.leftEye.y) : nil,
            rightEye: face.hasRightEye ? Point(x: face.rightEye.x, y: face.rightEye.y) : nil,
            mouth: face.hasMouth ? Point(x: face.mouth.x, y: face.mouth.y) : nil,
            label: label)
    }
}
