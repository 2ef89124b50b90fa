/* krill_mat_to_csr for every registered format (and its variants, and auto): the CSR it gives
 * back has exactly (memcmp) the row offsets, columns and values the matrix was built from,
 * and after krill_mat_update_values exactly the new values. Matrices: generated ones (short,
 * long, skewed rows; a full first row whose entries cross segscan's tiles; empty rows, among
 * them the first and the last; 1 x 1; nnz = 0; 0 x 0; a rectangular one), and every square
 * real matrix of testdata. Also the argument errors, and every allocation of to_csr failing
 * in turn (the status is KRILL_ERR_ALLOC and no CSR comes back).
 * Built twice: CPU (label data; cusparse, GPU only, must be refused there with
 * KRILL_ERR_UNSUPPORTED) and, with TO_CSR_TEST_GPU, GPU (label gpu). to_csr moves data and
 * computes nothing, so both devices must give the same bits. */
#include <stdlib.h>
#include <string.h>

#include "core/core_impl.h"
#include "testutil.h"

/* ELL-type formats are built on testdata matrices only where N * K stays below this (the
 * padding of the few very skewed ones would cost seconds and hundreds of MB for nothing
 * that the smaller ones do not test). */
#define TEST_MAX_ELL_ENTRIES 20000000

/* Variants besides the registry's plain names: each device's own parameters, and auto. */
#ifdef TO_CSR_TEST_GPU
static const char *const variants[] = {"csr:scalar", "csr:block", "csr:warp", "csr:vector",
                                       "csr:vector:2", "rbp-csr:scalar", "rbp-csr:vector",
                                       "rbp-csr:vector:32", "cusparse:alg2", "auto"};
#else
static const char *const variants[] = {"csr:auto", "rbp-csr:auto", "auto"};
#endif
#define N_VARIANTS (sizeof variants / sizeof *variants)

static krill_ctx *make_ctx(void)
{
#ifdef TO_CSR_TEST_GPU
    return tu_gpu_ctx_or_skip();
#else
    return tu_cpu_ctx(3);
#endif
}

static int64_t longest_row(const krill_csr *a)
{
    int64_t k = 0;
    for (int32_t i = 0; i < a->n_rows; i++)
        if (a->row_ptr[i + 1] - a->row_ptr[i] > k) k = a->row_ptr[i + 1] - a->row_ptr[i];
    return k;
}

static int is_ell_type(const char *fmt)
{
    return strncmp(fmt, "ell", 3) == 0 || strncmp(fmt, "rbp-ell", 7) == 0;
}

/* got has the sizes, offsets and columns of a, and the values val, bit for bit */
static int same_csr(const krill_csr *got, const krill_csr *a, const double *val)
{
    return got && got->n_rows == a->n_rows && got->n_cols == a->n_cols && got->nnz == a->nnz &&
           memcmp(got->row_ptr, a->row_ptr, ((size_t)a->n_rows + 1) * sizeof *a->row_ptr) == 0 &&
           (a->nnz == 0 || (memcmp(got->col, a->col, (size_t)a->nnz * sizeof *a->col) == 0 &&
                            memcmp(got->val, val, (size_t)a->nnz * sizeof *val) == 0));
}

/* The format fmt on a: to_csr as built, then after new values. Returns 0 when the format
 * refused the matrix (KRILL_ERR_UNSUPPORTED, checked to be expected by the caller). */
