/* libamdhip64.so for tests: the HIP runtime entry points wmma_gen's HipDevice reaches through
 * hip-python, each forwarding to a callback that Python installs (tests/hipstub/runtime.py
 * implements them over wmma_gen's emulator). No GPU, no ROCm.
 *
 * Prototypes follow hip_runtime_api.h as hip-python 10.x declares them (rocm/bindings/cyhip.pxd);
 * handles (modules, functions, streams, events) are opaque pointers. A slot without a callback
 * answers hipErrorNotInitialized (3), so the library does nothing until Python installs the table.
 *
 * wgStubSetNoopLaunch(1) makes hipModuleLaunchKernel return hipSuccess at once, in C, without
 * reaching Python (counted by wgStubNoopLaunches): the "no-op launch in C" that
 * bench/launch_overhead.py measures every host path against.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef int hipError_t;
typedef void *handle;
#define HIP_ERROR_NOT_INITIALIZED 3

#define SLOTS(X) X(hipInit) X(hipGetDeviceCount) X(hipGetDeviceProperties) X(hipSetDevice) \
    X(hipGetErrorText) X(hipMalloc) X(hipFree) X(hipMemcpy) X(hipMemcpyAsync) X(hipMemset) \
    X(hipModuleLoadData) X(hipModuleGetFunction) X(hipModuleUnload) X(hipModuleLaunchKernel) \
    X(hipStreamCreate) X(hipStreamSynchronize) X(hipStreamDestroy) X(hipEventCreate) \
    X(hipEventRecord) X(hipEventSynchronize) X(hipEventElapsedTime) X(hipEventDestroy) \
    X(hipDeviceSynchronize) X(hipStreamBeginCapture) X(hipStreamEndCapture) X(hipStreamIsCapturing) \
    X(hipGraphInstantiate) X(hipGraphLaunch) X(hipGraphExecDestroy) X(hipGraphDestroy)
#define AS_ENUM(name) SLOT_##name,
#define AS_NAME(name) #name,
enum { SLOTS(AS_ENUM) SLOT_COUNT };
static const char *slot_names[] = { SLOTS(AS_NAME) };
static void *table[SLOT_COUNT];

/* ---- the table Python fills ---------------------------------------------------------- */
int wgStubSlotCount(void) { return SLOT_COUNT; }
const char *wgStubSlotName(int i) { return (i >= 0 && i < SLOT_COUNT) ? slot_names[i] : NULL; }
int wgStubSetSlot(int i, void *fn) {
    if (i < 0 || i >= SLOT_COUNT) return -1;
    table[i] = fn;
    return 0;
}

static int noop_launch;
static unsigned long long noop_launches;
int wgStubSetNoopLaunch(int on) { int was = noop_launch; noop_launch = on; return was; }
unsigned long long wgStubNoopLaunches(void) { return noop_launches; }

#define FORWARD(name, sig, ...) do { \
        hipError_t (*fn) sig = (hipError_t (*) sig) table[SLOT_##name]; \
        return fn ? fn(__VA_ARGS__) : HIP_ERROR_NOT_INITIALIZED; } while (0)

/* ---- device and errors ---------------------------------------------------------------- */
hipError_t hipInit(unsigned int flags) { FORWARD(hipInit, (unsigned int), flags); }
hipError_t hipGetDeviceCount(int *count) { FORWARD(hipGetDeviceCount, (int *), count); }
hipError_t hipSetDevice(int device) { FORWARD(hipSetDevice, (int), device); }
hipError_t hipDeviceSynchronize(void) { FORWARD(hipDeviceSynchronize, (void)); }
/* hip-python >= 6.0 binds the R0600 struct under this name; older bindings the plain one. */
hipError_t hipGetDevicePropertiesR0600(void *prop, int device) {
    FORWARD(hipGetDeviceProperties, (void *, int), prop, device);
}
hipError_t hipGetDeviceProperties(void *prop, int device) {
    FORWARD(hipGetDeviceProperties, (void *, int), prop, device);
}

/* Strings live for the life of the process, as HIP's do: one copy per (kind, code). */
static char *texts[2][1024];
static const char *error_text(int kind, hipError_t code) {
    static char fallback[64];
    unsigned i = (unsigned)code < 1023u ? (unsigned)code : 1023u;
    hipError_t (*fn)(int, hipError_t, char *, size_t) =
        (hipError_t (*)(int, hipError_t, char *, size_t)) table[SLOT_hipGetErrorText];
    if (texts[kind][i]) return texts[kind][i];
    if (!fn) {
        strcpy(fallback, kind ? "hipErrorNotInitialized" : "HIP stub has no callbacks installed");
        return fallback;
    }
    char buf[256] = "";
    fn(kind, code, buf, sizeof buf);
    buf[sizeof buf - 1] = 0;
    texts[kind][i] = strdup(buf);
    return texts[kind][i];
}
const char *hipGetErrorString(hipError_t code) { return error_text(0, code); }
const char *hipGetErrorName(hipError_t code) { return error_text(1, code); }

