/* solver/bicgstab.c - BiCGStab with right preconditioning, for general (nonsymmetric) A.
 *
 * Reference: H. A. van der Vorst, SIAM J. Sci. Stat. Comput. 13 (1992) 631-644; the
 * right-preconditioned form as in Y. Saad, Iterative Methods for Sparse Linear Systems,
 * 2nd ed., SIAM 2003, Algorithm 7.7 applied to A M^{-1} u = b, x = M^{-1} u. The residual
 * it updates is therefore the true one, b - A x (in exact arithmetic).
 *
 *   r = b - A x, r0 = r (the shadow residual), p = r, rho = r0'r
 *   iteration k = 1, 2, ...:
 *     phat = M^{-1} p, v = A phat
 *     sigma = r0'v;        alpha = rho / sigma
 *     s = r - alpha v      (x + alpha phat has residual s: the BiCG half step)
 *     shat = M^{-1} s, t = A shat
 *     omega = t's / t't    (minimizes ||s - omega t||)
 *     x += alpha phat + omega shat
 *     r = s - omega t;     rho_new = r0'r
 *     beta = (rho_new / rho) (alpha / omega);  p = r + beta (p - omega v)
 * One iteration is two SpMVs and two preconditioner applications; opts.maxit counts
 * iterations, and info->history gets one entry per iteration, ||r|| after it (||s|| when
 * the half step already met the tolerance: then x = x + alpha phat and the iteration ends
 * there). The monitor is called once per iteration with the same value.
 *
 * Stopping and breakdown. The recurrence residual ||r|| (or ||s||) <= tol = max(rtol ||b||,
 * atol) ends the iteration only if the true residual b - A x confirms it; otherwise the
 * iteration restarts from the true residual (r0 = r, p = r), as CG does. The method breaks
 * down when a quantity it divides by vanishes:
 *   sigma = r0'v:  |sigma| <= BREAKDOWN_TOL ||r0|| ||v||   (x unchanged this iteration)
 *   omega:         t't = 0, or |t's| <= BREAKDOWN_TOL ||t|| ||s||  (x takes the half step)
 *   rho_new = r0'r: |rho_new| <= BREAKDOWN_TOL ||r0|| ||r||  (the iteration is complete;
 *                  the next direction cannot be formed)
 * A breakdown in the first iteration after a (re)start ends the solve with
 * KRILL_DIVERGED_BREAKDOWN, unless the final true residual meets the tolerance (then the
 * reason is converged). A later one restarts from the true residual with the new shadow
 * r0 = r, which removes the cause (r0'r = ||r||^2 > 0). On real nonsymmetric matrices of
 * testdata/ (e05r0000, olm500, dwa512 with b = A 1) the shadow drifts orthogonal to r or
 * A p at roundoff level (cosines ~2e-16) after tens to hundreds of iterations; restarting
 * there converged e05r0000 and olm500 (release build; olm500 without a preconditioner is
 * sensitive to rounding and did not converge in a debug build) where stopping reported
 * breakdowns at relative residuals 4e-5 to 0.2. NaN or Inf in any of these scalars ends
 * the solve with KRILL_DIVERGED_NAN, x left at its last finite value. Every test is on a
 * host copy of the scalars: no NaN reaches x or p.
 *
 * Memory traffic per iteration (passes over vectors of n doubles besides the two SpMVs,
 * which read phat / shat and write v / t):
 *   sigma = r0'v and v'v (one pass: r0, v read)                                  2
 *   s = r - alpha v with s's (r, v read, s written over r)                       3
 *   t's and t't (one pass: s, t read)                                            2
 *   x += alpha phat + omega shat (phat, shat, x read, x written)                 4
 *   r = s - omega t with t'r, r0'r, r'r (t, r0, s read, r written)               4
 *   p = r + beta (p - omega v) (v, r, p read, p written)                         4
 *                                                                               = 19
 * plus two preconditioner applications (not M = I; Jacobi: 3 each). Reproducible mode
 * (krill_ctx_set_repro; solver_impl.h): every sum an Ozaki sum (a statistics pass and a
 * products pass: 4 reads per dot, 2 (k + 1) per k-column projection), the updates
 * unchanged but rounded operation by operation on both devices: 8 + 7 + 8 + 4 + 14 + 4 = 45
 * (sigma and v'v; s and s's; t's and t't; x; r with t'r, r0'r and r'r; p). The two-column passes
 * use the fused GMRES operations (krill_fused_cgs_pass, krill_fused_gemv_n) on columns
 * that are adjacent in one block: [v | r | p | t | r0] with r = s in place, so that [v r],
 * [r p] and [t r0] are n x 2 matrices with leading dimension n. The host reads three small
 * groups of scalars per iteration (sigma and ||v||; ||s||, t's, t't; rho_new and ||r||):
 * three synchronizations on the GPU, where alpha, omega and beta are computed on the host
 * and written back with three small copies. A sum of squares among them that over- or
 * underflowed (v and t scale with A M^{-1}: ||A|| ~ 1e160 gives v'v ~ 1e320) is redone as a
 * scaled norm, one more pass (krill_norm_from_ss); krill_solve has already scaled an
 * extreme b.
 *
 * Workspace, allocated once: the 5-column block, [phat | shat] (n x 2, only with a
 * preconditioner), 16 doubles of context memory and of host memory, and the CPU reduction
 * partials. */
