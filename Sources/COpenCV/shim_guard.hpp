// What every C++ shim of COpenCV shares: an error message copied into the caller's buffer, and a body run with every
// C++ exception turned into that message. No exception leaves a shim through its plain C interface.
#pragma once

#include <opencv2/core.hpp>

#include <algorithm>
#include <cstring>
#include <exception>
#include <string>

namespace fwcv_shim {

/// Copies `message` into `err` (at most `errlen - 1` bytes and a NUL); nothing when there is no buffer.
inline void write_error(char *err, size_t errlen, const std::string &message) {
    if (err == nullptr || errlen == 0) return;
    size_t n = std::min(errlen - 1, message.size());
    std::memcpy(err, message.data(), n);
    err[n] = '\0';
}

/// Empties the caller's error buffer.
inline void clear_error(char *err, size_t errlen) {
    if (err != nullptr && errlen > 0) err[0] = '\0';
}

/// Runs `body`, turning any exception into an error message prefixed by `what`. Returns false when one was thrown.
template <typename Body> bool guarded(char *err, size_t errlen, const std::string &what, Body &&body) {
    try {
        body();
        return true;
    } catch (const cv::Exception &e) {
        write_error(err, errlen, what + ": OpenCV error: " + e.what());
    } catch (const std::exception &e) {
        write_error(err, errlen, what + ": " + e.what());
    } catch (...) {
        write_error(err, errlen, what + ": unknown C++ exception");
    }
    return false;
}

}  // namespace fwcv_shim
