import FacewireRuntime
import Hummingbird

extension HTTPServer {
    /// Mounts `/metrics` (Prometheus text from ``Observability/registry``) and `/healthz` (200 or 503, with
    /// ``Health/json``: `{"detail":…,"status":"ok"}`, and a collector's `"role"`) on `routes`.
    public static func mountObservability(on routes: Routes, health: @escaping @Sendable () -> Health) {
        routes.get("/metrics") { _, _ -> Response in
            let text = Observability.registry.emitToBuffer()
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: text)))
        }
        routes.get("/healthz") { _, _ -> Response in
            let state = health()
            return Response(
                status: state.healthy ? .ok : .serviceUnavailable, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: state.json + "\n")))
        }
    }
}
