import FacewireVocabulary
import FacewireProtocol
import Foundation
import Testing
import FacewireViewCore

/// What the page is sent about heart rates: whole beats per minute on faces and on `left` events, never a value no
/// heart has.
@Suite("Page model: heart rates")
struct PageModelTests {
    static func rate(_ bpm: Float) -> Facewire_V1_HeartRate {
        .with {
            $0.bpm = bpm
            $0.snr = 6
            $0.windowSeconds = 10
        }
    }

    @Test func aFaceCarriesItsHeartRateRoundedToWholeBeats() throws {
        var face = ViewCoreTests.face(3)
        #expect(PageModel.Face(face)?.bpm == nil, "no heart rate, no bpm")
        face.heartRate = Self.rate(71.6)
        #expect(PageModel.Face(face)?.bpm == 72)
        face.heartRate = Self.rate(40.4)
        #expect(PageModel.Face(face)?.bpm == 40)
        for absurd: Float in [.nan, .infinity, -.infinity, -72, 0, 0.4, 999.5, 1e30] {
            face.heartRate = Self.rate(absurd)
            #expect(PageModel.Face(face)?.bpm == nil, "\(absurd)")
        }
        // On the page's JSON: "bpm" only when there is one.
        face.heartRate = Self.rate(84)
        let rated = String(decoding: try JSONEncoder().encode(PageModel.Face(face)), as: UTF8.self)
        #expect(rated.contains(#""bpm":84"#))
        face.clearHeartRate()
        let unrated = String(decoding: try JSONEncoder().encode(PageModel.Face(face)), as: UTF8.self)
        #expect(!unrated.contains("bpm"))
    }

    @Test func aLeftEventCarriesTheTracksLastRate() {
        var core = ViewCore(score: ViewCoreTests.area)
        var face = ViewCoreTests.face(3)
        face.heartRate = Self.rate(66.5)
        _ = core.receive(ViewCoreTests.result(seq: 0, faces: [face]), at: .ms(0))
        let appeared = core.receive(ViewCoreTests.event(.appeared, 3, seq: 0), at: .ms(0)).events
        #expect(appeared.count == 1 && appeared.first?.bpm == nil)
        var left = ViewCoreTests.event(.left, 3, seq: 40, frames: 41)
        if case .event(var event)? = left.body {
            event.heartRate = Self.rate(72.4)
            left.body = .event(event)
        }
        let events = core.receive(left, at: .ms(10)).events
        #expect(events.count == 1 && events.first?.kind == "left" && events.first?.bpm == 72)
        #expect(core.state().events.last?.bpm == 72, "a page that opens later sees it too")
        let never = core.receive(ViewCoreTests.event(.left, 4, seq: 41), at: .ms(10)).events
        #expect(never.first?.bpm == nil, "a track that never reported a rate")
    }

    @Test func skinSamplesAreNotKeptForThePage() {
        var core = ViewCore(score: ViewCoreTests.area)
        var face = ViewCoreTests.face(3)
        face.heartRate = Self.rate(70)
        // A collector's bounds keep three; the view does not rely on them.
        face.skin = Array(repeating: Facewire_V1_SkinSample.with { $0.pixels = 9 }, count: 1000)
        _ = core.preview(ViewCoreTests.preview(seq: 0), at: .ms(0))
        let kept = core.receive(ViewCoreTests.result(seq: 0, faces: [face]), at: .ms(0)).joined.first?.result.faces.first
        #expect(kept?.skin.isEmpty == true, "the page does not draw them")
        #expect(kept?.heartRate.bpm == 70, "the heart rate it shows is kept")
    }
}
