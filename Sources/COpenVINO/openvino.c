// OpenVINO's C API, loaded with dlopen. Written by hand because no Swift package wraps it, and loaded at run time
// (rather than linked) so that a machine without OpenVINO builds and runs Facewire on OpenCV alone.
#define _GNU_SOURCE
#include "COpenVINO.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The part of OpenVINO's C API (openvino/c/*.h, 2026.4) that Facewire calls, restated with the same layouts:
// handles are opaque, status 0 is OK, element type 4 is f32.
typedef int ov_status_e;
typedef struct ov_core ov_core_t;
typedef struct ov_model ov_model_t;
typedef struct ov_compiled_model ov_compiled_model_t;
typedef struct ov_infer_request ov_infer_request_t;
typedef struct ov_tensor ov_tensor_t;
typedef struct ov_output_const_port ov_output_const_port_t;
typedef struct { int64_t rank; int64_t *dims; } ov_shape_t;
typedef struct { int64_t min; int64_t max; } ov_dimension_t;
typedef struct { ov_dimension_t rank; ov_dimension_t *dims; } ov_partial_shape_t;
typedef struct { const char *key; const void *value; } ov_property_t;
typedef struct { const char *buildNumber; const char *description; } ov_version_t;
enum { OV_F32 = 4, OV_MAX_RANK = 8 };

static struct {
    ov_status_e (*get_openvino_version)(ov_version_t *);
    const char *(*get_last_err_msg)(void);
    void (*free_string)(const char *);
    ov_status_e (*core_create)(ov_core_t **);
    ov_status_e (*core_read_model)(const ov_core_t *, const char *, const char *, ov_model_t **);
    ov_status_e (*core_compile_model_props)(
        const ov_core_t *, const ov_model_t *, const char *, size_t, const ov_property_t *, ov_compiled_model_t **);
    void (*model_free)(ov_model_t *);
    ov_status_e (*model_reshape_single_input)(const ov_model_t *, ov_partial_shape_t);
    ov_status_e (*partial_shape_create)(int64_t, const ov_dimension_t *, ov_partial_shape_t *);
    void (*partial_shape_free)(ov_partial_shape_t *);
    ov_status_e (*compiled_model_outputs_size)(const ov_compiled_model_t *, size_t *);
    ov_status_e (*compiled_model_output_by_index)(const ov_compiled_model_t *, size_t, ov_output_const_port_t **);
    ov_status_e (*port_get_any_name)(const ov_output_const_port_t *, char **);
    void (*output_const_port_free)(ov_output_const_port_t *);
    ov_status_e (*compiled_model_create_infer_request)(const ov_compiled_model_t *, ov_infer_request_t **);
    void (*compiled_model_free)(ov_compiled_model_t *);
    ov_status_e (*infer_request_set_input_tensor_by_index)(ov_infer_request_t *, size_t, const ov_tensor_t *);
    ov_status_e (*infer_request_get_output_tensor_by_index)(const ov_infer_request_t *, size_t, ov_tensor_t **);
    ov_status_e (*infer_request_infer)(ov_infer_request_t *);
    void (*infer_request_free)(ov_infer_request_t *);
    ov_status_e (*tensor_create_from_host_ptr)(int, ov_shape_t, void *, ov_tensor_t **);
    ov_status_e (*tensor_data)(const ov_tensor_t *, void **);
    ov_status_e (*tensor_get_shape)(const ov_tensor_t *, ov_shape_t *);
    ov_status_e (*tensor_get_size)(const ov_tensor_t *, size_t *);
    ov_status_e (*tensor_get_element_type)(const ov_tensor_t *, int *);
    void (*tensor_free)(ov_tensor_t *);
    ov_status_e (*shape_create)(int64_t, const int64_t *, ov_shape_t *);
    ov_status_e (*shape_free)(ov_shape_t *);
} api;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const char *load_path;
static char load_error[512];
static atomic_int load_status = -1;  // read by fwov_loaded from any thread
static ov_core_t *core;  // one per process: it owns the CPU plugin and its thread pools
static char version[128];

