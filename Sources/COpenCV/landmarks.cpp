// Landmark networks behind the plain C interface in COpenCV.h: MediaPipe's face mesh and iris models and an emotion
// classifier, as ONNX through cv::dnn or OpenVINO, on a rotated square crop of the image (fwcv_roi). No C++
// exception leaves this file.
//
// Crop geometry (see COpenCV.h): crop coordinate q shows image point p = c + k R(a) (q - N/2), k = size / N, and crop
// pixel j is sampled at q = j + kSampleOffset (0: MediaPipe's convention). The warp hands that crop -> image matrix
// to cv::warpAffine with WARP_INVERSE_MAP; the networks' outputs (crop coordinates) are mapped back with the same
// matrix without the offset.
#include "COpenCV.h"
#include "openvino_network.hpp"
#include "shim_guard.hpp"

#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using fwcv_shim::clear_error;
using fwcv_shim::guarded;
using fwcv_shim::write_error;

/// What one kind of network takes and gives.
struct NetSpec {
    const char *what;
    int side;                                // N
    int channels;                            // 3 = RGB planes, 1 = grey
    double scale, offset;                    // input = byte * scale + offset
    std::vector<size_t> output_sizes;        // in the documented order
};

bool spec_for(int kind, NetSpec &spec) {
    switch (kind) {
    case FWCV_NET_MESH:
        spec = {"face mesh model", 192, 3, 1.0 / 255.0, 0.0, {FWCV_MESH_POINTS * 3, 1}};
        return true;
    case FWCV_NET_IRIS:
        spec = {"iris model", 64, 3, 1.0 / 255.0, 0.0, {FWCV_IRIS_CONTOUR_POINTS * 3, FWCV_IRIS_POINTS * 3}};
        return true;
    case FWCV_NET_EMOTION:
        spec = {"emotion model", 64, 1, 2.0 / 255.0, -1.0, {FWCV_EMOTION_CLASSES}};
        return true;
    default:
        return false;
    }
}

/// The ROI is more than this many times the crop side before the image region is shrunk first (INTER_AREA).
constexpr double kShrinkAbove = 2.0;
/// Where crop pixel j samples the crop square: q = j + kSampleOffset. 0 is MediaPipe's own convention (its
/// ImageToTensor maps the ROI corners to pixel coordinates 0 and N), which the models were trained with.
constexpr double kSampleOffset = 0.0;
/// Largest accepted ROI side, image pixels (anything larger is a caller's bug, and the shrink buffer would be huge).
constexpr double kMaxRoiSize = 1 << 16;
/// The most crops one OpenVINO inference takes (a larger call runs in several).
constexpr int kMaxBatch = 64;
/// The most ROIs one batch call accepts (two eyes for each of the mesh's 64 faces).
constexpr int kMaxBatchCall = 128;

} // namespace

struct fwcv_landmark_net {
    int kind = 0;
    std::string path;
    NetSpec spec;
    /// The network: cv::dnn's, or OpenVINO's when `openvino` is set.
    cv::dnn::Net net;
    std::unique_ptr<fwcv_shim::OpenVINONetwork> openvino;
    /// Every output, as the runtime lists them (cv::dnn: its unconnected output layers).
    std::vector<cv::String> all_names;
    /// For each output in the documented order, its name and index in `all_names` (found by element count at
    /// create time).
    std::vector<cv::String> output_names;
    std::vector<size_t> output_index;
    /// `batch` x C x N x N, CV_32F, over `input` (which grows to the largest batch and stays: no allocation per
    /// frame), filled in place for each run.
    cv::Mat blob;
    std::vector<float> input;
    int batch = 0;
    /// Reused buffers: the region cut out and shrunk (large ROIs), the N x N crop, its grey version, the Laplacian.
    cv::Mat shrunk, crop, grey, laplacian;
    std::vector<cv::Mat> outputs;
    /// Each output's floats after `forward`, in the documented order.
    std::vector<const float *> data;
    /// The warp matrix handed to cv::warpAffine.
    cv::Mat warp = cv::Mat(2, 3, CV_64F);

    /// The most crops one inference takes: OpenVINO runs a batch (the networks' batch dimension is left free), OpenCV
    /// one crop at a time.
    int max_batch() const { return openvino ? kMaxBatch : 1; }

