/* The Row Block Packing formats (rbp-csr, rbp-ell, rbp-ellr) against the CSR reference:
 *   (a) a hand example in the manner of the paper's Figure 4, every array and every
 *       quantity (N_val, N_col, N_non, K_v, K_c, bytes) worked out by hand;
 *   (b) the stored bytes against formulas (4), (5), (6) evaluated from the run quantities,
 *       which this test counts on its own (an entry is in a run when a neighbour in its row
 *       has the next or previous column), on generated and testdata matrices;
 *   (c) conditions (7) and (8): where they say RBP saves memory, its bytes are below the
 *       plain format's (csr, ell, ellr as built); where they say it does not, they are not
 *       below formulas (1)-(3);
 *   (d) SpMV (alpha/beta, beta = 0 over NaN, an Inf in x) on generated matrices (empty rows,
 *       1x1, nnz = 0, a full row, skewed rows) and every square real testdata matrix;
 *   (e) update_values and diagonal; (f) CG and GMRES converging with each format;
 *   and the refusals (widths, padding), unknown variants, and failing allocations.
 * Built twice: CPU (bitwise equal to the reference: rows summed in CSR column order) and,
 * with RBP_TEST_GPU, GPU (label gpu; per row within 2 (len + 2) eps of the sum of |terms|:
 * the kernels add runs first and use fused multiply-adds). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formats/formats_impl.h"
#include "testutil.h"

#ifdef RBP_TEST_GPU
static const char *const formats[] = {"rbp-csr", "rbp-csr:scalar", "rbp-csr:vector:2",
                                      "rbp-csr:vector:32", "rbp-ell", "rbp-ellr"};
#else
static const char *const formats[] = {"rbp-csr", "rbp-ell", "rbp-ellr"};
#endif
#define N_FORMATS (sizeof formats / sizeof *formats)

/* ELL-type comparisons and checks only where N * K stays below this (as test_ell) */
#define ELL_TEST_MAX_ENTRIES 50000000

static krill_ctx *make_ctx(void)
{
#ifdef RBP_TEST_GPU
    return tu_gpu_ctx_or_skip();
#else
    return tu_cpu_ctx(3);
#endif
}

enum { KIND_CSR, KIND_ELL, KIND_ELLR };

static int kind_of(const char *fmt)
{
    if (strncmp(fmt, "rbp-ellr", 8) == 0) return KIND_ELLR;
    if (strncmp(fmt, "rbp-ell", 7) == 0) return KIND_ELL;
    return KIND_CSR;
}

/* ---- the run quantities, counted here independently of krill_csr_run_stats ---------- */

typedef struct runs {
    int64_t n_val, n_col, n_non, kv, kc, k;
} runs;

/* Entry p of row i is in a run iff col[p-1] = col[p]-1 or col[p+1] = col[p]+1 inside the
 * row; a run starts at an entry in a run whose left neighbour is not col - 1. */
static runs count_runs(const krill_csr *a)
{
    runs r = {0};
    for (int32_t i = 0; i < a->n_rows; i++) {
        const int64_t lo = a->row_ptr[i], hi = a->row_ptr[i + 1];
        int64_t vals = 0, starts = 0;
        for (int64_t p = lo; p < hi; p++) {
            const int left = p > lo && a->col[p - 1] == a->col[p] - 1;
            const int right = p + 1 < hi && a->col[p + 1] == a->col[p] + 1;
            if (left || right) vals++;
            if (right && !left) starts++;
        }
        r.n_val += vals;
        r.n_col += 2 * starts;
        r.n_non += (hi - lo) - vals;
        if (vals > r.kv) r.kv = vals;
        if (2 * starts > r.kc) r.kc = 2 * starts;
        if (hi - lo > r.k) r.k = hi - lo;
    }
    return r;
}

/* Formulas (4), (5), (6) of the paper with its widths (8-byte values, 4-byte indices) */
static size_t formula_bytes(int kind, const krill_format_stats *s)
{
    const size_t n = (size_t)s->n_rows, n_non = (size_t)s->n_non;
    if (kind == KIND_CSR)
        return 12 * (n + 1) + 4 * (size_t)s->n_col + 8 * (size_t)s->n_val + 4 * n_non + 8 * n_non;
    return 8 * n * (size_t)s->kv + 4 * n * (size_t)s->kc + 8 * n_non + 4 * n_non + 4 * (n + 1) +
           (kind == KIND_ELLR ? 4 * n : 0);
}

/* ---- comparing y --------------------------------------------------------------------- */

