/* Core: status strings, the error message, allocation and its fault hook, CPU contexts,
 * vectors and BLAS-1 against plain loops, host CSR assembly and validation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_impl.h"
#include "testutil.h"

static void test_status(void)
{
    CHECK(strcmp(krill_status_string(KRILL_OK), "ok") == 0);
    CHECK(strcmp(krill_status_string(KRILL_ERR_PARSE), "parse error") == 0);
    CHECK(krill_status_string((krill_status)999) != NULL);
    CHECK(krill_error(KRILL_ERR_ARG, "x = %d", 7) == KRILL_ERR_ARG);
    CHECK(strcmp(krill_last_error(), "x = 7") == 0);
    krill_clear_error();
    CHECK(krill_last_error()[0] == '\0');
}

static void test_alloc(void)
{
    double *p = NULL;
    CHECK_OK(krill_alloc((void **)&p, 16, "p"));
    krill_free(p);
    krill_fault_alloc_after(2);
    CHECK_OK(krill_alloc((void **)&p, 16, "first"));
    krill_free(p);
    CHECK_STATUS(krill_alloc((void **)&p, 16, "second"), KRILL_ERR_ALLOC);
    CHECK(p == NULL);
    CHECK(strstr(krill_last_error(), "second") != NULL);
    CHECK_OK(krill_alloc((void **)&p, 16, "third"));   /* only the k-th fails */
    krill_free(p);
    krill_fault_alloc_after(0);
    CHECK_STATUS(krill_alloc_n((void **)&p, SIZE_MAX / 4, 8, 0, "huge"), KRILL_ERR_ALLOC);
    CHECK(strstr(krill_last_error(), "overflows") != NULL);
}

static void test_ctx(void)
{
    krill_ctx *ctx = NULL;
    krill_ctx_opts o = KRILL_CTX_OPTS_INIT;
    o.device = KRILL_DEVICE_CPU;
    o.threads = 3;
    CHECK_OK(krill_ctx_create(&o, &ctx));
    CHECK(krill_ctx_device(ctx) == KRILL_DEVICE_CPU);
    CHECK(krill_ctx_threads(ctx) == 3);
    CHECK(strstr(krill_ctx_describe(ctx), "3 OpenMP threads") != NULL);
    krill_ctx_destroy(&ctx);
    CHECK(ctx == NULL);
    krill_ctx_destroy(&ctx);   /* NULL-safe */
    o.threads = -1;
    CHECK_STATUS(krill_ctx_create(&o, &ctx), KRILL_ERR_ARG);
    if (krill_cuda_device_count() == 0) {
        o.threads = 0;
        o.device = KRILL_DEVICE_CUDA;
        CHECK_STATUS(krill_ctx_create(&o, &ctx), KRILL_ERR_NO_DEVICE);
        CHECK(ctx == NULL);
        CHECK(strstr(krill_last_error(), "GPU") != NULL);
        o.device = KRILL_DEVICE_AUTO;
        CHECK_OK(krill_ctx_create(&o, &ctx));
        CHECK(krill_ctx_device(ctx) == KRILL_DEVICE_CPU);
        krill_ctx_destroy(&ctx);
    }
    for (int k = 1; k <= 2; k++) {   /* a failing allocation leaves no context */
        krill_fault_alloc_after(k);
        krill_status st = krill_ctx_create(NULL, &ctx);
        krill_fault_alloc_after(0);
        CHECK(st == KRILL_OK || ctx == NULL);
        krill_ctx_destroy(&ctx);
    }
}

/* krill_ctx_alloc_stats_get counts krill's allocations in the context's memory (a wrapped
 * vector: none); krill_mat_create_device_csr refuses a CPU context and bad arguments before
 * it reads any array (test_gpu_device_csr covers the GPU). */
