/// Checks and, where it is safe, repairs one frame of a motion-JPEG stream (a UVC camera's MJPEG buffer, or one
/// image of an `-f mjpeg` byte stream) without decoding it: a walk over its marker segments.
///
/// What a camera hands over is often not quite a JPEG file: many UVC cameras leave out the Huffman tables (DHT),
/// relying on the standard ones of ITU-T T.81 Annex K (Motion-JPEG's convention), and drivers pad buffers after the
/// end marker. Both are repaired here, as FFmpeg's `mjpeg2jpeg` filter does, so that every decoder a consumer may
/// use reads the frame. What cannot be repaired (a buffer cut off before its end marker, a broken segment, a size
/// other than the one negotiated) is refused with a reason, for the caller to count.
public enum MJPEGFrame {
    /// Why a buffer is not a usable frame.
    public enum Defect: String, Error, Sendable, Equatable, CustomStringConvertible {
        /// Empty, or no SOI marker at the start.
        case notJPEG = "not-jpeg"
        /// The data stops before the end-of-image marker (a short or torn buffer).
        case truncated
        /// A segment length or marker is impossible.
        case malformed
        /// No frame header (SOF), or one this check does not accept (arithmetic coding, lossless).
        case unsupported
        /// The frame's size is not the one negotiated with the camera.
        case wrongSize = "wrong-size"

        public var description: String { rawValue }
    }

    /// A usable frame: the bytes to send, and what was done to them.
    public struct Checked: Sendable, Equatable {
        public var jpeg: [UInt8]
        public var width: Int
        public var height: Int
        /// The standard Huffman tables were inserted (the frame had none).
        public var insertedHuffmanTables: Bool
        /// Bytes after the end-of-image marker that were cut off (driver padding).
        public var trimmedBytes: Int

        /// Whether ``jpeg`` is the input unchanged.
        public var isUnchanged: Bool { !insertedHuffmanTables && trimmedBytes == 0 }
    }

