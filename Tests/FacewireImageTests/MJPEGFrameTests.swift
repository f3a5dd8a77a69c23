import Testing

@testable import FacewireImage

@Suite("MJPEGFrame (checking and repairing camera JPEG)")
struct MJPEGFrameTests {
    /// A real JPEG from libjpeg-turbo: a gradient with a block, 96×64.
    static func sample(width: Int = 96, height: Int = 64) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let o = (y * width + x) * 3
                bytes[o] = UInt8(x * 255 / (width - 1))
                bytes[o + 1] = UInt8(y * 255 / (height - 1))
                bytes[o + 2] = x > 20 && x < 50 && y > 10 && y < 40 ? 250 : 30
            }
        }
        return try JPEGEncoder().encode(PixelImage(width: width, height: height, format: .bgr, bytes: bytes), quality: 85)
    }

    /// The segments of a JPEG up to the scan, as (marker, payload).
    static func segments(_ jpeg: [UInt8]) -> [(marker: UInt8, payload: [UInt8])] {
        var out: [(UInt8, [UInt8])] = []
        var i = 2
        while i + 4 <= jpeg.count, jpeg[i] == 0xFF {
            let marker = jpeg[i + 1]
            let length = Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3])
            out.append((marker, Array(jpeg[(i + 4)..<(i + 2 + length)])))
            if marker == 0xDA { break }
            i += 2 + length
        }
        return out
    }

    /// The Huffman tables in DHT payloads, keyed by class/id byte.
    static func tables(_ payloads: [[UInt8]]) -> [UInt8: [UInt8]] {
        var tables: [UInt8: [UInt8]] = [:]
        for payload in payloads {
            var i = 0
            while i + 17 <= payload.count {
                let count = payload[(i + 1)...(i + 16)].reduce(0) { $0 + Int($1) }
                tables[payload[i]] = Array(payload[i..<(i + 17 + count)])
                i += 17 + count
            }
        }
        return tables
    }

    @Test("the standard tables are exactly the ones libjpeg-turbo codes with")
    func standardTablesMatchLibjpegTurbo() throws {
        let jpeg = try Self.sample()
        let theirs = Self.tables(Self.segments(jpeg).filter { $0.marker == 0xC4 }.map(\.payload))
        let ours = Self.tables([Array(MJPEGFrame.standardHuffmanTables.dropFirst(4))])
        #expect(theirs.count == 4)
        #expect(ours == theirs)
    }

    @Test("a complete JPEG passes unchanged")
    func completeJPEGUnchanged() throws {
        let jpeg = try Self.sample()
        let checked = try MJPEGFrame.check(jpeg, expectedSize: (96, 64)).get()
        #expect(checked.jpeg == jpeg)
        #expect(checked.isUnchanged)
        #expect(checked.width == 96 && checked.height == 64)
    }

    @Test("MJPEG without Huffman tables gets the standard ones and decodes to the same pixels")
    func missingHuffmanTablesAreInserted() throws {
        let jpeg = try Self.sample()
        // Strip every DHT segment, as many UVC cameras send their frames.
        var stripped: [UInt8] = [0xFF, 0xD8]
        var i = 2
        while jpeg[i + 1] != 0xDA {
            let length = Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3])
            if jpeg[i + 1] != 0xC4 { stripped += jpeg[i..<(i + 2 + length)] }
            i += 2 + length
        }
        stripped += jpeg[i...]
        #expect(Self.segments(stripped).allSatisfy { $0.marker != 0xC4 })
        let checked = try MJPEGFrame.check(stripped).get()
        #expect(checked.insertedHuffmanTables)
        #expect(checked.jpeg.count == stripped.count + MJPEGFrame.standardHuffmanTables.count)
        let decoder = try JPEGDecoder()
        #expect(try decoder.decode(checked.jpeg) == decoder.decode(jpeg))
    }

    @Test("padding after the end marker is cut off")
    func paddingIsTrimmed() throws {
        let jpeg = try Self.sample()
        let checked = try MJPEGFrame.check(jpeg + [UInt8](repeating: 0, count: 300)).get()
        #expect(checked.jpeg == jpeg)
        #expect(checked.trimmedBytes == 300)
    }

    @Test("torn, broken and foreign buffers are refused with a reason", arguments: [
        ("half", MJPEGFrame.Defect.truncated), ("no-eoi", .truncated), ("empty", .notJPEG), ("text", .notJPEG),
        ("bad-length", .malformed), ("wrong-size", .wrongSize), ("second-soi", .malformed),
    ])
    func defects(_ name: String, _ expected: MJPEGFrame.Defect) throws {
        let jpeg = try Self.sample()
        let bytes: [UInt8] =
            switch name {
            case "half": Array(jpeg.prefix(jpeg.count / 2))
            case "no-eoi": Array(jpeg.dropLast(2))
            case "empty": []
            case "text": Array("not a jpeg at all".utf8)
            case "bad-length": [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x01] + jpeg.dropFirst(2)
            case "second-soi": [0xFF, 0xD8] + jpeg
            default: jpeg
            }
        let size: (Int, Int)? = name == "wrong-size" ? (640, 480) : nil
        guard case .failure(let defect) = MJPEGFrame.check(bytes, expectedSize: size) else {
            Issue.record("\(name) was accepted")
            return
        }
        #expect(defect == expected)
    }

    @Test("an end marker inside an APP segment (an EXIF thumbnail) does not end the image")
    func endMarkerInsideAnAppSegment() throws {
        let jpeg = try Self.sample()
        let thumbnail: [UInt8] = [0xFF, 0xD8, 0x01, 0x02, 0xFF, 0xD9]
        let app1: [UInt8] = [0xFF, 0xE1, 0x00, UInt8(2 + thumbnail.count)] + thumbnail
        let withApp = [0xFF, 0xD8] + app1 + jpeg.dropFirst(2)
        let checked = try MJPEGFrame.check(withApp).get()
        #expect(checked.jpeg == withApp)
    }
}
