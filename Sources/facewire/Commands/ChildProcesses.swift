import FacewireRuntime
import Foundation
import Logging

/// The node processes `facewire --role local` runs, stopped together.
///
/// Thread-safe: children exit on Foundation's threads, and everything their termination handlers touch is read and
/// written under one lock (``failure``) or set once before any child starts (``onUnexpectedExit``).
final class ChildProcesses: @unchecked Sendable {
    private let executable: String
    private let logger: Logger
    private let lock = NSLock()
    private var children: [(name: String, process: Process)] = []
    private var stopping = false
    private var firstFailure: Int32?
    /// Called when a child that should run until stopped exits, or one that may exit fails (on the thread that saw it).
    private let onUnexpectedExit: @Sendable (String, Int32) -> Void

    /// - Parameter onUnexpectedExit: called with the child's name and exit status when a child that should run until
    ///   stopped exits, or one that may exit fails; not called for exits caused by ``terminateAll()``.
    init(executable: String, logger: Logger, onUnexpectedExit: @escaping @Sendable (String, Int32) -> Void = { _, _ in }) {
        self.executable = executable
        self.logger = logger
        self.onUnexpectedExit = onUnexpectedExit
    }

    /// The exit status of the first child that failed, if any.
    var failure: Int32? {
        lock.withLock { firstFailure }
    }

    /// Starts `facewire ARGUMENTS` as child `name`.
    /// - Parameters:
    ///   - mayExit: the child ends by itself (the capture node at the end of a file); only a failure counts.
    ///   - inheritsInput: the child reads this process's standard input (`--source -`).
    func start(_ name: String, _ arguments: [String], mayExit: Bool = false, inheritsInput: Bool = false) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ParentLifeline.childEnvironment()  // it ends with this process, however this one ends
        process.standardInput = inheritsInput ? FileHandle.standardInput : FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.terminationHandler = { [weak self] process in
            guard let self else { return }
            let status = process.terminationStatus
            let isStopping: Bool = lock.withLock {
                if !stopping, status != 0 || !mayExit, firstFailure == nil { firstFailure = status == 0 ? 1 : status }
                return stopping
            }
            if !isStopping, status != 0 || !mayExit { onUnexpectedExit(name, status) }
        }
        try process.run()
        logger.debug("started \(name)", metadata: ["pid": "\(process.processIdentifier)"])
        lock.withLock { children.append((name, process)) }
    }

    /// Waits up to `seconds` for child `name` to exit; returns whether it has (true also for an unknown name).
    func waitForExit(_ name: String, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let running = lock.withLock { children.contains { $0.name == name && $0.process.isRunning } }
            if !running { return true }
            if Date() >= deadline { return false }
            usleep(20_000)
        }
    }

    /// SIGTERM to every child, then SIGKILL to those still running after three seconds.
    func terminateAll() {
        let running = lock.withLock {
            stopping = true
            return children.map(\.process).filter(\.isRunning)
        }
        running.forEach { $0.terminate() }
        let deadline = Date().addingTimeInterval(3)
        while running.contains(where: \.isRunning), Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        for process in running where process.isRunning { kill(process.processIdentifier, SIGKILL) }
        running.forEach { $0.waitUntilExit() }
    }
}
