/* solver/minres.c - MINRES, preconditioned, for symmetric (indefinite) A and a definite M.
 *
 * Reference: C. C. Paige and M. A. Saunders, "Solution of sparse indefinite systems of
 * linear equations", SIAM J. Numer. Anal. 12 (1975) 617-629; the preconditioned recurrences
 * as in their SYMMLQ/MINRES codes (and SciPy's scipy.sparse.linalg.minres, which follows
 * them), without the optional shift. x_k minimizes ||b - A x||_{M^{-1}} over x0 + K_k(M^{-1}A,
 * M^{-1} r0): the Lanczos process on M^{-1}A in the M-inner product, a QR factorization of
 * its tridiagonal matrix by Givens rotations, and the directions w that update x.
 *
 *   r1 = r2 = b - A x, z = M^{-1} r2, beta = sqrt(r2'z), phibar = beta, cs = -1, sn = 0,
 *   oldb = dbar = epsln = 0, w_{-1} = w_0 = 0
 *   for k = 1, 2, ...:
 *     v = z / beta                              Lanczos: v_k, with M v_k = r2 / beta
 *     y = A v - (beta / oldb) r1 (k > 1)        (one pass with alfa = v'y)
 *     y -= (alfa / beta) r2;  r1 = r2, r2 = y   (pointers rotate; no copy)
 *     z = M^{-1} r2;  oldb = beta, beta = sqrt(r2'z)
 *     oldeps = epsln;  delta = cs dbar + sn alfa;  gbar = sn dbar - cs alfa
 *     epsln = sn beta;  dbar = -cs beta         the previous rotation on the new column
 *     gamma = hypot(gbar, beta);  cs = gbar / gamma, sn = beta / gamma   the new rotation
 *     phi = cs phibar, phibar = sn phibar
 *     w_k = (v - oldeps w_{k-2} - delta w_{k-1}) / gamma;  x += phi w_k
 * phibar is ||b - A x_k||_{M^{-1}}, exact in exact arithmetic; without M the 2-norm itself.
 *
 * Stopping. The history, the monitor and the stop test see phibar times a calibration c,
 * c = ||r0||_2 / phibar_0 at the start (1 without M): the 2-norm estimate an M^{-1}-norm
 * decrease implies. When it meets tol = max(rtol ||b||, atol) the true residual b - A x
 * decides; if that misses tol, the iteration goes on (MINRES needs no restart: its
 * recurrences never read r) with c = ||r||_2 / phibar recalibrated there. beta = 0 is an
 * invariant Krylov space: x_k is then the minimizer over all of it, phibar = 0, and a true
 * residual that still misses tol is a breakdown (b not in the range of a singular A, or an
 * M that is not definite). gamma = 0 (beta = gbar = 0, A singular on the space) is a
 * breakdown before x moves.
 *
 * Definite M. r'z must keep the sign of the first r'z: a sign change (or a zero first r'z)
 * is the reason INDEFINITE, the preconditioner is not definite; a later r'z = 0 is beta = 0,
 * the invariant case above. A negative definite M (e.g. Jacobi on a matrix whose diagonal
 * is negative) is used as -M: z and r'z are negated where they are read (v = sign z / beta,
 * beta^2 = sign r2'z), which costs nothing.
 *
 * Memory traffic per iteration (passes over vectors of n doubles besides the SpMV, which
 * reads v and writes y):
 *   v = z / beta (z read, v written)                                              2
 *   y -= (beta/oldb) r1 with alfa = v'y (y, r1, v read, y written; k = 1: v'y: 2)  4
 *   y -= (alfa/beta) r2 (y, r2 read, y written; without M with r2'r2 = beta^2)    3
 *   w_{k-2} = [v w_{k-1}] (1/gamma, -delta/gamma) - (oldeps/gamma) w_{k-2}: the three
 *     directions sit side by side in one block, so this is one pass (v, w_{k-1},
 *     w_{k-2} read, w_{k-2} written: krill_fused_gemv_n)                           4
 *   x += phi w_k (x, w read, x written)                                           3
 *                                                                               = 16
 * plus, with M: z = M^{-1} r2 (its own; Jacobi 3: r2, dinv read, z written) and r2'z (2):
 * 21 for Jacobi. Workspace: r1, r2, y, [w_a | v | w_b] (6 vectors; z as a 7th with M).
 * The host reads two scalars per iteration (alfa, then r2'z): two synchronizations on the
 * GPU, which runs the same code on the same device-agnostic operations (BLAS-1, the fused
 * passes, the format's SpMV and the preconditioner's apply): no kernel of its own.
 *
 * Reproducible mode (krill_ctx_set_repro): the same code; alfa, r2'z (or r2'r2) and the
 * true residual's norm are Ozaki sums, the SpMV rows are correctly rounded, and the updates
 * round operation by operation on both devices (solver_impl.h), so every scalar the host
 * computes from them, and every bit of x, is independent of the thread count. A fused
 * update-and-dot splits into the update and an Ozaki dot (a statistics and a products pass,
 * 4 reads): 2 + 7 + 7 + 4 + 3 = 23 passes without M (plain 16), 26 with Jacobi (plain 21). */