/* y (got) from y0 against the reference: bitwise on the CPU; on the GPU non-finite
 * entries must match and finite ones lie within 2 (len + 2) eps (|alpha| sum_j |a_ij x_j|
 * + |beta y0_i|), the bound for two sums of len terms in different orders. */
static int rows_agree(const krill_csr *a, double alpha, const double *x, double beta,
                      const double *y0, const double *got, const double *ref)
{
#ifdef RBP_TEST_GPU
    for (int32_t i = 0; i < a->n_rows; i++) {
        double sum_abs = 0.0, bound;
        if (!isfinite(ref[i])) {
            if (isnan(ref[i]) ? !isnan(got[i]) : got[i] != ref[i]) return 0;
            continue;
        }
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
            sum_abs += fabs(a->val[p] * x[a->col[p]]);
        bound = 2.0 * (double)(a->row_ptr[i + 1] - a->row_ptr[i] + 2) * DBL_EPSILON *
                (fabs(alpha) * sum_abs + (beta != 0.0 ? fabs(beta * y0[i]) : 0.0));
        if (!(fabs(got[i] - ref[i]) <= bound)) return 0;
    }
    return 1;
#else
    (void)alpha, (void)x, (void)beta, (void)y0;
    return a->n_rows == 0 || memcmp(got, ref, (size_t)a->n_rows * sizeof *got) == 0;
#endif
}

/* y = alpha A x + beta y0 through the format vs the reference; 1 if they agree */
static int spmv_agrees(krill_mat *m, const krill_csr *a, krill_vec *vx, krill_vec *vy,
                       const double *x, double alpha, double beta, const double *y0,
                       double *got, double *ref)
{
    krill_status st;
    memcpy(ref, y0, (size_t)a->n_rows * sizeof *ref);
    krill_csr_spmv_ref(a, alpha, x, beta, ref);
    st = krill_vec_upload(vx, x);
    if (st == KRILL_OK) st = krill_vec_upload(vy, y0);
    if (st == KRILL_OK) st = krill_mat_spmv(m, alpha, vx, beta, vy);
    if (st == KRILL_OK) st = krill_vec_download(vy, got);
    if (st != KRILL_OK) {
        fprintf(stderr, "  spmv failed: %s\n", krill_last_error());
        return 0;
    }
    return rows_agree(a, alpha, x, beta, y0, got, ref);
}

/* ---- one format on one matrix: (b), (d), (e) --------------------------------------- */

static void check_format(krill_ctx *ctx, const krill_csr *a, const runs *r, const char *fmt,
                         const char *what)
{
    const int64_t n = a->n_rows;
    const size_t nx = (size_t)a->n_cols + 1, ny = (size_t)n + 1;
    double *x = malloc(nx * 8), *y0 = malloc(ny * 8), *nan_y = malloc(ny * 8);
    double *ref = malloc(ny * 8), *got = malloc(ny * 8);
    static const double cases[][2] = {{1.0, 0.0}, {1.5, -0.5}, {-2.0, 1.0}, {0.0, 2.0}};
    krill_mat *m = NULL;
    krill_vec *vx = NULL, *vy = NULL;
    krill_csr *b = NULL;
    krill_format_stats s;
    tu_random(x, a->n_cols, 7);
    tu_random(y0, n, 8);
    for (int64_t i = 0; i < n; i++) nan_y[i] = NAN;
    CHECK_OK(krill_mat_create(ctx, a, fmt, &m));
    CHECK_OK(krill_vec_create(ctx, a->n_cols, &vx));
    CHECK_OK(krill_vec_create(ctx, n, &vy));
    if (!m || !vx || !vy) goto done;

    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const int ok = spmv_agrees(m, a, vx, vy, x, cases[c][0], cases[c][1], y0, got, ref);
        CHECK(ok);
        if (!ok) fprintf(stderr, "  %s on %s: y = %g A x + %g y differs\n", fmt, what,
                         cases[c][0], cases[c][1]);
    }
    {
        const int ok = spmv_agrees(m, a, vx, vy, x, 1.0, 0.0, nan_y, got, ref);
        CHECK(ok);
        if (!ok) fprintf(stderr, "  %s on %s: y = A x over NaN differs\n", fmt, what);
    }
    if (a->n_cols > 0) {   /* an Inf in x reaches exactly the rows with that column */
        const double keep = x[0];
        x[0] = INFINITY;
        const int ok = spmv_agrees(m, a, vx, vy, x, 1.0, 0.0, y0, got, ref);
        CHECK(ok);
        if (!ok) fprintf(stderr, "  %s on %s: x_0 = Inf spreads differently\n", fmt, what);
        x[0] = keep;
    }

    if (a->n_rows == a->n_cols) {   /* (e) the diagonal, copied exactly */
        int ok = 1;
        CHECK_OK(krill_mat_diagonal(m, vy));
        CHECK_OK(krill_vec_download(vy, got));
        for (int32_t i = 0; i < a->n_rows; i++) {
            double di = 0.0;
            for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
                if (a->col[p] == i) di = a->val[p];
            ok &= got[i] == di;
        }
        CHECK(ok);
        if (!ok) fprintf(stderr, "  %s on %s: diagonal differs\n", fmt, what);
    }

    CHECK_OK(krill_csr_copy(a, &b));   /* (e) new values, same pattern */
    if (b) {
        for (int64_t p = 0; p < b->nnz; p++) b->val[p] = 0.5 - 2.0 * b->val[p] + (double)(p % 7);
        CHECK_OK(krill_mat_update_values(m, b->val));
        const int ok = spmv_agrees(m, b, vx, vy, x, 1.5, -0.5, y0, got, ref);
        CHECK(ok);
        if (!ok) fprintf(stderr, "  %s on %s: after update_values y differs\n", fmt, what);
    }

    /* (b) stats: the quantities as counted here, bytes by formulas (4)-(6) */
    krill_mat_stats(m, &s);
    CHECK(s.n_rows == a->n_rows && s.n_cols == a->n_cols && s.nnz == a->nnz);
    CHECK(s.n_val == r->n_val && s.n_col == r->n_col && s.n_non == r->n_non);
    CHECK(s.kv == r->kv && s.kc == r->kc && s.max_row_nnz == r->k);
    CHECK(s.variant[0] != '\0');
    {
        const int ok = s.bytes == formula_bytes(kind_of(fmt), &s);
        CHECK(ok);
        if (!ok) fprintf(stderr, "  %s on %s: %zu bytes stored, formula %zu\n", fmt, what,
                         s.bytes, formula_bytes(kind_of(fmt), &s));
    }
