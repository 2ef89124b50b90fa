/* ILU(0) and IC(0) (precond/ilu*.c, ilu.cu) against a reference written here: the textbook
 * right-looking KIJ loops on the CSR pattern, and a plain serial forward and backward
 * substitution. Matrices: hand-made ones, poisson3d, convdiff3d (nonsymmetric), elasticity3d
 * and every readable square matrix of testdata (ic0 on the symmetric ones). Also: the level
 * sets, update with new values (and a failed update), the error paths (zero, tiny and
 * non-finite pivots, growth, missing diagonal, non-symmetric or non-SPD matrices given to
 * ic0; ic0's asymmetry reported ahead of an earlier refused row, at build and update),
 * allocation faults, and GMRES / CG converging in fewer iterations with them. The factors
 * compared are unshifted: where a refusal is the point, ic0 runs as ic0:noshift (the shifted
 * factorizations have their own test, test_ilu_shift.c).
 *
 * What must match. Factors: bit for bit on both devices. The KIJ loops give every entry its
 * updates in ascending k, as the library's row-by-row loops do, with each product and
 * difference rounded as written (-ffp-contract=off here, __dmul_rn/__dsub_rn on the GPU).
 * Apply z = M^{-1} r on the CPU: bit for bit, on 1 thread and level-scheduled on 3 (each row
 * is summed in column order either way, then multiplied by the rounded reciprocal of its
 * diagonal entry, as the library does). On the GPU, which divides, where rows are summed by several lanes
 * with FMAs: a backward-error bound that holds for any summation order (check_backward), and
 * on the well-conditioned generated matrices a relative forward difference <= 1e-9.
 *
 * Built twice: CPU (label data) and, with ILU_TEST_GPU, GPU (label gpu). */
#include <float.h>

#include "core/core_impl.h"
#include "precond/ilu_impl.h"
#include "solver_util.h"

static krill_ctx *make_ctx(void)
{
#ifdef ILU_TEST_GPU
    return tu_gpu_ctx_or_skip();
#else
    return tu_cpu_ctx(3);
#endif
}

/* ---- the reference ---------------------------------------------------------------------- */

/* Position of (i, j) in a, or -1. */
static int64_t ref_find(const krill_csr *a, int32_t i, int32_t j)
{
    for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
        if (a->col[p] == j) return p;
    return -1;
}

static int64_t longest_row(const krill_csr *a)
{
    int64_t k = 0;
    for (int32_t i = 0; i < a->n_rows; i++)
        if (a->row_ptr[i + 1] - a->row_ptr[i] > k) k = a->row_ptr[i + 1] - a->row_ptr[i];
    return k;
}

/* Per column k, the rows i > k with (i, k) stored, ascending, and the positions. */
typedef struct ref_columns {
    int64_t *ptr;            /* n + 1 */
    int32_t *row;
    int64_t *pos;
} ref_columns;

static void ref_columns_build(const krill_csr *a, ref_columns *c)
{
    const int32_t n = a->n_rows;
    int64_t *next = calloc((size_t)n + 1, sizeof *next);
    c->ptr = calloc((size_t)n + 2, sizeof *c->ptr);
    c->row = malloc((size_t)a->nnz * sizeof *c->row + 8);
    c->pos = malloc((size_t)a->nnz * sizeof *c->pos + 8);
    if (!next || !c->ptr || !c->row || !c->pos) exit(1);
    for (int32_t i = 0; i < n; i++)
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
            if (a->col[p] < i) c->ptr[a->col[p] + 1]++;
    for (int32_t k = 0; k < n; k++) c->ptr[k + 1] += c->ptr[k];
    memcpy(next, c->ptr, (size_t)n * sizeof *next);
    for (int32_t i = 0; i < n; i++)   /* rows ascending: each column's list is sorted */
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
            if (a->col[p] < i) {
                c->row[next[a->col[p]]] = i;
                c->pos[next[a->col[p]]++] = p;
            }
    free(next);
}

static void ref_columns_free(ref_columns *c)
{
    free(c->ptr);
    free(c->row);
    free(c->pos);
}

/* The reference factors in the library's layout (ilu_impl.h), and the first row that this
 * file's own reading of the pivot rule refuses (-1: none; -2: a diagonal entry is missing,
 * missing_row says which). */
typedef struct ref_factor {
    double *f;
    int32_t fail_row;
    int32_t missing_row;
} ref_factor;

static double row_max_abs(const krill_csr *a, int32_t i)
{
    double m = 0.0;
    for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
        if (fabs(a->val[p]) > m) m = fabs(a->val[p]);
    return m;
}

/* ILU(0), KIJ: for k = 0..n-1, for i > k with (i,k) stored: a_ik /= a_kk, and for j > k with
 * (k,j) and (i,j) stored: a_ij -= a_ik a_kj. IC(0), KIJ on the lower triangle: a_kk =
 * sqrt(a_kk), a_ik /= a_kk for i > k, and a_ij -= a_ik a_jk for k < j <= i with (i,j), (i,k),
 * (j,k) stored; then L^T copied to the upper part. No check stops it: the pivot rule is
 * applied afterwards, row by row, to the finished values (row i's only depend on rows < i). */
