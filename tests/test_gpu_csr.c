/* GPU sparse formats ("csr" in all its variants, "cusparse") against the CPU reference
 * krill_csr_spmv_ref, on every readable matrix of $KRILL_TESTDATA/mtx, on generated matrices
 * and on hand-made ones (empty, empty rows, rectangular, long rows on both sides of the
 * long-row threshold). For each matrix and variant:
 *   spmv for several (alpha, beta), beta = 0 with a NaN-poisoned y: every row within
 *     1e-12 of the reference relative to |alpha| sum_j |a_ij x_j| + |beta y_i|;
 *   spmv_dot (square): the same y bits as spmv, x'y within 1e-13 of a long-double dot
 *     relative to sum |x_i y_i|, the same bits on every run;
 *   diagonal: exactly the stored diagonal (0 where absent);
 *   update_values: then spmv against the reference with the new values;
 *   stats: sizes, bytes = (n+1)*4 + 12 nnz (32-bit offsets), row statistics, and the
 *     kernel the automatic choice must make (the rule of formats/csr.cu); the SpMV paper's
 *     section 3 variants (cyclic, block, warp) report their own names.
 * Also bad variant names and injected allocation faults during build. Needs a GPU (else 77). */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_impl.h"
#include "formats/formats_impl.h"
#include "testutil.h"

static krill_ctx *ctx;

static const char *const variants[] = {"csr",          "csr:auto",      "csr:scalar",
                                       "csr:vector",   "csr:vector:2",  "csr:vector:4",
                                       "csr:vector:8", "csr:vector:16", "csr:vector:32",
                                       "csr:cyclic",   "csr:block",     "csr:warp",
                                       "cusparse",     "cusparse:alg2"};
#define N_VARIANTS (sizeof variants / sizeof variants[0])

/* ---- the rules of formats/csr.cu, restated ---------------------------------------------- */

/* lanes per row: the power of two nearest mean / 3 on a log scale, in [min_lanes, 32]; the
 * thresholds, written out: 2 from a mean of 3 sqrt(2) = 4.24, 4 from 8.49, 8 from 16.97,
 * 16 from 33.94, 32 from 67.88 */
static int lanes_for(double mean, int min_lanes)
{
    static const double from[] = {4.242640687119285, 8.48528137423857, 16.97056274847714,
                                  33.94112549695428, 67.88225099390856};
    int lanes = 1;
    for (int i = 0; i < 5; i++)
        if (mean >= from[i]) lanes = 2 << i;
    return lanes < min_lanes ? min_lanes : lanes;
}

static int vector_lanes(double mean) { return lanes_for(mean, 2); }   /* "vector" */

/* automatic: then doubled while n_rows * lanes < 65536 threads (too few to fill the GPU)
 * and lanes < mean, up to 32 */
static int auto_lanes(double mean, int64_t n_rows)
{
    int lanes = lanes_for(mean, 1);
    while (lanes < 32 && lanes < mean && n_rows * lanes < 65536) lanes *= 2;
    return lanes;
}

/* the automatic choice's long rows: more than 128 rounds of its lanes */
static int has_long_row(const krill_csr *a, int lanes)
{
    for (int32_t r = 0; r < a->n_rows; r++)
        if (a->row_ptr[r + 1] - a->row_ptr[r] > 128 * (int64_t)lanes) return 1;
    return 0;
}

static void expected_variant(const krill_csr *a, const char *name, char *out, size_t len)
{
    double mean = a->n_rows > 0 ? (double)a->nnz / a->n_rows : 0.0;
    const char *param = strchr(name, ':') ? strchr(name, ':') + 1 : NULL;
    if (strncmp(name, "cusparse", 8) == 0) {
        snprintf(out, len, "%s", param ? param : "alg1");
    } else if (!param || strcmp(param, "auto") == 0) {
        int lanes = auto_lanes(mean, a->n_rows);
        if (lanes == 1) snprintf(out, len, "scalar%s", has_long_row(a, 1) ? "+long" : "");
        else snprintf(out, len, "vector:%d%s", lanes, has_long_row(a, lanes) ? "+long" : "");
    } else if (strcmp(param, "scalar") == 0) {
        snprintf(out, len, "scalar");
    } else if (strcmp(param, "vector") == 0) {
        snprintf(out, len, "vector:%d", vector_lanes(mean));
    } else {
        snprintf(out, len, "%s", param);
    }
}