done:
    krill_csr_destroy(&b);
    krill_vec_destroy(&vx);
    krill_vec_destroy(&vy);
    krill_mat_destroy(&m);
    free(x);
    free(y0);
    free(nan_y);
    free(ref);
    free(got);
}

/* ---- (c) conditions (7) and (8) against the plain formats ----------------------------- */

static size_t bytes_of(krill_ctx *ctx, const krill_csr *a, const char *fmt)
{
    krill_mat *m = NULL;
    krill_format_stats s = {0};
    CHECK_OK(krill_mat_create(ctx, a, fmt, &m));
    if (m) krill_mat_stats(m, &s);
    krill_mat_destroy(&m);
    return s.bytes;
}

static int n_saving[2], n_not_saving[2];   /* [0]: condition (7), [1]: condition (8) */

static void check_conditions(krill_ctx *ctx, const krill_csr *a, const runs *r,
                             const char *what, int print)
{
    const int64_t n = a->n_rows, nz = a->nnz;
    const int cond7 = 2 * (nz - r->n_val) + (nz - r->n_col) > 3 * r->n_non + 2 * (n + 1);
    const int cond8 = n * (3 * r->k - 2 * r->kv - r->kc) > 3 * r->n_non + (n + 1);
    const int with_ell = n * r->k <= ELL_TEST_MAX_ENTRIES;
    const size_t f1 = 12 * (size_t)nz + 4 * ((size_t)n + 1);          /* formula (1) */
    const size_t f2 = 12 * (size_t)n * (size_t)r->k, f3 = f2 + 4 * (size_t)n;   /* (2), (3) */
    const size_t rbp_csr = bytes_of(ctx, a, "rbp-csr"), csr = bytes_of(ctx, a, "csr");
    size_t rbp_ell = 0, rbp_ellr = 0, ell = 0, ellr = 0;
    if (cond7) CHECK(rbp_csr < csr && rbp_csr < f1);
    else CHECK(rbp_csr >= f1);
    n_saving[0] += cond7;
    n_not_saving[0] += !cond7;
    if (with_ell) {
        rbp_ell = bytes_of(ctx, a, "rbp-ell");
        rbp_ellr = bytes_of(ctx, a, "rbp-ellr");
        ell = bytes_of(ctx, a, "ell");
        ellr = bytes_of(ctx, a, "ellr");
        CHECK(ell == f2 && ellr == f3);
        if (cond8) CHECK(rbp_ell < ell && rbp_ellr < ellr);
        else CHECK(rbp_ell >= ell && rbp_ellr >= ellr);
        n_saving[1] += cond8;
        n_not_saving[1] += !cond8;
    }
    if (print)
        printf("  %-22s bytes: rbp-csr %10zu / csr %10zu (%5.1f%%, (7) %s)   rbp-ell %10zu / "
               "ell %10zu (%5.1f%%)   rbp-ellr %10zu / ellr %10zu ((8) %s)\n", what, rbp_csr,
               csr, csr ? 100.0 * (double)rbp_csr / (double)csr : 0.0, cond7 ? "yes" : "no",
               rbp_ell, ell, ell ? 100.0 * (double)rbp_ell / (double)ell : 0.0, rbp_ellr, ellr,
               !with_ell ? "n/a" : cond8 ? "yes" : "no");
}

