import FacewireImage
import FacewireVocabulary
import Testing
@testable import FacewireDetection

@Suite("Faces that cannot tell get no verdict (SPEC 11.7)")
struct AttributeGateTests {
    /// A 200 × 120 BGR image: dark (level `base`) with, when `eyes`, two dark pupils on light sclera at the eyes.
    static func image(base: UInt8, eyes: Bool) -> PixelImage {
        var bytes = [UInt8](repeating: base, count: 200 * 120 * 3)
        if eyes {
            for (cx, cy) in [(70, 60), (130, 60)] {
                for y in (cy - 6)...(cy + 6) { for x in (cx - 12)...(cx + 12) {
                    let level: UInt8 = abs(x - cx) < 5 ? 20 : 220
                    for c in 0..<3 { bytes[(y * 200 + x) * 3 + c] = level }
                } }
            }
        }
        return PixelImage(width: 200, height: 120, format: .bgr, stride: 600, bytes: bytes)
    }

    static func face() -> DetectedFace {
        var face = DetectedFace(bounds: FaceRect(x: 40, y: 20, width: 120, height: 100), confidence: 0.9)
        face.leftEye = FacePoint(x: 70, y: 60)
        face.rightEye = FacePoint(x: 130, y: 60)
        face.expression = FaceExpression(smileScore: 0.2, leftEyeClosedScore: 1, leftEyeClosed: true, rightEyeClosedScore: 1, rightEyeClosed: true)
        return face
    }

    @Test func aDarkFlatFaceIsWithheldALitOneIsNot() throws {
        var dark = Self.face()
        AttributeGate.applyLight(Self.image(base: 8, eyes: false), to: &dark, classifiers: [.smile, .eyes, .pose])
        #expect(dark.withheld == 3 && dark.expression.leftEyeClosedScore == nil && !dark.expression.leftEyeClosed)
        #expect(dark.expression.smileScore == nil)
        let contrast = try #require(AttributeGate.eyeBandContrast(Self.image(base: 120, eyes: true), leftEye: FacePoint(x: 70, y: 60), rightEye: FacePoint(x: 130, y: 60)))
        #expect(contrast > 30)
        var lit = Self.face()
        AttributeGate.applyLight(Self.image(base: 120, eyes: true), to: &lit, classifiers: [.smile, .eyes])
        #expect(lit.withheld == 0 && lit.expression.leftEyeClosed)
        var onlySmile = Self.face()
        AttributeGate.applyLight(Self.image(base: 8, eyes: false), to: &onlySmile, classifiers: [.smile])
        #expect(onlySmile.withheld == 1 && onlySmile.expression.leftEyeClosed, "only what was asked is withheld")
    }

    @Test("eyes at absurd places or on top of each other: no measure, no trap")
    func absurdEyes() {
        let image = Self.image(base: 8, eyes: false)
        for (left, right) in [
            (FacePoint(x: .nan, y: 0), FacePoint(x: 10, y: 10)), (FacePoint(x: 50, y: 50), FacePoint(x: 50, y: 50)),
            (FacePoint(x: -1e9, y: 5), FacePoint(x: 1e9, y: 5)), (FacePoint(x: 1e30, y: 1e30), FacePoint(x: -1e30, y: 1e30)),
        ] {
            let contrast = AttributeGate.eyeBandContrast(image, leftEye: left, rightEye: right)
            #expect(contrast == nil || contrast!.isFinite)
        }
    }
}
