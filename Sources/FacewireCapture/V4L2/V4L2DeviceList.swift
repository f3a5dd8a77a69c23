import CV4L2
import Foundation

/// What `facewire --role capture --list-devices` prints: every video device with its driver, name, formats, sizes
/// and frame rates, as the driver enumerates them.
public enum V4L2DeviceList {
    public struct Size: Sendable, Equatable {
        public var width: Int
        public var height: Int
        /// Discrete frame rates; empty when the driver gives a range or nothing.
        public var fps: [Double]
    }

    public struct Format: Sendable, Equatable {
        public var fourcc: UInt32
        public var description: String
        /// libv4l2 converts into this format in software; the camera does not deliver it.
        public var emulated: Bool
        public var sizes: [Size]

        public var name: String { V4L2.name(ofFourCC: fourcc) }
    }

    public struct Device: Sendable, Equatable {
        public var path: String
        public var driver: String
        public var card: String
        public var bus: String
        public var isCapture: Bool
        public var formats: [Format]
        /// Why the device could not be queried, if it could not.
        public var error: String?
    }

    /// Enumerates the formats of an open device, with their discrete sizes and rates.
    static func formats(fd: Int32, backend: V4L2Backend) throws -> [Format] {
        var formats: [Format] = []
        for index in 0..<64 {
            var desc = v4l2_fmtdesc()
            desc.index = UInt32(index)
            desc.type = V4L2.captureType
            guard backend.ioctl(fd, V4L2.enumerateFormat, &desc) == 0 else { break }
            let text = withUnsafeBytes(of: desc.description) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            var sizes: [Size] = []
            for sizeIndex in 0..<256 {
                var size = v4l2_frmsizeenum()
                size.index = UInt32(sizeIndex)
                size.pixel_format = desc.pixelformat
                guard backend.ioctl(fd, V4L2.enumerateFrameSizes, &size) == 0 else { break }
                guard size.type == UInt32(V4L2_FRMSIZE_TYPE_DISCRETE.rawValue) else {
                    // Stepwise or continuous: report the largest size.
                    sizes.append(Size(width: Int(size.stepwise.max_width), height: Int(size.stepwise.max_height), fps: []))
                    break
                }
                let width = Int(size.discrete.width)
                let height = Int(size.discrete.height)
                var rates: [Double] = []
                for rateIndex in 0..<64 {
                    var interval = v4l2_frmivalenum()
                    interval.index = UInt32(rateIndex)
                    interval.pixel_format = desc.pixelformat
                    interval.width = UInt32(width)
                    interval.height = UInt32(height)
                    guard backend.ioctl(fd, V4L2.enumerateFrameIntervals, &interval) == 0,
                        interval.type == UInt32(V4L2_FRMIVAL_TYPE_DISCRETE.rawValue), interval.discrete.numerator > 0
                    else { break }
                    rates.append(Double(interval.discrete.denominator) / Double(interval.discrete.numerator))
                }
                sizes.append(Size(width: width, height: height, fps: rates))
            }
            formats.append(Format(
                fourcc: desc.pixelformat, description: text, emulated: desc.flags & UInt32(V4L2_FMT_FLAG_EMULATED) != 0, sizes: sizes))
        }
        return formats
    }

    /// Every device the backend knows of, queried.
    public static func devices(backend: V4L2Backend) -> [Device] {
        backend.devicePaths().map { path in
            var device = Device(path: path, driver: "", card: "", bus: "", isCapture: false, formats: [])
            let fd = backend.open(path, flags: O_RDWR | O_NONBLOCK)
            guard fd >= 0 else {
                device.error = "cannot open: \(String(cString: strerror(errno)))"
                return device
            }
            defer { _ = backend.close(fd) }
            var capability = v4l2_capability()
            guard backend.ioctl(fd, V4L2.queryCapability, &capability) == 0 else {
                device.error = "VIDIOC_QUERYCAP failed: \(String(cString: strerror(errno)))"
                return device
            }
            func text<T>(_ field: T) -> String { withUnsafeBytes(of: field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) } }
            device.driver = text(capability.driver)
            device.card = text(capability.card)
            device.bus = text(capability.bus_info)
            let caps = capability.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0 ? capability.device_caps : capability.capabilities
            device.isCapture = caps & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0 && caps & UInt32(V4L2_CAP_STREAMING) != 0
            if device.isCapture { device.formats = (try? formats(fd: fd, backend: backend)) ?? [] }
            return device
        }
    }

    /// The listing as text for people.
    public static func render(_ devices: [Device]) -> String {
        guard !devices.isEmpty else {
            return "No video devices found: there is no /dev/video* on this machine (is a camera plugged in, and its driver loaded?)\n"
        }
        var out = ""
        for device in devices {
            if let error = device.error {
                out += "\(device.path): \(error)\n"
                continue
            }
            out += "\(device.path): \(device.card) (driver \(device.driver), bus \(device.bus))\n"
            guard device.isCapture else {
                out += "  not a video capture device (metadata or output node); not usable as --source\n"
                continue
            }
            for format in device.formats {
                let usable = !format.emulated && V4L2Camera.preferredFormats.contains(format.fourcc)
                out += "  \(format.name) \(format.description)" + (format.emulated ? " [emulated by libv4l2; not used]" : usable ? "" : " [not used]") + "\n"
                for size in format.sizes {
                    let rates = size.fps.map { String(format: "%.4g", $0) }.joined(separator: ", ")
                    out += "    \(size.width)x\(size.height)" + (rates.isEmpty ? "" : " @ \(rates) fps") + "\n"
                }
            }
        }
        return out
    }
}
