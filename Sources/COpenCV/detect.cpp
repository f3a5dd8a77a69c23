// Face detection behind the plain C interface in COpenCV.h: YuNet (cv::FaceDetectorYN, or OpenVINO), CenterFace
// (cv::dnn or OpenVINO, with our own decoding) and Haar/LBP cascades. No C++ exception leaves this file.
#include "COpenCV.h"
#include "openvino_network.hpp"
#include "shim_guard.hpp"

#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace {

using fwcv_shim::clear_error;
using fwcv_shim::OpenVINONetwork;
using fwcv_shim::guarded;
using fwcv_shim::write_error;

bool file_readable(const char *path) {
    if (path == nullptr || path[0] == '\0') return false;
    std::ifstream stream(path, std::ios::binary);
    return stream.good();
}

/// One face in the coordinates of the image a backend was given.
struct Face {
    cv::Rect2f box;
    float score = 0;
    int landmark_count = 0;
    float landmarks[10] = {0};
};

float iou(const cv::Rect2f &a, const cv::Rect2f &b) {
    float inter = (a & b).area();
    float uni = a.area() + b.area() - inter;
    return uni > 0 ? inter / uni : 0.f;
}

/// Greedy non-maximum suppression; `faces` must be sorted best first.
std::vector<Face> nms(const std::vector<Face> &faces, float threshold) {
    std::vector<Face> kept;
    std::vector<bool> suppressed(faces.size(), false);
    for (size_t i = 0; i < faces.size(); ++i) {
        if (suppressed[i]) continue;
        kept.push_back(faces[i]);
        for (size_t j = i + 1; j < faces.size(); ++j) {
            if (!suppressed[j] && iou(faces[i].box, faces[j].box) >= threshold) suppressed[j] = true;
        }
    }
    return kept;
}

cv::Mat as_bgr(const cv::Mat &image) {
    if (image.channels() == 3) return image;
    cv::Mat bgr;
    cv::cvtColor(image, bgr, cv::COLOR_GRAY2BGR);
    return bgr;
}

cv::Mat as_grey(const cv::Mat &image) {
    if (image.channels() == 1) return image;
    cv::Mat grey;
    cv::cvtColor(image, grey, cv::COLOR_BGR2GRAY);
    return grey;
}

/// Pads `image` with black on the right and bottom to at least `min_width` x `min_height` and to multiples of
/// `multiple`. Coordinates in the padded image equal those in the original.
cv::Mat pad_right_bottom(const cv::Mat &image, int min_width, int min_height, int multiple) {
    int w = std::max(image.cols, min_width);
    int h = std::max(image.rows, min_height);
    if (multiple > 1) {
        w = (w + multiple - 1) / multiple * multiple;
        h = (h + multiple - 1) / multiple * multiple;
    }
    if (w == image.cols && h == image.rows) return image;
    cv::Mat padded;
    cv::copyMakeBorder(image, padded, 0, h - image.rows, 0, w - image.cols, cv::BORDER_CONSTANT, cv::Scalar::all(0));
    return padded;
}

} // namespace

/// The base of every backend (the C header only forward-declares it).
struct fwcv_detector {
    virtual ~fwcv_detector() = default;
    /// Detects faces in `image` (8-bit, 1 or 3 channels); results in `image`'s coordinates, any order.
    virtual std::vector<Face> run(const cv::Mat &image) = 0;
};

namespace {

// MARK: - YuNet

class YuNetDetector final : public fwcv_detector {
  public:
    YuNetDetector(std::string model_path, float score_threshold, float nms_threshold, int top_k)
        : model_path_(std::move(model_path)), score_threshold_(score_threshold), nms_threshold_(nms_threshold),
          top_k_(top_k) {}

