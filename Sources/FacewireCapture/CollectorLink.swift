import FacewireProtocol
import FacewireRuntime
import FacewireTransport
import Logging
import ZeroMQ

/// A capture node's control connection to the collector (a ``CollectorSession``): hellos, skips, the stream's end and
/// requests for worker threads go out on it, never waiting (a message that cannot go is counted, `control_lost`);
/// assignments come back.
final class CollectorLink {
    private let session: CollectorSession
    private let counters: Counters
    private let logger: Logger
    private var shardCheck: ShardCheck

    /// Connects to the collectors of the shard that owns `stream` among those `collectors` lists (SPEC.md 19: shards
    /// separated by `;`, the endpoints of a failover group by `,`).
    init(context: ZMQContext, collectors: String, stream: String, security: CurveSecurity?, counters: Counters, logger: Logger) throws {
        let shards = try ShardMap(parsing: collectors)
        let shard = shards.shard(of: stream)
        session = try CollectorSession(
            context: context, collector: shards.endpoints(ofShard: shard), security: security, purpose: .captureControl)
        shardCheck = ShardCheck(listed: shard, of: shards.count)
        self.counters = counters
        self.logger = logger
        if shards.count > 1 {
            logger.info("the stream's shard", metadata: ["shard": "\(shard)/\(shards.count)", "collector": "\(shards.endpoints(ofShard: shard))"])
        }
    }

    /// Sends a control message without waiting.
    func send(_ body: Envelope.OneOf_Body) {
        if !session.send(body) { counters.add("control_lost") }
    }

    /// The sockets (one per collector of a failover group), for polling with the frame socket.
    var sockets: [ZMQSocket] { session.sockets }

    /// How many times the active collector changed (failover, SPEC.md 18): the node then says hello and asks for
    /// threads again at once.
    var activeChanges: UInt64 { session.activeChanges }

    /// The active collector's endpoint, with its epoch (logs).
    var activeEndpoint: String {
        let choice = session.choice.value
        return "\(choice.endpoints[choice.active]) (epoch \(choice.epoch))"
    }

    /// The assignments that arrived (without waiting), at most `limit`; anything else from the collector is counted
    /// (`control_malformed`) and dropped.
    func receiveAssignments(limit: Int = 1024) throws -> [Assignment] {
        var assignments: [Assignment] = []
        var read = 0
        while read < limit, let reply = try session.receiveNow() {
            read += 1
            switch reply {
            case .assignment(let assignment):
                assignments.append(assignment)
            case .welcome(let welcome):
                // The active collector of a failover group says so (its choice is the session's); a shard says which.
                if let mismatch = shardCheck.check(welcome) {
                    counters.add("collector_shard_mismatch")
                    if let message = mismatch.newly { logger.error("\(message): every node must list the same shards in the same order") }
                }
            default:
                counters.add("control_malformed")
            }
        }
        return assignments
    }

    func close() {
        session.close()
    }
}
