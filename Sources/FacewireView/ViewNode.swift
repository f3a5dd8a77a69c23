import CoreMetrics
import FacewireProtocol
import FacewireRuntime
import FacewireTransport
import Foundation
import Logging
import ZeroMQ
import FacewireViewCore

/// The live view's shell: asks the collector where its results stream and the capture nodes' previews are, reads
/// both, hands every message to ``ViewCore`` and carries out what it answers: pushes joined frames, events and
/// statuses to the pages (``hub``), crops each track's best picture, and writes it on leaving with `--save-faces`.
///
/// ``run(stop:)`` blocks the calling thread (one the caller owns); the HTTP side reads the core through ``read(_:)``
/// and renders snapshots on ``imagingQueue``, never on Swift's cooperative pool.
public final class ViewNode: @unchecked Sendable {
    public struct Configuration: Sendable {
        /// The collector's control endpoint.
        public var collector: String
        /// CURVE: this view's keys and the collector's public key; nil for plain TCP. A capture node's preview is
        /// reached with the key the collector announces for it.
        public var security: CurveSecurity?
        /// Most capture nodes whose previews are read (announced ones beyond are refused and counted).
        public var maxCaptures: Int = CaptureDirectory.defaultMaxEntries
        /// Where each track's best picture and a JSON sidecar are written when it leaves; nil = nowhere.
        public var saveFaces: String?
        public var limits = ViewLimits()

        public init(collector: String, security: CurveSecurity? = nil) {
            self.collector = collector
            self.security = security
        }
    }

    public let configuration: Configuration
    /// What happened, by name: `previews_received`, `previews_malformed`, `stream_messages`, `crops_failed`, and the
    /// core's refusals (`view_*`).
    public let counters = Counters()
    public let liveness = Liveness()
    /// The pages connected to the live channel.
    public let hub = ViewHub()
    /// Where snapshots are rendered for HTTP requests (a serial queue: one at a time, off the cooperative pool).
    public let imagingQueue = DispatchQueue(label: "facewire.view.imaging")
    private let logger: Logger
    private let context = ZMQContext()
    private let lock = NSLock()
    private var core: ViewCore
    /// When each stream's status was last pushed (monotonic ns) and which changed since.
    private var statusPushed: [String: UInt64] = [:]
    private var statusDirty: Set<String> = []
    /// Statuses go to the pages at most this often per stream.
    static let statusInterval: UInt64 = 500_000_000

