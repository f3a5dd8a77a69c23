import FacewireImage
import FacewireRuntime
import Foundation
import Testing

/// The live view with real processes and a real browser: `local --view` on a clip whose face jumps sideways from
/// frame to frame, headless Chromium driven by Selenium (scripts/view-check.py) reading the page's own data, and the
/// snapshot and crop endpoints and `facewire snapshot` checked by decoding what they return and detecting the face in
/// it again.
extension IntegrationTests {
    @Suite("live view")
    struct LiveView {
        static let python = "/usr/bin/python3"

        /// Whether Debian's chromium, chromium-driver and python3-selenium are installed (scripts/setup.sh
        /// --with-browser, which the test command passes).
        static var browserReady: Bool {
            FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver")
                && (try? runCommand(python, ["-c", "import selenium"]).status) == 0
        }

        /// A frame of the demo footage (scripts/setup.sh renders it): the astronaut photograph.
        static var demoFrame: URL? {
            let environment = ProcessInfo.processInfo.environment
            let cache = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
                ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache").path
            let url = URL(fileURLWithPath: cache + "/facewire/demo/astronaut/frame-0000.jpg")
            return FileManager.default.fileExists(atPath: url.path) ? url : nil
        }

        /// Where frame `seq` of the jumping clip puts the picture: 0...319 px from the left, at least 137 px from the
        /// previous frame's place, so a box drawn on a neighbour's frame would be far off.
        static func offset(_ seq: Int, count: Int) -> Int { (seq % count) * 137 % 320 }

