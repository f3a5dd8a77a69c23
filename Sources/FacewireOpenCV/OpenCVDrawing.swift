import COpenCV
import FacewireImage

/// The live view's imaging calls: warps (face crops) and drawn face marks.
public enum OpenCVDrawing {
    /// Warps `image` into `output` (same format): output pixel (x, y) shows the image at
    /// (m0 x + m1 y + m2, m3 x + m4 y + m5), bilinear, black outside; `supersample` > 1 warps at that multiple and
    /// shrinks with INTER_AREA (`fwcv_warp_affine`).
    public static func warpAffine(_ image: PixelImage, matrix: [Double], supersample: Int, into output: inout PixelImage) throws(OpenCVError) {
        precondition(matrix.count == 6 && output.format == image.format)
        let (width, height) = (Int32(output.width), Int32(output.height))
        let stride = Int32(output.stride)
        try image.bytes.withUnsafeBufferPointer { source throws(OpenCVError) in
            try output.bytes.withUnsafeMutableBufferPointer { target throws(OpenCVError) in
                try OpenCVCall.check { err, length in
                    let status = fwcv_warp_affine(
                        source.baseAddress, Int32(image.width), Int32(image.height), Int32(image.stride),
                        Int32(image.format.channels), matrix, Int32(supersample), target.baseAddress, width, height, stride,
                        err, length)
                    return status == 0 ? 0 : -1
                }
            }
        }
    }

    /// One face to draw: its box, up to three points (eyes, mouth), the box's colour.
    public struct FaceMark: Sendable {
        public var x: Float, y: Float, width: Float, height: Float
        public var points: [(x: Float, y: Float)]
        public var colour: (blue: UInt8, green: UInt8, red: UInt8)

        public init(x: Float, y: Float, width: Float, height: Float, points: [(x: Float, y: Float)], colour: (blue: UInt8, green: UInt8, red: UInt8)) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
            self.points = points
            self.colour = colour
        }
    }

    /// Draws `mark` into `image` in place with a label of up to two ASCII lines (`fwcv_draw_face_mark`).
    public static func draw(_ mark: FaceMark, title: String, detail: String, into image: inout PixelImage) throws(OpenCVError) {
        var cMark = fwcv_face_mark()
        cMark.x = mark.x
        cMark.y = mark.y
        cMark.width = mark.width
        cMark.height = mark.height
        let points = mark.points.prefix(3)
        cMark.point_count = Int32(points.count)
        withUnsafeMutableBytes(of: &cMark.points) { raw in
            let floats = raw.bindMemory(to: Float.self)
            for (index, point) in points.enumerated() {
                floats[2 * index] = point.x
                floats[2 * index + 1] = point.y
            }
        }
        cMark.colour = (mark.colour.blue, mark.colour.green, mark.colour.red)
        let (width, height, stride) = (Int32(image.width), Int32(image.height), Int32(image.stride))
        let channels = Int32(image.format.channels)
        try image.bytes.withUnsafeMutableBufferPointer { pixels throws(OpenCVError) in
            try OpenCVCall.check { err, length in
                let status = fwcv_draw_face_mark(pixels.baseAddress, width, height, stride, channels, &cMark, title, detail, err, length)
                return status == 0 ? 0 : -1
            }
        }
    }
}