#include <math.h>
#include <string.h>

#include "formats/formats_impl.h"
#include "precond/precond_impl.h"
#include "solver/solver_impl.h"

/* Scalars in context memory (and their host copies, same index). */
enum {
    S_LANCZOS1 = 0,          /* written: beta / oldb, the coefficient of r1 */
    S_ALFA = 1,              /* read: alfa = v'y */
    S_LANCZOS2 = 2,          /* written: alfa / beta, the coefficient of r2 */
    S_RZ = 3,                /* read: r2'z (r2'r2 without M) */
    S_WCOEF = 4,             /* written, 2: the coefficients of the two adjacent columns
                                that make the new w (krill_fused_gemv_n) */
    S_NORM = 6,              /* the true residual's norm */
    S_COUNT = 7
};

typedef enum step_end {
    STEP_FULL,               /* x moved; the estimate misses tol */
    STEP_SMALL,              /* the estimate meets tol */
    STEP_INVARIANT,          /* beta = 0: x is the minimizer over the whole Krylov space */
    STEP_BREAKDOWN,          /* gamma = 0: x unchanged */
    STEP_INDEFINITE,         /* r2'z zero or of the other sign: M is not definite */
    STEP_NAN                 /* NaN or Inf in a scalar; x unchanged */
} step_end;

typedef struct minres_ws {
    double *buf[3];          /* context memory, n each: r1, r2, y, by the indices below */
    int i_r1, i_r2, i_y;     /* a permutation of 0, 1, 2 that rotates every iteration */
    double *block;           /* context memory, 3n: [w_a | v | w_b] */
    int w_old_is_a;          /* w_{k-1} is w_a (then [w_a v] is the pair), else w_b */
    double *z;               /* context memory, n: M^{-1} r2; NULL without M (z = r2) */
    double *dev;             /* context memory, S_COUNT */
    double host[S_COUNT];
    double msign;            /* +1, or -1 for a negative definite M (used as -M) */
    double beta, oldb, dbar, epsln, phibar, cs, sn;   /* the recurrences (top of file) */
    double calib;            /* the 2-norm estimate is calib * phibar */
    krill_reduce_ws red;
} minres_ws;

static void minres_ws_destroy(krill_ctx *ctx, minres_ws *ws)
{
    for (int i = 0; i < 3; i++) krill_ws_free(ctx, ws->buf[i]);
    krill_ws_free(ctx, ws->block);
    krill_ws_free(ctx, ws->z);
    krill_ws_free(ctx, ws->dev);
    krill_reduce_ws_destroy(ctx, &ws->red);
    memset(ws, 0, sizeof *ws);
}

static krill_status minres_ws_create(const krill_solve_problem *p, minres_ws *ws)
{
    krill_status st = KRILL_OK;
    krill_ctx *ctx = p->ctx;
    memset(ws, 0, sizeof *ws);
    for (int i = 0; i < 3; i++) KRILL_WS_ALLOC(ctx, ws->buf[i], p->n);
    KRILL_WS_ALLOC(ctx, ws->block, (size_t)p->n * 3);
    if (!krill_pc_is_identity(p->pc)) KRILL_WS_ALLOC(ctx, ws->z, p->n);
    KRILL_WS_ALLOC(ctx, ws->dev, S_COUNT);
    KRILL_TRY(krill_reduce_ws_create(ctx, 1, &ws->red));
    ws->i_r1 = 0;
    ws->i_r2 = 1;
    ws->i_y = 2;
cleanup:
    if (st != KRILL_OK) minres_ws_destroy(ctx, ws);
    return st;
}

static double *col(const krill_solve_problem *p, const minres_ws *ws, int c)
{
    return ws->block + (size_t)c * (size_t)p->n;
}

