import FacewireProtocol
import FacewireVocabulary

/// What the collector tells an MQTT broker (`--mqtt`, SPEC.md 20), decided without a socket: which topic each message
/// of the ordered stream goes to, what waits in the spool while the broker is away, and what is dropped and why.
///
/// Topics, under `prefix` (default `facewire`):
/// - `<prefix>/<stream>/events`: every faceAppeared, faceLeft (with the track's frame count and last heart rate),
///   trackingReset and streamEnded, as the tail's JSON line (SPEC 12.3). QoS 1, spooled: none is lost while the broker
///   is away, up to the spool's bound (beyond it the newest are dropped and counted, `mqtt_events_dropped_spool_full`).
/// - `<prefix>/<stream>/status`: retained, the stream's latest state (`live` at its first frame and with each statistics
///   window, `ended` at its end): the newest replaces any not yet sent.
/// - `<prefix>/<stream>/frames`: a summary of a frame (seq, faces, tracking IDs), at most one per `summaryInterval` per
///   stream, only while connected (a stale summary is worth nothing).
/// - With `discoveryPrefix`, Home Assistant's discovery message for each stream's face count, retained.
///
/// Stream ids are topic-safe by SPEC 14.4 (letters, digits, `.`, `_`, `-`): no `+`, `#` or `/` can reach a topic.
public struct MQTTOutbox: Sendable {
    public struct Configuration: Sendable, Equatable {
        public var prefix = "facewire"
        /// The shortest time between two frame summaries of one stream, seconds (0: every frame).
        public var summaryIntervalSeconds = 1.0
        /// The spool's bound: events beyond it are dropped (counted), never blocking the collector.
        public var maxSpoolBytes = 16 << 20
        public var maxSpoolEvents = 100_000
        /// At most this many spooled events unacknowledged at once.
        public var maxInFlight = 64
        /// Home Assistant's MQTT discovery prefix (`homeassistant`), or nil for none: each stream is announced once as
        /// a sensor of its face count (retained, on its first frame).
        public var discoveryPrefix: String?
        /// The collector's availability topic, which discovered sensors follow.
        public var availabilityTopic = ""
        public init() {}
    }

    public struct Publication: Sendable, Equatable {
        public var topic: String
        public var payload: [UInt8]
        public var retain: Bool
        public init(topic: String, payload: [UInt8], retain: Bool) {
            self.topic = topic
            self.payload = payload
            self.retain = retain
        }
    }

    /// A spooled event: its number in the spool (increasing, never reused) and what to publish.
    public struct Spooled: Sendable, Equatable {
        public var id: UInt64
        public var publication: Publication
    }

    public let configuration: Configuration
    /// Events waiting for the broker's acknowledgement, oldest first; `inFlight` of them were sent.
    public private(set) var spool: [Spooled] = []
    public private(set) var spoolBytes = 0
    private var inFlight: Set<UInt64> = []
    private var nextID: UInt64 = 1
    /// The latest retained message per topic not yet sent (a stream's status, its discovery message): only the newest
    /// matters.
    public private(set) var pendingRetained: [String: Publication] = [:]
    private var lastSummary: [String: UInt64] = [:]
    private var seenEpochs: [String: UInt64] = [:]
    public private(set) var counts: [String: Int] = [:]
    public private(set) var connected = false

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// What one message of the ordered stream leads to: what to publish now, without spooling (a frame summary, a
    /// status while connected), and the events it added to the spool (for the shell to keep on disk; they are sent by
    /// ``toSend()``).
    public struct Decision: Sendable, Equatable {
        public var publish: [Publication] = []
        public var spooled: [Spooled] = []
        public init() {}
    }

    /// Takes one message of the ordered stream.
    public mutating func accept(_ message: StreamMessage, at now: Instant) -> Decision {
        let stream = message.stream
        let base = "\(configuration.prefix)/\(stream)"
        var decision = Decision()
        switch message.body {
        case .frame(let frame):
            if seenEpochs[stream] != message.epoch {
                if seenEpochs[stream] == nil, let discovery = discoveryConfig(stream) { retained(discovery, into: &decision.publish) }
                seenEpochs[stream] = message.epoch
                if seenEpochs.count > 4096 { seenEpochs.removeAll(keepingCapacity: true) }  // bounded: a stream seen again only re-announces itself
                status(stream, epoch: message.epoch, state: "live", extra: "", into: &decision.publish)
            }
            guard connected, frame.status == .processed else { break }
            let interval = UInt64(max(0, configuration.summaryIntervalSeconds) * 1e9)
            if let last = lastSummary[stream], now.monotonicNs &- last < interval { break }
            lastSummary[stream] = now.monotonicNs
            if lastSummary.count > 4096 { lastSummary.removeAll(keepingCapacity: true) }
            let ids = frame.faces.map(\.trackingID).filter { $0 != 0 }.map(String.init).joined(separator: ",")
            let text = "{\"stream\":\(JSONLines.quoted(stream)),\"epoch\":\(message.epoch),\"seq\":\(frame.seq),\"faces\":\(frame.faces.count),\"trackingIDs\":[\(ids)]}"
            decision.publish.append(Publication(topic: base + "/frames", payload: Array(text.utf8), retain: false))
            counts["mqtt_summaries", default: 0] += 1
        case .event, .reset, .end:
            if let line = JSONLines.line(for: message),
                let entry = enqueue(Publication(topic: base + "/events", payload: Array(line.utf8), retain: false))
            {
                decision.spooled.append(entry)
            }
            if case .end(let summary) = message.body {
                status(stream, epoch: message.epoch, state: "ended",
                       extra: ",\"frames\":\(summary.frames),\"processed\":\(summary.processed),\"dropped\":\(summary.dropped)", into: &decision.publish)
            }
        case .statistics(let statistics):
            // Frames per second as the tail prints it (SPEC 12.4: at most 2 decimals, null for a value not a number).
            var number = JSONBuffer(capacity: 16)
            number.append(statistics.fps, decimals: 2)
            let fps = number.string
            status(stream, epoch: message.epoch, state: "live",
                   extra: ",\"fps\":\(fps),\"frames\":\(statistics.frames),\"processed\":\(statistics.processed)", into: &decision.publish)
        case .none:
            break
        }
        return decision
    }