    /// Shapes `blob` for `count` crops (1...max_batch()).
    void begin_batch(int count) {
        const size_t per_crop = static_cast<size_t>(spec.channels) * spec.side * spec.side;
        if (input.size() < per_crop * static_cast<size_t>(count)) input.resize(per_crop * static_cast<size_t>(count));
        const int shape[4] = {count, spec.channels, spec.side, spec.side};
        blob = cv::Mat(4, shape, CV_32F, input.data());
        batch = count;
    }

    /// Where crop `index` of the batch goes in `blob`.
    float *slot(int index) {
        return input.data() + static_cast<size_t>(index) * spec.channels * spec.side * spec.side;
    }

    /// Runs the network on `blob` and returns every output (OpenVINO's stay valid until the next run).
    void run_all() {
        if (openvino) {
            outputs = openvino->run(blob);
        } else {
            net.setInput(blob);
            net.forward(outputs, all_names);
        }
    }

    /// Runs the network on the `batch` crops of `blob`, checks the output sizes and points `data` at each output's
    /// floats: crop j's part of output i starts at `data[i] + j * spec.output_sizes[i]` (the outputs keep the batch
    /// order, whatever shape a model gives them).
    void forward() {
        run_all();
        data.clear();
        for (size_t i = 0; i < output_index.size(); ++i) {
            if (output_index[i] >= outputs.size())
                throw std::runtime_error("the network returned " + std::to_string(outputs.size()) + " outputs");
            const cv::Mat &m = outputs[output_index[i]];
            const size_t wanted = spec.output_sizes[i] * static_cast<size_t>(batch);
            if (m.depth() != CV_32F || !m.isContinuous() || m.total() * static_cast<size_t>(m.channels()) != wanted)
                throw std::runtime_error("output " + output_names[i] + " has " + std::to_string(m.total()) +
                                         " elements, expected " + std::to_string(wanted));
            data.push_back(m.ptr<float>());
        }
    }

    /// The crop -> image affine map of `roi` (2 x 3): p = A q + b. With `mirror`, crop x is reflected about the ROI's
    /// centre line first (q.x -> N - q.x).
    void roi_matrix(const fwcv_roi &roi, bool mirror, double m[2][3]) const {
        const double n = spec.side, k = static_cast<double>(roi.size) / n;
        const double a = static_cast<double>(roi.angle_degrees) * CV_PI / 180.0;
        const double c = std::cos(a) * k, s = std::sin(a) * k;
        const double fx = mirror ? -1.0 : 1.0;
        // p = centre + [c -s; s c] * (fx (qx - N/2), qy - N/2)
        m[0][0] = c * fx;
        m[0][1] = -s;
        m[1][0] = s * fx;
        m[1][1] = c;
        m[0][2] = roi.center_x - (m[0][0] + m[0][1]) * n / 2;
        m[1][2] = roi.center_y - (m[1][0] + m[1][1]) * n / 2;
    }

