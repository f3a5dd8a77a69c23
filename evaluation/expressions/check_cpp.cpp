// Runs fwcv_face_attributes (Sources/COpenCV/attributes.cpp) on the frames measure.py --dump wrote, for check_cpp.sh.
// Input lines: clip frame detector x0 y0 ... x4 y4. Output: one line per face; timing on stderr.
#include "COpenCV.h"
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>
struct Item { int frame; std::string det; float lm[10]; };
int main(int argc, char **argv) {
    if (argc < 3) return 2;
    cv::setNumThreads(1);
    std::ifstream in(argv[1]);
    std::map<std::string, std::vector<Item>> byclip;
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ss(line); std::string clip; Item it; ss >> clip >> it.frame >> it.det;
        for (float &v : it.lm) ss >> v;
        byclip[clip].push_back(it);
    }
    char err[512];
    fwcv_attributes *a = fwcv_attributes_create(nullptr, err, sizeof err);
    if (!a) { std::fprintf(stderr, "create: %s\n", err); return 1; }
    std::vector<double> t_both, t_smile, t_eyes, t_none;
    for (auto &[clip, items] : byclip) {
        cv::VideoCapture cap(std::string(argv[2]) + "/" + clip);
        int i = 0; cv::Mat frame; size_t next = 0;
        while (next < items.size() && cap.read(frame)) {
            if (frame.cols > 640) {
                double s = 640.0 / frame.cols; cv::Mat small;
                cv::resize(frame, small, cv::Size(640, (int)std::lround(frame.rows * s)), 0, 0, cv::INTER_AREA); frame = small;
            }
            while (next < items.size() && items[next].frame == i) {
                Item &it = items[next++];
                fwcv_face_attributes_result r;
                auto t0 = std::chrono::steady_clock::now();
                int rc = fwcv_face_attributes(a, frame.data, frame.cols, frame.rows, (int)frame.step, 3, it.lm, 3, &r, err, sizeof err);
                auto t1 = std::chrono::steady_clock::now();
                if (rc != 0) { std::fprintf(stderr, "error %s\n", err); return 1; }
                t_both.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
                fwcv_face_attributes_result r2;
                t0 = std::chrono::steady_clock::now(); fwcv_face_attributes(a, frame.data, frame.cols, frame.rows, (int)frame.step, 3, it.lm, 1, &r2, err, sizeof err);
                t1 = std::chrono::steady_clock::now(); t_smile.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
                t0 = std::chrono::steady_clock::now(); fwcv_face_attributes(a, frame.data, frame.cols, frame.rows, (int)frame.step, 3, it.lm, 2, &r2, err, sizeof err);
                t1 = std::chrono::steady_clock::now(); t_eyes.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
                t0 = std::chrono::steady_clock::now(); fwcv_face_attributes(a, frame.data, frame.cols, frame.rows, (int)frame.step, 3, it.lm, 0, &r2, err, sizeof err);
                t1 = std::chrono::steady_clock::now(); t_none.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
                std::printf("%s %d %s %d %d %d %d %.6f %d %d %d %.4f %d %.6f\n", clip.c_str(), it.frame, it.det.c_str(), r.smile_valid,
                            r.smile_hits, r.has_smile, r.eyes_valid, r.smile_raw, r.left_eye_hits, r.right_eye_hits,
                            r.left_eye_closed * 2 + r.right_eye_closed, r.yaw_degrees, r.yaw_valid, r.smile_score);
            }
            ++i;
        }
    }
    auto med = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v.empty() ? 0.0 : v[v.size() / 2]; };
    auto p90 = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v.empty() ? 0.0 : v[v.size() * 9 / 10]; };
    std::fprintf(stderr, "ms per face (1 thread): both %.2f (p90 %.2f), smile %.2f, eyes %.2f, off (yaw only) %.4f; n=%zu\n",
                 med(t_both), p90(t_both), med(t_smile), med(t_eyes), med(t_none), t_both.size());
    fwcv_attributes_destroy(a);
    return 0;
}
