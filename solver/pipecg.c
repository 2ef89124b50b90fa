/* solver/pipecg.c - pipelined conjugate gradients: PCG rearranged so that the iteration's one
 * global reduction is in flight while the preconditioner and the SpMV run (the nonblocking
 * allreduce on a communicator; PETSc's KSPPIPECG).
 *
 * Reference: P. Ghysels and W. Vanroose, "Hiding global synchronization latency in the
 * preconditioned Conjugate Gradient algorithm", Parallel Computing 40 (2014) 224-238,
 * Algorithm 3. With u = M^{-1} r, w = A u, and the recurrences for s = A p, q = M^{-1} s,
 * z = A q that let every vector be updated rather than recomputed:
 *
 *   r = b - A x, u = M^{-1} r, w = A u
 *   for i = 0, 1, ...:
 *     gamma = r'u, delta = w'u, rr = r'r        start the reduction of the three
 *     m = M^{-1} w, n = A m                     while it travels
 *     wait; stop when sqrt(rr) <= tol (the true residual decides, as in CG)
 *     beta = gamma / gamma_prev, pAp = delta - beta gamma / alpha_prev   (i > 0)
 *     beta = 0,                  pAp = delta                             (i = 0)
 *     alpha = gamma / pAp
 *     z = n + beta z, q = m + beta q, s = w + beta s, p = u + beta p
 *     x += alpha p, r -= alpha s, u -= alpha q, w -= alpha z   (and the next gamma, delta, rr)
 *
 * In exact arithmetic the iterates are PCG's; in floating point the recurrences drift from
 * the vectors they stand for (the paper's section 5 and Cools et al. 2018 on the attainable
 * accuracy), so the final residual is the true one, and a recurrence that claims convergence
 * while b - A x does not restarts from b - A x (as krill's CG). Definiteness as CG's (PETSc's
 * test): gamma = r'u and pAp nonzero and each keeping its sign; else INDEFINITE, but only on
 * the first step of a (re)start, where u = M^{-1} r and w = A u are computed afresh: later, u
 * and w are updated, and near the attainable accuracy r'u can lose its sign on an SPD system
 * (elasticity3d:6,3,3 with Jacobi at rtol 1e-14 did, after 66 steps), so a sign lost there
 * restarts from b - A x instead, and the fresh step decides.
 *
 * When it pays: one reduction per iteration like CG's two fused into one, but hidden behind
 * the preconditioner and the SpMV, for the price of more vector traffic. On a CPU context the
 * updates and the three sums are one pass (per thread partials added in thread order);
 * passes over vectors of n doubles besides the SpMV (reads m, writes n) and M:
 *   no preconditioner (u = r, m = w, q = s): n, z, w, s, r, p, x read, z, s, p, x, r, w
 *     written                                                                     = 13
 *   Jacobi: + m, q, u, dinv read, q, u, m written (m = dinv w in the same pass)   = 20
 *   other M: 18 + M^{-1} w
 * against CG's 8, 10 and 10 + M: pipelined CG is for runs whose reductions cost more than
 * that (many ranks, or a noisy network where one late rank stalls every allreduce).
 *
 * On a GPU context in plain mode the same pass is one kernel (kernels/krylov.cu,
 * pipecg_update: the 13 / 20 / 18 passes above and one grid sum of the three sums); the
 * sums come back to the host (a wait for the stream: alpha and beta are needed there), and
 * on GPU ranks their allreduce is in flight behind M^{-1} w and A m as on the CPU. In
 * reproducible mode, on either device, the iteration runs on the context's BLAS-1
 * operations (axpby, axpy, xmy, dot: 6 update passes without M, 9 with Jacobi, 8 with
 * another M, and 3 Ozaki dots, each its own kernel or loop) with blocking reductions: the
 * Ozaki sums are several collectives of their own. Those operations round every product and
 * sum alone on both devices, so the reproducible iterates are the same bits on any thread
 * count, rank count and device.
 *
 * Scaling. The iteration forms A M^{-1} A M^{-1} r where CG forms A p: with ||M^{-1} A|| far
 * from 1 (diag(1e160) without a preconditioner) n = A m overflows although CG runs. The
 * first start measures ||M^{-1} A u|| / ||u|| and, outside [2^-64, 2^64], runs on (c A) x' = b
 * with c a power of two and x' = x / c (choose_scale): exact, and nothing changes inside.
 *
 * Workspace: r, w, n, z, s, p, and u, m, q with a preconditioner (6 or 9 vectors), the
 * per-thread partials, 5 doubles of context memory for the sums and norms. */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "formats/formats_impl.h"
