/* solver/dcgs2.c - DCGS2, the delayed classical Gram-Schmidt with reorthogonalization, as
 * the orthogonalization of GMRES and FGMRES (gmres.c runs the cycle, the Givens rotations
 * and the least squares; the passes are krill_fused_dcgs2_dots / _update of fused.c and
 * kernels/dcgs2.cu).
 *
 * Reference: K. Swirydowicz, J. Langou, S. Ananthan, U. Yang, S. Thomas, "Low
 * synchronization Gram-Schmidt and GMRES algorithms", Numer. Linear Algebra Appl. 28 (2021)
 * e2343, the DCGS2 Arnoldi algorithm: CGS2's second pass over v_j is delayed to step j+1 and
 * merged with that step's projection, and ||v_j|| comes from Pythagoras' theorem, so a step
 * makes one sweep of inner products (one global reduction) and one update pass.
 *
 * Step j. Q = Q_j = [q_0 .. q_{j-1}] is final (orthonormal to working precision), u = u_j
 * is v_j after one Gram-Schmidt pass and an approximate normalization, w = A M^{-1} u
 * (u_0 = r / beta is final: s_0 is empty, rho_0 = 1).
 *   sweep:   s = Q'u, alpha = u'u, t = Q'w, b = u'w, gamma = w'w        (one reduction)
 *   host:    rho = sqrt(alpha - s's)                (u = Q s + rho q_j, Q orthonormal)
 *            d = q_j'w = (b - s't) / rho
 *            c = (t; d): the projection of w on Q_{j+1} = [Q q_j]
 *            nu = ||w|| sqrt(max(1 - ||c||^2 / ||w||^2, eps))  (||w - Q_{j+1} c||, by
 *                 Pythagoras; where that cancels, the floor eps only fixes a scale)
 *   update:  q_j = (u - Q s) / rho                        over u (V[:, j])
 *            u_{j+1} = (w - Q t - d q_j) / nu             over w (V[:, j+1]), one pass
 * The relation kept is the one of the vectors the SpMV saw:
 *   A M^{-1} u_j = w = Q_{j+1} c_j + nu_j u_{j+1},  u_{j+1} = Q_{j+1} s_{j+1} + rho_{j+1} q_{j+1}
 * so A M^{-1} U_k = Q_{k+1} Hbar_k with column j of Hbar
 *   h_{i,j} = c_j[i] + nu_j s_{j+1}[i]  (i <= j),   h_{j+1,j} = nu_j rho_{j+1},
 * final at step j+1, when s_{j+1} and rho_{j+1} come out of its sweep (before that, GMRES
 * rotates the column with h_{j+1,j} = nu_j: a provisional residual estimate for the stopping
 * tests, made again when the column is corrected). The end of a cycle whose last column
 * k-1 is provisional corrects it with one more sweep, s_k = Q_k'u_k and u_k'u_k (one CGS
 * pass without update, no SpMV): the paper's final step; the Arnoldi relation, the last
 * Givens rotation and the residual estimate are then those of the final basis, as with CGS2.
 * The update of x uses U_k = Q_k T_k (T upper triangular, column j = (s_j; rho_j)):
 * GMRES adds M^{-1} Q_k (T_k y), FGMRES adds Z_k y with Z's columns M_j^{-1} u_j (A Z_k =
 * Q_{k+1} Hbar_k holds as it stands).
 *
 * Where rho_j^2 < RHO2_MIN alpha, u_j lies in span(Q_j) to the working precision (Pythagoras
 * has cancelled: u_j is the roundoff of a lucky breakdown at step j-1): h_{j,j-1} = 0, and
 * GMRES ends the cycle there (lucky, or singular R). A breakdown is thus seen one SpMV later
 * than with CGS2; that SpMV is not counted as an iteration.
 *
 * Memory traffic per iteration j (vectors of n doubles, besides the SpMV's read of its input
 * and write of w; CGS2's count in gmres.c):
 *   sweep:  Q_j, u_j, w read                                        j + 2
 *   update: Q_j, u_j, w read; q_j, u_{j+1} written                  j + 4
 *                                                          DCGS2:  2j + 6   (CGS2: 3j + 10)
 * plus, once per cycle of k steps, the final sweep over Q_k and u_k: k + 1. A full cycle of
 * GMRES(m): sum_{j<m} (2j + 6) + m + 1 = m^2 + 6m + 1 vectors, against CGS2's
 * sum_{j<m} (3j + 10) = (3m^2 + 17m) / 2: at m = 30, 1081 against 1605 (0.67x). The normalization of u_{j+1} is fused into the update (CGS2
 * scales w in a pass of its own). On the GPU the host reads 2j + 4 doubles (one
 * synchronization, as CGS2) and passes the 2j + 3 coefficients to the update kernel as its
 * parameters (no copy; restarts beyond 33 copy them to the device).
 * Reproducible mode: the sweep is krill_ozaki_mdot2 ([Q u w]'u and [Q u w]'w): in exact mode
 * on a lone GPU one fast pass that reads Q, u and w once for both (j + 2, the plain sweep's
 * traffic with the compensated sums' arithmetic, the statistics from the same read), on
 * GPU ranks one such pass and one allgather for both (CPU ranks: a fast pass per
 * right-hand side, then the one allgather), elsewhere a fast pass per right-hand side; a
 * sum the fast path leaves undecided takes a products pass (on the CPU and on ranks also a
 * statistics pass, and on ranks its right-hand side's fast pass again; every sum of the
 * fixed-slice modes takes both: at worst 4j + 12 reads). The update is the same pass
 * without contraction (j + 4). Every host step reads only correctly rounded (or fixed-slice)
 * sums, so the bits are those of any thread count and device. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "solver/solver_impl.h"

/* rho_j^2 / (u_j'u_j) below this: u_j is in span(Q_j). Pythagoras gives rho_j^2 with an
 * absolute error of about (j + 2) eps u_j'u_j; at 1e-8 rho_j is still good to a few 1e-7,
 * and a u_j that far into the span came from a w_new of ||w_new|| < 1e-12 ||w||, the lucky
 * breakdown test of gmres.c (GMRES_HAPPY_RTOL) anyway. */
