/* core/blas1.c - BLAS-1 on raw pointers in context memory: OpenMP on the CPU, dispatched
 * to kernels/blas1.cu on CUDA.
 *
 * CPU reductions split [0, n) into `threads` contiguous chunks (the static schedule), each
 * thread sums its chunk in index order, and the partial sums are added in thread order:
 * a given thread count always gives the same bits (OpenMP's reduction clause combines in
 * arrival order, which does not). On a context with a communicator each rank's sum is then
 * added over the ranks (krill_ctx_allreduce: one MPI_Allreduce of 8 bytes). On a CUDA
 * context the result is in device memory; on a communicator it is brought to the host,
 * summed over the ranks and put back (krill_ctx_allreduce_device: 8 bytes each way). */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "core/core_impl.h"
#ifdef KRILL_HAVE_CUDA
#include "core/cuda_impl.h"
#define GPU(ctx, call)                                                                   \
    do {                                                                                 \
        if (krill_on_gpu(ctx)) return (call);                                            \
    } while (0)
#else
#define GPU(ctx, call) ((void)0)
#endif

/* Most threads a reduction uses; partial sums live on the stack. */
#define KRILL_MAX_REDUCE_THREADS 1024

/* Parallel loops over fewer elements than this run on one thread: the fork costs more. */
#define KRILL_OMP_MIN_N 8192

static int nthreads(const krill_ctx *ctx, int64_t n)
{
    int t = ctx->threads;
    if (n < KRILL_OMP_MIN_N) return 1;
    return t < KRILL_MAX_REDUCE_THREADS ? t : KRILL_MAX_REDUCE_THREADS;
}

/* chunk [*lo, *hi) of thread `tid` out of `nt` over n elements */
static void chunk(int64_t n, int tid, int nt, int64_t *lo, int64_t *hi)
{
    int64_t q = n / nt, r = n % nt;
    *lo = tid * q + (tid < r ? tid : r);
    *hi = *lo + q + (tid < r ? 1 : 0);
}

krill_status krill_blas_fill(krill_ctx *ctx, int64_t n, double value, double *x)
{
    GPU(ctx, krill_cuda_fill(ctx, n, value, x));
#pragma omp parallel for schedule(static) num_threads(nthreads(ctx, n))
    for (int64_t i = 0; i < n; i++) x[i] = value;
    return KRILL_OK;
}

krill_status krill_blas_copy(krill_ctx *ctx, int64_t n, const double *x, double *y)
{
    return krill_mem_copy(ctx, y, x, (size_t)n * sizeof(double));
}

krill_status krill_blas_scal(krill_ctx *ctx, int64_t n, double alpha, double *x)
{
    GPU(ctx, krill_cuda_scal(ctx, n, alpha, x));
#pragma omp parallel for schedule(static) num_threads(nthreads(ctx, n))
    for (int64_t i = 0; i < n; i++) x[i] *= alpha;
    return KRILL_OK;
}

krill_status krill_blas_axpy(krill_ctx *ctx, int64_t n, double alpha, const double *x, double *y)
{
    return krill_blas_axpby(ctx, n, alpha, x, 1.0, y);
}

/* y = alpha*x + beta*y; beta == 0 does not read y (NaN in y is ignored). */
krill_status krill_blas_axpby(krill_ctx *ctx, int64_t n, double alpha, const double *x,
                              double beta, double *y)
{
    GPU(ctx, krill_cuda_axpby(ctx, n, alpha, x, beta, y));
    if (beta == 0.0) {
#pragma omp parallel for schedule(static) num_threads(nthreads(ctx, n))
        for (int64_t i = 0; i < n; i++) y[i] = alpha * x[i];
    } else if (beta == 1.0) {
#pragma omp parallel for schedule(static) num_threads(nthreads(ctx, n))
        for (int64_t i = 0; i < n; i++) y[i] += alpha * x[i];
    } else {
#pragma omp parallel for schedule(static) num_threads(nthreads(ctx, n))
        for (int64_t i = 0; i < n; i++) y[i] = alpha * x[i] + beta * y[i];
    }
    return KRILL_OK;
}

