/* tests/test_gen.c - the generators of krill_gen: sizes and nonzero counts (counted here
 * by brute force, and the SpMV paper's Table 2 at its sizes), entries against independent
 * oracles (stencils rebuilt point by point; elasticity assembled element by element
 * through triplets), the element stiffness against closed-form integrals and its rigid
 * modes and rank, symmetry, definiteness, determinism across calls and thread counts,
 * and the messages of bad specs. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen_impl.h"
#include "testutil.h"

/* ---- helpers ---------------------------------------------------------------------------- */

static krill_csr *gen_ok(const char *spec)
{
    krill_csr *a = NULL;
    CHECK_OK(krill_gen(spec, &a));
    if (a != NULL)
        CHECK_OK(krill_csr_check(a, spec));
    return a;
}

static int csr_identical(const krill_csr *a, const krill_csr *b)
{
    return a->n_rows == b->n_rows && a->n_cols == b->n_cols && a->nnz == b->nnz &&
           memcmp(a->row_ptr, b->row_ptr, ((size_t)a->n_rows + 1) * sizeof *a->row_ptr) == 0 &&
           memcmp(a->col, b->col, (size_t)a->nnz * sizeof *a->col) == 0 &&
           memcmp(a->val, b->val, (size_t)a->nnz * sizeof *a->val) == 0;
}

/* Value of (i, j), 0 if not stored. */
static double csr_at(const krill_csr *a, int32_t i, int32_t j)
{
    for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
        if (a->col[p] == j)
            return a->val[p];
    return 0.0;
}

static double csr_max_abs(const krill_csr *a)
{
    double m = 0.0;
    for (int64_t p = 0; p < a->nnz; p++)
        m = fmax(m, fabs(a->val[p]));
    return m;
}

/* Every diagonal stored and strictly larger than the sum of |off-diagonals| of its row. */
static int rows_diagonally_dominant(const krill_csr *a)
{
    for (int32_t i = 0; i < a->n_rows; i++) {
        double diag = 0.0, off = 0.0;
        int has_diag = 0;
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++) {
            if (a->col[p] == i) {
                diag = a->val[p];
                has_diag = 1;
            } else {
                off += fabs(a->val[p]);
            }
        }
        if (!has_diag || !(diag > off))
            return 0;
    }
    return 1;
}

static int diagonal_positive(const krill_csr *a)
{
    for (int32_t i = 0; i < a->n_rows; i++)
        if (!(csr_at(a, i, i) > 0.0))
            return 0;
    return 1;
}

/* ---- poisson3d and convdiff3d ------------------------------------------------------------ */

/* Rebuild row by row from the 7 offsets and compare every entry (pattern and value). */
static void check_stencil(const krill_csr *a, int K, double diag, double lower, double upper)
{
    static const int offsets[7][3] = {{0, 0, -1}, {0, -1, 0}, {-1, 0, 0}, {0, 0, 0},
                                      {1, 0, 0},  {0, 1, 0},  {0, 0, 1}};
    int64_t nnz = 0;
    int mismatches = 0;
    CHECK(a->n_rows == K * K * K && a->n_cols == K * K * K);
    for (int k = 0; k < K; k++)
        for (int j = 0; j < K; j++)
            for (int i = 0; i < K; i++) {
                const int32_t row = i + K * (j + K * k);
                int64_t p = a->row_ptr[row];
                for (int o = 0; o < 7; o++) {
                    const int ii = i + offsets[o][0], jj = j + offsets[o][1],
                              kk = k + offsets[o][2];
                    if (ii < 0 || ii >= K || jj < 0 || jj >= K || kk < 0 || kk >= K)
                        continue;
                    const double want = o == 3 ? diag : (o < 3 ? lower : upper);
                    if (p >= a->row_ptr[row + 1] || a->col[p] != ii + K * (jj + K * kk) ||
                        a->val[p] != want)
                        mismatches++;
                    p++;
                    nnz++;
                }
                if (p != a->row_ptr[row + 1])
                    mismatches++;
            }
    CHECK(mismatches == 0);
    CHECK(a->nnz == nnz);
}

