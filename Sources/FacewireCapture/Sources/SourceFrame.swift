import FacewireImage

/// One frame from a ``FrameSource``: complete JPEG bytes plus what a consumer needs to know without decoding.
public struct SourceFrame: Sendable {
    /// A complete JPEG file (SOI to EOI).
    public var jpeg: [UInt8]
    /// Width of the JPEG as stored (before ``orientation`` is applied).
    public var width: Int
    /// Height of the JPEG as stored (before ``orientation`` is applied).
    public var height: Int
    /// How to turn the stored image upright (from the file's EXIF; ``Orientation/up`` for re-encoded frames,
    /// which are encoded upright).
    public var orientation: Orientation
    /// `true` when the frame was decoded and encoded again by the source; `false` when ``jpeg`` holds the
    /// original file bytes unchanged.
    public var reencoded: Bool
    /// When the frame was captured (Unix microseconds), if the source knows better than "when it was read" (a
    /// camera's buffer timestamp). Nil: the capture node stamps it as it reads it.
    public var captureTimeUs: Int64?
    /// Where the frame sits in the source's own timeline, in seconds (a video file's presentation time, counting on
    /// across `--loop` passes). Real-time pacing follows it, so variable-frame-rate files play at their own pace.
    public var mediaTimeSeconds: Double?

    /// Creates a frame.
    public init(jpeg: [UInt8], width: Int, height: Int, orientation: Orientation, reencoded: Bool) {
        self.jpeg = jpeg
        self.width = width
        self.height = height
        self.orientation = orientation
        self.reencoded = reencoded
    }
}
