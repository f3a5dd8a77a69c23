import FacewireRuntime
import FacewireCaptureCore

extension CaptureConfiguration {
    /// The decisions' settings (``CaptureCore``) for this configuration, reading `source` and announcing
    /// `frameEndpoint` and `previewEndpoint` ("" without a preview socket). A live source (camera, pipe) paces itself
    /// whatever `--fps` says, unless `--fps max`.
    func coreSettings(for source: any FrameSource, frameEndpoint: String, previewEndpoint: String = "") -> CaptureCore<[UInt8]>.Settings {
        let pacing: CaptureCore<[UInt8]>.Pacing = switch pacing {
        case .asFastAsPossible: .unpaced
        case _ where source is LiveFrameSource: .live
        case .realTime: .timed(fps: source.nominalFPS ?? 30, followsMediaTime: true)
        case .fixed(let rate): .timed(fps: rate, followsMediaTime: false)
        }
        var settings = CaptureCore<[UInt8]>.Settings(
            stream: stream, nodeID: defaultNodeID(), frameEndpoint: frameEndpoint, epoch: epoch, pacing: pacing)
        settings.curvePublicKey = security?.keyPair.publicKey ?? ""
        settings.previewEndpoint = previewEndpoint
        settings.maxFPS = maxFPS
        if !(source is LiveFrameSource) {
            settings.mediaFPS = if case .fixed(let rate) = self.pacing { rate } else { source.nominalFPS ?? 30 }
        }
        settings.weight = weight
        settings.maxFrames = maxFrames
        settings.maxAgeMilliseconds = maxAgeMilliseconds
        settings.detection = self.settings
        settings.maxWorkers = maxWorkers
        settings.statisticsIntervalNs = CaptureCore<[UInt8]>.nanoseconds(statisticsIntervalSeconds)
        if case .timed(let fps, _) = pacing {
            // A random phase within one frame interval, at most 1 s (a video's nominal rate may be anything):
            // CaptureCore.Settings.timelinePhaseNs.
            let interval = min(CaptureCore<[UInt8]>.nanoseconds(1 / fps), 1_000_000_000)
            settings.timelinePhaseNs = UInt64.random(in: 0..<max(1, interval))
        }
        return settings
    }
}
