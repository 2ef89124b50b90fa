/* The ell and ellr formats against the CSR reference: generated matrices (short, long,
 * skewed and empty rows, 1x1, K = 0), every readable real square matrix of testdata, the
 * stored bytes against formulas (2) and (3) of the RBP paper, diagonal, update_values, the
 * refusal when N*K passes 2^31, and CG/GMRES converging with each format.
 * Built twice: CPU (bitwise equal to the reference: rows summed in CSR order, padding
 * skipped) and, with ELL_TEST_GPU, GPU (label gpu; within 1e-13 of the reference). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formats/formats_impl.h"
#include "testutil.h"

static const char *const formats[] = {"ell", "ellr"};

static krill_ctx *make_ctx(void)
{
#ifdef ELL_TEST_GPU
    return tu_gpu_ctx_or_skip();
#else
    return tu_cpu_ctx(3);
#endif
}

/* y(got) against y(ref): bitwise on the CPU, close on the GPU (FMA, other rounding) */
static int same(const double *got, const double *ref, int64_t n)
{
#ifdef ELL_TEST_GPU
    return tu_max_rel_diff(got, ref, n) <= 1e-13;
#else
    return n == 0 || memcmp(got, ref, (size_t)n * sizeof *got) == 0;
#endif
}

static int64_t longest_row(const krill_csr *a)
{
    int64_t k = 0;
    for (int32_t i = 0; i < a->n_rows; i++)
        if (a->row_ptr[i + 1] - a->row_ptr[i] > k) k = a->row_ptr[i + 1] - a->row_ptr[i];
    return k;
}

/* spmv (alpha, beta; beta = 0 over NaN), diagonal, update_values and stats of one format */
static void check_format(krill_ctx *ctx, const krill_csr *a, const char *fmt, const char *what)
{
    const int64_t n = a->n_rows;
    double *x = malloc((size_t)a->n_cols * sizeof *x + 8), *y0 = malloc((size_t)n * 8 + 8);
    double *ref = malloc((size_t)n * 8 + 8), *got = malloc((size_t)n * 8 + 8);
    krill_mat *m = NULL;
    krill_vec *vx = NULL, *vy = NULL;
    krill_csr *b = NULL;
    krill_format_stats s;
    int ok;
    tu_random(x, a->n_cols, 7);
    tu_random(y0, n, 8);
    CHECK_OK(krill_mat_create(ctx, a, fmt, &m));
    CHECK_OK(krill_vec_create(ctx, a->n_cols, &vx));
    CHECK_OK(krill_vec_create(ctx, n, &vy));
    if (!m || !vx || !vy) goto done;
    CHECK_OK(krill_vec_upload(vx, x));

    memcpy(ref, y0, (size_t)n * sizeof *ref);
    krill_csr_spmv_ref(a, 1.5, x, -0.5, ref);
    CHECK_OK(krill_vec_upload(vy, y0));
    CHECK_OK(krill_mat_spmv(m, 1.5, vx, -0.5, vy));
    CHECK_OK(krill_vec_download(vy, got));
    ok = same(got, ref, n);
    CHECK(ok);
    if (!ok) fprintf(stderr, "  %s on %s: y = 1.5 A x - 0.5 y differs\n", fmt, what);

    for (int64_t i = 0; i < n; i++) got[i] = NAN;
    CHECK_OK(krill_vec_upload(vy, got));
    krill_csr_spmv_ref(a, 1.0, x, 0.0, ref);
    CHECK_OK(krill_mat_spmv(m, 1.0, vx, 0.0, vy));
    CHECK_OK(krill_vec_download(vy, got));
    ok = same(got, ref, n);
    CHECK(ok);
    if (!ok) fprintf(stderr, "  %s on %s: y = A x over NaN differs\n", fmt, what);

    if (a->n_rows == a->n_cols) {
        CHECK_OK(krill_mat_diagonal(m, vy));
        CHECK_OK(krill_vec_download(vy, got));
        ok = 1;
        for (int32_t i = 0; i < a->n_rows; i++) {
            double di = 0.0;
            for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
                if (a->col[p] == i) di = a->val[p];
            ok &= got[i] == di;
        }
        CHECK(ok);
    }

    CHECK_OK(krill_csr_copy(a, &b));
    for (int64_t p = 0; b && p < b->nnz; p++) b->val[p] = 0.5 - 2.0 * b->val[p];
    if (b) {
        CHECK_OK(krill_mat_update_values(m, b->val));
        krill_csr_spmv_ref(b, 1.0, x, 0.0, ref);
        CHECK_OK(krill_mat_spmv(m, 1.0, vx, 0.0, vy));
        CHECK_OK(krill_vec_download(vy, got));
        CHECK(same(got, ref, n));
    }

    /* formulas (2) and (3) with krill's widths: 8-byte values, 4-byte columns and lengths */
    krill_mat_stats(m, &s);
    {
        const size_t k = (size_t)longest_row(a), rows = (size_t)a->n_rows;
        const size_t expect = 12 * rows * k + (strcmp(fmt, "ellr") == 0 ? 4 * rows : 0);
        CHECK(s.bytes == expect);
        CHECK(s.max_row_nnz == (int64_t)k && s.nnz == a->nnz);
    }
done:
    krill_csr_destroy(&b);
    krill_vec_destroy(&vx);
    krill_vec_destroy(&vy);
    krill_mat_destroy(&m);
    free(x);
    free(y0);
    free(ref);
    free(got);
}

