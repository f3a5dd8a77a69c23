import FacewireDetection
import FacewireImage
import FacewireView
import Foundation
import Testing
import FacewireVocabulary

/// Acceptance (from the issue): "a crop of a face in a frame stored with EXIF orientation 6 and a face rolled 30°
/// comes back upright and level (the detector finds it at |roll| < 8°)".
@Suite(
    "face crop of a rolled face in a sideways frame", .enabled(if: ImagingFixtures.sharedDataAvailable, ImagingFixtures.sharedDataMissing),
    .serialized)
struct UprightCropAcceptanceTests {
    typealias F = ImagingFixtures

    @Test("orientation 6, roll 30°: the crop is level", arguments: [30.0, -30.0])
    func rolledFaceInSidewaysFrame(degrees: Double) throws {
        let detector = try YuNetDetector(modelPath: F.sharedData.appendingPathComponent("models/face_detection_yunet_2022mar.onnx").path)
        // A clear frontal portrait (910 × 1137), its face found in the photo as it is.
        let photoJPEG = [UInt8](try Data(contentsOf: F.sharedData.appendingPathComponent("faces/unannotated/face_recognition_obama.jpg")))
        let photo = try F.decode(photoJPEG)
        let original = try #require(largest(try detector.detect(photo)), "no face in the photo")
        #expect(abs(original.faceAngle ?? 99) < 5, "the photo's face should be level: \(String(describing: original.faceAngle))")

        // Roll the face by `degrees` (turning the photo about the face's centre), then store the frame sideways:
        // its pixels turned so that EXIF orientation 6 is needed to view it upright.
        let upright = Self.rotated(photo, degrees: degrees, about: original.bounds.center)
        let stored = F.stored(upright, as: .right)
        #expect((stored.width, stored.height) == (photo.height, photo.width))
        let frame = try F.jpeg(stored, quality: 92)

        // The worker's view: the frame decoded, orientation 6 applied, faces found in upright coordinates.
        let workerImage = Orientation.right.applied(to: try F.decode(frame))
        let face = try #require(largest(try detector.detect(workerImage)), "no face in the rolled frame")
        let roll = try #require(face.faceAngle)
        #expect(abs(roll - Float(degrees)) < 8, "the rolled frame's face is at \(roll)°, not \(degrees)°")

        let bounds = FaceDrawing.Box(x: face.bounds.x, y: face.bounds.y, width: face.bounds.width, height: face.bounds.height)
        let levelled = try FrameImaging.faceCrop(jpeg: frame, orientation: 6, face: FaceDrawing(bounds: bounds, roll: roll))
        let unlevelled = try FrameImaging.faceCrop(jpeg: frame, orientation: 6, face: FaceDrawing(bounds: bounds, roll: nil))

        // Size: the box plus 40% on each side, longer side 256.
        let crop = try F.decode(levelled)
        let expected = try FaceCropGeometry(
            face: FaceDrawing(bounds: bounds), frameWidth: workerImage.width, frameHeight: workerImage.height, margin: 0.4, maxSide: 256)
        #expect((crop.width, crop.height) == (expected.width, expected.height))
        #expect(max(crop.width, crop.height) == 256)

        let levelledFaces = try detector.detect(crop)
        let unlevelledFaces = try detector.detect(try F.decode(unlevelled))
        let levelledRoll = levelledFaces.first?.faceAngle ?? .nan
        let unlevelledRoll = unlevelledFaces.first?.faceAngle ?? .nan
        print("upright crop, rolled \(degrees)°: frame roll \(roll)°, levelled crop \(levelledRoll)° (\(levelledFaces.count) face), unlevelled crop \(unlevelledRoll)° (\(unlevelledFaces.count) face)")
        #expect(levelledFaces.count == 1)
        #expect(abs(levelledRoll) < 8, "levelled crop's face at \(levelledRoll)°")
        // The test can fail: the same crop without the roll still shows the face rolled.
        #expect(unlevelledFaces.count == 1)
        #expect(abs(unlevelledRoll) > 20, "unlevelled crop's face at \(unlevelledRoll)°")
        // Upright, not upside down or mirrored: the eyes above the mouth, the image-left eye on the left.
        let eyes = try #require(levelledFaces.first.flatMap { f in f.leftEye.flatMap { l in f.rightEye.map { (l, $0) } } })
        let mouth = try #require(levelledFaces.first?.mouth)
        #expect(eyes.0.y < mouth.y && eyes.1.y < mouth.y)
    }

    func largest(_ faces: [DetectedFace]) -> DetectedFace? { faces.max { $0.bounds.area < $1.bounds.area } }

    /// `image` turned `degrees` clockwise on screen about `centre` (nearest pixel; grey where nothing comes in), on a
    /// canvas of the same size: the fixture is made independently of the code under test.
    static func rotated(_ image: PixelImage, degrees: Double, about centre: FacePoint) -> PixelImage {
        let t = degrees * Double.pi / 180
        let (c, s) = (cos(t), sin(t))
        let (cx, cy) = (Double(centre.x), Double(centre.y))
        return F.image(width: image.width, height: image.height) { x, y in
            // The inverse turn finds each output pixel's source.
            let (dx, dy) = (Double(x) + 0.5 - cx, Double(y) + 0.5 - cy)
            let sx = Int((cx + c * dx + s * dy).rounded(.down))
            let sy = Int((cy - s * dx + c * dy).rounded(.down))
            guard (0..<image.width).contains(sx), (0..<image.height).contains(sy) else { return (128, 128, 128) }
            let at = sy * image.stride + sx * 3
            return (image.bytes[at], image.bytes[at + 1], image.bytes[at + 2])
        }
    }
}
