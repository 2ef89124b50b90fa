/* Point-block Jacobi ("bjacobi", "bjacobi:B") against a plain C reference: z = M^{-1} r on
 * random vectors compared with each diagonal block solved here by Gauss-Jordan elimination
 * (a different algorithm from the library's LU and inverse), block by block within the
 * forward-error bound below. Block-size detection (elasticity3d: 3, poisson3d: 1, random
 * uniform block patterns), n % B != 0, bad parameters, singular / zero / nearly singular /
 * subnormal blocks refused with the block named, update (new values, a failed update, the
 * recovery), n = 0, allocation faults, every readable square matrix of testdata, and the
 * solvers: CG + bjacobi:3 takes fewer iterations than CG + jacobi on elasticity3d, GMRES +
 * bjacobi converges on nonsymmetric systems.
 * Built twice: CPU (label unit) and, with BJACOBI_TEST_GPU, GPU (label gpu), where the apply
 * is also checked bit for bit against the CPU's (both add the products in the same order
 * without FMA). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_impl.h"
#include "solver_util.h"

#define MAX_B 16

static krill_ctx *make_ctx(void)
{
#ifdef BJACOBI_TEST_GPU
    return tu_gpu_ctx_or_skip();
#else
    return tu_cpu_ctx(2);
#endif
}

/* ---- the reference ------------------------------------------------------------------- */

/* Gauss-Jordan with partial pivoting on [A_k | I | r_k] for diagonal block k (rows and
 * columns [kb, kb + b)) of a: inv = A_k^{-1}, x = A_k^{-1} r_k (r NULL: x untouched).
 * Returns the smallest |pivot| / max|a_ij| met (0 for a singular or all-zero block);
 * *norm_a receives ||A_k||_inf. */
static double ref_block(const krill_csr *a, int b, int64_t k, const double *r, double *inv,
                        double *x, double *norm_a)
{
    const int w = 2 * b + 1;
    double m[MAX_B * (2 * MAX_B + 1)], amax = 0.0, ratio = INFINITY;
    memset(m, 0, sizeof m);
    *norm_a = 0.0;
    for (int i = 0; i < b; i++) {
        const int64_t row = k * b + i;
        double rowsum = 0.0;
        for (int64_t e = a->row_ptr[row]; e < a->row_ptr[row + 1]; e++) {
            const int64_t c = a->col[e] - k * b;
            if (c < 0 || c >= b) continue;
            m[i * w + c] = a->val[e];
            rowsum += fabs(a->val[e]);
            if (fabs(a->val[e]) > amax) amax = fabs(a->val[e]);
        }
        if (rowsum > *norm_a) *norm_a = rowsum;
        m[i * w + b + i] = 1.0;
        m[i * w + 2 * b] = r ? r[row] : 0.0;
    }
    if (amax == 0.0) return 0.0;
    for (int c = 0; c < b; c++) {
        int p = c;
        double piv;
        for (int i = c + 1; i < b; i++)
            if (fabs(m[i * w + c]) > fabs(m[p * w + c])) p = i;
        piv = m[p * w + c];
        if (fabs(piv) / amax < ratio) ratio = fabs(piv) / amax;
        if (piv == 0.0) return 0.0;
        for (int j = 0; j < w; j++) {        /* swap rows c and p, scale the pivot row */
            const double t = m[c * w + j];
            m[c * w + j] = m[p * w + j] / piv;
            if (p != c) m[p * w + j] = t;
        }
        for (int i = 0; i < b; i++) {
            const double f = m[i * w + c];
            if (i == c || f == 0.0) continue;
            for (int j = 0; j < w; j++) m[i * w + j] -= f * m[c * w + j];
        }
    }
    for (int i = 0; i < b; i++) {
        for (int j = 0; j < b; j++) inv[i * b + j] = m[i * w + b + j];
        if (x) x[i] = m[i * w + 2 * b];
    }
    return ratio;
}

/* z against the reference, block by block: |z_k - x_k|_inf <= 64 b eps cond(A_k)
 * ||A_k^{-1}||_inf ||r_k||_inf. Both the library's X = fl(A_k^{-1}) followed by X r_k and
 * the reference solve are backward stable, so each is within O(b eps) cond(A_k)
 * ||A_k^{-1}|| ||r_k|| of the exact A_k^{-1} r_k; 64 b covers the constants (growth
 * factors of these small blocks are tiny), while a wrong entry, a transposed block or a
 * wrong row misses by O(1) ||A_k^{-1}|| ||r_k||. Returns the number of blocks outside
 * (the first one printed, unless `what` is NULL). */
static int64_t check_apply(const krill_csr *a, int b, const double *r, const double *z,
                           const char *what)
{
    int64_t bad = 0;
    for (int64_t k = 0; k < a->n_rows / b; k++) {
        double inv[MAX_B * MAX_B], x[MAX_B], norm_a, norm_inv = 0.0, norm_r = 0.0, diff = 0.0;
        double bound;
        if (ref_block(a, b, k, r, inv, x, &norm_a) == 0.0) {
            bad++;
            continue;
        }
        for (int i = 0; i < b; i++) {
            double rowsum = 0.0;
            for (int j = 0; j < b; j++) rowsum += fabs(inv[i * b + j]);
            if (rowsum > norm_inv) norm_inv = rowsum;
            if (fabs(r[k * b + i]) > norm_r) norm_r = fabs(r[k * b + i]);
            const double d = fabs(z[k * b + i] - x[i]);
            if (isnan(d) || d > diff) diff = d;        /* a NaN stays */
        }
        bound = 64.0 * b * DBL_EPSILON * (norm_a * norm_inv) * norm_inv * norm_r;
        if (!(diff <= bound)) {
            if (bad == 0 && what)
                fprintf(stderr, "%s: block %lld (b = %d): |z - x| = %g > bound %g\n", what,
                        (long long)k, b, diff, bound);
            bad++;
        }
    }
    return bad;
}