static void test_poisson(void)
{
    const int sizes[] = {1, 2, 3, 6};
    for (int s = 0; s < 4; s++) {
        char spec[32];
        snprintf(spec, sizeof spec, "poisson3d:%d", sizes[s]);
        krill_csr *a = gen_ok(spec);
        if (a == NULL)
            continue;
        const int K = sizes[s];
        check_stencil(a, K, 6.0, -1.0, -1.0);
        CHECK(krill_csr_is_symmetric(a));
        CHECK(diagonal_positive(a));
        /* interior rows sum to 0, boundary rows to a positive integer */
        int bad_sums = 0;
        for (int32_t r = 0; r < a->n_rows; r++) {
            const int i = r % K, j = (r / K) % K, k = r / (K * K);
            const int interior = i > 0 && i < K - 1 && j > 0 && j < K - 1 && k > 0 && k < K - 1;
            double sum = 0.0;
            for (int64_t p = a->row_ptr[r]; p < a->row_ptr[r + 1]; p++)
                sum += a->val[p];
            bad_sums += interior ? sum != 0.0 : !(sum >= 1.0);
        }
        CHECK(bad_sums == 0);
        krill_csr_destroy(&a);
    }
}

static void test_convdiff(void)
{
    krill_csr *a = gen_ok("convdiff3d:5");   /* PE defaults to 1 */
    if (a != NULL) {
        check_stencil(a, 5, 9.0, -2.0, -1.0);
        CHECK(!krill_csr_is_symmetric(a));
        /* weakly dominant rows, interior row sums 0 */
        int bad = 0;
        for (int32_t r = 0; r < a->n_rows; r++) {
            double sum = 0.0;
            for (int64_t p = a->row_ptr[r]; p < a->row_ptr[r + 1]; p++)
                sum += a->val[p];
            bad += sum < 0.0;
        }
        CHECK(bad == 0);
        CHECK(csr_at(a, 62, 62) == 9.0 && csr_at(a, 62, 61) == -2.0 && csr_at(a, 62, 63) == -1.0);
        krill_csr_destroy(&a);
    }
    a = gen_ok("convdiff3d:4,2.5");
    if (a != NULL) {
        check_stencil(a, 4, 6.0 + 7.5, -3.5, -1.0);
        CHECK(!krill_csr_is_symmetric(a));
        krill_csr_destroy(&a);
    }
    a = gen_ok("convdiff3d:4,0");   /* no convection: the Laplacian */
    krill_csr *p = gen_ok("poisson3d:4");
    if (a != NULL && p != NULL)
        CHECK(csr_identical(a, p));
    krill_csr_destroy(&a);
    krill_csr_destroy(&p);
}

/* ---- elasticity element ------------------------------------------------------------------ */

/* Eigenvalues of the symmetric n x n matrix m (destroyed) by cyclic Jacobi rotations. */
static void symmetric_eigenvalues(int n, double *m, double *eig)
{
    for (int sweep = 0; sweep < 100; sweep++) {
        double off = 0.0;
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++)
                off += m[p * n + q] * m[p * n + q];
        if (off < 1e-30)
            break;
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++) {
                if (m[p * n + q] == 0.0)
                    continue;
                const double theta = (m[q * n + q] - m[p * n + p]) / (2.0 * m[p * n + q]);
                const double t = (theta >= 0 ? 1.0 : -1.0) /
                                 (fabs(theta) + sqrt(theta * theta + 1.0));
                const double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
                for (int k = 0; k < n; k++) {   /* columns p, q */
                    const double mkp = m[k * n + p], mkq = m[k * n + q];
                    m[k * n + p] = c * mkp - s * mkq;
                    m[k * n + q] = s * mkp + c * mkq;
                }
                for (int k = 0; k < n; k++) {   /* rows p, q */
                    const double mpk = m[p * n + k], mqk = m[q * n + k];
                    m[p * n + k] = c * mpk - s * mqk;
                    m[q * n + k] = s * mpk + c * mqk;
                }
            }
    }
    for (int i = 0; i < n; i++)
        eig[i] = m[i * n + i];
}

