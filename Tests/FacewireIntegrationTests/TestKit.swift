import FacewireProtocol
import ZeroMQ
import FacewireImage
import FacewireRuntime
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

// MARK: - Errors

/// A failure of the test harness itself (a deadline passed, a process could not start, ...), with the
/// evidence needed to debug it.
struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The generous guard every wait uses: long enough for a loaded 2-core machine running a debug build, short
/// enough that a hung cluster fails the test instead of the CI job.
let generousDeadline: Duration = .seconds(120)

// MARK: - Locating things

enum Locations {
    /// The repository root, from this file's path (Tests/FacewireIntegrationTests/TestKit.swift).
    static let repository: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The shared data set (videos, models) next to the repository, if this machine has it.
    static var sharedData: URL? {
        let environment = ProcessInfo.processInfo.environment
        let path = environment["FACEWIRE_SHARED_DATA"].flatMap { $0.isEmpty ? nil : $0 }
            ?? repository.deletingLastPathComponent().appendingPathComponent("shared/data").path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return nil }
        return URL(fileURLWithPath: path).standardizedFileURL
    }

    /// The `facewire` executable built next to the test bundle (`swift build --build-tests` builds it, the
    /// test target depends on it). `FACEWIRE_BINARY` overrides the search.
    static let facewire: Result<String, HarnessError> = {
        let fileManager = FileManager.default
        if let override = ProcessInfo.processInfo.environment["FACEWIRE_BINARY"], !override.isEmpty {
            return fileManager.isExecutableFile(atPath: override)
                ? .success(override) : .failure(HarnessError("FACEWIRE_BINARY=\(override) is not an executable"))
        }
        let cwd = URL(fileURLWithPath: fileManager.currentDirectoryPath)
        var starts: [URL] = []
        if let first = CommandLine.arguments.first {
            starts.append(URL(fileURLWithPath: first, relativeTo: cwd).standardizedFileURL.deletingLastPathComponent())
        }
        if let executable = Bundle.main.executableURL { starts.append(executable.deletingLastPathComponent()) }
        starts.append(Bundle.main.bundleURL)
        starts.append(Bundle.main.bundleURL.deletingLastPathComponent())
        var tried: [String] = []
        for start in starts {
            var directory = start
            // The bundle may be a directory (macOS .xctest/Contents/MacOS): look a few levels up.
            for _ in 0..<4 {
                let candidate = directory.appendingPathComponent("facewire").path
                tried.append(candidate)
                var isDirectory: ObjCBool = false
                if fileManager.fileExists(atPath: candidate, isDirectory: &isDirectory), !isDirectory.boolValue,
                    fileManager.isExecutableFile(atPath: candidate)
                {
                    return .success(candidate)
                }
                directory = directory.deletingLastPathComponent()
            }
        }
        return .failure(HarnessError("cannot find the facewire executable next to the test bundle (tried \(tried)); build with `swift build --build-tests` or set FACEWIRE_BINARY"))
    }()

    static func facewireBinary() throws -> String {
        try facewire.get()
    }
}

// MARK: - Processes

/// One child process with stdout and stderr captured to files.
final class NodeProcess: @unchecked Sendable {
    enum Stream { case stdout, stderr }

    let name: String
    let arguments: [String]
    let stdoutURL: URL
    let stderrURL: URL
    private let process: Process

    fileprivate init(
        name: String, executable: String, arguments: [String], environment: [String: String], directory: URL, input: URL? = nil
    ) throws {
        self.name = name
        self.arguments = [executable] + arguments
        stdoutURL = directory.appendingPathComponent("\(name).stdout")
        stderrURL = directory.appendingPathComponent("\(name).stderr")
        let fileManager = FileManager.default
        guard fileManager.createFile(atPath: stdoutURL.path, contents: nil),
            fileManager.createFile(atPath: stderrURL.path, contents: nil)
        else { throw HarnessError("cannot create output files for \(name) in \(directory.path)") }
        let out = try FileHandle(forWritingTo: stdoutURL)
        let err = try FileHandle(forWritingTo: stderrURL)
        defer {
            try? out.close()
            try? err.close()
        }
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        process.currentDirectoryURL = directory
        process.standardInput = try input.map { try FileHandle(forReadingFrom: $0) } ?? FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        do {
            try process.run()
        } catch {
            throw HarnessError("cannot start \(name) (\(self.arguments.joined(separator: " "))): \(error)")
        }
    }

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    /// The exit status (or signal number, see ``wasSignalled``) once the process has exited.
    var exitStatus: Int32? { process.isRunning ? nil : process.terminationStatus }
    var wasSignalled: Bool { !process.isRunning && process.terminationReason == .uncaughtSignal }

