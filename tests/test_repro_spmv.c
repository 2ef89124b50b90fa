/* Reproducible SpMV on the CPU: every format's spmv_repro (formats/spmv_repro.c), through
 * krill_mat_spmv on contexts in reproducible mode.
 *   (a) The row sum itself: the reference below (krill_oz_row_gather, ozaki/ozaki_row.h)
 *       against MPFR's exact sum rounded to nearest, bit for bit, on 2000 hard rows of 1 to
 *       200 entries (rs_hard_rows: cancellation, magnitudes 2^-1000 .. 2^1000 with products
 *       past the subnormals, subnormals, exact zeros, ties, 1e300 + 1e-300 - 1e300, DBL_MAX
 *       products); rows with Inf or NaN in x against IEEE's result (NaN for a NaN product or
 *       +Inf with -Inf, else the infinity).
 *   (b) Every CPU format (csr, ell, ellr, rbp-csr, rbp-ell, rbp-ellr, segscan, auto) on 1, 2,
 *       3 and 7 threads and (alpha, beta) = (1, 0), (-1, 1), (2, -0.5): y's bits equal the
 *       reference on the hard rows, on generated matrices (poisson3d, elasticity3d,
 *       convdiff3d, one with empty rows, band1x's 1500-entry row) and on every square
 *       matrix of $KRILL_TESTDATA, with x and y = (rand - 0.5) exp(4 randn) (so that the
 *       order of a plain sum matters); y is NaN before a beta = 0 product (never read). The
 *       generated matrices' reference rows are also checked against MPFR.
 *   (c) Plain mode: unchanged (csr equals krill_csr_spmv_ref) and different from the exact
 *       rows somewhere (else (b) would prove nothing).
 *   (d) A fixed slice count and the fast mode give the same exact rows; spmv_dot_raw gives
 *       the exact rows and the exact x'y (MPFR) on every thread count.
 *   (e) Every registered table has spmv_repro; a table without it is refused with
 *       KRILL_ERR_UNSUPPORTED naming the format and the device.
 * Without MPFR the MPFR comparisons are skipped with a message; without testdata, (b)'s
 * real matrices. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formats/formats_impl.h"
#include "ozaki/ozaki_impl.h"
#include "ozaki_ref.h"
#include "repro_spmv_data.h"
#include "testutil.h"

#define NT 4
static const int thread_counts[NT] = {1, 2, 3, 7};
static krill_ctx *ctxs[NT];
static krill_ctx *plain;   /* one thread, reproducible mode off */

static const char *const formats[] = {"csr",      "ell",     "ellr", "rbp-csr", "rbp-ell",
                                      "rbp-ellr", "segscan", "auto"};
#define N_FORMATS ((int)(sizeof formats / sizeof *formats))

/* ELL-type layouts only where N * (longest row) stays below this (their padding) */
#define ELL_MAX_ENTRIES 4000000

static int64_t plain_differs;   /* rows where plain csr differs from the exact sum */

/* ---- (a) the row sum against MPFR / IEEE ---------------------------------------------- */

/* IEEE's sum of the products when one is not finite: NaN for a NaN product or both
 * infinities, else the infinity; 0 (no verdict) when every product is finite */
static int ieee_special(int64_t n, const double *a, const double *x, double *out)
{
    int nan = 0, pinf = 0, ninf = 0, special = 0;
    for (int64_t k = 0; k < n; k++) {
        const double p = a[k] * x[k];
        if (isfinite(a[k]) && isfinite(x[k])) continue;
        special = 1;
        nan |= isnan(p);
        pinf |= p == INFINITY;
        ninf |= p == -INFINITY;
    }
    *out = nan || (pinf && ninf) ? NAN : pinf ? INFINITY : -INFINITY;
    return special;
}

/* the expected s_i of row i: IEEE when it has a non-finite term, else MPFR's; 0 when
 * neither applies (no MPFR) */
