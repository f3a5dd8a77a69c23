import FacewireDetection
import FacewireImage
import Foundation
import Testing
import FacewireVocabulary

/// Checks that a single upright frontal face was found with plausible landmarks.
func expectPlausibleFrontalFace(_ face: DetectedFace, sourceLocation: SourceLocation = #_sourceLocation) {
    let box = face.bounds
    guard let left = face.leftEye, let right = face.rightEye else {
        Issue.record("face without eyes: \(face)", sourceLocation: sourceLocation)
        return
    }
    #expect(box.contains(left) && box.contains(right), "eyes outside the box: \(face)", sourceLocation: sourceLocation)
    #expect(left.x < right.x, sourceLocation: sourceLocation)
    let eyeDistance = right.x - left.x
    #expect(eyeDistance > box.width * 0.2 && eyeDistance < box.width * 0.75, "eye distance \(eyeDistance) for box \(box)", sourceLocation: sourceLocation)
    #expect(left.y < box.y + box.height * 0.6 && right.y < box.y + box.height * 0.6, "eyes too low: \(face)", sourceLocation: sourceLocation)
    if let mouth = face.mouth {
        #expect(mouth.y > max(left.y, right.y), "mouth above the eyes: \(face)", sourceLocation: sourceLocation)
    }
    if let angle = face.faceAngle {
        #expect(abs(angle) < 25, "roll \(angle)° for an upright face", sourceLocation: sourceLocation)
    }
}

@Suite("Detectors on real images", .enabled(if: SharedData.available, SharedData.skipReason))
struct DetectorTests {
    /// The astronaut's eye centres by a model other than the detectors under test: the MediaPipe face mesh, as run by
    /// the TFLite reference runtime for `Fixtures/models/face_landmark.pair.json` (scripts/models/make-pairs.py). Each
    /// eye is the midpoint of its corners (mesh points 33 and 133 for the image-left eye, 362 and 263 for the
    /// image-right one), mapped from the 192 px net input back to the image through the crop the pair's `source` names:
    /// about (204.4, 101.8) and (245.4, 103.5).
    static func meshEyeCentres() throws -> (left: FacePoint, right: FacePoint) {
        let file = "face_landmark.pair.json"
        let data = try Data(contentsOf: StoredPair.directory.appendingPathComponent(file))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(file) is not a JSON object")
        let source = try #require(json["source"] as? String, "\(file): no source")
        // The crop (x0, y0, x1, y1) the net input was made from; the pair's source must still say so.
        let crop = (x0: Float(153.25), y0: Float(42.25), x1: Float(295.75), side: Float(192))
        try #require(
            source.contains("astronaut.png") && source.contains("the square (153.25, 42.25, 295.75, 184.75)")
                && source.contains("resized to 192x192"), "\(file): another crop than this test maps from: \(source)")
        let outputs = try #require(json["outputs"] as? [String: Any], "\(file): no outputs")
        let mesh = try StoredPair.flatten(try #require(outputs["conv2d_20"], "\(file): no mesh output"), file: file)
        try #require(mesh.count == 468 * 3, "\(file): \(mesh.count) mesh numbers")
        let scale = (crop.x1 - crop.x0) / crop.side
        func point(_ i: Int) -> FacePoint { FacePoint(x: crop.x0 + Float(mesh[3 * i]) * scale, y: crop.y0 + Float(mesh[3 * i + 1]) * scale) }
        func midpoint(_ a: FacePoint, _ b: FacePoint) -> FacePoint { FacePoint(x: (a.x + b.x) / 2, y: (a.y + b.y) / 2) }
        return (midpoint(point(33), point(133)), midpoint(point(362), point(263)))
    }

