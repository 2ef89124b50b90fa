/* solver/solver_impl.h - what the solver files share: the checked problem, the phase timer,
 * the fused vector operations (CPU in fused.c, GPU in kernels/krylov.cu) with the CG state
 * that lives in context memory, and the asynchronous scalar read.
 *
 * Included by kernels/krylov.cu and solver/timing_cuda.cu as well: everything here is
 * plain C, and the CG state logic is written once, as inline functions that compile for
 * the host and (under nvcc) for the device, so both run the same state machine. */
#ifndef KRILL_SOLVER_IMPL_H
#define KRILL_SOLVER_IMPL_H

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core_impl.h"
#include "krill/solver.h"

#ifdef __CUDACC__
#define KRILL_HD __host__ __device__
#else
#define KRILL_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the problem, after krill_solve checked its arguments ------------------------------ */

typedef struct krill_solve_problem {
    krill_ctx *ctx;
    const struct krill_mat *a;
    const struct krill_pc *pc;   /* NULL = no preconditioner */
    const double *b;             /* n, context memory: the caller's b */
    double *x;                   /* n, context memory: initial guess in, solution out, both
                                    times bscale while the solver runs */
    int64_t n;                   /* this rank's rows (all of them without a communicator) */
    int64_t n_global;            /* the dimension: n summed over the context's ranks */
    double bscale;               /* a power of two: the solver sees b' = bscale b and
                                    x' = bscale x (krill_solve) */
    double bnorm;                /* ||b'||, finite and > 0 */
    double tol;                  /* max(rtol * ||b'||, atol') */
    krill_solver_opts opts;      /* validated copy; atol and the monitor in b's units
                                    scaled to b' */
    struct krill_phase_timer *timer;  /* started by krill_solve; the solver sets it up */
} krill_solve_problem;

/* GMRES, and FGMRES when p->opts.solver is KRILL_SOLVER_FGMRES (gmres.c) */
krill_status krill_gmres_run(const krill_solve_problem *p, krill_solve_info *info);
krill_status krill_cg_run(const krill_solve_problem *p, krill_solve_info *info);
krill_status krill_bicgstab_run(const krill_solve_problem *p, krill_solve_info *info);
krill_status krill_minres_run(const krill_solve_problem *p, krill_solve_info *info);
krill_status krill_pipecg_run(const krill_solve_problem *p, krill_solve_info *info);

/* Reason for a true residual norm that meets the tolerance (RTOL before ATOL), or
 * KRILL_REASON_NONE when it does not. */
krill_reason krill_converged_reason(const krill_solve_problem *p, double resnorm);
/* The end of a solve (CG, pipelined CG, BiCGStab, MINRES): the final reason from the true residual resnorm
 * (NaN or Inf: diverged; a solve that ended without a reason, at maxit or at a breakdown
 * converged when resnorm meets the tolerance, else maxit when it had no reason), info's
 * counts and norms, and the timer's breakdown. */
krill_status krill_solve_finish(const krill_solve_problem *p, krill_reason reason, int iterations,
                               double resnorm, krill_solve_info *info);

/* r = b' - A x' and its norm (read to the host: this waits for the device). */
krill_status krill_true_residual(const krill_solve_problem *p, double *r, double *norm_dev,
                                 double *norm);
/* ||x|| from ss = x'x, a plain sum that a fused pass computed: sqrt(ss), unless the sum over-
 * or underflowed (||x|| above ~1e154 or below ~1e-145, where squares become Inf or
 * subnormal); only then is the norm recomputed by krill_blas_nrm2 (one more pass), which
 * scales: by the largest magnitude on the CPU, Blue's accumulators on the GPU, the exact
 * Ozaki sum in reproducible mode.
 * norm_dev: one double of context memory it may overwrite. NaN stays NaN. */
static inline int krill_ss_in_range(double ss) { return ss >= 1e-289 && ss <= DBL_MAX; }
krill_status krill_norm_from_ss(const krill_solve_problem *p, const double *x, double ss,
                                double *norm_dev, double *norm);
/* The same at the start of a solve: a non-finite norm (NaN/Inf in x0, or A x0 overflows) is
 * bad input (KRILL_ERR_NUMERIC, info->reason = DIVERGED_NAN); else info->history[0] = norm. */
krill_status krill_initial_residual(const krill_solve_problem *p, double *r, double *norm_dev,
                                    double *norm, krill_solve_info *info);

/* ---- phase timer (timing.c) -------------------------------------------------------------
 * The solve is a sequence of phases. On the CPU every operation is synchronous, so the wall
 * clock read at each phase switch measures the phase. On the GPU the host runs ahead of the
 * device, so a switch records a CUDA event (tagged with the phase that starts there) into a
 * ring allocated at setup; intervals between consecutive events are added to their phase
 * when the host polls at a point where it already waits for the device (the scalar reads
 * the algorithm needs). Timing thus adds no host synchronization to the loop; only a ring
 * that fills up (64 events without a poll, which the solvers never do) waits for its
 * oldest interval. `setup` and `total` are host wall clock (setup ends with one wait for
 * the device, so that its queued work is not timed again by the loop's events); `other` is what the rest does
 * not account for (vector updates, host least squares, synchronization, cleanup). */