    /// Samples the N x N crop of `roi` from `image` (8-bit, 1 or 3 channels, same channel count as the image) into
    /// `crop`.
    void sample(const cv::Mat &image, const double point_matrix[2][3]) {
        const int n = spec.side;
        const double k = std::hypot(point_matrix[0][0], point_matrix[1][0]);
        // Crop pixel j shows crop coordinate q = j + kSampleOffset. (With 0.5, the centre of [j, j + 1], GENKI's smile
        // accuracy fell from 0.921 to 0.915: the models expect MediaPipe's mapping of the ROI corners to 0 and N.)
        double m[2][3];
        for (int r = 0; r < 2; ++r) {
            m[r][0] = point_matrix[r][0];
            m[r][1] = point_matrix[r][1];
            m[r][2] = point_matrix[r][2] + kSampleOffset * (point_matrix[r][0] + point_matrix[r][1]);
        }
        if (k <= kShrinkAbove) {
            for (int r = 0; r < 2; ++r)
                for (int col = 0; col < 3; ++col) warp.at<double>(r, col) = m[r][col];
            cv::warpAffine(image, crop, warp, cv::Size(n, n), cv::INTER_LINEAR | cv::WARP_INVERSE_MAP,
                           cv::BORDER_CONSTANT, cv::Scalar::all(0));
            return;
        }
        // Large ROI: cut out the image region the crop covers (clipped to the image), shrink it with INTER_AREA by
        // about 1/k so one crop pixel is about one shrunk pixel, and warp from there.
        double minx = 0, maxx = 0, miny = 0, maxy = 0;
        const double corners[4][2] = {{0, 0}, {double(n), 0}, {0, double(n)}, {double(n), double(n)}};
        for (int i = 0; i < 4; ++i) {
            const double x = m[0][0] * corners[i][0] + m[0][1] * corners[i][1] + m[0][2];
            const double y = m[1][0] * corners[i][0] + m[1][1] * corners[i][1] + m[1][2];
            if (i == 0 || x < minx) minx = x;
            if (i == 0 || x > maxx) maxx = x;
            if (i == 0 || y < miny) miny = y;
            if (i == 0 || y > maxy) maxy = y;
        }
        const int w = image.cols, h = image.rows;
        const int x0 = std::min(std::max(static_cast<int>(std::floor(minx)) - 2, 0), w - 1);
        const int y0 = std::min(std::max(static_cast<int>(std::floor(miny)) - 2, 0), h - 1);
        const int x1 = std::max(std::min(static_cast<int>(std::ceil(maxx)) + 2, w), x0 + 1);
        const int y1 = std::max(std::min(static_cast<int>(std::ceil(maxy)) + 2, h), y0 + 1);
        const int rw = std::max(1, static_cast<int>(std::lround((x1 - x0) / k)));
        const int rh = std::max(1, static_cast<int>(std::lround((y1 - y0) / k)));
        cv::resize(image(cv::Rect(x0, y0, x1 - x0, y1 - y0)), shrunk, cv::Size(rw, rh), 0, 0, cv::INTER_AREA);
        // A shrunk pixel u covers region pixel x = (u + 0.5) / sx - 0.5, so u = sx (p - x0) + sx/2 - 0.5.
        const double sx = static_cast<double>(rw) / (x1 - x0), sy = static_cast<double>(rh) / (y1 - y0);
        const double scale[2] = {sx, sy}, origin[2] = {double(x0), double(y0)};
        for (int r = 0; r < 2; ++r) {
            warp.at<double>(r, 0) = scale[r] * m[r][0];
            warp.at<double>(r, 1) = scale[r] * m[r][1];
            warp.at<double>(r, 2) = scale[r] * (m[r][2] - origin[r]) + scale[r] / 2 - 0.5;
        }
        cv::warpAffine(shrunk, crop, warp, cv::Size(n, n), cv::INTER_LINEAR | cv::WARP_INVERSE_MAP, cv::BORDER_CONSTANT,
                       cv::Scalar::all(0));
    }

    /// Fills crop `index` of `blob` from `crop` (BGR or grey): RGB planes (grey copied to all three) or one grey
    /// plane.
    void fill_blob(int index) {
        const int n = spec.side;
        const float scale = static_cast<float>(spec.scale), offset = static_cast<float>(spec.offset);
        float *dst = slot(index);
        const size_t plane = static_cast<size_t>(n) * n;
        if (spec.channels == 1) {
            const cv::Mat *src = &crop;
            if (crop.channels() == 3) {
                cv::cvtColor(crop, grey, cv::COLOR_BGR2GRAY);
                src = &grey;
            }
            for (int y = 0; y < n; ++y) {
                const uint8_t *row = src->ptr<uint8_t>(y);
                float *d = dst + static_cast<size_t>(y) * n;
                for (int x = 0; x < n; ++x) d[x] = row[x] * scale + offset;
            }
            return;
        }
        float *r = dst, *g = dst + plane, *b = dst + 2 * plane;
        for (int y = 0; y < n; ++y) {
            const uint8_t *row = crop.ptr<uint8_t>(y);
            const size_t o = static_cast<size_t>(y) * n;
            if (crop.channels() == 3) {
                for (int x = 0; x < n; ++x) {
                    b[o + x] = row[3 * x] * scale + offset;
                    g[o + x] = row[3 * x + 1] * scale + offset;
                    r[o + x] = row[3 * x + 2] * scale + offset;
                }
            } else {
                for (int x = 0; x < n; ++x) r[o + x] = g[o + x] = b[o + x] = row[x] * scale + offset;
            }
        }
    }

