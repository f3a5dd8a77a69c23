import COpenCV
import FacewireImage

/// The frames of a video file decoded to BGR, in order, with the capture node's OpenCV reader (for evaluations and
/// tests that measure decoded frames). Blocking: call it on a thread that may wait.
public enum VideoFileFrames {
    /// One decoded frame: its pixels are valid only during the call it is handed to.
    public struct Frame {
        /// 0-based, counted by reading from the start.
        public let index: Int
        public let pixels: UnsafeBufferPointer<UInt8>
        public let width: Int
        public let height: Int
        /// Bytes from one row to the next.
        public let stride: Int

        /// A copy of the frame as an image (rows packed).
        public func image() -> PixelImage {
            let rowBytes = width * 3
            var bytes = [UInt8](repeating: 0, count: rowBytes * height)
            bytes.withUnsafeMutableBufferPointer { out in
                for y in 0..<height {
                    UnsafeMutableRawPointer(out.baseAddress!.advanced(by: y * rowBytes)).copyMemory(
                        from: pixels.baseAddress!.advanced(by: y * stride), byteCount: rowBytes)
                }
            }
            return PixelImage(width: width, height: height, format: .bgr, bytes: bytes)
        }
    }

    /// The frame rate the container states (0 when it states none).
    /// - Throws: ``DetectionError`` `.invalidImage` when the file cannot be opened.
    public static func framesPerSecond(_ path: String) throws -> Double {
        let video = try open(path)
        defer { fwcv_video_close(video) }
        let fps = fwcv_video_fps(video)
        return fps.isFinite && fps > 0 ? fps : 0
    }

    /// Hands `body` every frame in order until the end or until it returns false.
    /// - Throws: ``DetectionError`` `.invalidImage` when the file cannot be opened or a frame cannot be read, and
    ///   whatever `body` throws.
    public static func read(_ path: String, _ body: (Frame) throws -> Bool) throws {
        let video = try open(path)
        defer { fwcv_video_close(video) }
        var errorText = [CChar](repeating: 0, count: 512)
        var index = 0
        while true {
            var pixels: UnsafePointer<UInt8>?
            var width: Int32 = 0
            var height: Int32 = 0
            var stride: Int32 = 0
            let status = errorText.withUnsafeMutableBufferPointer {
                fwcv_video_read(video, &pixels, &width, &height, &stride, $0.baseAddress, $0.count)
            }
            if status == 0 { return }
            guard status == 1, let pixels, width > 0, height > 0, stride >= width * 3 else {
                throw DetectionError(.invalidImage, "cannot read frame \(index) of \(path): \(cErrorMessage(errorText))")
            }
            let count = Int(stride) * Int(height - 1) + Int(width) * 3
            let frame = Frame(
                index: index, pixels: UnsafeBufferPointer(start: pixels, count: count), width: Int(width), height: Int(height),
                stride: Int(stride))
            guard try body(frame) else { return }
            index += 1
        }
    }

    private static func open(_ path: String) throws -> OpaquePointer {
        var errorText = [CChar](repeating: 0, count: 512)
        let video = errorText.withUnsafeMutableBufferPointer { fwcv_video_open(path, 0, $0.baseAddress, $0.count) }
        guard let video else { throw DetectionError(.invalidImage, "cannot open \(path): \(cErrorMessage(errorText))") }
        return video
    }
}