typedef enum krill_phase {
    KRILL_PHASE_SPMV = 0,
    KRILL_PHASE_PRECOND,
    KRILL_PHASE_ORTHO,
    KRILL_PHASE_OTHER,
    KRILL_PHASE_COUNT
} krill_phase;

typedef struct krill_phase_timer {
    krill_ctx *ctx;
    double t_start;              /* wall clock at krill_timer_init */
    double comm_start;           /* ctx->comm_seconds at krill_timer_init */
    double halo_start, halo_hidden_start;   /* ctx->halo_seconds, _hidden_seconds then */
    double setup;                /* seconds, set by krill_timer_loop */
    double acc[KRILL_PHASE_COUNT];
    krill_phase current;
    double t_switch;             /* CPU: wall clock of the last switch */
    void *ring;                  /* GPU: the event ring (timing_cuda.cu); NULL on the CPU */
} krill_phase_timer;

/* Start the clock (no allocation: call first, then allocate the workspace). */
void krill_timer_init(krill_phase_timer *t, krill_ctx *ctx);
/* Allocate the GPU event ring (nothing on the CPU). */
krill_status krill_timer_setup(krill_phase_timer *t);
/* Setup is over; the iteration starts in `phase`. */
krill_status krill_timer_loop(krill_phase_timer *t, krill_phase phase);
krill_status krill_timer_phase(krill_phase_timer *t, krill_phase phase);
/* Account the intervals the device has finished; never waits. */
krill_status krill_timer_poll(krill_phase_timer *t);
/* After the last device work: wait, account everything, fill `times`. */
krill_status krill_timer_finish(krill_phase_timer *t, krill_solve_times *times);
void krill_timer_destroy(krill_phase_timer *t);      /* NULL-safe on the ring */

#ifdef KRILL_HAVE_CUDA
krill_status krill_cuda_timer_create(krill_ctx *ctx, void **ring);
krill_status krill_cuda_timer_record(void *ring, int phase, double *acc);
krill_status krill_cuda_timer_poll(void *ring, double *acc, int wait_all);
void krill_cuda_timer_reset(void *ring);   /* forget every event (the stream is idle) */
void krill_cuda_timer_destroy(void *ring);
#endif

/* ---- reduction workspace ------------------------------------------------------------------
 * CPU: fused loops that reduce (CG's r'r and r'z, MGS's next dot, GEMV-T) leave one partial
 * sum per thread and add them in thread order, so a given thread count always gives the
 * same bits; the partials are allocated once per solve. GPU: the kernels use the grid sum
 * of kernels/kernels_impl.cuh (partials in the context's workspace, combined in block order
 * by the last block), except for GMRES's CGS passes, whose k + 1 sums per block do not fit
 * there: for them (width > 2) it holds krill_cuda_cgs_partials(ctx) doubles of device memory. */
#define KRILL_REDUCE_PAD 8           /* CPU: doubles per cache line, against false sharing */

typedef struct krill_reduce_ws {
    double *partial;             /* CPU: slots x stride doubles; GPU (width > 2 only): the
                                    partials of the fused CGS passes, in context memory */
    int slots;                   /* CPU threads */
    int stride;                  /* doubles per slot (width rounded up to the pad) */
} krill_reduce_ws;

/* Room for `width` sums per thread. */
krill_status krill_reduce_ws_create(krill_ctx *ctx, int width, krill_reduce_ws *ws);
void krill_reduce_ws_destroy(krill_ctx *ctx, krill_reduce_ws *ws);

/* The fused CPU loops' shared pieces (fused.c, fused_cg.c). Vectors shorter than
 * KRILL_FUSED_PARALLEL_MIN run on one thread: starting a parallel region costs more than the
 * loop saves. Thread t of nt takes rows [n t / nt, n (t + 1) / nt); partial sums are added
 * in thread order, so a thread count always gives the same bits. */
#define KRILL_FUSED_PARALLEL_MIN 8192
static inline void krill_fused_chunk(int64_t n, int t, int nt, int64_t *lo, int64_t *hi)
{
    *lo = n * t / nt;
    *hi = n * (t + 1) / nt;
}
static inline int krill_fused_threads(const krill_ctx *ctx)
{
    int t = krill_ctx_threads(ctx);
    return t > 0 ? t : 1;
}
/* Sum of partial[t * stride + j] over the `used` threads, in thread order. */
static inline double krill_reduce_ws_sum(const krill_reduce_ws *ws, int used, int j)
{
    double s = 0.0;
    for (int t = 0; t < used; t++) s += ws->partial[(size_t)t * ws->stride + j];
    return s;
}

