/* solver/gmres.c - restarted GMRES(m) and flexible GMRES(m), with right preconditioning.
 *
 * Reference: Y. Saad, Iterative Methods for Sparse Linear Systems, 2nd ed., SIAM 2003:
 * Algorithm 6.9 (GMRES), 6.5 (restarts), 9.5 (right preconditioning), 9.6 (FGMRES);
 * Algorithm 1 of Kawamura et al. (papers/003) is the unpreconditioned cycle. Solves
 * A M^{-1} u = b, x = M^{-1} u, so the residual it minimizes is the true one, b - A x.
 *
 *   r = b - A x, beta = ||r||; stop if beta <= tol = max(rtol ||b||, atol)
 *   cycle:  v_0 = r / beta, g = beta e_0
 *     for j = 0 .. m-1:
 *       w = A M^{-1} v_j                               (w is stored as column j+1 of V)
 *       h_{0..j,j} and w -= V h by DCGS2 (default), CGS2 or MGS; h_{j+1,j} = ||w||
 *       rotate column j by the previous Givens rotations, make rotation j that zeroes
 *       h_{j+1,j}; g_{j+1} = -s_j g_j, g_j = c_j g_j; |g_{j+1}| is the residual estimate
 *       lucky breakdown, h_{j+1,j} <= HAPPY_RTOL ||A M^{-1} v_j||: the solution is in the
 *       space: end the cycle (if R is singular there, it is a breakdown)
 *       end the cycle if |g_{j+1}| <= tol, at maxit, or when the monitor says stop
 *       v_{j+1} = w / h_{j+1,j}
 *     y = R^{-1} g (k x k upper triangular, on the host); x += M^{-1} V_k y
 *     r = b - A x (the true residual, at every restart and at the end): converged if
 *     ||r|| <= tol, else the next cycle, unless maxit, breakdown or NaN ended this one.
 *
 * FGMRES (the same code, ws->flexible): z_j = M_j^{-1} v_j is kept as column j of Z
 * (n x m), w = A z_j, and the update is x += Z_k y. Then A Z_k = V_{k+1} H holds whatever
 * M_j was, so y still minimizes the true residual over x0 + span(Z_k) and |g_k| is its
 * norm; GMRES instead applies one M^{-1} to V_k y, which is right only when every M_j is
 * the same. With a fixed M both give the same iterates (in exact arithmetic); FGMRES
 * costs m more vectors and saves one preconditioner application per cycle.
 *
 * Orthogonalization. CGS2 (classical Gram-Schmidt, twice): h1 = V^T w, w -= V h1,
 * h2 = V^T w, w -= V h2, h = h1 + h2, h_{j+1,j} = ||w||. The four GEMV-shaped products
 * take three passes over the contiguous block V (krill_fused_cgs_pass): row i of
 * w -= V h1 needs only row i of V, so it shares its read of V with h2 = V^T w, and
 * w -= V h2 with ||w||^2. Three reductions per step, however large j.
 * MGS: h_i = v_i'w, w -= h_i v_i for i = 0..j, with the update of step i fused to the dot of
 * step i+1 (and the last to ||w||^2): j+2 reductions, each a full pass.
 * DCGS2 (dcgs2.c, which derives it): v_j's second CGS pass and its norm are delayed to step
 * j+1, whose one sweep computes them with the projection of w: one reduction and two passes
 * per step. Column j of H is final only at step j+1 (or at the cycle's end, by one more sweep
 * without SpMV): the cycle rotates it provisionally for the stopping tests and rotates it
 * again, rewriting its history entry, once it is corrected. GMRES's update is then
 * x += M^{-1} V_k (T y), T the triangle relating the vectors the SpMV saw to the basis.
 *
 * Memory traffic per iteration j (passes over vectors of n doubles besides the SpMV's read
 * of its input and write of w):
 *   CGS2: V^T w (j+2 reads), w -= V h1 with V^T w (j+2 reads, 1 write),
 *         w -= V h2 with ||w||^2 (j+2 reads, 1 write), v_{j+1} = w / h (2) = 3j + 10
 *   MGS:  v_0'w (2), j fused steps (v_i, w, v_{i+1} read, w written: 4), the last step
 *         (3), v_{j+1} = w / h (2)                                     = 4j + 7
 *   DCGS2: the sweep (j+2 reads), the update (j+2 reads, 2 writes)    = 2j + 6
 *         and once per cycle of k steps a sweep over V_{k+1} (k+1 reads)
 *   preconditioner (not M = I): z = M^{-1} v_j, Jacobi: 3 (v_j, dinv read, z written);
 *         FGMRES writes z_j into Z instead of the one z: the same traffic.
 * Per cycle of k steps: GMRES: V y (k reads, 1 write), M^{-1} (3), x += (3); FGMRES:
 * x += Z y (k + 1 reads, 1 write); then the true residual (SpMV, copy b 2, norm 1). On the
 * GPU the host reads h and ||w|| once per iteration (one synchronization: 2j+3 doubles for
 * CGS2, j+2 for MGS) and does the Givens work itself.
 *
 * Reproducible mode (krill_ctx_set_repro; solver_impl.h): the same code; the update is
 * w -= V h per element in the order j = 0..k-1 (no cuBLAS), the sums are Ozaki sums
 * (correctly rounded in exact mode), and the norms are Ozaki norms. The Hessenberg, Givens
 * and least-squares work on the host reads only those results, so it repeats bit for bit.
 * On the GPU in exact mode each CGS pass is one kernel (krill_ozaki_cgs_pass: the update and
 * the fast path's sums in one pass), so CGS2 moves what the plain code does (3j + 10), plus
 * one more read of V and w for a projection the fast path leaves undecided. Elsewhere (CPU,
 * fixed slice counts) the passes split into the update and Ozaki calls, each a statistics
 * pass and a products pass. Traffic per iteration j then:
 *   CGS2: V^T w (2 (j+2)), w -= V h1 (j+3) then V^T w (2 (j+2)), w -= V h2 (j+3) then
 *         w'w (4), v_{j+1} = w / h (2)                                     = 6j + 20
 *   MGS:  v_0'w (4), j steps (w -= h_i v_i: 3, v_{i+1}'w: 4), the last step (3 + 4),
 *         v_{j+1} = w / h (2)                                              = 7j + 13
 * and x += V y: the same k + 2 passes as plain, each element summed in column order.
 *
 * Workspace, allocated once: V (n x (m+1)), z (n, only with a preconditioner; FGMRES:
 * Z, n x m), 3m+3 doubles of context memory (DCGS2: 2m+1 more), O(m^2) host doubles, and
 * (CPU) the GEMV partial sums. */
