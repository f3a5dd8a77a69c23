// Face attributes behind the plain C interface in COpenCV.h: smile, eyes closed (per eye) and yaw, from a face's
// 5 detector landmarks and the frame's pixels. No C++ exception leaves this file.
//
// This is a port of evaluation/expressions/fwexpr.py (the reference implementation, measured by
// evaluation/expressions/measure.py; results in evaluation/expressions/RESULTS.md). Keep every constant in step
// with it.
//
// Method: one similarity warp puts the eyes level in a 128x128 grey crop (image-left eye at (40, 48), image-right
// eye at (88, 48)); the classifiers look at fixed rectangles of that crop.
// - Eyes: raw haarcascade_eye windows (minNeighbors 0) in a 48x40 patch around each eye. An open eye yields tens of
//   windows, a closed one almost none: closed when the count is <= kEyeClosedMaxHits.
// - Smile: haarcascade_smile raw windows under the nose, plus the nasolabial-fold gradient energy in both cheeks,
//   plus the curvature of the darkest line across the mouth: raw = hits/100 + 0.5*fold + 2*curve >= 0.956.
// - Yaw: atan(0.92 * nose offset from the eye midpoint / half the eye distance), roll removed; positive when the face
//   turns toward the image's right.
#include "COpenCV.h"
#include "shim_guard.hpp"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using fwcv_shim::guarded;
using fwcv_shim::write_error;

// Aligned crop.
constexpr int kCrop = 128;
constexpr double kEyeY = 48.0, kEyeDist = 48.0;
constexpr double kEyeLX = (kCrop - kEyeDist) / 2, kEyeRX = (kCrop + kEyeDist) / 2;
// Below these eye distances (image pixels) a classifier does not run (RESULTS.md, "minimum face size").
constexpr double kMinEyeDistanceEyes = 20.0, kMinEyeDistanceSmile = 32.0;

// Eyes.
constexpr int kEyeHalfW = 24, kEyeHalfH = 20, kEyeMin = 18, kEyeMax = 44;
constexpr double kEyeScale = 1.1;
constexpr int kEyeClosedMaxHits = 7;

// Smile.
constexpr int kSmileY0 = 72, kSmileY1 = 124, kSmileX0 = 16, kSmileX1 = 112;
constexpr int kSmileMinW = 43, kSmileMinH = 21;
constexpr double kSmileScale = 1.1;
constexpr double kFoldWeight = 0.5, kCurveWeight = 2.0, kSmileThreshold = 0.956;
const cv::Rect kSkin(30, 60, 68, 20);        // x, y, w, h: band across cheeks and nose, normalises gradients
const cv::Rect kLeftCheek(16, 66, 30, 38);   // image-left cheek
const cv::Rect kRightCheek(82, 66, 30, 38);  // image-right cheek
constexpr int kCurveColumns = 13, kCurveHalfWindow = 8;

// Yaw: E/D of a generic head (MediaPipe canonical face: eye half-distance 3.4, nose tip 3.7 in front of the eyes).
constexpr double kYawK = 0.92;

int rint_half_up(double v) { return static_cast<int>(std::floor(v + 0.5)); }

struct Points {
    cv::Point2d left_eye, right_eye, nose, left_mouth, right_mouth;  // left = smaller x
};

Points ordered(const double p[10]) {
    Points o;
    cv::Point2d e0(p[0], p[1]), e1(p[2], p[3]), m0(p[6], p[7]), m1(p[8], p[9]);
    o.left_eye = e0.x <= e1.x ? e0 : e1;
    o.right_eye = e0.x <= e1.x ? e1 : e0;
    o.nose = cv::Point2d(p[4], p[5]);
    o.left_mouth = m0.x <= m1.x ? m0 : m1;
    o.right_mouth = m0.x <= m1.x ? m1 : m0;
    return o;
}

/// Image -> crop similarity (2x3, CV_64F); false when the eyes coincide.
bool align_matrix(const double p[10], double m[2][3]) {
    Points o = ordered(p);
    double dx = o.right_eye.x - o.left_eye.x, dy = o.right_eye.y - o.left_eye.y;
    double d = std::hypot(dx, dy);
    if (!(d >= 1e-3)) return false;
    double s = kEyeDist / d;
    double c = s * dx / d, si = s * dy / d;
    m[0][0] = c;
    m[0][1] = si;
    m[1][0] = -si;
    m[1][1] = c;
    m[0][2] = kEyeLX - (c * o.left_eye.x + si * o.left_eye.y);
    m[1][2] = kEyeY - (-si * o.left_eye.x + c * o.left_eye.y);
    return true;
}

