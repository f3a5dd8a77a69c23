import FacewireDetection
import FacewireVocabulary
import FacewireImage

/// The mean colour of every frame of a skin clip: a video that is already one skin region (the pulse evaluation's
/// `../shared/data/pulse`, issue 16), read with the capture node's OpenCV video reader.
///
/// What the pulse estimator is fed is decided for the whole clip (``samples()``): the mean of the skin pixels
/// (``SkinSampler``'s test) when the mask keeps at least ``minimumSkinFraction`` of the pixels in at least
/// ``minimumSkinFrames`` of the frames, the frames where it keeps fewer being left out (as the worker leaves out a
/// region with too few skin pixels); otherwise the mean of the whole frame, every frame. Switching between the two
/// from frame to frame would put steps into the colour that are not the pulse.
public struct SkinTrace: Sendable, Equatable {
    /// What the samples are the mean of.
    public enum Input: String, Sendable, Codable {
        case skin, frame
    }

    /// One sample for the pulse estimator: the time from the clip's start (frame index / fps) and the mean colour.
    public struct Sample: Sendable, Equatable {
        public var time: Double
        public var colour: SkinSampler.Colour

        public init(time: Double, colour: SkinSampler.Colour) {
            self.time = time
            self.colour = colour
        }
    }

    /// A frame's skin mask stands for it when it keeps at least this fraction of its pixels.
    public static let minimumSkinFraction = 0.25
    /// The skin mask is used for a clip when at least this fraction of its frames keep enough skin pixels.
    public static let minimumSkinFrames = 0.95

    /// The clip's frame rate (the container's).
    public var fps: Double
    /// Every frame's means, in order.
    public var frames: [SkinSampler.ImageMeans]

    public init(fps: Double, frames: [SkinSampler.ImageMeans]) {
        self.fps = fps
        self.frames = frames
    }

    /// Whether a frame's skin mask keeps enough pixels to stand for the frame.
    public static func keepsEnoughSkin(_ means: SkinSampler.ImageMeans) -> Bool {
        means.skin != nil && means.skinPixels >= SkinSampler.minPixels
            && Double(means.skinPixels) >= minimumSkinFraction * Double(means.pixels)
    }

    /// The samples to feed the estimator, what they are the mean of, and how many frames were left out.
    public func samples() -> (input: Input, samples: [Sample], leftOut: Int) {
        let kept = frames.filter(Self.keepsEnoughSkin).count
        let useSkin = !frames.isEmpty && Double(kept) >= Self.minimumSkinFrames * Double(frames.count)
        var samples: [Sample] = []
        samples.reserveCapacity(useSkin ? kept : frames.count)
        for (index, means) in frames.enumerated() {
            let time = Double(index) / fps
            if !useSkin {
                samples.append(Sample(time: time, colour: means.all))
            } else if Self.keepsEnoughSkin(means), let skin = means.skin {
                samples.append(Sample(time: time, colour: skin))
            }
        }
        return (useSkin ? .skin : .frame, samples, frames.count - samples.count)
    }

    /// Decodes every frame of a video file and measures it (blocking: call it on a thread that may wait).
    /// - Throws: ``DetectionError`` `.invalidImage` when the file cannot be opened or read, or states no frame rate.
    public static func read(video path: String) throws -> SkinTrace {
        let fps = try VideoFileFrames.framesPerSecond(path)
        guard fps > 0 else { throw DetectionError(.invalidImage, "\(path) states no frame rate") }
        var frames: [SkinSampler.ImageMeans] = []
        try VideoFileFrames.read(path) { frame in
            guard
                let means = SkinSampler.means(bgr: frame.pixels, width: frame.width, height: frame.height, stride: frame.stride)
            else { throw DetectionError(.invalidImage, "frame \(frame.index) of \(path) is empty") }
            frames.append(means)
            return true
        }
        return SkinTrace(fps: fps, frames: frames)
    }
}
