import FacewireFuzzing
import FacewireVocabulary
import Testing

@testable import FacewireTracking

@Suite("FaceTracker: its state, and a tracker restored from it")
struct FaceTrackerStateTests {
    /// Faces that walk, stop, vanish and come back, with a jittery detector that sometimes misses or scores low.
    static func frames(seed: UInt64, count: Int) -> [(time: Double, detections: [TrackDetection])] {
        var random = SplitMix64(seed: seed)
        var people = (0..<Int.random(in: 1...6, using: &random)).map { _ in
            (x: Double.random(in: 0...600, using: &random), y: Double.random(in: 0...400, using: &random),
             vx: Double.random(in: -200...200, using: &random), size: Double.random(in: 20...120, using: &random),
             present: Bool.random(using: &random))
        }
        var time = 0.0
        return (0..<count).map { _ in
            time += [1.0 / 30, 1.0 / 10, 0.4, 1.5].randomElement(using: &random)!  // drops make longer steps
            var detections: [TrackDetection] = []
            for index in people.indices {
                if Int.random(in: 0..<40, using: &random) == 0 { people[index].present.toggle() }
                people[index].x += people[index].vx / 30
                guard people[index].present, Int.random(in: 0..<8, using: &random) != 0 else { continue }
                let jitter = Float.random(in: -3...3, using: &random)
                let size = Float(people[index].size)
                detections.append(TrackDetection(
                    box: FaceRect(x: Float(people[index].x) + jitter, y: Float(people[index].y) - jitter, width: size, height: size * 1.2),
                    score: Float.random(in: 0.3...0.99, using: &random)))
            }
            return (time, detections)
        }
    }

    @Test("restored at any frame, a tracker answers every later frame exactly as the original", arguments: 0..<20)
    func restoredContinuesIdentically(seed: UInt64) throws {
        let frames = Self.frames(seed: seed, count: 120)
        let configuration = FaceTracker.Configuration(maxAge: 1.0, minHits: Int(seed % 3) + 1, maxTracks: 8)
        var original = FaceTracker(configuration: configuration)
        let split = Int(seed * 7 % 100) + 5
        var restored: FaceTracker?
        var events = 0
        for (seq, frame) in frames.enumerated() {
            if seq == split {
                restored = try FaceTracker(configuration: configuration, state: original.state)
                #expect(restored?.state == original.state, "seed \(seed): the state comes back whole")
            }
            let expected = original.update(seq: UInt64(seq), time: frame.time, detections: frame.detections)
            events += expected.appeared.count + expected.left.count
            if var copy = restored {
                #expect(copy.update(seq: UInt64(seq), time: frame.time, detections: frame.detections) == expected, "seed \(seed), frame \(seq)")
                restored = copy
            }
        }
        #expect(restored?.state == original.state)
        #expect(events > 0, "the run had faces appearing or leaving")
    }

    @Test("a bridge shortens only a long gap, and only for the next update; odd values change nothing")
    func aBridgeShortensALongGap() {
        var tracker = FaceTracker(configuration: .init(maxAge: 1.0))
        func face(_ x: Float) -> TrackDetection { TrackDetection(box: FaceRect(x: x, y: 100, width: 80, height: 96), score: 0.9) }
        // A face walking right at 100 px/s, then, 3 s later, a little further: 3 s of its velocity overshoots.
        for seq in 0..<4 { _ = tracker.update(seq: UInt64(seq), time: Double(seq) / 10, detections: [face(100 + Float(seq) * 10)]) }
        var bridged = tracker
        bridged.bridge(to: 3.3, maxGap: 0.5)
        #expect(abs((bridged.state.previousTime ?? 0) - 2.8) < 1e-9 && abs(bridged.state.tracks[0].lastSeenTime - 2.8) < 1e-9)
        #expect(bridged.update(seq: 33, time: 3.3, detections: [face(160)]).assignments.first?.trackingID == 1)
        #expect(tracker.update(seq: 33, time: 3.3, detections: [face(160)]).assignments.first?.trackingID == 2, "unbridged, the prediction is lost")
        let face = face(100)
        var short = FaceTracker(configuration: .init(maxAge: 1.0))
        _ = short.update(seq: 0, time: 0, detections: [face])
        let before = short.state
        short.bridge(to: 0.3, maxGap: 0.5)
        short.bridge(to: .nan, maxGap: 0.5)
        short.bridge(to: 9, maxGap: -1)
        short.bridge(to: .infinity, maxGap: 0.5)
        #expect(short.state == before)
    }

    @Test("a state from another process is checked: too many tracks, unusable filters, odd times and IDs are refused")
    func hostileStates() throws {
        var tracker = FaceTracker(configuration: FaceTracker.Configuration(maxTracks: 4))
        _ = tracker.update(seq: 0, time: 0, detections: [TrackDetection(box: FaceRect(x: 10, y: 10, width: 40, height: 40), score: 0.9)])
        let good = tracker.state
        #expect(good.tracks.count == 1 && good.tracks[0].id == 1 && good.nextID == 2)
        let configuration = FaceTracker.Configuration(maxTracks: 4)
        #expect(throws: Never.self) { try FaceTracker(configuration: configuration, state: good) }
        func refused(_ change: (inout FaceTracker.State) -> Void) -> Bool {
            var state = good
            change(&state)
            do {
                _ = try FaceTracker(configuration: configuration, state: state)
                return false
            } catch {
                return true
            }
        }
        #expect(refused { $0.tracks = Array(repeating: $0.tracks[0], count: 5) }, "over maxTracks")
        #expect(refused { $0.tracks.append($0.tracks[0]) }, "an ID held twice")
        #expect(refused { $0.nextID = 1 }, "an ID not below the next")
        #expect(refused { $0.nextID = 0 })
        #expect(refused { $0.tracks[0].filter = [] })
        #expect(refused { $0.tracks[0].filter[0] = .nan })
        #expect(refused { $0.tracks[0].filter[2] = -1 }, "a negative variance")
        #expect(refused { $0.tracks[0].filter[15] = 0 }, "a height under 1 px")
        #expect(refused { $0.tracks[0].time = .infinity })
        #expect(refused { $0.previousTime = -.infinity })
        #expect(!refused { $0.tracks[0].id = 0 }, "an unconfirmed track is fine")
    }
}
