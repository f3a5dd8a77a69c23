import ArgumentParser
import FacewireCollectorCore
import FacewireDetection
import Foundation
import FacewirePulse
import FacewireEvaluation

extension EvalCommand {
    /// `facewire eval --pulse`: every region video of the pulse data set through ``PulseEstimator`` (POS and CHROM).
    func runPulse() throws {
        let truthPath = (pulseData as NSString).appendingPathComponent("ground_truth.tsv")
        guard let truthText = try? String(contentsOfFile: truthPath, encoding: .utf8) else {
            throw ValidationError(
                "no readable \(truthPath): give --pulse-data (the default, ../shared/data/pulse, is relative to the current folder)")
        }
        var recordings: [PulseEvaluation.Recording]
        do {
            recordings = try PulseEvaluation.parseGroundTruth(truthText)
        } catch {
            throw ValidationError("\(truthPath): \(error)")
        }
        if !pulseRecording.isEmpty {
            let unknown = Set(pulseRecording).subtracting(recordings.map(\.name))
            guard unknown.isEmpty else {
                throw ValidationError("--pulse-recording \(unknown.sorted().joined(separator: ", ")): not in \(truthPath)")
            }
            recordings = recordings.filter { pulseRecording.contains($0.name) }
        }
        let traceHandle = try traces.map(Self.createFile)
        let jsonHandle = try json.flatMap { $0 == "-" ? nil : try Self.createFile($0) }
        let configuration = PulseEstimator.Configuration()

        let clock = ContinuousClock()
        let start = clock.now
        var results: [PulseEvaluation.RegionResult] = []
        for recording in recordings {
            for region in recording.regions {
                let path = (pulseData as NSString).appendingPathComponent(recording.file(region: region))
                let clip: SkinTrace
                do {
                    clip = try SkinTrace.read(video: path)
                } catch {
                    throw ValidationError("\(error)")
                }
                let (input, samples, leftOut) = clip.samples()
                let trace = PulseEvaluation.Trace(
                    recording: recording.name, region: region, truth: recording.truth, fps: clip.fps, input: input.rawValue,
                    leftOut: leftOut, t: samples.map(\.time), rgb: samples.map { [$0.colour.r, $0.colour.g, $0.colour.b] })
                if let traceHandle {
                    do {
                        try traceHandle.write(contentsOf: Data((try trace.jsonLine() + "\n").utf8))
                    } catch {
                        throw ValidationError("cannot write \(traces ?? ""): \(error)")
                    }
                }
                let result = PulseEvaluation.evaluate(trace, configuration: configuration)
                results.append(result)
                Self.log(
                    "\(recording.name) \(region): \(clip.frames.count) frames, \(input.rawValue)"
                        + (leftOut > 0 ? " (\(leftOut) left out)" : "")
                        + ", POS \(result.pos.bpm.map { String(format: "%.1f", $0) } ?? "–")"
                        + ", CHROM \(result.chrom.bpm.map { String(format: "%.1f", $0) } ?? "–") (\(clock.now - start))")
            }
        }
        try traceHandle?.close()

        let summary = PulseEvaluation.summarize(results, configuration: configuration)
        let jsonText = try summary.jsonString()
        if let jsonHandle { try Self.write(jsonText + "\n", to: jsonHandle, path: json ?? "") }
        let table = "pulse estimator on \(pulseData) (window \(configuration.window) s, band \(configuration.band) bpm):\n\n"
            + summary.table()
        if json == "-" {
            FileHandle.standardError.write(Data((table + "\n").utf8))
            print(jsonText)
        } else {
            print(table)
        }
    }
}
