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

/// YuNet through cv::FaceDetectorYN (2022mar ONNX model).
fwcv_detector *fwcv_yunet_create(const char *model_path, float score_threshold, float nms_threshold, int top_k,
                                 char *err, size_t errlen);

/// CenterFace through cv::dnn with our own output decoding (one cv::dnn::Net per input size).
fwcv_detector *fwcv_centerface_create(const char *model_path, float score_threshold, float nms_threshold,
                                      char *err, size_t errlen);

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

/// Opens a video file with cv::VideoCapture.
fwcv_video *fwcv_video_open(const char *path, char *err, size_t errlen);
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
// implementation, operating points and measurements: scripts/expressions/ (RESULTS.md). "Left" is always the
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

#ifdef __cplusplus
}
#endif

#endif
