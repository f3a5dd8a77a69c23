import CZeroMQ
import Foundation

/// A CURVE key pair (CurveZMQ: Curve25519 keys, encrypted and authenticated connections), as Z85 text.
public struct CurveKeyPair: Sendable, Equatable {
    /// 40 characters of Z85.
    public var publicKey: String
    /// 40 characters of Z85; nil for a public key alone (a `.pub` file).
    public var secretKey: String?

    public init(publicKey: String, secretKey: String?) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// A new key pair from libzmq (libsodium's random source).
    public static func generate() throws -> CurveKeyPair {
        var publicKey = [CChar](repeating: 0, count: 41)
        var secretKey = [CChar](repeating: 0, count: 41)
        guard zmq_curve_keypair(&publicKey, &secretKey) == 0 else { throw ZMQError.last("zmq_curve_keypair") }
        return CurveKeyPair(publicKey: String(z85Text: publicKey), secretKey: String(z85Text: secretKey))
    }

    /// Whether `key` is a well-formed Z85 key (40 characters that decode to 32 bytes).
    public static func isValidKey(_ key: String) -> Bool {
        guard key.utf8.count == 40 else { return false }
        var bytes = [UInt8](repeating: 0, count: 32)
        return key.withCString { zmq_z85_decode(&bytes, $0) } != nil
    }

    /// The Z85 text of a 32-byte binary key (what a ZAP request carries).
    public static func z85(_ binary: [UInt8]) -> String? {
        guard binary.count == 32 else { return nil }
        var text = [CChar](repeating: 0, count: 41)
        guard zmq_z85_encode(&text, binary, 32) != nil else { return nil }
        return String(z85Text: text)
    }

    /// The file a key pair is kept in: `public-key = "…"` and, in a secret file, `secret-key = "…"`, with comments.
    public func fileText() -> String {
        var text = secretKey == nil
            ? "# facewire CURVE public key: give it to the nodes that must accept this one\n"
            : "# facewire CURVE key pair: keep this file secret (its .pub twin holds the public half)\n"
        text += "public-key = \"\(publicKey)\"\n"
        if let secretKey { text += "secret-key = \"\(secretKey)\"\n" }
        return text
    }

    /// Reads a `.key` or `.pub` file written by ``fileText()`` (a bare 40-character key also reads as a public key).
    /// - Throws: ``CurveKeyFileError`` naming the real cause: not found, unreadable, a directory, too large, not
    ///   text, no public key, or a key of the wrong length or not in Z85.
    public init(file path: String) throws {
        let text = try Self.readKeyFile(path)
        var values: [String: String] = [:]
        var bareKey: (line: Int, text: String)?
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            // A key by itself first: Z85 has "=" in its alphabet.
            if Self.isValidKey(trimmed) {
                values["public-key"] = values["public-key"] ?? trimmed
            } else if let equals = trimmed.firstIndex(of: "="),
                      case let name = trimmed[..<equals].trimmingCharacters(in: .whitespaces),
                      !name.isEmpty, name.allSatisfy({ $0.isLetter || $0 == "-" }) {
                let value = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
                    .trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                values[name] = value
            } else if bareKey == nil {
                bareKey = (index + 1, trimmed)
            }
        }
        let publicKey: String
        if let value = values["public-key"] {
            if let problem = Self.keyProblem(value) {
                throw CurveKeyFileError(path: path, cause: .badKey(name: "public-key", problem: problem))
            }
            publicKey = value
        } else if let bareKey {
            let problem = Self.keyProblem(bareKey.text) ?? "is not a key"
            throw CurveKeyFileError(path: path, cause: .badKey(name: "line \(bareKey.line)", problem: problem))
        } else {
            throw CurveKeyFileError(path: path, cause: .noPublicKey)
        }
        if let secret = values["secret-key"], let problem = Self.keyProblem(secret) {
            throw CurveKeyFileError(path: path, cause: .badKey(name: "secret-key", problem: problem))
        }
        self.init(publicKey: publicKey, secretKey: values["secret-key"])
    }

    /// The largest key file read: a key pair file is about 200 bytes.
    public static let maxFileBytes = 64 * 1024

    /// The Z85 alphabet (ZeroMQ RFC 32).
    static let z85Alphabet = Set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#".unicodeScalars)

    /// What is wrong with `key` as a CURVE key, or nil when it is a valid one.
    static func keyProblem(_ key: String) -> String? {
        if isValidKey(key) { return nil }
        let length = key.unicodeScalars.count
        guard length == 40 else { return "is \(length) characters long, not 40 (a key is 40 characters of Z85)" }
        if let bad = key.unicodeScalars.first(where: { !z85Alphabet.contains($0) }) {
            return "is not Z85: \(String(bad).debugDescription) is not a Z85 character"
        }
        return "is not a valid Z85 key (it does not decode to 32 bytes)"
    }

    /// The text of a key file, or an error naming the real cause.
    static func readKeyFile(_ path: String) throws -> String {
        func failure(_ cause: CurveKeyFileError.Cause) -> CurveKeyFileError { CurveKeyFileError(path: path, cause: cause) }
        func systemReason(_ code: Int32) -> String { String(cString: strerror(code)) }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            throw failure(code == ENOENT || code == ENOTDIR ? .notFound : .unreadable(systemReason(code)))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure(.unreadable(systemReason(errno))) }
        if info.st_mode & S_IFMT == S_IFDIR { throw failure(.isDirectory) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure(.unreadable(systemReason(errno)))
            }
            if count == 0 { break }
            bytes += chunk[0..<count]
            if bytes.count > maxFileBytes { throw failure(.tooLarge(bytes.count)) }
        }
        guard let text = String(bytes: bytes, encoding: .utf8) else { throw failure(.notText) }
        return text
    }
}

