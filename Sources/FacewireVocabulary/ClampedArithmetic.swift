// Arithmetic on values that may come from the network or from a clock that jumps: it saturates at the type's bounds
// instead of trapping. The one copy every module uses (cores, reorder buffer, effects).
extension UInt64 {
    /// `self + other`, or `UInt64.max` instead of overflowing.
    public func addingClamped(_ other: UInt64) -> UInt64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }

    /// `self - earlier`, or 0 when `earlier` is later.
    public func saturatingDistance(from earlier: UInt64) -> UInt64 { self >= earlier ? self - earlier : 0 }
}

extension Int64 {
    /// `self + other`, clamped to the range instead of overflowing.
    public func addingClamped(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    /// `self * other`, clamped to the range instead of overflowing.
    public func multipliedClamped(by other: Int64) -> Int64 {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? ((self < 0) == (other < 0) ? .max : .min) : product
    }
}