static void test_alloc_stats_and_device_csr(void)
{
    krill_ctx *ctx = tu_cpu_ctx(1);
    krill_ctx_alloc_stats s0, s1, s2;
    krill_vec *v = NULL, *w = NULL;
    krill_mat *m = NULL;
    double data[10] = {0};
    const int32_t rp[3] = {0, 1, 2}, col[2] = {0, 1};
    krill_ctx_alloc_stats_get(ctx, &s0);
    CHECK_OK(krill_vec_create(ctx, 10, &v));
    krill_ctx_alloc_stats_get(ctx, &s1);
    CHECK(s1.allocations == s0.allocations + 1 && s1.bytes == s0.bytes + 80);
    CHECK_OK(krill_vec_wrap(ctx, 10, data, &w));
    krill_ctx_alloc_stats_get(ctx, &s2);
    CHECK(s2.allocations == s1.allocations && s2.bytes == s1.bytes);
    krill_ctx_alloc_stats_get(NULL, &s2);
    CHECK(s2.allocations == 0 && s2.bytes == 0);
    krill_ctx_alloc_stats_get(ctx, NULL);   /* NULL-safe */
    CHECK_STATUS(krill_mat_create_device_csr(ctx, 2, 2, 2, rp, 4, col, data, &m),
                 KRILL_ERR_UNSUPPORTED);
    CHECK(m == NULL && strstr(krill_last_error(), "CPU") != NULL);
    CHECK_STATUS(krill_mat_create_device_csr(NULL, 2, 2, 2, rp, 4, col, data, &m), KRILL_ERR_ARG);
    CHECK_STATUS(krill_mat_create_device_csr(ctx, 2, 2, 2, rp, 4, col, data, NULL), KRILL_ERR_ARG);
    CHECK_STATUS(krill_mat_create_device_csr(ctx, -1, 2, 2, rp, 4, col, data, &m), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "n_rows") != NULL);
    CHECK_STATUS(krill_mat_create_device_csr(ctx, 2, (int64_t)1 << 31, 2, rp, 4, col, data, &m),
                 KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "n_cols") != NULL);
    CHECK_STATUS(krill_mat_create_device_csr(ctx, 2, 2, -1, rp, 4, col, data, &m), KRILL_ERR_ARG);
    CHECK_STATUS(krill_mat_create_device_csr(ctx, 2, 2, 2, rp, 2, col, data, &m), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "index_bytes") != NULL);
    CHECK_STATUS(krill_mat_create_device_csr(ctx, 2, 2, (int64_t)1 << 31, rp, 4, col, data, &m),
                 KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "int64_t offsets") != NULL);
    CHECK_STATUS(krill_mat_create_device_csr(ctx, 2, 2, 2, NULL, 4, col, data, &m), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "row_ptr") != NULL);
    CHECK_STATUS(krill_mat_create_device_csr(ctx, 2, 2, 2, rp, 4, NULL, data, &m), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "col is NULL") != NULL);
    CHECK_STATUS(krill_mat_create_device_csr(ctx, 2, 2, 2, rp, 4, col, NULL, &m), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "val is NULL") != NULL);
    {   /* NULL values are for a device CSR only */
        krill_csr *a = tu_csr_from_dense(2, (const double[]){1, 0, 0, 2});
        CHECK_OK(krill_mat_create(ctx, a, "csr", &m));
        CHECK_STATUS(krill_mat_update_values(m, NULL), KRILL_ERR_ARG);
        krill_mat_destroy(&m);
        krill_csr_destroy(&a);
    }
    krill_vec_destroy(&v);
    krill_vec_destroy(&w);
    krill_ctx_destroy(&ctx);
}

/* sum with long double: the reference for dots */
static double dot_ref(const double *x, const double *y, int64_t n)
{
    long double s = 0;
    for (int64_t i = 0; i < n; i++) s += (long double)x[i] * y[i];
    return (double)s;
}