/* ---- helpers -------------------------------------------------------------------------- */

/* Build `name` on a, apply to two random vectors and check against the reference with
 * block size b; on a GPU context also against the CPU's bits. */
static void check_pc(krill_ctx *ctx, const krill_csr *csr, const krill_mat *a, const char *name,
                     int b, const char *what)
{
    const int64_t n = csr->n_rows;
    double *r = malloc((size_t)n * sizeof *r + 8), *z = malloc((size_t)n * sizeof *z + 8);
    krill_pc *pc = NULL;
    krill_vec *vr = NULL, *vz = NULL;
    CHECK_OK(krill_pc_create(a, name, &pc));
    CHECK_OK(krill_vec_create(ctx, n, &vr));
    CHECK_OK(krill_vec_create(ctx, n, &vz));
    if (!pc || !vr || !vz) goto done;
    CHECK(strcmp(krill_pc_name(pc), name) == 0);
    for (uint64_t seed = 1; seed <= 2; seed++) {
        tu_random(r, n, seed + 100);
        CHECK_OK(krill_vec_upload(vr, r));
        CHECK_OK(krill_pc_apply(pc, vr, vz));
        CHECK_OK(krill_vec_download(vz, z));
        CHECK(check_apply(csr, b, r, z, what) == 0);
#ifdef BJACOBI_TEST_GPU
        {   /* the same preconditioner on the CPU: the same bits */
            krill_ctx *cpu = tu_cpu_ctx(2);
            krill_mat *ac = NULL;
            krill_pc *pcc = NULL;
            krill_vec *cr = NULL, *cz = NULL;
            double *zc = malloc((size_t)n * sizeof *zc + 8);
            CHECK_OK(krill_mat_create(cpu, csr, NULL, &ac));
            CHECK_OK(krill_pc_create(ac, name, &pcc));
            CHECK_OK(krill_vec_create(cpu, n, &cr));
            CHECK_OK(krill_vec_create(cpu, n, &cz));
            CHECK_OK(krill_vec_upload(cr, r));
            CHECK_OK(krill_pc_apply(pcc, cr, cz));
            CHECK_OK(krill_vec_download(cz, zc));
            CHECK(n == 0 || memcmp(zc, z, (size_t)n * sizeof *z) == 0);
            free(zc);
            krill_vec_destroy(&cr);
            krill_vec_destroy(&cz);
            krill_pc_destroy(&pcc);
            krill_mat_destroy(&ac);
            krill_ctx_destroy(&cpu);
        }
#endif
    }
done:
    krill_vec_destroy(&vr);
    krill_vec_destroy(&vz);
    krill_pc_destroy(&pc);
    free(r);
    free(z);
}

/* krill_pc_create(a, name) must fail with `expected` and a message containing `text`. */
static void check_refused(const krill_mat *a, const char *name, krill_status expected,
                          const char *text)
{
    krill_pc *pc = NULL;
    CHECK_STATUS(krill_pc_create(a, name, &pc), expected);
    CHECK(pc == NULL);
    if (!strstr(krill_last_error(), text)) {
        tu_checks++;
        tu_failures++;
        fprintf(stderr, "%s: message \"%s\" lacks \"%s\"\n", name, krill_last_error(), text);
    }
    krill_pc_destroy(&pc);
}

/* The description of `name` built on a contains `text`. */
static void check_description(const krill_mat *a, const char *name, const char *text)
{
    krill_pc *pc = NULL;
    CHECK_OK(krill_pc_create(a, name, &pc));
    if (pc && !strstr(krill_pc_describe(pc), text)) {
        tu_checks++;
        tu_failures++;
        fprintf(stderr, "%s: description \"%s\" lacks \"%s\"\n", name, krill_pc_describe(pc),
                text);
    }
    krill_pc_destroy(&pc);
}

/* What block_matrix builds. */
typedef struct block_spec {
    int nb, b;               /* nb diagonal blocks of b x b: n = nb * b */
    int holes;               /* 1: some entries of the diagonal blocks absent */
    int64_t singular;        /* this block gets two equal rows (-1: none) */
    int64_t zero;            /* this block is absent from the pattern (-1: none) */
    uint64_t seed;
} block_spec;

/* Column of the dominant entry of row i in diagonal block k: i, or i+1 (mod b) in every
 * third block, so that partial pivoting must swap rows there. */
static int dominant_col(int64_t k, int i, int b) { return k % 3 == 1 ? (i + 1) % b : i; }

