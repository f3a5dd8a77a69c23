import Foundation

/// A TCP port on 127.0.0.1 that was free a moment ago (the kernel picked it for a socket that is now closed).
public func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw NodeError("socket() failed: errno \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw NodeError("cannot bind a loopback port: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
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
