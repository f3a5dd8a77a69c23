import COpenCV
import FacewireImage

/// Frames of a video file, decoded with OpenCV (`cv::VideoCapture`, FFmpeg backend) and encoded to JPEG.
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

    private var video: OpaquePointer?
    private var framesInPass = 0
    private let encoder: JPEGEncoder

    /// Opens a video file.
    /// - Parameters:
    ///   - path: a file OpenCV's FFmpeg backend can read (mp4, avi, mkv, ...).
    ///   - loop: start again at the end.
    ///   - jpegQuality: quality of the encoded frames (1...100, default 85).
    /// - Throws: ``FrameSourceError`` `.notFound` or `.cannotOpen`.
    public init(path: String, loop: Bool = false, jpegQuality: Int = 85) throws {
        self.path = path
        self.loop = loop
        self.jpegQuality = jpegQuality
        do {
            encoder = try JPEGEncoder()
        } catch {
            throw FrameSourceError(.cannotOpen, "\(error)")
        }
        let video = try Self.open(path)
        self.video = video
        let fps = fwcv_video_fps(video)
        nominalFPS = fps > 0 ? fps : 30
        let count = fwcv_video_frame_count(video)
        frameCountHint = count > 0 ? Int(count) : nil
    }

    deinit {
        if let video { fwcv_video_close(video) }
    }

    public var description: String {
        var text = "video \(path)"
        if let frameSize { text += " (\(frameSize.width)×\(frameSize.height))" }
        if let nominalFPS { text += " @ \((nominalFPS * 100).rounded() / 100) fps" }
        if let frameCountHint { text += ", \(frameCountHint) frames" }
        return text
    }

    /// Decodes and encodes the next frame; `nil` at the end (with `loop`, only when a pass yields no frame).
    /// - Throws: ``FrameSourceError`` `.readFailed` on a decode or encode failure.
    public func next() throws -> SourceFrame? {
        if let frame = try readFrame() { return frame }
        guard loop, framesInPass > 0 else { return nil }
        // Reopening is more reliable than seeking back with CAP_PROP_POS_FRAMES.
        if let video { fwcv_video_close(video) }
        video = nil
        video = try Self.open(path)
        framesInPass = 0
        // The next pass continues the timeline one frame after the last one.
        passOffset = lastMediaTime + 1 / (nominalFPS ?? 30)
        return try readFrame()
    }

    private func readFrame() throws -> SourceFrame? {
        guard let video else { return nil }
        var pixels: UnsafePointer<UInt8>?
        var width: Int32 = 0
        var height: Int32 = 0
        var stride: Int32 = 0
        var error = OpenCVErrorBuffer()
        let status = error.storage.withUnsafeMutableBufferPointer { err in
            fwcv_video_read(video, &pixels, &width, &height, &stride, err.baseAddress, err.count)
        }
        switch status {
        case 0:
            return nil
        case 1:
            break
        default:
            throw FrameSourceError(.readFailed, "\(path): " + error.message(or: "cannot read a frame"))
        }
        guard let pixels, width > 0, height > 0, stride >= width * 3 else {
            throw FrameSourceError(.readFailed, "\(path): OpenCV returned an empty frame")
        }
        let count = Int(stride) * Int(height - 1) + Int(width) * 3
        let jpeg: [UInt8]
        do {
            jpeg = try encoder.encode(
                pixels: UnsafeRawBufferPointer(start: pixels, count: count), width: Int(width), height: Int(height),
                stride: Int(stride), format: .bgr, quality: jpegQuality)
        } catch {
            throw FrameSourceError(.readFailed, "\(path): \(error)")
        }
        framesRead += 1
        framesInPass += 1
        frameSize = (Int(width), Int(height))
        var frame = SourceFrame(jpeg: jpeg, width: Int(width), height: Int(height), orientation: .up, reencoded: true)
        let position = fwcv_video_position_ms(video)
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

    private static func open(_ path: String) throws -> OpaquePointer {
        var error = OpenCVErrorBuffer()
        let video = error.storage.withUnsafeMutableBufferPointer { err in
            fwcv_video_open(path, err.baseAddress, err.count)
        }
        guard let video else {
            throw FrameSourceError(.cannotOpen, error.message(or: "cannot open video '\(path)'"))
        }
        return video
    }
}
