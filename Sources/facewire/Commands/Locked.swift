import Foundation

/// A value shared between a node's loop thread and the command that started it, read and written under a lock.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) {
        stored = value
    }

    var value: Value { lock.withLock { stored } }

    func set(_ value: Value) {
        lock.withLock { stored = value }
    }

    /// Changes the value in place, under the lock.
    func update(_ change: (inout Value) -> Void) {
        lock.withLock { change(&stored) }
    }
}
