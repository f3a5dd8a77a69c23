import FacewireVocabulary

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

/// One detected face handed to the tracker: its box and the detector's confidence.
public struct TrackDetection: Hashable, Sendable {
    public var box: FaceRect
    public var score: Float

    public init(box: FaceRect, score: Float) {
        self.box = box
        self.score = score
    }
}

/// The result of ``FaceTracker/update(seq:time:detections:)``.
public struct TrackUpdate: Hashable, Sendable {
    /// One assignment per input detection, in the input's order. A detection that belongs to no confirmed track
    /// (a low-confidence detection that matched nothing, or a track still short of `minHits`) has tracking ID 0.
    public var assignments: [TrackAssignment]
    /// Tracks confirmed in this frame (they get their ID now), by increasing ID.
    public var appeared: [TrackEvent]
    /// Tracks that ended at this call (unseen for more than `maxAge` seconds), by increasing ID.
    public var left: [TrackEvent]

    public init(assignments: [TrackAssignment], appeared: [TrackEvent], left: [TrackEvent]) {
        self.assignments = assignments
        self.appeared = appeared
        self.left = left
    }
}

/// Gives the faces of ONE stream tracking IDs that stay put: a Kalman filter predicts where each face has moved,
/// the Hungarian method matches detections to the predictions as a whole, and low-confidence detections get a
/// second chance to continue a track (as ByteTrack does) without ever starting one.
///
/// Feed it the stream's processed frames in sequence order, exactly as the reorder buffer emits them, with each
/// frame's capture time. It is time-based: frames that were dropped, skipped or never sent only make the next
/// prediction step longer, so losing frames does not break tracks, and `maxAge` is in seconds of capture time.
///
/// ## One frame
/// 1. Every track's box is predicted to the frame's time (``BoxKalmanFilter``).
/// 2. Detections with `score >= highScore` are matched by minimum total cost `1 - IoU` (predicted box,
///    detection), over pairs with IoU ≥ `minIoU` (``Assignment``): first to the tracks seen in the previous frame,
///    then what is left to the tracks that are coasting (a matching cascade, as in DeepSORT).
/// 3. Fast motion: a high-confidence detection and a track still unmatched pair up when their centres are less
///    than `centreFallbackFactor` × the predicted width apart, nearest first.
/// 3b. A lone face's jump: an unmatched confirmed track and an unmatched high-confidence detection pair up when the
///    detection is the only one of the frame within `loneFallbackFactor` × the predicted width, no other track is
///    that near the detection, and their sizes agree within 30 %
///    (``matchLoneJumps(_:highScore:predicted:trackForDetection:trackUsed:)``).
/// 4. Low-confidence detections are matched to the tracks still unmatched, over pairs with IoU ≥ `lowMinIoU`.
/// 5. A matched track takes the detection (its filter is corrected). An unmatched high-confidence detection
///    starts a track; an unmatched low-confidence one gets no track (ID 0).
/// 6. A track is *confirmed* once it has been seen in `minHits` frames: only then does it get an ID (1, 2, …,
///    never reused by this tracker) and a `faceAppeared` event. A track not yet confirmed that misses a frame is
///    forgotten without an event.
/// 7. A confirmed track unseen for more than `maxAge` seconds has left (`faceLeft`, with the last frame it was
///    seen in); until then a face that comes back keeps its ID.
///
/// The boxes reported on the stream stay the detector's; the tracker only decides identities.
public struct FaceTracker: Sendable {
    /// The tracker's parameters (collector flags `--track-max-age`, `--track-min-hits`).
    public struct Configuration: Sendable, Equatable {
        /// Seconds a confirmed face that is no longer seen keeps its ID.
        public var maxAge: Double
        /// Frames a face must be seen in before it gets an ID (1: at once).
        public var minHits: Int
        /// Detections at or above this confidence are matched first and may start tracks.
        public var highScore: Float
        /// Minimum IoU between a predicted box and a high-confidence detection.
        public var minIoU: Float
        /// Minimum IoU between a predicted box and a low-confidence detection.
        public var lowMinIoU: Float
        /// Fast-motion fallback radius, as a fraction of the predicted width (0 disables it).
        public var centreFallbackFactor: Float
        /// A lone face's jump: the radius, as a fraction of the predicted width, within which an unmatched confirmed
        /// track and an unmatched high-confidence detection pair up when each is the only one of its kind near the
        /// other and their sizes agree (0 disables it).
        public var loneFallbackFactor: Float
        /// The most tracks kept (`--max-tracks`): beyond it the tracks seen longest ago (by sequence) end at once.
        /// Bounds memory and the matching's cost whatever capture times and faces a peer sends.
        public var maxTracks: Int

