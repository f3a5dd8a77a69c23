import Testing
@testable import FacewireImage

@Suite("JPEG encode and decode")
struct JPEGCodecTests {
    @Test func roundTripBGR() throws {
        let source = TestImages.gradient(width: 161, height: 97)
        let jpeg = try JPEGEncoder().encode(source, quality: 95)
        #expect(jpeg.starts(with: [0xFF, 0xD8]))
        let decoder = try JPEGDecoder()
        let header = try decoder.readHeader(jpeg)
        #expect(header.width == 161 && header.height == 97)
        #expect(header.subsampling == .s420)
        #expect(header.colorspace == .yCbCr)
        let decoded = try decoder.decode(jpeg)
        #expect(decoded.width == 161 && decoded.height == 97 && decoded.format == .bgr)
        #expect(decoded.stride == 161 * 3 && decoded.bytes.count == 161 * 97 * 3)
        #expect(TestImages.meanDifference(source, decoded) < 2.0)
        #expect(TestImages.maxDifference(source, decoded) < 24)
    }

    @Test func roundTripGrey() throws {
        let source = TestImages.greyGradient(width: 64, height: 48)
        let jpeg = try JPEGEncoder().encode(source, quality: 90)
        let decoder = try JPEGDecoder()
        let header = try decoder.readHeader(jpeg)
        #expect(header.subsampling == .grey && header.colorspace == .grey)
        let decoded = try decoder.decode(jpeg, format: .grey)
        #expect(decoded.width == 64 && decoded.height == 48 && decoded.format == .grey)
        #expect(TestImages.maxDifference(source, decoded) < 8)
        // A grey JPEG decodes to BGR with three equal channels.
        let colour = try decoder.decode(jpeg, format: .bgr)
        #expect(colour.bytes.count == 64 * 48 * 3)
        #expect(colour.bytes[300] == colour.bytes[301] && colour.bytes[301] == colour.bytes[302])
    }

    @Test func greyDecodeOfColourJPEG() throws {
        let source = TestImages.gradient(width: 80, height: 60)
        let jpeg = try JPEGEncoder().encode(source)
        let grey = try JPEGDecoder().decode(jpeg, format: .grey)
        #expect(grey.format == .grey && grey.width == 80 && grey.height == 60 && grey.bytes.count == 80 * 60)
        // Luma of pure-ish gradient pixels: compare against BT.601 of the source at the bottom-right corner.
        let i = (59 * 80 + 79) * 3
        let luma = 0.114 * Double(source.bytes[i]) + 0.587 * Double(source.bytes[i + 1]) + 0.299 * Double(source.bytes[i + 2])
        #expect(abs(Double(grey.bytes[59 * 80 + 79]) - luma) < 12)
    }

    @Test func encodeHonoursStride() throws {
        let packed = TestImages.gradient(width: 30, height: 20)
        var padded = [UInt8](repeating: 0xEE, count: 100 * 20)
        for y in 0..<20 {
            padded.replaceSubrange(y * 100..<(y * 100 + 90), with: packed.bytes[(y * 90)..<(y * 90 + 90)])
        }
        let image = PixelImage(width: 30, height: 20, format: .bgr, stride: 100, bytes: padded)
        let decoded = try JPEGDecoder().decode(try JPEGEncoder().encode(image, quality: 95))
        #expect(TestImages.meanDifference(packed, decoded) < 2.5)
    }

    @Test(arguments: [(ScalingFactor.one, 640, 480), (.half, 320, 240), (.quarter, 160, 120), (.eighth, 80, 60),
                      (ScalingFactor(num: 3, denom: 8), 240, 180)])
    func scaledDecodeSizes(scale: ScalingFactor, width: Int, height: Int) throws {
        let jpeg = try JPEGEncoder().encode(TestImages.gradient(width: 640, height: 480))
        let image = try JPEGDecoder().decode(jpeg, scale: scale)
        #expect(image.width == width && image.height == height)
        #expect(image.bytes.count == width * height * 3)
    }

    @Test func scaledSizesRoundUp() throws {
        let jpeg = try JPEGEncoder().encode(TestImages.gradient(width: 101, height: 33))
        let image = try JPEGDecoder().decode(jpeg, scale: .quarter, format: .grey)
        #expect(image.width == 26 && image.height == 9)  // ceil(101/4), ceil(33/4)
    }

