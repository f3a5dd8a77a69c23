import FacewireDetection
import FacewireVocabulary
/// One annotated face of an evaluation image.
public struct GroundTruthFace: Sendable, Equatable {
    /// The annotated box.
    public var box: FaceRect
    /// Whether the annotation marks the face as difficult (never counted, never a false positive).
    public var ignore: Bool
    /// The annotated eye with the smaller x (the image's left), when the source gives eyes.
    public var leftEye: FacePoint?
    /// The annotated eye with the larger x (the image's right).
    public var rightEye: FacePoint?

    /// Creates a ground-truth face. The two eyes are put in x order whatever order they are given in, as
    /// ``DetectedFace`` does, so that eye errors compare the image-left eye with the image-left eye.
    public init(box: FaceRect, ignore: Bool = false, leftEye: FacePoint? = nil, rightEye: FacePoint? = nil) {
        self.box = box
        self.ignore = ignore
        if let a = leftEye, let b = rightEye, b.x < a.x {
            self.leftEye = b
            self.rightEye = a
        } else {
            self.leftEye = leftEye
            self.rightEye = rightEye
        }
    }

    /// Whether the face counts under `criteria`: not marked ignore and at least the minimum height.
    public func isCounted(under criteria: MatchingCriteria) -> Bool {
        !ignore && box.height >= criteria.minimumFaceHeight
    }
}