static void set_error(char *error, size_t size, const char *format, ...) {
    if (error == NULL || size == 0) return;
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(error, size, format, arguments);
    va_end(arguments);
}

/// OpenVINO's message for the last failure (its library keeps one, process-wide; ov_get_last_err_msg returns a copy
/// to be released with ov_free).
static void ov_error(char *error, size_t size, const char *what, ov_status_e status) {
    const char *message = api.get_last_err_msg ? api.get_last_err_msg() : NULL;
    set_error(error, size, "%s failed (status %d)%s%s", what, status, message && message[0] ? ": " : "",
              message ? message : "");
    if (message && api.free_string) api.free_string(message);
}

static void load(void) {
    void *library = dlopen(load_path, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        set_error(load_error, sizeof load_error, "cannot load %s: %s", load_path, dlerror());
        return;
    }
#define RESOLVE(field, symbol)                                                                         \
    do {                                                                                               \
        *(void **)(&api.field) = dlsym(library, symbol);                                               \
        if (api.field == NULL) {                                                                       \
            set_error(load_error, sizeof load_error, "%s has no %s (not OpenVINO 2024.0 or later?)", \
                      load_path, symbol);                                                              \
            return;                                                                                    \
        }                                                                                              \
    } while (0)
    RESOLVE(get_openvino_version, "ov_get_openvino_version");
    RESOLVE(get_last_err_msg, "ov_get_last_err_msg");
    RESOLVE(free_string, "ov_free");
    RESOLVE(core_create, "ov_core_create");
    RESOLVE(core_read_model, "ov_core_read_model");
    RESOLVE(core_compile_model_props, "ov_core_compile_model_props");
    RESOLVE(model_free, "ov_model_free");
    RESOLVE(model_reshape_single_input, "ov_model_reshape_single_input");
    RESOLVE(partial_shape_create, "ov_partial_shape_create");
    RESOLVE(partial_shape_free, "ov_partial_shape_free");
    RESOLVE(compiled_model_outputs_size, "ov_compiled_model_outputs_size");
    RESOLVE(compiled_model_output_by_index, "ov_compiled_model_output_by_index");
    RESOLVE(port_get_any_name, "ov_port_get_any_name");
    RESOLVE(output_const_port_free, "ov_output_const_port_free");
    RESOLVE(compiled_model_create_infer_request, "ov_compiled_model_create_infer_request");
    RESOLVE(compiled_model_free, "ov_compiled_model_free");
    RESOLVE(infer_request_set_input_tensor_by_index, "ov_infer_request_set_input_tensor_by_index");
    RESOLVE(infer_request_get_output_tensor_by_index, "ov_infer_request_get_output_tensor_by_index");
    RESOLVE(infer_request_infer, "ov_infer_request_infer");
    RESOLVE(infer_request_free, "ov_infer_request_free");
    RESOLVE(tensor_create_from_host_ptr, "ov_tensor_create_from_host_ptr");
    RESOLVE(tensor_data, "ov_tensor_data");
    RESOLVE(tensor_get_shape, "ov_tensor_get_shape");
    RESOLVE(tensor_get_size, "ov_tensor_get_size");
    RESOLVE(tensor_get_element_type, "ov_tensor_get_element_type");
    RESOLVE(tensor_free, "ov_tensor_free");
    RESOLVE(shape_create, "ov_shape_create");
    RESOLVE(shape_free, "ov_shape_free");
#undef RESOLVE
    ov_version_t v = {0};
    if (api.get_openvino_version(&v) == 0) {
        snprintf(version, sizeof version, "%s", v.buildNumber ? v.buildNumber : "");
        // ov_version_free is not resolved: the strings are static in every release so far, and a leak of two
        // pointers once per process is harmless if they are not.
    }
    ov_status_e status = api.core_create(&core);
    if (status != 0) {
        ov_error(load_error, sizeof load_error, "ov_core_create", status);
        return;
    }
    load_status = 0;
}

