import Foundation

/// Threads a node owns for its blocking loops (ZeroMQ receives, OpenCV), outside Swift's cooperative pool.
public final class NodeThreads: @unchecked Sendable {
    private let group = DispatchGroup()
    private let lock = NSLock()
    private var failures: [String] = []

    public init() {}

    /// Starts `body` on a new thread named `name`. An error it throws is recorded and reported by ``join()``.
    public func spawn(_ name: String, _ body: @escaping @Sendable () throws -> Void) {
        group.enter()
        let thread = Thread { [self] in
            defer { group.leave() }
            do {
                try body()
            } catch {
                lock.withLock { failures.append("\(name): \(error)") }
            }
        }
        thread.name = name
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Waits at most `seconds` for every spawned thread to finish.
    /// - Returns: whether they all have.
    public func finished(within seconds: Double) -> Bool {
        group.wait(timeout: .now() + seconds) == .success
    }

    /// Waits for every spawned thread to finish.
    /// - Returns: the errors they threw, as "thread: error" lines.
    @discardableResult
    public func join() -> [String] {
        group.wait()
        return lock.withLock { failures }
    }
}

/// A short id for a node, unique across a cluster: `host:pid-rrrrrr`, with six random hex digits. Host and pid alone
/// collide where containers share the host's name and each runs as pid 1 (Docker's `--network host`, Kubernetes'
/// `hostNetwork`): two workers would then give their threads the same ids, which SPEC 3.1 forbids.
public func defaultNodeID() -> String {
    let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "host"
    let suffix = String(UInt32.random(in: 0..<(1 << 24)), radix: 16)
    return "\(host):\(getpid())-\(String(repeating: "0", count: 6 - suffix.count))\(suffix)"
}
