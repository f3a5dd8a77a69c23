// The live view's imaging behind the plain C interface in COpenCV.h: one affine warp (a face crop turned level) and
// face marks drawn into a frame (box, tracking ID label, landmark dots). No C++ exception leaves this file.
#include "COpenCV.h"
#include "shim_guard.hpp"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

namespace {

using fwcv_shim::guarded;
using fwcv_shim::write_error;

bool draw_check_image(const uint8_t *pixels, int width, int height, int stride, int channels, const char *what,
                      char *err, size_t errlen) {
    if (pixels != nullptr && width > 0 && height > 0 && (channels == 1 || channels == 3) && stride >= width * channels)
        return true;
    write_error(err, errlen, std::string(what) + ": invalid image (size " + std::to_string(width) + "x" +
                                      std::to_string(height) + ", channels " + std::to_string(channels) + ", stride " +
                                      std::to_string(stride) + ")");
    return false;
}

/// A coordinate as an int, clamped to `limit` either side (`value` must be finite).
int draw_clamped(double value, double limit) { return static_cast<int>(std::lround(std::max(-limit, std::min(limit, value)))); }

} // namespace

extern "C" {

int fwcv_warp_affine(const uint8_t *pixels, int width, int height, int stride, int channels, const double matrix[6],
                     int supersample, uint8_t *out, int out_width, int out_height, int out_stride, char *err,
                     size_t errlen) {
    if (!draw_check_image(pixels, width, height, stride, channels, "fwcv_warp_affine", err, errlen) ||
        !draw_check_image(out, out_width, out_height, out_stride, channels, "fwcv_warp_affine output", err, errlen))
        return -1;
    if (matrix == nullptr || !std::all_of(matrix, matrix + 6, [](double v) { return std::isfinite(v); }) ||
        supersample < 1 || supersample > 16 || static_cast<int64_t>(out_width) * supersample > 32768 ||
        static_cast<int64_t>(out_height) * supersample > 32768) {
        write_error(err, errlen, "fwcv_warp_affine: invalid matrix or supersampling " + std::to_string(supersample));
        return -1;
    }
    const cv::Mat image(height, width, CV_8UC(channels), const_cast<uint8_t *>(pixels), static_cast<size_t>(stride));
    cv::Mat target(out_height, out_width, CV_8UC(channels), out, static_cast<size_t>(out_stride));
    bool ok = guarded(err, errlen, "fwcv_warp_affine", [&] {
        // Output pixel u of the supersampled grid is output pixel (u + 0.5) / s - 0.5.
        const double s = supersample;
        cv::Mat warp(2, 3, CV_64F);
        for (int r = 0; r < 2; ++r) {
            const double a = matrix[3 * r], b = matrix[3 * r + 1], t = matrix[3 * r + 2];
            warp.at<double>(r, 0) = a / s;
            warp.at<double>(r, 1) = b / s;
            warp.at<double>(r, 2) = t + (a + b) * (0.5 / s - 0.5);
        }
        const cv::Size size(out_width * supersample, out_height * supersample);
        if (supersample == 1) {
            cv::warpAffine(image, target, warp, size, cv::INTER_LINEAR | cv::WARP_INVERSE_MAP, cv::BORDER_CONSTANT,
                           cv::Scalar::all(0));
        } else {
            cv::Mat large;
            cv::warpAffine(image, large, warp, size, cv::INTER_LINEAR | cv::WARP_INVERSE_MAP, cv::BORDER_CONSTANT,
                           cv::Scalar::all(0));
            cv::resize(large, target, target.size(), 0, 0, cv::INTER_AREA);
        }
        // `target` wraps the caller's buffer; OpenCV reallocates (and the caller would see nothing) only on a
        // size or type mismatch, which the checks above rule out.
        CV_Assert(target.data == out);
    });
    return ok ? 0 : -1;
}

int fwcv_draw_face_mark(uint8_t *pixels, int width, int height, int stride, int channels, const fwcv_face_mark *mark,
                        const char *title, const char *detail, char *err, size_t errlen) {
    if (!draw_check_image(pixels, width, height, stride, channels, "fwcv_draw_face_mark", err, errlen)) return -1;
    if (mark == nullptr) {
        write_error(err, errlen, "fwcv_draw_face_mark: no mark");
        return -1;
    }
    if (!std::isfinite(mark->x) || !std::isfinite(mark->y) || !std::isfinite(mark->width) ||
        !std::isfinite(mark->height) || !(mark->width > 0) || !(mark->height > 0))
        return 0;  // nothing drawable
    cv::Mat image(height, width, CV_8UC(channels), pixels, static_cast<size_t>(stride));
    bool ok = guarded(err, errlen, "fwcv_draw_face_mark", [&] {
        const double side = std::max(width, height);
        // Anything further out than this is off the image anyway; the clamp keeps ints from overflowing.
        const double limit = 4 * side + 16;
        const int thickness = std::max(1, static_cast<int>(std::lround(side / 480)));
        const double font_scale = std::max(0.4, side / 1800);
        const cv::Scalar colour = channels == 3 ? cv::Scalar(mark->colour[0], mark->colour[1], mark->colour[2])
                                                : cv::Scalar::all((mark->colour[0] + mark->colour[1] + mark->colour[2]) / 3);
        const bool light = 0.114 * mark->colour[0] + 0.587 * mark->colour[1] + 0.299 * mark->colour[2] > 140;
        const cv::Scalar ink = light ? cv::Scalar::all(0) : cv::Scalar::all(255);

        const int x0 = draw_clamped(mark->x, limit), y0 = draw_clamped(mark->y, limit);
        const int x1 = draw_clamped(static_cast<double>(mark->x) + mark->width, limit);
        const int y1 = draw_clamped(static_cast<double>(mark->y) + mark->height, limit);
        cv::rectangle(image, cv::Point(x0, y0), cv::Point(x1, y1), colour, thickness, cv::LINE_AA);

        const int radius = std::max(thickness + 1, std::min(x1 - x0, y1 - y0) / 40);
        for (int k = 0; k < std::min(std::max(mark->point_count, 0), 3); ++k) {
            const float px = mark->points[2 * k], py = mark->points[2 * k + 1];
            if (!std::isfinite(px) || !std::isfinite(py)) continue;
            cv::circle(image, cv::Point(draw_clamped(px, limit), draw_clamped(py, limit)), radius, colour, cv::FILLED,
                       cv::LINE_AA);
        }

        // A box wholly outside the image has no label (which would otherwise be pulled in to its edge).
        if (x1 <= 0 || y1 <= 0 || x0 >= width || y0 >= height) return;

        // The label: up to two lines on a filled background in the box's colour, above the box when there is room,
        // else inside its top edge; kept inside the image horizontally.
        const char *lines[2] = {title, detail};
        const int font = cv::FONT_HERSHEY_SIMPLEX, pad = std::max(2, thickness * 2);
        int label_width = 0, label_height = 0, baselines[2] = {0, 0};
        cv::Size sizes[2];
        for (int k = 0; k < 2; ++k) {
            if (lines[k] == nullptr || lines[k][0] == '\0') continue;
            sizes[k] = cv::getTextSize(lines[k], font, font_scale, thickness, &baselines[k]);
            label_width = std::max(label_width, sizes[k].width + 2 * pad);
            label_height += sizes[k].height + baselines[k] + pad;
        }
        if (label_width == 0) return;
        label_height += pad;
        int left = std::min(std::max(x0, 0), std::max(0, width - label_width));
        int top = y0 - thickness - label_height >= 0 ? y0 - thickness - label_height : std::max(y0, 0) + thickness;
        top = std::min(top, std::max(0, height - label_height));
        cv::rectangle(image, cv::Rect(left, top, label_width, label_height), colour, cv::FILLED);
        int y = top + pad;
        for (int k = 0; k < 2; ++k) {
            if (lines[k] == nullptr || lines[k][0] == '\0') continue;
            y += sizes[k].height;
            cv::putText(image, lines[k], cv::Point(left + pad, y), font, font_scale, ink, thickness, cv::LINE_AA);
            y += baselines[k] + pad;
        }
    });
    return ok ? 0 : -1;
}

} // extern "C"
