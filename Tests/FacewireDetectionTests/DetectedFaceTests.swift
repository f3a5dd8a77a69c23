import FacewireOpenCV
import Testing

@testable import FacewireDetection
@testable import FacewireVocabulary

@Suite("DetectedFace and conversions")
struct DetectedFaceTests {
    @Test("roll angle is positive when the image-right eye is lower (clockwise on screen)")
    func rollAngle() throws {
        let level = DetectedFace.rollAngle(leftEye: FacePoint(x: 10, y: 10), rightEye: FacePoint(x: 20, y: 10))
        #expect(level == 0)
        let clockwise = try #require(
            DetectedFace.rollAngle(leftEye: FacePoint(x: 10, y: 10), rightEye: FacePoint(x: 20, y: 20)))
        #expect(abs(clockwise - 45) < 0.001)
        let counter = try #require(
            DetectedFace.rollAngle(leftEye: FacePoint(x: 10, y: 20), rightEye: FacePoint(x: 20, y: 10)))
        #expect(abs(counter + 45) < 0.001)
        #expect(DetectedFace.rollAngle(leftEye: nil, rightEye: FacePoint(x: 1, y: 1)) == nil)
    }

    @Test("C faces: eyes ordered by x, mouth is the midpoint of the corners")
    func convertOrdersEyesByX() throws {
        // Model order: subject's right eye (image-right here, e.g. a mirrored face), left eye, nose, mouth corners.
        let face = OpenCVFace(
            x: 10, y: 20, width: 100, height: 120, score: 0.9, landmarkCount: 5,
            landmarks: [80, 60, 40, 50, 60, 80, 75, 100, 45, 104])
        let converted = NativeDetector.convert(face)
        #expect(converted.leftEye == FacePoint(x: 40, y: 50))
        #expect(converted.rightEye == FacePoint(x: 80, y: 60))
        #expect(converted.nose == FacePoint(x: 60, y: 80))
        #expect(converted.mouth == FacePoint(x: 60, y: 102))
        #expect(converted.confidence == 0.9)
        let angle = try #require(converted.faceAngle)
        #expect(abs(angle - 14.036) < 0.01)
    }

    @Test("cascade faces with two points have eyes only")
    func convertEyesOnly() {
        let face = OpenCVFace(
            x: 0, y: 0, width: 50, height: 50, score: 0, landmarkCount: 2, landmarks: [30, 20, 15, 21, 0, 0, 0, 0, 0, 0])
        let converted = NativeDetector.convert(face)
        #expect(converted.leftEye == FacePoint(x: 15, y: 21))
        #expect(converted.rightEye == FacePoint(x: 30, y: 20))
        #expect(converted.nose == nil)
        #expect(converted.mouth == nil)
    }

    @Test("scaling maps every coordinate")
    func scaled() {
        let face = DetectedFace(
            bounds: FaceRect(x: 1, y: 2, width: 3, height: 4), leftEye: FacePoint(x: 1, y: 1),
            rightEye: FacePoint(x: 3, y: 1), mouth: FacePoint(x: 2, y: 4), nose: FacePoint(x: 2, y: 2), confidence: 0.5)
        let big = face.scaled(x: 2, y: 3)
        #expect(big.bounds == FaceRect(x: 2, y: 6, width: 6, height: 12))
        #expect(big.mouth == FacePoint(x: 4, y: 12))
        #expect(big.faceAngle == 0)
        #expect(big.confidence == 0.5)
    }

    @Test("IoU")
    func intersectionOverUnion() {
        let a = FaceRect(x: 0, y: 0, width: 10, height: 10)
        #expect(a.intersectionOverUnion(a) == 1)
        #expect(a.intersectionOverUnion(FaceRect(x: 10, y: 0, width: 10, height: 10)) == 0)
        #expect(abs(a.intersectionOverUnion(FaceRect(x: 5, y: 0, width: 10, height: 10)) - 1.0 / 3.0) < 1e-6)
    }
}
