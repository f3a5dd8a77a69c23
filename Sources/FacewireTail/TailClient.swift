import FacewireProtocol
import FacewireRuntime
import FacewireTransport
import Foundation
import Logging
import ZeroMQ

/// Subscribes to a collector's results stream and hands each message to a callback.
///
/// ``run(stop:onMessage:)`` blocks the calling thread (one the caller owns).
public final class TailClient: @unchecked Sendable {
    /// Where and what to subscribe to.
    public struct Configuration: Sendable {
        /// The collector's control endpoint: the tail asks it where the results stream is.
        public var collector: String?
        /// The results stream endpoint directly (skips asking the collector).
        public var publish: String?
        /// Only these streams (empty: all).
        public var streams: [String]
        /// CURVE: this tail's keys and the collector's public key; nil for plain TCP.
        public var security: CurveSecurity?

        public init(collector: String? = nil, publish: String? = nil, streams: [String] = [], security: CurveSecurity? = nil) {
            self.collector = collector
            self.publish = publish
            self.streams = streams
            self.security = security
        }
    }

    /// What the callback returns: keep going or stop.
    public enum Next { case `continue`, stop }

    public let configuration: Configuration
    private let logger: Logger
    /// What arrived: `messages_received`, `frames_received`, `messages_malformed`; `frames_missed` and
    /// `frames_lost_failover` (sequence gaps, each printed as dropped), `frames_repeated` (a frame that already had a
    /// line), `messages_repeated` and `messages_renumbered` (a failover group's publications, SPEC.md 18.3).
    public let counters = Counters()
    /// Beats whenever the receive loop goes round (`/healthz`).
    public let liveness = Liveness()
    /// Frames that never reached this subscriber (sequence gaps): counted, logged as a warning and handed on as dropped.
    public private(set) var gaps = GapDetector()
    /// A failover group's messages, each kept once (`messages_repeated` counts the rest).
    public private(set) var publications = PublicationFilter()
    private let context = ZMQContext()

    public init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Subscribes and delivers messages until the callback says stop or `stop` is set.
    /// - Parameters:
    ///   - onSubscribed: called once, when the first message (the collector's heartbeat at the latest)
    ///     shows that the subscription is live.
    ///   - onMessage: called for every stream message (heartbeats excluded).
    public func run(stop: StopToken, onSubscribed: (() -> Void)? = nil, onMessage: (StreamMessage) -> Next) throws {
        stop.onStop { [context] in context.shutdown() }
        // Several collectors (a failover group, SPEC.md 18): the tail subscribes to each one's results as it learns where
        // they are, and keeps each message once.
        let group = configuration.publish == nil ? configuration.collector.map(CollectorChoice.endpoints) ?? [] : []
        var control: CollectorSession?
        var endpoint = ""
        if group.count > 1 {
            control = try CollectorSession(
                context: context, collector: configuration.collector ?? "", security: configuration.security, purpose: .discovery,
                hello: CollectorSession.hello(role: .tail, nodeID: defaultNodeID()), welcomesFromAll: true)
            endpoint = group.joined(separator: ",")
        } else {
            do {
                guard let resolved = try resolvePublishEndpoint(stop: stop) else { return }
                endpoint = resolved
            } catch let error as ZMQError where error.isTerminated {
                return
            }
        }
        defer { control?.close() }
        var followed: Set<String> = []
        let subscriber = try ZMQSocket(context: context, kind: .sub)
        defer { subscriber.close() }
        try subscriber.setHighWaterMarks(receive: 100_000)
        try subscriber.setMaxMessageSize(Wire.maxControlMessageBytes)
        try CurveSecurity.secureToCollector(subscriber, configuration.security)
        if configuration.streams.isEmpty {
            try subscriber.subscribe([])
        } else {
            try subscriber.subscribe([0])
            for stream in configuration.streams { try subscriber.subscribe(Wire.topic(forStream: stream)) }
        }
        if control == nil {
            try subscriber.connect(endpoint)
            logger.debug("tail subscribed", metadata: ["endpoint": "\(endpoint)"])
        }
        var subscribed = false
        while !stop.isStopped {
            liveness.beat(subscribed ? "subscribed to \(endpoint)" : "waiting for the first message from \(endpoint)")
            let parts: [[UInt8]]
            do {
                if let control {
                    try follow(control, subscriber: subscriber, followed: &followed, cap: max(16, 2 * group.count))
                    _ = try ZMQSocket.poll([subscriber] + control.sockets, timeoutMilliseconds: 200)
                } else {
                    guard try subscriber.waitForInput(timeoutMilliseconds: 200) else { continue }
                }
                guard let received = try subscriber.receive(dontWait: true) else { continue }
                parts = received
            } catch let error as ZMQError where error.isTerminated {
                return
            }
            if !subscribed {
                subscribed = true
                logger.debug("tail subscription live", metadata: ["endpoint": "\(endpoint)"])
                onSubscribed?()
            }
            counters.add("messages_received")
            guard var message = try? StreamMessage(parts: parts) else {
                counters.add("messages_malformed")
                logger.warning("malformed stream message")
                continue
            }
            let renumbered = publications.renumbered
            guard publications.keep(
                    stream: message.stream, epoch: message.epoch, publication: message.publication, leaderEpoch: message.leaderEpoch) else {
                counters.add("messages_repeated")
                continue
            }
            if publications.renumbered != renumbered {
                counters.add("messages_renumbered")
                gaps.noteTakeover(stream: message.stream, epoch: message.epoch)
                logger.warning("a collector took over without a current copy of the stream's state: the frames its predecessor did not publish are printed as dropped (failover)", metadata: [
                    "stream": "\(message.stream)", "epoch": "\(message.epoch)", "leader_epoch": "\(message.leaderEpoch)",
                ])
            }
            switch message.body {
            case nil: continue  // heartbeat
            case .frame(var frame):
                counters.add("frames_received")
                let seen = gaps.observe(stream: frame.stream, epoch: frame.epoch, seq: frame.seq, runLength: frame.runLength)
                if onMissing(seen.missing, seen.cause, before: frame.seq, like: message, onMessage) == .stop { return }
                // A frame (or part of a run) that already has a line: a takeover published it again.
                guard !seen.fresh.isEmpty else {
                    counters.add("frames_repeated")
                    continue
                }
                if seen.fresh.lowerBound != frame.seq {
                    frame.seq = seen.fresh.lowerBound
                    frame.runLength = seen.fresh.upperBound - seen.fresh.lowerBound
                    message.frame = frame
                }
            case .end(let summary):
                // The frames between the last one received and the end (a summary without next_seq says nothing).
                let unseen = gaps.finish(stream: message.stream, epoch: message.epoch, nextSeq: summary.nextSeq)
                if onMissing(unseen.missing, unseen.cause, before: summary.nextSeq, like: message, onMessage) == .stop { return }
            default: break
            }
            if onMessage(message) == .stop { return }
        }
    }