    /// Crops `roi` out of the image into crop `index` of `blob`.
    void prepare(const cv::Mat &image, const double m[2][3], int index = 0) {
        sample(image, m);
        fill_blob(index);
    }

    /// Maps `count` (x, y, z) crop points to image points in place.
    void map_back(const float *src, float *dst, int count, const double m[2][3], double z_scale) const {
        for (int i = 0; i < count; ++i) {
            const double x = src[3 * i], y = src[3 * i + 1], z = src[3 * i + 2];
            dst[3 * i] = static_cast<float>(m[0][0] * x + m[0][1] * y + m[0][2]);
            dst[3 * i + 1] = static_cast<float>(m[1][0] * x + m[1][1] * y + m[1][2]);
            dst[3 * i + 2] = static_cast<float>(z * z_scale);
        }
    }

    /// Variance of the 3 x 3 Laplacian of the grey crop over its central half (see fwcv_mesh_result).
    double sharpness() {
        const cv::Mat *src = &crop;
        if (crop.channels() == 3) {
            cv::cvtColor(crop, grey, cv::COLOR_BGR2GRAY);
            src = &grey;
        }
        const int n = spec.side;
        // A sub-matrix: the filter reads the real neighbours just outside the centre, not a replicated border.
        cv::Laplacian((*src)(cv::Rect(n / 4, n / 4, n / 2, n / 2)), laplacian, CV_64F, 1);
        cv::Scalar mean, deviation;
        cv::meanStdDev(laplacian, mean, deviation);
        return deviation[0] * deviation[0];
    }
};

namespace {

bool check_image(const uint8_t *pixels, int width, int height, int stride, int channels, const fwcv_roi *roi,
                 const char *what, char *err, size_t errlen) {
    if (pixels == nullptr || width <= 0 || height <= 0 || (channels != 1 && channels != 3) ||
        stride < width * channels) {
        write_error(err, errlen, std::string(what) + ": invalid image (size " + std::to_string(width) + "x" +
                                        std::to_string(height) + ", channels " + std::to_string(channels) +
                                        ", stride " + std::to_string(stride) + ")");
        return false;
    }
    if (roi == nullptr || !std::isfinite(roi->center_x) || !std::isfinite(roi->center_y) ||
        !std::isfinite(roi->angle_degrees) || !std::isfinite(roi->size) || !(roi->size > 0) ||
        roi->size > kMaxRoiSize || std::fabs(roi->center_x) > kMaxRoiSize * 4 ||
        std::fabs(roi->center_y) > kMaxRoiSize * 4) {
        write_error(err, errlen,
                       std::string(what) + ": invalid ROI" +
                           (roi == nullptr ? std::string(" (none)")
                                           : " (centre " + std::to_string(roi->center_x) + ", " +
                                                 std::to_string(roi->center_y) + ", size " + std::to_string(roi->size) +
                                                 ", angle " + std::to_string(roi->angle_degrees) + ")"));
        return false;
    }
    return true;
}

bool check_net(const fwcv_landmark_net *net, int kind, const char *what, char *err, size_t errlen) {
    if (net == nullptr) {
        write_error(err, errlen, std::string(what) + ": no network");
        return false;
    }
    if (net->kind != kind) {
        write_error(err, errlen, std::string(what) + ": " + net->path + " was loaded as a " + net->spec.what);
        return false;
    }
    return true;
}

cv::Mat image_header(const uint8_t *pixels, int width, int height, int stride, int channels) {
    return cv::Mat(height, width, CV_8UC(channels), const_cast<uint8_t *>(pixels), static_cast<size_t>(stride));
}

} // namespace

