import ArgumentParser
import FacewireProtocol
import FacewireTail
import Foundation

struct TailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tail",
        abstract: "Print the collector's ordered results, one line per frame: JSON Lines, or text for people.",
        discussion: """
            Each line is flushed as it is written. See protocol/SPEC.md for every field of the JSON lines. \
            --format text prints a one-line summary per frame: stream, seq, status, latency, and per face its \
            tracking ID, box, roll, yaw, smile and eyes (o open, - closed; image-left first).
            """
    )

    @Option(help: CollectorList.help)
    var collector: String?

    @Option(help: "The results stream endpoint directly, instead of asking the collector.")
    var publish: String?

    @Option(help: "Only these streams (repeat for several; default: all).")
    var stream: [String] = []

    @OptionGroup(title: "Output") var output: OutputOptions

    @Flag(help: "Exit when a stream ends (with one --stream: that stream).")
    var exitOnEnd: Bool = false

    @Option(help: "Exit after this many frame messages, printed or not (a filtered frame counts; a dropped run counts once).")
    var frames: Int?

    @OptionGroup(title: "Security (CURVE)") var curve: CurveOptions
    @OptionGroup(title: "Metrics") var metrics: MetricsOptions
    @OptionGroup var log: LogOptions

    func validate() throws {
        if collector == nil && publish == nil { throw ValidationError("give --collector or --publish") }
        try CollectorList.validate(collector)
    }

    func run() async throws {
        let logger = try log.makeLogger("facewire.tail")
        metrics.bootstrapIfNeeded()
        let client = TailClient(
            configuration: .init(collector: collector.map(ShardMap.flattened), publish: publish, streams: stream, security: try curve.security(needs: .serverKey)),
            logger: logger)
        let printer = output.printer
        let (frames, exitOnEnd) = (self.frames, self.exitOnEnd)
        let server = metrics.server(logger: logger) { client.liveness.health() }
        try await NodeRunner.run("tail", logger: logger, server: server) { stop in
            var printed = 0
            try client.run(stop: stop) { message in
                let outcome = printer.print(message)
                if outcome == .frame { printed += 1 }
                if let frames, printed >= frames { return .stop }  // frames seen, printed or filtered
                if exitOnEnd, outcome == .end { return .stop }
                return .continue
            }
        }
    }
}

/// What the ordered stream is printed as (`tail` and `local`).
struct OutputOptions: ParsableArguments {
    @Flag(help: "Also print face-appeared / face-left events, tracking resets and end-of-stream lines.")
    var events: Bool = false

    @Flag(help: "Print only the events and end-of-stream lines (no frame lines).")
    var eventsOnly: Bool = false

    @Flag(help: "Print only frames with at least one face (and, with --events, the events).")
    var facesOnly: Bool = false

    @Flag(help: "Also print each stream's statistics, every --stats-interval seconds of the collector.")
    var statistics: Bool = false

    @Option(help: "Output format: json (JSON Lines, for programs) or text (one readable line per frame).")
    var format: String = "json"

    func validate() throws {
        guard LinePrinter.Format(rawValue: format) != nil else {
            throw ValidationError("--format must be json or text, not '\(format)'")
        }
    }

    var printer: LinePrinter {
        LinePrinter(
            events: events || eventsOnly, format: LinePrinter.Format(rawValue: format) ?? .json, frames: !eventsOnly,
            facesOnly: facesOnly, statistics: statistics)
    }
}

/// Writes stream messages to stdout as JSON Lines or text, flushing each line.
struct LinePrinter {
    /// `closed`: the line could not be written because nobody reads the standard output any more (EPIPE; only
    /// seen where SIGPIPE is ignored, as `local` does, since SIGPIPE ends the process first otherwise).
    enum Outcome { case frame, event, end, closed }
    enum Format: String { case json, text }
    var events: Bool
    var format: Format = .json
    /// Whether frame lines are printed at all.
    var frames: Bool = true
    /// Whether frames without faces are left out.
    var facesOnly: Bool = false
    /// Whether statistics windows are printed.
    var statistics: Bool = false

    @discardableResult
    func print(_ message: StreamMessage) -> Outcome {
        let outcome: Outcome
        let wanted: Bool
        switch message.body {
        case .frame(let frame):
            outcome = .frame
            wanted = frames && (!facesOnly || !frame.faces.isEmpty)
        case .event:
            outcome = .event
            wanted = events
        case .end:
            outcome = .end
            wanted = events
        case .reset:
            outcome = .event
            wanted = events
        case .statistics:
            outcome = .event
            wanted = statistics
        case .none:
            return .event
        }
        guard wanted else { return outcome }
        // One write(2) per line: nothing sits in a buffer while someone downstream waits for it. JSON goes straight
        // into the bytes written (no String).
        var line = JSONBuffer()
        switch format {
        case .json:
            guard JSONLines.write(message, into: &line) else { return outcome }
        case .text:
            guard let text = TextLines.line(for: message) else { return outcome }
            line.append(text: text)
        }
        line.append(byte: 0x0A)
        // A closed pipe ends the process (SIGPIPE), as for any filter, unless SIGPIPE is ignored.
        if line.write(to: STDOUT_FILENO) == EPIPE { return .closed }
        return outcome
    }
}
