import CMosquitto
import FacewireCollectorCore
import FacewireProtocol
import FacewireRuntime
import FacewireVocabulary
import Foundation
import Logging

/// Where and how the collector publishes to MQTT (`--mqtt`).
public struct MQTTConfiguration: Sendable {
    public var host: String
    public var port: Int
    public var clientID: String
    public var username: String?
    public var password: String?
    /// The spool file (events waiting for the broker, kept across restarts); nil: in memory only.
    public var spoolPath: String?
    public var outbox = MQTTOutbox.Configuration()
    /// TLS (`mqtts://`): the CA file the broker's certificate is checked against (with its host name), and a client
    /// certificate and key for brokers that ask for one.
    public var tls = false
    public var caFile: String?
    public var certificateFile: String?
    public var keyFile: String?

    /// Reads `mqtt://HOST[:PORT]` (1883 by default) or `mqtts://HOST[:PORT]` (TLS, 8883).
    public init(url: String, clientID: String) throws {
        guard let components = URLComponents(string: url), components.scheme == "mqtt" || components.scheme == "mqtts",
            let host = components.host, !host.isEmpty, components.path.isEmpty || components.path == "/", components.query == nil,
            components.user == nil
        else {
            throw NodeError("--mqtt must be mqtt://HOST[:PORT] or mqtts://HOST[:PORT] (credentials: --mqtt-username), not '\(url)'")
        }
        tls = components.scheme == "mqtts"
        let port = components.port ?? (tls ? 8883 : 1883)
        guard (1...65535).contains(port) else { throw NodeError("--mqtt port \(port) is out of range") }
        self.host = host
        self.port = port
        self.clientID = clientID
    }

    /// The topic of this collector's availability: `online` while connected, `offline` (the broker's last will) when
    /// it is gone; retained.
    public var availabilityTopic: String { "\(outbox.prefix)/collector/\(clientID)/availability" }
}

/// The collector's MQTT output: the ordered stream's messages go in (``offer(_:)``, from the collector's loop, never
/// blocking it), and a thread of its own runs libmosquitto and the ``MQTTOutbox`` that decides what is published.
/// Events wait in the outbox's spool, mirrored to the spool file, while the broker is away.
public final class MQTTBridge: @unchecked Sendable {
    private let configuration: MQTTConfiguration
    private let logger: Logger
    private let lock = NSLock()
    private var inbox: [StreamMessage] = []
    private var inboxDropped = 0
    private static let maxInbox = 65_536
    private let stop = StopToken()
    private var thread: Thread?

    // Touched only on the bridge's thread (libmosquitto's callbacks run inside mosquitto_loop there).
    private var outbox: MQTTOutbox
    private var client: OpaquePointer?
    private var connected = false
    private var midToSpool: [Int32: UInt64] = [:]
    private var spoolFile: MQTTSpoolFile?
    public let counters = Counters()

    public init(configuration: MQTTConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        outbox = MQTTOutbox(configuration: configuration.outbox)
        if let path = configuration.spoolPath {
            let file = try MQTTSpoolFile(path: path, maxBytes: configuration.outbox.maxSpoolBytes)
            for publication in file.restored { outbox.enqueue(publication) }
            try file.rewrite(outbox.spool)
            if !file.restored.isEmpty {
                logger.notice("MQTT: events from the spool file to deliver", metadata: ["events": "\(outbox.spool.count)", "path": "\(path)"])
            }
            spoolFile = file
        }
        mosquitto_lib_init()
        guard let client = mosquitto_new(configuration.clientID, true, nil) else {
            throw NodeError("cannot create an MQTT client (libmosquitto: out of memory?)")
        }
        self.client = client
        if let username = configuration.username {
            mosquitto_username_pw_set(client, username, configuration.password)
        }
        if configuration.tls {
            // Without a CA file, the system's (Debian: /etc/ssl/certs); the broker's name is checked either way.
            let code = mosquitto_tls_set(
                client, configuration.caFile, configuration.caFile == nil ? "/etc/ssl/certs" : nil, configuration.certificateFile,
                configuration.keyFile, nil)
            guard code == MOSQ_ERR_SUCCESS.rawValue else {
                mosquitto_destroy(client)
                self.client = nil
                throw NodeError("MQTT TLS settings refused: \(String(cString: mosquitto_strerror(code))) (check --mqtt-ca-file, --mqtt-cert-file, --mqtt-key-file)")
            }
        }
        let offline = Array("offline".utf8)
        mosquitto_will_set(client, configuration.availabilityTopic, Int32(offline.count), offline, 1, true)
        mosquitto_reconnect_delay_set(client, 1, 10, true)
        mosquitto_user_data_set(client, Unmanaged.passUnretained(self).toOpaque())
        mosquitto_connect_callback_set(client) { _, context, code in
            guard let context else { return }
            Unmanaged<MQTTBridge>.fromOpaque(context).takeUnretainedValue().didConnect(code)
        }
        mosquitto_disconnect_callback_set(client) { _, context, code in
            guard let context else { return }
            Unmanaged<MQTTBridge>.fromOpaque(context).takeUnretainedValue().didDisconnect(code)
        }
        mosquitto_publish_callback_set(client) { _, context, mid in
            guard let context else { return }
            Unmanaged<MQTTBridge>.fromOpaque(context).takeUnretainedValue().didPublish(mid)
        }
    }

    deinit {
        if let client { mosquitto_destroy(client) }
    }

    /// Hands one message of the ordered stream over (any thread; never blocks: beyond 65,536 waiting, dropped and
    /// counted as `mqtt_inbox_dropped`).
    public func offer(_ message: StreamMessage) {
        lock.withLock {
            if inbox.count < Self.maxInbox { inbox.append(message) } else { inboxDropped += 1 }
        }
    }

