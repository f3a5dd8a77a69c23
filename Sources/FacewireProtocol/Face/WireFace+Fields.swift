import FacewireVocabulary

// A face's fields, in one place: how the detector's model (DetectedFace) maps to the wire's Face, what the collector
// accepts of a Face from a worker, and how a Face is printed in the JSON Lines output. A new face field is added to
// protocol/facewire.proto, DetectedFace and this file (ARCHITECTURE.md); WireMappingTests walks every field of the
// proto's Face and fails when one is not mapped here or not printed.

extension WireFace {
    /// The wire form of a detected face.
    public init(_ face: DetectedFace) {
        self.init()
        bounds = .with {
            $0.x = face.bounds.x
            $0.y = face.bounds.y
            $0.width = face.bounds.width
            $0.height = face.bounds.height
        }
        if let point = face.leftEye { leftEye = WirePoint(point) }
        if let point = face.rightEye { rightEye = WirePoint(point) }
        if let point = face.mouth { mouth = WirePoint(point) }
        if let point = face.nose { nose = WirePoint(point) }
        if let angle = face.faceAngle { faceAngle = angle }
        if let yaw = face.yaw { self.yaw = yaw }
        confidence = face.confidence
        let expression = face.expression
        if let score = expression.smileScore {
            smileScore = score
            hasSmile_p = expression.hasSmile
        }
        if let score = expression.leftEyeClosedScore {
            leftEyeClosedScore = score
            leftEyeClosed = expression.leftEyeClosed
        }
        if let score = expression.rightEyeClosedScore {
            rightEyeClosedScore = score
            rightEyeClosed = expression.rightEyeClosed
        }
        if let openness = expression.leftEyeOpenness { leftEyeOpenness = openness }
        if let openness = expression.rightEyeOpenness { rightEyeOpenness = openness }
        if let pitch = face.pitch { self.pitch = pitch }
        if let roll = face.roll { self.roll = roll }
        if let quality = face.quality { self.quality = quality }
        withheld = face.withheld
        expressions = face.actions.map { reading in
            var wire = Facewire_V1_ExpressionReading()
            wire.expression = Facewire_V1_Expression(rawValue: reading.action.rawValue) ?? .unspecified
            wire.score = reading.score
            wire.present = reading.present
            return wire
        }
        skin = face.skin.map(Facewire_V1_SkinSample.init)
        meshSkin = face.meshSkin.map(Facewire_V1_SkinSample.init)
        switch face.attributeSource {
        case .mesh: attributeSource = .mesh
        case .landmarks: attributeSource = .landmarks
        case nil: attributeSource = .none
        }
        if let list = face.landmarks {
            landmarkScheme = list.scheme == .mesh ? .mesh : .five
            var flat: [Float] = []
            flat.reserveCapacity(list.points.count * 2)
            for point in list.points {
                flat.append(point.x)
                flat.append(point.y)
            }
            landmarks = flat
        }
    }
}

extension WireFace {
    /// The classifiers' names by their bit in `DetectionSettings.classifiers` (SPEC 6.1), bits 0...4.
    static let classifierNames = ["smile", "eyes", "pose", "quality", "pulse"]
    /// The verdicts a worker may withhold (SPEC 11.7): what the text tail and the view mark `?`.
    public static let withholdable: Set<String> = ["smile", "eyes"]

    /// `withheld`'s bits by name, in bit order; an unknown bit as `bitN` (SPEC 12.1).
    public var withheldNames: [String] {
        (0..<32).filter { withheld & (1 << $0) != 0 }.map { Self.classifierNames.indices.contains($0) ? Self.classifierNames[$0] : "bit\($0)" }
    }
}

extension Facewire_V1_SkinSample {
    /// A worker's skin sample on the wire.
    init(_ sample: SkinSample) {
        self.init()
        switch sample.region {
        case .forehead: region = .forehead
        case .leftCheek: region = .leftCheek
        case .rightCheek: region = .rightCheek
        }
        r = sample.r
        g = sample.g
        b = sample.b
        pixels = UInt32(clamping: sample.pixels)
    }
}

extension WirePoint {
    public init(_ point: FacePoint) {
        self.init()
        x = point.x
        y = point.y
    }
}

extension WireFace {
    /// Whether every number of this face is finite and within bounds: coordinates within `±maxCoordinate`, scores
    /// within `-1...2`, angles within `±360`. What the collector checks before it accepts a face from a worker.
    public func isPlausible(maxCoordinate: Float) -> Bool {
        func coordinate(_ value: Float) -> Bool { value.isFinite && abs(value) <= maxCoordinate }
        func point(_ point: WirePoint) -> Bool { coordinate(point.x) && coordinate(point.y) }
        func score(_ value: Float) -> Bool { value.isFinite && value >= -1 && value <= 2 }
        let bounds = self.bounds
        guard coordinate(bounds.x), coordinate(bounds.y), coordinate(bounds.width), coordinate(bounds.height),
            bounds.width >= 0, bounds.height >= 0, score(confidence)
        else { return false }
        if hasLeftEye && !point(leftEye) { return false }
        if hasRightEye && !point(rightEye) { return false }
        if hasMouth && !point(mouth) { return false }
        if hasNose && !point(nose) { return false }
        if hasFaceAngle && !(faceAngle.isFinite && abs(faceAngle) <= 360) { return false }
        if hasYaw && !(yaw.isFinite && abs(yaw) <= 360) { return false }
        if hasSmileScore && !score(smileScore) { return false }
        if hasLeftEyeClosedScore && !score(leftEyeClosedScore) { return false }
        if hasRightEyeClosedScore && !score(rightEyeClosedScore) { return false }
        if hasPitch && !(pitch.isFinite && abs(pitch) <= 360) { return false }
        if hasRoll && !(roll.isFinite && abs(roll) <= 360) { return false }
        if hasLeftEyeOpenness && !score(leftEyeOpenness) { return false }
        if hasRightEyeOpenness && !score(rightEyeOpenness) { return false }
        if hasQuality && !score(quality) { return false }
        // At most one reading per known expression, each score within 0...100 (SPEC 14.5).
        guard expressions.count <= FacialAction.allCases.count else { return false }
        var seen = Set<Int>()
        for reading in expressions {
            guard FacialAction(rawValue: reading.expression.rawValue) != nil, seen.insert(reading.expression.rawValue).inserted,
                reading.score.isFinite, (0...100).contains(reading.score)
            else { return false }
        }
        return true
    }
}