static ref_factor ref_factorize(const krill_csr *a, int ic)
{
    ref_factor r = {NULL, -1, -1};
    const int32_t n = a->n_rows;
    double *f = malloc((size_t)a->nnz * sizeof *f + 8), *dpre = malloc((size_t)n * 8 + 8);
    int64_t *dg = malloc((size_t)n * sizeof *dg + 8);
    ref_columns c;
    if (!f || !dpre || !dg) exit(1);
    memcpy(f, a->val, (size_t)a->nnz * sizeof *f);
    for (int32_t i = 0; i < n; i++) {
        dg[i] = ref_find(a, i, i);
        if (dg[i] < 0 && r.missing_row < 0) r.missing_row = i;
    }
    if (r.missing_row >= 0) {
        r.fail_row = -2;
        free(f);
        free(dpre);
        free(dg);
        return r;
    }
    ref_columns_build(a, &c);
    for (int32_t k = 0; k < n; k++) {
        if (ic) {
            dpre[k] = f[dg[k]];
            f[dg[k]] = sqrt(f[dg[k]]);
        }
        for (int64_t s = c.ptr[k]; s < c.ptr[k + 1]; s++) f[c.pos[s]] = f[c.pos[s]] / f[dg[k]];
        if (!ic) {
            for (int64_t s = c.ptr[k]; s < c.ptr[k + 1]; s++)
                for (int64_t q = dg[k] + 1; q < a->row_ptr[k + 1]; q++) {
                    int64_t t = ref_find(a, c.row[s], a->col[q]);
                    if (t >= 0) f[t] -= f[c.pos[s]] * f[q];
                }
        } else {
            for (int64_t sj = c.ptr[k]; sj < c.ptr[k + 1]; sj++)
                for (int64_t si = sj; si < c.ptr[k + 1]; si++) {
                    int64_t t = ref_find(a, c.row[si], c.row[sj]);
                    if (t >= 0) f[t] -= f[c.pos[si]] * f[c.pos[sj]];
                }
        }
    }
    for (int32_t i = 0; i < n && r.fail_row < 0; i++) {
        const double pivot = ic ? dpre[i] : f[dg[i]], least = 1e-12 * row_max_abs(a, i);
        int bad = !isfinite(pivot) || (ic ? !(pivot > least) : !(fabs(pivot) > least));
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
            if ((!ic || a->col[p] <= i) && !isfinite(f[p])) bad = 1;
        if (bad) r.fail_row = i;
    }
    if (ic)   /* the upper part holds L^T */
        for (int32_t i = 0; i < n; i++)
            for (int64_t p = dg[i] + 1; p < a->row_ptr[i + 1]; p++)
                f[p] = f[ref_find(a, a->col[p], i)];
    ref_columns_free(&c);
    free(dpre);
    free(dg);
    r.f = f;
    return r;
}

/* z = U^{-1} L^{-1} r with factors f (library layout), serially, row by row, each row's sum
 * in column order. */
static void ref_solve(const krill_csr *a, const double *f, int unit_lower, const double *r,
                      double *z)
{
    const int32_t n = a->n_rows;
    double *y = malloc((size_t)n * sizeof *y + 8);
    if (!y) exit(1);
    for (int32_t i = 0; i < n; i++) {
        double s = r[i], d = 1.0;
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++) {
            if (a->col[p] < i) s -= f[p] * y[a->col[p]];
            if (a->col[p] == i) d = f[p];
        }
        y[i] = unit_lower ? s : s * (1.0 / d);
    }
    for (int32_t i = n - 1; i >= 0; i--) {
        double s = y[i], d = 1.0;
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++) {
            if (a->col[p] > i) s -= f[p] * z[a->col[p]];
            if (a->col[p] == i) d = f[p];
        }
        z[i] = s * (1.0 / d);
    }
    free(y);
}

/* Backward error of z as a solution of L U z = r (factors f): the computed y and z satisfy
 * (L + dL) y = r, (U + dU) z = y with |dL| <= g |L|, |dU| <= g |U|, g = gamma_{K+2} for rows
 * of at most K entries summed in any order (and the division), so |r - L U z| <= (2g + g^2)
 * |L||U||z|; forming L U z here adds up to 2g |L||U||z| more. Checked: every row within
 * 6 (K + 2) eps (|L||U||z|)_i. Returns the largest ratio to that bound (<= 1 passes). */
static double check_backward(const krill_csr *a, const double *f, int unit_lower,
                             const double *r, const double *z)
{
    const int32_t n = a->n_rows;
    const double g = 6.0 * (double)(longest_row(a) + 2) * DBL_EPSILON;
    double *w = malloc((size_t)n * 8 + 8), *wa = malloc((size_t)n * 8 + 8), worst = 0.0;
    if (!w || !wa) exit(1);
    for (int32_t i = 0; i < n; i++) {     /* w = U z, wa = |U||z| */
        w[i] = wa[i] = 0.0;
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
            if (a->col[p] >= i) {
                w[i] += f[p] * z[a->col[p]];
                wa[i] += fabs(f[p]) * fabs(z[a->col[p]]);
            }
    }
    for (int32_t i = 0; i < n; i++) {     /* r - L w against g |L| wa */
        double v = 0.0, va = 0.0, ratio;
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++) {
            const int32_t j = a->col[p];
            const double l = j == i && unit_lower ? 1.0 : f[p];
            if (j <= i) {
                v += l * w[j];
                va += fabs(l) * wa[j];
            }
        }
        ratio = fabs(r[i] - v) / (g * va + DBL_MIN);
        if (!(ratio <= worst)) worst = ratio;   /* NaN propagates as a failure */
    }
    free(w);
    free(wa);
    return worst;
}

/* The row number in "... row N (0-based) ...", or -1. */
static int32_t message_row(const char *msg)
{
    const char *end = strstr(msg, " (0-based)"), *p = end;
    if (!end) return -1;
    while (p > msg && p[-1] >= '0' && p[-1] <= '9') p--;
    return p == end ? -1 : (int32_t)atol(p);
}

/* ---- one matrix, one kind ------------------------------------------------------------- */

typedef struct run_opts {
    int forward_check;       /* also compare z with the reference's within 1e-9 (GPU) */
    int quiet;               /* refusals are expected (testdata): no line for them */
} run_opts;

/* -A when every a_ii of the square a is negative (ic0 then factors -A and applies
 * -(L L^T)^{-1}), else NULL. */