/* ---- helpers ----------------------------------------------------------------------------- */

static krill_vec *vec_from(int64_t n, const double *host)
{
    krill_vec *v = NULL;
    CHECK_OK(krill_vec_create(ctx, n, &v));
    if (v && host) CHECK_OK(krill_vec_upload(v, host));
    return v;
}

static double *host_array(int64_t n) { return malloc((size_t)(n > 0 ? n : 1) * sizeof(double)); }

/* max over rows of |got - want| / (1e-12 * scale_i); <= 1 passes. scale_i = |alpha| *
 * sum_j |a_ij x_j| + |beta y0_i| (the second term only when beta != 0). */
static double row_errors(const krill_csr *a, double alpha, const double *x, double beta,
                         const double *y0, const double *got, const double *want, int32_t *worst)
{
    double max_ratio = 0.0;
    *worst = -1;
    for (int32_t i = 0; i < a->n_rows; i++) {
        double scale = 0.0;
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
            scale += fabs(a->val[p] * x[a->col[p]]);
        scale *= fabs(alpha);
        if (beta != 0.0) scale += fabs(beta * y0[i]);
        double err = fabs(got[i] - want[i]);
        double ratio = err == 0.0 ? 0.0 : (scale > 0.0 ? err / (1e-12 * scale) : INFINITY);
        if (isnan(got[i]) || isnan(ratio)) ratio = INFINITY;
        if (ratio > max_ratio) {
            max_ratio = ratio;
            *worst = i;
        }
    }
    return max_ratio;
}

static void report(const char *matrix, const char *variant, const char *what)
{
    fprintf(stderr, "  %s, %s: %s\n", matrix, variant, what);
}

/* spmv for several (alpha, beta) against the reference */
static void check_spmv(const char *name, const char *variant, const krill_csr *a, krill_mat *m,
                       uint64_t seed)
{
    static const double cases[][2] = {{1.0, 0.0}, {-0.5, 2.0}, {2.5, 1.0}, {0.0, 3.0}, {1.5, 0.0}};
    double *x = host_array(a->n_cols), *y0 = host_array(a->n_rows), *nan = host_array(a->n_rows);
    double *got = host_array(a->n_rows), *want = host_array(a->n_rows);
    tu_random(x, a->n_cols, seed);
    tu_random(y0, a->n_rows, seed + 1);
    for (int32_t i = 0; i < a->n_rows; i++) nan[i] = NAN;
    krill_vec *vx = vec_from(a->n_cols, x), *vy = vec_from(a->n_rows, NULL);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0] && vx && vy; c++) {
        double alpha = cases[c][0], beta = cases[c][1];
        CHECK_OK(krill_vec_upload(vy, beta == 0.0 ? nan : y0));
        CHECK_OK(krill_mat_spmv(m, alpha, vx, beta, vy));
        CHECK_OK(krill_vec_download(vy, got));
        memcpy(want, y0, (size_t)a->n_rows * sizeof *want);
        krill_csr_spmv_ref(a, alpha, x, beta, want);
        int32_t worst;
        double ratio = row_errors(a, alpha, x, beta, y0, got, want, &worst);
        CHECK(ratio <= 1.0);
        if (ratio > 1.0) {
            char what[256];
            snprintf(what, sizeof what, "spmv(alpha %g, beta %g): row %d = %.17g, expected %.17g",
                     alpha, beta, worst, got[worst], want[worst]);
            report(name, variant, what);
        }
    }
    krill_vec_destroy(&vx);
    krill_vec_destroy(&vy);
    free(x);
    free(y0);
    free(nan);
    free(got);
    free(want);
}

/* krill's kernels and cuSPARSE's CSR_ALG2 give the same bits on every run; cuSPARSE's
 * default CSR_ALG1 does not on matrices with long rows (seen on an H100). */
