// A plain C interface to the parts of OpenCV Facewire uses, so Swift never sees C++.
//
// Every function that can fail takes `err`/`errlen` and writes a NUL-terminated message there.
// No function throws a C++ exception across this boundary. Objects are not thread-safe: use one
// per thread.
#ifndef COPENCV_H
#define COPENCV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// MARK: - Process-wide settings

/// Sets OpenCV's own worker-thread count (process-wide, cv::setNumThreads).
void fwcv_set_num_threads(int threads);

// MARK: - Face detection

/// One detected face, in the pixel coordinates of the image passed to fwcv_detect.
typedef struct fwcv_face {
    float x, y, width, height;
    float score;
    /// Number of landmark points filled in `landmarks`: 5 for YuNet and CenterFace, 2 (the eyes) or 0 for the
    /// cascade.
    int landmark_count;
    /// (x, y) points in the model's own order: for YuNet and CenterFace that is
    /// (subject's right eye, subject's left eye, nose, right mouth corner, left mouth corner).
    /// Callers must order eyes by x, not by index.
    float landmarks[10];
} fwcv_face;

typedef struct fwcv_detector fwcv_detector;

/// What runs a network: OpenCV's cv::dnn, or OpenVINO (COpenVINO's fwov_load must have succeeded).
enum { FWCV_RUNTIME_OPENCV = 0, FWCV_RUNTIME_OPENVINO = 1 };

/// YuNet (2022mar ONNX model) through cv::FaceDetectorYN, or run by OpenVINO with FaceDetectorYN's pre- and
/// post-processing (the same faces, row for row).
fwcv_detector *fwcv_yunet_create(const char *model_path, float score_threshold, float nms_threshold, int top_k,
                                 int runtime, char *err, size_t errlen);

/// CenterFace through cv::dnn (one cv::dnn::Net per input size) or OpenVINO, with our own output decoding.
fwcv_detector *fwcv_centerface_create(const char *model_path, float score_threshold, float nms_threshold,
                                      int runtime, char *err, size_t errlen);

/// Haar/LBP cascade fallback (no landmarks unless `eye_cascade_path` is given, then eyes only).
fwcv_detector *fwcv_cascade_create(const char *face_cascade_path, const char *eye_cascade_path, char *err,
                                   size_t errlen);

/// Detects faces in an 8-bit image with `channels` 1 (grey) or 3 (BGR), rows `stride` bytes apart.
/// `input_width` > 0 asks the detector to run on the image scaled to that width (aspect kept); results are
/// always in the coordinates of the image given. Returns the number of faces written (at most `max_faces`,
/// best first), or -1 on error.
int fwcv_detect(fwcv_detector *detector, const uint8_t *pixels, int width, int height, int stride, int channels,
                int input_width, fwcv_face *out, int max_faces, char *err, size_t errlen);

/// Refines the landmarks of tilted faces: for each face at least `min_height` px tall with 5 landmarks whose eye line
/// is at least `min_angle` degrees off level, the face is turned upright into a 128 x 128 patch, detected again there
/// (landmark models are most accurate on upright faces, and under-read roll beyond about 10 degrees) and the new
/// landmarks are mapped back. Boxes and scores are kept. A second pass runs when the first leaves a tilt of 3 degrees
/// or more in the patch. `faces` are in the coordinates of the image given. Returns the number of faces refined, or
/// -1 on error.
int fwcv_refine_tilted(fwcv_detector *detector, const uint8_t *pixels, int width, int height, int stride, int channels,
                       fwcv_face *faces, int count, float min_angle, float min_height, char *err, size_t errlen);

void fwcv_detector_destroy(fwcv_detector *detector);

// MARK: - Video and still-image reading (capture)

typedef struct fwcv_video fwcv_video;

/// Opens a video file with cv::VideoCapture. With `jpeg_packets` non-zero, a video whose packets are JPEG images
/// (motion JPEG) is read without decoding: see fwcv_video_passes_packets and fwcv_video_read_packet.
fwcv_video *fwcv_video_open(const char *path, int jpeg_packets, char *err, size_t errlen);
/// 1 when the video is read as undecoded JPEG packets (fwcv_video_read_packet), 0 when decoded (fwcv_video_read).
int fwcv_video_passes_packets(const fwcv_video *video);
/// Reads the next packet of a motion-JPEG video, undecoded: `*data` holds `*length` bytes, valid until the next
/// call. Returns 1 for a packet, 0 at the end, -1 on error.
int fwcv_video_read_packet(fwcv_video *video, const uint8_t **data, size_t *length, char *err, size_t errlen);
double fwcv_video_fps(const fwcv_video *video);
int64_t fwcv_video_frame_count(const fwcv_video *video);
/// The presentation time of the frame last read, in milliseconds from the start (CAP_PROP_POS_MSEC); < 0 unknown.
double fwcv_video_position_ms(const fwcv_video *video);

