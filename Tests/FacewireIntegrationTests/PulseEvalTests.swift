import Foundation
import Testing

extension IntegrationTests {
    @Suite("facewire eval --pulse")
    struct PulseEval {
        static func temporaryFolder() throws -> URL {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("facewire-pulse-eval-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            return folder
        }

        @Test(
            "one recording of ../shared/data/pulse: a table, a JSON summary and the traces",
            .enabled(if: Locations.sharedData != nil, "needs ../shared/data next to the repository (not in a user's clone)"),
            .timeLimit(.minutes(15)))
        func oneRecording() throws {
            let data = try #require(Locations.sharedData).appendingPathComponent("pulse")
            let folder = try Self.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let traces = folder.appendingPathComponent("traces.jsonl")
            let json = folder.appendingPathComponent("summary.json")
            // India/video10 is the shortest recording (27 s, three regions).
            let run = try runCommand(try Locations.facewireBinary(), [
                "eval", "--pulse", "--pulse-data", data.path, "--pulse-recording", "India/video10",
                "--traces", traces.path, "--json", json.path,
            ])
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("| India/video10 | forehead |"), "\(run.output)")
            #expect(run.output.contains("| **India/video10** | median |"), "\(run.output)")
            #expect(run.output.contains("MAE ours POS (bpm): per region file"), "\(run.output)")
            #expect(run.output.contains("MAE constant guess 80.7 bpm"), "\(run.output)")

            let summary = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any])
            let regions = try #require(summary["regions"] as? [[String: Any]])
            #expect(regions.map { $0["region"] as? String } == ["forehead", "leftcheek", "rightcheek"])
            for region in regions {
                #expect(region["truth"] as? Double == 80.657)
                for method in ["pos", "chrom"] {
                    let rate = try #require(region[method] as? [String: Any])
                    // 27 s of video: window estimates from 10 s on.
                    #expect((rate["estimate_seconds"] as? Double ?? 0) > 10, "\(region)")
                    #expect(rate["bpm"] as? Double != nil, "\(region)")
                }
            }
            let recordings = try #require(summary["recordings"] as? [[String: Any]])
            #expect(recordings.count == 1 && recordings.first?["recording"] as? String == "India/video10")

