import FacewireProtocol

extension CollectorCore {
    /// How much the core remembers, table by table: what the caps bound (REFERENCE-NODES.md §4.1). The structure-aware fuzz
    /// target and the property tests check it against ``CollectorLimits`` after every input.
    public struct Footprint: Sendable, Equatable {
        /// Open (stream, epoch) pairs.
        public var openStreams: Int
        /// Results buffered over all streams.
        public var pendingResults: Int
        /// Their estimated size in bytes (`--max-pending-bytes`).
        public var pendingBytes: Int
        /// Skip runs stored over all streams.
        public var storedSkipRuns: Int
        /// Tracks held over all streams.
        public var tracks: Int
        /// Tracks with a heart-rate estimator (and a last reported rate) over all streams (`--max-pulse-tracks`).
        public var pulseTracks: Int
        /// Ended (stream, epoch) pairs remembered to refuse their stragglers.
        public var endedRemembered: Int
        /// Capture nodes remembered (live or not yet expired).
        public var captures: Int
        /// Worker identities remembered.
        public var workers: Int
        /// `stream` and `reason` label values of `facewire_stream_frames_total`.
        public var metricStreams: Int
        public var metricReasons: Int
    }

    /// What the core remembers now.
    public var footprint: Footprint {
        var pending = 0
        var runs = 0
        var tracks = 0
        var pulseTracks = 0
        for key in table.openKeys {
            if let buffer = table.buffer(key) {
                pending += buffer.pendingCount
                runs += buffer.storedSkipRunCount
            }
            tracks += streams[key]?.tracker.trackCount ?? 0
            pulseTracks += streams[key]?.pulse.count ?? 0
        }
        return Footprint(
            openStreams: table.openCount, pendingResults: pending, pendingBytes: table.pendingBytes, storedSkipRuns: runs,
            tracks: tracks, pulseTracks: pulseTracks, endedRemembered: table.rememberedEndCount, captures: captures.count, workers: workers.count,
            metricStreams: labels.streamCount, metricReasons: labels.reasonCount)
    }

    /// The most ended (stream, epoch) pairs the core remembers under `limits` (8 × `maxStreams`).
    public static func maxEndedRemembered(_ limits: CollectorLimits) -> Int {
        StreamTable<FrameResult>.maxEndedRemembered(maxOpen: limits.maxStreams)
    }
}
