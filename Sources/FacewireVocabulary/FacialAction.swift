/// Expressions read one classifier at a time from the face mesh's geometry, as Affdex reported them: each a score
/// 0...100 and a flag at a stated operating point (SPEC 11.8). Raw values are the wire's `Expression` numbers.
public enum FacialAction: Int, Sendable, CaseIterable, Comparable {
    /// Eyebrows lifted (AU1+2).
    case browRaise = 1
    /// Brows drawn down and together (AU4).
    case browFurrow = 2
    /// Lips apart with a visible gap (AU25/26).
    case mouthOpen = 3
    /// Upper lids raised, more of the eye showing (AU5).
    case eyeWiden = 4
    /// Lips pushed forward and rounded (AU18).
    case lipPucker = 5
    /// Mouth corners pulled down (AU15).
    case lipCornerDepressor = 6

    /// The JSON key and command-line word's camel-case form (`browRaise`).
    public var key: String {
        switch self {
        case .browRaise: "browRaise"
        case .browFurrow: "browFurrow"
        case .mouthOpen: "mouthOpen"
        case .eyeWiden: "eyeWiden"
        case .lipPucker: "lipPucker"
        case .lipCornerDepressor: "lipCornerDepressor"
        }
    }

    /// The command-line name (`brow-raise`).
    public var name: String {
        switch self {
        case .browRaise: "brow-raise"
        case .browFurrow: "brow-furrow"
        case .mouthOpen: "mouth-open"
        case .eyeWiden: "eye-widen"
        case .lipPucker: "lip-pucker"
        case .lipCornerDepressor: "lip-corner-depressor"
        }
    }

    public static func < (a: FacialAction, b: FacialAction) -> Bool { a.rawValue < b.rawValue }
}

/// One expression's reading on a face: a score 0...100 and whether it is present (score ≥ the classifier's
/// operating point).
public struct ActionReading: Sendable, Equatable {
    public var action: FacialAction
    public var score: Float
    public var present: Bool

    public init(action: FacialAction, score: Float, present: Bool) {
        self.action = action
        self.score = score
        self.present = present
    }
}
