import Foundation
import Testing

/// The files in deploy/ against the binary: no container engine or cluster runs here, so this checks what can be
/// checked (deploy/check.py: YAML parses, every flag and FACEWIRE_* variable is an option of the node's role, ports
/// and probes line up, the Containerfile installs what the binary links) and, where systemd is installed, that the
/// units verify and their exposure score.
extension IntegrationTests {
    @Suite("deploy/ files")
    struct DeployFiles {
        static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        static let python = "/usr/bin/python3"
        static var hasYAML: Bool {
            (try? runCommand(python, ["-c", "import yaml"]).status) == 0
        }

        /// A fresh copy of `deploy` in the temporary folder, to plant mistakes in.
        static func copy(_ deploy: URL, as name: String) throws -> URL {
            let broken = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(getpid())")
            try? FileManager.default.removeItem(at: broken)
            try FileManager.default.copyItem(at: deploy, to: broken)
            return broken
        }

        /// Replaces `old` (which must be there) by `new` in `file` of `folder`: every occurrence, or the first.
        static func edit(_ folder: URL, _ file: String, _ old: String, _ new: String, everywhere: Bool) throws {
            let url = folder.appendingPathComponent(file)
            let text = try String(contentsOf: url, encoding: .utf8)
            try #require(text.contains(old), "\(file) no longer contains \(old)")
            let edited = everywhere
                ? text.replacingOccurrences(of: old, with: new)
                : text.replacingOccurrences(of: old, with: new, options: [], range: text.range(of: old))
            try edited.write(to: url, atomically: true, encoding: .utf8)
        }

        @Test("deploy/check.py passes on the repository's files and names every problem it is shown",
              .enabled(if: hasYAML, "needs python3 with PyYAML (python3-yaml, installed by scripts/setup.sh)"),
              .timeLimit(.minutes(15)))
        func manifestsMatchTheBinary() throws {
            let binary = try Locations.facewireBinary()
            let deploy = Self.repository.appendingPathComponent("deploy")
            let good = try runCommand(Self.python, [deploy.appendingPathComponent("check.py").path, "--binary", binary])
            #expect(good.status == 0, "\(good.output)")
            for fragment in ["collector.yaml facewire-collector/collector: --role collector", "workers.yaml", "compose.yaml capture",
                             "facewire-worker@.service", "Containerfile: swift", "collector-pair.yaml facewire-collector/collector: --role collector",
                             "collector-pair.yaml facewire-etcd/etcd: gcr.io/etcd-development/etcd:v3.4.23", "compose-failover.yaml collector-b"] {
                #expect(good.output.contains("checked \(fragment)"), "\(fragment) not checked:\n\(good.output)")
            }

            // A copy with mistakes: an option that does not exist, a port nothing uses, a probe off the metrics port.
            let broken = try Self.copy(deploy, as: "facewire-deploy")
            defer { try? FileManager.default.removeItem(at: broken) }
            func edit(_ file: String, _ old: String, _ new: String) throws { try Self.edit(broken, file, old, new, everywhere: true) }
            try edit("kubernetes/workers.yaml", "\"--threads\", \"1\"", "\"--threads\", \"1\", \"--turbo\"")
            // 5558 is a collector's default (--replication-bind): 5559 is used by nothing.
            try edit("kubernetes/collector.yaml", "containerPort: 5557", "containerPort: 5559")
            try edit("compose-failover.yaml", "etcd:v3.4.23", "etcd:latest")
            try edit("kubernetes/capture.yaml", "port: metrics }, periodSeconds: 5", "port: frames }, periodSeconds: 5")
            try edit("systemd/facewire-worker@.service", "Environment=FACEWIRE_ID=%H-%i", "Environment=FACEWIRE_SPEED=11")
            let bad = try runCommand(Self.python, [deploy.appendingPathComponent("check.py").path, "--binary", binary, "--deploy", broken.path])
            #expect(bad.status == 1)
            for fragment in ["--turbo is not an option of --role worker", "port 5559", "readinessProbe targets 5555", "etcd:latest is not pinned",
                             "FACEWIRE_SPEED (--speed) is not an option of --role worker"] {
                #expect(bad.output.contains(fragment), "'\(fragment)' not reported:\n\(bad.output)")
            }
        }

        static let validatorsVenv: String = {
            let cache = ProcessInfo.processInfo.environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
                ?? NSHomeDirectory() + "/.cache"
            return cache + "/facewire/deploy-venv"
        }()
        static var hasValidators: Bool { FileManager.default.isExecutableFile(atPath: validatorsVenv + "/bin/hadolint") }