#include <math.h>
#include <string.h>

#include "formats/formats_impl.h"
#include "precond/precond_impl.h"
#include "solver/solver_impl.h"

/* Breakdown threshold on the cosine between two vectors whose inner product is divided
 * by: below one unit roundoff the computed inner product has no significant digit,
 * whatever n. */
#define BICGSTAB_BREAKDOWN_TOL DBL_EPSILON

/* Columns of the vector block. */
enum { COL_V, COL_R, COL_P, COL_T, COL_R0, COL_COUNT };

/* Scalars in context memory (and their host copies, same index). Groups that are written
 * or read together are contiguous. */
enum {
    S_ALPHA = 0,             /* written: alpha, the coefficient of s = r - alpha v */
    S_XCOEF = 1,             /* written, 2: x += [phat shat] (alpha, omega), or without M:
                              * x += [s p] (omega, alpha) */
    S_OMEGA = 3,             /* written, 2: (omega, 0): r -= [t r0] (omega, 0) */
    S_PCOEF = 5,             /* written, 2: (-beta omega, 1): p = [v r] (..) + beta p */
    S_SIGMA = 7,             /* read: r0'v */
    S_VV = 8,                /* read: v'v */
    S_SS = 9,                /* read: s's */
    S_TS = 10,               /* read: t's */
    S_TT = 11,               /* read: t't */
    S_TR = 12,               /* read (unused): t'r of the new r */
    S_RHO = 13,              /* read: r0'r */
    S_RR = 14,               /* read: r'r */
    S_NORM = 15,             /* the true residual's norm */
    S_COUNT = 16
};

typedef enum step_end {
    STEP_FULL,               /* a full iteration; the recurrence residual misses tol */
    STEP_SMALL,              /* the recurrence residual (||s|| or ||r||) meets tol */
    STEP_BREAKDOWN,          /* sigma, omega or rho_new vanished */
    STEP_NAN                 /* NaN or Inf in a scalar */
} step_end;

typedef struct bicgstab_ws {
    double *block;           /* context memory, n x COL_COUNT: v, r (= s), p, t, r0 */
    double *z;               /* context memory, n x 2: phat, shat (NULL when M = I) */
    double *dev;             /* context memory, S_COUNT */
    double *host;            /* host, S_COUNT */
    double rho;              /* r0'r of the current r */
    double r0norm;           /* ||r0|| */
    double rnorm;            /* the recurrence residual's norm */
    krill_reduce_ws red;
} bicgstab_ws;

static void bicgstab_ws_destroy(krill_ctx *ctx, bicgstab_ws *ws)
{
    krill_ws_free(ctx, ws->block);
    krill_ws_free(ctx, ws->z);
    krill_ws_free(ctx, ws->dev);
    krill_free(ws->host);
    krill_reduce_ws_destroy(ctx, &ws->red);
    memset(ws, 0, sizeof *ws);
}