/* 6 x 5: an empty first row, a full row, an empty last row */
static krill_csr *hand_made(void)
{
    int32_t r[] = {1, 1, 2, 2, 2, 2, 2, 3, 4};
    int32_t c[] = {0, 4, 0, 1, 2, 3, 4, 2, 1};
    double v[] = {1, -2, 3, 4, -5, 6, 7, 8, -9};
    krill_csr *a = NULL;
    if (krill_csr_from_triplets(6, 5, 9, r, c, v, &a) != KRILL_OK) return NULL;
    return a;
}

static void check_all(krill_ctx *ctx, const krill_csr *a, const char *what)
{
    for (int f = 0; f < 2; f++) check_format(ctx, a, formats[f], what);
}

static void test_generated(krill_ctx *ctx)
{
    static const char *specs[] = {"poisson3d:10", "convdiff3d:8,3", "elasticity3d:4,3,3",
                                  "band1:1000", "band3:777", "band101:700", "rand1:800",
                                  "rand100:300", "band1x:300"};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        krill_csr *a = NULL;
        CHECK_OK(krill_gen(specs[i], &a));
        if (a) check_all(ctx, a, specs[i]);
        krill_csr_destroy(&a);
    }
    krill_csr *a = hand_made(), *one = NULL, *zero = NULL;
    CHECK(a != NULL);
    if (a) check_all(ctx, a, "hand-made 6 x 5");
    int32_t r0 = 0, c0 = 0;
    double v0 = -3.25;
    CHECK_OK(krill_csr_from_triplets(1, 1, 1, &r0, &c0, &v0, &one));
    if (one) check_all(ctx, one, "1 x 1");
    CHECK_OK(krill_csr_create(5, 5, 0, &zero));   /* K = 0: no entry at all */
    if (zero) check_all(ctx, zero, "5 x 5 zero");
    krill_csr_destroy(&a);
    krill_csr_destroy(&one);
    krill_csr_destroy(&zero);
}

/* N * K past 2^31 is refused with a reason, before any large allocation */
static void test_refusal(krill_ctx *ctx)
{
    krill_csr *a = NULL;
    krill_mat *m = NULL;
    CHECK_OK(krill_gen("band1x:70000", &a));   /* N = K = 70000: 4.9e9 entries */
    for (int f = 0; a && f < 2; f++) {
        CHECK_STATUS(krill_mat_create(ctx, a, formats[f], &m), KRILL_ERR_UNSUPPORTED);
        CHECK(m == NULL && strstr(krill_last_error(), "use csr") != NULL);
    }
    CHECK_STATUS(krill_mat_create(ctx, a, "ell:x", &m), KRILL_ERR_ARG);
    krill_csr_destroy(&a);
}

