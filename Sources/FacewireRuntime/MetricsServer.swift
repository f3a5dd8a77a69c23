import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A minimal HTTP/1.1 server for `/metrics` (Prometheus text) and `/healthz`, on a thread of its own.
///
/// Deliberately small: one request per connection, GET or HEAD only, requests over 8 KiB or slower than 2 s are
/// dropped, and the answer is produced by closures the node supplies. It needs no event loop and adds no
/// dependency; a scrape every few seconds is all it serves.
public final class MetricsServer: @unchecked Sendable {
    /// What `/healthz` says: healthy (200) or not (503), with a one-line reason.
    public struct Health: Sendable {
        public var healthy: Bool
        public var detail: String

        public init(healthy: Bool, detail: String) {
            self.healthy = healthy
            self.detail = detail
        }
    }

    public let port: Int
    private let listener: Int32
    private let metrics: @Sendable () -> [UInt8]
    private let health: @Sendable () -> Health
    private let stopToken: StopToken

    /// Binds `host:port` (port 0: any free port; see ``port``) and starts serving.
    /// - Throws: ``NodeError`` when the address cannot be bound.
    public init(
        host: String = "0.0.0.0", port: Int, metrics: @escaping @Sendable () -> [UInt8],
        health: @escaping @Sendable () -> Health, stop: StopToken
    ) throws {
        self.metrics = metrics
        self.health = health
        stopToken = stop
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw NodeError("metrics: cannot create a socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(clamping: port)).bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            close(fd)
            throw NodeError("metrics: '\(host)' is not an IPv4 address")
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw NodeError("metrics: cannot listen on \(host):\(port): \(reason)")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.port = Int(UInt16(bigEndian: actual.sin_port))
        listener = fd
        let thread = Thread { [self] in serve() }
        thread.name = "facewire-metrics"
        thread.start()
    }

    private func serve() {
        defer { close(listener) }
        while !stopToken.isStopped {
            var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 200) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            handle(client)
            close(client)
        }
    }

    private func handle(_ client: Int32) {
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var request: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while request.count < 8192 {
            let count = chunk.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            request += chunk[0..<count]
            // The request line is all that is used; stop at the end of the headers.
            let text = String(decoding: request, as: UTF8.self)
            if text.contains("\r\n\r\n") || text.contains("\n\n") { break }
        }
        let line = String(decoding: request.prefix { $0 != 13 && $0 != 10 }, as: UTF8.self)
        let parts = line.split(separator: " ")
        guard parts.count >= 2 else { return respond(client, 400, "text/plain", Array("bad request\n".utf8)) }
        let method = parts[0]
        let path = parts[1].split(separator: "?").first.map(String.init) ?? ""
        guard method == "GET" || method == "HEAD" else { return respond(client, 405, "text/plain", Array("GET only\n".utf8)) }
        let head = method == "HEAD"
        switch path {
        case "/metrics":
            respond(client, 200, "text/plain; version=0.0.4; charset=utf-8", metrics(), head: head)
        case "/healthz":
            let state = health()
            respond(client, state.healthy ? 200 : 503, "text/plain", Array("\(state.healthy ? "ok" : "unhealthy"): \(state.detail)\n".utf8), head: head)
        default:
            respond(client, 404, "text/plain", Array("not found: /metrics or /healthz\n".utf8), head: head)
        }
    }

    private func respond(_ client: Int32, _ status: Int, _ type: String, _ body: [UInt8], head: Bool = false) {
        let reason = [200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 503: "Service Unavailable"][status] ?? "Error"
        var out = Array("HTTP/1.1 \(status) \(reason)\r\nContent-Type: \(type)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n".utf8)
        if !head { out += body }
        var sent = 0
        while sent < out.count {
            let count = out[sent...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { return }
            sent += count
        }
    }
}
