import FacewireDetection
import FacewireImage
import Foundation
import Testing
import FacewireVocabulary

@Suite("Attribute configuration: which models, and what happens without them")
struct AttributeConfigurationTests {
    static func directory(with files: [String]) throws -> String {
        let path = NSTemporaryDirectory() + "facewire-models-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        for file in files {
            guard FileManager.default.createFile(atPath: "\(path)/\(file)", contents: Data([0])) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: "\(path)/\(file)"])
            }
        }
        return path
    }

    @Test func autoFallsBackWithANoteMeshRefusesLandmarksNeedsNothing() throws {
        let empty = try Self.directory(with: [])
        let auto = try AttributeConfiguration(method: .auto, searchPaths: [empty]).resolve()
        #expect(auto.meshModel == nil && auto.irisModel == nil)
        #expect(auto.note?.contains("face_landmark.onnx and iris_landmark.onnx not found") == true)
        #expect(throws: DetectionError.self) { try AttributeConfiguration(method: .mesh, searchPaths: [empty]).resolve() }
        let landmarks = try AttributeConfiguration(method: .landmarks, searchPaths: [empty]).resolve()
        #expect(landmarks.meshModel == nil && landmarks.note == nil)
    }

    @Test func theFERSmileModelMustBeInstalledWhenAskedFor() throws {
        let mesh = try Self.directory(with: ["face_landmark.onnx", "iris_landmark.onnx"])
        let resolved = try AttributeConfiguration(method: .auto, searchPaths: [mesh]).resolve()
        #expect(resolved.meshModel == "\(mesh)/face_landmark.onnx" && resolved.emotionModel == nil)
        #expect(throws: DetectionError.self) {
            try AttributeConfiguration(method: .auto, smileModel: .fer, searchPaths: [mesh]).resolve()
        }
        let all = try Self.directory(with: ["face_landmark.onnx", "iris_landmark.onnx", "fer_emotion.onnx"])
        #expect(try AttributeConfiguration(smileModel: .fer, searchPaths: [all]).resolve().emotionModel == "\(all)/fer_emotion.onnx")
    }
}

/// The mesh pipeline on a real face (the public-domain astronaut photograph): what runs for which options.
@Suite(
    "Mesh attributes: what runs for which options", .enabled(if: SharedData.available, SharedData.skipReason),
    .enabled(if: (try? AttributeConfiguration(method: .mesh).resolve()) != nil, "the face-mesh models are not installed: run scripts/setup.sh"))
struct MeshAttributeMeasurerTests {
    static func analyzer() throws -> FrameAnalyzer {
        try FrameAnalyzer(
            detector: try CenterFaceDetector(modelPath: SharedData.centerFaceModel),
            attributes: try makeAttributeMeasurer(AttributeConfiguration(method: .mesh)))
    }

    static func face(_ image: PixelImage, _ options: AnalysisOptions) throws -> DetectedFace {
        let faces = try analyzer().analyze(image: image, options: options).faces
        return try #require(faces.max { $0.bounds.height < $1.bounds.height }, "no face found")
    }

    /// `image` shrunk by an integer factor (nearest pixel).
    static func shrunk(_ image: PixelImage, by factor: Int) -> PixelImage {
        let width = image.width / factor, height = image.height / factor
        var bytes: [UInt8] = []
        bytes.reserveCapacity(width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let start = y * factor * image.stride + x * factor * 3
                bytes += image.bytes[start..<start + 3]
            }
        }
        return PixelImage(width: width, height: height, format: .bgr, bytes: bytes)
    }

    @Test func everyAttributeOnTheMeshByDefault() throws {
        let face = try Self.face(try SharedData.image("faces/unannotated/skimage_astronaut.png"), AnalysisOptions())
        #expect(face.attributeSource == .mesh)
        #expect(face.pitch != nil && face.roll != nil && face.yaw != nil)
        #expect(face.faceAngle == face.roll, "faceAngle is the mesh's roll")
        let e = face.expression
        #expect(e.hasSmile, "the astronaut smiles: \(String(describing: e.smileScore))")
        #expect(e.leftEyeOpenness.map { $0 > 0.5 } == true && e.rightEyeOpenness.map { $0 > 0.5 } == true)
        #expect(!e.leftEyeClosed && !e.rightEyeClosed)
        #expect(face.quality.map { $0 > 0.5 } == true)
        #expect(face.landmarks?.scheme == .five && face.landmarks?.points.count == 5)
    }

    @Test func theMeshListAloneRunsTheMeshAndMeasuresNothingElse() throws {
        let image = try SharedData.image("faces/unannotated/skimage_astronaut.png")
        let face = try Self.face(image, AnalysisOptions(classifiers: [], landmarks: .mesh))
        #expect(face.landmarks?.scheme == .mesh && face.landmarks?.points.count == 468)
        #expect(face.expression.smileScore == nil && face.expression.leftEyeClosedScore == nil)
        #expect(face.pitch == nil && face.quality == nil)
        // The mesh's eye corners lie near the detector's eyes.
        let mesh = try #require(face.landmarks?.points)
        let left = try #require(face.leftEye)
        let corner = FacePoint(x: (mesh[33].x + mesh[133].x) / 2, y: (mesh[33].y + mesh[133].y) / 2)
        #expect(hypot(corner.x - left.x, corner.y - left.y) < 10)
    }

    @Test func nothingAskedForMeansNoAttributeAtAll() throws {
        let image = try SharedData.image("faces/unannotated/skimage_astronaut.png")
        let analysis = try Self.analyzer().analyze(image: image, options: AnalysisOptions(classifiers: [], landmarks: .none))
        let face = try #require(analysis.faces.first)
        #expect(face.attributeSource == nil && face.landmarks == nil && face.pitch == nil && face.quality == nil)
        #expect(analysis.classifyMilliseconds == 0, "no attribute step ran")
    }

    @Test func aFaceTooSmallForTheMeshFallsBackAndSaysSo() throws {
        let image = Self.shrunk(try SharedData.image("faces/unannotated/skimage_astronaut.png"), by: 4)
        let face = try Self.face(image, AnalysisOptions())
        #expect(face.bounds.height < MeshAttributeMeasurer.minimumFaceHeight)
        #expect(face.attributeSource == .landmarks)
        #expect(face.pitch == nil && face.expression.leftEyeOpenness == nil)
        #expect(face.quality.map { $0 < 0.01 } == true, "a face under 40 px is not usable: \(String(describing: face.quality))")
    }
}
