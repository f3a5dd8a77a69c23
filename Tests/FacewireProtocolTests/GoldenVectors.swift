import FacewireProtocol
import Foundation
import Testing

/// The golden vectors in `protocol/vectors/`, written by the independent Python encoder
/// `make_vectors.py`, and their catalogue `vectors.json`.
enum GoldenVectors {
    /// `protocol/vectors/`, found from this file's path (the tests run from any directory).
    static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // FacewireProtocolTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // repository root
        .appendingPathComponent("protocol/vectors", isDirectory: true)

    /// The catalogue, read once.
    /// - Throws: if `vectors.json` is missing or malformed.
    static func load() throws -> [Vector] {
        let data = try Data(contentsOf: directory.appendingPathComponent("vectors.json"))
        return try JSONDecoder().decode(Catalogue.self, from: data).vectors
    }

    /// Every vector; empty if the catalogue cannot be read (``catalogueIsReadable`` then fails).
    static let all: [Vector] = (try? load()) ?? []
    static let valid: [Vector] = all.filter(\.valid)
    static let invalid: [Vector] = all.filter { !$0.valid }

    /// The bytes of one vector file.
    static func bytes(_ file: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(file)))
    }

    private struct Catalogue: Decodable {
        var vectors: [Vector]
    }
}

/// One entry of `vectors.json`.
struct Vector: Decodable, Sendable, CustomTestStringConvertible {
    /// What the parts are: `frame`, `ready`, `envelope` or `stream`.
    enum Kind: String, Decodable, Sendable {
        case frame, ready, envelope, stream
    }

    var name: String
    var kind: Kind
    /// The `.bin` files of the ZeroMQ message parts, in order.
    var parts: [String]
    /// The same bytes, in hex.
    var hex: [String]
    var valid: Bool
    /// The decoded message (valid vectors).
    var expect: JSONValue?
    /// The ``ProtocolError/Code`` a decoder reports (invalid vectors).
    var error: String?
    var note: String?

    var testDescription: String { name }

    /// The message parts as read from the files.
    func partBytes() throws -> [[UInt8]] {
        try parts.map(GoldenVectors.bytes)
    }
}

/// A JSON value, decoded with `JSONDecoder` so that it reads the same on every platform.
enum JSONValue: Decodable, Equatable, Sendable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            // Before numbers: JSONDecoder reads only `true` / `false` as Bool, never 0 or 1.
            self = .bool(bool)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    var description: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .number(let value): "\(value)"
        case .string(let value): value.debugDescription
        case .array(let values): "[" + values.map(\.description).joined(separator: ",") + "]"
        case .object(let object):
            "{" + object.keys.sorted().map { "\($0.debugDescription):\(object[$0]!)" }.joined(separator: ",") + "}"
        }
    }

    /// Where `self` (actual) and `expected` differ, one line per field, named by its path.
    func differences(from expected: JSONValue, at path: String = "$") -> [String] {
        switch (self, expected) {
        case (.object(let actual), .object(let expected)):
            var out: [String] = []
            for key in Set(actual.keys).union(expected.keys).sorted() {
                switch (actual[key], expected[key]) {
                case (let a?, let e?): out += a.differences(from: e, at: "\(path).\(key)")
                case (let a?, nil): out.append("\(path).\(key): present (\(a)), expected absent")
                case (nil, let e?): out.append("\(path).\(key): absent, expected \(e)")
                case (nil, nil): break
                }
            }
            return out
        case (.array(let actual), .array(let expected)):
            guard actual.count == expected.count else {
                return ["\(path): \(actual.count) elements, expected \(expected.count)"]
            }
            return zip(actual, expected).enumerated().flatMap { index, pair in
                pair.0.differences(from: pair.1, at: "\(path)[\(index)]")
            }
        default:
            return self == expected ? [] : ["\(path): \(self), expected \(expected)"]
        }
    }
}

/// Hex of bytes, lower case, as in `vectors.json`.
func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}
