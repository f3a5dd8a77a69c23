import FacewireProtocol
import FacewireVocabulary

/// Dispatch protocol 2 (SPEC 3): which idle worker thread takes which capture node's next frame. Pure: every input
/// comes with its monotonic time; answers go into the collector's ``CollectorOutput`` (assignments as replies to the
/// capture node's control connection, counters, log lines).
///
/// Worker threads say ``Idle`` (with how many frames they have received so far); capture nodes say how many threads
/// they want (``DispatchRequest``). Each idle thread goes to the demanding node whose virtual start is least — start-time
/// fair queueing: every assignment advances the node's virtual time by 1/weight, so under overload each stream gets
/// its weight's share, whoever asks more often — ties to the node that has waited longest. A thread holds at most one
/// assignment; a frame waits only at its capture node, where it can still be dropped at the source.
///
/// Outliers are ejected: a thread that said Idle after it received its assigned frame but sent no result, or that
/// stayed silent past ``Settings/assignmentTimeoutNs``, gets a strike; ``Settings/strikesToEject`` strikes in a row
/// eject it for a backoff (1 s, doubling to 30 s). After the backoff its next Idle readmits it on probation: one frame;
/// a result readmits it fully, a strike ejects it again for twice as long.
public struct DispatchBroker {
    /// The broker's limits and timings.
    public struct Settings: Sendable {
        /// Threads known at once; an Idle from one more is refused (`dispatch_threads_refused_cap`).
        public var maxThreads = 16_384
        /// Capture node sessions known at once; a request from one more is refused (`dispatch_nodes_refused_cap`).
        public var maxNodes = 4096
        /// A thread not heard from this long is forgotten (idle threads say Idle every 1 s).
        public var threadLifetimeNs: UInt64 = 3_000_000_000
        /// A node's demand not renewed this long lapses (nodes that want a thread repeat their request every 1 s).
        public var nodeLifetimeNs: UInt64 = 3_000_000_000
        /// An assigned thread that says Idle without having received a frame this long after the assignment never got
        /// it (the node restarted, the assignment was lost): it is released, with no strike.
        public var undeliveredNs: UInt64 = 1_000_000_000
        /// An assignment this old is ended: a thread silent since (no result, no Idle) gets a strike and leaves the pool
        /// until it speaks; one that kept saying Idle was held by its node unused, and is pooled again.
        public var assignmentTimeoutNs: UInt64 = 10_000_000_000
        /// Strikes in a row that eject a thread.
        public var strikesToEject = 2
        /// The first ejection's backoff; each ejection of the same thread without a result between doubles it.
        public var firstBackoffNs: UInt64 = 1_000_000_000
        /// The longest backoff: a thread that recovers is readmitted at most this long after.
        public var maxBackoffNs: UInt64 = 30_000_000_000
        /// A thread a node reported unreachable is not assigned to that node again for this long.
        public var unreachableNs: UInt64 = 2_000_000_000
        /// A thread a node handed back unused is not assigned to that node again for this long (a node that hands back
        /// while it still wants threads must not make the pair ping-pong).
        public var returnedNs: UInt64 = 200_000_000
        /// The most threads a request may want at once.
        public var maxWanted: UInt32 = 64
        /// The most names read from a request's `returned` and `unreachable` lists each.
        public var maxListed = 16
        /// The longest thread name accepted (a capture node keeps at most this many bytes of a Ready's worker id).
        public var maxNameBytes = 256
        /// Unreachable threads remembered per node.
        public var maxUnreachablePerNode = 64

        public init() {}
    }

    /// Where a thread is.
    enum Phase: Equatable {
        /// In the pool, waiting for an assignment (its place in line: `ticket`).
        case idle
        /// Assigned to the node whose control connection is `node` (the node's assignment `number`);
        /// `unansweredAtAssignment` is the thread's ``Thread/unanswered`` then.
        case assigned(node: [UInt8], number: UInt64, atNs: UInt64, unansweredAtAssignment: UInt64)
        /// Answered its frame (or timed out): back in the pool at its next Idle.
        case busy
        /// Out of dispatch until `untilNs`; its first Idle after that readmits it on probation.
        case ejected(untilNs: UInt64)
    }

