/*
 * A stand-in for the NVIDIA driver's libcuda.so.1, for machines without a GPU:
 * the few driver API calls `mge` asks before it loads the engine, answering
 * as a driver with the GPUs that MGE_FAKE_GPUS lists, each as
 * "NAME,MAJOR.MINOR,BYTES", several joined by ';'
 * (e.g. "NVIDIA H100 80GB HBM3,9.0,85520809984"). Without MGE_FAKE_GPUS,
 * cuInit says there is no device, as the real driver does on a machine
 * without a GPU; MGE_FAKE_CUINIT=N makes cuInit return N instead.
 * MGE_FAKE_CUINIT_LOG=FILE appends a line to FILE at each cuInit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_INVALID_DEVICE 101
#define CUDA_ERROR_NO_DEVICE 100
#define MAX_GPUS 16

typedef struct {
    char name[256];
    int major, minor;
    size_t memory;
} Gpu;

static Gpu gpus[MAX_GPUS];
static int count, initialized;

int cuDriverGetVersion(int *version) {
    *version = 12020;
    return CUDA_SUCCESS;
}

int cuInit(unsigned int flags) {
    (void)flags;
    const char *log = getenv("MGE_FAKE_CUINIT_LOG");
    if (log) {
        FILE *file = fopen(log, "a");
        if (file) {
            fputs("cuInit\n", file);
            fclose(file);
        }
    }
    const char *code = getenv("MGE_FAKE_CUINIT");
    if (code) return atoi(code);
    const char *list = getenv("MGE_FAKE_GPUS");
    if (!list || !*list) return CUDA_ERROR_NO_DEVICE;
    count = 0;
    const char *entry = list;
    while (entry && *entry && count < MAX_GPUS) {
        const char *end = strchr(entry, ';');
        size_t len = end ? (size_t)(end - entry) : strlen(entry);
        char text[sizeof gpus[0].name];
        if (len >= sizeof text) len = sizeof text - 1;
        memcpy(text, entry, len);
        text[len] = 0;
        char *capability = strchr(text, ',');
        char *memory = capability ? strchr(capability + 1, ',') : NULL;
        if (!capability || !memory) return CUDA_ERROR_INVALID_VALUE;
        *capability++ = 0;
        *memory++ = 0;
        Gpu *gpu = &gpus[count++];
        snprintf(gpu->name, sizeof gpu->name, "%s", text);
        if (sscanf(capability, "%d.%d", &gpu->major, &gpu->minor) != 2) return CUDA_ERROR_INVALID_VALUE;
        gpu->memory = strtoull(memory, NULL, 10);
        entry = end ? end + 1 : NULL;
    }
    initialized = 1;
    return CUDA_SUCCESS;
}

int cuDeviceGetCount(int *out) {
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    *out = count;
    return CUDA_SUCCESS;
}

int cuDeviceGet(int *device, int ordinal) {
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (ordinal < 0 || ordinal >= count) return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

int cuDeviceGetName(char *name, int len, int device) {
    if (device < 0 || device >= count || len <= 0) return CUDA_ERROR_INVALID_DEVICE;
    snprintf(name, (size_t)len, "%s", gpus[device].name);
    return CUDA_SUCCESS;
}

int cuDeviceGetAttribute(int *value, int attribute, int device) {
    if (device < 0 || device >= count) return CUDA_ERROR_INVALID_DEVICE;
    switch (attribute) {
    case 75: *value = gpus[device].major; return CUDA_SUCCESS;
    case 76: *value = gpus[device].minor; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

int cuDeviceTotalMem_v2(size_t *bytes, int device) {
    if (device < 0 || device >= count) return CUDA_ERROR_INVALID_DEVICE;
    *bytes = gpus[device].memory;
    return CUDA_SUCCESS;
}

int cuGetErrorName(int error, const char **name) {
    switch (error) {
    case CUDA_SUCCESS: *name = "CUDA_SUCCESS"; return CUDA_SUCCESS;
    case CUDA_ERROR_NO_DEVICE: *name = "CUDA_ERROR_NO_DEVICE"; return CUDA_SUCCESS;
    case 35: *name = "CUDA_ERROR_INSUFFICIENT_DRIVER"; return CUDA_SUCCESS;
    case 999: *name = "CUDA_ERROR_UNKNOWN"; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}