static void check_all(krill_ctx *ctx, const krill_csr *a, const char *what, int print)
{
    const runs r = count_runs(a);
    const int ell_ok = a->n_rows * r.kv <= ELL_TEST_MAX_ENTRIES;
    for (size_t f = 0; f < N_FORMATS; f++)
        if (kind_of(formats[f]) == KIND_CSR || ell_ok) check_format(ctx, a, &r, formats[f], what);
    check_conditions(ctx, a, &r, what, print);
}

/* ---- (a) the hand example ------------------------------------------------------------ */

/* 8 x 8, in the manner of Figure 4 (row 0 is its "a b c d . . e f"), value 1 + 8 i + j:
 *   row 0: 0 1 2 3 . . 6 7   runs (0,3) (6,7)          6 run values, 4 run columns
 *   row 1: . 1 2 3 . 5 . .   run (1,3), isolated 5      3, 2, 1 isolated
 *   row 2: . . 2 3 . . . .   run (2,3)                  2, 2
 *   row 3: (empty)
 *   row 4: 0 . 2 . 4 5 6 7   isolated 0 and 2, run (4,7)   4, 2, 2 isolated
 *   row 5: . 1 . . . 5 . .   isolated 1, 5 (no run)     0, 0, 2 isolated
 *   row 6: 0 1 2 3 4 5 6 7   run (0,7): a full row      8, 2
 *   row 7: . . . . . . . 7   isolated 7 (one entry)     0, 0, 1 isolated
 * N = 8, N_z = 29, K = 8; N_val = 6+3+2+4+8 = 23, N_col = 4+2+2+2+2 = 12,
 * N_non = 1+2+2+1 = 6 (23 + 6 = 29), K_v = 8 (row 6), K_c = 4 (row 0).
 * Bytes: (4) 12*9 + 4*12 + 8*23 + 12*6 = 412; (1) CSR 12*29 + 4*9 = 384, and (7) says RBP
 * does not save: 2*6 + 17 = 29 > 3*6 + 2*9 = 36 is false.
 * (5) 8*8*8 + 4*8*4 + 12*6 + 4*9 = 748 < (2) ELL 12*8*8 = 768; (6) 780 < (3) 800; (8) says
 * so: 8 (24 - 16 - 4) = 32 > 3*6 + 9 = 27. */
static const int hand_rows[8][9] = {
    {0, 1, 2, 3, 6, 7, -1}, {1, 2, 3, 5, -1}, {2, 3, -1}, {-1},
    {0, 2, 4, 5, 6, 7, -1}, {1, 5, -1},        {0, 1, 2, 3, 4, 5, 6, 7, -1}, {7, -1},
};

static krill_csr *hand_made(void)
{
    int32_t r[64], c[64];
    double v[64];
    int64_t nz = 0;
    krill_csr *a = NULL;
    for (int i = 0; i < 8; i++)
        for (int k = 0; hand_rows[i][k] >= 0; k++) {
            r[nz] = i;
            c[nz] = hand_rows[i][k];
            v[nz++] = 1 + 8 * i + hand_rows[i][k];
        }
    if (krill_csr_from_triplets(8, 8, nz, r, c, v, &a) != KRILL_OK) return NULL;
    return a;
}

#define SAME_INTS(got, ...)                                                              \
    do {                                                                                 \
        static const int32_t want_[] = {__VA_ARGS__};                                    \
        CHECK(memcmp((got), want_, sizeof want_) == 0);                                  \
    } while (0)
#define SAME_DOUBLES(got, ...)                                                           \
    do {                                                                                 \
        static const double want_[] = {__VA_ARGS__};                                     \
        CHECK(memcmp((got), want_, sizeof want_) == 0);                                  \
    } while (0)