        @Test("the manifests pass kubernetes-validate --strict, the Containerfile hadolint, the YAML yamllint; each catches a planted mistake",
              .enabled(if: hasValidators, "needs the validators' venv (scripts/setup.sh --with-bench, or deploy/validate.py --venv-only)"),
              .timeLimit(.minutes(5)))
        func validators() throws {
            let deploy = Self.repository.appendingPathComponent("deploy")
            let script = deploy.appendingPathComponent("validate.py").path
            let good = try runCommand(Self.python, [script])
            #expect(good.status == 0, "\(good.output)")
            #expect(good.output.contains("passed for resource statefulset/facewire-collector against version 1.33"), "\(good.output)")
            #expect(good.output.contains("== hadolint: ok") && good.output.contains("== yamllint: ok"), "\(good.output)")

            let broken = try Self.copy(deploy, as: "facewire-validate")
            defer { try? FileManager.default.removeItem(at: broken) }
            func edit(_ file: String, _ old: String, _ new: String) throws { try Self.edit(broken, file, old, new, everywhere: false) }
            // A field a container does not have (strict refuses it), a `cd` in a RUN (hadolint DL3003), trailing
            // spaces (yamllint).
            try edit("kubernetes/workers.yaml", "          image: facewire:latest", "          image: facewire:latest\n          turbo: true")
            try edit("Containerfile", "WORKDIR /src", "WORKDIR /src\nRUN cd /tmp && touch x")
            try edit("compose.yaml", "services:", "services:   # trailing spaces follow  ")
            let bad = try runCommand(Self.python, [script, "--deploy", broken.path])
            #expect(bad.status == 1, "\(bad.output)")
            for fragment in ["== kubernetes-validate: FAILED", "turbo", "== hadolint: FAILED", "DL3003", "== yamllint: FAILED", "trailing-spaces"] {
                #expect(bad.output.contains(fragment), "'\(fragment)' not reported:\n\(bad.output)")
            }
        }

        /// Whether docker runs here (deploy/container-test.py --check starts a stopped dockerd); the reason when not.
        static let docker: (ready: Bool, reason: String) = {
            guard let binary = try? Locations.facewireBinary(),
                let check = try? runCommand(python, [repository.appendingPathComponent("deploy/container-test.py").path, "--binary", binary, "--check"])
            else { return (false, "cannot run deploy/container-test.py") }
            return (check.status == 0, check.output.trimmingCharacters(in: .whitespacesAndNewlines))
        }()

        @Test("deploy/compose.yaml in real containers: 4 workers, one killed, the stream in order with every frame accounted; hardened containers",
              .enabled(if: docker.ready, Comment(rawValue: "docker cannot run here: \(docker.reason)")),
              .timeLimit(.minutes(15)))
        func composeClusterInContainers() throws {
            let run = try runCommand(Self.python, [
                Self.repository.appendingPathComponent("deploy/container-test.py").path, "--binary", try Locations.facewireBinary(),
            ])
            #expect(run.status == 0, "\(run.output.suffix(4000))")
            #expect(run.output.contains("one of 4 workers killed"), "\(run.output.suffix(2000))")
            #expect(run.output.contains("every container: uid 10001, read-only root filesystem"), "\(run.output.suffix(2000))")
        }

        @Test("the systemd units verify, and their exposure is rated OK",
              .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze"), "needs systemd-analyze"),
              .timeLimit(.minutes(15)))
        func systemdUnits() throws {
            let binary = try Locations.facewireBinary()
            let units = FileManager.default.temporaryDirectory.appendingPathComponent("facewire-units-\(getpid())")
            try? FileManager.default.removeItem(at: units)
            try FileManager.default.createDirectory(at: units, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: units) }
            let source = Self.repository.appendingPathComponent("deploy/systemd")
            var names: [String] = []
            for name in try FileManager.default.contentsOfDirectory(atPath: source.path) where name.hasSuffix(".service") {
                // Point ExecStart at the built binary: verify checks that it exists.
                let text = try String(contentsOf: source.appendingPathComponent(name), encoding: .utf8)
                try text.replacingOccurrences(of: "/usr/local/bin/facewire", with: binary)
                    .write(to: units.appendingPathComponent(name), atomically: true, encoding: .utf8)
                names.append(units.appendingPathComponent(name).path)
            }
            #expect(names.count == 4, "collector, worker, capture and view units: \(names)")
            let verify = try runCommand("/usr/bin/systemd-analyze", ["verify", "--man=no"] + names)
            #expect(verify.status == 0 && verify.output.isEmpty, "\(verify.output)")
            for name in names {
                let security = try runCommand("/usr/bin/systemd-analyze", ["security", "--offline=true", name])
                let verdict = security.output.split(separator: "\n").last.map(String.init) ?? ""
                print("[systemd] \(verdict)")
                #expect(verdict.contains(" OK ") || verdict.contains("SAFE"), "\(name): \(verdict)")
            }
        }
    }
}
