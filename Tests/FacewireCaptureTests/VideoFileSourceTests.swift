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

/// Motion-JPEG passthrough: clips written for the test by Debian's OpenCV-Python (`/usr/bin/python3`), which the
/// setup script installs; the tests skip without it.
@Suite("Video file source: motion JPEG")
struct MotionJPEGVideoTests {
    static let python = "/usr/bin/python3"

    /// Whether `/usr/bin/python3` can import cv2.
    static let openCVPythonPresent: Bool = (try? run([python, "-c", "import cv2"])) == 0

    /// Writes `frames` frames of 160×120 (a gradient that moves with the frame number) at 25 fps with `fourcc`.
    static func writeClip(_ path: String, fourcc: String, frames: Int) throws {
        let script = """
            import sys, cv2, numpy as np
            w = cv2.VideoWriter(sys.argv[1], cv2.CAP_FFMPEG, cv2.VideoWriter_fourcc(*sys.argv[2]), 25, (160, 120))
            y, x = np.mgrid[0:120, 0:160]
            for i in range(int(sys.argv[3])):
                w.write(np.dstack([(x + 8 * i) % 256, y * 2, (x // 2 + y // 2 + 16 * i) % 256]).astype(np.uint8))
            w.release()
            """
        let status = try run([python, "-c", script, path, fourcc, String(frames)])
        guard status == 0, FileManager.default.fileExists(atPath: path) else {
            throw FrameSourceError(.cannotOpen, "could not write \(path) with OpenCV-Python (status \(status))")
        }
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test(.enabled(if: openCVPythonPresent, "/usr/bin/python3 has no cv2 (Debian's python3-opencv): cannot write a clip"))
    func motionJPEGPacketsPassThroughUndecoded() throws {
        let folder = try TestFiles.makeTemporaryFolder()
        defer { TestFiles.remove(folder) }
        let path = folder + "/clip.avi"
        try Self.writeClip(path, fourcc: "MJPG", frames: 12)
        let packets = try VideoFileSource(path: path, loop: true)
        let decoded = try VideoFileSource(path: path, loop: false, jpegQuality: 95, passJPEG: false)
        #expect(packets.passesPackets && !decoded.passesPackets)
        #expect(packets.description.contains("motion JPEG passed through"))
        let decoder = try JPEGDecoder()
        var first: [UInt8] = []
        var times: [Double] = []
        for index in 0..<12 {
            let frame = try #require(try packets.next())
            let reference = try #require(try decoded.next())
            if index == 0 { first = frame.jpeg }
            #expect(!frame.reencoded && reference.reencoded)
            #expect(frame.width == 160 && frame.height == 120 && frame.orientation == .up)
            // The same picture as OpenCV's decoded frame (which was encoded again at quality 95).
            let a = try decoder.decode(frame.jpeg), b = try decoder.decode(reference.jpeg)
            #expect(a.width == b.width && a.height == b.height)
            let difference = zip(a.bytes, b.bytes).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
            #expect(Double(difference) / Double(a.bytes.count) < 3, "frame \(index): mean difference \(Double(difference) / Double(a.bytes.count))")
            times.append(try #require(frame.mediaTimeSeconds))
        }
        #expect(try decoded.next() == nil)
        // The loop starts again at the first packet, byte for byte, and the timeline goes on.
        let again = try #require(try packets.next())
        #expect(again.jpeg == first)
        times.append(try #require(again.mediaTimeSeconds))
        #expect(zip(times, times.dropFirst()).allSatisfy { abs($1 - $0 - 0.04) < 0.002 }, "\(times)")
        #expect(packets.passesPackets)
    }

    @Test(.enabled(if: openCVPythonPresent, "/usr/bin/python3 has no cv2 (Debian's python3-opencv): cannot write a clip"))
    func otherCodecsAreDecodedAndEncoded() throws {
        let folder = try TestFiles.makeTemporaryFolder()
        defer { TestFiles.remove(folder) }
        let path = folder + "/clip.mp4"
        try Self.writeClip(path, fourcc: "mp4v", frames: 5)
        let source = try VideoFileSource(path: path)
        #expect(!source.passesPackets)
        var count = 0
        while let frame = try source.next() {
            count += 1
            #expect(frame.reencoded && frame.width == 160 && frame.height == 120)
        }
        #expect(count == 5, "probing for packets must not cost the first frame")
    }
}

/// The decision on each motion-JPEG packet (``VideoFileSource/accept(packet:limits:)``), without FFmpeg: a packet
/// may come from an HTTP stream, so its absurd values are the cases.
@Suite("Video file source: which packets are sent")
struct MotionJPEGPacketTests {
    static func jpeg(width: Int = 160, height: Int = 120) throws -> [UInt8] {
        try JPEGEncoder().encode(TestFiles.image(width: width, height: height, seed: 3))
    }

    static func accept(_ bytes: [UInt8], limits: ImageLimits = .standard) -> Result<MJPEGFrame.Checked, VideoFileSource.PacketRefusal> {
        bytes.withUnsafeBytes { VideoFileSource.accept(packet: $0, limits: limits) }
    }

    @Test func aGoodPacketIsSentAsItIs() throws {
        let bytes = try Self.jpeg()
        let checked = try Self.accept(bytes).get()
        #expect(checked.jpeg == bytes && checked.width == 160 && checked.height == 120 && checked.isUnchanged)
    }

    @Test func emptyGarbageAndTruncatedPacketsAreRefusedByName() throws {
        #expect(Self.accept([]) == .failure(.init(reason: "not-jpeg")))
        #expect(Self.accept(Array(repeating: 0xFF, count: 64)) == .failure(.init(reason: "not-jpeg")))
        let bytes = try Self.jpeg()
        #expect(Self.accept(Array(bytes[0..<(bytes.count / 2)])) == .failure(.init(reason: "truncated")))
    }

    @Test func oversizedPacketsAreRefusedBeforeAnyCopy() throws {
        let bytes = try Self.jpeg()
        // More bytes than the limit: refused on its length alone (a 17 MiB packet against the standard 16 MiB too).
        #expect(Self.accept(bytes, limits: ImageLimits(maxBytes: bytes.count - 1)) == .failure(.init(reason: "oversized")))
        var huge = [UInt8](repeating: 0, count: (16 << 20) + 1)
        huge[0] = 0xFF
        huge[1] = 0xD8
        #expect(Self.accept(huge) == .failure(.init(reason: "oversized")))
        // A header that claims more pixels than accepted.
        #expect(Self.accept(bytes, limits: ImageLimits(maxWidth: 100)) == .failure(.init(reason: "oversized")))
        #expect(try Self.accept(bytes, limits: ImageLimits(maxWidth: 160, maxHeight: 120, maxBytes: bytes.count)).get().width == 160)
    }
}
