import FacewireDetection
import FacewireVocabulary
import Foundation

/// One image of an annotation set such as `faces/dev.jsonl` (see the data README for the format).
public struct AnnotatedImage: Sendable, Equatable {
    /// Image path relative to the annotation file's directory.
    public var image: String
    /// Image width in pixels.
    public var width: Int
    /// Image height in pixels.
    public var height: Int
    /// The source data set (for example `caltech_webfaces`).
    public var source: String
    /// The faces; empty for negative images.
    public var faces: [GroundTruthFace]

    /// Creates an annotated image.
    public init(image: String, width: Int, height: Int, source: String, faces: [GroundTruthFace]) {
        self.image = image
        self.width = width
        self.height = height
        self.source = source
        self.faces = faces
    }

    /// Whether the image has no faces (a negative, for strict false-positive counts).
    public var isNegative: Bool { faces.isEmpty }

    /// Reads a JSON-lines annotation file: one object per line with `image`, `width`, `height`, `source` and
    /// `faces` (each with `box: [x, y, w, h]`, optional `ignore` and optional `landmarks` of which `left_eye`
    /// and `right_eye` are read). Other keys are ignored.
    /// - Throws: ``DetectionError`` `.invalidConfiguration` when the file is missing or unreadable, or a line
    ///   does not parse (naming the line).
    public static func loadJSONLines(contentsOf url: URL) throws -> [AnnotatedImage] {
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw DetectionError(.invalidConfiguration, "cannot read annotation file \(url.path): \(error.localizedDescription)")
        }
        let decoder = JSONDecoder()
        var images: [AnnotatedImage] = []
        for (index, line) in text.split(whereSeparator: \.isNewline).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { continue }
            do {
                let record = try decoder.decode(Record.self, from: Data(trimmed.utf8))
                images.append(try record.annotatedImage())
            } catch {
                throw DetectionError(.invalidConfiguration, "\(url.path) line \(index + 1): \(error)")
            }
        }
        return images
    }

    /// Adds faces an annotation set leaves out, read from a JSON-lines file of `{"image": …, "faces": [[x, y, w, h],
    /// …]}` (the image as in the annotation file), to `images` as ignored faces: a detection of one is then neither a
    /// true nor a false positive, and recall is unchanged (such faces are not counted). For sets whose annotation is
    /// incomplete, as Caltech's, which annotates a few faces of a group photograph and leaves the others out.
    /// - Throws: ``DetectionError`` `.invalidConfiguration` when the file cannot be read, a line does not parse, names
    ///   an image the set does not have or one it calls face-free (a negative must stay one), or gives a box that is
    ///   not 4 finite values with a positive size.
    public static func addingUnannotatedFaces(to images: [AnnotatedImage], contentsOf url: URL) throws -> [AnnotatedImage] {
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw DetectionError(.invalidConfiguration, "cannot read \(url.path): \(error.localizedDescription)")
        }
        struct Extra: Decodable {
            var image: String
            var faces: [[Float]]
        }
        var result = images
        var index: [String: Int] = [:]
        for (position, image) in images.enumerated() { index[image.image] = position }
        for (number, line) in text.split(whereSeparator: \.isNewline).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { continue }
            let place = "\(url.path) line \(number + 1)"
            let extra: Extra
            do {
                extra = try JSONDecoder().decode(Extra.self, from: Data(trimmed.utf8))
            } catch {
                throw DetectionError(.invalidConfiguration, "\(place): \(error)")
            }
            guard let position = index[extra.image] else {
                throw DetectionError(.invalidConfiguration, "\(place): \(extra.image) is not in the annotation set")
            }
            guard !result[position].isNegative else {
                throw DetectionError(.invalidConfiguration, "\(place): \(extra.image) is a face-free image in the annotation set")
            }
            for box in extra.faces {
                guard box.count == 4, box.allSatisfy(\.isFinite), box[2] > 0, box[3] > 0 else {
                    throw DetectionError(.invalidConfiguration, "\(place): a box must be 4 finite values, width and height positive")
                }
                result[position].faces.append(
                    GroundTruthFace(box: FaceRect(x: box[0], y: box[1], width: box[2], height: box[3]), ignore: true))
            }
        }
        return result
    }

    private struct Record: Decodable {
        struct Face: Decodable {
            var box: [Float]
            var ignore: Bool?
            var landmarks: [String: [Float]]?
        }

        var image: String
        var width: Int
        var height: Int
        var source: String?
        var faces: [Face]

        func annotatedImage() throws -> AnnotatedImage {
            let faces = try self.faces.map { face -> GroundTruthFace in
                guard face.box.count == 4 else {
                    throw DetectionError(.invalidConfiguration, "box with \(face.box.count) values in \(image)")
                }
                func point(_ key: String) -> FacePoint? {
                    guard let values = face.landmarks?[key], values.count == 2 else { return nil }
                    return FacePoint(x: values[0], y: values[1])
                }
                return GroundTruthFace(
                    box: FaceRect(x: face.box[0], y: face.box[1], width: face.box[2], height: face.box[3]),
                    ignore: face.ignore ?? false, leftEye: point("left_eye"), rightEye: point("right_eye"))
            }
            return AnnotatedImage(image: image, width: width, height: height, source: source ?? "", faces: faces)
        }
    }
}