    @Test func unsupportedScaleThrows() throws {
        let jpeg = try JPEGEncoder().encode(TestImages.gradient(width: 16, height: 16))
        let error = try #require(throws: ImageError.self) {
            try JPEGDecoder().decode(jpeg, scale: ScalingFactor(num: 1, denom: 3))
        }
        #expect(error.code == .decodeFailed)
    }

    @Test func scalingFactorChoice() {
        #expect(ScalingFactor.supported.contains(.half))
        #expect(ScalingFactor.supported.first.map { $0.num * 1 >= $0.denom } == true)
        #expect(ScalingFactor.smallest(reaching: 640, from: 1920) == ScalingFactor(num: 3, denom: 8))
        #expect(ScalingFactor.smallest(reaching: 320, from: 640) == .half)
        #expect(ScalingFactor.smallest(reaching: 321, from: 640) == ScalingFactor(num: 5, denom: 8))
        #expect(ScalingFactor.smallest(reaching: 10, from: 640) == .eighth)
        #expect(ScalingFactor.smallest(reaching: 800, from: 640) == .one)
        #expect(ScalingFactor.smallest(reaching: 0, from: 640) == .one)
    }

    @Test func oversizedHeaderIsRejected() throws {
        let decoder = try JPEGDecoder()
        let huge = TestImages.sofOnly(width: 60000, height: 60000)
        let error = try #require(throws: ImageError.self) { try decoder.readHeader(huge) }
        #expect(error.code == .tooLarge)
        let decodeError = try #require(throws: ImageError.self) { try decoder.decode(huge) }
        #expect(decodeError.code == .tooLarge)
        // Just over one limit, within the other.
        let wide = TestImages.sofOnly(width: 8193, height: 10)
        #expect(throws: ImageError.self) { try decoder.readHeader(wide) }
        // The same crafted header within limits reads fine.
        let small = try decoder.readHeader(TestImages.sofOnly(width: 640, height: 480))
        #expect(small.width == 640 && small.height == 480)
    }

    @Test func customLimits() throws {
        let jpeg = try JPEGEncoder().encode(TestImages.gradient(width: 100, height: 50))
        let strict = try JPEGDecoder(limits: ImageLimits(maxWidth: 99, maxHeight: 8192))
        #expect(throws: ImageError(.tooLarge, "image is 100×50, the limit is 99×8192")) { try strict.decode(jpeg) }
        let tiny = try JPEGDecoder(limits: ImageLimits(maxBytes: 100))
        let error = try #require(throws: ImageError.self) { try tiny.readHeader(jpeg) }
        #expect(error.code == .tooLarge)
    }

    @Test func garbageThrowsNotJPEG() throws {
        let decoder = try JPEGDecoder()
        for bytes: [UInt8] in [[], [0xFF], [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A], Array("hello world".utf8)] {
            let error = try #require(throws: ImageError.self) { try decoder.decode(bytes) }
            #expect(error.code == .notJPEG)
        }
    }

    @Test func garbageAfterSOIThrows() throws {
        let decoder = try JPEGDecoder()
        var state: UInt32 = 12345
        for length in [2, 3, 10, 100, 1000] {
            var bytes: [UInt8] = [0xFF, 0xD8]
            while bytes.count < length {
                state = state &* 1_664_525 &+ 1_013_904_223
                bytes.append(UInt8(state >> 24))
            }
            #expect(throws: ImageError.self) { try decoder.decode(bytes) }
        }
        // A header claiming a zero size.
        #expect(throws: ImageError.self) { try decoder.readHeader(TestImages.sofOnly(width: 0, height: 10)) }
    }

    @Test func truncatedThrows() throws {
        let jpeg = try JPEGEncoder().encode(TestImages.gradient(width: 200, height: 150), quality: 90)
        let decoder = try JPEGDecoder()
        // Cut inside the entropy-coded data: the header is fine, decoding must fail.
        let cut = Array(jpeg[0..<(jpeg.count * 2 / 3)])
        #expect(try decoder.readHeader(cut).width == 200)
        let error = try #require(throws: ImageError.self) { try decoder.decode(cut) }
        #expect(error.code == .truncated)
        // Cut inside the headers.
        for length in [4, 20, 100] {
            #expect(throws: ImageError.self) { try decoder.decode(Array(jpeg[0..<length])) }
        }
        // The decoder is still usable afterwards.
        #expect(try decoder.decode(jpeg).width == 200)
    }

    /// libturbojpeg 2.x leaves a handle in a stale state after a failed header read; the decoder must recover.
    @Test func decoderRecoversAfterHeaderErrors() throws {
        let jpeg = try JPEGEncoder().encode(TestImages.gradient(width: 40, height: 30))
        let decoder = try JPEGDecoder()
        for cut in [jpeg.count / 2, 30, 180, 400] {
            #expect(throws: ImageError.self) { try decoder.readHeader(Array(jpeg[0..<min(cut, jpeg.count - 1)])) }
            #expect(try decoder.readHeader(jpeg).width == 40)
            #expect(throws: ImageError.self) { try decoder.decode(Array(jpeg[0..<min(cut, jpeg.count - 1)])) }
            #expect(try decoder.decode(jpeg).height == 30)
        }
    }

    @Test func encodeRejectsEmptyImage() throws {
        let error = try #require(throws: ImageError.self) {
            try JPEGEncoder().encode(PixelImage(width: 0, height: 10, format: .bgr))
        }
        #expect(error.code == .encodeFailed)
    }

    @Test func encoderReusesBufferAcrossSizes() throws {
        let encoder = try JPEGEncoder()
        let decoder = try JPEGDecoder()
        for (w, h) in [(32, 32), (320, 240), (16, 8), (640, 480)] {
            let image = try decoder.decode(try encoder.encode(TestImages.gradient(width: w, height: h)))
            #expect(image.width == w && image.height == h)
        }
    }

    @Test func errorDescription() {
        let error = ImageError(.truncated, "cut")
        #expect(error.description == "truncated: cut")
        #expect(error.code != .notJPEG)
    }
}
