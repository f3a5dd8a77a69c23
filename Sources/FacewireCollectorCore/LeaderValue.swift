/// What an active collector writes into its group's leader key, and what a standby reads there (SPEC.md 18): how
/// to reach the active. One line: `facewire/1 control=<endpoint> publish=<endpoint> replication=<endpoint>`.
///
/// The key is written by any process with access to the coordination service: a standby checks the value before it
/// connects anywhere (``init(parsing:)``), and a value it cannot read leaves it without an active to follow.
public struct LeaderValue: Sendable, Equatable {
    /// The active's control endpoint (ROUTER): where clients send hellos and results.
    public var control: String
    /// Its results stream (PUB).
    public var publish: String
    /// Its replication endpoint (ROUTER), where standbys connect.
    public var replication: String

    /// The most bytes a value may have (three endpoints of at most ``maxEndpointBytes`` and the names).
    public static let maxBytes = 1024
    /// The longest endpoint accepted.
    public static let maxEndpointBytes = 256
    static let prefix = "facewire/1"

    public init(control: String, publish: String, replication: String) {
        self.control = control
        self.publish = publish
        self.replication = replication
    }

    /// Reads a value; nil when it is longer than ``maxBytes``, of another version, lacks an endpoint, or has one that is
    /// not a `tcp://` or `ipc://` address of at most ``maxEndpointBytes`` bytes.
    public init?(parsing text: String) {
        guard text.utf8.count <= Self.maxBytes else { return nil }
        let words = text.split(separator: " ")
        guard words.first == Substring(Self.prefix) else { return nil }
        var fields: [Substring: String] = [:]
        for word in words.dropFirst() {
            guard let equals = word.firstIndex(of: "=") else { return nil }
            let name = word[..<equals]
            let endpoint = String(word[word.index(after: equals)...])
            guard fields[name] == nil, Self.isEndpoint(endpoint) else { return nil }
            fields[name] = endpoint
        }
        guard let control = fields["control"], let publish = fields["publish"], let replication = fields["replication"] else {
            return nil
        }
        self.init(control: control, publish: publish, replication: replication)
    }

    /// The value as written into the key.
    public var text: String { "\(Self.prefix) control=\(control) publish=\(publish) replication=\(replication)" }

    static func isEndpoint(_ endpoint: String) -> Bool {
        endpoint.utf8.count <= maxEndpointBytes && (endpoint.hasPrefix("tcp://") || endpoint.hasPrefix("ipc://"))
            && endpoint.utf8.count > 6 && !endpoint.contains("*")
    }
}