    std::vector<Face> run(const cv::Mat &image) override {
        // FaceDetectorYN in OpenCV 4.6 throws (or worse) on inputs below ~64 px: pad small images with black.
        cv::Mat input = pad_right_bottom(as_bgr(image), kMinSide, kMinSide, 1);
        cv::Mat rows;
        model_for(cv::Size(input.cols, input.rows))->detect(input, rows);
        std::vector<Face> faces;
        if (rows.empty()) return faces;
        if (rows.type() != CV_32F || rows.cols < 15) throw std::runtime_error("unexpected YuNet output layout");
        for (int r = 0; r < rows.rows; ++r) {
            const float *v = rows.ptr<float>(r);
            Face face;
            face.box = cv::Rect2f(v[0], v[1], v[2], v[3]);
            face.landmark_count = 5;
            for (int k = 0; k < 10; ++k) face.landmarks[k] = v[4 + k];
            face.score = v[14];
            faces.push_back(face);
        }
        return faces;
    }

  private:
    static constexpr int kMinSide = 64;
    static constexpr size_t kMaxModels = 4;

    /// One FaceDetectorYN per input size, most recently used first. Changing a model's input size makes OpenCV
    /// re-allocate the whole network on the next call (milliseconds), and a worker alternates between the frame
    /// size and the landmark-refinement crop on every frame with a tilted face.
    cv::Ptr<cv::FaceDetectorYN> &model_for(cv::Size size) {
        for (auto it = models_.begin(); it != models_.end(); ++it) {
            if (it->first == size) {
                if (it != models_.begin()) models_.splice(models_.begin(), models_, it);
                return models_.front().second;
            }
        }
        cv::Ptr<cv::FaceDetectorYN> model =
            cv::FaceDetectorYN::create(model_path_, "", size, score_threshold_, nms_threshold_, top_k_);
        if (model.empty()) throw std::runtime_error("FaceDetectorYN::create returned nothing");
        models_.emplace_front(size, std::move(model));
        while (models_.size() > kMaxModels) models_.pop_back();
        return models_.front().second;
    }

    std::string model_path_;
    float score_threshold_;
    float nms_threshold_;
    int top_k_;
    std::list<std::pair<cv::Size, cv::Ptr<cv::FaceDetectorYN>>> models_;
};

// MARK: - YuNet on OpenVINO

/// The same network as ``YuNetDetector``, run by OpenVINO instead of OpenCV's cv::dnn, with OpenCV 4.6's
/// FaceDetectorYN pre- and post-processing for the 2022mar model done here: the image as a BGR float blob at its own
/// size, priors at four scales, boxes and landmarks decoded with variances 0.1 / 0.2 (width with the first, height
/// with the second, as FaceDetectorYN 4.6 does), score = sqrt(class × clamped IoU), then cv::dnn::NMSBoxes on the
/// integer boxes. The result is FaceDetectorYN's, row for row (a test compares the two).
class YuNetOpenVINODetector final : public fwcv_detector {
  public:
    YuNetOpenVINODetector(const std::string &model_path, float score_threshold, float nms_threshold, int top_k)
        : network_(model_path, {1, 3, -1, -1}, 1), score_threshold_(score_threshold), nms_threshold_(nms_threshold),
          top_k_(top_k) {
        if (network_.outputs() != 3) throw std::runtime_error("YuNet: expected 3 outputs (loc, conf, iou)");
    }