static krill_csr *negated_if_negative(const krill_csr *a)
{
    krill_csr *b = NULL;
    for (int32_t i = 0; i < a->n_rows; i++) {
        const int64_t d = ref_find(a, i, i);
        if (d < 0 || !(a->val[d] < 0.0)) return NULL;
    }
    if (a->n_rows == 0 || krill_csr_copy(a, &b) != KRILL_OK) return NULL;
    for (int64_t p = 0; p < b->nnz; p++) b->val[p] = -b->val[p];
    return b;
}

/* Build kind ("ilu0"/"ic0") on given, compare the factors and one apply with the reference
 * (of -given for ic0 when its diagonal is all negative, z negated); a refusal must be the
 * reference's first refused row. Returns 1 when it was built. */
static int check_matrix(krill_ctx *ctx, const krill_csr *given, const char *kind,
                        const char *what, run_opts o)
{
    const int ic = strncmp(kind, "ic0", 3) == 0;   /* "ic0" or "ic0:G" */
    krill_csr *neg = ic ? negated_if_negative(given) : NULL;
    const krill_csr *a = neg ? neg : given;
    const int32_t n = a->n_rows;
    ref_factor ref = ref_factorize(a, ic);
    krill_mat *m = NULL;
    krill_pc *pc = NULL;
    krill_vec *vr = NULL, *vz = NULL;
    krill_ilu_factors fac;
    double *r = malloc((size_t)n * 8 + 8), *z = malloc((size_t)n * 8 + 8);
    double *zref = malloc((size_t)n * 8 + 8), *got = malloc((size_t)a->nnz * 8 + 8);
    krill_status st;
    int built = 0;
    if (!r || !z || !zref || !got) exit(1);
    CHECK_OK(krill_mat_create(ctx, given, "csr", &m));
    st = krill_pc_create(m, kind, &pc);
    if (st != KRILL_OK) {
        const int32_t row = message_row(krill_last_error());
        const int agrees = st == KRILL_ERR_NUMERIC &&
                           (ref.fail_row == -2 ? row == ref.missing_row : row == ref.fail_row);
        CHECK(agrees);
        if (!agrees || !o.quiet)
            printf("  %s on %s refused (%s): %s; reference: first refused row %d\n", kind, what,
                   krill_status_string(st), krill_last_error(),
                   ref.fail_row == -2 ? ref.missing_row : ref.fail_row);
        goto done;
    }
    built = 1;
    CHECK(ref.fail_row == -1);
    if (ref.fail_row != -1) {
        fprintf(stderr, "  %s on %s: built, but the reference refuses row %d\n", kind, what,
                ref.fail_row);
        goto done;
    }
    CHECK_OK(krill_pc_ilu_factors(pc, &fac));
    CHECK(fac.n == n && fac.nnz == a->nnz && fac.unit_lower == !ic &&
          fac.sign == (neg ? -1 : 1) && fac.alpha == 0.0);
    CHECK_OK(krill_mem_download(ctx, got, fac.val, (size_t)a->nnz * sizeof *got));
    if (a->nnz > 0 && memcmp(got, ref.f, (size_t)a->nnz * sizeof *got) != 0) {
        CHECK(0);
        fprintf(stderr, "  %s on %s: factors differ from the reference (max rel %.3g)\n", kind,
                what, tu_max_rel_diff(got, ref.f, a->nnz));
    }

    tu_random(r, n, 1234);
    ref_solve(a, ref.f, !ic, r, zref);
    CHECK_OK(krill_vec_create(ctx, n, &vr));
    CHECK_OK(krill_vec_create(ctx, n, &vz));
    CHECK_OK(krill_vec_upload(vr, r));
    CHECK_OK(krill_pc_apply(pc, vr, vz));
    CHECK_OK(krill_vec_download(vz, z));
    for (int32_t i = 0; neg && i < n; i++) z[i] = -z[i];
    {
        const double back = check_backward(a, ref.f, !ic, r, z);
        CHECK(back <= 1.0);
        if (!(back <= 1.0))
            fprintf(stderr, "  %s on %s: backward error %.3g x its bound\n", kind, what, back);
    }
#ifdef ILU_TEST_GPU
    if (o.forward_check) {
        const double diff = tu_max_rel_diff(z, zref, n);
        CHECK(diff <= 1e-9);
        if (!(diff <= 1e-9)) fprintf(stderr, "  %s on %s: z differs by %.3g\n", kind, what, diff);
    }
#else
    (void)o;
    if (n > 0 && memcmp(z, zref, (size_t)n * sizeof *z) != 0) {
        CHECK(0);
        fprintf(stderr, "  %s on %s: z differs from the reference solve (max rel %.3g)\n", kind,
                what, tu_max_rel_diff(z, zref, n));
    }
#endif
done:
    krill_vec_destroy(&vr);
    krill_vec_destroy(&vz);
    krill_pc_destroy(&pc);
    krill_mat_destroy(&m);
    krill_csr_destroy(&neg);
    free(ref.f);
    free(r);
    free(z);
    free(zref);
    free(got);
    return built;
}

/* ---- tests ------------------------------------------------------------------------------- */

/* Every group size of the GPU solves (ilu_impl.h), forced, on matrices whose row count is
 * not a multiple of most of them (a short last group): poisson3d:7 has 343 rows,
 * elasticity3d:3,2,2 81, convdiff3d:9 729. On the CPU the parameter is accepted and the
 * solves are the reference's, bit for bit. */
static void test_group_sizes(krill_ctx *ctx)
{
    static const char *spd[] = {"poisson3d:7", "elasticity3d:3,2,2"};
    static const int sizes[] = {1, 2, 3, 4, 6};
    const run_opts o = {1, 0};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        char ilu[16], ic[16];
        krill_csr *a = su_gen("convdiff3d:9");
        snprintf(ilu, sizeof ilu, "ilu0:%d", sizes[k]);
        snprintf(ic, sizeof ic, "ic0:%d", sizes[k]);
        CHECK(check_matrix(ctx, a, ilu, "convdiff3d:9", o));
        krill_csr_destroy(&a);
        for (size_t s = 0; s < sizeof spd / sizeof *spd; s++) {
            a = su_gen(spd[s]);
            CHECK(check_matrix(ctx, a, ilu, spd[s], o));
            CHECK(check_matrix(ctx, a, ic, spd[s], o));
            krill_csr_destroy(&a);
        }
    }
}

