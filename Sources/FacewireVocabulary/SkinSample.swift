/// The mean colour of one skin region of a face (the pulse classifier's measurement; see `SkinSampler`).
public struct SkinSample: Sendable, Equatable {
    /// Where on the face a sample is taken.
    public enum Region: String, Sendable, CaseIterable {
        case forehead, leftCheek, rightCheek

        /// The region's place in `allCases` (0, 1, 2): its bit in a set of regions.
        public var index: Int {
            switch self {
            case .forehead: 0
            case .leftCheek: 1
            case .rightCheek: 2
            }
        }
    }

    public var region: Region
    /// Mean 0...255 over the region's skin pixels.
    public var r: Float
    public var g: Float
    public var b: Float
    public var pixels: Int

    public init(region: Region, r: Float, g: Float, b: Float, pixels: Int) {
        self.region = region
        self.r = r
        self.g = g
        self.b = b
        self.pixels = pixels
    }
}