#include <math.h>
#include <string.h>

#include "formats/formats_impl.h"
#include "precond/precond_impl.h"
#include "solver/solver_impl.h"

/* Lucky breakdown: h_{j+1,j} <= HAPPY_RTOL ||w_before||, where ||w_before||^2 =
 * sum_i h_ij^2 + h_{j+1,j}^2 is the norm of A M^{-1} v_j before orthogonalization. CGS2 and
 * MGS leave about j eps ||w_before|| (j <= a few hundred: < 1e-13) of w when w lies in the
 * space, so 1e-12 catches exact-arithmetic breakdowns; a false alarm only ends the cycle
 * early, and the true residual decides what follows. */
#define GMRES_HAPPY_RTOL 1e-12

typedef struct gmres_ws {
    int m;                   /* restart length */
    int flexible;            /* FGMRES: z holds Z = [M^{-1} v_0, ..., M^{-1} v_{m-1}] */
    double *v;               /* context memory, n x (m+1), column-major: the Krylov basis */
    double *z;               /* context memory, n: M^{-1} v_j (NULL when M = I); FGMRES:
                              * n x m, column j = M^{-1} v_j */
    double *dev;             /* context memory: [0] ||w|| (MGS: ||w||^2), [1..] h (CGS2: h1
                              * then h2), [2m+3..] y; 3m+3 doubles */
    double *hread;           /* host copy of dev's first 2m+3 */
    double *hess;            /* host, (m+1) x m: the Hessenberg matrix, rotated into R */
    double *cs, *sn;         /* host, m: the Givens rotations */
    double *g;               /* host, m+1: the rotated right-hand side beta e_0 */
    double *y;               /* host, m */
    krill_reduce_ws red;     /* CPU GEMV-T partials */
    int dcgs2_on;            /* DCGS2: the fields below are used */
    krill_dcgs2 dcgs2;       /* its coefficients and T */
    double *raw;             /* host, m+1: the provisional column, unrotated (entries 0..j+1) */
    double *yq;              /* host, m: T y */
    double g_saved;          /* g_j before the provisional rotation j */
} gmres_ws;

