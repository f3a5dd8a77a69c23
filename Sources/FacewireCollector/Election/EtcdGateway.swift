import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// The requests ``LeaderElection`` makes, against etcd v3's JSON gateway (`POST /v3/...`, etcd 3.4 and later: Debian 12
/// has 3.4.23). Written by hand on AsyncHTTPClient because no Swift etcd client is among the kept libraries, and these
/// five calls are all the election needs. Every answer is hostile until checked: bodies are read up to
/// ``maxBodyBytes``, numbers (which the gateway sends as strings) must parse, and a missing field means its zero value,
/// as the gateway leaves zeros out.
public struct EtcdGateway: Sendable {
    /// What a put-if-absent of the leader key found.
    public enum AcquireAnswer: Equatable, Sendable {
        /// Written, at this revision (the key's create revision).
        case acquired(revision: Int64)
        /// Held by `value` since `createRevision`, attached to `lease`.
        case held(value: String, createRevision: Int64, lease: Int64)
    }

    /// An answer that is not what the gateway promises.
    public struct Malformed: Error, CustomStringConvertible {
        public var description: String
    }

    /// The longest unary answer or watch line read.
    public static let maxBodyBytes = 64 * 1024

    /// `http://host:port`, no path.
    public let base: String
    /// The leader key (`facewire/<group>/leader`).
    public let key: String
    let client: HTTPClient
    let timeout: TimeAmount

    /// - Parameters:
    ///   - base: the member's client URL, `http://host:port`.
    ///   - key: the key the election writes.
    ///   - timeout: for each unary request (a renewal must be answered well within the lease's time to live).
    public init(base: String, key: String, client: HTTPClient = .shared, timeout: TimeAmount = .milliseconds(500)) {
        self.base = base
        self.key = key
        self.client = client
        self.timeout = timeout
    }

    // MARK: - Calls

    /// A new lease: its id and granted time to live (seconds).
    public func grant(ttlSeconds: Int64) async throws -> (id: Int64, ttlSeconds: Int64) {
        let answer: LeaseAnswer = try await call("lease/grant", ["TTL": String(ttlSeconds)])
        return (try Self.number(answer.ID, "ID"), try Self.number(answer.TTL ?? "0", "TTL"))
    }

    /// Renews `lease`; its time to live, 0 when the lease is gone (the gateway then answers without `TTL`).
    public func renew(lease: Int64) async throws -> Int64 {
        let answer: StreamResult<LeaseAnswer> = try await call("lease/keepalive", ["ID": String(lease)])
        guard let result = answer.result else { throw Malformed(description: "a keepalive answer without a result") }
        return try Self.number(result.TTL ?? "0", "TTL")
    }

    /// Revokes `lease` (its keys go with it); a lease already gone is not an error.
    public func revoke(lease: Int64) async throws {
        do {
            let _: Header = try await call("lease/revoke", ["ID": String(lease)])
        } catch let error as GatewayError where error.code == 5 {
            return  // not found: already gone
        }
    }

    /// Writes the key with `value`, attached to `lease`, only if it is absent; else says who holds it.
    public func acquire(lease: Int64, value: String) async throws -> AcquireAnswer {
        try await putIfAbsent(key: key, value: value, lease: lease)
    }

    /// Writes `key` with `value` (attached to `lease`; 0: none, the key stays) only if it is absent; else what it holds.
    public func putIfAbsent(key: String, value: String, lease: Int64 = 0) async throws -> AcquireAnswer {
        let key = Data(key.utf8).base64EncodedString()
        let body: [String: Any] = [
            "compare": [["key": key, "target": "CREATE", "result": "EQUAL", "create_revision": "0"]],
            "success": [["request_put": ["key": key, "value": Data(value.utf8).base64EncodedString(), "lease": String(lease)]]],
            "failure": [["request_range": ["key": key]]],
        ]
        let answer: TxnAnswer = try await call("kv/txn", body)
        if answer.succeeded == true {
            return .acquired(revision: try Self.number(answer.header?.revision ?? "0", "revision"))
        }
        guard let held = answer.responses?.first?.response_range?.kvs?.first else {
            // Deleted between the compare and the range of the same transaction cannot happen; a gateway that says so
            // is not trusted.
            throw Malformed(description: "a failed put-if-absent without the key's holder")
        }
        let value = Data(base64Encoded: held.value ?? "").map { String(decoding: $0, as: UTF8.self) } ?? ""
        return .held(
            value: value, createRevision: try Self.number(held.create_revision ?? "0", "create_revision"),
            lease: try Self.number(held.lease ?? "0", "lease"))
    }