/* beta of the new r2. With M: z = M^{-1} r2 and beta = sqrt(msign r2'z), where the first
 * call (msign == 0) sets msign to the sign of r2'z. Without M: beta = ||r2|| from r2'r2,
 * which the caller left in dev[S_RZ]. *end: STEP_FULL, STEP_INVARIANT (beta = 0),
 * STEP_INDEFINITE (r2'z of the other sign than msign) or STEP_NAN. */
static krill_status lanczos_norm(const krill_solve_problem *p, minres_ws *ws, double *beta,
                                 step_end *end)
{
    krill_status st = KRILL_OK;
    krill_ctx *ctx = p->ctx;
    double *r2 = ws->buf[ws->i_r2], rz;
    *end = STEP_NAN;
    if (ws->z) {
        KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_PRECOND));
        KRILL_TRY(krill_pc_apply_raw(p->pc, r2, ws->z));
        KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_ORTHO));
        KRILL_TRY(krill_blas_dot(ctx, p->n, r2, ws->z, ws->dev + S_RZ));
    }
    KRILL_TRY(krill_scalars_read(ctx, ws->dev + S_RZ, ws->host + S_RZ, 1));
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_OTHER));
    KRILL_TRY(krill_timer_poll(p->timer));
    rz = ws->host[S_RZ];
    if (!ws->z) {            /* r2'r2 may over- or underflow (A ~ 1e160): a scaled norm */
        KRILL_TRY(krill_norm_from_ss(p, r2, rz, ws->dev + S_RZ, beta));
        ws->msign = 1.0;
        if (krill_is_finite(*beta)) *end = *beta > 0.0 ? STEP_FULL : STEP_INVARIANT;
        goto cleanup;
    }
    if (!krill_is_finite(rz)) goto cleanup;
    if (ws->msign == 0.0 && rz != 0.0) ws->msign = rz > 0.0 ? 1.0 : -1.0;
    if (rz == 0.0) {
        *beta = 0.0;
        *end = STEP_INVARIANT;
    } else if ((rz > 0.0) != (ws->msign > 0.0)) {
        *end = STEP_INDEFINITE;
    } else {
        *beta = sqrt(fabs(rz));
        *end = krill_is_finite(*beta) && *beta > 0.0 ? STEP_FULL : STEP_NAN;
    }
cleanup:
    return st;
}

/* Start from r0 = b - A x in buf[i_r2] (||r0|| = rnorm > 0): z, beta1, the recurrences, w = 0. */
static krill_status minres_start(const krill_solve_problem *p, minres_ws *ws, double rnorm,
                                 step_end *end)
{
    krill_status st = KRILL_OK;
    if (!ws->z) KRILL_TRY(krill_blas_dot(p->ctx, p->n, ws->buf[ws->i_r2], ws->buf[ws->i_r2],
                                         ws->dev + S_RZ));
    KRILL_TRY(lanczos_norm(p, ws, &ws->beta, end));
    if (*end == STEP_INVARIANT) *end = STEP_INDEFINITE;   /* r'M^{-1}r = 0 with r != 0 */
    ws->oldb = ws->dbar = ws->epsln = ws->sn = 0.0;
    ws->cs = -1.0;
    ws->phibar = ws->beta;
    ws->calib = ws->z ? rnorm / ws->beta : 1.0;
    KRILL_TRY(krill_blas_fill(p->ctx, p->n * 3, 0.0, ws->block));
    ws->w_old_is_a = 1;
cleanup:
    return st;
}

/* The rotation and the update of w and x after the Lanczos step (alfa, and the new beta).
 * Everything is checked on the host before x moves. */