static void test_blas(int threads, int64_t n)
{
    krill_ctx *ctx = tu_cpu_ctx(threads);
    double *x = malloc((size_t)(n + 1) * sizeof *x), *y = malloc((size_t)(n + 1) * sizeof *y);
    double *h = malloc((size_t)(n + 1) * sizeof *h), r;
    krill_vec *vx = NULL, *vy = NULL;
    tu_random(x, n, 1);
    tu_random(y, n, 2);
    CHECK_OK(krill_vec_create(ctx, n, &vx));
    CHECK_OK(krill_vec_create(ctx, n, &vy));
    CHECK_OK(krill_vec_upload(vx, x));
    CHECK_OK(krill_vec_upload(vy, y));
    CHECK_OK(krill_vec_dot(vx, vy, &r));
    CHECK_CLOSE(r, dot_ref(x, y, n), 1e-13 * (n + 1));
    CHECK_OK(krill_vec_nrm2(vx, &r));
    CHECK_CLOSE(r, sqrt(dot_ref(x, x, n)), 1e-14 * (n + 1));
    CHECK_OK(krill_vec_axpby(2.0, vx, -0.5, vy));
    CHECK_OK(krill_vec_download(vy, h));
    int ok = 1;
    for (int64_t i = 0; i < n; i++) ok &= h[i] == 2.0 * x[i] + -0.5 * y[i];
    CHECK(ok);
    for (int64_t i = 0; i < n; i++) h[i] = NAN;   /* beta = 0 must not read y */
    CHECK_OK(krill_vec_upload(vy, h));
    CHECK_OK(krill_vec_axpby(3.0, vx, 0.0, vy));
    CHECK_OK(krill_vec_download(vy, h));
    ok = 1;
    for (int64_t i = 0; i < n; i++) ok &= h[i] == 3.0 * x[i];
    CHECK(ok);
    CHECK_OK(krill_vec_scal(0.25, vy));
    CHECK_OK(krill_vec_axpy(1.0, vx, vy));
    CHECK_OK(krill_vec_download(vy, h));
    ok = 1;
    for (int64_t i = 0; i < n; i++) ok &= h[i] == 3.0 * x[i] * 0.25 + x[i];
    CHECK(ok);
    CHECK_OK(krill_vec_fill(vy, 1.5));
    CHECK_OK(krill_vec_copy(vy, vx));
    CHECK_OK(krill_vec_download(vx, h));
    ok = 1;
    for (int64_t i = 0; i < n; i++) ok &= h[i] == 1.5;
    CHECK(ok);
    krill_vec_destroy(&vx);
    krill_vec_destroy(&vy);
    free(x);
    free(y);
    free(h);
    krill_ctx_destroy(&ctx);
}

/* The same dot on the same thread count is bitwise the same; nrm2 survives huge/tiny. */
static void test_blas_edges(void)
{
    krill_ctx *ctx = tu_cpu_ctx(4);
    enum { N = 100003 };
    static double x[N];
    double r1, r2;
    tu_random(x, N, 9);
    CHECK_OK(krill_blas_dot(ctx, N, x, x, &r1));
    CHECK_OK(krill_blas_dot(ctx, N, x, x, &r2));
    CHECK(memcmp(&r1, &r2, sizeof r1) == 0);
    double big[3] = {3e200, 4e200, 0}, tiny[2] = {3e-200, 4e-200}, zero[2] = {0, 0};
    CHECK_OK(krill_blas_nrm2(ctx, 3, big, &r1));
    CHECK_CLOSE(r1 / 5e200, 1.0, 1e-15);
    CHECK_OK(krill_blas_nrm2(ctx, 2, tiny, &r1));
    CHECK_CLOSE(r1 / 5e-200, 1.0, 1e-15);
    CHECK_OK(krill_blas_nrm2(ctx, 2, zero, &r1));
    CHECK(r1 == 0.0);
    big[1] = NAN;
    CHECK_OK(krill_blas_nrm2(ctx, 3, big, &r1));
    CHECK(isnan(r1));
    CHECK_OK(krill_blas_dot(ctx, 0, x, x, &r1));
    CHECK(r1 == 0.0);
    krill_vec *a = NULL, *b = NULL;
    CHECK_OK(krill_vec_create(ctx, 3, &a));
    CHECK_OK(krill_vec_create(ctx, 4, &b));
    CHECK_STATUS(krill_vec_dot(a, b, &r1), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "lengths differ") != NULL);
    krill_vec_destroy(&b);
    CHECK_STATUS(krill_vec_wrap(ctx, 5, NULL, &b), KRILL_ERR_ARG);
    CHECK(b == NULL);
    /* n * 8 bytes wraps around size_t to 8: refused, not an 8-byte vector of length 2^61 + 1 */
    CHECK_STATUS(krill_vec_create(ctx, ((int64_t)1 << 61) + 1, &b), KRILL_ERR_ALLOC);
    CHECK(b == NULL);
    CHECK(strstr(krill_last_error(), "overflows") != NULL);
    krill_vec_destroy(&a);
    krill_ctx_destroy(&ctx);
}

