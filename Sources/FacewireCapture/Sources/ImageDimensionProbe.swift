/// Reads the pixel size from the first bytes of PNG, BMP, PNM and WebP files, so oversized images are
/// rejected before OpenCV allocates memory for them. Every read is bounds-checked; unknown or
/// malformed headers give `nil` (the size is then checked after decoding).
enum ImageDimensionProbe {
    /// How many leading bytes ``dimensions(of:)`` needs at most.
    static let headerLength = 1024

    static func dimensions(of header: [UInt8]) -> (width: Int, height: Int)? {
        png(header) ?? bmp(header) ?? webp(header) ?? pnm(header)
    }

    private static func bigEndian32(_ bytes: [UInt8], _ offset: Int) -> Int? {
        guard offset >= 0, offset + 4 <= bytes.count else { return nil }
        return bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
    }

    private static func littleEndian(_ bytes: [UInt8], _ offset: Int, _ count: Int) -> Int? {
        guard offset >= 0, offset + count <= bytes.count else { return nil }
        return bytes[offset..<offset + count].reversed().reduce(0) { $0 << 8 | Int($1) }
    }

    private static func png(_ b: [UInt8]) -> (width: Int, height: Int)? {
        guard b.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
              let width = bigEndian32(b, 16), let height = bigEndian32(b, 20)
        else { return nil }
        return (width, height)
    }

    private static func bmp(_ b: [UInt8]) -> (width: Int, height: Int)? {
        guard b.starts(with: [0x42, 0x4D]), let headerSize = littleEndian(b, 14, 4) else { return nil }
        if headerSize == 12 {  // OS/2 BITMAPCOREHEADER: 16-bit sizes
            guard let width = littleEndian(b, 18, 2), let height = littleEndian(b, 20, 2) else { return nil }
            return (width, height)
        }
        guard let width = littleEndian(b, 18, 4), let rawHeight = littleEndian(b, 22, 4) else { return nil }
        let height = Int(Int32(truncatingIfNeeded: rawHeight)).magnitude  // negative = top-down
        return (Int(Int32(truncatingIfNeeded: width)), Int(height))
    }

    private static func webp(_ b: [UInt8]) -> (width: Int, height: Int)? {
        guard b.count >= 30, b.starts(with: Array("RIFF".utf8)), Array(b[8..<12]) == Array("WEBP".utf8) else {
            return nil
        }
        let chunk = String(decoding: b[12..<16], as: UTF8.self)
        switch chunk {
        case "VP8X":
            guard let w = littleEndian(b, 24, 3), let h = littleEndian(b, 27, 3) else { return nil }
            return (w + 1, h + 1)
        case "VP8L":
            guard let bits = littleEndian(b, 21, 4) else { return nil }
            return ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
        case "VP8 ":
            guard let w = littleEndian(b, 26, 2), let h = littleEndian(b, 28, 2) else { return nil }
            return (w & 0x3FFF, h & 0x3FFF)
        default:
            return nil
        }
    }

    /// PNM (P1–P6): magic, then width and height as ASCII decimals, with `#` comments allowed.
    private static func pnm(_ b: [UInt8]) -> (width: Int, height: Int)? {
        guard b.count >= 3, b[0] == 0x50, (0x31...0x36).contains(b[1]) else { return nil }
        var numbers: [Int] = []
        var index = 2
        while numbers.count < 2, index < b.count {
            let byte = b[index]
            if byte == 0x23 {  // '#': skip to end of line
                while index < b.count, b[index] != 0x0A { index += 1 }
            } else if (0x30...0x39).contains(byte) {
                var value = 0
                while index < b.count, (0x30...0x39).contains(b[index]) {
                    value = value * 10 + Int(b[index] - 0x30)
                    if value > 1 << 31 { return nil }
                    index += 1
                }
                numbers.append(value)
                continue
            } else if ![0x20, 0x09, 0x0A, 0x0D].contains(byte) {
                return nil
            }
            index += 1
        }
        return numbers.count == 2 ? (numbers[0], numbers[1]) : nil
    }
}