int fwov_load(const char *library, char *error, size_t error_size) {
    if (library == NULL || library[0] == '\0') {
        set_error(error, error_size, "no library path");
        return -1;
    }
    load_path = library;  // read only by the one call of load()
    pthread_once(&load_once, load);
    if (load_status != 0) set_error(error, error_size, "%s", load_error);
    return load_status;
}

int fwov_loaded(void) { return load_status == 0; }

const char *fwov_version(void) { return load_status == 0 ? version : ""; }

struct fwov_network {
    ov_compiled_model_t *compiled;
    ov_infer_request_t *request;
    int64_t dims[OV_MAX_RANK];  // -1: any size
    int rank;
    size_t outputs;
    ov_tensor_t *last[16];  // output tensors of the last run, released on the next
};

fwov_network *fwov_network_create(
    const char *model_path, const int64_t *dims, int rank, int threads, char *error, size_t error_size) {
    if (load_status != 0) {
        set_error(error, error_size, "OpenVINO is not loaded");
        return NULL;
    }
    if (model_path == NULL || dims == NULL || rank < 1 || rank > OV_MAX_RANK) {
        set_error(error, error_size, "bad arguments");
        return NULL;
    }
    ov_dimension_t dimensions[OV_MAX_RANK];
    for (int i = 0; i < rank; ++i) {
        if (dims[i] != -1 && (dims[i] < 1 || dims[i] > (1 << 16))) {
            set_error(error, error_size, "input dimension %d out of range: %lld", i, (long long)dims[i]);
            return NULL;
        }
        dimensions[i].min = dims[i];
        dimensions[i].max = dims[i];
    }
    fwov_network *network = calloc(1, sizeof *network);
    if (network == NULL) {
        set_error(error, error_size, "out of memory");
        return NULL;
    }
    memcpy(network->dims, dims, sizeof(int64_t) * (size_t)rank);
    network->rank = rank;

    ov_model_t *model = NULL;
    ov_status_e status = api.core_read_model(core, model_path, NULL, &model);
    if (status != 0) {
        ov_error(error, error_size, "reading the model", status);
        goto fail;
    }
    ov_partial_shape_t shape;
    status = api.partial_shape_create(rank, dimensions, &shape);
    if (status == 0) {
        status = api.model_reshape_single_input(model, shape);
        api.partial_shape_free(&shape);
    }
    if (status != 0) {
        ov_error(error, error_size, "fixing the input shape", status);
        goto fail;
    }
    char thread_count[16];
    snprintf(thread_count, sizeof thread_count, "%d", threads < 1 ? 1 : threads);
    const ov_property_t properties[] = {
        {"INFERENCE_NUM_THREADS", thread_count},
        {"NUM_STREAMS", "1"},
        {"ENABLE_CPU_PINNING", "NO"},
        {"PERFORMANCE_HINT", "LATENCY"},
        // f32 throughout: on CPUs with bf16 units OpenVINO would otherwise run in bf16 and move scores by ~0.01.
        {"INFERENCE_PRECISION_HINT", "f32"},
    };
    status = api.core_compile_model_props(
        core, model, "CPU", sizeof properties / sizeof properties[0], properties, &network->compiled);
    api.model_free(model);
    model = NULL;
    if (status != 0) {
        ov_error(error, error_size, "compiling the model", status);
        goto fail;
    }
    status = api.compiled_model_outputs_size(network->compiled, &network->outputs);
    if (status == 0 && network->outputs > sizeof network->last / sizeof network->last[0]) {
        set_error(error, error_size, "the model has %zu outputs", network->outputs);
        goto fail;
    }
    if (status == 0) status = api.compiled_model_create_infer_request(network->compiled, &network->request);
    if (status != 0) {
        ov_error(error, error_size, "creating the inference request", status);
        goto fail;
    }
    return network;
fail:
    if (model) api.model_free(model);
    fwov_network_free(network);
    return NULL;
}

static void release_outputs(fwov_network *network) {
    for (size_t i = 0; i < sizeof network->last / sizeof network->last[0]; ++i) {
        if (network->last[i]) api.tensor_free(network->last[i]);
        network->last[i] = NULL;
    }
}

