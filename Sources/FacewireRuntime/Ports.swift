import Foundation

/// The lowest port the kernel hands out for outgoing connections (`/proc/sys/net/ipv4/ip_local_port_range`; 32768
/// when it cannot be read).
func ephemeralPortLow() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8),
        let first = text.split(whereSeparator: \.isWhitespace).first, let low = Int(first)
    else { return 32768 }
    return low
}

/// Binds a TCP socket to `port` on 127.0.0.1 (0: the kernel picks) and returns the port it got, or nil.
private func bindLoopback(_ port: Int) throws -> Int? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw NodeError("socket() failed: errno \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(clamping: port).bigEndian
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    return bound ? Int(UInt16(bigEndian: address.sin_port)) : nil
}

/// A TCP port on 127.0.0.1 that was free a moment ago, chosen below the kernel's ephemeral range: a port the kernel
/// picked itself could be handed to some process's outgoing connection (every ZeroMQ connect takes one) before the
/// caller binds it.
public func freeLoopbackPort() throws -> Int {
    let low = 10_000, high = ephemeralPortLow()
    if high > low + 100 {
        for _ in 0..<200 {
            if let port = try bindLoopback(Int.random(in: low..<high)) { return port }
        }
    }
    guard let port = try bindLoopback(0) else { throw NodeError("cannot bind a loopback port: errno \(errno)") }
    return port
}

/// `count` distinct free loopback ports.
public func freeLoopbackPorts(_ count: Int) throws -> [Int] {
    var ports: [Int] = []
    while ports.count < count {
        let port = try freeLoopbackPort()
        if !ports.contains(port) { ports.append(port) }
    }
    return ports
}