static int check_format(krill_ctx *ctx, const krill_csr *a, const char *fmt, const char *what)
{
    krill_mat *m = NULL;
    krill_csr *got = NULL;
    double *val2 = malloc((size_t)a->nnz * sizeof *val2 + 8);
    krill_status st = krill_mat_create(ctx, a, fmt, &m);
    int built = st != KRILL_ERR_UNSUPPORTED, ok;
    if (!built) goto done;
    CHECK_OK(st);
    if (!m) {
        fprintf(stderr, "  %s on %s: %s\n", fmt, what, krill_last_error());
        goto done;
    }
    CHECK_OK(krill_mat_to_csr(m, &got));
    ok = same_csr(got, a, a->val);
    CHECK(ok);
    if (!ok) fprintf(stderr, "  %s on %s: to_csr differs from the CSR it was built from\n", fmt,
                     what);
    krill_csr_destroy(&got);

    for (int64_t p = 0; p < a->nnz; p++) val2[p] = a->val[p] * 2.0 + 1.0;
    CHECK_OK(krill_mat_update_values(m, val2));
    CHECK_OK(krill_mat_to_csr(m, &got));
    ok = same_csr(got, a, val2);
    CHECK(ok);
    if (!ok) fprintf(stderr, "  %s on %s: to_csr after update_values differs\n", fmt, what);
done:
    krill_csr_destroy(&got);
    krill_mat_destroy(&m);
    free(val2);
    return built;
}

/* cusparse exists only on the GPU: a CPU context must refuse it (KRILL_ERR_UNSUPPORTED). */
static int gpu_only(const char *fmt)
{
#ifdef TO_CSR_TEST_GPU
    (void)fmt;
    return 0;
#else
    return strcmp(fmt, "cusparse") == 0;
#endif
}

/* Every registered format, then the variants. Only the GPU-only formats on the CPU and the
 * ELL types past their size limit may refuse. */
static void check_all(krill_ctx *ctx, const krill_csr *a, const char *what)
{
    for (const char *const *f = krill_format_names(); *f; f++) {
        const int built = check_format(ctx, a, *f, what);
        if (gpu_only(*f)) {
            CHECK(!built);
        } else if (!built) {
            CHECK(is_ell_type(*f));
            fprintf(stderr, "  %s refused %s: %s\n", *f, what, krill_last_error());
        }
    }
    for (size_t v = 0; v < N_VARIANTS; v++) CHECK(check_format(ctx, a, variants[v], what));
}

/* A copy of a with the entries of every row i with i % 5 == 2 dropped (empty rows). */
static krill_csr *with_empty_rows(const krill_csr *a)
{
    krill_csr *b = NULL;
    int64_t nnz = 0;
    for (int32_t i = 0; i < a->n_rows; i++)
        if (i % 5 != 2) nnz += a->row_ptr[i + 1] - a->row_ptr[i];
    if (krill_csr_create(a->n_rows, a->n_cols, nnz, &b) != KRILL_OK) return NULL;
    for (int32_t i = 0; i < a->n_rows; i++) {
        int64_t p = b->row_ptr[i];
        if (i % 5 != 2)
            for (int64_t q = a->row_ptr[i]; q < a->row_ptr[i + 1]; q++, p++) {
                b->col[p] = a->col[q];
                b->val[p] = a->val[q];
            }
        b->row_ptr[i + 1] = p;
    }
    return b;
}

/* 7 x 12: empty first and last rows; runs and isolated entries interleaved (0 | 2-4 | 6 |
 * 8-9 | 11), a row that is one run, a row of isolated entries only, a full row. */
static krill_csr *hand_made(void)
{
    int32_t r[] = {1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
                   5};
    int32_t c[] = {0, 2, 3, 4, 6, 8, 9, 11, 5, 6, 7, 1, 5, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
                   11, 11};
    double v[27];
    krill_csr *a = NULL;
    for (int k = 0; k < 27; k++) v[k] = 0.1 * (k + 1) * (k % 2 ? -1.0 : 1.0);
    if (krill_csr_from_triplets(7, 12, 27, r, c, v, &a) != KRILL_OK) return NULL;
    return a;
}