static void test_generated(krill_ctx *ctx)
{
    static const char *nonsym[] = {"convdiff3d:8,3", "convdiff3d:12", "band3:500",
                                   "rand100:300", "band1x:300"};
    static const char *spd[] = {"poisson3d:10", "elasticity3d:4,3,3", "poisson3d:40"};
    const run_opts o = {1, 0};
    for (size_t s = 0; s < sizeof nonsym / sizeof *nonsym; s++) {
        krill_csr *a = su_gen(nonsym[s]);
        CHECK(check_matrix(ctx, a, "ilu0", nonsym[s], o));
        krill_csr_destroy(&a);
    }
    for (size_t s = 0; s < sizeof spd / sizeof *spd; s++) {
        krill_csr *a = su_gen(spd[s]);
        CHECK(krill_csr_is_symmetric(a));
        CHECK(check_matrix(ctx, a, "ilu0", spd[s], o));
        CHECK(check_matrix(ctx, a, "ic0", spd[s], o));
        krill_csr_destroy(&a);
    }
    {   /* 4 x 4 with fill that ILU(0) drops, 1 x 1 */
        const double d4[16] = {4, -1, 0, -1, -1, 4, -1, 0, 0, -1, 4, -1, -1, 0, -1, 4};
        const double d1[1] = {-2.5};
        krill_csr *a4 = tu_csr_from_dense(4, d4), *a1 = tu_csr_from_dense(1, d1);
        CHECK(check_matrix(ctx, a4, "ilu0", "4 x 4 cycle", o));
        CHECK(check_matrix(ctx, a4, "ic0", "4 x 4 cycle", o));
        CHECK(check_matrix(ctx, a1, "ilu0", "1 x 1", o));
        krill_csr_destroy(&a4);
        krill_csr_destroy(&a1);
    }
}

#ifndef ILU_TEST_GPU
/* Level sets against their definition; poisson3d:K in natural order has 3K - 2 levels in
 * each direction (level(x, y, z) = x + y + z). The parallel CPU path is taken on
 * poisson3d:40 with 3 threads (that is where test_generated's bitwise check covers it). */
static void check_levels(const krill_ilu_host *h, const krill_ilu_levels *lv, int upper)
{
    int32_t *level = malloc((size_t)h->n * sizeof *level + 8);
    int ok = lv->level_ptr[0] == 0 && lv->level_ptr[lv->n_levels] == h->n;
    if (!level) exit(1);
    for (int32_t i = 0; i < h->n; i++) level[i] = -1;
    for (int32_t l = 0; l < lv->n_levels; l++) {
        ok &= lv->level_ptr[l + 1] > lv->level_ptr[l];
        for (int32_t p = lv->level_ptr[l]; p < lv->level_ptr[l + 1]; p++) {
            ok &= level[lv->rows[p]] == -1;
            level[lv->rows[p]] = l;
        }
    }
    for (int32_t i = 0; i < h->n && ok; i++) {
        int32_t want = 0;
        for (int64_t p = h->row_ptr[i]; p < h->row_ptr[i + 1]; p++) {
            const int32_t j = h->col[p];
            if ((upper ? j > i : j < i) && level[j] + 1 > want) want = level[j] + 1;
        }
        ok &= level[i] == want;
    }
    CHECK(ok);
    free(level);
}

static void test_levels(void)
{
    for (int k = 2; k <= 6; k += 2) {
        char spec[32];
        krill_csr *a = NULL;
        krill_ilu_host h;
        snprintf(spec, sizeof spec, "poisson3d:%d", k);
        a = su_gen(spec);
        CHECK_OK(krill_ilu_analyze(a, KRILL_ILU_KIND_IC0, "ic0", &h));
        CHECK(h.lower.n_levels == 3 * k - 2 && h.upper.n_levels == 3 * k - 2);
        check_levels(&h, &h.lower, 0);
        check_levels(&h, &h.upper, 1);
        krill_ilu_host_free(&h);
        krill_csr_destroy(&a);
    }
    {
        krill_csr *a = su_gen("convdiff3d:40");
        krill_ilu_host h;
        CHECK_OK(krill_ilu_analyze(a, KRILL_ILU_KIND_ILU0, "ilu0", &h));
        CHECK(krill_ilu_cpu_parallel(&h, 3) && !krill_ilu_cpu_parallel(&h, 1));
        check_levels(&h, &h.lower, 0);
        check_levels(&h, &h.upper, 1);
        krill_ilu_host_free(&h);
        krill_csr_destroy(&a);
        a = su_gen("rand100:300");   /* irregular graph */
        CHECK_OK(krill_ilu_analyze(a, KRILL_ILU_KIND_ILU0, "ilu0", &h));
        check_levels(&h, &h.lower, 0);
        check_levels(&h, &h.upper, 1);
        krill_ilu_host_free(&h);
        krill_csr_destroy(&a);
    }
}

/* The GPU solves' groups (krill_ilu_groups) against their definition: every row once,
 * groups of consecutive rows in solve order, levels ascending, full groups but a level's
 * last, each row's entries outside its group all in groups of earlier levels and, with
 * those inside, the whole triangle. */
