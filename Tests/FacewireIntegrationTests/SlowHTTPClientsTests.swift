import FacewireRuntime
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Clients that connect to an HTTP port and never finish a request: half of them send half a request line and stall,
/// the others send nothing. A connection the server closes is opened again, so the pressure lasts until ``stop()``.
final class SlowHTTPClients: @unchecked Sendable {
    private let port: Int
    private let lock = NSLock()
    private var sockets: [Int32] = []
    private var stopped = false
    private var closedByServer = 0
    private let done = DispatchSemaphore(value: 0)

    init(port: Int, count: Int) throws {
        self.port = port
        sockets = try (0..<count).map { try open(index: $0) }
        let thread = Thread { [self] in watch() }
        thread.start()
    }

    /// How many of the slow connections the server has closed so far.
    var closedCount: Int { lock.withLock { closedByServer } }

    private func open(index: Int) throws -> Int32 {
        // Non-blocking: a server that no longer accepts must not hang the test here.
        let (fd, _) = try loopbackSocket(port: port) { _ = fcntl($0, F_SETFL, fcntl($0, F_GETFL) | O_NONBLOCK) }
        if index % 2 == 0 {
            var writable = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            if poll(&writable, 1, 2000) > 0 {
                let half = Array("GET /metr".utf8)
                _ = half.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
        }
        return fd
    }

    /// Reopens every connection the server closed (it reads as end of file or an error), until stopped.
    private func watch() {
        defer { done.signal() }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !lock.withLock({ stopped }) {
            var fds = lock.withLock { sockets }.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            guard poll(&fds, nfds_t(fds.count), 100) > 0 else { continue }
            for (index, entry) in fds.enumerated() where entry.revents != 0 {
                let count = buffer.withUnsafeMutableBytes { recv(entry.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if count > 0 { continue }  // an answer (say a 400 or a timeout notice): the server will close next
                if count < 0, errno == EAGAIN || errno == EINTR { continue }
                close(entry.fd)
                let fresh = (try? open(index: index)) ?? -1
                lock.withLock {
                    closedByServer += 1
                    sockets[index] = fresh
                }
            }
        }
    }

    func stop() {
        lock.withLock { stopped = true }
        done.wait()
        lock.withLock { sockets }.forEach { if $0 >= 0 { close($0) } }
    }
}

extension IntegrationTests {
    @Suite("Slow HTTP clients")
    struct SlowHTTP {
        @Test("50 slow or silent HTTP clients: /healthz and /metrics still answer, and the server closes the slow ones",
              .timeLimit(.minutes(15)))
        func slowClientsDelayNoOne() async throws {
            let cluster = try TestCluster("slowhttp")
            defer { cluster.cleanup() }
            let ports = try freeLoopbackPorts(3)
            let metricsPort = ports[2]
            let collector = try await cluster.startCollector(
                control: "tcp://127.0.0.1:\(ports[0])", publish: "tcp://127.0.0.1:\(ports[1])",
                ["--metrics-port", String(metricsPort), "--metrics-host", "127.0.0.1"])
            try await collector.waitForLine(containing: "metrics serving")
            func residentKilobytes() throws -> Int {
                let status = try String(contentsOfFile: "/proc/\(collector.pid)/status", encoding: .utf8)
                let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
                return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
            }
            _ = try httpGet(port: metricsPort, path: "/metrics")
            let before = try residentKilobytes()
            let clients = try SlowHTTPClients(port: metricsPort, count: 50)
            defer { clients.stop() }
            try await Task.sleep(for: .milliseconds(300))

            // Every request answers (a generous 30 s each: a server that serves one connection at a time, waiting
            // for each slow client, would take far longer; the pressure is renewed as the server closes them).
            for round in 0..<5 {
                let health = try httpGet(port: metricsPort, path: "/healthz", timeout: 30)
                #expect(health.status == 200 && health.body.contains(#""status":"ok""#), "round \(round): \(health)")
                let metrics = try httpGet(port: metricsPort, path: "/metrics", timeout: 30)
                #expect(metrics.status == 200, "round \(round): \(metrics.status)")
                try await Task.sleep(for: .milliseconds(200))
            }
            // The read/idle timeout: the server closes connections that never finish a request.
            let deadline = ContinuousClock.now + .seconds(60)
            while clients.closedCount == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
            #expect(clients.closedCount > 0, "no slow connection was ever closed by the server")
            #expect(collector.isRunning, "\(collector.tail(.stderr))")
            let growth = try residentKilobytes() - before
            #expect(growth < 64 << 10, "resident memory grew by \(growth) kB under 50 slow clients")
            print("slow HTTP clients: \(clients.closedCount) slow connections closed by the server, resident memory \(before) kB -> +\(growth) kB")
        }

        @Test("past --metrics-max-connections, connections wait until silent ones time out; the cap is counted and logged",
              .timeLimit(.minutes(15)))
        func connectionCapIsCountedAndLogged() async throws {
            let cluster = try TestCluster("httpcap")
            defer { cluster.cleanup() }
            let ports = try freeLoopbackPorts(3)
            let collector = try await cluster.startCollector(
                control: "tcp://127.0.0.1:\(ports[0])", publish: "tcp://127.0.0.1:\(ports[1])",
                ["--metrics-port", String(ports[2]), "--metrics-host", "127.0.0.1", "--metrics-timeout", "2",
                 "--metrics-max-connections", "4"])
            try await collector.waitForLine(containing: "metrics serving")
            // Ten silent connections, not reopened: four are served (and time out), the rest wait their turn.
            var silent: [Int32] = []
            defer { silent.forEach { close($0) } }
            for _ in 0..<10 {
                let (fd, connected) = try loopbackSocket(port: ports[2])
                #expect(connected == 0)
                silent.append(fd)
            }
            try await Task.sleep(for: .milliseconds(300))
            // Answered once the silent ones ahead of it have timed out (generous: 60 s).
            let health = try httpGet(port: ports[2], path: "/healthz", timeout: 60)
            #expect(health.status == 200)
            let metrics = try httpGet(port: ports[2], path: "/metrics", timeout: 60)
            #expect((sample(metrics.body, "facewire_http_connections_capped_total") ?? 0) >= 1, "\(metrics.body.prefix(1500))")
            let warnings = collector.lines(.stderr).filter { $0.contains("connection cap reached") }
            #expect(!warnings.isEmpty, "\(collector.tail(.stderr))")
        }

        @Test("a client that pipelines requests and never reads the answers is disconnected (write timeout)",
              .timeLimit(.minutes(15)))
        func nonReadingClientIsClosed() async throws {
            let cluster = try TestCluster("slowreader")
            defer { cluster.cleanup() }
            let ports = try freeLoopbackPorts(3)
            let collector = try await cluster.startCollector(
                control: "tcp://127.0.0.1:\(ports[0])", publish: "tcp://127.0.0.1:\(ports[1])",
                ["--metrics-port", String(ports[2]), "--metrics-host", "127.0.0.1", "--metrics-timeout", "2"])
            try await collector.waitForLine(containing: "metrics serving")
            let (fd, connected) = try loopbackSocket(port: ports[2]) { fd in
                var small: Int32 = 4096
                setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
            }
            defer { close(fd) }
            #expect(connected == 0)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            // Requests until the socket takes no more for a while: the server is then stuck writing answers nobody reads.
            let request = Array(String(repeating: "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", count: 64).utf8)
            var sent = 0
            var refusedSince: ContinuousClock.Instant?
            while sent < 64 << 20 {
                let count = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if count > 0 {
                    sent += count
                    refusedSince = nil
                    continue
                }
                if count < 0, errno != EAGAIN, errno != EINTR { break }  // already closed
                let now = ContinuousClock.now
                if let since = refusedSince, now - since > .seconds(1) { break }
                refusedSince = refusedSince ?? now
                try await Task.sleep(for: .milliseconds(20))
            }
            // Never reading, wait for the server to hang up (end of stream, reset or error on the socket).
            let hangUp = Int16(POLLHUP) | Int16(POLLERR) | Int16(0x2000)  // 0x2000: POLLRDHUP
            var closed = false
            let deadline = ContinuousClock.now + .seconds(60)
            while !closed, ContinuousClock.now < deadline {
                var entry = pollfd(fd: fd, events: Int16(0x2000), revents: 0)
                if poll(&entry, 1, 100) > 0, entry.revents & hangUp != 0 { closed = true }
            }
            #expect(closed, "the server still holds a connection whose answers are not read (\(sent) bytes of requests sent)")
            #expect(try httpGet(port: ports[2], path: "/healthz").status == 200)
        }

        @Test("a client whose request body never ends (a byte every second) is disconnected", .timeLimit(.minutes(15)))
        func neverEndingBodyIsClosed() async throws {
            let cluster = try TestCluster("slowbody")
            defer { cluster.cleanup() }
            let ports = try freeLoopbackPorts(3)
            let collector = try await cluster.startCollector(
                control: "tcp://127.0.0.1:\(ports[0])", publish: "tcp://127.0.0.1:\(ports[1])",
                ["--metrics-port", String(ports[2]), "--metrics-host", "127.0.0.1", "--metrics-timeout", "2"])
            try await collector.waitForLine(containing: "metrics serving")
            let (fd, connected) = try loopbackSocket(port: ports[2])
            defer { close(fd) }
            #expect(connected == 0)
            func send(_ text: String) -> Bool {
                Array(text.utf8).withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } > 0
            }
            // A chunked body, one byte a second: each part comes well within the idle timeout (2 s), so only a deadline
            // on the whole request ends it. Up to 60 s; a closed connection makes the send fail.
            var sending = send("GET /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
            let started = ContinuousClock.now
            while sending, ContinuousClock.now - started < .seconds(60) {
                try await Task.sleep(for: .seconds(1))
                sending = send("1\r\na\r\n")
            }
            #expect(!sending, "the server still holds a connection whose request body never ends")
            print("never-ending body: closed after \(ContinuousClock.now - started)")
            #expect(try httpGet(port: ports[2], path: "/healthz").status == 200)
        }
    }
}
