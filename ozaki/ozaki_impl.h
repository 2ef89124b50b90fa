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
 * exact stats (stats[1] may be lower: more slices, same bits).
 *
 * The fast path (exact mode only: OZAKI with S = 0, or OFF). Before the stats, one pass
 * computes per column a twice-compensated sum with a rigorous error bound (ozaki_row.h's
 * krill_oz_fast_*: the K = 3 dot of Ogita, Rump and Oishi), per thread / block, merged in any
 * order; where the bound decides the correctly rounded value, that is the result and the column
 * skips the stats and the products. Only the columns it cannot decide (sums within the bound
 * of a rounding boundary: heavy cancellation, exact ties, results near 0; terms outside
 * the guard's range (krill_oz_fast_guard) or Inf/NaN; n > 2^31) take the exact path. The value is the correctly
 * rounded one either way, so which path decided never shows in the bits. Memory traffic per
 * call, in reads of the k + 1 vectors (the exact path alone: 2, or 1 with the stats given):
 * 1 when every column is decided; else, on the GPU, whose fast pass also gathers the stats
 * when they are not given (as bounds, which is all exact mode needs), 2; on the CPU, bound by arithmetic, whose fast pass does not, 3
 * (2 with the stats given). Fixed-slice modes (S >= 1) and OZAKI_FAST are not correctly
 * rounded and never take it. */
#ifndef KRILL_OZAKI_IMPL_H
#define KRILL_OZAKI_IMPL_H

#include "core/core_impl.h"
#include "ozaki/ozaki_math.h"
#include "ozaki/ozaki_row.h"

/* Largest n the fast path is tried for: its bound counts at most 2^32 error terms, about 2 n
 * plus one per merge. */
#define KRILL_OZ_FAST_MAX_N ((int64_t)1 << 31)

/* The fast path's verdict on one column from its merged compensated sum f: 1 with *result =
 * exact mode's value, else 0. sqrt_mode (a norm, f summing x_i x_i): exact mode's norm is
 * sqrt(RN(x'x)) when RN(x'x) is 0 or a normal number (krill_oz_round), so only those are
 * taken. */
KRILL_OZ_HD int krill_oz_fast_result(const krill_oz_fast *f, int sqrt_mode, double *result)
{
    double s;
    if (!krill_oz_fast_end(f, &s)) return 0;
    if (sqrt_mode) {
        if (!(s == 0.0 || (s >= 0x1p-1022 && s <= 1.7976931348623157e308))) return 0;
        s = sqrt(s);
    }
    *result = s;
    return 1;
}

#ifdef __cplusplus
extern "C" {
#endif

/* Columns per pass of krill_ozaki_mdot: more are done in groups of this many (each group
 * reads w once more). */
#define KRILL_OZ_KMAX 32

/* Make the context's workspace (device memory on CUDA: 900 KB; on a CPU context with a
 * communicator the allgather's buffer, 1.5 KB a rank; nothing on a lone CPU context, whose
 * scratch lives on the threads' stacks) and set ctx->repro_ops. Idempotent; called by
 * krill_ctx_set_repro and by every function below, so a failure to allocate is reported
 * cleanly by whichever comes first (on every rank). */
krill_status krill_ozaki_ctx_init(krill_ctx *ctx);
void krill_ozaki_ctx_fini(krill_ctx *ctx);       /* NULL-safe; called by krill_ctx_destroy */

/* On a context with a communicator (CPU or GPU ranks) every function below but
 * krill_ozaki_stats is collective: n is the rank's length, and the result is that of the
 * concatenation of the ranks' vectors in rank order, the same bits on any rank count
 * (ozaki/comm.c). */

/* stats[0..1] (context memory) of x[0..n): this rank's. One pass. */
krill_status krill_ozaki_stats(krill_ctx *ctx, int64_t n, const double *x, double *stats);

/* *result = x'y. Two passes: stats of x and y, then the dot product. */
krill_status krill_ozaki_dot(krill_ctx *ctx, int64_t n, const double *x, const double *y,
                             double *result);
/* *result = x'y with the stats of x and y given (context memory): one pass. */
krill_status krill_ozaki_dot_stats(krill_ctx *ctx, int64_t n, const double *x,
                                   const double *xstats, const double *y, const double *ystats,
                                   double *result);

/* results[p] = x[p]'y[p] for the m <= KRILL_OZ_PAIRS_MAX independent pairs (results: m
 * consecutive doubles of context memory): the bits of m krill_ozaki_dot calls. On GPU ranks
 * of a communicator the pairs share one round of collectives when the fast path decides
 * them all (comm.c), one host round trip instead of m; elsewhere they are m calls. */
#define KRILL_OZ_PAIRS_MAX 8
krill_status krill_ozaki_dot_pairs(krill_ctx *ctx, int64_t n, int m, const double *const *x,
                                   const double *const *y, double *results);

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

/* results[j] = V[:, j]'u and results[k + j] = V[:, j]'w for j < k (results: 2k doubles of
 * context memory): the bits of krill_ozaki_mdot against u, then against w. On a lone GPU in
 * exact mode with the fast path, one read of V for both (groups of KRILL_OZ_MDOT2_COLS
 * columns; the fast path's verdicts of the last group: its u sums, then its w sums). On a
 * rank of a communicator in exact mode with the fast path and k <= KRILL_OZ_KMAX (DCGS2 up
 * to a restart of 30), one allgather for both (krill_ozaki_rank_mdot2; a GPU rank reads V
 * once for both), and the whole round of a right-hand side only when a sum against it is
 * left undecided (no verdicts recorded); more columns there take the two multi-dots.
 * DCGS2's sweep ([Q u w]'u and [Q u w]'w) is this call. */
#ifndef KRILL_OZ_MDOT2_COLS
#define KRILL_OZ_MDOT2_COLS KRILL_OZ_KMAX
#endif
#if KRILL_OZ_MDOT2_COLS < 1 || KRILL_OZ_MDOT2_COLS > KRILL_OZ_KMAX
#error "KRILL_OZ_MDOT2_COLS must be in [1, KRILL_OZ_KMAX]"
#endif
krill_status krill_ozaki_mdot2(krill_ctx *ctx, int64_t n, int k, const double *V, int64_t ldv,
                               const double *u, const double *w, double *results);

/* The reproducible pass of classical Gram-Schmidt (krill_fused_cgs_pass): w -= V h_sub
 * (h_sub NULL: no update) element by element in krill_fused_gemv_n's order (w_i +
 * (-h_j) v_ij for j = 0..k-1), then h_out[j] = V[:, j]'w for j < k (h_out NULL: none) and
 * *ss_out = w'w (NULL: none), exact mode's correctly rounded values. One pass over V and w
 * (the fast path's sums formed while w is updated; undecided columns then take the exact
 * path), so it applies only where krill_ozaki_cgs_fused says: a GPU context in exact mode
 * with the fast path, n in [1, KRILL_OZ_FAST_MAX_N], k + 1 <= KRILL_OZ_KMAX. Elsewhere the
 * caller makes the three calls (the same bits). All pointers in context memory. */
int krill_ozaki_cgs_fused(const krill_ctx *ctx, int64_t n, int k);
krill_status krill_ozaki_cgs_pass(krill_ctx *ctx, int64_t n, int k, const double *V,
                                  int64_t ldv, const double *h_sub, double *w, double *h_out,
                                  double *ss_out);

/* ---- what ozaki.c, cpu.c and comm.c share ----------------------------------------------- */

/* Special values' flags (KRILL_OZ_NAN, _PINF, _NINF) through an int64 sum over threads or
 * ranks: bit b as a count in slot b, and back (any count > 0 sets the bit). */
#define KRILL_OZ_FLAG_BITS 3
static inline void krill_oz_flags_to_counts(int flags, int64_t *slots)
{
    for (int b = 0; b < KRILL_OZ_FLAG_BITS; b++) slots[b] = (flags >> b) & 1;
}

static inline int krill_oz_counts_to_flags(const int64_t *slots)
{
    int flags = 0;
    for (int b = 0; b < KRILL_OZ_FLAG_BITS; b++) flags |= (slots[b] != 0) << b;
    return flags;
}

/* Tests only: the n-th local status checkpoint of comm.c's collectives from now on (counted
 * on this process) reports a failure, so the failure mark's paths run without a broken
 * device; 0 turns it off. */
void krill_ozaki_fault_step_after(long n);

/* ctx->ozaki: on a CUDA context the device workspace; on a context with a communicator
 * the allgather's buffer (size records of KRILL_OZ_GATHER_BYTES); nothing on a lone CPU
 * context. */
typedef struct krill_ozaki_ws {
    void *dev;              /* device workspace (ozaki_dev.cuh, made by ozaki.cu) */
    int launch[3];          /* blocks per SM, most threads per block, fast kernel's blocks per
                               SM (krill_ozaki_cuda_init) */
    int fast_k;             /* columns of the last group whose verdicts are in the workspace
                               (0: the fast path was not tried) */
    unsigned char *gather;  /* communicator: every rank's record of step 1 (comm.c) */
    int64_t *sums;          /* GPU rank of a communicator: step 3's host buffer,
                               KRILL_OZ_SUMS_COUNT int64 */
} krill_ozaki_ws;

/* step 3's most int64: every column's diagonal sums, 3 flag counts a column, a mark */
#define KRILL_OZ_SUMS_COUNT (KRILL_OZ_KMAX * (KRILL_OZ_MAX_DIAG + KRILL_OZ_FLAG_BITS) + 1)

/* one rank's record of comm.c's step 1: its length, then a merged fast-path state per sum
 * (at most 2 KRILL_OZ_KMAX: krill_ozaki_rank_mdot2's two right-hand sides) */
#define KRILL_OZ_GATHER_SUMS (2 * KRILL_OZ_KMAX)
#define KRILL_OZ_GATHER_BYTES (sizeof(int64_t) + KRILL_OZ_GATHER_SUMS * sizeof(krill_oz_fast))

/* Does a call of length n on ctx try the fast path? (exact mode, the tuning's switch) */
int krill_ozaki_use_fast_path(const krill_ctx *ctx, int64_t n);

/* comm.c: the collectives of a group of k columns, made in the same order on every rank.
 * local: this rank's status so far, which travels inside the collective (a failed rank
 * sends a mark; when any did, every rank returns the failure through krill_ctx_agree).
 * Step 1: every rank's length and fast-path states sum[0..k), merged in rank order into
 * sum (the same merge everywhere); *n_all the global length, checked against the limit. */
krill_status krill_ozaki_gather_step(krill_ctx *ctx, krill_status local, int64_t n, int k,
                                     krill_oz_fast *sum, int64_t *n_all);
/* Step 2: the global statistics of the nv vectors in area (host memory). */
krill_status krill_ozaki_stats_step(krill_ctx *ctx, krill_status local, int nv, double *area);
/* A group of k <= KRILL_OZ_KMAX columns on a GPU rank of a communicator: the CPU group's
 * steps, the device's partials taken to the host for each, results written to context
 * memory. */
krill_status krill_ozaki_gpu_rank_group(krill_ctx *ctx, int64_t n, int k, const double *V,
                                        int64_t ldv, const double *vstats, const double *w,
                                        const double *wstats, double *results, int sqrt_mode);
/* krill_ozaki_dot_pairs on a GPU rank of a communicator (m <= KRILL_OZ_PAIRS_MAX). */
krill_status krill_ozaki_gpu_rank_pairs(krill_ctx *ctx, int64_t n, int m,
                                        const double *const *x, const double *const *y,
                                        double *results);
/* krill_ozaki_mdot2 on a rank of a communicator (a CPU rank, or a GPU rank of several), k <=
 * KRILL_OZ_KMAX columns, exact mode with the fast path: the 2k sums' merged states (a GPU
 * rank: one fast pass reading each column once for both right-hand sides; a CPU rank: the
 * fast pass per right-hand side), one allgather of them (step 1 for both), and the decided
 * results in host memory: res[j] = V[:, j]'u, res[k + j] = V[:, j]'w. *left_u, *left_w:
 * whether a sum against u, against w, was left undecided (the same on every rank): the
 * caller then makes that right-hand side's whole round, and writes the other's results to
 * context memory last (a failure there is its rank's alone, as at the end of any sum). */
krill_status krill_ozaki_rank_mdot2(krill_ctx *ctx, int64_t n, int k, const double *V,
                                    int64_t ldv, const double *u, const double *w, double *res,
                                    int *left_u, int *left_w);

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
    int fast_path;        /* exact mode tries the fast path first: 1 (default) or 0 (the
                             stats and products passes alone; same bits) */
} krill_ozaki_tuning;

void krill_ozaki_tuning_get(krill_ozaki_tuning *t);
void krill_ozaki_tuning_set(const krill_ozaki_tuning *t);   /* NULL: the defaults */

/* The fast path's verdicts on the last group of columns (the last KRILL_OZ_KMAX or fewer; of
 * krill_ozaki_mdot2 on a lone GPU, the group's sums against u, then against w, up to
 * 2 KRILL_OZ_KMAX; on a rank of a communicator, when its one allgather served both, none;
 * elsewhere those of its second multi-dot, against w) of
 * the last call on ctx (on the CPU: the last call made by the calling thread): decided[j] = 1
 * where it decided column j, 0 where the exact path ran, -1 where it was not tried (not
 * exact mode, tuning off, n = 0 or above KRILL_OZ_FAST_MAX_N, j beyond that call's columns,
 * and every column of a call on a GPU rank of a communicator of more than one rank, whose
 * ranks decide on the host: comm.c).
 * For tests and benchmarks; on CUDA it waits for the context's stream. */
krill_status krill_ozaki_fast_verdicts(krill_ctx *ctx, int k, int *decided);

/* ---- the CPU half (ozaki/cpu.c) -----------------------------------------------------------
 * Host pointers; k <= KRILL_OZ_KMAX. Stats of V[:, j] (j < k) and of w (when not NULL, after
 * them) into out[2 v], out[2 v + 1]. */
void krill_ozaki_cpu_stats(krill_ctx *ctx, int64_t n, int k, const double *V, int64_t ldv,
                           const double *w, double *out);
/* The fast path's pass: sum[j] = the compensated sum of V[:, j]'w with its bound, the
 * threads' states merged (krill_oz_fast_end then decides, or not). */
void krill_ozaki_cpu_fast(krill_ctx *ctx, int64_t n, int k, const double *V, int64_t ldv,
                          const double *w, krill_oz_fast *sum);
/* results[j] = V[:, j]'w for the columns with done[j] = 0, from the (global) stats vstats
 * and wstats; n is this rank's length, n_all the global one (slicing), and with a
 * communicator the int64 diagonal sums are added over the ranks before the one rounding
 * (collective: every rank calls it for the same columns). sqrt_mode: the norm (V = w). */
krill_status krill_ozaki_cpu_mdot(krill_ctx *ctx, int64_t n, int64_t n_all, int k,
                                  const double *V, int64_t ldv, const double *vstats,
                                  const double *w, const double *wstats, const int *done,
                                  double *results, int sqrt_mode);

#ifdef KRILL_HAVE_CUDA
/* ---- the CUDA half (ozaki/ozaki.cu, fast.cu, cgs.cu) ---------------------------------------
 * ws: the device workspace made by krill_ozaki_cuda_init; launch[0]: resident blocks of the
 * dot kernel per SM at 256 threads (for the default grid), launch[1]: the most threads per
 * block every kernel can be launched with (their register use allows no more; a larger
 * tuning value is lowered to it, which changes no bit), launch[2]: resident blocks of the
 * fast kernel per SM at 256 threads. */
krill_status krill_ozaki_cuda_init(krill_ctx *ctx, void **ws, int launch[3]);
void krill_ozaki_cuda_fini(krill_ctx *ctx, void *ws);
/* The workspace's stats area: 2 (KRILL_OZ_KMAX + 2) doubles of device memory. */
double *krill_ozaki_cuda_stats_area(void *ws);
/* The workspace's verdicts of the last fast pass: 2 KRILL_OZ_KMAX ints of device memory. */
int *krill_ozaki_cuda_verdict_area(void *ws);
/* For a GPU rank of a communicator (comm.c), in device memory: the merged sums of a fast
 * pass made with merged_only (2 KRILL_OZ_KMAX states: k, or 2k for two right-hand sides),
 * and the partials of a products pass made with stride > 0 (column j's diagonal sums at j
 * stride, then the k columns' flags). */
krill_oz_fast *krill_ozaki_cuda_merged_area(void *ws);
int64_t *krill_ozaki_cuda_part_area(void *ws);
/* The fast pass (exact mode): results[j] = V[:, j]'w (sqrt_mode: sqrt(x'x), V = w = x) for
 * the columns j < k <= KRILL_OZ_KMAX its bound decides, and the verdicts in the workspace
 * (written by its last block, read by krill_ozaki_cuda_mdot at verdict_base). n >= 1.
 * stats != NULL: the same pass writes there what krill_ozaki_cuda_stats would (the columns'
 * stats, then w's unless sqrt_mode). merged_only: the merged sums go to the merged area and
 * nothing is decided (results untouched, verdicts 0). */
krill_status krill_ozaki_cuda_fast(krill_ctx *ctx, void *ws, const int launch[3], int64_t n,
                                   int k, const double *V, int64_t ldv, const double *w,
                                   double *results, int sqrt_mode, double *stats,
                                   int merged_only);
/* The fast pass against two right-hand sides u and w, one read of V (exact mode, not
 * sqrt_mode; k <= KRILL_OZ_KMAX): results_u[j] = V[:, j]'u and results_w[j] = V[:, j]'w
 * where decided, the verdicts of the u sums then the w sums, and with stats the columns'
 * stats, then u's, then w's. merged_only: the 2k merged sums (u's, then w's) go to the
 * merged area, nothing is decided. */
krill_status krill_ozaki_cuda_fast2(krill_ctx *ctx, void *ws, const int launch[3], int64_t n,
                                    int k, const double *V, int64_t ldv, const double *u,
                                    const double *w, double *results_u, double *results_w,
                                    double *stats, int merged_only);
/* krill_ozaki_cgs_pass's kernel: the update, the fast path's sums of h_out (results, k
 * columns, or NULL) and of w'w (ss_result, or NULL), their verdicts (the results columns,
 * then w'w) and the stats (results' k columns, then w's) into stats; k + (ss_result != NULL)
 * <= KRILL_OZ_KMAX. */
krill_status krill_ozaki_cuda_cgs(krill_ctx *ctx, void *ws, const int launch[3], int64_t n,
                                  int k, const double *V, int64_t ldv, const double *h,
                                  double *w, double *results, double *ss_result, double *stats);
/* stats of V[:, j] (j < k <= KRILL_OZ_KMAX) and of w (when not NULL, after them) into out. */
krill_status krill_ozaki_cuda_stats(krill_ctx *ctx, void *ws, const int launch[3], int64_t n,
                                    int k, const double *V, int64_t ldv, const double *w,
                                    double *out);
/* results[j] = V[:, j]'w (sqrt_mode: sqrt(x'x), V = w = x), j < k <= KRILL_OZ_KMAX, n >= 1;
 * verdict_base >= 0: column j is skipped where the last fast pass decided its verdict
 * verdict_base + j (its result is written), and when it decided all, the blocks return at
 * once (the host never waits for the verdicts); -1: no fast pass. The slicing is that of
 * length n_all >= n (a communicator's global length; else n). stride > 0 (at least every
 * undecided column's diagonal count, at most 528): nothing is rounded, the partials go to
 * the part area and results is not used. */
krill_status krill_ozaki_cuda_mdot(krill_ctx *ctx, void *ws, const int launch[3], int64_t n,
                                   int64_t n_all, int k, const double *V, int64_t ldv,
                                   const double *vstats, const double *w, const double *wstats,
                                   double *results, int sqrt_mode, int verdict_base,
                                   int stride);
#endif

#ifdef __cplusplus
}
#endif
#endif
