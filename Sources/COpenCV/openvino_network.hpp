// A network run by OpenVINO (COpenVINO, loaded at run time) with cv::Mat in and out, so that the shims' pre- and
// post-processing is the same whichever runtime runs the network.
#pragma once

#include "COpenVINO.h"

#include <opencv2/core.hpp>

#include <list>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace fwcv_shim {

/// A compiled network and its inference request, for inputs of a shape with free dimensions (-1), plus the same
/// network compiled for the exact shapes that recur. OpenVINO's CPU plugin runs a network compiled for one static
/// shape faster than one compiled for any (the face mesh at batch 1: 1.09 against 1.20 ms; YuNet at 320×240: 2.34
/// against 2.69 ms; benchmarks/network-floor.py), but compiling costs 100-150 ms of CPU a shape, which 0.1-0.4 ms a
/// run pays back only after several hundred runs. So a shape gets its own compiled network once it has been seen
/// ``kRecurs`` times among the last ``kTracked`` shapes (a stream's frames, a tilted face's crop, a batch of one
/// face), for the first ``kStatic`` such shapes only, kept for good: a crowd's batch sizes, which change from frame to
/// frame, must not cost a compilation each (with 3 sightings, and no limit, the crowd clip's attributes went from 4.6
/// to 8.5 ms a face). One-off shapes (a folder of photographs of every size), rare ones and those beyond the first
/// few run on the network with free dimensions. The compilation runs on the calling thread: that one run takes
/// 100-150 ms longer, once a shape. Not thread-safe: one per thread.
class OpenVINONetwork {
  public:
    /// Compiles the ONNX model at `model_path` for inputs of shape `dims` (NCHW; -1: any size), with `threads`
    /// inference threads.
    OpenVINONetwork(const std::string &model_path, const std::vector<int64_t> &dims, int threads)
        : model_path_(model_path), dims_(dims), threads_(threads), network_(compile(dims)) {
        for (int64_t d : dims) free_ = free_ || d == -1;
        last_ = network_.get();
    }
    size_t outputs() const { return fwov_network_outputs(network_.get()); }

    /// Output `index`'s tensor name ("" when OpenVINO gives none).
    std::string output_name(size_t index) const {
        char name[256] = {0};
        return fwov_network_output_name(network_.get(), index, name, sizeof name) == 0 ? std::string(name) : std::string();
    }

    /// How many shapes have a network of their own (for tests).
    size_t static_shapes() const { return static_.size(); }

    /// Runs the network on `blob` (float32, contiguous, of a shape the network takes) and returns every output as a
    /// cv::Mat of its own shape over OpenVINO's memory: valid until the next run.
    std::vector<cv::Mat> run(const cv::Mat &blob) {
        if (blob.type() != CV_32F || !blob.isContinuous() || blob.dims > 8) {
            throw std::runtime_error("OpenVINO: the input is not contiguous float32 of rank 8 or less");
        }
        int64_t shape[8];
        for (int d = 0; d < blob.dims; ++d) shape[d] = blob.size[d];
        char error[512] = {0};
        last_ = network_for(std::vector<int64_t>(shape, shape + blob.dims));
        if (fwov_network_run(last_, blob.ptr<float>(), shape, blob.dims, error, sizeof error) != 0) {
            throw std::runtime_error(std::string("OpenVINO: ") + error);
        }
        std::vector<cv::Mat> out;
        for (size_t k = 0; k < outputs(); ++k) {
            size_t count = 0;
            int64_t dims[8];
            int rank = 0;
            const float *data = fwov_network_output(last_, k, &count, dims, &rank, error, sizeof error);
            if (data == nullptr) throw std::runtime_error(std::string("OpenVINO: ") + error);
            std::vector<int> sizes;
            size_t product = 1;
            for (int d = 0; d < rank; ++d) {
                if (dims[d] < 1 || dims[d] > (int64_t(1) << 30)) throw std::runtime_error("OpenVINO: an output dimension out of range");
                sizes.push_back(int(dims[d]));
                product *= size_t(dims[d]);
            }
            if (sizes.empty() || product != count) throw std::runtime_error("OpenVINO: an output's shape and size disagree");
            out.emplace_back(int(sizes.size()), sizes.data(), CV_32F, const_cast<float *>(data));
        }
        return out;
    }

  private:
    struct Release {
        void operator()(fwov_network *network) const { fwov_network_free(network); }
    };
    using Network = std::unique_ptr<fwov_network, Release>;
    using Shape = std::vector<int64_t>;

    static constexpr int kRecurs = 300;
    static constexpr size_t kTracked = 16;
    static constexpr size_t kStatic = 4;

    Network compile(const Shape &dims) const {
        char error[512] = {0};
        Network network(fwov_network_create(model_path_.c_str(), dims.data(), int(dims.size()), threads_, error, sizeof error));
        if (!network) throw std::runtime_error(std::string("OpenVINO: ") + error);
        return network;
    }

    /// The network to run an input of `shape` on (see the class comment). A shape the free network does not take is
    /// left to it, which refuses it.
    fwov_network *network_for(const Shape &shape) {
        if (!free_ || shape.size() != dims_.size()) return network_.get();
        for (auto it = static_.begin(); it != static_.end(); ++it) {
            if (it->first == shape) {
                if (it != static_.begin()) static_.splice(static_.begin(), static_, it);
                return it->second.get();
            }
        }
        for (size_t d = 0; d < shape.size(); ++d) {
            if (dims_[d] != -1 && shape[d] != dims_[d]) return network_.get();
        }
        auto seen = seen_.begin();
        while (seen != seen_.end() && seen->first != shape) ++seen;
        if (seen == seen_.end()) {
            seen_.emplace_front(shape, 0);
            while (seen_.size() > kTracked) seen_.pop_back();
            seen = seen_.begin();
        } else if (seen != seen_.begin()) {
            seen_.splice(seen_.begin(), seen_, seen);
            seen = seen_.begin();
        }
        if (++seen->second < kRecurs || static_.size() >= kStatic) return network_.get();
        seen_.erase(seen);
        static_.emplace_front(shape, compile(shape));
        return static_.front().second.get();
    }

    std::string model_path_;
    Shape dims_;
    int threads_;
    bool free_ = false;
    Network network_;  // dims_, free dimensions included
    std::list<std::pair<Shape, Network>> static_;  // at most kStatic, most recently used first
    std::list<std::pair<Shape, int>> seen_;  // shapes without a network of their own, and how often seen
    fwov_network *last_;  // the network of the last run, whose outputs are read
};

}  // namespace fwcv_shim