extension JSONLines {
    /// Writes `face` as a JSON object (SPEC §12.1).
    static func write(_ face: WireFace, into out: inout JSONBuffer) {
        let b = face.bounds
        out.append("{\"bounds\":{\"x\":")
        out.append(b.x, decimals: 1)
        out.append(",\"y\":")
        out.append(b.y, decimals: 1)
        out.append(",\"width\":")
        out.append(b.width, decimals: 1)
        out.append(",\"height\":")
        out.append(b.height, decimals: 1)
        out.append("}")
        if face.hasLeftEye { point(",\"leftEyePosition\":", face.leftEye, into: &out) }
        if face.hasRightEye { point(",\"rightEyePosition\":", face.rightEye, into: &out) }
        if face.hasMouth { point(",\"mouthPosition\":", face.mouth, into: &out) }
        if face.hasFaceAngle { field(",\"faceAngle\":", face.faceAngle, 1, into: &out) }
        if face.hasYaw { field(",\"yaw\":", face.yaw, 1, into: &out) }
        if face.hasPitch { field(",\"pitch\":", face.pitch, 1, into: &out) }
        if face.hasRoll { field(",\"roll\":", face.roll, 1, into: &out) }
        field(",\"confidence\":", face.confidence, 3, into: &out)
        if face.hasQuality { field(",\"quality\":", face.quality, 3, into: &out) }
        switch face.attributeSource {
        case .mesh: out.append(",\"attributeSource\":\"mesh\"")
        case .landmarks: out.append(",\"attributeSource\":\"landmarks\"")
        case .none, .UNRECOGNIZED: break
        }
        if face.hasSmileScore {
            out.append(",\"hasSmile\":")
            out.append(face.hasSmile_p)
            field(",\"smileScore\":", face.smileScore, 3, into: &out)
        }
        if face.hasLeftEyeClosedScore {
            out.append(",\"leftEyeClosed\":")
            out.append(face.leftEyeClosed)
            field(",\"leftEyeClosedScore\":", face.leftEyeClosedScore, 3, into: &out)
        }
        if face.hasRightEyeClosedScore {
            out.append(",\"rightEyeClosed\":")
            out.append(face.rightEyeClosed)
            field(",\"rightEyeClosedScore\":", face.rightEyeClosedScore, 3, into: &out)
        }
        if face.hasLeftEyeOpenness { field(",\"leftEyeOpenness\":", face.leftEyeOpenness, 3, into: &out) }
        if face.hasRightEyeOpenness { field(",\"rightEyeOpenness\":", face.rightEyeOpenness, 3, into: &out) }
        if !face.expressions.isEmpty {
            // The mesh expressions (SPEC 11.8): {"browRaise":{"score":73.5,"present":true},...}, in wire order.
            out.append(",\"expressions\":{")
            for (index, reading) in face.expressions.enumerated() {
                if index > 0 { out.append(",") }
                out.append(quoted: FacialAction(rawValue: reading.expression.rawValue)?.key ?? "expression\(reading.expression.rawValue)")
                field(":{\"score\":", reading.score, 1, into: &out)
                out.append(",\"present\":")
                out.append(reading.present)
                out.append("}")
            }
            out.append("}")
        }
        if face.withheld != 0 {
            // The classifiers left out because the face cannot tell (SPEC 11.7), by name; an unknown bit as "bitN".
            out.append(",\"withheld\":[")
            for (index, name) in face.withheldNames.enumerated() {
                if index > 0 { out.append(",") }
                out.append(quoted: name)
            }
            out.append("]")
        }
        if face.hasHeartRate { write(heartRate: face.heartRate, into: &out) }
        write(skin: face.skin, named: "skin", into: &out)
        write(skin: face.meshSkin, named: "meshSkin", into: &out)
        if !face.landmarks.isEmpty {
            out.append(face.landmarkScheme == .mesh ? ",\"landmarkScheme\":\"mesh\"" : ",\"landmarkScheme\":\"five\"")
            out.append(",\"landmarks\":[")
            var index = 0
            let values = face.landmarks
            while index + 1 < values.count {
                if index > 0 { out.append(",") }
                out.append("[")
                out.append(values[index], decimals: 1)
                out.append(",")
                out.append(values[index + 1], decimals: 1)
                out.append("]")
                index += 2
            }
            out.append("]")
        }
        if face.trackingID != 0 {
            field(",\"trackingID\":", face.trackingID, into: &out)
            field(",\"trackingFrameCount\":", face.trackingFrameCount, into: &out)
        }
        out.append("}")
    }
}
