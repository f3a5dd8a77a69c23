import FacewireDetection
import FacewireImage
import Foundation
import Testing
import FacewireVocabulary

@Suite("FrameAnalyzer", .enabled(if: SharedData.available, SharedData.skipReason))
struct FrameAnalyzerTests {
    /// The stored pixels that, tagged with `orientation`, show `upright` when brought upright.
    private func stored(_ upright: PixelImage, for orientation: Orientation) -> PixelImage {
        // The inverse of each transform: rotations invert to the opposite rotation, flips and transposes to themselves.
        let inverse: Orientation =
            switch orientation {
            case .right: .left
            case .left: .right
            default: orientation
            }
        return inverse.applied(to: upright)
    }

    @Test("a JPEG stored in any EXIF orientation 1-8 gives the upright frame's faces", arguments: 1...8)
    func orientation(value: Int) throws {
        let upright = try SharedData.image("faces/unannotated/facenet_pytorch_multiface.jpg")
        let encoder = try JPEGEncoder()
        let reference = try FrameAnalyzer(detector: try YuNetDetector(modelPath: SharedData.yunetModel))
            .analyze(jpeg: try encoder.encode(upright, quality: 92), orientation: 1)
        #expect(reference.width == upright.width && reference.height == upright.height)
        #expect(reference.faces.count == 6)

        let orientation = Orientation(rawValue: value)
        let jpeg = try encoder.encode(stored(upright, for: orientation), quality: 92)
        let analyzer = try FrameAnalyzer(detector: try YuNetDetector(modelPath: SharedData.yunetModel))
        let rotated = try analyzer.analyze(jpeg: jpeg, orientation: value)
        #expect(rotated.width == upright.width && rotated.height == upright.height)
        #expect(rotated.faces.count == reference.faces.count)
        for face in reference.faces {
            let match = rotated.faces.max { face.bounds.intersectionOverUnion($0.bounds) < face.bounds.intersectionOverUnion($1.bounds) }
            let iou = match.map { face.bounds.intersectionOverUnion($0.bounds) } ?? 0
            #expect(iou > 0.7, "orientation \(value): face \(face.bounds) best IoU \(iou)")
            if [2, 4, 5, 7].contains(value) { continue }  // mirrored: landmarks are not symmetric
            if let match, let a = face.leftEye, let b = match.leftEye {
                #expect(abs(a.x - b.x) < 8 && abs(a.y - b.y) < 8, "left eye \(a) vs \(b)")
            }
        }
    }

    @Test("skin samples only when the pulse classifier is asked for, three skin-coloured regions of a frontal face")
    func skinOnlyWithThePulseClassifier() throws {
        let jpeg = try SharedData.bytes("faces/unannotated/face_recognition_obama.jpg")
        let analyzer = try FrameAnalyzer(detector: try YuNetDetector(modelPath: SharedData.yunetModel))
        let standard = try analyzer.analyze(jpeg: jpeg, orientation: 1)
        try #require(standard.faces.count == 1)
        #expect(standard.faces[0].skin.isEmpty, "off by default: nothing measured, nothing sent")
        let all = try analyzer.analyze(jpeg: jpeg, orientation: 1, options: AnalysisOptions(classifiers: .all))
        let skin = try #require(all.faces.first?.skin)
        #expect(skin.map(\.region) == [.forehead, .leftCheek, .rightCheek])
        for sample in skin {
            #expect(sample.pixels >= 16)
            #expect(sample.r > sample.g && sample.g > sample.b, "skin is redder than it is green, greener than blue: \(sample)")
        }
        #expect(all.classifyMilliseconds > 0)
    }

    @Test("the same JPEG tagged 1, 3, 6, 8: the upright frame size follows the orientation")
    func sameBytesDifferentOrientation() throws {
        let jpeg = try SharedData.bytes("faces/unannotated/face_recognition_obama.jpg")
        let header = try JPEGDecoder().readHeader(jpeg)
        let analyzer = try FrameAnalyzer(detector: try YuNetDetector(modelPath: SharedData.yunetModel))
        let up = try analyzer.analyze(jpeg: jpeg, orientation: 1)
        try #require(up.faces.count == 1)
        let face = up.faces[0].bounds
        for value in [3, 6, 8] {
            let analysis = try analyzer.analyze(jpeg: jpeg, orientation: value)
            if value == 3 {
                #expect(analysis.width == header.width && analysis.height == header.height)
            } else {
                #expect(analysis.width == header.height && analysis.height == header.width)
            }
            // Any face found must be where the rotation puts the upright face (detectors may miss rotated faces).
            let expected: FaceRect =
                switch value {
                case 3: FaceRect(x: Float(header.width) - face.maxX, y: Float(header.height) - face.maxY, width: face.width, height: face.height)
                case 6: FaceRect(x: Float(header.height) - face.maxY, y: face.x, width: face.height, height: face.width)
                default: FaceRect(x: face.y, y: Float(header.width) - face.maxX, width: face.height, height: face.width)
                }
            for found in analysis.faces where found.confidence > 0.8 {
                #expect(found.bounds.intersectionOverUnion(expected) > 0.4, "orientation \(value): \(found.bounds) vs \(expected)")
            }
        }
    }

    @Test("coordinates are in the full-resolution frame although decoding is scaled")
    func scaledDecode() throws {
        let jpeg = try SharedData.bytes("faces/unannotated/facenet_pytorch_multiface.jpg")
        let image = try SharedData.image("faces/unannotated/facenet_pytorch_multiface.jpg")
        let direct = try YuNetDetector(modelPath: SharedData.yunetModel).detect(image)
        let analysis = try FrameAnalyzer(detector: try YuNetDetector(modelPath: SharedData.yunetModel)).analyze(jpeg: jpeg, orientation: 1)
        #expect(analysis.width == image.width && analysis.height == image.height)
        #expect(analysis.faces.count == direct.count)
        for face in direct {
            #expect(analysis.faces.contains { $0.bounds.intersectionOverUnion(face.bounds) > 0.8 })
        }
        #expect(analysis.decodeMilliseconds >= 0 && analysis.detectMilliseconds > 0)
    }

    @Test("garbage, truncated and oversized JPEGs throw instead of crashing")
    func badInput() throws {
        let analyzer = try FrameAnalyzer(detector: try CascadeDetector())
        #expect(throws: ImageError.self) { try analyzer.analyze(jpeg: [UInt8](repeating: 0x42, count: 1000), orientation: 1) }
        #expect(throws: ImageError.self) { try analyzer.analyze(jpeg: [], orientation: 1) }
        #expect(throws: ImageError.self) { try analyzer.analyze(jpeg: [0xFF, 0xD8, 0xFF], orientation: 1) }
        let jpeg = try SharedData.bytes("faces/unannotated/face_recognition_obama.jpg")
        for cut in [20, 200, jpeg.count / 2] {
            #expect(throws: ImageError.self) { try analyzer.analyze(jpeg: Array(jpeg.prefix(cut)), orientation: 1) }
        }
        #expect(throws: DetectionError.self) { try analyzer.analyze(jpeg: jpeg, orientation: 9) }
        let small = try FrameAnalyzer(detector: try CascadeDetector(), limits: ImageLimits(maxWidth: 100, maxHeight: 100))
        #expect {
            try small.analyze(jpeg: jpeg, orientation: 1)
        } throws: { error in
            (error as? ImageError)?.code == .tooLarge
        }
    }
}