    @Test("one face with both eyes within 12 px of an independent model's eye centres on the astronaut")
    func astronaut() throws {
        let image = try SharedData.image("faces/unannotated/skimage_astronaut.png")
        // The reference is not the detectors' own output (it was: positions measured with YuNet): the face mesh's eye
        // corners (``meshEyeCentres()``). 12 px per axis is under a third of her eye distance (41 px); the detectors'
        // eyes measured before were within 5 px of the mesh's (YuNet about (200, 102) and (245, 103)).
        let reference = try Self.meshEyeCentres()
        for (name, detector) in try SharedData.dnnDetectors() {
            let faces = try detector.detect(image)
            try #require(faces.count == 1, "\(name) found \(faces.count) faces")
            let face = faces[0]
            expectPlausibleFrontalFace(face)
            let left = try #require(face.leftEye)
            let right = try #require(face.rightEye)
            #expect(abs(left.x - reference.left.x) < 12 && abs(left.y - reference.left.y) < 12, "\(name) left eye \(left), mesh \(reference.left)")
            #expect(
                abs(right.x - reference.right.x) < 12 && abs(right.y - reference.right.y) < 12, "\(name) right eye \(right), mesh \(reference.right)")
            #expect(face.confidence > 0.7)
        }
    }

    @Test("the cascade finds the astronaut's face and eyes")
    func cascadeAstronaut() throws {
        let image = try SharedData.image("faces/unannotated/skimage_astronaut.png")
        let faces = try CascadeDetector().detect(image)
        let face = try #require(faces.first)
        #expect(face.bounds.contains(FacePoint(x: 222, y: 115)), "best box \(face.bounds)")
        if face.leftEye != nil { expectPlausibleFrontalFace(face) }
    }

    @Test("all six faces on the facenet-pytorch group photo")
    func multiface() throws {
        let image = try SharedData.image("faces/unannotated/facenet_pytorch_multiface.jpg")
        for (name, detector) in try SharedData.dnnDetectors() {
            let faces = try detector.detect(image)
            #expect(faces.count == 6, "\(name) found \(faces.count) faces")
            for face in faces { expectPlausibleFrontalFace(face) }
            // No two detections of the same face.
            for (i, a) in faces.enumerated() {
                for b in faces[(i + 1)...] {
                    #expect(a.bounds.intersectionOverUnion(b.bounds) < 0.3)
                }
            }
            // Best first.
            #expect(faces.map(\.confidence) == faces.map(\.confidence).sorted(by: >))
        }
    }

    @Test("single portraits: exactly one face", arguments: ["face_recognition_obama.jpg", "dlib_Tom_Cruise_avp_2014_4.jpg"])
    func portraits(file: String) throws {
        let image = try SharedData.image("faces/unannotated/\(file)")
        for (name, detector) in try SharedData.dnnDetectors() {
            let faces = try detector.detect(image)
            try #require(faces.count == 1, "\(name) found \(faces.count) faces on \(file)")
            expectPlausibleFrontalFace(faces[0])
        }
    }

    @Test("no faces on face-free images", arguments: ["opencv_fruits.jpg", "skimage_brick.png", "opencv_building.jpg", "skimage_rocket.jpg"])
    func negatives(file: String) throws {
        let image = try SharedData.image("faces/images/negatives/\(file)")
        for (name, detector) in try SharedData.dnnDetectors() + [("cascade", try CascadeDetector())] {
            let faces = try detector.detect(image)
            #expect(faces.isEmpty, "\(name) found \(faces.count) faces on \(file): \(faces)")
        }
    }

    @Test("frames of a LivePortrait clip: one face, eyes in place", arguments: ["liveportrait_d0.mp4", "liveportrait_d19.mp4"])
    func liveportraitFrames(file: String) throws {
        let frames = try VideoFrames.read(SharedData.path("video/\(file)"), every: 10, limit: 8)
        try #require(!frames.isEmpty)
        for (name, detector) in try SharedData.dnnDetectors() {
            for (index, frame) in frames.enumerated() {
                let faces = try detector.detect(frame)
                try #require(faces.count == 1, "\(name) found \(faces.count) faces in frame \(index * 10) of \(file)")
                expectPlausibleFrontalFace(faces[0])
            }
        }
    }

    @Test("tiny and odd-sized images do not crash", arguments: [(32, 32), (1, 1), (60, 60), (63, 200), (300, 7)])
    func tinyImages(size: (Int, Int)) throws {
        let image = PixelImage(width: size.0, height: size.1, format: .bgr)
        let grey = PixelImage(width: size.0, height: size.1, format: .grey)
        for (name, detector) in try SharedData.dnnDetectors() + [("cascade", try CascadeDetector())] {
            #expect(try detector.detect(image).isEmpty, "\(name)")
            #expect(try detector.detect(grey).isEmpty, "\(name)")
        }
        let native = try YuNetDetector(modelPath: SharedData.yunetModel, inputWidth: nil)
        #expect(try native.detect(image).isEmpty)
    }

    @Test("a face scaled down to 32×32 does not crash YuNet")
    func tinyFace() throws {
        let image = try SharedData.image("faces/unannotated/skimage_astronaut.png")
        // Crop the face region and shrink it by nearest neighbour to 32×32.
        var bytes = [UInt8](repeating: 0, count: 32 * 32 * 3)
        for y in 0..<32 {
            for x in 0..<32 {
                let sx = 160 + x * 130 / 32
                let sy = 50 + y * 130 / 32
                for c in 0..<3 { bytes[(y * 32 + x) * 3 + c] = image.bytes[sy * image.stride + sx * 3 + c] }
            }
        }
        let tiny = PixelImage(width: 32, height: 32, format: .bgr, bytes: bytes)
        let detector = try YuNetDetector(modelPath: SharedData.yunetModel, inputWidth: nil)
        let faces = try detector.detect(tiny)
        for face in faces {
            #expect(face.bounds.maxX <= 32.001 && face.bounds.maxY <= 32.001)
        }
    }

    @Test("grey input works like BGR")
    func greyInput() throws {
        let image = try SharedData.image("faces/unannotated/facenet_pytorch_multiface.jpg")
        var grey = [UInt8](repeating: 0, count: image.width * image.height)
        for i in 0..<(image.width * image.height) {
            let b = Int(image.bytes[i * 3]), g = Int(image.bytes[i * 3 + 1]), r = Int(image.bytes[i * 3 + 2])
            grey[i] = UInt8((b * 29 + g * 150 + r * 77) >> 8)
        }
        let greyImage = PixelImage(width: image.width, height: image.height, format: .grey, bytes: grey)
        let detector = try YuNetDetector(modelPath: SharedData.yunetModel)
        #expect(try detector.detect(greyImage).count >= 5)
    }

    @Test("maxFaces caps the result, keeping the best")
    func maxFaces() throws {
        let image = try SharedData.image("faces/unannotated/facenet_pytorch_multiface.jpg")
        let all = try YuNetDetector(modelPath: SharedData.yunetModel).detect(image)
        let two = try YuNetDetector(modelPath: SharedData.yunetModel, maxFaces: 2).detect(image)
        #expect(two.count == 2)
        #expect(Array(all.prefix(2)) == two)
    }
}

