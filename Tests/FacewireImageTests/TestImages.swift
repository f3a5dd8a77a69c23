import FacewireImage

/// Synthetic images and handcrafted JPEG bytes for the tests.
enum TestImages {
    /// A smooth BGR gradient (JPEG-friendly: small round-trip error).
    static func gradient(width: Int, height: Int) -> PixelImage {
        var bytes = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 3
                bytes[i] = UInt8(x * 255 / max(width - 1, 1))
                bytes[i + 1] = UInt8(y * 255 / max(height - 1, 1))
                bytes[i + 2] = UInt8((x + y) * 255 / max(width + height - 2, 1))
            }
        }
        return PixelImage(width: width, height: height, format: .bgr, bytes: bytes)
    }

    /// A smooth grey gradient.
    static func greyGradient(width: Int, height: Int) -> PixelImage {
        var bytes = [UInt8](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                bytes[y * width + x] = UInt8((x + y) * 255 / max(width + height - 2, 1))
            }
        }
        return PixelImage(width: width, height: height, format: .grey, bytes: bytes)
    }

    /// Largest absolute difference between two same-sized, tightly packed images.
    static func maxDifference(_ a: PixelImage, _ b: PixelImage) -> Int {
        zip(a.bytes, b.bytes).reduce(0) { max($0, abs(Int($1.0) - Int($1.1))) }
    }

    /// Mean absolute difference between two same-sized, tightly packed images.
    static func meanDifference(_ a: PixelImage, _ b: PixelImage) -> Double {
        let total = zip(a.bytes, b.bytes).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
        return Double(total) / Double(max(a.bytes.count, 1))
    }

    /// A minimal JPEG header: SOI, then a baseline SOF0 for a 3-component image of the given size, then EOI.
    /// Enough for a header reader that checks size before decoding.
    static func sofOnly(width: Int, height: Int) -> [UInt8] {
        var jpeg: [UInt8] = [0xFF, 0xD8]
        // DQT (one table, all ones) so libjpeg accepts the header.
        jpeg += [0xFF, 0xDB, 0x00, 0x43, 0x00] + [UInt8](repeating: 1, count: 64)
        jpeg += [0xFF, 0xC0, 0x00, 0x11, 0x08,
                 UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF),
                 0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x00, 0x03, 0x11, 0x00]
        // A DHT would be needed to decode; the header reader stops at SOS.
        jpeg += [0xFF, 0xDA, 0x00, 0x0C, 0x03, 0x01, 0x00, 0x02, 0x11, 0x03, 0x11, 0x00, 0x3F, 0x00]
        jpeg += [0xFF, 0xD9]
        return jpeg
    }

    /// An APP1 Exif segment with an IFD0 holding the orientation tag (plus one unrelated tag first).
    static func exifSegment(orientation: UInt16, bigEndian: Bool, type: UInt16 = 3) -> [UInt8] {
        func u16(_ v: UInt16) -> [UInt8] { bigEndian ? [UInt8(v >> 8), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func u32(_ v: UInt32) -> [UInt8] {
            let b = [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
            return bigEndian ? b : b.reversed()
        }
        var tiff: [UInt8] = bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]
        tiff += u16(42) + u32(8)
        tiff += u16(2)  // two entries
        tiff += u16(0x010F) + u16(2) + u32(4) + u32(0)  // Make, ASCII, unrelated
        tiff += u16(0x0112) + u16(type) + u32(1) + u16(orientation) + u16(0)
        tiff += u32(0)  // no next IFD
        let payload: [UInt8] = Array("Exif".utf8) + [0, 0] + tiff
        let length = payload.count + 2
        return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }

    /// Inserts a segment right after the SOI marker of a JPEG.
    static func inserting(_ segment: [UInt8], into jpeg: [UInt8]) -> [UInt8] {
        Array(jpeg[0..<2]) + segment + Array(jpeg[2...])
    }
}
