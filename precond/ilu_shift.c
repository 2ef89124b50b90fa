/* precond/ilu_shift.c - shifted ILU(0) / IC(0): the search for the diagonal shift that makes
 * the incomplete factorization succeed (ilu_impl.h: krill_ilu_shift), shared by both devices:
 * it only prepares the values that the CPU or GPU factorization then factors.
 *
 * The matrix factored. IC(0) needs positive pivots, ILU(0) non-tiny ones; when the
 * factorization of A refuses a row, the search factors instead (Manteuffel, Math. Comp. 1980)
 *   A_alpha = s A + alpha D,   D = diag(d_i),  d_i = s a_ii (ilu0 where a_ii = 0: the row's
 *                                                           largest |a_ij|),
 * s = -1 for ic0 when every a_ii < 0 (a negative definite A: IC(0) factors -A = L L^T and the
 * apply returns -(L L^T)^{-1} r), else s = 1. For a_ii != 0 that is A + alpha diag(A) scaled
 * by s: each row's diagonal grows by the fraction alpha of itself, so the shift does not
 * depend on how the rows are scaled. Row i of A_alpha is strictly diagonally dominant when
 *   |s a_ii + alpha d_i| > sum_{j != i} |a_ij|  <=>  alpha > (sum_{j != i} |a_ij| - |a_ii|) / |d_i|
 * (d_i has the sign of s a_ii, or is positive where a_ii = 0). Past the largest of those, the
 * whole of A_alpha is strictly diagonally dominant, an H-matrix, whose ILU(0) exists and whose
 * IC(0) does too when its diagonal is positive (Meijerink and van der Vorst 1977 for
 * M-matrices; Manteuffel 1980 and Varga, Saff and Mehrmann 1980 for H-matrices): so
 *   alpha_top = 1.1 max_i (sum_{j != i} |a_ij| - |a_ii|) / |d_i|   (at least the pivot tolerance)
 * always works, and the search looks below it.
 *
 * The search is PETSc's for its positive-definite shift (MAT_SHIFT_POSITIVE_DEFINITE, the
 * default of its ICC; aijfact.c), in this relative form: alpha = f alpha_top with the
 * fraction f bisected in [lo, hi] = [0, 1]. The first factorization is A's own (f = 0).
 * After a refused one: lo = f and f = (lo + hi) / 2, or f = hi once 5 shifted tries have
 * been made; refused with f = hi after that too: the search gives up. After a success with
 * f > 0 and fewer than 5 shifted tries: hi = f, f = (lo + hi) / 2 (a smaller shift, a better
 * M). So A's own factorization and at most 6 shifted ones (0, 1/2, 3/4, ..., 31/32, 1 when
 * every one fails), and the factors kept are the last success's. Where the diagonal is
 * constant (a_ii = c) alpha c is PETSc's absolute shift, f its shift_fraction and alpha_top c
 * its shift_top: the same shifts, tried in the same order. Where it is not, PETSc's
 * A + alpha I favours the rows with a small diagonal; this form shifts every row by the same
 * fraction of itself (the Manteuffel shift). Not the smallest alpha that works: a
 * finer search costs a factorization per step, and PETSc's iteration counts are the
 * reference (bench/compare_petsc.py pairs it with -pc_factor_shift_type positive_definite).
 *
 * The values factored are computed here on the host, rounded once per shifted entry:
 * a_ii' = RN(s a_ii + RN(alpha d_i)) (the sign is exact), so both devices factor the same
 * bits and the GPU needs no kernel of its own for the shift. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "precond/ilu_impl.h"

int krill_ilu_sign(const krill_ilu_host *h, const double *a_val)
{
    if (h->kind != KRILL_ILU_KIND_IC0 || h->n == 0) return 1;
    for (int32_t i = 0; i < h->n; i++)
        if (!(a_val[h->diag[i]] < 0.0)) return 1;
    return -1;
}

void krill_ilu_shift_free(krill_ilu_shift *s)
{
    krill_free(s->scale);
    memset(s, 0, sizeof *s);
}

/* Row i's d_i (see the top) from s A's values sa_val. */
static double row_scale(const krill_ilu_host *h, int32_t i, const double *sa_val)
{
    const double aii = sa_val[h->diag[i]];
    double m = 0.0;
    if (aii != 0.0 || h->kind == KRILL_ILU_KIND_IC0) return aii;
    for (int64_t p = h->row_ptr[i]; p < h->row_ptr[i + 1]; p++)
        if (fabs(sa_val[p]) > m) m = fabs(sa_val[p]);
    return m;
}

