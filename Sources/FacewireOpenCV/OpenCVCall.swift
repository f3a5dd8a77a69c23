import COpenCV

/// What a COpenCV call reported on failure: the message it wrote, empty when it wrote none.
public struct OpenCVError: Error, Sendable, CustomStringConvertible {
    /// The C side's message ("" when it wrote none).
    public var message: String

    public init(message: String) {
        self.message = message
    }

    /// ``message``, or `fallback` when the C side wrote none.
    public func message(or fallback: String) -> String {
        message.isEmpty ? fallback : message
    }

    public var description: String { message(or: "OpenCV failed") }
}

/// The `err`/`errlen` buffer every fallible COpenCV function takes (the only place it is handled).
enum OpenCVCall {
    /// Bytes of the error buffer; the shim truncates longer messages.
    static let errorBytes = 1024

    /// Calls `body` with a fresh error buffer; returns its result and the message the C side wrote ("" for none).
    static func run<T>(_ body: (UnsafeMutablePointer<CChar>, Int) throws -> T) rethrows -> (T, String) {
        var text = [CChar](repeating: 0, count: errorBytes)
        let result = try text.withUnsafeMutableBufferPointer { try body($0.baseAddress!, $0.count) }
        return (result, String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// Calls a shim function that returns a status (0 or 1 success, negative failure).
    /// - Returns: the status. - Throws: ``OpenCVError`` for a negative status.
    static func status(_ body: (UnsafeMutablePointer<CChar>, Int) -> Int32) throws(OpenCVError) -> Int32 {
        let (status, message) = run(body)
        guard status >= 0 else { throw OpenCVError(message: message) }
        return status
    }

    /// ``status(_:)`` for a caller that needs only to know the call succeeded.
    /// - Throws: ``OpenCVError`` for a negative status.
    static func check(_ body: (UnsafeMutablePointer<CChar>, Int) -> Int32) throws(OpenCVError) {
        _ = try status(body)
    }
}

/// OpenCV's process-wide settings.
public enum OpenCVSettings {
    /// Sets OpenCV's own worker-thread count (cv::setNumThreads; process-wide).
    public static func setThreadCount(_ threads: Int) {
        fwcv_set_num_threads(Int32(clamping: threads))
    }
}
