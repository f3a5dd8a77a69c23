import FacewireOpenCV
import FacewireImage
import FacewireRuntime

/// Frames of a video file or stream, read with OpenCV (`cv::VideoCapture`, FFmpeg backend).
///
/// * Motion JPEG (AVI/MOV `MJPG`, an IP camera's MJPEG over HTTP): each packet already is a JPEG image, so it is sent
///   as it is, checked and repaired like a camera's buffer (``MJPEGFrame``: missing Huffman tables inserted, padding
///   cut), without decoding or encoding (``passesPackets``). A packet that cannot be repaired is skipped and counted
///   as `video_dropped_<defect>`; inserted tables count `video_repaired_dht`.
/// * Any other codec: each frame is decoded and encoded to JPEG at `jpegQuality`.
///
/// Not thread-safe: create it and call ``next()`` on one thread.
public final class VideoFileSource: FrameSource {
    /// The video file.
    public let path: String
    /// Whether the video starts again at its end.
    public let loop: Bool
    /// JPEG quality of the encoded frames.
    public let jpegQuality: Int
    /// The file's frame rate, or 30 when the container does not say.
    public let nominalFPS: Double?
    /// Where the current loop pass starts on the source's timeline, and the last frame's time on it (seconds).
    private var passOffset: Double = 0
    private var lastMediaTime: Double = 0
    /// The container's frame count, when it gives one (an estimate for some formats).
    public let frameCountHint: Int?
    /// Frames returned so far, over all loops.
    public private(set) var framesRead = 0
    /// Size of the last frame read (`nil` before the first).
    public private(set) var frameSize: (width: Int, height: Int)?

    /// Whether the video's JPEG packets are sent undecoded (motion JPEG with `passJPEG`).
    public var passesPackets: Bool { video?.passesPackets ?? false }

    private var video: OpenCVVideo?
    private var framesInPass = 0
    private let encoder: JPEGEncoder
    private let passJPEG: Bool
    private let counters: Counters?

    /// Opens a video file.
    /// - Parameters:
    ///   - path: a file OpenCV's FFmpeg backend can read (mp4, avi, mkv, ...).
    ///   - loop: start again at the end.
    ///   - jpegQuality: quality of the encoded frames (1...100, default 85).
    ///   - passJPEG: send a motion-JPEG video's packets undecoded (default); false decodes and encodes every frame.
    ///   - counters: where skipped and repaired packets are counted.
    /// - Throws: ``FrameSourceError`` `.notFound` or `.cannotOpen`.
    public init(path: String, loop: Bool = false, jpegQuality: Int = 85, passJPEG: Bool = true, counters: Counters? = nil) throws {
        self.path = path
        self.loop = loop
        self.jpegQuality = jpegQuality
        self.passJPEG = passJPEG
        self.counters = counters
        do {
            encoder = try JPEGEncoder()
        } catch {
            throw FrameSourceError(.cannotOpen, "\(error)")
        }
        let video = try Self.open(path, passJPEG: passJPEG)
        self.video = video
        let fps = video.framesPerSecond
        nominalFPS = fps > 0 ? fps : 30
        let count = video.frameCount
        frameCountHint = count > 0 ? Int(count) : nil
    }

    deinit {
        video?.close()
    }

    public var description: String {
        var text = "video \(path)"
        if let frameSize { text += " (\(frameSize.width)×\(frameSize.height))" }
        if let nominalFPS { text += " @ \((nominalFPS * 100).rounded() / 100) fps" }
        if passesPackets { text += ", motion JPEG passed through" }
        if let frameCountHint { text += ", \(frameCountHint) frames" }
        return text
    }

    /// Decodes and encodes the next frame; `nil` at the end (with `loop`, only when a pass yields no frame).
    /// - Throws: ``FrameSourceError`` `.readFailed` on a decode or encode failure.
    public func next() throws -> SourceFrame? {
        if let frame = try readFrame() { return frame }
        guard loop, framesInPass > 0 else { return nil }
        // Reopening is more reliable than seeking back with CAP_PROP_POS_FRAMES.
        video?.close()
        video = nil
        video = try Self.open(path, passJPEG: passJPEG)
        framesInPass = 0
        // The next pass continues the timeline one frame after the last one.
        passOffset = lastMediaTime + 1 / (nominalFPS ?? 30)
        return try readFrame()
    }