static void test_hand_example(krill_ctx *ctx)
{
    krill_csr *a = hand_made();
    krill_rbp_host h;
    krill_rbp_ell_host e;
    static const char *const names[3] = {"rbp-csr", "rbp-ell", "rbp-ellr"};
    static const size_t bytes[3] = {412, 748, 780};
    CHECK(a != NULL && a->nnz == 29);
    if (!a) return;

    /* Algorithm 3's arrays */
    CHECK_OK(krill_rbp_host_build(a, "rbp-csr", 1, &h));
    CHECK(h.n_val == 23 && h.n_col == 12 && h.n_non == 6);
    if (h.val_ptr) {
        SAME_INTS(h.val_ptr, 0, 6, 9, 11, 11, 15, 15, 23, 23);
        SAME_INTS(h.col_ptr, 0, 4, 6, 8, 8, 10, 10, 12, 12);
        SAME_INTS(h.row_ptr, 0, 0, 1, 1, 1, 3, 5, 5, 6);
        SAME_INTS(h.comp_col, 0, 3, 6, 7, 1, 3, 2, 3, 4, 7, 0, 7);
        SAME_DOUBLES(h.comp_val, 1, 2, 3, 4, 7, 8, 10, 11, 12, 19, 20, 37, 38, 39, 40, 49, 50, 51,
                     52, 53, 54, 55, 56);
        SAME_INTS(h.non_col, 5, 0, 2, 1, 5, 7);
        SAME_DOUBLES(h.non_val, 14, 33, 35, 42, 46, 64);
        CHECK(krill_rbp_csr_bytes(&h) == 412);
    }
    krill_rbp_host_free(&h);

    /* the compressed ELL: column-major, pairs then (0, 0) padding; values then 0 */
    CHECK_OK(krill_rbp_ell_host_build(a, "rbp-ell", 1, &e));
    CHECK(e.kv == 8 && e.kc == 4 && e.n_non == 6);
    if (e.col) {
        /* column k of ColumnsELL, rows 0..7 */
        SAME_INTS(e.col + 0, 0, 1, 2, 0, 4, 0, 0, 0);
        SAME_INTS(e.col + 8, 3, 3, 3, 0, 7, 0, 7, 0);
        SAME_INTS(e.col + 16, 6, 0, 0, 0, 0, 0, 0, 0);
        SAME_INTS(e.col + 24, 7, 0, 0, 0, 0, 0, 0, 0);
        SAME_DOUBLES(e.val + 0, 1, 10, 19, 0, 37, 0, 49, 0);
        SAME_DOUBLES(e.val + 8, 2, 11, 20, 0, 38, 0, 50, 0);
        SAME_DOUBLES(e.val + 16, 3, 12, 0, 0, 39, 0, 51, 0);
        SAME_DOUBLES(e.val + 40, 8, 0, 0, 0, 0, 0, 54, 0);
        SAME_DOUBLES(e.val + 56, 0, 0, 0, 0, 0, 0, 56, 0);
        SAME_INTS(e.len, 6, 3, 2, 0, 4, 0, 8, 0);
        SAME_INTS(e.row_ptr, 0, 0, 1, 1, 1, 3, 5, 5, 6);
        CHECK(krill_rbp_ell_bytes(&e, 0) == 748 && krill_rbp_ell_bytes(&e, 1) == 780);
    }
    krill_rbp_ell_host_free(&e);

    /* the same through the API, on the device under test */
    for (int f = 0; f < 3; f++) {
        krill_mat *m = NULL;
        krill_format_stats s;
        CHECK_OK(krill_mat_create(ctx, a, names[f], &m));
        if (!m) continue;
        krill_mat_stats(m, &s);
        CHECK(s.n_val == 23 && s.n_col == 12 && s.n_non == 6 && s.kv == 8 && s.kc == 4);
        CHECK(s.max_row_nnz == 8 && s.empty_rows == 1 && s.nnz == 29);
        CHECK(s.bytes == bytes[f]);
        krill_mat_destroy(&m);
    }
    CHECK(bytes_of(ctx, a, "ell") == 768 && bytes_of(ctx, a, "ellr") == 800);
    check_all(ctx, a, "hand-made 8 x 8", 1);
    krill_csr_destroy(&a);
}

/* ---- generated matrices -------------------------------------------------------------- */

/* 6 x 5: an empty first row, a full row, an empty last row, runs next to isolated entries */
static krill_csr *edge_rows(void)
{
    int32_t r[] = {1, 1, 2, 2, 2, 2, 2, 3, 4, 4, 4};
    int32_t c[] = {0, 4, 0, 1, 2, 3, 4, 2, 0, 2, 3};
    double v[] = {1, -2, 3, 4, -5, 6, 7, 8, -9, 0.5, 0.25};
    krill_csr *a = NULL;
    if (krill_csr_from_triplets(6, 5, 11, r, c, v, &a) != KRILL_OK) return NULL;
    return a;
}

