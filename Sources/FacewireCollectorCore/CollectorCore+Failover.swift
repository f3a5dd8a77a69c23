import FacewireProtocol
import FacewireTracking
import FacewireVocabulary

/// Collector failover (SPEC.md 18, protocol/FAILOVER-DESIGN.md): what the active hands its standbys after each step
/// (a ``StreamCheckpoint`` per (stream, epoch) it changed), and a core continuing from them after a takeover.
///
/// A checkpoint is the stream's state after everything the step published: the reorder buffer's head and accounting,
/// the tracker, the last heart rate per track and the next publication number. Not carried: results and skips
/// buffered beyond a missing head (their sequences drop as ``DropReason/failover`` after the takeover), the pulse
/// windows (a track's heart rate starts a new window), the statistics window (the next report covers the time since
/// the takeover) and dispatch (threads and capture nodes ask again within a second).
extension CollectorCore {
    /// A (stream, epoch) of a checkpoint from the wire, checked: what ``restore(_:closed:at:)`` continues from.
    public struct StreamResume: Sendable {
        public var key: StreamTable<FrameResult>.Key
        var buffer: ReorderBuffer<FrameResult>.Checkpoint
        var tracker: FaceTracker
        var heartRates: [UInt64: Facewire_V1_HeartRate]
        var workerDropped: UInt64
        var errors: UInt64
        var nextPublication: UInt64
    }

    /// The largest capture time, in seconds either side of 1970, a checkpoint may carry (about 31,700 years).
    public static let maxCheckpointSeconds = 1e12

    /// Why a checkpoint from the wire was refused (counted as `replication_refused_<reason>`).
    public enum CheckpointRefusal: String, Error, Sendable, Equatable {
        /// An invalid stream id.
        case stream
        /// The tracker's state: too many tracks, a filter or a time that is not usable (not finite, or beyond
        /// ``maxCheckpointSeconds``), IDs repeated (``FaceTracker/StateRefused``).
        case tracker
        /// A heart rate that is not finite or out of 0...300 bpm, or one on a track the tracker does not have.
        case heartRate = "heart_rate"
        /// Publication number 0 (numbers start at 1).
        case publication
    }

    /// Starts numbering what the core publishes and recording what changed, as the active of a failover group with
    /// fencing epoch `leaderEpoch` (its leader key's create revision). Streams open now are numbered from 1.
    public mutating func startReplicating(leaderEpoch: UInt64) {
        self.leaderEpoch = leaderEpoch
        for key in streams.keys where streams[key]?.nextPublication == nil {
            streams[key]?.nextPublication = 1
        }
        touched = Set(table.openKeys)
    }

    /// The checkpoint of an open (stream, epoch), or of a closed one (`closed` set, nothing else) when it is not open.
    public func checkpoint(of key: StreamTable<FrameResult>.Key) -> StreamCheckpoint {
        var checkpoint = StreamCheckpoint()
        checkpoint.stream = key.stream
        checkpoint.epoch = key.epoch
        guard let buffer = table.buffer(key), let state = streams[key] else {
            checkpoint.closed = true
            return checkpoint
        }
        let position = buffer.checkpoint
        checkpoint.emitting = position.isSettled
        checkpoint.nextSeq = position.head
        checkpoint.announcedNextSeq = position.announcedNextSeq ?? 0
        if let endSeq = position.endSeq { checkpoint.endSeq = endSeq }
        checkpoint.superseded = position.isSuperseded
        checkpoint.emitted = position.counters.emitted
        checkpoint.processed = position.counters.processed
        checkpoint.dropped = position.counters.dropped
        checkpoint.late = position.counters.late
        checkpoint.duplicates = position.counters.duplicates
        checkpoint.workerDropped = state.workerDropped
        checkpoint.errors = state.errors
        let tracker = state.tracker.state
        checkpoint.tracks = tracker.tracks.map { track in
            var wire = TrackCheckpoint()
            wire.id = track.id
            wire.filter = track.filter
            wire.time = track.time
            wire.lastSeenTime = track.lastSeenTime
            wire.lastSeenSeq = track.lastSeenSeq
            wire.frameCount = track.frameCount
            if track.id != 0, let rate = state.pulse[track.id]?.reported { wire.lastHeartRate = rate }
            return wire
        }
        checkpoint.nextTrackID = tracker.nextID
        if let previous = tracker.previousTime { checkpoint.previousTime = previous }
        checkpoint.nextPublication = state.nextPublication ?? 1
        return checkpoint
    }

    /// The checkpoints of every (stream, epoch) changed since the last call, sorted (closed ones say so), and
    /// forgets them. Empty unless replicating.
    public mutating func takeCheckpoints() -> [StreamCheckpoint] {
        guard !touched.isEmpty else { return [] }
        let keys = touched.sorted()
        touched.removeAll(keepingCapacity: true)
        return keys.map { checkpoint(of: $0) }
    }