#include "precond/precond_impl.h"
#include "solver/solver_impl.h"

/* the preconditioner's kind: KRILL_CG_PC_NONE, _DIAGONAL, _GENERAL (solver_impl.h) */
enum { PC_NONE = KRILL_CG_PC_NONE, PC_DIAGONAL = KRILL_CG_PC_DIAGONAL, PC_GENERAL = KRILL_CG_PC_GENERAL };
/* the sums of one step; the nonblocking reduction carries one more value, SUM_FAILED: 1 on a
 * rank whose last update failed (see pipecg_overlap) */
enum { SUM_GAMMA, SUM_DELTA, SUM_RR, SUM_COUNT, SUM_FAILED = SUM_COUNT, SUM_SLOTS };
/* Operator scaling: used when ||M^{-1} A u|| / ||u|| is outside [2^-BAND, 2^BAND] and
 * within [2^-MAX, 2^MAX] (c and 1 / c normal numbers), and x / c stays in range. */
#define ASCALE_BAND 64
#define ASCALE_MAX 1000
/* A sign lost after the first step is taken for drift below sqrt(eps) ||b|| only. */
#define DRIFT_FLOOR 1.4901161193847656e-08

typedef struct pipecg_ws {
    double *r, *w, *n, *z, *s, *p;   /* context memory, n each */
    double *u, *m, *q;               /* with M: own vectors; without: r, w, s */
    double *sums_dev;                /* context memory, SUM_COUNT + 2 (norms' scratch) */
    double sums[SUM_SLOTS];          /* host: gamma, delta, rr of the current r; the flag */
    const double *dinv;              /* PC_DIAGONAL: the inverse diagonal */
    int pc_mode;
    double ascale;                   /* c: the iteration runs on c A and x / c (below) */
    int x_scaled;                    /* x holds x / c: scale it back at the end */
    int merged;                      /* CPU, plain mode: the one-pass update and sums */
    int fused_gpu;                   /* GPU, plain mode: the same pass as one kernel */
    krill_status failed;             /* GPU ranks: a local failure the next reduction flags */
    int sums_local;                  /* ws->sums are this rank's (merged_update's), not yet
                                        reduced over the ranks */
    int in_flight;                   /* a nonblocking reduction was started, not waited */
    krill_reduce_ws red;
} pipecg_ws;

static void pipecg_ws_destroy(krill_ctx *ctx, pipecg_ws *ws)
{
    double **own[] = {&ws->r, &ws->w, &ws->n, &ws->z, &ws->s, &ws->p};
    for (size_t k = 0; k < sizeof own / sizeof *own; k++) krill_ws_free(ctx, *own[k]);
    if (ws->pc_mode != PC_NONE) {
        krill_ws_free(ctx, ws->u);
        krill_ws_free(ctx, ws->m);
        krill_ws_free(ctx, ws->q);
    }
    krill_ws_free(ctx, ws->sums_dev);
    krill_reduce_ws_destroy(ctx, &ws->red);
    memset(ws, 0, sizeof *ws);
}