static void test_triplets(void)
{
    /* 3 x 4 with a duplicate (summed in input order) and an empty row */
    int32_t r[] = {2, 0, 2, 0, 2};
    int32_t c[] = {3, 1, 0, 1, 3};
    double v[] = {1.0, 2.0, 3.0, 0.5, 0.25};
    krill_csr *a = NULL;
    CHECK_OK(krill_csr_from_triplets(3, 4, 5, r, c, v, &a));
    CHECK(a && a->nnz == 3);
    if (a) {
        CHECK(a->row_ptr[0] == 0 && a->row_ptr[1] == 1 && a->row_ptr[2] == 1 && a->row_ptr[3] == 3);
        CHECK(a->col[0] == 1 && a->val[0] == 2.5);
        CHECK(a->col[1] == 0 && a->val[1] == 3.0);
        CHECK(a->col[2] == 3 && a->val[2] == 1.25);
        CHECK_OK(krill_csr_check(a, "t"));
        CHECK(!krill_csr_is_symmetric(a));
    }
    krill_csr_destroy(&a);
    r[0] = 3;
    CHECK_STATUS(krill_csr_from_triplets(3, 4, 5, r, c, v, &a), KRILL_ERR_ARG);
    CHECK(a == NULL && strstr(krill_last_error(), "outside") != NULL);

    /* long rows exercise the merge sort; compare with a dense accumulation */
    enum { N = 40, NZ = 3000 };
    static int32_t rr[NZ], cc[NZ];
    static double vv[NZ], dense[N][N];
    double u[NZ];
    tu_random(u, NZ, 5);
    for (int k = 0; k < NZ; k++) {
        rr[k] = (int32_t)(fabs(u[k]) * N) % N;
        cc[k] = (int32_t)(fabs(u[(k * 7) % NZ]) * 977) % N;
        vv[k] = u[k];
        dense[rr[k]][cc[k]] += vv[k];
    }
    CHECK_OK(krill_csr_from_triplets(N, N, NZ, rr, cc, vv, &a));
    CHECK_OK(krill_csr_check(a, "random"));
    double maxerr = 0;
    for (int i = 0; i < N; i++)
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
            maxerr = fmax(maxerr, fabs(a->val[p] - dense[i][a->col[p]]));
    CHECK(maxerr < 1e-12);
    krill_csr *b = NULL;
    CHECK_OK(krill_csr_copy(a, &b));
    CHECK(b && memcmp(a->val, b->val, (size_t)a->nnz * sizeof(double)) == 0);
    krill_csr_destroy(&a);
    krill_csr_destroy(&b);
}

