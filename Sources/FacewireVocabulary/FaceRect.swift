/// An axis-aligned rectangle in image pixel coordinates (origin at the top left, y pointing down): the one box of
/// every module (a detected face's bounds, a track's box, a box drawn in the live view).
public struct FaceRect: Sendable, Equatable, Hashable {
    /// Left edge.
    public var x: Float
    /// Top edge.
    public var y: Float
    /// Width in pixels.
    public var width: Float
    /// Height in pixels.
    public var height: Float

    /// Creates a rectangle.
    public init(x: Float, y: Float, width: Float, height: Float) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// Right edge (`x + width`).
    public var maxX: Float { x + width }
    /// Bottom edge (`y + height`).
    public var maxY: Float { y + height }
    /// The centre point.
    public var center: FacePoint { FacePoint(x: x + width / 2, y: y + height / 2) }
    /// `width * height`, or 0 for an empty rectangle.
    public var area: Float { max(0, width) * max(0, height) }

    /// Whether `point` lies inside the rectangle (edges included).
    public func contains(_ point: FacePoint) -> Bool {
        point.x >= x && point.x <= maxX && point.y >= y && point.y <= maxY
    }

    /// Intersection over union with `other`, in `0...1` (0 when either rectangle is empty).
    public func intersectionOverUnion(_ other: FaceRect) -> Float {
        let w = min(maxX, other.maxX) - max(x, other.x)
        let h = min(maxY, other.maxY) - max(y, other.y)
        guard w > 0, h > 0 else { return 0 }
        let intersection = w * h
        let union = area + other.area - intersection
        return union > 0 ? intersection / union : 0
    }

    /// The distance between the centres of the two rectangles.
    public func centreDistance(to other: FaceRect) -> Float {
        let dx = (x + width / 2) - (other.x + other.width / 2)
        let dy = (y + height / 2) - (other.y + other.height / 2)
        return (dx * dx + dy * dy).squareRoot()
    }
}
