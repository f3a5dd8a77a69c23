import FacewireProtocol
import FacewireRuntime
import Foundation
import Testing
import ZeroMQ

/// A hostile peer, written with the protocol's own schema over a real DEALER, against a real
/// `facewire --role collector` process (issue 12, acceptance 1 and 3): huge runs, extreme time fields and a hello
/// flood. A well-behaved peer's stream goes through the same collector meanwhile; it must stay ordered and
/// gap-free, the collector must stay up and grow less than 64 MB, every rejection must be counted by name, and
/// `/metrics` must stay within the caps.
extension IntegrationTests {
    @Suite("Collector under attack", .serialized)
    struct CollectorAttack {
        /// Resident memory of a process in kB (`VmRSS` in /proc/PID/status).
        static func residentKilobytes(_ pid: Int32) throws -> Int {
            let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
                let value = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({ Int($0) })
            else { throw HarnessError("no VmRSS for \(pid)") }
            return value
        }

        static func envelope(_ body: Envelope.OneOf_Body) throws -> [[UInt8]] {
            [try Envelope(body).serializedBytes()]
        }

        static func hello(_ stream: String, role: NodeRole = .capture, node: String, epoch: UInt64 = 1) -> Envelope.OneOf_Body {
            var hello = Hello()
            hello.dispatch = Wire.dispatchVersion
            hello.role = role
            hello.stream = stream
            hello.epoch = epoch
            hello.nodeID = node
            hello.frameEndpoint = "tcp://127.0.0.1:9"
            return .hello(hello)
        }

        static func result(_ stream: String, seq: UInt64, captureTime: Int64, epoch: UInt64 = 1) -> Envelope.OneOf_Body {
            var result = FrameResult()
            result.stream = stream
            result.epoch = epoch
            result.seq = seq
            result.captureTimeUs = captureTime
            result.status = .processed
            result.worker = "w"
            result.timings = .with { $0.queueMs = 1; $0.detectMs = 2 }
            return .result(result)
        }

        static func skip(_ stream: String, first: UInt64, count: UInt64, captureTime: Int64 = 0) -> Envelope.OneOf_Body {
            var skipped = Skipped()
            skipped.stream = stream
            skipped.epoch = 1
            skipped.firstSeq = first
            skipped.count = count
            skipped.reason = "no-worker"
            skipped.captureTimeUs = captureTime
            return .skipped(skipped)
        }

        static func end(_ stream: String, nextSeq: UInt64) -> Envelope.OneOf_Body {
            var end = StreamEnd()
            end.stream = stream
            end.epoch = 1
            end.nextSeq = nextSeq
            return .end(end)
        }

