import FacewireProtocol
import FacewireVocabulary
import Foundation

/// The active collector's side of replication (SPEC.md 18): numbers each step of the core, sends it to every standby,
/// and holds its publications until every attached standby has acknowledged it, so that nothing is published that a
/// standby taking over would not know. Pure: no sockets and no clock.
///
/// A standby that connects (or asks, with number 0) is sent a snapshot: every checkpoint, and the publications still
/// held. It is *attaching* until it acknowledges that snapshot, *attached* after; only attached standbys hold
/// publications back. One that leaves a held step unacknowledged for ``Settings/ackTimeout`` is detached (counted
/// and logged): publications go out without it, and it gets a snapshot when it asks again. With no standby attached,
/// every step is published at once.
public struct ReplicationSender {
    public struct Settings: Sendable, Equatable {
        /// How long an attached standby may leave a step unacknowledged before it is detached, in nanoseconds.
        public var ackTimeout: UInt64
        /// How often an idle active tells its standbys what went out (`published_through`), in nanoseconds.
        public var heartbeatInterval: UInt64
        /// The most standbys served; more are refused (counted).
        public var maxStandbys: Int

        public init(ackTimeout: UInt64 = 500_000_000, heartbeatInterval: UInt64 = 100_000_000, maxStandbys: Int = 8) {
            self.ackTimeout = ackTimeout
            self.heartbeatInterval = heartbeatInterval
            self.maxStandbys = max(0, maxStandbys)
        }
    }

    /// What the active's shell does.
    public enum Action {
        /// A message to the standbys with these ROUTER identities.
        case send(identities: [[UInt8]], Replication)
        /// Messages the standbys acknowledged (or no standby holds back): publish them now, in order.
        case publish([Publication])
    }

    /// A message of the ordered stream, with its serialised bytes (replicated and published as they are).
    public struct Publication {
        public var message: StreamMessage
        public var bytes: [UInt8]

        public init(message: StreamMessage, bytes: [UInt8]) {
            self.message = message
            self.bytes = bytes
        }
    }

    public typealias Output = Effects<Action>

    /// Figures for the gauges and `/healthz`.
    public struct Figures: Sendable, Equatable {
        public var attached: Int
        public var attaching: Int
        /// Steps whose publications wait for an acknowledgement.
        public var heldSteps: Int
    }

    struct Standby {
        /// The snapshot's number while attaching; nil once attached.
        var snapshot: UInt64?
        var acked: UInt64
        var lastHeard: UInt64
        var snapshotSentAt: UInt64
        var name: String
    }

    struct HeldStep {
        var number: UInt64
        var publications: [Publication]
        var since: UInt64
    }

    public let settings: Settings
    /// The fencing epoch every message carries.
    public let leaderEpoch: UInt64
    /// The number of the last step.
    public private(set) var number: UInt64 = 0
    /// Every step up to this one was published.
    public private(set) var publishedThrough: UInt64 = 0
    var held: [HeldStep] = []
    var standbys: [[UInt8]: Standby] = [:]
    var lastSent: UInt64?

    public init(leaderEpoch: UInt64, settings: Settings = Settings()) {
        self.leaderEpoch = leaderEpoch
        self.settings = settings
    }

    public var figures: Figures {
        let attached = standbys.values.filter { $0.snapshot == nil }.count
        return Figures(attached: attached, attaching: standbys.count - attached, heldSteps: held.count)
    }

    // MARK: - Inputs

    /// One step of the core: the checkpoints it took and what it published, in order. Sent to every standby; the
    /// publications go out at once when no standby is attached, otherwise once each attached standby acknowledges.
    public mutating func step(checkpoints: [StreamCheckpoint], publications: [Publication], at now: UInt64) -> Output {
        var out = Output()
        guard !checkpoints.isEmpty || !publications.isEmpty else { return out }
        number &+= 1
        if !standbys.isEmpty {
            var message = base()
            message.checkpoints = checkpoints
            message.publications = publications.map { Data($0.bytes) }
            send(message, to: Array(standbys.keys), now, &out)
        }
        held.append(HeldStep(number: number, publications: publications, since: now))
        release(&out)
        return out
    }