    /// Checks `bytes`; returns the frame to send (the same bytes when nothing needed repair) or the defect.
    /// - Parameter expectedSize: the negotiated width and height; a frame of another size is refused.
    public static func check(_ bytes: UnsafeRawBufferPointer, expectedSize: (width: Int, height: Int)? = nil) -> Result<Checked, Defect> {
        let n = bytes.count
        guard n >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return .failure(.notJPEG) }
        var i = 2
        var size: (width: Int, height: Int)?
        var hasHuffmanTables = false
        var baseline = false
        while true {
            // A marker: 0xFF, optional fill bytes 0xFF, then the code.
            guard i < n, bytes[i] == 0xFF else { return .failure(i >= n ? .truncated : .malformed) }
            while i < n, bytes[i] == 0xFF { i += 1 }
            guard i < n else { return .failure(.truncated) }
            let marker = bytes[i]
            i += 1
            switch marker {
            case 0xD8, 0xD9, 0x00: return .failure(.malformed)  // a second SOI, an EOI before any scan, a stuffed byte
            case 0x01, 0xD0...0xD7: continue  // TEM and restart markers carry no length
            default: break
            }
            guard i + 2 <= n else { return .failure(.truncated) }
            let length = Int(bytes[i]) << 8 | Int(bytes[i + 1])
            guard length >= 2 else { return .failure(.malformed) }
            guard i + length <= n else { return .failure(.truncated) }
            switch marker {
            case 0xC0, 0xC1, 0xC2:  // baseline, extended and progressive Huffman frames
                guard length >= 8 else { return .failure(.malformed) }
                let height = Int(bytes[i + 3]) << 8 | Int(bytes[i + 4])
                let width = Int(bytes[i + 5]) << 8 | Int(bytes[i + 6])
                guard width > 0, height > 0 else { return .failure(.malformed) }
                size = (width, height)
                baseline = marker == 0xC0
            case 0xC3, 0xC5...0xC7, 0xC9...0xCB, 0xCD...0xCF:
                return .failure(.unsupported)
            case 0xC4:
                hasHuffmanTables = true
            default: break
            }
            if marker == 0xDA {
                // Start of scan: entropy-coded data runs to the end-of-image marker. Drivers pad after it, so take
                // the last EOI in the buffer.
                guard let size else { return .failure(.unsupported) }
                if let expectedSize, expectedSize != size { return .failure(.wrongSize) }
                let scanStart = i + length
                var end = n - 2
                while end >= scanStart, !(bytes[end] == 0xFF && bytes[end + 1] == 0xD9) { end -= 1 }
                guard end >= scanStart else { return .failure(.truncated) }
                let total = end + 2
                let sosStart = i - 2  // the FF DA of this scan
                var jpeg: [UInt8]
                let insert = !hasHuffmanTables && baseline
                if !hasHuffmanTables && !baseline { return .failure(.unsupported) }
                if insert {
                    jpeg = []
                    jpeg.reserveCapacity(total + standardHuffmanTables.count)
                    jpeg.append(contentsOf: bytes[0..<sosStart])
                    jpeg.append(contentsOf: standardHuffmanTables)
                    jpeg.append(contentsOf: bytes[sosStart..<total])
                } else {
                    jpeg = Array(bytes[0..<total])
                }
                return .success(Checked(
                    jpeg: jpeg, width: size.width, height: size.height, insertedHuffmanTables: insert, trimmedBytes: n - total))
            }
            i += length
        }
    }

    /// ``check(_:expectedSize:)`` for an array.
    public static func check(_ bytes: [UInt8], expectedSize: (width: Int, height: Int)? = nil) -> Result<Checked, Defect> {
        bytes.withUnsafeBytes { check($0, expectedSize: expectedSize) }
    }

    /// One DHT segment with the four standard tables of ITU-T T.81 Annex K.3 (luminance and chrominance, DC and AC),
    /// the tables Motion-JPEG frames without a DHT are coded with.
    public static let standardHuffmanTables: [UInt8] = {
        let dcLuminanceBits: [UInt8] = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0]
        let dcChrominanceBits: [UInt8] = [0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0]
        let dcValues: [UInt8] = Array(0...11)
        let acLuminanceBits: [UInt8] = [0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7D]
        let acLuminanceValues: [UInt8] = [
            0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07,
            0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xA1, 0x08, 0x23, 0x42, 0xB1, 0xC1, 0x15, 0x52, 0xD1, 0xF0,
            0x24, 0x33, 0x62, 0x72, 0x82, 0x09, 0x0A, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x25, 0x26, 0x27, 0x28,
            0x29, 0x2A, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3A, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49,
            0x4A, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5A, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69,
            0x6A, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7A, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89,
            0x8A, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9A, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7,
            0xA8, 0xA9, 0xAA, 0xB2, 0xB3, 0xB4, 0xB5, 0xB6, 0xB7, 0xB8, 0xB9, 0xBA, 0xC2, 0xC3, 0xC4, 0xC5,
            0xC6, 0xC7, 0xC8, 0xC9, 0xCA, 0xD2, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7, 0xD8, 0xD9, 0xDA, 0xE1, 0xE2,
            0xE3, 0xE4, 0xE5, 0xE6, 0xE7, 0xE8, 0xE9, 0xEA, 0xF1, 0xF2, 0xF3, 0xF4, 0xF5, 0xF6, 0xF7, 0xF8,
            0xF9, 0xFA,
        ]
        let acChrominanceBits: [UInt8] = [0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77]
        let acChrominanceValues: [UInt8] = [
            0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12, 0x41, 0x51, 0x07, 0x61, 0x71,
            0x13, 0x22, 0x32, 0x81, 0x08, 0x14, 0x42, 0x91, 0xA1, 0xB1, 0xC1, 0x09, 0x23, 0x33, 0x52, 0xF0,
            0x15, 0x62, 0x72, 0xD1, 0x0A, 0x16, 0x24, 0x34, 0xE1, 0x25, 0xF1, 0x17, 0x18, 0x19, 0x1A, 0x26,
            0x27, 0x28, 0x29, 0x2A, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3A, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48,
            0x49, 0x4A, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5A, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68,
            0x69, 0x6A, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7A, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87,
            0x88, 0x89, 0x8A, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9A, 0xA2, 0xA3, 0xA4, 0xA5,
            0xA6, 0xA7, 0xA8, 0xA9, 0xAA, 0xB2, 0xB3, 0xB4, 0xB5, 0xB6, 0xB7, 0xB8, 0xB9, 0xBA, 0xC2, 0xC3,
            0xC4, 0xC5, 0xC6, 0xC7, 0xC8, 0xC9, 0xCA, 0xD2, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7, 0xD8, 0xD9, 0xDA,
            0xE2, 0xE3, 0xE4, 0xE5, 0xE6, 0xE7, 0xE8, 0xE9, 0xEA, 0xF2, 0xF3, 0xF4, 0xF5, 0xF6, 0xF7, 0xF8,
            0xF9, 0xFA,
        ]
        // Class (0 DC, 1 AC) in the high nibble, table id in the low one.
        let tables: [(UInt8, [UInt8], [UInt8])] = [
            (0x00, dcLuminanceBits, dcValues), (0x10, acLuminanceBits, acLuminanceValues),
            (0x01, dcChrominanceBits, dcValues), (0x11, acChrominanceBits, acChrominanceValues),
        ]
        var body: [UInt8] = []
        for (id, bits, values) in tables {
            precondition(bits.reduce(0) { $0 + Int($1) } == values.count)
            body += [id] + bits + values
        }
        let length = body.count + 2
        return [0xFF, 0xC4, UInt8(length >> 8), UInt8(length & 0xFF)] + body
    }()
}
