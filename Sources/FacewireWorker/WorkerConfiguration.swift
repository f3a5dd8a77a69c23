import FacewireDetection
import FacewireProtocol
import ZeroMQ
import FacewireTransport

/// How a worker finds frames and where it sends results.
public struct WorkerConfiguration: Sendable {
    /// The collector's control endpoint. Results go there, and capture endpoints are learned from it.
    public var collector: String
    /// Capture endpoints to connect to besides those the collector announces.
    public var captures: [String]
    /// Detection threads, each with its own sockets and detector.
    public var threads: Int
    /// Which detector each thread builds.
    public var detector: DetectorConfiguration
    /// How each thread measures face attributes (which models).
    public var attributes = AttributeConfiguration()
    /// This worker's id in results; threads append `/tN`.
    public var workerID: String
    /// The analysis options for frames whose header leaves a setting unset.
    public var analysis: AnalysisOptions
    /// CURVE: this worker's keys and the collector's public key; nil for plain TCP.
    public var security: CurveSecurity?
    /// CURVE: the public key of the capture nodes in ``captures`` (those the collector announces come with theirs).
    public var staticCaptureKey: String?
    /// The most capture nodes announced by the collector that are held at once (`--max-captures`); more are refused
    /// and counted (`captures_refused_cap`). Static ones (``captures``) do not count.
    public var maxCaptures: Int = CaptureDirectory.defaultMaxEntries
    /// Builds detection thread N's analyzer (at start and at each restart); nil: from ``detector``. A seam for tests
    /// (fault injection).
    public var analyzerFactory: AnalyzerFactory?

    /// Builds the analyzer of one detection thread (its index given).
    public typealias AnalyzerFactory = @Sendable (_ thread: Int) throws -> FrameAnalyzer

    public init(
        collector: String,
        captures: [String] = [],
        threads: Int,
        detector: DetectorConfiguration,
        workerID: String,
        analysis: AnalysisOptions = AnalysisOptions()
    ) {
        self.collector = collector
        self.captures = captures
        self.threads = threads
        self.detector = detector
        self.workerID = workerID
        self.analysis = analysis
    }
}
