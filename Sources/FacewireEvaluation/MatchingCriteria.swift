import FacewireDetection
/// How detections are matched to ground truth when scoring.
public struct MatchingCriteria: Sendable, Equatable {
    /// Minimum IoU for a detection to match a ground-truth face.
    public var iouThreshold: Float
    /// Ground-truth faces shorter than this (in pixels) are not counted: missing them costs nothing, and a
    /// detection matching one is neither a true nor a false positive.
    public var minimumFaceHeight: Float

    /// Creates criteria. The defaults (IoU 0.4, 20 px) suit the DEV set's derived Caltech boxes.
    public init(iouThreshold: Float = 0.4, minimumFaceHeight: Float = 20) {
        self.iouThreshold = iouThreshold
        self.minimumFaceHeight = minimumFaceHeight
    }
}
