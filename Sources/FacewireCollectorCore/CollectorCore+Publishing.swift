import FacewireProtocol
import FacewireVocabulary
import FacewireTracking
import FacewirePulse

extension CollectorCore {
    /// A frame's time on its source's own clock, µs (SPEC.md 6.1): its media time when it has one (files, folders:
    /// any playback pace gives the same), else its capture time; nil when it has neither.
    static func sourceTimeUs(_ result: FrameResult) -> Int64? {
        if result.hasMediaTimeUs { return result.mediaTimeUs }
        return result.captureTimeUs != 0 ? result.captureTimeUs : nil
    }

    /// The time the tracker sees for a frame: its source time in seconds (``sourceTimeUs(_:)``), or (when it has
    /// none) its sequence number at a nominal 30 frames per second.
    static func trackingTime(_ result: FrameResult) -> Double {
        sourceTimeUs(result).map { Double($0) / 1e6 } ?? Double(result.seq) / 30
    }

    /// The event of `track`; a `left` one carries the track's last reported `heartRate`, if it had one.
    static func faceEvent(_ kind: FaceEvent.Kind, _ track: TrackEvent, heartRate: Facewire_V1_HeartRate? = nil) -> FaceEvent {
        var event = FaceEvent()
        event.kind = kind
        event.trackingID = track.trackingID
        event.seq = track.seq
        event.trackingFrameCount = track.frameCount
        if let heartRate { event.heartRate = heartRate }
        return event
    }

    /// Turns a buffer's emissions into messages of the ordered stream: tracking, `total_ms`, statistics, metrics,
    /// events and the summary. Cost is O(1) per emission for dropped runs longer than `--max-pending`.
    mutating func publish(_ emissions: [ReorderBuffer<FrameResult>.Emission], key: Key, now: Instant, _ out: inout CollectorOutput) {
        guard !emissions.isEmpty, var state = streams[key] else { return }
        let leaderEpoch = self.leaderEpoch
        if leaderEpoch != nil { touched.insert(key) }
        func message(_ body: StreamMessage.OneOf_Body) {
            out.act(.publish(state.message(key, body, leaderEpoch: leaderEpoch ?? 0)))
        }
        let label = labels.stream(key.stream)
        func countFrame(_ status: String, _ reason: String, _ count: UInt64) {
            out.act(.frames(.init(stream: label, status: status, reason: labels.reason(reason), count: count)))
        }
        var finished = false
        for emission in emissions {
            switch emission {
            case .frame(_, var result):
                // Only frames a worker analysed tell the tracker anything; the rest just lengthen its next step.
                var update = TrackUpdate(assignments: [], appeared: [], left: [])
                if result.status == .processed {
                    if state.bridgesHandover {
                        // The frames lost in a failover were the system's outage, not the faces': tracks neither age
                        // nor leave over it (half the track lifetime at most passes for them).
                        state.bridgesHandover = false
                        state.tracker.bridge(to: Self.trackingTime(result), maxGap: tracking.maxAge / 2)
                    }
                    update = state.tracker.update(
                        seq: result.seq, time: Self.trackingTime(result),
                        detections: result.faces.map {
                            TrackDetection(
                                box: FaceRect(x: $0.bounds.x, y: $0.bounds.y, width: $0.bounds.width, height: $0.bounds.height),
                                score: $0.confidence)
                        },
                        highScore: result.hasTrackScore ? result.trackScore : nil)
                }
                for (index, assignment) in update.assignments.enumerated() where index < result.faces.count {
                    result.faces[index].trackingID = assignment.trackingID
                    result.faces[index].trackingFrameCount = assignment.frameCount
                }
                if result.status == .processed {
                    estimatePulse(&result, key: key, state: &state, out: &out)
                }
                var latency: Double?
                if result.captureTimeUs != 0 {
                    // Saturating: capture times were checked at intake, but arithmetic on wire values never traps.
                    let (age, overflow) = now.wallUs.subtractingReportingOverflow(result.captureTimeUs)
                    result.timings.totalMs = overflow ? .infinity : Float(age) / 1000
                    latency = Double(result.timings.totalMs)
                }
                let status: String
                switch result.status {
                case .processed:
                    status = "processed"
                    out.count("frames_processed")
                    // Int64(Double) traps on inf, NaN and out of range: only plausible latencies (under a day).
                    if let latency, latency.isFinite, latency >= 0, latency < 86_400_000 {
                        out.act(.latency(Int64(latency * 1e6)))
                    }
                case .dropped:
                    status = "dropped"
                    out.count("frames_dropped")
                    state.workerDropped &+= 1
                default:
                    // Errors, and statuses this collector does not know (counted as errors).
                    status = "error"
                    out.count("frames_failed")
                    state.errors &+= 1
                }
                state.statistics.record(processed: result.status == .processed, reason: result.reason, latencyMilliseconds: latency)
                countFrame(status, result.reason, 1)
                message(.frame(result))
                state.leftEvents(update.left).forEach { message(.event($0)) }
                update.appeared.forEach { message(.event(Self.faceEvent(.appeared, $0))) }
            case .dropped(let seqs, let reason):
                // O(1) whatever the run's length: a short run is published frame by frame, a run longer than
                // --max-pending as one message with `runLength` (SPEC.md 9.1).
                let length = seqs.upperBound - seqs.lowerBound
                var result = FrameResult()
                result.stream = key.stream
                result.epoch = key.epoch
                result.status = .dropped
                result.reason = reason.rawValue
                out.count("frames_dropped", length)
                state.statistics.record(processed: false, reason: reason.rawValue, latencyMilliseconds: nil, count: length)
                countFrame("dropped", reason.rawValue, length)
                if length <= UInt64(limits.maxPending) {
                    for seq in seqs {
                        result.seq = seq
                        message(.frame(result))
                    }
                } else {
                    result.seq = seqs.lowerBound
                    result.runLength = length
                    message(.frame(result))
                }
            case .end(let streamCounters, let nextSeq):
                state.leftEvents(state.tracker.finish()).forEach { message(.event($0)) }
                var summary = StreamSummary()
                summary.frames = streamCounters.emitted
                // The buffer counts every result it emitted as processed; split off the workers' own verdicts.
                summary.processed = streamCounters.processed &- state.workerDropped &- state.errors
                let (dropped, overflow) = streamCounters.dropped.addingReportingOverflow(state.workerDropped)
                summary.dropped = overflow ? .max : dropped
                summary.errors = state.errors
                summary.late = streamCounters.late
                summary.duplicates = streamCounters.duplicates
                summary.nextSeq = nextSeq
                message(.end(summary))
                out.log(.info, "stream finished", [
                    "stream": key.stream, "epoch": "\(key.epoch)", "frames": "\(summary.frames)", "processed": "\(summary.processed)",
                    "dropped": "\(summary.dropped)", "errors": "\(summary.errors)", "late": "\(summary.late)",
                ])
                finished = true
            }
        }
        streams[key] = finished ? nil : state
    }