static void test_solvers(krill_ctx *ctx)
{
    static const char *specs[2] = {"poisson3d:10", "convdiff3d:8,2"};
    for (int f = 0; f < 2; f++)
        for (int p = 0; p < 2; p++) {
            krill_csr *a = NULL;
            krill_mat *m = NULL;
            krill_vec *b = NULL, *x = NULL;
            krill_solver_opts o;
            krill_solve_info info = {0};
            CHECK_OK(krill_gen(specs[p], &a));
            CHECK_OK(krill_mat_create(ctx, a, formats[f], &m));
            CHECK_OK(krill_vec_create(ctx, a->n_rows, &b));
            CHECK_OK(krill_vec_create(ctx, a->n_rows, &x));
            CHECK_OK(krill_vec_fill(b, 1.0));
            krill_solver_opts_default(&o);
            o.solver = p == 0 ? KRILL_SOLVER_CG : KRILL_SOLVER_GMRES;
            CHECK_OK(krill_solve(m, NULL, b, x, &o, &info));
            CHECK(info.reason == KRILL_CONVERGED_RTOL && info.relres <= 1e-8);
            krill_solve_info_free(&info);
            krill_vec_destroy(&b);
            krill_vec_destroy(&x);
            krill_mat_destroy(&m);
            krill_csr_destroy(&a);
        }
}

static void check_testdata_matrix(const krill_csr *a, const char *name, void *ctx)
{
    if ((int64_t)a->n_rows * longest_row(a) <= 50000000) check_all(ctx, a, name);
}

static void test_testdata(krill_ctx *ctx)
{
    int tested = tu_for_each_square_mtx(check_testdata_matrix, ctx);
    if (tested < 0) return;
    printf("%d testdata matrices checked in ell and ellr\n", tested);
    CHECK(tested > tu_testdata_expect(50, 10));
}

/* The host build over the rows in parallel gives one thread's arrays on 2, 3 and 8 (rows of
 * different lengths, some empty: padding in every column). */
static void test_host_threads(void)
{
    krill_csr *a = NULL;
    krill_ell_host one, e;
    CHECK_OK(krill_gen("rand100:1200", &a));
    if (!a) return;
    for (int32_t i = 0, q = 0, lo = 0; i < a->n_rows; i++) {   /* row i keeps i % 101 */
        const int32_t hi = (int32_t)a->row_ptr[i + 1], keep = i % 101;
        for (int32_t p = lo; p < hi && p - lo < keep; p++) {
            a->col[q] = a->col[p];
            a->val[q++] = a->val[p];
        }
        lo = hi;
        a->row_ptr[i + 1] = q;
        a->nnz = q;
    }
    CHECK(a->n_rows * 100 >= KRILL_BUILD_PARALLEL_MIN);
    CHECK_OK(krill_ell_host_build(a, 1, &one));
    for (int t = 2; t <= 8 && one.col; t += t == 3 ? 5 : 1) {
        const size_t entries = (size_t)(one.n_rows * one.k);
        CHECK_OK(krill_ell_host_build(a, t, &e));
        CHECK(e.k == one.k && e.k == 100);
        if (e.col && e.k == one.k)
            CHECK(memcmp(e.col, one.col, entries * sizeof *e.col) == 0 &&
                  memcmp(e.val, one.val, entries * sizeof *e.val) == 0 &&
                  memcmp(e.len, one.len, (size_t)e.n_rows * sizeof *e.len) == 0);
        krill_ell_host_free(&e);
    }
    krill_ell_host_free(&one);
    krill_csr_destroy(&a);
}

int main(void)
{
    krill_ctx *ctx = make_ctx();
    test_host_threads();
    test_generated(ctx);
    test_refusal(ctx);
    test_solvers(ctx);
    test_testdata(ctx);
    krill_ctx_destroy(&ctx);
    return tu_finish("test_ell");
}
