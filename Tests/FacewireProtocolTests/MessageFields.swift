import FacewireProtocol

// Decoded Swift messages written out in the form of `vectors.json` "expect" values: proto field names;
// every scalar field (defaults included); sub-messages and `optional` fields only when present; enums by
// their proto names (a value the schema does not name, by its number); bools as JSON booleans; a oneof
// member under its field name. Written by hand, field by field, so that a
// field the Swift decoder gets wrong shows up by name.

private func number<T: BinaryInteger>(_ value: T) -> JSONValue { .number(Double(value)) }
private func number(_ value: Float) -> JSONValue { .number(Double(value)) }

enum MessageFields {
    static func of(_ ready: Ready) -> JSONValue {
        .object(["version": number(ready.version), "worker": .string(ready.worker)])
    }

    static func of(_ frame: FrameMessage) -> JSONValue {
        .object(["header": of(frame.header), "image_size": number(frame.jpeg.count)])
    }

    static func of(_ header: FrameHeader) -> JSONValue {
        var out: [String: JSONValue] = [
            "version": number(header.version),
            "stream": .string(header.stream),
            "epoch": number(header.epoch),
            "seq": number(header.seq),
            "capture_time_us": number(header.captureTimeUs),
            "width": number(header.width),
            "height": number(header.height),
            "orientation": number(header.orientation),
            "sent_time_us": number(header.sentTimeUs),
            "deadline_us": number(header.deadlineUs),
        ]
        if header.hasSettings { out["settings"] = of(header.settings) }
        if header.hasMediaTimeUs { out["media_time_us"] = number(header.mediaTimeUs) }
        return .object(out)
    }

    static func name(_ accuracy: DetectionSettings.Accuracy) -> JSONValue {
        switch accuracy {
        case .unset: .string("ACCURACY_UNSET")
        case .low: .string("ACCURACY_LOW")
        case .high: .string("ACCURACY_HIGH")
        case .UNRECOGNIZED(let value): number(value)
        }
    }

    static func name(_ mode: DetectionSettings.FaceMode) -> JSONValue {
        switch mode {
        case .unset: .string("FACE_MODE_UNSET")
        case .small: .string("FACE_MODE_SMALL")
        case .large: .string("FACE_MODE_LARGE")
        case .UNRECOGNIZED(let value): number(value)
        }
    }

    static func of(_ settings: DetectionSettings) -> JSONValue {
        var out: [String: JSONValue] = [
            "accuracy": name(settings.accuracy),
            "min_face": number(settings.minFace),
            "max_faces": number(settings.maxFaces),
            "face_mode": name(settings.faceMode),
        ]
        if settings.hasClassifiers { out["classifiers"] = number(settings.classifiers) }
        return .object(out)
    }

    static func of(_ point: WirePoint) -> JSONValue {
        .object(["x": number(point.x), "y": number(point.y)])
    }

    static func of(_ rect: WireRect) -> JSONValue {
        .object(["x": number(rect.x), "y": number(rect.y), "width": number(rect.width), "height": number(rect.height)])
    }

    static func of(_ face: WireFace) -> JSONValue {
        var out: [String: JSONValue] = [
            "confidence": number(face.confidence),
            "tracking_id": number(face.trackingID),
            "tracking_frame_count": number(face.trackingFrameCount),
            "has_smile": .bool(face.hasSmile_p),
            "left_eye_closed": .bool(face.leftEyeClosed),
            "right_eye_closed": .bool(face.rightEyeClosed),
        ]
        if face.hasBounds { out["bounds"] = of(face.bounds) }
        if face.hasLeftEye { out["left_eye"] = of(face.leftEye) }
        if face.hasRightEye { out["right_eye"] = of(face.rightEye) }
        if face.hasMouth { out["mouth"] = of(face.mouth) }
        if face.hasFaceAngle { out["face_angle"] = number(face.faceAngle) }
        if face.hasNose { out["nose"] = of(face.nose) }
        if face.hasYaw { out["yaw"] = number(face.yaw) }
        if face.hasSmileScore { out["smile_score"] = number(face.smileScore) }
        if face.hasLeftEyeClosedScore { out["left_eye_closed_score"] = number(face.leftEyeClosedScore) }
        if face.hasRightEyeClosedScore { out["right_eye_closed_score"] = number(face.rightEyeClosedScore) }
        out["skin"] = .array(face.skin.map(of))
        if !face.meshSkin.isEmpty { out["mesh_skin"] = .array(face.meshSkin.map(of)) }
        if face.hasHeartRate { out["heart_rate"] = of(face.heartRate) }
        if face.withheld != 0 { out["withheld"] = number(face.withheld) }
        if !face.expressions.isEmpty {
            out["expressions"] = .array(face.expressions.map {
                .object(["expression": .string(name($0.expression)), "score": number($0.score), "present": .bool($0.present)])
            })
        }
        return .object(out)
    }