/* tests/test_dcgs2.c's view of the basis (solver_impl.h) */
static krill_gmres_basis_fn basis_hook;
static void *basis_hook_user;

void krill_gmres_set_basis_hook(krill_gmres_basis_fn fn, void *user)
{
    basis_hook = fn;
    basis_hook_user = user;
}

static void gmres_ws_destroy(krill_ctx *ctx, gmres_ws *ws)
{
    krill_ws_free(ctx, ws->v);
    krill_ws_free(ctx, ws->z);
    krill_ws_free(ctx, ws->dev);
    krill_free(ws->hread);
    krill_free(ws->hess);
    krill_free(ws->cs);
    krill_free(ws->sn);
    krill_free(ws->g);
    krill_free(ws->y);
    krill_reduce_ws_destroy(ctx, &ws->red);
    krill_dcgs2_destroy(ctx, &ws->dcgs2);
    krill_free(ws->raw);
    krill_free(ws->yq);
    memset(ws, 0, sizeof *ws);
}

static krill_status gmres_ws_create(const krill_solve_problem *p, gmres_ws *ws)
{
    krill_status st = KRILL_OK;
    krill_ctx *ctx = p->ctx;
    int m = p->opts.restart;
    /* no longer than the iterations allowed or the dimension of the space */
    if (m > p->opts.maxit) m = p->opts.maxit;
    if ((int64_t)m > p->n_global) m = (int)p->n_global;
    if (m < 1) m = 1;
    memset(ws, 0, sizeof *ws);
    ws->m = m;
    /* without a preconditioner FGMRES is GMRES: Z would be V */
    ws->flexible = p->opts.solver == KRILL_SOLVER_FGMRES && !krill_pc_is_identity(p->pc);
    KRILL_WS_ALLOC(ctx, ws->v, (size_t)p->n * (size_t)(m + 1));
    if (!krill_pc_is_identity(p->pc))
        KRILL_WS_ALLOC(ctx, ws->z, (size_t)p->n * (size_t)(ws->flexible ? m : 1));
    KRILL_WS_ALLOC(ctx, ws->dev, 3 * (size_t)m + 3);
    KRILL_ALLOC(ws->hread, 2 * (size_t)m + 3);
    KRILL_CALLOC(ws->hess, (size_t)(m + 1) * (size_t)m);
    KRILL_ALLOC(ws->cs, m);
    KRILL_ALLOC(ws->sn, m);
    KRILL_ALLOC(ws->g, (size_t)m + 1);
    KRILL_ALLOC(ws->y, m);
    ws->dcgs2_on = p->opts.ortho == KRILL_ORTHO_DCGS2;
    /* CGS2 sums k + 1 <= m + 1 values per pass; DCGS2's sweep 2k + 3 <= 2m + 1 */
    KRILL_TRY(krill_reduce_ws_create(ctx, ws->dcgs2_on ? 2 * m + 1 : m + 1, &ws->red));
    if (ws->dcgs2_on) {
        KRILL_TRY(krill_dcgs2_create(ctx, m, &ws->dcgs2));
        KRILL_ALLOC(ws->raw, (size_t)m + 1);
        KRILL_ALLOC(ws->yq, m);
    }
cleanup:
    if (st != KRILL_OK) gmres_ws_destroy(ctx, ws);
    return st;
}

