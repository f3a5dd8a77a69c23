import FacewireImage
import Testing

@Suite("Padding")
struct PaddingTests {
    /// A 4 × 2 BGR image whose pixel (x, y) has blue x, green y and red 100 + x + 10y.
    static let image: PixelImage = {
        var bytes: [UInt8] = []
        for y in 0..<2 { for x in 0..<4 { bytes += [UInt8(x), UInt8(y), UInt8(100 + x + 10 * y)] } }
        return PixelImage(width: 4, height: 2, format: .bgr, bytes: bytes)
    }()

    static func pixel(_ image: PixelImage, _ x: Int, _ y: Int) -> [UInt8] {
        let start = y * image.stride + x * 3
        return Array(image.bytes[start..<start + 3])
    }

    @Test func blackBorderAroundTheUnchangedImage() {
        let padded = Self.image.padded(fraction: 0.5)
        #expect(padded.width == 8 && padded.height == 4)
        #expect(Self.pixel(padded, 0, 0) == [0, 0, 0])
        #expect(Self.pixel(padded, 7, 3) == [0, 0, 0])
        for y in 0..<2 { for x in 0..<4 { #expect(Self.pixel(padded, x + 2, y + 1) == Self.pixel(Self.image, x, y)) } }
    }

    @Test func replicatedBorderRepeatsTheEdges() {
        let padded = Self.image.padded(fraction: 0.5, border: .replicate)
        #expect(Self.pixel(padded, 0, 0) == Self.pixel(Self.image, 0, 0))
        #expect(Self.pixel(padded, 7, 3) == Self.pixel(Self.image, 3, 1))
        #expect(Self.pixel(padded, 3, 0) == Self.pixel(Self.image, 1, 0))
    }

    @Test func absurdFractionsAreClamped() {
        #expect(Self.image.padded(fraction: 0) == Self.image)
        #expect(Self.image.padded(fraction: -3) == Self.image)
        #expect(Self.image.padded(fraction: .nan) == Self.image)
        #expect(Self.image.padded(fraction: 1e9).width == 4 * 9)
    }
}