/// Reads the next frame as BGR. On 1, `*pixels` points to width*height*3 bytes with rows `*stride` apart, valid
/// until the next call. Returns 1 for a frame, 0 at the end, -1 on error.
int fwcv_video_read(fwcv_video *video, const uint8_t **pixels, int *width, int *height, int *stride, char *err,
                    size_t errlen);
void fwcv_video_close(fwcv_video *video);

/// Decodes a still image file (PNG, BMP, ...) to BGR. The caller frees `*pixels` with fwcv_free.
/// Returns 0 on success, -1 on error.
int fwcv_image_read(const char *path, uint8_t **pixels, int *width, int *height, char *err, size_t errlen);
void fwcv_free(void *pointer);


// MARK: - Face attributes (smile, eyes closed, yaw)
//
// Classifiers on an aligned crop built from a face's 5 landmarks (YuNet or CenterFace order). Reference
// implementation, operating points and measurements: evaluation/expressions/ (RESULTS.md). "Left" is always the
// image's left (smaller x), whatever the detector's landmark order.

/// Bits for `which` in fwcv_face_attributes.
#define FWCV_ATTRIBUTE_SMILE 1
#define FWCV_ATTRIBUTE_EYES 2

typedef struct fwcv_face_attributes_result {
    /// 1 when the smile classifier ran (asked for, and the face is large enough).
    int smile_valid;
    /// In (0, 1); 0.5 at the operating point. `has_smile` is smile_score >= 0.5.
    float smile_score;
    int has_smile;
    /// 1 when the eye classifier ran.
    int eyes_valid;
    /// In (0, 1]; 0.5 at the operating point. Left = image left.
    float left_eye_closed_score, right_eye_closed_score;
    int left_eye_closed, right_eye_closed;
    /// Head yaw in degrees from the landmarks' geometry (always computed when the landmarks are usable): positive
    /// when the face turns toward the image's right.
    int yaw_valid;
    float yaw_degrees;
    /// Diagnostics: raw eye-cascade window counts, smile-cascade window count and the smile's raw score.
    int left_eye_hits, right_eye_hits, smile_hits;
    float smile_raw;
} fwcv_face_attributes_result;

typedef struct fwcv_attributes fwcv_attributes;

/// Loads haarcascade_eye.xml and haarcascade_smile.xml from `cascade_dir` (NULL or "" means
/// /usr/share/opencv4/haarcascades).
fwcv_attributes *fwcv_attributes_create(const char *cascade_dir, char *err, size_t errlen);

/// Classifies one face of an 8-bit image (`channels` 1 = grey or 3 = BGR, rows `stride` bytes apart), given its
/// 5 landmarks in that image's coordinates, in the detector's order (x, y pairs). `which` is a combination of
/// FWCV_ATTRIBUTE_* bits; with 0 only the yaw is computed (no pixel is read). The eye classifier needs the eyes at
/// least 20 px apart, the smile classifier 32 px; smaller faces get valid flag 0. Returns 0 (see the valid flags) or
/// -1 on error.
int fwcv_face_attributes(fwcv_attributes *attributes, const uint8_t *pixels, int width, int height, int stride,
                         int channels, const float landmarks[10], int which, fwcv_face_attributes_result *out,
                         char *err, size_t errlen);

void fwcv_attributes_destroy(fwcv_attributes *attributes);

// MARK: - Landmark networks (MediaPipe face mesh and iris, an emotion classifier)
//
// ONNX models run with cv::dnn (backend OpenCV, target CPU) on a square crop of the image. The crop is described by a
// fwcv_roi; a crop of N x N pixels (N = the network's input side) is sampled so that crop pixel q (each coordinate
// 0..N) shows image point
//
//     p = c + (size / N) * R(angle) * (q - N/2),   R(a) = [cos a, -sin a; sin a, cos a],
//
// i.e. the crop's x axis points along (cos a, sin a) in the (y-down) image. Crop pixel j shows the image at q = j,
// as MediaPipe's ImageToTensor does (it maps the ROI's corners to crop coordinates 0 and N), which is what the models
// were trained with: sampling at the pixel centres q = j + 0.5 instead lowered GENKI's smile accuracy from 0.921 to
// 0.915. The same formula maps the networks' crop-pixel outputs back to the image (MediaPipe's LandmarkProjection).
// A mirrored crop is reflected about the ROI's centre line (q.x -> N - q.x), and so are its outputs.
// Sampling is bilinear (cv::warpAffine), with black outside the image. When the ROI is more than 2N image pixels
// wide, the image region it covers is first shrunk
// with INTER_AREA to about N pixels across, then warped, so that a large face is averaged rather than aliased (as in
// the face-attribute crop).
//
// Every network object holds one cv::dnn::Net and its preallocated buffers: not thread-safe, use one per thread.