static krill_status pipecg_ws_create(const krill_solve_problem *p, pipecg_ws *ws)
{
    krill_status st = KRILL_OK;
    krill_ctx *ctx = p->ctx;
    memset(ws, 0, sizeof *ws);
    if (krill_pc_is_identity(p->pc)) ws->pc_mode = PC_NONE;
    else if ((ws->dinv = krill_pc_inverse_diagonal(p->pc)) != NULL) ws->pc_mode = PC_DIAGONAL;
    else ws->pc_mode = PC_GENERAL;
    ws->merged = !krill_on_gpu(ctx) && ctx->repro == KRILL_REPRO_OFF;
    ws->fused_gpu = krill_on_gpu(ctx) && ctx->repro == KRILL_REPRO_OFF;
    KRILL_WS_ALLOC(ctx, ws->r, p->n);
    KRILL_WS_ALLOC(ctx, ws->w, p->n);
    KRILL_WS_ALLOC(ctx, ws->n, p->n);
    KRILL_WS_ALLOC(ctx, ws->z, p->n);
    KRILL_WS_ALLOC(ctx, ws->s, p->n);
    KRILL_WS_ALLOC(ctx, ws->p, p->n);
    if (ws->pc_mode != PC_NONE) {
        KRILL_WS_ALLOC(ctx, ws->u, p->n);
        KRILL_WS_ALLOC(ctx, ws->m, p->n);
        KRILL_WS_ALLOC(ctx, ws->q, p->n);
    } else {
        ws->u = ws->r;
        ws->m = ws->w;
        ws->q = ws->s;
    }
    KRILL_WS_ALLOC(ctx, ws->sums_dev, SUM_COUNT + 2);
    ws->ascale = 1.0;
    if (ws->merged) KRILL_TRY(krill_reduce_ws_create(ctx, SUM_COUNT, &ws->red));
cleanup:
    if (st != KRILL_OK) pipecg_ws_destroy(ctx, ws);
    return st;
}

/* The three sums of the current r, u, w by the context's dots (blocking, reduced over the
 * ranks; Ozaki sums in reproducible mode), into ws->sums. */
static krill_status sums_by_dots(const krill_solve_problem *p, pipecg_ws *ws)
{
    krill_status st = KRILL_OK;
    krill_ctx *ctx = p->ctx;
    KRILL_TRY(krill_blas_dot(ctx, p->n, ws->r, ws->u, ws->sums_dev + SUM_GAMMA));
    KRILL_TRY(krill_blas_dot(ctx, p->n, ws->w, ws->u, ws->sums_dev + SUM_DELTA));
    KRILL_TRY(krill_blas_dot(ctx, p->n, ws->r, ws->r, ws->sums_dev + SUM_RR));
    KRILL_TRY(krill_scalars_read(ctx, ws->sums_dev, ws->sums, SUM_COUNT));
    ws->sums[SUM_FAILED] = 0.0;
cleanup:
    return st;
}

/* CPU, plain mode: the updates of the top of the file and the next sums in one pass. Each
 * thread takes a contiguous chunk (static schedule) and leaves its three partial sums; they
 * are added in thread order into ws->sums (this rank's; the caller reduces them). */