static int run_to_run_exact(const char *variant) { return strcmp(variant, "cusparse") != 0; }

/* spmv_dot: y as spmv(1, x, 0, y) (the same bits where the format is run-to-run exact, else
 * within the spmv tolerance of the reference), x'y against a long-double dot, repeatable */
static void check_spmv_dot(const char *name, const char *variant, const krill_csr *a, krill_mat *m)
{
    int64_t n = a->n_rows;
    double *x = host_array(n), *nan = host_array(n), *y1 = host_array(n), *y2 = host_array(n);
    double xy[2] = {NAN, NAN};
    double *dxy = NULL;
    tu_random(x, n, 31);
    for (int64_t i = 0; i < n; i++) nan[i] = NAN;
    krill_vec *vx = vec_from(n, x), *vy = vec_from(n, NULL);
    CHECK_OK(krill_mem_alloc(ctx, (void **)&dxy, sizeof *dxy, "x'y"));
    if (vx && vy && dxy) {
        CHECK_OK(krill_vec_upload(vy, nan));
        CHECK_OK(krill_mat_spmv(m, 1.0, vx, 0.0, vy));
        CHECK_OK(krill_vec_download(vy, y1));
        for (int k = 0; k < 2; k++) {
            CHECK_OK(krill_vec_upload(vy, nan));
            CHECK_OK(krill_scalars_write(ctx, dxy, &xy[0], 1));   /* NaN: must be overwritten */
            CHECK_OK(krill_mat_spmv_dot_raw(m, krill_vec_data(vx), krill_vec_data(vy), dxy));
            CHECK_OK(krill_scalars_read(ctx, dxy, &xy[k], 1));
        }
        CHECK_OK(krill_vec_download(vy, y2));
        if (run_to_run_exact(variant)) {
            int same_y = memcmp(y1, y2, (size_t)n * sizeof *y1) == 0;
            CHECK(same_y);
            if (!same_y) report(name, variant, "spmv_dot's y differs from spmv's");
            CHECK(memcmp(&xy[0], &xy[1], sizeof xy[0]) == 0);
        } else {
            int32_t worst;
            double *want = host_array(n);
            krill_csr_spmv_ref(a, 1.0, x, 0.0, want);
            double ratio = row_errors(a, 1.0, x, 0.0, NULL, y2, want, &worst);
            CHECK(ratio <= 1.0);
            if (ratio > 1.0) report(name, variant, "spmv_dot's y differs from the reference");
            free(want);
        }
        long double want = 0.0L, abs_sum = 0.0L;
        for (int64_t i = 0; i < n; i++) {
            want += (long double)x[i] * y2[i];
            abs_sum += fabsl((long double)x[i] * y2[i]);
        }
        int ok = fabsl((long double)xy[0] - want) <= 1e-13L * abs_sum;
        CHECK(ok);
        if (!ok) {
            char what[160];
            snprintf(what, sizeof what, "spmv_dot: x'y = %.17g, expected %.17Lg", xy[0], want);
            report(name, variant, what);
        }
    }
    krill_mem_free(ctx, dxy);
    krill_vec_destroy(&vx);
    krill_vec_destroy(&vy);
    free(x);
    free(nan);
    free(y1);
    free(y2);
}

static void check_diagonal(const char *name, const char *variant, const krill_csr *a, krill_mat *m)
{
    int64_t n = a->n_rows;
    double *got = host_array(n), *nan = host_array(n);
    for (int64_t i = 0; i < n; i++) nan[i] = NAN;
    krill_vec *d = vec_from(n, nan);
    if (d) {
        CHECK_OK(krill_mat_diagonal(m, d));
        CHECK_OK(krill_vec_download(d, got));
        int ok = 1;
        for (int32_t i = 0; i < a->n_rows && ok; i++) {
            double want = 0.0;
            for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
                if (a->col[p] == i) want = a->val[p];
            if (!(got[i] == want)) {
                char what[160];
                snprintf(what, sizeof what, "diagonal[%d] = %.17g, expected %.17g", i, got[i],
                         want);
                report(name, variant, what);
                ok = 0;
            }
        }
        CHECK(ok);
    }
    krill_vec_destroy(&d);
    free(got);
    free(nan);
}