/* Random nonsymmetric matrix of nb >= 3 block rows of b x b blocks: dense diagonal blocks
 * (random entries in [-1, 1), 2b added to the dominant entry of each row), full
 * off-diagonal blocks to the cyclic neighbours k-1 and k+1 with entries in [-0.1, 0.1).
 * Without holes the pattern is uniform in b x b blocks, and in no larger size when
 * nb >= 5. Holes drop non-dominant entries of the diagonal blocks where (i + 2j + k) % 3
 * == 0; the singular block has row 1 equal to row 0, the zero block is absent. */
static krill_csr *block_matrix(block_spec s)
{
    const int64_t n = (int64_t)s.nb * s.b, cap = n * 3 * s.b;
    int32_t *ri = malloc((size_t)cap * sizeof *ri), *ci = malloc((size_t)cap * sizeof *ci);
    double *v = malloc((size_t)cap * sizeof *v), *diag = malloc((size_t)n * s.b * sizeof *v);
    double *off = malloc((size_t)cap * sizeof *off);
    int64_t nnz = 0;
    krill_csr *csr = NULL;
    tu_random(diag, n * s.b, s.seed);
    tu_random(off, cap, s.seed + 1000);
    for (int64_t k = 0; k < s.nb; k++) {
        const int64_t nbr[3] = {k, (k + 1) % s.nb, (k + s.nb - 1) % s.nb};
        for (int q = 0; q < 3; q++)
            for (int i = 0; i < s.b; i++)
                for (int j = 0; j < s.b; j++) {
                    const int src = (k == s.singular && i == 1) ? 0 : i;
                    double val;
                    if (q == 0) {
                        if (k == s.zero) continue;
                        if (s.holes && j != dominant_col(k, i, s.b) && (i + 2 * j + k) % 3 == 0)
                            continue;
                        val = diag[(k * s.b + src) * s.b + j] +
                              (j == dominant_col(k, src, s.b) ? 2.0 * s.b : 0.0);
                    } else {
                        val = 0.1 * off[nnz];
                    }
                    ri[nnz] = (int32_t)(k * s.b + i);
                    ci[nnz] = (int32_t)(nbr[q] * s.b + j);
                    v[nnz++] = val;
                }
    }
    if (krill_csr_from_triplets((int32_t)n, (int32_t)n, nnz, ri, ci, v, &csr) != KRILL_OK) {
        fprintf(stderr, "block_matrix: %s\n", krill_last_error());
        exit(1);
    }
    free(ri);
    free(ci);
    free(v);
    free(diag);
    free(off);
    return csr;
}

/* ---- tests ---------------------------------------------------------------------------- */

/* Detection: elasticity3d (3 dofs per node) gives 3, the 7-point Laplacian 1 (Jacobi, and
 * the same z as jacobi), random uniform block patterns their b, holes break uniformity. */
static void test_detect(krill_ctx *ctx)
{
    static const struct {
        const char *spec;
        int b;
        const char *text;
    } gen[] = {
        {"elasticity3d:4,3,3", 3, "3x3 blocks (detected), 64 blocks"},   /* n = 192 = 6 * 32 */
        {"elasticity3d:3,2,2", 3, "3x3 blocks (detected), 27 blocks"},
        {"poisson3d:6", 1, "1x1 blocks (Jacobi: no uniform block structure with B in 6..2)"},
        {"convdiff3d:6", 1, "1x1 blocks"},
    };
    for (size_t t = 0; t < sizeof gen / sizeof gen[0]; t++) {
        krill_csr *csr = su_gen(gen[t].spec);
        krill_mat *a = NULL;
        CHECK_OK(krill_mat_create(ctx, csr, NULL, &a));
        check_description(a, "bjacobi", gen[t].text);
        check_pc(ctx, csr, a, "bjacobi", gen[t].b, gen[t].spec);
        krill_mat_destroy(&a);
        krill_csr_destroy(&csr);
    }
    {   /* n = 8, 2x2 diagonal blocks; rows 0 and 1 both hold two aligned 2-groups, but
         * row 0 couples to block 1 and row 1 to block 2: not uniform in 2 (nor 4) */
        int32_t ri[20], ci[20];
        double v[20];
        int nnz = 0;
        krill_csr *csr = NULL;
        krill_mat *a = NULL;
        for (int i = 0; i < 8; i++)
            for (int j = i - i % 2; j < i - i % 2 + 2; j++) {
                ri[nnz] = i;
                ci[nnz] = j;
                v[nnz++] = i == j ? 4.0 : 1.0;
            }
        for (int j = 0; j < 2; j++) {
            ri[nnz] = 0;
            ci[nnz] = 2 + j;
            v[nnz++] = -1.0;
            ri[nnz] = 1;
            ci[nnz] = 4 + j;
            v[nnz++] = -1.0;
        }
        CHECK_OK(krill_csr_from_triplets(8, 8, nnz, ri, ci, v, &csr));
        CHECK_OK(krill_mat_create(ctx, csr, NULL, &a));
        check_description(a, "bjacobi", "1x1 blocks");
        check_pc(ctx, csr, a, "bjacobi:2", 2, "rows of a block row differ");
        krill_mat_destroy(&a);
        krill_csr_destroy(&csr);
    }
    {   /* n = 6: rows 0 and 1 are {0, 1, 3, 4}, the others their 2x2 diagonal block: whole
         * groups of two, but {3, 4} straddles blocks 1 and 2: not uniform */
        int32_t ri[16], ci[16];
        double v[16];
        int nnz = 0;
        krill_csr *csr = NULL;
        krill_mat *a = NULL;
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++)
                if (j / 2 == i / 2 || (i < 2 && (j == 3 || j == 4))) {
                    ri[nnz] = i;
                    ci[nnz] = j;
                    v[nnz++] = i == j ? 4.0 : -1.0;
                }
        CHECK_OK(krill_csr_from_triplets(6, 6, nnz, ri, ci, v, &csr));
        CHECK_OK(krill_mat_create(ctx, csr, NULL, &a));
        check_description(a, "bjacobi", "1x1 blocks");
        krill_mat_destroy(&a);
        krill_csr_destroy(&csr);
    }
    for (int b = 2; b <= 6; b++) {
        krill_csr *csr = block_matrix((block_spec){6, b, 0, -1, -1, 40 + (uint64_t)b});
        krill_csr *holes = block_matrix((block_spec){6, b, 1, -1, -1, 50 + (uint64_t)b});
        krill_mat *a = NULL, *ah = NULL;
        char text[64];
        snprintf(text, sizeof text, "bjacobi: %dx%d blocks (detected), 6 blocks", b, b);
        CHECK_OK(krill_mat_create(ctx, csr, NULL, &a));
        CHECK_OK(krill_mat_create(ctx, holes, NULL, &ah));
        check_description(a, "bjacobi", text);
        check_pc(ctx, csr, a, "bjacobi", b, "uniform block matrix");
        /* holes inside the diagonal blocks: not uniform; the explicit B still works */
        check_description(ah, "bjacobi", "1x1 blocks");
        snprintf(text, sizeof text, "bjacobi:%d", b);
        check_pc(ctx, holes, ah, text, b, "block matrix with holes");
        krill_mat_destroy(&a);
        krill_mat_destroy(&ah);
        krill_csr_destroy(&csr);
        krill_csr_destroy(&holes);
    }
}

