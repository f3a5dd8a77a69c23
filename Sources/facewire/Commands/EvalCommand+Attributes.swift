import ArgumentParser
import FacewireDetection
import FacewireImage
import Foundation
import FacewireEvaluation

extension EvalCommand {
    /// `facewire eval --attributes`: the largest face of each labelled image through the worker's own pipeline.
    func runAttributes(_ path: String) throws {
        setOpenCVThreads(threads)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ValidationError("--attributes \(path): no such file or folder")
        }
        let labels: [AttributeEvaluation.Label]
        let base: String
        let padding: Double
        if isDirectory.boolValue {
            base = path
            labels = try Self.closedOpenLabels(path)
            padding = pad ?? 0.3
        } else {
            base = (path as NSString).deletingLastPathComponent
            let text = try String(contentsOfFile: path, encoding: .utf8)
            // AFLW2000-3D's head-pose labels (../shared/data/pose) or GENKI-4K's.
            let header = text.prefix { $0 != "\n" }.lowercased()
            labels = header.contains("pitch_deg") ? try AttributeEvaluation.parsePoseLabels(text) : try AttributeEvaluation.parseGenkiLabels(text)
            padding = pad ?? 0
        }
        guard !labels.isEmpty else { throw ValidationError("--attributes \(path): no labelled images") }

        let resolved = try detector.configuration().resolve()
        if let note = resolved.note { Self.log("note: \(note)") }
        let attributeConfiguration = try attributeModels.configuration(runtime: try detector.configuration().runtime)
        let measurer = try makeAttributeMeasurer(attributeConfiguration) { Self.log("note: \($0)") }
        let analyzer = try FrameAnalyzer(detector: try resolved.makeDetector(), attributes: measurer)
        var options = AnalysisOptions()
        options.accuracy = AnalysisOptions.Accuracy(rawValue: accuracy.lowercased()) ?? .low
        do {
            options.classifiers = try .parse(classifiers)
        } catch {
            throw ValidationError("--classifiers: \(error)")
        }
        let loader = try EvaluationImageLoader()
        var report = AttributeEvaluation.Report(
            name: name ?? "\((path as NSString).lastPathComponent) (\(resolved.backend.rawValue), attributes \(attributeConfiguration.method.rawValue), smile \(attributeConfiguration.smileModel.rawValue), pad \(padding))")
        for (index, label) in labels.enumerated() {
            let file = label.file.hasPrefix("/") ? label.file : "\(base)/\(label.file)"
            let image = try loader.load(file).padded(fraction: padding)
            let analysis = try analyzer.analyze(image: image, options: options)
            let largest = analysis.faces.max { $0.bounds.width * $0.bounds.height < $1.bounds.width * $1.bounds.height }
            report.add(
                label, largest.map(AttributeEvaluation.Prediction.init(face:)),
                attributeMilliseconds: analysis.faces.isEmpty ? nil : analysis.classifyMilliseconds / Double(analysis.faces.count),
                detectMilliseconds: analysis.detectMilliseconds)
            if (index + 1) % 200 == 0 { Self.log("\(index + 1)/\(labels.count) images") }
        }
        print(report.table())
    }

    /// The labels of a folder with `closed/` (both eyes closed) and `open/` (both open) subfolders of images.
    static func closedOpenLabels(_ path: String) throws -> [AttributeEvaluation.Label] {
        var labels: [AttributeEvaluation.Label] = []
        for (folder, closed) in [("closed", true), ("open", false)] {
            let directory = "\(path)/\(folder)"
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
                throw ValidationError("--attributes \(path): expected a folder \(folder)/ inside it")
            }
            for name in names.sorted() where [".jpg", ".jpeg", ".png"].contains(where: name.lowercased().hasSuffix) {
                labels.append(AttributeEvaluation.Label(file: "\(folder)/\(name)", eyesClosed: closed))
            }
        }
        return labels
    }
}