        /// Creates a configuration; the defaults suit 5–60 fps video of faces.
        public init(
            maxAge: Double = 1.0, minHits: Int = 1, highScore: Float = 0.7, minIoU: Float = 0.3,
            lowMinIoU: Float = 0.5, centreFallbackFactor: Float = 0.5, loneFallbackFactor: Float = 1.0,
            maxTracks: Int = 256
        ) {
            self.loneFallbackFactor = loneFallbackFactor
            self.maxTracks = max(1, maxTracks)
            self.maxAge = maxAge
            self.minHits = minHits
            self.highScore = highScore
            self.minIoU = minIoU
            self.lowMinIoU = lowMinIoU
            self.centreFallbackFactor = centreFallbackFactor
        }
    }

    public let configuration: Configuration

    struct Track: Sendable {
        /// 0 until confirmed.
        var id: UInt64
        var filter: BoxKalmanFilter
        /// Capture time the filter has been predicted to.
        var time: Double
        var lastSeenTime: Double
        var lastSeenSeq: UInt64
        var frameCount: UInt32
    }

    /// Tracks, oldest first.
    var tracks: [Track] = []
    var nextID: UInt64 = 1
    /// The time of the previous ``update(seq:time:detections:)``.
    var previousTime: Double?

    /// Creates a tracker.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// The number of confirmed tracks.
    public var liveTrackCount: Int { tracks.filter { $0.id != 0 }.count }
    /// Every track held, confirmed or not (bounded by `maxTracks` after each update).
    public var trackCount: Int { tracks.count }

    /// The IDs of the confirmed tracks, increasing.
    public var liveTrackIDs: [UInt64] { tracks.map(\.id).filter { $0 != 0 }.sorted() }

    /// Matches the detections of processed frame `seq`, captured at `time` (seconds, any origin, increasing with
    /// `seq`), against the tracks. `highScore`, when given, replaces the configuration's for this frame: the
    /// detector's own track-start score (`FrameResult.track_score`); one not finite or outside 0...1 is ignored.
    public mutating func update(seq: UInt64, time: Double, detections: [TrackDetection], highScore: Float? = nil) -> TrackUpdate {
        let highScore = highScore.flatMap { $0.isFinite && (0...1).contains($0) ? $0 : nil } ?? configuration.highScore
        for index in tracks.indices where time > tracks[index].time {
            tracks[index].filter.predict(dt: time - tracks[index].time)
            tracks[index].time = time
        }
        let predicted = tracks.map(\.filter.box)
        var trackForDetection = [Int?](repeating: nil, count: detections.count)
        var trackUsed = [Bool](repeating: false, count: tracks.count)
        let high = detections.indices.filter { detections[$0].score >= highScore }
        let low = detections.indices.filter { detections[$0].score < highScore }

        // Tracks seen in the previous frame are matched before tracks that are coasting on their prediction, so a
        // lost face's drifting prediction cannot take the detection of a face that is in plain view.
        let seenLastFrame = tracks.map { $0.lastSeenTime >= (previousTime ?? -.infinity) }
        func match(_ candidates: [Int], minIoU: Float, only eligible: ((Int) -> Bool)? = nil) {
            let free = tracks.indices.filter { !trackUsed[$0] && (eligible?($0) ?? true) }
            guard !free.isEmpty, !candidates.isEmpty else { return }
            var cost = [Float?](repeating: nil, count: candidates.count * free.count)
            for (row, d) in candidates.enumerated() {
                for (column, t) in free.enumerated() {
                    let iou = predicted[t].intersectionOverUnion(detections[d].box)
                    if iou >= minIoU && iou > 0 { cost[row * free.count + column] = 1 - iou }
                }
            }
            for (row, column) in Assignment.solve(cost, rows: candidates.count, columns: free.count).enumerated() {
                guard let column else { continue }
                trackForDetection[candidates[row]] = free[column]
                trackUsed[free[column]] = true
            }
        }

        match(high, minIoU: configuration.minIoU, only: { seenLastFrame[$0] })
        match(high.filter { trackForDetection[$0] == nil }, minIoU: configuration.minIoU)
        if configuration.centreFallbackFactor > 0 {
            var pairs: [(distance: Float, detection: Int, track: Int)] = []
            for t in tracks.indices where !trackUsed[t] {
                let radius = configuration.centreFallbackFactor * predicted[t].width
                for d in high where trackForDetection[d] == nil {
                    let distance = predicted[t].centreDistance(to: detections[d].box)
                    if distance < radius { pairs.append((distance, d, t)) }
                }
            }
            pairs.sort { ($0.distance, $0.track, $0.detection) < ($1.distance, $1.track, $1.detection) }
            for pair in pairs where !trackUsed[pair.track] && trackForDetection[pair.detection] == nil {
                trackUsed[pair.track] = true
                trackForDetection[pair.detection] = pair.track
            }
        }
        if configuration.loneFallbackFactor > 0 {
            matchLoneJumps(
                detections, highScore: highScore, predicted: predicted, trackForDetection: &trackForDetection,
                trackUsed: &trackUsed)
        }
        match(low, minIoU: configuration.lowMinIoU)
        previousTime = time

        var appeared: [TrackEvent] = []
        var assignments: [TrackAssignment] = []
        assignments.reserveCapacity(detections.count)
        for (d, detection) in detections.enumerated() {
            let t: Int
            if let matched = trackForDetection[d] {
                t = matched
                tracks[t].filter.update(detection.box)
                tracks[t].lastSeenTime = time
                tracks[t].lastSeenSeq = seq
                if tracks[t].frameCount < .max { tracks[t].frameCount += 1 }
            } else if detection.score >= highScore {
                tracks.append(
                    Track(id: 0, filter: BoxKalmanFilter(detection.box), time: time, lastSeenTime: time, lastSeenSeq: seq,
                          frameCount: 1))
                trackUsed.append(true)
                t = tracks.count - 1
            } else {
                assignments.append(TrackAssignment(trackingID: 0, frameCount: 0))
                continue
            }
            if tracks[t].id == 0, tracks[t].frameCount >= configuration.minHits {
                tracks[t].id = nextID
                nextID += 1
                appeared.append(TrackEvent(trackingID: tracks[t].id, seq: seq, frameCount: tracks[t].frameCount))
            }
            assignments.append(TrackAssignment(trackingID: tracks[t].id, frameCount: tracks[t].frameCount))
        }

        // Tentative tracks that missed this frame are forgotten; confirmed ones last `maxAge` seconds.
        var left: [TrackEvent] = []
        var kept: [Track] = []
        for (t, track) in tracks.enumerated() {
            if track.id == 0 {
                if trackUsed[t] { kept.append(track) }
            } else if time - track.lastSeenTime > configuration.maxAge {
                left.append(TrackEvent(trackingID: track.id, seq: track.lastSeenSeq, frameCount: track.frameCount))
            } else {
                kept.append(track)
            }
        }
        if kept.count > configuration.maxTracks {
            // Capture times may go backwards (a hostile or broken source), so age alone cannot bound the tracks: end
            // the ones seen longest ago in sequence order (those of this frame come last).
            let order = kept.indices.sorted { (kept[$0].lastSeenSeq, $0) < (kept[$1].lastSeenSeq, $1) }
            let ending = Set(order.prefix(kept.count - configuration.maxTracks))
            for index in ending.sorted() where kept[index].id != 0 {
                let track = kept[index]
                left.append(TrackEvent(trackingID: track.id, seq: track.lastSeenSeq, frameCount: track.frameCount))
            }
            kept = kept.indices.filter { !ending.contains($0) }.map { kept[$0] }
        }
        tracks = kept
        return TrackUpdate(assignments: assignments, appeared: appeared, left: left.sorted { $0.trackingID < $1.trackingID })
    }

