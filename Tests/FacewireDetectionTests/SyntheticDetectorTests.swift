import FacewireDetection
import FacewireImage
import Testing
import FacewireVocabulary

@Suite("Synthetic detector (a test tool for scale tests)")
struct SyntheticDetectorTests {
    /// A 320 × 240 JPEG cut after its first quarter: the header is whole, the pixels are not.
    static func headerOnlyJPEG() throws -> [UInt8] {
        var image = PixelImage(width: 320, height: 240, format: .bgr)
        for index in image.bytes.indices { image.bytes[index] = UInt8(index % 251) }
        let jpeg = try JPEGEncoder().encode(image, quality: 90)
        return Array(jpeg.prefix(jpeg.count / 4))
    }

    @Test func oneCentredFaceAThirdOfTheShorterSide() throws {
        let faces = try SyntheticDetector(milliseconds: 0).detect(uprightWidth: 640, uprightHeight: 480)
        let face = try #require(faces.first)
        #expect(faces.count == 1)
        #expect(face.bounds == FaceRect(x: 240, y: 160, width: 160, height: 160))
        #expect(face.fivePoints?.count == 5 && face.faceAngle == 0 && face.yaw == 0)
        #expect(try SyntheticDetector(milliseconds: 0).detect(uprightWidth: 2, uprightHeight: 2).isEmpty)
    }

    @Test func noopReportsNoFace() throws {
        let detector = try #require(try DetectorConfiguration(backend: .noop).resolve().makeDetector() as? SyntheticDetector)
        #expect(detector.milliseconds == 0 && !detector.reportsFace)
        #expect(try detector.detect(uprightWidth: 640, uprightHeight: 480).isEmpty)
    }

    @Test func waitsAreBounded() {
        #expect(throws: DetectionError.self) { try SyntheticDetector(milliseconds: -1) }
        #expect(throws: DetectionError.self) { try SyntheticDetector(milliseconds: SyntheticDetector.maxMilliseconds + 1) }
    }

    @Test func theConfigurationBuildsIt() throws {
        var configuration = DetectorConfiguration(backend: .synthetic)
        configuration.syntheticMilliseconds = 7
        let resolved = try configuration.resolve()
        #expect(resolved.backend == .synthetic && resolved.syntheticMilliseconds == 7 && resolved.modelPath == nil)
        let detector = try #require(try resolved.makeDetector() as? SyntheticDetector)
        #expect(detector.milliseconds == 7)
    }

    @Test func theAnalyzerReadsOnlyTheHeaderAndMeasuresNothing() throws {
        let analyzer = try FrameAnalyzer(
            detector: try SyntheticDetector(milliseconds: 0),
            attributes: LandmarkAttributeMeasurer(classifier: CascadeExpressionClassifier()))
        let jpeg = try Self.headerOnlyJPEG()
        // Orientation 6 turns the 320 × 240 stored frame into a 240 × 320 upright one.
        let analysis = try analyzer.analyze(jpeg: jpeg, orientation: 6)
        #expect(analysis.width == 240 && analysis.height == 320)
        let face = try #require(analysis.faces.first)
        #expect(face.bounds == FaceRect(x: 80, y: 120, width: 80, height: 80))
        #expect(face.attributeSource == nil && face.expression.smileScore == nil, "no pixels, no attributes")
        #expect(face.landmarks?.scheme == .five)
        #expect(try analyzer.analyze(jpeg: jpeg, orientation: 1, options: AnalysisOptions(landmarks: .none)).faces.first?.landmarks == nil)
        // Not a JPEG at all is still refused.
        #expect(throws: (any Error).self) { try analyzer.analyze(jpeg: [0, 1, 2, 3], orientation: 1) }
    }
}