static void check_tri_groups(const krill_ilu_host *h, const krill_ilu_tri_groups *t,
                             int32_t rows, int upper)
{
    const int32_t n = h->n;
    int32_t *level = malloc((size_t)n * sizeof *level + 8);
    int ok = t->n_groups == (n + rows - 1) / rows && t->level_ptr[0] == 0 &&
             t->level_ptr[t->n_levels] == t->n_groups && t->group_start[0] == 0 &&
             t->group_start[t->n_groups] == n;
    if (!level) exit(1);
    for (int32_t i = 0; i < n; i++) level[i] = -1;
    for (int32_t l = 0; l < t->n_levels && ok; l++) {
        ok &= t->level_ptr[l + 1] > t->level_ptr[l];
        for (int32_t s = t->level_ptr[l]; s < t->level_ptr[l + 1] && ok; s++) {
            const int32_t p0 = t->group_start[s], m = t->group_start[s + 1] - p0;
            const int32_t g0 = t->order[p0] / rows * rows;
            /* a level's groups but its last are full (the GPU kernel computes their starts) */
            ok &= m >= 1 && (m == rows || (m < rows && s + 1 == t->level_ptr[l + 1]));
            for (int32_t b = 0; b < m && ok; b++) {
                const int32_t i = t->order[p0 + b];
                ok &= i == (upper ? g0 + m - 1 - b : g0 + b) && level[i] == -1;
                level[i] = l;
            }
        }
    }
    for (int32_t p = 0; p < n && ok; p++) {
        const int32_t i = t->order[p], g0 = i / rows * rows;
        const int64_t lo = upper ? h->diag[i] + 1 : h->row_ptr[i];
        const int64_t hi = upper ? h->row_ptr[i + 1] : h->diag[i];
        int64_t outside = 0;
        for (int64_t e = lo; e < hi; e++) outside += h->col[e] < g0 || h->col[e] >= g0 + rows;
        ok &= t->ptr[p + 1] - t->ptr[p] == outside;
        for (int64_t k = t->ptr[p]; k < t->ptr[p + 1] && ok; k++) {
            const int32_t j = t->order[t->col[k]];
            ok &= level[j] < level[i] && (j < g0 || j >= g0 + rows);
        }
    }
    CHECK(ok);
    free(level);
}

/* The layouts of every group size, and the size the analysis picks: the fewest levels
 * weighted by their cost (ilu_groups.c): elasticity3d:6,4,4: 3, a node's dofs (90 levels a
 * triangle -> 30); poisson3d:8: 1 (B = 2 and 4 cut 22 levels to 18 and 16, not enough);
 * poisson3d:7: 1, no size divides its lines; convdiff3d:9: 1 (B = 3: 25 -> 19). */
static void test_groups(void)
{
    static const struct { const char *spec; int32_t rows; } cases[] = {
        {"poisson3d:8", 1}, {"elasticity3d:6,4,4", 3}, {"poisson3d:7", 1}, {"convdiff3d:9", 1},
        {"rand100:300", -1}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        krill_csr *a = su_gen(cases[c].spec);
        krill_ilu_host h;
        int32_t rows = 0;
        CHECK_OK(krill_ilu_analyze(a, KRILL_ILU_KIND_ILU0, "ilu0", &h));
        CHECK_OK(krill_ilu_group_rows(&h, &rows));
        if (cases[c].rows > 0) CHECK(rows == cases[c].rows);
        if (cases[c].rows > 0 && rows != cases[c].rows)
            fprintf(stderr, "  %s: group size %d, expected %d\n", cases[c].spec, rows,
                    cases[c].rows);
        for (int k = 0; k < KRILL_ILU_GROUP_SIZES; k++) {
            krill_ilu_groups g;
            CHECK_OK(krill_ilu_groups_build(&h, krill_ilu_group_sizes[k], &g));
            check_tri_groups(&h, &g.lower, g.rows, 0);
            check_tri_groups(&h, &g.upper, g.rows, 1);
            for (int32_t p = 0; p < h.n; p++)
                CHECK(g.upper.order[g.to_backward[p]] == g.lower.order[p]);
            if (krill_ilu_group_sizes[k] == 1)
                CHECK(g.lower.n_levels == h.lower.n_levels && g.upper.n_levels == h.upper.n_levels);
            krill_ilu_groups_free(&g);
        }
        krill_ilu_host_free(&h);
        krill_csr_destroy(&a);
    }
}

/* One thread gives the bits of three (and of the reference). */
static void test_threads(void)
{
    krill_ctx *one = tu_cpu_ctx(1);
    krill_csr *a = su_gen("convdiff3d:40,2");
    const run_opts o = {0, 0};
    CHECK(check_matrix(one, a, "ilu0", "convdiff3d:40,2 on 1 thread", o));
    krill_csr_destroy(&a);
    krill_ctx_destroy(&one);
}
#endif

/* Refusal of kind on the dense n x n matrix: status, and the message names `row` and has
 * `phrase`. */
static void expect_refusal(krill_ctx *ctx, int32_t n, const double *dense, const char *kind,
                           krill_status want, int32_t row, const char *phrase)
{
    krill_csr *a = tu_csr_from_dense(n, dense);
    krill_mat *m = NULL;
    krill_pc *pc = NULL;
    CHECK_OK(krill_mat_create(ctx, a, NULL, &m));
    CHECK_STATUS(krill_pc_create(m, kind, &pc), want);
    CHECK(pc == NULL);
    CHECK(strstr(krill_last_error(), phrase) != NULL);
    if (row >= 0) CHECK(message_row(krill_last_error()) == row);
    if (!strstr(krill_last_error(), phrase) || (row >= 0 && message_row(krill_last_error()) != row))
        fprintf(stderr, "  expected \"%s\" (row %d), got: %s\n", phrase, row, krill_last_error());
    krill_mat_destroy(&m);
    krill_csr_destroy(&a);
}

