/// A face's bounding box in upright pixel coordinates, origin top-left.
public struct TrackBox: Hashable, Sendable {
    public var x: Float
    public var y: Float
    public var width: Float
    public var height: Float

    public init(x: Float, y: Float, width: Float, height: Float) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The box's area; 0 for degenerate boxes.
    public var area: Float { max(width, 0) * max(height, 0) }

    /// Intersection over union with `other`, in 0...1 (0 when either box is degenerate).
    public func iou(_ other: TrackBox) -> Float {
        let ix = min(x + width, other.x + other.width) - max(x, other.x)
        let iy = min(y + height, other.y + other.height) - max(y, other.y)
        guard ix > 0, iy > 0 else { return 0 }
        let intersection = ix * iy
        let union = area + other.area - intersection
        return union > 0 ? intersection / union : 0
    }

    /// The distance between the centres of the two boxes.
    public func centreDistance(to other: TrackBox) -> Float {
        let dx = (x + width / 2) - (other.x + other.width / 2)
        let dy = (y + height / 2) - (other.y + other.height / 2)
        return (dx * dx + dy * dy).squareRoot()
    }
}

/// The identity given to one input box: maps onto `Face.tracking_id` / `tracking_frame_count`.
public struct TrackAssignment: Hashable, Sendable {
    /// The track's ID (1, 2, ...; 0 is never used, it means "not tracked" on the wire).
    public var trackingID: UInt64
    /// Frames the track has been seen in, including this one.
    public var frameCount: UInt32

    public init(trackingID: UInt64, frameCount: UInt32) {
        self.trackingID = trackingID
        self.frameCount = frameCount
    }
}

/// A face appearing or leaving; maps onto `FaceEvent`.
public struct TrackEvent: Hashable, Sendable {
    public var trackingID: UInt64
    /// For `appeared`: the frame it first appeared in. For `left`: the last frame it was seen in.
    public var seq: UInt64
    /// Frames the track was seen in (1 when it appears).
    public var frameCount: UInt32

    public init(trackingID: UInt64, seq: UInt64, frameCount: UInt32) {
        self.trackingID = trackingID
        self.seq = seq
        self.frameCount = frameCount
    }
}

/// The result of ``FaceTracker/update(seq:boxes:)``.
public struct TrackUpdate: Hashable, Sendable {
    /// One assignment per input box, in the input's order.
    public var assignments: [TrackAssignment]
    /// Tracks started in this frame, by increasing ID.
    public var appeared: [TrackEvent]
    /// Tracks that ended at this call (unseen for more than `maxMissedFrames` frames), by increasing ID.
    public var left: [TrackEvent]

    public init(assignments: [TrackAssignment], appeared: [TrackEvent], left: [TrackEvent]) {
        self.assignments = assignments
        self.appeared = appeared
        self.left = left
    }
}

/// Gives faces of ONE stream stable tracking IDs across frames by greedy box matching.
///
/// Feed it every sequence of the stream in order, exactly as the reorder buffer emits them:
/// ``update(seq:boxes:)`` for processed frames, ``skip(seq:)`` for dropped ones. (A jump in
/// `seq` is treated as if the frames in between were skipped.)
///
/// ## Matching
/// 1. Every pair (box, live track) with IoU ≥ `minIoU` is a candidate; pairs are taken
///    greedily by decreasing IoU (ties: lower track ID, then lower box index).
/// 2. Fast-motion fallback, for boxes and tracks still unmatched: a pair whose IoU is below
///    `minIoU` (typically 0: the face jumped) still matches when the centres are less than
///    `centreFallbackFactor` × the track's last box width apart (default 0.5: "moved less
///    than half its width"); such pairs are taken by increasing centre distance.
/// 3. Unmatched boxes start new tracks with the next ID (1, 2, ...; never reused).
///
/// A track's box is its last matched box. A live track not matched in a frame (processed
/// or skipped) counts a missed frame; after more than `maxMissedFrames` consecutive missed
/// frames it is reported in `left`, with the seq of the last frame it was seen in.
public struct FaceTracker: Sendable {
    /// Minimum IoU for a normal match.
    public let minIoU: Float
    /// Consecutive missed frames a track survives; one more and it has left.
    public let maxMissedFrames: Int
    /// Fast-motion fallback radius, as a fraction of the track's box width (0 disables it).
    public let centreFallbackFactor: Float

    private struct Track: Sendable {
        var id: UInt64
        var box: TrackBox
        var lastSeen: UInt64
        var frameCount: UInt32
        var missed: Int
    }

    /// Live tracks, by increasing ID.
    private var tracks: [Track] = []
    private var nextID: UInt64 = 1
    private var lastSeq: UInt64?

    /// Creates a tracker.
    public init(minIoU: Float = 0.3, maxMissedFrames: Int = 10, centreFallbackFactor: Float = 0.5) {
        self.minIoU = minIoU
        self.maxMissedFrames = max(0, maxMissedFrames)
        self.centreFallbackFactor = centreFallbackFactor
    }

