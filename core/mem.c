/* core/mem.c - memory in a context's space: host for the CPU, device for CUDA. */
#include <string.h>

#include "core/core_impl.h"
#ifdef KRILL_HAVE_CUDA
#include "core/cuda_impl.h"
#define ON_GPU(ctx) krill_on_gpu(ctx)
#else
#define ON_GPU(ctx) 0
#endif

krill_status krill_mem_alloc(krill_ctx *ctx, void **p, size_t bytes, const char *what)
{
    krill_status st;
#ifdef KRILL_HAVE_CUDA
    if (ON_GPU(ctx)) return krill_cuda_alloc(ctx, p, bytes, what);   /* counts its own */
#endif
    st = krill_alloc(p, bytes, what);
    if (st == KRILL_OK) {   /* krill_ctx_alloc_stats_get */
        ctx->allocated.allocations++;
        ctx->allocated.bytes += (int64_t)bytes;
    }
    return st;
}

krill_status krill_mem_check_pointer(krill_ctx *ctx, const void *p, const char *what)
{
#ifdef KRILL_HAVE_CUDA
    if (ON_GPU(ctx)) return krill_cuda_check_pointer(ctx, p, what);
#endif
    (void)ctx;
    (void)p;
    (void)what;
    return KRILL_OK;
}

void krill_mem_free(krill_ctx *ctx, void *p)
{
    if (!p) return;
#ifdef KRILL_HAVE_CUDA
    if (ON_GPU(ctx)) {
        krill_cuda_free(ctx, p);
        return;
    }
#endif
    (void)ctx;
    krill_free(p);
}

/* kind as in krill_cuda_memcpy: 0 host->ctx, 1 ctx->host, 2 ctx->ctx */
static krill_status mem_move(krill_ctx *ctx, void *dst, const void *src, size_t bytes, int kind)
{
    if (bytes == 0) return KRILL_OK;
#ifdef KRILL_HAVE_CUDA
    if (ON_GPU(ctx)) return krill_cuda_memcpy(ctx, dst, src, bytes, kind);
#endif
    (void)ctx;
    (void)kind;
    memmove(dst, src, bytes);
    return KRILL_OK;
}

krill_status krill_mem_upload(krill_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    return mem_move(ctx, dst, src, bytes, 0);
}

krill_status krill_mem_download(krill_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    return mem_move(ctx, dst, src, bytes, 1);
}

krill_status krill_mem_copy(krill_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    return mem_move(ctx, dst, src, bytes, 2);
}

krill_status krill_mem_zero(krill_ctx *ctx, void *p, size_t bytes)
{
    if (bytes == 0) return KRILL_OK;
#ifdef KRILL_HAVE_CUDA
    if (ON_GPU(ctx)) return krill_cuda_memset0(ctx, p, bytes);
#endif
    (void)ctx;
    memset(p, 0, bytes);
    return KRILL_OK;
}

krill_status krill_scalars_read(krill_ctx *ctx, const double *src, double *host, int count)
{
    return krill_mem_download(ctx, host, src, (size_t)count * sizeof(double));
}

krill_status krill_scalars_write(krill_ctx *ctx, double *dst, const double *host, int count)
{
    return krill_mem_upload(ctx, dst, host, (size_t)count * sizeof(double));
}