/* Explicit block sizes on generated matrices: every B dividing n, 1 (Jacobi) to 16. */
static void test_explicit(krill_ctx *ctx)
{
    krill_csr *el = su_gen("elasticity3d:4,3,3");        /* n = 192 */
    krill_csr *big = block_matrix((block_spec){5, 16, 1, -1, -1, 7});
    krill_mat *a = NULL, *abig = NULL;
    krill_pc *pc = NULL, *jac = NULL;
    krill_vec *r = NULL, *z1 = NULL, *z2 = NULL;
    double *h1 = malloc((size_t)el->n_rows * sizeof *h1), *h2 = malloc((size_t)el->n_rows * 8);
    static const int sizes[] = {1, 2, 3, 4, 6, 8, 12, 16};
    CHECK_OK(krill_mat_create(ctx, el, NULL, &a));
    CHECK_OK(krill_mat_create(ctx, big, NULL, &abig));
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
        char name[32], text[64];
        snprintf(name, sizeof name, "bjacobi:%d", sizes[t]);
        snprintf(text, sizeof text, "%dx%d blocks (given), %d blocks", sizes[t], sizes[t],
                 192 / sizes[t]);
        check_pc(ctx, el, a, name, sizes[t], name);
        check_description(a, name, text);
    }
    check_pc(ctx, big, abig, "bjacobi:16", 16, "16x16 blocks with holes");
    check_pc(ctx, big, abig, "bjacobi:5", 5, "5x5 blocks across 16x16 ones");

    /* bjacobi:1 is Jacobi: the same z as "jacobi" up to 1/a * r against r / a (one
     * rounding each) */
    CHECK_OK(krill_pc_create(a, "bjacobi:1", &pc));
    CHECK_OK(krill_pc_create(a, "jacobi", &jac));
    CHECK_OK(krill_vec_create(ctx, el->n_rows, &r));
    CHECK_OK(krill_vec_create(ctx, el->n_rows, &z1));
    CHECK_OK(krill_vec_create(ctx, el->n_rows, &z2));
    tu_random(h1, el->n_rows, 3);
    CHECK_OK(krill_vec_upload(r, h1));
    CHECK_OK(krill_pc_apply(pc, r, z1));
    CHECK_OK(krill_pc_apply(jac, r, z2));
    CHECK_OK(krill_vec_download(z1, h1));
    CHECK_OK(krill_vec_download(z2, h2));
    CHECK(tu_max_rel_diff(h1, h2, el->n_rows) <= 4 * DBL_EPSILON);

    /* describe: the summaries of none and jacobi, "none"'s for NULL */
    CHECK(strstr(krill_pc_describe(jac), "Jacobi") != NULL);
    CHECK(strstr(krill_pc_describe(NULL), "no preconditioning") != NULL);

    krill_vec_destroy(&r);
    krill_vec_destroy(&z1);
    krill_vec_destroy(&z2);
    krill_pc_destroy(&pc);
    krill_pc_destroy(&jac);
    krill_mat_destroy(&a);
    krill_mat_destroy(&abig);
    krill_csr_destroy(&el);
    krill_csr_destroy(&big);
    free(h1);
    free(h2);
}

/* A 2 x 2 matrix [[1, 1], [1, 1 + d]]: the second pivot is d exactly. */
static krill_mat *two_by_two(krill_ctx *ctx, double d, krill_csr **csr)
{
    int32_t ri[4] = {0, 0, 1, 1}, ci[4] = {0, 1, 0, 1};
    double v[4] = {1.0, 1.0, 1.0, 1.0 + d};
    krill_mat *a = NULL;
    CHECK_OK(krill_csr_from_triplets(2, 2, 4, ri, ci, v, csr));
    CHECK_OK(krill_mat_create(ctx, *csr, NULL, &a));
    return a;
}

