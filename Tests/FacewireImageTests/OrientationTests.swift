import Testing
@testable import FacewireImage

@Suite("EXIF orientation")
struct OrientationTests {
    @Test func rawValues() {
        #expect(Orientation.up.rawValue == 1)
        #expect(Orientation.allCases.map(\.rawValue) == Array(1...8))
        #expect(Orientation(rawValue: 0) == .up)
        #expect(Orientation(rawValue: 9) == .up)
        #expect(Orientation(rawValue: -3) == .up)
        #expect(Orientation(rawValue: 6) == .right)
    }

    @Test func uprightSize() {
        for orientation in Orientation.allCases {
            let size = orientation.uprightSize(width: 4, height: 3)
            if orientation.rawValue >= 5 {
                #expect(size == (3, 4))
            } else {
                #expect(size == (4, 3))
            }
        }
    }

    /// A 3×2 image whose grey value encodes its stored position: value = 10 * y + x.
    ///
    ///     stored:  0  1  2
    ///             10 11 12
    static let stored = PixelImage(width: 3, height: 2, format: .grey, bytes: [0, 1, 2, 10, 11, 12])

    /// The expected upright image for each EXIF value, row by row.
    static let expected: [(Orientation, Int, Int, [UInt8])] = [
        (.up, 3, 2, [0, 1, 2, 10, 11, 12]),
        (.upMirrored, 3, 2, [2, 1, 0, 12, 11, 10]),
        (.down, 3, 2, [12, 11, 10, 2, 1, 0]),
        (.downMirrored, 3, 2, [10, 11, 12, 0, 1, 2]),
        (.leftMirrored, 2, 3, [0, 10, 1, 11, 2, 12]),   // transpose
        (.right, 2, 3, [10, 0, 11, 1, 12, 2]),          // rotate 90° clockwise
        (.rightMirrored, 2, 3, [12, 2, 11, 1, 10, 0]),  // transverse
        (.left, 2, 3, [2, 12, 1, 11, 0, 10]),           // rotate 90° counter-clockwise
    ]

    @Test(arguments: expected.indices)
    func transformIsPixelExactGrey(index: Int) {
        let (orientation, width, height, pixels) = Self.expected[index]
        let upright = orientation.applied(to: Self.stored)
        #expect(upright.width == width && upright.height == height)
        #expect(upright.stride == width)
        #expect(upright.bytes == pixels, "\(orientation)")
    }

    @Test(arguments: expected.indices)
    func transformIsPixelExactBGRWithStride(index: Int) {
        let (orientation, width, height, pixels) = Self.expected[index]
        // BGR with a padded stride: channel c of the stored pixel v holds v + 100 * c; padding is 0xEE.
        var bytes = [UInt8](repeating: 0xEE, count: 2 * 11)
        for y in 0..<2 {
            for x in 0..<3 {
                for c in 0..<3 { bytes[y * 11 + x * 3 + c] = UInt8(10 * y + x + 100 * c) }
            }
        }
        let image = PixelImage(width: 3, height: 2, format: .bgr, stride: 11, bytes: bytes)
        let upright = orientation.applied(to: image)
        #expect(upright.width == width && upright.height == height && upright.stride == width * 3)
        #expect(upright.bytes == pixels.flatMap { [$0, $0 + 100, $0 + 200] }, "\(orientation)")
    }

    @Test func storedPixelMatchesTransform() {
        for orientation in Orientation.allCases {
            let upright = orientation.applied(to: Self.stored)
            for y in 0..<upright.height {
                for x in 0..<upright.width {
                    let s = orientation.storedPixel(uprightX: x, uprightY: y, width: 3, height: 2)
                    #expect(upright.bytes[y * upright.width + x] == Self.stored.bytes[s.y * 3 + s.x])
                }
            }
        }
    }

    /// Larger than one 64×64 tile, with partial tiles at the edges and a padded stride.
    @Test(arguments: Orientation.allCases)
    func largeImageMatchesPixelMapping(orientation: Orientation) {
        let width = 150, height = 97, stride = 150 * 3 + 5
        var bytes = [UInt8](repeating: 0, count: stride * height)
        for y in 0..<height {
            for x in 0..<width {
                for c in 0..<3 { bytes[y * stride + x * 3 + c] = UInt8(truncatingIfNeeded: x &* 7 &+ y &* 13 &+ c &* 101) }
            }
        }
        let image = PixelImage(width: width, height: height, format: .bgr, stride: stride, bytes: bytes)
        let upright = orientation.applied(to: image)
        let size = orientation.uprightSize(width: width, height: height)
        #expect(upright.width == size.width && upright.height == size.height)
        var mismatches = 0
        for y in 0..<upright.height {
            for x in 0..<upright.width {
                let s = orientation.storedPixel(uprightX: x, uprightY: y, width: width, height: height)
                for c in 0..<3 where upright.bytes[(y * upright.width + x) * 3 + c] != bytes[s.y * stride + s.x * 3 + c] {
                    mismatches += 1
                }
            }
        }
        #expect(mismatches == 0)
    }