/* ---- GMRES vector operations (fused.c: CPU loops, or the GPU launchers) -------------------
 * V is column-major, n x k, leading dimension ldv; h and coeff are in context memory.
 *
 * Reproducible mode (ctx->repro != KRILL_REPRO_OFF; doc/reproducible.md, "Solvers"): the
 * operations below and the CG ones keep their contracts and their destinations, but no
 * kernel reduces: each does its element-wise update alone, then the sums come from
 * ozaki/ (krill_ozaki_dot, krill_ozaki_mdot) into the same context-memory results, and
 * the CG state step follows on the device (krill_cg_finish_repro). Every element-wise
 * update is the same sequence of separately rounded operations on the CPU (host code is
 * -ffp-contract=off) and the GPU (KRILL_OZ_* / __d*_rn in the repro kernels), and the
 * k-term sums of w = alpha V h + beta w run j = 0, 1, ..., k-1 per element on both (no
 * cuBLAS): so every bit of a solve is independent of the thread count and the device. */

/* w = alpha * V h + beta * w (beta == 0: w is not read). Per element, on the CPU and in
 * reproducible mode on the GPU: w_i <- 0 (beta == 0), w_i (beta == 1) or w_i beta, then for
 * j = 0..k-1 in order w_i <- w_i + (alpha h_j) v_ij, every product and sum rounded.
 *                                                    reads k+1 vectors (k if beta == 0), writes 1 */
krill_status krill_fused_gemv_n(krill_ctx *ctx, int64_t n, int k, double alpha,
                                const double *v, int64_t ldv, const double *h, double beta,
                                double *w);
/* One pass of CGS2: w -= V h_sub (skipped when h_sub == NULL), then, with the new w,
 * h_out[0..k-1] = V^T w (when h_out != NULL) and *ss_out = w'w (when ss_out != NULL).
 * h_sub, h_out, ss_out in context memory; at least one of h_sub, h_out given. Row i of the
 * update needs only row i of V, so the subtraction of one pass and the dot products of the
 * next share one read of V: CGS2 = cgs_pass(NULL -> h1), cgs_pass(h1 -> h2), cgs_pass(h2 ->
 * ||w||^2) reads V three times instead of four. On the GPU for k <= KRILL_CGS_MAX_COLS
 * (a register-held accumulator per column); above that, cuBLAS GEMVs and a dot.
 *                                                    reads k+1 vectors (+1 write with h_sub) */
#define KRILL_CGS_MAX_COLS 32
/* Doubles of block partials per multiprocessor that the sweeps' buffer holds (ws->partial:
 * krill_cuda_cgs_partials): at least accumulators x blocks per SM of every sweep kernel
 * (CGS pass 9 x 3, 17 x 2, 33 x 1 (33 x 2 without the sums); DCGS2 19 x 3, 35 x 2, 67 x 1;
 * static_asserts at the kernels). */
#define KRILL_SWEEP_PARTIALS_PER_SM 76
krill_status krill_fused_cgs_pass(krill_ctx *ctx, const krill_reduce_ws *ws, int64_t n, int k,
                                  const double *v, int64_t ldv, const double *h_sub, double *w,
                                  double *h_out, double *ss_out);

/* w -= coeff[0] * v, then result[0] = u'w (u == NULL: w'w)
 *                                                    reads 3 vectors (2 if u NULL), writes 1 */
krill_status krill_fused_axpy_dot(krill_ctx *ctx, const krill_reduce_ws *ws, int64_t n,
                                  const double *coeff, const double *v, double *w,
                                  const double *u, double *result);

/* DCGS2's fused sweep (dcgs2.c's one reduction per step): with Q = V[:, 0..k-1], u = V[:, k] and w = V[:, k+1]
 * (k >= 0; the k+2 columns are contiguous), out = [Q u w]^T [u w], column-major (k+2) x 2:
 *   out[0..k-1] = Q'u, out[k] = u'u, out[k+1] = w'u,
 *   out[k+2..2k+1] = Q'w, out[2k+2] = u'w, out[2k+3] = w'w   (out in context memory).
 * All 2k+3 sums in one pass and one reduction. On the GPU one kernel for k <=
 * KRILL_DCGS2_MAX_COLS (2k+3 <= 67 register accumulators), else one cuBLAS DGEMM of the same
 * shape. Reproducible mode: two krill_ozaki_mdot calls (u, then w).
 *                                                    reads k+2 vectors */
#define KRILL_DCGS2_MAX_COLS 32
krill_status krill_fused_dcgs2_dots(krill_ctx *ctx, const krill_reduce_ws *ws, int64_t n, int k,
                                    const double *v, int64_t ldv, double *out);
/* DCGS2's update pass, per row i, with c (host memory, 2k+3 doubles) and the same V:
 *   u_i <- c[k] u_i, then u_i <- u_i + c[j] v_ij for j = 0..k-1,
 *   w_i <- c[2k+2] w_i, then w_i <- w_i + c[k+1+j] v_ij for j = 0..k-1,
 *          then w_i <- w_i + c[2k+1] u_i with the new u_i,
 * every product and sum rounded (the reproducible order; the plain GPU kernel contracts).
 * On the GPU c goes to the kernel as its parameters (k <= KRILL_DCGS2_MAX_COLS), else it is
 * copied to c_dev (context memory, 2k+3 doubles; unused otherwise and on the CPU).
 *                                                    reads k+2 vectors, writes 2 */
