import FacewireView
import Testing

@Suite("BestFace.score")
struct BestFaceTests {
    func score(size: Float = 100, yaw: Float? = 0, pitch: Float? = 0, quality: Float? = 0.8) -> Float {
        BestFace.score(width: size, height: size, yaw: yaw, pitch: pitch, quality: quality)
    }

    /// Strictly increasing in size and quality, strictly decreasing in |yaw| and |pitch| (either sign).
    @Test func monotone() {
        func increasing(_ values: [Float]) -> Bool { zip(values, values.dropFirst()).allSatisfy { $0 < $1 } }
        #expect(increasing([1, 10, 40, 100, 400, 2000].map { score(size: $0) }))
        #expect(increasing([0, 0.2, 0.5, 0.9, 1].map { score(quality: $0) }))
        #expect(increasing([80, 45, 20, 5, 0].map { score(yaw: $0) }))
        #expect(increasing([-80, -45, -20, -5, 0].map { score(yaw: $0) }))
        #expect(increasing([60, 30, 10, 0].map { score(pitch: $0) }))
        #expect(increasing([-60, -30, -10, 0].map { score(pitch: -$0) }))
        // A wide face counts by its area: 200 × 50 is as large as 100 × 100.
        #expect(BestFace.score(width: 200, height: 50, yaw: 0, pitch: 0, quality: 1)
            == BestFace.score(width: 100, height: 100, yaw: 0, pitch: 0, quality: 1))
        // No property is traded to zero: a profile face still prefers larger.
        #expect(score(size: 50, yaw: 90) < score(size: 200, yaw: 90))
        #expect(score(size: 50, quality: 0) < score(size: 200, quality: 0))
    }

    /// Absent measurements rank between good and bad ones.
    @Test func absentValues() {
        #expect(score(yaw: nil) < score(yaw: 0) && score(yaw: nil) > score(yaw: 45))
        #expect(score(pitch: nil) < score(pitch: 0) && score(pitch: nil) > score(pitch: 45))
        #expect(score(quality: nil) < score(quality: 1) && score(quality: nil) > score(quality: 0))
    }

    /// Non-finite inputs count as the worst value, and the score stays finite, in 0...1.
    @Test func nonFiniteIsWorst() {
        let bad: [Float] = [.nan, .infinity, -.infinity, .signalingNaN]
        for value in bad {
            #expect(BestFace.score(width: value, height: 100, yaw: 0, pitch: 0, quality: 1) == 0)
            #expect(BestFace.score(width: 100, height: value, yaw: 0, pitch: 0, quality: 1) == 0)
            #expect(score(yaw: value) == score(yaw: 90))
            #expect(score(pitch: value) == score(pitch: -90))
            #expect(score(quality: value) == score(quality: 0))
        }
        let extremes: [Float] = [.nan, .infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 0, -1]
        for a in extremes {
            for b in extremes {
                let value = BestFace.score(width: a, height: b, yaw: a, pitch: b, quality: a)
                #expect(value.isFinite && (0...1).contains(value), "\(a), \(b): \(value)")
            }
        }
        #expect(BestFace.score(width: -10, height: 100, yaw: 0, pitch: 0, quality: 1) == 0)
    }
}
