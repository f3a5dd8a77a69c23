// Pure state-machine logic of the collector: no ZeroMQ, no protobuf, only Foundation at most.

/// Why a frame sequence was emitted as `dropped` instead of `processed`.
///
/// A reason is an open set of short strings carried verbatim in `FrameResult.reason`.
/// The collector itself produces ``timeout``, ``overflow`` and ``superseded``; reasons a capture node gives
/// in a `Skipped` message are passed through with ``init(_:)``.
public struct DropReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The reason as it appears on the wire.
    public let rawValue: String

    /// Creates a reason from its wire string.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Creates a reason from its wire string (for example a capture node's skip reason).
    public init(_ string: String) { self.rawValue = string }

    /// Creates a reason from a string literal.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// The frame's result did not arrive within `--max-delay` after a later sequence was known.
    public static let timeout = DropReason("timeout")

    /// The reorder buffer held more than `--max-pending` results while waiting for this frame.
    public static let overflow = DropReason("overflow")

    /// A newer epoch of the stream began while the frame was numbered but not back (a capture node that restarted
    /// without a `StreamEnd`), and its result did not come within `--max-delay` (SPEC.md 9.6).
    public static let superseded = DropReason("superseded")

    /// The frame's result (or its skip) went to an active collector that died or lost its lease before
    /// replicating it; the collector that took over publishes the frame as dropped (SPEC.md 18).
    public static let failover = DropReason("failover")

    public var description: String { rawValue }
}
