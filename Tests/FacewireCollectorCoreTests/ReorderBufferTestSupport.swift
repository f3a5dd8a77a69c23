import FacewireFuzzing
@testable import FacewireCollectorCore

typealias Buffer = ReorderBuffer<String>
typealias Emission = Buffer.Emission

/// Milliseconds on the injected monotonic clock, in nanoseconds.
func ms(_ value: UInt64) -> UInt64 { value * 1_000_000 }

/// The payload used for a sequence in tests.
func payload(_ seq: UInt64) -> String { "p\(seq)" }

/// A compact, readable rendering of emissions: "F3" (frame 3), "D4:timeout", "E".
func render(_ emissions: [Emission]) -> [String] {
    emissions.flatMap { emission -> [String] in
        switch emission {
        case .frame(let seq, let payload):
            [payload == "p\(seq)" ? "F\(seq)" : "F\(seq)=\(payload)"]
        case .dropped(let seqs, let reason): seqs.map { "D\($0):\(reason.rawValue)" }
        case .end: ["E"]
        }
    }
}

/// Every sequence the emissions stand for, runs expanded (for tests with short runs only).
func expandedSeqs<Payload>(_ emissions: [ReorderBuffer<Payload>.Emission]) -> [UInt64] {
    emissions.flatMap { emission -> [UInt64] in
        switch emission {
        case .frame(let seq, _): [seq]
        case .dropped(let seqs, _): Array(seqs)
        case .end: []
        }
    }
}

/// A buffer with `maxDelay` 100 ms.
func makeBuffer(maxPending: Int = 64) -> Buffer {
    Buffer(maxDelayNanoseconds: ms(100), maxPending: maxPending)
}

extension ReorderBuffer where Payload == String {
    /// Receives `seq` with its standard test payload.
    mutating func receive(_ seq: UInt64, at now: UInt64) -> [String] {
        render(receive(seq: seq, payload: payload(seq), at: now))
    }
}


/// A worker's result latency: 70% under 30 ms, 20% up to 150 ms, 10% far beyond a 100 ms `maxDelay` (up to 400 ms).
func workerLatency(using rng: inout SplitMix64) -> UInt64 {
    let bucket = Int.random(in: 0..<100, using: &rng)
    if bucket < 70 { return UInt64.random(in: 0..<ms(30), using: &rng) }
    if bucket < 90 { return UInt64.random(in: ms(30)..<ms(150), using: &rng) }
    return UInt64.random(in: ms(150)..<ms(400), using: &rng)
}
