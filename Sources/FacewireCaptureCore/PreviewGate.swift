import FacewireProtocol

/// Whether a frame just handed to a worker is also published on the preview socket (SPEC 7.5). Pure: the shell
/// (``PreviewPublisher``) feeds it the XPUB's subscription messages and asks it about each frame, with the time; each
/// answer names the counter it adds to (``Subscription/counter``, ``Offer/counter``), which the shell counts.
///
/// * **No viewer, no cost.** A frame is previewed only while some subscribed prefix is a prefix of this node's topic
///   (the stream id's octets and one `0x00`). The answer is one comparison until a view subscribes.
/// * **Bounded by construction.** Only prefixes of the topic are remembered, one flag per prefix length, so at most
///   66 (the topic is at most 65 octets): a subscriber cannot make the node remember more, however many it sends.
///   A subscription for another topic is counted (`preview_subscriptions_ignored`) and forgotten; one that is not a
///   subscription message, or longer than 1 + 65 octets, is refused (`preview_subscriptions_refused`). libzmq's XPUB
///   reports a prefix only when the first subscriber takes it and when the last one leaves, so one flag per prefix
///   follows every subscriber.
/// * **At most `fps` frames a second, newest wins.** Nothing is queued: a frame goes when it is offered or never
///   (`preview_dropped_rate`). The schedule is ``RateLimit``'s, on the monotonic clock.
public struct PreviewGate: Sendable {
    /// The longest subscription message taken: the command octet and a topic of 65 octets.
    public static let maxSubscriptionBytes = 1 + Wire.maxStreamIDLength + 1

    /// What a subscription message did.
    public enum Subscription: Equatable, Sendable {
        /// A prefix of this node's topic, `length` octets long, is now subscribed (true) or no longer (false).
        case changed(length: Int, subscribed: Bool)
        /// The prefix was already in that state (libzmq reports each prefix once; a hand-made peer may repeat it).
        case unchanged(length: Int, subscribed: Bool)
        /// A well-formed (un)subscription for a prefix that is not one of this node's topic.
        case ignored
        /// Not a one-part message starting with 0 or 1, or longer than ``maxSubscriptionBytes``.
        case refused

        /// The counter this answer adds one to, if any.
        public var counter: String? {
            switch self {
            case .changed(_, let subscribed): subscribed ? "preview_subscribed" : "preview_unsubscribed"
            case .unchanged: nil
            case .ignored: "preview_subscriptions_ignored"
            case .refused: "preview_subscriptions_refused"
            }
        }
    }

    /// What became of a frame offered to the preview.
    public enum Offer: Equatable, Sendable {
        /// No view wants this node's frames (not counted: it costs nothing).
        case unwanted
        /// A view wants it, but the preview already sent `fps` frames this second.
        case overRate
        /// Publish it.
        case previewed

        /// The counter this answer adds one to, if any.
        public var counter: String? { self == .overRate ? "preview_dropped_rate" : nil }
    }

    /// The topic this node publishes its frames under: the stream id's octets and one `0x00`, as on the results
    /// stream (SPEC 4.3).
    public let topic: [UInt8]
    /// `--preview-fps`.
    public let fps: Double
    /// `subscribed[n]`: the first `n` octets of the topic are a subscribed prefix.
    private var subscribed: [Bool]
    private var rateLimit: RateLimit

    /// Distinct subscribed prefixes of this node's topic (the `preview_subscribers` gauge).
    public private(set) var subscriptions = 0

    /// - Parameters:
    ///   - stream: the node's stream id (already validated: 1-64 octets, no `0x00`).
    ///   - fps: `--preview-fps`, > 0.
    public init(stream: String, fps: Double) {
        precondition(fps > 0 && fps.isFinite, "--preview-fps must be positive")
        topic = Wire.topic(forStream: stream)
        self.fps = fps
        subscribed = Array(repeating: false, count: topic.count + 1)
        rateLimit = RateLimit(maxFPS: fps)
    }

    /// Whether some view wants this node's frames.
    public var isWanted: Bool { subscriptions > 0 }

    /// Applies one message read from the XPUB: `[0x01 prefix]` subscribes, `[0x00 prefix]` unsubscribes.
    @discardableResult
    public mutating func receive(_ parts: [[UInt8]]) -> Subscription {
        guard parts.count == 1, let command = parts[0].first, command <= 1, parts[0].count <= Self.maxSubscriptionBytes else {
            return .refused
        }
        let prefix = parts[0].dropFirst()
        guard prefix.count <= topic.count, topic.starts(with: prefix) else {
            return .ignored
        }
        let on = command == 1
        guard subscribed[prefix.count] != on else { return .unchanged(length: prefix.count, subscribed: on) }
        subscribed[prefix.count] = on
        subscriptions += on ? 1 : -1
        return .changed(length: prefix.count, subscribed: on)
    }

    /// Whether the frame handed to a worker at `nowNs` (monotonic) is previewed: a view wants it and it keeps the
    /// rate. A frame nobody wants costs nothing.
    public mutating func offer(atNs nowNs: UInt64) -> Offer {
        guard isWanted else { return .unwanted }
        return rateLimit.keep(timeMicroseconds: Int64(clamping: nowNs / 1000)) ? .previewed : .overRate
    }
}