    public init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        core = ViewCore(limits: configuration.limits) { face in
            BestFace.score(
                width: face.bounds.width, height: face.bounds.height, yaw: face.hasYaw ? face.yaw : nil,
                pitch: face.hasPitch ? face.pitch : nil, quality: face.hasQuality ? face.quality : nil)
        }
    }

    /// Reads the core under its lock.
    public func read<T>(_ body: (ViewCore) -> T) -> T {
        lock.withLock { body(core) }
    }

    /// Reads until `stop` is set.
    public func run(stop: StopToken) throws {
        stop.onStop { [context] in context.shutdown() }
        do {
            try loop(stop: stop)
        } catch let error as ZMQError where error.isTerminated {
            return
        }
    }

    private func loop(stop: StopToken) throws {
        let security = configuration.security
        // Every collector's Welcome: a failover group's (SPEC.md 18) and every shard's (SPEC.md 19) results and capture
        // nodes.
        let control = try CollectorSession(
            context: context, collector: configuration.collector, security: security, purpose: .discovery,
            hello: CollectorSession.hello(role: .view, nodeID: defaultNodeID()), welcomesFromAll: true)
        let maxResults = max(16, 2 * control.sockets.count)
        defer { control.close() }

        let results = try ZMQSocket(context: context, kind: .sub)
        defer { results.close() }
        try results.setHighWaterMarks(receive: 100_000)
        try results.setMaxMessageSize(Wire.maxControlMessageBytes)
        try results.setLinger(milliseconds: 0)
        try CurveSecurity.secureToCollector(results, security)
        try results.subscribe([])
        var publishEndpoint: String?

        // One SUB for every capture node's preview: few frames queued (the newest matter), frames bounded as a
        // worker's are.
        let previews = try ZMQSocket(context: context, kind: .sub)
        defer { previews.close() }
        try previews.setHighWaterMarks(receive: 4)
        try previews.setMaxMessageSize(Wire.maxFrameMessageBytes)
        try previews.setLinger(milliseconds: 0)
        try previews.subscribe([])
        let directory = CaptureDirectory([], maxEntries: configuration.maxCaptures, requiresKey: security != nil)
        var connected: Set<CaptureDirectory.Entry> = []


        var readResults: Set<String> = []
        var publications = PublicationFilter()
        while !stop.isStopped {
            let now = Clock.monotonicNanoseconds()
            liveness.beat(publishEndpoint == nil ? "waiting for the collector's Welcome" : "reading \(connected.count) preview(s)")
            // The view keeps saying hello: capture nodes come and go, and each Welcome lists them.
            control.sayHelloIfDue(now: now)
            let ready = try ZMQSocket.poll(control.sockets + [results, previews], timeoutMilliseconds: 100)
            if ready.prefix(control.sockets.count).contains(true), let reply = try control.receiveNow() {
                guard case .welcome(let welcome) = reply else {
                    counters.add("control_malformed")
                    continue
                }
                // Each collector's results (a standby's carry nothing until it takes over).
                guard let endpoint = control.publishEndpoint(of: welcome) else {
                    counters.add("control_malformed")
                    continue
                }
                if publishEndpoint != endpoint, !readResults.contains(endpoint), readResults.count < maxResults {
                    try results.connect(endpoint)
                    readResults.insert(endpoint)
                    publishEndpoint = endpoint
                    logger.info("view reading the results stream", metadata: ["endpoint": "\(endpoint)"])
                }
                let listed = welcome.captures.filter { !$0.previewEndpoint.isEmpty }.map {
                    (endpoint: $0.previewEndpoint, key: $0.curvePublicKey.isEmpty ? nil : $0.curvePublicKey)
                }
                let update = directory.learn(listed, at: now)
                for name in update.counters { counters.add("previews_" + name) }
                for entry in update.forgotten where connected.remove(entry) != nil {
                    try? previews.disconnect(entry.endpoint)
                }
                for entry in update.added {
                    if let key = entry.key, let security {
                        try previews.makeCurveClient(serverKey: key, keyPair: security.keyPair)
                    }
                    try previews.connect(entry.endpoint)
                    connected.insert(entry)
                    logger.info("view reading a preview", metadata: ["endpoint": "\(entry.endpoint)"])
                }
            }
            // Drain what is there, a bounded number per turn so that neither side starves the other.
            for _ in 0..<256 {
                guard let parts = try results.receive(dontWait: true) else { break }
                guard let message = try? StreamMessage(parts: parts) else {
                    counters.add("stream_malformed")
                    continue
                }
                counters.add("stream_messages")
                // A failover group's new active republishes what the old one may not have: each message once.
                guard publications.keep(
                    stream: message.stream, epoch: message.epoch, publication: message.publication, leaderEpoch: message.leaderEpoch) else {
                    counters.add("stream_repeated")
                    continue
                }
                apply(message.stream) { $0.receive(message, at: Clock.now()) }
            }
            for _ in 0..<16 {
                guard let parts = try previews.receive(dontWait: true) else { break }
                guard let frame = try? PreviewFrame(parts: parts) else {
                    counters.add("previews_malformed")
                    continue
                }
                counters.add("previews_received")
                apply(frame.header.stream) { $0.preview(frame, at: Clock.now()) }
            }
            pushStatuses(now: Clock.monotonicNanoseconds())
        }
    }

    /// Runs one input of `stream` through the core and carries out its output.
    private func apply(_ stream: String, _ input: (inout ViewCore) -> ViewOutput) {
        let out = lock.withLock { input(&core) }
        counters.add(out.counts)
        for request in out.crops { crop(request) }
        if hub.hasClients {
            for joined in out.joined { hub.broadcast(.binary(frameMessage(joined))) }
            for event in out.events { hub.broadcast(.text(PageJSON.encode(event))) }
        }
        for left in out.left { save(left) }
        if out.statusChanged { statusDirty.insert(stream) }
    }

    private func pushStatuses(now: UInt64) {
        guard hub.hasClients, !statusDirty.isEmpty else { return }
        for stream in statusDirty where now &- (statusPushed[stream] ?? 0) >= Self.statusInterval {
            statusDirty.remove(stream)
            guard let status = read({ $0.status(stream) }) else {
                statusPushed[stream] = nil  // forgotten by the core
                continue
            }
            statusPushed[stream] = now
            hub.broadcast(.text(PageJSON.encode(status)))
        }
    }

    /// `[u32 big-endian length of the JSON][JSON][upright JPEG]`: one joined frame for the pages.
    func frameMessage(_ joined: ViewCore.JoinedFrame) -> [UInt8] {
        let header = joined.preview.header
        var jpeg = joined.preview.jpeg
        var width = header.width
        var height = header.height
        if header.orientation > 1 && header.orientation <= 8 {
            // Browsers would apply the JPEG's own EXIF tag, not the header's: send the pixels upright instead.
            if let upright = try? FrameImaging.snapshot(jpeg: jpeg, orientation: header.orientation, faces: []) {
                jpeg = upright
                if header.orientation >= 5 { swap(&width, &height) }
            }
        }
        let result = joined.result
        let page = PageModel.Frame(
            stream: header.stream, epoch: header.epoch, frameSeq: header.seq, resultSeq: result.seq, captureTimeUs: result.captureTimeUs,
            width: width, height: height, faces: result.faces.compactMap(PageModel.Face.init), worker: String(result.worker.prefix(64)),
            detectMs: result.hasTimings ? finite(result.timings.detectMs) : nil)
        let json = Array(PageJSON.encode(page).utf8)
        var message: [UInt8] = []
        message.reserveCapacity(4 + json.count + jpeg.count)
        withUnsafeBytes(of: UInt32(json.count).bigEndian) { message.append(contentsOf: $0) }
        message += json
        message += jpeg
        return message
    }

    private func crop(_ request: ViewCore.CropRequest) {
        do {
            let crop = try FrameImaging.faceCrop(jpeg: request.jpeg, orientation: request.orientation, face: FaceDrawing(face: request.face))
            lock.withLock { core.setCrop(crop, stream: request.stream, epoch: request.epoch, trackingID: request.trackingID) }
        } catch {
            counters.add("crops_failed")
        }
    }

    private func save(_ left: ViewCore.LeftTrack) {
        guard let directory = configuration.saveFaces, let crop = left.track.crop else { return }
        let name = "\(left.stream)_\(left.epoch)_\(left.track.trackingID)"
        let base = URL(fileURLWithPath: directory).appendingPathComponent(name)
        do {
            try Data(crop).write(to: base.appendingPathExtension("jpg"), options: .atomic)
            try Data(PageJSON.encode(SavedFace(left)).utf8).write(to: base.appendingPathExtension("json"), options: .atomic)
            counters.add("faces_saved")
        } catch {
            counters.add("faces_save_failed")
            logger.warning("cannot save a face", metadata: ["path": "\(base.path)", "error": "\(error)"])
        }
    }

    /// The latest processed frame of `stream` as a JPEG, upright, with its faces drawn in unless `faces` is false;
    /// nil when the stream has none yet. Renders on ``imagingQueue``.
    public func snapshot(_ stream: String, faces: Bool) async -> (jpeg: [UInt8], seq: UInt64)? {
        guard let joined = read({ $0.latest(stream) }) else { return nil }
        return await withCheckedContinuation { continuation in
            imagingQueue.async {
                let drawings = faces ? joined.result.faces.map { FaceDrawing(face: $0) } : []
                let header = joined.preview.header
                let jpeg = try? FrameImaging.snapshot(jpeg: joined.preview.jpeg, orientation: header.orientation, faces: drawings)
                continuation.resume(returning: jpeg.map { ($0, header.seq) })
            }
        }
    }
}

/// The JSON sidecar of a saved face (`--save-faces`).
struct SavedFace: Encodable {
    var stream: String
    var epoch: UInt64
    var trackingID: UInt64
    var firstSeq: UInt64
    var lastSeq: UInt64
    var frames: UInt32
    var durationMs: Int64
    var face: PageModel.Face?
    var pitch: Float?
    var quality: Float?

    init(_ left: ViewCore.LeftTrack) {
        stream = left.stream
        epoch = left.epoch
        trackingID = left.track.trackingID
        firstSeq = left.track.firstSeq
        lastSeq = left.track.lastSeq
        frames = left.track.frameCount
        durationMs = left.track.durationMs
        face = left.track.bestFace.flatMap(PageModel.Face.init)
        pitch = left.track.bestFace.flatMap { $0.hasPitch ? finite($0.pitch) : nil }
        quality = left.track.bestFace.flatMap { $0.hasQuality ? finite($0.quality) : nil }
    }
}

/// JSON for the page: sorted keys, no escaping of `/`.
enum PageJSON {
    static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
