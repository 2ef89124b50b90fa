/* core/cuda_impl.h - the CUDA half of core/, as extern "C" functions that the C files call
 * only in a CUDA build (KRILL_HAVE_CUDA). Implemented in core/cuda.cu and kernels/blas1.cu. */
#ifndef KRILL_CUDA_IMPL_H
#define KRILL_CUDA_IMPL_H

#include "core/core_impl.h"

/* Threads per block of every BLAS-1, reduction and CSR kernel: 8 warps, a power of two
 * (the block sum assumes whole warps). 8 such blocks fill an SM of 2048 threads when each
 * thread has at most 32 registers (krill_cuda_resident_blocks). */
#define KRILL_CUDA_THREADS 256
#define KRILL_CUDA_WARPS (KRILL_CUDA_THREADS / 32)

#ifdef __cplusplus
extern "C" {
#endif

int krill_cuda_count(void);
krill_status krill_cuda_ctx_init(krill_ctx *ctx);          /* fills ctx->cuda, describe */
void krill_cuda_ctx_fini(krill_ctx *ctx);
krill_status krill_cuda_sync(krill_ctx *ctx);
krill_status krill_cuda_cusparse(krill_ctx *ctx, void **handle);   /* created on first use */

krill_status krill_cuda_alloc(krill_ctx *ctx, void **p, size_t bytes, const char *what);
void krill_cuda_free(krill_ctx *ctx, void *p);
krill_status krill_cuda_check_pointer(krill_ctx *ctx, const void *p, const char *what);
/* kind: 0 host->device, 1 device->host, 2 device->device; all on the context's stream,
 * device->host waits for the copy to finish. */
krill_status krill_cuda_memcpy(krill_ctx *ctx, void *dst, const void *src, size_t bytes, int kind);
krill_status krill_cuda_memset0(krill_ctx *ctx, void *p, size_t bytes);

/* ---- staged uploads (core/cuda_stage.cu) --------------------------------------------------
 * n_chunks chunks of at most chunk_bytes through the context's KRILL_STAGE_SLOTS page-locked
 * slots (made or remade to hold chunk_bytes): pack(user, k, slot, chunk_bytes) fills the
 * slot on the host and returns its bytes (at most chunk_bytes); the copy engine then takes
 * them to target(user, k) when target is set, else to a device buffer of chunk_bytes where
 * land(ctx, user, k, buffer, bytes) queues the kernels that
 * consume it on the context's stream (they run beside the next chunks' copies). Ordered
 * after the context's queued work, and the context's stream waits for the last copy. A
 * failure drains the queue before it returns. */
#define KRILL_STAGE_SLOTS 4
typedef struct krill_cuda_pipe {
    int64_t n_chunks;
    size_t chunk_bytes;      /* the most a pack writes: 1 .. 1 GiB */
    size_t (*pack)(void *user, int64_t k, void *slot, size_t slot_bytes);
    void *(*target)(void *user, int64_t k);
    krill_status (*land)(krill_ctx *ctx, void *user, int64_t k, const void *buffer, size_t bytes);
    void *user;
} krill_cuda_pipe;
krill_status krill_cuda_pipe_run(krill_ctx *ctx, const krill_cuda_pipe *p);
/* bytes from pageable host memory to the device through the pipe (krill_mem_upload's path) */
krill_status krill_cuda_upload_staged(krill_ctx *ctx, void *dst, const void *src, size_t bytes);
/* The chunk size of the uploads from now on and the slots' size for staging made from now on
 * (default 8 MiB; a multiple of 64, at most 1 GiB; smaller values make tests cut small
 * arrays into many chunks; below 64: unchanged, a query); returns the size before the
 * call. Process-wide (atomic), for tests and benchmarks. */
size_t krill_cuda_stage_slot_bytes(size_t bytes);
/* Frees the context's staging now (the context's end does it too). */
void krill_cuda_stage_release(krill_ctx *ctx);

/* Blocks of KRILL_CUDA_THREADS threads that one multiprocessor of the context's device keeps
 * resident for `kernel` (its registers and shared memory decide: 8 on sm_80 and sm_90 for 32
 * registers a thread, 6 for 40), asked of the occupancy calculator once per kernel and
 * context; at least 1. */
int krill_cuda_resident_blocks(krill_cuda *cu, const void *kernel);

/* Check the last launch; on failure set an error naming `where`. */
krill_status krill_cuda_check_launch(const char *where);

krill_status krill_cuda_fill(krill_ctx *ctx, int64_t n, double value, double *x);
krill_status krill_cuda_scal(krill_ctx *ctx, int64_t n, double alpha, double *x);
krill_status krill_cuda_axpby(krill_ctx *ctx, int64_t n, double alpha, const double *x,
                              double beta, double *y);
krill_status krill_cuda_dot(krill_ctx *ctx, int64_t n, const double *x, const double *y,
                            double *result);
krill_status krill_cuda_nrm2(krill_ctx *ctx, int64_t n, const double *x, double *result);
krill_status krill_cuda_xmy(krill_ctx *ctx, int64_t n, const double *x, const double *y, double *z);

#ifdef __cplusplus
}
#endif
#endif