krill_status krill_fused_dcgs2_update(krill_ctx *ctx, int64_t n, int k, double *v, int64_t ldv,
                                      const double *c, double *c_dev);

#ifdef KRILL_HAVE_CUDA
size_t krill_cuda_cgs_partials(const krill_ctx *ctx);
/* k <= KRILL_DCGS2_MAX_COLS; partial: krill_cuda_cgs_partials(ctx) doubles */
krill_status krill_cuda_dcgs2_dots(krill_ctx *ctx, double *partial, int64_t n, int k,
                                   const double *v, int64_t ldv, double *out);
/* the same sums by cublasDgemm, any k */
krill_status krill_cuda_dcgs2_gemm(krill_ctx *ctx, int64_t n, int k, const double *v,
                                   int64_t ldv, double *out);
/* without contraction in reproducible mode (ctx->repro) */
krill_status krill_cuda_dcgs2_update(krill_ctx *ctx, int64_t n, int k, double *v, int64_t ldv,
                                     const double *c, double *c_dev);
/* krill_fused_gemv_n's element order on the GPU (reproducible mode), no cuBLAS */
krill_status krill_cuda_gemv_n_repro(krill_ctx *ctx, int64_t n, int k, double alpha,
                                     const double *v, int64_t ldv, const double *h, double beta,
                                     double *w);
krill_status krill_cuda_cgs_pass(krill_ctx *ctx, double *partial, int64_t n, int k,
                                 const double *v, int64_t ldv, const double *h_sub, double *w,
                                 double *h_out, double *ss_out);
krill_status krill_cuda_gemv_t(krill_ctx *ctx, int64_t n, int k, const double *v, int64_t ldv,
                               const double *w, double *h);
krill_status krill_cuda_gemv_n(krill_ctx *ctx, int64_t n, int k, double alpha, const double *v,
                               int64_t ldv, const double *h, double beta, double *w);
krill_status krill_cuda_axpy_dot(krill_ctx *ctx, int64_t n, const double *coeff,
                                 const double *v, double *w, const double *u, double *result);
/* Pipelined CG's update and its sums in one pass (solver/pipecg.c; pc_mode KRILL_CG_PC_*:
 * without M, u, m, q are r, w, s; dinv for DIAGONAL): sums[0..2] = r'u, w'u, r'r of the new
 * vectors, this rank's, in context memory. */
typedef struct krill_pipecg_vectors {
    double *x, *r, *w, *z, *s, *p, *u, *m, *q;
    const double *n, *dinv;
} krill_pipecg_vectors;
krill_status krill_cuda_pipecg_update(krill_ctx *ctx, int64_t n, int pc_mode, double alpha,
                                      double beta, const krill_pipecg_vectors *v, double *sums);
#endif

/* ---- DCGS2 (dcgs2.c): delayed CGS2 for GMRES and FGMRES (gmres.c runs the cycle) --------
 * Step j works on Q_j = V[:, 0..j-1] (final), u_j = V[:, j] (v_j before its second pass and
 * its exact norm) and w = A M^{-1} u_j = V[:, j+1]. The relation kept is
 * A M^{-1} U_k = Q_{k+1} Hbar_k with U_k = [u_0 .. u_{k-1}] = Q_k T (T upper triangular,
 * column j = (s_j; rho_j)), so column j of H is final only when u_{j+1}'s s and rho are
 * known: at step j+1, or by krill_dcgs2_finish at the end of a cycle. */
typedef struct krill_dcgs2 {
    double *coef;                /* context memory, 2m + 1: the update pass's coefficients */
    double *hcoef;               /* host, 2m + 1 */
    double *tri;                 /* host, m x m, column-major: T */
    int m;
    double nu;                   /* u_{j+1} = w_new / nu; h_{j+1,j} until corrected */
} krill_dcgs2;

krill_status krill_dcgs2_create(krill_ctx *ctx, int m, krill_dcgs2 *d);
void krill_dcgs2_destroy(krill_ctx *ctx, krill_dcgs2 *d);
/* Step j's sweep (krill_fused_dcgs2_dots into dev + 1, read into hread: 2j + 4 doubles
 * each; dev[0] may be overwritten). j >= 1: prev (host, column j-1 of H as made at step j-1,
 * entries 0..j) is corrected: prev[0..j-1] += nu s_j, prev[j] = nu rho_j; when u_j lies in
 * span(Q_j), prev[j] = 0 and nothing else is done (then column j-1 ends the cycle: a lucky
 * breakdown or a singular R). Else col[0..j] = column j of H before its correction, *hn =
 * its provisional h_{j+1,j} (the new nu), and the update's coefficients are ready.
 * NaN or Inf in the sums: col and *hn (and prev[j]) NaN. */
krill_status krill_dcgs2_project(const krill_solve_problem *p, krill_dcgs2 *d,
                                 const krill_reduce_ws *red, double *v, int j, double *dev,
                                 double *hread, double *prev, double *col, double *hn);
