import FacewireProtocol
import Testing

@Suite("Wire constants, stream ids and topics")
struct WireTests {
    @Test func constantsMatchTheSpec() {
        #expect(Wire.version == 1)
        #expect(Wire.defaultCapturePort == 5555)
        #expect(Wire.defaultCollectorPort == 5556)
        #expect(Wire.defaultPublishPort == 5557)
        #expect(Wire.maxFrameMessageBytes == 16 * 1024 * 1024)
        #expect(Wire.maxControlMessageBytes == 1024 * 1024)
        #expect(Wire.maxHeaderBytes == 4096)
        #expect(Wire.maxStreamIDLength == 64)
        #expect(Wire.helloIntervalMilliseconds == 1000)
    }

    @Test(arguments: [
        "a", "Z", "0", "9", ".", "_", "-", "..", "cam-1", "door.cam_2", "ABCXYZabcxyz0189._-",
        String(repeating: "x", count: 64),
    ])
    func validStreamIDs(_ id: String) {
        #expect(Wire.isValidStreamID(id))
    }

    @Test(arguments: [
        "", String(repeating: "x", count: 65), "cam 1", "cam/1", "cam:1", "cam@1", "cam[1", "cam`1", "cam{1", "cam+1",
        "cam*", "cam\0", "cam\n", "\u{00}", "caméra", "日本", "cam\u{2028}",
        // 32 two-byte characters: 64 bytes, but not ASCII.
        String(repeating: "é", count: 32),
    ])
    func invalidStreamIDs(_ id: String) {
        #expect(!Wire.isValidStreamID(id))
    }

    @Test func everyASCIIByteAlone() {
        for byte in UInt8(0)...UInt8(127) {
            let id = String(decoding: [byte], as: UTF8.self)
            let allowed =
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            #expect(Wire.isValidStreamID(id) == allowed, "byte \(byte)")
        }
    }

    @Test func lengthIsCountedInBytes() {
        #expect(Wire.isValidStreamID(String(repeating: "a", count: Wire.maxStreamIDLength)))
        #expect(!Wire.isValidStreamID(String(repeating: "a", count: Wire.maxStreamIDLength + 1)))
    }

    @Test func topicIsTheIDAndOneZeroByte() {
        #expect(Wire.topic(forStream: "cam1") == [0x63, 0x61, 0x6D, 0x31, 0x00])
        #expect(Wire.topic(forStream: "") == [0x00], "the heartbeat topic")
        let long = String(repeating: "x", count: 64)
        #expect(Wire.topic(forStream: long).count == 65)
    }

    @Test func topicOfOneStreamIsNotAPrefixOfAnother() {
        // Subscriptions are prefix matches: "cam1" alone would also match "cam10".
        let cam1 = Wire.topic(forStream: "cam1")
        let cam10 = Wire.topic(forStream: "cam10")
        #expect(Array("cam10".utf8).starts(with: Array("cam1".utf8)))
        #expect(!cam10.starts(with: cam1))
        #expect(cam1.starts(with: cam1))
        // And the heartbeat subscription (a lone zero byte) matches no stream topic: ids are never empty.
        #expect(!cam1.starts(with: [0]))
    }
}

@Suite("Endpoint")
struct EndpointTests {
    @Test(arguments: [
        ("tcp://*:5555", "tcp://10.0.0.7:5555"),
        ("tcp://0.0.0.0:5555", "tcp://10.0.0.7:5555"),
        ("tcp://[::]:5555", "tcp://10.0.0.7:5555"),
        ("tcp://:::5555", "tcp://10.0.0.7:5555"),
        ("tcp://*:0", "tcp://10.0.0.7:0"),
    ])
    func wildcardHostIsReplaced(_ endpoint: String, _ expected: String) {
        #expect(Endpoint.resolvingWildcard(endpoint, host: "10.0.0.7") == expected)
    }

    @Test(arguments: [
        "tcp://127.0.0.1:5555", "tcp://192.168.1.4:5555", "tcp://cam-host:5555", "tcp://[::1]:5555",
        "ipc:///tmp/facewire.sock", "inproc://frames", "tcp://nohost", "*:5555", "",
    ])
    func otherEndpointsAreUnchanged(_ endpoint: String) {
        #expect(Endpoint.resolvingWildcard(endpoint, host: "10.0.0.7") == endpoint)
    }

    @Test func hostOf() {
        #expect(Endpoint.host(of: "tcp://10.0.0.7:5556") == "10.0.0.7")
        #expect(Endpoint.host(of: "tcp://collector.example:5556") == "collector.example")
        #expect(Endpoint.host(of: "tcp://[::1]:5556") == "[::1]")
        #expect(Endpoint.host(of: "tcp://*:5556") == "*")
        #expect(Endpoint.host(of: "tcp://nohost") == nil)
        #expect(Endpoint.host(of: "ipc:///tmp/x") == nil)
        #expect(Endpoint.host(of: "") == nil)
    }

    @Test func portOf() {
        #expect(Endpoint.port(of: "tcp://10.0.0.7:5556") == 5556)
        #expect(Endpoint.port(of: "tcp://[::1]:5557") == 5557)
        #expect(Endpoint.port(of: "tcp://host:0") == 0)
        #expect(Endpoint.port(of: "tcp://host:*") == nil)
        #expect(Endpoint.port(of: "tcp://host:http") == nil)
        #expect(Endpoint.port(of: "tcp://host") == nil)
        #expect(Endpoint.port(of: "ipc:///tmp/x") == nil)
    }
}
