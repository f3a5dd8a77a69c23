// A network run by OpenVINO (COpenVINO, loaded at run time) with cv::Mat in and out, so that the shims' pre- and
// post-processing is the same whichever runtime runs the network.
#pragma once

#include "COpenVINO.h"

#include <opencv2/core.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace fwcv_shim {

/// One compiled network at one input shape, and its inference request. Not thread-safe: one per thread.
class OpenVINONetwork {
  public:
    /// Compiles the ONNX model at `model_path` for inputs of shape `dims` (NCHW; -1: any size), with `threads`
    /// inference threads.
    OpenVINONetwork(const std::string &model_path, const std::vector<int64_t> &dims, int threads) {
        char error[512] = {0};
        network_.reset(fwov_network_create(model_path.c_str(), dims.data(), int(dims.size()), threads, error, sizeof error));
        if (!network_) throw std::runtime_error(std::string("OpenVINO: ") + error);
    }

    size_t outputs() const { return fwov_network_outputs(network_.get()); }

    /// Output `index`'s tensor name ("" when OpenVINO gives none).
    std::string output_name(size_t index) const {
        char name[256] = {0};
        return fwov_network_output_name(network_.get(), index, name, sizeof name) == 0 ? std::string(name) : std::string();
    }

    /// Runs the network on `blob` (float32, contiguous, of a shape the network takes) and returns every output as a
    /// cv::Mat of its own shape over OpenVINO's memory: valid until the next run.
    std::vector<cv::Mat> run(const cv::Mat &blob) {
        if (blob.type() != CV_32F || !blob.isContinuous() || blob.dims > 8) {
            throw std::runtime_error("OpenVINO: the input is not contiguous float32 of rank 8 or less");
        }
        int64_t shape[8];
        for (int d = 0; d < blob.dims; ++d) shape[d] = blob.size[d];
        char error[512] = {0};
        if (fwov_network_run(network_.get(), blob.ptr<float>(), shape, blob.dims, error, sizeof error) != 0) {
            throw std::runtime_error(std::string("OpenVINO: ") + error);
        }
        std::vector<cv::Mat> out;
        for (size_t k = 0; k < outputs(); ++k) {
            size_t count = 0;
            int64_t dims[8];
            int rank = 0;
            const float *data = fwov_network_output(network_.get(), k, &count, dims, &rank, error, sizeof error);
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
    std::unique_ptr<fwov_network, Release> network_;
};

}  // namespace fwcv_shim
