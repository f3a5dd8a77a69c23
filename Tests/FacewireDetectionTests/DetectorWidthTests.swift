import Testing
@testable import FacewireDetection

@Suite("The detector's default width follows large frames")
struct DetectorWidthTests {
    @Test(
        "at most a 4× reduction for frames over 1280 px, in multiples of 32, at most 640; never below the base",
        arguments: [
            (320, 640, 320), (320, 1280, 320), (320, 1281, 352), (320, 1920, 480), (320, 2560, 640), (320, 3840, 640),
            (320, 0, 320), (320, -5, 320), (320, Int.max, 640), (800, 1920, 800),
        ])
    func followingWidth(_ base: Int, _ imageWidth: Int, _ expected: Int) {
        #expect(NativeDetector.followingWidth(base: base, imageWidth: imageWidth) == expected)
    }

    @Test("a width the user chose stays; the accuracy and face-mode factors apply to the followed width")
    func chosenWidthAndFactors() throws {
        var options = AnalysisOptions()
        options.accuracy = .high
        #expect(options.detectorWidth(base: NativeDetector.followingWidth(base: 320, imageWidth: 1920), imageWidth: 1920) == 960)
        options.accuracy = .low
        options.faceMode = .large
        #expect(options.detectorWidth(base: NativeDetector.followingWidth(base: 320, imageWidth: 1920), imageWidth: 1920) == 240)
    }
}