static void test_errors(krill_ctx *ctx)
{
    const double zero_pivot[4] = {1, 1, 1, 1};
    const double tiny_pivot[4] = {1, 1, 1, 1 + 0x1p-40};   /* u = 2^-40 < 1e-12 */
    const double small_pivot[4] = {1, 1, 1, 1 + 0x1p-38};  /* u = 2^-38 > 1e-12: accepted */
    const double inf_pivot[4] = {1, 2, 1e308, 1};          /* u_11 = 1 - 2e308 = -Inf */
    const double growth[4] = {1e-10, 0, 1e300, 1e300};     /* l_10 = 1e310: Inf */
    const double indefinite[4] = {1, 2, 2, 1};
    const double negative[4] = {-1, 0, 0, 1};
    const double missing[9] = {2, 1, 0, 1, 0, 1, 0, 1, 2};
    const double nonsym[4] = {2, 1, 0.5, 2};
    expect_refusal(ctx, 2, zero_pivot, "ilu0", KRILL_ERR_NUMERIC, 1, "pivot u_ii = 0");
    expect_refusal(ctx, 2, tiny_pivot, "ilu0", KRILL_ERR_NUMERIC, 1, "tiny pivot");
    expect_refusal(ctx, 2, tiny_pivot, "ic0:noshift", KRILL_ERR_NUMERIC, 1, "tiny pivot d");
    expect_refusal(ctx, 2, inf_pivot, "ilu0", KRILL_ERR_NUMERIC, 1, "not finite");
    expect_refusal(ctx, 2, growth, "ilu0", KRILL_ERR_NUMERIC, 1, "factor entry (1, 0)");
    expect_refusal(ctx, 2, indefinite, "ic0:noshift", KRILL_ERR_NUMERIC, 1,
                   "not SPD enough for IC(0)");
    expect_refusal(ctx, 2, negative, "ic0:noshift", KRILL_ERR_NUMERIC, 0,
                   "not SPD enough for IC(0)");
    expect_refusal(ctx, 3, missing, "ilu0", KRILL_ERR_NUMERIC, 1, "no diagonal entry");
    expect_refusal(ctx, 3, missing, "ic0", KRILL_ERR_NUMERIC, 1, "no diagonal entry");
    expect_refusal(ctx, 2, nonsym, "ic0", KRILL_ERR_ARG, -1, "use ilu0");
    expect_refusal(ctx, 2, zero_pivot, "ilu0:5", KRILL_ERR_ARG, -1, "one of 1, 2, 3, 4, 6");
    expect_refusal(ctx, 2, zero_pivot, "ic0:0", KRILL_ERR_ARG, -1, "one of 1, 2, 3, 4, 6");
    expect_refusal(ctx, 2, zero_pivot, "ilu0:2x", KRILL_ERR_ARG, -1, "ilu0:2x");
    {
        krill_csr *a = tu_csr_from_dense(2, small_pivot);
        const run_opts o = {0, 0};
        CHECK(check_matrix(ctx, a, "ilu0", "pivot 2^-38", o));
        krill_csr_destroy(&a);
    }
}

/* sym = dense n x n with its strictly upper triangle replaced by the lower one's mirror. */
static void mirror_lower(int32_t n, const double *dense, double *sym)
{
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < n; j++)
            sym[i * n + j] = j <= i ? dense[i * n + j] : dense[j * n + i];
}

/* ic0 on dense n x n, which is not symmetric and, were it symmetric, would be refused at an
 * earlier row: the asymmetry is reported all the same (KRILL_ERR_ARG), though the CPU
 * factorization, which checks symmetry row by row, meets the refused row first. Its lower
 * triangle mirrored (the matrix made symmetric, the refused row unchanged) is refused at
 * `row` with `phrase`: the failure the asymmetry must win over is there. */
static void expect_asymmetry_first(krill_ctx *ctx, int32_t n, const double *dense, int32_t row,
                                   const char *phrase)
{
    double sym[64];
    mirror_lower(n, dense, sym);
    expect_refusal(ctx, n, dense, "ic0", KRILL_ERR_ARG, -1, "not symmetric");
    expect_refusal(ctx, n, sym, "ic0:noshift", KRILL_ERR_NUMERIC, row, phrase);
}

/* The order of ic0's errors: asymmetry before a missing diagonal or a refused pivot in an
 * earlier row; asymmetry of the pattern alone (an entry whose mirror is not stored), which
 * ilu0 factors like any other pattern. */
static void test_symmetry(krill_ctx *ctx)
{
    const double neg_pivot_values[16] = {-1, 1, 0, 0,   /* d_0 = -1; a_23 = 1, a_32 = 0.5 */
                                         1, 4, 1, 0,
                                         0, 1, 4, 1,
                                         0, 0, 0.5, 4};
    const double indef_upper[16] = {1, 2, 0, 0,         /* d_1 = -3; (1, 3) without (3, 1) */
                                    2, 1, 1, 1,
                                    0, 1, 4, 1,
                                    0, 0, 1, 4};
    const double indef_lower[16] = {1, 2, 0, 0,         /* d_1 = -3; (3, 0) without (0, 3) */
                                    2, 1, 1, 0,
                                    0, 1, 4, 1,
                                    1, 0, 1, 4};
    const double no_diag[16] = {4, 1, 0, 0,             /* no a_11; a_23 = 1, a_32 = 0.5 */
                                1, 0, 1, 0,
                                0, 1, 4, 1,
                                0, 0, 0.5, 4};
    const double last_upper[16] = {4, -1, 0, 0.5,       /* (0, 3) without (3, 0): the last */
                                   -1, 4, -1, 0,        /* place of row 0 is never met */
                                   0, -1, 4, -1,
                                   0, 0, -1, 4};
    const double skipped_upper[16] = {4, -1, 0.5, 0.25, /* (0, 2) without (2, 0): row 3 */
                                      -1, 4, -1, 0,     /* meets it looking for (0, 3) */
                                      0, -1, 4, -1,
                                      0.25, 0, -1, 4};
    const run_opts o = {1, 0};
    expect_asymmetry_first(ctx, 4, neg_pivot_values, 0, "not SPD enough for IC(0)");
    expect_asymmetry_first(ctx, 4, indef_upper, 1, "not SPD enough for IC(0)");
    expect_asymmetry_first(ctx, 4, indef_lower, 1, "not SPD enough for IC(0)");
    expect_asymmetry_first(ctx, 4, no_diag, 1, "no diagonal entry");
    expect_refusal(ctx, 4, last_upper, "ic0", KRILL_ERR_ARG, -1, "not symmetric");
    expect_refusal(ctx, 4, skipped_upper, "ic0", KRILL_ERR_ARG, -1, "not symmetric");
    {   /* ilu0 factors both; their mirrored lower triangles, ic0 too */
        double sym[16];
        krill_csr *a = tu_csr_from_dense(4, last_upper), *b = tu_csr_from_dense(4, skipped_upper), *s;
        CHECK(check_matrix(ctx, a, "ilu0", "(0, 3) without (3, 0)", o));
        CHECK(check_matrix(ctx, b, "ilu0", "(0, 2) without (2, 0)", o));
        mirror_lower(4, last_upper, sym);
        s = tu_csr_from_dense(4, sym);
        CHECK(check_matrix(ctx, s, "ic0", "(0, 3) dropped", o));
        krill_csr_destroy(&s);
        mirror_lower(4, skipped_upper, sym);
        s = tu_csr_from_dense(4, sym);
        CHECK(check_matrix(ctx, s, "ic0", "(0, 2) dropped", o));
        krill_csr_destroy(&s);
        krill_csr_destroy(&a);
        krill_csr_destroy(&b);
    }
}

