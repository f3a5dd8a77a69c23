import FacewireImage
import FacewireProtocol

/// What the fuzzer (fuzz/, libFuzzer) feeds with arbitrary bytes: every parser a node runs on input from the network
/// before it trusts it. The first byte picks the parser; the rest is its input. Besides not crashing, the parsers
/// must keep their promises, checked here with preconditions so that the fuzzer reports a broken one as a crash.
///
/// Thread-safe: the targets keep no state between calls (a libturbojpeg handle is not thread-safe, so each JPEG
/// header is read with a decoder of its own), so tests may run them in parallel.
public enum FuzzTargets {
    public static func run(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let selector = bytes.first else { return }
        let payload = Array(bytes.dropFirst())
        switch selector % 5 {
        case 0: frameMessage(payload)
        case 1: _ = try? Envelope(part: payload)
        case 2:
            // [topic][StreamMessage], the topic taken from the front of the input.
            let split = payload.firstIndex(of: 0).map { $0 + 1 } ?? 0
            _ = try? StreamMessage(parts: [Array(payload[..<split]), Array(payload[split...])])
        case 3: _ = try? jpegHeader(payload)
        default: mjpeg(payload)
        }
    }

    /// The JPEG header the worker would read from `payload`, checked against the limits.
    /// Uses a decoder of its own on every call: one shared libturbojpeg handle would be used by parallel callers
    /// at once.
    /// - Throws: ``ImageError`` when the header is refused.
    static func jpegHeader(_ payload: [UInt8]) throws -> JPEGHeader {
        let header = try JPEGDecoder().readHeader(payload)
        precondition(header.width > 0 && header.height > 0 && header.width <= 8192 && header.height <= 8192,
                     "readHeader accepted a \(header.width)×\(header.height) image")
        return header
    }

    /// `[FrameHeader][JPEG]` with the split point and the part count taken from the input.
    static func frameMessage(_ payload: [UInt8]) {
        guard let control = payload.first else { return }
        let body = Array(payload.dropFirst())
        let split = body.isEmpty ? 0 : Int(control) * 131 % (body.count + 1)
        var parts = [Array(body[..<split]), Array(body[split...])]
        if control & 0x80 != 0 { parts.append([]) }  // a third part now and then
        guard let frame = try? FrameMessage(parts: parts) else { return }
        precondition(parts.count == 2 && !frame.jpeg.isEmpty && Wire.isValidStreamID(frame.header.stream),
                     "FrameMessage accepted what it must refuse")
        precondition(frame.header.version == Wire.version)
    }

    static func mjpeg(_ payload: [UInt8]) {
        guard case .success(let checked) = MJPEGFrame.check(payload) else { return }
        let jpeg = checked.jpeg
        precondition(jpeg.count >= 4 && jpeg[0] == 0xFF && jpeg[1] == 0xD8, "a checked frame must start with SOI")
        precondition(jpeg[jpeg.count - 2] == 0xFF && jpeg[jpeg.count - 1] == 0xD9, "a checked frame must end with EOI")
        precondition(checked.width > 0 && checked.height > 0)
        precondition(checked.insertedHuffmanTables || jpeg.count + checked.trimmedBytes == payload.count)
    }
}