/* Step j's update pass: V[:, j] = q_j, V[:, j+1] = u_{j+1}. */
krill_status krill_dcgs2_update(const krill_solve_problem *p, krill_dcgs2 *d, double *v, int j);
/* End of a cycle whose column k-1 is still provisional: s_k and rho_k from one CGS pass over
 * Q_k and u_k (krill_fused_cgs_pass, no update), then prev (column k-1) corrected as in
 * krill_dcgs2_project. */
krill_status krill_dcgs2_finish(const krill_solve_problem *p, krill_dcgs2 *d,
                                const krill_reduce_ws *red, double *v, int k, double *dev,
                                double *hread, double *prev);
/* out = T_k y (k x k upper triangular times y): x += M^{-1} U_k y = M^{-1} Q_k (T_k y). */
void krill_dcgs2_coordinates(const krill_dcgs2 *d, int k, const double *y, double *out);

/* Test hook (tests/test_dcgs2.c): when set, GMRES and FGMRES call it at the end of every
 * cycle with the orthonormal basis Q_k = V[:, 0..k-1] (context memory, leading dimension n),
 * before the solution update. NULL in normal use. */
typedef void (*krill_gmres_basis_fn)(krill_ctx *ctx, const double *v, int64_t n, int k,
                                     void *user);
void krill_gmres_set_basis_hook(krill_gmres_basis_fn fn, void *user);

/* ---- restarted GMRES's shared pieces (gmres.c): GMRES, FGMRES and s-step GMRES ----------
 * How a cycle ended; the driver turns the ending into the solve's reason. */
typedef enum krill_cycle_end {
    KRILL_END_FULL,          /* m steps */
    KRILL_END_ESTIMATE,      /* the residual estimate met the tolerance */
    KRILL_END_LUCKY,         /* lucky breakdown: exact in the space */
    KRILL_END_BREAKDOWN,     /* breakdown with a singular R */
    KRILL_END_MAXIT,         /* maxit iterations */
    KRILL_END_STOPPED,       /* the monitor asked to stop */
    KRILL_END_NAN            /* NaN or Inf in h or y: x is left at the cycle's start */
} krill_cycle_end;
/* One cycle from the residual r_0 (norm beta) in the workspace's first basis column:
 * iterations counted into *it, the ending into *end, *stopped when the monitor said stop. */
typedef krill_status (*krill_cycle_fn)(const krill_solve_problem *p, void *ws,
                                       krill_solve_info *info, double beta, int *it,
                                       krill_cycle_end *end, int *stopped);
/* The restart loop: the initial residual into r (norm through norm_dev), cycles until a
 * reason, the true residual after each, info's reason, counts, norms and times. */
krill_status krill_restarted_run(const krill_solve_problem *p, krill_solve_info *info, void *ws,
                                 double *r, double *norm_dev, krill_cycle_fn cycle);
/* sqrt(sum_{i<=j} col_i^2 + hn^2), scaled so that large entries do not overflow; NaN when
 * an entry is NaN or Inf: ||A M^{-1} v_j|| from column j of H. */
double krill_hess_column_norm(const double *col, int j, double hn);
/* The previous rotations (cs, sn: j of them) on column j, then rotation j zeroing hn, applied
 * to g. Returns 1, with g untouched, when R_jj would be <= rmin: R is singular. */
int krill_hess_givens(double *col, int j, double hn, double rmin, double *cs, double *sn,
                      double *g);
/* y = R^{-1} g, R the k x k upper triangle of r (leading dimension ld), by back
 * substitution; 0 when a y_i is not finite (R too ill-conditioned), else 1. */
int krill_hess_solve(int k, const double *r, int ld, const double *g, double *y);

/* ---- s-step GMRES (sstep.c; host pieces in sstep_host.c) ----------------------------------
 * krill_solve runs it for KRILL_SOLVER_GMRES when opts.sstep >= 2 (checked there: GMRES
 * only, restart a multiple of sstep, sstep <= KRILL_SSTEP_MAX). */
krill_status krill_sstep_run(const krill_solve_problem *p, krill_solve_info *info);

/* Eigenvalues (wr + i wi; a complex pair adjacent, positive imaginary part first) of the
 * n x n upper Hessenberg h (column-major, leading dimension ld; destroyed). 0, or -1 when
 * the QR iteration did not converge or met NaN/Inf. */
int krill_hessenberg_eig(int n, double *h, int ld, double *wr, double *wi);
/* The first `want` of the k points (wr, wi) in modified Leja order into (re, im): a complex
 * point with im > 0 is followed by its conjugate (im < 0), unless it is the last one taken.
 * used: k ints of scratch. Returns how many were taken (< want when k is smaller). */
int krill_leja_order(int k, const double *wr, const double *wi, int want, int *used,
                     double *re, double *im);
/* Cholesky g = r'r of the leading columns of the s x s Gram matrix g (upper triangle read):
 * column j is accepted while its pivot exceeds pivot_min g_jj and the condition number of
 * the column-scaled leading factor, ||R D^-1/2||_F ||D^1/2 R^-1||_F (D = diag(g)), stays <=
 * kappa_max; returns the number of columns accepted (r's upper triangle filled for them,
 * *kappa the estimate for them). inv: s x s scratch. */