    @Test func degenerateImages() {
        let line = PixelImage(width: 1, height: 4, format: .grey, bytes: [1, 2, 3, 4])
        #expect(Orientation.right.applied(to: line).bytes == [4, 3, 2, 1])
        #expect(Orientation.left.applied(to: line).bytes == [1, 2, 3, 4])
        let empty = PixelImage(width: 0, height: 0, format: .bgr)
        #expect(Orientation.rightMirrored.applied(to: empty).bytes.isEmpty)
    }

    /// Applying the transform to a real decoded JPEG turns a stored-rotated image upright again.
    @Test func uprightsADecodedImage() throws {
        let upright = TestImages.gradient(width: 48, height: 32)
        // Store the image the way a camera with orientation 6 would: rotated 90° counter-clockwise.
        let storedRotated = Orientation.left.applied(to: upright)
        let jpeg = TestImages.inserting(
            TestImages.exifSegment(orientation: 6, bigEndian: true),
            into: try JPEGEncoder().encode(storedRotated, quality: 95))
        let orientation = try #require(Orientation.exif(inJPEG: jpeg))
        #expect(orientation == .right)
        let decoded = try JPEGDecoder().decode(jpeg)
        #expect(decoded.width == 32 && decoded.height == 48)
        let fixed = orientation.applied(to: decoded)
        #expect(fixed.width == 48 && fixed.height == 32)
        #expect(TestImages.meanDifference(upright, fixed) < 2.5)
    }

    // MARK: - EXIF parsing

    @Test(arguments: [false, true])
    func parsesHandcraftedAPP1(bigEndian: Bool) throws {
        let base = try JPEGEncoder().encode(TestImages.gradient(width: 8, height: 8))
        for value in 1...8 {
            let jpeg = TestImages.inserting(TestImages.exifSegment(orientation: UInt16(value), bigEndian: bigEndian), into: base)
            #expect(Orientation.exif(inJPEG: jpeg) == Orientation(rawValue: value))
            // The EXIF segment does not disturb decoding.
            #expect(try JPEGDecoder().decode(jpeg).width == 8)
        }
        #expect(Orientation.exif(inJPEG: base) == nil)
    }

    @Test func invalidTagValuesMeanUp() throws {
        let base = try JPEGEncoder().encode(TestImages.gradient(width: 8, height: 8))
        for value: UInt16 in [0, 9, 0xFFFF] {
            let jpeg = TestImages.inserting(TestImages.exifSegment(orientation: value, bigEndian: false), into: base)
            #expect(Orientation.exif(inJPEG: jpeg) == .up)
        }
        let long = TestImages.inserting(TestImages.exifSegment(orientation: 3, bigEndian: false, type: 4), into: base)
        #expect(Orientation.exif(inJPEG: long) == .down)
    }

    @Test func exifAfterAnotherSegment() throws {
        let base = try JPEGEncoder().encode(TestImages.gradient(width: 8, height: 8))
        // APP0 JFIF-like segment, then fill bytes, then the Exif APP1.
        let app0: [UInt8] = [0xFF, 0xE0, 0x00, 0x06, 0x4A, 0x46, 0x49, 0x46]
        let exif = TestImages.exifSegment(orientation: 8, bigEndian: false)
        let jpeg = TestImages.inserting(app0 + [0xFF] + exif, into: base)
        #expect(Orientation.exif(inJPEG: jpeg) == .left)
    }

    @Test func garbageNeverCrashes() throws {
        let segment = TestImages.exifSegment(orientation: 6, bigEndian: true)
        let jpeg = [0xFF, 0xD8] + segment + [0xFF, 0xD9]
        #expect(Orientation.exif(inJPEG: jpeg) == .right)
        // Every truncation of the segment.
        for length in 0..<jpeg.count {
            _ = Orientation.exif(inJPEG: Array(jpeg[0..<length]))
        }
        // Every single-byte corruption with a few values.
        for index in jpeg.indices {
            for value: UInt8 in [0x00, 0x01, 0x7F, 0xFF] {
                var corrupted = jpeg
                corrupted[index] = value
                _ = Orientation.exif(inJPEG: corrupted)
            }
        }
        // An IFD offset pointing far outside the segment, and a huge entry count.
        var badOffset = jpeg
        badOffset[2 + 4 + 6 + 4] = 0x7F
        #expect(Orientation.exif(inJPEG: badOffset) == nil)
        var badCount = jpeg
        badCount[2 + 4 + 6 + 8] = 0xFF
        badCount[2 + 4 + 6 + 9] = 0xFF
        _ = Orientation.exif(inJPEG: badCount)
        // Random bytes.
        var state: UInt32 = 7
        for _ in 0..<200 {
            var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE1]
            for _ in 0..<64 {
                state = state &* 1_664_525 &+ 1_013_904_223
                bytes.append(UInt8(state >> 24))
            }
            _ = Orientation.exif(inJPEG: bytes)
        }
        #expect(Orientation.exif(inJPEG: [UInt8]()) == nil)
        #expect(Orientation.exif(inJPEG: Array("Exif".utf8)) == nil)
    }
}