static void check_stats(const char *name, const char *variant, const krill_csr *a, krill_mat *m)
{
    krill_format_stats s;
    int64_t max_row = 0, empty = 0;
    char want_variant[64];
    for (int32_t i = 0; i < a->n_rows; i++) {
        int64_t len = a->row_ptr[i + 1] - a->row_ptr[i];
        if (len > max_row) max_row = len;
        if (len == 0) empty++;
    }
    krill_mat_stats(m, &s);
    CHECK(s.n_rows == a->n_rows && s.n_cols == a->n_cols && s.nnz == a->nnz);
    CHECK(s.bytes == (size_t)(a->n_rows + 1) * 4 + (size_t)a->nnz * 12);
    CHECK(s.max_row_nnz == max_row && s.empty_rows == empty);
    double mean = a->n_rows ? (double)a->nnz / a->n_rows : 0.0;
    CHECK(fabs(s.mean_row_nnz - mean) <= 1e-12 * mean);
    expected_variant(a, variant, want_variant, sizeof want_variant);
    int ok = strcmp(s.variant, want_variant) == 0;
    CHECK(ok);
    if (!ok) {
        char what[160];
        snprintf(what, sizeof what, "variant \"%s\", expected \"%s\"", s.variant, want_variant);
        report(name, variant, what);
    }
}

/* new values (same pattern), then spmv against the reference on a copy with those values */
static void check_update(const char *name, const char *variant, const krill_csr *a, krill_mat *m)
{
    krill_csr *b = NULL;
    CHECK_OK(krill_csr_copy(a, &b));
    if (!b) return;
    for (int64_t k = 0; k < b->nnz; k++) b->val[k] = 0.5 * a->val[k] - 0.25 * (double)(k % 7);
    CHECK_OK(krill_mat_update_values(m, b->val));
    check_spmv(name, variant, b, m, 57);
    check_diagonal(name, variant, b, m);
    krill_csr_destroy(&b);
}

/* every variant on one matrix */
static void check_matrix(const char *name, const krill_csr *a)
{
    for (size_t v = 0; v < N_VARIANTS; v++) {
        krill_mat *m = NULL;
        krill_status st = krill_mat_create(ctx, a, variants[v], &m);
        CHECK_OK(st);
        if (st != KRILL_OK) {
            report(name, variants[v], krill_last_error());
            continue;
        }
        check_stats(name, variants[v], a, m);
        check_spmv(name, variants[v], a, m, 17 + v);
        if (a->n_rows == a->n_cols) check_spmv_dot(name, variants[v], a, m);
        check_diagonal(name, variants[v], a, m);
        check_update(name, variants[v], a, m);
        CHECK_OK(krill_ctx_sync(ctx));
        krill_mat_destroy(&m);
        CHECK(m == NULL);
    }
}

/* The section 3 variants that run another kernel with the same per-row arithmetic give the
 * same bits: block and cyclic as scalar (one thread per row, fused multiply-adds in entry
 * order), warp as vector:32. */
static void check_same_bits(const char *name, const krill_csr *a)
{
    static const char *const pairs[][2] = {{"csr:block", "csr:scalar"},
                                           {"csr:cyclic", "csr:scalar"},
                                           {"csr:warp", "csr:vector:32"}};
    double *x = host_array(a->n_cols), *y1 = host_array(a->n_rows), *y2 = host_array(a->n_rows);
    tu_random(x, a->n_cols, 77);
    krill_vec *vx = vec_from(a->n_cols, x), *vy = vec_from(a->n_rows, NULL);
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0] && vx && vy; p++) {
        double *out[2] = {y1, y2};
        for (int k = 0; k < 2; k++) {
            krill_mat *m = NULL;
            CHECK_OK(krill_mat_create(ctx, a, pairs[p][k], &m));
            if (m) {
                CHECK_OK(krill_mat_spmv(m, 1.5, vx, 0.0, vy));
                CHECK_OK(krill_vec_download(vy, out[k]));
            }
            krill_mat_destroy(&m);
        }
        int same = memcmp(y1, y2, (size_t)a->n_rows * sizeof *y1) == 0;
        CHECK(same);
        if (!same) report(name, pairs[p][0], "bits differ from its twin kernel");
    }
    krill_vec_destroy(&vx);
    krill_vec_destroy(&vy);
    free(x);
    free(y1);
    free(y2);
}