    struct Thread {
        var name: String
        var phase: Phase
        var lastHeardNs: UInt64
        /// Results it sent (any stream, kept or not), since it joined.
        var answered: UInt64 = 0
        /// Frames it said (at its last Idle) it had received, less ``answered`` then (0 if fewer): frames it took and did
        /// not answer. An Idle follows the results before it on the same connection, so an honest thread's count stays
        /// put whatever it is sent (a frame pushed unasked by another node is answered too), and grows by one for each
        /// frame it swallows — however its results and Idles interleave with assignments.
        var unanswered: UInt64 = 0
        var strikes = 0
        var backoffNs: UInt64
        /// Readmitted after an ejection, not yet answered a frame: one strike ejects it again.
        var probation = false
        /// Its entry in the idle line (stale entries carry an older ticket).
        var ticket: UInt64 = 0
    }

    struct Node {
        var stream: String
        var wanted: UInt32 = 0
        /// `Assignment.number` of the last assignment sent to it.
        var sent: UInt64 = 0
        /// The highest number it said it received (never above `sent`).
        var seen: UInt64 = 0
        var weight: Double = 1
        /// Its virtual start time (start-time fair queueing).
        var virtualStart: Double = 0
        /// When its demand last became positive (ties go to the longest waiting).
        var waitingSinceNs: UInt64
        var lastHeardNs: UInt64
        /// Threads it handed back (unreachable, or unused), not assigned to it again until when.
        var unreachable: [String: UInt64] = [:]
        /// Its assigned threads not yet answered, by name: the thread and the assignment's number.
        var assigned: [String: (thread: [UInt8], number: UInt64)] = [:]

        /// Threads it still wants: what it asked for, less the assignments on their way to it (sent after the last
        /// one it saw, and not released since: an assignment lost on the way is released when its thread says Idle
        /// without the frame, and stops counting then).
        var remaining: Int {
            let inTransit = assigned.values.reduce(0) { $0 + ($1.number > seen ? 1 : 0) }
            return max(0, Int(wanted) - inTransit)
        }
    }

    public let settings: Settings
    var threads: [[UInt8]: Thread] = [:]
    var nodes: [[UInt8]: Node] = [:]
    /// Idle threads in the order they became idle (entries whose ticket is stale are skipped).
    var line: [(identity: [UInt8], ticket: UInt64)] = []
    var lineHead = 0
    var nextTicket: UInt64 = 1
    /// The virtual time: the start of the last assignment made.
    var virtualTime: Double = 0
    var lastHousekeepingNs: UInt64?

    public init(settings: Settings = Settings()) {
        self.settings = settings
    }

    // MARK: - Observing

    /// Figures for the collector's gauges and statistics.
    public struct Figures: Sendable, Equatable {
        public var threads: Int
        public var idle: Int
        public var assigned: Int
        public var ejected: Int
        /// Capture node sessions waiting for a thread.
        public var waitingNodes: Int
    }

    public var figures: Figures {
        var figures = Figures(threads: threads.count, idle: 0, assigned: 0, ejected: 0, waitingNodes: 0)
        for thread in threads.values {
            switch thread.phase {
            case .idle: figures.idle += 1
            case .assigned: figures.assigned += 1
            case .ejected: figures.ejected += 1
            case .busy: break
            }
        }
        figures.waitingNodes = nodes.values.reduce(0) { $0 + ($1.remaining > 0 ? 1 : 0) }
        return figures
    }

    /// The names of the threads ejected now, sorted (statistics), at most `limit`.
    public func ejectedNames(limit: Int = 32) -> [String] {
        Array(threads.values.compactMap { if case .ejected = $0.phase { $0.name } else { nil } }.sorted().prefix(limit))
    }

    // MARK: - Inputs

    /// An Idle from the thread whose results connection is `identity`.
    public mutating func idle(_ idle: Idle, from identity: [UInt8], at now: UInt64, into out: inout CollectorOutput) {
        guard (1...settings.maxNameBytes).contains(idle.worker.utf8.count) else {
            out.count("dispatch_idle_rejected_worker")
            return
        }
        if threads[identity] == nil {
            guard threads.count < settings.maxThreads else {
                out.count("dispatch_threads_refused_cap")
                return
            }
            threads[identity] = Thread(name: idle.worker, phase: .busy, lastHeardNs: now, backoffNs: settings.firstBackoffNs)
            out.count("dispatch_threads_joined")
        }
        guard var thread = threads[identity] else { return }
        thread.lastHeardNs = now
        // A thread that renames itself while assigned keeps the name it was assigned by until it is released: its node
        // knows the assignment by that name.
        if case .assigned = thread.phase {} else { thread.name = idle.worker }
        let unanswered = idle.framesReceived > thread.answered ? idle.framesReceived - thread.answered : 0
        defer { thread.unanswered = unanswered }
        switch thread.phase {
        case .idle:
            break  // a repeated Idle keeps its place in line
        case .busy:
            enqueue(identity, &thread)
        case .assigned(let node, let number, let at, let before):
            if unanswered > before {
                // It received a frame since the assignment and said Idle without a result.
                release(thread.name, from: node)
                out.count("dispatch_idle_without_result")
                strike(identity, &thread, "said Idle after receiving a frame, without a result", at: now, into: &out)
            } else if now.saturatingDistance(from: at) >= settings.undeliveredNs, nodes[node].map({ $0.seen < number }) ?? true {
                // The node never said it got the assignment (lost, or the node is gone): the thread is free. One the
                // node saw is its to use or hand back (within its credit lifetime; then the assignment timeout).
                release(thread.name, from: node)
                out.count("dispatch_assignments_undelivered")
                enqueue(identity, &thread)
            }
        case .ejected(let until):
            if now >= until {
                thread.probation = true
                out.count("dispatch_threads_probed")
                enqueue(identity, &thread)
            }
        }
        threads[identity] = thread
        match(at: now, into: &out)
    }