static void merged_update(const krill_solve_problem *p, pipecg_ws *ws, double alpha,
                          double beta)
{
    const int64_t n = p->n;
    const int mode = ws->pc_mode, stride = ws->red.stride;
    double *restrict x = p->x, *restrict r = ws->r, *restrict w = ws->w, *restrict z = ws->z;
    double *restrict s = ws->s, *restrict pv = ws->p, *restrict u = ws->u, *restrict m = ws->m;
    double *restrict q = ws->q, *restrict partial = ws->red.partial;
    const double *restrict nv = ws->n, *restrict dinv = ws->dinv;
    int team = 1;
#pragma omp parallel num_threads(ws->red.slots)
    {
        const int tid = omp_get_thread_num(), nt = omp_get_num_threads();
        const int64_t lo = n * tid / nt, hi = n * (tid + 1) / nt;
        double gamma = 0.0, delta = 0.0, rr = 0.0;
        if (mode == PC_NONE) {
            for (int64_t j = lo; j < hi; j++) {       /* u = r, m = w, q = s */
                const double zj = nv[j] + beta * z[j], sj = w[j] + beta * s[j];
                const double pj = r[j] + beta * pv[j];
                const double rj = r[j] - alpha * sj, wj = w[j] - alpha * zj;
                z[j] = zj;
                s[j] = sj;
                pv[j] = pj;
                x[j] += alpha * pj;
                r[j] = rj;
                w[j] = wj;
                gamma += rj * rj;
                delta += wj * rj;
            }
            rr = gamma;
        } else {
            for (int64_t j = lo; j < hi; j++) {
                const double zj = nv[j] + beta * z[j], qj = m[j] + beta * q[j];
                const double sj = w[j] + beta * s[j], pj = u[j] + beta * pv[j];
                const double rj = r[j] - alpha * sj, uj = u[j] - alpha * qj;
                const double wj = w[j] - alpha * zj;
                z[j] = zj;
                q[j] = qj;
                s[j] = sj;
                pv[j] = pj;
                x[j] += alpha * pj;
                r[j] = rj;
                u[j] = uj;
                w[j] = wj;
                if (mode == PC_DIAGONAL) m[j] = dinv[j] * wj;
                gamma += rj * uj;
                delta += wj * uj;
                rr += rj * rj;
            }
        }
        partial[tid * stride + SUM_GAMMA] = gamma;
        partial[tid * stride + SUM_DELTA] = delta;
        partial[tid * stride + SUM_RR] = rr;
        if (tid == 0) team = nt;
    }
    for (int k = 0; k < SUM_COUNT; k++) {
        double sum = 0.0;
        for (int t = 0; t < team; t++) sum += partial[t * stride + k];
        ws->sums[k] = sum;
    }
    ws->sums_local = 1;
}

/* Where a rank's local step failed: alone (no communicator, or one rank), the solve returns
 * the failure at once; among ranks it is kept in ws->failed and the rank goes on (with
 * whatever its vectors hold) until the next reduction has told every rank (SUM_FAILED), so
 * that no rank is left waiting in a collective for it. */
static krill_status local_failure(const krill_solve_problem *p, pipecg_ws *ws, krill_status st)
{
    if (st == KRILL_OK || krill_ctx_size(p->ctx) == 1) return st;
    if (ws->failed == KRILL_OK) ws->failed = st;
    return KRILL_OK;
}

/* GPU, plain mode: merged_update as one kernel (kernels/krylov.cu: the same updates and the
 * three sums in one pass, 13 / 20 / 18 vector passes against the composed path's 24 / 34 /
 * 31), then the sums come back to the host, where pipecg_overlap reduces them over the
 * ranks without blocking, behind M^{-1} w and A m. */
static krill_status gpu_update(const krill_solve_problem *p, pipecg_ws *ws, double alpha,
                               double beta)
{
    krill_status st = KRILL_OK;
#ifdef KRILL_HAVE_CUDA
    const krill_pipecg_vectors v = {p->x, ws->r, ws->w, ws->z, ws->s, ws->p,
                                    ws->u, ws->m, ws->q, ws->n, ws->dinv};
    st = krill_cuda_pipecg_update(p->ctx, p->n, ws->pc_mode, alpha, beta, &v, ws->sums_dev);
    if (st == KRILL_OK) st = krill_scalars_read(p->ctx, ws->sums_dev, ws->sums, SUM_COUNT);
#else
    (void)alpha, (void)beta;
#endif
    ws->sums_local = 1;
    return local_failure(p, ws, st);
}

