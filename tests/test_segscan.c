/* The segscan format against the CSR reference krill_csr_spmv_ref: generated matrices (the
 * SpMV paper's band1, band1x with its one full row, rand, stencils), hand-made ones (empty
 * rows, 1x1, 0x0, nnz = 0, a full row, rows ending exactly at segment, warp-tile and tile
 * boundaries, rows spanning many segments and tiles) and every readable square real matrix
 * of testdata; several (alpha, beta), beta = 0 over a NaN-filled y; diagonal,
 * update_values, the stored bytes against the layout's formula (derived here from the CSR,
 * independently of the build), bad parameters, injected allocation faults, and CG (SPD)
 * and GMRES (nonsymmetric, with a long row) converging with segscan.
 * Built twice: CPU (rows inside one tile bitwise equal to the reference: summed in CSR
 * order; rows that cross a tile within the bound below) and, with SEGSCAN_TEST_GPU, GPU
 * (label gpu; every row within the bound). The bound for row i of length n_i:
 * |y_i - yref_i| <= 2 (n_i + 2) eps (|alpha| sum_j |a_ij x_j| + |beta y_i|), two summation
 * orders of the same products. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_impl.h"
#include "formats/formats_impl.h"
#include "testutil.h"

/* the layout of formats_impl.h, restated: stream rounded up to warp tiles of 256, tiles of
 * 2048, 13 bytes per element + 4 per warp tile + 12 per span + 16 per tile */
enum { WARP_TILE = 256, TILE = 2048 };

static krill_ctx *make_ctx(void)
{
#ifdef SEGSCAN_TEST_GPU
    return tu_gpu_ctx_or_skip();
#else
    return tu_cpu_ctx(3);
#endif
}

/* Where the build must put row i: stream positions [first[i], last[i]] (an empty row has one
 * stored zero; the last row owns the zeros up to the stream's end). Returns the stream
 * length and the number of rows whose positions fall in two or more tiles (spans); sets
 * span[i]. */
static int64_t layout(const krill_csr *a, char *span, int64_t *n_span)
{
    int64_t pos = 0, empty = 0, len;
    for (int32_t i = 0; i < a->n_rows; i++) empty += a->row_ptr[i + 1] == a->row_ptr[i];
    len = (a->nnz + empty + WARP_TILE - 1) / WARP_TILE * WARP_TILE;
    *n_span = 0;
    for (int32_t i = 0; i < a->n_rows; i++) {
        int64_t n = a->row_ptr[i + 1] - a->row_ptr[i];
        int64_t first = pos, last = i == a->n_rows - 1 ? len - 1 : pos + (n > 0 ? n : 1) - 1;
        pos += n > 0 ? n : 1;
        span[i] = first / TILE != last / TILE;
        *n_span += span[i];
    }
    return len;
}

/* Every row within the bound of the header; on the CPU, rows that are not spans bitwise. */
static int rows_ok(const krill_csr *a, const char *span, double alpha, const double *x,
                   double beta, const double *y0, const double *got, const double *ref,
                   int32_t *worst)
{
    for (int32_t i = 0; i < a->n_rows; i++) {
        double scale = beta != 0.0 ? fabs(beta * y0[i]) : 0.0, sum = 0.0;
        int64_t n = a->row_ptr[i + 1] - a->row_ptr[i];
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
            sum += fabs(a->val[p] * x[a->col[p]]);
        scale += fabs(alpha) * sum;
        int ok = fabs(got[i] - ref[i]) <= 2.0 * (double)(n + 2) * DBL_EPSILON * scale;
#ifndef SEGSCAN_TEST_GPU
        if (!span[i]) ok = memcmp(&got[i], &ref[i], sizeof got[i]) == 0 || got[i] == ref[i];
#else
        (void)span;
#endif
        if (!ok) {
            *worst = i;
            return 0;
        }
    }
    return 1;
}

