import FacewireDetection
import FacewireImage
import Foundation
import Testing
import FacewireVocabulary

/// ``SkinSampler`` on painted images: where the regions lie, what counts as skin, hostile eyes.
@Suite("Skin sampler (pulse)")
struct SkinSamplerTests {
    static let skin: (b: UInt8, g: UInt8, r: UInt8) = (95, 115, 160)

    static func image(width: Int = 200, height: Int = 200, paint: (Int, Int) -> (UInt8, UInt8, UInt8)? = { _, _ in nil }) -> PixelImage {
        var bytes = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let (b, g, r) = paint(x, y) ?? (skin.b, skin.g, skin.r)
                bytes[(y * width + x) * 3] = b
                bytes[(y * width + x) * 3 + 1] = g
                bytes[(y * width + x) * 3 + 2] = r
            }
        }
        return PixelImage(width: width, height: height, format: .bgr, bytes: bytes)
    }

    @Test func aLevelFaceHasAForeheadAndTwoCheeksOfSkin() {
        let samples = SkinSampler.sample(Self.image(), leftEye: .init(x: 70, y: 90), rightEye: .init(x: 130, y: 90))
        #expect(samples.map(\.region) == [.forehead, .leftCheek, .rightCheek])
        #expect(samples.allSatisfy { $0.r == 160 && $0.g == 115 && $0.b == 95 })
        let forehead = samples.first { $0.region == .forehead }!.pixels
        #expect(abs(forehead - 54 * 21) <= 54 + 21, "the forehead's area: \(forehead)")
    }

    @Test func onlySkinCountsAndEachRegionSitsWhereItShould() {
        // A blue band across the forehead's rows (above the eyes) and a red patch under the image-left eye only.
        let image = Self.image { x, y in
            if y < 70 { return (200, 60, 30) }  // not skin
            if y > 110 && x < 100 { return (90, 110, 170) }  // skin, redder
            return nil
        }
        let samples = SkinSampler.sample(image, leftEye: .init(x: 70, y: 90), rightEye: .init(x: 130, y: 90))
        #expect(!samples.contains { $0.region == .forehead }, "the forehead is not skin")
        let left = samples.first { $0.region == .leftCheek }
        let right = samples.first { $0.region == .rightCheek }
        #expect(left?.r == 170 && right?.r == 160, "left \(String(describing: left)), right \(String(describing: right))")
    }

    @Test func regionsTurnWithTheFace() {
        // Eyes on a line rolled 30°, same distance: the same areas of skin.
        let angle = Float.pi / 6
        let c = (x: Float(100), y: Float(100))
        let leftEye = FacePoint(x: c.x - 30 * cos(angle), y: c.y - 30 * sin(angle))
        let rightEye = FacePoint(x: c.x + 30 * cos(angle), y: c.y + 30 * sin(angle))
        let level = SkinSampler.sample(Self.image(), leftEye: .init(x: 70, y: 100), rightEye: .init(x: 130, y: 100))
        let rolled = SkinSampler.sample(Self.image(), leftEye: leftEye, rightEye: rightEye)
        #expect(rolled.count == 3)
        for (a, b) in zip(level, rolled) {
            #expect(abs(a.pixels - b.pixels) <= a.pixels / 10, "\(a.region): \(a.pixels) level, \(b.pixels) rolled")
        }
    }

    @Test func hostileEyesGiveNothingAndNeverTrap() {
        let image = Self.image(width: 40, height: 40)
        let cases: [(FacePoint, FacePoint)] = [
            (.init(x: .nan, y: 1), .init(x: 10, y: 1)), (.init(x: 10, y: 10), .init(x: 10, y: 10)),
            (.init(x: -1e30, y: 0), .init(x: 1e30, y: 0)), (.init(x: 20, y: 20), .init(x: .infinity, y: 20)),
            (.init(x: 5, y: 20), .init(x: 35, y: 20)),  // regions reach outside the image
            (.init(x: 10, y: 10), .init(x: 12, y: 10)),  // eyes 2 px apart
        ]
        for (left, right) in cases { #expect(SkinSampler.sample(image, leftEye: left, rightEye: right).isEmpty) }
        let grey = PixelImage(width: 200, height: 200, format: .grey)
        #expect(SkinSampler.sample(grey, leftEye: .init(x: 70, y: 90), rightEye: .init(x: 130, y: 90)).isEmpty)
    }
}
