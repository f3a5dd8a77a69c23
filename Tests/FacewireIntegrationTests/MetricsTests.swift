import FacewireRuntime
import Foundation
import Testing

/// A TCP socket connecting to 127.0.0.1:`port`. `configure` runs on it before `connect` (options such as the receive
/// buffer take effect only then; `O_NONBLOCK` makes the connect return at once). Returns the descriptor and what
/// `connect` returned (0, or −1 with `errno`).
func loopbackSocket(port: Int, configure: (Int32) -> Void = { _ in }) throws -> (fd: Int32, connected: Int32) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw HarnessError("socket: \(errno)") }
    configure(fd)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port)).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    return (fd, connected)
}

/// A plain HTTP GET on loopback: the status code and the body. Gives up after `timeout` seconds without data.
func httpGet(port: Int, path: String, timeout seconds: Int = 5) throws -> (status: Int, body: String) {
    let response = try httpGetBytes(port: port, path: path, timeout: seconds)
    return (response.status, String(decoding: response.body, as: UTF8.self))
}

/// A plain HTTP GET on loopback with extra request header lines: the status code, the response headers (names in
/// lower case) and the body's bytes.
func httpGetBytes(port: Int, path: String, headers: [String] = [], timeout seconds: Int = 5) throws
    -> (status: Int, headers: [String: String], body: [UInt8])
{
    let (fd, connected) = try loopbackSocket(port: port) { fd in
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }
    defer { close(fd) }
    guard connected == 0 else { throw HarnessError("cannot connect to 127.0.0.1:\(port)") }
    let request = Array(("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers.map { $0 + "\r\n" }.joined() + "\r\n").utf8)
    while request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) < 0, errno == EINTR {}
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    // Read to the end of the body (Content-Length: the server may keep the connection open) or of the connection.
    while !isCompleteHTTPResponse(response) {
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count < 0, errno == EINTR { continue }  // a child process exited (SIGCHLD)
        if count <= 0 { break }
        response += buffer[0..<count]
    }
    let separator: [UInt8] = [13, 10, 13, 10]
    guard response.count >= 4, let end = (0...(response.count - 4)).first(where: { Array(response[$0..<($0 + 4)]) == separator }) else {
        throw HarnessError("not an HTTP response: \(String(decoding: response.prefix(200), as: UTF8.self))")
    }
    let head = String(decoding: response[..<end], as: UTF8.self).split(separator: "\r\n")
    guard let statusLine = head.first, statusLine.split(separator: " ").count > 1, let status = Int(statusLine.split(separator: " ")[1]) else {
        throw HarnessError("not an HTTP status line: \(head.first ?? "")")
    }
    var fields: [String: String] = [:]
    for line in head.dropFirst() {
        guard let colon = line.firstIndex(of: ":") else { continue }
        fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    return (status, fields, Array(response[(end + 4)...]))
}

/// Whether `bytes` hold a whole HTTP response with a `Content-Length` header: head and that many body bytes.
private func isCompleteHTTPResponse(_ bytes: [UInt8]) -> Bool {
    let separator: [UInt8] = [13, 10, 13, 10]
    guard bytes.count >= 4, let end = (0...(bytes.count - 4)).first(where: { Array(bytes[$0..<($0 + 4)]) == separator }) else {
        return false
    }
    let head = String(decoding: bytes[..<end], as: UTF8.self).lowercased()
    guard let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
        let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
    else { return false }
    return bytes.count - (end + 4) >= length
}

/// The value of a Prometheus sample whose line starts with `prefix` (name and, optionally, labels).
func sample(_ text: String, _ prefix: String) -> Double? {
    text.split(separator: "\n").first { $0.hasPrefix(prefix) && !$0.hasPrefix("#") }
        .flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }
}

extension IntegrationTests {
    @Suite("Metrics and health endpoints")
    struct Metrics {
        /// Every role's /metrics and /healthz, the capture node's included: its source loops (`--loop`, no `--frames`),
        /// so it is still running when it is scraped. Then it is stopped (SIGTERM: it ends the stream), and every
        /// node's count is checked against the stream's end summary: what the capture node numbered, the collector
        /// emitted, the worker analysed and the tail received is the same number of frames.
        @Test("every role serves Prometheus text with its counters and histograms, and /healthz answers", .timeLimit(.minutes(15)))
        func everyRoleServesMetrics() async throws {
            let cluster = try TestCluster("metrics")
            defer { cluster.cleanup() }
            let frames = cluster.directory.appendingPathComponent("frames")
            try SyntheticFrames.writeFolder(frames, count: 30, width: 320, height: 240)
            let ports = try freeLoopbackPorts(7)
            let control = "tcp://127.0.0.1:\(ports[0])"
            func metricsFlags(_ port: Int) -> [String] { ["--metrics-port", String(port), "--metrics-host", "127.0.0.1"] }
            let (collectorPort, workerPort, capturePort, tailPort) = (ports[3], ports[4], ports[5], ports[6])
            _ = try await cluster.startCollector(control: control, publish: "tcp://127.0.0.1:\(ports[1])", metricsFlags(collectorPort))
            let tail = try await cluster.startTail(control: control, ["--stream", "m", "--events"] + metricsFlags(tailPort))
            _ = try await cluster.startWorker(control: control, metricsFlags(workerPort))
            // --fps max: a frame is read only when the worker is idle, so none is dropped at the source.
            let capture = try cluster.facewire("capture", [
                "--role", "capture", "--source", frames.path, "--stream", "m", "--bind", "tcp://127.0.0.1:\(ports[2])",
                "--collector", control, "--fps", "max", "--loop", "--stats-interval", "0",
            ] + metricsFlags(capturePort))
            func frameLines(_ lines: [String]) -> [String] { lines.filter { $0.contains("\"status\"") } }
            _ = try await tail.waitFor(.stdout, "30 frames") { frameLines($0).count >= 30 }

            // While the stream runs. The capture node's source loops: it has not ended.
            try #require(capture.isRunning, "the capture node exited with its source looping\n\(capture.tail(.stderr))")
            let captured = try httpGet(port: capturePort, path: "/metrics")
            #expect(captured.status == 200)
            // It sent at least the 30 frames the tail received before this scrape.
            let sentWhileRunning = try #require(sample(captured.body, "facewire_frames_sent_total"), "\(captured.body.prefix(800))")
            #expect(sentWhileRunning >= 30, "\(captured.body.prefix(800))")
            #expect((sample(captured.body, "facewire_frames_captured_total") ?? 0) >= 30, "\(captured.body.prefix(800))")
            #expect(sample(captured.body, "facewire_capture_source_up") == 1, "\(captured.body.prefix(800))")
            let collector = try httpGet(port: collectorPort, path: "/metrics")
            #expect(collector.status == 200)
            #expect(sample(collector.body, "facewire_stream_frames_total{") != nil, "\(collector.body.prefix(600))")
            #expect(collector.body.contains("stream=\"m\""))
            #expect(collector.body.contains("facewire_collector_latency_seconds_bucket"))
            #expect((sample(collector.body, "facewire_frames_processed_total") ?? 0) >= 30)
            #expect(collector.body.contains("facewire_collector_pending_results"))
            #expect(collector.body.contains("facewire_build_info{") && collector.body.contains("commit=\""), "the build-info gauge")
            let worker = try httpGet(port: workerPort, path: "/metrics")
            #expect(worker.status == 200)
            #expect((sample(worker.body, "facewire_worker_detect_seconds_count") ?? 0) >= 30, "\(worker.body.prefix(800))")
            #expect((sample(worker.body, "facewire_frames_processed_total") ?? 0) >= 30)
            #expect(worker.body.contains("facewire_worker_decode_seconds_bucket"))
            let tailMetrics = try httpGet(port: tailPort, path: "/metrics")
            #expect(tailMetrics.status == 200)
            #expect((sample(tailMetrics.body, "facewire_frames_received_total") ?? 0) >= 30, "\(tailMetrics.body)")
            for port in [collectorPort, workerPort, capturePort, tailPort] {
                let health = try httpGet(port: port, path: "/healthz")
                let answer = try JSONSerialization.jsonObject(with: Data(health.body.utf8)) as? [String: String]
                #expect(health.status == 200 && answer?["status"] == "ok" && answer?["detail"]?.isEmpty == false, "port \(port): \(health)")
                // Only a collector has a role; without an election it is the active one.
                #expect(answer?["role"] == (port == collectorPort ? "active" : nil), "port \(port): \(health)")
                #expect(try httpGet(port: port, path: "/nothing").status == 404)
            }

            // Stopped, the capture node ends the stream: every node's count is the stream's.
            capture.signal(SIGTERM)
            #expect(try await capture.waitForExit() == 0, "\(capture.tail(.stderr))")
            let finished = try #require(capture.lines(.stderr).first { $0.contains("capture finished") }, "\(capture.tail(.stderr))")
            let numbered = try #require(
                finished.split(separator: " ").first { $0.hasPrefix("frames=") }.flatMap { Int($0.dropFirst("frames=".count)) }, "\(finished)")
            let raw = try await tail.waitFor(.stdout, "the stream's end") { lines in
                lines.contains { $0.contains("\"event\":\"streamEnded\"") }
            }
            let endLine = try #require(raw.first { $0.contains("\"event\":\"streamEnded\"") })
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(endLine.utf8)) as? [String: Any], "\(endLine)")
            let total = try #require((summary["frames"] as? NSNumber)?.intValue, "\(endLine)")
            let processed = try #require((summary["processed"] as? NSNumber)?.intValue, "\(endLine)")
            let lines = try FrameLine.parseAll(raw)
            #expect(total == numbered, "the capture node numbered \(numbered) frames; the stream ended with \(total): \(endLine)")
            #expect(Double(total) >= sentWhileRunning, "\(total) frames in the stream, \(sentWhileRunning) sent before the scrape")
            #expect(orderProblems(lines, count: total).isEmpty, "\(orderProblems(lines, count: total))")
            #expect(processed == lines.filter { $0.status == "processed" }.count, "\(endLine)")
            let collectorAfter = try httpGet(port: collectorPort, path: "/metrics").body
            #expect(sample(collectorAfter, "facewire_frames_processed_total") == Double(processed), "\(collectorAfter.prefix(800))")
            let workerAfter = try httpGet(port: workerPort, path: "/metrics").body
            #expect(sample(workerAfter, "facewire_frames_processed_total") == Double(processed), "\(workerAfter.prefix(800))")
            #expect(sample(workerAfter, "facewire_worker_detect_seconds_count") == Double(processed), "\(workerAfter.prefix(800))")
            let tailAfter = try httpGet(port: tailPort, path: "/metrics").body
            #expect(sample(tailAfter, "facewire_frames_received_total") == Double(lines.count), "\(tailAfter)")
        }

        @Test("a capture node whose camera is unplugged reports 503 on /healthz until it is back", .timeLimit(.minutes(15)))
        func captureHealthFollowsTheCamera() async throws {
            let cluster = try TestCluster("health")
            defer { cluster.cleanup() }
            let script = cluster.directory.appendingPathComponent("camera.json")
            try Data("""
                {"devices":[{"path":"/dev/video0","formats":[{"fourcc":"MJPG","sizes":[{"width":160,"height":120,"fps":[30]}]}],
                  "events":[{"frame":60,"kind":"unplug","seconds":3}]}]}
                """.utf8).write(to: script)
            let ports = try freeLoopbackPorts(2)
            let capture = try cluster.facewire(
                "capture",
                ["--role", "capture", "--source", "/dev/video0", "--bind", "tcp://127.0.0.1:\(ports[0])",
                 "--metrics-port", String(ports[1]), "--metrics-host", "127.0.0.1"],
                environment: ["FACEWIRE_V4L2_SIMULATION": script.path])
            try await capture.waitForLine(containing: "metrics serving")
            // Its metrics: frames captured from the camera, the source up, the workers waiting (none here).
            try await Task.sleep(for: .milliseconds(700))
            let metrics = try httpGet(port: ports[1], path: "/metrics")
            #expect(metrics.status == 200)
            #expect((sample(metrics.body, "facewire_frames_captured_total") ?? 0) > 0, "\(metrics.body.prefix(800))")
            #expect(sample(metrics.body, "facewire_capture_source_up") == 1)
            #expect(sample(metrics.body, "facewire_capture_waiting_workers") == 0)
            var seen: [Int] = []
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                let status = (try? httpGet(port: ports[1], path: "/healthz").status) ?? -1
                if seen.last != status { seen.append(status) }
                if seen.suffix(3) == [200, 503, 200] { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(seen.suffix(3) == [200, 503, 200], "health states seen: \(seen)\n\(capture.tail(.stderr))")
        }

        @Test("--log-format json: every log line is a JSON object with time, level, label, message and the metadata",
              .timeLimit(.minutes(15)))
        func jsonLogs() async throws {
            let cluster = try TestCluster("jsonlog")
            defer { cluster.cleanup() }
            let ports = try freeLoopbackPorts(2)
            let collector = try await cluster.startCollector(
                control: "tcp://127.0.0.1:\(ports[0])", publish: "tcp://127.0.0.1:\(ports[1])", ["--log-format", "json"])
            collector.signal(SIGTERM)
            #expect(try await collector.waitForExit() == 0)
            let lines = collector.lines(.stderr)
            #expect(lines.count >= 2)
            for line in lines {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
                #expect(object["time"] is String && object["level"] is String && object["label"] is String)
            }
            let listening = try #require(lines.first { $0.contains("collector listening") })
            let object = try #require(try JSONSerialization.jsonObject(with: Data(listening.utf8)) as? [String: Any])
            #expect(object["message"] as? String == "collector listening")
            #expect(object["control"] as? String == "tcp://127.0.0.1:\(ports[0])")
        }
    }
}