/* Rigid mode `mode` (0-2: translation along x, y, z; 3-5: rotation about x, y, z) at the
 * point (x, y, z), component c. */
static double rigid_mode(int mode, double x, double y, double z, int c)
{
    const double pos[3] = {x, y, z};
    if (mode < 3)
        return c == mode ? 1.0 : 0.0;
    /* rotation about axis e_k: u = e_k x pos */
    const int k = mode - 3;
    const int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
    if (c == k1)
        return -pos[k2];
    if (c == k2)
        return pos[k1];
    return 0.0;
}

static void test_element(void)
{
    double ke[24][24];
    krill_elasticity_element(ke);
    const double E = KRILL_ELASTICITY_E, nu = KRILL_ELASTICITY_NU;
    const double lambda = E * nu / ((1 + nu) * (1 - 2 * nu)), mu = E / (2 * (1 + nu));
    /* Closed forms on the unit cube: node 0 at the origin, N0 = (1-x)(1-y)(1-z).
     * K[0][0] = int (lambda+2mu) N0x^2 + mu (N0y^2 + N0z^2) = (lambda + 4 mu)/9;
     * K[0][1] = (lambda + mu) int N0x N0y = (lambda + mu)/12;
     * K[0][3] (x of node 0, x of node 1 = (1,0,0)): int (lambda+2mu) N0x N1x
     *   + mu (N0y N1y + N0z N1z) = -(lambda+2mu)/9 + mu (1/18 + 1/18). */
    CHECK_CLOSE(ke[0][0], (lambda + 4 * mu) / 9, 1e-14);
    CHECK_CLOSE(ke[0][1], (lambda + mu) / 12, 1e-14);
    CHECK_CLOSE(ke[0][3], -(lambda + 2 * mu) / 9 + mu / 9, 1e-14);

    double kmax = 0.0;
    int asym = 0;
    for (int i = 0; i < 24; i++)
        for (int j = 0; j < 24; j++) {
            asym += ke[i][j] != ke[j][i];
            kmax = fmax(kmax, fabs(ke[i][j]));
        }
    CHECK(asym == 0);
    /* the six rigid-body modes are in the null space */
    double worst = 0.0;
    for (int mode = 0; mode < 6; mode++)
        for (int i = 0; i < 24; i++) {
            double s = 0.0;
            for (int b = 0; b < 8; b++)
                for (int c = 0; c < 3; c++)
                    s += ke[i][3 * b + c] *
                         rigid_mode(mode, b & 1, (b >> 1) & 1, (b >> 2) & 1, c);
            worst = fmax(worst, fabs(s));
        }
    CHECK(worst <= 1e-13 * kmax);
    /* positive semidefinite with rank 18 */
    double m[24 * 24], eig[24];
    memcpy(m, ke, sizeof m);
    symmetric_eigenvalues(24, m, eig);
    int zero = 0, positive = 0, negative = 0;
    for (int i = 0; i < 24; i++) {
        if (fabs(eig[i]) <= 1e-10 * kmax)
            zero++;
        else if (eig[i] > 0)
            positive++;
        else
            negative++;
    }
    CHECK(zero == 6 && positive == 18 && negative == 0);
}

/* ---- elasticity3d assembled -------------------------------------------------------------- */