/* ---- hand-made matrices ------------------------------------------------------------------ */

/* A matrix from triplets where row r has len[r] entries (columns spread evenly, always
 * including the diagonal when r < n_cols and len > 0), random values. */
static krill_csr *rows_of(int32_t n_rows, int32_t n_cols, const int64_t *len, uint64_t seed)
{
    int64_t nnz = 0;
    for (int32_t r = 0; r < n_rows; r++) nnz += len[r];
    int32_t *ri = malloc((size_t)(nnz + 1) * sizeof *ri);
    int32_t *ci = malloc((size_t)(nnz + 1) * sizeof *ci);
    double *v = host_array(nnz);
    int64_t k = 0;
    tu_random(v, nnz, seed);
    for (int32_t r = 0; r < n_rows; r++)
        for (int64_t j = 0; j < len[r]; j++) {
            ri[k] = r;
            /* len[r] distinct columns: r, r + step, r + 2 step, ... modulo n_cols */
            int64_t step = n_cols / len[r];
            ci[k] = (int32_t)((r + j * (step > 0 ? step : 1)) % n_cols);
            k++;
        }
    krill_csr *a = NULL;
    CHECK_OK(krill_csr_from_triplets(n_rows, n_cols, nnz, ri, ci, v, &a));
    free(ri);
    free(ci);
    free(v);
    return a;
}

static void hand_made(void)
{
    krill_csr *a = NULL;

    /* 0 x 0 */
    CHECK_OK(krill_csr_create(0, 0, 0, &a));
    if (a) check_matrix("empty 0x0", a);
    krill_csr_destroy(&a);

    /* 1 x 1 */
    int64_t one[1] = {1};
    a = rows_of(1, 1, one, 3);
    if (a) check_matrix("1x1", a);
    krill_csr_destroy(&a);

    /* no entries at all: every row empty */
    CHECK_OK(krill_csr_create(100, 100, 0, &a));
    if (a) check_matrix("100x100 without entries", a);
    krill_csr_destroy(&a);

    /* empty rows between full ones, square and rectangular */
    int64_t gaps[7] = {0, 3, 0, 5, 0, 0, 2};
    a = rows_of(7, 7, gaps, 4);
    if (a) check_matrix("7x7 with empty rows", a);
    krill_csr_destroy(&a);
    a = rows_of(7, 3, gaps, 5);
    if (a) check_matrix("7x3", a);
    krill_csr_destroy(&a);
    int64_t wide[3] = {7, 0, 4};
    a = rows_of(3, 7, wide, 6);
    if (a) check_matrix("3x7", a);
    krill_csr_destroy(&a);

    /* short rows (automatic choice: scalar, long rows > 128 entries) with rows on both sides
     * of the threshold and of the 4096-entry chunks; enough rows (70,000) that the choice
     * does not add lanes to fill the GPU */
    enum { N1 = 70000 };
    int64_t *len = malloc(N1 * sizeof *len);
    for (int32_t r = 0; r < N1; r++) len[r] = r % 4;
    len[0] = 128;
    len[1] = 129;
    len[5] = 4095;
    len[6] = 4096;
    len[7] = 4097;
    len[9000] = 8193;
    len[N1 - 1] = N1;
    a = rows_of(N1, N1, len, 7);
    if (a) check_matrix("scalar with long rows", a);
    krill_csr_destroy(&a);

    /* mean about 9 (automatic choice: vector:4, long rows > 512 entries; 20,000 rows x 4 lanes
     * fill the GPU) */
    enum { N2 = 20000 };
    for (int32_t r = 0; r < N2; r++) len[r] = 8;
    len[3] = 512;
    len[4] = 513;
    len[4000] = N2;
    a = rows_of(N2, N2, len, 8);
    if (a) check_matrix("vector:4 with long rows", a);
    krill_csr_destroy(&a);

    /* dense rows of 4500 entries: vector:32 in the automatic choice, and every row long
     * (more than 4096 entries: two chunks each) */
    for (int32_t r = 0; r < 600; r++) len[r] = 4500;
    a = rows_of(600, 4500, len, 9);
    if (a) check_matrix("dense 600x4500", a);
    krill_csr_destroy(&a);
    free(len);
}