static void test_errors(krill_ctx *ctx)
{
    krill_csr *el = su_gen("elasticity3d:4,3,3");        /* n = 192 */
    krill_csr *sing = block_matrix((block_spec){7, 3, 0, 2, -1, 11});
    krill_csr *zero = block_matrix((block_spec){7, 3, 0, -1, 1, 12});
    krill_csr *odd = su_gen("poisson3d:5");               /* n = 125 */
    krill_csr *tiny = NULL, *tol_in = NULL, *tol_out = NULL;
    krill_mat *a = NULL, *asing = NULL, *azero = NULL, *aodd = NULL, *atiny = NULL;
    krill_mat *ain = NULL, *aout = NULL;
    CHECK_OK(krill_mat_create(ctx, el, NULL, &a));
    CHECK_OK(krill_mat_create(ctx, sing, NULL, &asing));
    CHECK_OK(krill_mat_create(ctx, zero, NULL, &azero));
    CHECK_OK(krill_mat_create(ctx, odd, NULL, &aodd));

    /* parameters: the argument text in the message */
    check_refused(a, "bjacobi:0", KRILL_ERR_ARG, "bjacobi:0: the block size must be");
    check_refused(a, "bjacobi:17", KRILL_ERR_ARG, "bjacobi:17");
    check_refused(a, "bjacobi:x", KRILL_ERR_ARG, "bjacobi:x");
    check_refused(a, "bjacobi:", KRILL_ERR_ARG, "from 1 to 16");
    check_refused(a, "bjacobi:3x", KRILL_ERR_ARG, "bjacobi:3x");
    check_refused(a, "bjacobi:-3", KRILL_ERR_ARG, "bjacobi:-3");
    check_refused(a, "bjacobi: 3", KRILL_ERR_ARG, "bjacobi: 3");
    check_description(a, "bjacobi:03", "3x3 blocks (given)");
    check_refused(a, "bjacobi:99999999999", KRILL_ERR_ARG, "bjacobi:99999999999");
    /* n % B != 0 */
    check_refused(a, "bjacobi:5", KRILL_ERR_ARG, "192 rows, not a multiple of the block size 5");
    check_refused(aodd, "bjacobi:2", KRILL_ERR_ARG, "125 rows");
    check_description(aodd, "bjacobi:5", "5x5 blocks (given), 25 blocks");

    /* singular blocks: two equal rows in block 2; an all-absent block 1 */
    check_refused(asing, "bjacobi:3", KRILL_ERR_NUMERIC, "block 2 (rows 6..8, 0-based) is "
                  "singular");
    check_refused(asing, "bjacobi", KRILL_ERR_NUMERIC, "block 2 (rows 6..8, 0-based)");
    check_refused(azero, "bjacobi:3", KRILL_ERR_NUMERIC, "block 1 (rows 3..5, 0-based) is "
                  "singular: pivot 0 in column 0");
    check_refused(azero, "bjacobi:1", KRILL_ERR_NUMERIC, "block 3 (rows 3..3, 0-based)");
    /* the threshold |pivot| <= B eps max|a_ij|: pivot eps refused (2 eps (1 + eps) above
     * it), pivot 4 eps accepted */
    atiny = two_by_two(ctx, DBL_EPSILON, &tiny);
    check_refused(atiny, "bjacobi:2", KRILL_ERR_NUMERIC, "pivot 2.22045e-16 in column 1");
    ain = two_by_two(ctx, 4 * DBL_EPSILON, &tol_in);
    check_pc(ctx, tol_in, ain, "bjacobi:2", 2, "pivot 4 eps");
    check_description(ain, "bjacobi", "2x2 blocks (detected), 1 blocks");
    /* a subnormal 1 x 1 block passes the pivot test, but its inverse overflows */
    {
        int32_t ri[2] = {0, 1}, ci[2] = {0, 1};
        double v[2] = {1.0, 1e-310};
        CHECK_OK(krill_csr_from_triplets(2, 2, 2, ri, ci, v, &tol_out));
        CHECK_OK(krill_mat_create(ctx, tol_out, NULL, &aout));
        check_refused(aout, "bjacobi:1", KRILL_ERR_NUMERIC, "block 1 (rows 1..1, 0-based) has "
                      "an inverse with a non-finite entry");
    }

    krill_mat_destroy(&a);
    krill_mat_destroy(&asing);
    krill_mat_destroy(&azero);
    krill_mat_destroy(&aodd);
    krill_mat_destroy(&atiny);
    krill_mat_destroy(&ain);
    krill_mat_destroy(&aout);
    krill_csr_destroy(&el);
    krill_csr_destroy(&sing);
    krill_csr_destroy(&zero);
    krill_csr_destroy(&odd);
    krill_csr_destroy(&tiny);
    krill_csr_destroy(&tol_in);
    krill_csr_destroy(&tol_out);
}

/* New values, same pattern: the update re-inverts (checked against the reference on the
 * new values); singular new values fail the update naming the block, apply refuses until
 * an update succeeds; the detected B is kept. */