/* The oracle: element-by-element assembly through triplets, clamped dofs skipped. */
static krill_csr *elasticity_by_elements(int NX, int NY, int NZ)
{
    double ke[24][24];
    krill_elasticity_element(ke);
    const int32_t n = 3 * NX * (NY + 1) * (NZ + 1);
    const int64_t cap = (int64_t)NX * NY * NZ * 576;
    int32_t *ri = malloc((size_t)cap * sizeof *ri), *ci = malloc((size_t)cap * sizeof *ci);
    double *v = malloc((size_t)cap * sizeof *v);
    krill_csr *a = NULL;
    int64_t t = 0;
    for (int ez = 0; ez < NZ; ez++)
        for (int ey = 0; ey < NY; ey++)
            for (int ex = 0; ex < NX; ex++) {
                int free_node[8];
                for (int l = 0; l < 8; l++) {
                    const int ix = ex + (l & 1), iy = ey + ((l >> 1) & 1),
                              iz = ez + ((l >> 2) & 1);
                    free_node[l] = ix == 0 ? -1 : (ix - 1) + NX * (iy + (NY + 1) * iz);
                }
                for (int la = 0; la < 8; la++)
                    for (int lb = 0; lb < 8; lb++) {
                        if (free_node[la] < 0 || free_node[lb] < 0)
                            continue;
                        for (int r = 0; r < 3; r++)
                            for (int c = 0; c < 3; c++) {
                                ri[t] = 3 * free_node[la] + r;
                                ci[t] = 3 * free_node[lb] + c;
                                v[t] = ke[3 * la + r][3 * lb + c];
                                t++;
                            }
                    }
            }
    CHECK_OK(krill_csr_from_triplets(n, n, t, ri, ci, v, &a));
    free(ri);
    free(ci);
    free(v);
    return a;
}

/* Free neighbour nodes counted one by one: the expected nnz. */
static int64_t elasticity_nnz_by_count(int NX, int NY, int NZ)
{
    int64_t nnz = 0;
    for (int iz = 0; iz <= NZ; iz++)
        for (int iy = 0; iy <= NY; iy++)
            for (int ix = 1; ix <= NX; ix++)
                for (int d = 0; d < 27; d++) {
                    const int jx = ix + d % 3 - 1, jy = iy + (d / 3) % 3 - 1, jz = iz + d / 9 - 1;
                    if (jx >= 1 && jx <= NX && jy >= 0 && jy <= NY && jz >= 0 && jz <= NZ)
                        nnz += 9;
                }
    return nnz;
}

static void test_elasticity(int NX, int NY, int NZ)
{
    char spec[64];
    snprintf(spec, sizeof spec, "elasticity3d:%d,%d,%d", NX, NY, NZ);
    krill_csr *a = gen_ok(spec);
    krill_csr *ref = elasticity_by_elements(NX, NY, NZ);
    if (a == NULL || ref == NULL)
        goto done;
    const int32_t n = 3 * NX * (NY + 1) * (NZ + 1);
    CHECK(a->n_rows == n && a->n_cols == n);
    CHECK(a->nnz == elasticity_nnz_by_count(NX, NY, NZ));
    int max_row = 0;
    for (int32_t i = 0; i < n; i++)
        if (a->row_ptr[i + 1] - a->row_ptr[i] > max_row)
            max_row = (int)(a->row_ptr[i + 1] - a->row_ptr[i]);
    CHECK(max_row <= 81);
    if (NX >= 3 && NY >= 2 && NZ >= 2)
        CHECK(max_row == 81);
    /* same pattern and values as the element-by-element assembly */
    const double amax = csr_max_abs(a);
    CHECK(a->nnz == ref->nnz);
    if (a->nnz == ref->nnz) {
        CHECK(memcmp(a->row_ptr, ref->row_ptr, ((size_t)n + 1) * sizeof *a->row_ptr) == 0);
        CHECK(memcmp(a->col, ref->col, (size_t)a->nnz * sizeof *a->col) == 0);
        double diff = 0.0;
        for (int64_t p = 0; p < a->nnz; p++)
            diff = fmax(diff, fabs(a->val[p] - ref->val[p]));
        CHECK(diff <= 1e-14 * amax);
    }
    CHECK(krill_csr_is_symmetric(a));
    CHECK(diagonal_positive(a));
    /* entries that cancel are exactly 0, not round-off */
    int residue = 0;
    for (int64_t p = 0; p < a->nnz; p++)
        residue += a->val[p] != 0.0 && fabs(a->val[p]) < 1e-12 * amax;
    CHECK(residue == 0);

    /* Rigid modes: rows of nodes not adjacent to the clamp (ix >= 2) see every neighbour,
     * so A * mode = 0 there; rows at ix = 1 lost the clamped columns. */
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    for (int mode = 0; mode < 6; mode++) {
        for (int32_t dof = 0; dof < n; dof++) {
            const int32_t node = dof / 3;
            const int ix = 1 + node % NX, iy = (node / NX) % (NY + 1), iz = node / (NX * (NY + 1));
            x[dof] = rigid_mode(mode, ix, iy, iz, dof % 3);
        }
        krill_csr_spmv_ref(a, 1.0, x, 0.0, y);
        double away = 0.0, near = 0.0;
        for (int32_t dof = 0; dof < n; dof++) {
            if ((dof / 3) % NX == 0)
                near = fmax(near, fabs(y[dof]));
            else
                away = fmax(away, fabs(y[dof]));
        }
        CHECK(away <= 1e-12 * amax * (1 + NX + NY + NZ));
        CHECK(near > 1e-3 * amax);
    }
    /* x'Ax > 0 for random x */
    for (int trial = 0; trial < 5; trial++) {
        tu_random(x, n, (uint64_t)(100 + trial));
        krill_csr_spmv_ref(a, 1.0, x, 0.0, y);
        double xax = 0.0;
        for (int32_t i = 0; i < n; i++)
            xax += x[i] * y[i];
        CHECK(xax > 0.0);
    }
    free(x);
    free(y);
done:
    krill_csr_destroy(&a);
    krill_csr_destroy(&ref);
}