@Suite("Detector errors")
struct DetectorErrorTests {
    @Test("a missing model file gives modelNotFound naming the path")
    func missingModel() {
        let path = "/nonexistent/face_detection_yunet_2022mar.onnx"
        #expect {
            _ = try YuNetDetector(modelPath: path)
        } throws: { error in
            guard let error = error as? DetectionError else { return false }
            return error.code == .modelNotFound && error.message.contains(path)
        }
        #expect(throws: DetectionError.self) { _ = try CenterFaceDetector(modelPath: "/nonexistent/centerface.onnx") }
        #expect(throws: DetectionError.self) { _ = try CascadeDetector(faceCascadePath: "/nonexistent/cascade.xml") }
    }

    @Test("a file that is not a model gives modelLoadFailed")
    func garbageModel() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("facewire-garbage-\(UUID().uuidString).onnx")
        try Data("this is not an onnx model".utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        for make in [
            { _ = try YuNetDetector(modelPath: url.path) },
            { _ = try CenterFaceDetector(modelPath: url.path) },
            { _ = try CascadeDetector(faceCascadePath: url.path) },
        ] as [() throws -> Void] {
            #expect {
                try make()
            } throws: { error in
                (error as? DetectionError)?.code == .modelLoadFailed
            }
        }
    }

    @Test("invalid options are rejected")
    func invalidOptions() {
        #expect(throws: DetectionError.self) { _ = try CascadeDetector(scoreThreshold: 2) }
        #expect(throws: DetectionError.self) { _ = try CascadeDetector(inputWidth: 0) }
        #expect(throws: DetectionError.self) { _ = try CascadeDetector(maxFaces: 0) }
    }

    @Test("an inconsistent image is rejected, not read out of bounds")
    func inconsistentImage() throws {
        var image = PixelImage(width: 100, height: 100, format: .bgr)
        image.height = 200
        #expect(throws: DetectionError.self) { _ = try CascadeDetector().detect(image) }
        #expect(throws: DetectionError.self) {
            _ = try CascadeDetector().detect(PixelImage(width: 0, height: 0, format: .grey))
        }
    }
}
