#if canImport(Glibc)
import Glibc
#endif
import FacewireVocabulary

/// Time sources used on the wire and for deadlines.
public enum Clock {
    /// Wall-clock time, Unix microseconds (what `capture_time_us` and friends carry).
    public static func wallMicroseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1000
    }

    /// Monotonic time in nanoseconds, for measuring durations and local deadlines.
    public static func monotonicNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Both clocks' current readings: the ``Instant`` a shell hands its core with each input.
    public static func now() -> Instant {
        Instant(monotonicNs: monotonicNanoseconds(), wallUs: wallMicroseconds())
    }
}
