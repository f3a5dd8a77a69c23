import CoreMetrics
import Foundation
import Hummingbird
import HummingbirdCore
import Logging

/// Hummingbird's connection limit with the node's rules for caps: each time the limit is reached it is counted
/// (`facewire_http_connections_capped_total`) and logged at most once per `logInterval`.
struct ConnectionCap: AvailableConnectionsDelegate {
    private let limit: Int
    private let state: SharedState
    private var open = 0

    /// What the delegate's copies share: the counter and when the cap was last logged.
    private final class SharedState: @unchecked Sendable {
        let lock = NSLock()
        let logger: Logger
        let counter = Counter(label: "facewire_http_connections_capped_total")
        let logInterval: Duration
        var lastLogged: ContinuousClock.Instant?
        var sinceLog = 0

        init(logger: Logger, logInterval: Duration) {
            self.logger = logger
            self.logInterval = logInterval
        }
    }

    init(limit: Int, logger: Logger, logInterval: Duration = .seconds(10)) {
        self.limit = max(1, limit)
        state = SharedState(logger: logger, logInterval: logInterval)
    }

    mutating func connectionOpened() { open += 1 }

    mutating func connectionClosed() { open = max(0, open - 1) }

    func isAcceptingNewConnections() -> Bool {
        guard open >= limit else { return true }
        state.counter.increment()
        let now = ContinuousClock.now
        let hits: Int? = state.lock.withLock {
            state.sinceLog += 1
            if let last = state.lastLogged, now - last < state.logInterval { return nil }
            state.lastLogged = now
            defer { state.sinceLog = 0 }
            return state.sinceLog
        }
        if let hits {
            state.logger.warning(
                "http: connection cap reached; new connections wait until one closes",
                metadata: ["max_connections": "\(limit)", "times": "\(hits)"])
        }
        return false
    }
}