static void test_generated(krill_ctx *ctx)
{
    static const char *specs[] = {"poisson3d:10", "convdiff3d:8,3", "elasticity3d:4,3,3",
                                  "band1:1000", "band3:777", "band101:700", "rand1:800",
                                  "rand100:300", "band1x:300"};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        krill_csr *a = NULL;
        CHECK_OK(krill_gen(specs[i], &a));
        if (a) check_all(ctx, a, specs[i], 1);
        krill_csr_destroy(&a);
    }
    krill_csr *a = edge_rows(), *one = NULL, *zero = NULL, *none = NULL;
    CHECK(a != NULL);
    if (a) check_all(ctx, a, "edge rows 6 x 5", 0);
    int32_t r0 = 0, c0 = 0;
    double v0 = -3.25;
    CHECK_OK(krill_csr_from_triplets(1, 1, 1, &r0, &c0, &v0, &one));
    if (one) check_all(ctx, one, "1 x 1", 0);
    CHECK_OK(krill_csr_create(5, 5, 0, &zero));   /* K = 0: no entry at all */
    if (zero) check_all(ctx, zero, "5 x 5 zero", 0);
    CHECK_OK(krill_csr_create(0, 0, 0, &none));   /* no rows */
    if (none) check_all(ctx, none, "0 x 0", 0);
    krill_csr_destroy(&a);
    krill_csr_destroy(&one);
    krill_csr_destroy(&zero);
    krill_csr_destroy(&none);
}

/* the sizes the report quotes: FEM matrices and a wide band */
static void test_report_sizes(krill_ctx *ctx)
{
    static const char *specs[] = {"elasticity3d:30,10,10", "poisson3d:40", "band101:20000"};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        krill_csr *a = NULL;
        CHECK_OK(krill_gen(specs[i], &a));
        if (a) check_all(ctx, a, specs[i], 1);
        krill_csr_destroy(&a);
    }
}

/* ---- refusals, variants, failing allocations ----------------------------------------- */

static void test_refusals(krill_ctx *ctx)
{
    krill_csr *a = NULL;
    krill_mat *m = NULL;
    krill_format_stats s = {0};

    /* widths: counts up to 2^31 - 1 fit, one more is refused with its reason */
    s.n_rows = 1000;
    s.n_val = INT32_MAX;
    s.n_non = INT32_MAX;
    CHECK_OK(krill_rbp_fits("rbp-csr", 0, &s));
    s.n_val = (int64_t)INT32_MAX + 1;
    CHECK_STATUS(krill_rbp_fits("rbp-csr", 0, &s), KRILL_ERR_UNSUPPORTED);
    CHECK(strstr(krill_last_error(), "Val_ptr") && strstr(krill_last_error(), "use csr"));
    s.n_val = 0;
    s.n_non = (int64_t)INT32_MAX + 1;
    CHECK_STATUS(krill_rbp_fits("rbp-ell", 1, &s), KRILL_ERR_UNSUPPORTED);
    CHECK(strstr(krill_last_error(), "RowPtr") != NULL);
    s.n_non = 0;
    s.kv = INT32_MAX / 1000;
    CHECK_OK(krill_rbp_fits("rbp-ell", 1, &s));
    s.kv = INT32_MAX / 1000 + 1;
    CHECK_STATUS(krill_rbp_fits("rbp-ellr", 1, &s), KRILL_ERR_UNSUPPORTED);
    CHECK(strstr(krill_last_error(), "rbp-ellr") && strstr(krill_last_error(), "padding"));

    /* a full first row of 70000: K_v = 70000, N * K_v = 4.9e9 entries: refused before any
     * large allocation; rbp-csr stores it as one run (one pair) and gets it right */
    CHECK_OK(krill_gen("band1x:70000", &a));
    for (int f = 0; a && f < 2; f++) {
        const char *name = f == 0 ? "rbp-ell" : "rbp-ellr";
        CHECK_STATUS(krill_mat_create(ctx, a, name, &m), KRILL_ERR_UNSUPPORTED);
        CHECK(m == NULL && strstr(krill_last_error(), "use rbp-csr or csr") != NULL);
    }
    if (a) {
        const runs r = count_runs(a);
        CHECK(r.n_col == 2 && r.kv == 70000);
        for (size_t f = 0; f < N_FORMATS; f++)
            if (kind_of(formats[f]) == KIND_CSR)
                check_format(ctx, a, &r, formats[f], "band1x:70000");
    }
    krill_csr_destroy(&a);

    /* parameters */
    a = hand_made();
    CHECK(a != NULL);
    CHECK_STATUS(krill_mat_create(ctx, a, "rbp-ell:x", &m), KRILL_ERR_ARG);
    CHECK_STATUS(krill_mat_create(ctx, a, "rbp-ellr:x", &m), KRILL_ERR_ARG);
    CHECK_STATUS(krill_mat_create(ctx, a, "rbp-csr:bogus", &m), KRILL_ERR_ARG);
    CHECK(m == NULL);
#ifdef RBP_TEST_GPU
    CHECK_STATUS(krill_mat_create(ctx, a, "rbp-csr:vector:3", &m), KRILL_ERR_ARG);
    {
        static const char *const asked[] = {"rbp-csr:scalar", "rbp-csr:vector:8", "rbp-csr:vector"};
        static const char *const variant[] = {"scalar", "vector:8", "vector:2"};
        for (int k = 0; k < 3; k++) {   /* the hand example's mean row length is 29/8 */
            CHECK_OK(krill_mat_create(ctx, a, asked[k], &m));
            if (m) krill_mat_stats(m, &s);
            CHECK(m && strcmp(s.variant, variant[k]) == 0);
            krill_mat_destroy(&m);
        }
    }
#else
    CHECK_STATUS(krill_mat_create(ctx, a, "rbp-csr:scalar", &m), KRILL_ERR_ARG);
#endif
    krill_csr_destroy(&a);
}

