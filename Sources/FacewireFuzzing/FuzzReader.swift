/// Reads structured values from a fuzzer's bytes: the front of a structure-aware fuzz target.
///
/// The fuzzer mutates bytes; this turns them into *well-formed* values with hostile contents, so that the code
/// under test gets past its parsers and has to cope with what the values mean. Numbers are drawn with a strong bias
/// toward the values that break arithmetic and allocation (0, 1, −1, the extremes, 2^40, 2^63, …), strings toward
/// the empty string, the longest valid stream id and a small pool of ids (so that messages meet on the same stream).
///
/// When the bytes run out every read returns zero-like values, so a short input is still a valid (short) program.
public struct FuzzReader {
    private let bytes: [UInt8]
    private var position = 0

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Whether any input is left.
    public var isAtEnd: Bool { position >= bytes.count }

    /// One byte (0 when the input is used up).
    public mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// A value in `0..<bound` (bound > 0).
    public mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0)
        return Int(byte()) % bound
    }

    public mutating func bool() -> Bool { byte() & 1 == 1 }

    /// Eight raw bytes, little-endian.
    public mutating func rawUInt64() -> UInt64 {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 8) { value |= UInt64(byte()) << UInt64(shift) }
        return value
    }

    /// An unsigned value biased toward the ones that break code: 0, 1, small, the extremes, powers of two.
    public mutating func uint64() -> UInt64 {
        switch byte() % 12 {
        case 0: return 0
        case 1: return 1
        case 2: return UInt64(byte())
        case 3: return UInt64.max
        case 4: return UInt64.max - 1
        case 5: return 1 << 40
        case 6: return 1 << 63
        case 7: return UInt64(Int64.max)
        case 8: return 1 << UInt64(byte() % 64)
        case 9: return UInt64(byte()) << 8 | UInt64(byte())
        default: return rawUInt64()
        }
    }

    /// A signed value biased toward 0, −1, the extremes and plausible microsecond times around `near`.
    public mutating func int64(near: Int64 = 0) -> Int64 {
        switch byte() % 10 {
        case 0: return 0
        case 1: return -1
        case 2: return .min
        case 3: return .max
        case 4: return .min + 1
        case 5: return near &+ Int64(Int8(bitPattern: byte())) &* 33_333
        case 6: return near
        case 7: return Int64(bitPattern: 1 << 63 | UInt64(byte()))
        default: return Int64(bitPattern: rawUInt64())
        }
    }

    /// A 32-bit value biased toward 0 and the extremes.
    public mutating func uint32() -> UInt32 {
        switch byte() % 6 {
        case 0: return 0
        case 1: return .max
        case 2: return UInt32(byte())
        case 3: return 1 << UInt32(byte() % 32)
        default: return UInt32(truncatingIfNeeded: rawUInt64())
        }
    }

    /// A float biased toward the values that poison geometry: NaN, infinities, huge, negative, subnormal.
    public mutating func float() -> Float {
        switch byte() % 10 {
        case 0: return .nan
        case 1: return .infinity
        case 2: return -.infinity
        case 3: return .greatestFiniteMagnitude
        case 4: return -1
        case 5: return .leastNonzeroMagnitude
        case 6: return 0
        default: return Float(byte()) * 4 + Float(byte()) / 256
        }
    }

    /// A string: usually a stream id from a small shared pool (so messages meet), sometimes empty, the longest valid
    /// id, an invalid one, or a long one.
    public mutating func streamID() -> String {
        switch byte() % 8 {
        case 0: return ""
        case 1: return String(repeating: "s", count: 64)
        case 2: return String(repeating: "x", count: 65)
        case 3: return "bad id/\u{0}"
        case 4: return "s\(byte())"
        default: return "cam\(byte() % 4)"
        }
    }

    /// Free text of hostile length and content (node ids, reasons, request ids, endpoints).
    public mutating func text() -> String {
        switch byte() % 6 {
        case 0: return ""
        case 1: return String(repeating: "a", count: 64)
        case 2: return String(repeating: "é", count: Int(byte()) * 8)
        case 3: return "no-worker"
        case 4: return "tcp://127.0.0.1:\(Int(byte()) * 257)"
        default: return String(decoding: (0..<Int(byte() % 24)).map { _ in byte() }, as: UTF8.self)
        }
    }
}
