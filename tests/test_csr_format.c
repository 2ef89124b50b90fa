/* The CPU CSR format through the krill_mat API: bitwise equal to the reference SpMV on any
 * thread count (each row is summed by one thread in column order), empty rows, beta = 0
 * ignoring NaN, spmv_dot, diagonal, update_values, stats, and the error paths. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formats/formats_impl.h"
#include "testutil.h"

/* n x n random sparse matrix with ~per_row entries per row, every 7th row empty and row 1
 * long (a quarter of the columns) */
static krill_csr *random_csr(int32_t n, int per_row, uint64_t seed)
{
    int64_t cap = (int64_t)n * per_row + n / 4 + 1, k = 0;
    int32_t *r = malloc((size_t)cap * sizeof *r), *c = malloc((size_t)cap * sizeof *c);
    double *v = malloc((size_t)cap * sizeof *v), *u = malloc((size_t)cap * sizeof *u);
    krill_csr *a = NULL;
    tu_random(u, cap, seed);
    for (int32_t i = 0; i < n; i++) {
        if (i % 7 == 3) continue;
        int len = i == 1 ? n / 4 : per_row;
        for (int j = 0; j < len && k < cap; j++, k++) {
            r[k] = i;
            c[k] = (int32_t)((fabs(u[k]) * 1e6)) % n;
            v[k] = u[(k * 13) % cap];
        }
    }
    if (krill_csr_from_triplets(n, n, k, r, c, v, &a) != KRILL_OK) a = NULL;
    free(r);
    free(c);
    free(v);
    free(u);
    return a;
}

static void check_matrix(const krill_csr *a, int threads)
{
    krill_ctx *ctx = tu_cpu_ctx(threads);
    krill_mat *m = NULL;
    krill_vec *vx = NULL, *vy = NULL, *vd = NULL;
    int64_t n = a->n_rows;
    double *x = malloc((size_t)n * sizeof *x), *y0 = malloc((size_t)n * sizeof *y0);
    double *ref = malloc((size_t)n * sizeof *ref), *got = malloc((size_t)n * sizeof *got);
    tu_random(x, n, 3);
    tu_random(y0, n, 4);
    CHECK_OK(krill_mat_create(ctx, a, "csr", &m));
    CHECK_OK(krill_vec_create(ctx, n, &vx));
    CHECK_OK(krill_vec_create(ctx, n, &vy));
    CHECK_OK(krill_vec_create(ctx, n, &vd));
    CHECK_OK(krill_vec_upload(vx, x));

    /* y = 1.5 A x - 0.5 y */
    memcpy(ref, y0, (size_t)n * sizeof *ref);
    krill_csr_spmv_ref(a, 1.5, x, -0.5, ref);
    CHECK_OK(krill_vec_upload(vy, y0));
    CHECK_OK(krill_mat_spmv(m, 1.5, vx, -0.5, vy));
    CHECK_OK(krill_vec_download(vy, got));
    CHECK(memcmp(ref, got, (size_t)n * sizeof *ref) == 0);

    /* beta = 0 ignores a NaN-poisoned y */
    for (int64_t i = 0; i < n; i++) got[i] = NAN;
    CHECK_OK(krill_vec_upload(vy, got));
    krill_csr_spmv_ref(a, 1.0, x, 0.0, ref);
    CHECK_OK(krill_mat_spmv(m, 1.0, vx, 0.0, vy));
    CHECK_OK(krill_vec_download(vy, got));
    CHECK(memcmp(ref, got, (size_t)n * sizeof *ref) == 0);

    /* fused y = A x with x'y */
    double xy, xy_ref = 0;
    for (int64_t i = 0; i < n; i++) xy_ref += x[i] * ref[i];
    CHECK_OK(krill_mat_spmv_dot_raw(m, krill_vec_data(vx), krill_vec_data(vy), &xy));
    CHECK_CLOSE(xy, xy_ref, 1e-12 * (fabs(xy_ref) + 1));

    /* diagonal */
    CHECK_OK(krill_mat_diagonal(m, vd));
    CHECK_OK(krill_vec_download(vd, got));
    int ok = 1;
    for (int32_t i = 0; i < a->n_rows; i++) {
        double di = 0;
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
            if (a->col[p] == i) di = a->val[p];
        ok &= got[i] == di;
    }
    CHECK(ok);

    /* new values, same pattern */
    krill_csr *b = NULL;
    CHECK_OK(krill_csr_copy(a, &b));
    for (int64_t p = 0; p < b->nnz; p++) b->val[p] = 2.0 * b->val[p] + 1.0;
    CHECK_OK(krill_mat_update_values(m, b->val));
    krill_csr_spmv_ref(b, 1.0, x, 0.0, ref);
    CHECK_OK(krill_mat_spmv(m, 1.0, vx, 0.0, vy));
    CHECK_OK(krill_vec_download(vy, got));
    CHECK(memcmp(ref, got, (size_t)n * sizeof *ref) == 0);
    if (b->nnz > 0) {
        b->val[0] = NAN;
        CHECK_STATUS(krill_mat_update_values(m, b->val), KRILL_ERR_NUMERIC);
    }

    krill_format_stats s;
    krill_mat_stats(m, &s);
    CHECK(s.nnz == a->nnz && s.n_rows == a->n_rows);
    CHECK(s.bytes == (size_t)(a->n_rows + 1) * 8 + (size_t)a->nnz * 12);
    CHECK(strcmp(krill_mat_format(m), "csr") == 0);

    krill_csr_destroy(&b);
    krill_vec_destroy(&vx);
    krill_vec_destroy(&vy);
    krill_vec_destroy(&vd);
    krill_mat_destroy(&m);
    krill_ctx_destroy(&ctx);
    free(x);
    free(y0);
    free(ref);
    free(got);
}

