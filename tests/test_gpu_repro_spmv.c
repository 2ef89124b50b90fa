/* Reproducible SpMV on the GPU: every GPU format's spmv_repro (the row visitors of each
 * format's .cu file run by ozaki/ozaki_row.cuh) gives the bits of the CPU csr's spmv_repro,
 * for (alpha, beta) = (1, 0), (-1, 1), (2, -0.5) (y NaN before beta = 0: never read):
 * on the hard rows of rs_hard_rows (cancellation, huge range, subnormals, zeros, ties, Inf
 * and NaN in x: NaN rows must be NaN, their payload may differ, a GPU's NaN being
 * canonical), on generated matrices (one with empty rows, band1x with a 12000-entry row),
 * on every square matrix of $KRILL_TESTDATA, and through krill_mat_spmv_dot_raw (y and the
 * Ozaki x'y). Variants that change the plain kernels (csr:scalar, vector, block, warp,
 * cusparse's algorithms, rbp-csr:vector) change no bit. Plain GPU csr differs from the exact
 * rows somewhere. A row of KRILL_OZ_ROW_MAX_N entries works; one more is refused by every
 * format with KRILL_ERR_UNSUPPORTED naming the length and the limit (plain mode still
 * runs); a table without spmv_repro is refused naming the GPU. Needs a GPU (else 77). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formats/formats_impl.h"
#include "repro_spmv_data.h"
#include "testutil.h"

static krill_ctx *gpu, *cpu;

static const char *const formats[] = {
    "csr",  "csr:scalar", "csr:vector:8", "csr:block", "csr:warp", "cusparse", "cusparse:alg2",
    "ell",  "ellr",       "rbp-csr",      "rbp-csr:vector:4",      "rbp-ell",  "rbp-ellr",
    "segscan", "auto"};
#define N_FORMATS ((int)(sizeof formats / sizeof *formats))

/* ELL-type layouts only where N * (longest row) stays below this */
#define ELL_MAX_ENTRIES 20000000

static int64_t plain_differs;

/* y = alpha A x + beta y on ctx, host arrays in and out (y in: y0; NaN when beta == 0) */
static krill_status spmv_on(krill_ctx *ctx, const krill_mat *m, double alpha, const double *x,
                            double beta, const double *y0, double *y)
{
    krill_status st;
    const int64_t n = krill_mat_rows(m);
    krill_vec *vx = NULL, *vy = NULL;
    CHECK_OK(krill_vec_create(ctx, krill_mat_cols(m), &vx));
    CHECK_OK(krill_vec_create(ctx, n, &vy));
    if (!vx || !vy) {
        st = KRILL_ERR_ALLOC;
        goto cleanup;
    }
    CHECK_OK(krill_vec_upload(vx, x));
    if (beta == 0.0) CHECK_OK(krill_vec_fill(vy, NAN));
    else CHECK_OK(krill_vec_upload(vy, y0));
    st = krill_mat_spmv(m, alpha, vx, beta, vy);
    if (st == KRILL_OK) CHECK_OK(krill_vec_download(vy, y));
cleanup:
    krill_vec_destroy(&vx);
    krill_vec_destroy(&vy);
    return st;
}

/* the first row where got and want differ (NaN = NaN), or n */
static int32_t first_diff(const double *got, const double *want, int32_t n)
{
    int32_t i = 0;
    while (i < n && rs_same(got[i], want[i])) i++;
    return i;
}

static void compare(const char *name, const char *fmt, int ab, const double *got,
                    const double *want, int32_t n)
{
    const int32_t i = first_diff(got, want, n);
    tu_checks++;
    if (i == n) return;
    tu_failures++;
    fprintf(stderr, "  %s, %s, alpha %g beta %g: row %d differs from the CPU\n", name, fmt,
            rs_alpha[ab], rs_beta[ab], i);
    rs_print_bits("GPU", got[i]);
    rs_print_bits("CPU", want[i]);
}

