import FacewireVocabulary
import FacewireProtocol

/// Well-formed protocol messages with hostile field values, built from a ``FuzzReader``: what a structure-aware
/// target feeds a node's core. Every message here would pass the node's parser; what it *means* is the attack.
public enum HostileMessages {
    /// A control envelope a peer could send the collector: a hello of any role, a result (with hostile faces), a skip
    /// run, a stream end, a reset, or a message only the collector should send.
    public static func envelope(_ input: inout FuzzReader, wallNow: Int64) -> Envelope {
        switch input.below(8) {
        case 0, 1: return Envelope(.result(result(&input, wallNow: wallNow)))
        case 2:
            var hello = Hello()
            hello.dispatch = Wire.dispatchVersion
            hello.role = NodeRole(rawValue: input.below(5)) ?? .capture
            hello.nodeID = input.text()
            hello.stream = input.streamID()
            hello.epoch = epoch(&input)
            hello.frameEndpoint = input.text()
            hello.nextSeq = input.uint64()
            if input.bool() { hello.curvePublicKey = input.text() }
            return Envelope(.hello(hello))
        case 3:
            var skipped = Skipped()
            skipped.stream = input.streamID()
            skipped.epoch = epoch(&input)
            skipped.firstSeq = input.uint64()
            skipped.count = input.uint64()
            skipped.reason = input.text()
            skipped.captureTimeUs = input.int64(near: wallNow)
            return Envelope(.skipped(skipped))
        case 4:
            var end = StreamEnd()
            end.stream = input.streamID()
            end.epoch = epoch(&input)
            end.nextSeq = input.uint64()
            return Envelope(.end(end))
        case 5:
            var reset = ResetRequest()
            reset.stream = input.bool() ? "" : input.streamID()
            reset.requestID = input.text()
            return Envelope(.reset(reset))
        case 6:
            var welcome = Welcome()
            var capture = CaptureInfo()
            capture.stream = input.streamID()
            capture.frameEndpoint = input.text()
            welcome.captures = [capture]
            return Envelope(.welcome(welcome))
        default:
            // A plausible result of the next frame: lets sequences advance so ordering is exercised too.
            var result = result(&input, wallNow: wallNow)
            result.seq = UInt64(input.byte() % 16)
            result.captureTimeUs = wallNow
            return Envelope(.result(result))
        }
    }

    /// Epochs: mostly a few small values (so messages share a stream), sometimes the extremes.
    public static func epoch(_ input: inout FuzzReader) -> UInt64 {
        input.byte() % 4 == 0 ? input.uint64() : UInt64(input.byte() % 3)
    }

    /// A worker's result with hostile sequence, times, sizes, status, reason and faces.
    public static func result(_ input: inout FuzzReader, wallNow: Int64) -> FrameResult {
        var result = FrameResult()
        result.stream = input.streamID()
        result.epoch = epoch(&input)
        result.seq = input.byte() % 2 == 0 ? UInt64(input.byte() % 32) : input.uint64()
        result.captureTimeUs = input.int64(near: wallNow)
        result.status = FrameStatus(rawValue: input.below(4)) ?? .processed
        if input.bool() { result.reason = input.text() }
        result.width = input.uint32()
        result.height = input.uint32()
        result.worker = input.text()
        var timings = FrameTimings()
        timings.queueMs = input.float()
        timings.decodeMs = input.float()
        timings.detectMs = input.float()
        timings.totalMs = input.float()
        result.timings = timings
        for _ in 0..<input.below(5) { result.faces.append(face(&input)) }
        if input.bool() { result.mediaTimeUs = input.int64() }
        if input.bool() { result.trackScore = input.float() }
        return result
    }

    /// A face with every float possibly NaN, infinite, negative or huge.
    public static func face(_ input: inout FuzzReader) -> WireFace {
        var face = WireFace()
        var bounds = WireRect()
        bounds.x = input.float()
        bounds.y = input.float()
        bounds.width = input.float()
        bounds.height = input.float()
        face.bounds = bounds
        face.confidence = input.float()
        if input.bool() { face.faceAngle = input.float() }
        if input.bool() { face.yaw = input.float() }
        if input.bool() {
            var eye = WirePoint()
            eye.x = input.float()
            eye.y = input.float()
            face.leftEye = eye
        }
        if input.bool() { face.pitch = input.float() }
        if input.bool() { face.roll = input.float() }
        if input.bool() { face.quality = input.float() }
        if input.bool() { face.leftEyeOpenness = input.float() }
        face.attributeSource = WireAttributeSource(rawValue: input.below(4)) ?? .none
        if input.bool() {
            // A landmark list of a scheme (known or not) and a length that may not match it.
            face.landmarkScheme = WireLandmarkScheme(rawValue: input.below(4)) ?? .none
            let count = [0, 10, 936, 937, 2000][input.below(5)]
            face.landmarks = (0..<count).map { _ in input.float() }
        }
        face.trackingID = input.uint64()
        face.trackingFrameCount = input.uint32()
        return face
    }

    /// A frame header a capture node could send a worker, every numeric field possibly at its extremes.
    public static func frameHeader(_ input: inout FuzzReader, wallNow: Int64) -> FrameHeader {
        var header = FrameHeader()
        header.version = Wire.version
        header.stream = input.bool() ? "cam0" : input.streamID()
        header.epoch = input.uint64()
        header.seq = input.uint64()
        header.captureTimeUs = input.int64(near: wallNow)
        header.width = input.uint32()
        header.height = input.uint32()
        header.orientation = input.byte() % 3 == 0 ? input.uint32() : UInt32(input.byte() % 9)
        header.sentTimeUs = input.int64(near: wallNow)
        header.deadlineUs = input.int64(near: wallNow)
        if input.bool() {
            var settings = DetectionSettings()
            settings.accuracy = DetectionSettings.Accuracy(rawValue: input.below(5)) ?? .unset
            settings.minFace = input.uint32()
            settings.maxFaces = input.uint32()
            settings.faceMode = DetectionSettings.FaceMode(rawValue: input.below(5)) ?? .unset
            if input.bool() { settings.classifiers = input.uint32() }
            settings.landmarks = DetectionSettings.Landmarks(rawValue: input.below(6)) ?? .unset
            header.settings = settings
        }
        if input.bool() { header.mediaTimeUs = input.int64() }
        return header
    }
}
