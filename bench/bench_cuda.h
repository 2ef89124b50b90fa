/* bench/bench_cuda.h - the CUDA half of bench_clock, extern "C" (bench_cuda.cu). Events and
 * streams are passed as void * so that C files need no CUDA headers. Built and called only
 * when KRILL_HAVE_CUDA. */
#ifndef KRILL_BENCH_CUDA_H
#define KRILL_BENCH_CUDA_H

#include "core/core_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

krill_status bench_cuda_events_create(void **start, void **stop);
krill_status bench_cuda_event_record(void *event, void *stream);
/* Waits for `stop`, then gives the seconds between the two events. */
krill_status bench_cuda_event_elapsed(void *start, void *stop, double *seconds);
void bench_cuda_events_destroy(void *start, void *stop);   /* NULL-safe */

/* The out-of-core DGEMM peer (bench_overlap): C = A B, row-major A (h x m), B (m x w),
 * C (h x w) in host memory, by cublasXtDgemm on `device` with blocks of `block_dim`;
 * *seconds: the host clock around the (synchronous) call. */
krill_status bench_cuda_xt_dgemm(int device, int64_t h, int64_t m, int64_t w, const double *a,
                                 const double *b, double *c, int block_dim, double *seconds);

/* Page-locked host memory (cudaMallocHost), for benchmarks whose host arrays are pinned. */
krill_status bench_cuda_host_alloc(void **p, size_t bytes);
void bench_cuda_host_free(void *p);   /* NULL-safe */

#ifdef __cplusplus
}
#endif
#endif
