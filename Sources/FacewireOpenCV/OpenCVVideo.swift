import COpenCV

/// A video file or stream read with cv::VideoCapture (FFmpeg backend): the one Swift wrapper over `fwcv_video_*`.
///
/// Motion-JPEG videos opened with `passJPEGPackets` are read as undecoded JPEG packets (``readPacket()``), any other
/// as decoded BGR frames (``readFrame()``). Not thread-safe: use it on one thread.
public final class OpenCVVideo {
    private var handle: OpaquePointer?

    /// Opens `path`.
    /// - Throws: ``OpenCVError`` with OpenCV's message when it cannot be opened.
    public init(path: String, passJPEGPackets: Bool) throws(OpenCVError) {
        let (handle, message) = OpenCVCall.run { fwcv_video_open(path, passJPEGPackets ? 1 : 0, $0, $1) }
        guard let handle else { throw OpenCVError(message: message) }
        self.handle = handle
    }

    deinit { close() }

    /// Closes the video; later reads return nil. Safe to call twice.
    public func close() {
        if let handle { fwcv_video_close(handle) }
        handle = nil
    }

    /// Whether the video is read as undecoded JPEG packets.
    public var passesPackets: Bool { handle.map { fwcv_video_passes_packets($0) != 0 } ?? false }
    /// The container's frame rate (0 or less when it does not say).
    public var framesPerSecond: Double { handle.map { fwcv_video_fps($0) } ?? 0 }
    /// The container's frame count (0 or less when it does not say; an estimate for some formats).
    public var frameCount: Int64 { handle.map { fwcv_video_frame_count($0) } ?? 0 }
    /// The presentation time of the frame last read, ms from the start; negative or NaN when unknown.
    public var positionMilliseconds: Double { handle.map { fwcv_video_position_ms($0) } ?? -1 }

    /// One decoded frame: BGR, rows `stride` bytes apart, valid until the next read.
    public struct Frame {
        public var pixels: UnsafePointer<UInt8>?
        public var width: Int
        public var height: Int
        public var stride: Int
    }

    /// The next decoded frame, or nil at the end.
    /// - Throws: ``OpenCVError`` on a read error.
    public func readFrame() throws(OpenCVError) -> Frame? {
        guard let handle else { return nil }
        var pixels: UnsafePointer<UInt8>?
        var width: Int32 = 0
        var height: Int32 = 0
        var stride: Int32 = 0
        let status = try OpenCVCall.status { fwcv_video_read(handle, &pixels, &width, &height, &stride, $0, $1) }
        guard status == 1 else { return nil }
        return Frame(pixels: pixels, width: Int(width), height: Int(height), stride: Int(stride))
    }

    /// The next undecoded packet of a motion-JPEG video (valid until the next read), or nil at the end.
    /// - Throws: ``OpenCVError`` on a read error.
    public func readPacket() throws(OpenCVError) -> UnsafeRawBufferPointer? {
        guard let handle else { return nil }
        var data: UnsafePointer<UInt8>?
        var length = 0
        let status = try OpenCVCall.status { fwcv_video_read_packet(handle, &data, &length, $0, $1) }
        guard status == 1 else { return nil }
        return UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : length)
    }
}

/// Still images read with cv::imread.
public enum OpenCVImageFile {
    /// Decodes a still image file (PNG, BMP, ...) to BGR and calls `body` with its pixels (rows packed, `width * 3`
    /// bytes; valid only inside `body`), its width and its height. Nothing is copied: check the size in `body`
    /// before spending more on it.
    /// - Throws: ``OpenCVError`` with OpenCV's message when it cannot be read, or what `body` throws.
    public static func withBGR<T>(path: String, _ body: (UnsafeRawBufferPointer, Int, Int) throws -> T) throws -> T {
        var pixels: UnsafeMutablePointer<UInt8>?
        var width: Int32 = 0
        var height: Int32 = 0
        let (status, message) = OpenCVCall.run { fwcv_image_read(path, &pixels, &width, &height, $0, $1) }
        defer { fwcv_free(pixels) }
        guard status == 0, let pixels else { throw OpenCVError(message: message) }
        let count = Int(width) * Int(height) * 3
        return try body(UnsafeRawBufferPointer(start: pixels, count: max(0, count)), Int(width), Int(height))
    }
}
