import FacewireDetection
import FacewireImage
import FacewireProtocol
import FacewireWorker
import Testing
import FacewireVocabulary

@Suite("Per-stream settings over a worker's defaults")
struct SettingsTests {
    let defaults = AnalysisOptions(accuracy: .low, faceMode: .small, minFace: 10, maxFaces: 20, classifiers: [.smile])

    @Test("unset fields keep the worker's defaults")
    func unsetKeepsDefaults() throws {
        #expect(try defaults.applying(DetectionSettings()) == defaults)
    }

    @Test("each set field replaces the default")
    func setFieldsReplace() throws {
        var settings = DetectionSettings()
        settings.accuracy = .high
        settings.faceMode = .large
        settings.minFace = 48
        settings.maxFaces = 3
        settings.classifiers = AnalysisOptions.Classifiers.eyes.rawValue
        settings.landmarks = .mesh
        let options = try defaults.applying(settings)
        #expect(
            options
                == AnalysisOptions(accuracy: .high, faceMode: .large, minFace: 48, maxFaces: 3, classifiers: [.eyes], landmarks: .mesh))
        settings.landmarks = .none
        #expect(try defaults.applying(settings).landmarks == .none)
        settings.landmarks = .unset
        #expect(try defaults.applying(settings).landmarks == .five)
        settings.landmarks = .UNRECOGNIZED(9)
        #expect(throws: DetectionError.self) { try defaults.applying(settings) }
    }

    @Test("classifiers = 0 is present and means none; absent means the default")
    func classifierPresence() throws {
        var settings = DetectionSettings()
        settings.classifiers = 0
        #expect(try defaults.applying(settings).classifiers.isEmpty)
        settings.clearClassifiers()
        #expect(try defaults.applying(settings).classifiers == [.smile])
    }

    @Test("settings a worker cannot honour are errors, not ignored")
    func invalidSettings() throws {
        var unknownAccuracy = DetectionSettings()
        unknownAccuracy.accuracy = .UNRECOGNIZED(7)
        #expect(throws: DetectionError.self) { try defaults.applying(unknownAccuracy) }

        var unknownMode = DetectionSettings()
        unknownMode.faceMode = .UNRECOGNIZED(3)
        #expect(throws: DetectionError.self) { try defaults.applying(unknownMode) }

        var unknownBit = DetectionSettings()
        unknownBit.classifiers = 1 << 5
        #expect(throws: DetectionError.self) { try defaults.applying(unknownBit) }

        var tooMany = DetectionSettings()
        tooMany.maxFaces = UInt32(AnalysisOptions.maxFacesLimit + 1)
        #expect(throws: DetectionError.self) { try defaults.applying(tooMany) }
    }

    @Test("a frame with bad settings gets an error result naming them")
    func errorResult() throws {
        var header = FrameHeader()
        header.version = Wire.version
        header.stream = "s"
        header.seq = 5
        header.settings.classifiers = 1 << 20  // no classifier has bit 20 (8...13 are the expressions)
        let analyzer = try FrameAnalyzer(detector: NoFaces())
        let result = WorkerNode.analyse(
            FrameMessage(header: header, jpeg: [0xFF, 0xD8, 0xFF, 0xD9]), receivedAt: 0, analyzer: analyzer, workerID: "w")
        #expect(result.status == .error)
        #expect(result.seq == 5)
        #expect(result.reason.contains("classifier"), "\(result.reason)")
    }
}

/// A detector that never finds anything (the test above fails before detection).
final class NoFaces: FaceDetector {
    func detect(_ image: PixelImage, inputWidth: Int?) throws -> [DetectedFace] { [] }
}