/* The same updates by the context's operations (GPU; reproducible mode), then the sums. */
static krill_status composed_update(const krill_solve_problem *p, pipecg_ws *ws, double alpha,
                                    double beta)
{
    krill_status st = KRILL_OK;
    krill_ctx *ctx = p->ctx;
    const int64_t n = p->n;
    KRILL_TRY(krill_blas_axpby(ctx, n, 1.0, ws->n, beta, ws->z));
    if (ws->pc_mode != PC_NONE) KRILL_TRY(krill_blas_axpby(ctx, n, 1.0, ws->m, beta, ws->q));
    KRILL_TRY(krill_blas_axpby(ctx, n, 1.0, ws->w, beta, ws->s));
    KRILL_TRY(krill_blas_axpby(ctx, n, 1.0, ws->u, beta, ws->p));
    KRILL_TRY(krill_blas_axpy(ctx, n, alpha, ws->p, p->x));
    KRILL_TRY(krill_blas_axpy(ctx, n, -alpha, ws->s, ws->r));
    if (ws->pc_mode != PC_NONE) KRILL_TRY(krill_blas_axpy(ctx, n, -alpha, ws->q, ws->u));
    KRILL_TRY(krill_blas_axpy(ctx, n, -alpha, ws->z, ws->w));
    if (ws->pc_mode == PC_DIAGONAL) KRILL_TRY(krill_blas_xmy(ctx, n, ws->w, ws->dinv, ws->m));
    KRILL_TRY(sums_by_dots(p, ws));
cleanup:
    return st;
}

/* The operator scale, once per solve, from u and w = A u: the iteration forms A M^{-1} A M^{-1}
 * r (n = A m), which over- or underflows when ||M^{-1} A|| is extreme although CG's A p does
 * not (diag(1e160) without a preconditioner: n ~ 1e320). With e = ilogb ||M^{-1} w|| - ilogb
 * ||u|| outside [-ASCALE_BAND, ASCALE_BAND], the iteration runs on (c A) x' = b with c = 2^-e
 * and x' = x / c: every SpMV takes alpha = c, w is scaled now, x on the way in and out
 * (krill_pipecg_run's cleanup). Powers of two: exact, barring subnormals; inside the band
 * nothing changes. Costs two norms and, for a general M, one application, per solve. */
static krill_status choose_scale(const krill_solve_problem *p, pipecg_ws *ws)
{
    krill_status st = KRILL_OK;
    krill_ctx *ctx = p->ctx;
    const int64_t n = p->n;
    double norms[3];
    int e;
    if (ws->pc_mode == PC_DIAGONAL) KRILL_TRY(krill_blas_xmy(ctx, n, ws->w, ws->dinv, ws->m));
    if (ws->pc_mode == PC_GENERAL) KRILL_TRY(krill_pc_apply_raw(p->pc, ws->w, ws->m));
    KRILL_TRY(krill_blas_nrm2(ctx, n, ws->u, ws->sums_dev + SUM_COUNT));
    KRILL_TRY(krill_blas_nrm2(ctx, n, ws->m, ws->sums_dev + SUM_COUNT + 1));
    KRILL_TRY(krill_scalars_read(ctx, ws->sums_dev + SUM_COUNT, norms, 2));
    if (!(norms[0] > 0.0 && norms[1] > 0.0 && krill_is_finite(norms[0]) &&
          krill_is_finite(norms[1])))
        goto cleanup;                /* a zero or non-finite norm: the step will say so */
    e = ilogb(norms[1]) - ilogb(norms[0]);
    if (e >= -ASCALE_BAND && e <= ASCALE_BAND) goto cleanup;
    /* c = 2^-e must cancel the ratio exactly: A (c A u) is formed as c (A (c A u)) by the
     * SpMV, whose inner product only stays in range with the full c. Past +-ASCALE_MAX c or
     * 1 / c is not normal: unscaled, as for an x that would leave the range. */
    if (e > ASCALE_MAX || e < -ASCALE_MAX) goto cleanup;
    KRILL_TRY(krill_blas_nrm2(ctx, n, p->x, ws->sums_dev + SUM_COUNT));
    KRILL_TRY(krill_scalars_read(ctx, ws->sums_dev + SUM_COUNT, norms + 2, 1));
    if (norms[2] > 0.0 && (ilogb(norms[2]) + e > 1000 || ilogb(norms[2]) + e < -1000))
        goto cleanup;                /* x / c would leave the range: unscaled */
    ws->ascale = ldexp(1.0, -e);
    KRILL_TRY(krill_blas_scal(ctx, n, ws->ascale, ws->w));
    ws->x_scaled = 1;                /* from here x is x / c, also if the next call fails */
    KRILL_TRY(krill_blas_scal(ctx, n, ldexp(1.0, e), p->x));
cleanup:
    return st;
}