#define DCGS2_RHO2_MIN 1e-8

krill_status krill_dcgs2_create(krill_ctx *ctx, int m, krill_dcgs2 *d)
{
    krill_status st = KRILL_OK;
    memset(d, 0, sizeof *d);
    d->m = m;
    KRILL_WS_ALLOC(ctx, d->coef, 2 * (size_t)m + 1);
    KRILL_ALLOC(d->hcoef, 2 * (size_t)m + 1);
    KRILL_CALLOC(d->tri, (size_t)m * (size_t)m);
cleanup:
    if (st != KRILL_OK) krill_dcgs2_destroy(ctx, d);
    return st;
}

void krill_dcgs2_destroy(krill_ctx *ctx, krill_dcgs2 *d)
{
    krill_ws_free(ctx, d->coef);
    krill_free(d->hcoef);
    krill_free(d->tri);
    memset(d, 0, sizeof *d);
}

/* rho_j from u_j'u_j = alpha and s_j (j values), with column j of T, and the correction of
 * column j-1 of H: prev[0..j-1] += nu s, prev[j] = nu rho. Returns rho (0: in the span). */
static double correct_previous(krill_dcgs2 *d, int j, const double *s, double alpha,
                               double *prev)
{
    double ss = 0.0, rho2, rho;
    double *tcol = d->tri + (size_t)j * (size_t)d->m;
    for (int i = 0; i < j; i++) ss += s[i] * s[i];
    rho2 = alpha - ss;
    rho = rho2 >= DCGS2_RHO2_MIN * alpha ? sqrt(rho2) : 0.0;
    for (int i = 0; i < j; i++) prev[i] += d->nu * s[i];
    prev[j] = d->nu * rho;
    if (j < d->m) {
        for (int i = 0; i < j; i++) tcol[i] = s[i];
        tcol[j] = rho;
    }
    return rho;
}