krill_status krill_ilu_shift_begin(krill_ilu_shift *s, const krill_ilu_host *h,
                                   const double *sa_val)
{
    krill_status st = KRILL_OK;
    double top = 0.0;
    memset(s, 0, sizeof *s);
    s->bad_row = -1;
    s->hi = 1.0;
    KRILL_ALLOC(s->scale, h->n > 0 ? h->n : 1);
    for (int32_t i = 0; i < h->n; i++) {
        const double d = row_scale(h, i, sa_val);
        double off = -fabs(sa_val[h->diag[i]]);   /* sum_{j != i} |a_ij| - |a_ii| */
        s->scale[i] = d;
        if (h->kind == KRILL_ILU_KIND_IC0 && !(d > 0.0)) {
            if (s->bad_row < 0) s->bad_row = i;
            continue;
        }
        if (d == 0.0) continue;                   /* an empty row: no shift reaches it */
        for (int64_t p = h->row_ptr[i]; p < h->row_ptr[i + 1]; p++)
            if (p != h->diag[i]) off += fabs(sa_val[p]);
        if (off / fabs(d) > top) top = off / fabs(d);
    }
    s->top = KRILL_ILU_SHIFT_MARGIN * top > KRILL_ILU_PIVOT_TOL ? KRILL_ILU_SHIFT_MARGIN * top
                                                               : KRILL_ILU_PIVOT_TOL;
cleanup:
    return st;
}

double krill_ilu_shift_alpha(const krill_ilu_shift *s) { return s->frac * s->top; }

void krill_ilu_shift_values(const krill_ilu_shift *s, const krill_ilu_host *h,
                            const double *sa_val, double *out)
{
    const double alpha = krill_ilu_shift_alpha(s);
    memcpy(out, sa_val, (size_t)h->nnz * sizeof *out);
    if (alpha > 0.0)
        for (int32_t i = 0; i < h->n; i++) out[h->diag[i]] += alpha * s->scale[i];
}

int krill_ilu_shift_next(krill_ilu_shift *s, int refused)
{
    if (refused) {
        if (s->bad_row >= 0 || s->tries > KRILL_ILU_SHIFT_TRIES) return -1;
        if (s->tries == KRILL_ILU_SHIFT_TRIES) {
            s->frac = s->hi;
        } else {
            s->lo = s->frac;
            s->frac = 0.5 * (s->lo + s->hi);
        }
    } else {
        if (!(s->frac > 0.0) || s->tries >= KRILL_ILU_SHIFT_TRIES) return 0;
        s->hi = s->frac;
        s->frac = 0.5 * (s->lo + s->hi);
    }
    s->tries++;
    return 1;
}

krill_status krill_ilu_shift_refuse(const krill_ilu_shift *s, const krill_ilu_host *h,
                                    const char *name, const double *sa_val)
{
    char last[400];
    if (s->bad_row >= 0)
        return krill_error(KRILL_ERR_NUMERIC, "%s: a_ii = %.6g <= 0 in row %d (0-based) while "
                           "other diagonal entries are positive: the matrix is not definite, and "
                           "no diagonal shift A + alpha diag(A) gives IC(0) positive pivots; use "
                           "ilu0 with GMRES, or MINRES", name,
                           sa_val[h->diag[s->bad_row]], s->bad_row);
    snprintf(last, sizeof last, "%s", krill_last_error());
    return krill_error(KRILL_ERR_NUMERIC, "%s: no diagonal shift made the factorization "
                       "succeed: the largest, alpha = %.6g (A + alpha diag(A), every row "
                       "diagonally dominant; %d factorizations), still fails: %s", name,
                       krill_ilu_shift_alpha(s), s->tries + 1, last);
}