    /// A result for `stream` from the thread whose results connection is `identity` (whether or not the collector
    /// keeps it). Only a result for the stream of the node it is assigned to answers the assignment; another is a
    /// frame some node sent it unasked (`dispatch_results_unassigned`).
    public mutating func result(for stream: String, from identity: [UInt8], at now: UInt64, into out: inout CollectorOutput) {
        guard var thread = threads[identity] else { return }
        thread.lastHeardNs = now
        thread.answered &+= 1
        if case .assigned(let node, _, _, _) = thread.phase, nodes[node].map({ $0.stream != stream }) == true {
            out.count("dispatch_results_unassigned")
        } else if case .assigned(let node, let number, _, _) = thread.phase {
            release(thread.name, from: node)
            if var demand = nodes[node], number > demand.seen {
                // The node used the assignment before its next request said so: the `wanted` it last sent counted
                // that frame. Without this a fast result makes the collector assign a thread the node must hand back.
                demand.seen = number
                demand.wanted = demand.wanted > 0 ? demand.wanted - 1 : 0
                nodes[node] = demand
            }
            thread.phase = .busy
            thread.strikes = 0
            if thread.probation {
                thread.probation = false
                thread.backoffNs = settings.firstBackoffNs
                out.count("dispatch_threads_readmitted")
                out.log(.notice, "worker thread readmitted: it answered its probe frame", ["worker": thread.name])
            }
            out.count("dispatch_assignments_answered")
        }
        threads[identity] = thread
    }

    /// The Assignment for `assignment.worker` could not be delivered to the node whose control connection is
    /// `identity`: its connection is gone (a killed capture node). The node is forgotten at once, and the thread goes
    /// back to the pool at the head of the line: it never got that assignment, so it is idle, where it would otherwise
    /// wait for its next Idle, a second later, to be released as undelivered. Threads whose assignments reached the
    /// node keep theirs (they may hold its frame): a result or their next Idle releases them, as before.
    public mutating func assignmentUndeliverable(
        _ assignment: Assignment, to identity: [UInt8], at now: UInt64, into out: inout CollectorOutput
    ) {
        guard let node = nodes[identity] else { return }
        nodes[identity] = nil
        out.count("dispatch_nodes_unreachable")
        guard let held = node.assigned[assignment.worker], held.number == assignment.number,
            var thread = threads[held.thread], case .assigned(identity, assignment.number, _, _) = thread.phase
        else { return }
        // Back where it was: first in line.
        enqueue(held.thread, &thread, first: true)
        threads[held.thread] = thread
        out.count("dispatch_assignments_undeliverable")
        match(at: now, into: &out)
    }