static krill_status minres_update(const krill_solve_problem *p, minres_ws *ws, double alfa,
                                  step_end *end)
{
    krill_status st = KRILL_OK;
    krill_ctx *ctx = p->ctx;
    const double oldeps = ws->epsln;
    const double delta = ws->cs * ws->dbar + ws->sn * alfa;
    const double gbar = ws->sn * ws->dbar - ws->cs * alfa;
    const double epsln = ws->sn * ws->beta, dbar = -ws->cs * ws->beta;   /* old rotation */
    const double gamma = hypot(gbar, ws->beta);
    double cs, sn, phi, denom, *h = ws->host + S_WCOEF;
    if (gamma == 0.0) {
        *end = STEP_BREAKDOWN;
        goto cleanup;
    }
    cs = gbar / gamma;
    sn = ws->beta / gamma;
    phi = cs * ws->phibar;
    denom = 1.0 / gamma;
    if (!krill_is_finite(phi) || !krill_is_finite(denom * oldeps) ||
        !krill_is_finite(denom * delta)) {
        *end = STEP_NAN;
        goto cleanup;
    }
    ws->epsln = epsln;
    ws->dbar = dbar;
    ws->cs = cs;
    ws->sn = sn;
    ws->phibar = sn * ws->phibar;
    /* w_k over w_{k-2}: the pair [w_a v] when w_{k-1} = w_a, else [v w_b] */
    h[ws->w_old_is_a ? 0 : 1] = -delta * denom;
    h[ws->w_old_is_a ? 1 : 0] = denom;
    KRILL_TRY(krill_scalars_write(ctx, ws->dev + S_WCOEF, h, 2));
    KRILL_TRY(krill_fused_gemv_n(ctx, p->n, 2, 1.0, col(p, ws, ws->w_old_is_a ? 0 : 1), p->n,
                                 ws->dev + S_WCOEF, -oldeps * denom,
                                 col(p, ws, ws->w_old_is_a ? 2 : 0)));
    ws->w_old_is_a = !ws->w_old_is_a;    /* the new w_k is where w_{k-2} was */
    KRILL_TRY(krill_blas_axpy(ctx, p->n, phi, col(p, ws, ws->w_old_is_a ? 0 : 2), p->x));
cleanup:
    return st;
}

/* One iteration k (first: k == 1). *estimate: the 2-norm estimate after it. */
static krill_status minres_step(const krill_solve_problem *p, minres_ws *ws, int first,
                                double *estimate, step_end *end)
{
    krill_status st = KRILL_OK;
    krill_ctx *ctx = p->ctx;
    const int64_t n = p->n;
    double *v = col(p, ws, 1), *y = ws->buf[ws->i_y], *d = ws->dev, *h = ws->host;
    double alfa, beta_new = 0.0;
    int rotate;

    *estimate = NAN;
    /* v = z / beta, y = A v, y -= (beta/oldb) r1 with alfa = v'y */
    KRILL_TRY(krill_blas_axpby(ctx, n, ws->msign / ws->beta, ws->z ? ws->z : ws->buf[ws->i_r2],
                               0.0, v));
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_SPMV));
    KRILL_TRY(krill_mat_spmv_raw(p->a, 1.0, v, 0.0, y));
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_ORTHO));
    if (first) {
        KRILL_TRY(krill_blas_dot(ctx, n, v, y, d + S_ALFA));
    } else {
        h[S_LANCZOS1] = ws->beta / ws->oldb;
        KRILL_TRY(krill_scalars_write(ctx, d + S_LANCZOS1, h + S_LANCZOS1, 1));
        KRILL_TRY(krill_fused_axpy_dot(ctx, &ws->red, n, d + S_LANCZOS1, ws->buf[ws->i_r1], y,
                                       v, d + S_ALFA));
    }
    KRILL_TRY(krill_scalars_read(ctx, d + S_ALFA, h + S_ALFA, 1));
    alfa = h[S_ALFA];
    *end = STEP_NAN;
    if (!krill_is_finite(alfa)) goto cleanup;

    /* y -= (alfa/beta) r2 (without M with y'y); r1 = r2, r2 = y; z, the new beta */
    h[S_LANCZOS2] = alfa / ws->beta;
    if (ws->z) {
        KRILL_TRY(krill_blas_axpy(ctx, n, -h[S_LANCZOS2], ws->buf[ws->i_r2], y));
    } else {
        KRILL_TRY(krill_scalars_write(ctx, d + S_LANCZOS2, h + S_LANCZOS2, 1));
        KRILL_TRY(krill_fused_axpy_dot(ctx, &ws->red, n, d + S_LANCZOS2, ws->buf[ws->i_r2], y,
                                       NULL, d + S_RZ));
    }
    rotate = ws->i_r1;
    ws->i_r1 = ws->i_r2;
    ws->i_r2 = ws->i_y;
    ws->i_y = rotate;
    KRILL_TRY(lanczos_norm(p, ws, &beta_new, end));
    if (*end != STEP_FULL && *end != STEP_INVARIANT) goto cleanup;
    ws->oldb = ws->beta;
    ws->beta = beta_new;

    KRILL_TRY(minres_update(p, ws, alfa, end));
    if (*end == STEP_BREAKDOWN || *end == STEP_NAN) goto cleanup;
    *estimate = ws->calib * ws->phibar;
    if (*end == STEP_FULL && *estimate <= p->tol) *end = STEP_SMALL;