static void test_update(krill_ctx *ctx)
{
    krill_csr *csr = block_matrix((block_spec){8, 4, 0, -1, -1, 21});
    krill_csr *scaled = NULL;
    krill_mat *a = NULL;
    krill_pc *pc = NULL;
    krill_vec *vr = NULL, *vz = NULL;
    const int64_t n = csr->n_rows;
    double *r = malloc((size_t)n * sizeof *r), *z = malloc((size_t)n * sizeof *z);
    double *v = malloc((size_t)csr->nnz * sizeof *v);
    char before[160];
    CHECK_OK(krill_csr_copy(csr, &scaled));
    CHECK_OK(krill_mat_create(ctx, csr, NULL, &a));
    CHECK_OK(krill_pc_create(a, "bjacobi", &pc));
    CHECK_OK(krill_vec_create(ctx, n, &vr));
    CHECK_OK(krill_vec_create(ctx, n, &vz));
    if (!pc || !vr || !vz) goto done;
    snprintf(before, sizeof before, "%s", krill_pc_describe(pc));
    CHECK(strstr(before, "4x4 blocks (detected), 8 blocks") != NULL);
    tu_random(r, n, 5);
    CHECK_OK(krill_vec_upload(vr, r));

    /* new values: rows scaled by 1 + i/n (changes every block, not just by a factor) */
    for (int64_t i = 0; i < n; i++)
        for (int64_t e = csr->row_ptr[i]; e < csr->row_ptr[i + 1]; e++)
            scaled->val[e] = csr->val[e] * (1.0 + (double)i / (double)n);
    CHECK_OK(krill_mat_update_values(a, scaled->val));
    CHECK_OK(krill_pc_update_values(pc));
    CHECK_OK(krill_pc_apply(pc, vr, vz));
    CHECK_OK(krill_vec_download(vz, z));
    CHECK(check_apply(scaled, 4, r, z, "after update") == 0);
    CHECK(check_apply(csr, 4, r, z, NULL) > 0);   /* the check can fail: old values */
    CHECK(strcmp(krill_pc_describe(pc), before) == 0);

    /* block 5 made singular (row 21 = row 20 inside the block): the update names it */
    memcpy(v, scaled->val, (size_t)csr->nnz * sizeof *v);
    for (int64_t e = csr->row_ptr[21]; e < csr->row_ptr[22]; e++)
        if (csr->col[e] >= 20 && csr->col[e] < 24)
            for (int64_t f = csr->row_ptr[20]; f < csr->row_ptr[21]; f++)
                if (csr->col[f] == csr->col[e]) v[e] = v[f];
    CHECK_OK(krill_mat_update_values(a, v));
    CHECK_STATUS(krill_pc_update_values(pc), KRILL_ERR_NUMERIC);
    CHECK(strstr(krill_last_error(), "block 5 (rows 20..23, 0-based)") != NULL);
    CHECK_STATUS(krill_pc_apply(pc, vr, vz), KRILL_ERR_NUMERIC);
    CHECK(strstr(krill_last_error(), "last update failed") != NULL);
    CHECK_OK(krill_mat_update_values(a, csr->val));
    CHECK_OK(krill_pc_update_values(pc));
    CHECK_OK(krill_pc_apply(pc, vr, vz));
    CHECK_OK(krill_vec_download(vz, z));
    CHECK(check_apply(csr, 4, r, z, "after recovery") == 0);
done:
    krill_vec_destroy(&vr);
    krill_vec_destroy(&vz);
    krill_pc_destroy(&pc);
    krill_mat_destroy(&a);
    krill_csr_destroy(&csr);
    krill_csr_destroy(&scaled);
    free(r);
    free(z);
    free(v);
}

/* n = 0: builds (B = 1, nothing to detect), applies to empty vectors. */
static void test_empty(krill_ctx *ctx)
{
    krill_csr *csr = NULL;
    krill_mat *a = NULL;
    krill_pc *pc = NULL;
    krill_vec *r = NULL, *z = NULL;
    CHECK_OK(krill_csr_create(0, 0, 0, &csr));
    CHECK_OK(krill_mat_create(ctx, csr, NULL, &a));
    CHECK_OK(krill_vec_create(ctx, 0, &r));
    CHECK_OK(krill_vec_create(ctx, 0, &z));
    CHECK_OK(krill_pc_create(a, "bjacobi", &pc));
    CHECK(pc && strstr(krill_pc_describe(pc), "1x1 blocks") && strstr(krill_pc_describe(pc),
                                                                      "0 blocks"));
    CHECK_OK(krill_pc_apply(pc, r, z));
    krill_pc_destroy(&pc);
    CHECK_OK(krill_pc_create(a, "bjacobi:3", &pc));
    CHECK_OK(krill_pc_apply(pc, r, z));
    CHECK_OK(krill_pc_update_values(pc));
    krill_pc_destroy(&pc);
    krill_vec_destroy(&r);
    krill_vec_destroy(&z);
    krill_mat_destroy(&a);
    krill_csr_destroy(&csr);
}

/* Every allocation of a build, made to fail in turn: a clean error, no preconditioner. */
static void test_faults(krill_ctx *ctx)
{
    krill_csr *csr = su_gen("elasticity3d:3,2,2");
    krill_mat *a = NULL;
    static const char *const names[] = {"bjacobi", "bjacobi:3"};
    CHECK_OK(krill_mat_create(ctx, csr, NULL, &a));
    /* the struct, the CSR copy, the inverses */
    for (size_t t = 0; t < 2; t++) su_check_pc_faults(a, names[t], 3);
    krill_mat_destroy(&a);
    krill_csr_destroy(&csr);
}