extern "C" {

fwcv_landmark_net *fwcv_landmark_net_create(const char *onnx_path, int kind, int runtime, char *err, size_t errlen) {
    clear_error(err, errlen);
    if (runtime == FWCV_RUNTIME_OPENVINO && !fwov_loaded()) {
        write_error(err, errlen, "OpenVINO is not loaded");
        return nullptr;
    }
    NetSpec spec;
    if (!spec_for(kind, spec)) {
        write_error(err, errlen, "fwcv_landmark_net_create: unknown network kind " + std::to_string(kind));
        return nullptr;
    }
    const std::string path = onnx_path != nullptr ? onnx_path : "";
    if (path.empty() || !std::ifstream(path, std::ios::binary).good()) {
        write_error(err, errlen, std::string(spec.what) + " not found or unreadable: " + path);
        return nullptr;
    }
    fwcv_landmark_net *result = nullptr;
    guarded(err, errlen, std::string("cannot load ") + spec.what + " " + path, [&] {
        auto net = std::make_unique<fwcv_landmark_net>();
        net->kind = kind;
        net->path = path;
        net->spec = spec;
        if (runtime == FWCV_RUNTIME_OPENVINO) {
            // The batch dimension left free: a frame's faces (or eyes) go through in one inference.
            net->openvino = std::make_unique<fwcv_shim::OpenVINONetwork>(
                path, std::vector<int64_t>{-1, spec.channels, spec.side, spec.side}, 1);
            for (size_t i = 0; i < net->openvino->outputs(); ++i) net->all_names.push_back(net->openvino->output_name(i));
        } else {
            net->net = cv::dnn::readNetFromONNX(path);
            if (net->net.empty()) throw std::runtime_error("readNetFromONNX returned an empty network");
            net->net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
            net->net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
            net->all_names = net->net.getUnconnectedOutLayersNames();
        }

        // Dry run on a blank input of the expected shape: proves the input shape is accepted and finds the outputs
        // by their element counts (each expected count must match exactly one output).
        net->begin_batch(1);
        net->blob.setTo(cv::Scalar::all(0));
        net->run_all();
        const std::vector<cv::String> &names = net->all_names;
        const std::vector<cv::Mat> &outputs = net->outputs;
        std::string found;
        for (size_t i = 0; i < outputs.size(); ++i) {
            found += (i ? ", " : "") + names[i] + " [";
            for (int d = 0; d < outputs[i].dims; ++d) found += (d ? "," : "") + std::to_string(outputs[i].size[d]);
            found += "]";
        }
        for (size_t wanted : spec.output_sizes) {
            int match = -1, matches = 0;
            for (size_t i = 0; i < outputs.size(); ++i) {
                if (outputs[i].depth() == CV_32F && outputs[i].total() * static_cast<size_t>(outputs[i].channels()) == wanted) {
                    match = static_cast<int>(i);
                    ++matches;
                }
            }
            if (matches != 1)
                throw std::runtime_error("not a " + std::string(spec.what) + " for input [1," +
                                         std::to_string(spec.channels) + "," + std::to_string(spec.side) + "," +
                                         std::to_string(spec.side) + "]: expected one output of " +
                                         std::to_string(wanted) + " floats, the model gives " + found);
            net->output_names.push_back(names[static_cast<size_t>(match)]);
            net->output_index.push_back(static_cast<size_t>(match));
        }
        // The checked order, once, so the first real call does not pay for it.
        net->forward();
        result = net.release();
    });
    return result;
}

void fwcv_landmark_net_destroy(fwcv_landmark_net *net) { delete net; }

size_t fwcv_landmark_net_input_count(const fwcv_landmark_net *net) {
    if (net == nullptr) return 0;
    return static_cast<size_t>(net->spec.channels) * net->spec.side * net->spec.side;
}

int fwcv_landmark_net_output_count(const fwcv_landmark_net *net) {
    return net == nullptr ? 0 : static_cast<int>(net->output_names.size());
}

const char *fwcv_landmark_net_output_name(const fwcv_landmark_net *net, int index, size_t *element_count) {
    if (net == nullptr || index < 0 || static_cast<size_t>(index) >= net->output_names.size()) return nullptr;
    if (element_count != nullptr) *element_count = net->spec.output_sizes[static_cast<size_t>(index)];
    return net->output_names[static_cast<size_t>(index)].c_str();
}

size_t fwcv_landmark_net_static_shapes(const fwcv_landmark_net *net) {
    return net != nullptr && net->openvino ? net->openvino->static_shapes() : 0;
}

int fwcv_landmark_net_run_raw(fwcv_landmark_net *net, const float *input, size_t input_count, float *output,
                              size_t output_capacity, size_t *output_count, char *err, size_t errlen) {
    clear_error(err, errlen);
    if (output_count != nullptr) *output_count = 0;
    if (net == nullptr || input == nullptr || output == nullptr) {
        write_error(err, errlen, "fwcv_landmark_net_run_raw: no network, input or output buffer");
        return -1;
    }
    const size_t wanted_in = fwcv_landmark_net_input_count(net);
    size_t wanted_out = 0;
    for (size_t size : net->spec.output_sizes) wanted_out += size;
    if (input_count != wanted_in || output_capacity < wanted_out) {
        write_error(err, errlen, std::string("fwcv_landmark_net_run_raw: ") + net->spec.what + " takes " +
                                        std::to_string(wanted_in) + " floats and gives " + std::to_string(wanted_out) +
                                        " (got " + std::to_string(input_count) + " and room for " +
                                        std::to_string(output_capacity) + ")");
        return -1;
    }
    bool ok = guarded(err, errlen, std::string(net->spec.what) + " failed", [&] {
        net->begin_batch(1);
        std::memcpy(net->slot(0), input, wanted_in * sizeof(float));
        net->forward();
        const std::vector<const float *> &data = net->data;
        float *dst = output;
        for (size_t i = 0; i < data.size(); ++i) {
            std::memcpy(dst, data[i], net->spec.output_sizes[i] * sizeof(float));
            dst += net->spec.output_sizes[i];
        }
    });
    if (!ok) return -1;
    if (output_count != nullptr) *output_count = wanted_out;
    return 0;
}

} // extern "C"