static void test_generated(krill_ctx *ctx)
{
    static const char *specs[] = {"poisson3d:8", "convdiff3d:6,3", "elasticity3d:3,2,2",
                                  "band1:500", "band3:400", "band101:300", "rand1:500",
                                  "rand100:200", "band1x:3000"};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        krill_csr *a = NULL, *e = NULL;
        char what[64];
        CHECK_OK(krill_gen(specs[i], &a));
        if (!a) continue;
        check_all(ctx, a, specs[i]);
        e = with_empty_rows(a);
        CHECK(e != NULL);
        snprintf(what, sizeof what, "%s with empty rows", specs[i]);
        if (e) check_all(ctx, e, what);
        krill_csr_destroy(&a);
        krill_csr_destroy(&e);
    }
    krill_csr *a = hand_made(), *one = NULL, *zero = NULL, *none = NULL;
    CHECK(a != NULL);
    if (a) check_all(ctx, a, "hand-made 7 x 12");
    int32_t r0 = 0, c0 = 0;
    double v0 = -3.25;
    CHECK_OK(krill_csr_from_triplets(1, 1, 1, &r0, &c0, &v0, &one));
    if (one) check_all(ctx, one, "1 x 1");
    CHECK_OK(krill_csr_create(5, 5, 0, &zero));
    if (zero) check_all(ctx, zero, "5 x 5, nnz = 0");
    CHECK_OK(krill_csr_create(0, 0, 0, &none));
    if (none) check_all(ctx, none, "0 x 0");
    krill_csr_destroy(&a);
    krill_csr_destroy(&one);
    krill_csr_destroy(&zero);
    krill_csr_destroy(&none);
}

/* NULL arguments; then each allocation of to_csr made to fail in turn, for every format:
 * KRILL_ERR_ALLOC and *csr NULL each time, until to_csr needs no more and succeeds. */
static void test_errors(krill_ctx *ctx)
{
    static krill_csr sentinel;   /* what *csr holds before each call: it must become NULL */
    krill_csr *a = NULL, *got = &sentinel;
    krill_mat *m = NULL;
    CHECK_STATUS(krill_mat_to_csr(NULL, &got), KRILL_ERR_ARG);
    CHECK(got == NULL);
    CHECK_OK(krill_gen("band1x:300", &a));
    if (!a) return;
    CHECK_OK(krill_mat_create(ctx, a, "csr", &m));
    CHECK_STATUS(krill_mat_to_csr(m, NULL), KRILL_ERR_ARG);
    krill_mat_destroy(&m);
    for (const char *const *f = krill_format_names(); *f; f++) {
        krill_status st = krill_mat_create(ctx, a, *f, &m);
        if (st == KRILL_ERR_UNSUPPORTED) continue;   /* cusparse on the CPU */
        CHECK_OK(st);
        for (long k = 1; m && k <= 16; k++) {
            got = &sentinel;
            krill_fault_alloc_after(k);
            st = krill_mat_to_csr(m, &got);
            krill_fault_alloc_after(0);
            if (st == KRILL_OK) {
                CHECK(same_csr(got, a, a->val));
                krill_csr_destroy(&got);
                break;
            }
            CHECK(st == KRILL_ERR_ALLOC && got == NULL);
            CHECK(k < 16);   /* to_csr allocates a few arrays, not 16 */
        }
        krill_mat_destroy(&m);
    }
    krill_csr_destroy(&a);
}

typedef struct testdata_run {
    krill_ctx *ctx;
    int formats;
} testdata_run;

static void check_testdata_matrix(const krill_csr *a, const char *name, void *user)
{
    testdata_run *run = user;
    const int64_t ell_entries = (int64_t)a->n_rows * longest_row(a);
    for (const char *const *f = krill_format_names(); *f; f++) {
        if (is_ell_type(*f) && ell_entries > TEST_MAX_ELL_ENTRIES) continue;
        const int built = check_format(run->ctx, a, *f, name);
        CHECK(built == !gpu_only(*f));
        run->formats += built;
    }
    run->formats += check_format(run->ctx, a, "auto", name);
}

static void test_testdata(krill_ctx *ctx)
{
    testdata_run run = {ctx, 0};
    int tested = tu_for_each_square_mtx(check_testdata_matrix, &run);
    if (tested < 0) return;
    printf("%d testdata matrices, %d matrix-format pairs checked\n", tested, run.formats);
    CHECK(tested > tu_testdata_expect(50, 10));
}

int main(void)
{
    krill_ctx *ctx = make_ctx();
    test_generated(ctx);
    test_errors(ctx);
    test_testdata(ctx);
    krill_ctx_destroy(&ctx);
    return tu_finish("test_to_csr");
}
