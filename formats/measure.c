/* formats/measure.c - krill_mat_time_spmv: the median time of y = A*x on the matrix's
 * context. x = 1 and y live in context memory for the measurement only. On the GPU each
 * SpMV is bracketed by CUDA events on the context's stream (device time, launch overhead
 * excluded); on the CPU by krill_wtime around the call, which returns when y is written. */
#include <stdlib.h>

#include "formats/formats_impl.h"

static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of n >= 1 values (sorted in place): the middle one, or the mean of the two. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* One timed SpMV y = A*x into *seconds. watch: CUDA stopwatch, or NULL on the CPU. */
static krill_status time_one(const krill_mat *a, void *watch, const double *x, double *y,
                             double *seconds)
{
    krill_status st = KRILL_OK;
#ifdef KRILL_HAVE_CUDA
    if (watch) {
        KRILL_TRY(krill_cuda_stopwatch_start(a->ctx, watch));
        KRILL_TRY(krill_mat_spmv_raw(a, 1.0, x, 0.0, y));
        KRILL_TRY(krill_cuda_stopwatch_stop(a->ctx, watch, seconds));
        goto cleanup;
    }
#else
    (void)watch;
#endif
    {
        const double t0 = krill_wtime();
        KRILL_TRY(krill_mat_spmv_raw(a, 1.0, x, 0.0, y));
        *seconds = krill_wtime() - t0;
    }
cleanup:
    return st;
}

krill_status krill_mat_time_spmv(const krill_mat *a, int warmup, int reps, double *median_seconds)
{
    krill_status st = KRILL_OK;
    double *x = NULL, *y = NULL, *times = NULL;
    void *watch = NULL;
    KRILL_REQUIRE(median_seconds != NULL, "krill_mat_time_spmv: median_seconds is NULL");
    *median_seconds = 0.0;
    KRILL_REQUIRE(a != NULL, "krill_mat_time_spmv: mat is NULL");
    KRILL_REQUIRE(warmup >= 0, "krill_mat_time_spmv: warmup = %d < 0", warmup);
    KRILL_REQUIRE(reps >= 1, "krill_mat_time_spmv: reps = %d < 1", reps);
    /* at least one entry each, so that an empty matrix still has valid pointers */
    KRILL_MEM_ALLOC(a->ctx, x, a->n_cols > 0 ? a->n_cols : 1);
    KRILL_MEM_ALLOC(a->ctx, y, a->n_rows > 0 ? a->n_rows : 1);
    KRILL_ALLOC(times, reps);
    KRILL_TRY(krill_blas_fill(a->ctx, a->n_cols, 1.0, x));
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(a->ctx)) KRILL_TRY(krill_cuda_stopwatch_create(a->ctx, &watch));
#endif
    for (int r = 0; r < warmup; r++) KRILL_TRY(krill_mat_spmv_raw(a, 1.0, x, 0.0, y));
    for (int r = 0; r < reps; r++) KRILL_TRY(time_one(a, watch, x, y, &times[r]));
    *median_seconds = median(times, reps);
cleanup:
#ifdef KRILL_HAVE_CUDA
    krill_cuda_stopwatch_destroy(watch);
#endif
    krill_free(times);
    krill_mem_free(a ? a->ctx : NULL, y);
    krill_mem_free(a ? a->ctx : NULL, x);
    return st;
}
