/// A point in image pixel coordinates (origin at the top left, y pointing down).
public struct FacePoint: Sendable, Equatable, Hashable {
    /// Horizontal position in pixels.
    public var x: Float
    /// Vertical position in pixels (down is positive).
    public var y: Float

    /// Creates a point.
    public init(x: Float, y: Float) {
        self.x = x
        self.y = y
    }

    /// The point halfway between `a` and `b`.
    public static func midpoint(_ a: FacePoint, _ b: FacePoint) -> FacePoint {
        FacePoint(x: (a.x + b.x) / 2, y: (a.y + b.y) / 2)
    }
}