static void test_errors(void)
{
    krill_ctx *ctx = tu_cpu_ctx(2);
    krill_csr *a = random_csr(20, 3, 1);
    krill_mat *m = NULL;
    krill_vec *x = NULL, *y = NULL;
    CHECK_STATUS(krill_mat_create(ctx, a, "nosuch", &m), KRILL_ERR_ARG);
    CHECK(m == NULL && strstr(krill_last_error(), "unknown format 'nosuch'") != NULL);
    CHECK(strstr(krill_last_error(), "csr") != NULL);
    CHECK_STATUS(krill_mat_create(ctx, a, "csr:bogus", &m), KRILL_ERR_ARG);
    CHECK_STATUS(krill_mat_create(ctx, a, "cusparse", &m), KRILL_ERR_UNSUPPORTED);
    CHECK(strstr(krill_last_error(), "no CPU implementation") != NULL);
    a->val[0] = NAN;
    CHECK_STATUS(krill_mat_create(ctx, a, "csr", &m), KRILL_ERR_NUMERIC);
    a->val[0] = 1;
    CHECK_OK(krill_mat_create(ctx, a, NULL, &m));
    CHECK_OK(krill_vec_create(ctx, 20, &x));
    CHECK_OK(krill_vec_create(ctx, 19, &y));
    CHECK_STATUS(krill_mat_spmv(m, 1, x, 0, y), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "y 19") != NULL);
    CHECK_STATUS(krill_mat_spmv(m, 1, x, 0, x), KRILL_ERR_ARG);
    krill_vec_destroy(&x);
    krill_vec_destroy(&y);
    krill_mat_destroy(&m);

    /* every allocation of a build may fail: clean error, no matrix, no leak (ASan) */
    long before = krill_alloc_calls();
    CHECK_OK(krill_mat_create(ctx, a, "csr", &m));
    long calls = krill_alloc_calls() - before;
    krill_mat_destroy(&m);
    for (long k = 1; k <= calls; k++) {
        krill_fault_alloc_after(k);
        CHECK_STATUS(krill_mat_create(ctx, a, "csr", &m), KRILL_ERR_ALLOC);
        CHECK(m == NULL);
    }
    krill_fault_alloc_after(0);
    krill_csr_destroy(&a);
    krill_ctx_destroy(&ctx);
}

int main(void)
{
    krill_csr *empty = NULL;
    CHECK_OK(krill_csr_create(0, 0, 0, &empty));
    for (int t = 1; t <= 4; t++) {
        krill_csr *a = random_csr(1000, 5, (uint64_t)t);
        CHECK(a != NULL);
        if (a) check_matrix(a, t);
        krill_csr_destroy(&a);
        a = random_csr(3, 1, 7);   /* fewer rows than threads */
        if (a) check_matrix(a, t);
        krill_csr_destroy(&a);
        check_matrix(empty, t);
    }
    krill_csr_destroy(&empty);
    test_errors();
    return tu_finish("test_csr_format");
}
