// OpenVINO's C API, loaded at run time (dlopen) so that Facewire builds and runs without it: the networks then run
// in OpenCV's cv::dnn. Only what Facewire calls is exposed: one compiled network at a fixed input shape, run
// synchronously on the calling thread. Every function is safe to call from several threads on distinct networks.
#ifndef FACEWIRE_COPENVINO_H
#define FACEWIRE_COPENVINO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Loads OpenVINO's C library (`libopenvino_c.so.*`) from `library` (a file path) once per process; later calls
/// return the first call's outcome. 0 on success; otherwise -1 and a message in `error`.
int fwov_load(const char *library, char *error, size_t error_size);

/// Whether ``fwov_load`` succeeded.
int fwov_loaded(void);

/// OpenVINO's version ("2026.4.1-…"), or "" when not loaded.
const char *fwov_version(void);

typedef struct fwov_network fwov_network;

/// Reads the model at `model_path` (ONNX), sets its first input's shape to `dims` (rank `rank` ≤ 8; -1: any size,
/// so that one compiled network serves every image size) and compiles it for the CPU with `threads` inference
/// threads, one stream, no core pinning (the worker's own threads share the cores). NULL on failure, with a message
/// in `error`.
fwov_network *fwov_network_create(
    const char *model_path, const int64_t *dims, int rank, int threads, char *error, size_t error_size);

/// Runs the network on `input`: float32 of shape `dims` (rank `rank`, matching the creation's static dimensions,
/// each 1...65536). 0 on success.
int fwov_network_run(
    fwov_network *network, const float *input, const int64_t *dims, int rank, char *error, size_t error_size);

/// The number of outputs.
size_t fwov_network_outputs(const fwov_network *network);

/// Output `index`'s tensor name, copied into `name` (at most `name_size` - 1 bytes). 0 on success.
int fwov_network_output_name(const fwov_network *network, size_t index, char *name, size_t name_size);

/// Output `index` of the last run: its float32 data (valid until the next run or the network's release), its
/// element count in `count`, its shape in `dims` (at most 8) and rank in `rank`. NULL on failure.
const float *fwov_network_output(
    fwov_network *network, size_t index, size_t *count, int64_t *dims, int *rank, char *error, size_t error_size);

void fwov_network_free(fwov_network *network);

#ifdef __cplusplus
}
#endif

#endif
