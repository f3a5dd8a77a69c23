import FacewireVocabulary

/// A constant-velocity Kalman filter on a box's centre, width and height, in continuous time.
///
/// The state is (cx, cy, w, h) and their velocities per second. The motion, the process noise and the measurement
/// are the same for each of the four coordinates and never mix them (every matrix is block-diagonal), so the
/// 8-state filter is exactly four independent 2-state filters, which is how it is computed. Noise scales with the
/// box's height, as in DeepSORT: a face's pixels move in proportion to its size. Time is in seconds, so frames
/// that were dropped or skipped simply make a longer prediction step.
struct BoxKalmanFilter: Sendable {
    /// One coordinate: position and velocity, and their covariance.
    private struct Axis: Sendable {
        var position: Double
        var velocity: Double = 0
        var pp: Double
        var pv: Double = 0
        var vv: Double

        /// Constant-velocity prediction over `dt` seconds; process noise from white acceleration of spectral
        /// density `q`.
        mutating func predict(dt: Double, q: Double) {
            position += velocity * dt
            let dt2 = dt * dt
            let newPP = pp + 2 * dt * pv + dt2 * vv + q * dt2 * dt / 3
            let newPV = pv + dt * vv + q * dt2 / 2
            vv += q * dt
            pp = newPP
            pv = newPV
        }

        /// Incorporates a measurement of the position with variance `r`.
        mutating func update(measured: Double, r: Double) {
            let s = pp + r
            guard s > 0 else { return }
            let kp = pp / s
            let kv = pv / s
            let innovation = measured - position
            position += kp * innovation
            velocity += kv * innovation
            vv -= kv * pv
            pv -= kv * pp
            pp -= kp * pp
        }
    }

    /// Position noise of a measurement, as a fraction of the box height (standard deviation).
    static let measurementNoise = 0.05
    /// Acceleration noise, in box heights per second² (standard deviation of a one-second change of velocity).
    static let accelerationNoise = 2.0
    /// Uncertainty of the first velocity, in box heights per second. A walking person's face moves up to ~15 heights a
    /// second; at 1 the filter took many frames to learn a walker's speed. On the crowd clip
    /// (`facenet_pytorch_video.mp4`, YuNet, `--role local`) the distinct IDs fell from 18–19 (1) to 15–16 (10); 5
    /// and 20 gave 16–17.
    static let initialVelocityNoise = 10.0

    private var axes: [Axis]

    /// Starts a filter at `box`, at rest.
    init(_ box: FaceRect) {
        let h = Double(max(box.height, 1))
        let r = (Self.measurementNoise * h) * (Self.measurementNoise * h)
        let v = (Self.initialVelocityNoise * h) * (Self.initialVelocityNoise * h)
        axes = [
            Double(box.x + box.width / 2), Double(box.y + box.height / 2), Double(box.width), Double(box.height),
        ].map { Axis(position: $0, pp: r, vv: v) }
    }

    /// The filter's 20 numbers: per coordinate (cx, cy, w, h) its position, velocity and covariance (pp, pv, vv).
    var values: [Double] { axes.flatMap { [$0.position, $0.velocity, $0.pp, $0.pv, $0.vv] } }

    /// A filter continuing from ``values``; nil unless there are 20 finite numbers whose variances are not negative
    /// and whose width and height are at least 1 (what ``predict(dt:)`` keeps).
    init?(values: [Double]) {
        guard values.count == 20, values.allSatisfy(\.isFinite) else { return nil }
        let axes = stride(from: 0, to: 20, by: 5).map {
            Axis(position: values[$0], velocity: values[$0 + 1], pp: values[$0 + 2], pv: values[$0 + 3], vv: values[$0 + 4])
        }
        guard axes.allSatisfy({ $0.pp >= 0 && $0.vv >= 0 }), axes[2].position >= 1, axes[3].position >= 1 else { return nil }
        self.axes = axes
    }

    /// The current estimate of the box.
    var box: FaceRect {
        let (cx, cy, w, h) = (axes[0].position, axes[1].position, max(1, axes[2].position), max(1, axes[3].position))
        return FaceRect(x: Float(cx - w / 2), y: Float(cy - h / 2), width: Float(w), height: Float(h))
    }

    /// The estimated velocity of the box centre, in pixels per second.
    var velocity: (x: Double, y: Double) { (axes[0].velocity, axes[1].velocity) }

    /// Advances the estimate by `dt` seconds (negative or non-finite steps are ignored).
    mutating func predict(dt: Double) {
        guard dt > 0, dt.isFinite else { return }
        let h = max(1, axes[3].position)
        let q = (Self.accelerationNoise * h) * (Self.accelerationNoise * h)
        for index in axes.indices { axes[index].predict(dt: dt, q: q) }
        // A shrinking box must not invert.
        if axes[2].position < 1 { axes[2].position = 1; axes[2].velocity = max(0, axes[2].velocity) }
        if axes[3].position < 1 { axes[3].position = 1; axes[3].velocity = max(0, axes[3].velocity) }
    }

    /// Corrects the estimate with a measured `box`.
    mutating func update(_ box: FaceRect) {
        let h = Double(max(box.height, 1))
        let r = (Self.measurementNoise * h) * (Self.measurementNoise * h)
        let measured = [
            Double(box.x + box.width / 2), Double(box.y + box.height / 2), Double(box.width), Double(box.height),
        ]
        for index in axes.indices { axes[index].update(measured: measured[index], r: r) }
    }
}
