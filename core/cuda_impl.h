/* core/cuda_impl.h - the CUDA half of core/, as extern "C" functions that the C files call
 * only in a CUDA build (KRILL_HAVE_CUDA). Implemented in core/cuda.cu and kernels/blas1.cu. */
#ifndef KRILL_CUDA_IMPL_H
#define KRILL_CUDA_IMPL_H

#include "core/core_impl.h"

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