static krill_status bicgstab_ws_create(const krill_solve_problem *p, bicgstab_ws *ws)
{
    krill_status st = KRILL_OK;
    krill_ctx *ctx = p->ctx;
    memset(ws, 0, sizeof *ws);
    KRILL_WS_ALLOC(ctx, ws->block, (size_t)p->n * COL_COUNT);
    if (!krill_pc_is_identity(p->pc)) KRILL_WS_ALLOC(ctx, ws->z, (size_t)p->n * 2);
    KRILL_WS_ALLOC(ctx, ws->dev, S_COUNT);
    KRILL_CALLOC(ws->host, S_COUNT);
    /* three sums per pass: the GPU's CGS pass partials are allocated for width > 2 */
    KRILL_TRY(krill_reduce_ws_create(ctx, 3, &ws->red));
cleanup:
    if (st != KRILL_OK) bicgstab_ws_destroy(ctx, ws);
    return st;
}

static double *column(const krill_solve_problem *p, const bicgstab_ws *ws, int c)
{
    return ws->block + (size_t)c * (size_t)p->n;
}

/* (Re)start from r = b - A x (in COL_R, norm rnorm > 0): r0 = p = r, rho = r0'r (a dot
 * product, not rnorm^2, whose rounding differs). */
static krill_status bicgstab_start(const krill_solve_problem *p, bicgstab_ws *ws,
                                   double rnorm)
{
    krill_status st = KRILL_OK;
    double *r = column(p, ws, COL_R), *r0 = column(p, ws, COL_R0);
    KRILL_TRY(krill_blas_copy(p->ctx, p->n, r, r0));
    KRILL_TRY(krill_blas_copy(p->ctx, p->n, r, column(p, ws, COL_P)));
    KRILL_TRY(krill_blas_dot(p->ctx, p->n, r0, r, ws->dev + S_RHO));
    KRILL_TRY(krill_scalars_read(p->ctx, ws->dev + S_RHO, &ws->rho, 1));
    ws->r0norm = rnorm;
    ws->rnorm = rnorm;
cleanup:
    return st;
}

/* z = M^{-1} src in the PRECOND phase. */
static krill_status precondition(const krill_solve_problem *p, const double *src, double *z)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_PRECOND));
    KRILL_TRY(krill_pc_apply_raw(p->pc, src, z));
cleanup:
    return st;
}

/* y = A src in the SPMV phase; then the ORTHO phase (the reductions follow every SpMV). */
static krill_status spmv(const krill_solve_problem *p, const double *src, double *y)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_SPMV));
    KRILL_TRY(krill_mat_spmv_raw(p->a, 1.0, src, 0.0, y));
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_ORTHO));
cleanup:
    return st;
}

/* Read `count` scalars from slot `first` to the host (waits for the device), then the
 * OTHER phase and the timer's poll. */
static krill_status read_scalars(const krill_solve_problem *p, bicgstab_ws *ws, int first,
                                 int count)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(krill_scalars_read(p->ctx, ws->dev + first, ws->host + first, count));
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_OTHER));
    KRILL_TRY(krill_timer_poll(p->timer));
cleanup:
    return st;
}

static int all_finite3(double a, double b, double c)
{
    return krill_is_finite(a) && krill_is_finite(b) && krill_is_finite(c);
}

/* One iteration from the state in ws. *estimate: the recurrence residual's norm after it
 * (NaN for STEP_NAN). */