/* y = A x and x'y by krill_mat_spmv_dot_raw on the GPU, against the CPU's */
static void check_spmv_dot(const krill_mat *m, const char *name, const char *fmt,
                           const double *x, const double *y_cpu, double xy_cpu)
{
    const int64_t n = krill_mat_rows(m);
    double *dx = NULL, *dy = NULL, *dxy = NULL, xy = 0.0;
    double *y = malloc((size_t)n * sizeof *y);
    CHECK_OK(krill_mem_alloc(gpu, (void **)&dx, (size_t)n * sizeof *dx, "x"));
    CHECK_OK(krill_mem_alloc(gpu, (void **)&dy, (size_t)n * sizeof *dy, "y"));
    CHECK_OK(krill_mem_alloc(gpu, (void **)&dxy, sizeof *dxy, "x'y"));
    if (dx && dy && dxy) {
        CHECK_OK(krill_mem_upload(gpu, dx, x, (size_t)n * sizeof *dx));
        CHECK_OK(krill_mat_spmv_dot_raw(m, dx, dy, dxy));
        CHECK_OK(krill_mem_download(gpu, y, dy, (size_t)n * sizeof *y));
        CHECK_OK(krill_mem_download(gpu, &xy, dxy, sizeof xy));
        compare(name, fmt, 0, y, y_cpu, (int32_t)n);
        tu_checks++;
        if (!rs_same(xy, xy_cpu)) {
            tu_failures++;
            fprintf(stderr, "  %s, %s: spmv_dot x'y differs from the CPU's\n", name, fmt);
            rs_print_bits("GPU", xy);
            rs_print_bits("CPU", xy_cpu);
        }
    }
    krill_mem_free(gpu, dx);
    krill_mem_free(gpu, dy);
    krill_mem_free(gpu, dxy);
    free(y);
}

/* every GPU format against the CPU csr on a with x and y0 */
static void check_matrix_with(const krill_csr *a, const char *name, const double *x,
                              const double *y0)
{
    const size_t bytes = (size_t)(a->n_rows > 0 ? a->n_rows : 1) * sizeof(double);
    const int ell_ok = (double)a->n_rows * (double)rs_longest_row(a) <= ELL_MAX_ENTRIES;
    const int square = a->n_rows == a->n_cols;
    double *ref[RS_NAB], *y = malloc(bytes), *host = malloc(bytes), xy_cpu = 0.0;
    krill_mat *mc = NULL;
    CHECK_OK(krill_mat_create(cpu, a, "csr", &mc));
    for (int ab = 0; ab < RS_NAB; ab++) {
        ref[ab] = malloc(bytes);
        if (mc) CHECK_OK(spmv_on(cpu, mc, rs_alpha[ab], x, rs_beta[ab], y0, ref[ab]));
        rs_reference(a, x, rs_alpha[ab], rs_beta[ab], y0, host);   /* the CPU test's oracle */
        CHECK(memcmp(host, ref[ab], (size_t)a->n_rows * sizeof(double)) == 0);
    }
    if (mc && square) CHECK_OK(krill_mat_spmv_dot_raw(mc, x, host, &xy_cpu));
    for (int f = 0; f < N_FORMATS; f++) {
        krill_mat *m = NULL;
        if (!ell_ok && rs_ell_type(formats[f])) continue;
        CHECK_OK(krill_mat_create(gpu, a, formats[f], &m));
        for (int ab = 0; m && ab < RS_NAB; ab++) {
            CHECK_OK(spmv_on(gpu, m, rs_alpha[ab], x, rs_beta[ab], y0, y));
            compare(name, formats[f], ab, y, ref[ab], a->n_rows);
        }
        if (m && square) check_spmv_dot(m, name, formats[f], x, ref[0], xy_cpu);
        krill_mat_destroy(&m);
    }
    if (!ell_ok) printf("  %s: ELL-type formats skipped (N x K above %d)\n", name, ELL_MAX_ENTRIES);
    krill_mat_destroy(&mc);
    CHECK_OK(krill_ctx_set_repro(gpu, KRILL_REPRO_OFF, 0));   /* plain GPU csr */
    CHECK_OK(krill_mat_create(gpu, a, "csr", &mc));
    if (mc && spmv_on(gpu, mc, 1.0, x, 0.0, y0, y) == KRILL_OK)
        for (int32_t i = 0; i < a->n_rows; i++) plain_differs += !rs_same(y[i], ref[0][i]);
    krill_mat_destroy(&mc);
    CHECK_OK(krill_ctx_set_repro(gpu, KRILL_REPRO_OZAKI, 0));
    for (int ab = 0; ab < RS_NAB; ab++) free(ref[ab]);
    free(y);
    free(host);
}

static void check_matrix(const krill_csr *a, const char *name)
{
    rs_with_inputs(a, name, check_matrix_with);
}

static void each_testdata(const krill_csr *a, const char *name, void *user)
{
    (void)user;
    check_matrix(a, name);
}

static void check_generated(void)
{
    static const struct {
        const char *spec;
        int every;   /* empty every every-th row */
    } gens[] = {{"poisson3d:20", 0}, {"elasticity3d:6,5,5", 0}, {"convdiff3d:16,2", 0},
                {"poisson3d:9", 4},  {"band1x:12000", 0}};
    for (size_t g = 0; g < sizeof gens / sizeof *gens; g++) {
        krill_csr *a = NULL;
        CHECK_OK(rs_gen(gens[g].spec, gens[g].every, &a));
        if (a) check_matrix(a, gens[g].spec);
        krill_csr_destroy(&a);
    }
}

