import FacewireImage
import Foundation
import Testing
@testable import FacewireCapture

@Suite("Video file source")
struct VideoFileSourceTests {
    struct Clip {
        let path: String
        let frames: Int
        let fps: Double
        let width: Int
        let height: Int
    }

    /// The clip and its manifest entry, or `nil` when ../shared/data is absent.
    static func clip(_ name: String) throws -> Clip? {
        guard let data = TestFiles.sharedData else { return nil }
        let video = data.appendingPathComponent("video")
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: video.appendingPathComponent("manifest.json")))
        let videos = (manifest as? [String: Any])?["videos"] as? [[String: Any]] ?? []
        let entry = try #require(videos.first { $0["file"] as? String == name }, "\(name) is not in manifest.json")
        return Clip(
            path: video.appendingPathComponent(name).path,
            frames: try #require(entry["frames_decoded_opencv46"] as? Int),
            fps: try #require(entry["fps"] as? Double),
            width: try #require(entry["width"] as? Int),
            height: try #require(entry["height"] as? Int))
    }

    static let sharedDataPresent = TestFiles.sharedData != nil

    @Test(.enabled(if: sharedDataPresent, "../shared/data is absent: no real video to read"))
    func liveportraitD19FramesMatchManifest() throws {
        let clip = try #require(try Self.clip("liveportrait_d19.mp4"))
        let source = try openFrameSource(clip.path, loop: false, jpegQuality: 80)
        #expect(source is VideoFileSource)
        #expect(abs((source.nominalFPS ?? 0) - clip.fps) < 0.01)
        let decoder = try JPEGDecoder()
        var count = 0
        while let frame = try source.next() {
            count += 1
            #expect(frame.reencoded && frame.orientation == .up)
            #expect(frame.width == clip.width && frame.height == clip.height)
            let header = try decoder.readHeader(frame.jpeg)
            #expect(header.width == clip.width && header.height == clip.height)
            if count % 25 == 1 {  // full decode of every 25th frame keeps the test fast
                let image = try decoder.decode(frame.jpeg)
                #expect(image.width == clip.width && image.height == clip.height)
            }
        }
        #expect(count == clip.frames)
        #expect(try source.next() == nil)
    }

    @Test(.enabled(if: sharedDataPresent, "../shared/data is absent: no real video to read"))
    func videoLoopRestarts() throws {
        let clip = try #require(try Self.clip("liveportrait_d19.mp4"))
        let source = try VideoFileSource(path: clip.path, loop: true, jpegQuality: 60)
        let first = try #require(try source.next())
        var times = [try #require(first.mediaTimeSeconds)]
        for _ in 1..<clip.frames { times.append(try #require(try source.next()?.mediaTimeSeconds)) }
        let again = try #require(try source.next(), "loop must restart after the last frame")
        #expect(again.jpeg == first.jpeg, "the first frame again, encoded the same way")
        // The presentation times step by one frame interval, and go on across the restart (pacing follows them).
        times.append(try #require(again.mediaTimeSeconds))
        #expect(times.first == 0)
        let steps = zip(times, times.dropFirst()).map { $1 - $0 }
        #expect(steps.allSatisfy { abs($0 - 1 / clip.fps) < 0.002 }, "steps \(steps.filter { abs($0 - 1 / clip.fps) >= 0.002 })")
        #expect(source.framesRead == clip.frames + 1)
        #expect(source.description.contains("liveportrait_d19.mp4"))
    }

    @Test(.enabled(if: sharedDataPresent, "../shared/data is absent: no real video to read"))
    func aviClipOpens() throws {
        let clip = try #require(try Self.clip("opencv_Megamind.avi"))
        let source = try VideoFileSource(path: clip.path)
        let frame = try #require(try source.next())
        #expect(frame.width == clip.width && frame.height == clip.height)
        #expect(try JPEGDecoder().decode(frame.jpeg, scale: .half).width == (clip.width + 1) / 2)
    }
}