    /// Every open (stream, epoch)'s checkpoint, and a closed one for each ended pair remembered: what a standby that
    /// joins (or lost its place) starts from.
    public func snapshot() -> [StreamCheckpoint] {
        table.openKeys.map { checkpoint(of: $0) } + table.endedKeys.map { checkpoint(of: $0) }
    }

    /// Checks a checkpoint from the wire. `nil` with `closed` set: the key ended (``Resume/closed``).
    public static func resume(
        from checkpoint: StreamCheckpoint, tracking: FaceTracker.Configuration
    ) -> Result<StreamResume, CheckpointRefusal> {
        guard Wire.isValidStreamID(checkpoint.stream) else { return .failure(.stream) }
        guard checkpoint.nextPublication > 0 else { return .failure(.publication) }
        // The track count first: a hostile checkpoint may list a million tracks, each with a million filter values.
        guard checkpoint.tracks.count <= tracking.maxTracks else { return .failure(.tracker) }
        // Times are capture times in seconds (checked within a day of the clock at intake): a finite but absurd one
        // (1e300) would overflow to infinity once a handover's gap is added to it (FaceTracker.bridge).
        let times = checkpoint.tracks.flatMap { [$0.time, $0.lastSeenTime] } + (checkpoint.hasPreviousTime ? [checkpoint.previousTime] : [])
        guard times.allSatisfy({ abs($0) <= Self.maxCheckpointSeconds }) else { return .failure(.tracker) }
        let state = FaceTracker.State(
            tracks: checkpoint.tracks.map {
                FaceTracker.State.Track(
                    id: $0.id, filter: $0.filter, time: $0.time, lastSeenTime: $0.lastSeenTime, lastSeenSeq: $0.lastSeenSeq,
                    frameCount: $0.frameCount)
            },
            nextID: checkpoint.nextTrackID, previousTime: checkpoint.hasPreviousTime ? checkpoint.previousTime : nil)
        let tracker: FaceTracker
        do {
            tracker = try FaceTracker(configuration: tracking, state: state)
        } catch {
            return .failure(.tracker)
        }
        var heartRates: [UInt64: Facewire_V1_HeartRate] = [:]
        for track in checkpoint.tracks where track.hasLastHeartRate {
            let rate = track.lastHeartRate
            guard track.id != 0, rate.bpm.isFinite, rate.bpm >= 0, rate.bpm <= 300, rate.snr.isFinite, rate.windowSeconds.isFinite
            else { return .failure(.heartRate) }
            heartRates[track.id] = rate
        }
        let counters = StreamCounters(
            emitted: checkpoint.emitted, processed: checkpoint.processed, dropped: checkpoint.dropped, late: checkpoint.late,
            duplicates: checkpoint.duplicates)
        let buffer = ReorderBuffer<FrameResult>.Checkpoint(
            isSettled: checkpoint.emitting, head: checkpoint.nextSeq,
            announcedNextSeq: checkpoint.announcedNextSeq == 0 ? nil : checkpoint.announcedNextSeq,
            endSeq: checkpoint.hasEndSeq ? checkpoint.endSeq : nil, isSuperseded: checkpoint.superseded, counters: counters)
        return .success(
            StreamResume(
                key: .init(stream: checkpoint.stream, epoch: checkpoint.epoch), buffer: buffer, tracker: tracker,
                heartRates: heartRates, workerDropped: checkpoint.workerDropped, errors: checkpoint.errors,
                nextPublication: checkpoint.nextPublication))
    }

    /// Continues the streams another collector had open (a takeover), at `now`: each `streams` entry opens with its
    /// buffer, tracker and numbering; each `closed` key is remembered as ended. For a core that has not yet taken any
    /// input; the core numbers its publications from here on (``startReplicating(leaderEpoch:)`` first).
    public mutating func restore(
        _ resumes: [StreamResume], closed: [StreamTable<FrameResult>.Key], at now: Instant
    ) {
        let t = now.monotonicNs
        for key in closed { table.rememberEnded(key, at: t) }
        for resume in resumes {
            let buffer = ReorderBuffer<FrameResult>(
                restoring: resume.buffer, maxDelayNanoseconds: limits.maxDelay, maxPending: limits.maxPending, at: t)
            guard table.restore(resume.key, buffer: buffer) else { continue }
            var state = StreamState(
                tracker: resume.tracker, statistics: StreamStatistics(now: t), lastInput: t,
                nextPublication: leaderEpoch == nil ? nil : resume.nextPublication)
            state.bridgesHandover = true
            state.workerDropped = resume.workerDropped
            state.errors = resume.errors
            for (id, rate) in resume.heartRates {
                var track = PulseTrack(meshForehead: limits.pulseMeshForehead)
                track.reported = rate
                state.pulse[id] = track
            }
            streams[resume.key] = state
            if leaderEpoch != nil { touched.insert(resume.key) }
        }
    }
}
