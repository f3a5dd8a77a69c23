import CV4L2
import Foundation

/// The calls a camera is driven through: libv4l2's (`v4l2_open`, `v4l2_ioctl`, `v4l2_mmap`, ...) plus `poll`.
///
/// ``LibV4L2`` makes the real calls. ``SimulatedV4L2`` answers the same calls from a script, so the whole camera
/// path (format negotiation, mmap streaming, dequeue and queue, unplugging) runs on machines without a camera.
/// Every call reports failure the C way: -1 (or nil) with `errno` set.
public protocol V4L2Backend: AnyObject, Sendable {
    /// The device nodes to look at for `--list-devices`, sorted.
    func devicePaths() -> [String]
    func open(_ path: String, flags: Int32) -> Int32
    func close(_ fd: Int32) -> Int32
    func ioctl(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer) -> Int32
    func mmap(length: Int, fd: Int32, offset: Int64) -> UnsafeMutableRawPointer?
    func munmap(_ start: UnsafeMutableRawPointer, length: Int) -> Int32
    /// Waits up to `timeoutMilliseconds` for a filled buffer: 1 ready, 0 timeout, -1 error, -2 device gone.
    func poll(_ fd: Int32, timeoutMilliseconds: Int32) -> Int32
}

/// The real thing: libv4l2 on `/dev/video*`.
public final class LibV4L2: V4L2Backend {
    public init() {}

    public func devicePaths() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []
        return names.filter { $0.hasPrefix("video") && Int($0.dropFirst(5)) != nil }
            .sorted { Int($0.dropFirst(5))! < Int($1.dropFirst(5))! }
            .map { "/dev/" + $0 }
    }

    public func open(_ path: String, flags: Int32) -> Int32 { fw_v4l2_open(path, flags) }
    public func close(_ fd: Int32) -> Int32 { fw_v4l2_close(fd) }
    public func ioctl(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer) -> Int32 {
        fw_v4l2_ioctl(fd, request, argument)
    }
    public func mmap(length: Int, fd: Int32, offset: Int64) -> UnsafeMutableRawPointer? { fw_v4l2_mmap(length, fd, offset) }
    public func munmap(_ start: UnsafeMutableRawPointer, length: Int) -> Int32 { fw_v4l2_munmap(start, length) }
    public func poll(_ fd: Int32, timeoutMilliseconds: Int32) -> Int32 { fw_poll_readable(fd, timeoutMilliseconds) }
}

/// The V4L2 constants Facewire uses, readable from Swift.
public enum V4L2 {
    public static let queryCapability = FW_VIDIOC_QUERYCAP
    public static let enumerateFormat = FW_VIDIOC_ENUM_FMT
    public static let enumerateFrameSizes = FW_VIDIOC_ENUM_FRAMESIZES
    public static let enumerateFrameIntervals = FW_VIDIOC_ENUM_FRAMEINTERVALS
    public static let getFormat = FW_VIDIOC_G_FMT
    public static let setFormat = FW_VIDIOC_S_FMT
    public static let getParameters = FW_VIDIOC_G_PARM
    public static let setParameters = FW_VIDIOC_S_PARM
    public static let requestBuffers = FW_VIDIOC_REQBUFS
    public static let queryBuffer = FW_VIDIOC_QUERYBUF
    public static let queueBuffer = FW_VIDIOC_QBUF
    public static let dequeueBuffer = FW_VIDIOC_DQBUF
    public static let streamOn = FW_VIDIOC_STREAMON
    public static let streamOff = FW_VIDIOC_STREAMOFF

    public static let captureType = UInt32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
    public static let memoryMap = UInt32(V4L2_MEMORY_MMAP.rawValue)

    /// A FourCC as V4L2 packs it (little-endian), from its four characters.
    public static func fourCC(_ text: String) -> UInt32 {
        let bytes = Array(text.utf8) + [32, 32, 32, 32]
        return UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
    }

    /// The four characters of a FourCC.
    public static func name(ofFourCC code: UInt32) -> String {
        let bytes = (0..<4).map { UInt8((code >> (8 * $0)) & 0xFF) }
        return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespaces)
    }

    public static let mjpeg = fourCC("MJPG")
    public static let jpeg = fourCC("JPEG")
    public static let yuyv = fourCC("YUYV")
    public static let nv12 = fourCC("NV12")
}
