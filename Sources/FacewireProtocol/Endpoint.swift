/// Helpers for ZeroMQ endpoint strings (`tcp://host:port`, `ipc:///path`).
public enum Endpoint {
    /// Replaces a wildcard or unspecified host (`*`, `0.0.0.0`, `::`) in `endpoint` with `host`, so an
    /// address a node bound can be handed to peers that reach it as `host`.
    public static func resolvingWildcard(_ endpoint: String, host: String) -> String {
        guard let (scheme, endpointHost, port) = split(endpoint) else { return endpoint }
        guard ["*", "0.0.0.0", "[::]", "::"].contains(endpointHost) else { return endpoint }
        return "\(scheme)://\(host):\(port)"
    }

    /// The host part of a `tcp://host:port` endpoint, or nil.
    public static func host(of endpoint: String) -> String? {
        split(endpoint)?.1
    }

    /// The port of a `tcp://host:port` endpoint, or nil.
    public static func port(of endpoint: String) -> Int? {
        split(endpoint).flatMap { Int($0.2) }
    }

    /// Splits `tcp://host:port` into ("tcp", host, port); nil for other transports.
    static func split(_ endpoint: String) -> (String, String, String)? {
        guard let schemeEnd = endpoint.range(of: "://") else { return nil }
        let scheme = String(endpoint[..<schemeEnd.lowerBound])
        guard scheme == "tcp" else { return nil }
        let rest = endpoint[schemeEnd.upperBound...]
        guard let colon = rest.lastIndex(of: ":") else { return nil }
        return (scheme, String(rest[..<colon]), String(rest[rest.index(after: colon)...]))
    }
}