/* (Re)start from r = b - A x in ws->r: u = M^{-1} r, w = A u, (Jacobi: m = dinv w), the
 * directions' recurrences zeroed (the first step's beta is 0), and the sums. The first start
 * of a solve (`first_of_solve`) chooses the operator scale. */
static krill_status pipecg_start(const krill_solve_problem *p, pipecg_ws *ws, int first_of_solve)
{
    krill_status st = KRILL_OK;
    krill_ctx *ctx = p->ctx;
    const int64_t n = p->n;
    if (ws->pc_mode == PC_DIAGONAL) {
        KRILL_TRY(krill_blas_xmy(ctx, n, ws->r, ws->dinv, ws->u));
    } else if (ws->pc_mode == PC_GENERAL) {
        KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_PRECOND));
        KRILL_TRY(krill_pc_apply_raw(p->pc, ws->r, ws->u));
    }
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_SPMV));
    KRILL_TRY(krill_mat_spmv_raw(p->a, ws->ascale, ws->u, 0.0, ws->w));
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_ORTHO));
    if (first_of_solve) KRILL_TRY(choose_scale(p, ws));
    if (ws->pc_mode == PC_DIAGONAL) KRILL_TRY(krill_blas_xmy(ctx, n, ws->w, ws->dinv, ws->m));
    KRILL_TRY(krill_blas_fill(ctx, n, 0.0, ws->z));
    KRILL_TRY(krill_blas_fill(ctx, n, 0.0, ws->s));
    KRILL_TRY(krill_blas_fill(ctx, n, 0.0, ws->p));
    if (ws->pc_mode != PC_NONE) KRILL_TRY(krill_blas_fill(ctx, n, 0.0, ws->q));
    KRILL_TRY(sums_by_dots(p, ws));
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_OTHER));
cleanup:
    return st;
}

/* The sums of the current residual reach every rank while m = M^{-1} w and n = A m are
 * computed (the merged and GPU paths: a nonblocking allreduce of the sums and the failure
 * flag; the others have their sums already). `speculate` = 0 skips m and n: the solve stops
 * after this check whatever it says. A failure flagged by any rank ends the solve on all of
 * them, with the failing rank's status (krill_ctx_agree). */
static krill_status pipecg_overlap(const krill_solve_problem *p, pipecg_ws *ws, int speculate)
{
    krill_status st = KRILL_OK;
    if (ws->sums_local) {
        ws->sums[SUM_FAILED] = ws->failed != KRILL_OK ? 1.0 : 0.0;
        KRILL_TRY(krill_ctx_iallreduce_start(p->ctx, ws->sums, SUM_SLOTS, KRILL_REDUCE_SUM));
        ws->sums_local = 0;
        ws->in_flight = 1;
    }
    if (speculate && ws->pc_mode == PC_GENERAL) {
        KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_PRECOND));
        KRILL_TRY(local_failure(p, ws, krill_pc_apply_raw(p->pc, ws->w, ws->m)));
    }
    if (speculate) {
        KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_SPMV));
        KRILL_TRY(local_failure(p, ws, krill_mat_spmv_raw(p->a, ws->ascale, ws->m, 0.0, ws->n)));
    }
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_ORTHO));
    if (ws->in_flight) {
        ws->in_flight = 0;
        KRILL_TRY(krill_ctx_iallreduce_wait(p->ctx));
        if (ws->sums[SUM_FAILED] != 0.0) {
            st = krill_ctx_agree(p->ctx, ws->failed);
            if (st == KRILL_OK) st = krill_error(KRILL_ERR_INTERNAL, "pipecg: a rank failed");
            ws->failed = KRILL_OK;   /* reported */
            goto cleanup;
        }
    }
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_OTHER));
cleanup:
    return st;
}