    /// A request from the capture node whose control connection is `identity`.
    public mutating func request(_ request: DispatchRequest, from identity: [UInt8], at now: UInt64, into out: inout CollectorOutput) {
        guard Wire.isValidStreamID(request.stream) else {
            out.count("dispatch_requests_rejected_stream")
            return
        }
        if nodes[identity] == nil {
            guard nodes.count < settings.maxNodes else {
                out.count("dispatch_nodes_refused_cap")
                return
            }
            nodes[identity] = Node(stream: request.stream, waitingSinceNs: now, lastHeardNs: now)
        }
        guard var node = nodes[identity] else { return }
        let wasWaiting = node.remaining > 0
        node.stream = request.stream
        node.lastHeardNs = now
        if request.assignmentsSeen > node.sent { out.count("dispatch_requests_seen_ahead") }
        node.seen = max(node.seen, min(request.assignmentsSeen, node.sent))
        if request.wanted > settings.maxWanted { out.count("dispatch_requests_wanted_clamped") }
        node.wanted = min(request.wanted, settings.maxWanted)
        node.weight = Self.weight(request.weight)
        if request.returned.count > settings.maxListed || request.unreachable.count > settings.maxListed {
            out.count("dispatch_requests_list_truncated")
        }
        let handedBack = request.returned.prefix(settings.maxListed).map { ($0, false) }
            + request.unreachable.prefix(settings.maxListed).map { ($0, true) }
        for (name, unreachable) in handedBack where name.utf8.count <= settings.maxNameBytes {
            if node.unreachable.count >= settings.maxUnreachablePerNode, node.unreachable[name] == nil,
               let oldest = node.unreachable.min(by: { $0.value < $1.value })?.key {
                node.unreachable[oldest] = nil
            }
            let until = now.addingClamped(unreachable ? settings.unreachableNs : settings.returnedNs)
            node.unreachable[name] = max(node.unreachable[name] ?? 0, until)
            guard let assignment = node.assigned.removeValue(forKey: name) else { continue }
            out.count(unreachable ? "dispatch_assignments_unreachable" : "dispatch_assignments_returned")
            backToPool(assignment.thread)
        }
        if !wasWaiting, node.remaining > 0 {
            node.waitingSinceNs = now
            node.virtualStart = max(node.virtualStart, virtualTime)
        }
        nodes[identity] = node
        match(at: now, into: &out)
    }

    /// Time passed: silent threads and nodes are forgotten, silent assigned threads get a strike, backoffs end.
    public mutating func tick(at now: UInt64, into out: inout CollectorOutput) {
        if let last = lastHousekeepingNs, now.saturatingDistance(from: last) < 100_000_000 { return }
        lastHousekeepingNs = now
        for (identity, var thread) in threads {
            let silent = now.saturatingDistance(from: thread.lastHeardNs)
            switch thread.phase {
            case .assigned(let node, _, let at, _):
                guard now.saturatingDistance(from: at) >= settings.assignmentTimeoutNs else { continue }
                release(thread.name, from: node)
                if now.saturatingDistance(from: max(at, thread.lastHeardNs)) >= settings.assignmentTimeoutNs {
                    // Silent since the assignment: hung, or gone.
                    thread.phase = .busy
                    out.count("dispatch_assignment_timeouts")
                    strike(identity, &thread, "no result within \(settings.assignmentTimeoutNs / 1_000_000) ms of an assignment", at: now, into: &out)
                } else {
                    // It kept saying Idle: the node held the assignment without using or handing it back.
                    out.count("dispatch_assignments_unused")
                    enqueue(identity, &thread)
                }
                threads[identity] = thread
            case .idle, .busy:
                if silent >= settings.threadLifetimeNs {
                    threads[identity] = nil
                    out.count("dispatch_threads_expired")
                }
            case .ejected(let until):
                // An ejected thread is remembered through its backoff, so that going quiet does not clear its record.
                if silent >= settings.threadLifetimeNs, now >= until {
                    threads[identity] = nil
                    out.count("dispatch_threads_expired")
                }
            }
        }
        for (identity, node) in nodes where now.saturatingDistance(from: node.lastHeardNs) >= settings.nodeLifetimeNs {
            nodes[identity] = nil
            out.count("dispatch_nodes_expired")
            // Its assigned threads say Idle without the frame and are released then (undelivered).
        }
        for (identity, var node) in nodes where !node.unreachable.isEmpty {
            node.unreachable = node.unreachable.filter { $0.value > now }
            nodes[identity] = node
        }
        compactLine()
        match(at: now, into: &out)
    }

    // MARK: - Decisions

    /// Pairs idle threads with demanding nodes until one side runs out.
    private mutating func match(at now: UInt64, into out: inout CollectorOutput) {
        var passedOver = Set<[UInt8]>()
        while true {
            guard let nodeIdentity = nextNode(excluding: passedOver) else { return }
            guard var node = nodes[nodeIdentity] else { return }
            guard let threadIdentity = firstIdle(excluding: node.unreachable, at: now) else {
                // No idle thread this node can reach: another node may still take one.
                if !anyIdle { return }
                passedOver.insert(nodeIdentity)
                continue
            }
            guard var thread = threads[threadIdentity] else { return }
            node.sent &+= 1
            node.assigned[thread.name] = (threadIdentity, node.sent)
            virtualTime = max(virtualTime, node.virtualStart)
            node.virtualStart = max(node.virtualStart, virtualTime) + 1 / node.weight
            nodes[nodeIdentity] = node
            thread.phase = .assigned(node: nodeIdentity, number: node.sent, atNs: now, unansweredAtAssignment: thread.unanswered)
            threads[threadIdentity] = thread
            var assignment = Assignment()
            assignment.worker = thread.name
            assignment.number = node.sent
            out.count("dispatch_assignments")
            out.act(.reply(CollectorAction.Reply(
                identities: [nodeIdentity], envelope: Envelope(.assignment(assignment)), lostCounter: "dispatch_assignments_lost")))
        }
    }

