import FacewireDetection
/// Recall of counted ground-truth faces split by annotated box height, to see how small faces fare.
public struct RecallByHeight: Sendable, Equatable {
    /// One height range, `lower ≤ height < upper`.
    public struct Bucket: Sendable, Equatable {
        /// Smallest height in the bucket, in pixels.
        public var lower: Float
        /// Height the bucket stops below; `nil` for the open-ended last bucket.
        public var upper: Float?
        /// Counted faces in the bucket.
        public var faces: Int
        /// Those matched by a kept detection.
        public var found: Int

        /// Creates a bucket.
        public init(lower: Float, upper: Float?, faces: Int, found: Int) {
            self.lower = lower
            self.upper = upper
            self.faces = faces
            self.found = found
        }

        /// `found / faces`, or 0 for an empty bucket.
        public var recall: Double { faces > 0 ? Double(found) / Double(faces) : 0 }

        /// A label such as `20-40` or `80+`.
        public var label: String {
            let low = Self.integer(lower)
            return upper.map { "\(low)-\(Self.integer($0))" } ?? "\(low)+"
        }

        private static func integer(_ value: Float) -> String {
            value == value.rounded() ? String(Int(value)) : String(value)
        }
    }

    /// The default bucket edges: 20–40, 40–80 and 80+ px.
    public static let defaultEdges: [Float] = [20, 40, 80]

    /// The buckets, in order.
    public var buckets: [Bucket]

    /// Creates a result.
    public init(buckets: [Bucket]) {
        self.buckets = buckets
    }

    /// Counts, per bucket, the counted faces and those that a true-positive verdict in `matched` points at.
    ///
    /// Faces that are not counted under `criteria` (ignored, or under the minimum height) are in no bucket, and
    /// nor are counted faces below the first edge.
    /// - Parameters:
    ///   - groundTruth: one array per image.
    ///   - matched: the verdicts of the detections kept (for example those at the operating threshold), parallel
    ///     to `groundTruth`.
    ///   - criteria: which faces count.
    ///   - edges: increasing bucket edges; the last bucket is open-ended.
    public static func compute(
        groundTruth: [[GroundTruthFace]], matched: [[MatchedDetection]], criteria: MatchingCriteria,
        edges: [Float] = defaultEdges
    ) -> RecallByHeight {
        var buckets = edges.enumerated().map { index, lower in
            Bucket(lower: lower, upper: index + 1 < edges.count ? edges[index + 1] : nil, faces: 0, found: 0)
        }
        for (faces, verdicts) in zip(groundTruth, matched) {
            let found = Set(verdicts.compactMap { $0.outcome == .truePositive ? $0.truthIndex : nil })
            for (index, face) in faces.enumerated() where face.isCounted(under: criteria) {
                let height = face.box.height
                guard let bucket = buckets.firstIndex(where: { height >= $0.lower && height < ($0.upper ?? .infinity) })
                else { continue }
                buckets[bucket].faces += 1
                if found.contains(index) { buckets[bucket].found += 1 }
            }
        }
        return RecallByHeight(buckets: buckets)
    }
}
