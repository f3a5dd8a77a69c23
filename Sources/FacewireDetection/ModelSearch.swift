import Foundation

extension DetectorConfiguration {
    /// Model file names looked for in each search directory, in order of preference (the first found wins).
    ///
    /// CenterFace comes first because it scored the higher AP on the DEV set (BENCHMARKS.md, "Detector choice").
    public static let preferredModels: [(backend: Backend, fileName: String)] = [
        (.centerface, CenterFaceDetector.modelFileName),
        (.yunet, YuNetDetector.modelFileName),
    ]

    /// Directories searched for model files when no model path is given, in order:
    /// `$FACEWIRE_MODEL_DIR`, then `$XDG_CACHE_HOME/facewire/models` (or `~/.cache/facewire/models`).
    public static func defaultModelSearchPaths(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> [String] {
        var paths: [String] = []
        if let dir = environment["FACEWIRE_MODEL_DIR"], !dir.isEmpty {
            paths.append(dir)
        }
        if let cache = environment["XDG_CACHE_HOME"], !cache.isEmpty {
            paths.append("\(cache)/facewire/models")
        } else if let home = environment["HOME"], !home.isEmpty {
            paths.append("\(home)/.cache/facewire/models")
        } else {
            paths.append(FileManager.default.homeDirectoryForCurrentUser.path + "/.cache/facewire/models")
        }
        return paths
    }

    /// Infers the backend from a model file name: "yunet" → YuNet, "centerface" → CenterFace, ".xml" → cascade
    /// (case-insensitive); `nil` when the name says nothing.
    public static func backend(forModelPath path: String) -> Backend? {
        let name = (path as NSString).lastPathComponent.lowercased()
        if name.contains("yunet") { return .yunet }
        if name.contains("centerface") { return .centerface }
        if name.hasSuffix(".xml") { return .cascade }
        return nil
    }

    /// Decides the concrete backend, model file, parameters and runtime. Loads nothing but OpenVINO's library
    /// (once per process) when it is to run the network (``resolveRuntime(for:environment:)``).
    ///
    /// For ``Backend/auto``: with a model path, the backend comes from its file name; without one, each
    /// directory of ``defaultModelSearchPaths(environment:)`` is searched for ``preferredModels``; if none is
    /// found, the cascade is chosen and ``ResolvedDetector/note`` says why. For a DNN backend without a model
    /// path, the search directories are searched for that backend's file.
    /// - Throws: ``DetectionError`` `.invalidConfiguration` (the file name names no backend) or
    ///   `.modelNotFound` (a DNN backend was asked for and no model file was found).
    public func resolve(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> ResolvedDetector {
        let searchPaths = Self.defaultModelSearchPaths(environment: environment)
        var backend = self.backend
        var modelPath = self.modelPath
        var note: String?

        if backend == .auto {
            if let path = modelPath {
                guard let inferred = Self.backend(forModelPath: path) else {
                    throw DetectionError(
                        .invalidConfiguration,
                        "cannot tell the backend from the model file name \(path): expected a name containing \"yunet\" or \"centerface\", or a cascade .xml; choose the backend explicitly")
                }
                backend = inferred
            } else if let found = Self.findPreferredModel(in: searchPaths) {
                backend = found.backend
                modelPath = found.path
            } else {
                backend = .cascade
                note = "no face model (\(Self.preferredModels.map(\.fileName).joined(separator: " or "))) found in \(searchPaths.joined(separator: ", ")); using the Haar cascade fallback (lower accuracy)"
            }
        }

        if modelPath == nil, backend == .yunet || backend == .centerface {
            let fileName = backend == .yunet ? YuNetDetector.modelFileName : CenterFaceDetector.modelFileName
            guard let path = searchPaths.map({ "\($0)/\(fileName)" }).first(where: FileSystem.isReadableFile) else {
                throw DetectionError(
                    .modelNotFound,
                    "\(fileName) not found in \(searchPaths.joined(separator: ", ")); pass the model path explicitly")
            }
            modelPath = path
        }

        let defaults: (width: Int, threshold: Float) =
            switch backend {
            case .yunet: (YuNetDetector.defaultInputWidth, YuNetDetector.defaultScoreThreshold)
            case .centerface: (CenterFaceDetector.defaultInputWidth, CenterFaceDetector.defaultScoreThreshold)
            case .cascade, .auto: (CascadeDetector.defaultInputWidth, CascadeDetector.defaultScoreThreshold)
            case .synthetic, .noop: (0, 0)
            }
        let (runtime, runtimeNote) = try resolveRuntime(for: backend, environment: environment)
        if let runtimeNote { note = note.map { "\($0); \(runtimeNote)" } ?? runtimeNote }
        var resolved = ResolvedDetector(
            backend: backend, modelPath: modelPath, inputWidth: inputWidth ?? defaults.width,
            scoreThreshold: scoreThreshold ?? defaults.threshold, maxFaces: maxFaces, refineLandmarks: refineLandmarks,
            note: note)
        resolved.syntheticMilliseconds = syntheticMilliseconds
        resolved.inputWidthFollowsImage = inputWidth == nil
        resolved.runtime = runtime
        return resolved
    }

    private static func findPreferredModel(in directories: [String]) -> (backend: Backend, path: String)? {
        for directory in directories {
            for model in preferredModels {
                let path = "\(directory)/\(model.fileName)"
                if FileSystem.isReadableFile(path) { return (model.backend, path) }
            }
        }
        return nil
    }
}
