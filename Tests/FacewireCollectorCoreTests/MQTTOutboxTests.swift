import FacewireCollectorCore
import FacewireProtocol
import FacewireVocabulary
import Testing

@Suite("MQTT outbox: topics, spool, summaries, statuses")
struct MQTTOutboxTests {
    static func at(_ seconds: Double) -> Instant { Instant(monotonicNs: UInt64(seconds * 1e9), wallUs: Int64(seconds * 1e6)) }

    static func frame(_ stream: String = "cam-1", epoch: UInt64 = 7, seq: UInt64, ids: [UInt64] = [3]) -> StreamMessage {
        var message = StreamMessage()
        message.version = 1
        message.stream = stream
        message.epoch = epoch
        var frame = FrameResult()
        frame.stream = stream
        frame.epoch = epoch
        frame.seq = seq
        frame.faces = ids.map { id in
            var face = WireFace()
            face.trackingID = id
            return face
        }
        message.frame = frame
        return message
    }

    static func event(_ kind: FaceEvent.Kind, stream: String = "cam-1", id: UInt64 = 3, seq: UInt64 = 1) -> StreamMessage {
        var message = StreamMessage()
        message.version = 1
        message.stream = stream
        message.epoch = 7
        var event = FaceEvent()
        event.kind = kind
        event.trackingID = id
        event.seq = seq
        event.trackingFrameCount = 1
        message.event = event
        return message
    }

    @Test("events go to STREAM/events as the tail's line and wait in the spool until acknowledged, oldest first")
    func eventsAreSpooledUntilAcknowledged() {
        var outbox = MQTTOutbox()
        let decision = outbox.accept(Self.event(.appeared), at: Self.at(1))
        #expect(decision.publish.isEmpty)
        #expect(decision.spooled.count == 1)
        let spooled = decision.spooled[0]
        #expect(spooled.publication.topic == "facewire/cam-1/events" && !spooled.publication.retain)
        #expect(String(decoding: spooled.publication.payload, as: UTF8.self) == JSONLines.line(for: Self.event(.appeared)))
        let early = outbox.toSend()
        #expect(early.isEmpty, "nothing is sent before the broker is there")
        _ = outbox.accept(Self.event(.left, seq: 9), at: Self.at(2))
        _ = outbox.connected(true)
        let sent = outbox.toSend()
        #expect(sent.map(\.id) == [1, 2])
        let twice = outbox.toSend()
        #expect(twice.isEmpty, "in flight: not sent twice")
        let second = outbox.acknowledged(2)
        #expect(second && outbox.spool.map(\.id) == [1])
        let again = outbox.acknowledged(2), unknown = outbox.acknowledged(99)
        #expect(!again && !unknown, "a second or unknown acknowledgement changes nothing")
        // The connection drops: what is in flight stays so (libmosquitto sends it again on reconnecting).
        _ = outbox.connected(false)
        _ = outbox.connected(true)
        let resent = outbox.toSend()
        #expect(resent.isEmpty)
        let first = outbox.acknowledged(1)
        #expect(first && outbox.spool.isEmpty && outbox.spoolBytes == 0)
        #expect(outbox.counts["mqtt_events_delivered"] == 2)
    }

    @Test("the spool is bounded: events beyond it are dropped and counted, the collector never waits")
    func spoolBound() {
        var configuration = MQTTOutbox.Configuration()
        configuration.maxSpoolEvents = 3
        var outbox = MQTTOutbox(configuration: configuration)
        for seq in UInt64(0)..<10 { _ = outbox.accept(Self.event(.appeared, id: seq + 1, seq: seq), at: Self.at(Double(seq))) }
        #expect(outbox.spool.count == 3)
        #expect(outbox.counts["mqtt_events_dropped_spool_full"] == 7)
        var small = MQTTOutbox.Configuration()
        small.maxSpoolBytes = 200
        var bytes = MQTTOutbox(configuration: small)
        for seq in UInt64(0)..<10 { _ = bytes.accept(Self.event(.appeared, seq: seq), at: Self.at(0)) }
        #expect(bytes.spoolBytes <= 200 && bytes.spool.count >= 1 && bytes.counts["mqtt_events_dropped_spool_full", default: 0] >= 1)
    }

    @Test("a window of in-flight events: at most maxInFlight unacknowledged; one the library refused goes again")
    func inFlightWindow() {
        var configuration = MQTTOutbox.Configuration()
        configuration.maxInFlight = 2
        var outbox = MQTTOutbox(configuration: configuration)
        _ = outbox.connected(true)
        for seq in UInt64(0)..<5 { _ = outbox.accept(Self.event(.appeared, seq: seq), at: Self.at(0)) }
        let window = outbox.toSend().map(\.id)
        #expect(window == [1, 2])
        outbox.notSent(2)
        let again = outbox.toSend().map(\.id)
        #expect(again == [2])
        let acknowledged = outbox.acknowledged(1)
        #expect(acknowledged)
        let next = outbox.toSend().map(\.id)
        #expect(next == [3])
    }

