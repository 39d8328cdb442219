/*
 * A minimal extern C operator library for MegEngine 1.13 (extern C operator ABI
 * version 0x24, the one of src/serialization/include/megbrain/serialization/
 * extern_c_opr.h at tag v1.13.0). The declarations below are written for this
 * test from that ABI; only the members this library uses are named.
 *
 * Operator: out = in * scale + bias, elementwise on float32; loader name
 * "mge_test_scale_bias", operator type "MgeTestScaleBias". Its data, written
 * into the model when it was dumped, is the text "scale=<float> bias=<float>".
 *
 * The engine calls `mgb_c_opr_init` when the library is loaded
 * (LITE_set_loader_lib_path / load_and_run --c-opr-lib); it registers the loader,
 * which the graph loader then asks for every operator dumped with that name.
 *
 * Build: cc -shared -fPIC -O2 -o libscale_bias_opr.so scale_bias_opr.c
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ABI_VERSION 0x24
#define MAX_NDIM 8

enum { DTYPE_FLOAT32 = 0 };

typedef struct {
    uint32_t ndim, shape[MAX_NDIM];
} Shape;

typedef struct {
    uint32_t dtype;
    Shape shape;
} Layout;

typedef struct {
    Layout layout;
    void* data;
} Tensor;

typedef struct OprDesc OprDesc;

/* Field order and types as in the 0x24 ABI's MGBOprDesc; the engine checks
 * `size` against its own struct (equal, or one pointer less for loaders built
 * before `dynamic_param` was added). */
struct OprDesc {
    uint32_t size;
    uint32_t nr_output;
    const char* type_name;
    void (*release)(OprDesc* self);
    size_t (*hash)(const OprDesc* self);
    int (*is_same)(const OprDesc* self, const OprDesc* rhs);
    void (*execute)(const OprDesc* self, const Tensor* input, const Tensor* output);
    void (*infer_shape)(const OprDesc* self, const Shape* input, Shape* output);
    void (*infer_dtype)(const OprDesc* self, const int* input, int* output);
    void* user_data;
    void* dynamic_param;
};

typedef struct {
    const char* name;
    OprDesc* (*create_desc)(size_t nr_input, const void* buf, size_t buf_len);
} OprLoader;

typedef struct {
    int (*register_loader)(const OprLoader* loader);
    int (*unregister_loader)(const char* name);
} ExternCOprApi;

typedef const ExternCOprApi* (*GetApi)(int version);

typedef struct {
    float scale, bias;
} Params;

static const Params* params_of(const OprDesc* desc) {
    return (const Params*)desc->user_data;
}

static void release(OprDesc* self) {
    free(self->user_data);
    free(self);
}

static size_t hash(const OprDesc* self) {
    size_t h = 0;
    memcpy(&h, params_of(self), sizeof(Params) < sizeof(h) ? sizeof(Params) : sizeof(h));
    return h;
}

static int is_same(const OprDesc* self, const OprDesc* rhs) {
    return memcmp(params_of(self), params_of(rhs), sizeof(Params)) == 0;
}

static size_t element_count(const Shape* shape) {
    size_t n = 1;
    for (uint32_t i = 0; i < shape->ndim; ++i)
        n *= shape->shape[i];
    return n;
}

static void execute(const OprDesc* self, const Tensor* input, const Tensor* output) {
    const Params* p = params_of(self);
    const float* in = (const float*)input[0].data;
    float* out = (float*)output[0].data;
    size_t n = element_count(&input[0].layout.shape);
    for (size_t i = 0; i < n; ++i)
        out[i] = in[i] * p->scale + p->bias;
}

static void infer_shape(const OprDesc* self, const Shape* input, Shape* output) {
    (void)self;
    output[0] = input[0];
}

static OprDesc* create_desc(size_t nr_input, const void* buf, size_t buf_len) {
    /* The buffer is not NUL-terminated and has no alignment guarantee. */
    char text[64];
    Params params;
    if (nr_input != 1 || buf_len == 0 || buf_len >= sizeof(text))
        return NULL;
    memcpy(text, buf, buf_len);
    text[buf_len] = '\0';
    if (sscanf(text, "scale=%f bias=%f", &params.scale, &params.bias) != 2)
        return NULL;

    OprDesc* desc = calloc(1, sizeof(OprDesc));
    Params* user = malloc(sizeof(Params));
    if (!desc || !user) {
        free(desc);
        free(user);
        return NULL;
    }
    *user = params;
    desc->size = sizeof(OprDesc);
    desc->nr_output = 1;
    desc->type_name = "MgeTestScaleBias";
    desc->release = release;
    desc->hash = hash;
    desc->is_same = is_same;
    desc->execute = execute;
    desc->infer_shape = infer_shape;
    desc->user_data = user;
    return desc;
}

__attribute__((visibility("default"))) void mgb_c_opr_init(GetApi get_api) {
    static const OprLoader loader = {"mge_test_scale_bias", create_desc};
    const ExternCOprApi* api = get_api(ABI_VERSION);
    if (api)
        api->register_loader(&loader);
}