static void check_spmv(krill_mat *m, const krill_csr *a, const char *span, const char *what)
{
    static const double cases[][2] = {{1.0, 0.0}, {1.5, -0.5}, {-0.5, 2.0}, {2.5, 1.0},
                                      {0.0, 3.0}, {0.0, 0.0},  {-1.0, 0.0}};
    const int64_t n = a->n_rows;
    double *x = malloc((size_t)a->n_cols * 8 + 8), *y0 = malloc((size_t)n * 8 + 8);
    double *ref = malloc((size_t)n * 8 + 8), *got = malloc((size_t)n * 8 + 8);
    double *nan = malloc((size_t)n * 8 + 8);
    krill_vec *vx = NULL, *vy = NULL;
    tu_random(x, a->n_cols, 7);
    tu_random(y0, n, 8);
    for (int64_t i = 0; i < n; i++) nan[i] = NAN;
    CHECK_OK(krill_vec_create(krill_mat_ctx(m), a->n_cols, &vx));
    CHECK_OK(krill_vec_create(krill_mat_ctx(m), n, &vy));
    if (vx && vy) CHECK_OK(krill_vec_upload(vx, x));
    for (size_t c = 0; vx && vy && c < sizeof cases / sizeof *cases; c++) {
        const double alpha = cases[c][0], beta = cases[c][1];
        int32_t worst = -1;
        memcpy(ref, y0, (size_t)n * sizeof *ref);
        krill_csr_spmv_ref(a, alpha, x, beta, ref);
        CHECK_OK(krill_vec_upload(vy, beta == 0.0 ? nan : y0));
        CHECK_OK(krill_mat_spmv(m, alpha, vx, beta, vy));
        CHECK_OK(krill_vec_download(vy, got));
        int ok = rows_ok(a, span, alpha, x, beta, y0, got, ref, &worst);
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  %s: y = %g A x + %g y: row %d = %.17g, expected %.17g\n", what,
                    alpha, beta, worst, got[worst], ref[worst]);
    }
    krill_vec_destroy(&vx);
    krill_vec_destroy(&vy);
    free(x);
    free(y0);
    free(ref);
    free(got);
    free(nan);
}

static void check_diagonal(krill_mat *m, const krill_csr *a, const char *what)
{
    const int64_t n = a->n_rows;
    double *got = malloc((size_t)n * 8 + 8);
    krill_vec *d = NULL;
    int ok = 1;
    for (int64_t i = 0; i < n; i++) got[i] = NAN;
    CHECK_OK(krill_vec_create(krill_mat_ctx(m), n, &d));
    if (d) {
        CHECK_OK(krill_vec_upload(d, got));   /* NaN: every entry must be written */
        CHECK_OK(krill_mat_diagonal(m, d));
        CHECK_OK(krill_vec_download(d, got));
    }
    for (int32_t i = 0; d && i < a->n_rows && ok; i++) {
        double want = 0.0;
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
            if (a->col[p] == i) want = a->val[p];
        ok = got[i] == want;
        if (!ok) fprintf(stderr, "  %s: diagonal[%d] = %g, expected %g\n", what, i, got[i], want);
    }
    CHECK(ok);
    krill_vec_destroy(&d);
    free(got);
}

static void check_stats(krill_mat *m, const krill_csr *a, int64_t len, int64_t n_span,
                        const char *what)
{
    krill_format_stats s;
    int64_t k = 0, empty = 0;
    for (int32_t i = 0; i < a->n_rows; i++) {
        int64_t n = a->row_ptr[i + 1] - a->row_ptr[i];
        if (n > k) k = n;
        empty += n == 0;
    }
    krill_mat_stats(m, &s);
    const size_t want = 13 * (size_t)len + 4 * (size_t)(len / WARP_TILE) + 12 * (size_t)n_span +
                        16 * (size_t)((len + TILE - 1) / TILE);
    CHECK(s.bytes == want);
    if (s.bytes != want) fprintf(stderr, "  %s: %zu bytes, expected %zu\n", what, s.bytes, want);
    CHECK(s.n_rows == a->n_rows && s.n_cols == a->n_cols && s.nnz == a->nnz);
    CHECK(s.max_row_nnz == k && s.empty_rows == empty);
    CHECK(strstr(s.variant, "+spans") ? n_span > 0 : n_span == 0);
}

