/// A growing UTF-8 byte buffer that JSON is written into directly: no `String` per value, no `String(format:)`,
/// no intermediate arrays. ``JSONLines`` writes every line through one of these; the tail hands the bytes to one
/// `write(2)`.
///
/// Written by hand (not `JSONEncoder`) for the same reasons as ``JSONLines``: fixed key order, numbers rounded to what
/// the measurement supports, and speed (the tail formats every frame of every stream it follows).
public struct JSONBuffer: Sendable {
    /// The bytes written so far (UTF-8).
    public private(set) var bytes: [UInt8]

    /// An empty buffer with room for `capacity` bytes.
    public init(capacity: Int = 512) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// The bytes as a `String`.
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    /// Appends ASCII text as it is (keys, punctuation, literals).
    public mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends text as it is (its UTF-8), without quoting.
    public mutating func append(text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// Appends one byte.
    public mutating func append(byte: UInt8) {
        bytes.append(byte)
    }

    /// Appends a signed integer in decimal.
    public mutating func append<T: BinaryInteger>(_ value: T) {
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
            appendDigits(UInt64(value.magnitude))
        } else {
            appendDigits(UInt64(value))
        }
    }

    /// Appends `true` or `false`.
    public mutating func append(_ value: Bool) {
        value ? append("true") : append("false")
    }

    /// Appends the decimal digits of `value`, at least `minimumDigits` of them (zero-padded on the left).
    mutating func appendDigits(_ value: UInt64, minimumDigits: Int = 1) {
        // UInt64.max has 20 digits.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var remaining = value
            var count = 0
            repeat {
                digits[19 - count] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
                count += 1
            } while remaining > 0 || count < min(minimumDigits, 20)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[(20 - count)...]))
        }
    }

    /// Appends a finite number with at most `decimals` (0...6) decimals and no trailing zeros, `-0` as `0`; NaN and
    /// infinities as `null`. The same text as C's `%.Nf` with the trailing zeros cut (ties to even: a `Float` times a
    /// power of ten up to 10⁶ is exact in a `Double`, so the rounding sees the true value).
    public mutating func append(_ value: Float, decimals: Int) {
        guard value.isFinite else { return append("null") }
        let places = min(max(decimals, 0), 6)
        var scale: Int64 = 1
        for _ in 0..<places { scale *= 10 }
        let scaled = (Double(value) * Double(scale)).rounded(.toNearestOrEven)
        guard abs(scaled) < 9e15 else {
            // Beyond 2^53 the integer path would lose digits: fall back to the C library (never for real values).
            let text = JSONLines.formatted(value, places)
            return bytes.append(contentsOf: text.utf8)
        }
        let whole = Int64(scaled)
        if whole < 0 { bytes.append(UInt8(ascii: "-")) }
        let magnitude = whole.magnitude
        appendDigits(magnitude / UInt64(scale))
        var fraction = magnitude % UInt64(scale)
        guard fraction != 0 else { return }
        var digits = places
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        bytes.append(UInt8(ascii: "."))
        appendDigits(fraction, minimumDigits: digits)
    }

    /// Appends a JSON string literal: quotes, `\"`, `\\`, `\n`, `\r`, `\t`, other control characters as `\u00XX`;
    /// everything else as its UTF-8.
    public mutating func append(quoted text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): append("\\\"")
            case UInt8(ascii: "\\"): append("\\\\")
            case UInt8(ascii: "\n"): append("\\n")
            case UInt8(ascii: "\r"): append("\\r")
            case UInt8(ascii: "\t"): append("\\t")
            case 0..<0x20:
                append("\\u00")
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends Unix microseconds as seconds with six decimals (`-` for times before 1970).
    public mutating func append(seconds microseconds: Int64) {
        if microseconds < 0 { bytes.append(UInt8(ascii: "-")) }
        let magnitude = microseconds.magnitude
        appendDigits(magnitude / 1_000_000)
        bytes.append(UInt8(ascii: "."))
        appendDigits(magnitude % 1_000_000, minimumDigits: 6)
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}
