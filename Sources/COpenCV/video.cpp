// Video and still-image reading for FacewireCapture (see COpenCV.h for the contract).
//
// Every entry point catches all C++ exceptions and reports them through `err`; nothing throws across
// the C boundary. Frames are always handed out as 8-bit BGR.

#include "COpenCV.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>
#include <opencv2/videoio/registry.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>

struct fwcv_video {
    cv::VideoCapture capture;
    cv::Mat frame;      // last decoded frame as returned by OpenCV
    cv::Mat converted;  // BGR conversion when the backend returns another layout
    double fps = 0;
    int64_t frame_count = -1;
    bool packets = false;        // reading JPEG packets undecoded (motion JPEG)
    bool pending_packet = false; // `frame` holds a packet read while probing, not yet handed out
};

namespace {

void set_error(char *err, size_t errlen, const std::string &message) {
    if (err == nullptr || errlen == 0) return;
    std::snprintf(err, errlen, "%s", message.c_str());
}

/// Converts any 8/16-bit 1-, 3- or 4-channel image to 8-bit BGR. Returns false for other layouts.
bool to_bgr8(const cv::Mat &source, cv::Mat &out) {
    cv::Mat eight;
    if (source.depth() == CV_8U) {
        eight = source;
    } else if (source.depth() == CV_16U) {
        source.convertTo(eight, CV_8U, 1.0 / 256.0);
    } else {
        return false;
    }
    switch (eight.channels()) {
    case 3: out = eight; return true;
    case 1: cv::cvtColor(eight, out, cv::COLOR_GRAY2BGR); return true;
    case 4: cv::cvtColor(eight, out, cv::COLOR_BGRA2BGR); return true;
    default: return false;
    }
}

/// (Re)opens `capture` on `path`. FFmpeg reads every container we ship. Other backends are tried only when this
/// OpenCV build has no FFmpeg: trying GStreamer on a file FFmpeg rejected only prints warnings and fails too.
bool open_capture(cv::VideoCapture &capture, const char *path) {
    capture.release();
    const int backend = cv::videoio_registry::hasBackend(cv::CAP_FFMPEG) ? cv::CAP_FFMPEG : cv::CAP_ANY;
    return capture.open(path, backend) && capture.isOpened();
}

/// Switches a freshly opened FFmpeg capture to raw packets (CAP_PROP_FORMAT = -1) and reads the first one: true,
/// with the packet kept in `frame` for the first read, when it is a JPEG image (starts with SOI and a marker).
/// False leaves the capture unusable for decoding: the caller opens it again.
bool probe_jpeg_packets(fwcv_video &video) {
    if (video.capture.getBackendName() != "FFMPEG") return false;
    if (!video.capture.set(cv::CAP_PROP_FORMAT, -1)) return false;
    if (!video.capture.read(video.frame) || video.frame.empty()) return false;
    const cv::Mat &packet = video.frame;
    if (packet.type() != CV_8UC1 || packet.rows != 1 || !packet.isContinuous() || packet.cols < 4) return false;
    const uint8_t *bytes = packet.ptr<uint8_t>();
    if (bytes[0] != 0xFF || bytes[1] != 0xD8 || bytes[2] != 0xFF) return false;
    video.pending_packet = true;
    return true;
}

}  // namespace

