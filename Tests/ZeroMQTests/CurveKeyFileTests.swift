import Foundation
import Testing

@testable import ZeroMQ

/// A wrong key file must be reported for what is wrong with it, not as "not found".
@Suite("CURVE key files: every failure says its real cause")
struct CurveKeyFileTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("curve-key-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Writes `bytes` to a file of the test directory and returns its path.
    func file(_ name: String, _ bytes: [UInt8]) throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    func file(_ name: String, _ text: String) throws -> String { try file(name, Array(text.utf8)) }

    /// The message a user would see for `path` (what `--curve-secret-key: …` prints), or nil if it parsed.
    func message(_ path: String) -> String? {
        do {
            _ = try CurveKeyPair(file: path)
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test("a valid pair, a .pub file and a bare key parse; their round trip is exact")
    func validFiles() throws {
        let pair = try CurveKeyPair.generate()
        #expect(try CurveKeyPair(file: try file("good.key", pair.fileText())) == pair)
        let publicOnly = CurveKeyPair(publicKey: pair.publicKey, secretKey: nil)
        #expect(try CurveKeyPair(file: try file("good.pub", publicOnly.fileText())) == publicOnly)
        #expect(try CurveKeyPair(file: try file("bare.pub", "\(pair.publicKey)\n")) == publicOnly)
        #expect(try CurveSecurity.publicKeys(at: directory.path) == [pair.publicKey])
    }

    @Test("a missing file is reported as not found")
    func missing() throws {
        let path = directory.appendingPathComponent("absent.key").path
        #expect(message(path)?.contains("not found") == true)
        #expect(throws: CurveKeyFileError(path: path, cause: .notFound)) { try CurveKeyPair(file: path) }
        #expect(throws: CurveKeyFileError(path: path, cause: .notFound)) { try CurveSecurity.publicKeys(at: path) }
    }

    @Test("a directory, a binary file, an empty file and a huge file each say so, and none says not found")
    func notKeyFiles() throws {
        let cases: [(String, String)] = [
            (directory.path, "is a directory"),
            (try file("binary.key", [0xff, 0xfe, 0x00, 0x81, 0x40]), "not UTF-8 text"),
            (try file("empty.key", ""), "holds no public key"),
            (try file("comments.key", "# nothing but a comment\n\n"), "holds no public key"),
            (try file("huge.key", [UInt8](repeating: 0x41, count: CurveKeyPair.maxFileBytes + 10)), "not a key file"),
        ]
        for (path, expected) in cases {
            let text = try #require(message(path), "\(path) parsed")
            #expect(text.contains(expected), "\(path): \(text)")
            #expect(!text.contains("not found") && !text.contains("No such file"), "\(path): \(text)")
        }
    }

    @Test("a key of the wrong length or outside Z85 is named with its problem")
    func badKeys() throws {
        // The bare-key case needs a key that cannot read as anything else: one starting with "#" is a comment line,
        // and one with "=" after only letters (Z85 has both) reads as "name = value". Either made this test fail
        // now and then.
        var pair = try CurveKeyPair.generate()
        while pair.publicKey.hasPrefix("#") || pair.publicKey.contains("=") { pair = try CurveKeyPair.generate() }
        let secret = try #require(pair.secretKey)
        let short = String(pair.publicKey.dropLast())
        let notZ85 = "~" + pair.publicKey.dropFirst()
        let cases: [(String, String)] = [
            ("public-key = \"\(short)\"\n", "public-key is 39 characters long, not 40"),
            ("public-key = \"\(notZ85)\"\n", "public-key is not Z85: \"~\""),
            ("public-key = \"\(pair.publicKey)\"\nsecret-key = \"\(secret)XY\"\n", "secret-key is 42 characters long"),
            ("\(short)\n", "line 1 is 39 characters long"),
        ]
        for (index, (content, expected)) in cases.enumerated() {
            let path = try file("bad-\(index).key", content)
            let text = try #require(message(path), "\(content) parsed")
            #expect(text.contains(expected), "\(content): \(text)")
            #expect(!text.contains("No such file"), "\(text)")
        }
    }

    @Test("an allow-list directory without .pub files says so")
    func emptyAllowList() throws {
        let empty = directory.appendingPathComponent("keys")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        #expect(throws: CurveKeyFileError(path: empty.path, cause: .noKeyFiles)) { try CurveSecurity.publicKeys(at: empty.path) }
    }
}
