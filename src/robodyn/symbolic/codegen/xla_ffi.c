/* robodyn's XLA FFI handler: launches a customized model's CUDA kernel (one thread per state, states as rows)
 * on XLA's stream, so that the kernel runs inside jax.jit.
 *
 * The call's operands are the kernel's pointer arguments in order (the per-state arrays, shape (..., size), then
 * any shared values too large to travel by value); its one result is the output, shape (..., output size).
 * Attributes: "kernel", the index of the kernel's CUfunction in the table filled by rd_xla_add; "block", the
 * threads per block; "shared", the bytes of the struct passed by value (ignored when "by_value" is 0).
 * The kernel takes (long count, pointers..., [struct], out). Each kernel comes with its launch function
 * (cuLaunchKernel's signature, given by address: this file needs neither CUDA's headers nor its libraries), or
 * with a host launch that runs the kernel's C text on the CPU (no stream: how the handler is tested without a
 * GPU). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "xla/ffi/api/c_api.h"

typedef int (*rd_launch_fn)(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                            unsigned bz, unsigned shared_memory, void *stream, void **params, void **extra);

/* The head of each extension in the call frame's list, which the FFI header names XLA_FFI_Extension_Base or
 * XLA_FFI_InternalExtension depending on its version, with these fields. */
typedef struct rd_extension {
    size_t struct_size;
    int type;
    const struct rd_extension *next;
} rd_extension;

typedef struct {
    rd_extension base;
    XLA_FFI_Metadata *metadata;
} rd_metadata_extension;

#define RD_MAX_KERNELS 4096
#define RD_MAX_ARGS 64

typedef struct {
    void *function;
    void *launch; /* an rd_launch_fn, kept as the address it is given as */
    int host;
} rd_kernel;

static rd_kernel rd_kernels[RD_MAX_KERNELS];
static int64_t rd_kernel_count;

/* The index of (function, launch, host) in the table (added once), or -1 when the table is full. */
int64_t rd_xla_add(void *function, void *launch, int host) {
    for (int64_t k = 0; k < rd_kernel_count; ++k)
        if (rd_kernels[k].function == function && rd_kernels[k].launch == launch && rd_kernels[k].host == host)
            return k;
    if (rd_kernel_count == RD_MAX_KERNELS || launch == NULL) return -1;
    rd_kernels[rd_kernel_count].function = function;
    rd_kernels[rd_kernel_count].launch = launch;
    rd_kernels[rd_kernel_count].host = host;
    return rd_kernel_count++;
}

static XLA_FFI_Error *rd_error(const XLA_FFI_Api *api, const char *message) {
    XLA_FFI_Error_Create_Args args;
    memset(&args, 0, sizeof args);
    args.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
    args.message = message;
    args.errc = XLA_FFI_Error_Code_INVALID_ARGUMENT;
    return api->XLA_FFI_Error_Create(&args);
}

static void *rd_attribute(const XLA_FFI_CallFrame *frame, const char *name, XLA_FFI_AttrType type) {
    size_t length = strlen(name);
    for (int64_t k = 0; k < frame->attrs.size; ++k) {
        const XLA_FFI_ByteSpan *key = frame->attrs.names[k];
        if (frame->attrs.types[k] == type && key->len == length && memcmp(key->ptr, name, length) == 0)
            return frame->attrs.attrs[k];
    }
    return NULL;
}

static int rd_int_attribute(const XLA_FFI_CallFrame *frame, const char *name, int64_t *value) {
    const XLA_FFI_Scalar *s = rd_attribute(frame, name, XLA_FFI_AttrType_SCALAR);
    if (s == NULL || s->dtype != XLA_FFI_DataType_S64) return 0;
    memcpy(value, s->value, sizeof *value);
    return 1;
}

XLA_FFI_Error *rd_xla_kernel(XLA_FFI_CallFrame *frame) {
    const XLA_FFI_Api *api = frame->api;
    /* XLA first asks for the FFI version this handler was built against */
    for (const rd_extension *e = (const rd_extension *)frame->extension_start; e != NULL; e = e->next) {
        if (e->type == XLA_FFI_Extension_Metadata) {
            XLA_FFI_Metadata *m = ((const rd_metadata_extension *)e)->metadata;
            m->api_version.major_version = XLA_FFI_API_MAJOR;
            m->api_version.minor_version = XLA_FFI_API_MINOR;
            m->traits = 0; /* not for XLA's CUDA graphs: the launch parameters hold the buffers' addresses */
            return NULL;
        }
    }
    if (frame->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
    int64_t index, block, by_value;
    if (!rd_int_attribute(frame, "kernel", &index) || !rd_int_attribute(frame, "block", &block)
        || !rd_int_attribute(frame, "by_value", &by_value))
        return rd_error(api, "robodyn's XLA handler: attributes kernel, block and by_value (int64) are required");
    if (index < 0 || index >= rd_kernel_count)
        return rd_error(api, "robodyn's XLA handler: unknown kernel (not added by robodyn in this process)");
    if (block < 1 || block > 1024) return rd_error(api, "robodyn's XLA handler: block must be 1..1024");
    const XLA_FFI_Array *shared = rd_attribute(frame, "shared", XLA_FFI_AttrType_ARRAY);
    if (by_value && shared == NULL) return rd_error(api, "robodyn's XLA handler: attribute shared is required");
    if (frame->rets.size != 1 || frame->args.size + (by_value != 0) + 2 > RD_MAX_ARGS)
        return rd_error(api, "robodyn's XLA handler: one result and fewer arguments expected");
    const XLA_FFI_Buffer *out = frame->rets.rets[0];
    long count = 1; /* the states: every axis of the result but the last */
    for (int64_t d = 0; d + 1 < out->rank; ++d) count *= (long)out->dims[d];
    void *pointers[RD_MAX_ARGS], *params[RD_MAX_ARGS];
    int k = 0;
    params[k++] = &count;
    for (int64_t a = 0; a < frame->args.size; ++a, ++k) {
        pointers[k] = ((const XLA_FFI_Buffer *)frame->args.args[a])->data;
        params[k] = &pointers[k];
    }
    if (by_value) params[k++] = shared->data;
    pointers[k] = out->data;
    params[k] = &pointers[k];
    if (count == 0) return NULL;
    const rd_kernel *kernel = &rd_kernels[index];
    XLA_FFI_Stream_Get_Args stream;
    memset(&stream, 0, sizeof stream);
    stream.struct_size = XLA_FFI_Stream_Get_Args_STRUCT_SIZE;
    stream.ctx = frame->ctx;
    if (!kernel->host) {
        XLA_FFI_Error *failed = api->XLA_FFI_Stream_Get(&stream);
        if (failed != NULL) return failed;
    }
    rd_launch_fn launch;
    memcpy(&launch, &kernel->launch, sizeof launch); /* an address to a function pointer, as dlsym's users do */
    unsigned grid = (unsigned)((count + block - 1) / block);
    int status = launch(kernel->function, grid, 1, 1, (unsigned)block, 1, 1, 0, stream.stream, params, NULL);
    if (status != 0) {
        static char message[96];
        snprintf(message, sizeof message, "robodyn's XLA handler: the kernel launch failed (CUDA error %d)", status);
        return rd_error(api, message);
    }
    return NULL;
}