/// The aligned grey crop: only the covered image region is converted and (when shrinking) resized with INTER_AREA
/// before one warpAffine. Same arithmetic as fwexpr.aligned_crop.
cv::Mat aligned_crop(const cv::Mat &image, const double m[2][3]) {
    cv::Mat mm(2, 3, CV_64F), inv;
    for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 3; ++c) mm.at<double>(r, c) = m[r][c];
    cv::invertAffineTransform(mm, inv);
    const double *i0 = inv.ptr<double>(0), *i1 = inv.ptr<double>(1);
    const double corners[4][2] = {{0, 0}, {kCrop, 0}, {0, kCrop}, {kCrop, kCrop}};
    double minx = 0, maxx = 0, miny = 0, maxy = 0;
    for (int k = 0; k < 4; ++k) {
        double x = i0[0] * corners[k][0] + i0[1] * corners[k][1] + i0[2];
        double y = i1[0] * corners[k][0] + i1[1] * corners[k][1] + i1[2];
        if (k == 0 || x < minx) minx = x;
        if (k == 0 || x > maxx) maxx = x;
        if (k == 0 || y < miny) miny = y;
        if (k == 0 || y > maxy) maxy = y;
    }
    const int w = image.cols, h = image.rows;
    int x0 = std::min(std::max(static_cast<int>(std::floor(minx)) - 2, 0), w - 1);
    int y0 = std::min(std::max(static_cast<int>(std::floor(miny)) - 2, 0), h - 1);
    int x1 = std::max(std::min(static_cast<int>(std::ceil(maxx)) + 2, w), x0 + 1);
    int y1 = std::max(std::min(static_cast<int>(std::ceil(maxy)) + 2, h), y0 + 1);
    cv::Mat roi = image(cv::Rect(x0, y0, x1 - x0, y1 - y0)), grey;
    if (roi.channels() == 3)
        cv::cvtColor(roi, grey, cv::COLOR_BGR2GRAY);
    else
        grey = roi;

    const double s = std::hypot(m[0][0], m[0][1]);
    const int rw = std::max(1, rint_half_up((x1 - x0) * s)), rh = std::max(1, rint_half_up((y1 - y0) * s));
    cv::Mat warp(2, 3, CV_64F), src;
    if (s >= 1.0 || rw < 2 || rh < 2) {
        for (int r = 0; r < 2; ++r) {
            warp.at<double>(r, 0) = m[r][0];
            warp.at<double>(r, 1) = m[r][1];
            warp.at<double>(r, 2) = m[r][2] + (m[r][0] * x0 + m[r][1] * y0);
        }
        src = grey;
    } else {
        cv::resize(grey, src, cv::Size(rw, rh), 0, 0, cv::INTER_AREA);
        const double sx = static_cast<double>(rw) / (x1 - x0), sy = static_cast<double>(rh) / (y1 - y0);
        const double c0 = sx / 2 - 0.5, c1 = sy / 2 - 0.5;
        for (int r = 0; r < 2; ++r) {
            const double a0 = m[r][0] * (1 / sx), a1 = m[r][1] * (1 / sy);
            warp.at<double>(r, 0) = a0;
            warp.at<double>(r, 1) = a1;
            warp.at<double>(r, 2) = m[r][2] + (m[r][0] * x0 + m[r][1] * y0) - (a0 * c0 + a1 * c1);
        }
    }
    cv::Mat crop;
    cv::warpAffine(src, crop, warp, cv::Size(kCrop, kCrop), cv::INTER_LINEAR, cv::BORDER_REPLICATE);
    return crop;
}

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// (centre - ends) height of the darkest row across the mouth, in eye-distance units; > 0 for a U shape.
double lip_curvature(const cv::Mat &blurred, cv::Point2d ml, cv::Point2d mr) {
    const int h = blurred.rows, w = blurred.cols;
    const double cy = (ml.y + mr.y) / 2, cx = (ml.x + mr.x) / 2, half = (mr.x - ml.x) / 2;
    const int y0 = std::min(std::max(rint_half_up(cy - kCurveHalfWindow), 0), h - 1);
    const int y1 = std::min(std::max(rint_half_up(cy + kCurveHalfWindow), y0 + 1), h);
    std::vector<double> ys(kCurveColumns);
    for (int k = 0; k < kCurveColumns; ++k) {
        const double x = cx - half + 2 * half * k / (kCurveColumns - 1);
        const int xi = std::min(std::max(rint_half_up(x), 1), w - 2);
        double best = 0;
        int best_y = y0;
        for (int y = y0; y < y1; ++y) {
            const float *row = blurred.ptr<float>(y);
            const double v = static_cast<double>(row[xi - 1]) + static_cast<double>(row[xi]) + static_cast<double>(row[xi + 1]);
            if (y == y0 || v < best) {
                best = v;
                best_y = y;
            }
        }
        ys[static_cast<size_t>(k)] = best_y;
    }
    const int n = kCurveColumns;
    const double ends = (median_of({ys[0], ys[1], ys[2]}) + median_of({ys[n - 3], ys[n - 2], ys[n - 1]})) / 2;
    const double mid = median_of(std::vector<double>(ys.begin() + (n / 2 - 2), ys.begin() + (n / 2 + 3)));
    return (mid - ends) / kEyeDist;
}

