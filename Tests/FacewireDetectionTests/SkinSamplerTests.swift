@testable import FacewireDetection
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

    /// A mesh whose every point sits at `rest`, but for the forehead's, which outline `outline` (in the order of
    /// ``SkinSampler/meshForeheadPoints``).
    static func mesh(forehead outline: [SIMD2<Float>], rest: SIMD2<Float> = SIMD2(100, 150)) -> [SIMD3<Float>] {
        var points = [SIMD3<Float>](repeating: SIMD3(rest.x, rest.y, 0), count: 468)
        for (index, point) in zip(SkinSampler.meshForeheadPoints, outline) { points[index] = SIMD3(point.x, point.y, 0) }
        return points
    }

    /// A hexagon from (60, 20) to (140, 60), with two points inside (the hull leaves them out).
    static let hexagon: [SIMD2<Float>] = [
        SIMD2(70, 20), SIMD2(100, 20), SIMD2(130, 20), SIMD2(110, 40), SIMD2(140, 40), SIMD2(100, 60), SIMD2(60, 40),
        SIMD2(90, 40),
    ]

    @Test func theMeshForeheadIsTheSkinInsideItsOutline() throws {
        // Skin inside the hexagon's rows 20...60 only where the hull reaches; a redder skin below the outline.
        let image = Self.image { _, y in y > 62 ? (90, 110, 170) : nil }
        let sample = try #require(SkinSampler.meshForehead(image, mesh: Self.mesh(forehead: Self.hexagon)))
        #expect(sample.region == .forehead)
        #expect(sample.r == 160 && sample.g == 115 && sample.b == 95, "only the pixels inside the outline: \(sample)")
        // The hull (70,20) (130,20) (140,40) (100,60) (60,40): 2200 px² by the shoelace formula.
        #expect(abs(sample.pixels - 2200) <= 100, "the outline's area: \(sample.pixels)")
        let hull = SkinSampler.convexHull(Self.hexagon)
        #expect(hull.count == 5 && !hull.contains(SIMD2(110, 40)) && !hull.contains(SIMD2(90, 40)) && !hull.contains(SIMD2(100, 20)))
        #expect(SkinSampler.contains(hull, SIMD2(100, 40)) && !SkinSampler.contains(hull, SIMD2(62, 22)))
    }

    @Test func aMeshForeheadThatIsNotSkinOrNotThereGivesNothing() {
        let blue = Self.image { _, y in y < 70 ? (200, 60, 30) : nil }
        #expect(SkinSampler.meshForehead(blue, mesh: Self.mesh(forehead: Self.hexagon)) == nil, "no skin inside")
        let image = Self.image()
        let shifted = Self.hexagon.map { $0 + SIMD2(80, 0) }  // reaches past x = 200
        let cases: [[SIMD3<Float>]] = [
            Self.mesh(forehead: shifted),
            Self.mesh(forehead: Self.hexagon.map { _ in SIMD2(100, 30) }),  // every point in one place
            Self.mesh(forehead: Self.hexagon.map { $0 * SIMD2(0.04, 1) }),  // 3 px wide
            Self.mesh(forehead: [SIMD2(.nan, 20)] + Self.hexagon.dropFirst()),
            Self.mesh(forehead: [SIMD2(-1e30, 20)] + Self.hexagon.dropFirst()),
            Self.mesh(forehead: [SIMD2(1e30, .infinity)] + Self.hexagon.dropFirst()),
            Array(Self.mesh(forehead: Self.hexagon).prefix(467)),  // not the 468-point mesh
            [],
        ]
        for mesh in cases { #expect(SkinSampler.meshForehead(image, mesh: mesh) == nil) }
        #expect(SkinSampler.meshForehead(PixelImage(width: 200, height: 200, format: .grey), mesh: Self.mesh(forehead: Self.hexagon)) == nil)
    }
}