        /// `count` frames of 960 px wide, the demo picture pasted at ``offset(_:count:)`` on grey.
        static func jumpingClip(in directory: URL, count: Int) throws -> URL {
            let folder = directory.appendingPathComponent("jumping")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let picture = try JPEGDecoder().decode(Array(Data(contentsOf: try #require(demoFrame))))
            let encoder = try JPEGEncoder()
            let width = picture.width + 320
            for seq in 0..<count {
                var canvas = PixelImage(width: width, height: picture.height, format: .bgr, stride: width * 3,
                                        bytes: [UInt8](repeating: 128, count: width * 3 * picture.height))
                let x = offset(seq, count: count)
                for row in 0..<picture.height {
                    canvas.bytes.replaceSubrange(
                        (row * canvas.stride + x * 3)..<(row * canvas.stride + (x + picture.width) * 3),
                        with: picture.bytes[(row * picture.stride)..<(row * picture.stride + picture.width * 3)])
                }
                let name = String(format: "frame-%04d.jpg", seq)
                try Data(try encoder.encode(canvas, quality: 85)).write(to: folder.appendingPathComponent(name))
            }
            return folder
        }

        /// The faces of each processed frame line of `local`'s stdout, by seq: (x, y, width, height) of each.
        static func boxesBySeq(_ lines: [String]) -> [Int: [[Double]]] {
            var boxes: [Int: [[Double]]] = [:]
            for line in lines {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    let seq = object["seq"] as? Int, let faces = object["faces"] as? [[String: Any]]
                else { continue }
                boxes[seq] = faces.compactMap { face in
                    guard let b = face["bounds"] as? [String: Double] else { return nil }
                    return [b["x"] ?? .nan, b["y"] ?? .nan, b["width"] ?? .nan, b["height"] ?? .nan]
                }
            }
            return boxes
        }

        static let artefacts: URL = Locations.repository.appendingPathComponent(".build/test-artefacts")

        @Test("local --view: the page shows the stream with faces boxed and labelled by tracking ID, each frame with its own result",
              .enabled(if: browserReady && demoFrame != nil, "needs chromium, chromium-driver and python3-selenium (scripts/setup.sh --with-browser) and the demo footage"),
              .timeLimit(.minutes(15)))
        func pageDrawsEachFrameWithItsOwnResult() async throws {
            let cluster = try TestCluster("view-page")
            defer { cluster.cleanup() }
            let count = 40
            let clip = try Self.jumpingClip(in: cluster.directory, count: count)
            let port = try freeLoopbackPorts(1)[0]
            let local = try cluster.facewire("local", [
                "--role", "local", "--source", clip.path, "--stream", "door", "--fps", "10", "--loop", "--view", String(port),
            ])
            _ = try await local.waitForLine(containing: "live view: open")
            try FileManager.default.createDirectory(at: Self.artefacts, withIntermediateDirectories: true)
            let screenshot = Self.artefacts.appendingPathComponent("live-view.png")
            let phone = Self.artefacts.appendingPathComponent("live-view-phone.png")
            try? FileManager.default.removeItem(at: screenshot)
            let run = try runCommand(Self.python, [
                Locations.repository.appendingPathComponent("scripts/view-check.py").path, "--url", "http://127.0.0.1:\(port)/",
                "--screenshot", screenshot.path, "--phone-screenshot", phone.path, "--frames", "20", "--timeout", "90",
            ])
            #expect(run.status == 0, "\(run.output)\n\(local.tail(.stderr))")
            let jsonLine = try #require(run.output.split(separator: "\n").last { $0.hasPrefix("{") })
            let report = try #require(try JSONSerialization.jsonObject(with: Data(jsonLine.utf8)) as? [String: Any])

            // Acceptance 1: the stream's tile, its faces labelled by tracking ID, the event list, a screenshot.
            let tiles = try #require(report["tiles"] as? [[String: Any]])
            let streams = tiles.compactMap { $0["stream"] as? String }
            #expect(streams == ["door"])
            #expect((tiles.first?["trackingIds"] as? [String])?.isEmpty == false, "the tile names the tracking IDs it draws: \(tiles)")
            let events = try #require(report["events"] as? [[String: Any]])
            #expect(events.contains { $0["kind"] as? String == "appeared" && $0["stream"] as? String == "door" }, "\(events)")
            #expect((report["consoleErrors"] as? [String])?.isEmpty == true, "\(report["consoleErrors"] ?? "")")
            #expect((report["phoneOverflow"] as? Int ?? 1) <= 0, "the page does not scroll sideways at phone width")
            #expect(report["connection"] as? String == "live")
            let png = try Data(contentsOf: screenshot)
            #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "a PNG screenshot at \(screenshot.path)")

            // Acceptance 2: every drawn frame with its own result. From the page's own data: the seq of the frame equals
            // the seq of the result; each drawn box is the collector's box for that seq (as local printed it); and it
            // lies where that frame put the face (the picture jumps ≥ 137 px between neighbours).
            #expect(report["mismatches"] as? Int == 0)
            let drawn = try #require(report["drawn"] as? [[String: Any]])
            let printed = Self.boxesBySeq(local.lines(.stdout))
            var checked = 0
            var baseline: [Double] = []
            for frame in drawn {
                let seq = try #require(frame["frameSeq"] as? Int)
                #expect(frame["resultSeq"] as? Int == seq)
                let faces = (frame["faces"] as? [[String: Any]] ?? []).map { f in ["x", "y", "w", "h"].map { (f[$0] as? Double) ?? .nan } }
                guard let expected = printed[seq] else { continue }  // printed after the page was read
                #expect(faces.count == expected.count, "seq \(seq): drawn \(faces) printed \(expected)")
                for (page, line) in zip(faces, expected) {
                    #expect(zip(page, line).allSatisfy { abs($0 - $1) <= 0.06 }, "seq \(seq): drawn \(page), the collector's \(line)")
                }
                if let face = faces.first { baseline.append(face[0] - Double(Self.offset(seq, count: count))) }
                checked += 1
            }
            #expect(checked >= 10, "only \(checked) drawn frames could be compared with the printed lines")
            let median = baseline.sorted()[baseline.count / 2]
            #expect(baseline.allSatisfy { abs($0 - median) < 40 }, "each box sits where its own frame put the face: \(baseline)")
        }

        @Test("snapshot.jpg (faces drawn and clean), a track's crop, and facewire snapshot: valid JPEGs, the face found again in the crop",
              .enabled(if: demoFrame != nil, "needs the demo footage: run scripts/setup.sh"),
              .timeLimit(.minutes(15)))
        func snapshotsAndCrops() async throws {
            let cluster = try TestCluster("view-snapshot")
            defer { cluster.cleanup() }
            let clip = try Self.jumpingClip(in: cluster.directory, count: 20)
            let port = try freeLoopbackPorts(1)[0]
            let token = "test-token-0123456789"
            let local = try cluster.facewire("local", [
                "--role", "local", "--source", clip.path, "--stream", "door", "--fps", "10", "--loop", "--view", String(port),
                "--http-token", token,
            ])
            let started = try await local.waitForLine(containing: "collector started")
            let control = try #require(started.split(separator: " ").first { $0.hasPrefix("control=") }).dropFirst("control=".count)
            _ = try await local.waitForLine(containing: "live view: open")
            let auth = ["Authorization: Bearer \(token)"]
            #expect(try httpGetBytes(port: port, path: "/api/state").status == 401, "no token, no view")
            #expect(try httpGetBytes(port: port, path: "/healthz").status == 200, "health stays open for probes")
            #expect(try httpGetBytes(port: port, path: "/api/state", headers: ["Authorization: Bearer \(token)x"]).status == 401)
            // Opened as /?token=…, the page gets a cookie that carries the token for its own requests.
            let page = try httpGetBytes(port: port, path: "/?token=\(token)")
            #expect(page.status == 200 && page.headers["content-type"] == "text/html; charset=utf-8")
            #expect(page.headers["set-cookie"]?.hasPrefix("facewire_token=\(token);") == true && page.headers["set-cookie"]?.contains("HttpOnly") == true)
            #expect(page.headers["content-security-policy"]?.contains("default-src 'self'") == true)
            let script = try httpGetBytes(port: port, path: "/app.js", headers: ["Cookie: facewire_token=\(token)"])
            #expect(script.status == 200 && script.headers["content-type"] == "text/javascript; charset=utf-8")
            #expect(script.headers["cache-control"] == "no-cache")
            let etag = try #require(script.headers["etag"])
            let again = try httpGetBytes(port: port, path: "/app.js", headers: ["Cookie: facewire_token=\(token)", "If-None-Match: \(etag)"])
            #expect(again.status == 304 && again.body.isEmpty, "revalidated, not sent again")

            // Wait for a processed frame with a preview and a track with a picture. The face jumps, so each track
            // lives a frame or two, and on a loaded machine a track's frame may have no preview joined: ask for the
            // crop of a track the state says has a picture, not for track 1.
            var snapshot: (status: Int, headers: [String: String], body: [UInt8]) = (0, [:], [])
            var crop: (status: Int, headers: [String: String], body: [UInt8]) = (0, [:], [])
            for _ in 0..<300 {
                snapshot = try httpGetBytes(port: port, path: "/streams/door/snapshot.jpg", headers: auth)
                let state = try httpGetBytes(port: port, path: "/api/state", headers: auth)
                let events = (try? JSONSerialization.jsonObject(with: Data(state.body)) as? [String: Any])?["events"] as? [[String: Any]]
                if let track = events?.first(where: { $0["hasPicture"] as? Bool == true })?["trackingID"] as? Int {
                    crop = try httpGetBytes(port: port, path: "/streams/door/tracks/\(track).jpg", headers: auth)
                }
                if snapshot.status == 200 && crop.status == 200 { break }
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(snapshot.status == 200 && snapshot.headers["content-type"] == "image/jpeg", "\(local.tail(.stderr))")
            #expect(crop.status == 200 && crop.headers["content-type"] == "image/jpeg")
            let decoder = try JPEGDecoder()
            let drawnImage = try decoder.decode(snapshot.body)
            #expect(drawnImage.width == 960 && drawnImage.height == 480, "the frame's upright size")
            let clean = try httpGetBytes(port: port, path: "/streams/door/snapshot.jpg?faces=0", headers: auth)
            #expect(clean.status == 200)
            let cleanImage = try decoder.decode(clean.body)
            #expect(cleanImage.width == 960 && cleanImage.height == 480)
            #expect(clean.body != snapshot.body || clean.headers["x-facewire-seq"] != snapshot.headers["x-facewire-seq"])
            #expect(try httpGetBytes(port: port, path: "/streams/door/tracks/999999.jpg", headers: auth).status == 404)
            // The page asks before it loads a picture not made yet: always an answer, never a failed request.
            let probe = try httpGetBytes(port: port, path: "/streams/door/tracks/999999.json", headers: auth)
            #expect(probe.status == 200 && String(decoding: probe.body, as: UTF8.self) == #"{"picture":false}"#)
            #expect(try httpGetBytes(port: port, path: "/streams/door/tracks/18446744073709551615.jpg", headers: auth).status == 404)
            for bad in ["18446744073709551616", "0", "-1", "", "1e3", String(repeating: "9", count: 400)] {
                #expect(try httpGetBytes(port: port, path: "/streams/door/tracks/\(bad).jpg", headers: auth).status == 400, "\(bad.prefix(30))")
            }
            #expect(try httpGetBytes(port: port, path: "/streams/no%20such/snapshot.jpg", headers: auth).status == 400)

            // The crop holds a face the detector finds again (facewire detect on the file).
            let cropFile = cluster.directory.appendingPathComponent("crop.jpg")
            try Data(crop.body).write(to: cropFile)
            let cropImage = try decoder.decode(crop.body)
            #expect(max(cropImage.width, cropImage.height) <= 256 && min(cropImage.width, cropImage.height) >= 32)
            let detected = try runCommand(try Locations.facewireBinary(), ["detect", "--source", cropFile.path])
            #expect(detected.status == 0, "\(detected.output)")
            #expect(detected.output.contains("\"bounds\""), "a face in the crop: \(detected.output)")

            // facewire snapshot writes the same kind of picture from the command line.
            let output = cluster.directory.appendingPathComponent("snap.jpg")
            let snap = try runCommand(try Locations.facewireBinary(), [
                "snapshot", "--collector", String(control), "--stream", "door", "-o", output.path, "--timeout", "30",
            ])
            #expect(snap.status == 0, "\(snap.output)")
            let written = try decoder.decode(Array(try Data(contentsOf: output)))
            #expect(written.width == 960 && written.height == 480)

            // A view with --save-faces writes each track's best face and its sidecar when the track leaves (the face
            // jumps, so tracks come and go every few frames).
            let faces = cluster.directory.appendingPathComponent("faces")
            try FileManager.default.createDirectory(at: faces, withIntermediateDirectories: true)
            let viewPort = try freeLoopbackPorts(1)[0]
            _ = try cluster.facewire("view", ["--role", "view", "--collector", String(control), "--http-port", String(viewPort), "--save-faces", faces.path])
            var saved: [String] = []
            for _ in 0..<300 {
                saved = (try? FileManager.default.contentsOfDirectory(atPath: faces.path))?.filter { $0.hasSuffix(".json") }.sorted() ?? []
                if !saved.isEmpty { break }
                try await Task.sleep(for: .milliseconds(200))
            }
            let sidecarName = try #require(saved.first, "no face saved")
            #expect(sidecarName.hasPrefix("door_"), "named STREAM_EPOCH_ID: \(sidecarName)")
            let sidecar = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: faces.appendingPathComponent(sidecarName))) as? [String: Any])
            #expect(sidecar["stream"] as? String == "door" && (sidecar["trackingID"] as? Int ?? 0) > 0 && (sidecar["frames"] as? Int ?? 0) >= 1)
            #expect((sidecar["face"] as? [String: Any])?["w"] != nil, "the best face's attributes: \(sidecar)")
            let picture = faces.appendingPathComponent(String(sidecarName.dropLast(5)) + ".jpg")
            let savedImage = try decoder.decode(Array(try Data(contentsOf: picture)))
            #expect(max(savedImage.width, savedImage.height) <= 256)
        }
    
        /// The streams a view at `port` shows: (stream, processed, previews, joined) each, from `/api/state`.
        static func shown(port: Int) throws -> [(stream: String, processed: Int, previews: Int, joined: Int)] {
            let state = try httpGetBytes(port: port, path: "/api/state")
            guard state.status == 200, let object = try JSONSerialization.jsonObject(with: Data(state.body)) as? [String: Any],
                let streams = object["streams"] as? [[String: Any]]
            else { return [] }
            return streams.map {
                (($0["stream"] as? String) ?? "", ($0["processed"] as? Int) ?? 0, ($0["previews"] as? Int) ?? 0, ($0["joined"] as? Int) ?? 0)
            }
        }

        @Test("CURVE: a view whose key no node allows gets neither results nor frames; one the collector allows but the capture node does not gets results and no frame",
              .enabled(if: demoFrame != nil, "needs the demo footage: run scripts/setup.sh"),
              .timeLimit(.minutes(15)))
        func curveViewsNeedAllowedKeys() async throws {
            let cluster = try TestCluster("view-curve")
            defer { cluster.cleanup() }
            let binary = try Locations.facewireBinary()
            let keys = cluster.directory.appendingPathComponent("keys")
            let collectorAllow = keys.appendingPathComponent("collector-allow")
            let captureAllow = keys.appendingPathComponent("capture-allow")
            for folder in [collectorAllow, captureAllow] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
            for name in ["collector", "capture", "worker", "view", "half", "stranger"] {
                let made = try runCommand(binary, ["keygen", keys.appendingPathComponent(name).path])
                try #require(made.status == 0, "\(made.output)")
            }
            // The collector accepts the capture node, the worker, the view and the half-allowed view; the capture node
            // accepts the worker and the view. The stranger is on no list.
            for (name, folder) in [("capture", collectorAllow), ("worker", collectorAllow), ("view", collectorAllow), ("half", collectorAllow),
                                   ("worker", captureAllow), ("view", captureAllow)] {
                try FileManager.default.copyItem(at: keys.appendingPathComponent("\(name).pub"), to: folder.appendingPathComponent("\(name).pub"))
            }
            func key(_ name: String) -> String { keys.appendingPathComponent(name).path }
            func client(_ name: String) -> [String] { ["--curve-secret-key", key("\(name).key"), "--curve-server-key", key("collector.pub")] }
            let ports = try freeLoopbackPorts(6)
            let control = "tcp://127.0.0.1:\(ports[0])"
            _ = try await cluster.startCollector(control: control, publish: "tcp://127.0.0.1:\(ports[1])",
                                                 ["--curve-secret-key", key("collector.key"), "--curve-allow", collectorAllow.path])
            _ = try await cluster.startWorker(control: control, client("worker"))
            var views: [String: NodeProcess] = [:]
            for (index, name) in ["view", "half", "stranger"].enumerated() {
                views[name] = try cluster.facewire(name, ["--role", "view", "--collector", control, "--http-port", String(ports[3 + index])] + client(name))
            }
            let clip = try Self.jumpingClip(in: cluster.directory, count: 10)
            _ = try cluster.facewire("capture", [
                "--role", "capture", "--source", clip.path, "--stream", "sec", "--bind", "tcp://127.0.0.1:\(ports[2])",
                "--collector", control, "--fps", "10", "--loop", "--curve-allow", captureAllow.path,
            ] + client("capture"))
            var allowed: [(stream: String, processed: Int, previews: Int, joined: Int)] = []
            for _ in 0..<300 {
                allowed = (try? Self.shown(port: ports[3])) ?? []
                if allowed.first.map({ $0.joined >= 5 }) == true { break }
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(allowed.map(\.stream) == ["sec"] && (allowed.first?.joined ?? 0) >= 5,
                    "the allowed view shows frames with their results: \(allowed)\n\(cluster.diagnostics())")
            // Both others ran as long as the allowed one did.
            let half = try Self.shown(port: ports[4])
            #expect(half.map(\.stream) == ["sec"] && (half.first?.processed ?? 0) > 0, "results reach a view the collector allows: \(half)")
            #expect(half.first?.previews == 0 && half.first?.joined == 0, "no frame from a capture node that does not allow it: \(half)")
            let stranger = try Self.shown(port: ports[5])
            #expect(stranger.isEmpty, "a view nobody allows gets nothing: \(stranger)")
        }

        /// Writes `folder/frame-0000.jpg`: the demo picture rolled by `degrees`, stored sideways with EXIF orientation 6
        /// (the stored pixels turned a quarter counter-clockwise; a viewer turns them clockwise to show them upright).
        static func sidewaysRolledFrame(in folder: URL, degrees: Double) throws {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let script = """
                import sys, struct, cv2
                image = cv2.imread(sys.argv[1])
                h, w = image.shape[:2]
                rolled = cv2.warpAffine(image, cv2.getRotationMatrix2D((w / 2, h / 3), float(sys.argv[3]), 1.0), (w, h),
                                        borderMode=cv2.BORDER_REPLICATE)
                stored = cv2.rotate(rolled, cv2.ROTATE_90_COUNTERCLOCKWISE)
                jpeg = cv2.imencode(".jpg", stored, [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes()
                tiff = b"MM\\x00\\x2a" + struct.pack(">I", 8) + struct.pack(">H", 1) + struct.pack(">HHIHH", 0x0112, 3, 1, 6, 0) + struct.pack(">I", 0)
                app1 = b"Exif\\x00\\x00" + tiff
                open(sys.argv[2], "wb").write(jpeg[:2] + b"\\xff\\xe1" + struct.pack(">H", len(app1) + 2) + app1 + jpeg[2:])
                """
            let run = try runCommand(python, ["-c", script, try #require(demoFrame).path, folder.appendingPathComponent("frame-0000.jpg").path, String(degrees)])
            try #require(run.status == 0, "\(run.output)")
        }

        static var opencvPython: Bool { (try? runCommand(python, ["-c", "import cv2"]).status) == 0 }

        @Test("a face rolled 30° in a frame stored with EXIF orientation 6 comes back from the crop endpoint upright and level (the detector reads |roll| < 8°)",
              .enabled(if: demoFrame != nil && opencvPython, "needs the demo footage and python3-opencv: run scripts/setup.sh"),
              .timeLimit(.minutes(15)))
        func cropOfASidewaysRolledFaceIsUprightAndLevel() async throws {
            let cluster = try TestCluster("view-exif")
            defer { cluster.cleanup() }
            let folder = cluster.directory.appendingPathComponent("sideways")
            try Self.sidewaysRolledFrame(in: folder, degrees: 30)
            let port = try freeLoopbackPorts(1)[0]
            let local = try cluster.facewire("local", [
                "--role", "local", "--source", folder.path, "--stream", "tilt", "--fps", "5", "--loop", "--view", String(port),
            ])
            _ = try await local.waitForLine(containing: "live view: open")
            var crop: (status: Int, headers: [String: String], body: [UInt8]) = (0, [:], [])
            for _ in 0..<300 {
                crop = try httpGetBytes(port: port, path: "/streams/tilt/tracks/1.jpg")
                if crop.status == 200 { break }
                try await Task.sleep(for: .milliseconds(200))
            }
            try #require(crop.status == 200, "\(local.tail(.stderr))")
            // The stream itself: upright size (the stored frame is sideways) and the face rolled by about 30°.
            let line = try #require(local.lines(.stdout).first { $0.contains("\"faces\":[{") })
            let frame = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let picture = try JPEGDecoder().decode(Array(try Data(contentsOf: try #require(Self.demoFrame))))
            #expect(frame["width"] as? Int == picture.width && frame["height"] as? Int == picture.height, "upright size: \(line.prefix(200))")
            let rolled = try #require(((frame["faces"] as? [[String: Any]])?.first?["faceAngle"]) as? Double)
            #expect(abs(rolled) > 20, "the frame's face is rolled: \(rolled)°")
            // The crop: the detector finds the face in it, level.
            let cropFile = cluster.directory.appendingPathComponent("crop.jpg")
            try Data(crop.body).write(to: cropFile)
            let detected = try runCommand(try Locations.facewireBinary(), ["detect", "--source", cropFile.path])
            let found = try #require(detected.output.split(separator: "\n").first { $0.hasPrefix("{") }, "\(detected.output)")
            let result = try #require(try JSONSerialization.jsonObject(with: Data(found.utf8)) as? [String: Any])
            let faces = try #require(result["faces"] as? [[String: Any]])
            #expect(faces.count >= 1, "a face in the crop: \(found)")
            let level = try #require(faces.first?["faceAngle"] as? Double)
            #expect(abs(level) < 8, "the crop is level: \(level)° (the frame's face: \(rolled)°)")
        }
}
}