    static func name(_ expression: Facewire_V1_Expression) -> String {
        switch expression {
        case .unspecified: "EXPRESSION_UNSPECIFIED"
        case .browRaise: "EXPRESSION_BROW_RAISE"
        case .browFurrow: "EXPRESSION_BROW_FURROW"
        case .mouthOpen: "EXPRESSION_MOUTH_OPEN"
        case .eyeWiden: "EXPRESSION_EYE_WIDEN"
        case .lipPucker: "EXPRESSION_LIP_PUCKER"
        case .lipCornerDepressor: "EXPRESSION_LIP_CORNER_DEPRESSOR"
        case .UNRECOGNIZED(let value): "\(value)"
        }
    }

    static func name(_ region: Facewire_V1_SkinSample.Region) -> JSONValue {
        switch region {
        case .unspecified: .string("REGION_UNSPECIFIED")
        case .forehead: .string("REGION_FOREHEAD")
        case .leftCheek: .string("REGION_LEFT_CHEEK")
        case .rightCheek: .string("REGION_RIGHT_CHEEK")
        case .UNRECOGNIZED(let value): number(value)
        }
    }

    static func of(_ sample: Facewire_V1_SkinSample) -> JSONValue {
        .object([
            "region": name(sample.region), "r": number(sample.r), "g": number(sample.g), "b": number(sample.b),
            "pixels": number(sample.pixels),
        ])
    }

    static func of(_ rate: Facewire_V1_HeartRate) -> JSONValue {
        .object(["bpm": number(rate.bpm), "snr": number(rate.snr), "window_seconds": number(rate.windowSeconds)])
    }

    static func of(_ timings: FrameTimings) -> JSONValue {
        .object([
            "queue_ms": number(timings.queueMs),
            "decode_ms": number(timings.decodeMs),
            "detect_ms": number(timings.detectMs),
            "total_ms": number(timings.totalMs),
            "classify_ms": number(timings.classifyMs),
        ])
    }

    static func name(_ status: FrameStatus) -> String {
        switch status {
        case .processed: "FRAME_STATUS_PROCESSED"
        case .dropped: "FRAME_STATUS_DROPPED"
        case .error: "FRAME_STATUS_ERROR"
        case .UNRECOGNIZED(let value): "UNRECOGNIZED(\(value))"
        }
    }

    static func of(_ result: FrameResult) -> JSONValue {
        var out: [String: JSONValue] = [
            "stream": .string(result.stream),
            "epoch": number(result.epoch),
            "seq": number(result.seq),
            "capture_time_us": number(result.captureTimeUs),
            "status": .string(name(result.status)),
            "reason": .string(result.reason),
            "width": number(result.width),
            "height": number(result.height),
            "worker": .string(result.worker),
            "faces": .array(result.faces.map(of)),
        ]
        if result.hasTimings { out["timings"] = of(result.timings) }
        if result.runLength != 0 { out["run_length"] = number(result.runLength) }
        if result.hasMediaTimeUs { out["media_time_us"] = number(result.mediaTimeUs) }
        return .object(out)
    }

    static func name(_ role: NodeRole) -> String {
        switch role {
        case .unspecified: "ROLE_UNSPECIFIED"
        case .capture: "ROLE_CAPTURE"
        case .worker: "ROLE_WORKER"
        case .tail: "ROLE_TAIL"
        case .view: "ROLE_VIEW"
        case .UNRECOGNIZED(let value): "UNRECOGNIZED(\(value))"
        }
    }

    static func of(_ hello: Hello) -> JSONValue {
        .object([
            "role": .string(name(hello.role)),
            "node_id": .string(hello.nodeID),
            "stream": .string(hello.stream),
            "epoch": number(hello.epoch),
            "frame_endpoint": .string(hello.frameEndpoint),
            "next_seq": number(hello.nextSeq),
            "curve_public_key": .string(hello.curvePublicKey),
            "preview_endpoint": .string(hello.previewEndpoint),
            "dispatch": number(hello.dispatch),
        ])
    }

    static func of(_ info: CaptureInfo) -> JSONValue {
        .object([
            "stream": .string(info.stream), "epoch": number(info.epoch), "frame_endpoint": .string(info.frameEndpoint),
            "curve_public_key": .string(info.curvePublicKey),
            "preview_endpoint": .string(info.previewEndpoint),
        ])
    }

    static func of(_ welcome: Welcome) -> JSONValue {
        var out: [String: JSONValue] = ["captures": .array(welcome.captures.map(of)), "publish_endpoint": .string(welcome.publishEndpoint)]
        if welcome.role != .single || welcome.leaderEpoch != 0 || !welcome.activeEndpoint.isEmpty {
            out["role"] = .string(name(welcome.role))
            out["leader_epoch"] = number(welcome.leaderEpoch)
            out["active_endpoint"] = .string(welcome.activeEndpoint)
        }
        if welcome.shardCount != 0 {
            out["shard"] = number(welcome.shard)
            out["shard_count"] = number(welcome.shardCount)
        }
        return .object(out)
    }

