/* solver/cg.c - conjugate gradients, preconditioned (PCG), for symmetric definite A and M:
 * each positive or negative definite (CG on -A x = -b makes the iterates of A x = b).
 *
 * Reference: M. R. Hestenes and E. Stiefel, J. Res. Nat. Bur. Standards 49 (1952); PCG as in
 * Y. Saad, Iterative Methods for Sparse Linear Systems, 2nd ed., SIAM 2003, Algorithm 9.1.
 *
 *   r = b - A x, z = M^{-1} r, p = z, rz = r'z
 *   for k = 1, 2, ...:
 *     q = A p, pAp = p'q                       (one pass: krill_mat_spmv_dot_raw)
 *     alpha = rz / pAp                         (pAp = 0 or a sign change: indefinite)
 *     r -= alpha q, rr = r'r                   } residual kernel
 *     z = M^{-1} r, rz_new = r'z               } (a diagonal M is fused in; rz_new = 0 or of
 *     beta = rz_new / rz, rz = rz_new          }  another sign than rz: indefinite)
 *     x += alpha p, p = z + beta p             direction kernel
 *     stop when sqrt(rr) <= tol = max(rtol ||b||, atol), confirmed by the true residual
 *     b - A x; if that one misses the tolerance, CG restarts from it (r, z, p anew).
 * x is updated in the direction kernel, which reads p anyway: one pass less than updating
 * it beside r.
 *
 * Definiteness (the test of PETSc's KSPCG): the solve stops as indefinite when p'Ap is zero
 * or its sign differs from the previous step's, or when r'z is zero or its sign differs from
 * the previous r'z (across restarts too). A negative definite A (a sign convention of many
 * FEM codes) or M is thus accepted: CG on -A x = -b takes the same steps, with p'Ap (and,
 * for an M derived from -A, r'z) negated, and the same number of iterations.
 *
 * The scalars never leave the device: alpha, beta and the stop test are computed by the
 * kernels from values in context memory (solver_impl.h, krill_cg_state). The host reads
 * one small struct per iteration (r'r for the history and the monitor, the stop code), and
 * on the GPU it reads it *asynchronously*: it queues iteration k+1 before it waits for the
 * copy of iteration k's state (cudaMemcpyAsync into the context's pinned buffer, an event),
 * so the GPU never idles while the host turns around. When iteration k stopped the
 * iteration, the queued k+1 finds the stop code and does nothing (its SpMV runs, idle).
 * With a monitor the host does not run ahead, so that a stop request takes effect at once.
 *
 * Memory traffic per iteration (passes over vectors of n doubles besides the SpMV, which
 * reads p and writes q and computes p'q on the fly; a format without a fused spmv_dot adds
 * a dot: 2 reads):
 *   no preconditioner:  residual (r, q read, r written: 3) + direction (x, p, r read,
 *                       x, p written: 5)                                        = 8
 *   Jacobi:             dinv read in both kernels                              = 10
 *   other M:            8 + M^{-1} r (its own) + r'z (2)                       = 10 + M
 * plus one read of a 80-byte state struct. The GPU launches 3 kernels per iteration (the
 * SpMV, the residual and direction kernels; other M: 2 more and the dot).
 *
 * Reproducible mode (krill_ctx_set_repro; solver_impl.h): the same iteration and the same
 * state machine, with every sum from ozaki/ (each a statistics pass and a products pass):
 * the SpMV's rows correctly rounded and p'q an Ozaki dot (4 reads) instead of the fused
 * one; the residual kernel only updates (3 passes; Jacobi: 5, z = dinv .* r written over
 * q), r'r (4 reads) and Jacobi's r'z (4) are Ozaki dots into the state, and a one-thread
 * kernel runs the state step (krill_cg_finish_repro); the direction kernel is unchanged but
 * rounds every operation on its own. Per iteration besides the SpMV: no preconditioner
 * 3 + 4 + 5 + 4 = 16 (plain 8), Jacobi 5 + 8 + 6 + 4 = 23 (plain 10), other M 16 + M + 4.
 * Still no host round trip: the host reads the state as in plain mode.
 *
 * Workspace, allocated once: r, p, q (and z for a general M), the state struct in
 * context memory, the CPU reduction partials, the async-read events. */
#include <math.h>
#include <string.h>

#include "formats/formats_impl.h"
#include "precond/precond_impl.h"
#include "solver/solver_impl.h"

typedef struct cg_ws {
    double *r, *p, *q;       /* context memory, n each */
    double *z;               /* context memory, n: M^{-1} r (GENERAL only) */
    double *norm;            /* context memory, 1: the true residual's norm */
    krill_cg_state *s;       /* context memory: the state the kernels read and write */
    krill_cg_state host;     /* host copy */
    const double *dinv;      /* DIAGONAL: the inverse diagonal (the preconditioner's) */
    int pc_mode;             /* KRILL_CG_PC_* */
    krill_reduce_ws red;
    krill_async_read reader;
} cg_ws;

