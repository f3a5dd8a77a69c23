/// A tracker's state as plain values, and a tracker continuing from one: what a standby collector needs to go on with
/// a stream's tracks after a failover (issue 29, protocol/FAILOVER-DESIGN.md). A tracker restored from its own state
/// answers every later frame exactly as the original would.
extension FaceTracker {
    /// Everything the tracker carries from one frame to the next.
    public struct State: Sendable, Equatable {
        /// One track.
        public struct Track: Sendable, Equatable {
            /// 0 until confirmed (a confirmed track was announced: its `appeared` event went out).
            public var id: UInt64
            /// The box filter's 20 numbers (``BoxKalmanFilter/values``).
            public var filter: [Double]
            public var time: Double
            public var lastSeenTime: Double
            public var lastSeenSeq: UInt64
            public var frameCount: UInt32

            public init(id: UInt64, filter: [Double], time: Double, lastSeenTime: Double, lastSeenSeq: UInt64, frameCount: UInt32) {
                self.id = id
                self.filter = filter
                self.time = time
                self.lastSeenTime = lastSeenTime
                self.lastSeenSeq = lastSeenSeq
                self.frameCount = frameCount
            }
        }

        /// Tracks, oldest first.
        public var tracks: [Track]
        /// The ID the next confirmed track gets.
        public var nextID: UInt64
        /// The time of the previous update.
        public var previousTime: Double?

        public init(tracks: [Track], nextID: UInt64, previousTime: Double?) {
            self.tracks = tracks
            self.nextID = nextID
            self.previousTime = previousTime
        }
    }

    /// Why a state was refused.
    public struct StateRefused: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// The tracker's state now.
    public var state: State {
        State(
            tracks: tracks.map {
                State.Track(
                    id: $0.id, filter: $0.filter.values, time: $0.time, lastSeenTime: $0.lastSeenTime, lastSeenSeq: $0.lastSeenSeq,
                    frameCount: $0.frameCount)
            },
            nextID: nextID, previousTime: previousTime)
    }

    /// A tracker continuing from `state` (which came from another process: every value is checked). Refused: more
    /// tracks than `configuration.maxTracks`, a filter that is not 20 finite numbers with variances ≥ 0 and a box at
    /// least 1 px, a time that is not finite, an ID at or above `nextID` or held by two tracks, `nextID` 0.
    public init(configuration: Configuration, state: State) throws(StateRefused) {
        self.init(configuration: configuration)
        guard state.tracks.count <= configuration.maxTracks else {
            throw StateRefused(description: "\(state.tracks.count) tracks, more than the \(configuration.maxTracks) allowed")
        }
        guard state.nextID > 0 else { throw StateRefused(description: "next ID 0") }
        guard state.previousTime.map(\.isFinite) ?? true else { throw StateRefused(description: "a previous time that is not finite") }
        var ids = Set<UInt64>()
        var restored: [Track] = []
        restored.reserveCapacity(state.tracks.count)
        for track in state.tracks {
            guard let filter = BoxKalmanFilter(values: track.filter) else { throw StateRefused(description: "a track's filter is not usable") }
            guard track.time.isFinite, track.lastSeenTime.isFinite else { throw StateRefused(description: "a track's time is not finite") }
            if track.id != 0 {
                guard track.id < state.nextID, ids.insert(track.id).inserted else {
                    throw StateRefused(description: "track ID \(track.id) repeated or not below the next ID \(state.nextID)")
                }
            }
            restored.append(
                Track(
                    id: track.id, filter: filter, time: track.time, lastSeenTime: track.lastSeenTime, lastSeenSeq: track.lastSeenSeq,
                    frameCount: track.frameCount))
        }
        tracks = restored
        nextID = state.nextID
        previousTime = state.previousTime
    }
}

extension FaceTracker {
    /// Bridges an outage of the system, not of the faces (a collector failover, SPEC.md 18): the next update, at `time`,
    /// sees at most `maxGap` seconds since the previous one. Every track's times move forward by the excess, so the
    /// outage neither ends tracks (`maxAge`) nor stretches their prediction. Nothing changes without a previous update,
    /// for a short gap, or for values that are not finite.
    public mutating func bridge(to time: Double, maxGap: Double) {
        guard let previous = previousTime, time.isFinite, maxGap.isFinite, maxGap >= 0 else { return }
        let excess = time - previous - maxGap
        guard excess > 0, excess.isFinite else { return }
        for index in tracks.indices {
            tracks[index].time += excess
            tracks[index].lastSeenTime += excess
        }
        previousTime = previous + excess
    }
}