    static func name(_ role: CollectorRole) -> String {
        switch role {
        case .single: "COLLECTOR_ROLE_SINGLE"
        case .active: "COLLECTOR_ROLE_ACTIVE"
        case .standby: "COLLECTOR_ROLE_STANDBY"
        case .UNRECOGNIZED(let value): "UNRECOGNIZED(\(value))"
        }
    }

    static func of(_ skipped: Skipped) -> JSONValue {
        .object([
            "stream": .string(skipped.stream),
            "epoch": number(skipped.epoch),
            "first_seq": number(skipped.firstSeq),
            "count": number(skipped.count),
            "reason": .string(skipped.reason),
            "capture_time_us": number(skipped.captureTimeUs),
        ])
    }

    static func of(_ end: StreamEnd) -> JSONValue {
        .object(["stream": .string(end.stream), "epoch": number(end.epoch), "next_seq": number(end.nextSeq)])
    }

    static func of(_ envelope: Envelope) -> JSONValue {
        var out: [String: JSONValue] = ["version": number(envelope.version)]
        switch envelope.body {
        case .hello(let hello): out["hello"] = of(hello)
        case .welcome(let welcome): out["welcome"] = of(welcome)
        case .result(let result): out["result"] = of(result)
        case .skipped(let skipped): out["skipped"] = of(skipped)
        case .end(let end): out["end"] = of(end)
        case .reset(let reset): out["reset"] = .object(["stream": .string(reset.stream), "request_id": .string(reset.requestID)])
        case .resetReply(let reply):
            out["reset_reply"] = .object(["request_id": .string(reply.requestID), "streams": .array(reply.streams.map { .string($0) })])
        case .request(let request):
            out["request"] = .object([
                "stream": .string(request.stream), "epoch": number(request.epoch), "wanted": number(request.wanted),
                "assignments_seen": number(request.assignmentsSeen), "returned": .array(request.returned.map { .string($0) }),
                "unreachable": .array(request.unreachable.map { .string($0) }), "weight": .number(Double(request.weight)),
            ])
        case .assignment(let assignment):
            out["assignment"] = .object(["worker": .string(assignment.worker), "number": number(assignment.number)])
        case .idle(let idle):
            out["idle"] = .object(["worker": .string(idle.worker), "frames_received": number(idle.framesReceived)])
        case nil: break
        }
        return .object(out)
    }

    static func name(_ kind: FaceEvent.Kind) -> String {
        switch kind {
        case .appeared: "KIND_APPEARED"
        case .left: "KIND_LEFT"
        case .UNRECOGNIZED(let value): "UNRECOGNIZED(\(value))"
        }
    }

    static func of(_ event: FaceEvent) -> JSONValue {
        var out: [String: JSONValue] = [
            "kind": .string(name(event.kind)),
            "tracking_id": number(event.trackingID),
            "seq": number(event.seq),
            "tracking_frame_count": number(event.trackingFrameCount),
        ]
        if event.hasHeartRate { out["heart_rate"] = of(event.heartRate) }
        return .object(out)
    }

    static func of(_ summary: StreamSummary) -> JSONValue {
        .object([
            "frames": number(summary.frames),
            "processed": number(summary.processed),
            "dropped": number(summary.dropped),
            "errors": number(summary.errors),
            "late": number(summary.late),
            "duplicates": number(summary.duplicates),
            "next_seq": number(summary.nextSeq),
        ])
    }

    static func of(_ statistics: StreamStatisticsMessage) -> JSONValue {
        var out: [String: JSONValue] = [
            "window_seconds": number(statistics.windowSeconds),
            "frames": number(statistics.frames),
            "processed": number(statistics.processed),
            "dropped": .array(statistics.dropped.map { .object(["reason": .string($0.reason), "count": number($0.count)]) }),
            "late": number(statistics.late),
            "duplicates": number(statistics.duplicates),
            "fps": number(statistics.fps),
            "next_seq": number(statistics.nextSeq),
        ]
        if statistics.hasLatencyP50Ms { out["latency_p50_ms"] = number(statistics.latencyP50Ms) }
        if statistics.hasLatencyP99Ms { out["latency_p99_ms"] = number(statistics.latencyP99Ms) }
        return .object(out)
    }

    static func of(_ message: StreamMessage) -> JSONValue {
        var out: [String: JSONValue] = [
            "version": number(message.version), "stream": .string(message.stream), "epoch": number(message.epoch),
        ]
        switch message.body {
        case .frame(let frame): out["frame"] = of(frame)
        case .event(let event): out["event"] = of(event)
        case .end(let summary): out["end"] = of(summary)
        case .reset(let reset): out["reset"] = .object(["seq": number(reset.seq), "ended_tracks": number(reset.endedTracks)])
        case .statistics(let statistics): out["statistics"] = of(statistics)
        case nil: break
        }
        if message.publication != 0 { out["publication"] = number(message.publication) }
        if message.leaderEpoch != 0 { out["leader_epoch"] = number(message.leaderEpoch) }
        return .object(out)
    }
}
