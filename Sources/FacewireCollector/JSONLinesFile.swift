import FacewireProtocol
import FacewireRuntime
import Glibc

/// A lossless sink for the ordered stream: every message as one JSON line, appended in order to a file that is
/// rotated by size (`facewire --role collector --output FILE.jsonl`).
///
/// - **Nothing sits in a buffer.** Each line is one `write(2)` of the whole line (repeated until all of it is
///   written), so a line the collector emitted is in the kernel's page cache before the next one is made: a
///   collector killed with SIGTERM, SIGINT or even SIGKILL leaves every emitted line whole. ``close()`` (on a
///   graceful stop) and every rotation `fsync`s the file, so a rotated segment survives a power cut too.
/// - **Rotation.** When the next line would take the file past `maxBytes`, the file is `fsync`ed, closed and
///   renamed to `STEM-000001.jsonl`, `STEM-000002.jsonl`, … (numbered in the order written: the oldest has the
///   lowest number, and a number already on disk is never overwritten), and a new `FILE.jsonl` is started. A
///   single line larger than `maxBytes` is still written whole, alone in its file.
/// - **Restarts.** An existing `FILE.jsonl` is appended to; numbering continues after the highest segment found.
///
/// **Threading:** not thread-safe; the collector calls it from its one thread.
public final class JSONLinesFile {
    /// The active file's path.
    public let path: String
    /// The size past which the file is rotated.
    public let maxBytes: Int
    private var descriptor: Int32
    private var size: Int
    private var nextSegment: Int
    /// Lines written since opening (all files).
    public private(set) var lines = 0
    /// Files rotated since opening.
    public private(set) var rotations = 0

    /// Opens (creating or appending to) `path`.
    /// - Throws: ``NodeError`` naming the file and the system's reason.
    public init(path: String, maxBytes: Int = 256 << 20) throws {
        guard maxBytes > 0 else { throw NodeError("--output-max-bytes must be positive, not \(maxBytes)") }
        self.path = path
        self.maxBytes = maxBytes
        (descriptor, size) = try Self.open(path)
        nextSegment = Self.highestSegment(for: path) + 1
    }

    deinit {
        if descriptor >= 0 { _ = fsync(descriptor); _ = Glibc.close(descriptor) }
    }

    /// The path of rotated segment `number`: `results.jsonl` → `results-000001.jsonl`.
    public static func segmentPath(for path: String, number: Int) -> String {
        let (stem, ext) = split(path)
        let digits = String(number)
        return stem + "-" + String(repeating: "0", count: max(0, 6 - digits.count)) + digits + ext
    }

    /// Appends `message` as one JSON line (frames, events and stream ends alike).
    /// - Throws: ``NodeError`` when the file cannot be written or rotated.
    public func write(_ message: StreamMessage) throws {
        var line = JSONBuffer()
        guard JSONLines.write(message, into: &line) else { return }  // a heartbeat
        try write(line: &line)
    }

    /// Appends one line (a newline is added).
    public func write(line: String) throws {
        var bytes = JSONBuffer(capacity: line.utf8.count + 1)
        bytes.append(text: line)
        try write(line: &bytes)
    }

    private func write(line: inout JSONBuffer) throws {
        line.append(byte: 0x0A)
        if size > 0, size + line.bytes.count > maxBytes { try rotate() }
        let failure = line.write(to: descriptor)
        guard failure == 0 else { throw NodeError("cannot write \(path): \(String(cString: strerror(failure)))") }
        size += line.bytes.count
        lines += 1
    }

    /// Flushes the file to disk and closes it. Writing afterwards fails.
    public func close() throws {
        guard descriptor >= 0 else { return }
        let synced = fsync(descriptor)
        let syncError = errno
        _ = Glibc.close(descriptor)
        descriptor = -1
        if synced != 0 { throw NodeError("cannot flush \(path) to disk: \(String(cString: strerror(syncError)))") }
    }

    private func rotate() throws {
        guard fsync(descriptor) == 0 else { throw NodeError("cannot flush \(path) to disk: \(String(cString: strerror(errno)))") }
        _ = Glibc.close(descriptor)
        descriptor = -1
        var target = Self.segmentPath(for: path, number: nextSegment)
        while access(target, F_OK) == 0 {  // never overwrite a segment
            nextSegment += 1
            target = Self.segmentPath(for: path, number: nextSegment)
        }
        guard rename(path, target) == 0 else {
            let reason = String(cString: strerror(errno))
            (descriptor, size) = try Self.open(path)
            throw NodeError("cannot rotate \(path) to \(target): \(reason)")
        }
        nextSegment += 1
        rotations += 1
        (descriptor, size) = try Self.open(path)
        // Make the rename itself durable.
        let directory = Self.directory(of: path)
        let dirDescriptor = Glibc.open(directory, O_RDONLY | O_DIRECTORY)
        if dirDescriptor >= 0 { _ = fsync(dirDescriptor); _ = Glibc.close(dirDescriptor) }
    }

    private static func open(_ path: String) throws -> (Int32, Int) {
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw NodeError("cannot open \(path) for writing: \(String(cString: strerror(errno)))") }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            _ = Glibc.close(fd)
            throw NodeError("cannot stat \(path): \(String(cString: strerror(errno)))")
        }
        return (fd, Int(info.st_size))
    }

    /// The highest segment number already on disk for `path` (0 when none).
    private static func highestSegment(for path: String) -> Int {
        let (stem, ext) = split(path)
        let prefix = String(stem.split(separator: "/").last ?? "") + "-"
        guard let dir = opendir(directory(of: path)) else { return 0 }
        defer { closedir(dir) }
        var highest = 0
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            guard name.hasPrefix(prefix), name.hasSuffix(ext) else { continue }
            let middle = name.dropFirst(prefix.count).dropLast(ext.count)
            if middle.count >= 6, let number = Int(middle) { highest = max(highest, number) }
        }
        return highest
    }

    private static func split(_ path: String) -> (stem: String, ext: String) {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (path, "") }
        let ext = String(name[dot...])
        return (String(path.dropLast(ext.count)), ext)
    }

    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}

extension JSONBuffer {
    /// Writes all the bytes to `descriptor` with `write(2)`, repeated until all are written (one call for a line of
    /// a pipe or a file, so nothing sits in a buffer). Returns 0, or the `errno` of the failure.
    public func write(to descriptor: Int32) -> Int32 {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return 0
        }
    }
}