/* spmv, diagonal, stats, then new values (same pattern) and spmv and diagonal again */
static void check_matrix(krill_ctx *ctx, const krill_csr *a, const char *what)
{
    char *span = malloc((size_t)a->n_rows + 1);
    int64_t n_span = 0, len = layout(a, span, &n_span);
    krill_mat *m = NULL;
    krill_csr *b = NULL;
    CHECK_OK(krill_mat_create(ctx, a, "segscan", &m));
    if (!m) {
        fprintf(stderr, "  %s: %s\n", what, krill_last_error());
        free(span);
        return;
    }
    check_spmv(m, a, span, what);
    if (a->n_rows == a->n_cols) check_diagonal(m, a, what);
    check_stats(m, a, len, n_span, what);
    CHECK_OK(krill_csr_copy(a, &b));
    for (int64_t p = 0; b && p < b->nnz; p++) b->val[p] = 0.5 - 2.0 * b->val[p];
    if (b) {
        CHECK_OK(krill_mat_update_values(m, b->val));
        check_spmv(m, b, span, what);
        if (b->n_rows == b->n_cols) check_diagonal(m, b, what);
    }
    krill_csr_destroy(&b);
    krill_mat_destroy(&m);
    free(span);
}

/* n_rows x n_cols with len[r] entries in row r: columns r, r + step, r + 2 step, ... modulo
 * n_cols (step = n_cols / len[r], at least 1), random values */
static krill_csr *rows_of(int32_t n_rows, int32_t n_cols, const int64_t *len, uint64_t seed)
{
    int64_t nnz = 0, k = 0;
    for (int32_t r = 0; r < n_rows; r++) nnz += len[r];
    int32_t *ri = malloc((size_t)nnz * 4 + 4), *ci = malloc((size_t)nnz * 4 + 4);
    double *v = malloc((size_t)nnz * 8 + 8);
    krill_csr *a = NULL;
    tu_random(v, nnz, seed);
    for (int32_t r = 0; r < n_rows; r++)
        for (int64_t j = 0; j < len[r]; j++) {
            int64_t step = n_cols / len[r];
            ri[k] = r;
            ci[k++] = (int32_t)((r + j * (step > 0 ? step : 1)) % n_cols);
        }
    CHECK_OK(krill_csr_from_triplets(n_rows, n_cols, nnz, ri, ci, v, &a));
    free(ri);
    free(ci);
    free(v);
    return a;
}

static void check_rows(krill_ctx *ctx, int32_t n_rows, int32_t n_cols, const int64_t *len,
                       const char *what)
{
    krill_csr *a = rows_of(n_rows, n_cols, len, (uint64_t)n_rows * 31 + (uint64_t)n_cols);
    if (a) check_matrix(ctx, a, what);
    krill_csr_destroy(&a);
}

static void test_generated(krill_ctx *ctx)
{
    static const char *specs[] = {"band1:1000",  "band1:5000",     "band1x:300",
                                  "band1x:5000", "band1x:20000",   "band3:777",
                                  "band101:700", "rand1:800",      "rand100:300",
                                  "poisson3d:10", "convdiff3d:8,3", "elasticity3d:4,3,3"};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        krill_csr *a = NULL;
        CHECK_OK(krill_gen(specs[i], &a));
        if (a) check_matrix(ctx, a, specs[i]);
        krill_csr_destroy(&a);
    }
}