    /// Watches the key from `afterRevision + 1` and returns when it is deleted (or written by another holder: the
    /// election then asks again). A deletion since that revision is reported at once (etcd replays it). Throws when the
    /// stream ends or breaks; cancel the task to stop watching.
    public func waitForDeletion(afterRevision: Int64) async throws {
        var request = HTTPClientRequest(url: base + "/v3/watch")
        request.method = .POST
        // A member cut off from its cluster's leader fails the stream instead of keeping it open and silent.
        request.headers.add(name: "Grpc-Metadata-hasleader", value: "true")
        let body: [String: Any] = [
            "create_request": [
                "key": Data(key.utf8).base64EncodedString(),
                "start_revision": String(afterRevision &+ 1),
            ]
        ]
        request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body)))
        let response = try await client.execute(request, timeout: .hours(24))
        guard response.status == .ok else { throw GatewayError(status: response.status.code, code: 0, message: "watch") }
        var line: [UInt8] = []
        for try await chunk in response.body {
            for byte in chunk.readableBytesView {
                guard byte != UInt8(ascii: "\n") else {
                    if try Self.watchLineEnds(line) { return }
                    line.removeAll(keepingCapacity: true)
                    continue
                }
                guard line.count < Self.maxBodyBytes else { throw Malformed(description: "a watch line over \(Self.maxBodyBytes) bytes") }
                line.append(byte)
            }
        }
        throw Malformed(description: "the watch stream ended")
    }

    // MARK: - Parsing

    /// Whether one line of the watch stream reports a change of the key (a deletion, or a put by anyone); throws on
    /// an error line or a cancelled watch.
    static func watchLineEnds(_ line: [UInt8]) throws -> Bool {
        guard !line.isEmpty else { return false }
        let decoded = try JSONDecoder().decode(StreamResult<WatchAnswer>.self, from: Data(line))
        if let error = decoded.error { throw GatewayError(status: UInt(clamping: error.http_code ?? 0), code: error.grpc_code ?? 0, message: error.message ?? "") }
        guard let result = decoded.result else { throw Malformed(description: "a watch line without a result") }
        if result.canceled == true { throw Malformed(description: "the watch was cancelled (compacted: \(result.compact_revision ?? "?"))") }
        return !(result.events ?? []).isEmpty
    }

    /// A decimal number the gateway sent as a string.
    static func number(_ text: String, _ field: String) throws -> Int64 {
        guard text.utf8.count <= 20, let value = Int64(text) else { throw Malformed(description: "\(field) is not a 64-bit number") }
        return value
    }

    // MARK: - Transport

    /// An error answer of the gateway (`{"error", "code"}`: the gRPC code; 5 is not found).
    struct GatewayError: Error, CustomStringConvertible {
        var status: UInt
        var code: Int
        var message: String
        var description: String { "etcd answered \(status): \(message.prefix(200)) (code \(code))" }
    }

    private func call<Answer: Decodable>(_ path: String, _ body: [String: Any]) async throws -> Answer {
        var request = HTTPClientRequest(url: base + "/v3/" + path)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body)))
        let response = try await client.execute(request, timeout: timeout)
        let bytes = try await response.body.collect(upTo: Self.maxBodyBytes)
        guard response.status == .ok else {
            let error = try? JSONDecoder().decode(ErrorAnswer.self, from: Data(bytes.readableBytesView))
            throw GatewayError(status: response.status.code, code: error?.code ?? 0, message: error?.message ?? "")
        }
        // An empty answer is an error too (etcd 3.4.23 upstream answers some errors with nothing: etcd#15256).
        guard bytes.readableBytes > 0 else { throw Malformed(description: "an empty answer to \(path)") }
        return try JSONDecoder().decode(Answer.self, from: Data(bytes.readableBytesView))
    }

    // The gateway's JSON, as far as the election reads it (every field optional: zeros are left out).
    struct Header: Decodable { var revision: String? }
    struct LeaseAnswer: Decodable {
        var ID: String
        var TTL: String?
    }
    struct StreamResult<Result: Decodable>: Decodable {
        var result: Result?
        var error: StreamError?
    }
    struct StreamError: Decodable {
        var grpc_code: Int?
        var http_code: Int?
        var message: String?
    }
    struct KeyValue: Decodable {
        var create_revision: String?
        var value: String?
        var lease: String?
    }
    struct TxnAnswer: Decodable {
        struct Response: Decodable {
            struct Range: Decodable { var kvs: [KeyValue]? }
            var response_range: Range?
        }
        var header: Header?
        var succeeded: Bool?
        var responses: [Response]?
    }
    struct WatchAnswer: Decodable {
        var canceled: Bool?
        var compact_revision: String?
        var events: [Event]?
        struct Event: Decodable { var type: String? }
    }
    struct ErrorAnswer: Decodable {
        var message: String?
        var code: Int?
    }
}
