import Foundation
import Logging
import ServiceLifecycle

/// A node's blocking loop (ZeroMQ receives, OpenCV) as a `Service`: `body` runs on a thread this service owns — never
/// on Swift's cooperative pool — and is asked to stop through its ``StopToken`` when the `ServiceGroup` shuts down
/// gracefully (SIGTERM, SIGINT, another part that ended) or is cancelled. `run()` returns when `body` does, so a
/// node's drain (a worker finishing the frames in hand, a collector syncing its output) completes before the group
/// goes on. An error `body` throws is logged with the part's name and rethrown: the group then shuts the node down.
public struct BlockingService: Service, CustomStringConvertible {
    /// The part's name, in logs and as the thread's name.
    public let name: String
    private let stop: StopToken
    private let logger: Logger
    private let body: @Sendable (StopToken) throws -> Void

    /// - Parameters:
    ///   - stop: set on graceful shutdown or cancellation; `body` returns soon after it is set.
    ///   - body: the loop; returns when done or stopped, throws when it cannot go on.
    public init(_ name: String, stop: StopToken, logger: Logger, body: @escaping @Sendable (StopToken) throws -> Void) {
        self.name = name
        self.stop = stop
        self.logger = logger
        self.body = body
    }

    public func run() async throws {
        let (name, stop, logger, body) = (self.name, self.stop, self.logger, self.body)
        do {
            try await withTaskCancellationHandler {
                try await withGracefulShutdownHandler {
                    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                        let thread = Thread {
                            do {
                                try body(stop)
                                continuation.resume()
                            } catch {
                                continuation.resume(throwing: error)
                            }
                        }
                        thread.name = name
                        thread.stackSize = 8 << 20
                        thread.start()
                    }
                } onGracefulShutdown: {
                    if !stop.isStopped { logger.info("stopping", metadata: ["part": "\(name)"]) }
                    stop.stop()
                }
            } onCancel: {
                stop.stop()
            }
        } catch {
            if stop.isStopped {
                // Asked to stop first (a signal, another part that failed): the error may be that stop's doing (a
                // ZeroMQ context shut down under a socket being opened); it still makes the exit non-zero.
                logger.warning("\(name) ended with an error while stopping: \(error)", metadata: ["part": "\(name)"])
            } else {
                logger.error("\(name) failed, stopping the node: \(error)", metadata: ["part": "\(name)"])
            }
            throw error
        }
    }

    public var description: String { name }
}