static int expected_row(const krill_csr *a, int32_t i, const double *x, double *out)
{
    const int64_t lo = a->row_ptr[i], n = a->row_ptr[i + 1] - lo;
    double *xs = malloc((size_t)(n > 0 ? n : 1) * sizeof *xs);
    int known;
    for (int64_t k = 0; k < n; k++) xs[k] = x[a->col[lo + k]];
    known = ieee_special(n, a->val + lo, xs, out) || oz_ref_dot(n, a->val + lo, xs, out);
    free(xs);
    return known;
}

/* every row's reference against MPFR / IEEE; returns the rows compared */
static int64_t check_rows_exact(const krill_csr *a, const double *x, const int *kind,
                                const char *name)
{
    int64_t compared = 0, wrong = 0;
    for (int32_t i = 0; i < a->n_rows; i++) {
        double want, got;
        if (!expected_row(a, i, x, &want)) continue;
        got = rs_row_sum(a, i, x);
        compared++;
        if (isnan(want) ? isnan(got) : memcmp(&got, &want, sizeof got) == 0) continue;
        if (wrong++ < 5) {
            fprintf(stderr, "  %s row %d (%s, %lld terms): not the correctly rounded sum\n",
                    name, i, kind ? rs_kind_names[kind[i]] : "matrix",
                    (long long)(a->row_ptr[i + 1] - a->row_ptr[i]));
            rs_print_bits("got     ", got);
            rs_print_bits("expected", want);
        }
    }
    tu_checks++;
    if (wrong) tu_failures++;
    return compared;
}

/* ---- (b) every format, thread count and (alpha, beta) ------------------------------- */

static void spmv_host(krill_ctx *ctx, const krill_mat *m, double alpha, const double *x,
                      double beta, double *y, krill_status expect)
{
    krill_vec *vx = NULL, *vy = NULL;
    CHECK_OK(krill_vec_wrap(ctx, krill_mat_cols(m), (double *)x, &vx));
    CHECK_OK(krill_vec_wrap(ctx, krill_mat_rows(m), y, &vy));
    if (vx && vy) CHECK_STATUS(krill_mat_spmv(m, alpha, vx, beta, vy), expect);
    krill_vec_destroy(&vx);
    krill_vec_destroy(&vy);
}

static void report_mismatch(const char *name, const char *fmt, int threads, int ab,
                            const double *got, const double *want, int32_t n)
{
    int32_t i = 0;
    while (i < n && memcmp(&got[i], &want[i], sizeof *got) == 0) i++;
    tu_failures++;
    fprintf(stderr, "  %s, %s, %d threads, alpha %g beta %g: row %d differs\n", name, fmt,
            threads, rs_alpha[ab], rs_beta[ab], i);
    if (i < n) {
        rs_print_bits("got     ", got[i]);
        rs_print_bits("expected", want[i]);
    }
}

/* y = alpha A x + beta y0 in format fmt on every thread count and (alpha, beta): the bits
 * of ref[ab] */
static void check_format(const krill_csr *a, const char *name, const char *fmt,
                         const double *x, const double *y0, double *const ref[RS_NAB])
{
    const size_t bytes = (size_t)a->n_rows * sizeof(double);
    double *y = malloc(bytes > 0 ? bytes : 1);
    for (int t = 0; t < NT; t++) {
        krill_mat *m = NULL;
        CHECK_OK(krill_mat_create(ctxs[t], a, fmt, &m));
        for (int ab = 0; m && ab < RS_NAB; ab++) {
            if (rs_beta[ab] == 0.0)
                for (int32_t i = 0; i < a->n_rows; i++) y[i] = NAN;
            else
                memcpy(y, y0, bytes);
            spmv_host(ctxs[t], m, rs_alpha[ab], x, rs_beta[ab], y, KRILL_OK);
            tu_checks++;
            if (memcmp(y, ref[ab], bytes) != 0)
                report_mismatch(name, fmt, thread_counts[t], ab, y, ref[ab], a->n_rows);
        }
        krill_mat_destroy(&m);
    }
    free(y);
}

