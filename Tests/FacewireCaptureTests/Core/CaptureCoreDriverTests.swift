import Testing

@testable import FacewireCapture

@Suite("CaptureCoreDriver (structure-aware fuzzing of the capture core), a short deterministic run")
struct CaptureCoreDriverTests {
    @Test("random and degenerate inputs keep every promise, and the runs exercise sends, skips and new epochs")
    func randomInputs() {
        var random = SplitMix64(state: 12)
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
        #expect(total.sent > 50, "frames sent over all runs: \(total.sent)")
        #expect(total.skipped > 20, "frames skipped over all runs: \(total.skipped)")
        #expect(total.epochs > 1, "a camera came back in some run")
    }
}