    /// An acknowledgement from the standby at `identity`. `snapshot` gives every checkpoint now (asked only when one
    /// is to be sent).
    public mutating func acknowledged(
        _ ack: ReplicationAck, from identity: [UInt8], at now: UInt64, snapshot: () -> [StreamCheckpoint]
    ) -> Output {
        var out = Output()
        let name = String(ack.nodeID.prefix(64))
        guard var standby = standbys[identity] else {
            // A new standby, or one that was detached: it starts from a snapshot.
            guard standbys.count < settings.maxStandbys else {
                out.count("replication_standbys_refused_cap")
                return out
            }
            out.log(.info, "standby joined: sending a snapshot", ["standby": name])
            sendSnapshot(to: identity, name: name, now, snapshot, &out)
            return out
        }
        standby.lastHeard = now
        if ack.leaderEpoch != leaderEpoch || ack.number == 0 {
            // It follows another active, or lost its place: a snapshot, unless one is on its way.
            if standby.snapshot == nil || now &- standby.snapshotSentAt >= settings.ackTimeout {
                sendSnapshot(to: identity, name: name, now, snapshot, &out)
            } else {
                standbys[identity] = standby
            }
            return out
        }
        guard ack.number <= number else {
            out.count("replication_ack_refused_number")
            standbys[identity] = standby
            return out
        }
        standby.acked = max(standby.acked, ack.number)
        if let snapshotNumber = standby.snapshot, standby.acked >= snapshotNumber {
            standby.snapshot = nil
            out.count("replication_standbys_attached")
            out.log(.info, "standby attached", ["standby": standby.name, "step": "\(standby.acked)"])
        }
        standbys[identity] = standby
        release(&out)
        return out
    }

    /// The standby at `identity` cannot be reached (the send failed): it is forgotten.
    public mutating func unreachable(_ identity: [UInt8]) -> Output {
        var out = Output()
        if let standby = standbys.removeValue(forKey: identity) {
            out.count("replication_standbys_detached")
            out.log(.warning, "standby unreachable: detached", ["standby": standby.name])
            release(&out)
        }
        return out
    }

    /// Lets time pass: detaches standbys that left a held step unacknowledged for ``Settings/ackTimeout`` (and
    /// attaching ones silent as long), and tells idle standbys what went out.
    public mutating func tick(at now: UInt64) -> Output {
        var out = Output()
        let oldest = held.first
        for (identity, standby) in standbys {
            let late: Bool
            if standby.snapshot != nil {
                late = now &- max(standby.lastHeard, standby.snapshotSentAt) >= settings.ackTimeout &* 4
            } else if let oldest, standby.acked < oldest.number {
                late = now &- oldest.since >= settings.ackTimeout
            } else {
                late = false
            }
            guard late else { continue }
            standbys[identity] = nil
            out.count("replication_standbys_detached")
            out.log(.warning, "standby too slow: detached, publishing without it", [
                "standby": standby.name, "acked": "\(standby.acked)", "step": "\(number)",
            ])
        }
        release(&out)
        if !standbys.isEmpty, lastSent.map({ now &- $0 >= settings.heartbeatInterval }) ?? true {
            send(base(), to: Array(standbys.keys), now, &out)
        }
        return out
    }

    // MARK: - Private

    private func base() -> Replication {
        var message = Replication()
        message.leaderEpoch = leaderEpoch
        message.number = number
        message.publishedThrough = publishedThrough
        return message
    }

    private mutating func send(_ message: Replication, to identities: [[UInt8]], _ now: UInt64, _ out: inout Output) {
        lastSent = now
        out.act(.send(identities: identities, message))
    }

    private mutating func sendSnapshot(
        to identity: [UInt8], name: String, _ now: UInt64, _ snapshot: () -> [StreamCheckpoint], _ out: inout Output
    ) {
        // A snapshot is the state after step `number`; a standby with nothing before needs a number to start from.
        if number == 0 { number = 1; publishedThrough = 1 }
        var message = base()
        message.snapshot = true
        message.checkpoints = snapshot()
        message.publications = held.flatMap { $0.publications.map { Data($0.bytes) } }
        standbys[identity] = Standby(snapshot: number, acked: 0, lastHeard: now, snapshotSentAt: now, name: name)
        out.count("replication_snapshots_sent")
        send(message, to: [identity], now, &out)
    }

    /// Publishes, in order, every held step that each attached standby has acknowledged.
    private mutating func release(_ out: inout Output) {
        let floor = standbys.values.lazy.filter { $0.snapshot == nil }.map(\.acked).min()
        var released: [Publication] = []
        while let first = held.first, floor.map({ first.number <= $0 }) ?? true {
            released += first.publications
            publishedThrough = first.number
            held.removeFirst()
        }
        if !released.isEmpty { out.act(.publish(released)) }
    }
}
