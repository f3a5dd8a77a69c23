import ArgumentParser
import FacewireBench
import FacewireProtocol
import Foundation

/// `facewire bench ...`: test tools for the benchmarks (`scripts/bench-collector.py`), like `--detector synthetic`.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Test tools for benchmarks: a collector load generator and a raw libzmq message rate.",
        subcommands: [CollectorLoadCommand.self, ZMQRateCommand.self]
    )
}

/// Prints a report as one JSON line on stdout.
private func printJSON<Report: Encodable>(_ report: Report) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    FileHandle.standardOutput.write(try encoder.encode(report) + Data([0x0A]))
}

struct CollectorLoadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "collector-load",
        abstract: "A test tool: play fake capture nodes and worker threads against a collector, as fast as it takes results.",
        discussion: """
            Each stream is announced by a capture hello (every second) and ended with StreamEnd; fake worker threads \
            send valid processed results (with --faces drifting faces, so tracking works), pre-encoded, at most \
            --window sequences apart and at most --in-flight ahead of what the collector published (counted on its \
            results stream). Prints {"event":"sending"} when the clock starts and, once every stream's summary was \
            published, one JSON line: results, seconds, rate (sent/s), publishedRate, published, waited (fraction of \
            bookings that waited for the collector: near 1 means the collector set the pace), meanBytes.
            """
    )

    @Option(help: "The collector's endpoint.")
    var collector: String

    @Option(help: "The collector's results stream (PUB), where the generator counts what was published.")
    var publish: String

    @Option(help: "Streams (fake capture nodes).")
    var streams: Int = 1

    @Option(help: "Fake worker threads, one results socket each.")
    var threads: Int = 4

    @Option(help: "Results per stream.")
    var frames: UInt64 = 10_000

    @Option(help: "Faces per result.")
    var faces: Int = 2

    @Option(help: "Sequences the fastest thread may run ahead of the slowest (keep it below the collector's --max-pending).")
    var window: UInt64 = 128

    @Option(help: "Results sent but not yet published, at most (closed loop, as credits make a real cluster).")
    var inFlight: UInt64 = 2048

    func validate() throws {
        guard (1...100_000).contains(window) else { throw ValidationError("--window must be 1...100000") }
        guard (1...10_000_000).contains(inFlight) else { throw ValidationError("--in-flight must be 1...10000000") }
    }

    func run() throws {
        let epoch = UInt64(max(1, Clock.wallMicroseconds()))
        let plan: CollectorLoadPlan
        do {
            plan = try CollectorLoadPlan(
                streams: streams, threads: threads, framesPerStream: frames, faces: faces, epoch: epoch, startUs: Clock.wallMicroseconds())
        } catch {
            throw ValidationError("\(error)")
        }
        let load = CollectorLoad(plan: plan, collector: collector, publish: publish, window: window, maxInFlight: inFlight)
        let report = try load.run {
            FileHandle.standardOutput.write(Data(#"{"event":"sending"}"#.utf8 + [0x0A]))
        }
        try printJSON(report)
    }
}

struct ZMQRateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "zmq-rate",
        abstract: "A test tool: messages/s one PUSH carries to one PULL over TCP loopback (two threads), as one JSON line."
    )

    @Option(help: "Messages to send.")
    var messages: Int = 1_000_000

    @Option(help: "Bytes per message.")
    var bytes: Int = 200

    func run() throws {
        try printJSON(try RawMessageRate.measure(messages: messages, bytes: bytes))
    }
}
