/* gen/elasticity.c - elasticity3d:NX,NY,NZ, a cantilever in 3D linear elasticity.
 *
 * Problem: find the displacement u of the box [0,NX] x [0,NY] x [0,NZ] (unit-cube
 * elements, h = KRILL_ELASTICITY_H) made of an isotropic material (E = 1, nu = 0.3, see
 * gen_impl.h), with u = 0 on the face x = 0 (the clamp) and traction-free elsewhere:
 *     a(u, v) = integral of eps(v)' D eps(u) dV,
 * discretized with trilinear hexahedra (Q1, 8 nodes, 24 dofs) on the NX x NY x NZ grid of
 * elements. The element stiffness K_e = integral of B' D B dV uses 2x2x2 Gauss quadrature
 * (exact for Q1 on a cube: the integrand is at most quadratic in each coordinate).
 *
 * Numbering: node (ix, iy, iz), 0 <= ix <= NX, 0 <= iy <= NY, 0 <= iz <= NZ. The clamped
 * nodes (ix = 0) are eliminated (their rows and columns removed), so the free nodes are
 * ix = 1..NX, numbered lexicographically with x fastest:
 *     node = (ix - 1) + NX * (iy + (NY + 1) * iz),   dof = 3 * node + c  (c = 0, 1, 2: x, y, z)
 * giving n = 3 * NX * (NY + 1) * (NZ + 1) rows. The matrix is SPD (the clamp removes the six
 * rigid-body modes).
 *
 * Pattern: row (node, c) couples with the 3 dofs of every free node of the up-to-27 nodes
 * around it (up to 81 entries). We keep this full structural pattern even where an entry
 * cancels to zero when the adjacent elements are summed (it is then stored as 0.0), as FEM
 * codes do: the pattern depends only on the mesh, so new values (another material) fit it.
 *
 * Assembly is direct into CSR: on a uniform grid every element has the same K_e, so the
 * 3x3 block coupling a node to its neighbour at offset d depends only on d and on which of
 * the node's adjacent elements exist (per axis: only above, both, only below). Those
 * 27 x 27 blocks are summed once from K_e; each row then copies its blocks in column
 * order. No triplets, no sort; memory is the CSR itself. Adjacent elements are always
 * summed in the same global order (z, then y, then x; lower before upper), so the block of
 * (i, j) is the exact transpose of the block of (j, i): the matrix is exactly symmetric. */
#include <math.h>
#include <string.h>

#include "gen/gen_impl.h"

void krill_elasticity_element(double ke[24][24])
{
    const double E = KRILL_ELASTICITY_E, nu = KRILL_ELASTICITY_NU, h = KRILL_ELASTICITY_H;
    const double lambda = E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu));
    const double mu = E / (2.0 * (1.0 + nu));
    /* D in Voigt order (xx, yy, zz, yz, xz, xy), engineering shear strains. */
    double d[6][6];
    memset(d, 0, sizeof d);
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++)
            d[r][c] = lambda;
        d[r][r] = lambda + 2.0 * mu;
        d[r + 3][r + 3] = mu;
    }
    /* Reference cube [-1,1]^3 -> element [0,h]^3: x = h*(xi + 1)/2, so d/dx = (2/h) d/dxi
     * and det J = (h/2)^3. Gauss points +-1/sqrt(3), weights 1. */
    const double g = 1.0 / sqrt(3.0), detj = (h / 2.0) * (h / 2.0) * (h / 2.0);
    memset(ke, 0, 24 * 24 * sizeof(double));
    for (int q = 0; q < 8; q++) {
        const double xi[3] = {(q & 1) ? g : -g, (q & 2) ? g : -g, (q & 4) ? g : -g};
        /* grad[a][k] = dN_a/dx_k with N_a = prod_k (1 + xi_k s_ak)/2, s_ak = +-1. */
        double grad[8][3];
        for (int a = 0; a < 8; a++) {
            double s[3], f[3];
            for (int k = 0; k < 3; k++) {
                s[k] = ((a >> k) & 1) ? 1.0 : -1.0;
                f[k] = 0.5 * (1.0 + xi[k] * s[k]);
            }
            grad[a][0] = (2.0 / h) * 0.5 * s[0] * f[1] * f[2];
            grad[a][1] = (2.0 / h) * 0.5 * s[1] * f[0] * f[2];
            grad[a][2] = (2.0 / h) * 0.5 * s[2] * f[0] * f[1];
        }
        /* B (6 x 24): strain = B * u_e. */
        double b[6][24];
        memset(b, 0, sizeof b);
        for (int a = 0; a < 8; a++) {
            const double gx = grad[a][0], gy = grad[a][1], gz = grad[a][2];
            b[0][3 * a + 0] = gx;
            b[1][3 * a + 1] = gy;
            b[2][3 * a + 2] = gz;
            b[3][3 * a + 1] = gz;
            b[3][3 * a + 2] = gy;
            b[4][3 * a + 0] = gz;
            b[4][3 * a + 2] = gx;
            b[5][3 * a + 0] = gy;
            b[5][3 * a + 1] = gx;
        }
        double db[6][24];
        for (int r = 0; r < 6; r++)
            for (int j = 0; j < 24; j++) {
                double sum = 0.0;
                for (int k = 0; k < 6; k++)
                    sum += d[r][k] * b[k][j];
                db[r][j] = sum;
            }
        for (int i = 0; i < 24; i++)
            for (int j = i; j < 24; j++) {
                double sum = 0.0;
                for (int k = 0; k < 6; k++)
                    sum += b[k][i] * db[k][j];
                ke[i][j] += detj * sum;           /* weight 1 */
            }
    }
    for (int i = 0; i < 24; i++)
        for (int j = 0; j < i; j++)
            ke[i][j] = ke[j][i];
}

