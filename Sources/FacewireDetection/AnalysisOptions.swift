import Foundation
import FacewireVocabulary

/// How one frame is analysed: the per-stream settings of Core Image's CIDetector and Affdex, applied by
/// ``FrameAnalyzer``.
///
/// | option | effect |
/// |---|---|
/// | ``accuracy`` | `.low` runs the detector at its base input width (320 px for YuNet and CenterFace); `.high` at twice that, which finds smaller faces at two to three times the cost (CIDetectorAccuracy). |
/// | ``faceMode`` | `.large` (Affdex's large-face mode, for kiosks and selfies) halves the detector's width and reports only faces at least 1/8 of the frame's shorter side; `.small` (the default) reports any size. |
/// | ``minFace`` | the smallest face height reported, in upright full-resolution pixels. |
/// | ``maxFaces`` | the most faces reported per frame, highest confidence first (Affdex's maximum face count). |
/// | ``classifiers`` | which classifiers run on each face; one that is off costs nothing. |
/// | ``landmarks`` | which landmark list each face carries: none, the detector's 5 points, or the 468-point mesh. |
public struct AnalysisOptions: Sendable, Equatable {
    /// Speed against small faces (CIDetectorAccuracy).
    public enum Accuracy: String, Sendable, Equatable, CaseIterable {
        case low, high
    }

    /// Which faces matter (Affdex's face mode).
    public enum FaceMode: String, Sendable, Equatable, CaseIterable {
        /// Faces of any size.
        case small
        /// Only faces at least 1/8 of the frame's shorter side; the detector runs at half width.
        case large
    }

    /// The classifiers run on each face's pixels.
    public struct Classifiers: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        /// `hasSmile` and `smileScore`.
        public static let smile = Classifiers(rawValue: 1 << 0)
        /// `leftEyeClosed`, `rightEyeClosed`, their scores and the eyes' openness.
        public static let eyes = Classifiers(rawValue: 1 << 1)
        /// `pitch` and `roll` from the face mesh, and `yaw` measured on the mesh instead of the 5 landmarks.
        public static let pose = Classifiers(rawValue: 1 << 2)
        /// `quality`: how usable the face is (size, sharpness, pose).
        public static let quality = Classifiers(rawValue: 1 << 3)
        /// `skin`: the mean colour of the forehead and cheeks, for the collector's heart-rate estimate.
        public static let pulse = Classifiers(rawValue: 1 << 4)
        /// The mesh expressions (SPEC 11.8), bits 8...13 in ``FacialAction`` order (bits 5...7 are reserved).
        public static func action(_ action: FacialAction) -> Classifiers { Classifiers(rawValue: 1 << (7 + UInt32(action.rawValue))) }
        public static let browRaise = action(.browRaise)
        public static let browFurrow = action(.browFurrow)
        public static let mouthOpen = action(.mouthOpen)
        public static let eyeWiden = action(.eyeWiden)
        public static let lipPucker = action(.lipPucker)
        public static let lipCornerDepressor = action(.lipCornerDepressor)
        /// Every mesh expression (`expressions`).
        public static let actions: Classifiers = Classifiers(FacialAction.allCases.map(action))
        /// The expressions among these classifiers, in order.
        public var facialActions: [FacialAction] { FacialAction.allCases.filter { contains(.action($0)) } }
        /// Every classifier.
        public static let all: Classifiers = Classifiers([.smile, .eyes, .pose, .quality, .pulse]).union(.actions)
        /// What runs unless asked otherwise: every classifier but `pulse`. A heart rate is health data (special
        /// category data under the GDPR, for one), so measuring it is the operator's explicit choice (`pulse` or
        /// `all`), never a side effect of an upgrade.
        public static let standard: Classifiers = [.smile, .eyes, .pose, .quality]
        /// The classifiers that need the face mesh when the face is large enough for it. Not the pulse: it is read
        /// on regions placed from the eyes, and where the mesh runs for another classifier the forehead it outlines
        /// comes too (``SkinSampler/meshForehead(_:mesh:)``), which a collector reads only when asked
        /// (`--pulse-mesh-forehead`).
        public static let meshBased: Classifiers = Classifiers([.smile, .eyes, .pose, .quality]).union(.actions)