int krill_sstep_cholesky(int s, const double *g, int ldg, double *r, int ldr, double *inv,
                         double pivot_min, double kappa_max, double *kappa);

/* One block of s-step GMRES, for krill_sstep_hessenberg: W = [q_k0, v_1 .. v_a] with
 * A M^-1 W[:, i] = sigma_i W[:, i+1] + theta_i W[:, i] + gamma_i W[:, i-1] (i < a), and
 * v_i = Q_{k0+1} ra[:, i-1] + Q_new rb[:, i-1] (Q_new the block's a orthonormal vectors). */
typedef struct krill_sstep_block {
    int k0, a;
    const double *ra;            /* (k0+1) x a, leading dimension ldra */
    const double *rb;            /* a x a upper triangular, leading dimension ldrb */
    int ldra, ldrb;
    const double *theta, *sigma, *gamma;   /* a each; gamma[0] unused */
} krill_sstep_block;
/* Columns k0 .. k0+a-1 of the (unrotated) Hessenberg matrix hraw (leading dimension ldh,
 * columns < k0 given): H_new = (RR B - [H_old U; 0]) T^-1 (sstep.c's comment). rr: (k0+a+1)
 * x (a+1) and c: (k0+a+1) x a doubles of scratch. */
void krill_sstep_hessenberg(const krill_sstep_block *b, double *hraw, int ldh, double *rr,
                            double *c);

/* The Newton shifts: the Ritz values of the k x k Hessenberg matrix hraw (k >= s; eig_h:
 * k x k scratch; wr, wi, used: k), the first s in modified Leja order into (re, im), and
 * *scale = the largest modulus among them. 1 when set, 0 (too few, or all zero), or -1 when
 * the eigenvalue iteration failed. */
int krill_sstep_shifts(int k, const double *hraw, int ldh, int s, double *eig_h, double *wr,
                       double *wi, int *used, double *re, double *im, double *scale);

/* What the last s-step solve did (tests/test_sstep.c, doc/): counts over the solve. */
typedef struct krill_sstep_stats {
    int blocks;                  /* blocks generated */
    int spmvs;                   /* SpMVs of the blocks (iterations + discarded) */
    int discarded;               /* vectors generated but dropped by a truncated block */
    int truncated;               /* blocks cut short: Gram matrix not numerically positive
                                    definite, or too ill-conditioned, past some column */
    int newton;                  /* 1 once the Newton shifts (Ritz values) were in use */
    int ritz_failed;             /* eigenvalue iterations that did not converge */
    double max_kappa;            /* largest block condition estimate accepted */
    double max_reortho;          /* largest ||Q'z|| / ||z|| of a new vector after both
                                    passes (the orthogonality between blocks) */
} krill_sstep_stats;
void krill_sstep_last_stats(krill_sstep_stats *out);
/* the basis hook of s-step GMRES: called as krill_gmres_set_basis_hook's */
void krill_sstep_set_basis_hook(krill_gmres_basis_fn fn, void *user);

/* ---- CG state in context memory ----------------------------------------------------------
 * The scalars of CG live where the vectors live, and the kernels themselves decide: alpha
 * and beta are computed from r'z and p'Ap read from context memory, and a stop code freezes
 * the iteration (later kernels do nothing) once it converges (r'r <= tol2), meets a p'Ap or
 * an r'z that is zero or has changed sign (indefinite), or a NaN/Inf. The host only reads a
 * copy of the state after each iteration, so on the GPU it can queue the next iteration
 * before it reads (see cg.c). Iteration k's kernels receive k: the direction kernel updates x only if
 * the residual kernel of the same k applied its step (applied == k). */
enum {
    KRILL_CG_RUNNING = 0,
    KRILL_CG_CONVERGED = 1,      /* r'r <= tol2 (to be confirmed by the true residual) */
    KRILL_CG_INDEFINITE = 2,     /* p'Ap or r'z zero, or of another sign than before */
    KRILL_CG_NAN = 3             /* NaN or Inf in p'Ap, alpha, r'r or r'z */
};

enum {
    KRILL_CG_PC_NONE = 0,        /* z = r: r'z = r'r */
    KRILL_CG_PC_DIAGONAL = 1,    /* z = dinv .* r, fused into the residual and direction kernels */
    KRILL_CG_PC_GENERAL = 2      /* z = M^{-1} r by the preconditioner, r'z by a dot */
};

typedef struct krill_cg_state {
    double rz;                   /* r'z of the current residual */
    double rz_next;              /* GENERAL, and DIAGONAL in reproducible mode: r'z of the new
                                    residual, written by a dot */
    double rr_next;              /* reproducible mode: r'r of the new residual, written by a
                                    dot (krill_cg_finish_repro takes it into rr) */
    double pap;                  /* p'Ap, written by the SpMV */
    double rr;                   /* r'r of the current residual */
    double alpha;                /* step of the last applied iteration */
    double beta;                 /* p = z + beta p */
    double tol2;                 /* converged when rr <= tol2 */
    double pap_sign;             /* +1 or -1: the sign of p'Ap in the steps taken so far
                                    (kept across restarts); 0 before the first step */
    int stop;                    /* KRILL_CG_RUNNING or a stop code */
    int applied;                 /* last iteration whose residual update was applied */
} krill_cg_state;