int fwov_network_run(
    fwov_network *network, const float *input, const int64_t *dims, int rank, char *error, size_t error_size) {
    if (network == NULL || input == NULL || dims == NULL || rank != network->rank) {
        set_error(error, error_size, "an input of rank %d for a network of rank %d", rank, network ? network->rank : 0);
        return -1;
    }
    for (int i = 0; i < rank; ++i) {
        if (dims[i] < 1 || dims[i] > (1 << 16) || (network->dims[i] != -1 && dims[i] != network->dims[i])) {
            set_error(error, error_size, "input dimension %d is %lld, the network takes %lld", i, (long long)dims[i],
                      (long long)network->dims[i]);
            return -1;
        }
    }
    release_outputs(network);
    ov_shape_t shape;
    ov_status_e status = api.shape_create(rank, dims, &shape);
    if (status != 0) {
        ov_error(error, error_size, "making the input shape", status);
        return -1;
    }
    ov_tensor_t *tensor = NULL;
    // The tensor wraps the caller's buffer (no copy); OpenVINO only reads it.
    status = api.tensor_create_from_host_ptr(OV_F32, shape, (void *)input, &tensor);
    api.shape_free(&shape);
    if (status == 0) status = api.infer_request_set_input_tensor_by_index(network->request, 0, tensor);
    if (status == 0) status = api.infer_request_infer(network->request);
    if (tensor) api.tensor_free(tensor);
    if (status != 0) {
        ov_error(error, error_size, "inference", status);
        return -1;
    }
    return 0;
}

size_t fwov_network_outputs(const fwov_network *network) { return network ? network->outputs : 0; }

int fwov_network_output_name(const fwov_network *network, size_t index, char *name, size_t name_size) {
    if (network == NULL || index >= network->outputs || name == NULL || name_size == 0) return -1;
    ov_output_const_port_t *port = NULL;
    char *text = NULL;
    ov_status_e status = api.compiled_model_output_by_index(network->compiled, index, &port);
    if (status == 0) status = api.port_get_any_name(port, &text);
    if (port) api.output_const_port_free(port);
    if (status != 0) return -1;
    snprintf(name, name_size, "%s", text ? text : "");
    if (text) api.free_string(text);
    return 0;
}

const float *fwov_network_output(
    fwov_network *network, size_t index, size_t *count, int64_t *dims, int *rank, char *error, size_t error_size) {
    if (network == NULL || index >= network->outputs) {
        set_error(error, error_size, "no output %zu", index);
        return NULL;
    }
    if (network->last[index] == NULL) {
        ov_status_e status =
            api.infer_request_get_output_tensor_by_index(network->request, index, &network->last[index]);
        if (status != 0) {
            ov_error(error, error_size, "reading an output", status);
            return NULL;
        }
    }
    ov_tensor_t *tensor = network->last[index];
    void *data = NULL;
    size_t size = 0;
    ov_shape_t shape = {0, NULL};
    int type = 0;
    ov_status_e status = api.tensor_get_element_type(tensor, &type);
    if (status == 0 && type != OV_F32) {
        set_error(error, error_size, "output %zu is not float32 (element type %d)", index, type);
        return NULL;
    }
    if (status == 0) status = api.tensor_data(tensor, &data);
    if (status == 0) status = api.tensor_get_size(tensor, &size);
    if (status == 0) status = api.tensor_get_shape(tensor, &shape);
    if (status != 0) {
        ov_error(error, error_size, "reading an output", status);
        return NULL;
    }
    if (shape.rank > OV_MAX_RANK) {
        api.shape_free(&shape);
        set_error(error, error_size, "output of rank %lld", (long long)shape.rank);
        return NULL;
    }
    if (rank) *rank = (int)shape.rank;
    if (dims) memcpy(dims, shape.dims, sizeof(int64_t) * (size_t)shape.rank);
    api.shape_free(&shape);
    if (count) *count = size;
    return data;
}

void fwov_network_free(fwov_network *network) {
    if (network == NULL) return;
    release_outputs(network);
    if (network->request) api.infer_request_free(network->request);
    if (network->compiled) api.compiled_model_free(network->compiled);
    free(network);
}