/// A square region of an image: side `size` image pixels, centred at (center_x, center_y), rotated by `angle_degrees`
/// (the same sense as a face's roll: atan2(dy, dx) of the eye line in y-down image coordinates, so a crop with the
/// face's roll shows the face upright).
typedef struct fwcv_roi {
    float center_x, center_y, size, angle_degrees;
} fwcv_roi;

/// Network kinds for fwcv_landmark_net_create.
/// - FWCV_NET_MESH: MediaPipe face_landmark.onnx. Input [1,3,192,192] RGB, byte/255. Outputs, in this order:
///   468 x (x, y, z) landmarks in crop pixels (1404 floats, e.g. `conv2d_20`), then 1 face-presence logit
///   (`conv2d_30`).
/// - FWCV_NET_IRIS: MediaPipe iris_landmark.onnx. Input [1,3,64,64] RGB, byte/255. Outputs, in this order:
///   71 x (x, y, z) eye contour and brow points (213 floats, `output_eyes_contours_and_brows`), then 5 x (x, y, z)
///   iris points, centre first (15 floats, `output_iris`). Trained on the subject's LEFT eye: a right eye is given
///   mirrored (fwcv_iris's `mirror`).
/// - FWCV_NET_EMOTION: an expression classifier such as fer_emotion.onnx. Input [1,1,64,64] grey,
///   (byte/255 - 0.5) * 2. One output: 7 class probabilities.
/// Outputs are recognised by their element counts (1404 and 1, 213 and 15, 7), not by their names.
#define FWCV_NET_MESH 1
#define FWCV_NET_IRIS 2
#define FWCV_NET_EMOTION 3

#define FWCV_MESH_POINTS 468
#define FWCV_IRIS_CONTOUR_POINTS 71
#define FWCV_IRIS_POINTS 5
#define FWCV_EMOTION_CLASSES 7

typedef struct fwcv_landmark_net fwcv_landmark_net;

/// Loads an ONNX model of the given kind, to be run by `runtime` (FWCV_RUNTIME_*), and checks its input and output
/// shapes with one dry run on a blank input. Returns NULL (and a message naming the file) when the file cannot be
/// read or loaded, or its shapes are not the kind's.
fwcv_landmark_net *fwcv_landmark_net_create(const char *onnx_path, int kind, int runtime, char *err, size_t errlen);
void fwcv_landmark_net_destroy(fwcv_landmark_net *net);

/// The number of floats the network takes (C * N * N).
size_t fwcv_landmark_net_input_count(const fwcv_landmark_net *net);
/// The number of outputs (2 for mesh and iris, 1 for emotion).
int fwcv_landmark_net_output_count(const fwcv_landmark_net *net);
/// The model's name of output `index` (in the documented order), and its number of floats in `*element_count`
/// (may be NULL). NULL when `index` is out of range. Valid as long as the net.
const char *fwcv_landmark_net_output_name(const fwcv_landmark_net *net, int index, size_t *element_count);

/// How many input shapes have a network compiled for them alone (OpenVINO: a batch size that recurs; see
/// openvino_network.hpp); 0 on OpenCV.
size_t fwcv_landmark_net_static_shapes(const fwcv_landmark_net *net);

/// Runs the network on an exactly prepared NCHW input of `input_count` floats (fwcv_landmark_net_input_count) and
/// writes all outputs concatenated in the documented order (mesh: 1404 then 1; iris: 213 then 15; emotion: 7),
/// `*output_count` floats in all. Returns 0, or -1 on error (including `output_capacity` too small).
int fwcv_landmark_net_run_raw(fwcv_landmark_net *net, const float *input, size_t input_count, float *output,
                              size_t output_capacity, size_t *output_count, char *err, size_t errlen);

typedef struct fwcv_mesh_result {
    /// 468 x (x, y, z) in image pixels (z: relative depth, same scale as x; smaller is nearer the camera).
    float points[FWCV_MESH_POINTS * 3];
    /// sigmoid of the face-presence logit, in (0, 1).
    float presence;
    /// Blur measure: the variance of the 3 x 3 Laplacian ([0 1 0; 1 -4 1; 0 1 0], grey levels 0..255, CV_64F) of the
    /// grey 192 x 192 crop over its central 96 x 96 pixels (the middle 50% x 50%, away from the background). Higher
    /// is sharper; depends on the face's texture and contrast as well as focus.
    float sharpness;
} fwcv_mesh_result;

