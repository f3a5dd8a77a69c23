import FacewireRuntime
import Foundation
import Testing

/// The collector's MQTT output against a real broker (Debian's mosquitto): every event the tail prints arrives once,
/// and the events of a stream that ran while the broker was down arrive when it is back.
extension IntegrationTests {
    @Suite("MQTT out, against a real mosquitto")
    struct MQTT {
        static var hasBroker: Bool {
            FileManager.default.isExecutableFile(atPath: "/usr/sbin/mosquitto")
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/mosquitto_sub")
        }

        /// The event lines of the tail's output.
        static func events(_ lines: [String]) -> [String] {
            lines.filter { $0.contains("\"event\":\"face") || $0.contains("\"event\":\"streamEnded\"") || $0.contains("\"event\":\"trackingReset\"") }
        }

        @Test("every faceAppeared, faceLeft and streamEnded the tail prints arrives on the broker once; after a broker restart the spooled ones arrive",
              .enabled(if: hasBroker, "needs mosquitto and mosquitto-clients (scripts/setup.sh installs them)"),
              .timeLimit(.minutes(10)))
        func eventsReachTheBrokerAcrossARestart() async throws {
            let cluster = try TestCluster("mqtt")
            defer { cluster.cleanup() }
            let frames = try CurveClusters.frames(in: cluster.directory, count: 20)
            let ports = try freeLoopbackPorts(5)
            let brokerPort = ports[4]
            let conf = cluster.directory.appendingPathComponent("mosquitto.conf")
            // Persistence keeps the subscriber's session (and what is queued for it) across the broker's restart; as
            // root, mosquitto would otherwise become user mosquitto, who cannot write the test's folder.
            try """
                listener \(brokerPort) 127.0.0.1
                allow_anonymous true
                persistence true
                persistence_location \(cluster.directory.path)/
                autosave_interval 1
                user root


                """.write(to: conf, atomically: true, encoding: .utf8)
            var broker = try cluster.launch("mosquitto", executable: "/usr/sbin/mosquitto", ["-c", conf.path])
            _ = try await broker.waitForLine(containing: "running")
            // Line-buffered (stdbuf): mosquitto_sub's stdio would hold its lines in a buffer until it exits.
            let subscriber = try cluster.launch("mosquitto_sub", executable: "/usr/bin/stdbuf", [
                "-oL", "/usr/bin/mosquitto_sub", "-h", "127.0.0.1", "-p", String(brokerPort), "-c", "-i", "facewire-it-\(getpid())", "-q", "1", "-d", "-v",
                "-t", "facewire/+/events", "-t", "facewire/+/status",
            ])
            _ = try await subscriber.waitForLine(containing: "received SUBACK", in: .stdout)

            let control = "tcp://127.0.0.1:\(ports[0])"
            let spool = cluster.directory.appendingPathComponent("spool.jsonl")
            let collector = try await cluster.startCollector(control: control, publish: "tcp://127.0.0.1:\(ports[1])", [
                "--mqtt", "mqtt://127.0.0.1:\(brokerPort)", "--mqtt-spool", spool.path, "--mqtt-client-id", "fw-it-collector",
            ])
            let tail = try await cluster.startTail(control: control, ["--events"])
            _ = try await cluster.startWorker(control: control)
            func capture(_ stream: String, port: Int) async throws {
                let node = try cluster.facewire("capture-\(stream)", [
                    "--role", "capture", "--source", frames.path, "--stream", stream, "--bind", "tcp://127.0.0.1:\(port)",
                    "--collector", control, "--fps", "max",
                ])
                #expect(try await node.waitForExit() == 0)
                _ = try await tail.waitFor(.stdout, "\(stream)'s end") { lines in
                    lines.contains { $0.contains("\"stream\":\"\(stream)\"") && $0.contains("streamEnded") }
                }
            }
            func received() -> [String] {
                subscriber.lines(.stdout).filter { $0.hasPrefix("facewire/") }
            }

            // One stream with the broker up.
            try await capture("one", port: ports[2])
            _ = try await subscriber.waitFor(.stdout, "one's end on the broker") { _ in received().contains { $0.contains("streamEnded") } }

            // The broker dies (SIGKILL, after its once-a-second save of the subscriber's session); a second stream runs;
            // its events wait in the collector's spool.
            try await Task.sleep(for: .seconds(2))
            broker.killNow()
            _ = try await collector.waitForLine(containing: "MQTT: disconnected")
            try await capture("two", port: ports[3])
            let spooled = (try? String(contentsOf: spool, encoding: .utf8)) ?? ""
            #expect(spooled.contains("\"stream\\\":\\\"two\\\""), "two's events are in the spool file while the broker is away:\n\(spooled.prefix(600))")

            // Back: the spool drains, and the subscriber's session (persisted by the broker) receives them.
            broker = try cluster.launch("mosquitto-again", executable: "/usr/sbin/mosquitto", ["-c", conf.path])
            _ = try await subscriber.waitFor(.stdout, timeout: .seconds(60), "two's events after the broker's restart") { _ in
                received().contains { $0.hasPrefix("facewire/two/events") && $0.contains("streamEnded") }
            }

            let expected = Self.events(tail.lines(.stdout))
            #expect(expected.count >= 4, "two streams' faceAppeared, faceLeft and streamEnded at least: \(expected)")
            let events = received().filter { $0.contains("/events ") }
            for line in expected {
                let stream = line.contains("\"stream\":\"one\"") ? "one" : "two"
                let count = events.filter { $0 == "facewire/\(stream)/events \(line)" }.count
                #expect(count == 1, "\(line) arrived \(count) times")
            }
            #expect(events.count == expected.count, "nothing else on the events topics: \(events)")
            // The retained statuses: each stream ended.
            for stream in ["one", "two"] {
                #expect(received().contains { $0.hasPrefix("facewire/\(stream)/status") && $0.contains("\"state\":\"ended\"") },
                        "\(stream)'s status")
            }
            // Everything acknowledged: the spool file is empty again.
            let deadline = Date().addingTimeInterval(10)
            while ((try? String(contentsOf: spool, encoding: .utf8)) ?? "").isEmpty == false, Date() < deadline { usleep(100_000) }
            #expect(((try? String(contentsOf: spool, encoding: .utf8)) ?? "x").isEmpty, "the spool file is emptied once all is acknowledged")
        }
    

