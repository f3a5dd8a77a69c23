/// What one step of a pure core asks its shell to do, in order: the core's own actions (messages to send, things to
/// show), counters to add to, and log lines. Every core (capture, worker, collector, view) answers each input with one
/// of these, so a shell is one loop that feeds inputs in and carries effects out, and a test reads what happened from
/// the value alone.
///
/// `Action` is the core's own vocabulary (a capture node's frames and control messages, the collector's published
/// messages and replies, ...); counters and logs are the same for every core.
public struct Effects<Action> {
    /// The core's actions, in the order it decided them.
    public var actions: [Action] = []
    /// Counter increments, in order. Names are fixed strings chosen by the core, never network data.
    public var counts: [Count] = []
    /// Log lines, in order.
    public var logs: [LogLine] = []

    /// No effects.
    public init() {}

    /// One counter increment.
    public typealias Count = CounterIncrement

    /// Adds an action.
    public mutating func act(_ action: Action) { actions.append(action) }

    /// Adds `amount` to counter `name`.
    public mutating func count(_ name: String, _ amount: UInt64 = 1) { counts.append(Count(name, amount)) }

    /// Adds a log line.
    public mutating func log(_ level: LogLine.Level, _ message: String, _ metadata: [String: String] = [:]) {
        logs.append(LogLine(level, message, metadata))
    }

    /// The total added to counter `name`, saturating at `UInt64.max` like the runtime's counters.
    public func total(_ name: String) -> UInt64 {
        counts.reduce(0) { $1.name == name ? $0.addingClamped($1.amount) : $0 }
    }

    /// The counter names added to, in order (a name once per increment).
    public var countedNames: [String] { counts.map(\.name) }
}

extension Effects: Sendable where Action: Sendable {}

/// One counter increment a core asks for: a fixed name chosen by the core, never network data.
public struct CounterIncrement: Sendable, Equatable {
    public var name: String
    public var amount: UInt64

    public init(_ name: String, _ amount: UInt64 = 1) {
        self.name = name
        self.amount = amount
    }
}

/// One log line a core asks its shell to write. Metadata values are strings the core built; a value that came from the
/// network is bounded by the core before it gets here.
public struct LogLine: Equatable, Sendable {
    /// The levels a core uses (the shell maps them onto its logger's).
    public enum Level: Sendable, Equatable { case debug, info, notice, warning, error }

    public var level: Level
    public var message: String
    public var metadata: [String: String]

    public init(_ level: Level, _ message: String, _ metadata: [String: String] = [:]) {
        self.level = level
        self.message = message
        self.metadata = metadata
    }
}
