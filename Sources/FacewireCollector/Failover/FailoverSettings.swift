import FacewireCollectorCore
import Foundation

/// A collector's part in a failover group (`--election`, SPEC.md 18).
public struct FailoverSettings: Sendable {
    /// `--replication-bind`: where standbys connect (ROUTER).
    public var replicationBind: String
    /// `--advertise-host`: the host other nodes reach this collector at; it replaces the wildcard of each bound endpoint
    /// in the leader key.
    public var advertiseHost: String
    /// This collector's name in logs and in its standby's acknowledgements.
    public var nodeID: String
    /// How long an attached standby may leave a step unacknowledged before the active publishes without it.
    public var ackTimeoutMilliseconds: Int = 500

    public init(replicationBind: String, advertiseHost: String, nodeID: String) {
        self.replicationBind = replicationBind
        self.advertiseHost = advertiseHost
        self.nodeID = nodeID
    }

    /// What this collector writes into the leader key when it wins, given its bound endpoints.
    public func leaderValue(control: String, publish: String, replication: String) -> LeaderValue {
        LeaderValue(
            control: Self.advertised(control, host: advertiseHost), publish: Self.advertised(publish, host: advertiseHost),
            replication: Self.advertised(replication, host: advertiseHost))
    }

    /// `endpoint` with a wildcard or unspecified host (`*`, `0.0.0.0`) replaced by `host`.
    public static func advertised(_ endpoint: String, host: String) -> String {
        for wildcard in ["tcp://*:", "tcp://0.0.0.0:"] where endpoint.hasPrefix(wildcard) {
            return "tcp://\(host):" + endpoint.dropFirst(wildcard.count)
        }
        return endpoint
    }
}

/// The role the election last gave, handed from the election's task to the collector's loop.
public final class RoleBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: LeaderElection.Role?
    private var changes: UInt64 = 0
    private var withoutState = false

    public init() {}

    /// The latest role (nil until the election has said), and how many times it was set.
    public var value: (role: LeaderElection.Role?, changes: UInt64) { lock.withLock { (stored, changes) } }

    public func set(_ role: LeaderElection.Role) {
        lock.withLock {
            stored = role
            changes &+= 1
        }
    }

    /// Whether the collector follows an active whose state it has not received yet (set by the collector's loop, read
    /// by the election when the active goes).
    public var lacksState: Bool {
        get { lock.withLock { withoutState } }
        set { lock.withLock { withoutState = newValue } }
    }

    /// `/healthz`'s role: "active" or "standby".
    public var healthRole: String {
        if case .active? = value.role { return "active" }
        return "standby"
    }
}
