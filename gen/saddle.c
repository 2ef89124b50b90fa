/* gen/saddle.c - stokes2d: the Stokes saddle-point system of a K x K MAC (staggered) grid.
 *
 *   [ A   B' ] [u]      A: the 5-point Laplacian (-h^2 Laplace) of each velocity
 *   [ B  -C I] [p]      component, Dirichlet (no-slip walls); B: minus the divergence
 *                       times h; C >= 0 a pressure penalty (default 0.01)
 *
 * The unit square is cut into K x K cells of side h = 1/K. Unknowns, in this order:
 *   u at the vertical faces inside the square: x = i h (1 <= i <= K-1), cell row j
 *     (0 <= j < K): row (i-1) + (K-1) j;                               (K-1) K of them
 *   v at the horizontal inside faces: cell column i, y = j h (1 <= j <= K-1):
 *     row nu + i + K (j-1);                                            K (K-1)
 *   p at the cell centres (i, j): row nu + nv + i + K j;               K^2
 * n = 3K^2 - 2K. The momentum rows are scaled by h^2 and the pressure is p h, so every
 * entry is an integer: A has 4 on the diagonal and -1 for each velocity neighbour of the
 * same component inside the square (a wall neighbour is a known zero, dropped); the
 * gradient B' puts p(cell after the face) - p(cell before it) in a velocity row; the
 * continuity row of cell (i, j) is B = -(u_right - u_left + v_top - v_bottom) over its
 * inside faces, so the matrix is exactly symmetric. With C > 0 the (2,2) block is -C I;
 * with C = 0 it is not stored (a KKT matrix without diagonal there) and the matrix is
 * singular: the constant pressure is in its null space.
 *
 * A is SPD and B has full row rank but for the constant, so the matrix is symmetric
 * indefinite with (K-1) 2K positive and K^2 negative eigenvalues (C > 0). MAC is inf-sup
 * stable: the Schur complement B A^{-1} B' has eigenvalues bounded away from 0 on
 * pressures of mean 0 independently of K, so MINRES needs O(K) iterations. Rows come out
 * with sorted columns: u, then v, then p. */
#include <math.h>

#include "gen/gen_impl.h"

/* The grid and the first row of each block. */
typedef struct mac_grid {
    int64_t K, nu, nv;
} mac_grid;

static int64_t u_row(const mac_grid *g, int64_t i, int64_t j) { return (i - 1) + (g->K - 1) * j; }
static int64_t v_row(const mac_grid *g, int64_t i, int64_t j) { return g->nu + i + g->K * (j - 1); }
static int64_t p_row(const mac_grid *g, int64_t i, int64_t j)
{
    return g->nu + g->nv + i + g->K * j;
}

static void put(krill_csr *a, int64_t *q, int64_t column, double value)
{
    a->col[*q] = (int32_t)column;
    a->val[*q] = value;
    (*q)++;
}

/* The row of a velocity unknown at face (i, j) of the component whose faces run 1..K-1 along
 * `along` (0: u, along x; 1: v, along y): the Laplacian, then the gradient entries. */
static void velocity_row(const mac_grid *g, krill_csr *a, int component, int64_t i, int64_t j)
{
    const int64_t K = g->K;
    /* position along the component's own direction (faces 1..K-1) and across (cells) */
    const int64_t f = component == 0 ? i : j, c = component == 0 ? j : i;
    const int64_t row = component == 0 ? u_row(g, i, j) : v_row(g, i, j);
    int64_t q = a->row_ptr[row];
    /* neighbours in row order: the y-neighbours are K-1 (u) or K (v) rows apart, the
     * x-neighbours 1 row apart; for u, x is along the faces, for v across the cells */
    const int64_t below_ok = component == 0 ? c > 0 : f > 1;
    const int64_t above_ok = component == 0 ? c < K - 1 : f < K - 1;
    const int64_t left_ok = component == 0 ? f > 1 : c > 0;
    const int64_t right_ok = component == 0 ? f < K - 1 : c < K - 1;
    const int64_t stride = component == 0 ? K - 1 : K;
    if (below_ok) put(a, &q, row - stride, -1.0);
    if (left_ok) put(a, &q, row - 1, -1.0);
    put(a, &q, row, 4.0);
    if (right_ok) put(a, &q, row + 1, -1.0);
    if (above_ok) put(a, &q, row + stride, -1.0);
    /* gradient: the cells before and after the face, in p's row order */
    put(a, &q, component == 0 ? p_row(g, i - 1, j) : p_row(g, i, j - 1), -1.0);
    put(a, &q, p_row(g, i, j), 1.0);
}

