import FacewireImage
import FacewireProtocol
import FacewireRuntime
import Foundation
import Testing

@testable import FacewireCapture
@testable import FacewireTesting

/// The camera path against ``SimulatedV4L2``: the same libv4l2 calls (open, QUERYCAP, ENUM_FMT/FRAMESIZES/
/// FRAMEINTERVALS, S_FMT, S_PARM, REQBUFS, QUERYBUF, mmap, QBUF/DQBUF, STREAMON/OFF, poll) with scripted behaviour.
@Suite("V4L2Camera against the simulated device", .serialized)
struct V4L2CameraTests {
    typealias Script = SimulatedV4L2.Script

    static func device(
        _ formats: [(String, [(Int, Int, [Int])])], path: String = "/dev/video0", events: [Script.Event] = []
    ) -> Script.Device {
        Script.Device(
            path: path, card: "Test camera",
            formats: formats.map { fourcc, sizes in
                Script.Format(fourcc: fourcc, sizes: sizes.map { Script.Size(width: $0.0, height: $0.1, fps: $0.2) })
            },
            events: events)
    }

    static func simulation(_ devices: Script.Device...) throws -> SimulatedV4L2 {
        try SimulatedV4L2(script: Script(devices: devices))
    }

    @Test("the listing shows what the simulation offers, sizes and rates included")
    func listing() throws {
        let sim = try Self.simulation(
            Self.device([("MJPG", [(640, 480, [30, 15]), (320, 240, [30])]), ("YUYV", [(320, 240, [10])])]),
            Self.device([("NV12", [(160, 120, [25])])], path: "/dev/video2"))
        let devices = V4L2DeviceList.devices(backend: sim)
        #expect(devices.map(\.path) == ["/dev/video0", "/dev/video2"])
        let first = try #require(devices.first)
        #expect(first.card == "Test camera" && first.isCapture)
        #expect(first.formats.map(\.name) == ["MJPG", "YUYV"])
        #expect(first.formats[0].sizes == [
            V4L2DeviceList.Size(width: 640, height: 480, fps: [30, 15]), V4L2DeviceList.Size(width: 320, height: 240, fps: [30]),
        ])
        let text = V4L2DeviceList.render(devices)
        #expect(text.contains("/dev/video0: Test camera"))
        #expect(text.contains("640x480 @ 30, 15 fps"))
        #expect(text.contains("NV12"))
        #expect(V4L2DeviceList.render([]).contains("No video devices found"))
    }

    @Test("MJPEG frames go out byte-identical, with increasing capture times near now")
    func mjpegIsPassedThrough() throws {
        let sim = try Self.simulation(Self.device([("MJPG", [(320, 240, [60])]), ("YUYV", [(320, 240, [60])])]))
        let camera = try V4L2Camera(path: "/dev/video0", backend: sim, settings: .init())
        #expect(camera.fourcc == V4L2.mjpeg && camera.width == 320 && camera.height == 240)
        #expect(camera.nominalFPS == 60)
        var lastTime: Int64 = 0
        for index in 0..<8 {
            let frame = try #require(try camera.next())
            #expect(frame.jpeg == sim.mjpegFrame(index: index, width: 320, height: 240), "frame \(index) changed on the way")
            #expect(!frame.reencoded && frame.width == 320 && frame.height == 240)
            let time = try #require(frame.captureTimeUs)
            #expect(time > lastTime)
            #expect(abs(time - FacewireRuntime.Clock.wallMicroseconds()) < 5_000_000)
            lastTime = time
        }
    }

    @Test("a camera without MJPEG: YUYV and NV12 are encoded and decode to the original within JPEG tolerance",
          arguments: ["YUYV", "NV12"])
    func rawFormatsAreEncoded(fourcc: String) throws {
        let sim = try Self.simulation(Self.device([(fourcc, [(160, 120, [60])])]))
        let camera = try V4L2Camera(path: "/dev/video0", backend: sim, settings: .init(jpegQuality: 92))
        let decoder = try JPEGDecoder()
        for index in 0..<3 {
            let frame = try #require(try camera.next())
            #expect(frame.reencoded)
            let decoded = try decoder.decode(frame.jpeg)
            let original = SimulatedV4L2.pattern(index: index, width: 160, height: 120)
            #expect(decoded.width == 160 && decoded.height == 120)
            let errors = zip(decoded.bytes, original.bytes).map { abs(Int($0) - Int($1)) }.sorted()
            let mean = Double(errors.reduce(0, +)) / Double(errors.count)
            let p99 = errors[errors.count * 99 / 100]
            // Chroma is subsampled twice (by the camera's format, then by JPEG), so the few pixels on the coloured
            // square's edges differ most; the rest must be close.
            #expect(mean < 2.5, "\(fourcc) frame \(index): mean error \(mean)")
            #expect(p99 < 25, "\(fourcc) frame \(index): 99th percentile error \(p99)")
        }
    }

    @Test("torn and garbage buffers are dropped and counted; a frame without Huffman tables is repaired; padding is cut")
    func badBuffers() throws {
        let sim = try Self.simulation(Self.device(
            [("MJPG", [(160, 120, [60])])],
            events: [
                .init(frame: 1, kind: .truncate), .init(frame: 2, kind: .garbage), .init(frame: 3, kind: .stripHuffmanTables),
                .init(frame: 4, kind: .pad),
            ]))
        let counters = Counters()
        let camera = try V4L2Camera(path: "/dev/video0", backend: sim, settings: .init(), counters: counters)
        let decoder = try JPEGDecoder()
        let first = try #require(try camera.next())
        #expect(first.jpeg == sim.mjpegFrame(index: 0, width: 160, height: 120))
        // Frames 1 and 2 are unusable: the next frame returned is 3, repaired.
        let repaired = try #require(try camera.next())
        let original3 = sim.mjpegFrame(index: 3, width: 160, height: 120)
        #expect(repaired.jpeg != original3)
        #expect(try decoder.decode(repaired.jpeg) == decoder.decode(original3))
        let padded = try #require(try camera.next())
        #expect(padded.jpeg == sim.mjpegFrame(index: 4, width: 160, height: 120))
        #expect(try #require(try camera.next()).jpeg == sim.mjpegFrame(index: 5, width: 160, height: 120))
        #expect(camera.defects["truncated"] == 1)
        #expect(camera.defects.values.reduce(0, +) == 2)
        #expect(counters.value("camera_dropped_truncated") == 1)
        #expect(counters.value("camera_repaired_dht") == 1)
        #expect(counters.value("camera_trimmed_padding") == 1)
    }

    @Test("an unplugged camera is reported, cannot be reopened while gone, and comes back")
    func unplugAndReopen() throws {
        let sim = try Self.simulation(Self.device([("MJPG", [(160, 120, [60])])], events: [.init(frame: 3, kind: .unplug, seconds: 0.5)]))
        let camera = try V4L2Camera(path: "/dev/video0", backend: sim, settings: .init())
        for _ in 0..<3 { _ = try #require(try camera.next()) }
        let lost = try #require(throws: FrameSourceError.self) { try camera.next() }
        #expect(lost.code == .deviceLost)
        let stillGone = try #require(throws: FrameSourceError.self) { try camera.reopen() }
        #expect(stillGone.code == .notFound)
        var reopened = false
        for _ in 0..<50 where !reopened {
            Thread.sleep(forTimeInterval: 0.05)
            reopened = (try? camera.reopen()) != nil
        }
        #expect(reopened, "the camera did not come back")
        // Frames continue after the unplugged one.
        let frame = try #require(try camera.next())
        #expect(frame.jpeg == sim.mjpegFrame(index: 4, width: 160, height: 120))
    }

    @Test("format choice: MJPEG first; a size only YUYV offers picks YUYV; --camera-fps is asked of the driver")
    func formatChoice() throws {
        let sim = try Self.simulation(Self.device([("MJPG", [(640, 480, [30]), (320, 240, [30])]), ("YUYV", [(160, 120, [30, 10])])]))
        let byDefault = try V4L2Camera(path: "/dev/video0", backend: sim, settings: .init())
        #expect(byDefault.fourcc == V4L2.mjpeg && byDefault.width == 640)
        let small = try V4L2Camera(path: "/dev/video0", backend: sim, settings: .init(size: (320, 240)))
        #expect(small.fourcc == V4L2.mjpeg && small.width == 320)
        let yuyv = try V4L2Camera(path: "/dev/video0", backend: sim, settings: .init(size: (160, 120), fps: 10))
        #expect(yuyv.fourcc == V4L2.yuyv && yuyv.width == 160 && yuyv.nominalFPS == 10)
    }

    @Test("a camera with no format Facewire takes, and a missing device, are clear errors")
    func unusableCameras() throws {
        let sim = try Self.simulation(Self.device([("RGB3", [(320, 240, [30])])]))
        let unusable = try #require(throws: FrameSourceError.self) {
            try V4L2Camera(path: "/dev/video0", backend: sim, settings: .init())
        }
        #expect(unusable.code == .notSupported)
        #expect(unusable.message.contains("RGB3"))
        let missing = try #require(throws: FrameSourceError.self) {
            try V4L2Camera(path: "/dev/video7", backend: sim, settings: .init())
        }
        #expect(missing.code == .notFound)
    }
}
