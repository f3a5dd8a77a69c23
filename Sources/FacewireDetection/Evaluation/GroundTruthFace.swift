/// One annotated face of an evaluation image.
public struct GroundTruthFace: Sendable, Equatable {
    /// The annotated box.
    public var box: FaceRect
    /// Whether the annotation marks the face as difficult (never counted, never a false positive).
    public var ignore: Bool

    /// Creates a ground-truth face.
    public init(box: FaceRect, ignore: Bool = false) {
        self.box = box
        self.ignore = ignore
    }
}