/* ---- the paper's six matrices --------------------------------------------------------------- */

/* Entries (i, j) with |i - j| <= w, counted pair by pair. */
static int64_t band_nnz_by_count(int64_t n, int64_t w)
{
    int64_t nnz = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++)
            nnz += (i - j <= w && j - i <= w);
    return nnz;
}

static int band_pattern(const krill_csr *a, int64_t w)
{
    for (int32_t i = 0; i < a->n_rows; i++) {
        int32_t expect = (int32_t)(i - w > 0 ? i - w : 0);
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++, expect++)
            if (a->col[p] != expect)
                return 0;
        if (expect != (i + w < a->n_rows - 1 ? i + w : a->n_rows - 1) + 1)
            return 0;
    }
    return 1;
}

/* Each column appears exactly once, each row has one entry, values in [1, 2). */
static int is_scaled_permutation(const krill_csr *a)
{
    char *seen = calloc((size_t)a->n_cols, 1);
    int ok = a->nnz == a->n_rows;
    for (int32_t i = 0; i < a->n_rows && ok; i++) {
        ok = a->row_ptr[i + 1] - a->row_ptr[i] == 1 && !seen[a->col[a->row_ptr[i]]] &&
             a->val[i] >= 1.0 && a->val[i] < 2.0;
        seen[a->col[a->row_ptr[i]]] = 1;
    }
    free(seen);
    return ok;
}

/* Row 0 full, every other row only its diagonal, dominant by rows and by columns. */
static int band1x_shape(const krill_csr *a)
{
    const int32_t n = a->n_rows;
    int ok = a->row_ptr[1] == n && a->nnz == 2 * (int64_t)n - 1;
    for (int32_t j = 0; j < n && ok; j++)
        ok = a->col[j] == j;
    for (int32_t i = 1; i < n && ok; i++)
        ok = a->row_ptr[i + 1] - a->row_ptr[i] == 1 && a->col[a->row_ptr[i]] == i &&
             a->val[a->row_ptr[i]] > fabs(a->val[i]);    /* column i: diagonal vs row 0 */
    return ok && rows_diagonally_dominant(a);
}

/* 100 distinct columns per row (sorted and unique: krill_csr_check), the diagonal among
 * them, dominant rows. */
static int rand100_shape(const krill_csr *a)
{
    for (int32_t i = 0; i < a->n_rows; i++)
        if (a->row_ptr[i + 1] - a->row_ptr[i] != 100)
            return 0;
    return rows_diagonally_dominant(a);
}

