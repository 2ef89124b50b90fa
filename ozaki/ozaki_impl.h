/* ozaki/ozaki_impl.h - reproducible reductions (the Ozaki scheme): what the rest of krill
 * calls. The arithmetic itself is in ozaki/ozaki_math.h (host and device); the design and
 * its proofs are in doc/reproducible.md.
 *
 * Every function here works on pointers in context memory (device memory on CUDA) and
 * writes its results there, like krill_blas_dot: on CUDA everything is queued on the
 * context's stream (a pass for the statistics, a pass for the dot products whose last block
 * rounds them on the device) and nothing waits for the GPU or copies to the host.
 *
 * The mode is the context's (krill_ctx_set_repro): OZAKI with S = 0 (exact: the correctly
 * rounded value of the exact result), OZAKI with S >= 1 (at most S slices per operand) or
 * OZAKI_FAST with S (slice products with p + q > S + 1 skipped). On a context in mode OFF
 * these functions compute exact mode. The result is a function of the input values alone:
 * identical bits on every thread count, device, launch configuration and format.
 *
 * Statistics ("stats"): two doubles per vector in context memory, defined in ozaki_math.h
 * (stats[0] = max|x_i|, NaN/Inf propagating; stats[1] = the lowest set bit's exponent over the
 * nonzero elements). The *_stats variants take them instead of computing them, so a dot
 * product is one pass over memory when the kernel that wrote a vector produced its stats
 * (krill_oz_stats_add per element, then a max / min reduction). They must be the vector's
 * exact stats (stats[1] may be lower: more slices, same bits). */
#ifndef KRILL_OZAKI_IMPL_H
#define KRILL_OZAKI_IMPL_H

#include "core/core_impl.h"
#include "ozaki/ozaki_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Columns per pass of krill_ozaki_mdot: more are done in groups of this many (each group
 * reads w once more). */
#define KRILL_OZ_KMAX 32

/* Make the context's workspace (device memory on CUDA: 140 KB; nothing on the CPU, whose
 * scratch lives on the threads' stacks). Idempotent; called by krill_ctx_set_repro and by
 * every function below, so a failure to allocate is reported cleanly by whichever comes first. */
krill_status krill_ozaki_ctx_init(krill_ctx *ctx);
void krill_ozaki_ctx_fini(krill_ctx *ctx);       /* NULL-safe; called by krill_ctx_destroy */

/* stats[0..1] (context memory) of x[0..n). One pass. */
krill_status krill_ozaki_stats(krill_ctx *ctx, int64_t n, const double *x, double *stats);

/* *result = x'y. Two passes: stats of x and y, then the dot product. */
krill_status krill_ozaki_dot(krill_ctx *ctx, int64_t n, const double *x, const double *y,
                             double *result);
/* *result = x'y with the stats of x and y given (context memory): one pass. */
krill_status krill_ozaki_dot_stats(krill_ctx *ctx, int64_t n, const double *x,
                                   const double *xstats, const double *y, const double *ystats,
                                   double *result);

/* *result = sqrt(x'x) in the same way: sqrt of the one rounding of the exact sum of squares
 * (deterministic; equal to sqrt(fl(x'x)) whenever that is a normal number, and free of its
 * overflow and underflow). */
krill_status krill_ozaki_nrm2(krill_ctx *ctx, int64_t n, const double *x, double *result);
krill_status krill_ozaki_nrm2_stats(krill_ctx *ctx, int64_t n, const double *x,
                                    const double *xstats, double *result);

/* results[j] = V[:, j]'w for j < k, V column-major n x k with leading dimension ldv >= n:
 * the k dot products of a Gram-Schmidt step in one pass over w (the GEMM-ization of the
 * paper's section 4.3: w is split once per element and its slices meet every column's).
 * results: k doubles in context memory. */
krill_status krill_ozaki_mdot(krill_ctx *ctx, int64_t n, int k, const double *V, int64_t ldv,
                              const double *w, double *results);
/* The same with the stats given: vstats[2 j .. 2 j + 1] for column j, wstats for w. */
krill_status krill_ozaki_mdot_stats(krill_ctx *ctx, int64_t n, int k, const double *V,
                                    int64_t ldv, const double *vstats, const double *w,
                                    const double *wstats, double *results);

/* ---- internal launch parameters (tests vary them: the bits must not change) ---------------
 * Process-wide, not thread-safe: set them only in tests and benchmarks. */
typedef struct krill_ozaki_tuning {
    int gpu_threads;      /* threads per block of the GPU kernels: a multiple of 32 in
                             [32, 1024] (default 256) */
    int gpu_blocks;       /* blocks of the GPU kernels; 0 = one resident wave (default) */
    int gpu_rows;         /* krill_ozaki_mdot with k > 1: rows per thread between the flushes
                             of its per-column accumulators (default 8) */
    int gpu_reg_slices;   /* the most slices per operand the GPU's register path takes
                             (0..8, default 8); more go to the general (windowed) path */
    int cpu_reg_slices;   /* the same for the CPU's pair path (0..16, default 16) */
    int64_t cpu_min_n;    /* below this length the CPU runs one thread (default 8192) */
} krill_ozaki_tuning;

void krill_ozaki_tuning_get(krill_ozaki_tuning *t);
void krill_ozaki_tuning_set(const krill_ozaki_tuning *t);   /* NULL: the defaults */

#ifdef KRILL_HAVE_CUDA
/* ---- the CUDA half (ozaki/ozaki.cu) --------------------------------------------------------
 * ws: the device workspace made by krill_ozaki_cuda_init; launch[0]: resident blocks of the
 * dot kernel per SM at 256 threads (for the default grid), launch[1]: the most threads per
 * block both kernels can be launched with (their register use allows no more; a larger
 * tuning value is lowered to it, which changes no bit). */
krill_status krill_ozaki_cuda_init(krill_ctx *ctx, void **ws, int launch[2]);
void krill_ozaki_cuda_fini(krill_ctx *ctx, void *ws);
/* The workspace's stats area: 2 (KRILL_OZ_KMAX + 1) doubles of device memory. */
double *krill_ozaki_cuda_stats_area(void *ws);
/* stats of V[:, j] (j < k <= KRILL_OZ_KMAX) and of w (when not NULL, after them) into out. */
krill_status krill_ozaki_cuda_stats(krill_ctx *ctx, void *ws, const int launch[2], int64_t n,
                                    int k, const double *V, int64_t ldv, const double *w,
                                    double *out);
/* results[j] = V[:, j]'w (sqrt_mode: sqrt(x'x), V = w = x), j < k <= KRILL_OZ_KMAX, n >= 1. */
krill_status krill_ozaki_cuda_mdot(krill_ctx *ctx, void *ws, const int launch[2], int64_t n,
                                   int k, const double *V, int64_t ldv, const double *vstats,
                                   const double *w, const double *wstats, double *results,
                                   int sqrt_mode);
#endif

#ifdef __cplusplus
}
#endif
#endif