static void cg_ws_destroy(krill_ctx *ctx, cg_ws *ws)
{
    krill_ws_free(ctx, ws->r);
    krill_ws_free(ctx, ws->p);
    krill_ws_free(ctx, ws->q);
    krill_ws_free(ctx, ws->z);
    krill_ws_free(ctx, ws->norm);
    krill_ws_free(ctx, ws->s);
    krill_reduce_ws_destroy(ctx, &ws->red);
    krill_async_read_destroy(&ws->reader);
    memset(ws, 0, sizeof *ws);
}

static krill_status cg_ws_create(const krill_solve_problem *p, cg_ws *ws)
{
    krill_status st = KRILL_OK;
    krill_ctx *ctx = p->ctx;
    memset(ws, 0, sizeof *ws);
    if (krill_pc_is_identity(p->pc)) {
        ws->pc_mode = KRILL_CG_PC_NONE;
    } else if ((ws->dinv = krill_pc_inverse_diagonal(p->pc)) != NULL) {
        ws->pc_mode = KRILL_CG_PC_DIAGONAL;
    } else {
        ws->pc_mode = KRILL_CG_PC_GENERAL;
    }
    KRILL_WS_ALLOC(ctx, ws->r, p->n);
    KRILL_WS_ALLOC(ctx, ws->p, p->n);
    KRILL_WS_ALLOC(ctx, ws->q, p->n);
    if (ws->pc_mode == KRILL_CG_PC_GENERAL) KRILL_WS_ALLOC(ctx, ws->z, p->n);
    KRILL_WS_ALLOC(ctx, ws->norm, 1);
    KRILL_WS_ALLOC(ctx, ws->s, 1);
    KRILL_TRY(krill_reduce_ws_create(ctx, 2, &ws->red));
    KRILL_TRY(krill_async_read_create(ctx, sizeof(krill_cg_state), &ws->reader));
cleanup:
    if (st != KRILL_OK) cg_ws_destroy(ctx, ws);
    return st;
}

/* (Re)start from r = b - A x, already in ws->r: p = z = M^{-1} r, rr, rz, and the state
 * (stop = RUNNING) in context memory; ws->host receives it. `prev`: the state before a
 * restart, whose iteration count and sign of p'Ap carry over; NULL at the start. */
static krill_status cg_start(const krill_solve_problem *p, cg_ws *ws, const krill_cg_state *prev)
{
    krill_status st = KRILL_OK;
    krill_ctx *ctx = p->ctx;
    const int64_t n = p->n;
    krill_cg_state *s = ws->s;
    memset(&ws->host, 0, sizeof ws->host);
    ws->host.tol2 = p->tol * p->tol;
    ws->host.stop = KRILL_CG_RUNNING;
    ws->host.applied = prev ? prev->applied : 0;
    ws->host.pap_sign = prev ? prev->pap_sign : 0.0;
    KRILL_TRY(krill_mem_upload(ctx, s, &ws->host, sizeof ws->host));
    KRILL_TRY(krill_blas_dot(ctx, n, ws->r, ws->r, &s->rr));
    switch (ws->pc_mode) {
    case KRILL_CG_PC_NONE:
        KRILL_TRY(krill_blas_copy(ctx, n, ws->r, ws->p));
        KRILL_TRY(krill_blas_copy(ctx, 1, &s->rr, &s->rz));
        break;
    case KRILL_CG_PC_DIAGONAL:
        KRILL_TRY(krill_blas_xmy(ctx, n, ws->r, ws->dinv, ws->p));
        KRILL_TRY(krill_blas_dot(ctx, n, ws->r, ws->p, &s->rz));
        break;
    default:
        KRILL_TRY(krill_pc_apply_raw(p->pc, ws->r, ws->z));
        KRILL_TRY(krill_blas_copy(ctx, n, ws->z, ws->p));
        KRILL_TRY(krill_blas_dot(ctx, n, ws->r, ws->z, &s->rz));
        break;
    }
    KRILL_TRY(krill_mem_download(ctx, &ws->host, s, sizeof ws->host));
cleanup:
    return st;
}

/* Queue iteration k (its kernels and the asynchronous read of the state after it). */
static krill_status cg_queue(const krill_solve_problem *p, cg_ws *ws, int k)
{
    krill_status st = KRILL_OK;
    krill_ctx *ctx = p->ctx;
    const int64_t n = p->n;
    krill_cg_state *s = ws->s;
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_SPMV));
    KRILL_TRY(krill_mat_spmv_dot_raw(p->a, ws->p, ws->q, &s->pap));
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_ORTHO));
    KRILL_TRY(krill_fused_cg_residual(ctx, &ws->red, n, k, ws->pc_mode, s, ws->q, ws->r,
                                      ws->dinv));
    if (ws->pc_mode == KRILL_CG_PC_GENERAL) {
        KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_PRECOND));
        KRILL_TRY(krill_pc_apply_raw(p->pc, ws->r, ws->z));
        KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_ORTHO));
        KRILL_TRY(krill_blas_dot(ctx, n, ws->r, ws->z, &s->rz_next));
        KRILL_TRY(krill_fused_cg_scalars(ctx, k, s));
    }
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_OTHER));
    KRILL_TRY(krill_fused_cg_direction(ctx, n, k, s,
                                       ws->pc_mode == KRILL_CG_PC_GENERAL ? ws->z : ws->r,
                                       ws->dinv, p->x, ws->p));
    KRILL_TRY(krill_async_read_start(&ws->reader, k & 1, s));
