import FacewireDetection
import FacewireProtocol

extension AnalysisOptions {
    /// These options with every field `settings` sets replacing the local one (a frame's per-stream settings
    /// over the worker's defaults).
    /// - Throws: ``DetectionError`` `.invalidConfiguration` for an unknown enum value, a classifier bit this
    ///   worker does not know, or an out-of-range number.
    public func applying(_ settings: DetectionSettings) throws -> AnalysisOptions {
        var options = self
        switch settings.accuracy {
        case .unset: break
        case .low: options.accuracy = .low
        case .high: options.accuracy = .high
        case .UNRECOGNIZED(let value):
            throw DetectionError(.invalidConfiguration, "unknown accuracy \(value) in the frame's settings")
        }
        switch settings.faceMode {
        case .unset: break
        case .small: options.faceMode = .small
        case .large: options.faceMode = .large
        case .UNRECOGNIZED(let value):
            throw DetectionError(.invalidConfiguration, "unknown face mode \(value) in the frame's settings")
        }
        if settings.minFace != 0 { options.minFace = Int(settings.minFace) }
        if settings.maxFaces != 0 { options.maxFaces = Int(settings.maxFaces) }
        if settings.hasClassifiers {
            let classifiers = Classifiers(rawValue: settings.classifiers)
            guard Classifiers.all.isSuperset(of: classifiers) else {
                throw DetectionError(
                    .invalidConfiguration, "unknown classifier bits 0x\(String(settings.classifiers, radix: 16)) in the frame's settings")
            }
            options.classifiers = classifiers
        }
        switch settings.landmarks {
        case .unset: break
        case .none: options.landmarks = .none
        case .five: options.landmarks = .five
        case .mesh: options.landmarks = .mesh
        case .UNRECOGNIZED(let value):
            throw DetectionError(.invalidConfiguration, "unknown landmarks value \(value) in the frame's settings")
        }
        try options.validate()
        return options
    }
}