static krill_status bicgstab_step(const krill_solve_problem *p, bicgstab_ws *ws,
                                  double *estimate, step_end *end)
{
    krill_status st = KRILL_OK;
    krill_ctx *ctx = p->ctx;
    const int64_t n = p->n;
    double *h = ws->host, *d = ws->dev;
    double *v = column(p, ws, COL_V), *r = column(p, ws, COL_R), *pv = column(p, ws, COL_P);
    double *t = column(p, ws, COL_T), *r0 = column(p, ws, COL_R0);
    double *phat = ws->z ? ws->z : pv, *shat = ws->z ? ws->z + n : r;
    double alpha, omega, beta, vnorm, snorm, tnorm, rho_new;

    *end = STEP_NAN;
    *estimate = NAN;
    /* v = A M^{-1} p; sigma = r0'v, v'v */
    if (ws->z) KRILL_TRY(precondition(p, pv, phat));
    KRILL_TRY(spmv(p, phat, v));
    KRILL_TRY(krill_fused_cgs_pass(ctx, &ws->red, n, 1, r0, n, NULL, v, d + S_SIGMA, d + S_VV));
    KRILL_TRY(read_scalars(p, ws, S_SIGMA, 2));
    KRILL_TRY(krill_norm_from_ss(p, v, h[S_VV], d + S_VV, &vnorm));
    if (!krill_is_finite(h[S_SIGMA]) || !krill_is_finite(vnorm)) goto cleanup;
    if (fabs(h[S_SIGMA]) <= BICGSTAB_BREAKDOWN_TOL * ws->r0norm * vnorm) {
        *end = STEP_BREAKDOWN;           /* x and r unchanged */
        *estimate = ws->rnorm;
        goto cleanup;
    }
    alpha = ws->rho / h[S_SIGMA];
    if (!krill_is_finite(alpha)) goto cleanup;

    /* s = r - alpha v (over r), s's; t = A M^{-1} s; t's, t't */
    h[S_ALPHA] = alpha;
    KRILL_TRY(krill_scalars_write(ctx, d + S_ALPHA, h + S_ALPHA, 1));
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_ORTHO));
    KRILL_TRY(krill_fused_axpy_dot(ctx, &ws->red, n, d + S_ALPHA, v, r, NULL, d + S_SS));
    if (ws->z) KRILL_TRY(precondition(p, r, shat));
    KRILL_TRY(spmv(p, shat, t));
    KRILL_TRY(krill_fused_cgs_pass(ctx, &ws->red, n, 1, r, n, NULL, t, d + S_TS, d + S_TT));
    KRILL_TRY(read_scalars(p, ws, S_SS, 3));
    KRILL_TRY(krill_norm_from_ss(p, r, h[S_SS], d + S_SS, &snorm));
    KRILL_TRY(krill_norm_from_ss(p, t, h[S_TT], d + S_TT, &tnorm));
    if (!all_finite3(snorm, h[S_TS], tnorm)) goto cleanup;
    if (snorm <= p->tol || tnorm == 0.0 ||
        fabs(h[S_TS]) <= BICGSTAB_BREAKDOWN_TOL * tnorm * snorm) {
        /* the half step converged, or omega ~ 0: x takes the half step, r = s */
        KRILL_TRY(krill_blas_axpy(ctx, n, alpha, phat, p->x));
        ws->rnorm = snorm;
        *estimate = snorm;
        *end = snorm <= p->tol ? STEP_SMALL : STEP_BREAKDOWN;
        goto cleanup;
    }
    /* t't out of range (||t|| ~ ||A M^{-1}|| ||s||): the same quotient through ||t|| */
    omega = krill_ss_in_range(h[S_TT]) ? h[S_TS] / h[S_TT] : h[S_TS] / tnorm / tnorm;
    if (!krill_is_finite(omega)) goto cleanup;

    /* x += alpha phat + omega shat; r = s - omega t, r0'r, r'r */
    h[S_XCOEF] = ws->z ? alpha : omega;
    h[S_XCOEF + 1] = ws->z ? omega : alpha;
    h[S_OMEGA] = omega;
    h[S_OMEGA + 1] = 0.0;
    KRILL_TRY(krill_scalars_write(ctx, d + S_XCOEF, h + S_XCOEF, 4));
    KRILL_TRY(krill_fused_gemv_n(ctx, n, 2, 1.0, ws->z ? ws->z : r, n, d + S_XCOEF, 1.0, p->x));
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_ORTHO));
    KRILL_TRY(krill_fused_cgs_pass(ctx, &ws->red, n, 2, t, n, d + S_OMEGA, r, d + S_TR,
                                   d + S_RR));
    KRILL_TRY(read_scalars(p, ws, S_TR, 3));
    rho_new = h[S_RHO];
    KRILL_TRY(krill_norm_from_ss(p, r, h[S_RR], d + S_RR, &ws->rnorm));
    if (!krill_is_finite(rho_new) || !krill_is_finite(ws->rnorm)) goto cleanup;
    *estimate = ws->rnorm;
    if (ws->rnorm <= p->tol) {
        *end = STEP_SMALL;
        goto cleanup;
    }
    if (fabs(rho_new) <= BICGSTAB_BREAKDOWN_TOL * ws->r0norm * ws->rnorm) {
        *end = STEP_BREAKDOWN;
        goto cleanup;
    }

    /* p = r + beta (p - omega v) = [v r] (-beta omega, 1) + beta p */
    beta = (rho_new / ws->rho) * (alpha / omega);
    if (!krill_is_finite(beta) || !krill_is_finite(beta * omega)) {
        *estimate = NAN;
        goto cleanup;
    }
    ws->rho = rho_new;
    h[S_PCOEF] = -beta * omega;
    h[S_PCOEF + 1] = 1.0;
    KRILL_TRY(krill_scalars_write(ctx, d + S_PCOEF, h + S_PCOEF, 2));
    KRILL_TRY(krill_fused_gemv_n(ctx, n, 2, 1.0, v, n, d + S_PCOEF, beta, pv));
    *end = STEP_FULL;
