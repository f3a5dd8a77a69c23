import AsyncHTTPClient
import FacewireRuntime
import Foundation

/// A real etcd (Debian's `etcd-server`) on loopback ports of its own, in a data folder of its own; stopped with the
/// test. Its election timeout is 500 ms, so that leases of 1 s are granted (etcd's least is 1.5 × the timeout).
public final class EtcdServer: @unchecked Sendable {
    /// Its client URL, `http://127.0.0.1:PORT`.
    public let base: String
    private let process = Process()
    private let folder: URL

    /// The `etcd` binary, or nil where it is not installed (`scripts/setup.sh` installs it).
    public static let binary: String? = ["/usr/bin/etcd", "/usr/local/bin/etcd"].first { FileManager.default.isExecutableFile(atPath: $0) }

    public init() throws {
        guard let binary = Self.binary else { throw NodeError("etcd is not installed (apt-get install etcd-server)") }
        let ports = try freeLoopbackPorts(2)
        base = "http://127.0.0.1:\(ports[0])"
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("facewire-etcd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let peer = "http://127.0.0.1:\(ports[1])"
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [
            "--name", "t0", "--data-dir", folder.appendingPathComponent("data").path,
            "--listen-client-urls", base, "--advertise-client-urls", base,
            "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", "t0=\(peer)",
            "--initial-cluster-state", "new", "--unsafe-no-fsync", "--heartbeat-interval", "50", "--election-timeout", "500",
            "--logger", "zap", "--log-level", "error",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// Waits until its health endpoint answers (a bounded wait: a server that never comes up fails the test).
    public func ready() async throws {
        for _ in 0..<100 {
            var request = HTTPClientRequest(url: base + "/health")
            request.method = .GET
            if let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(1)),
                let body = try? await response.body.collect(upTo: 4096), String(buffer: body).contains("true")
            {
                return
            }
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        stop()
        throw NodeError("etcd did not come up at \(base)")
    }

    public func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: folder)
    }

    deinit { stop() }
}