cleanup:
    return st;
}

/* After a (re)start with r'z = rz: KRILL_REASON_NONE, or why CG cannot go on (the sign test
 * of krill_cg_sign_kept against the r'z before a restart, rz_prev; 0 at the start). */
static krill_reason cg_start_reason(double rz, double rz_prev)
{
    if (!krill_is_finite(rz)) return KRILL_DIVERGED_NAN;
    return krill_cg_sign_kept(rz, rz_prev) ? KRILL_REASON_NONE : KRILL_DIVERGED_INDEFINITE;
}

/* The true residual into ws->r; its norm. */
static krill_status cg_true_residual(const krill_solve_problem *p, cg_ws *ws, double *norm)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_SPMV));
    KRILL_TRY(krill_true_residual(p, ws->r, ws->norm, norm));
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_OTHER));
cleanup:
    return st;
}

krill_status krill_cg_run(const krill_solve_problem *p, krill_solve_info *info)
{
    krill_status st = KRILL_OK;
    cg_ws ws;
    krill_reason reason = KRILL_REASON_NONE;
    const int maxit = p->opts.maxit;
    /* iterations queued ahead of the one the host waits for (GPU without a monitor) */
    const int ahead = krill_on_gpu(p->ctx) && p->opts.monitor == NULL ? 1 : 0;
    int queued = 0, seen = 0;
    int resnorm_current = 0;     /* resnorm is the true residual of the current x */
    double resnorm = 0.0;

    memset(&ws, 0, sizeof ws);
    KRILL_TRY(krill_timer_setup(p->timer));
    /* on a communicator: every rank has its workspace, or every rank fails */
    KRILL_TRY(krill_ctx_agree(p->ctx, cg_ws_create(p, &ws)));
    KRILL_TRY(krill_initial_residual(p, ws.r, ws.norm, &resnorm, info));
    reason = krill_converged_reason(p, resnorm);
    if (reason == KRILL_REASON_NONE) KRILL_TRY(cg_start(p, &ws, NULL));
    /* r != 0 but r'z = 0 at the start: M is singular (or not definite) */
    if (reason == KRILL_REASON_NONE) reason = cg_start_reason(ws.host.rz, 0.0);
    KRILL_TRY(krill_timer_loop(p->timer, KRILL_PHASE_OTHER));

    while (reason == KRILL_REASON_NONE && seen < maxit) {
        krill_cg_state snap;
        int stop_requested = 0;
        while (queued < maxit && queued <= seen + ahead) KRILL_TRY(cg_queue(p, &ws, ++queued));
        KRILL_TRY(krill_async_read_wait(&ws.reader, (seen + 1) & 1, &snap));
        KRILL_TRY(krill_timer_poll(p->timer));
        seen++;
        info->history[seen] = sqrt(snap.rr);
        if (p->opts.monitor)
            stop_requested = p->opts.monitor(seen, info->history[seen], p->opts.monitor_data);
        if (snap.stop == KRILL_CG_NAN) {
            reason = KRILL_DIVERGED_NAN;
        } else if (snap.stop == KRILL_CG_INDEFINITE) {
            reason = KRILL_DIVERGED_INDEFINITE;
        } else if (snap.stop == KRILL_CG_CONVERGED) {
            /* the recurrence says converged: the true residual decides */
            KRILL_TRY(cg_true_residual(p, &ws, &resnorm));
            reason = krill_converged_reason(p, resnorm);
            if (reason == KRILL_REASON_NONE && !krill_is_finite(resnorm)) {
                reason = KRILL_DIVERGED_NAN;
            } else if (reason == KRILL_REASON_NONE) {
                KRILL_TRY(cg_start(p, &ws, &snap));  /* restart from the true residual */
                queued = seen;
                /* as at the start, and r'z keeps its sign */
                reason = cg_start_reason(ws.host.rz, snap.rz);
            }
            resnorm_current = reason != KRILL_REASON_NONE;   /* x has not moved since */
        }
        if (reason == KRILL_REASON_NONE && stop_requested) reason = KRILL_DIVERGED_MAXIT;
    }

    if (!resnorm_current) KRILL_TRY(cg_true_residual(p, &ws, &resnorm));
    KRILL_TRY(krill_solve_finish(p, reason, seen, resnorm, info));
cleanup:
    cg_ws_destroy(p->ctx, &ws);
    return st;
}
