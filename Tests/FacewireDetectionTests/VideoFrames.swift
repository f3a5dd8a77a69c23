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
        var errorText = [CChar](repeating: 0, count: 512)
        let video = errorText.withUnsafeMutableBufferPointer { fwcv_video_open(path, $0.baseAddress, $0.count) }
        guard let video else { throw ReadError(description: "cannot open \(path)") }
        defer { fwcv_video_close(video) }
        var frames: [PixelImage] = []
        var index = 0
        while frames.count < limit {
            var pixels: UnsafePointer<UInt8>?
            var width: Int32 = 0
            var height: Int32 = 0
            var stride: Int32 = 0
            let status = errorText.withUnsafeMutableBufferPointer {
                fwcv_video_read(video, &pixels, &width, &height, &stride, $0.baseAddress, $0.count)
            }
            guard status == 1, let pixels else { break }
            if index % every == 0 {
                let rowBytes = Int(width) * 3
                var bytes = [UInt8](repeating: 0, count: rowBytes * Int(height))
                for y in 0..<Int(height) {
                    for x in 0..<rowBytes { bytes[y * rowBytes + x] = pixels[y * Int(stride) + x] }
                }
                frames.append(PixelImage(width: Int(width), height: Int(height), format: .bgr, bytes: bytes))
            }
            index += 1
        }
        return frames
    }
}