namespace {
/// The batched landmark calls' common body: checks the arguments, then runs `rois` through `net` at most
/// `max_batch()` at a time: each crop is warped out of the image (mirrored where `mirrored(i)` says) and `crop(i)`
/// called right after it, then one inference, then `read(i, j, m, z_scale)` for each ROI i (the j-th of its batch,
/// crop matrix m). `out` is zeroed first, and again on failure.
template <typename Result, typename Mirrored, typename Crop, typename Read>
int run_batched(fwcv_landmark_net *net, int kind, const char *what, const char *failure, const uint8_t *pixels,
                int width, int height, int stride, int channels, const fwcv_roi *rois, int count, Result *out,
                char *err, size_t errlen, Mirrored mirrored, Crop crop, Read read) {
    std::memset(out, 0, sizeof(*out) * static_cast<size_t>(count));
    if (!check_net(net, kind, what, err, errlen)) return -1;
    for (int i = 0; i < count; ++i) {
        if (!check_image(pixels, width, height, stride, channels, &rois[i], what, err, errlen)) return -1;
    }
    bool ok = guarded(err, errlen, failure, [&] {
        const cv::Mat image = image_header(pixels, width, height, stride, channels);
        double m[kMaxBatch][2][3];
        for (int first = 0; first < count; first += net->max_batch()) {
            const int n = std::min(net->max_batch(), count - first);
            net->begin_batch(n);
            for (int j = 0; j < n; ++j) {
                net->roi_matrix(rois[first + j], mirrored(first + j), m[j]);
                net->prepare(image, m[j], j);
                crop(first + j);
            }
            net->forward();
            for (int j = 0; j < n; ++j) read(first + j, j, m[j], rois[first + j].size / static_cast<double>(net->spec.side));
        }
    });
    if (!ok) {
        std::memset(out, 0, sizeof(*out) * static_cast<size_t>(count));
        return -1;
    }
    return 0;
}
} // namespace

extern "C" {

int fwcv_face_mesh_batch(fwcv_landmark_net *net, const uint8_t *pixels, int width, int height, int stride, int channels,
                         const fwcv_roi *rois, int count, fwcv_mesh_result *out, char *err, size_t errlen) {
    clear_error(err, errlen);
    if (out == nullptr || rois == nullptr || count < 1 || count > kMaxBatchCall) {
        write_error(err, errlen, "fwcv_face_mesh: no ROI or result buffer, or " + std::to_string(count) + " ROIs (1..." +
                                     std::to_string(kMaxBatchCall) + ")");
        return -1;
    }
    return run_batched(
        net, FWCV_NET_MESH, "fwcv_face_mesh", "face mesh failed", pixels, width, height, stride, channels, rois, count,
        out, err, errlen, [](int) { return false; },
        [&](int i) { out[i].sharpness = static_cast<float>(net->sharpness()); },  // of this crop, before the next
        [&](int i, int j, const double (&m)[2][3], double z_scale) {
            const size_t points = net->spec.output_sizes[0], presence = net->spec.output_sizes[1];
            net->map_back(net->data[0] + j * points, out[i].points, FWCV_MESH_POINTS, m, z_scale);
            out[i].presence = static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(net->data[1][j * presence]))));
        });
}