/* Bad variant names, and an injected allocation fault at every step of a build: each fails
 * cleanly (no matrix, a message) until the build goes through. */
static void errors(void)
{
    static const char *const bad[] = {"csr:vector:3", "csr:vector:64", "csr:vector:", "csr:bogus",
                                      "csr:vector:8x", "csr:scalar:2", "cusparse:alg9",
                                      "csr:blocks", "csr:warp:2", "csr:cyclic:1"};
    int64_t len[300];
    krill_csr *a = NULL;
    for (int r = 0; r < 300; r++) len[r] = r % 5;
    len[10] = 300;   /* a long row, so that the long-row tables are built too */
    a = rows_of(300, 300, len, 10);
    if (!a) return;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        krill_mat *m = (krill_mat *)&m;
        CHECK_STATUS(krill_mat_create(ctx, a, bad[i], &m), KRILL_ERR_ARG);
        CHECK(m == NULL);
    }
    for (size_t v = 0; v < N_VARIANTS; v++) {
        int done = 0;
        for (long k = 1; k <= 40 && !done; k++) {
            krill_mat *m = NULL;
            krill_fault_alloc_after(k);
            krill_status st = krill_mat_create(ctx, a, variants[v], &m);
            krill_fault_alloc_after(0);
            if (st == KRILL_OK) {
                done = 1;
                check_spmv("fault-injection matrix", variants[v], a, m, 3);
            } else {
                CHECK(st == KRILL_ERR_ALLOC || st == KRILL_ERR_DEVICE_ALLOC);
                CHECK(m == NULL && strstr(krill_last_error(), "injected") != NULL);
            }
            krill_mat_destroy(&m);
        }
        CHECK(done);
    }
    krill_csr_destroy(&a);
}

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

int main(void)
{
    static const char *const specs[] = {"poisson3d:20", "convdiff3d:16",  "elasticity3d:6,4,4",
                                        "band1:1000",   "band3:1000",     "band101:2000",
                                        "rand1:1000",   "rand100:2000",   "band1x:5000"};
    ctx = tu_gpu_ctx_or_skip();
    printf("%s\n", krill_ctx_describe(ctx));

    hand_made();
    errors();
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i += tu_quick() ? 2 : 1) {
        krill_csr *a = NULL;
        CHECK_OK(krill_gen(specs[i], &a));
        if (a) check_matrix(specs[i], a);
        if (a) check_same_bits(specs[i], a);
        krill_csr_destroy(&a);
    }

    const char *dir = tu_testdata_path("mtx");
    if (!dir) {
        printf("testdata absent ($KRILL_TESTDATA): hand-made and generated matrices only\n");
    } else {
        char dirpath[4096];
        int tested = 0, refused = 0;
        snprintf(dirpath, sizeof dirpath, "%s", dir);
        DIR *d = opendir(dirpath);
        CHECK(d != NULL);
        for (struct dirent *e; d && (e = readdir(d));) {
            if (!has_suffix(e->d_name, ".mtx") && !has_suffix(e->d_name, ".mtx.gz")) continue;
            char path[8192];
            krill_csr *a = NULL;
            snprintf(path, sizeof path, "%s/%s", dirpath, e->d_name);
            if (krill_mm_read(path, &a, NULL) != KRILL_OK) {   /* complex etc.: io's tests */
                refused++;
                continue;
            }
            check_matrix(e->d_name, a);
            tested++;
            krill_csr_destroy(&a);
        }
        if (d) closedir(d);
        printf("%d testdata matrices checked, %d refused by the reader\n", tested, refused);
        CHECK(tested > tu_testdata_expect(50, 10));
    }
    krill_ctx_destroy(&ctx);
    return tu_finish("test_gpu_csr");
}