/// A node's CURVE settings: its own key pair, the collector's public key, and whom it accepts.
public struct CurveSecurity: Sendable {
    /// This node's keys (`--curve-secret-key`).
    public var keyPair: CurveKeyPair
    /// The collector's public key (`--curve-server-key`), for the sockets that connect to it.
    public var collectorKey: String?
    /// The client public keys accepted on the sockets this node binds (`--curve-allow`).
    public var allowedClients: Set<String>

    public init(keyPair: CurveKeyPair, collectorKey: String?, allowedClients: Set<String>) {
        self.keyPair = keyPair
        self.collectorKey = collectorKey
        self.allowedClients = allowedClients
    }

    /// Reads every public key in `path`: one key file, or every `*.pub` file of a directory.
    /// - Throws: ``CurveKeyFileError`` for the path or the first bad file.
    public static func publicKeys(at path: String) throws -> Set<String> {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CurveKeyFileError(path: path, cause: .notFound)
        }
        if !isDirectory.boolValue { return [try CurveKeyPair(file: path).publicKey] }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: path)
        } catch {
            throw CurveKeyFileError(path: path, cause: .unreadable("cannot list the directory: \(error.localizedDescription)"))
        }
        let files = names.filter { $0.hasSuffix(".pub") }.sorted()
        guard !files.isEmpty else { throw CurveKeyFileError(path: path, cause: .noKeyFiles) }
        return Set(try files.map { try CurveKeyPair(file: path + "/" + $0).publicKey })
    }
}

extension ZMQSocket {
    /// Makes this (binding) socket a CURVE server with `secretKey`: every connection is encrypted, and the
    /// context's ``ZAPAuthenticator`` decides which client keys are let in.
    /// - Parameter zapDomain: the ZAP domain its handshakes are reported under (``ZAPAuthenticator/Decision/domain``),
    ///   to tell one server socket's refusals from another's; the allow-list is the same.
    public func makeCurveServer(secretKey: String, zapDomain: String = ZAPAuthenticator.defaultDomain) throws {
        try setOption(ZMQ_CURVE_SERVER, Int32(1))
        try setOption(ZMQ_CURVE_SECRETKEY, Array(secretKey.utf8))
        try setOption(ZMQ_ZAP_DOMAIN, Array(zapDomain.utf8))
    }

    /// Makes this (connecting) socket a CURVE client of the server whose public key is `serverKey`.
    public func makeCurveClient(serverKey: String, keyPair: CurveKeyPair) throws {
        guard let secretKey = keyPair.secretKey else {
            throw ZMQError(code: EINVAL, operation: "a CURVE client needs a secret key")
        }
        try setOption(ZMQ_CURVE_SERVERKEY, Array(serverKey.utf8))
        try setOption(ZMQ_CURVE_PUBLICKEY, Array(keyPair.publicKey.utf8))
        try setOption(ZMQ_CURVE_SECRETKEY, Array(secretKey.utf8))
    }
}

/// A CURVE setting that cannot work, described for people.
public struct CurveConfigurationError: Error, Sendable, CustomStringConvertible {
    public var description: String
}

