import FacewireDetection
import FacewireImage
import Foundation
import Testing
import FacewireEvaluation

/// The whole-image skin means and ``SkinTrace``'s choice between the skin pixels and the whole frame (pulse evaluation).
@Suite("Skin trace (facewire eval --pulse)")
struct SkinTraceTests {
    @Test func wholeImageMeansOverSkinAndOverEveryPixel() throws {
        // The top quarter is blue (not skin), the rest the sampler tests' skin colour.
        let image = SkinSamplerTests.image(width: 40, height: 20) { _, y in y < 5 ? (200, 60, 30) : nil }
        let means = try #require(SkinSampler.means(ofWholeImage: image))
        #expect(means.pixels == 800)
        #expect(means.skinPixels == 600)
        #expect(means.skin == SkinSampler.Colour(r: 160, g: 115, b: 95))
        #expect(means.all == SkinSampler.Colour(r: (30.0 * 200 + 160 * 600) / 800, g: (60.0 * 200 + 115 * 600) / 800, b: (200.0 * 200 + 95 * 600) / 800))
    }

    @Test func wholeImageMeansHonourTheStrideAndRefuseWhatTheyCannotRead() throws {
        // Rows 5 pixels wide with 1 byte of padding after each, which must not count.
        var bytes: [UInt8] = []
        for _ in 0..<2 { bytes += Array(repeating: [95, 115, 160], count: 5).flatMap { $0 } + [255] }
        let means = try #require(
            bytes.withUnsafeBufferPointer { SkinSampler.means(bgr: $0, width: 5, height: 2, stride: 16) })
        #expect(means.pixels == 10 && means.skinPixels == 10)
        #expect(means.all == SkinSampler.Colour(r: 160, g: 115, b: 95))
        #expect(bytes.withUnsafeBufferPointer { SkinSampler.means(bgr: $0, width: 6, height: 2, stride: 16) } == nil)
        #expect(bytes.withUnsafeBufferPointer { SkinSampler.means(bgr: $0, width: 0, height: 2, stride: 16) } == nil)
        #expect(SkinSampler.means(ofWholeImage: PixelImage(width: 4, height: 4, format: .grey)) == nil)
    }

    static func frame(skinFraction: Double, pixels: Int = 1000) -> SkinSampler.ImageMeans {
        let skinPixels = Int(skinFraction * Double(pixels))
        return SkinSampler.ImageMeans(
            skin: skinPixels > 0 ? .init(r: 160, g: 115, b: 95) : nil, skinPixels: skinPixels,
            all: .init(r: 100, g: 80, b: 70), pixels: pixels)
    }

    @Test func aClipOfSkinUsesTheSkinPixelsAndLeavesOutFramesWithTooFew() {
        // 100 frames at 10 fps, 3 of them with a skin mask under a quarter of the frame.
        let frames = (0..<100).map { Self.frame(skinFraction: [10, 50, 51].contains($0) ? 0.1 : 0.8) }
        let (input, samples, leftOut) = SkinTrace(fps: 10, frames: frames).samples()
        #expect(input == .skin)
        #expect(leftOut == 3)
        #expect(samples.count == 97)
        #expect(samples.allSatisfy { $0.colour == SkinSampler.Colour(r: 160, g: 115, b: 95) })
        // Times stay frame index / fps across the frames left out.
        #expect(samples[10].time == 1.1)
        #expect(samples.last?.time == 9.9)
    }

    @Test func aClipWhereTheSkinTestFailsUsesTheWholeFrame() {
        // 6 of 100 frames with too few skin pixels: more than 5 %.
        let frames = (0..<100).map { Self.frame(skinFraction: $0 < 6 ? 0.2 : 1) }
        let (input, samples, leftOut) = SkinTrace(fps: 15, frames: frames).samples()
        #expect(input == .frame)
        #expect(leftOut == 0)
        #expect(samples.count == 100)
        #expect(samples.allSatisfy { $0.colour == SkinSampler.Colour(r: 100, g: 80, b: 70) })
        #expect(samples[30].time == 2)
    }

    @Test func tooFewSkinPixelsAreTooFewWhateverTheFraction() {
        #expect(!SkinTrace.keepsEnoughSkin(Self.frame(skinFraction: 1, pixels: SkinSampler.minPixels - 1)))
        #expect(SkinTrace.keepsEnoughSkin(Self.frame(skinFraction: 1, pixels: SkinSampler.minPixels)))
        #expect(SkinTrace.keepsEnoughSkin(Self.frame(skinFraction: 0.25)))
        #expect(!SkinTrace.keepsEnoughSkin(Self.frame(skinFraction: 0.24)))
        #expect(SkinTrace(fps: 15, frames: []).samples().samples.isEmpty)
    }

    @Test func aFileThatIsNotAVideoIsAnError() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("skin-trace-\(UUID().uuidString).avi").path
        try Data("not a video".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: DetectionError.self) { try SkinTrace.read(video: path) }
        #expect(throws: DetectionError.self) { try SkinTrace.read(video: path + ".missing") }
    }

    @Test(.enabled(if: SharedData.available, SharedData.skipReason))
    func readsEveryFrameOfARegionClip() throws {
        let trace = try SkinTrace.read(video: SharedData.path("pulse/India/video10_leftcheek.avi"))
        #expect(trace.fps == 15)
        #expect(trace.frames.count == 412)
        #expect(trace.frames.allSatisfy { $0.pixels == 200 * 200 })
        #expect(trace.samples().input == .skin)
    }
}