krill_status krill_blas_xmy(krill_ctx *ctx, int64_t n, const double *x, const double *y, double *z)
{
    GPU(ctx, krill_cuda_xmy(ctx, n, x, y, z));
#pragma omp parallel for schedule(static) num_threads(nthreads(ctx, n))
    for (int64_t i = 0; i < n; i++) z[i] = x[i] * y[i];
    return KRILL_OK;
}

/* sum_i x_i*y_i, deterministic for a given thread count (see the file comment). */
static double dot_cpu(const krill_ctx *ctx, int64_t n, const double *x, const double *y)
{
    double partial[KRILL_MAX_REDUCE_THREADS];
    int nt = nthreads(ctx, n);
#pragma omp parallel num_threads(nt)
    {
        int tid = omp_get_thread_num(), team = omp_get_num_threads();
        int64_t lo, hi;
        double s = 0.0;
        chunk(n, tid, team, &lo, &hi);
        for (int64_t i = lo; i < hi; i++) s += x[i] * y[i];
        partial[tid] = s;
#pragma omp single
        nt = team;   /* the team may be smaller than asked */
    }
    double sum = 0.0;
    for (int t = 0; t < nt; t++) sum += partial[t];
    return sum;
}

krill_status krill_blas_dot(krill_ctx *ctx, int64_t n, const double *x, const double *y,
                            double *result)
{
    /* reproducible mode: the Ozaki scheme (ozaki/), on the CPU or the GPU */
    if (ctx->repro != KRILL_REPRO_OFF) return ctx->repro_ops->dot(ctx, n, x, y, result);
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) {   /* *result in device memory; with a communicator summed there */
        return krill_ctx_allreduce_device(ctx, krill_cuda_dot(ctx, n, x, y, result), result, 1,
                                          NULL, 0);
    }
#endif
    *result = dot_cpu(ctx, n, x, y);
    return krill_ctx_allreduce(ctx, result, 1, KRILL_REDUCE_SUM);
}

/* ||x||_2. The plain sum of squares over- or underflows when |x_i| > ~1e154 or all
 * |x_i| < ~1e-154; only then is the sum redone with x scaled by its largest magnitude. With
 * a communicator: the global sum of squares (one allreduce), and in the rare rescaled case
 * the global maximum and the global scaled sum (two more). */
krill_status krill_blas_nrm2(krill_ctx *ctx, int64_t n, const double *x, double *result)
{
    krill_status st = KRILL_OK;
    double ss, amax = 0.0, s = 0.0;
    if (ctx->repro != KRILL_REPRO_OFF) return ctx->repro_ops->nrm2(ctx, n, x, result);
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) {   /* the local norm, then (communicator) the global one */
        st = krill_ctx_nrm2_allreduce_device(ctx, krill_cuda_nrm2(ctx, n, x, result), result);
        goto cleanup;
    }
#endif
    ss = dot_cpu(ctx, n, x, x);
    KRILL_TRY(krill_ctx_allreduce(ctx, &ss, 1, KRILL_REDUCE_SUM));
    if (isnan(ss) || (isfinite(ss) && ss > 1e-290)) {
        *result = sqrt(ss);
        goto cleanup;
    }
    for (int64_t i = 0; i < n; i++)
        if (fabs(x[i]) > amax) amax = fabs(x[i]);
    KRILL_TRY(krill_ctx_allreduce(ctx, &amax, 1, KRILL_REDUCE_MAX));
    if (amax == 0.0 || isinf(amax)) {
        *result = amax;
        goto cleanup;
    }
    for (int64_t i = 0; i < n; i++) {
        double t = x[i] / amax;
        s += t * t;
    }
    KRILL_TRY(krill_ctx_allreduce(ctx, &s, 1, KRILL_REDUCE_SUM));
    *result = amax * sqrt(s);
cleanup:
    return st;
}