extension CurveSecurity {
    /// Makes `socket`, one that connects to the collector, a CURVE client of the collector. `security` nil (plain
    /// TCP) leaves it as it is.
    public static func secureToCollector(_ socket: ZMQSocket, _ security: CurveSecurity?) throws {
        guard let security else { return }
        guard let key = security.collectorKey else {
            throw CurveConfigurationError(description: "CURVE needs the collector's public key (--curve-server-key)")
        }
        try socket.makeCurveClient(serverKey: key, keyPair: security.keyPair)
    }
}

/// The ZeroMQ Authentication Protocol (ZAP, RFC 27) handler of one context: CURVE clients whose public key is on
/// the allow-list are let in, every other handshake is refused (the peer gets nothing) and counted.
///
/// It must be started before any server socket of the context accepts a connection, and stops when the context is
/// shut down.
public final class ZAPAuthenticator: @unchecked Sendable {
    private let socket: ZMQSocket
    private let allowed: Set<String>
    private let lock = NSLock()
    private var counts = (accepted: 0, denied: 0)
    private var refusedKeys: Set<String> = []
    private let onDecision: (@Sendable (Decision) -> Void)?

    /// One handshake's outcome.
    public struct Decision: Sendable {
        public var accepted: Bool
        /// The client's public key (Z85), or "-" for a client not using CURVE.
        public var key: String
        /// The peer's address as libzmq gives it.
        public var address: String
        /// The first refusal of this key (peers retry every second or so: log this one, count them all).
        public var isFirstRefusal: Bool
        /// The ZAP domain of the server socket the client connected to (``ZMQSocket/makeCurveServer(secretKey:zapDomain:)``).
        public var domain: String = ZAPAuthenticator.defaultDomain
    }

    /// The ZAP domain of server sockets that do not name one.
    public static let defaultDomain = "facewire"

    /// Binds `inproc://zeromq.zap.01` in `context` and answers requests on a thread of its own.
    /// - Parameter onDecision: called for each handshake, on the handler's thread.
    public init(context: ZMQContext, allowed: Set<String>, onDecision: (@Sendable (Decision) -> Void)? = nil) throws {
        socket = try ZMQSocket(context: context, kind: .rep)
        try socket.bind("inproc://zeromq.zap.01")
        self.allowed = allowed
        self.onDecision = onDecision
        let thread = Thread { [self] in serve() }
        thread.name = "facewire-zap"
        thread.start()
    }

    /// Handshakes accepted and refused so far.
    public var decisions: (accepted: Int, denied: Int) { lock.withLock { counts } }

    private func serve() {
        defer { socket.close() }
        while true {
            do {
                guard try socket.waitForInput(timeoutMilliseconds: 500), let request = try socket.receive(dontWait: true) else { continue }
                try socket.send(reply(to: request))
            } catch let error as ZMQError where error.isTerminated {
                return
            } catch {
                continue
            }
        }
    }

    /// ZAP request: version, request id, domain, address, identity, mechanism, credentials...
    private func reply(to request: [[UInt8]]) -> [[UInt8]] {
        let requestID = request.count > 1 ? request[1] : []
        func answer(_ code: String, _ text: String, user: String = "") -> [[UInt8]] {
            [Array("1.0".utf8), requestID, Array(code.utf8), Array(text.utf8), Array(user.utf8), []]
        }
        guard request.count >= 6, request[0] == Array("1.0".utf8) else { return answer("500", "malformed ZAP request") }
        let domain = String(decoding: request[2].prefix(64), as: UTF8.self)
        let address = String(decoding: request[3], as: UTF8.self)
        let mechanism = String(decoding: request[5], as: UTF8.self)
        guard mechanism == "CURVE", request.count >= 7, let key = CurveKeyPair.z85(request[6]) else {
            record(false, "-", address, domain)
            return answer("400", "CURVE required")
        }
        let accepted = allowed.contains(key)
        record(accepted, key, address, domain)
        return accepted ? answer("200", "OK", user: key) : answer("400", "key not allowed")
    }

    private func record(_ accepted: Bool, _ key: String, _ address: String, _ domain: String) {
        let first: Bool = lock.withLock {
            if accepted {
                counts.accepted += 1
                return false
            }
            counts.denied += 1
            return refusedKeys.insert(key).inserted
        }
        onDecision?(Decision(accepted: accepted, key: key, address: address, isFirstRefusal: first, domain: domain))
    }
}

extension String {
    /// The text libzmq wrote into a NUL-terminated buffer (Z85: 40 ASCII characters and the NUL).
    fileprivate init(z85Text buffer: [CChar]) {
        self.init(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
