import FacewireRuntime
import Foundation
import Testing

/// A network camera's MJPEG over HTTP (multipart/x-mixed-replace), played by a standard-library Python server on
/// loopback: the capture node reads it through FFmpeg as JPEG packets and sends them undecoded.
extension IntegrationTests {
    @Suite("Capture: motion JPEG over HTTP")
    struct MotionJPEGOverHTTP {
        static let python = "/usr/bin/python3"
        static var pythonPresent: Bool { FileManager.default.isExecutableFile(atPath: python) }

        /// Serves the JPEG files of `folder` in a loop, 30 per second, as one multipart stream per GET.
        static let server = """
            import glob, http.server, sys, time
            frames = [open(f, "rb").read() for f in sorted(glob.glob(sys.argv[2] + "/*.jpg"))]
            class Stream(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    self.send_response(200)
                    self.send_header("Content-Type", "multipart/x-mixed-replace; boundary=frame")
                    self.end_headers()
                    index = 0
                    try:
                        while True:
                            jpeg = frames[index % len(frames)]
                            index += 1
                            self.wfile.write(b"--frame\\r\\nContent-Type: image/jpeg\\r\\nContent-Length: %d\\r\\n\\r\\n" % len(jpeg) + jpeg + b"\\r\\n")
                            time.sleep(1 / 30)
                    except OSError:
                        pass
                def log_message(self, *arguments):
                    pass
            server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Stream)
            print("serving", flush=True)
            server.serve_forever()
            """

        @Test("an HTTP MJPEG stream is passed through: every frame accounted in order, the processed ones at the camera's size",
              .enabled(if: pythonPresent, "no /usr/bin/python3 to play the network camera"), .timeLimit(.minutes(15)))
        func httpMotionJPEGPassesThrough() async throws {
            let cluster = try TestCluster("mjpeg-http")
            defer { cluster.cleanup() }
            let folder = cluster.directory.appendingPathComponent("frames")
            try SyntheticFrames.writeFolder(folder, count: 12, width: 320, height: 240)
            let port = try freeLoopbackPorts(1)[0]
            let camera = try cluster.launch("camera", executable: Self.python, ["-c", Self.server, String(port), folder.path])
            _ = try await camera.waitForLine(containing: "serving", in: .stdout)

            // A worker that reads only the JPEG header (no detection): the test is about what reaches it, not speed.
            let (control, captureBind, tail, _) = try await cluster.startStreamCluster(
                stream: "door", tailArguments: ["--events"], workerArguments: ["--detector", "noop"])
            let capture = try cluster.facewire("capture", [
                "--role", "capture", "--source", "http://127.0.0.1:\(port)/", "--stream", "door", "--bind", captureBind,
                "--collector", control, "--frames", "40", "--log-level", "info",
            ])
            #expect(try await capture.waitForExit() == 0, "\(cluster.diagnostics())")
            #expect(capture.text(.stderr).contains("motion JPEG passed through"), "\(capture.tail())")
            _ = try await tail.waitFor(.stdout, "the stream's end") { $0.contains { $0.contains("\"streamEnded\"") } }

            // Frame lines: seq from 0, each line starting where the last one ended (a dropped run counts its
            // runLength), up to the 40th; the processed ones at the camera's size.
            var next = 0
            var processed = 0
            for line in tail.lines(.stdout) {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                guard let seq = object["seq"] as? Int, object["status"] != nil else { continue }
                #expect(seq == next, "seq \(seq) where \(next) was due")
                next = seq + max(1, object["runLength"] as? Int ?? 1)
                if object["status"] as? String == "processed" {
                    processed += 1
                    #expect(object["width"] as? Int == 320 && object["height"] as? Int == 240, "\(line)")
                }
            }
            #expect(next == 40, "\(cluster.diagnostics())")
            // A live source drops at the source what no worker is free for (how many depends on the machine's load):
            // those are accounted above; some must have come through.
            #expect(processed > 0, "\(cluster.diagnostics())")
        }
    }
}