        @Test("huge runs, extreme times and a hello flood: the collector stays up and small, a real stream stays whole",
              .timeLimit(.minutes(15)))
        func attack() async throws {
            let cluster = try TestCluster("collector-attack")
            defer { cluster.cleanup() }
            let ports = try freeLoopbackPorts(3)
            let control = "tcp://127.0.0.1:\(ports[0])"
            let output = cluster.directory.appendingPathComponent("stream.jsonl")
            let collector = try await cluster.startCollector(
                control: control, publish: "tcp://127.0.0.1:\(ports[1])", [
                    "--metrics-port", String(ports[2]), "--metrics-host", "127.0.0.1", "--max-delay", "200",
                    "--output", output.path, "--stats-interval", "1", "--max-captures", "100",
                ])
            let context = ZMQContext()
            // The well-behaved peer: a capture node and its worker in one (hello, results in order, end).
            let legit = try ZMQSocket(context: context, kind: .dealer)
            defer { legit.close() }
            try legit.connect(control)
            _ = try legit.send(try Self.envelope(Self.hello("legit", node: "legit-capture")))
            // The attacker.
            let attacker = try ZMQSocket(context: context, kind: .dealer)
            defer { attacker.close() }
            try attacker.setHighWaterMarks(send: 100_000, receive: 100_000)
            try attacker.connect(control)
            try await Task.sleep(for: .milliseconds(300))
            let before = try Self.residentKilobytes(collector.pid)

            let legitFrames: UInt64 = 400
            let floodHellos = 20_000  // 18,000 hellos (capture and worker) and 2,000 results of new streams
            let hellosPerFrame = floodHellos / Int(legitFrames)
            var attacks: [Envelope.OneOf_Body] = [
                // One Skipped claiming 2^40 frames; a StreamEnd at 2^63; a result 2^40 ahead of the head.
                Self.hello("atk-skip", node: "a1"), Self.skip("atk-skip", first: 0, count: 1 << 40),
                Self.hello("atk-end", node: "a2"), Self.result("atk-end", seq: 0, captureTime: 0), Self.end("atk-end", nextSeq: 1 << 63),
                Self.hello("atk-ahead", node: "a3"), Self.result("atk-ahead", seq: 1 << 40, captureTime: 0),
                // Two skips whose lengths add past UInt64.max, and the last sequence.
                Self.skip("atk-skip", first: (1 << 40) + 1, count: .max), Self.result("atk-skip", seq: .max, captureTime: 0),
                Self.hello("atk-time", node: "a4", epoch: .max), Self.hello("atk-epoch0", node: "a5", epoch: 0),
            ]
            // Every time field at int64 min, max, 0 and -1, in results and skips.
            let extremes: [Int64] = [.min, .max, 0, -1]
            for (index, time) in extremes.enumerated() {
                var result = Self.result("atk-time", seq: UInt64(index), captureTime: time)
                if case .result(var body) = result {
                    body.epoch = .max
                    result = .result(body)
                }
                attacks.append(result)
                attacks.append(Self.skip("atk-epoch0", first: UInt64(index) * 10, count: 5, captureTime: time))
            }
            var sentAttacks = 0
            var flood = 0
            let start = Clock.wallMicroseconds()
            for seq in 0..<legitFrames {
                _ = try legit.send(try Self.envelope(Self.result("legit", seq: seq, captureTime: Clock.wallMicroseconds() - 30_000)))
                // The attacks go first (before the flood fills the caps), between the first legitimate results.
                while seq < 2, sentAttacks < attacks.count {
                    _ = try attacker.send(try Self.envelope(attacks[sentAttacks]))
                    sentAttacks += 1
                }
                for _ in 0..<hellosPerFrame {
                    // Distinct stream ids and node ids; every tenth a worker hello with a new node id, every tenth a
                    // result opening a stream without any hello.
                    if flood % 10 == 8 {
                        _ = try attacker.send(try Self.envelope(Self.result("flood-r\(flood)", seq: 5, captureTime: 0)))
                    } else {
                        let role: NodeRole = flood % 10 == 9 ? .worker : .capture
                        _ = try attacker.send(try Self.envelope(Self.hello("flood-\(flood)", role: role, node: "node-\(flood)")))
                    }
                    flood += 1
                }
                if seq % 20 == 0 { try await Task.sleep(for: .milliseconds(5)) }
            }
            _ = try legit.send(try Self.envelope(Self.end("legit", nextSeq: legitFrames)))
            // A probe: the collector handles one peer's messages in order, so its reply to this reset means every
            // attack message before it was processed.
            var probe = ResetRequest()
            probe.requestID = "probe"
            probe.stream = "atk-skip"
            _ = try attacker.send(try Self.envelope(.reset(probe)))
            var probed = false
            let probeDeadline = Date().addingTimeInterval(120)
            var lastProbe = Date()
            while !probed, Date() < probeDeadline {
                if Date().timeIntervalSince(lastProbe) > 5 {
                    // The reply may have been dropped at the collector's send high-water mark: ask again.
                    _ = try attacker.send(try Self.envelope(.reset(probe)))
                    lastProbe = Date()
                }
                guard try attacker.waitForInput(timeoutMilliseconds: 500), let reply = try attacker.receive(dontWait: true) else { continue }
                // Welcomes to the flood's worker hellos are large: not decoded (a debug build decodes slowly).
                guard reply.count == 1, reply[0].count < 512 else { continue }
                if case .resetReply(let answer)? = try? Envelope(part: reply[0]).body, answer.requestID == "probe" { probed = true }
            }
            #expect(probed, "no reply to the probe: \(collector.tail())")
            let elapsed = Double(Clock.wallMicroseconds() - start) / 1e6
            try await Task.sleep(for: .milliseconds(1500))  // --max-delay for the far-ahead result and the end, a gauge update

            // The legitimate stream ends whole.
            try await collector.waitForLine(containing: "stream finished", in: .stderr, timeout: .seconds(60))
            let deadline = Date().addingTimeInterval(60)
            var lines: [String] = []
            while Date() < deadline {
                let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            print("[attack] lines of the hostile streams:\n" + text.split(separator: "\n").filter { $0.contains("\"stream\":\"atk-") && !$0.contains("statistics") }.prefix(40).joined(separator: "\n"))
                lines = text.split(separator: "\n").map(String.init).filter { $0.contains("\"stream\":\"legit\"") }
                if lines.contains(where: { $0.contains("streamEnded") }) { break }
                try await Task.sleep(for: .milliseconds(200))
            }
            let frames = try FrameLine.parseAll(lines)
            #expect(orderProblems(frames, count: Int(legitFrames)) == [])
            #expect(frames.allSatisfy { $0.status == "processed" }, "no frame of the legitimate stream dropped")
            #expect(lines.contains { $0.contains("streamEnded") && $0.contains("\"frames\":\(legitFrames),\"processed\":\(legitFrames)") })

            // The huge runs are one line each.
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            print("[attack] lines of the hostile streams:\n" + text.split(separator: "\n").filter { $0.contains("\"stream\":\"atk-") && !$0.contains("statistics") }.prefix(40).joined(separator: "\n"))
            #expect(text.contains("\"stream\":\"atk-skip\",\"epoch\":1,\"seq\":0,\"status\":\"dropped\",\"reason\":\"no-worker\",\"runLength\":1099511627776"))
            #expect(text.contains("\"stream\":\"atk-ahead\",\"epoch\":1,\"seq\":0,\"status\":\"dropped\",\"reason\":\"timeout\",\"runLength\":1099511627776"))
            #expect(text.contains("\"stream\":\"atk-end\",\"epoch\":1,\"seq\":1,\"status\":\"dropped\",\"reason\":\"timeout\",\"runLength\":9223372036854775807"))

            #expect(collector.isRunning, "the collector died: \(collector.tail())")
            let after = try Self.residentKilobytes(collector.pid)
            let metrics = try httpGet(port: ports[2], path: "/metrics").body
            let streamLabels = Set(metrics.split(separator: "\n").filter { $0.hasPrefix("facewire_stream_frames_total{") }.compactMap { line -> String? in
                guard let range = line.range(of: "stream=\"") else { return nil }
                return String(line[range.upperBound...].prefix { $0 != "\"" })
            })
            let rejectedTime = sample(metrics, "facewire_results_rejected_capture_time_total") ?? 0
            let refused = sample(metrics, "facewire_streams_refused_cap_total") ?? 0
            let openStreams = sample(metrics, "facewire_collector_open_streams") ?? -1
            let capturesRefused = sample(metrics, "facewire_captures_refused_cap_total") ?? 0
            print("""
                [attack] collector RSS before \(before / 1024) MB (\(before) kB), after \(after / 1024) MB (\(after) kB), growth \((after - before) / 1024) MB; \
                \(floodHellos) flood hellos + \(attacks.count) attack messages + \(legitFrames) legitimate results sent and handled in \(String(format: "%.1f", elapsed)) s; \
                results_rejected_capture_time \(Int(rejectedTime)), streams_refused_cap \(Int(refused)), captures_refused_cap \(Int(capturesRefused)), \
                open streams \(Int(openStreams)), stream labels \(streamLabels.count), /metrics \(metrics.utf8.count) bytes; legitimate stream \(frames.count) frames in order
                """)
            #expect(after - before < 64 * 1024, "RSS grew \(after - before) kB")
            #expect(rejectedTime == 3, "int64 min, max and -1 (0 means absent)")
            #expect(refused > 0 && capturesRefused > 0, "the flood hit --max-streams and --max-captures")
            #expect(openStreams >= 0 && openStreams <= 1024)
            #expect(streamLabels.count <= 65 && streamLabels.contains("legit"))
            #expect(metrics.utf8.count < 1 << 20)
        }
    }
}
