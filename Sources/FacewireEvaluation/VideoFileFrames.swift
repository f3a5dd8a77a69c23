import FacewireDetection
import FacewireOpenCV
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
        let fps = video.framesPerSecond
        return fps.isFinite && fps > 0 ? fps : 0
    }

    /// Hands `body` every frame in order until the end or until it returns false.
    /// - Throws: ``DetectionError`` `.invalidImage` when the file cannot be opened or a frame cannot be read, and
    ///   whatever `body` throws.
    public static func read(_ path: String, _ body: (Frame) throws -> Bool) throws {
        let video = try open(path)
        var index = 0
        while true {
            let read: OpenCVVideo.Frame?
            do {
                read = try video.readFrame()
            } catch {
                throw DetectionError(.invalidImage, "cannot read frame \(index) of \(path): \(error.message)")
            }
            guard let read else { return }
            guard let pixels = read.pixels, read.width > 0, read.height > 0, read.stride >= read.width * 3 else {
                throw DetectionError(.invalidImage, "cannot read frame \(index) of \(path): ")
            }
            let count = read.stride * (read.height - 1) + read.width * 3
            let frame = Frame(
                index: index, pixels: UnsafeBufferPointer(start: pixels, count: count), width: read.width, height: read.height,
                stride: read.stride)
            guard try body(frame) else { return }
            index += 1
        }
    }

    private static func open(_ path: String) throws -> OpenCVVideo {
        do {
            return try OpenCVVideo(path: path, passJPEGPackets: false)
        } catch {
            throw DetectionError(.invalidImage, "cannot open \(path): \(error.message)")
        }
    }
}