/* One solve from x = 0; returns the iterations (-1 if it did not converge). */
static int solve_with(su_system *s, const char *pc_name, krill_solver_type type)
{
    krill_pc *pc = NULL;
    krill_solve_info info;
    krill_solver_opts o;
    int its = -1;
    double relres;
    krill_solver_opts_default(&o);
    o.solver = type;
    o.rtol = 1e-8;
    o.maxit = 5000;
    CHECK_OK(krill_pc_create(s->a, pc_name, &pc));
    if (!pc) return -1;
    CHECK_OK(su_solve(s, pc, &o, &info));
    CHECK(su_error(s) < 1e-3);   /* downloads x; cond of these systems is below 1e5 */
    relres = su_true_relres(s->csr, s->x_host, s->b_host);
    CHECK(info.reason == KRILL_CONVERGED_RTOL);
    CHECK(relres <= 1e-8 * 1.01);
    if (info.reason == KRILL_CONVERGED_RTOL) its = info.iterations;
    printf("%-6s %-10s %-26s: %4d iterations, true relres %.2e  (%s)\n",
           type == KRILL_SOLVER_CG ? "cg" : "gmres", pc_name, krill_pc_describe(pc),
           info.iterations, relres, krill_reason_string(info.reason));
    krill_solve_info_free(&info);
    krill_pc_destroy(&pc);
    return its;
}

static void test_solvers(krill_ctx *ctx)
{
    su_system s;
    int jac, bj3, bjd, none;

    /* CG on elasticity3d: the 3x3 node blocks couple the displacements of a node, which
     * Jacobi ignores: bjacobi:3 must take fewer iterations */
    su_system_make(&s, ctx, su_gen("elasticity3d:8,4,4"), NULL, 3);
    none = solve_with(&s, "none", KRILL_SOLVER_CG);
    jac = solve_with(&s, "jacobi", KRILL_SOLVER_CG);
    bj3 = solve_with(&s, "bjacobi:3", KRILL_SOLVER_CG);
    bjd = solve_with(&s, "bjacobi", KRILL_SOLVER_CG);
    CHECK(jac > 0 && bj3 > 0 && bj3 < jac);
    CHECK(bjd == bj3);       /* the same M: detection found 3 */
    CHECK(none > 0);
    (void)solve_with(&s, "bjacobi:3", KRILL_SOLVER_GMRES);
    su_system_free(&s);

    /* GMRES on nonsymmetric systems: convection-diffusion with explicit 2x2 blocks and
     * detection (B = 1), and a random block matrix with its detected 4x4 blocks */
    su_system_make(&s, ctx, su_gen("convdiff3d:10,2"), NULL, 4);
    CHECK(solve_with(&s, "bjacobi:2", KRILL_SOLVER_GMRES) > 0);
    CHECK(solve_with(&s, "bjacobi", KRILL_SOLVER_GMRES) > 0);
    su_system_free(&s);
    su_system_make(&s, ctx, block_matrix((block_spec){200, 4, 0, -1, -1, 31}), NULL, 5);
    CHECK(solve_with(&s, "bjacobi", KRILL_SOLVER_GMRES) > 0);
    su_system_free(&s);
}

/* ---- testdata -------------------------------------------------------------------------- */

typedef struct walk_state {
    krill_ctx *ctx;
    int built, refused;
} walk_state;

/* A refusal of `name` on a must name the first block the reference finds (nearly)
 * singular: the named block's smallest pivot ratio is below 16 B eps (the library's
 * threshold is B eps, Gauss-Jordan and LU choose the same pivots up to rounding), or its
 * inverse overflows; every block before it has a ratio above B eps / 16. */
static void check_refusal(const krill_csr *a, int b, const char *what)
{
    const char *msg = krill_last_error(), *at = strstr(msg, "diagonal block ");
    long long k = -1;
    double inv[MAX_B * MAX_B], norm_a;
    CHECK(at != NULL && sscanf(at, "diagonal block %lld", &k) == 1);
    if (k < 0 || k >= a->n_rows / b) {
        fprintf(stderr, "%s: refusal without a block: %s\n", what, msg);
        return;
    }
    for (int64_t j = 0; j < k; j++) {
        double ratio = ref_block(a, b, j, NULL, inv, NULL, &norm_a);
        if (!(ratio > b * DBL_EPSILON / 16.0)) {
            tu_checks++;
            tu_failures++;
            fprintf(stderr, "%s: block %lld refused, but %lld before it is singular too\n",
                    what, k, (long long)j);
            return;
        }
    }
    {
        double ratio = ref_block(a, b, k, NULL, inv, NULL, &norm_a);
        int finite = 1;
        for (int e = 0; e < b * b; e++) finite &= isfinite(inv[e]) != 0;
        if (!(ratio <= 16.0 * b * DBL_EPSILON || !finite)) {
            tu_checks++;
            tu_failures++;
            fprintf(stderr, "%s: block %lld refused, reference pivot ratio %g\n", what, k, ratio);
        }
    }
}

