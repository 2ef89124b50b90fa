/* gen/stencil.c - 7-point finite differences on a K x K x K grid: poisson3d and convdiff3d.
 *
 * Unknowns are the interior grid points (i, j, k), 0 <= i, j, k < K, numbered
 * lexicographically with i fastest: row = i + K*(j + K*k). Dirichlet boundary: a neighbour
 * outside the grid is a known boundary value, so its entry is dropped (it moves to the
 * right-hand side). Each row's columns come out sorted: k-1, j-1, i-1, self, i+1, j+1, k+1.
 *
 * poisson3d:K is -Laplace(u) scaled by h^2: diagonal 6, each neighbour -1. Interior rows
 * sum to 0, boundary rows to the number of dropped neighbours (> 0): symmetric, weakly
 * diagonally dominant and irreducible, hence SPD.
 *
 * convdiff3d:K,PE is -eps*Laplace(u) + b . grad(u) with b = (b0, b0, b0), b0 > 0, scaled by
 * h^2/eps, with central differences for diffusion and first-order upwind differences for
 * convection. With the cell Peclet number PE = b0*h/eps, each direction adds
 * PE*(u_P - u_upwind), where the upwind neighbour is the one at the lower index (the flow
 * goes towards +x, +y, +z). Row P:
 *     diagonal                     6 + 3*PE
 *     lower neighbours (i-1, j-1, k-1)   -1 - PE     (upwind)
 *     upper neighbours (i+1, j+1, k+1)   -1          (downwind)
 * Interior rows sum to 0; the matrix is a nonsymmetric, weakly diagonally dominant,
 * irreducible M-matrix, hence nonsingular, and symmetric only for PE = 0 (which is
 * poisson3d). PE defaults to 1. */
#include <math.h>

#include "gen/gen_impl.h"

/* The three coefficients of one 7-point operator. */
typedef struct stencil7 {
    double diag;
    double lower;            /* at i-1, j-1, k-1 */
    double upper;            /* at i+1, j+1, k+1 */
} stencil7;

/* Store entry (column, value) at position *p and advance it. */
static inline void stencil_put(krill_csr *a, int64_t *p, int64_t column, double value)
{
    a->col[*p] = (int32_t)column;
    a->val[*p] = value;
    (*p)++;
}

static krill_status stencil_build(const krill_gen_args *args, int64_t k_side, stencil7 s,
                                  krill_csr **out)
{
    krill_status st = KRILL_OK;
    krill_csr *a = NULL;
    int32_t n = 0;
    KRILL_TRY(krill_gen_rows(args, "K x K x K", k_side, k_side, k_side, &n));
    const int64_t K = k_side, plane = K * K;
    /* Each of the 6 directions loses its K^2 boundary points. */
    const int64_t nnz = 7 * (int64_t)n - 6 * plane;
    KRILL_TRY(krill_csr_create(n, n, nnz, &a));

    /* Row counts are 1 + the neighbours inside the grid; offsets by a running sum. */
    a->row_ptr[0] = 0;
    for (int64_t row = 0; row < n; row++) {
        const int64_t i = row % K, j = (row / K) % K, k = row / plane;
        const int64_t count = 1 + (i > 0) + (i < K - 1) + (j > 0) + (j < K - 1) + (k > 0) +
                              (k < K - 1);
        a->row_ptr[row + 1] = a->row_ptr[row] + count;
    }

    /* One grid line (fixed j, k) per iteration; the entries of a row in column order. */
#pragma omp parallel for schedule(static)
    for (int64_t line = 0; line < plane; line++) {
        const int64_t j = line % K, k = line / K;
        for (int64_t i = 0; i < K; i++) {
            const int64_t row = i + K * line;
            int64_t p = a->row_ptr[row];
            if (k > 0)
                stencil_put(a, &p, row - plane, s.lower);
            if (j > 0)
                stencil_put(a, &p, row - K, s.lower);
            if (i > 0)
                stencil_put(a, &p, row - 1, s.lower);
            stencil_put(a, &p, row, s.diag);
            if (i < K - 1)
                stencil_put(a, &p, row + 1, s.upper);
            if (j < K - 1)
                stencil_put(a, &p, row + K, s.upper);
            if (k < K - 1)
                stencil_put(a, &p, row + plane, s.upper);
        }
    }
    *out = a;
    a = NULL;
cleanup:
    krill_csr_destroy(&a);
    return st;
}

krill_status krill_gen_poisson3d(const krill_gen_args *args, krill_csr **csr)
{
    const stencil7 laplace = {.diag = 6.0, .lower = -1.0, .upper = -1.0};
    return stencil_build(args, args->integer[0], laplace, csr);
}

krill_status krill_gen_convdiff3d(const krill_gen_args *args, krill_csr **csr)
{
    krill_status st = KRILL_OK;
    const double pe = args->real[1];
    const stencil7 upwind = {.diag = 6.0 + 3.0 * pe, .lower = -1.0 - pe, .upper = -1.0};
    KRILL_REQUIRE(isfinite(upwind.diag), "%s: PE = %g is too large (6 + 3*PE overflows)",
                  args->name, pe);
    KRILL_TRY(stencil_build(args, args->integer[0], upwind, csr));
cleanup:
    return st;
}