/* Orthogonalize w = V[:, j+1] against V[:, 0..j]: col[0..j] = h, *hn = ||w|| after (from
 * the fused ||w||^2, or recomputed where that over- or underflowed: w = A M^{-1} v_j scales
 * with A, so ||A|| ~ 1e160 or 1e-170 reaches the limits of a sum of squares). DCGS2: its
 * sweep only (krill_dcgs2_project: col and *hn provisional, ws->raw, column j-1, corrected);
 * the cycle runs the update pass once column j-1 has not ended it. */
static krill_status orthogonalize(const krill_solve_problem *p, gmres_ws *ws, int j,
                                  double *col, double *hn)
{
    krill_status st = KRILL_OK;
    krill_ctx *ctx = p->ctx;
    const int64_t n = p->n;
    double *v = ws->v, *w = ws->v + (size_t)(j + 1) * (size_t)n, *dev = ws->dev;
    if (ws->dcgs2_on) {
        KRILL_TRY(krill_dcgs2_project(p, &ws->dcgs2, &ws->red, v, j, dev, ws->hread, ws->raw,
                                      col, hn));
        goto cleanup;
    }
    if (p->opts.ortho == KRILL_ORTHO_CGS2) {
        double *h1 = dev + 1, *h2 = dev + 1 + (j + 1);
        KRILL_TRY(krill_fused_cgs_pass(ctx, &ws->red, n, j + 1, v, n, NULL, w, h1, NULL));
        KRILL_TRY(krill_fused_cgs_pass(ctx, &ws->red, n, j + 1, v, n, h1, w, h2, NULL));
        KRILL_TRY(krill_fused_cgs_pass(ctx, &ws->red, n, j + 1, v, n, h2, w, NULL, dev));
        KRILL_TRY(krill_scalars_read(ctx, dev, ws->hread, 2 * j + 3));
        for (int i = 0; i <= j; i++) col[i] = ws->hread[1 + i] + ws->hread[2 + j + i];
    } else {
        KRILL_TRY(krill_blas_dot(ctx, n, v, w, dev + 1));
        for (int i = 0; i < j; i++)
            KRILL_TRY(krill_fused_axpy_dot(ctx, &ws->red, n, dev + 1 + i, v + (size_t)i * n, w,
                                           v + (size_t)(i + 1) * n, dev + 2 + i));
        KRILL_TRY(krill_fused_axpy_dot(ctx, &ws->red, n, dev + 1 + j, v + (size_t)j * n, w,
                                       NULL, dev));
        KRILL_TRY(krill_scalars_read(ctx, dev, ws->hread, j + 2));
        for (int i = 0; i <= j; i++) col[i] = ws->hread[1 + i];
    }
    KRILL_TRY(krill_norm_from_ss(p, w, ws->hread[0], dev, hn));
cleanup:
    return st;
}

double krill_hess_column_norm(const double *col, int j, double hn)
{
    double ss = 0.0, scale = fabs(hn);
    int finite = krill_is_finite(hn);
    for (int i = 0; i <= j; i++) {
        finite = finite && krill_is_finite(col[i]);
        if (fabs(col[i]) > scale) scale = fabs(col[i]);
    }
    if (finite && scale > 0.0) {
        for (int i = 0; i <= j; i++) ss += (col[i] / scale) * (col[i] / scale);
        ss += (hn / scale) * (hn / scale);
    }
    return finite ? scale * sqrt(ss) : NAN;
}

/* w = A M^{-1} v_j into V[:, j+1], orthogonalized: h into column j of the Hessenberg
 * matrix, *hn = h_{j+1,j}, *wnorm = ||A M^{-1} v_j||. M^{-1} v_j goes to z (FGMRES: to
 * column j of Z, kept for the update). */
static krill_status arnoldi_step(const krill_solve_problem *p, gmres_ws *ws, int j,
                                 double *hn, double *wnorm)
{
    krill_status st = KRILL_OK;
    const int64_t n = p->n;
    double *vj = ws->v + (size_t)j * (size_t)n, *w = vj + n;
    double *col = ws->hess + (size_t)j * (size_t)(ws->m + 1);
    if (ws->z) {
        double *zj = ws->z + (ws->flexible ? (size_t)j * (size_t)n : 0);
        KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_PRECOND));
        KRILL_TRY(krill_pc_apply_raw(p->pc, vj, zj));
        vj = zj;
    }
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_SPMV));
    KRILL_TRY(krill_mat_spmv_raw(p->a, 1.0, vj, 0.0, w));
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_ORTHO));
    KRILL_TRY(orthogonalize(p, ws, j, col, hn));
    KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_OTHER));
    KRILL_TRY(krill_timer_poll(p->timer));
    *wnorm = krill_hess_column_norm(col, j, *hn);
