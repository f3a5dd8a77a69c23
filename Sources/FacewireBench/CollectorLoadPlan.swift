import FacewireProtocol

/// **A test tool**: what `facewire bench collector-load` sends a collector to measure how many results per second
/// it orders, tracks and publishes. No sockets and no clock here: the plan says which results each fake worker
/// thread sends and in what order, and builds every message, so a test can feed them to ``CollectorCore`` and
/// check that each is taken and published in order.
///
/// Each stream is a fake capture node (its `Hello`, then its `StreamEnd`) playing `framesPerStream` frames at a
/// nominal 30 frames/s of capture time; every frame has `faces` faces that drift slowly, so tracking has work.
/// Thread *t* of *T* sends sequences *t*, *t* + *T*, *t* + 2*T*, … of every stream, as *T* workers taking frames in
/// turn would.
public struct CollectorLoadPlan: Sendable {
    /// Bounds on what a plan may ask for (the generator holds every encoded result in memory before it sends).
    public static let maxStreams = 10_000
    public static let maxThreads = 64
    public static let maxFaces = 8
    public static let maxResults: UInt64 = 4_000_000
    /// Capture time between two frames of a stream: 30 frames/s.
    public static let frameIntervalUs: Int64 = 33_333

    public let streams: Int
    public let threads: Int
    public let framesPerStream: UInt64
    public let faces: Int
    /// The epoch of every stream (the generator uses the wall clock, as a capture node does).
    public let epoch: UInt64
    /// Capture time of sequence 0, Unix microseconds.
    public let startUs: Int64

    public struct InvalidPlan: Error, CustomStringConvertible {
        public let description: String
    }

    /// - Throws: ``InvalidPlan`` when a count is outside its bounds or the plan holds more than ``maxResults``.
    /// Each stream's id, in order.
    public let streamIDs: [String]

    /// - Parameter shard: play only streams this shard owns (SPEC.md 19): the first `streams` of `load-00000`,
    ///   `load-00001`, … that it owns, so that the generators of N shards play distinct streams, `streams` each.
    public init(
        streams: Int, threads: Int, framesPerStream: UInt64, faces: Int, epoch: UInt64, startUs: Int64, shard: ShardIdentity? = nil
    ) throws {
        guard (1...Self.maxStreams).contains(streams) else { throw InvalidPlan(description: "streams must be 1...\(Self.maxStreams)") }
        guard (1...Self.maxThreads).contains(threads) else { throw InvalidPlan(description: "threads must be 1...\(Self.maxThreads)") }
        guard (0...Self.maxFaces).contains(faces) else { throw InvalidPlan(description: "faces must be 0...\(Self.maxFaces)") }
        let (total, overflow) = framesPerStream.multipliedReportingOverflow(by: UInt64(streams))
        guard framesPerStream > 0, !overflow, total <= Self.maxResults else {
            throw InvalidPlan(description: "streams × frames must be 1...\(Self.maxResults)")
        }
        guard startUs >= 0 else { throw InvalidPlan(description: "the start time must not be negative") }
        self.streams = streams
        var ids: [String] = []
        ids.reserveCapacity(streams)
        var index = 0
        while ids.count < streams {
            let id = Self.defaultStreamID(index)
            if shard?.owns(id) ?? true { ids.append(id) }
            index += 1
        }
        streamIDs = ids
        self.threads = threads
        self.framesPerStream = framesPerStream
        self.faces = faces
        self.epoch = epoch
        self.startUs = startUs
    }

    /// Every result of every stream.
    public var totalResults: UInt64 { framesPerStream * UInt64(streams) }

    /// The id of stream `index`.
    public func streamID(_ index: Int) -> String { streamIDs[index] }

    /// The id of stream `index` of an unsharded plan: `load-00000`, `load-00001`, …
    static func defaultStreamID(_ index: Int) -> String {
        let digits = String(index)
        return "load-" + String(repeating: "0", count: max(0, 5 - digits.count)) + digits
    }

    /// The sequences thread `thread` sends, in order.
    public func sequences(forThread thread: Int) -> StrideTo<UInt64> {
        stride(from: UInt64(thread), to: framesPerStream, by: threads)
    }

    /// The fake capture node's hello for stream `index` (where workers would connect: nowhere, none does).
    public func hello(stream index: Int) -> Envelope {
        var hello = Hello()
        hello.dispatch = Wire.dispatchVersion
        hello.role = .capture
        hello.nodeID = "collector-load"
        hello.stream = streamID(index)
        hello.epoch = epoch
        hello.frameEndpoint = "tcp://127.0.0.1:9"
        hello.nextSeq = 0
        return Envelope(.hello(hello))
    }

    /// The end of stream `index`: every planned sequence was numbered.
    public func end(stream index: Int) -> Envelope {
        var end = StreamEnd()
        end.stream = streamID(index)
        end.epoch = epoch
        end.nextSeq = framesPerStream
        return Envelope(.end(end))
    }

    /// The processed result of sequence `seq` of stream `index`, as worker thread `thread` would send it.
    public func result(stream index: Int, seq: UInt64, thread: Int) -> FrameResult {
        var result = FrameResult()
        result.stream = streamID(index)
        result.epoch = epoch
        result.seq = seq
        result.captureTimeUs = startUs + Int64(seq) * Self.frameIntervalUs
        result.status = .processed
        result.width = 640
        result.height = 480
        result.worker = "load/t\(thread)"
        var timings = FrameTimings()
        timings.queueMs = 0.4
        timings.decodeMs = 1.2
        timings.detectMs = 50
        result.timings = timings
        result.faces = (0..<faces).map { Self.face($0, seq: seq) }
        return result
    }

    /// Face `number` of frame `seq`: a 120 px box in its own column, drifting right by a pixel per frame and back.
    static func face(_ number: Int, seq: UInt64) -> WireFace {
        let drift = Float(seq % 200 < 100 ? seq % 200 : 200 - seq % 200)
        let x = 20 + Float(number % 4) * 150 + drift * 0.3, y = 60 + Float(number / 4) * 200
        func point(_ fx: Float, _ fy: Float) -> WirePoint {
            var point = WirePoint()
            point.x = x + fx * 120
            point.y = y + fy * 120
            return point
        }
        var face = WireFace()
        var bounds = WireRect()
        bounds.x = x
        bounds.y = y
        bounds.width = 120
        bounds.height = 120
        face.bounds = bounds
        face.leftEye = point(0.3, 0.4)
        face.rightEye = point(0.7, 0.4)
        face.mouth = point(0.5, 0.75)
        face.nose = point(0.5, 0.58)
        face.faceAngle = 0
        face.confidence = 0.95
        return face
    }

    /// Every result thread `thread` sends, encoded as envelopes, in sending order: its sequences in turn, each for
    /// every stream.
    public func encodedResults(thread: Int) throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        out.reserveCapacity(Int(framesPerStream / UInt64(threads) + 1) * streams)
        for seq in sequences(forThread: thread) {
            for index in 0..<streams {
                out.append(try Envelope(.result(result(stream: index, seq: seq, thread: thread))).serializedBytes())
            }
        }
        return out
    }
}