/* A row of KRILL_OZ_ROW_MAX_N entries: every format, the CPU's bits. One more: refused by
 * every format, the message naming the row length and the limit; plain mode still runs. */
static void check_long_rows(void)
{
    const int64_t limit = KRILL_OZ_ROW_MAX_N;
    char longer[32], max[32];
    snprintf(longer, sizeof longer, "%lld", (long long)(limit + 1));
    snprintf(max, sizeof max, "%lld", (long long)limit);
    for (int extra = 0; extra <= 1; extra++) {
        krill_csr *a = NULL;
        double *x, y0[4], ref[4], y[4];
        krill_mat *mc = NULL;
        CHECK_OK(rs_long_row(4, (int32_t)(limit + extra), 2, &a));
        if (!a) continue;
        x = malloc((size_t)a->n_cols * sizeof *x);
        CHECK_OK(krill_gen_dot_vectors(a->n_cols, 4.0, 5, x, NULL));
        CHECK_OK(krill_gen_dot_vectors(4, 4.0, 6, y0, NULL));
        CHECK_OK(krill_mat_create(cpu, a, "csr", &mc));
        if (mc) CHECK_OK(spmv_on(cpu, mc, 2.0, x, -0.5, y0, ref));
        for (int f = 0; f < N_FORMATS; f++) {
            krill_mat *m = NULL;
            CHECK_OK(krill_mat_create(gpu, a, formats[f], &m));
            if (!m) continue;
            if (!extra) {
                CHECK_OK(spmv_on(gpu, m, 2.0, x, -0.5, y0, y));
                compare("longest allowed row", formats[f], 2, y, ref, 4);
            } else {
                CHECK_STATUS(spmv_on(gpu, m, 2.0, x, -0.5, y0, y), KRILL_ERR_UNSUPPORTED);
                CHECK(strstr(krill_last_error(), longer) != NULL);
                CHECK(strstr(krill_last_error(), max) != NULL);
                CHECK_OK(krill_ctx_set_repro(gpu, KRILL_REPRO_OFF, 0));
                CHECK_OK(spmv_on(gpu, m, 2.0, x, -0.5, y0, y));
                CHECK_OK(krill_ctx_set_repro(gpu, KRILL_REPRO_OZAKI, 0));
            }
            krill_mat_destroy(&m);
        }
        if (extra) printf("a row of %s entries: %s\n", longer, krill_last_error());
        krill_mat_destroy(&mc);
        free(x);
        krill_csr_destroy(&a);
    }
}

/* a GPU table without spmv_repro: KRILL_ERR_UNSUPPORTED naming the format and the GPU */
static void check_missing_op(void)
{
    krill_csr *a = NULL;
    krill_mat *m = NULL;
    double x[27], y[27];
    for (int i = 0; i < 27; i++) x[i] = 1.0;
    CHECK_OK(krill_gen("poisson3d:3", &a));
    CHECK_OK(krill_mat_create(gpu, a, "segscan", &m));
    if (m) {
        const krill_format_ops *saved = m->ops;
        krill_format_ops none = *saved;
        none.spmv_repro = NULL;
        m->ops = &none;
        CHECK_STATUS(spmv_on(gpu, m, 1.0, x, 0.0, NULL, y), KRILL_ERR_UNSUPPORTED);
        CHECK(strstr(krill_last_error(), "'segscan'") != NULL);
        CHECK(strstr(krill_last_error(), "GPU") != NULL);
        m->ops = saved;
    }
    krill_mat_destroy(&m);
    krill_csr_destroy(&a);
}

int main(void)
{
    krill_csr *hard = NULL;
    double *x = NULL, *y0 = NULL;
    gpu = tu_gpu_ctx_or_skip();
    cpu = tu_cpu_ctx(2);
    CHECK_OK(krill_ctx_set_repro(gpu, KRILL_REPRO_OZAKI, 0));
    CHECK_OK(krill_ctx_set_repro(cpu, KRILL_REPRO_OZAKI, 0));

    CHECK_OK(rs_hard_rows(4000, 9, &hard, &x, NULL));
    if (hard) {
        y0 = malloc((size_t)hard->n_rows * sizeof *y0);
        CHECK_OK(krill_gen_dot_vectors(hard->n_rows, 4.0, 3, y0, NULL));
        check_matrix_with(hard, "hard rows", x, y0);
    }
    check_generated();
    printf("testdata: %d matrices\n", tu_for_each_square_mtx(each_testdata, NULL));
    printf("plain GPU csr differs from the exact row sums in %lld rows\n",
           (long long)plain_differs);
    CHECK(plain_differs > 0);
    check_long_rows();
    check_missing_op();

    free(x);
    free(y0);
    krill_csr_destroy(&hard);
    krill_ctx_destroy(&cpu);
    krill_ctx_destroy(&gpu);
    return tu_finish("test_gpu_repro_spmv");
}