/* The step from the reduced sums: KRILL_REASON_NONE and *alpha, *beta, or why it stops.
 * *gamma_prev, *pap_prev, *alpha_prev: the previous step's (0 after a (re)start for the
 * first two only when the solve starts: signs carry over restarts, as in CG). */
static krill_reason pipecg_step(const pipecg_ws *ws, int first, double *gamma_prev,
                                double *pap_prev, double *alpha_prev, double *alpha,
                                double *beta)
{
    const double gamma = ws->sums[SUM_GAMMA], delta = ws->sums[SUM_DELTA];
    double pap;
    if (!krill_is_finite(gamma) || !krill_is_finite(delta)) return KRILL_DIVERGED_NAN;
    if (!krill_cg_sign_kept(gamma, *gamma_prev)) return KRILL_DIVERGED_INDEFINITE;
    *beta = first ? 0.0 : gamma / *gamma_prev;
    pap = first ? delta : delta - *beta * gamma / *alpha_prev;
    if (!krill_is_finite(pap) || !krill_is_finite(*beta)) return KRILL_DIVERGED_NAN;
    if (!krill_cg_sign_kept(pap, *pap_prev)) return KRILL_DIVERGED_INDEFINITE;
    *alpha = gamma / pap;
    if (!krill_is_finite(*alpha)) return KRILL_DIVERGED_NAN;
    *gamma_prev = gamma;
    *pap_prev = pap;
    *alpha_prev = *alpha;
    return KRILL_REASON_NONE;
}

/* The true residual into ws->r, b - (c A)(x / c) under an operator scale c; its norm. */
static krill_status pipecg_true_residual(const krill_solve_problem *p, pipecg_ws *ws,
                                         double *norm)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_SPMV));
    if (ws->ascale == 1.0) {
        KRILL_TRY(krill_true_residual(p, ws->r, ws->sums_dev + SUM_COUNT, norm));
    } else {
        KRILL_TRY(krill_blas_axpby(p->ctx, p->n, p->bscale, p->b, 0.0, ws->r));
        KRILL_TRY(krill_mat_spmv_raw(p->a, -ws->ascale, p->x, 1.0, ws->r));
        KRILL_TRY(krill_blas_nrm2(p->ctx, p->n, ws->r, ws->sums_dev + SUM_COUNT));
        KRILL_TRY(krill_scalars_read(p->ctx, ws->sums_dev + SUM_COUNT, norm, 1));
    }
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_OTHER));
cleanup:
    return st;
}

