import CTurboJPEG

/// A DCT-domain scaling factor for ``JPEGDecoder/decode(_:scale:format:)``: decoding at ½ or ¼
/// costs less than decoding at full size and resizing.
///
/// Only the factors libturbojpeg reports (``supported``) are accepted by the decoder; libturbojpeg 2.1
/// supports n/8 for n in 1...16. Scaled sizes round up, like libturbojpeg's `TJSCALED`.
public struct ScalingFactor: Sendable, Hashable, CustomStringConvertible {
    /// Numerator.
    public let num: Int
    /// Denominator.
    public let denom: Int

    /// Creates a factor. Whether the decoder accepts it is checked at decode time.
    public init(num: Int, denom: Int) {
        self.num = num
        self.denom = denom
    }

    /// Full size.
    public static let one = ScalingFactor(num: 1, denom: 1)
    /// Half size in each dimension.
    public static let half = ScalingFactor(num: 1, denom: 2)
    /// Quarter size in each dimension.
    public static let quarter = ScalingFactor(num: 1, denom: 4)
    /// One eighth in each dimension (the smallest libturbojpeg offers).
    public static let eighth = ScalingFactor(num: 1, denom: 8)

    /// Every factor libturbojpeg supports, largest first.
    public static let supported: [ScalingFactor] = {
        var count: Int32 = 0
        guard let list = tjGetScalingFactors(&count), count > 0 else { return [.one] }
        return UnsafeBufferPointer(start: list, count: Int(count))
            .map { ScalingFactor(num: Int($0.num), denom: Int($0.denom)) }
            .sorted { $0.num * $1.denom > $1.num * $0.denom }
    }()

    /// Whether the decoder supports this factor.
    public var isSupported: Bool { Self.supported.contains { $0.num * denom == num * $0.denom } }

    /// `dimension` scaled by this factor, rounded up (libturbojpeg's `TJSCALED`).
    public func scaled(_ dimension: Int) -> Int {
        guard denom > 0 else { return dimension }
        return (dimension * num + denom - 1) / denom
    }

    /// The smallest supported factor no larger than 1 whose scaled `width` is still at least
    /// `targetWidth`; ``one`` when `targetWidth >= width` or `targetWidth <= 0` (no scaling wanted).
    ///
    /// Use it to decode only as many pixels as a detector needs: for a 1920-wide frame and a
    /// 640-wide detector input this picks 3/8 (720 px).
    public static func smallest(reaching targetWidth: Int, from width: Int) -> ScalingFactor {
        guard targetWidth > 0, targetWidth < width else { return .one }
        var best = ScalingFactor.one
        for factor in supported where factor.num <= factor.denom {
            if factor.scaled(width) >= targetWidth,
               factor.num * best.denom < best.num * factor.denom {
                best = factor
            }
        }
        return best
    }

    public var description: String { "\(num)/\(denom)" }
}
