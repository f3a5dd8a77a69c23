/// Minimum-cost assignment of rows to columns (the Hungarian method, Kuhn–Munkres with potentials, O(n²·m)).
///
/// Used by ``FaceTracker`` to match detections to tracks as a whole, rather than greedily: a greedy match can
/// give a face's track to its neighbour when two faces are close, and then both IDs swap.
enum Assignment {
    /// The assignment of each row to a column (or `nil`) that minimises the total cost over the allowed pairs.
    ///
    /// - Parameters:
    ///   - cost: `rows × columns` costs, row-major; `nil` forbids the pair.
    ///   - rows: the number of rows.
    ///   - columns: the number of columns.
    /// - Returns: for each row, its column, or `nil` when it is left unassigned: the assignment of lowest total cost
    ///   when leaving a row or a column unassigned costs more than any allowed pair.
    static func solve(_ cost: [Float?], rows: Int, columns: Int) -> [Int?] {
        precondition(cost.count == rows * columns, "cost has \(cost.count) entries, not \(rows)×\(columns)")
        guard rows > 0, columns > 0 else { return [Int?](repeating: nil, count: rows) }
        // Square the problem: n = rows + columns, with a dummy column per row and a dummy row per column, so that
        // every row can stay unassigned at a cost above any allowed pair. Forbidden pairs cost more than that.
        let maxAllowed = cost.compactMap { $0 }.map { Double($0) }.max() ?? 0
        let minAllowed = cost.compactMap { $0 }.map { Double($0) }.min() ?? 0
        let span = max(1, maxAllowed - minAllowed + 1)
        // Leaving a row (or column) unmatched costs more than any change of cost along an augmenting path (at
        // most min(rows, columns) pairs long), so an assignment with more allowed pairs is always cheaper.
        let unassigned = maxAllowed + span * Double(min(rows, columns) + 1)
        let forbidden = unassigned * 2 + span * Double(rows + columns)  // never better than two unmatched
        let n = rows + columns
        func c(_ i: Int, _ j: Int) -> Double {
            if i < rows && j < columns { return cost[i * columns + j].map(Double.init) ?? forbidden }
            if i < rows || j < columns { return unassigned }
            return 0  // dummy row to dummy column
        }
        // e-maxx formulation, 1-based with a sentinel at index 0.
        var u = [Double](repeating: 0, count: n + 1)
        var v = [Double](repeating: 0, count: n + 1)
        var p = [Int](repeating: 0, count: n + 1)  // p[j]: the row matched to column j
        var way = [Int](repeating: 0, count: n + 1)
        for i in 1...n {
            p[0] = i
            var j0 = 0
            var minv = [Double](repeating: .infinity, count: n + 1)
            var used = [Bool](repeating: false, count: n + 1)
            repeat {
                used[j0] = true
                let i0 = p[j0]
                var delta = Double.infinity
                var j1 = 0
                for j in 1...n where !used[j] {
                    let current = c(i0 - 1, j - 1) - u[i0] - v[j]
                    if current < minv[j] {
                        minv[j] = current
                        way[j] = j0
                    }
                    if minv[j] < delta {
                        delta = minv[j]
                        j1 = j
                    }
                }
                for j in 0...n {
                    if used[j] {
                        u[p[j]] += delta
                        v[j] -= delta
                    } else {
                        minv[j] -= delta
                    }
                }
                j0 = j1
            } while p[j0] != 0
            repeat {
                let j1 = way[j0]
                p[j0] = p[j1]
                j0 = j1
            } while j0 != 0
        }
        var result = [Int?](repeating: nil, count: rows)
        for j in 1...columns where p[j] >= 1 && p[j] <= rows {
            let i = p[j] - 1
            if cost[i * columns + (j - 1)] != nil { result[i] = j - 1 }
        }
        return result
    }
}