static void test_paper_small(void)
{
    const int64_t band_sizes[] = {1, 2, 7, 51, 52, 120};
    const char *names[] = {"band1", "band3", "band101"};
    const int64_t widths[] = {0, 1, 50};
    for (int b = 0; b < 3; b++)
        for (int s = 0; s < 6; s++) {
            char spec[32];
            snprintf(spec, sizeof spec, "%s:%lld", names[b], (long long)band_sizes[s]);
            krill_csr *a = gen_ok(spec);
            if (a == NULL)
                continue;
            CHECK(a->n_rows == band_sizes[s] && a->n_cols == band_sizes[s]);
            CHECK(a->nnz == band_nnz_by_count(band_sizes[s], widths[b]));
            CHECK(band_pattern(a, widths[b]));
            CHECK(rows_diagonally_dominant(a));
            if (b == 0)
                for (int32_t i = 0; i < a->n_rows; i++)
                    CHECK(a->val[i] >= 1.0 && a->val[i] < 2.0);
            krill_csr_destroy(&a);
        }
    const char *rand1_specs[] = {"rand1:1", "rand1:2", "rand1:1000"};
    for (int s = 0; s < 3; s++) {
        krill_csr *a = gen_ok(rand1_specs[s]);
        if (a != NULL)
            CHECK(is_scaled_permutation(a));
        if (a != NULL && a->n_rows == 1000) {
            /* a random permutation has 1 fixed point on average, not ~n */
            int fixed = 0;
            for (int32_t i = 0; i < a->n_rows; i++)
                fixed += a->col[i] == i;
            CHECK(fixed < 10);
        }
        krill_csr_destroy(&a);
    }
    const char *rand100_specs[] = {"rand100:100", "rand100:101", "rand100:1000"};
    const int32_t rand100_n[] = {100, 101, 1000};
    for (int s = 0; s < 3; s++) {
        krill_csr *a = gen_ok(rand100_specs[s]);
        if (a == NULL)
            continue;
        CHECK(a->n_rows == rand100_n[s] && a->nnz == 100 * (int64_t)rand100_n[s]);
        CHECK(rand100_shape(a));
        if (a->n_rows == 1000) {
            /* uniform random columns: mean |i - j| is about n/3, a band's would be ~25 */
            double dist = 0.0;
            for (int32_t i = 0; i < a->n_rows; i++)
                for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
                    dist += fabs((double)a->col[p] - i);
            dist /= (double)(a->nnz - a->n_rows);
            CHECK(dist > 0.8 * 1000 / 3 && dist < 1.2 * 1000 / 3);
        }
        krill_csr_destroy(&a);
    }
    const char *band1x_specs[] = {"band1x:1", "band1x:2", "band1x:9"};
    const int32_t band1x_n[] = {1, 2, 9};
    for (int s = 0; s < 3; s++) {
        krill_csr *a = gen_ok(band1x_specs[s]);
        if (a == NULL)
            continue;
        CHECK(a->n_rows == band1x_n[s]);
        CHECK(band1x_shape(a));
        krill_csr_destroy(&a);
    }
    /* a different N is a different draw, not a prefix of the same matrix */
    krill_csr *a = gen_ok("band3:10"), *b = gen_ok("band3:11");
    if (a != NULL && b != NULL)
        CHECK(a->val[0] != b->val[0]);
    krill_csr_destroy(&a);
    krill_csr_destroy(&b);
}