cleanup:
    return st;
}

/* The true residual (into v's column, free between iterations); its norm. */
static krill_status minres_true_residual(const krill_solve_problem *p, minres_ws *ws,
                                         double *norm)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_SPMV));
    KRILL_TRY(krill_true_residual(p, col(p, ws, 1), ws->dev + S_NORM, norm));
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_OTHER));
cleanup:
    return st;
}

/* The reason a step ends the solve with, from its end and (STEP_SMALL, STEP_INVARIANT) the
 * true residual, which it computes; KRILL_REASON_NONE to go on (then recalibrated). */
static krill_status minres_judge(const krill_solve_problem *p, minres_ws *ws, step_end end,
                                 double *resnorm, int *resnorm_current, krill_reason *reason)
{
    krill_status st = KRILL_OK;
    *reason = KRILL_REASON_NONE;
    if (end == STEP_NAN) *reason = KRILL_DIVERGED_NAN;
    else if (end == STEP_INDEFINITE) *reason = KRILL_DIVERGED_INDEFINITE;
    else if (end == STEP_BREAKDOWN) *reason = KRILL_DIVERGED_BREAKDOWN;
    if (end != STEP_SMALL && end != STEP_INVARIANT) goto cleanup;
    KRILL_TRY(minres_true_residual(p, ws, resnorm));
    *resnorm_current = 1;
    *reason = krill_converged_reason(p, *resnorm);
    if (*reason != KRILL_REASON_NONE) goto cleanup;
    if (!krill_is_finite(*resnorm)) *reason = KRILL_DIVERGED_NAN;
    else if (end == STEP_INVARIANT) *reason = KRILL_DIVERGED_BREAKDOWN;
    else ws->calib = *resnorm / ws->phibar;       /* phibar > 0: not invariant */
cleanup:
    return st;
}

krill_status krill_minres_run(const krill_solve_problem *p, krill_solve_info *info)
{
    krill_status st = KRILL_OK;
    minres_ws ws;
    krill_reason reason = KRILL_REASON_NONE;
    step_end end = STEP_FULL;
    int it = 0;
    int resnorm_current = 1;     /* resnorm is the true residual of the current x */
    double resnorm = 0.0;

    memset(&ws, 0, sizeof ws);
    KRILL_TRY(krill_timer_setup(p->timer));
    /* on a communicator: every rank has its workspace, or every rank fails */
    KRILL_TRY(krill_ctx_agree(p->ctx, minres_ws_create(p, &ws)));
    KRILL_TRY(krill_initial_residual(p, ws.buf[ws.i_r2], ws.dev + S_NORM, &resnorm, info));
    reason = krill_converged_reason(p, resnorm);
    /* the start's M^{-1} r0 and r0'M^{-1}r0 are timed in their phases, not as setup */
    KRILL_TRY(krill_timer_loop(p->timer, KRILL_PHASE_OTHER));
    if (reason == KRILL_REASON_NONE) {
        KRILL_TRY(minres_start(p, &ws, resnorm, &end));
        KRILL_TRY(minres_judge(p, &ws, end, &resnorm, &resnorm_current, &reason));
    }

    while (reason == KRILL_REASON_NONE && it < p->opts.maxit) {
        double estimate;
        int stop_requested = 0;
        KRILL_TRY(minres_step(p, &ws, it == 0, &estimate, &end));
        it++;
        resnorm_current = 0;
        /* a step that stopped before x moved reports the previous estimate */
        if (end == STEP_BREAKDOWN || end == STEP_INDEFINITE) estimate = info->history[it - 1];
        info->history[it] = estimate;
        if (p->opts.monitor)
            stop_requested = p->opts.monitor(it, estimate, p->opts.monitor_data);
        KRILL_TRY(minres_judge(p, &ws, end, &resnorm, &resnorm_current, &reason));
        if (reason == KRILL_REASON_NONE && stop_requested) reason = KRILL_DIVERGED_MAXIT;
    }

    if (!resnorm_current) KRILL_TRY(minres_true_residual(p, &ws, &resnorm));
    KRILL_TRY(krill_solve_finish(p, reason, it, resnorm, info));
cleanup:
    minres_ws_destroy(p->ctx, &ws);
    return st;
}
