import COpenCV
import COpenVINO

/// What runs the networks: OpenCV's `cv::dnn`, or OpenVINO (about three times faster on a CPU, when installed).
public enum InferenceRuntime: String, Sendable, Equatable, CaseIterable {
    case opencv
    case openvino

    var code: Int32 {
        switch self {
        case .opencv: Int32(FWCV_RUNTIME_OPENCV)
        case .openvino: Int32(FWCV_RUNTIME_OPENVINO)
        }
    }
}

/// OpenVINO's C library (`libopenvino_c.so.*`), loaded once per process at run time: Facewire builds and runs
/// without it.
public enum OpenVINOLibrary {
    /// Loads the library at `path` (the first call decides for the whole process). Returns OpenVINO's version.
    /// - Throws: ``OpenCVError`` with the loader's message.
    @discardableResult
    public static func load(_ path: String) throws(OpenCVError) -> String {
        var message = [CChar](repeating: 0, count: 512)
        guard fwov_load(path, &message, message.count) == 0 else {
            throw OpenCVError(message: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return version
    }

    /// Whether a ``load(_:)`` succeeded.
    public static var isLoaded: Bool { fwov_loaded() != 0 }

    /// The loaded OpenVINO's version ("" when none is).
    public static var version: String { String(cString: fwov_version()) }
}
