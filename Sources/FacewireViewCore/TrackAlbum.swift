import FacewireProtocol

/// The tracks of one (stream, epoch) as the view shows them: when each was first and last seen, how many frames, and
/// the best picture of it seen in a previewed frame. Bounded: at most `maxLive` live tracks (others are not
/// followed, counted `view_tracks_refused_cap`) and `maxEnded` ended ones (oldest forgotten).
public struct TrackAlbum: Sendable {
    /// One track.
    public struct Track: Sendable, Equatable {
        public var trackingID: UInt64
        public var firstSeq: UInt64
        public var lastSeq: UInt64
        public var firstCaptureTimeUs: Int64
        public var lastCaptureTimeUs: Int64
        /// Frames the track was seen in (the collector's count when it left, else counted here).
        public var frameCount: UInt32
        /// The score of the best face kept (``bestFace``), 0 = none yet.
        public var bestScore: Float = 0
        /// The face that was best, as the result gave it (landmarks removed).
        public var bestFace: WireFace?
        /// Its upright, level crop (JPEG), once the shell made it.
        public var crop: [UInt8]?
        public var ended = false

        /// From first to last capture time seen, in ms (0 with one frame or no capture times); never traps.
        public var durationMs: Int64 {
            let (difference, overflow) = lastCaptureTimeUs.subtractingReportingOverflow(firstCaptureTimeUs)
            return overflow || difference < 0 ? 0 : difference / 1000
        }
    }

    public let maxLive: Int
    public let maxEnded: Int
    /// A new picture replaces the kept one only when its score is this much better (fewer crops made).
    public static let improvement: Float = 1.15

    public private(set) var live: [UInt64: Track] = [:]
    /// Ended tracks, oldest first.
    public private(set) var ended: [Track] = []

    public init(maxLive: Int, maxEnded: Int) {
        self.maxLive = max(1, maxLive)
        self.maxEnded = max(1, maxEnded)
    }

    /// The track, live or ended.
    public func track(_ id: UInt64) -> Track? {
        live[id] ?? ended.last { $0.trackingID == id }
    }

    /// Notes that `id` was seen in frame `seq`. Returns false (refused) when it is new and ``maxLive`` are followed.
    @discardableResult
    public mutating func saw(_ id: UInt64, seq: UInt64, captureTimeUs: Int64) -> Bool {
        guard id != 0 else { return false }
        if var track = live[id] {
            if seq > track.lastSeq {
                track.lastSeq = seq
                track.lastCaptureTimeUs = captureTimeUs
                track.frameCount &+= 1
            }
            live[id] = track
            return true
        }
        guard live.count < maxLive, !ended.contains(where: { $0.trackingID == id }) else { return false }
        live[id] = Track(
            trackingID: id, firstSeq: seq, lastSeq: seq, firstCaptureTimeUs: captureTimeUs, lastCaptureTimeUs: captureTimeUs,
            frameCount: 1)
        return true
    }

    /// Whether `score` would replace the picture kept for live track `id`.
    public func isBetter(_ score: Float, for id: UInt64) -> Bool {
        guard let track = live[id], score.isFinite, score > 0 else { return false }
        return track.bestFace == nil || score > track.bestScore * Self.improvement
    }

    /// Keeps `face` as the best picture of live track `id`; its crop comes with ``setCrop(_:for:)``.
    public mutating func keepBest(_ face: WireFace, score: Float, for id: UInt64) {
        guard live[id] != nil else { return }
        var face = face
        face.landmarks = []
        live[id]!.bestFace = face
        live[id]!.bestScore = score
    }

    /// The crop of the picture kept for track `id` (live or ended).
    public mutating func setCrop(_ crop: [UInt8], for id: UInt64) {
        if live[id] != nil {
            live[id]!.crop = crop
        } else if let index = ended.lastIndex(where: { $0.trackingID == id }) {
            ended[index].crop = crop
        }
    }

    /// Ends live track `id` (a left event): it moves to the ended ones, with the collector's frame count if given.
    /// Returns it, or nil when the track was not followed.
    public mutating func end(_ id: UInt64, frameCount: UInt32?) -> Track? {
        guard var track = live.removeValue(forKey: id) else { return nil }
        track.ended = true
        if let frameCount, frameCount > 0 { track.frameCount = frameCount }
        ended.append(track)
        if ended.count > maxEnded { ended.removeFirst(ended.count - maxEnded) }
        return track
    }
}