/* Per axis, where a node sits among the elements: only the element above it exists
 * (at coordinate 0), both exist (interior), or only the one below (at the far face). */
enum { AXIS_LOW_FACE = 0, AXIS_INTERIOR = 1, AXIS_HIGH_FACE = 2 };

static int axis_class(int64_t i, int64_t n_elements)
{
    return i == 0 ? AXIS_LOW_FACE : (i == n_elements ? AXIS_HIGH_FACE : AXIS_INTERIOR);
}

/* blocks[node class][offset][r][c]: the 3x3 coupling of a node (class = cx + 3cy + 9cz)
 * with its neighbour at offset (dx, dy, dz) in {-1,0,1}^3 (offset = (dx+1) + 3(dy+1) +
 * 9(dz+1)); zero where the two nodes share no element. */
typedef struct elasticity_blocks {
    double b[27][27][3][3];
} elasticity_blocks;

/* Entries that cancel exactly between adjacent elements (e.g. the x-y coupling of two
 * nodes along x, inside the body) come out of floating point as round-off, below 1e-16 of
 * the largest entry; they are set to exactly 0. True nonzeros are rational combinations of
 * lambda and mu no smaller than ~3e-3 of the largest entry, so the relative threshold
 * FLUSH_RELATIVE cannot touch one. */
#define FLUSH_RELATIVE 1e-12

static void elasticity_sum_blocks(elasticity_blocks *t)
{
    double ke[24][24];
    krill_elasticity_element(ke);
    double ke_max = 0.0;
    for (int i = 0; i < 24; i++)
        for (int j = 0; j < 24; j++)
            ke_max = fmax(ke_max, fabs(ke[i][j]));
    memset(t, 0, sizeof *t);
    for (int cls = 0; cls < 27; cls++) {
        const int axis_cls[3] = {cls % 3, (cls / 3) % 3, cls / 9};
        for (int off = 0; off < 27; off++) {
            const int d[3] = {off % 3 - 1, (off / 3) % 3 - 1, off / 9 - 1};
            /* Per axis, the node's local coordinate in each adjacent element containing
             * both nodes: the element below (the node is its local 1, the neighbour its
             * d + 1) and the element above (the node is 0, the neighbour d). */
            int n_choice[3], node_local[3][2], nb_local[3][2];
            for (int k = 0; k < 3; k++) {
                n_choice[k] = 0;
                if (axis_cls[k] != AXIS_LOW_FACE && d[k] <= 0) {
                    node_local[k][n_choice[k]] = 1;
                    nb_local[k][n_choice[k]] = d[k] + 1;
                    n_choice[k]++;
                }
                if (axis_cls[k] != AXIS_HIGH_FACE && d[k] >= 0) {
                    node_local[k][n_choice[k]] = 0;
                    nb_local[k][n_choice[k]] = d[k];
                    n_choice[k]++;
                }
            }
            for (int ez = 0; ez < n_choice[2]; ez++)
                for (int ey = 0; ey < n_choice[1]; ey++)
                    for (int ex = 0; ex < n_choice[0]; ex++) {
                        const int a = node_local[0][ex] + 2 * node_local[1][ey] +
                                      4 * node_local[2][ez];
                        const int bn = nb_local[0][ex] + 2 * nb_local[1][ey] +
                                       4 * nb_local[2][ez];
                        for (int r = 0; r < 3; r++)
                            for (int c = 0; c < 3; c++)
                                t->b[cls][off][r][c] += ke[3 * a + r][3 * bn + c];
                    }
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++)
                    if (fabs(t->b[cls][off][r][c]) <= FLUSH_RELATIVE * ke_max)
                        t->b[cls][off][r][c] = 0.0;
        }
    }
}