static void test_hand_made(krill_ctx *ctx)
{
    enum { N = 6000 };
    int64_t *len = calloc(N, sizeof *len);
    krill_csr *a = NULL;
    int32_t r0 = 0, c0 = 0;
    double v0 = -3.25;

    CHECK_OK(krill_csr_create(0, 0, 0, &a));
    if (a) check_matrix(ctx, a, "0 x 0");
    krill_csr_destroy(&a);
    CHECK_OK(krill_csr_from_triplets(1, 1, 1, &r0, &c0, &v0, &a));
    if (a) check_matrix(ctx, a, "1 x 1");
    krill_csr_destroy(&a);
    CHECK_OK(krill_csr_create(1, 1, 0, &a));
    if (a) check_matrix(ctx, a, "1 x 1 without its entry");
    krill_csr_destroy(&a);
    CHECK_OK(krill_csr_create(4, 0, 0, &a));         /* no columns: x is never read */
    if (a) check_matrix(ctx, a, "4 x 0");
    krill_csr_destroy(&a);
    CHECK_OK(krill_csr_create(0, 4, 0, &a));
    if (a) check_matrix(ctx, a, "0 x 4");
    krill_csr_destroy(&a);
    CHECK_OK(krill_csr_create(5000, 5000, 0, &a));   /* nnz = 0: every row a stored zero */
    if (a) check_matrix(ctx, a, "5000 x 5000 without entries");
    krill_csr_destroy(&a);

    /* empty rows first, last, in runs; rectangular both ways */
    for (int32_t r = 0; r < 3000; r++) len[r] = (r % 7 == 0 || r % 11 < 2) ? 0 : 1 + r % 5;
    len[2999] = 0;
    check_rows(ctx, 3000, 3000, len, "3000 x 3000 with empty rows");
    check_rows(ctx, 3000, 50, len, "3000 x 50");
    check_rows(ctx, 300, 3000, len, "300 x 3000");

    /* a full row (every column) among short rows, in the middle */
    for (int32_t r = 0; r < 4000; r++) len[r] = 1 + r % 3;
    len[1500] = 4000;
    check_rows(ctx, 4000, 4000, len, "a full row in the middle");

    /* segment, warp-tile and tile boundaries exactly at row boundaries: rows of 32, 16, 8 */
    const int64_t widths[] = {32, 16, 8, 64, 256, 2048};
    for (size_t w = 0; w < sizeof widths / sizeof *widths; w++) {
        char what[64];
        int32_t n = (int32_t)(3 * TILE / widths[w] + 5);
        for (int32_t r = 0; r < n; r++) len[r] = widths[w];
        snprintf(what, sizeof what, "rows of %lld", (long long)widths[w]);
        check_rows(ctx, n, 2048 > n ? 2048 : n, len, what);
    }

    /* rows just past and short of a segment, a warp tile, a tile */
    const int64_t odd[] = {31, 33, 63, 65, 255, 257, 2047, 2049};
    for (size_t w = 0; w < sizeof odd / sizeof *odd; w++) {
        char what[64];
        for (int32_t r = 0; r < 40; r++) len[r] = r % 2 ? odd[w] : 1;
        snprintf(what, sizeof what, "rows of %lld and 1", (long long)odd[w]);
        check_rows(ctx, 40, 4096, len, what);
    }

    /* one row across many segments and warp tiles and tiles, starting mid-segment; a row
     * inside one tile across warp tiles; a run of rows ending exactly at a tile's end */
    for (int32_t r = 0; r < N; r++) len[r] = r % 4;
    len[3] = N;        /* starts at stream position 3 */
    len[2000] = 700;   /* several warp tiles */
    len[2001] = 2048;  /* a whole tile's worth, not aligned */
    check_rows(ctx, N, N, len, "long rows among short ones");
    for (int32_t r = 0; r < 8; r++) len[r] = 512;   /* tile 0 ends with row 3 */
    len[8] = 5000;
    len[9] = 0;
    for (int32_t r = 10; r < 20; r++) len[r] = 100;
    check_rows(ctx, 20, 5000, len, "tile-aligned rows, a long one, an empty one");
    free(len);
}

/* bad parameters and an injected allocation fault at each step of a build */
static void test_errors(krill_ctx *ctx)
{
    krill_csr *a = NULL;
    krill_mat *m = NULL;
    int done = 0;
    CHECK_OK(krill_gen("band1x:3000", &a));
    if (!a) return;
    CHECK_STATUS(krill_mat_create(ctx, a, "segscan:fast", &m), KRILL_ERR_ARG);
    CHECK(m == NULL);
    for (long k = 1; k <= 40 && !done; k++) {
        krill_fault_alloc_after(k);
        krill_status st = krill_mat_create(ctx, a, "segscan", &m);
        krill_fault_alloc_after(0);
        if (st == KRILL_OK) {
            done = 1;
        } else {
            CHECK(st == KRILL_ERR_ALLOC || st == KRILL_ERR_DEVICE_ALLOC);
            CHECK(m == NULL && strstr(krill_last_error(), "injected") != NULL);
        }
        krill_mat_destroy(&m);
    }
    CHECK(done);
    krill_csr_destroy(&a);
}

