import FacewireVocabulary
/// The result of ``FrameAnalyzer/analyze(jpeg:orientation:options:)-(UnsafeRawBufferPointer,Orientation,_)``: the faces of one frame.
public struct FrameAnalysis: Sendable, Equatable {
    /// Width of the **upright** frame at full resolution (after applying the EXIF orientation).
    public var width: Int
    /// Height of the upright frame at full resolution.
    public var height: Int
    /// Faces, best first, in the coordinates of the upright full-resolution frame (origin top left, y down).
    public var faces: [DetectedFace]
    /// Time spent reading the header, decoding (DCT-scaled) and rotating into the upright frame.
    public var decodeMilliseconds: Double
    /// Time spent in the detector, including its resize and the size and count filters.
    public var detectMilliseconds: Double
    /// Time spent in the smile and eyes-closed classifiers, all faces together (0 when none ran).
    public var classifyMilliseconds: Double
    /// The detector's track-start score (``FaceDetector/trackScore``), when it has one.
    public var trackScore: Float?

    /// Creates an analysis.
    public init(
        width: Int, height: Int, faces: [DetectedFace], decodeMilliseconds: Double, detectMilliseconds: Double,
        classifyMilliseconds: Double = 0
    ) {
        self.width = width
        self.height = height
        self.faces = faces
        self.decodeMilliseconds = decodeMilliseconds
        self.detectMilliseconds = detectMilliseconds
        self.classifyMilliseconds = classifyMilliseconds
    }
}
