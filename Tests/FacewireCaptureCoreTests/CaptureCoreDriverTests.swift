import Foundation
import Testing

@testable import FacewireFuzzing

@Suite("CaptureCoreDriver (structure-aware fuzzing of the capture core), a short deterministic run")
struct CaptureCoreDriverTests {
    @Test("random and degenerate inputs keep every promise, and the runs exercise sends, skips and new epochs")
    func randomInputs() {
        var random = SplitMix64(seed: 12)
        var total = CaptureCoreDriver.Summary()
        var inputs: [[UInt8]] = [[], [UInt8](repeating: 0, count: 3000), [UInt8](repeating: 0xFF, count: 3000)]
        for _ in 0..<80 {
            inputs.append((0..<Int(random.next() % 4000)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        }
        for bytes in inputs {
            let summary = CaptureCoreDriver.run(bytes)  // a broken promise traps
            total.sent += summary.sent
            total.skipped += summary.skipped
            total.epochs = max(total.epochs, summary.epochs)
        }
        #expect(total.sent > 30, "frames sent over all runs (each needs an assignment for an attached thread): \(total.sent)")
        #expect(total.skipped > 20, "frames skipped over all runs: \(total.skipped)")
        #expect(total.epochs > 1, "a camera came back in some run")
    }
}

extension CaptureCoreDriverTests {
    /// A longer random run, off by default: `FACEWIRE_CAPTURE_FUZZ_SECONDS=600 swift test --filter CaptureCoreDriver`
    /// feeds random byte strings for that long and prints how many (a broken promise traps).
    @Test("a long random run (FACEWIRE_CAPTURE_FUZZ_SECONDS)",
          .enabled(if: ProcessInfo.processInfo.environment["FACEWIRE_CAPTURE_FUZZ_SECONDS"] != nil))
    func longRun() {
        let seconds = Double(ProcessInfo.processInfo.environment["FACEWIRE_CAPTURE_FUZZ_SECONDS"] ?? "") ?? 0
        let seed = UInt64(Date().timeIntervalSince1970)
        var random = SplitMix64(seed: seed)
        let end = Date().addingTimeInterval(seconds)
        var runs = 0
        var total = CaptureCoreDriver.Summary()
        while Date() < end {
            let bytes = (0..<Int(random.next() % 8000)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let summary = CaptureCoreDriver.run(bytes)
            total.sent += summary.sent
            total.skipped += summary.skipped
            runs += 1
        }
        print("[capture-core-fuzz] seed \(seed): \(runs) inputs in \(seconds) s, \(total.sent) frames sent, \(total.skipped) skipped, no finding")
        #expect(runs > 0)
    }
}
