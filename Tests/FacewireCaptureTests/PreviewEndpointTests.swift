import Testing

@testable import FacewireCapture

@Suite("The preview endpoint: default bind, what is announced")
struct PreviewEndpointTests {
    @Test("the default bind is the frame socket's host with a port libzmq picks; ipc gets a sibling path; others none")
    func defaultBind() {
        let cases: [(String, String?)] = [
            ("tcp://*:5555", "tcp://*:*"),
            ("tcp://127.0.0.1:6000", "tcp://127.0.0.1:*"),
            ("tcp://[::1]:5555", "tcp://[::1]:*"),
            ("tcp://eth0:5555", "tcp://eth0:*"),
            ("ipc:///tmp/cam1", "ipc:///tmp/cam1.preview"),
            ("ipc://", nil),
            ("inproc://frames", nil),
            ("tcp://:5555", nil),
        ]
        for (bind, expected) in cases {
            #expect(CaptureConfiguration.defaultPreviewBind(frameBind: bind) == expected, "\(bind)")
        }
    }

    @Test("announced: --preview-advertise, else the --advertise host with the bound port, else the bound endpoint")
    func advertised() {
        var configuration = CaptureConfiguration(source: "x")
        #expect(configuration.advertisedPreviewEndpoint(bound: "tcp://0.0.0.0:40123") == "tcp://0.0.0.0:40123")
        configuration.advertise = "tcp://cam1.example.org:5555"
        #expect(configuration.advertisedPreviewEndpoint(bound: "tcp://0.0.0.0:40123") == "tcp://cam1.example.org:40123")
        #expect(configuration.advertisedPreviewEndpoint(bound: "ipc:///tmp/p") == "ipc:///tmp/p", "no port to combine")
        configuration.previewAdvertise = "tcp://nat.example.org:7000"
        #expect(configuration.advertisedPreviewEndpoint(bound: "tcp://0.0.0.0:40123") == "tcp://nat.example.org:7000")
    }
}