    std::vector<Face> run(const cv::Mat &image) override {
        cv::Mat input = pad_right_bottom(as_bgr(image), kMinSide, kMinSide, 1);
        const std::vector<cv::Rect2f> &priors = priors_for(cv::Size(input.cols, input.rows));
        cv::dnn::blobFromImage(input, blob_);
        std::vector<cv::Mat> outputs = network_.run(blob_);
        const size_t n = priors.size();
        if (outputs.size() != 3 || outputs[0].total() != n * 14 || outputs[1].total() != n * 2 || outputs[2].total() != n) {
            throw std::runtime_error("unexpected YuNet output layout");
        }
        const float *loc_v = outputs[0].ptr<float>(), *conf_v = outputs[1].ptr<float>(), *iou_v = outputs[2].ptr<float>();
        const float w_in = float(input.cols), h_in = float(input.rows);
        boxes_.clear();
        scores_.clear();
        rows_.clear();
        for (size_t i = 0; i < n; ++i) {
            const cv::Rect2f &p = priors[i];
            const float *loc = loc_v + i * 14;
            float iou_score = std::min(std::max(iou_v[i], 0.f), 1.f);
            float score = std::sqrt(conf_v[i * 2 + 1] * iou_score);
            // NMSBoxes drops every box below the threshold first: decoding them is work for nothing.
            if (score < score_threshold_) continue;
            float cx = (p.x + loc[0] * kVariance0 * p.width) * w_in;
            float cy = (p.y + loc[1] * kVariance0 * p.height) * h_in;
            float w = p.width * std::exp(loc[2] * kVariance0) * w_in;
            float h = p.height * std::exp(loc[3] * kVariance1) * h_in;
            Face face;
            face.box = cv::Rect2f(cx - w / 2, cy - h / 2, w, h);
            face.score = score;
            face.landmark_count = 5;
            for (int k = 0; k < 5; ++k) {
                face.landmarks[2 * k] = (p.x + loc[4 + 2 * k] * kVariance0 * p.width) * w_in;
                face.landmarks[2 * k + 1] = (p.y + loc[5 + 2 * k] * kVariance0 * p.height) * h_in;
            }
            boxes_.emplace_back(int(face.box.x), int(face.box.y), int(face.box.width), int(face.box.height));
            scores_.push_back(score);
            rows_.push_back(face);
        }
        std::vector<int> keep;
        cv::dnn::NMSBoxes(boxes_, scores_, score_threshold_, nms_threshold_, keep, 1.f, top_k_);
        std::vector<Face> faces;
        faces.reserve(keep.size());
        for (int index : keep) faces.push_back(rows_[size_t(index)]);
        return faces;
    }

  private:
    static constexpr int kMinSide = 64;
    static constexpr size_t kMaxPriors = 4;
    static constexpr float kVariance0 = 0.1f;
    static constexpr float kVariance1 = 0.2f;

    /// FaceDetectorYN 4.6's priors for an input of `size`: feature maps at strides 8, 16, 32 and 64 (sizes halved
    /// from ((side + 1) / 2) / 2), three, two, two and three anchors per cell; centre and size relative to the input.
    static std::vector<cv::Rect2f> make_priors(cv::Size size) {
        static const std::vector<std::vector<float>> min_sizes = {
            {10.f, 16.f, 24.f}, {32.f, 48.f}, {64.f, 96.f}, {128.f, 192.f, 256.f}};
        static const int steps[] = {8, 16, 32, 64};
        int fw = ((size.width + 1) / 2) / 2, fh = ((size.height + 1) / 2) / 2;
        std::vector<cv::Rect2f> priors;
        for (size_t level = 0; level < 4; ++level) {
            fw /= 2;
            fh /= 2;
            for (int y = 0; y < fh; ++y) {
                for (int x = 0; x < fw; ++x) {
                    for (float min_size : min_sizes[level]) {
                        priors.emplace_back((x + 0.5f) * steps[level] / size.width, (y + 0.5f) * steps[level] / size.height,
                                            min_size / size.width, min_size / size.height);
                    }
                }
            }
        }
        return priors;
    }

    /// The priors of the last few input sizes, most recently used first (the network itself takes any size).
    const std::vector<cv::Rect2f> &priors_for(cv::Size size) {
        for (auto it = priors_.begin(); it != priors_.end(); ++it) {
            if (it->first == size) {
                if (it != priors_.begin()) priors_.splice(priors_.begin(), priors_, it);
                return priors_.front().second;
            }
        }
        priors_.emplace_front(size, make_priors(size));
        while (priors_.size() > kMaxPriors) priors_.pop_back();
        return priors_.front().second;
    }

    OpenVINONetwork network_;
    float score_threshold_;
    float nms_threshold_;
    int top_k_;
    std::list<std::pair<cv::Size, std::vector<cv::Rect2f>>> priors_;
    // Reused from frame to frame: no allocation per frame once the sizes settled.
    cv::Mat blob_;
    std::vector<cv::Rect2i> boxes_;
    std::vector<float> scores_;
    std::vector<Face> rows_;
};

// MARK: - CenterFace

class CenterFaceDetector final : public fwcv_detector {
  public:
    /// `model` holds the ONNX file's bytes (cv::dnn), or is empty when OpenVINO runs the network from `model_path`.
    CenterFaceDetector(std::vector<uchar> model, std::string model_path, float score_threshold, float nms_threshold)
        : model_(std::move(model)), model_path_(std::move(model_path)), score_threshold_(score_threshold),
          nms_threshold_(nms_threshold) {}