    /// Feeds each tracked face's skin samples, at the frame's source time, to its track's heart-rate estimator and sets its `heart_rate` when the
    /// estimator reports one (the track remembers it for its `left` event). At most ``CollectorLimits/maxPulseTracks``
    /// tracks have an estimator over all streams.
    mutating func estimatePulse(_ result: inout FrameResult, key: Key, state: inout StreamState, out: inout CollectorOutput) {
        guard let time = Self.sourceTimeUs(result) else { return }
        for index in result.faces.indices {
            let face = result.faces[index]
            guard face.trackingID != 0, !face.skin.isEmpty else { continue }
            // Validated (ResultValidation.isPlausible(skin:)): one sample per region kind, colours in 0...255.
            let regions = face.skin.compactMap(PulseEstimator.RegionColour.init(wire:))
            guard !regions.isEmpty else { continue }
            // The mesh's forehead, when the worker ran the mesh (validated as `skin` is); read only with
            // --pulse-mesh-forehead.
            let meshForehead = face.meshSkin.lazy.compactMap(PulseEstimator.RegionColour.init(wire:)).first { $0.region == .forehead }
            if state.pulse[face.trackingID] == nil {
                // `state` is this stream's (its stored copy is stale while publishing).
                let live = streams.reduce(state.pulse.count) { $0 + ($1.key == key ? 0 : $1.value.pulse.count) }
                guard live < limits.maxPulseTracks else {
                    out.count("pulse_refused_cap")
                    continue
                }
                state.pulse[face.trackingID] = PulseTrack(meshForehead: limits.pulseMeshForehead)
            }
            if let estimate = state.pulse[face.trackingID]!.estimator.add(
                timeUs: time, regions: regions, geometry: Self.geometry(face), meshForehead: meshForehead) {
                var rate = Facewire_V1_HeartRate()
                rate.bpm = Float(estimate.bpm)
                rate.snr = Float(estimate.snr)
                rate.windowSeconds = Float(estimate.window)
                result.faces[index].heartRate = rate
                state.pulse[face.trackingID]!.reported = rate
            }
        }
    }
}

extension CollectorCore {
    /// Where `face` is in its frame, for the heart-rate estimator's motion reference (``PulseMotion``): nil without
    /// both eyes. Validated positions; the features' own checks bound the rest.
    static func geometry(_ face: Facewire_V1_Face) -> PulseMotion.Geometry? {
        guard face.hasLeftEye, face.hasRightEye else { return nil }
        let b = face.bounds
        return PulseMotion.Geometry(
            leftEye: SIMD2(Double(face.leftEye.x), Double(face.leftEye.y)), rightEye: SIMD2(Double(face.rightEye.x), Double(face.rightEye.y)),
            mouth: face.hasMouth ? SIMD2(Double(face.mouth.x), Double(face.mouth.y)) : nil,
            bounds: SIMD4(Double(b.x), Double(b.y), Double(b.width), Double(b.height)))
    }
}

extension StreamStatistics.Report {
    /// The report as the results stream carries it, with the stream's next sequence.
    public func message(nextSeq: UInt64) -> StreamStatisticsMessage {
        var message = StreamStatisticsMessage()
        message.windowSeconds = Float(seconds)
        message.frames = UInt64(clamping: frames)
        message.processed = UInt64(clamping: processed)
        message.dropped = dropped.sorted { $0.key < $1.key }.map {
            var count = DropCount()
            count.reason = $0.key
            count.count = UInt64(clamping: $0.value)
            return count
        }
        message.late = late
        message.duplicates = duplicates
        message.fps = Float(fps)
        if let latencyP50 { message.latencyP50Ms = Float(latencyP50) }
        if let latencyP99 { message.latencyP99Ms = Float(latencyP99) }
        message.nextSeq = nextSeq
        return message
    }
}
