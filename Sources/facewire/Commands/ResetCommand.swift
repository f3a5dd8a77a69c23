import ArgumentParser
import FacewireProtocol
import FacewireRuntime
import FacewireTail
import Foundation

struct ResetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset",
        abstract: "Restart face tracking on a stream: live tracks end, new faces get new tracking IDs.",
        discussion: """
            Like Affdex's reset: every live track of the stream ends (a faceLeft event each), tracking frame \
            counts start again, and faces seen from then on get new tracking IDs (IDs are never reused within an \
            epoch). The stream carries a trackingReset line where the reset took effect. Exits 1 when the \
            collector has no open stream of that name, 2 when it does not answer.
            """
    )

    @Option(help: CollectorList.help)
    var collector: String

    @Option(help: "The stream to reset (default: every open stream).")
    var stream: String?

    @Option(help: "Seconds to wait for the collector's answer.")
    var timeout: Double = 5

    @OptionGroup(title: "Security (CURVE)") var curve: CurveOptions

    func validate() throws {
        if let stream, !Wire.isValidStreamID(stream) {
            throw ValidationError("--stream must be 1 to 64 characters of A-Z a-z 0-9 . _ -")
        }
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
        try CollectorList.validate(collector)
    }

    func run() throws {
        let streams: [String]
        let security = try curve.security(needs: .serverKey)
        do {
            streams = try ResetClient.reset(collector: ShardMap.flattened(collector), stream: stream ?? "", timeoutSeconds: timeout, security: security)
        } catch {
            FileHandle.standardError.write(Data("facewire reset: \(error)\n".utf8))
            throw ExitCode(2)
        }
        if streams.isEmpty {
            let what = stream.map { "no open stream named '\($0)'" } ?? "no open stream"
            FileHandle.standardError.write(Data("facewire reset: the collector has \(what)\n".utf8))
            throw ExitCode(1)
        }
        print("reset: " + streams.joined(separator: ", "))
    }
}