cleanup:
    return st;
}

/* The true residual into COL_R; its norm. */
static krill_status bicgstab_true_residual(const krill_solve_problem *p, bicgstab_ws *ws,
                                           double *norm)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_SPMV));
    KRILL_TRY(krill_true_residual(p, column(p, ws, COL_R), ws->dev + S_NORM, norm));
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_OTHER));
cleanup:
    return st;
}

krill_status krill_bicgstab_run(const krill_solve_problem *p, krill_solve_info *info)
{
    krill_status st = KRILL_OK;
    bicgstab_ws ws;
    krill_reason reason = KRILL_REASON_NONE;
    int it = 0;
    int started = 0;             /* iterations done at the last (re)start */
    int resnorm_current = 1;     /* resnorm is the true residual of the current x */
    double resnorm = 0.0;

    memset(&ws, 0, sizeof ws);
    KRILL_TRY(krill_timer_setup(p->timer));
    /* on a communicator: every rank has its workspace, or every rank fails */
    KRILL_TRY(krill_ctx_agree(p->ctx, bicgstab_ws_create(p, &ws)));
    KRILL_TRY(krill_initial_residual(p, column(p, &ws, COL_R), ws.dev + S_NORM, &resnorm,
                                     info));
    reason = krill_converged_reason(p, resnorm);
    if (reason == KRILL_REASON_NONE) KRILL_TRY(bicgstab_start(p, &ws, resnorm));
    KRILL_TRY(krill_timer_loop(p->timer, KRILL_PHASE_OTHER));

    while (reason == KRILL_REASON_NONE && it < p->opts.maxit) {
        double estimate;
        step_end end;
        int stop_requested = 0;
        KRILL_TRY(bicgstab_step(p, &ws, &estimate, &end));
        it++;
        resnorm_current = 0;
        info->history[it] = estimate;
        if (p->opts.monitor)
            stop_requested = p->opts.monitor(it, estimate, p->opts.monitor_data);
        if (end == STEP_NAN) {
            reason = KRILL_DIVERGED_NAN;
        } else if (end == STEP_BREAKDOWN && it == started + 1) {
            reason = KRILL_DIVERGED_BREAKDOWN;   /* the true residual below may overrule */
        } else if (end != STEP_FULL) {
            /* the recurrence says converged, or a breakdown after progress: the true
             * residual decides, and the iteration restarts from it */
            KRILL_TRY(bicgstab_true_residual(p, &ws, &resnorm));
            resnorm_current = 1;
            reason = krill_converged_reason(p, resnorm);
            if (reason == KRILL_REASON_NONE && !krill_is_finite(resnorm)) {
                reason = KRILL_DIVERGED_NAN;
            } else if (reason == KRILL_REASON_NONE) {
                KRILL_TRY(bicgstab_start(p, &ws, resnorm));
                started = it;
            }
        }
        if (reason == KRILL_REASON_NONE && stop_requested) reason = KRILL_DIVERGED_MAXIT;
    }

    if (!resnorm_current) KRILL_TRY(bicgstab_true_residual(p, &ws, &resnorm));
    KRILL_TRY(krill_solve_finish(p, reason, it, resnorm, info));
cleanup:
    bicgstab_ws_destroy(p->ctx, &ws);
    return st;
}