cleanup:
    return st;
}

int krill_hess_givens(double *col, int j, double hn, double rmin, double *cs, double *sn,
                      double *g)
{
    double a, r;
    for (int i = 0; i < j; i++) {
        double t = cs[i] * col[i] + sn[i] * col[i + 1];
        col[i + 1] = -sn[i] * col[i] + cs[i] * col[i + 1];
        col[i] = t;
    }
    a = col[j];
    r = hypot(a, hn);
    if (r <= rmin) return 1;
    cs[j] = a / r;
    sn[j] = hn / r;
    col[j] = r;
    col[j + 1] = 0.0;
    g[j + 1] = -sn[j] * g[j];
    g[j] = cs[j] * g[j];
    return 0;
}

/* Column j of H: the rotations, and rotation j unless R_jj is numerically zero (1). */
static int givens(gmres_ws *ws, int j, double hn, double wnorm)
{
    return krill_hess_givens(ws->hess + (size_t)j * (size_t)(ws->m + 1), j, hn,
                             GMRES_HAPPY_RTOL * wnorm, ws->cs, ws->sn, ws->g);
}

int krill_hess_solve(int k, const double *r, int ld, const double *g, double *y)
{
    int finite = 1;
    for (int i = k - 1; i >= 0; i--) {
        double s = g[i];
        for (int l = i + 1; l < k; l++) s -= r[i + (size_t)l * ld] * y[l];
        y[i] = s / r[i + (size_t)i * ld];
        finite = finite && krill_is_finite(y[i]);
    }
    return finite;
}

/* DCGS2: column c of H, rotated provisionally at its step and now corrected in ws->raw
 * (entries 0..c+1, unrotated), is rotated again from g_c as it was; its iteration's history
 * entry (it_c) becomes the final estimate. A NaN (*k = 0), a singular R (*k = c, the column
 * dropped), a lucky breakdown or a met tolerance set *end; otherwise it is left alone. */
static void refinish(const krill_solve_problem *p, gmres_ws *ws, krill_solve_info *info, int c,
                     int it_c, int *k, krill_cycle_end *end)
{
    double *col = ws->hess + (size_t)c * (size_t)(ws->m + 1);
    const double hn = ws->raw[c + 1], wnorm = krill_hess_column_norm(ws->raw, c, hn);
    double estimate;
    int singular;
    memcpy(col, ws->raw, (size_t)(c + 1) * sizeof *col);
    ws->g[c] = ws->g_saved;
    if (!krill_is_finite(wnorm)) {
        info->history[it_c] = NAN;
        *k = 0;
        *end = KRILL_END_NAN;
        return;
    }
    singular = givens(ws, c, hn, wnorm);
    estimate = fabs(ws->g[singular ? c : c + 1]);
    info->history[it_c] = estimate;
    if (singular) {
        *k = c;
        *end = KRILL_END_BREAKDOWN;
    } else if (hn <= GMRES_HAPPY_RTOL * wnorm) {
        *end = KRILL_END_LUCKY;
    } else if (estimate <= p->tol) {
        *end = KRILL_END_ESTIMATE;
    }
}

/* x += M^{-1} V_k y (FGMRES: x += Z_k y; GMRES with DCGS2: V_k (T y)) with R y = g (k x k,
 * back substitution on the host). When y is not finite (R too ill-conditioned: the division overflowed), x is left
 * as it was and *end becomes KRILL_END_NAN. */
