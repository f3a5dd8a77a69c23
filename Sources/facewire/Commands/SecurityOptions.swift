import ArgumentParser
import Foundation
import ZeroMQ

/// CURVE flags: encryption and authentication on every socket of a node (see protocol/SPEC.md §15; the flags: protocol/REFERENCE-NODES.md §1.3).
struct CurveOptions: ParsableArguments {
    @Option(help: "CURVE: this node's key pair (a .key file from facewire keygen). Encrypts and authenticates every socket.")
    var curveSecretKey: String?

    @Option(help: "CURVE: the collector's public key (its .pub file), for the sockets that connect to the collector.")
    var curveServerKey: String?

    @Option(help: "CURVE: the client public keys this node accepts on the sockets it binds: a .pub file, or a directory of them.")
    var curveAllow: String?

    /// Which of the flags a role uses.
    enum Needs { case serverKey, allowList, both }

    /// The node's CURVE settings, or nil when CURVE is off. Throws a clear error for a missing or unreadable file,
    /// or for a flag without `--curve-secret-key`.
    func security(needs: Needs) throws -> CurveSecurity? {
        guard let curveSecretKey else {
            if curveServerKey != nil || curveAllow != nil {
                throw ValidationError("--curve-server-key and --curve-allow need --curve-secret-key (this node's own keys)")
            }
            return nil
        }
        if needs == .serverKey, curveAllow != nil {
            throw ValidationError("--curve-allow is for nodes that accept connections (collector, capture); this one only connects")
        }
        if needs == .allowList, curveServerKey != nil {
            throw ValidationError("--curve-server-key is for nodes that connect to the collector; the collector itself takes --curve-allow")
        }
        let keyPair: CurveKeyPair
        do {
            keyPair = try CurveKeyPair(file: curveSecretKey)
        } catch {
            throw ValidationError("--curve-secret-key: \(error)")
        }
        guard keyPair.secretKey != nil else {
            throw ValidationError("--curve-secret-key \(curveSecretKey) holds only a public key: give the .key file")
        }
        var collectorKey: String?
        if needs != .allowList {
            guard let curveServerKey else { throw ValidationError("with CURVE, give the collector's public key: --curve-server-key FILE.pub") }
            do {
                collectorKey = try CurveKeyPair(file: curveServerKey).publicKey
            } catch {
                throw ValidationError("--curve-server-key: \(error)")
            }
        }
        var allowed: Set<String> = []
        if needs != .serverKey {
            guard let curveAllow else {
                throw ValidationError("with CURVE, give the client keys to accept: --curve-allow FILE.pub or a directory of .pub files")
            }
            do {
                allowed = try CurveSecurity.publicKeys(at: curveAllow)
            } catch {
                throw ValidationError("--curve-allow: \(error)")
            }
        }
        return CurveSecurity(keyPair: keyPair, collectorKey: collectorKey, allowedClients: allowed)
    }
}

/// `facewire keygen NAME`: a CURVE key pair in NAME.key (secret, mode 0600) and NAME.pub (public).
struct KeygenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Make a CURVE key pair: NAME.key (keep it secret) and NAME.pub (give it to the nodes that must accept this one).",
        discussion: """
            Every node gets its own pair (--curve-secret-key NAME.key). The collector's NAME.pub goes to every node \
            (--curve-server-key); capture nodes' public keys reach workers through the collector. Each binding \
            node lists the keys it accepts with --curve-allow (a .pub file or a directory of them): the collector \
            accepts capture nodes, workers, tails and views; a capture node accepts workers and views.
            """
    )

    @Argument(help: "Path and name of the pair, without extension (NAME.key and NAME.pub are written).")
    var name: String

    @Flag(help: "Overwrite existing files.")
    var force: Bool = false

    func run() throws {
        let secretPath = name + ".key"
        let publicPath = name + ".pub"
        for path in [secretPath, publicPath] where FileManager.default.fileExists(atPath: path) && !force {
            throw ValidationError("\(path) exists (use --force to overwrite)")
        }
        let pair = try CurveKeyPair.generate()
        // The secret file is created with mode 0600 before anything is written to it.
        let fd = open(secretPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw ValidationError("cannot write \(secretPath): \(String(cString: strerror(errno)))") }
        fchmod(fd, 0o600)
        let secretText = Array(pair.fileText().utf8)
        let written = secretText.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == secretText.count else { throw ValidationError("cannot write \(secretPath)") }
        try CurveKeyPair(publicKey: pair.publicKey, secretKey: nil).fileText().write(toFile: publicPath, atomically: true, encoding: .utf8)
        print("wrote \(secretPath) (secret) and \(publicPath); public key \(pair.publicKey)")
    }
}
