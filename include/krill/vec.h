/* krill/vec.h - vectors and BLAS-1 on a context.
 *
 * A vector is a length and a pointer in its context's memory space (host for the CPU,
 * device for CUDA). It owns its storage unless made with krill_vec_wrap. Operations on
 * the CPU run with the context's OpenMP threads; on CUDA they are queued on the context's
 * stream (functions that return a scalar wait for it). */
#ifndef KRILL_VEC_H
#define KRILL_VEC_H

#include <stdint.h>
#include "krill/ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct krill_vec krill_vec;

krill_status krill_vec_create(krill_ctx *ctx, int64_t n, krill_vec **v);   /* zeroed */
/* Wrap caller storage already in the context's memory space; it is not freed. On a GPU
 * context that is device memory of its GPU, managed memory or mapped page-locked host memory
 * (cudaHostAlloc, cudaHostRegister); pageable host memory or another GPU's is KRILL_ERR_ARG
 * (doc/device-memory.md). */
krill_status krill_vec_wrap(krill_ctx *ctx, int64_t n, double *data, krill_vec **v);
void krill_vec_destroy(krill_vec **v);                   /* NULL-safe; sets *v = NULL */

int64_t krill_vec_size(const krill_vec *v);
double *krill_vec_data(krill_vec *v);                    /* in the context's memory */
krill_ctx *krill_vec_ctx(const krill_vec *v);

krill_status krill_vec_upload(krill_vec *v, const double *host);    /* host -> v */
krill_status krill_vec_download(const krill_vec *v, double *host);  /* v -> host */

krill_status krill_vec_fill(krill_vec *v, double value);
krill_status krill_vec_copy(const krill_vec *x, krill_vec *y);             /* y = x */
krill_status krill_vec_scal(double alpha, krill_vec *x);                   /* x = a*x */
krill_status krill_vec_axpy(double alpha, const krill_vec *x, krill_vec *y); /* y += a*x */
krill_status krill_vec_axpby(double alpha, const krill_vec *x, double beta,
                             krill_vec *y);                          /* y = a*x + b*y */
krill_status krill_vec_dot(const krill_vec *x, const krill_vec *y, double *result);
krill_status krill_vec_nrm2(const krill_vec *x, double *result);

#ifdef __cplusplus
}
#endif
#endif
