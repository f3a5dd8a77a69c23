import ArgumentParser
import FacewireCollector
import FacewireProtocol

struct CollectorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "collector",
        abstract: "Merge results per stream in frame order, assign tracking IDs and publish the stream.",
        discussion: """
            The one address other nodes need. A frame that has not come back --max-delay ms after a later frame \
            of its stream is emitted as dropped; a result that arrives after that is discarded and counted.
            """
    )

    @Option(help: "Control endpoint (hellos and results).")
    var bind: String = "tcp://*:\(Wire.defaultCollectorPort)"

    @Option(help: "Results stream endpoint (PUB) for tails and other subscribers.")
    var publish: String = "tcp://*:\(Wire.defaultPublishPort)"

    @Option(help: "Milliseconds to wait for a missing frame once a later one is known.")
    var maxDelay: Int = 1000

    @Option(help: "Results held per stream while an earlier frame is missing.")
    var maxPending: Int = 256

    @Option(help: "Seconds a face that is no longer seen keeps its tracking ID (capture time).")
    var trackMaxAge: Double = 1.0

    @Option(help: "Frames a face must be seen in before it gets a tracking ID and a faceAppeared event.")
    var trackMinHits: Int = 1

    @OptionGroup var log: LogOptions

    func validate() throws {
        guard maxDelay >= 0 else { throw ValidationError("--max-delay must not be negative") }
        guard maxPending >= 1 else { throw ValidationError("--max-pending must be at least 1") }
        guard trackMaxAge >= 0, trackMaxAge.isFinite else { throw ValidationError("--track-max-age must be >= 0 seconds") }
        guard (1...1000).contains(trackMinHits) else { throw ValidationError("--track-min-hits must be in 1...1000") }
    }

    func run() throws {
        let logger = try log.makeLogger("facewire.collector")
        let node = CollectorNode(
            configuration: CollectorConfiguration(
                bind: bind, publish: publish, maxDelayMilliseconds: maxDelay, maxPending: maxPending,
                tracking: FaceTracker.Configuration(maxAge: trackMaxAge, minHits: trackMinHits)),
            logger: logger
        )
        try NodeRunner.run(logger: logger) { stop in try node.run(stop: stop) }
    }
}