        /// A CA and a server certificate for 127.0.0.1 (openssl), in `directory`.
        static func makeCertificates(in directory: URL) throws {
            let script = """
                set -e
                cd "$1"
                openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=facewire-test-ca -keyout ca.key -out ca.pem 2>/dev/null
                openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout server.key -out server.csr 2>/dev/null
                printf 'subjectAltName=IP:127.0.0.1\\n' > san.ext
                openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext -out server.pem 2>/dev/null
                openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=other-ca -keyout other.key -out other.pem 2>/dev/null
                chmod 644 server.key
                """
            let made = try runCommand("/bin/sh", ["-c", script, "sh", directory.path])
            try #require(made.status == 0, "\(made.output)")
        }

        @Test("mqtts://: events arrive over TLS with the broker's certificate checked; a collector that does not trust it is refused and says why",
              .enabled(if: hasBroker && FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl"), "needs mosquitto, mosquitto-clients and openssl"),
              .timeLimit(.minutes(10)))
        func tls() async throws {
            let cluster = try TestCluster("mqtts")
            defer { cluster.cleanup() }
            try Self.makeCertificates(in: cluster.directory)
            func path(_ name: String) -> String { cluster.directory.appendingPathComponent(name).path }
            let frames = try CurveClusters.frames(in: cluster.directory, count: 10)
            let ports = try freeLoopbackPorts(6)
            let conf = cluster.directory.appendingPathComponent("mosquitto.conf")
            try """
                listener \(ports[4]) 127.0.0.1
                allow_anonymous true
                cafile \(path("ca.pem"))
                certfile \(path("server.pem"))
                keyfile \(path("server.key"))

                """.write(to: conf, atomically: true, encoding: .utf8)
            let broker = try cluster.launch("mosquitto", executable: "/usr/sbin/mosquitto", ["-c", conf.path])
            _ = try await broker.waitForLine(containing: "running")
            let subscriber = try cluster.launch("mosquitto_sub", executable: "/usr/bin/stdbuf", [
                "-oL", "/usr/bin/mosquitto_sub", "-h", "127.0.0.1", "-p", String(ports[4]), "--cafile", path("ca.pem"), "-q", "1",
                "-d", "-v", "-t", "facewire/+/events",
            ])
            _ = try await subscriber.waitForLine(containing: "received SUBACK", in: .stdout)

            // A collector that trusts another CA: refused (the certificate does not verify), events kept in its spool.
            let wrong = "tcp://127.0.0.1:\(ports[2])"
            let distrustful = try cluster.facewire("collector-distrustful", [
                "--role", "collector", "--bind", wrong, "--publish", "tcp://127.0.0.1:\(ports[3])",
                "--mqtt", "mqtts://127.0.0.1:\(ports[4])", "--mqtt-ca-file", path("other.pem"), "--mqtt-spool", "none",
                "--mqtt-client-id", "fw-distrustful",
            ])
            let refusal = try await distrustful.waitForLine(containing: "MQTT: cannot connect")
            #expect(refusal.contains("TLS") || refusal.contains("error"), "\(refusal)")

            let control = "tcp://127.0.0.1:\(ports[0])"
            _ = try await cluster.startCollector(control: control, publish: "tcp://127.0.0.1:\(ports[1])", [
                "--mqtt", "mqtts://127.0.0.1:\(ports[4])", "--mqtt-ca-file", path("ca.pem"), "--mqtt-spool", "none",
            ])
            let tail = try await cluster.startTail(control: control, ["--events", "--exit-on-end"])
            _ = try await cluster.startWorker(control: control)
            _ = try cluster.facewire("capture", [
                "--role", "capture", "--source", frames.path, "--stream", "tls", "--bind", "tcp://127.0.0.1:\(ports[5])",
                "--collector", control, "--fps", "max",
            ])
            #expect(try await tail.waitForExit() == 0)
            _ = try await subscriber.waitFor(.stdout, "the stream's end over TLS") { lines in lines.contains { $0.hasPrefix("facewire/tls/events") && $0.contains("streamEnded") } }
            let expected = Self.events(tail.lines(.stdout))
            let received = subscriber.lines(.stdout).filter { $0.hasPrefix("facewire/tls/events ") }
            #expect(received == expected.map { "facewire/tls/events \($0)" })
            #expect(!distrustful.text(.stderr).contains("MQTT: connected"), "the collector that does not trust the broker never connected")
        }
    }
}
