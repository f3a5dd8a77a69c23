/// `--max-fps` (Affdex's `maxProcessRate`): decides, by capture time, which frames of a faster source are kept so
/// that at most `maxFPS` frames a second go out, evenly spaced. Pure.
///
/// Each kept frame books the next slot one period later; a frame is kept when it reaches its slot (with a tenth of a
/// period of slack for timestamp jitter). Slots advance by exactly one period per kept frame, so the long-run rate
/// never exceeds `maxFPS`; after a gap longer than a period, or a time earlier than the last kept frame's by more than a
/// period (the clock went back), the schedule restarts at that frame.
public struct RateLimit: Sendable {
    public let maxFPS: Double
    private let period: Double
    private var nextSlot: Double?

    public init(maxFPS: Double) {
        precondition(maxFPS > 0, "maxFPS must be positive")
        self.maxFPS = maxFPS
        period = 1e6 / maxFPS
    }

    /// Starts the schedule afresh at a frame kept at `timeMicroseconds` (the next slot is one period later).
    public mutating func restart(atMicroseconds timeMicroseconds: Int64) {
        nextSlot = Double(timeMicroseconds) + period
    }

    /// Whether the frame captured at `timeMicroseconds` is kept.
    public mutating func keep(timeMicroseconds: Int64) -> Bool {
        let t = Double(timeMicroseconds)
        guard let slot = nextSlot else {
            nextSlot = t + period
            return true
        }
        // A frame stamped more than a period before the last kept one: the clock went back (a wall clock set back, a
        // source with odd timestamps). The schedule restarts, so one odd time cannot stop the stream for good.
        if t <= slot - 2 * period {
            nextSlot = t + period
            return true
        }
        guard t >= slot - period / 10 else { return false }
        nextSlot = t - slot > period ? t + period : slot + period
        return true
    }
}