static void test_check(void)
{
    krill_csr *a = NULL;
    CHECK_OK(krill_csr_create(2, 2, 3, &a));
    int64_t rp[] = {0, 2, 3};
    int32_t col[] = {0, 1, 1};
    double val[] = {2, -1, 2};
    memcpy(a->row_ptr, rp, sizeof rp);
    memcpy(a->col, col, sizeof col);
    memcpy(a->val, val, sizeof val);
    CHECK_OK(krill_csr_check(a, "A"));
    CHECK(!krill_csr_is_symmetric(a));
    a->col[1] = 0;
    CHECK_STATUS(krill_csr_check(a, "A"), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "row 0") != NULL);
    a->col[1] = 2;
    CHECK_STATUS(krill_csr_check(a, "A"), KRILL_ERR_ARG);
    a->col[1] = 1;
    a->val[2] = INFINITY;
    CHECK_STATUS(krill_csr_check(a, "A"), KRILL_ERR_NUMERIC);
    a->val[2] = 2;
    a->row_ptr[2] = 2;
    CHECK_STATUS(krill_csr_check(a, "A"), KRILL_ERR_ARG);
    krill_csr_destroy(&a);
    /* a row offset past nnz (the next one decreases): refused before col[] is read there */
    CHECK_OK(krill_csr_create(2, 4, 3, &a));
    int64_t rp2[] = {0, 100, 3};
    int32_t col2[] = {0, 1, 2};
    memcpy(a->row_ptr, rp2, sizeof rp2);
    memcpy(a->col, col2, sizeof col2);
    memcpy(a->val, val, sizeof val);
    CHECK_STATUS(krill_csr_check(a, "A"), KRILL_ERR_ARG);
    krill_csr_destroy(&a);
}

/* Past KRILL_BUILD_PARALLEL_MIN entries the check runs over the rows in parallel: with
 * faults planted in several rows (far apart, so that different threads meet them), every
 * thread count names the first in row order, with the serial check's message; the offsets'
 * faults (a row past nnz, a decrease) are found before any entry of theirs is read. */
static void test_check_threads(void)
{
    krill_csr *a = NULL;
    char first[256];
    const int32_t n = 20000;
    CHECK_OK(krill_csr_create(n, n, 4 * (int64_t)n, &a));
    if (!a) return;
    for (int32_t i = 0; i < n; i++) {
        a->row_ptr[i + 1] = 4 * (int64_t)(i + 1);
        for (int j = 0; j < 4; j++) {
            a->col[4 * (int64_t)i + j] = (i + 5 * j) % n;
            a->val[4 * (int64_t)i + j] = 1.0 + j;
        }
        /* ascending within the row: the last rows' wrapped columns move to the front */
        for (int j = 3; j > 0; j--)
            for (int k = 0; k < j; k++)
                if (a->col[4 * (int64_t)i + k] > a->col[4 * (int64_t)i + k + 1]) {
                    const int32_t c = a->col[4 * (int64_t)i + k];
                    a->col[4 * (int64_t)i + k] = a->col[4 * (int64_t)i + k + 1];
                    a->col[4 * (int64_t)i + k + 1] = c;
                }
    }
    for (int t = 1; t <= 7; t += 2) CHECK_OK(krill_csr_check_threads(a, "B", t));
    a->val[4 * 17000 + 1] = NAN;        /* three faults: the first in row order is row 9000's */
    a->col[4 * 9000 + 2] = n;
    a->col[4 * 15000 + 3] = a->col[4 * 15000 + 2];
    CHECK_STATUS(krill_csr_check_threads(a, "B", 1), KRILL_ERR_ARG);
    snprintf(first, sizeof first, "%s", krill_last_error());
    CHECK(strstr(first, "row 9000: column 20000 is outside") != NULL);
    for (int t = 2; t <= 7; t++) {
        CHECK_STATUS(krill_csr_check_threads(a, "B", t), KRILL_ERR_ARG);
        CHECK(strcmp(krill_last_error(), first) == 0);
    }
    a->col[4 * 9000 + 2] = (9000 + 10) % n;
    a->row_ptr[12001] = 40 * (int64_t)n;   /* past nnz, and row 12001 then decreases */
    for (int t = 1; t <= 7; t += 3) {
        CHECK_STATUS(krill_csr_check_threads(a, "B", t), KRILL_ERR_ARG);
        CHECK(strstr(krill_last_error(), "row_ptr[12001] = 800000 exceeds nnz = 80000") != NULL);
    }
    krill_csr_destroy(&a);
}

int main(void)
{
    test_status();
    test_alloc();
    test_ctx();
    test_alloc_stats_and_device_csr();
    for (int t = 1; t <= 3; t++) {
        test_blas(t, 0);
        test_blas(t, 17);
        test_blas(t, 100000);
    }
    test_blas_edges();
    test_triplets();
    test_check();
    test_check_threads();
    return tu_finish("test_core");
}
