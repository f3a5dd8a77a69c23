import Foundation
import Testing
import FacewireRuntime

/// The default node id (`--id` of a worker: its threads' ids are `ID/tN`, which SPEC 3.1 wants unique in the cluster).
@Suite("Default node ids")
struct DefaultNodeIDTests {
    @Test("host:pid-rrrrrr: the host name's first label, this pid, six random hex digits; two ids of one process differ")
    func shapeAndUniqueness() throws {
        let id = defaultNodeID()
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "host"
        let prefix = "\(host):\(getpid())-"
        #expect(id.hasPrefix(prefix), "\(id)")
        let suffix = id.dropFirst(prefix.count)
        #expect(suffix.count == 6 && suffix.allSatisfy { $0.isHexDigit && !$0.isUppercase }, "\(id)")
        // Same host, same pid (as two containers on the host's network, each pid 1): still two ids. A collision of 24
        // random bits in one draw is one in 16.7 million.
        #expect(defaultNodeID() != id)
    }
}