extern "C" {

fwcv_video *fwcv_video_open(const char *path, int jpeg_packets, char *err, size_t errlen) {
    if (path == nullptr) {
        set_error(err, errlen, "no path given");
        return nullptr;
    }
    fwcv_video *video = nullptr;
    try {
        video = new fwcv_video();
        bool opened = open_capture(video->capture, path);
        if (opened && jpeg_packets) {
            video->packets = probe_jpeg_packets(*video);
            // Not motion JPEG: open again to decode from the first frame.
            if (!video->packets) opened = open_capture(video->capture, path);
        }
        if (!opened) {
            set_error(err, errlen, std::string("OpenCV cannot open video '") + path + "'");
            delete video;
            return nullptr;
        }
        // Ask for BGR frames (the default for FFmpeg; harmless where unsupported).
        if (!video->packets) video->capture.set(cv::CAP_PROP_CONVERT_RGB, 1);
        const double fps = video->capture.get(cv::CAP_PROP_FPS);
        video->fps = (fps > 0 && fps < 1000) ? fps : 0;
        const double count = video->capture.get(cv::CAP_PROP_FRAME_COUNT);
        video->frame_count = count > 0 ? static_cast<int64_t>(count) : -1;
        return video;
    } catch (const std::exception &e) {
        set_error(err, errlen, std::string("cannot open video '") + path + "': " + e.what());
    } catch (...) {
        set_error(err, errlen, std::string("cannot open video '") + path + "': unknown C++ exception");
    }
    delete video;
    return nullptr;
}

double fwcv_video_fps(const fwcv_video *video) {
    return video == nullptr ? 0 : video->fps;
}

double fwcv_video_position_ms(const fwcv_video *video) {
    if (video == nullptr) return -1;
    try {
        return video->capture.get(cv::CAP_PROP_POS_MSEC);
    } catch (...) {
        return -1;
    }
}

int64_t fwcv_video_frame_count(const fwcv_video *video) {
    return video == nullptr ? -1 : video->frame_count;
}

int fwcv_video_read(fwcv_video *video, const uint8_t **pixels, int *width, int *height, int *stride, char *err,
                    size_t errlen) {
    if (video == nullptr || pixels == nullptr || width == nullptr || height == nullptr || stride == nullptr) {
        set_error(err, errlen, "fwcv_video_read: null argument");
        return -1;
    }
    try {
        if (!video->capture.read(video->frame) || video->frame.empty()) return 0;
        cv::Mat bgr;
        if (!to_bgr8(video->frame, bgr)) {
            set_error(err, errlen, "video frame has an unsupported pixel layout (type " +
                                       std::to_string(video->frame.type()) + ")");
            return -1;
        }
        if (bgr.data != video->frame.data) video->converted = bgr;
        const cv::Mat &out = bgr.data == video->frame.data ? video->frame : video->converted;
        *pixels = out.data;
        *width = out.cols;
        *height = out.rows;
        *stride = static_cast<int>(out.step[0]);
        return 1;
    } catch (const std::exception &e) {
        set_error(err, errlen, std::string("cannot read video frame: ") + e.what());
    } catch (...) {
        set_error(err, errlen, "cannot read video frame: unknown C++ exception");
    }
    return -1;
}

int fwcv_video_passes_packets(const fwcv_video *video) {
    return video != nullptr && video->packets ? 1 : 0;
}

int fwcv_video_read_packet(fwcv_video *video, const uint8_t **data, size_t *length, char *err, size_t errlen) {
    if (video == nullptr || data == nullptr || length == nullptr || !video->packets) {
        set_error(err, errlen, "fwcv_video_read_packet: null argument or not in packet mode");
        return -1;
    }
    try {
        if (video->pending_packet) {
            video->pending_packet = false;
        } else if (!video->capture.read(video->frame) || video->frame.empty()) {
            return 0;
        }
        const cv::Mat &packet = video->frame;
        if (packet.type() != CV_8UC1 || !packet.isContinuous()) {
            set_error(err, errlen, "video packet has an unexpected layout (type " + std::to_string(packet.type()) + ")");
            return -1;
        }
        *data = packet.ptr<uint8_t>();
        *length = packet.total();
        return 1;
    } catch (const std::exception &e) {
        set_error(err, errlen, std::string("cannot read video packet: ") + e.what());
    } catch (...) {
        set_error(err, errlen, "cannot read video packet: unknown C++ exception");
    }
    return -1;
}

void fwcv_video_close(fwcv_video *video) {
    if (video == nullptr) return;
    try {
        video->capture.release();
    } catch (...) {
    }
    delete video;
}

int fwcv_image_read(const char *path, uint8_t **pixels, int *width, int *height, char *err, size_t errlen) {
    if (path == nullptr || pixels == nullptr || width == nullptr || height == nullptr) {
        set_error(err, errlen, "fwcv_image_read: null argument");
        return -1;
    }
    *pixels = nullptr;
    try {
        // IMREAD_COLOR gives 8-bit BGR and applies any EXIF orientation, so the result is upright.
        cv::Mat image = cv::imread(path, cv::IMREAD_COLOR);
        if (image.empty()) {
            set_error(err, errlen, std::string("OpenCV cannot read image '") + path + "'");
            return -1;
        }
        cv::Mat bgr;
        if (!to_bgr8(image, bgr)) {
            set_error(err, errlen, std::string("image '") + path + "' has an unsupported pixel layout");
            return -1;
        }
        const size_t row = static_cast<size_t>(bgr.cols) * 3;
        const size_t total = row * static_cast<size_t>(bgr.rows);
        auto *buffer = static_cast<uint8_t *>(std::malloc(total));
        if (buffer == nullptr) {
            set_error(err, errlen, "out of memory");
            return -1;
        }
        for (int y = 0; y < bgr.rows; ++y) std::memcpy(buffer + row * y, bgr.ptr(y), row);
        *pixels = buffer;
        *width = bgr.cols;
        *height = bgr.rows;
        return 0;
    } catch (const std::exception &e) {
        set_error(err, errlen, std::string("cannot read image '") + path + "': " + e.what());
    } catch (...) {
        set_error(err, errlen, std::string("cannot read image '") + path + "': unknown C++ exception");
    }
    return -1;
}

void fwcv_free(void *pointer) {
    std::free(pointer);
}

}  // extern "C"
