import FacewireDetection
import FacewireImage
import FacewireEvaluation

/// Reads frames of a video file with the COpenCV video reader (for tests).
enum VideoFrames {
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
        try VideoFileFrames.framesPerSecond(path)
    }

    /// Reads frames in order, handing `body` each index and a closure that copies the frame out; `body` returns
    /// whether to go on.
    static func read(_ path: String, _ body: (Int, () -> PixelImage) -> Bool) throws {
        try VideoFileFrames.read(path) { frame in body(frame.index, frame.image) }
    }
}