/// Mean of |gx + sign * gy| over `rect` (float gradients, double sums).
double oriented_energy(const cv::Mat &gx, const cv::Mat &gy, const cv::Rect &rect, double sign) {
    double sum = 0;
    for (int y = rect.y; y < rect.y + rect.height; ++y) {
        const float *px = gx.ptr<float>(y), *py = gy.ptr<float>(y);
        for (int x = rect.x; x < rect.x + rect.width; ++x)
            sum += std::fabs(static_cast<double>(px[x]) + sign * static_cast<double>(py[x]));
    }
    return sum / (static_cast<double>(rect.width) * rect.height);
}

double yaw_degrees(const double p[10], const double m[2][3]) {
    auto tx = [&](cv::Point2d q) { return m[0][0] * q.x + m[0][1] * q.y + m[0][2]; };
    Points o = ordered(p);
    // x order is unchanged by the (small-roll) alignment for the eyes, which define it.
    const double le = tx(o.left_eye), re = tx(o.right_eye), nose = tx(o.nose);
    const double half = (re - le) / 2;
    return std::atan(kYawK * (nose - (le + re) / 2) / half) * 180.0 / CV_PI;
}

} // namespace

struct fwcv_attributes {
    cv::CascadeClassifier eye;
    cv::CascadeClassifier smile;
};