/* (c): plain csr equals krill_csr_spmv_ref; count its rows that differ from the exact sums */
static void check_plain(const krill_csr *a, const double *x, const double *exact)
{
    const size_t bytes = (size_t)a->n_rows * sizeof(double);
    double *y = malloc(bytes > 0 ? bytes : 1), *ref = malloc(bytes > 0 ? bytes : 1);
    krill_mat *m = NULL;
    CHECK_OK(krill_mat_create(plain, a, "csr", &m));
    if (m) {
        spmv_host(plain, m, 1.0, x, 0.0, y, KRILL_OK);
        krill_csr_spmv_ref(a, 1.0, x, 0.0, ref);
        CHECK(memcmp(y, ref, bytes) == 0);
        for (int32_t i = 0; i < a->n_rows; i++) plain_differs += !rs_same(y[i], exact[i]);
    }
    krill_mat_destroy(&m);
    free(y);
    free(ref);
}

/* (b) and (c) on matrix a with x (n_cols) and y0 (n_rows) */
static void check_matrix_with(const krill_csr *a, const char *name, const double *x,
                              const double *y0)
{
    double *ref[RS_NAB];
    const int ell_ok = (double)a->n_rows * (double)rs_longest_row(a) <= ELL_MAX_ENTRIES;
    for (int ab = 0; ab < RS_NAB; ab++) {
        ref[ab] = malloc((size_t)(a->n_rows > 0 ? a->n_rows : 1) * sizeof(double));
        rs_reference(a, x, rs_alpha[ab], rs_beta[ab], y0, ref[ab]);
    }
    for (int f = 0; f < N_FORMATS; f++)
        if (ell_ok || !rs_ell_type(formats[f])) check_format(a, name, formats[f], x, y0, ref);
    if (!ell_ok) printf("  %s: ELL-type formats skipped (N x K above %d)\n", name, ELL_MAX_ENTRIES);
    check_plain(a, x, ref[0]);
    for (int ab = 0; ab < RS_NAB; ab++) free(ref[ab]);
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
    } gens[] = {{"poisson3d:7", 0},        {"elasticity3d:3,3,2", 0}, {"convdiff3d:7,2", 0},
                {"poisson3d:5", 4},        {"band1x:1500", 0}};
    for (size_t g = 0; g < sizeof gens / sizeof *gens; g++) {
        krill_csr *a = NULL;
        double *x;
        CHECK_OK(rs_gen(gens[g].spec, gens[g].every, &a));
        if (!a) continue;
        check_matrix(a, gens[g].spec);
        x = malloc((size_t)a->n_cols * sizeof *x);
        CHECK_OK(krill_gen_dot_vectors(a->n_cols, 4.0, 11, x, NULL));
        if (oz_ref_have_mpfr()) check_rows_exact(a, x, NULL, gens[g].spec);
        free(x);
        krill_csr_destroy(&a);
    }
}

/* ---- (d) slice counts and spmv_dot_raw ------------------------------------------------ */

static void check_modes_and_dot(void)
{
    krill_csr *a = NULL;
    double *x, *y, *ref, xy_want = 0.0;
    int have_want;
    CHECK_OK(krill_gen("elasticity3d:3,2,2", &a));
    if (!a) return;
    x = malloc((size_t)a->n_rows * sizeof *x);
    y = malloc((size_t)a->n_rows * sizeof *y);
    ref = malloc((size_t)a->n_rows * sizeof *ref);
    CHECK_OK(krill_gen_dot_vectors(a->n_rows, 4.0, 21, x, NULL));
    rs_reference(a, x, 1.0, 0.0, NULL, ref);
    have_want = oz_ref_dot(a->n_rows, x, ref, &xy_want);
    if (!have_want) CHECK_OK(krill_ozaki_dot(ctxs[0], a->n_rows, x, ref, &xy_want));
    for (int t = 0; t < NT; t++) {
        krill_mat *m = NULL;
        double xy = 0.0;
        CHECK_OK(krill_mat_create(ctxs[t], a, t % 2 ? "segscan" : "rbp-ell", &m));
        if (!m) continue;
        CHECK_OK(krill_mat_spmv_dot_raw(m, x, y, &xy));
        CHECK(memcmp(y, ref, (size_t)a->n_rows * sizeof *y) == 0);
        CHECK(oz_same_bits(xy, xy_want));
        CHECK_OK(krill_ctx_set_repro(ctxs[t], t % 2 ? KRILL_REPRO_OZAKI_FAST : KRILL_REPRO_OZAKI,
                                     t % 2 ? 3 : 2));   /* rows stay exact */
        spmv_host(ctxs[t], m, 1.0, x, 0.0, y, KRILL_OK);
        CHECK(memcmp(y, ref, (size_t)a->n_rows * sizeof *y) == 0);
        CHECK_OK(krill_ctx_set_repro(ctxs[t], KRILL_REPRO_OZAKI, 0));
        krill_mat_destroy(&m);
    }
    free(x);
    free(y);
    free(ref);
    krill_csr_destroy(&a);
}

