/// A NUL-terminated buffer for the `err`/`errlen` arguments of the COpenCV functions.
struct OpenCVErrorBuffer {
    static let size = 512
    var storage = [CChar](repeating: 0, count: OpenCVErrorBuffer.size)

    /// The message written by the C side, or `fallback` when it wrote none.
    func message(or fallback: String) -> String {
        let bytes = storage.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return bytes.isEmpty ? fallback : String(decoding: bytes, as: UTF8.self)
    }
}