/* The continuity row of cell (i, j): its inside faces, then -C. */
static void pressure_row(const mac_grid *g, krill_csr *a, double c, int64_t i, int64_t j)
{
    const int64_t K = g->K, row = p_row(g, i, j);
    int64_t q = a->row_ptr[row];
    if (i > 0) put(a, &q, u_row(g, i, j), 1.0);          /* left face: -(-u_left) */
    if (i < K - 1) put(a, &q, u_row(g, i + 1, j), -1.0); /* right face */
    if (j > 0) put(a, &q, v_row(g, i, j), 1.0);          /* bottom face */
    if (j < K - 1) put(a, &q, v_row(g, i, j + 1), -1.0); /* top face */
    if (c > 0.0) put(a, &q, row, -c);
}

krill_status krill_gen_stokes2d(const krill_gen_args *args, krill_csr **csr)
{
    krill_status st = KRILL_OK;
    krill_csr *a = NULL;
    const int64_t K = args->integer[0];
    const double c = args->real[1];
    mac_grid g;
    int32_t bound = 0;
    int64_t n, nnz, row;
    KRILL_REQUIRE(K >= 2, "%s: K = %lld; the grid needs K >= 2 cells a side (a face inside)",
                  args->name, (long long)K);
    KRILL_TRY(krill_gen_rows(args, "3 x K x K", 3, K, K, &bound));   /* n < 3 K^2 */
    g.K = K;
    g.nu = (K - 1) * K;
    g.nv = K * (K - 1);
    n = g.nu + g.nv + K * K;
    /* Laplacian: 5 per row less one per wall neighbour (4K - 2 per component); gradient: 2 per
     * velocity row; continuity: 4 per cell less one per wall face; the -C diagonal */
    nnz = 5 * (g.nu + g.nv) - (8 * K - 4) + 2 * (g.nu + g.nv) + (4 * K * K - 4 * K) +
          (c > 0.0 ? K * K : 0);
    KRILL_TRY(krill_csr_create((int32_t)n, (int32_t)n, nnz, &a));
    a->row_ptr[0] = 0;
    for (row = 0; row < n; row++) {
        int64_t count;
        if (row < g.nu + g.nv) {
            const int component = row >= g.nu;
            const int64_t local = component ? row - g.nu : row;
            const int64_t along = component ? local / K + 1 : local % (K - 1) + 1;
            const int64_t across = component ? local % K : local / (K - 1);
            count = 3 + (along > 1) + (along < K - 1) + (across > 0) + (across < K - 1);
        } else {
            const int64_t cell = row - g.nu - g.nv, i = cell % K, j = cell / K;
            count = (i > 0) + (i < K - 1) + (j > 0) + (j < K - 1) + (c > 0.0);
        }
        a->row_ptr[row + 1] = a->row_ptr[row] + count;
    }
    for (int64_t j = 0; j < K; j++)
        for (int64_t i = 1; i < K; i++) velocity_row(&g, a, 0, i, j);
    for (int64_t j = 1; j < K; j++)
        for (int64_t i = 0; i < K; i++) velocity_row(&g, a, 1, i, j);
    for (int64_t j = 0; j < K; j++)
        for (int64_t i = 0; i < K; i++) pressure_row(&g, a, c, i, j);
    *csr = a;
    a = NULL;
cleanup:
    krill_csr_destroy(&a);
    return st;
}