static inline KRILL_HD int krill_is_finite(double v) { return fabs(v) <= DBL_MAX; }

/* The definiteness test of CG (PETSc's KSPCG): p'Ap and r'z must be nonzero and keep one
 * sign through the solve. CG is well defined on A and M that are each positive or negative
 * definite: on -A x = -b it makes the iterates x of A x = b, with p'Ap negated (no
 * preconditioner: r and p negated, r'z = r'r unchanged; an M built from -A, e.g. Jacobi:
 * r'z negated, p unchanged). 1 when the finite v is nonzero and has the sign of ref
 * (ref == 0: no sign yet, any nonzero v). */
static inline KRILL_HD int krill_cg_sign_kept(double v, double ref)
{
    return v != 0.0 && (ref == 0.0 || (v > 0.0) == (ref > 0.0));
}

/* Step length of the current iteration: RUNNING and *alpha = r'z / p'Ap, or a stop code. */
static inline KRILL_HD int krill_cg_step(const krill_cg_state *s, double *alpha)
{
    double pap = s->pap;
    if (!krill_is_finite(pap)) return KRILL_CG_NAN;
    if (!krill_cg_sign_kept(pap, s->pap_sign)) return KRILL_CG_INDEFINITE;
    *alpha = s->rz / pap;
    return krill_is_finite(*alpha) ? KRILL_CG_RUNNING : KRILL_CG_NAN;
}

/* With the new residual's r'z: converged, or beta = rz_new / rz for the next direction. */
static inline KRILL_HD void krill_cg_next_direction(krill_cg_state *s, double rz_new)
{
    if (s->rr <= s->tol2) {
        s->stop = KRILL_CG_CONVERGED;
    } else if (!krill_is_finite(rz_new)) {
        s->stop = KRILL_CG_NAN;
    } else if (!krill_cg_sign_kept(rz_new, s->rz)) {
        s->stop = KRILL_CG_INDEFINITE;
    } else {
        s->beta = rz_new / s->rz;
        s->rz = rz_new;
    }
}

/* After r -= alpha q of iteration k, with the new r'r and (NONE, DIAGONAL) r'z. */
static inline KRILL_HD void krill_cg_finish_residual(krill_cg_state *s, int k, int pc_mode,
                                                     double alpha, double rr, double rz)
{
    if (!krill_is_finite(rr)) {
        s->stop = KRILL_CG_NAN;      /* x keeps its last finite value */
        return;
    }
    s->alpha = alpha;
    s->applied = k;
    s->pap_sign = s->pap > 0.0 ? 1.0 : -1.0;
    s->rr = rr;
    if (pc_mode != KRILL_CG_PC_GENERAL) krill_cg_next_direction(s, rz);
}

/* Reproducible mode: the residual kernel of iteration k only updated r (and, DIAGONAL, wrote
 * z = dinv .* r over q), the Ozaki dots wrote rr_next (and rz_next); this is the state step
 * the plain kernel runs at the end of its grid sum. The update left the state as it found
 * it, so alpha is recomputed from the same r'z and p'Ap, bit for bit; a state the update
 * froze (stop set, or never RUNNING) is left alone. */
static inline KRILL_HD void krill_cg_finish_repro(krill_cg_state *s, int k, int pc_mode)
{
    double alpha = 0.0;
    if (s->stop != KRILL_CG_RUNNING || krill_cg_step(s, &alpha) != KRILL_CG_RUNNING) return;
    krill_cg_finish_residual(s, k, pc_mode, alpha, s->rr_next,
                             pc_mode == KRILL_CG_PC_NONE ? s->rr_next : s->rz_next);
}

/* Iteration k of CG, in three (GENERAL: five) device-side steps:
 *   residual:  alpha = rz / pap; r -= alpha q; rr = r'r; rz = r'(dinv .* r) (DIAGONAL)
 *   [GENERAL:  z = M^{-1} r and rz_next = r'z by the caller; then cg_scalars]
 *   direction: x += alpha p; p = src (.* dinv) + beta p    (src = r, or z for GENERAL)
 * q = A p and pap = p'q come before, from krill_mat_spmv_dot_raw.
 * Reproducible mode, residual: r -= alpha q (and, DIAGONAL, q = z = dinv .* r: q is free
 * until the next SpMV), rr_next = r'r and (DIAGONAL) rz_next = r'z by krill_ozaki_dot
 * (both by krill_ozaki_dot_pairs: one round of collectives on GPU ranks of a communicator),
 * then krill_cg_finish_repro on the device: 2 (3) more launches, no host round trip on
 * one process.
 * GPU ranks, plain mode: the residual kernel leaves this rank's r'r and r'(dinv .* r) in
 * rr_next and rz_next, one device allreduce sums both (a host round trip), and
 * krill_cg_finish_repro takes the step. */