    /// Starts the bridge's thread.
    public func start() {
        let thread = Thread { [self] in run() }
        thread.name = "mqtt"
        thread.start()
        self.thread = thread
    }

    /// Stops the thread: a last chance to send what waits (up to `seconds`), then a clean disconnect (no last will).
    public func shutdown(seconds: Double = 2) {
        stop.stop()
        let deadline = Date().addingTimeInterval(seconds + 1)
        while thread?.isFinished == false, Date() < deadline { usleep(20_000) }
    }

    private func run() {
        guard let client else { return }
        if mosquitto_connect_async(client, configuration.host, Int32(configuration.port), 10) != MOSQ_ERR_SUCCESS.rawValue {
            logger.warning("MQTT: cannot reach the broker yet; retrying", metadata: ["broker": "\(configuration.host):\(configuration.port)"])
        }
        var stopDeadline: Date?
        while true {
            if stop.isStopped, stopDeadline == nil { stopDeadline = Date().addingTimeInterval(2) }
            if let deadline = stopDeadline, Date() >= deadline || (outbox.spool.isEmpty && lock.withLock({ inbox.isEmpty })) { break }
            drainInbox()
            if connected { sendSpooled() }
            let code = mosquitto_loop(client, 50, 1)
            if code != MOSQ_ERR_SUCCESS.rawValue {
                if connected {
                    didDisconnect(code)
                } else {
                    connectFailed(code)
                }
                Thread.sleep(forTimeInterval: 0.5)
                _ = mosquitto_reconnect(client)
            }
        }
        if connected {
            publish(MQTTOutbox.Publication(topic: configuration.availabilityTopic, payload: Array("offline".utf8), retain: true))
            _ = mosquitto_loop(client, 100, 1)
        }
        mosquitto_disconnect(client)
        _ = mosquitto_loop(client, 100, 1)
    }

    private func drainInbox() {
        let (messages, dropped) = lock.withLock { () -> ([StreamMessage], Int) in
            defer { inbox.removeAll(keepingCapacity: true); inboxDropped = 0 }
            return (inbox, inboxDropped)
        }
        if dropped > 0 { counters.add("mqtt_inbox_dropped", UInt64(dropped)) }
        for message in messages {
            let decision = outbox.accept(message, at: Clock.now())
            for entry in decision.spooled { spoolFile?.append(entry, counters: counters) }
            if connected { decision.publish.forEach { publish($0) } }
        }
        syncCounts()
    }

    private func sendSpooled() {
        for entry in outbox.toSend() {
            var mid: Int32 = 0
            let code = entry.publication.payload.withUnsafeBytes { bytes in
                mosquitto_publish(client, &mid, entry.publication.topic, Int32(bytes.count), bytes.baseAddress, 1, entry.publication.retain)
            }
            if code == MOSQ_ERR_SUCCESS.rawValue {
                midToSpool[mid] = entry.id
            } else {
                outbox.notSent(entry.id)
                counters.add("mqtt_publish_failed")
                break
            }
        }
    }

    private func publish(_ publication: MQTTOutbox.Publication) {
        let code = publication.payload.withUnsafeBytes { bytes in
            mosquitto_publish(client, nil, publication.topic, Int32(bytes.count), bytes.baseAddress, 1, publication.retain)
        }
        if code != MOSQ_ERR_SUCCESS.rawValue { counters.add("mqtt_publish_failed") }
    }

    private func didConnect(_ code: Int32) {
        guard code == 0 else {
            counters.add("mqtt_connect_refused")
            logger.warning("MQTT: the broker refused the connection", metadata: ["code": "\(code)", "reason": "\(String(cString: mosquitto_connack_string(code)))"])
            return
        }
        connected = true
        counters.add("mqtt_connected")
        logger.notice("MQTT: connected", metadata: ["broker": "\(configuration.host):\(configuration.port)", "waiting": "\(outbox.spool.count)"])
        publish(MQTTOutbox.Publication(topic: configuration.availabilityTopic, payload: Array("online".utf8), retain: true))
        outbox.connected(true).forEach { publish($0) }
    }

    private var lastFailureLog: Date?
    /// A connection attempt failed (unreachable, TLS refused): counted; logged at once, then at most once a minute.
    private func connectFailed(_ code: Int32) {
        counters.add("mqtt_connect_failed")
        if let last = lastFailureLog, Date().timeIntervalSince(last) < 60 { return }
        lastFailureLog = Date()
        logger.warning("MQTT: cannot connect; retrying", metadata: [
            "broker": "\(configuration.host):\(configuration.port)", "error": "\(String(cString: mosquitto_strerror(code)))",
            "waiting": "\(outbox.spool.count)",
        ])
    }

    private func didDisconnect(_ code: Int32) {
        guard connected else { return }
        connected = false
        _ = outbox.connected(false)
        counters.add("mqtt_disconnected")
        logger.warning("MQTT: disconnected; events wait in the spool", metadata: ["code": "\(code)", "waiting": "\(outbox.spool.count)"])
    }

    private func didPublish(_ mid: Int32) {
        guard let id = midToSpool.removeValue(forKey: mid) else { return }
        if outbox.acknowledged(id) { spoolFile?.acknowledge(id, empty: outbox.spool.isEmpty, counters: counters) }
        syncCounts()
    }

    private var reported: [String: Int] = [:]
    /// Mirrors the outbox's counts into the node's counters (as increments).
    private func syncCounts() {
        for (name, value) in outbox.counts where value != reported[name] {
            counters.add(name, UInt64(max(0, value - (reported[name] ?? 0))))
            reported[name] = value
        }
    }
}