            let lines = try String(contentsOf: traces, encoding: .utf8).split(separator: "\n")
            #expect(lines.count == 3)
            for line in lines {
                let trace = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                #expect(trace["recording"] as? String == "India/video10")
                #expect(trace["fps"] as? Double == 15)
                let t = try #require(trace["t"] as? [Double])
                let rgb = try #require(trace["rgb"] as? [[Double]])
                #expect(t.count == rgb.count && rgb.allSatisfy { $0.count == 3 })
                #expect(t.count + (trace["left_out"] as? Int ?? -1) == 412, "every frame is in the trace or left out")
                #expect(["skin", "frame"].contains(trace["input"] as? String))
            }
        }

        /// The venv evaluation/pulse-reference.py makes on its first run (pyVHR and its pinned packages, from PyPI), if
        /// this machine has it: the test does not download it.
        static var referenceVenvReady: Bool {
            let environment = ProcessInfo.processInfo.environment
            let cache = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
                ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache").path
            return FileManager.default.fileExists(atPath: cache + "/facewire/pulse-reference-venv/facewire-pulse-reference.txt")
        }

        @Test(
            "evaluation/eval-pulse.py on one recording: ours and pyVHR side by side",
            .enabled(
                if: Locations.sharedData != nil && referenceVenvReady,
                "needs ../shared/data and the venv of evaluation/pulse-reference.py (its first run makes it)"),
            .timeLimit(.minutes(15)))
        func sideBySide() throws {
            let data = try #require(Locations.sharedData).appendingPathComponent("pulse")
            let folder = try Self.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let script = Locations.repository.appendingPathComponent("evaluation/eval-pulse.py").path
            let run = try runCommand("/usr/bin/python3", [
                script, "--binary", try Locations.facewireBinary(), "--pulse-data", data.path,
                "--pulse-recording", "India/video10", "--out", folder.path,
            ])
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("| recording | region | input | oximeter | ours POS | ours CHROM | pyVHR POS | pyVHR CHROM |"), "\(run.output)")
            for region in ["forehead", "leftcheek", "rightcheek"] {
                #expect(run.output.contains("| India/video10 | \(region) |"), "\(run.output)")
            }
            #expect(run.output.contains("| per recording (median of its regions) |"), "\(run.output)")
            let reference = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("pyvhr.json"))) as? [String: Any])
            let regions = try #require(reference["regions"] as? [[String: Any]])
            #expect(regions.count == 3)
            #expect(regions.allSatisfy { (($0["pos"] as? [String: Any])?["bpm"] as? Double) != nil }, "\(regions)")
        }

        @Test(
            "real recordings with a contact PPG, in real time and at --fps max: the same rates, near the PPG (issue 32 check 1)",
            .enabled(if: Locations.sharedData != nil, "needs ../shared/data next to the repository (not in a user's clone)"),
            .timeLimit(.minutes(10)))
        func pulseVideoAtEveryPace() throws {
            let data = try #require(Locations.sharedData).appendingPathComponent("pulse-video")
            let folder = try Self.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let json = folder.appendingPathComponent("results.json")
            let script = Locations.repository.appendingPathComponent("evaluation/eval-pulse-video.py").path
            let run = try runCommand("/usr/bin/python3", [
                script, "--facewire", try Locations.facewireBinary(), "--data", data.path, "--json", json.path,
                "--work", folder.path,
            ])
            #expect(run.status == 0, "\(run.output)")
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any])
            let results = try #require(summary["results"] as? [[String: Any]])
            #expect(results.count == 4, "two recordings, two paces")
            var ratesByPace: [String: [String: [Double]]] = [:]
            for result in results {
                let name = "\(result["recording"] ?? "?") \(result["pace"] ?? "?")"
                #expect(result["error"] == nil, "\(name): \(result)")
                // Reported on at least 40 % of the frames after the first window, within 3 bpm of the PPG's mean on at
                // least 90 % of those, never more than 10 bpm off.
                #expect((result["rated_share"] as? Double ?? 0) >= 0.4, "\(name): \(result["rated_share"] ?? "-")")
                #expect((result["within_tolerance_share"] as? Double ?? 0) >= 0.9, "\(name): \(result["within_tolerance_share"] ?? "-")")
                #expect((result["max_error"] as? Double ?? 99) <= 10, "\(name): \(result["max_error"] ?? "-")")
                let rates = (result["rates"] as? [[String: Any]] ?? []).compactMap { $0["bpm"] as? Double }
                ratesByPace[result["recording"] as? String ?? "?", default: [:]][result["pace"] as? String ?? "?"] = rates
            }
            // Both paces see the same frames at the same media times; real time may drop a frame a worker had no room for,
            // which can move a rate by a little, never by a squeezed clock's factor.
            for (recording, paces) in ratesByPace {
                let realTime = paces["realtime"] ?? [], max = paces["max"] ?? []
                #expect(!realTime.isEmpty && !max.isEmpty, "\(recording)")
                let mean = { (rates: [Double]) in rates.reduce(0, +) / Double(Swift.max(1, rates.count)) }
                #expect(abs(mean(realTime) - mean(max)) <= 1, "\(recording): \(mean(realTime)) in real time, \(mean(max)) at --fps max")
            }
            // `facewire bench pulse-replay` runs the estimator again on the recorded lines (skin and geometry, as
            // rounded in JSON): the collector's own rates, frame by frame.
            let recorded = folder.appendingPathComponent("1-max.jsonl")
            let replay = try runCommand(try Locations.facewireBinary(), ["bench", "pulse-replay", "--input", recorded.path])
            #expect(replay.status == 0, "\(replay.output)")
            func rates(_ text: String) -> [Int: Double] {
                var out: [Int: Double] = [:]
                for line in text.split(separator: "\n") {
                    guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                        let seq = (object["seq"] as? NSNumber)?.intValue, let faces = object["faces"] as? [[String: Any]],
                        let bpm = faces.compactMap({ ($0["heartRate"] as? [String: Any])?["bpm"] as? NSNumber }).first
                    else { continue }
                    out[seq] = bpm.doubleValue
                }
                return out
            }
            let collector = rates(try String(contentsOf: recorded, encoding: .utf8))
            let replayed = rates(replay.output)
            #expect(!collector.isEmpty)
            let shared = Set(collector.keys).intersection(replayed.keys)
            #expect(shared.count * 20 >= Swift.max(collector.count, replayed.count) * 19,
                    "frames with a rate: \(collector.count) from the collector, \(replayed.count) replayed, \(shared.count) both")
            let worst = shared.map { abs(collector[$0]! - replayed[$0]!) }.max() ?? 0
            #expect(worst <= 0.3, "largest difference \(worst) bpm")
        }

        @Test("refuses a missing data folder, an unknown recording and pulse options without --pulse")
        func badInput() throws {
            let binary = try Locations.facewireBinary()
            let folder = try Self.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let missing = try runCommand(binary, ["eval", "--pulse", "--pulse-data", folder.appendingPathComponent("none").path])
            #expect(missing.status != 0)
            #expect(missing.output.contains("ground_truth.tsv"), "\(missing.output)")

            try "country\tvideo\tmean_heart_rate_bpm\tregions\nIndia\tvideo1\t85\tforehead\n".write(
                to: folder.appendingPathComponent("ground_truth.tsv"), atomically: true, encoding: .utf8)
            let unknown = try runCommand(binary, ["eval", "--pulse", "--pulse-data", folder.path, "--pulse-recording", "India/video2"])
            #expect(unknown.status != 0)
            #expect(unknown.output.contains("India/video2"), "\(unknown.output)")
            let noVideo = try runCommand(binary, ["eval", "--pulse", "--pulse-data", folder.path])
            #expect(noVideo.status != 0)
            #expect(noVideo.output.contains("video1_forehead.avi"), "\(noVideo.output)")

            let stray = try runCommand(binary, ["eval", "--annotations", "x.jsonl", "--traces", "t.jsonl"])
            #expect(stray.status != 0)
            #expect(stray.output.contains("--pulse"), "\(stray.output)")
            let both = try runCommand(binary, ["eval", "--pulse", "--attributes", "x.tsv"])
            #expect(both.status != 0)
        }

        @Test("pulse-replay skips absurd lines instead of trapping: times beyond 64-bit microseconds, NaN-free extremes, huge positions and counts, absurd mesh foreheads")
        func replayOfAbsurdLines() throws {
            let binary = try Locations.facewireBinary()
            let folder = try Self.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let skin = #""skin":[{"region":"forehead","r":200,"g":150,"b":120,"pixels":900}]"#
            let face = #"{"bounds":{"x":10,"y":10,"width":100,"height":120},"leftEyePosition":{"x":40,"y":50},"rightEyePosition":{"x":80,"y":50},"mouthPosition":{"x":60,"y":100},"# + skin + "}"
            let absurdFace = #"{"bounds":{"x":1e308,"y":-1e308,"width":1e308,"height":0},"leftEyePosition":{"x":1e308,"y":0},"rightEyePosition":{"x":-1e308,"y":0},"skin":[{"region":"forehead","r":-5,"g":1e300,"b":0,"pixels":1e300},{"region":"elsewhere","r":1,"g":1,"b":1,"pixels":1}]}"#
            let lines = [
                #"{"seq":0,"status":"processed","mediaTime":0.5,"faces":["# + face + "]}",
                #"{"seq":1,"status":"processed","mediaTime":1e300,"faces":["# + face + "]}",
                #"{"seq":2,"status":"processed","mediaTime":-1e300,"faces":["# + face + "]}",
                #"{"seq":3,"status":"processed","mediaTime":9300000000000,"faces":["# + face + "]}",
                "not json at all",
                #"{"seq":18446744073709551615,"status":"processed","mediaTime":0.6,"faces":["# + absurdFace + "]}",
                // A plain face whose mesh forehead is absurd (as is a second one, and an entry that is not one).
                #"{"seq":4,"status":"processed","mediaTime":0.65,"faces":["# + face.dropLast()
                    + #","meshSkin":[{"region":"forehead","r":1e300,"g":-1,"b":0,"pixels":1e300},{"region":"forehead","r":"x","g":1,"b":1,"pixels":-3},{"region":"leftCheek","r":1,"g":1,"b":1,"pixels":1}]}]}"#,
                #"{"seq":8,"status":"processed","mediaTime":0.66,"faces":["# + face.dropLast() + #","meshSkin":[7,"not a sample"]}]}"#,
                #"{"seq":5,"status":"processed","mediaTime":0.7,"faces":[]}"#,
                #"{"seq":6,"status":"dropped","mediaTime":0.8}"#,
                #"{"seq":7,"status":"processed","mediaTime":-9200000000000,"faces":["# + face + "]}",
            ]
            let input = folder.appendingPathComponent("absurd.jsonl")
            try (lines.joined(separator: "\n") + "\n").write(to: input, atomically: true, encoding: .utf8)
            let run = try runCommand(binary, ["bench", "pulse-replay", "--input", input.path, "--mesh-forehead"])
            #expect(run.status == 0, "\(run.output)")
            let written = run.output.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            // Seq 0 and the absurd face at 0.6 (its regions and geometry refused one by one, its line kept); seqs 4
            // and 8, their mesh foreheads refused; seq 7's time (-9.2e12 s) fits in 64-bit microseconds, so it is a
            // line too (a jump back: the estimator starts again).
            #expect(written.map { ($0["seq"] as? NSNumber)?.stringValue ?? "-" } == ["0", "18446744073709551615", "4", "8", "7"], "\(run.output)")
            #expect(written.allSatisfy { ($0["reading"] as? [String: Any])?["meshForehead"] as? Bool != true })
            #expect(written.allSatisfy { ($0["faces"] as? [[String: Any]])?.first?["heartRate"] == nil })
        }
    }
}