/* every allocation of a build may fail: a clean error, no matrix, no leak (ASan) */
static void test_failing_allocations(krill_ctx *ctx)
{
    static const char *const names[3] = {"rbp-csr", "rbp-ell", "rbp-ellr"};
    krill_csr *a = NULL;
    CHECK_OK(krill_gen("elasticity3d:3,2,2", &a));
    for (int f = 0; a && f < 3; f++) {
        krill_mat *m = NULL;
        long before = krill_alloc_calls(), calls;
        CHECK_OK(krill_mat_create(ctx, a, names[f], &m));
        calls = krill_alloc_calls() - before;
        krill_mat_destroy(&m);
        CHECK(calls >= 8);
        for (long k = 1; k <= calls; k++) {   /* host or device memory */
            krill_status st;
            krill_fault_alloc_after(k);
            st = krill_mat_create(ctx, a, names[f], &m);
            CHECK((st == KRILL_ERR_ALLOC || st == KRILL_ERR_DEVICE_ALLOC) && m == NULL);
        }
        krill_fault_alloc_after(0);
        /* update_values' staging allocations may fail too (GPU; none on the CPU) */
        CHECK_OK(krill_mat_create(ctx, a, names[f], &m));
        if (m) {
            before = krill_alloc_calls();
            CHECK_OK(krill_mat_update_values(m, a->val));
            calls = krill_alloc_calls() - before;
            for (long k = 1; k <= calls; k++) {
                krill_fault_alloc_after(k);
                CHECK_STATUS(krill_mat_update_values(m, a->val), KRILL_ERR_ALLOC);
            }
            krill_fault_alloc_after(0);
        }
        krill_mat_destroy(&m);
    }
    krill_csr_destroy(&a);
}

/* ---- (f) the solvers ------------------------------------------------------------------ */

static void test_solvers(krill_ctx *ctx)
{
    static const char *specs[2] = {"elasticity3d:6,3,3", "convdiff3d:8,2"};
    for (size_t f = 0; f < N_FORMATS; f++)
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
            o.maxit = 5000;
            CHECK_OK(krill_solve(m, NULL, b, x, &o, &info));
            CHECK(info.reason == KRILL_CONVERGED_RTOL && info.relres <= 1e-8);
            if (info.reason != KRILL_CONVERGED_RTOL)
                fprintf(stderr, "  %s with %s on %s: reason %d after %d iterations\n",
                        p == 0 ? "CG" : "GMRES", formats[f], specs[p], (int)info.reason,
                        (int)info.iterations);
            krill_solve_info_free(&info);
            krill_vec_destroy(&b);
            krill_vec_destroy(&x);
            krill_mat_destroy(&m);
            krill_csr_destroy(&a);
        }
}

/* ---- every square real matrix of testdata -------------------------------------------- */

static void check_testdata_matrix(const krill_csr *a, const char *name, void *ctx)
{
    check_all(ctx, a, name, strcmp(name, "bcsstk15.mtx") == 0 ||
                                strcmp(name, "speaker107k.mtx") == 0);
}

static void test_testdata(krill_ctx *ctx)
{
    int tested = tu_for_each_square_mtx(check_testdata_matrix, ctx);
    if (tested < 0) return;
    printf("%d testdata matrices checked in the RBP formats\n", tested);
    CHECK(tested > tu_testdata_expect(50, 10));
}

/* The parallel build (a matrix past KRILL_BUILD_PARALLEL_MIN entries) gives the arrays of one
 * thread for 2, 3 and 7 threads: rbp-csr's and rbp-ell's. */
