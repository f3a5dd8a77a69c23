/// How good a face is as its track's picture: larger, more frontal and of higher quality is better.
///
/// The score is a product of three factors, each rising strictly with one property and never reaching 0 except for
/// an empty box, so no property can be traded to zero against the others:
/// - size: `s / (s + 64)` with `s = √(width × height)` (a 64 px face scores 0.5, a 320 px one 0.83);
/// - pose: `(1 − 0.9 |yaw| / 90) × (1 − 0.9 |pitch| / 90)`, the angles clamped to 90°; an absent angle (not
///   measured) counts as 20°;
/// - quality: `0.25 + 0.75 q`, q clamped to `0...1`; absent counts as 0.5.
///
/// Non-finite inputs count as the worst: a NaN or infinite size as 0, angle as 90°, quality as 0. The score is always
/// finite, in `0...1`.
public enum BestFace {
    /// The score of a face (see ``BestFace``). Pure.
    public static func score(width: Float, height: Float, yaw: Float?, pitch: Float?, quality: Float?) -> Float {
        func side(_ value: Float) -> Double { value.isFinite ? Double(max(value, 0)) : 0 }
        let size = (side(width) * side(height)).squareRoot()
        func frontal(_ angle: Float?) -> Double {
            guard let angle else { return 1 - 0.9 * 20 / 90 }
            let degrees = angle.isFinite ? min(abs(Double(angle)), 90) : 90
            return 1 - 0.9 * degrees / 90
        }
        let q = quality.map { $0.isFinite ? min(max(Double($0), 0), 1) : 0 } ?? 0.5
        return Float(size / (size + 64) * frontal(yaw) * frontal(pitch) * (0.25 + 0.75 * q))
    }
}