krill_status krill_dcgs2_project(const krill_solve_problem *p, krill_dcgs2 *d,
                                 const krill_reduce_ws *red, double *v, int j, double *dev,
                                 double *hread, double *prev, double *col, double *hn)
{
    krill_status st = KRILL_OK;
    const int64_t n = p->n;
    const double *s = hread, *t = hread + j + 2;
    double alpha, b, gamma, rho = 1.0, dq, wnorm = NAN, rest = 1.0, nu, inv_nu;
    int finite = 1;
    KRILL_TRY(krill_fused_dcgs2_dots(p->ctx, red, n, j, v, n, dev + 1));
    KRILL_TRY(krill_scalars_read(p->ctx, dev + 1, hread, 2 * j + 4));
    alpha = hread[j];
    b = hread[2 * j + 2];
    gamma = hread[2 * j + 3];
    /* every sum but w'w (gamma) must be finite; gamma may overflow or underflow where A's
       scale reaches the limits of a sum of squares (||A|| ~ 1e160): krill_norm_from_ss then
       recomputes ||w|| by a scaled pass, whose result decides */
    for (int i = 0; i < 2 * j + 3; i++) finite = finite && krill_is_finite(hread[i]);
    if (finite && !isnan(gamma))
        KRILL_TRY(krill_norm_from_ss(p, v + (size_t)(j + 1) * (size_t)n, gamma, dev, &wnorm));
    if (!finite || isnan(gamma) || !krill_is_finite(wnorm)) {
        for (int i = 0; i <= j; i++) col[i] = NAN;
        if (j > 0) prev[j] = NAN;
        *hn = NAN;
        goto cleanup;
    }
    if (j > 0) {
        rho = correct_previous(d, j, s, alpha, prev);
        if (rho == 0.0) goto cleanup;   /* u_j in span(Q_j): column j-1 ends the cycle */
    } else {
        d->tri[0] = 1.0;
    }
    /* column j before its correction: t, then d = (b - s't) / rho */
    dq = b;
    for (int i = 0; i < j; i++) {
        dq -= s[i] * t[i];
        col[i] = t[i];
    }
    dq /= rho;
    col[j] = dq;
    /* nu = ||w - Q_{j+1} c|| by Pythagoras, relative to ||w|| (no overflow in the squares) */
    if (wnorm > 0.0) {
        for (int i = 0; i <= j; i++) rest -= (col[i] / wnorm) * (col[i] / wnorm);
    }
    nu = wnorm * sqrt(rest > DBL_EPSILON ? rest : DBL_EPSILON);
    inv_nu = nu > 0.0 ? 1.0 / nu : 0.0;   /* w = 0: u_{j+1} = 0, and R is singular */
    /* the update's coefficients (solver_impl.h's layout) */
    for (int i = 0; i < j; i++) {
        d->hcoef[i] = -s[i] / rho;
        d->hcoef[j + 1 + i] = -t[i] * inv_nu;
    }
    d->hcoef[j] = 1.0 / rho;
    d->hcoef[2 * j + 1] = -dq * inv_nu;
    d->hcoef[2 * j + 2] = inv_nu;
    d->nu = nu;
    *hn = nu;
cleanup:
    return st;
}

krill_status krill_dcgs2_update(const krill_solve_problem *p, krill_dcgs2 *d, double *v, int j)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(krill_fused_dcgs2_update(p->ctx, p->n, j, v, p->n, d->hcoef, d->coef));
cleanup:
    return st;
}

krill_status krill_dcgs2_finish(const krill_solve_problem *p, krill_dcgs2 *d,
                                const krill_reduce_ws *red, double *v, int k, double *dev,
                                double *hread, double *prev)
{
    krill_status st = KRILL_OK;
    const int64_t n = p->n;
    double *u = v + (size_t)k * (size_t)n;
    if (d->nu == 0.0) goto cleanup;   /* u_k = 0: h_{k,k-1} = 0 stands */
    KRILL_TRY(krill_fused_cgs_pass(p->ctx, red, n, k, v, n, NULL, u, dev + 1, dev));
    KRILL_TRY(krill_scalars_read(p->ctx, dev, hread, k + 1));
    if (!krill_is_finite(hread[0])) {
        prev[k] = NAN;
        goto cleanup;
    }
    (void)correct_previous(d, k, hread + 1, hread[0], prev);
cleanup:
    return st;
}

void krill_dcgs2_coordinates(const krill_dcgs2 *d, int k, const double *y, double *out)
{
    for (int i = 0; i < k; i++) {
        double sum = 0.0;
        for (int j = i; j < k; j++) sum += d->tri[i + (size_t)j * (size_t)d->m] * y[j];
        out[i] = sum;
    }
}