static void test_threads(void)
{
    krill_csr *a = NULL;
    krill_rbp_host one, h;
    krill_rbp_ell_host e1, e;
    CHECK_OK(krill_gen("band101:2000", &a));   /* runs only */
    if (a) {   /* and isolated entries: every third row keeps only its even columns */
        for (int32_t i = 0; i < a->n_rows; i += 3)
            for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
                if (a->col[p] % 2) a->col[p] = -1;
        int64_t q = 0;
        for (int32_t i = 0, lo = 0; i < a->n_rows; i++) {
            const int64_t hi = a->row_ptr[i + 1];
            for (int64_t p = lo; p < hi; p++)
                if (a->col[p] >= 0) {
                    a->col[q] = a->col[p];
                    a->val[q++] = a->val[p];
                }
            lo = (int32_t)hi;
            a->row_ptr[i + 1] = q;
        }
        a->nnz = q;
    }
    CHECK(a && a->nnz >= KRILL_BUILD_PARALLEL_MIN && krill_csr_check(a, "threads") == KRILL_OK);
    memset(&one, 0, sizeof one);
    memset(&e1, 0, sizeof e1);
    if (!a || krill_rbp_host_build(a, "rbp-csr", 1, &one) != KRILL_OK ||
        krill_rbp_ell_host_build(a, "rbp-ell", 1, &e1) != KRILL_OK) {
        CHECK(0);
        krill_rbp_host_free(&one);
        krill_csr_destroy(&a);
        return;
    }
    CHECK(one.n_non > 0 && one.n_val > 0);
    for (int t = 2; t <= 7; t += t == 3 ? 4 : 1) {
        CHECK_OK(krill_rbp_host_build(a, "rbp-csr", t, &h));
        CHECK(h.n_val == one.n_val && h.n_col == one.n_col && h.n_non == one.n_non);
        if (h.val_ptr && h.n_val == one.n_val && h.n_col == one.n_col && h.n_non == one.n_non) {
            const size_t offs = ((size_t)a->n_rows + 1) * sizeof(int32_t);
            CHECK(memcmp(h.val_ptr, one.val_ptr, offs) == 0 &&
                  memcmp(h.col_ptr, one.col_ptr, offs) == 0 &&
                  memcmp(h.row_ptr, one.row_ptr, offs) == 0);
            CHECK(memcmp(h.comp_col, one.comp_col, (size_t)h.n_col * sizeof(int32_t)) == 0 &&
                  memcmp(h.comp_val, one.comp_val, (size_t)h.n_val * sizeof(double)) == 0 &&
                  memcmp(h.non_col, one.non_col, (size_t)h.n_non * sizeof(int32_t)) == 0 &&
                  memcmp(h.non_val, one.non_val, (size_t)h.n_non * sizeof(double)) == 0);
        }
        krill_rbp_host_free(&h);
        CHECK_OK(krill_rbp_ell_host_build(a, "rbp-ell", t, &e));
        CHECK(e.kv == e1.kv && e.kc == e1.kc && e.n_non == e1.n_non);
        if (e.col && e.kv == e1.kv && e.kc == e1.kc && e.n_non == e1.n_non) {
            const size_t n = (size_t)a->n_rows;
            CHECK(memcmp(e.col, e1.col, n * (size_t)e.kc * sizeof(int32_t)) == 0 &&
                  memcmp(e.val, e1.val, n * (size_t)e.kv * sizeof(double)) == 0 &&
                  memcmp(e.len, e1.len, n * sizeof(int32_t)) == 0 &&
                  memcmp(e.row_ptr, e1.row_ptr, (n + 1) * sizeof(int32_t)) == 0);
        }
        krill_rbp_ell_host_free(&e);
    }
    krill_rbp_host_free(&one);
    krill_rbp_ell_host_free(&e1);
    krill_csr_destroy(&a);
}

int main(void)
{
    krill_ctx *ctx = make_ctx();
    test_hand_example(ctx);
    test_threads();
    test_generated(ctx);
    test_report_sizes(ctx);
    test_refusals(ctx);
    test_failing_allocations(ctx);
    test_solvers(ctx);
    test_testdata(ctx);
    printf("condition (7) held on %d matrices, failed on %d; (8) held on %d, failed on %d\n",
           n_saving[0], n_not_saving[0], n_saving[1], n_not_saving[1]);
    CHECK(n_saving[0] > 0 && n_not_saving[0] > 0 && n_saving[1] > 0 && n_not_saving[1] > 0);
    krill_ctx_destroy(&ctx);
    return tu_finish("test_rbp");
}