extern "C" {

fwcv_attributes *fwcv_attributes_create(const char *cascade_dir, char *err, size_t errlen) {
    if (err != nullptr && errlen > 0) err[0] = '\0';
    std::string dir = cascade_dir != nullptr && cascade_dir[0] != '\0' ? cascade_dir : "/usr/share/opencv4/haarcascades";
    if (dir.back() != '/') dir += '/';
    fwcv_attributes *result = nullptr;
    guarded(err, errlen, "face attribute cascades failed to load", [&] {
        auto attributes = std::make_unique<fwcv_attributes>();
        const std::pair<cv::CascadeClassifier *, const char *> cascades[] = {
            {&attributes->eye, "haarcascade_eye.xml"}, {&attributes->smile, "haarcascade_smile.xml"}};
        for (const auto &[classifier, name] : cascades) {
            const std::string path = dir + name;
            if (!std::ifstream(path).good()) throw std::runtime_error("not found or unreadable: " + path);
            if (!classifier->load(path) || classifier->empty()) throw std::runtime_error("not a valid cascade file: " + path);
        }
        result = attributes.release();
    });
    return result;
}

int fwcv_face_attributes(fwcv_attributes *attributes, const uint8_t *pixels, int width, int height, int stride,
                         int channels, const float landmarks[10], int which, fwcv_face_attributes_result *out,
                         char *err, size_t errlen) {
    if (err != nullptr && errlen > 0) err[0] = '\0';
    if (out == nullptr) {
        write_error(err, errlen, "fwcv_face_attributes: no result buffer");
        return -1;
    }
    std::memset(out, 0, sizeof(*out));
    if (attributes == nullptr || landmarks == nullptr) {
        write_error(err, errlen, "fwcv_face_attributes: no classifier or no landmarks");
        return -1;
    }
    if (pixels == nullptr || width <= 0 || height <= 0 || (channels != 1 && channels != 3) || stride < width * channels) {
        write_error(err, errlen, "fwcv_face_attributes: invalid image (size " + std::to_string(width) + "x" +
                                          std::to_string(height) + ", channels " + std::to_string(channels) +
                                          ", stride " + std::to_string(stride) + ")");
        return -1;
    }
    double p[10];
    for (int k = 0; k < 10; ++k) {
        if (!std::isfinite(landmarks[k])) return 0;  // nothing valid
        p[k] = landmarks[k];
    }
    double m[2][3];
    if (!align_matrix(p, m)) return 0;
    out->yaw_degrees = static_cast<float>(yaw_degrees(p, m));
    out->yaw_valid = std::isfinite(out->yaw_degrees) ? 1 : 0;
    Points o = ordered(p);
    const double eye_distance = std::hypot(o.right_eye.x - o.left_eye.x, o.right_eye.y - o.left_eye.y);
    const bool want_smile = (which & FWCV_ATTRIBUTE_SMILE) != 0 && eye_distance >= kMinEyeDistanceSmile;
    const bool want_eyes = (which & FWCV_ATTRIBUTE_EYES) != 0 && eye_distance >= kMinEyeDistanceEyes;
    if (!want_smile && !want_eyes) return 0;

    bool ok = guarded(err, errlen, "face attributes failed", [&] {
        cv::Mat image(height, width, CV_8UC(channels), const_cast<uint8_t *>(pixels), static_cast<size_t>(stride));
        cv::Mat crop = aligned_crop(image, m);
        if (want_eyes) {
            int hits[2];
            const double centres[2] = {kEyeLX, kEyeRX};
            for (int side = 0; side < 2; ++side) {
                const int cx = rint_half_up(centres[side]), cy = rint_half_up(kEyeY);
                cv::Mat patch = crop(cv::Rect(cx - kEyeHalfW, cy - kEyeHalfH, 2 * kEyeHalfW, 2 * kEyeHalfH));
                std::vector<cv::Rect> found;
                attributes->eye.detectMultiScale(patch, found, kEyeScale, 0, 0, cv::Size(kEyeMin, kEyeMin),
                                                 cv::Size(kEyeMax, kEyeMax));
                hits[side] = static_cast<int>(found.size());
            }
            const double k = kEyeClosedMaxHits + 0.5;
            out->left_eye_hits = hits[0];
            out->right_eye_hits = hits[1];
            out->left_eye_closed_score = static_cast<float>(k / (k + hits[0]));
            out->right_eye_closed_score = static_cast<float>(k / (k + hits[1]));
            out->left_eye_closed = hits[0] <= kEyeClosedMaxHits;
            out->right_eye_closed = hits[1] <= kEyeClosedMaxHits;
            out->eyes_valid = 1;
        }
        if (want_smile) {
            std::vector<cv::Rect> found;
            attributes->smile.detectMultiScale(crop(cv::Rect(kSmileX0, kSmileY0, kSmileX1 - kSmileX0, kSmileY1 - kSmileY0)),
                                               found, kSmileScale, 0, 0, cv::Size(kSmileMinW, kSmileMinH));
            cv::Mat f, b1, b15, gx, gy;
            crop.convertTo(f, CV_32F);
            const double skin = cv::mean(f(kSkin))[0] + 1.0;
            cv::GaussianBlur(f, b1, cv::Size(), 1.0);
            cv::Sobel(b1, gx, CV_32F, 1, 0);
            cv::Sobel(b1, gy, CV_32F, 0, 1);
            // The nasolabial folds deepen in a smile: gradient energy along each fold's normal.
            const double fold = (oriented_energy(gx, gy, kLeftCheek, +1) + oriented_energy(gx, gy, kRightCheek, -1)) / skin;
            cv::GaussianBlur(f, b15, cv::Size(), 1.5);
            auto tx = [&](cv::Point2d q) {
                return cv::Point2d(m[0][0] * q.x + m[0][1] * q.y + m[0][2], m[1][0] * q.x + m[1][1] * q.y + m[1][2]);
            };
            cv::Point2d a = tx(cv::Point2d(p[6], p[7])), b = tx(cv::Point2d(p[8], p[9]));
            const double curve = a.x <= b.x ? lip_curvature(b15, a, b) : lip_curvature(b15, b, a);
            const int hits = static_cast<int>(found.size());
            const double raw = hits / 100.0 + kFoldWeight * fold + kCurveWeight * curve;
            out->smile_hits = hits;
            out->smile_raw = static_cast<float>(raw);
            out->smile_score = static_cast<float>(1.0 / (1.0 + std::exp(-(raw - kSmileThreshold) / 0.1)));
            out->has_smile = raw >= kSmileThreshold;
            out->smile_valid = 1;
        }
    });
    if (!ok) {
        std::memset(out, 0, sizeof(*out));
        return -1;
    }
    return 0;
}

void fwcv_attributes_destroy(fwcv_attributes *attributes) { delete attributes; }

} // extern "C"