    std::vector<Face> run(const cv::Mat &image) override {
        // The model takes RGB NCHW with both sides a multiple of 32; pad (rather than stretch) to get there.
        cv::Mat input = pad_right_bottom(as_bgr(image), 32, 32, 32);
        cv::dnn::blobFromImage(input, blob_, 1.0, cv::Size(), cv::Scalar(), /*swapRB=*/true, /*crop=*/false);
        std::vector<cv::Mat> outputs;
        if (model_.empty()) {
            if (!openvino_) openvino_ = std::make_unique<OpenVINONetwork>(model_path_, std::vector<int64_t>{1, 3, -1, -1}, 1);
            outputs = openvino_->run(blob_);  // 537 heatmap, 538 scale, 539 offset, 540 landmarks: the model's order
        } else {
            cv::dnn::Net &net = net_for(cv::Size(input.cols, input.rows));
            net.setInput(blob_);
            net.forward(outputs, std::vector<cv::String>{"537", "538", "539", "540"});
        }
        if (outputs.size() != 4) throw std::runtime_error("CenterFace returned an unexpected number of outputs");
        return decode(outputs, image.cols, image.rows);
    }

  private:
    static constexpr size_t kMaxNets = 4;
    static constexpr size_t kMaxCandidates = 3000;

    /// OpenCV 4.6 gives wrong outputs when one Net sees inputs of different sizes, so keep one Net per size
    /// (a few, most recently used first).
    cv::dnn::Net &net_for(cv::Size size) {
        for (auto it = nets_.begin(); it != nets_.end(); ++it) {
            if (it->first == size) {
                if (it != nets_.begin()) nets_.splice(nets_.begin(), nets_, it);
                return nets_.front().second;
            }
        }
        cv::dnn::Net net = cv::dnn::readNetFromONNX(model_);
        if (net.empty()) throw std::runtime_error("CenterFace model could not be loaded");
        nets_.emplace_front(size, std::move(net));
        while (nets_.size() > kMaxNets) nets_.pop_back();
        return nets_.front().second;
    }

    std::vector<Face> decode(const std::vector<cv::Mat> &outputs, int width, int height) const {
        const cv::Mat &heatmap = outputs[0], &scale = outputs[1], &offset = outputs[2], &landmark = outputs[3];
        if (heatmap.dims != 4 || scale.dims != 4 || offset.dims != 4 || landmark.dims != 4 ||
            heatmap.size[1] != 1 || scale.size[1] != 2 || offset.size[1] != 2 || landmark.size[1] != 10) {
            throw std::runtime_error("unexpected CenterFace output shapes");
        }
        const int fh = heatmap.size[2], fw = heatmap.size[3];
        const size_t plane = static_cast<size_t>(fh) * fw;
        const float *heat = heatmap.ptr<float>();
        const float *sc = scale.ptr<float>();
        const float *off = offset.ptr<float>();
        const float *lm = landmark.ptr<float>();

        std::vector<std::pair<float, size_t>> candidates;
        for (size_t i = 0; i < plane; ++i) {
            if (heat[i] > score_threshold_) candidates.emplace_back(heat[i], i);
        }
        std::sort(candidates.begin(), candidates.end(),
                  [](const auto &a, const auto &b) { return a.first > b.first; });
        if (candidates.size() > kMaxCandidates) candidates.resize(kMaxCandidates);

        std::vector<Face> faces;
        faces.reserve(candidates.size());
        for (const auto &[score, i] : candidates) {
            const int cy = static_cast<int>(i / fw), cx = static_cast<int>(i % fw);
            const float s0 = std::exp(sc[i]) * 4.f, s1 = std::exp(sc[plane + i]) * 4.f;  // height, width
            const float o0 = off[i], o1 = off[plane + i];
            const float x0 = (cx + o1 + 0.5f) * 4.f - s1 / 2.f;
            const float y0 = (cy + o0 + 0.5f) * 4.f - s0 / 2.f;
            const float x1 = std::clamp(x0, 0.f, static_cast<float>(width));
            const float y1 = std::clamp(y0, 0.f, static_cast<float>(height));
            const float x2 = std::min(x1 + s1, static_cast<float>(width));
            const float y2 = std::min(y1 + s0, static_cast<float>(height));
            if (x2 <= x1 || y2 <= y1) continue;
            Face face;
            face.box = cv::Rect2f(x1, y1, x2 - x1, y2 - y1);
            face.score = score;
            face.landmark_count = 5;
            for (int j = 0; j < 5; ++j) {
                // Channels alternate (y, x) per point; offsets are relative to the box's (unclipped) corner.
                face.landmarks[2 * j] = lm[(2 * j + 1) * plane + i] * s1 + x0;
                face.landmarks[2 * j + 1] = lm[(2 * j) * plane + i] * s0 + y0;
            }
            faces.push_back(face);
        }
        return nms(faces, nms_threshold_);
    }

