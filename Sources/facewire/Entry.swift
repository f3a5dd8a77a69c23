import ArgumentParser
import FacewireCapture
import FacewireRuntime
import FacewireTesting
import Foundation

/// `facewire --role ROLE [options]`: rewrites the role flag (or `FACEWIRE_ROLE`) into a subcommand so that
/// every role has its own `--help`, and turns `FACEWIRE_*` environment variables into flags the command line
/// did not give.
@main
enum Entry {
    static func main() async {
        // Cameras named by FACEWIRE_V4L2_SIMULATION come from the simulated V4L2 device (tests on machines without
        // a camera; see V4L2Backends).
        V4L2Backends.makeSimulation = { try SimulatedV4L2(scriptFile: $0) }
        // A child of `local` or of a benchmark script ends with it (ParentLifeline).
        ParentLifeline.watchIfAsked()
        var arguments = Array(CommandLine.arguments.dropFirst())
        let environment = ProcessInfo.processInfo.environment
        var role: String?
        if let index = arguments.firstIndex(where: { $0 == "--role" || $0.hasPrefix("--role=") }) {
            if arguments[index] == "--role" {
                guard index + 1 < arguments.count else {
                    FacewireCommand.exit(withError: ValidationError("--role needs a value: \(Role.allNames)"))
                }
                role = arguments[index + 1]
                arguments.removeSubrange(index...(index + 1))
            } else {
                role = String(arguments[index].dropFirst("--role=".count))
                arguments.remove(at: index)
            }
        } else if let first = arguments.first, Role(rawValue: first) != nil || ["detect", "eval", "reset", "keygen", "bench", "snapshot"].contains(first) {
            role = arguments.removeFirst()
        } else if let fromEnvironment = environment["FACEWIRE_ROLE"], !fromEnvironment.isEmpty,
            !arguments.contains("--help"), !arguments.contains("-h")
        {
            role = fromEnvironment
        }
        if let role {
            guard let command = FacewireCommand.configuration.subcommands.first(where: { $0._commandName == role }) else {
                FacewireCommand.exit(withError: ValidationError("unknown role '\(role)': use one of \(Role.allNames)"))
            }
            arguments = [role] + EnvironmentFlags.arguments(for: command, given: arguments, environment: environment) + arguments
        }
        await FacewireCommand.main(arguments)
    }
}

/// The roles `--role` accepts.
enum Role: String, CaseIterable, ExpressibleByArgument {
    case capture, worker, collector, tail, local, view

    static var allNames: String { allCases.map(\.rawValue).joined(separator: "|") }
}

struct FacewireCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "facewire",
        abstract: "A distributed face-analysis cluster for live video. Version \(BuildInfo.description).",
        discussion: """
            Start any node with a role: facewire --role capture|worker|collector|tail|local|view [options]
            Each role has its own help: facewire --role worker --help. facewire detect --source FILE analyses a file \
            in one process, without a cluster; \
            facewire reset --collector ENDPOINT --stream ID restarts tracking on a stream; \
            facewire snapshot --collector ENDPOINT --stream ID -o FILE.jpg saves a frame with its faces drawn in; facewire keygen NAME \
            makes a CURVE key pair. facewire bench collector-load|zmq-rate are test tools for the benchmarks.
            Every option can also be set with an environment variable: --max-delay 500 is FACEWIRE_MAX_DELAY=500,
            --loop is FACEWIRE_LOOP=1; the command line wins.
            """,
        version: "facewire \(BuildInfo.description)",
        subcommands: [
            CaptureCommand.self, WorkerCommand.self, CollectorCommand.self, TailCommand.self, LocalCommand.self,
            ViewCommand.self, SnapshotCommand.self, DetectCommand.self, EvalCommand.self, ResetCommand.self, KeygenCommand.self, BenchCommand.self,
        ]
    )
}

/// Maps `FACEWIRE_SOME_OPTION=value` to `--some-option value` for the options a command declares.
enum EnvironmentFlags {
    static func arguments(for command: ParsableCommand.Type, given: [String], environment: [String: String]) -> [String] {
        let help = command.helpMessage(columns: 400)
        var result: [String] = []
        for (key, value) in environment.sorted(by: { $0.key < $1.key }) where key.hasPrefix("FACEWIRE_") && key != "FACEWIRE_ROLE" {
            let name = "--" + key.dropFirst("FACEWIRE_".count).lowercased().replacingOccurrences(of: "_", with: "-")
            guard !given.contains(where: { $0 == name || $0.hasPrefix(name + "=") }) else { continue }
            // The option's own line in the help ("  --source <source>   …"), not a mention of it in the discussion
            // ("Give --source and --stream once per camera": that mention once made FACEWIRE_SOURCE do nothing).
            guard let declaration = help.split(separator: "\n").lazy.map({ $0.drop(while: { $0 == " " }) })
                .first(where: { $0.hasPrefix(name + " ") || $0 == name })
            else { continue }
            let takesValue = declaration.dropFirst(name.count).hasPrefix(" <")
            if takesValue {
                result += [name, value]
            } else if ["1", "true", "yes", "on"].contains(value.lowercased()) {
                result.append(name)
            }
        }
        return result
    }
}
