import FacewireImage
import FacewireProtocol

/// What the fuzzer (fuzz/, libFuzzer) feeds with arbitrary bytes: every parser a node runs on input from the network
/// before it trusts it. The first byte picks the parser; the rest is its input. Besides not crashing, the parsers
/// must keep their promises, checked here with preconditions so that the fuzzer reports a broken one as a crash.
///
/// Thread-safe: the targets keep no state between calls (a libturbojpeg handle is not thread-safe, so each JPEG
/// header is read with a decoder of its own), so tests may run them in parallel.
public enum FuzzTargets {
    /// What a target made of one input: every input is either accepted or rejected with a named code.
    public enum Outcome: Sendable, Equatable, CustomStringConvertible {
        /// Nothing to parse (no selector byte; a frame message without its control byte).
        case empty
        /// The parser accepted the input (and the target's checks held).
        case accepted
        /// The parser refused it with this code: a ``ProtocolError`` code (targets 0–2), an ``ImageError`` code
        /// (3) or an MJPEG ``MJPEGFrame/Defect`` (4). `unnamed: <type>` for an error without a code (a defect).
        case rejected(String)

        public var description: String {
            switch self {
            case .empty: "empty"
            case .accepted: "accepted"
            case .rejected(let code): "rejected: \(code)"
            }
        }
    }

    /// Runs the target the first byte picks on the rest (what the fuzzer calls).
    public static func run(_ bytes: UnsafeBufferPointer<UInt8>) {
        _ = outcome(bytes)
    }

    /// Runs the target the first byte picks on the rest and says what it made of it.
    public static func outcome(_ bytes: UnsafeBufferPointer<UInt8>) -> Outcome {
        guard let selector = bytes.first else { return .empty }
        let payload = Array(bytes.dropFirst())
        switch selector % 5 {
        case 0: return frameMessage(payload)
        case 1: return parsed { _ = try Envelope(part: payload) }
        case 2:
            // [topic][StreamMessage], the topic taken from the front of the input.
            let split = payload.firstIndex(of: 0).map { $0 + 1 } ?? 0
            return parsed { _ = try StreamMessage(parts: [Array(payload[..<split]), Array(payload[split...])]) }
        case 3: return parsed { _ = try jpegHeader(payload) }
        default: return mjpeg(payload)
        }
    }

    /// Runs `parse`: accepted, or rejected with the code of what it threw.
    static func parsed(_ parse: () throws -> Void) -> Outcome {
        do {
            try parse()
            return .accepted
        } catch let error as ProtocolError {
            return .rejected("\(error.code)")
        } catch let error as ImageError {
            return .rejected("\(error.code)")
        } catch {
            return .rejected("unnamed: \(type(of: error))")
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
    static func frameMessage(_ payload: [UInt8]) -> Outcome {
        guard let control = payload.first else { return .empty }
        let body = Array(payload.dropFirst())
        let split = body.isEmpty ? 0 : Int(control) * 131 % (body.count + 1)
        var parts = [Array(body[..<split]), Array(body[split...])]
        if control & 0x80 != 0 { parts.append([]) }  // a third part now and then
        return frameMessage(parts: parts)
    }

    /// A frame message's parts through the worker's parser, with what it must refuse checked.
    static func frameMessage(parts: [[UInt8]]) -> Outcome {
        let frame: FrameMessage
        do {
            frame = try FrameMessage(parts: parts)
        } catch {
            return parsed { throw error }
        }
        precondition(parts.count == 2 && !frame.jpeg.isEmpty && Wire.isValidStreamID(frame.header.stream),
                     "FrameMessage accepted what it must refuse")
        precondition(frame.header.version == Wire.version)
        return .accepted
    }

    static func mjpeg(_ payload: [UInt8]) -> Outcome {
        let checked: MJPEGFrame.Checked
        switch MJPEGFrame.check(payload) {
        case .success(let result): checked = result
        case .failure(let defect): return .rejected(defect.rawValue)
        }
        let jpeg = checked.jpeg
        precondition(jpeg.count >= 4 && jpeg[0] == 0xFF && jpeg[1] == 0xD8, "a checked frame must start with SOI")
        precondition(jpeg[jpeg.count - 2] == 0xFF && jpeg[jpeg.count - 1] == 0xD9, "a checked frame must end with EOI")
        precondition(checked.width > 0 && checked.height > 0)
        precondition(checked.insertedHuffmanTables || jpeg.count + checked.trimmedBytes == payload.count)
        return .accepted
    }
}
