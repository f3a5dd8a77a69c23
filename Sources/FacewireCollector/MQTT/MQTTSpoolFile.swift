import FacewireCollectorCore
import FacewireProtocol
import FacewireRuntime
import Foundation

/// The MQTT spool on disk: one JSON line per event as it enters the spool (`{"id":N,"topic":"…","payload":"…"}`) and
/// one per acknowledgement (`{"ack":N}`); emptied when the spool is. A collector started again finds the events not
/// yet acknowledged (``restored``) and sends them first. Written with `write(2)` per line (the events are few: a face
/// appearing or leaving); a line it cannot write is counted (`mqtt_spool_write_failed`), the event stays in memory.
final class MQTTSpoolFile {
    let path: String
    private var descriptor: Int32
    /// What the file held unacknowledged when opened, oldest first (at most `maxBytes` of it).
    private(set) var restored: [MQTTOutbox.Publication] = []

    init(path: String, maxBytes: Int) throws {
        self.path = path
        try? FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        descriptor = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw NodeError("cannot open the MQTT spool file \(path): \(String(cString: strerror(errno)))")
        }
        restored = Self.read(path: path, maxBytes: maxBytes)
    }

    deinit { close(descriptor) }

    /// The unacknowledged events of the file, oldest first; lines that do not parse are skipped; at most `maxBytes`
    /// of events (the file is ours, but a full disk or a crash can leave a torn last line).
    static func read(path: String, maxBytes: Int) -> [MQTTOutbox.Publication] {
        guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else { return [] }
        var events: [(id: UInt64, publication: MQTTOutbox.Publication)] = []
        var acknowledged = Set<UInt64>()
        for line in data.split(separator: UInt8(ascii: "\n")) {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else { continue }
            if let ack = (object["ack"] as? NSNumber)?.uint64Value {
                acknowledged.insert(ack)
            } else if let id = (object["id"] as? NSNumber)?.uint64Value, let topic = object["topic"] as? String,
                let payload = object["payload"] as? String
            {
                events.append((id, MQTTOutbox.Publication(topic: topic, payload: Array(payload.utf8), retain: false)))
            }
        }
        var total = 0
        var kept: [MQTTOutbox.Publication] = []
        for event in events where !acknowledged.contains(event.id) {
            total += event.publication.topic.utf8.count + event.publication.payload.count
            if total > maxBytes { break }
            kept.append(event.publication)
        }
        return kept
    }

    /// Replaces the file's content with `spool` (at start, under the ids the outbox gave the restored events).
    func rewrite(_ spool: [MQTTOutbox.Spooled]) throws {
        guard ftruncate(descriptor, 0) == 0, lseek(descriptor, 0, SEEK_SET) == 0 else {
            throw NodeError("cannot rewrite the MQTT spool file \(path): \(String(cString: strerror(errno)))")
        }
        let counters = Counters()
        for entry in spool { append(entry, counters: counters) }
    }

    func append(_ entry: MQTTOutbox.Spooled, counters: Counters) {
        let payload = String(decoding: entry.publication.payload, as: UTF8.self)
        write("{\"id\":\(entry.id),\"topic\":\(JSONLines.quoted(entry.publication.topic)),\"payload\":\(JSONLines.quoted(payload))}\n", counters)
    }

    /// Notes that event `id` was acknowledged; when the spool is `empty`, the file is emptied instead.
    func acknowledge(_ id: UInt64, empty: Bool, counters: Counters) {
        if empty {
            if ftruncate(descriptor, 0) != 0 || lseek(descriptor, 0, SEEK_SET) != 0 { counters.add("mqtt_spool_write_failed") }
        } else {
            write("{\"ack\":\(id)}\n", counters)
        }
    }

    private func write(_ line: String, _ counters: Counters) {
        let bytes = Array(line.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        if written != bytes.count { counters.add("mqtt_spool_write_failed") }
    }
}