    /// Counts, logs and hands on as dropped lines the sequences `missing` just before `before` of `message`'s
    /// (stream, epoch); what the callback said last.
    private func onMissing(
        _ missing: Range<UInt64>, _ cause: GapDetector.Cause, before: UInt64, like message: StreamMessage, _ onMessage: (StreamMessage) -> Next
    ) -> Next {
        guard !missing.isEmpty else { return .continue }
        let count = missing.upperBound - missing.lowerBound
        counters.add(cause == .failover ? "frames_lost_failover" : "frames_missed", count)
        let what: Logger.Message = cause == .failover
            ? "frames lost with the collector that was active before a takeover without the state: printed as dropped (failover)"
            : "frames missed: this subscriber fell behind and the collector's PUB socket dropped them, or a collector restarted; printed as dropped (missed); the collector's --output has a lossless copy"
        logger.warning(what, metadata: [
            "stream": "\(message.stream)", "missed": "\(count)", "before": "\(before)", "missed_total": "\(gaps.missed)",
        ])
        for line in Self.droppedLines(like: message, seqs: missing, reason: cause.reason) where onMessage(line) == .stop {
            return .stop
        }
        return .continue
    }

    /// The most sequences of a gap printed one line each; a longer gap is one line with `runLength` (SPEC.md 9.1), so
    /// that a jump of 2^40 costs what a jump of one does.
    public static let maxGapLines: UInt64 = 256

    /// The lines standing for `seqs` of `message`'s (stream, epoch), dropped for `reason`, as the collector publishes a
    /// dropped run (no worker, no faces).
    public static func droppedLines(like message: StreamMessage, seqs: Range<UInt64>, reason: String) -> [StreamMessage] {
        var line = StreamMessage()
        line.version = message.version
        line.stream = message.stream
        line.epoch = message.epoch
        line.leaderEpoch = message.leaderEpoch
        var frame = FrameResult()
        frame.stream = message.stream
        frame.epoch = message.epoch
        frame.status = .dropped
        frame.reason = reason
        let length = seqs.upperBound - seqs.lowerBound
        guard length > maxGapLines else {
            return seqs.map { seq in
                frame.seq = seq
                line.frame = frame
                return line
            }
        }
        frame.seq = seqs.lowerBound
        frame.runLength = length
        line.frame = frame
        return [line]
    }

    /// Says hello to every collector of the group (of every shard) and subscribes to the results of each one that
    /// answers; at most `cap` results endpoints (a collector that names a new one in every Welcome cannot make the tail
    /// connect without end).
    private func follow(_ control: CollectorSession, subscriber: ZMQSocket, followed: inout Set<String>, cap: Int) throws {
        control.sayHelloIfDue(now: Clock.monotonicNanoseconds())
        while let reply = try control.receiveNow() {
            guard case .welcome(let welcome) = reply, let publish = control.publishEndpoint(of: welcome), !followed.contains(publish) else {
                continue
            }
            guard followed.count < cap else {
                counters.add("collectors_refused_cap")
                continue
            }
            try subscriber.connect(publish)
            followed.insert(publish)
            logger.info("following a collector's results", metadata: ["endpoint": "\(publish)", "role": "\(welcome.role)"])
        }
    }

    private func resolvePublishEndpoint(stop: StopToken) throws -> String? {
        if let publish = configuration.publish { return publish }
        guard let collector = configuration.collector else {
            throw NodeError("give --collector (or --publish)")
        }
        let control = try CollectorSession(
            context: context, collector: collector, security: configuration.security, purpose: .discovery,
            hello: CollectorSession.hello(role: .tail, nodeID: defaultNodeID()))
        defer { control.close() }
        var attempts = 0
        while !stop.isStopped {
            control.sayHelloIfDue(now: Clock.monotonicNanoseconds())
            attempts += 1
            if attempts == 25 { logger.warning("no answer from the collector yet", metadata: ["collector": "\(collector)"]) }
            guard case .welcome(let welcome) = try control.receive(timeoutMilliseconds: 200) else { continue }
            guard let endpoint = control.publishEndpoint(of: welcome) else {
                logger.warning("the collector's Welcome names no usable results endpoint; asking again", metadata: ["collector": "\(collector)"])
                continue
            }
            return endpoint
        }
        return nil
    }
}
