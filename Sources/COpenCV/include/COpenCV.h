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

void fwcv_detector_destroy(fwcv_detector *detector);

// MARK: - Video and still-image reading (capture)

typedef struct fwcv_video fwcv_video;

/// Opens a video file with cv::VideoCapture.
fwcv_video *fwcv_video_open(const char *path, char *err, size_t errlen);
double fwcv_video_fps(const fwcv_video *video);
int64_t fwcv_video_frame_count(const fwcv_video *video);

/// Reads the next frame as BGR. On 1, `*pixels` points to width*height*3 bytes with rows `*stride` apart, valid
/// until the next call. Returns 1 for a frame, 0 at the end, -1 on error.
int fwcv_video_read(fwcv_video *video, const uint8_t **pixels, int *width, int *height, int *stride, char *err,
                    size_t errlen);
void fwcv_video_close(fwcv_video *video);

/// Decodes a still image file (PNG, BMP, ...) to BGR. The caller frees `*pixels` with fwcv_free.
/// Returns 0 on success, -1 on error.
int fwcv_image_read(const char *path, uint8_t **pixels, int *width, int *height, char *err, size_t errlen);
void fwcv_free(void *pointer);

#ifdef __cplusplus
}
#endif

#endif