/* Offsets of a node along one axis that stay in [lo, hi]: first and last of -1, 0, 1. */
static void axis_range(int64_t i, int64_t lo, int64_t hi, int *first, int *last)
{
    *first = i > lo ? -1 : 0;
    *last = i < hi ? 1 : 0;
}

krill_status krill_gen_elasticity3d(const krill_gen_args *args, krill_csr **out)
{
    krill_status st = KRILL_OK;
    krill_csr *a = NULL;
    elasticity_blocks *blocks = NULL;
    int32_t n = 0;
    const int64_t NX = args->integer[0], NY = args->integer[1], NZ = args->integer[2];
    KRILL_TRY(krill_gen_rows(args, "3*NX x (NY+1) x (NZ+1)", 3 * NX, NY + 1, NZ + 1, &n));
    const int64_t n_nodes = n / 3, line = NX, plane = NX * (NY + 1);

    /* Entries per row: 3 x the free neighbour nodes, whose count is a product over the
     * axes of the offsets that stay inside (x stays in [1, NX]: ix = 0 is clamped). Summed
     * over the nodes the product factors: along x, sum over ix = 1..NX of
     * 1 + [ix > 1] + [ix < NX] = 3NX - 2; along y, 3NY + 1; along z, 3NZ + 1; and each node
     * has 3 rows. */
    const int64_t nnz = 9 * (3 * NX - 2) * (3 * NY + 1) * (3 * NZ + 1);
    KRILL_TRY(krill_csr_create(n, n, nnz, &a));
    KRILL_ALLOC(blocks, 1);
    elasticity_sum_blocks(blocks);

    a->row_ptr[0] = 0;
    for (int64_t node = 0; node < n_nodes; node++) {
        const int64_t ix = 1 + node % line, iy = (node / line) % (NY + 1), iz = node / plane;
        int x0, x1, y0, y1, z0, z1;
        axis_range(ix, 1, NX, &x0, &x1);
        axis_range(iy, 0, NY, &y0, &y1);
        axis_range(iz, 0, NZ, &z0, &z1);
        const int64_t per_row = 3 * (int64_t)(x1 - x0 + 1) * (y1 - y0 + 1) * (z1 - z0 + 1);
        for (int r = 0; r < 3; r++)
            a->row_ptr[3 * node + r + 1] = a->row_ptr[3 * node + r] + per_row;
    }

#pragma omp parallel for schedule(static)
    for (int64_t node = 0; node < n_nodes; node++) {
        const int64_t ix = 1 + node % line, iy = (node / line) % (NY + 1), iz = node / plane;
        const int cls = axis_class(ix, NX) + 3 * axis_class(iy, NY) + 9 * axis_class(iz, NZ);
        int x0, x1, y0, y1, z0, z1;
        axis_range(ix, 1, NX, &x0, &x1);
        axis_range(iy, 0, NY, &y0, &y1);
        axis_range(iz, 0, NZ, &z0, &z1);
        for (int r = 0; r < 3; r++) {
            int64_t p = a->row_ptr[3 * node + r];
            for (int dz = z0; dz <= z1; dz++)
                for (int dy = y0; dy <= y1; dy++)
                    for (int dx = x0; dx <= x1; dx++) {
                        const int64_t nb = node + dx + line * dy + plane * dz;
                        const double *block =
                            blocks->b[cls][(dx + 1) + 3 * (dy + 1) + 9 * (dz + 1)][r];
                        for (int c = 0; c < 3; c++) {
                            a->col[p] = (int32_t)(3 * nb + c);
                            a->val[p] = block[c];
                            p++;
                        }
                    }
        }
    }
    *out = a;
    a = NULL;
cleanup:
    krill_free(blocks);
    krill_csr_destroy(&a);
    return st;
}