    std::vector<uchar> model_;
    std::string model_path_;
    float score_threshold_;
    float nms_threshold_;
    std::list<std::pair<cv::Size, cv::dnn::Net>> nets_;
    std::unique_ptr<OpenVINONetwork> openvino_;  // one network for every input size
    cv::Mat blob_;  // reused from frame to frame
};

// MARK: - Cascade

class CascadeDetector final : public fwcv_detector {
  public:
    CascadeDetector(cv::CascadeClassifier face, std::unique_ptr<cv::CascadeClassifier> eyes)
        : face_(std::move(face)), eyes_(std::move(eyes)) {}

    std::vector<Face> run(const cv::Mat &image) override {
        cv::Mat grey;
        cv::equalizeHist(as_grey(image), grey);
        std::vector<cv::Rect> rects;
        std::vector<int> neighbours;
        face_.detectMultiScale(grey, rects, neighbours, kScaleFactor, kMinNeighbours, 0);
        std::vector<Face> faces;
        for (size_t i = 0; i < rects.size(); ++i) {
            Face face;
            face.box = cv::Rect2f(rects[i]);
            // Map the neighbour count to (0, 1): 5 neighbours (OpenCV's usual minNeighbors) gives 0.5.
            float n = i < neighbours.size() ? static_cast<float>(neighbours[i]) : 0.f;
            face.score = n / (n + 5.f);
            // The eye search costs ~8 ms per face: only for faces that pass the usual 5-neighbour bar.
            if (eyes_ && n >= kEyeSearchNeighbours) find_eyes(grey, rects[i], face);
            faces.push_back(face);
        }
        return faces;
    }

  private:
    static constexpr double kScaleFactor = 1.1;
    static constexpr int kMinNeighbours = 2;
    static constexpr float kEyeSearchNeighbours = 5.f;

    /// Looks for one eye in each upper quarter of the face box; fills two points (image-left eye first) when both
    /// are found.
    void find_eyes(const cv::Mat &grey, const cv::Rect &box, Face &face) {
        cv::Rect upper(box.x, box.y + box.height / 6, box.width, box.height / 2);
        upper &= cv::Rect(0, 0, grey.cols, grey.rows);
        if (upper.width < 12 || upper.height < 6) return;
        std::vector<cv::Rect> eyes;
        int min_eye = std::max(6, box.width / 8);
        eyes_->detectMultiScale(grey(upper), eyes, 1.1, 3, 0, cv::Size(min_eye, min_eye));
        const float mid = upper.width / 2.f;
        int best_left = -1, best_right = -1;
        for (size_t k = 0; k < eyes.size(); ++k) {
            float cx = eyes[k].x + eyes[k].width / 2.f;
            int &slot = cx < mid ? best_left : best_right;
            if (slot < 0 || eyes[k].area() > eyes[static_cast<size_t>(slot)].area()) slot = static_cast<int>(k);
        }
        if (best_left < 0 || best_right < 0) return;
        const cv::Rect &l = eyes[static_cast<size_t>(best_left)], &r = eyes[static_cast<size_t>(best_right)];
        face.landmark_count = 2;
        face.landmarks[0] = upper.x + l.x + l.width / 2.f;
        face.landmarks[1] = upper.y + l.y + l.height / 2.f;
        face.landmarks[2] = upper.x + r.x + r.width / 2.f;
        face.landmarks[3] = upper.y + r.y + r.height / 2.f;
    }