krill_status krill_pipecg_run(const krill_solve_problem *p, krill_solve_info *info)
{
    krill_status st = KRILL_OK;
    pipecg_ws ws;
    krill_reason reason = KRILL_REASON_NONE;
    const int maxit = p->opts.maxit;
    int seen = 0, first = 1, resnorm_current = 0, stop_requested = 0;
    double resnorm = 0.0, gamma_prev = 0.0, pap_prev = 0.0, alpha_prev = 0.0;
    double drift_resnorm = 0.0;  /* ||b - A x|| at the last restart for a lost sign */

    memset(&ws, 0, sizeof ws);
    KRILL_TRY(krill_timer_setup(p->timer));
    KRILL_TRY(krill_ctx_agree(p->ctx, pipecg_ws_create(p, &ws)));
    KRILL_TRY(krill_initial_residual(p, ws.r, ws.sums_dev + SUM_COUNT, &resnorm, info));
    reason = krill_converged_reason(p, resnorm);
    if (reason == KRILL_REASON_NONE) KRILL_TRY(pipecg_start(p, &ws, 1));
    KRILL_TRY(krill_timer_loop(p->timer, KRILL_PHASE_OTHER));

    while (reason == KRILL_REASON_NONE) {
        double alpha = 0.0, beta = 0.0, rnorm;
        int check_true = 0;  /* b - A x decides, and the iteration restarts from it */
        int drift = 0;       /* ... because a sign was lost after the first step */
        /* the sums of r_seen travel while m and n are made for step seen + 1 */
        KRILL_TRY(pipecg_overlap(p, &ws, seen < maxit && !stop_requested));
        KRILL_TRY(krill_timer_poll(p->timer));
        rnorm = sqrt(ws.sums[SUM_RR]);
        if (!first && !krill_ss_in_range(ws.sums[SUM_RR]))   /* r'r over- or underflowed */
            KRILL_TRY(krill_norm_from_ss(p, ws.r, ws.sums[SUM_RR], ws.sums_dev + SUM_COUNT,
                                         &rnorm));
        if (!first) {        /* r_seen came from the recurrences: its estimate */
            info->history[seen] = rnorm;
            if (p->opts.monitor)
                stop_requested |= p->opts.monitor(seen, rnorm, p->opts.monitor_data);
            if (!krill_is_finite(rnorm)) {
                reason = KRILL_DIVERGED_NAN;
                break;
            }
            check_true = rnorm <= p->tol;
        }
        if (!check_true && (stop_requested || seen >= maxit)) {
            reason = KRILL_DIVERGED_MAXIT;
            break;
        }
        if (!check_true) {
            reason = pipecg_step(&ws, first, &gamma_prev, &pap_prev, &alpha_prev, &alpha, &beta);
            /* A sign lost after the first step of a (re)start may be the recurrences' drift
             * (u is updated, not M^{-1} r: near the attainable accuracy r'u can change sign on
             * an SPD system): b - A x decides below. */
            if (reason == KRILL_DIVERGED_INDEFINITE && !first) {
                reason = KRILL_REASON_NONE;
                check_true = drift = 1;
            }
            if (reason != KRILL_REASON_NONE) break;
        }
        if (check_true) {
            KRILL_TRY(pipecg_true_residual(p, &ws, &resnorm));
            reason = krill_converged_reason(p, resnorm);
            resnorm_current = 1;
            if (reason == KRILL_REASON_NONE && !krill_is_finite(resnorm))
                reason = KRILL_DIVERGED_NAN;
            /* Drift only near the attainable accuracy, and only while restarts make progress:
             * a sign lost with ||b - A x|| above sqrt(eps) ||b||, or not below half of where
             * the previous such restart was, is the matrix's (or M's): INDEFINITE, as CG. */
            if (reason == KRILL_REASON_NONE && drift &&
                (resnorm > DRIFT_FLOOR * p->bnorm ||
                 (drift_resnorm > 0.0 && resnorm > 0.5 * drift_resnorm)))
                reason = KRILL_DIVERGED_INDEFINITE;
            if (reason != KRILL_REASON_NONE) break;
            if (drift) drift_resnorm = resnorm;
            KRILL_TRY(pipecg_start(p, &ws, 0));      /* restart from the true residual */
            resnorm_current = 0;
            first = 1;
            continue;
        }
        KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_ORTHO));
        if (ws.merged) merged_update(p, &ws, alpha, beta);
        else if (ws.fused_gpu) KRILL_TRY(gpu_update(p, &ws, alpha, beta));
        else KRILL_TRY(composed_update(p, &ws, alpha, beta));
        KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_OTHER));
        first = 0;
        seen++;
    }

    /* a failure after the last reduction (its speculative product): every rank learns it */
    if (krill_ctx_size(p->ctx) > 1) KRILL_TRY(krill_ctx_agree(p->ctx, ws.failed));
    if (!resnorm_current) KRILL_TRY(pipecg_true_residual(p, &ws, &resnorm));
    KRILL_TRY(krill_solve_finish(p, reason, seen, resnorm, info));
cleanup:
    if (ws.in_flight) (void)krill_ctx_iallreduce_wait(p->ctx);   /* never leave one open */
    if (ws.x_scaled) {           /* x = c x', whatever happened */
        krill_status back = krill_blas_scal(p->ctx, p->n, ws.ascale, p->x);
        if (st == KRILL_OK) st = back;
    }
    pipecg_ws_destroy(p->ctx, &ws);
    return st;
}
