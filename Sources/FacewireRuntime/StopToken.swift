import Foundation

/// A flag that tells a node's threads to stop, plus the actions to run when it is set
/// (for example shutting down a ZeroMQ context so blocked receives return at once).
///
/// Thread-safe.
public final class StopToken: @unchecked Sendable {
    private let lock = NSLock()
    private var stopped = false
    private var actions: [@Sendable () -> Void] = []

    public init() {}

    /// Whether ``stop()`` was called.
    public var isStopped: Bool {
        lock.withLock { stopped }
    }

    /// Sets the flag and runs every registered action once.
    public func stop() {
        let toRun: [@Sendable () -> Void] = lock.withLock {
            if stopped { return [] }
            stopped = true
            defer { actions = [] }
            return actions
        }
        for action in toRun { action() }
    }

    /// Runs `action` when the token is stopped (at once if it already is).
    public func onStop(_ action: @escaping @Sendable () -> Void) {
        let runNow: Bool = lock.withLock {
            if stopped { return true }
            actions.append(action)
            return false
        }
        if runNow { action() }
    }

    /// Sleeps for up to `seconds`, returning early (false) once the token is stopped.
    @discardableResult
    public func sleep(seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !isStopped {
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { return true }
            Thread.sleep(forTimeInterval: min(left, 0.05))
        }
        return false
    }
}