    private func readFrame() throws -> SourceFrame? {
        guard let video else { return nil }
        guard let (jpeg, width, height, reencoded) = try passesPackets ? readPacket(video) : readAndEncode(video) else {
            return nil
        }
        framesRead += 1
        framesInPass += 1
        frameSize = (width, height)
        var frame = SourceFrame(jpeg: jpeg, width: width, height: height, orientation: .up, reencoded: reencoded)
        let position = video.positionMilliseconds
        let interval = 1 / (nominalFPS ?? 30)
        if framesInPass == 1 {
            lastMediaTime = passOffset + max(0, position.isFinite ? position : 0) / 1000
        } else if position.isFinite, passOffset + position / 1000 > lastMediaTime {
            lastMediaTime = passOffset + position / 1000
        } else {
            // OpenCV reports 0 (or nothing) for the last frames of some files: one interval on.
            lastMediaTime += interval
        }
        frame.mediaTimeSeconds = lastMediaTime
        return frame
    }

    /// The next packet of a motion-JPEG video, checked (``accept(packet:limits:)``); packets that cannot be used are
    /// skipped and counted.
    private func readPacket(_ video: OpenCVVideo) throws -> (jpeg: [UInt8], width: Int, height: Int, reencoded: Bool)? {
        while true {
            guard let packet = try read("a packet", { () throws(OpenCVError) in try video.readPacket() }) else { return nil }
            switch Self.accept(packet: packet) {
            case .success(let checked):
                if checked.insertedHuffmanTables { counters?.add("video_repaired_dht") }
                return (checked.jpeg, checked.width, checked.height, false)
            case .failure(let refusal):
                counters?.add("video_dropped_\(refusal.reason)")
            }
        }
    }

    /// Why a motion-JPEG packet is not sent: an ``MJPEGFrame/Defect`` or `oversized`.
    struct PacketRefusal: Error, Equatable {
        let reason: String
    }

    /// One motion-JPEG packet, as untrusted as a network frame (it may come from an HTTP stream): its size is bounded
    /// before anything is copied, then it is checked and repaired like a camera buffer (``MJPEGFrame``), and the
    /// image's size and the repaired bytes are bounded by `limits` too.
    static func accept(packet: UnsafeRawBufferPointer, limits: ImageLimits = .standard) -> Result<MJPEGFrame.Checked, PacketRefusal> {
        let oversized = PacketRefusal(reason: "oversized")
        guard (try? limits.check(byteCount: packet.count)) != nil else { return .failure(oversized) }
        switch MJPEGFrame.check(packet) {
        case .success(let checked):
            guard (try? limits.check(width: checked.width, height: checked.height)) != nil,
                (try? limits.check(byteCount: checked.jpeg.count)) != nil
            else { return .failure(oversized) }
            return .success(checked)
        case .failure(let defect):
            return .failure(PacketRefusal(reason: defect.rawValue))
        }
    }

    /// The next frame, decoded by OpenCV and encoded to JPEG.
    private func readAndEncode(_ video: OpenCVVideo) throws -> (jpeg: [UInt8], width: Int, height: Int, reencoded: Bool)? {
        guard let frame = try read("a frame", { () throws(OpenCVError) in try video.readFrame() }) else { return nil }
        let (width, height, stride) = (frame.width, frame.height, frame.stride)
        guard let pixels = frame.pixels, width > 0, height > 0, stride >= width * 3 else {
            throw FrameSourceError(.readFailed, "\(path): OpenCV returned an empty frame")
        }
        let count = stride * (height - 1) + width * 3
        let jpeg: [UInt8]
        do {
            jpeg = try encoder.encode(
                pixels: UnsafeRawBufferPointer(start: pixels, count: count), width: width, height: height,
                stride: stride, format: .bgr, quality: jpegQuality)
        } catch {
            throw FrameSourceError(.readFailed, "\(path): \(error)")
        }
        return (jpeg, width, height, true)
    }

    /// Runs one of the video's reads: what it read, nil at the end; a read error becomes `.readFailed`.
    private func read<T>(_ what: String, _ call: () throws(OpenCVError) -> T?) throws -> T? {
        do {
            return try call()
        } catch {
            throw FrameSourceError(.readFailed, "\(path): " + error.message(or: "cannot read \(what)"))
        }
    }

    private static func open(_ path: String, passJPEG: Bool) throws -> OpenCVVideo {
        do {
            return try OpenCVVideo(path: path, passJPEGPackets: passJPEG)
        } catch {
            throw FrameSourceError(.cannotOpen, error.message(or: "cannot open video '\(path)'"))
        }
    }
}
