import FacewireTail
import Foundation
import Logging
import FacewireProtocol

/// `--log-format json`: one JSON object per line on stderr, with `time`, `level`, `label`, `message` and the
/// metadata as string fields, for log shippers (Loki, Elasticsearch, journald's JSON export).
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    private static let lock = NSLock()

    func log(event: LogEvent) {
        var fields: [String: String] = [:]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) { fields[key] = "\(value)" }
        let time = ISO8601DateFormatter.string(from: Date(), timeZone: .gmt, formatOptions: [.withInternetDateTime, .withFractionalSeconds])
        var line = "{\"time\":\(Self.quoted(time)),\"level\":\(Self.quoted(event.level.rawValue)),\"label\":\(Self.quoted(label)),"
        line += "\"message\":\(Self.quoted("\(event.message)"))"
        for key in fields.keys.sorted() where !["time", "level", "label", "message"].contains(key) {
            line += ",\(Self.quoted(key)):\(Self.quoted(fields[key]!))"
        }
        line += "}\n"
        Self.lock.withLock { FileHandle.standardError.write(Data(line.utf8)) }
    }

    static func quoted(_ text: String) -> String { JSONLines.quoted(text) }
}