/* ---- memory ----------------------------------------------------------------------------- */
hipError_t hipMalloc(void **ptr, size_t size) { FORWARD(hipMalloc, (void **, size_t), ptr, size); }
hipError_t hipFree(void *ptr) { FORWARD(hipFree, (void *), ptr); }
hipError_t hipMemcpy(void *dst, const void *src, size_t n, int kind) {
    FORWARD(hipMemcpy, (void *, const void *, size_t, int), dst, src, n, kind);
}
hipError_t hipMemcpyAsync(void *dst, const void *src, size_t n, int kind, handle stream) {
    FORWARD(hipMemcpyAsync, (void *, const void *, size_t, int, handle), dst, src, n, kind, stream);
}
hipError_t hipMemset(void *dst, int value, size_t n) {
    FORWARD(hipMemset, (void *, int, size_t), dst, value, n);
}

/* ---- code objects and launches ------------------------------------------------------- */
hipError_t hipModuleLoadData(handle *module, const void *image) {
    FORWARD(hipModuleLoadData, (handle *, const void *), module, image);
}
hipError_t hipModuleGetFunction(handle *function, handle module, const char *name) {
    FORWARD(hipModuleGetFunction, (handle *, handle, const char *), function, module, name);
}
hipError_t hipModuleUnload(handle module) { FORWARD(hipModuleUnload, (handle), module); }
/* The callback takes the three dimensions of grid and block as pointers to keep its
 * ctypes prototype short; everything else is passed through unchanged. */
hipError_t hipModuleLaunchKernel(handle f, unsigned int gx, unsigned int gy, unsigned int gz,
                                 unsigned int bx, unsigned int by, unsigned int bz,
                                 unsigned int shared_bytes, handle stream, void **kernel_params,
                                 void **extra) {
    if (noop_launch) { noop_launches++; return 0; }
    unsigned int grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    FORWARD(hipModuleLaunchKernel, (handle, unsigned int *, unsigned int *, unsigned int, handle,
                                    void **, void **),
            f, grid, block, shared_bytes, stream, kernel_params, extra);
}

/* ---- streams and events ---------------------------------------------------------------- */
hipError_t hipStreamCreate(handle *stream) { FORWARD(hipStreamCreate, (handle *), stream); }
hipError_t hipStreamSynchronize(handle stream) { FORWARD(hipStreamSynchronize, (handle), stream); }
hipError_t hipStreamDestroy(handle stream) { FORWARD(hipStreamDestroy, (handle), stream); }
hipError_t hipEventCreate(handle *event) { FORWARD(hipEventCreate, (handle *), event); }
hipError_t hipEventRecord(handle event, handle stream) {
    FORWARD(hipEventRecord, (handle, handle), event, stream);
}
hipError_t hipEventSynchronize(handle event) { FORWARD(hipEventSynchronize, (handle), event); }
hipError_t hipEventElapsedTime(float *ms, handle start, handle stop) {
    FORWARD(hipEventElapsedTime, (float *, handle, handle), ms, start, stop);
}
hipError_t hipEventDestroy(handle event) { FORWARD(hipEventDestroy, (handle), event); }

/* ---- stream capture and graphs (hip_runtime_api.h; modelled in runtime.py) --------------- */
hipError_t hipStreamBeginCapture(handle stream, int mode) {
    FORWARD(hipStreamBeginCapture, (handle, int), stream, mode);
}
hipError_t hipStreamEndCapture(handle stream, handle *graph) {
    FORWARD(hipStreamEndCapture, (handle, handle *), stream, graph);
}
hipError_t hipStreamIsCapturing(handle stream, int *status) {
    FORWARD(hipStreamIsCapturing, (handle, int *), stream, status);
}
hipError_t hipGraphInstantiate(handle *exec, handle graph, handle *error_node, char *log, size_t log_size) {
    FORWARD(hipGraphInstantiate, (handle *, handle, handle *, char *, size_t), exec, graph, error_node, log,
            log_size);
}
hipError_t hipGraphLaunch(handle exec, handle stream) { FORWARD(hipGraphLaunch, (handle, handle), exec, stream); }
hipError_t hipGraphExecDestroy(handle exec) { FORWARD(hipGraphExecDestroy, (handle), exec); }
hipError_t hipGraphDestroy(handle graph) { FORWARD(hipGraphDestroy, (handle), graph); }
