import FacewireDetection
import FacewireVocabulary
/// The `--dump` file of `facewire eval`: the raw detections, one JSON line per image, in annotation order.
///
/// ```json
/// {"image": "images/caltech/pic00255.jpg", "faces": [{"box": [x, y, w, h], "score": 0.99,
///  "landmarks": {"left_eye": [x, y], "right_eye": [x, y], "nose": [x, y], "mouth_center": [x, y]}}]}
/// ```
///
/// Coordinates are in the image's own pixels. Eyes are named by image side, as in the annotations (`left_eye` has
/// the smaller x). `landmarks` holds only the points the backend gives (none for a cascade box without eyes).
/// Numbers are written with full `Float` precision so that rescoring the file (`evaluation/eval-baseline.py --score`)
/// reproduces every figure.
public enum DetectionDump {
    /// One line (without the newline) for `image` and its detections.
    public static func line(image: String, faces: [DetectedFace]) -> String {
        var text = "{\"image\": \(quoted(image)), \"faces\": ["
        text += faces.map(face).joined(separator: ", ")
        return text + "]}"
    }

    static func face(_ face: DetectedFace) -> String {
        let b = face.bounds
        var text = "{\"box\": [\(number(b.x)), \(number(b.y)), \(number(b.width)), \(number(b.height))]"
        text += ", \"score\": \(number(face.confidence))"
        let points: [(String, FacePoint?)] = [
            ("left_eye", face.leftEye), ("right_eye", face.rightEye), ("nose", face.nose), ("mouth_center", face.mouth),
        ]
        let present = points.compactMap { name, point in point.map { "\(quoted(name)): [\(number($0.x)), \(number($0.y))]" } }
        text += ", \"landmarks\": {" + present.joined(separator: ", ") + "}}"
        return text
    }

    /// The shortest decimal that reads back as the same `Float` (Swift's `description`), as a JSON number.
    static func number(_ value: Float) -> String {
        guard value.isFinite else { return "null" }
        return value == value.rounded() && abs(value) < 1e7 ? String(Int(value)) : "\(value)"
    }

    /// A JSON string literal.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case let c where c.value < 0x20: result += "\\u" + String(repeating: "0", count: 4 - String(c.value, radix: 16).count) + String(c.value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