static void walk_one(const krill_csr *a, const char *name, void *user)
{
    walk_state *w = user;
    krill_mat *m = NULL;
    CHECK_OK(krill_mat_create(w->ctx, a, NULL, &m));
    if (!m) return;
    for (int b = 1; b <= 6; b++) {
        char pc_name[32], what[256];
        krill_pc *pc = NULL;
        krill_status st;
        if (a->n_rows % b != 0) continue;
        snprintf(pc_name, sizeof pc_name, "bjacobi:%d", b);
        snprintf(what, sizeof what, "%s %s", name, pc_name);
        st = krill_pc_create(m, pc_name, &pc);
        krill_pc_destroy(&pc);
        if (st == KRILL_OK) {
            check_pc(w->ctx, a, m, pc_name, b, what);
            w->built++;
        } else {
            CHECK(st == KRILL_ERR_NUMERIC);
            check_refusal(a, b, what);
            w->refused++;
        }
    }
    {   /* detection: print what it found */
        krill_pc *pc = NULL;
        if (krill_pc_create(m, "bjacobi", &pc) == KRILL_OK)
            printf("  %-40s %s\n", name, krill_pc_describe(pc));
        else
            printf("  %-40s refused: %s\n", name, krill_last_error());
        krill_pc_destroy(&pc);
    }
    krill_mat_destroy(&m);
}

/* Every readable square testdata matrix with every B in 1..6 dividing n: built and checked
 * against the reference, or refused naming the right block. */
static void test_testdata(krill_ctx *ctx)
{
    walk_state w = {ctx, 0, 0};
    int count = tu_for_each_square_mtx(walk_one, &w);
    if (count < 0) return;
    printf("testdata: %d matrices, %d preconditioners built and checked, %d refused\n", count,
           w.built, w.refused);
    CHECK(count > 0 && w.built > 0);
}

/* A real structural matrix: CG with bjacobi:3 against jacobi on bcsstk15 (SPD, 3948 rows). */
static void test_bcsstk15(krill_ctx *ctx)
{
    const char *path = tu_testdata_path("mtx/bcsstk15.mtx");
    su_system s;
    krill_solver_opts o;
    krill_solve_info info;
    krill_pc *pc = NULL;
    int its[2] = {-1, -1};
    static const char *const names[2] = {"jacobi", "bjacobi:3"};
    if (!path) {
        printf("testdata absent: bcsstk15 skipped\n");
        return;
    }
    su_system_make(&s, ctx, su_testdata("mtx/bcsstk15.mtx"), NULL, 6);
    krill_solver_opts_default(&o);
    o.solver = KRILL_SOLVER_CG;
    o.rtol = 1e-8;
    o.maxit = 20000;
    for (int t = 0; t < 2; t++) {
        CHECK_OK(krill_pc_create(s.a, names[t], &pc));
        if (!pc) continue;
        CHECK_OK(su_solve(&s, pc, &o, &info));
        CHECK(info.reason == KRILL_CONVERGED_RTOL);
        CHECK(su_error(&s) < 1e-1);
        CHECK(su_true_relres(s.csr, s.x_host, s.b_host) <= 1.01e-8);
        its[t] = info.iterations;
        printf("cg bcsstk15 %-10s: %d iterations\n", names[t], info.iterations);
        krill_solve_info_free(&info);
        krill_pc_destroy(&pc);
    }
    CHECK(its[1] > 0 && its[1] < its[0]);
    su_system_free(&s);
}

/* Every format: the blocks come from the format's own gathering (GPU csr and cusparse) or
 * from its CSR (the others); the apply has the reference's and (GPU) the CPU's bits. */
static void test_formats(krill_ctx *ctx)
{
    static const char *const formats[] = {"csr", "ell", "rbp-csr", "segscan",
#ifdef BJACOBI_TEST_GPU
                                          "cusparse",
#endif
                                          NULL};
    krill_csr *el = su_gen("elasticity3d:4,3,3");
    krill_csr *big = block_matrix((block_spec){5, 16, 1, -1, -1, 7});
    for (int f = 0; formats[f]; f++) {
        krill_mat *a = NULL, *abig = NULL;
        char what[64];
        CHECK_OK(krill_mat_create(ctx, el, formats[f], &a));
        CHECK_OK(krill_mat_create(ctx, big, formats[f], &abig));
        snprintf(what, sizeof what, "bjacobi:3 on %s", formats[f]);
        if (a) check_pc(ctx, el, a, "bjacobi:3", 3, what);
        snprintf(what, sizeof what, "bjacobi:16 with holes on %s", formats[f]);
        if (abig) check_pc(ctx, big, abig, "bjacobi:16", 16, what);
        krill_mat_destroy(&a);
        krill_mat_destroy(&abig);
    }
    krill_csr_destroy(&el);
    krill_csr_destroy(&big);
}

int main(void)
{
    krill_ctx *ctx = make_ctx();
    test_formats(ctx);
    test_detect(ctx);
    test_explicit(ctx);
    test_errors(ctx);
    test_update(ctx);
    test_empty(ctx);
    test_faults(ctx);
    test_solvers(ctx);
    test_testdata(ctx);
    test_bcsstk15(ctx);
    krill_ctx_destroy(&ctx);
#ifdef BJACOBI_TEST_GPU
    return tu_finish("test_gpu_bjacobi");
#else
    return tu_finish("test_bjacobi");
#endif
}
