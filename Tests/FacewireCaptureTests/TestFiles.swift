import FacewireImage
import Foundation

/// Temporary folders, synthetic images and minimal PNG/PPM writers for the capture tests.
enum TestFiles {
    /// Creates a fresh empty folder under the system temporary directory.
    static func makeTemporaryFolder() throws -> String {
        let path = NSTemporaryDirectory() + "facewire-capture-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func read(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// A BGR image whose colour depends on `seed`, so frames are distinguishable after decoding.
    static func image(width: Int, height: Int, seed: Int) -> PixelImage {
        var bytes = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 3
                bytes[i] = UInt8((seed * 40) & 0xFF)
                bytes[i + 1] = UInt8(x * 255 / max(width - 1, 1))
                bytes[i + 2] = UInt8(y * 255 / max(height - 1, 1))
            }
        }
        return PixelImage(width: width, height: height, format: .bgr, bytes: bytes)
    }

    /// The repository root, found from this file's path (Tests/FacewireCaptureTests/TestFiles.swift;
    /// symlinks resolved, so a scratch package that links the test folder still finds the real repository).
    static func repositoryRoot(filePath: String = #filePath) -> URL {
        URL(fileURLWithPath: filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// `../shared/data` next to the repository, if present.
    static var sharedData: URL? {
        let url = repositoryRoot().deletingLastPathComponent().appendingPathComponent("shared/data")
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }

    // MARK: - PNG (uncompressed deflate), PPM

    /// An 8-bit RGB PNG of a BGR image, written with stored (uncompressed) deflate blocks.
    static func png(_ image: PixelImage) -> [UInt8] {
        var raw: [UInt8] = []
        for y in 0..<image.height {
            raw.append(0)  // filter: none
            for x in 0..<image.width {
                let i = y * image.stride + x * 3
                raw += [image.bytes[i + 2], image.bytes[i + 1], image.bytes[i]]
            }
        }
        var zlib: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65535, raw.count - offset)
            let last: UInt8 = offset + count >= raw.count ? 1 : 0
            zlib += [last, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            zlib += raw[offset..<offset + count]
            offset += count
        } while offset < raw.count
        zlib += bigEndian(adler32(raw))
        var ihdr = bigEndian(UInt32(image.width)) + bigEndian(UInt32(image.height))
        ihdr += [8, 2, 0, 0, 0]  // 8-bit, RGB, deflate, no filter, no interlace
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + chunk("IHDR", ihdr) + chunk("IDAT", zlib) + chunk("IEND", [])
    }

    /// A binary PPM (P6) of a BGR image.
    static func ppm(_ image: PixelImage) -> [UInt8] {
        var bytes = Array("P6\n# test\n\(image.width) \(image.height)\n255\n".utf8)
        for y in 0..<image.height {
            for x in 0..<image.width {
                let i = y * image.stride + x * 3
                bytes += [image.bytes[i + 2], image.bytes[i + 1], image.bytes[i]]
            }
        }
        return bytes
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + typed + bigEndian(crc32(typed))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    private static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return b << 16 | a
    }
}