    @Test("frame summaries: at most one per interval per stream, only while connected, with the tracking IDs")
    func summaries() {
        var outbox = MQTTOutbox()
        let offline = outbox.accept(Self.frame(seq: 0), at: Self.at(0)).publish
        #expect(offline.allSatisfy { !$0.topic.hasSuffix("/frames") }, "not connected: no summary")
        _ = outbox.connected(true)
        let first = outbox.accept(Self.frame(seq: 1, ids: [3, 0, 5]), at: Self.at(1)).publish
        #expect(first.count == 1 && first[0].topic == "facewire/cam-1/frames")
        #expect(String(decoding: first[0].payload, as: UTF8.self) == #"{"stream":"cam-1","epoch":7,"seq":1,"faces":3,"trackingIDs":[3,5]}"#)
        let within = outbox.accept(Self.frame(seq: 2), at: Self.at(1.5)).publish
        #expect(within.isEmpty, "within the interval")
        let other = outbox.accept(Self.frame("cam-2", seq: 0), at: Self.at(1.5)).publish
        #expect(other.contains { $0.topic == "facewire/cam-2/frames" }, "another stream has its own interval")
        let later = outbox.accept(Self.frame(seq: 3), at: Self.at(2.1)).publish
        #expect(later.count == 1)
    }

    @Test("statuses are retained; while disconnected only the newest per stream waits, sent first on connecting")
    func statuses() {
        var outbox = MQTTOutbox()
        _ = outbox.accept(Self.frame(seq: 0), at: Self.at(0))  // the stream's first frame: live
        var end = StreamMessage()
        end.version = 1
        end.stream = "cam-1"
        end.epoch = 7
        end.end.frames = 10
        end.end.processed = 9
        end.end.dropped = 1
        let decision = outbox.accept(end, at: Self.at(1))
        #expect(decision.publish.isEmpty && decision.spooled.count == 1, "streamEnded is an event too")
        #expect(outbox.pendingRetained.count == 1)
        let sent = outbox.connected(true)
        #expect(sent.count == 1 && sent[0].retain && sent[0].topic == "facewire/cam-1/status")
        #expect(String(decoding: sent[0].payload, as: UTF8.self) == #"{"stream":"cam-1","epoch":7,"state":"ended","frames":10,"processed":9,"dropped":1}"#)
        let again = outbox.connected(true)
        #expect(again.isEmpty, "sent once")
        var statistics = StreamMessage()
        statistics.version = 1
        statistics.stream = "cam-1"
        statistics.epoch = 8
        statistics.statistics.fps = .nan
        statistics.statistics.frames = 4
        let live = outbox.accept(statistics, at: Self.at(2)).publish
        #expect(live.count == 1 && String(decoding: live[0].payload, as: UTF8.self).contains(#""fps":null"#), "an absurd fps prints as the tail prints it")
    }

    @Test("Home Assistant discovery: each stream announced once, retained, as a sensor of the frames topic's face count")
    func discovery() {
        var configuration = MQTTOutbox.Configuration()
        configuration.discoveryPrefix = "homeassistant"
        configuration.availabilityTopic = "facewire/collector/c1/availability"
        var outbox = MQTTOutbox(configuration: configuration)
        _ = outbox.accept(Self.frame("lobby.east", seq: 0), at: Self.at(0))  // not connected: it waits
        let sent = outbox.connected(true)
        let config = sent.first { $0.topic == "homeassistant/sensor/facewire_lobby_east/faces/config" }
        #expect(config?.retain == true)
        let text = config.map { String(decoding: $0.payload, as: UTF8.self) } ?? ""
        #expect(text.contains(#""state_topic":"facewire/lobby.east/frames""#) && text.contains(#""value_template":"{{ value_json.faces }}""#)
            && text.contains(#""availability_topic":"facewire/collector/c1/availability""#), "\(text)")
        let again = outbox.accept(Self.frame("lobby.east", epoch: 8, seq: 0), at: Self.at(5)).publish
        #expect(!again.contains { $0.topic.hasPrefix("homeassistant/") }, "a new epoch does not announce the stream again")
        var plain = MQTTOutbox()
        _ = plain.connected(true)
        let none = plain.accept(Self.frame(seq: 0), at: Self.at(0)).publish
        #expect(!none.contains { $0.topic.hasPrefix("homeassistant/") }, "no discovery unless asked")
    }

    @Test("a prefix of one's own; heartbeats publish nothing")
    func prefixAndHeartbeats() {
        var configuration = MQTTOutbox.Configuration()
        configuration.prefix = "site-3/faces"
        var outbox = MQTTOutbox(configuration: configuration)
        let topic = outbox.accept(Self.event(.appeared), at: Self.at(0)).spooled.first?.publication.topic
        #expect(topic == "site-3/faces/cam-1/events")
        var heartbeat = StreamMessage()
        heartbeat.version = 1
        let nothing = outbox.accept(heartbeat, at: Self.at(0))
        #expect(nothing == MQTTOutbox.Decision())
    }
}