/// Runs the face mesh on the ROI of an 8-bit image (`channels` 1 = grey or 3 = BGR, rows `stride` bytes apart).
/// Returns 0, or -1 on error.
int fwcv_face_mesh(fwcv_landmark_net *net, const uint8_t *pixels, int width, int height, int stride, int channels,
                   const fwcv_roi *roi, fwcv_mesh_result *out, char *err, size_t errlen);
/// The face mesh on `count` ROIs (1...128) of one image: `out[i]` for `rois[i]`. On OpenVINO in one inference (up to
/// 64 at a time), on OpenCV one after another; the same results either way. Returns 0, or -1 (every result zeroed).
int fwcv_face_mesh_batch(fwcv_landmark_net *net, const uint8_t *pixels, int width, int height, int stride, int channels,
                         const fwcv_roi *rois, int count, fwcv_mesh_result *out, char *err, size_t errlen);

typedef struct fwcv_iris_result {
    /// 71 x (x, y, z) eye contour and brow points, image pixels.
    float contour[FWCV_IRIS_CONTOUR_POINTS * 3];
    /// 5 x (x, y, z) iris points (centre first), image pixels.
    float iris[FWCV_IRIS_POINTS * 3];
} fwcv_iris_result;

/// Runs the iris network on the ROI. With `mirror` nonzero the crop is flipped horizontally (about the ROI's centre
/// line) before inference and the points' crop x un-flipped (x -> N - x) before mapping back, as MediaPipe does for
/// the subject's right eye. Points are in image pixels either way. Returns 0, or -1 on error.
int fwcv_iris(fwcv_landmark_net *net, const uint8_t *pixels, int width, int height, int stride, int channels,
              const fwcv_roi *roi, int mirror, fwcv_iris_result *out, char *err, size_t errlen);
/// The iris network on `count` ROIs (1...128), `mirror[i]` for `rois[i]`, as fwcv_face_mesh_batch batches the mesh.
int fwcv_iris_batch(fwcv_landmark_net *net, const uint8_t *pixels, int width, int height, int stride, int channels,
                    const fwcv_roi *rois, const int *mirror, int count, fwcv_iris_result *out, char *err, size_t errlen);

/// Runs the emotion classifier on the grey ROI crop: writes its 7 outputs. Returns 0, or -1 on error.
int fwcv_emotion(fwcv_landmark_net *net, const uint8_t *pixels, int width, int height, int stride, int channels,
                 const fwcv_roi *roi, float probabilities[FWCV_EMOTION_CLASSES], char *err, size_t errlen);

// MARK: - Live-view imaging (face crops, drawn snapshots)

/// Warps an 8-bit image (`channels` 1 = grey or 3 = BGR, rows `stride` bytes apart) into `out` (`out_width` x
/// `out_height`, same channels, rows `out_stride` bytes apart): output pixel (x, y) shows the image at pixel
/// (m[0] x + m[1] y + m[2], m[3] x + m[4] y + m[5]) (cv::warpAffine with WARP_INVERSE_MAP; pixel indices, centres at
/// integers), bilinear, black outside the image. With `supersample` s > 1 (at most 16) the warp runs at s times the
/// output size and is shrunk with INTER_AREA (for crops that shrink the image by more than about 2). Returns 0, or -1
/// on error.
int fwcv_warp_affine(const uint8_t *pixels, int width, int height, int stride, int channels, const double matrix[6],
                     int supersample, uint8_t *out, int out_width, int out_height, int out_stride, char *err,
                     size_t errlen);

/// One face to draw into a frame, in its pixel coordinates.
typedef struct fwcv_face_mark {
    float x, y, width, height;
    /// Points (x, y) filled in `points` (0...3: eyes, mouth), drawn as dots.
    int point_count;
    float points[6];
    /// The box's colour, B, G, R; the label's text is black or white, whichever reads on it.
    uint8_t colour[3];
} fwcv_face_mark;

/// Draws one face into an 8-bit image in place: its box, its points, and a label of up to two lines (`title`,
/// `detail`: ASCII, NULL or "" for none) on a filled background above the box (inside its top edge when there is no
/// room above). Lines and text grow with the image: thickness max(1, side / 480) px and text scale max(0.4,
/// side / 1800), `side` being the image's longer side. Coordinates outside the image are clipped; a box with a
/// non-finite or non-positive value is not drawn, nor is a non-finite point. Returns 0, or -1 on error.
int fwcv_draw_face_mark(uint8_t *pixels, int width, int height, int stride, int channels, const fwcv_face_mark *mark,
                        const char *title, const char *detail, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
