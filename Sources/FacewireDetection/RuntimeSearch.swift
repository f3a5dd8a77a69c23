import FacewireOpenCV
import Foundation

extension DetectorConfiguration {
    /// The file name prefix of OpenVINO's C library (the PyPI wheel ships only a versioned `libopenvino_c.so.2641`).
    static let openVINOLibraryPrefix = "libopenvino_c.so"

    /// Where OpenVINO's C library is looked for, in order: `$FACEWIRE_OPENVINO` (the library file, or its directory),
    /// then `$XDG_CACHE_HOME/facewire/openvino/libs` (or `~/.cache/facewire/openvino/libs`), where `scripts/setup.sh`
    /// unpacks the pinned wheel.
    public static func openVINOSearchPaths(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        var paths: [String] = []
        if let path = environment["FACEWIRE_OPENVINO"], !path.isEmpty { paths.append(path) }
        let models = defaultModelSearchPaths(environment: environment).last ?? ""
        paths.append((models as NSString).deletingLastPathComponent + "/openvino/libs")
        return paths
    }

    /// The first OpenVINO C library found in ``openVINOSearchPaths(environment:)``: a path given as a file, or the
    /// `libopenvino_c.so*` of a directory (the unversioned name first, then the highest version).
    public static func findOpenVINOLibrary(environment: [String: String]) -> String? {
        for path in openVINOSearchPaths(environment: environment) {
            if FileSystem.isReadableFile(path) { return path }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            let candidates = names.filter { $0.hasPrefix(openVINOLibraryPrefix) }.sorted {
                ($0.count, $0) > ($1.count, $1)
            }
            if let exact = candidates.first(where: { $0 == openVINOLibraryPrefix }) { return "\(path)/\(exact)" }
            if let versioned = candidates.first { return "\(path)/\(versioned)" }
        }
        return nil
    }

    /// Decides what runs `backend`'s network (``InferenceRuntime/resolve(_:environment:)``); the backends without
    /// one run on OpenCV.
    /// - Throws: ``DetectionError`` as `resolve` does, or `.invalidConfiguration` when OpenVINO is asked for the cascade.
    func resolveRuntime(for backend: Backend, environment: [String: String]) throws -> (InferenceRuntime, note: String?) {
        guard backend == .yunet || backend == .centerface else {
            if runtime == .openvino, backend == .cascade {
                throw DetectionError(.invalidConfiguration, "the cascade has no network for OpenVINO to run: use --runtime opencv or auto")
            }
            return (.opencv, nil)
        }
        return try InferenceRuntime.resolve(runtime, environment: environment)
    }
}

extension InferenceRuntime {
    /// What runs the networks when `requested` (`nil`: auto) was asked for: OpenVINO when asked or, for auto, when
    /// its library is found (``DetectorConfiguration/findOpenVINOLibrary(environment:)``) and loads; OpenCV
    /// otherwise. Loads OpenVINO's library (once per process). Returns the runtime and, when auto wanted OpenVINO and
    /// it is not usable, why.
    /// - Throws: ``DetectionError`` `.modelLoadFailed` when OpenVINO was asked for and cannot be used.
    public static func resolve(_ requested: InferenceRuntime?, environment: [String: String]) throws -> (InferenceRuntime, note: String?) {
        guard requested != .opencv else { return (.opencv, nil) }
        let why: String
        if let library = DetectorConfiguration.findOpenVINOLibrary(environment: environment) {
            do {
                try OpenVINOLibrary.load(library)
                return (.openvino, nil)
            } catch {
                why = "could not be loaded (\(error.message(or: "unknown error")))"
            }
        } else {
            why = "was not found in \(DetectorConfiguration.openVINOSearchPaths(environment: environment).joined(separator: ", "))"
        }
        if requested == .openvino { throw DetectionError(.modelLoadFailed, "OpenVINO \(why)") }
        return (.opencv, "OpenVINO \(why): the networks run on OpenCV (scripts/setup.sh installs OpenVINO)")
    }
}
