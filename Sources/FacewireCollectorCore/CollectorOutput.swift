import FacewireProtocol
import FacewireVocabulary

/// What one step of ``CollectorCore`` asks its shell to do: the shared ``Effects`` shape with the collector's actions.
public typealias CollectorOutput = Effects<CollectorAction>

/// One thing the collector's shell does besides counting and logging, in the order the core decided it.
public enum CollectorAction {
    /// A message of the ordered stream (the `--output` file gets it too).
    case publish(StreamMessage)
    /// An envelope for one or more peers on the ROUTER.
    case reply(Reply)
    /// Frames emitted, for `facewire_stream_frames_total`.
    case frames(FrameCount)
    /// A processed frame's capture-to-emission latency, in nanoseconds (plausible values only).
    case latency(Int64)

    /// An envelope for one or more peers (by ROUTER identity); serialise once, send to each.
    public struct Reply {
        public var identities: [[UInt8]]
        public var envelope: Envelope
        /// The counter to add to when a send fails (`welcome_lost`, `reply_lost`).
        public var lostCounter: String
        /// The envelope already serialised (a cached Welcome), or nil: the shell serialises `envelope`.
        public var bytes: [UInt8]?

        public init(identities: [[UInt8]], envelope: Envelope, lostCounter: String, bytes: [UInt8]? = nil) {
            self.identities = identities
            self.envelope = envelope
            self.lostCounter = lostCounter
            self.bytes = bytes
        }
    }

    /// Frames emitted, for `facewire_stream_frames_total` (labels already bounded by the core).
    public struct FrameCount: Hashable, Sendable {
        public var stream: String
        public var status: String
        public var reason: String
        public var count: UInt64
    }
}

extension Effects where Action == CollectorAction {
    /// The messages published, in order.
    public var publish: [StreamMessage] { actions.compactMap { if case .publish(let message) = $0 { message } else { nil } } }
    /// The replies, in order.
    public var replies: [CollectorAction.Reply] { actions.compactMap { if case .reply(let reply) = $0 { reply } else { nil } } }
    /// The frame counts, in order.
    public var frames: [CollectorAction.FrameCount] { actions.compactMap { if case .frames(let count) = $0 { count } else { nil } } }
    /// The latencies recorded, in order.
    public var latencies: [Int64] { actions.compactMap { if case .latency(let nanoseconds) = $0 { nanoseconds } else { nil } } }
}
