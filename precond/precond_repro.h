/* precond/precond_repro.h - the rows of the reproducible preconditioner applies (the apply_repro
 * entries of precond_impl.h's table), one copy for the host and the device, built on
 * ozaki/ozaki_row.h: the CPU loop and the GPU kernel of a preconditioner call the same
 * function per row, so they cannot differ.
 *
 * Every row sum is the correctly rounded value of its exact sum (ozaki_row.h: a function of
 * the multiset of its products alone, hence of neither thread count nor device nor term
 * order), and what follows the sum is one IEEE operation rounded to nearest on both devices
 * (a division, never contracted).
 *
 * Each row kind comes as the fast path's part for one of several lanes that split a row
 * (*_fast: the lanes merge their states with krill_oz_fast_merge), the exact path over the
 * whole row (*_exact: only for a row the fast path left undecided), and the two together for
 * one thread (*_row: what the CPU loops call).
 *
 * Scratch: acc holds KRILL_OZ_ROW_MAX_DIAG int64 for rows of at most KRILL_OZ_ROW_MAX_N
 * terms (a GPU thread's local array), KRILL_OZ_MAX_DIAG for longer ones (the CPU); only the
 * exact path uses it. */
#ifndef KRILL_PRECOND_REPRO_H
#define KRILL_PRECOND_REPRO_H

#include "ozaki/ozaki_row.h"

/* a / b rounded to nearest on both devices (the host code is IEEE double) */
#ifdef __CUDA_ARCH__
#define KRILL_PC_DIV(a, b) __ddiv_rn((a), (b))
#else
#define KRILL_PC_DIV(a, b) ((a) / (b))
#endif

/* ---- block-Jacobi rows: sum_{k < b} m[k] r[k], correctly rounded (z_g, with m the row of
 * Binv_k that gives z_g and r the block's b entries of the right-hand side) ---------------- */

/* The fast path's part of lane `lane` of `lanes` that split the row: the terms k = lane,
 * lane + lanes, ... (one thread: lane 0 of 1). */
KRILL_OZ_HD void krill_pc_repro_dense_fast(krill_oz_fast *f, int b, const double *m,
                                           const double *r, int lane, int lanes)
{
    for (int k = lane; k < b; k += lanes) krill_oz_fast_add(f, m[k], r[k]);
}

/* The exact path over the whole row (a row the fast path left undecided). */
KRILL_OZ_HD double krill_pc_repro_dense_exact(int b, const double *m, const double *r,
                                              int64_t *acc)
{
    krill_oz_row row;
    krill_oz_row_init(&row);
    for (int k = 0; k < b; k++) krill_oz_row_stats(&row, m[k], r[k]);
    if (krill_oz_row_begin(&row, acc) > 0)
        for (int k = 0; k < b; k++) krill_oz_row_add(&row, m[k], r[k], acc);
    return krill_oz_row_end(&row, acc);
}

/* The row by one thread: the fast path, else the exact path. */
KRILL_OZ_HD double krill_pc_repro_dense_row(int b, const double *m, const double *r,
                                            int64_t *acc)
{
    krill_oz_fast f;
    double s;
    krill_oz_fast_init(&f);
    krill_pc_repro_dense_fast(&f, b, m, r, 0, 1);
    return krill_oz_fast_end(&f, &s) ? s : krill_pc_repro_dense_exact(b, m, r, acc);
}

/* ---- triangular-solve rows: x_i = RN(rhs - sum_{k in [lo, hi)} val[k] x[col[k]]) with the
 * row sum correctly rounded (the terms (1, rhs) and (-val_k, x_{col_k}): negation is exact),
 * then divided by *diag (one more rounding) unless diag is NULL (a unit diagonal) -------- */

/* The fast path's part of lane `lane` of `lanes` that split the row: the term (1, rhs) on
 * lane 0 (rhs is not read on the others), the entries k = lo + lane, lo + lane + lanes, ... */
KRILL_OZ_HD void krill_pc_repro_tri_fast(krill_oz_fast *f, double rhs, int64_t lo, int64_t hi,
                                         const double *val, const int32_t *col,
                                         const double *x, int lane, int lanes)
{
    if (lane == 0) krill_oz_fast_add(f, 1.0, rhs);
    for (int64_t k = lo + lane; k < hi; k += lanes) krill_oz_fast_add(f, -val[k], x[col[k]]);
}

/* The exact path of the row sum rhs - sum_k val[k] x[col[k]] (not divided), given the row's
 * whole fast state f: the statistics, which decide when f's third level was summed exactly
 * (krill_oz_fast_exact), else the digit products. */
KRILL_OZ_HD double krill_pc_repro_tri_exact(double rhs, int64_t lo, int64_t hi,
                                            const double *val, const int32_t *col,
                                            const double *x, const krill_oz_fast *f,
                                            int64_t *acc)
{
    krill_oz_row row;
    double s;
    krill_oz_row_init(&row);
    krill_oz_row_stats(&row, 1.0, rhs);
    for (int64_t k = lo; k < hi; k++) krill_oz_row_stats(&row, -val[k], x[col[k]]);
    if (krill_oz_fast_exact(f, &row, &s)) return s;
    if (krill_oz_row_begin(&row, acc) > 0) {
        krill_oz_row_add(&row, 1.0, rhs, acc);
        for (int64_t k = lo; k < hi; k++) krill_oz_row_add(&row, -val[k], x[col[k]], acc);
    }
    return krill_oz_row_end(&row, acc);
}

/* x_i from the correctly rounded row sum s: s / *diag, or s for a unit diagonal */
KRILL_OZ_HD double krill_pc_repro_tri_divide(double s, const double *diag)
{
    return diag ? KRILL_PC_DIV(s, *diag) : s;
}

/* The row by one thread: the fast path, else the exact path; then the division. */
KRILL_OZ_HD double krill_pc_repro_tri_row(double rhs, int64_t lo, int64_t hi, const double *val,
                                          const int32_t *col, const double *x,
                                          const double *diag, int64_t *acc)
{
    krill_oz_fast f;
    double s;
    krill_oz_fast_init(&f);
    krill_pc_repro_tri_fast(&f, rhs, lo, hi, val, col, x, 0, 1);
    if (!krill_oz_fast_end(&f, &s))
        s = krill_pc_repro_tri_exact(rhs, lo, hi, val, col, x, &f, acc);
    return krill_pc_repro_tri_divide(s, diag);
}

#endif
