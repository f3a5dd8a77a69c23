import ArgumentParser
import FacewireProtocol
import FacewireTail
import Foundation

struct TailCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tail",
        abstract: "Print the collector's ordered results as JSON Lines, one line per frame.",
        discussion: "Each line is flushed as it is written. See protocol/SPEC.md for every field."
    )

    @Option(help: "The collector's endpoint, e.g. tcp://collector-host:\(Wire.defaultCollectorPort).")
    var collector: String?

    @Option(help: "The results stream endpoint directly, instead of asking the collector.")
    var publish: String?

    @Option(help: "Only these streams (repeat for several; default: all).")
    var stream: [String] = []

    @Flag(help: "Also print face-appeared / face-left events and end-of-stream lines.")
    var events: Bool = false

    @Flag(help: "Exit when a stream ends (with one --stream: that stream).")
    var exitOnEnd: Bool = false

    @Option(help: "Exit after this many frame lines.")
    var frames: Int?

    @OptionGroup var log: LogOptions

    func validate() throws {
        if collector == nil && publish == nil { throw ValidationError("give --collector or --publish") }
    }

    func run() throws {
        let logger = try log.makeLogger("facewire.tail")
        let client = TailClient(configuration: .init(collector: collector, publish: publish, streams: stream), logger: logger)
        let printer = LinePrinter(events: events)
        var printed = 0
        try NodeRunner.run(logger: logger) { stop in
            try client.run(stop: stop) { message in
                let outcome = printer.print(message)
                if outcome == .frame { printed += 1 }
                if let frames, printed >= frames { return .stop }
                if exitOnEnd, outcome == .end { return .stop }
                return .continue
            }
        }
    }
}

/// Writes stream messages to stdout as JSON Lines, flushing each line.
struct LinePrinter {
    enum Outcome { case frame, event, end }
    var events: Bool

    @discardableResult
    func print(_ message: StreamMessage) -> Outcome {
        switch message.body {
        case .frame(let frame):
            write(JSONLines.line(for: frame))
            return .frame
        case .event(let event):
            if events { write(JSONLines.line(for: event, stream: message.stream, epoch: message.epoch)) }
            return .event
        case .end(let summary):
            if events { write(JSONLines.line(for: summary, stream: message.stream, epoch: message.epoch)) }
            return .end
        case .none:
            return .event
        }
    }

    private func write(_ line: String) {
        // One write(2) per line: nothing sits in a buffer while someone downstream waits for it.
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