    /// The demanding node with the least virtual start (the longest waiting among equals).
    private func nextNode(excluding passedOver: Set<[UInt8]>) -> [UInt8]? {
        var best: (identity: [UInt8], start: Double, since: UInt64)?
        for (identity, node) in nodes where node.remaining > 0 && !passedOver.contains(identity) {
            if let current = best, (current.start, current.since) <= (node.virtualStart, node.waitingSinceNs) { continue }
            best = (identity, node.virtualStart, node.waitingSinceNs)
        }
        return best?.identity
    }

    /// The thread idle longest whose name is not in `unreachable` (live entries only); taken out of the line.
    private mutating func firstIdle(excluding unreachable: [String: UInt64], at now: UInt64) -> [UInt8]? {
        var index = lineHead
        while index < line.count {
            let entry = line[index]
            defer { index += 1 }
            guard let thread = threads[entry.identity], thread.phase == .idle, thread.ticket == entry.ticket else {
                if index == lineHead { lineHead += 1 }
                continue
            }
            if let until = unreachable[thread.name], until > now { continue }
            threads[entry.identity]?.ticket = 0
            if index == lineHead { lineHead += 1 }
            return entry.identity
        }
        return nil
    }

    /// Whether any thread is idle (whatever node could take it).
    private var anyIdle: Bool {
        line[lineHead...].contains { entry in threads[entry.identity].map { $0.phase == .idle && $0.ticket == entry.ticket } ?? false }
    }

    /// Puts the thread in the idle line: last, or `first` (one that was idle already and lost its turn through no
    /// fault of its own).
    private mutating func enqueue(_ identity: [UInt8], _ thread: inout Thread, first: Bool = false) {
        thread.phase = .idle
        thread.ticket = nextTicket
        nextTicket &+= 1
        if first {
            line.insert((identity, thread.ticket), at: lineHead)
        } else {
            line.append((identity, thread.ticket))
        }
    }

    /// An assigned thread handed back by its node goes back to the pool (it did nothing wrong).
    private mutating func backToPool(_ identity: [UInt8]) {
        guard var thread = threads[identity], case .assigned = thread.phase else { return }
        enqueue(identity, &thread)
        threads[identity] = thread
    }

    /// Forgets the node's record of an assignment (the thread's own phase is the caller's).
    private mutating func release(_ name: String, from node: [UInt8]) {
        nodes[node]?.assigned[name] = nil
    }

    /// One strike; the strikes that eject, or any strike on probation, eject the thread (else it goes back to the pool).
    private mutating func strike(_ identity: [UInt8], _ thread: inout Thread, _ why: String, at now: UInt64, into out: inout CollectorOutput) {
        thread.strikes += 1
        out.count("dispatch_strikes")
        guard thread.probation || thread.strikes >= settings.strikesToEject else {
            if case .busy = thread.phase { return }  // a timed-out thread waits for its next Idle
            enqueue(identity, &thread)
            return
        }
        let backoff = thread.backoffNs
        thread.phase = .ejected(untilNs: now.addingClamped(backoff))
        thread.backoffNs = min(settings.maxBackoffNs, backoff.addingClamped(backoff))
        thread.strikes = 0
        thread.probation = false
        out.count("dispatch_threads_ejected")
        out.log(.warning, "worker thread ejected from dispatch", [
            "worker": thread.name, "why": why, "for_ms": "\(backoff / 1_000_000)",
        ])
    }

    /// Drops the line's stale entries once they are half of it, or more than twice the threads known (each thread has
    /// at most one live entry; a thread idle at the head that no node takes would otherwise let stale ones pile up).
    private mutating func compactLine() {
        guard lineHead > 0 && lineHead * 2 >= line.count || line.count - lineHead > 2 * threads.count + 64 else { return }
        line = line[lineHead...].filter { entry in threads[entry.identity].map { $0.phase == .idle && $0.ticket == entry.ticket } ?? false }
        lineHead = 0
    }

    /// A request's weight: 0 (unset) or not finite is 1; otherwise clamped to 1/64...64.
    static func weight(_ value: Float) -> Double {
        guard value.isFinite, value > 0 else { return 1 }
        return min(64, max(1.0 / 64, Double(value)))
    }
}
