import FacewireOpenCV
import FacewireImage
import Foundation

/// Turns one image file into a ``SourceFrame`` following the still-image rules shared by
/// ``ImageFolderSource`` and ``ImageFileSource``:
///
/// * JPEG files are sent byte for byte. Their header gives the stored size, their EXIF the orientation.
///   With `validateJPEG`, the whole file is entropy-decoded once at 1/8 scale first, so truncated or
///   corrupt files are skipped here rather than failing on a worker. Once per content: a file read again with
///   the same bytes (a folder played with `--loop`) is not decoded again. That decode was 60 % of a capture
///   node's CPU at 300 frames/s of 640×480 (BENCHMARKS.md, "Scale-out").
/// * Other formats, CMYK JPEGs and misnamed files are decoded by OpenCV (`cv::imread`, which also applies
///   any EXIF orientation, so the result is upright) and encoded to JPEG at `jpegQuality`.
///
/// Not thread-safe (it owns a turbojpeg decoder and encoder).
final class StillImageLoader {
    let limits: ImageLimits
    let jpegQuality: Int
    let validateJPEG: Bool
    private let decoder: JPEGDecoder
    private let encoder: JPEGEncoder
    /// The files validated so far, by path: a hash of the bytes that passed. Bounded: cleared when full.
    private var validated: [String: Int] = [:]
    static let maxValidated = 65_536
    /// Validation decodes done so far.
    private(set) var validations = 0

    init(limits: ImageLimits, jpegQuality: Int, validateJPEG: Bool) throws {
        self.limits = limits
        self.jpegQuality = jpegQuality
        self.validateJPEG = validateJPEG
        decoder = try JPEGDecoder(limits: limits)
        encoder = try JPEGEncoder()
    }

    /// Loads one file.
    /// - Throws: ``ImageError`` (unreadable file, bad or oversized image) describing why the file is unusable.
    func load(path: String, kind: ImageFileKind) throws -> SourceFrame {
        switch kind {
        case .jpeg:
            let bytes = try Self.readFile(path, limits: limits)
            do {
                return try passThrough(bytes, path: path)
            } catch let first as ImageError where first.code == .notJPEG || first.code == .unsupportedFormat {
                // A misnamed file (a PNG called .jpg) or a CMYK JPEG that workers cannot decode: let OpenCV try.
                do {
                    return try reencode(path: path)
                } catch let second as ImageError {
                    throw ImageError(second.code, "\(first.message); OpenCV fallback: \(second.message)")
                }
            }
        case .other:
            return try reencode(path: path)
        }
    }

    private func passThrough(_ bytes: [UInt8], path: String) throws -> SourceFrame {
        let header = try decoder.readHeader(bytes)
        if header.colorspace == .cmyk || header.colorspace == .ycck {
            throw ImageError(.unsupportedFormat, "CMYK JPEG")
        }
        if validateJPEG {
            let fingerprint = Self.fingerprint(bytes)
            if validated[path] != fingerprint {
                _ = try decoder.decode(bytes, scale: .eighth, format: .grey)
                validations += 1
                if validated.count >= Self.maxValidated { validated.removeAll(keepingCapacity: true) }
                validated[path] = fingerprint
            }
        }
        return SourceFrame(
            jpeg: bytes, width: header.width, height: header.height,
            orientation: Orientation.exif(inJPEG: bytes) ?? .up, reencoded: false)
    }

    /// A fingerprint of a file's bytes, to tell a file read again unchanged from a rewritten one: eight bytes at a time
    /// (multiply, xor, rotate), with the length. Not a defence against a crafted collision: the files are the
    /// operator's own, and a collision only skips the validation of a rewritten file, whose frame a worker then answers
    /// as an error. SipHash over every byte of every frame was 2 % of a two-core machine running a hundred nodes.
    static func fingerprint(_ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBytes { raw -> Int in
            var hash: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(raw.count)
            var offset = 0
            while offset + 8 <= raw.count {
                let word = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                let mixed = (hash ^ word) &* 0xFF51_AFD7_ED55_8CCD
                hash = mixed << 31 | mixed >> 33
                offset += 8
            }
            var tail: UInt64 = 0
            while offset < raw.count {
                tail = tail << 8 | UInt64(raw[offset])
                offset += 1
            }
            hash = (hash ^ tail) &* 0xC4CE_B9FE_1A85_EC53
            return Int(truncatingIfNeeded: hash ^ hash >> 33)
        }
    }

    private func reencode(path: String) throws -> SourceFrame {
        let size = try Self.fileSize(path)
        try limits.check(byteCount: size)
        if let dimensions = ImageDimensionProbe.dimensions(of: try Self.readHeader(path)) {
            try limits.check(width: dimensions.width, height: dimensions.height)
        }
        do {
            return try OpenCVImageFile.withBGR(path: path) { pixels, width, height in
                try limits.check(width: width, height: height)
                let jpeg = try encoder.encode(
                    pixels: pixels, width: width, height: height, stride: width * 3, format: .bgr, quality: jpegQuality)
                return SourceFrame(jpeg: jpeg, width: width, height: height, orientation: .up, reencoded: true)
            }
        } catch let error as OpenCVError {
            throw ImageError(.decodeFailed, error.message(or: "OpenCV cannot read '\(path)'"))
        }
    }

    // MARK: - Files

    static func fileSize(_ path: String) throws -> Int {
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            guard let size = attributes[.size] as? NSNumber else {
                throw ImageError(.unreadableFile, "cannot read the size of '\(path)'")
            }
            return size.intValue
        } catch let error as ImageError {
            throw error
        } catch {
            throw ImageError(.unreadableFile, "cannot read '\(path)': \(error.localizedDescription)")
        }
    }

    /// Reads a whole file after checking its size against `limits.maxBytes`: one `open`, `fstat` and `read` straight
    /// into the array (no Foundation `Data` in between: this runs for every frame of a looping folder).
    static func readFile(_ path: String, limits: ImageLimits) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ImageError(.unreadableFile, "cannot open '\(path)': \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            throw ImageError(.unreadableFile, "cannot read the size of '\(path)': \(String(cString: strerror(errno)))")
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else { throw ImageError(.unreadableFile, "'\(path)' is not a regular file") }
        let size = Int(status.st_size)
        try limits.check(byteCount: size)
        var failure: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            count = 0
            while count < size {
                let got = read(fd, buffer.baseAddress! + count, size - count)
                if got > 0 {
                    count += got
                } else if got < 0, errno == EINTR {
                    continue
                } else {
                    failure = got < 0 ? errno : 0
                    break
                }
            }
        }
        guard bytes.count == size else {
            let reason = failure != 0 ? String(cString: strerror(failure)) : "the file shrank while being read"
            throw ImageError(.unreadableFile, "cannot read '\(path)': \(reason)")
        }
        return bytes
    }

    private static func readHeader(_ path: String) throws -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ImageError(.unreadableFile, "cannot open '\(path)'")
        }
        defer { try? handle.close() }
        do {
            return [UInt8](try handle.read(upToCount: ImageDimensionProbe.headerLength) ?? Data())
        } catch {
            throw ImageError(.unreadableFile, "cannot read '\(path)': \(error.localizedDescription)")
        }
    }
}
