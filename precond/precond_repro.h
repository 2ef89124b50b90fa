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
 * Scratch: acc holds KRILL_OZ_ROW_MAX_DIAG int64 for rows of at most KRILL_OZ_ROW_MAX_N
 * terms (a GPU thread's local array), KRILL_OZ_MAX_DIAG for longer ones (the CPU). */
#ifndef KRILL_PRECOND_REPRO_H
#define KRILL_PRECOND_REPRO_H

#include "ozaki/ozaki_row.h"

/* a / b rounded to nearest on both devices (the host code is IEEE double) */
#ifdef __CUDA_ARCH__
#define KRILL_PC_DIV(a, b) __ddiv_rn((a), (b))
#else
#define KRILL_PC_DIV(a, b) ((a) / (b))
#endif

/* sum_{k < b} m[k] r[k], correctly rounded: one row of a block-Jacobi apply, z_g with m the
 * row of Binv_k that gives z_g and r the block's b entries of the right-hand side. */
KRILL_OZ_HD double krill_pc_repro_dense_row(int b, const double *m, const double *r,
                                            int64_t *acc)
{
    krill_oz_row row;
    krill_oz_params p;
    int nd;
    krill_oz_row_init(&row);
    for (int k = 0; k < b; k++) krill_oz_row_stats(&row, m[k], r[k]);
    nd = krill_oz_row_begin(&row, &p);
    for (int c = 0; c < nd; c++) acc[c] = 0;
    if (nd > 0)
        for (int k = 0; k < b; k++) krill_oz_row_add(&p, m[k], r[k], acc);
    return krill_oz_row_end(&row, &p, acc);
}

/* One row of a triangular solve, x_i = RN(rhs - sum_{k in [lo, hi)} val[k] x[col[k]]) with the
 * row sum correctly rounded (the terms (1, rhs) and (-val_k, x_{col_k}): negation is exact),
 * then divided by *diag (one more rounding) unless diag is NULL (a unit diagonal). */
KRILL_OZ_HD double krill_pc_repro_tri_row(double rhs, int64_t lo, int64_t hi, const double *val,
                                          const int32_t *col, const double *x,
                                          const double *diag, int64_t *acc)
{
    krill_oz_row row;
    krill_oz_params p;
    double s;
    int nd;
    krill_oz_row_init(&row);
    krill_oz_row_stats(&row, 1.0, rhs);
    for (int64_t k = lo; k < hi; k++) krill_oz_row_stats(&row, -val[k], x[col[k]]);
    nd = krill_oz_row_begin(&row, &p);
    for (int c = 0; c < nd; c++) acc[c] = 0;
    if (nd > 0) {
        krill_oz_row_add(&p, 1.0, rhs, acc);
        for (int64_t k = lo; k < hi; k++) krill_oz_row_add(&p, -val[k], x[col[k]], acc);
    }
    s = krill_oz_row_end(&row, &p, acc);
    return diag ? KRILL_PC_DIV(s, *diag) : s;
}

#endif