/* New values, same pattern: the factors follow; a failed update makes apply (and the factor
 * accessor) refuse until a good one. */
/* pc's factors (after an update) are the reference factorization of a, bit for bit; got:
 * a->nnz doubles of scratch */
static void check_factors(krill_ctx *ctx, const krill_pc *pc, const krill_csr *a, int ic,
                          double *got)
{
    krill_ilu_factors fac;
    ref_factor ref = ref_factorize(a, ic);
    CHECK(ref.fail_row == -1);
    CHECK_OK(krill_pc_ilu_factors(pc, &fac));
    CHECK_OK(krill_mem_download(ctx, got, fac.val, (size_t)a->nnz * sizeof *got));
    CHECK(memcmp(got, ref.f, (size_t)a->nnz * sizeof *got) == 0);
    free(ref.f);
}

static void test_update(krill_ctx *ctx)
{
    krill_csr *a = su_gen("convdiff3d:6,2"), *b = NULL;
    krill_mat *m = NULL;
    krill_pc *pc = NULL;
    krill_vec *vr = NULL, *vz = NULL;
    krill_ilu_factors fac;
    double a01, *got = malloc((size_t)a->nnz * 8);
    if (!got) exit(1);
    CHECK_OK(krill_csr_copy(a, &b));
    for (int64_t p = 0; p < b->nnz; p++)
        b->val[p] = 1.5 * b->val[p] + 0.01 * (double)(p % 7);
    CHECK_OK(krill_mat_create(ctx, a, NULL, &m));
    CHECK_OK(krill_pc_create(m, "ilu0", &pc));
    CHECK(strstr(krill_pc_describe(pc), "levels") != NULL);
    CHECK_OK(krill_vec_create(ctx, a->n_rows, &vr));
    CHECK_OK(krill_vec_create(ctx, a->n_rows, &vz));
    CHECK_OK(krill_vec_fill(vr, 1.0));

    CHECK_OK(krill_mat_update_values(m, b->val));
    CHECK_OK(krill_pc_update_values(pc));
    check_factors(ctx, pc, b, 0, got);

    /* row 0 zeroed: the pivot u_00 = 0 is refused */
    for (int64_t p = b->row_ptr[0]; p < b->row_ptr[1]; p++) b->val[p] = 0.0;
    CHECK_OK(krill_mat_update_values(m, b->val));
    CHECK_STATUS(krill_pc_update_values(pc), KRILL_ERR_NUMERIC);
    CHECK(message_row(krill_last_error()) == 0);
    CHECK_STATUS(krill_pc_apply(pc, vr, vz), KRILL_ERR_NUMERIC);
    CHECK(strstr(krill_last_error(), "update") != NULL);
    CHECK_STATUS(krill_pc_ilu_factors(pc, &fac), KRILL_ERR_ARG);

    CHECK_OK(krill_mat_update_values(m, a->val));
    CHECK_OK(krill_pc_update_values(pc));
    CHECK_OK(krill_pc_apply(pc, vr, vz));
    check_factors(ctx, pc, a, 0, got);

    /* ic0 refuses new values that are not symmetric */
    krill_pc_destroy(&pc);
    krill_mat_destroy(&m);
    krill_csr_destroy(&a);
    krill_vec_destroy(&vr);
    krill_vec_destroy(&vz);
    a = su_gen("poisson3d:5");
    free(got);
    got = malloc((size_t)a->nnz * 8);
    if (!got) exit(1);
    CHECK_OK(krill_vec_create(ctx, a->n_rows, &vr));
    CHECK_OK(krill_vec_create(ctx, a->n_rows, &vz));
    CHECK_OK(krill_mat_create(ctx, a, NULL, &m));
    CHECK_OK(krill_pc_create(m, "ic0:noshift", &pc));
    a01 = a->val[1];
    a->val[1] += 0.25;   /* (0, 1) but not (1, 0) */
    CHECK_OK(krill_mat_update_values(m, a->val));
    CHECK_STATUS(krill_pc_update_values(pc), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "not symmetric") != NULL);
    CHECK_STATUS(krill_pc_apply(pc, vr, vz), KRILL_ERR_NUMERIC);
    a->val[1] = a01;
    {   /* d_0 < 0 and, in the last row, (n-1, j) but not (j, n-1): the asymmetry is reported;
           then d_0 alone; apply refuses throughout, until the matrix's own values return */
        const int64_t d0 = ref_find(a, 0, 0), last = a->row_ptr[a->n_rows - 1];
        const double a_last = a->val[last];
        a->val[d0] = -a->val[d0];
        a->val[last] += 0.25;
        CHECK_OK(krill_mat_update_values(m, a->val));
        CHECK_STATUS(krill_pc_update_values(pc), KRILL_ERR_ARG);
        CHECK(strstr(krill_last_error(), "not symmetric") != NULL);
        CHECK_STATUS(krill_pc_apply(pc, vr, vz), KRILL_ERR_NUMERIC);
        a->val[last] = a_last;
        CHECK_OK(krill_mat_update_values(m, a->val));
        CHECK_STATUS(krill_pc_update_values(pc), KRILL_ERR_NUMERIC);
        CHECK(message_row(krill_last_error()) == 0);
        CHECK(strstr(krill_last_error(), "not SPD enough for IC(0)") != NULL);
        CHECK_STATUS(krill_pc_apply(pc, vr, vz), KRILL_ERR_NUMERIC);
        CHECK_STATUS(krill_pc_ilu_factors(pc, &fac), KRILL_ERR_ARG);
        a->val[d0] = -a->val[d0];
    }
    CHECK_OK(krill_mat_update_values(m, a->val));
    CHECK_OK(krill_pc_update_values(pc));
    CHECK_OK(krill_pc_apply(pc, vr, vz));
    check_factors(ctx, pc, a, 1, got);

    krill_vec_destroy(&vr);
    krill_vec_destroy(&vz);
    krill_pc_destroy(&pc);
    krill_mat_destroy(&m);
    krill_csr_destroy(&a);
    krill_csr_destroy(&b);
    free(got);
}

