extension Orientation {
    /// Reads the EXIF orientation tag (0x0112 in IFD0) from a JPEG's APP1 "Exif" segment.
    ///
    /// Walks the marker segments from SOI up to the first SOS, bounds-checking every offset; garbage,
    /// truncated or hostile data gives `nil`, never a crash. An orientation tag whose value is outside
    /// 1...8 gives ``up``.
    ///
    /// - Returns: the orientation, or `nil` when the data is not a JPEG or carries no orientation tag
    ///   (callers normally use `?? .up`).
    public static func exif(inJPEG jpeg: UnsafeRawBufferPointer) -> Orientation? {
        EXIFScanner(bytes: jpeg).orientation()
    }

    /// Reads the EXIF orientation tag from JPEG data. See ``exif(inJPEG:)``.
    public static func exif(inJPEG jpeg: [UInt8]) -> Orientation? {
        jpeg.withUnsafeBytes { exif(inJPEG: $0) }
    }
}

/// A bounds-checked reader of JPEG marker segments and the TIFF structure inside APP1.
private struct EXIFScanner {
    let bytes: UnsafeRawBufferPointer

    func orientation() -> Orientation? {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var position = 2
        while position < bytes.count {
            // Markers are 0xFF followed by a code; any number of 0xFF fill bytes may precede the code.
            guard bytes[position] == 0xFF else { return nil }
            while position < bytes.count, bytes[position] == 0xFF { position += 1 }
            guard position < bytes.count else { return nil }
            let marker = bytes[position]
            position += 1
            switch marker {
            case 0xD9, 0xDA:  // EOI, SOS: no more header segments
                return nil
            case 0x01, 0xD0...0xD7:  // TEM, RSTn: no length field
                continue
            default:
                break
            }
            guard let length = uint16(at: position, bigEndian: true), length >= 2 else { return nil }
            let payload = position + 2
            let end = position + Int(length)
            guard end <= bytes.count else { return nil }
            if marker == 0xE1, let value = exifOrientation(from: payload, to: end) {
                return value
            }
            position = end
        }
        return nil
    }

    /// Parses one APP1 payload; `nil` unless it is an Exif segment with an orientation tag.
    private func exifOrientation(from start: Int, to end: Int) -> Orientation? {
        let signature: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0x00, 0x00]  // "Exif\0\0"
        guard end - start >= signature.count + 8 else { return nil }
        for (index, byte) in signature.enumerated() where bytes[start + index] != byte { return nil }
        let tiff = start + signature.count
        let bigEndian: Bool
        switch (bytes[tiff], bytes[tiff + 1]) {
        case (0x49, 0x49): bigEndian = false  // "II"
        case (0x4D, 0x4D): bigEndian = true  // "MM"
        default: return nil
        }
        guard uint16(at: tiff + 2, bigEndian: bigEndian, limit: end) == 42,
              let ifdOffset = uint32(at: tiff + 4, bigEndian: bigEndian, limit: end)
        else { return nil }
        let (ifd, overflow) = tiff.addingReportingOverflow(Int(ifdOffset))
        guard !overflow, let entryCount = uint16(at: ifd, bigEndian: bigEndian, limit: end) else { return nil }
        for index in 0..<Int(entryCount) {
            let entry = ifd + 2 + index * 12
            guard entry + 12 <= end,
                  let tag = uint16(at: entry, bigEndian: bigEndian, limit: end),
                  let type = uint16(at: entry + 2, bigEndian: bigEndian, limit: end)
            else { return nil }
            guard tag == 0x0112 else { continue }
            switch type {
            case 3:  // SHORT
                return uint16(at: entry + 8, bigEndian: bigEndian, limit: end).map { Orientation(rawValue: Int($0)) }
            case 4:  // LONG (non-standard but seen in the wild)
                return uint32(at: entry + 8, bigEndian: bigEndian, limit: end).map { Orientation(rawValue: Int($0)) }
            default:
                return .up
            }
        }
        return nil
    }

    private func uint16(at offset: Int, bigEndian: Bool, limit: Int? = nil) -> UInt16? {
        let limit = min(limit ?? bytes.count, bytes.count)
        guard offset >= 0, offset <= limit - 2 else { return nil }
        let a = UInt16(bytes[offset])
        let b = UInt16(bytes[offset + 1])
        return bigEndian ? a << 8 | b : b << 8 | a
    }

    private func uint32(at offset: Int, bigEndian: Bool, limit: Int) -> UInt32? {
        guard let first = uint16(at: offset, bigEndian: bigEndian, limit: limit),
              let second = uint16(at: offset + 2, bigEndian: bigEndian, limit: limit)
        else { return nil }
        return bigEndian ? UInt32(first) << 16 | UInt32(second) : UInt32(second) << 16 | UInt32(first)
    }
}
