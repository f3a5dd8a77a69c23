import FacewireHTTP
import FacewireProtocol
import Foundation
import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The live view's HTTP side, on the node's ``HTTPServer``:
///
/// | path | what |
/// |---|---|
/// | `/`, `/app.js`, `/style.css` | the page, embedded in the binary (``PageAssets``): `no-cache` with an `ETag` |
/// | `/ws` | the live channel (WebSocket): the state, then joined frames (binary), statuses and events (JSON) |
/// | `/api/state` | every stream's status and the newest events, JSON |
/// | `/streams/{id}/snapshot.jpg` | the newest processed frame, upright, faces drawn in (`?faces=0`: clean) |
/// | `/streams/{id}/tracks/{trackingID}.jpg` | that track's best face, upright and level, with a margin |
/// | `/streams/{id}/tracks/{trackingID}.json` | `{"picture":true}` once that picture exists (the page asks before it loads one, so that a picture not made yet is no failed request) |
///
/// With a token every route but `/healthz` needs it: `Authorization: Bearer TOKEN`, the cookie the page gets when
/// opened as `/?token=TOKEN`, or `?token=TOKEN` itself.
public enum ViewRoutes {
    public static func mount(on routes: HTTPServer.Routes, node: ViewNode, token: String?) {
        routes.add(middleware: TokenGate(token: token))
        for asset in PageAssets.all {
            routes.get(RouterPath(asset.path)) { request, _ -> Response in
                asset.response(ifNoneMatch: request.headers[.ifNoneMatch])
            }
        }
        routes.get("/api/state") { _, _ -> Response in
            json(PageJSON.encode(node.read { $0.state() }))
        }
        routes.get("/streams/:stream/snapshot.jpg") { request, context -> Response in
            let stream = try streamID(context)
            let faces = request.uri.queryParameters.get("faces") != "0"
            guard let (jpeg, seq) = await node.snapshot(stream, faces: faces) else {
                throw HTTPError(.notFound, message: "no processed frame of \(stream) with a preview yet")
            }
            var response = image(jpeg, cache: "no-store")
            response.headers[.named("X-Facewire-Seq")] = "\(seq)"
            return response
        }
        routes.get("/streams/:stream/tracks/:file") { _, context -> Response in
            let stream = try streamID(context)
            let file = context.parameters.get("file") ?? ""
            let probe = file.hasSuffix(".json")
            guard file.hasSuffix(".jpg") || probe, file.utf8.count <= 24, let id = UInt64(file.split(separator: ".")[0]), id != 0 else {
                throw HTTPError(.badRequest, message: "a track is /streams/ID/tracks/TRACKING_ID.jpg (or .json)")
            }
            let crop = node.read({ $0.crop(stream, trackingID: id) })
            if probe { return json(crop == nil ? #"{"picture":false}"# : #"{"picture":true}"#) }
            guard let crop else {
                throw HTTPError(.notFound, message: "no picture of track \(id) of \(stream)")
            }
            return image(crop, cache: "no-cache")
        }
    }

    /// `/ws`: sends the state at once, then every push of ``ViewNode/hub`` until the page goes.
    public static func mountWebSocket(on routes: HTTPServer.WebSocketRoutes, node: ViewNode, token: String?) {
        routes.add(middleware: TokenGate(token: token))
        routes.ws("/ws") { inbound, outbound, _ in
            guard let (id, pushes) = node.hub.join() else {
                try await outbound.close(.unexpectedServerError, reason: "too many pages")
                return
            }
            defer { node.hub.leave(id) }
            try await outbound.write(.text(PageJSON.encode(node.read { $0.state() })))
            try await withThrowingTaskGroup(of: Void.self) { group in
                // The page sends nothing; reading is how its close (or its death, by the pings) is seen.
                group.addTask { for try await _ in inbound {} }
                group.addTask {
                    for await push in pushes {
                        switch push {
                        case .binary(let bytes): try await outbound.write(.binary(ByteBuffer(bytes: bytes)))
                        case .text(let text): try await outbound.write(.text(text))
                        }
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }

    private static func streamID(_ context: some RequestContext) throws -> String {
        let stream = context.parameters.get("stream") ?? ""
        guard Wire.isValidStreamID(stream) else { throw HTTPError(.badRequest, message: "not a stream id") }
        return stream
    }

    private static func json(_ text: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    private static func image(_ jpeg: [UInt8], cache: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: "image/jpeg", .cacheControl: cache, .named("X-Content-Type-Options"): "nosniff"],
            body: .init(byteBuffer: ByteBuffer(bytes: jpeg)))
    }
}

/// `--http-token`: every request but `/healthz` must carry the token (compared in constant time).
struct TokenGate<Context: RequestContext>: RouterMiddleware {
    let token: [UInt8]?
    static var cookieName: String { "facewire_token" }

    init(token: String?) {
        self.token = token.map { Array($0.utf8) }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let token, request.uri.path != "/healthz" else { return try await next(request, context) }
        let query = request.uri.queryParameters.get("token")
        var supplied = [request.headers[.authorization].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }, query]
        supplied.append(request.cookies[Self.cookieName]?.value)
        guard supplied.contains(where: { $0.map { Self.equal(Array($0.utf8), token) } ?? false }) else {
            return Response(
                status: .unauthorized, headers: [.contentType: "text/plain; charset=utf-8", .wwwAuthenticate: "Bearer"],
                body: .init(byteBuffer: ByteBuffer(string: "this view needs its token: open /?token=TOKEN\n")))
        }
        var response = try await next(request, context)
        if let query, Self.equal(Array(query.utf8), token) {
            // The page's own requests (images, the WebSocket) then carry it without putting it in every URL.
            response.headers[.setCookie] = "\(Self.cookieName)=\(query); Path=/; HttpOnly; SameSite=Strict"
        }
        return response
    }

    /// Equal in time that depends on the lengths only.
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
