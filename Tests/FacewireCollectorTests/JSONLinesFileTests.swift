import FacewireProtocol
import Foundation
import Testing

@testable import FacewireCollector

@Suite("JSON Lines file (the collector's --output)")
struct JSONLinesFileTests {
    func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("fw-jsonl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func read(_ url: URL) throws -> [String] {
        try String(contentsOf: url, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    @Test func rotatesBySizeInOrderAndNeverSplitsALine() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("results.jsonl").path
        let file = try JSONLinesFile(path: path, maxBytes: 30)
        for index in 0..<10 { try file.write(line: "line \(index) 123456789") }  // 21 bytes with the newline
        try file.write(line: String(repeating: "x", count: 50))  // larger than maxBytes: alone in its file
        try file.write(line: "after")
        try file.close()
        #expect(file.lines == 12)
        #expect(file.rotations == 11)
        var all: [String] = []
        for number in 1...11 {
            let segment = URL(fileURLWithPath: JSONLinesFile.segmentPath(for: path, number: number))
            let lines = try read(segment)
            #expect(lines.last == "", "\(segment.lastPathComponent) ends with a newline")
            #expect(lines.count == 2, "\(segment.lastPathComponent): one line per file at this size")
            all += lines.dropLast()
        }
        all += try read(URL(fileURLWithPath: path)).dropLast()
        #expect(all == (0..<10).map { "line \($0) 123456789" } + [String(repeating: "x", count: 50), "after"])
        #expect(JSONLinesFile.segmentPath(for: path, number: 12).hasSuffix("/results-000012.jsonl"))
    }

    @Test func reopeningAppendsAndContinuesTheNumbering() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("out.jsonl").path
        do {
            let file = try JSONLinesFile(path: path, maxBytes: 16)
            try file.write(line: "a123456789")
            try file.write(line: "b123456789")  // rotates a into out-000001.jsonl
            try file.close()
        }
        let again = try JSONLinesFile(path: path, maxBytes: 16)
        try again.write(line: "c123456789")  // rotates b into out-000002.jsonl, not over 000001
        try again.close()
        #expect(try read(URL(fileURLWithPath: JSONLinesFile.segmentPath(for: path, number: 1))) == ["a123456789", ""])
        #expect(try read(URL(fileURLWithPath: JSONLinesFile.segmentPath(for: path, number: 2))) == ["b123456789", ""])
        #expect(try read(URL(fileURLWithPath: path)) == ["c123456789", ""])
    }

    @Test func writesEveryKindOfMessageAsJSON() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("s.jsonl").path
        let file = try JSONLinesFile(path: path)
        var frame = FrameResult()
        frame.stream = "s"
        frame.seq = 3
        frame.status = .processed
        var event = FaceEvent()
        event.kind = .appeared
        event.trackingID = 1
        try file.write(StreamMessage(stream: "s", epoch: 2, body: .frame(frame)))
        try file.write(StreamMessage(stream: "s", epoch: 2, body: .event(event)))
        try file.write(StreamMessage(stream: "s", epoch: 2, body: .end(StreamSummary())))
        try file.write(StreamMessage(stream: "", epoch: 0, body: nil))  // a heartbeat: nothing to write
        try file.close()
        let lines = try read(URL(fileURLWithPath: path)).dropLast()
        #expect(lines.count == 3)
        for line in lines { #expect(try JSONSerialization.jsonObject(with: Data(line.utf8)) is [String: Any]) }
        #expect(throws: (any Error).self) { try file.write(line: "closed") }
        #expect(throws: (any Error).self) { try JSONLinesFile(path: directory.appendingPathComponent("no/such/dir.jsonl").path) }
    }
}