        /// Parses a comma-separated list: `smile`, `eyes`, `pose`, `quality`, `pulse`, `all` or `none` (an empty string
        /// means none).
        /// - Throws: ``DetectionError`` `.invalidConfiguration` naming the unknown word.
        public static func parse(_ text: String) throws -> Classifiers {
            var result: Classifiers = []
            for word in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() })
            where !word.isEmpty {
                switch word {
                case "smile", "smiles": result.insert(.smile)
                case "eyes", "eye", "blink", "eyes-closed": result.insert(.eyes)
                case "pose", "head-pose": result.insert(.pose)
                case "quality": result.insert(.quality)
                case "pulse", "heart-rate": result.insert(.pulse)
                case "all": result.formUnion(.all)
                case "expressions": result.formUnion(.actions)
                case "none": break
                default:
                    if let action = FacialAction.allCases.first(where: { $0.name == word || $0.key.lowercased() == word }) {
                        result.insert(.action(action))
                        continue
                    }
                    throw DetectionError(
                        .invalidConfiguration,
                        "unknown classifier '\(word)': use smile, eyes, pose, quality, pulse, "
                            + FacialAction.allCases.map(\.name).joined(separator: ", ") + ", expressions, all or none")
                }
            }
            return result
        }

        /// The list form `parse` accepts, for example "smile,eyes,pose,quality", "smile" or "none".
        public var description: String {
            var words: [String] = []
            if contains(.smile) { words.append("smile") }
            if contains(.eyes) { words.append("eyes") }
            if contains(.pose) { words.append("pose") }
            if contains(.quality) { words.append("quality") }
            if contains(.pulse) { words.append("pulse") }
            words += facialActions.map(\.name)
            return words.isEmpty ? "none" : words.joined(separator: ",")
        }
    }

    /// Which landmark list each face carries (`landmarks` in the results). The named points (eyes, nose, mouth)
    /// are always sent; the list costs bandwidth, the mesh about 3.7 KB per face.
    public enum Landmarks: String, Sendable, Equatable, CaseIterable {
        /// No list.
        case none
        /// The detector's 5 points (image-left eye, image-right eye, nose tip, image-left and image-right mouth
        /// corner).
        case five = "5"
        /// The 468-point face mesh where it ran (the mesh runs for this even with every classifier off), else the 5
        /// points.
        case mesh

        /// Parses `none`, `5` (or `five`) or `mesh`.
        public init?(parsing text: String) {
            switch text.lowercased() {
            case "none": self = .none
            case "5", "five": self = .five
            case "mesh", "468": self = .mesh
            default: return nil
            }
        }
    }

    /// The largest ``maxFaces`` accepted.
    public static let maxFacesLimit = 256

    public var accuracy: Accuracy
    public var faceMode: FaceMode
    /// The smallest face height reported, in upright full-resolution pixels (0: no minimum).
    public var minFace: Int
    /// The most faces reported per frame, highest confidence first; 1...``maxFacesLimit``.
    public var maxFaces: Int
    public var classifiers: Classifiers
    public var landmarks: Landmarks

    /// Creates options. The defaults: low accuracy, any face size, up to 64 faces, every classifier but `pulse`
    /// on (``Classifiers/standard``), the 5 landmarks.
    public init(
        accuracy: Accuracy = .low, faceMode: FaceMode = .small, minFace: Int = 0, maxFaces: Int = 64,
        classifiers: Classifiers = .standard, landmarks: Landmarks = .five
    ) {
        self.accuracy = accuracy
        self.faceMode = faceMode
        self.minFace = minFace
        self.maxFaces = maxFaces
        self.classifiers = classifiers
        self.landmarks = landmarks
    }

    /// Whether faces large enough for it get the face mesh: a classifier that uses it is on, or the mesh
    /// landmarks were asked for.
    public var wantsMesh: Bool {
        !classifiers.isDisjoint(with: .meshBased) || landmarks == .mesh
    }

    /// Checks the ranges.
    /// - Throws: ``DetectionError`` `.invalidConfiguration`.
    public func validate() throws {
        guard (0...65_535).contains(minFace) else {
            throw DetectionError(.invalidConfiguration, "min face \(minFace) px is outside 0...65535")
        }
        guard (1...Self.maxFacesLimit).contains(maxFaces) else {
            throw DetectionError(.invalidConfiguration, "max faces \(maxFaces) is outside 1...\(Self.maxFacesLimit)")
        }
    }

    /// The width the detector runs at for a detector whose base width is `base` (`nil`: the image's own width
    /// `imageWidth`): doubled for high accuracy, halved in large-face mode, never below 64 px (YuNet fails on
    /// smaller inputs).
    public func detectorWidth(base: Int?, imageWidth: Int) -> Int? {
        var factor = 1.0
        if accuracy == .high { factor *= 2 }
        if faceMode == .large { factor /= 2 }
        guard factor != 1 else { return base }
        let width = Double(base ?? imageWidth) * factor
        return max(64, Int(width.rounded()))
    }

    /// The smallest face height reported, in upright full-resolution pixels, for a frame of `width` × `height`:
    /// ``minFace``, raised to 1/8 of the shorter side in large-face mode.
    public func minimumFaceHeight(width: Int, height: Int) -> Float {
        var minimum = Float(minFace)
        if faceMode == .large { minimum = max(minimum, Float(min(width, height)) / 8) }
        return minimum
    }
}
