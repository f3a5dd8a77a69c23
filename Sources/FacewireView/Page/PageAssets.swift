import FacewireHTTP
import Hummingbird
import NIOCore

/// The page's files (`Page/Assets/`: real HTML, CSS and JavaScript files, embedded in the binary at build time by
/// SwiftPM's `embedInCode`; no build step, no CDN, no framework). Served `no-cache` with a strong
/// `ETag`, so a browser revalidates each load and gets `304 Not Modified` while the binary is the same.
public struct PageAsset: Sendable {
    public let path: String
    public let contentType: String
    public let body: String
    public let etag: String

    init(_ path: String, _ contentType: String, _ body: String) {
        self.path = path
        self.contentType = contentType
        self.body = body
        // FNV-1a 64 of the content: stable across runs and builds of the same text.
        let hash = body.utf8.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
        etag = "\"\(String(hash, radix: 16))\""
    }

    func response(ifNoneMatch: String?) -> Response {
        var headers: HTTPFields = [
            .contentType: contentType, .cacheControl: "no-cache", .eTag: etag,
            .named("X-Content-Type-Options"): "nosniff",
        ]
        if contentType.hasPrefix("text/html") {
            headers[.named("Content-Security-Policy")] =
                "default-src 'self'; img-src 'self' blob: data:; connect-src 'self'; style-src 'self'; script-src 'self'; frame-ancestors 'none'"
            headers[.named("Referrer-Policy")] = "no-referrer"
        }
        if let ifNoneMatch, ifNoneMatch.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag }) {
            return Response(status: .notModified, headers: headers)
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}

public enum PageAssets {
    public static let all: [PageAsset] = [
        PageAsset("/", "text/html; charset=utf-8", String(decoding: PackageResources.index_html, as: UTF8.self)),
        PageAsset("/app.js", "text/javascript; charset=utf-8", String(decoding: PackageResources.app_js, as: UTF8.self)),
        PageAsset("/style.css", "text/css; charset=utf-8", String(decoding: PackageResources.style_css, as: UTF8.self)),
    ]
}

extension HTTPFields.Element.Name {
    /// A header name this module spells out (a constant, so the force-unwrap cannot fail at run time).
    static func named(_ name: String) -> Self { Self(name)! }
}