/* Every allocation of a build failing in turn: a clean error, never a crash or a leak (the
 * sanitizer build checks leaks). */
static void test_faults(krill_ctx *ctx)
{
    static const char *kinds[2] = {"ilu0", "ic0"};
    krill_csr *a = su_gen("poisson3d:4");
    krill_mat *m = NULL;
    CHECK_OK(krill_mat_create(ctx, a, NULL, &m));
    for (int kind = 0; kind < 2; kind++) su_check_pc_faults(m, kinds[kind], 9);
    krill_mat_destroy(&m);
    krill_csr_destroy(&a);
}

/* Iterations to rtol 1e-8 from x = 0, or -1 when it did not converge or the true residual
 * is not below 1e-7 (the reference SpMV's). */
static int iterations(krill_ctx *ctx, const char *spec, krill_solver_type solver,
                      const char *pc_name)
{
    su_system s;
    krill_pc *pc = NULL;
    krill_solver_opts o;
    krill_solve_info info = {0};
    int its = -1;
    su_system_make(&s, ctx, su_gen(spec), NULL, 42);
    CHECK_OK(krill_pc_create(s.a, pc_name, &pc));
    krill_solver_opts_default(&o);
    o.solver = solver;
    o.maxit = 2000;
    CHECK_OK(su_solve(&s, pc, &o, &info));
    if (info.reason == KRILL_CONVERGED_RTOL) {
        CHECK_OK(krill_vec_download(s.x, s.x_host));
        if (su_true_relres(s.csr, s.x_host, s.b_host) <= 1e-7) its = info.iterations;
    }
    printf("  %s %s + %s: %d iterations (%s)\n", solver == KRILL_SOLVER_CG ? "CG" : "GMRES",
           spec, pc_name, info.iterations, krill_reason_string(info.reason));
    krill_solve_info_free(&info);
    krill_pc_destroy(&pc);
    su_system_free(&s);
    return its;
}

static void test_convergence(krill_ctx *ctx)
{
    const int g_none = iterations(ctx, "convdiff3d:16,2", KRILL_SOLVER_GMRES, "none");
    const int g_ilu = iterations(ctx, "convdiff3d:16,2", KRILL_SOLVER_GMRES, "ilu0");
    CHECK(g_ilu > 0 && g_none > 0 && 3 * g_ilu <= g_none);
    static const char *spd[] = {"poisson3d:16", "elasticity3d:6,4,4"};
    for (int s = 0; s < 2; s++) {
        const int c_jac = iterations(ctx, spd[s], KRILL_SOLVER_CG, "jacobi");
        const int c_ic = iterations(ctx, spd[s], KRILL_SOLVER_CG, "ic0");
        CHECK(c_ic > 0 && c_jac > 0 && c_ic < c_jac);
    }
}

typedef struct testdata_counts {
    krill_ctx *ctx;
    int ilu_built, ic_built, symmetric;
} testdata_counts;

static void check_testdata_matrix(const krill_csr *a, const char *name, void *user)
{
    testdata_counts *c = user;
    const run_opts o = {0, 1};
    if (a->nnz > 3000000) return;
    c->ilu_built += check_matrix(c->ctx, a, "ilu0", name, o);
    if (krill_csr_is_symmetric(a)) {
        c->symmetric++;
        c->ic_built += check_matrix(c->ctx, a, "ic0:noshift", name, o);
    }
}

static void test_testdata(krill_ctx *ctx)
{
    testdata_counts c = {ctx, 0, 0, 0};
    int tested = tu_for_each_square_mtx(check_testdata_matrix, &c);
    if (tested < 0) return;
    printf("%d testdata matrices: ilu0 built on %d, ic0 on %d of %d symmetric (the rest "
           "refused with the reference's row)\n", tested, c.ilu_built, c.ic_built, c.symmetric);
    CHECK(tested > tu_testdata_expect(50, 10) && c.ilu_built > tu_testdata_expect(20, 5) &&
          c.ic_built > tu_testdata_expect(5, 1));
}

int main(void)
{
    krill_ctx *ctx = make_ctx();
    test_generated(ctx);
#ifndef ILU_TEST_GPU
    test_levels();
    test_groups();
    test_threads();
#endif
    test_group_sizes(ctx);
    test_errors(ctx);
    test_symmetry(ctx);
    test_update(ctx);
    test_faults(ctx);
    test_convergence(ctx);
    test_testdata(ctx);
    krill_ctx_destroy(&ctx);
    return tu_finish("test_ilu");
}