    func text(_ stream: Stream = .stdout) -> String {
        let url = stream == .stdout ? stdoutURL : stderrURL
        guard let data = try? Data(contentsOf: url) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Complete lines written so far (a trailing partial line is left out).
    func lines(_ stream: Stream = .stdout) -> [String] {
        var text = text(stream)
        if let lastNewline = text.lastIndex(of: "\n") {
            text = String(text[...lastNewline])
        } else {
            return []
        }
        return text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }

    /// The last `count` lines of a stream, for failure messages.
    func tail(_ stream: Stream = .stderr, _ count: Int = 15) -> String {
        let all = text(stream).split(separator: "\n", omittingEmptySubsequences: false)
        return all.suffix(count).joined(separator: "\n")
    }

    func signal(_ number: Int32) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, number)
    }

    /// Waits until the output satisfies `condition` (called with the complete lines so far).
    /// Throws when the deadline passes, or when the process exited without satisfying it.
    @discardableResult
    func waitFor(
        _ stream: Stream = .stdout, timeout: Duration = generousDeadline, _ what: String,
        until condition: ([String]) -> Bool
    ) async throws -> [String] {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            let exited = !process.isRunning
            let current = lines(stream)
            if condition(current) { return current }
            if exited {
                throw HarnessError("\(name) exited (status \(process.terminationStatus)) before \(what)\n--- \(name) stderr:\n\(tail(.stderr))")
            }
            if clock.now >= deadline {
                throw HarnessError("timed out after \(timeout) waiting for \(name): \(what)\n--- \(name) stderr:\n\(tail(.stderr))")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Waits for a line containing `fragment`.
    @discardableResult
    func waitForLine(containing fragment: String, in stream: Stream = .stderr, timeout: Duration = generousDeadline) async throws -> String {
        let lines = try await waitFor(stream, timeout: timeout, "a line containing \"\(fragment)\"") { lines in
            lines.contains { $0.contains(fragment) }
        }
        return lines.first { $0.contains(fragment) }!
    }

    /// Waits for the process to exit by itself and returns its status; throws at the deadline.
    @discardableResult
    func waitForExit(timeout: Duration = generousDeadline) async throws -> Int32 {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while process.isRunning {
            if clock.now >= deadline {
                throw HarnessError("timed out after \(timeout) waiting for \(name) to exit\n--- \(name) stderr:\n\(tail(.stderr))")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return process.terminationStatus
    }

    /// SIGTERM, then SIGKILL after `grace`; returns once the process is gone.
    func stop(grace: Duration = .seconds(5)) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        let clock = ContinuousClock()
        let deadline = clock.now + grace
        while process.isRunning, clock.now < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// SIGKILL and wait until the process is gone.
    func killNow() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// A temporary directory and the processes a test started in it. Call ``cleanup()`` in a `defer`: it stops
/// every child that still runs (SIGTERM, then SIGKILL) and removes the directory, whatever the test's outcome.
/// Set `FACEWIRE_KEEP_TEST_DIRS=1` to keep the directory (logs, frames) for inspection.
final class TestCluster: @unchecked Sendable {
    let directory: URL
    private let lock = NSLock()
    private var children: [NodeProcess] = []

    init(_ label: String) throws {
        let base = URL(fileURLWithPath: NSTemporaryDirectory())
        directory = base.appendingPathComponent("facewire-it-\(label)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// The environment children get: ours without any FACEWIRE_* variable (a user's settings must not change
    /// what a test runs), plus `extra`.
    static func childEnvironment(_ extra: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("FACEWIRE_") }
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    /// Starts `facewire ARGUMENTS`.
    @discardableResult
    func facewire(_ name: String, _ arguments: [String], environment: [String: String] = [:], input: URL? = nil) throws -> NodeProcess {
        try launch(name, executable: try Locations.facewireBinary(), arguments, environment: environment, input: input)
    }

    /// Starts any executable.
    @discardableResult
    /// - Parameter input: a file the child reads as its standard input (default: none).
    func launch(
        _ name: String, executable: String, _ arguments: [String], environment: [String: String] = [:], input: URL? = nil
    ) throws -> NodeProcess {
        let child = try NodeProcess(
            name: name, executable: executable, arguments: arguments, environment: Self.childEnvironment(environment),
            directory: directory, input: input)
        lock.withLock { children.append(child) }
        return child
    }

    /// Starts a collector on `control`, publishing on `publish`, and waits until it listens.
    func startCollector(control: String, publish: String, _ extra: [String] = []) async throws -> NodeProcess {
        let collector = try facewire("collector", ["--role", "collector", "--bind", control, "--publish", publish] + extra)
        try await collector.waitForLine(containing: "collector listening")
        return collector
    }

    /// Starts a tail of the collector at `control` (debug log, where it reports its subscription) and waits until it
    /// is subscribed.
    func startTail(control: String, _ extra: [String] = []) async throws -> NodeProcess {
        let tail = try facewire("tail", ["--role", "tail", "--collector", control] + extra + ["--log-level", "debug"])
        try await tail.waitForLine(containing: "tail subscribed")
        return tail
    }

    /// Starts a worker with one detection thread and waits until it runs.
    func startWorker(_ name: String = "worker", control: String, _ extra: [String] = []) async throws -> NodeProcess {
        let worker = try facewire(name, ["--role", "worker", "--collector", control, "--threads", "1"] + extra)
        try await worker.waitForLine(containing: "worker running")
        return worker
    }

    /// The usual cluster around one stream: a collector, a tail of `stream` (with `tailArguments`) and one worker
    /// (with `workerArguments`), all started and ready; returns the collector's control endpoint and a free endpoint for
    /// the capture node to bind.
    func startStreamCluster(
        stream: String, tailArguments: [String] = [], workerArguments: [String] = []
    ) async throws -> (control: String, captureBind: String, tail: NodeProcess, worker: NodeProcess) {
        let ports = try freeLoopbackPorts(3)
        let control = "tcp://127.0.0.1:\(ports[0])"
        _ = try await startCollector(control: control, publish: "tcp://127.0.0.1:\(ports[1])")
        let tail = try await startTail(control: control, ["--stream", stream] + tailArguments)
        let worker = try await startWorker(control: control, workerArguments)
        return (control, "tcp://127.0.0.1:\(ports[2])", tail, worker)
    }

    /// The last lines of every child's stderr, for failure messages.
    func diagnostics(lines: Int = 12) -> String {
        lock.withLock { children }.map { child in
            "--- \(child.name) (\(child.isRunning ? "running" : "exited \(child.exitStatus ?? -1)")) stderr:\n\(child.tail(.stderr, lines))"
        }.joined(separator: "\n")
    }

    func cleanup() {
        let running = lock.withLock { children }.filter(\.isRunning)
        running.forEach { $0.signal(SIGTERM) }
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(5)
        while running.contains(where: \.isRunning), clock.now < deadline { usleep(20_000) }
        running.forEach { $0.killNow() }
        if ProcessInfo.processInfo.environment["FACEWIRE_KEEP_TEST_DIRS"].map({ !$0.isEmpty && $0 != "0" }) != true {
            try? FileManager.default.removeItem(at: directory)
        }
    }
}

/// Runs a short helper command to completion (no FACEWIRE_* environment); returns status and combined output.
@discardableResult
func runCommand(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = TestCluster.childEnvironment(environment)
    process.standardInput = FileHandle.nullDevice
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

// MARK: - Frames

/// Writes synthetic JPEG frames (a textured background with a block that moves from frame to frame), named
/// frame-0000.jpg ..., so tests need no footage.
enum SyntheticFrames {
    @discardableResult
    static func writeFolder(_ folder: URL, count: Int, width: Int, height: Int, quality: Int = 85) throws -> [URL] {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let encoder = try JPEGEncoder()
        var base = [UInt8](repeating: 0, count: width * height * 3)
        base.withUnsafeMutableBufferPointer { pixels in
            for y in 0..<height {
                for x in 0..<width {
                    let i = (y * width + x) * 3
                    pixels[i] = UInt8(truncatingIfNeeded: (x &* 7) ^ (y &* 3))
                    pixels[i + 1] = UInt8(truncatingIfNeeded: (x + y) / 4)
                    pixels[i + 2] = UInt8(truncatingIfNeeded: y * 255 / height)
                }
            }
        }
        let block = max(8, min(width, height) / 8)
        var urls: [URL] = []
        for index in 0..<count {
            var frame = base
            let left = (index * 37) % max(1, width - block)
            let top = (index * 23) % max(1, height - block)
            frame.withUnsafeMutableBufferPointer { pixels in
                for y in top..<(top + block) {
                    for x in left..<(left + block) {
                        let i = (y * width + x) * 3
                        pixels[i] = 250
                        pixels[i + 1] = UInt8(truncatingIfNeeded: index &* 9)
                        pixels[i + 2] = 30
                    }
                }
            }
            let jpeg = try encoder.encode(PixelImage(width: width, height: height, format: .bgr, bytes: frame), quality: quality)
            let name = "frame-" + String(repeating: "0", count: max(0, 4 - String(index).count)) + String(index) + ".jpg"
            let url = folder.appendingPathComponent(name)
            try Data(jpeg).write(to: url)
            urls.append(url)
        }
        return urls
    }
}

// MARK: - The tail's JSON Lines

/// One frame line of `facewire tail` / `facewire --role local` output.
struct FrameLine: Sendable {
    var stream: String
    var epoch: UInt64
    var seq: Int
    var status: String
    var reason: String?
    var worker: String?
    var faces: Int

    /// Parses a frame line; nil for event lines (faceAppeared, streamEnded, ...). Throws for anything that is
    /// not a JSON object.
    static func parse(_ line: String) throws -> FrameLine? {
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw HarnessError("not a JSON object: \(line)")
        }
        if object["event"] != nil { return nil }
        guard let seq = (object["seq"] as? NSNumber)?.intValue, let status = object["status"] as? String else {
            throw HarnessError("frame line without seq/status: \(line)")
        }
        return FrameLine(
            stream: object["stream"] as? String ?? "",
            epoch: (object["epoch"] as? NSNumber)?.uint64Value ?? 0,
            seq: seq,
            status: status,
            reason: object["reason"] as? String,
            worker: object["worker"] as? String,
            faces: (object["faces"] as? [Any])?.count ?? 0
        )
    }

    static func parseAll(_ lines: [String]) throws -> [FrameLine] {
        try lines.compactMap { try parse($0) }
    }
}

/// The seqs of a stream, checked against `0..<count`: returns a description of every problem (empty: complete,
/// each exactly once, in increasing order).
func orderProblems(_ frames: [FrameLine], count: Int) -> [String] {
    var problems: [String] = []
    let seqs = frames.map(\.seq)
    if seqs.count != count { problems.append("\(seqs.count) frame lines for \(count) frames") }
    for (a, b) in zip(seqs, seqs.dropFirst()) where b <= a {
        problems.append("seq \(b) follows \(a)")
        if problems.count > 10 { break }
    }
    var seen = Set<Int>()
    let duplicates = seqs.filter { !seen.insert($0).inserted }
    if !duplicates.isEmpty { problems.append("duplicated seqs \(Array(Set(duplicates)).sorted().prefix(20))") }
    let missing = Set(0..<count).subtracting(seqs)
    if !missing.isEmpty { problems.append("missing seqs \(missing.sorted().prefix(20))") }
    let extra = Set(seqs).subtracting(0..<count)
    if !extra.isEmpty { problems.append("unexpected seqs \(extra.sorted().prefix(20))") }
    if Set(frames.map(\.epoch)).count > 1 { problems.append("several epochs \(Set(frames.map(\.epoch)))") }
    return problems
}

/// The `seq=N worker=ID` pairs of a capture node's debug log ("dispatched" lines).
func dispatchedFrames(inCaptureLog lines: [String]) -> [(seq: Int, worker: String)] {
    lines.compactMap { line -> (Int, String)? in
        guard line.hasSuffix(" dispatched") || line.contains("] dispatched") else { return nil }
        var seq: Int?
        var worker: String?
        for token in line.split(separator: " ") {
            if token.hasPrefix("seq=") { seq = Int(token.dropFirst(4)) }
            if token.hasPrefix("worker=") { worker = String(token.dropFirst(7)) }
        }
        guard let seq, let worker else { return nil }
        return (seq, worker)
    }
}

/// A worker thread played by hand over real sockets (dispatch protocol 2, SPEC 3): a DEALER attached to one capture
/// node (``attach()`` sends its Ready) and one to the collector (``idle()`` says it is idle). Tests use it for threads a
/// real worker would never be: silent ones, ones with hostile ids, black holes.
final class HandThread {
    let name: String
    let capture: ZMQSocket
    let collector: ZMQSocket
    /// Frames received so far (what its Idle says).
    private(set) var framesReceived: UInt64 = 0

    init(_ name: String, context: ZMQContext, capture endpoint: String, collector control: String) throws {
        self.name = name
        capture = try ZMQSocket(context: context, kind: .dealer)
        collector = try ZMQSocket(context: context, kind: .dealer)
        for socket in [capture, collector] { try socket.setLinger(milliseconds: 0) }
        try capture.connect(endpoint)
        try collector.connect(control)
    }

    /// Sends its Ready (attach) to the capture node.
    func attach(version: UInt32 = Wire.dispatchVersion) throws {
        var ready = Ready(worker: name)
        ready.version = version
        _ = try capture.send([try ready.serializedBytes()])
    }

    /// Tells the collector it is idle.
    func idle() throws {
        var idle = Idle()
        idle.worker = name
        idle.framesReceived = framesReceived
        _ = try collector.send([try Envelope(.idle(idle)).serializedBytes()])
    }

    /// Frames received within `milliseconds` (counted in ``framesReceived``).
    func receive(within milliseconds: Int) throws -> Int {
        var count = 0
        if try capture.waitForInput(timeoutMilliseconds: milliseconds) {
            while try capture.receive(dontWait: true) != nil { count += 1 }
        }
        framesReceived += UInt64(count)
        return count
    }

    func close() {
        capture.close()
        collector.close()
    }
}