/* ---- (e) tables ------------------------------------------------------------------------ */

static void check_tables(void)
{
    krill_csr *a = NULL;
    krill_mat *m = NULL;
    double x[27], y[27], xy;
    for (const char *const *n = krill_format_names(); *n; n++) {
        const char *param;
        const krill_format_entry *e = krill_format_find(*n, &param);
        CHECK(e != NULL);
        if (!e) continue;
        tu_checks++;
        if ((e->cpu && !e->cpu->spmv_repro) || (e->cuda && !e->cuda->spmv_repro)) {
            tu_failures++;
            fprintf(stderr, "  format %s has a table without spmv_repro\n", *n);
        }
    }
    CHECK_OK(krill_gen("poisson3d:3", &a));
    CHECK_OK(krill_mat_create(ctxs[1], a, "rbp-csr", &m));
    if (m) {
        const krill_format_ops *saved = m->ops;
        krill_format_ops none = *saved;
        none.spmv_repro = NULL;
        for (int i = 0; i < 27; i++) x[i] = 1.0;
        m->ops = &none;
        spmv_host(ctxs[1], m, 1.0, x, 0.0, y, KRILL_ERR_UNSUPPORTED);
        CHECK(strstr(krill_last_error(), "'rbp-csr'") != NULL);
        CHECK(strstr(krill_last_error(), "CPU") != NULL);
        CHECK_STATUS(krill_mat_spmv_dot_raw(m, x, y, &xy), KRILL_ERR_UNSUPPORTED);
        m->ops = saved;
    }
    krill_mat_destroy(&m);
    krill_csr_destroy(&a);
}

int main(void)
{
    krill_csr *hard = NULL;
    double *x = NULL, *y0 = NULL;
    int *kind = NULL;
    for (int t = 0; t < NT; t++) {
        ctxs[t] = tu_cpu_ctx(thread_counts[t]);
        CHECK_OK(krill_ctx_set_repro(ctxs[t], KRILL_REPRO_OZAKI, 0));
    }
    plain = tu_cpu_ctx(1);

    CHECK_OK(rs_hard_rows(2000, 7, &hard, &x, &kind));
    if (hard) {
        if (oz_ref_have_mpfr())
            printf("hard rows: %lld of %d against MPFR / IEEE\n",
                   (long long)check_rows_exact(hard, x, kind, "hard rows"), hard->n_rows);
        else
            printf("MPFR absent: the MPFR comparisons are skipped\n");
        y0 = malloc((size_t)hard->n_rows * sizeof *y0);
        CHECK_OK(krill_gen_dot_vectors(hard->n_rows, 4.0, 3, y0, NULL));
        check_matrix_with(hard, "hard rows", x, y0);
    }
    check_generated();
    printf("testdata: %d matrices\n", tu_for_each_square_mtx(each_testdata, NULL));
    printf("plain csr differs from the exact row sums in %lld rows\n", (long long)plain_differs);
    CHECK(plain_differs > 0);
    check_modes_and_dot();
    check_tables();

    free(x);
    free(y0);
    free(kind);
    krill_csr_destroy(&hard);
    for (int t = 0; t < NT; t++) krill_ctx_destroy(&ctxs[t]);
    krill_ctx_destroy(&plain);
    return tu_finish("test_repro_spmv");
}