    /// Step 3b: a confirmed track that nothing matched and a high-confidence detection that would start a track are
    /// one face that jumped (a head turning fast while frames are lost) when, within
    /// ``Configuration/loneFallbackFactor`` × the predicted width, that detection is the only detection of the frame
    /// near the track, no other track is near the detection (within the factor × each one's own predicted width), and
    /// width and height agree within 30 %. Where two faces or two tracks are that close, the pairing is ambiguous and
    /// nothing is paired.
    func matchLoneJumps(
        _ detections: [TrackDetection], highScore: Float, predicted: [FaceRect], trackForDetection: inout [Int?],
        trackUsed: inout [Bool]
    ) {
        let factor = configuration.loneFallbackFactor
        for t in tracks.indices where !trackUsed[t] && tracks[t].id != 0 {
            let radius = factor * predicted[t].width
            let near = detections.indices.filter { predicted[t].centreDistance(to: detections[$0].box) < radius }
            guard near.count == 1, let d = near.first, trackForDetection[d] == nil, detections[d].score >= highScore
            else { continue }
            let box = detections[d].box
            let crowded = tracks.indices.contains {
                $0 != t && predicted[$0].centreDistance(to: box) < factor * predicted[$0].width
            }
            func agree(_ a: Float, _ b: Float) -> Bool { a > 0 && b > 0 && max(a / b, b / a) <= 1.3 }
            guard !crowded, agree(box.width, predicted[t].width), agree(box.height, predicted[t].height) else { continue }
            trackUsed[t] = true
            trackForDetection[d] = t
        }
    }

    /// Ends every track (the stream ended, or ``reset()``): reports each confirmed one as left, by increasing ID.
    /// IDs keep increasing if the tracker is used again, so an ID is never reused.
    public mutating func finish() -> [TrackEvent] {
        let left = tracks.filter { $0.id != 0 }
            .map { TrackEvent(trackingID: $0.id, seq: $0.lastSeenSeq, frameCount: $0.frameCount) }
            .sorted { $0.trackingID < $1.trackingID }
        tracks.removeAll()
        return left
    }
}