    cv::CascadeClassifier face_;
    std::unique_ptr<cv::CascadeClassifier> eyes_;
};

} // namespace

// MARK: - C interface

namespace {
/// Standard deviation (grey levels) below which an image counts as flat and is not searched.
constexpr double kMinDeviation = 4.0;
} // namespace

extern "C" {

void fwcv_set_num_threads(int threads) {
    try {
        cv::setNumThreads(threads);
    } catch (...) {
    }
}

fwcv_detector *fwcv_yunet_create(const char *model_path, float score_threshold, float nms_threshold, int top_k,
                                 int runtime, char *err, size_t errlen) {
    clear_error(err, errlen);
    if (runtime == FWCV_RUNTIME_OPENVINO && !fwov_loaded()) {
        write_error(err, errlen, "OpenVINO is not loaded");
        return nullptr;
    }
    if (!file_readable(model_path)) {
        write_error(err, errlen, std::string("YuNet model not found or unreadable: ") + (model_path ? model_path : "(null)"));
        return nullptr;
    }
    fwcv_detector *result = nullptr;
    guarded(err, errlen, "YuNet model failed to load", [&] {
        std::unique_ptr<fwcv_detector> detector;
        if (runtime == FWCV_RUNTIME_OPENVINO) {
            detector = std::make_unique<YuNetOpenVINODetector>(model_path, score_threshold, nms_threshold, top_k > 0 ? top_k : 5000);
        } else {
            detector = std::make_unique<YuNetDetector>(model_path, score_threshold, nms_threshold, top_k > 0 ? top_k : 5000);
        }
        // Run once on a blank image: a wrong ONNX file fails here rather than on the first frame.
        (void)detector->run(cv::Mat::zeros(96, 96, CV_8UC3));
        result = detector.release();
    });
    return result;
}

fwcv_detector *fwcv_centerface_create(const char *model_path, float score_threshold, float nms_threshold,
                                      int runtime, char *err, size_t errlen) {
    clear_error(err, errlen);
    if (runtime == FWCV_RUNTIME_OPENVINO && !fwov_loaded()) {
        write_error(err, errlen, "OpenVINO is not loaded");
        return nullptr;
    }
    if (!file_readable(model_path)) {
        write_error(err, errlen, std::string("CenterFace model not found or unreadable: ") + (model_path ? model_path : "(null)"));
        return nullptr;
    }
    fwcv_detector *result = nullptr;
    guarded(err, errlen, "CenterFace model failed to load", [&] {
        std::vector<uchar> bytes;
        if (runtime != FWCV_RUNTIME_OPENVINO) {
            std::ifstream stream(model_path, std::ios::binary);
            bytes.assign(std::istreambuf_iterator<char>(stream), std::istreambuf_iterator<char>());
            if (bytes.empty()) throw std::runtime_error("model file is empty");
        }
        auto detector = std::make_unique<CenterFaceDetector>(std::move(bytes), model_path, score_threshold, nms_threshold);
        // Run once on a blank image: a wrong ONNX file fails here rather than on the first frame.
        (void)detector->run(cv::Mat::zeros(224, 320, CV_8UC3));
        result = detector.release();
    });
    return result;
}

fwcv_detector *fwcv_cascade_create(const char *face_cascade_path, const char *eye_cascade_path, char *err,
                                   size_t errlen) {
    clear_error(err, errlen);
    if (!file_readable(face_cascade_path)) {
        write_error(err, errlen, std::string("face cascade not found or unreadable: ") +
                                     (face_cascade_path ? face_cascade_path : "(null)"));
        return nullptr;
    }
    bool want_eyes = eye_cascade_path != nullptr && eye_cascade_path[0] != '\0';
    if (want_eyes && !file_readable(eye_cascade_path)) {
        write_error(err, errlen, std::string("eye cascade not found or unreadable: ") + eye_cascade_path);
        return nullptr;
    }
    fwcv_detector *result = nullptr;
    guarded(err, errlen, "cascade failed to load", [&] {
        cv::CascadeClassifier face;
        if (!face.load(face_cascade_path) || face.empty()) {
            throw std::runtime_error(std::string("not a valid cascade file: ") + face_cascade_path);
        }
        std::unique_ptr<cv::CascadeClassifier> eyes;
        if (want_eyes) {
            eyes = std::make_unique<cv::CascadeClassifier>();
            if (!eyes->load(eye_cascade_path) || eyes->empty()) {
                throw std::runtime_error(std::string("not a valid cascade file: ") + eye_cascade_path);
            }
        }
        result = new CascadeDetector(std::move(face), std::move(eyes));
    });
    return result;
}

int fwcv_detect(fwcv_detector *detector, const uint8_t *pixels, int width, int height, int stride, int channels,
                int input_width, fwcv_face *out, int max_faces, char *err, size_t errlen) {
    clear_error(err, errlen);
    if (detector == nullptr) {
        write_error(err, errlen, "fwcv_detect: no detector");
        return -1;
    }
    if (pixels == nullptr || width <= 0 || height <= 0 || (channels != 1 && channels != 3) ||
        stride < width * channels) {
        write_error(err, errlen, "fwcv_detect: invalid image (size " + std::to_string(width) + "x" +
                                     std::to_string(height) + ", channels " + std::to_string(channels) + ", stride " +
                                     std::to_string(stride) + ")");
        return -1;
    }
    if (max_faces < 0 || (max_faces > 0 && out == nullptr)) {
        write_error(err, errlen, "fwcv_detect: invalid output buffer");
        return -1;
    }
    int written = -1;
    guarded(err, errlen, "face detection failed", [&] {
        cv::Mat image(height, width, CV_8UC(channels), const_cast<uint8_t *>(pixels), static_cast<size_t>(stride));
        cv::Mat input = image;
        float sx = 1.f, sy = 1.f;
        if (input_width > 0 && input_width != width) {
            int input_height = std::max(1, static_cast<int>(std::lround(static_cast<double>(height) * input_width / width)));
            int interpolation = input_width < width ? cv::INTER_AREA : cv::INTER_LINEAR;
            cv::resize(image, input, cv::Size(input_width, input_height), 0, 0, interpolation);
            sx = static_cast<float>(input_width) / width;
            sy = static_cast<float>(input_height) / height;
        }
        // A flat image has no faces, but YuNet reports a large face on near-black frames (covered lens, fades):
        // skip detection when no channel varies by more than a few grey levels.
        cv::Scalar mean, deviation;
        cv::meanStdDev(input, mean, deviation);
        double max_deviation = std::max({deviation[0], deviation[1], deviation[2]});
        std::vector<Face> faces;
        if (max_deviation >= kMinDeviation) faces = detector->run(input);
        // Best first; ties broken by position so the order is deterministic. (std::stable_sort would need the
        // deprecated std::get_temporary_buffer with this libstdc++.)
        std::sort(faces.begin(), faces.end(), [](const Face &a, const Face &b) {
            if (a.score != b.score) return a.score > b.score;
            if (a.box.y != b.box.y) return a.box.y < b.box.y;
            return a.box.x < b.box.x;
        });
        const cv::Rect2f bounds(0, 0, static_cast<float>(width), static_cast<float>(height));
        int n = 0;
        for (const Face &face : faces) {
            if (n >= max_faces) break;
            cv::Rect2f box(face.box.x / sx, face.box.y / sy, face.box.width / sx, face.box.height / sy);
            box &= bounds;
            if (box.width <= 0 || box.height <= 0) continue;
            fwcv_face &o = out[n++];
            o.x = box.x;
            o.y = box.y;
            o.width = box.width;
            o.height = box.height;
            o.score = face.score;
            o.landmark_count = face.landmark_count;
            for (int k = 0; k < 10; ++k) {
                o.landmarks[k] = k < face.landmark_count * 2 ? face.landmarks[k] / (k % 2 == 0 ? sx : sy) : 0.f;
            }
        }
        written = n;
    });
    return written;
}

int fwcv_refine_tilted(fwcv_detector *detector, const uint8_t *pixels, int width, int height, int stride, int channels,
                       fwcv_face *faces, int count, float min_angle, float min_height, char *err, size_t errlen) {
    clear_error(err, errlen);
    if (detector == nullptr || pixels == nullptr || width <= 0 || height <= 0 || (channels != 1 && channels != 3) ||
        stride < width * channels || count < 0 || (count > 0 && faces == nullptr)) {
        write_error(err, errlen, "fwcv_refine_tilted: invalid arguments");
        return -1;
    }
    int refined = -1;
    guarded(err, errlen, "landmark refinement failed", [&] {
        const cv::Mat image(height, width, CV_8UC(channels), const_cast<uint8_t *>(pixels), static_cast<size_t>(stride));
        // A multiple of 32 (CenterFace) and above YuNet's 64 px minimum. 96 px was measured too: 2-3 points fewer
        // rotated faces within 5 degrees of their angle.
        constexpr int kCrop = 128;
        // A second pass (on the patch turned by the refined angle) runs only when the first left a tilt at least this
        // large: the landmark models read small tilts well, and under-read large ones.
        constexpr double kResidualDegrees = 3.0;
        constexpr double kDegrees = 180.0 / 3.14159265358979323846;
        int n = 0;
        for (int i = 0; i < count; ++i) {
            fwcv_face &face = faces[i];
            if (face.landmark_count < 5) continue;
            if (face.height < min_height) continue;
            bool changed = false;
            for (int pass = 0; pass < 2; ++pass) {
                const float *l = face.landmarks;
                // The eye line, eyes taken in x order (the first two points are the eyes in either order).
                float ax = l[0], ay = l[1], bx = l[2], by = l[3];
                if (ax > bx) {
                    std::swap(ax, bx);
                    std::swap(ay, by);
                }
                const double angle = std::atan2(by - ay, bx - ax) * kDegrees;
                if (std::fabs(angle) < min_angle) break;
                // Turn the face upright (counter-clockwise by its clockwise tilt) into a kCrop x kCrop patch
                // centred on the eyes-and-mouth centre, 1.6 face sizes wide.
                const cv::Point2f centre((ax + bx + l[6] + l[8]) / 4.f, (ay + by + l[7] + l[9]) / 4.f);
                const double side = 1.6 * std::max(face.width, face.height);
                cv::Mat forward = cv::getRotationMatrix2D(centre, angle, kCrop / side);
                forward.at<double>(0, 2) += kCrop / 2.0 - centre.x;
                forward.at<double>(1, 2) += kCrop / 2.0 - centre.y;
                cv::Mat patch;
                cv::warpAffine(image, patch, forward, cv::Size(kCrop, kCrop), cv::INTER_LINEAR, cv::BORDER_REPLICATE);
                const std::vector<Face> found = detector->run(patch);
                const Face *best = nullptr;
                float best_distance = kCrop * 0.25f;  // must be near the patch centre: the same face
                for (const Face &candidate : found) {
                    if (candidate.landmark_count < 5) continue;
                    const float cx = candidate.box.x + candidate.box.width / 2 - kCrop / 2.f;
                    const float cy = candidate.box.y + candidate.box.height / 2 - kCrop / 2.f;
                    const float distance = std::sqrt(cx * cx + cy * cy);
                    if (distance < best_distance) {
                        best_distance = distance;
                        best = &candidate;
                    }
                }
                if (best == nullptr) break;
                // The tilt left in the upright patch.
                float px = best->landmarks[0], py = best->landmarks[1], qx = best->landmarks[2], qy = best->landmarks[3];
                if (px > qx) {
                    std::swap(px, qx);
                    std::swap(py, qy);
                }
                const double residual = std::atan2(qy - py, qx - px) * kDegrees;
                cv::Mat inverse;
                cv::invertAffineTransform(forward, inverse);
                const double *m = inverse.ptr<double>(0);
                const double *m1 = inverse.ptr<double>(1);
                for (int k = 0; k < 5; ++k) {
                    const double x = best->landmarks[2 * k], y = best->landmarks[2 * k + 1];
                    face.landmarks[2 * k] = static_cast<float>(m[0] * x + m[1] * y + m[2]);
                    face.landmarks[2 * k + 1] = static_cast<float>(m1[0] * x + m1[1] * y + m1[2]);
                }
                changed = true;
                if (std::fabs(residual) < kResidualDegrees) break;
            }
            if (changed) ++n;
        }
        refined = n;
    });
    return refined;
}

void fwcv_detector_destroy(fwcv_detector *detector) { delete detector; }

} // extern "C"