krill_status krill_fused_cg_residual(krill_ctx *ctx, const krill_reduce_ws *ws, int64_t n,
                                     int k, int pc_mode, krill_cg_state *s, double *q,
                                     double *r, const double *dinv);
krill_status krill_fused_cg_scalars(krill_ctx *ctx, int k, krill_cg_state *s);
krill_status krill_fused_cg_direction(krill_ctx *ctx, int64_t n, int k, const krill_cg_state *s,
                                      const double *src, const double *dinv, double *x,
                                      double *p);

#ifdef KRILL_HAVE_CUDA
krill_status krill_cuda_cg_residual(krill_ctx *ctx, int64_t n, int k, int pc_mode,
                                    krill_cg_state *s, const double *q, double *r,
                                    const double *dinv);
/* GPU ranks: the same update with this rank's r'r and r'(dinv .* r) into rr_next and rz_next
 * (adjacent: one allreduce of both), the state step left to krill_cuda_cg_finish_repro */
krill_status krill_cuda_cg_residual_sums(krill_ctx *ctx, int64_t n, int k, int pc_mode,
                                         krill_cg_state *s, const double *q, double *r,
                                         const double *dinv);
krill_status krill_cuda_cg_scalars(krill_ctx *ctx, int k, krill_cg_state *s);
/* reproducible mode: the residual kernel's update alone (z over q for DIAGONAL), and
 * krill_cg_finish_repro on one thread */
krill_status krill_cuda_cg_residual_repro(krill_ctx *ctx, int64_t n, krill_cg_state *s,
                                          double *q, double *r, const double *dinv);
krill_status krill_cuda_cg_finish_repro(krill_ctx *ctx, int k, int pc_mode, krill_cg_state *s);
/* the direction kernel without contraction in reproducible mode (ctx->repro) */
krill_status krill_cuda_cg_direction(krill_ctx *ctx, int64_t n, int k, const krill_cg_state *s,
                                     const double *src, const double *dinv, double *x,
                                     double *p);
#endif

/* ---- asynchronous read of a small struct from context memory ------------------------------
 * start queues a copy of `bytes` from src into slot `slot` (0 or 1) and returns; wait blocks
 * until that copy is done and hands it over. On the GPU the copy goes through the context's
 * pinned buffer (its last KRILL_ASYNC_READ_DOUBLES doubles, which nothing else in krill
 * uses) with cudaMemcpyAsync and an event; on the CPU start copies at once. */
#define KRILL_ASYNC_READ_BYTES 128
#define KRILL_ASYNC_READ_DOUBLES (2 * KRILL_ASYNC_READ_BYTES / 8)
/* core/ctx.c's device reductions use the pinned buffer below its last 64 doubles */
#ifdef __cplusplus
static_assert(KRILL_ASYNC_READ_DOUBLES <= 64, "the asynchronous reads outgrew their room");
#else
_Static_assert(KRILL_ASYNC_READ_DOUBLES <= 64, "the asynchronous reads outgrew their room");
#endif

typedef struct krill_async_read {
    krill_ctx *ctx;
    size_t bytes;                /* <= KRILL_ASYNC_READ_BYTES */
    unsigned char stash[2][KRILL_ASYNC_READ_BYTES];  /* CPU: the copies */
    void *events;                /* GPU: two events */
} krill_async_read;

krill_status krill_async_read_create(krill_ctx *ctx, size_t bytes, krill_async_read *r);
krill_status krill_async_read_start(krill_async_read *r, int slot, const void *src);
krill_status krill_async_read_wait(krill_async_read *r, int slot, void *dst);
void krill_async_read_destroy(krill_async_read *r);

/* solve.c: the SpMVs auto expects of `solves` solves with opts (at least 1): each its first restart
 * cycle (GMRES, FGMRES) or first 30 iterations (the others, BiCGStab two SpMVs each), at
 * most maxit, plus the initial and the final true residual; 32 for the default options. */
int64_t krill_auto_solve_spmvs(const krill_solver_opts *opts, int solves);
/* The format to build for a matrix that serves `solves` solves with opts: "auto" becomes
 * "auto:spmvs=N" (N from krill_auto_solve_spmvs) in buf (len bytes, 48 suffice); any other
 * name, NULL included, is returned as it is. What `krill solve --format auto` and the
 * benchmarks build. */
const char *krill_auto_for_solves(const char *format, const krill_solver_opts *opts,
                                  int solves, char *buf, size_t len);

#ifdef KRILL_HAVE_CUDA
krill_status krill_cuda_async_read_create(krill_ctx *ctx, void **events);
krill_status krill_cuda_async_read_start(krill_ctx *ctx, void *events, int slot,
                                         const void *src, size_t bytes);
krill_status krill_cuda_async_read_wait(krill_ctx *ctx, void *events, int slot, void *dst,
                                        size_t bytes);
void krill_cuda_async_read_destroy(void *events);
#endif

#ifdef __cplusplus
}
#endif
#endif