/* Table 2 of the SpMV paper, verbatim. */
static void test_paper_table2(void)
{
    static const struct {
        const char *spec;
        int32_t rows;
        int64_t nnz;
    } table2[] = {
        {"band1", 2000000, 2000000},   {"band3", 2000000, 5999998},
        {"band101", 200000, 20197450}, {"rand1", 2000000, 2000000},
        {"rand100", 200000, 20000000}, {"band1x", 2000000, 3999999},
    };
    for (int m = 0; m < 6; m++) {
        const double t0 = krill_wtime();
        krill_csr *a = gen_ok(table2[m].spec);
        const double t = krill_wtime() - t0;
        if (a == NULL)
            continue;
        printf("  %-8s %9d rows %10lld nnz  built in %.3f s\n", table2[m].spec, a->n_rows,
               (long long)a->nnz, t);
        CHECK(a->n_rows == table2[m].rows && a->n_cols == table2[m].rows);
        CHECK(a->nnz == table2[m].nnz);
        if (strcmp(table2[m].spec, "band1") == 0)
            CHECK(band_pattern(a, 0));
        if (strcmp(table2[m].spec, "band3") == 0)
            CHECK(band_pattern(a, 1) && rows_diagonally_dominant(a));
        if (strcmp(table2[m].spec, "band101") == 0)
            CHECK(band_pattern(a, 50) && rows_diagonally_dominant(a));
        if (strcmp(table2[m].spec, "rand1") == 0)
            CHECK(is_scaled_permutation(a));
        if (strcmp(table2[m].spec, "rand100") == 0)
            CHECK(rand100_shape(a));
        if (strcmp(table2[m].spec, "band1x") == 0)
            CHECK(band1x_shape(a));
        /* ":N" at the default size is the same matrix */
        char spec[48];
        snprintf(spec, sizeof spec, "%s:%d", table2[m].spec, table2[m].rows);
        krill_csr *b = gen_ok(spec);
        if (b != NULL)
            CHECK(csr_identical(a, b));
        krill_csr_destroy(&a);
        krill_csr_destroy(&b);
    }
}

/* ---- determinism ---------------------------------------------------------------------------- */

static void test_determinism(void)
{
    const char *specs[] = {"poisson3d:7",   "convdiff3d:7,3", "elasticity3d:5,3,4",
                           "band1:5000",   "band3:5000",     "band101:3000",
                           "rand1:5000",   "rand100:3000",   "band1x:5000"};
    const int threads = omp_get_max_threads();
    for (int s = 0; s < 9; s++) {
        krill_csr *a = NULL, *b = NULL, *c = NULL;
        omp_set_num_threads(1);
        CHECK_OK(krill_gen(specs[s], &a));
        omp_set_num_threads(threads > 1 ? threads : 2);
        CHECK_OK(krill_gen(specs[s], &b));
        CHECK_OK(krill_gen(specs[s], &c));
        if (a != NULL && b != NULL && c != NULL) {
            CHECK(csr_identical(b, c));   /* the same call twice */
            CHECK(csr_identical(a, b));   /* 1 thread and several */
        }
        krill_csr_destroy(&a);
        krill_csr_destroy(&b);
        krill_csr_destroy(&c);
    }
    omp_set_num_threads(threads);
}

/* ---- bad specs ------------------------------------------------------------------------------ */

