/// Bounds of the live view's state: every one caps something a network peer (the collector's stream, a capture
/// node's preview) can make the view hold.
public struct ViewLimits: Sendable, Equatable {
    /// Streams shown at once; further streams are counted (`view_streams_refused_cap`) and not shown.
    public var maxStreams: Int = 64
    /// Preview frames kept per stream, waiting for their result (newest kept).
    public var framesPerStream: Int = 32
    /// Results kept per stream, waiting for their preview frame (newest kept).
    public var resultsPerStream: Int = 64
    /// Live tracks followed per stream (their best picture kept); more are counted (`view_tracks_refused_cap`).
    public var liveTracksPerStream: Int = 256
    /// Ended tracks kept per stream with their best face, for the event list and the crop endpoint (newest kept).
    public var endedTracksPerStream: Int = 64
    /// Events kept per stream for the page (newest kept).
    public var eventsPerStream: Int = 100
    /// The JPEG bytes of all streams' previews waiting for their results together; past it a stream's oldest waiting
    /// frames go (`view_previews_over_budget`), so no set of capture nodes can make the view hold more.
    public var maxPendingPreviewBytes: Int = 256 << 20
    /// Largest preview JPEG accepted (bytes), as a worker's frame socket.
    public var maxJPEGBytes: Int = 16 << 20

    public init() {}
}