static void test_solvers(krill_ctx *ctx)
{
    static const char *specs[3] = {"poisson3d:10", "convdiff3d:8,2", "band1x:3000"};
    for (int p = 0; p < 3; p++) {
        krill_csr *a = NULL;
        krill_mat *m = NULL;
        krill_vec *b = NULL, *x = NULL;
        krill_solver_opts o;
        krill_solve_info info = {0};
        CHECK_OK(krill_gen(specs[p], &a));
        CHECK_OK(krill_mat_create(ctx, a, "segscan", &m));
        CHECK_OK(krill_vec_create(ctx, a->n_rows, &b));
        CHECK_OK(krill_vec_create(ctx, a->n_rows, &x));
        CHECK_OK(krill_vec_fill(b, 1.0));
        krill_solver_opts_default(&o);
        o.solver = p == 0 ? KRILL_SOLVER_CG : KRILL_SOLVER_GMRES;
        CHECK_OK(krill_solve(m, NULL, b, x, &o, &info));
        CHECK(info.reason == KRILL_CONVERGED_RTOL && info.relres <= 1e-8);
        if (info.reason != KRILL_CONVERGED_RTOL)
            fprintf(stderr, "  %s with segscan: reason %d after %d iterations\n", specs[p],
                    (int)info.reason, info.iterations);
        krill_solve_info_free(&info);
        krill_vec_destroy(&b);
        krill_vec_destroy(&x);
        krill_mat_destroy(&m);
        krill_csr_destroy(&a);
    }
}

static void check_testdata_matrix(const krill_csr *a, const char *name, void *ctx)
{
    check_matrix(ctx, a, name);
}

static void test_testdata(krill_ctx *ctx)
{
    int tested = tu_for_each_square_mtx(check_testdata_matrix, ctx);
    if (tested < 0) return;
    printf("%d testdata matrices checked in segscan\n", tested);
    CHECK(tested > tu_testdata_expect(50, 10));
}

/* The host build over the rows in parallel (past KRILL_BUILD_PARALLEL_MIN entries) makes one
 * thread's arrays on 2, 3 and 8: rand100 with every seventh row, the first and the last three
 * emptied (empty rows at both ends, the last one owning the padding), and poisson3d. */
static void test_build_threads(void)
{
    const char *const specs[] = {"rand100:1500", "poisson3d:20"};
    for (size_t s = 0; s < 2; s++) {
        krill_csr *a = NULL;
        krill_segscan_host one, h;
        CHECK_OK(krill_gen(specs[s], &a));
        if (!a) continue;
        if (s == 0) {
            int64_t q = 0, lo = 0;
            for (int32_t i = 0; i < a->n_rows; i++) {
                const int64_t hi = a->row_ptr[i + 1];
                const int empty = i % 7 == 3 || i == 0 || i >= a->n_rows - 3;
                for (int64_t p = lo; p < hi && !empty; p++) {
                    a->col[q] = a->col[p];
                    a->val[q++] = a->val[p];
                }
                lo = hi;
                a->row_ptr[i + 1] = q;
            }
            a->nnz = q;
        }
        CHECK(a->nnz >= KRILL_BUILD_PARALLEL_MIN);
        CHECK_OK(krill_segscan_host_build(a, 1, &one));
        CHECK(s != 0 || (one.n_empty > 200 && one.n_span > 0));
        for (int t = 2; t <= 8 && one.val; t += t == 3 ? 5 : 1) {
            CHECK_OK(krill_segscan_host_build(a, t, &h));
            CHECK(h.len == one.len && h.n_span == one.n_span && h.n_empty == one.n_empty &&
                  h.stats.bytes == one.stats.bytes);
            if (h.val && h.len == one.len && h.n_span == one.n_span && h.n_empty == one.n_empty)
                CHECK(memcmp(h.val, one.val, (size_t)h.len * sizeof *h.val) == 0 &&
                      memcmp(h.col, one.col, (size_t)h.len * sizeof *h.col) == 0 &&
                      memcmp(h.hint, one.hint, (size_t)h.len) == 0 &&
                      memcmp(h.warp_heads, one.warp_heads,
                             (size_t)(h.len / KRILL_SEGSCAN_WARP_TILE) * sizeof(int32_t)) == 0 &&
                      memcmp(h.span, one.span, (size_t)h.n_span * 3 * sizeof(int32_t)) == 0 &&
                      memcmp(h.empty_pos, one.empty_pos, (size_t)h.n_empty * sizeof(int64_t)) == 0);
            krill_segscan_host_free(&h);
        }
        krill_segscan_host_free(&one);
        krill_csr_destroy(&a);
    }
}

int main(void)
{
    krill_ctx *ctx = make_ctx();
    test_build_threads();
    test_generated(ctx);
    test_hand_made(ctx);
    test_errors(ctx);
    test_solvers(ctx);
    test_testdata(ctx);
    krill_ctx_destroy(&ctx);
    return tu_finish("test_segscan");
}