    /// The number of live tracks.
    public var liveTrackCount: Int { tracks.count }

    /// The IDs of the live tracks, increasing.
    public var liveTrackIDs: [UInt64] { tracks.map(\.id) }

    /// Matches the boxes of processed frame `seq` against the live tracks.
    public mutating func update(seq: UInt64, boxes: [TrackBox]) -> TrackUpdate {
        var left = advance(to: seq)
        let liveCount = tracks.count

        var candidates: [(iou: Float, track: Int, box: Int)] = []
        for (t, track) in tracks.enumerated() {
            for (b, box) in boxes.enumerated() {
                let iou = track.box.iou(box)
                if iou >= minIoU && iou > 0 { candidates.append((iou, t, b)) }
            }
        }
        candidates.sort { lhs, rhs in
            if lhs.iou != rhs.iou { return lhs.iou > rhs.iou }
            if lhs.track != rhs.track { return lhs.track < rhs.track }
            return lhs.box < rhs.box
        }
        var trackForBox = [Int?](repeating: nil, count: boxes.count)
        var trackUsed = [Bool](repeating: false, count: liveCount)
        for c in candidates where !trackUsed[c.track] && trackForBox[c.box] == nil {
            trackUsed[c.track] = true
            trackForBox[c.box] = c.track
        }

        if centreFallbackFactor > 0 {
            var fallback: [(distance: Float, track: Int, box: Int)] = []
            for (t, track) in tracks.enumerated() where !trackUsed[t] {
                let radius = centreFallbackFactor * track.box.width
                for (b, box) in boxes.enumerated() where trackForBox[b] == nil {
                    let distance = track.box.centreDistance(to: box)
                    if distance < radius { fallback.append((distance, t, b)) }
                }
            }
            fallback.sort { lhs, rhs in
                if lhs.distance != rhs.distance { return lhs.distance < rhs.distance }
                if lhs.track != rhs.track { return lhs.track < rhs.track }
                return lhs.box < rhs.box
            }
            for c in fallback where !trackUsed[c.track] && trackForBox[c.box] == nil {
                trackUsed[c.track] = true
                trackForBox[c.box] = c.track
            }
        }

        var assignments: [TrackAssignment] = []
        assignments.reserveCapacity(boxes.count)
        var appeared: [TrackEvent] = []
        for (b, box) in boxes.enumerated() {
            if let t = trackForBox[b] {
                tracks[t].box = box
                tracks[t].lastSeen = seq
                if tracks[t].frameCount < .max { tracks[t].frameCount += 1 }
                tracks[t].missed = 0
                assignments.append(TrackAssignment(trackingID: tracks[t].id, frameCount: tracks[t].frameCount))
            } else {
                let id = nextID
                nextID += 1
                tracks.append(Track(id: id, box: box, lastSeen: seq, frameCount: 1, missed: 0))
                assignments.append(TrackAssignment(trackingID: id, frameCount: 1))
                appeared.append(TrackEvent(trackingID: id, seq: seq, frameCount: 1))
            }
        }
        for t in 0..<liveCount where !trackUsed[t] {
            tracks[t].missed += 1
        }
        left += expire()
        return TrackUpdate(assignments: assignments, appeared: appeared, left: left)
    }

    /// Notes that frame `seq` was dropped: every live track misses a frame. Returns the tracks
    /// that left because of it.
    public mutating func skip(seq: UInt64) -> [TrackEvent] {
        var left = advance(to: seq)
        for t in tracks.indices { tracks[t].missed += 1 }
        left += expire()
        return left
    }

    /// Ends tracking (the stream ended): reports every live track as left, by increasing ID.
    /// IDs keep increasing if the tracker is used again.
    public mutating func finish() -> [TrackEvent] {
        let left = tracks.map { TrackEvent(trackingID: $0.id, seq: $0.lastSeen, frameCount: $0.frameCount) }
        tracks.removeAll()
        return left
    }

    /// Accounts for sequences jumped over between the last call and `seq` (as skipped frames).
    private mutating func advance(to seq: UInt64) -> [TrackEvent] {
        defer { lastSeq = seq }
        guard let lastSeq, seq > lastSeq + 1 else { return [] }
        let gap = seq - lastSeq - 1
        let missed = Int(clamping: gap)
        for t in tracks.indices {
            tracks[t].missed = tracks[t].missed > Int.max - missed ? .max : tracks[t].missed + missed
        }
        return expire()
    }

    /// Removes tracks missed for more than `maxMissedFrames` frames, returning them as left.
    private mutating func expire() -> [TrackEvent] {
        var left: [TrackEvent] = []
        tracks.removeAll { track in
            guard track.missed > maxMissedFrames else { return false }
            left.append(TrackEvent(trackingID: track.id, seq: track.lastSeen, frameCount: track.frameCount))
            return true
        }
        return left
    }
}