static krill_status update_solution(const krill_solve_problem *p, gmres_ws *ws, int k,
                                    krill_cycle_end *end)
{
    krill_status st = KRILL_OK;
    krill_ctx *ctx = p->ctx;
    const int64_t n = p->n;
    const int ld = ws->m + 1;
    double *ydev = ws->dev + 2 * (size_t)ws->m + 3;
    if (k == 0) goto cleanup;
    if (!krill_hess_solve(k, ws->hess, ld, ws->g, ws->y)) {
        *end = KRILL_END_NAN;
        goto cleanup;
    }
    if (ws->dcgs2_on && !ws->flexible) {
        krill_dcgs2_coordinates(&ws->dcgs2, k, ws->y, ws->yq);
        KRILL_TRY(krill_scalars_write(ctx, ydev, ws->yq, k));
    } else {
        KRILL_TRY(krill_scalars_write(ctx, ydev, ws->y, k));
    }
    if (ws->z == NULL) {
        KRILL_TRY(krill_fused_gemv_n(ctx, n, k, 1.0, ws->v, n, ydev, 1.0, p->x));
    } else if (ws->flexible) {
        KRILL_TRY(krill_fused_gemv_n(ctx, n, k, 1.0, ws->z, n, ydev, 1.0, p->x));
    } else {
        double *u = ws->v + (size_t)k * (size_t)n;   /* column k is free: only 0..k-1 are used */
        KRILL_TRY(krill_fused_gemv_n(ctx, n, k, 1.0, ws->v, n, ydev, 0.0, u));
        KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_PRECOND));
        KRILL_TRY(krill_pc_apply_raw(p->pc, u, ws->z));
        KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_OTHER));
        KRILL_TRY(krill_blas_axpy(ctx, n, 1.0, ws->z, p->x));
    }
cleanup:
    return st;
}

/* One cycle from the residual in V[:, 0] with norm beta (> 0): up to m steps, then x is
 * updated. *it counts iterations across cycles. *stopped: the monitor asked to stop (also
 * when the cycle ended for another reason at that iteration). */
static krill_status gmres_cycle(const krill_solve_problem *p, gmres_ws *ws,
                                krill_solve_info *info, double beta, int *it, krill_cycle_end *end,
                                int *stopped)
{
    krill_status st = KRILL_OK;
    const int64_t n = p->n;
    const int it0 = *it;
    int k = 0, prov = -1;    /* DCGS2: the column still provisional, or -1 */
    *end = KRILL_END_FULL;
    *stopped = 0;
    KRILL_TRY(krill_blas_scal(p->ctx, n, 1.0 / beta, ws->v));
    ws->g[0] = beta;
    for (int j = 0; j < ws->m; j++) {
        double hn = 0.0, wnorm = 0.0, estimate;
        int singular, stop = 0;
        KRILL_TRY(arnoldi_step(p, ws, j, &hn, &wnorm));
        if (prov >= 0) {     /* DCGS2: column j-1 is final now */
            refinish(p, ws, info, prov, it0 + prov + 1, &k, end);
            prov = -1;
            if (*end != KRILL_END_FULL) break;
        }
        if (ws->dcgs2_on && krill_is_finite(wnorm)) {
            const double *col = ws->hess + (size_t)j * (size_t)(ws->m + 1);
            KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_ORTHO));
            KRILL_TRY(krill_dcgs2_update(p, &ws->dcgs2, ws->v, j));
            KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_OTHER));
            memcpy(ws->raw, col, (size_t)(j + 1) * sizeof *col);
            ws->raw[j + 1] = hn;
            ws->g_saved = ws->g[j];
        }
        (*it)++;
        if (!krill_is_finite(wnorm)) {
            info->history[*it] = NAN;
            k = 0;
            *end = KRILL_END_NAN;
            break;
        }
        singular = givens(ws, j, hn, wnorm);
        estimate = fabs(ws->g[singular ? j : j + 1]);
        info->history[*it] = estimate;
        if (p->opts.monitor) stop = p->opts.monitor(*it, estimate, p->opts.monitor_data);
        if (stop) *stopped = 1;
        if (singular) {
            *end = KRILL_END_BREAKDOWN;
            break;
        }
        k = j + 1;
        if (ws->dcgs2_on) prov = j;
        if (hn <= GMRES_HAPPY_RTOL * wnorm) *end = KRILL_END_LUCKY;
        else if (estimate <= p->tol) *end = KRILL_END_ESTIMATE;
        else if (*it >= p->opts.maxit) *end = KRILL_END_MAXIT;
        else if (stop) *end = KRILL_END_STOPPED;
        if (*end != KRILL_END_FULL) break;
        if (!ws->dcgs2_on)   /* DCGS2's update pass has scaled it */
            KRILL_TRY(krill_blas_scal(p->ctx, n, 1.0 / hn, ws->v + (size_t)(j + 1) * (size_t)n));
    }
    if (prov >= 0) {         /* DCGS2's final sweep corrects the last column */
        krill_cycle_end last = KRILL_END_FULL;
        KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_ORTHO));
        KRILL_TRY(krill_dcgs2_finish(p, &ws->dcgs2, &ws->red, ws->v, k, ws->dev, ws->hread,
                                     ws->raw));
        KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_OTHER));
        refinish(p, ws, info, prov, it0 + prov + 1, &k, &last);
        if (last == KRILL_END_NAN || last == KRILL_END_BREAKDOWN) *end = last;
    }
    if (basis_hook && k > 0) basis_hook(p->ctx, ws->v, n, k, basis_hook_user);
    KRILL_TRY(update_solution(p, ws, k, end));