static void test_bad_specs(void)
{
    static const struct {
        const char *spec;
        const char *message;   /* a part the message must contain */
    } bad[] = {
        {"", "unknown generator ''"},
        {"foo:3", "unknown generator 'foo' in spec 'foo:3' (known: poisson3d, convdiff3d, "
                  "elasticity3d, stokes2d, band1, band3, band101, rand1, rand100, band1x)"},
        {"Poisson3d:3", "unknown generator 'Poisson3d'"},
        {"poisson3d", "poisson3d: missing K"},
        {"poisson3d:", "poisson3d: K must be a positive integer, got ''"},
        {"poisson3d:0", "K must be a positive integer, got '0'"},
        {"poisson3d:-3", "K must be a positive integer, got '-3'"},
        {"poisson3d:3.5", "K must be a positive integer, got '3.5'"},
        {"poisson3d: 3", "K must be a positive integer, got ' 3'"},
        {"poisson3d:3,4", "poisson3d: too many arguments"},
        {"poisson3d:99999999999", "K = 99999999999 is larger than 2147483647"},
        {"poisson3d:1291", "more than 2147483647"},
        {"convdiff3d:4,-1", "PE must be a non-negative number, got '-1'"},
        {"convdiff3d:4,abc", "PE must be a non-negative number, got 'abc'"},
        {"convdiff3d:4,1x", "PE must be a non-negative number, got '1x'"},
        {"convdiff3d:4,1e400", "convdiff3d: PE = 1e400 is not finite"},
        {"convdiff3d:4,1e308", "convdiff3d: PE = 1e+308 is too large"},
        {"convdiff3d:4,1,2", "convdiff3d: too many arguments"},
        {"convdiff3d", "convdiff3d: missing K"},
        {"elasticity3d:4,x,2", "elasticity3d: NY must be a positive integer, got 'x'"},
        {"elasticity3d:4,2", "elasticity3d: missing NZ"},
        {"elasticity3d:4,,2", "elasticity3d: NY must be a positive integer, got ''"},
        {"elasticity3d:4,2,2,2", "elasticity3d: too many arguments"},
        {"elasticity3d:1000,1000,1000", "elasticity3d: 3*NX x (NY+1) x (NZ+1)"},
        {"band1:0", "band1: N must be a positive integer, got '0'"},
        {"band3:abc", "band3: N must be a positive integer, got 'abc'"},
        {"band101:5,5", "band101: too many arguments"},
        {"rand1:2147483648", "rand1: N = 2147483648 is larger than 2147483647"},
        {"rand100:99", "rand100: N must be at least 100"},
        {"band1x:", "band1x: N must be a positive integer, got ''"},
    };
    const int count = (int)(sizeof bad / sizeof bad[0]);
    for (int i = 0; i < count; i++) {
        krill_csr dummy;
        krill_csr *a = &dummy;   /* not NULL: krill_gen must clear it */
        CHECK_STATUS(krill_gen(bad[i].spec, &a), KRILL_ERR_ARG);
        CHECK(a == NULL);
        if (strstr(krill_last_error(), bad[i].message) == NULL) {
            tu_checks++;
            tu_failures++;
            fprintf(stderr, "spec '%s': message '%s' lacks '%s'\n", bad[i].spec,
                    krill_last_error(), bad[i].message);
        }
    }
    krill_csr *a = NULL;
    CHECK_STATUS(krill_gen(NULL, &a), KRILL_ERR_ARG);
    CHECK_STATUS(krill_gen("poisson3d:2", NULL), KRILL_ERR_ARG);
}

/* Every help line names a generator that krill_gen knows. */
static void test_help(void)
{
    const char *const *lines = krill_gen_help();
    int count = 0;
    for (; lines[count] != NULL; count++) {
        char spec[64];
        const size_t name_len = strcspn(lines[count], ":[ ");
        snprintf(spec, sizeof spec, "%.*s:0", (int)name_len, lines[count]);
        krill_csr *a = NULL;
        CHECK_STATUS(krill_gen(spec, &a), KRILL_ERR_ARG);
        CHECK(strstr(krill_last_error(), "unknown generator") == NULL);
        CHECK(strchr(lines[count], '\n') == NULL);
    }
    CHECK(count == 10);
}

/* ---- build time ----------------------------------------------------------------------------- */

static void report_elasticity_time(void)
{
    const double t0 = krill_wtime();
    krill_csr *a = gen_ok("elasticity3d:64,24,24");
    const double t = krill_wtime() - t0;
    if (a != NULL)
        printf("  elasticity3d:64,24,24: %d rows, %lld nnz, built in %.3f s (%d threads)\n",
               a->n_rows, (long long)a->nnz, t, omp_get_max_threads());
    krill_csr_destroy(&a);
}

int main(void)
{
    test_poisson();
    test_convdiff();
    test_element();
    test_elasticity(1, 1, 1);
    test_elasticity(2, 1, 1);
    test_elasticity(1, 3, 2);
    test_elasticity(4, 3, 2);
    test_elasticity(5, 4, 3);
    test_paper_small();
    test_paper_table2();
    test_determinism();
    test_bad_specs();
    test_help();
    report_elasticity_time();
    return tu_finish("test_gen");
}
