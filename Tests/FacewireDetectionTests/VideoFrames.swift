import COpenCV
import FacewireDetection
import FacewireImage

/// Reads frames of a video file with the COpenCV video reader (for tests).
enum VideoFrames {
    struct ReadError: Error, CustomStringConvertible {
        var description: String
    }

    /// Every `every`-th frame from the start, at most `limit` frames, as BGR images.
    static func read(_ path: String, every: Int, limit: Int) throws -> [PixelImage] {
        var frames: [PixelImage] = []
        try read(path) { index, image in
            guard frames.count < limit else { return false }
            if index % every == 0 { frames.append(image()) }
            return true
        }
        return frames
    }

    /// The frames at `indices` (0-based, counted by reading from the start), as BGR images.
    static func read(_ path: String, indices: Set<Int>) throws -> [Int: PixelImage] {
        var frames: [Int: PixelImage] = [:]
        let last = indices.max() ?? -1
        try read(path) { index, image in
            if indices.contains(index) { frames[index] = image() }
            return index < last
        }
        return frames
    }

    /// The clip's frame rate as the container states it (0 when unknown).
    static func framesPerSecond(_ path: String) throws -> Double {
        var errorText = [CChar](repeating: 0, count: 512)
        let video = errorText.withUnsafeMutableBufferPointer { fwcv_video_open(path, 0, $0.baseAddress, $0.count) }
        guard let video else { throw ReadError(description: "cannot open \(path)") }
        defer { fwcv_video_close(video) }
        return fwcv_video_fps(video)
    }

    /// Reads frames in order, handing `body` each index and a closure that copies the frame out; `body` returns
    /// whether to go on.
    static func read(_ path: String, _ body: (Int, () -> PixelImage) -> Bool) throws {
        var errorText = [CChar](repeating: 0, count: 512)
        let video = errorText.withUnsafeMutableBufferPointer { fwcv_video_open(path, 0, $0.baseAddress, $0.count) }
        guard let video else { throw ReadError(description: "cannot open \(path)") }
        defer { fwcv_video_close(video) }
        var index = 0
        while true {
            var pixels: UnsafePointer<UInt8>?
            var width: Int32 = 0
            var height: Int32 = 0
            var stride: Int32 = 0
            let status = errorText.withUnsafeMutableBufferPointer {
                fwcv_video_read(video, &pixels, &width, &height, &stride, $0.baseAddress, $0.count)
            }
            guard status == 1, let pixels else { return }
            let copy = { () -> PixelImage in
                let rowBytes = Int(width) * 3
                var bytes = [UInt8](repeating: 0, count: rowBytes * Int(height))
                bytes.withUnsafeMutableBytes { out in
                    for y in 0..<Int(height) {
                        out.baseAddress!.advanced(by: y * rowBytes).copyMemory(
                            from: pixels.advanced(by: y * Int(stride)), byteCount: rowBytes)
                    }
                }
                return PixelImage(width: Int(width), height: Int(height), format: .bgr, bytes: bytes)
            }
            guard body(index, copy) else { return }
            index += 1
        }
    }
}
