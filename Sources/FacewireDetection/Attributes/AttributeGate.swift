import FacewireImage
import FacewireVocabulary

/// Never confidently wrong (SPEC 11.7): a face that cannot tell gets no smile or eyes verdict, and says which it
/// withheld, instead of a guess.
///
/// The rule is light: the luma contrast (standard deviation, 0...255) of the band across both eyes. Below
/// ``minimumContrast`` the eyes and mouth cannot be seen (a dark audience, a face in shadow) and both the smile and the
/// eyes are withheld. On the Hamilton clip's dark audience 212 of 672 faces fall under it, 136 of the 197 that read an
/// eye closed (BENCHMARKS.md, "Faces that cannot tell"). Size and sharpness are not a rule of their own: a gate at
/// quality 0.2 (``FaceQuality``) withheld 51 of CEW's 596 closed-eye faces, small (40–44 px) but read right.
///
/// Pure: no state.
public enum AttributeGate {
    /// Least eye-band contrast (luma standard deviation) at which the smile and eyes are read.
    public static let minimumContrast: Float = 6

    /// The luma contrast of the band across both eyes: from a third of the eye distance outside each eye, half that
    /// distance tall, sampled on at most 48 × 16 points. nil when the band leaves the image or the eyes coincide.
    public static func eyeBandContrast(_ image: PixelImage, leftEye: FacePoint, rightEye: FacePoint) -> Float? {
        let dx = rightEye.x - leftEye.x, dy = rightEye.y - leftEye.y
        let distance = (dx * dx + dy * dy).squareRoot()
        guard distance.isFinite, distance >= 2, image.width > 0, image.height > 0 else { return nil }
        let x0 = min(leftEye.x, rightEye.x) - distance / 3, x1 = max(leftEye.x, rightEye.x) + distance / 3
        let midY = (leftEye.y + rightEye.y) / 2
        let y0 = midY - distance / 4, y1 = midY + distance / 4
        let left = max(0, x0), right = min(Float(image.width - 1), x1)
        let top = max(0, y0), bottom = min(Float(image.height - 1), y1)
        guard right - left >= 2, bottom - top >= 2 else { return nil }
        let channels = image.format.channels
        var sum = 0.0, squares = 0.0, count = 0.0
        image.bytes.withUnsafeBufferPointer { bytes in
            for row in 0..<16 {
                let y = Int(top + (bottom - top) * (Float(row) + 0.5) / 16)
                for column in 0..<48 {
                    let x = Int(left + (right - left) * (Float(column) + 0.5) / 48)
                    let i = y * image.stride + x * channels
                    guard i >= 0, i + channels <= bytes.count else { continue }
                    let luma = channels >= 3
                        ? 0.114 * Double(bytes[i]) + 0.587 * Double(bytes[i + 1]) + 0.299 * Double(bytes[i + 2])
                        : Double(bytes[i])
                    sum += luma
                    squares += luma * luma
                    count += 1
                }
            }
        }
        guard count > 1 else { return nil }
        let mean = sum / count
        return Float(max(0, squares / count - mean * mean).squareRoot())
    }

    /// Withholds `face`'s smile and eyes when its eye band is too dark or flat to read (`classifiers`: the ones asked
    /// for). A face without both eyes is left as it is.
    public static func applyLight(_ image: PixelImage, to face: inout DetectedFace, classifiers: AnalysisOptions.Classifiers) {
        let gated = classifiers.intersection([.smile, .eyes])
        guard !gated.isEmpty, let left = face.leftEye, let right = face.rightEye,
            let contrast = eyeBandContrast(image, leftEye: left, rightEye: right), contrast < minimumContrast
        else { return }
        withhold(gated, from: &face)
    }

    /// Clears the verdicts of `classifiers` (smile, eyes) on `face` and records them as withheld.
    public static func withhold(_ classifiers: AnalysisOptions.Classifiers, from face: inout DetectedFace) {
        if classifiers.contains(.smile) {
            face.expression.smileScore = nil
            face.expression.hasSmile = false
        }
        if classifiers.contains(.eyes) {
            face.expression.leftEyeClosedScore = nil
            face.expression.leftEyeClosed = false
            face.expression.rightEyeClosedScore = nil
            face.expression.rightEyeClosed = false
            face.expression.leftEyeOpenness = nil
            face.expression.rightEyeOpenness = nil
        }
        face.withheld |= classifiers.intersection([.smile, .eyes]).rawValue
    }
}