cleanup:
    return st;
}

krill_status krill_restarted_run(const krill_solve_problem *p, krill_solve_info *info, void *ws,
                                 double *r, double *norm_dev, krill_cycle_fn cycle)
{
    krill_status st = KRILL_OK;
    krill_reason reason;
    double beta = 0.0;
    int it = 0;
    KRILL_TRY(krill_initial_residual(p, r, norm_dev, &beta, info));
    reason = krill_converged_reason(p, beta);
    KRILL_TRY(krill_timer_loop(p->timer, KRILL_PHASE_OTHER));

    while (reason == KRILL_REASON_NONE && it < p->opts.maxit) {
        krill_cycle_end end;
        int stopped;
        KRILL_TRY(cycle(p, ws, info, beta, &it, &end, &stopped));
        KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_SPMV));
        KRILL_TRY(krill_true_residual(p, r, norm_dev, &beta));
        KRILL_TRY(krill_timer_phase(p->timer, KRILL_PHASE_OTHER));
        KRILL_TRY(krill_timer_poll(p->timer));
        if (!krill_is_finite(beta)) reason = KRILL_DIVERGED_NAN;
        else reason = krill_converged_reason(p, beta);
        if (reason != KRILL_REASON_NONE) break;
        if (end == KRILL_END_NAN) reason = KRILL_DIVERGED_NAN;
        else if (end == KRILL_END_BREAKDOWN) reason = KRILL_DIVERGED_BREAKDOWN;
        else if (end == KRILL_END_STOPPED || stopped) reason = KRILL_DIVERGED_MAXIT;
    }
    if (reason == KRILL_REASON_NONE) reason = KRILL_DIVERGED_MAXIT;

    info->reason = reason;
    info->iterations = it;
    info->history_len = it + 1;
    info->resnorm = beta;
    info->relres = beta / p->bnorm;
    KRILL_TRY(krill_timer_finish(p->timer, &info->times));
cleanup:
    return st;
}

static krill_status cycle_of_gmres(const krill_solve_problem *p, void *ws, krill_solve_info *info,
                                   double beta, int *it, krill_cycle_end *end, int *stopped)
{
    return gmres_cycle(p, (gmres_ws *)ws, info, beta, it, end, stopped);
}

krill_status krill_gmres_run(const krill_solve_problem *p, krill_solve_info *info)
{
    krill_status st = KRILL_OK;
    gmres_ws ws;
    memset(&ws, 0, sizeof ws);
    KRILL_TRY(krill_timer_setup(p->timer));
    /* on a communicator: every rank has its workspace, or every rank fails */
    KRILL_TRY(krill_ctx_agree(p->ctx, gmres_ws_create(p, &ws)));
    st = krill_restarted_run(p, info, &ws, ws.v, ws.dev, cycle_of_gmres);
cleanup:
    gmres_ws_destroy(p->ctx, &ws);
    return st;
}
