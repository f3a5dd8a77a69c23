import FacewireRuntime
import Foundation
import Logging

/// Several capture nodes in one process (`--source` and `--stream` given once per camera): each is a whole node of its
/// own — its frame socket, epoch, hellos, requests and control connection to the collector, its ZeroMQ context — run
/// on a thread of its own; they share only the process, its `/metrics` and `/healthz`. A host with many cameras so
/// runs one process instead of one per camera (each Swift process costs its runtime and threads: 100 of them did not
/// fit two cores in the fleet simulation, 20 did; BENCHMARKS "Fleet simulation").
///
/// A node whose source ends, or that fails, ends alone: the others go on. ``run(stop:)`` returns when every node has
/// ended, and throws if any failed.
public final class CaptureGroup: @unchecked Sendable {
    /// The most nodes one process runs (each holds a thread, a ZeroMQ context with its I/O thread, and sockets).
    public static let maxNodes = 256

    public let nodes: [CaptureNode]
    private let logger: Logger
    private let lock = NSLock()
    private var ended: Set<String> = []
    private var failures: [String] = []

    /// One node per configuration; each logs with its `stream` in the metadata.
    public init(configurations: [CaptureConfiguration], logger: Logger) throws {
        guard (1...Self.maxNodes).contains(configurations.count) else {
            throw NodeError("a capture process runs 1...\(Self.maxNodes) nodes, not \(configurations.count)")
        }
        let streams = configurations.map(\.stream)
        guard Set(streams).count == streams.count else { throw NodeError("each capture node needs its own --stream") }
        nodes = try configurations.map { configuration in
            var nodeLogger = logger
            nodeLogger[metadataKey: "stream"] = .string(configuration.stream)
            return try CaptureNode(configuration: configuration, logger: nodeLogger)
        }
        self.logger = logger
    }

    /// Healthy while every node still running is; a node that ended (its source finished) no longer counts.
    public func health() -> Health {
        let finished = lock.withLock { ended }
        let running = nodes.filter { !finished.contains($0.configuration.stream) }
        let sick = running.compactMap { node -> String? in
            let health = node.liveness.health()
            return health.healthy ? nil : "\(node.configuration.stream): \(health.detail)"
        }
        guard sick.isEmpty else { return Health(healthy: false, detail: sick.joined(separator: "; ")) }
        return Health(healthy: true, detail: "\(running.count) of \(nodes.count) capture nodes running")
    }

    /// Runs every node on a thread of its own until each has ended (its source finished, or `stop` set).
    public func run(stop: StopToken) throws {
        let done = DispatchGroup()
        for node in nodes {
            let stream = node.configuration.stream
            done.enter()
            let thread = Thread { [self] in
                defer {
                    lock.withLock { _ = ended.insert(stream) }
                    done.leave()
                }
                do {
                    try node.run(stop: stop)
                } catch {
                    lock.withLock { failures.append("\(stream): \(error)") }
                    logger.error("capture node failed; the others go on", metadata: ["stream": "\(stream)", "error": "\(error)"])
                }
            }
            thread.name = "capture \(stream)"
            thread.start()
        }
        done.wait()
        let failed = lock.withLock { failures }
        if !failed.isEmpty {
            throw NodeError("\(failed.count) of \(nodes.count) capture nodes failed: \(failed.joined(separator: "; "))")
        }
    }
}