int fwcv_face_mesh(fwcv_landmark_net *net, const uint8_t *pixels, int width, int height, int stride, int channels,
                   const fwcv_roi *roi, fwcv_mesh_result *out, char *err, size_t errlen) {
    if (roi == nullptr || out == nullptr) {
        clear_error(err, errlen);
        write_error(err, errlen, "fwcv_face_mesh: no ROI or result buffer");
        if (out != nullptr) std::memset(out, 0, sizeof(*out));
        return -1;
    }
    return fwcv_face_mesh_batch(net, pixels, width, height, stride, channels, roi, 1, out, err, errlen);
}

int fwcv_iris_batch(fwcv_landmark_net *net, const uint8_t *pixels, int width, int height, int stride, int channels,
                    const fwcv_roi *rois, const int *mirror, int count, fwcv_iris_result *out, char *err, size_t errlen) {
    clear_error(err, errlen);
    if (out == nullptr || rois == nullptr || mirror == nullptr || count < 1 || count > kMaxBatchCall) {
        write_error(err, errlen, "fwcv_iris: no ROI, mirror flag or result buffer, or " + std::to_string(count) +
                                     " ROIs (1..." + std::to_string(kMaxBatchCall) + ")");
        return -1;
    }
    // Mirrored: the crop matrix itself reflects crop x about the centre line, so sampling with it gives the flipped
    // crop and mapping the points with it un-flips them (x -> N - x) on the way back.
    return run_batched(
        net, FWCV_NET_IRIS, "fwcv_iris", "iris failed", pixels, width, height, stride, channels, rois, count, out, err,
        errlen, [&](int i) { return mirror[i] != 0; }, [](int) {},
        [&](int i, int j, const double (&m)[2][3], double z_scale) {
            const size_t contour = net->spec.output_sizes[0], iris = net->spec.output_sizes[1];
            net->map_back(net->data[0] + j * contour, out[i].contour, FWCV_IRIS_CONTOUR_POINTS, m, z_scale);
            net->map_back(net->data[1] + j * iris, out[i].iris, FWCV_IRIS_POINTS, m, z_scale);
        });
}

int fwcv_iris(fwcv_landmark_net *net, const uint8_t *pixels, int width, int height, int stride, int channels,
              const fwcv_roi *roi, int mirror, fwcv_iris_result *out, char *err, size_t errlen) {
    if (roi == nullptr || out == nullptr) {
        clear_error(err, errlen);
        write_error(err, errlen, "fwcv_iris: no ROI or result buffer");
        if (out != nullptr) std::memset(out, 0, sizeof(*out));
        return -1;
    }
    return fwcv_iris_batch(net, pixels, width, height, stride, channels, roi, &mirror, 1, out, err, errlen);
}

int fwcv_emotion(fwcv_landmark_net *net, const uint8_t *pixels, int width, int height, int stride, int channels,
                 const fwcv_roi *roi, float probabilities[FWCV_EMOTION_CLASSES], char *err, size_t errlen) {
    clear_error(err, errlen);
    if (probabilities == nullptr) {
        write_error(err, errlen, "fwcv_emotion: no result buffer");
        return -1;
    }
    std::fill(probabilities, probabilities + FWCV_EMOTION_CLASSES, 0.f);
    if (!check_net(net, FWCV_NET_EMOTION, "fwcv_emotion", err, errlen) ||
        !check_image(pixels, width, height, stride, channels, roi, "fwcv_emotion", err, errlen))
        return -1;
    bool ok = guarded(err, errlen, "emotion classifier failed", [&] {
        double m[2][3];
        net->roi_matrix(*roi, false, m);
        net->begin_batch(1);
        net->prepare(image_header(pixels, width, height, stride, channels), m);
        net->forward();
        const std::vector<const float *> &data = net->data;
        std::copy(data[0], data[0] + FWCV_EMOTION_CLASSES, probabilities);
    });
    if (!ok) {
        std::fill(probabilities, probabilities + FWCV_EMOTION_CLASSES, 0.f);
        return -1;
    }
    return 0;
}

} // extern "C"