    /// Home Assistant's discovery message for `stream`'s face count (a sensor on the frames topic), when asked for.
    /// Object ids take letters, digits, `_` and `-`: a stream id's `.` becomes `_`.
    func discoveryConfig(_ stream: String) -> Publication? {
        guard let prefix = configuration.discoveryPrefix else { return nil }
        let object = "facewire_" + String(stream.map { $0 == "." ? "_" : $0 })
        let text = "{\"name\":\(JSONLines.quoted("\(stream) faces")),\"unique_id\":\(JSONLines.quoted(object + "_faces")),"
            + "\"state_topic\":\(JSONLines.quoted("\(configuration.prefix)/\(stream)/frames")),"
            + "\"value_template\":\"{{ value_json.faces }}\",\"unit_of_measurement\":\"faces\","
            + "\"availability_topic\":\(JSONLines.quoted(configuration.availabilityTopic)),"
            + "\"device\":{\"identifiers\":[\(JSONLines.quoted(object))],\"name\":\(JSONLines.quoted("Facewire \(stream)")),\"manufacturer\":\"Facewire\"}}"
        return Publication(topic: "\(prefix)/sensor/\(object)/faces/config", payload: Array(text.utf8), retain: true)
    }

    private mutating func status(_ stream: String, epoch: UInt64, state: String, extra: String, into out: inout [Publication]) {
        let text = "{\"stream\":\(JSONLines.quoted(stream)),\"epoch\":\(epoch),\"state\":\"\(state)\"\(extra)}"
        retained(Publication(topic: "\(configuration.prefix)/\(stream)/status", payload: Array(text.utf8), retain: true), into: &out)
    }

    /// A retained message: sent now while connected, else kept (the newest per topic) until the connection is back.
    private mutating func retained(_ publication: Publication, into out: inout [Publication]) {
        if connected {
            out.append(publication)
        } else {
            if pendingRetained[publication.topic] == nil, pendingRetained.count >= 8192 {
                counts["mqtt_retained_dropped", default: 0] += 1  // bounded: thousands of streams while the broker is away
                return
            }
            pendingRetained[publication.topic] = publication
        }
    }

    /// Adds an event to the spool (also what a restart finds in the spool file); one over the bound is dropped,
    /// counted, and `nil` returned.
    @discardableResult
    public mutating func enqueue(_ publication: Publication) -> Spooled? {
        let size = publication.topic.utf8.count + publication.payload.count
        guard spool.count < configuration.maxSpoolEvents, spoolBytes + size <= configuration.maxSpoolBytes else {
            counts["mqtt_events_dropped_spool_full", default: 0] += 1
            return nil
        }
        let entry = Spooled(id: nextID, publication: publication)
        spool.append(entry)
        nextID += 1
        spoolBytes += size
        counts["mqtt_events_spooled", default: 0] += 1
        return entry
    }

    /// The connection came up (or went down): what waits is sent from now on, the retained statuses first. Events in
    /// flight stay in flight: the client library sends them again on the next connection (QoS 1) and reports their
    /// acknowledgement then; a restarted collector sends them again from its spool file (at least once).
    public mutating func connected(_ up: Bool) -> [Publication] {
        connected = up
        guard up else { return [] }
        defer { pendingRetained.removeAll() }
        return pendingRetained.keys.sorted().compactMap { pendingRetained[$0] }
    }

    /// Spooled events to send now, oldest first, as many as the in-flight window allows; marked in flight.
    public mutating func toSend() -> [Spooled] {
        guard connected else { return [] }
        var out: [Spooled] = []
        for entry in spool where !inFlight.contains(entry.id) {
            guard inFlight.count < configuration.maxInFlight else { break }
            inFlight.insert(entry.id)
            out.append(entry)
        }
        return out
    }

    /// The broker acknowledged spooled event `id` (QoS 1 PUBACK): it leaves the spool. False for an id not in flight.
    @discardableResult
    public mutating func acknowledged(_ id: UInt64) -> Bool {
        guard inFlight.remove(id) != nil, let index = spool.firstIndex(where: { $0.id == id }) else { return false }
        let entry = spool.remove(at: index)
        spoolBytes -= entry.publication.topic.utf8.count + entry.publication.payload.count
        counts["mqtt_events_delivered", default: 0] += 1
        return true
    }

    /// A publication could not be handed to the client library (it refused it): it stays in the spool, to go again.
    public mutating func notSent(_ id: UInt64) {
        inFlight.remove(id)
    }
}
