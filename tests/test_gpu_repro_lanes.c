/* tests/test_gpu_repro_lanes.c - the lanes of the reproducible row sums on the GPU: a row
 * shared by a sub-warp of lanes that merge their fast-path states by shuffles, and a row
 * the fast path cannot decide finished by the sub-warp's first lane alone on the exact path
 * (ozaki/ozaki_row.cuh's range kernel: csr, cusparse and segscan; precond/bjacobi.cu and
 * precond/ilu.cu's repro_level_kernel).
 *
 * SpMV: matrices of 66000 rows (enough that krill_gpu_lanes_per_row gives the lanes of the
 * mean row length alone) with mean lengths 1, 3, 6, 12, 24, 48 and 100, which select 1, 1,
 * 2, 4, 8, 16 and 32 lanes a row, every 97th row empty, and among ordinary rows ((rand -
 * 0.5) 2^(+-20) values) rows every split of the fast path must decline: an operand of
 * 1e-300 (its products below 2^-800) or 1e300 (above 2^401), an exact zero (pairs
 * 3 (0.1) - 3 (0.1) on columns where x is 0.1, one of them 1e300 (0.1) - 1e300 (0.1): the
 * products' rounding errors alone the fast path would decide), an infinite x_j; and exact
 * ties (1 + 2^-53 on columns where x is 1, the other terms cancelling in pairs), which a
 * split decides only when it leaves no third-level error. Each GPU format
 * (csr, cusparse, segscan through the lanes; ell and rbp-csr, a thread a row, for contrast)
 * must give the bits of the CPU csr's spmv_repro and of the correctly rounded reference
 * (rs_row_sum: krill_oz_row_gather, a function of the products alone), for (alpha, beta) =
 * (1, 0) and (2, -0.5); NaN rows only as NaN. Plain GPU csr must differ somewhere.
 *
 * Preconditioners: bjacobi:5, :8 and :16 (2, 2 and 4 lanes a row) and ic0 / ilu0 on
 * elasticity3d:10,8,8 (triangle rows of about 30 terms: 16 lanes) and poisson3d:20 (2
 * lanes), with right-hand sides that hold 1e-200 and 1e200 entries (out of the fast path's
 * range: the rows that read them take the exact path): GPU bits = CPU bits (3 threads);
 * plain GPU mode differs for ilu0. Needs a GPU (else 77). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formats/formats_impl.h"
#include "repro_spmv_data.h"
#include "solver_util.h"

#define LANES_ROWS 66000

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "test_gpu_repro_lanes: out of host memory\n");
        exit(1);
    }
    return p;
}

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* (rand - 0.5) 2^e, e uniform in [-20, 20]: an ordinary value from hash h */
static double ordinary(uint64_t h)
{
    const double u = (double)(mix(h) >> 11) * 0x1p-53;
    return (u - 0.5) * ldexp(1.0, (int)(mix(h + 1) % 41) - 20);
}

/* The kinds of rows the SpMV matrices hold (row i: kind i % 8, row i % 97 == 0 empty). */
enum { LK_TINY = 1, LK_HUGE, LK_TIE, LK_ZERO, LK_INF, LK_HARD_END };

/* x: 1 where j % 5 == 0, 0.1 where j % 5 == 1, Inf at the last column, else ordinary */
static double *lanes_x(int32_t n)
{
    double *x = xmalloc((size_t)n * sizeof *x);
    for (int32_t j = 0; j < n; j++)
        x[j] = j % 5 == 0 ? 1.0 : j % 5 == 1 ? 0.1 : ordinary(5000000u + (uint64_t)j);
    x[n - 1] = INFINITY;
    return x;
}

/* One row's columns and values (len >= 1): kind 0 and LK_TINY / _HUGE / _INF ordinary
 * values on every other column from c0 (LK_INF also the last column, where x is Inf; the
 * hard value at position `at`); LK_TIE pairs (v, -v) on columns with x = 1 and one pair
 * replaced by (1, 2^-53); LK_ZERO pairs (3 + k, -(3 + k)) on columns with x = 0.1, the same
 * pair replaced by (1e300, -1e300). */
static void lanes_row(int32_t i, int32_t len, int32_t n, int kind, int32_t *col, double *val)
{
    const uint64_t h = mix((uint64_t)i * 7919u + 17u);
    const int32_t step = kind == LK_TIE || kind == LK_ZERO ? 5 : 2;
    const int32_t span = step * len + 5, at = (int32_t)(h % (uint64_t)len);
    const int32_t c0 = (int32_t)((h >> 20) % (uint64_t)(n - 1 - span)) / 5 * 5 +
                       (kind == LK_ZERO ? 1 : 0);
    for (int32_t k = 0; k < len; k++) {
        col[k] = c0 + step * k;
        val[k] = ordinary(h + 3u * (uint64_t)k);
    }
    if (kind == LK_TIE || kind == LK_ZERO) {
        for (int32_t k = 0; k + 1 < len; k += 2) {
            val[k] = kind == LK_TIE ? val[k] : 3.0 + k;
            val[k + 1] = -val[k];
        }
        if (len % 2) val[len - 1] = 0.0;
        if (len >= 2) {
            const int32_t q = at / 2 * 2 + 1 < len ? at / 2 * 2 : 0;
            val[q] = kind == LK_TIE ? 1.0 : 1e300;
            val[q + 1] = kind == LK_TIE ? 0x1p-53 : -1e300;
        }
    } else if (kind == LK_TINY) {
        val[at] = 1e-300;
    } else if (kind == LK_HUGE) {
        val[at] = -1e300;
    } else if (kind == LK_INF) {
        col[len - 1] = n - 1;
    }
}

/* the SpMV matrix of n rows of mean length `mean` */
static krill_csr *lanes_matrix(int32_t n, int mean)
{
    krill_csr *a = NULL;
    int64_t nnz = 0;
    int32_t *len = xmalloc((size_t)n * sizeof *len);
    for (int32_t i = 0; i < n; i++) {
        const int32_t l = mean / 2 + (int32_t)(mix((uint64_t)i + 99u) % (uint64_t)(mean + 1));
        len[i] = i % 97 == 0 ? 0 : l < 1 ? 1 : l;
        if ((i % 8 == LK_TIE || i % 8 == LK_ZERO) && len[i] < 2) len[i] = 2;
        nnz += len[i];
    }
    CHECK_OK(krill_csr_create(n, n, nnz, &a));
    if (!a) exit(1);
    a->row_ptr[0] = 0;
    for (int32_t i = 0; i < n; i++) {
        a->row_ptr[i + 1] = a->row_ptr[i] + len[i];
        if (len[i] > 0)
            lanes_row(i, len[i], n, i % 8 < LK_HARD_END ? i % 8 : 0, a->col + a->row_ptr[i],
                      a->val + a->row_ptr[i]);
    }
    free(len);
    return a;
}

/* rows that every lane split of the fast path must decline (by construction), counted by
 * running the fast path over each whole row on the host */
static int64_t declined_rows(const krill_csr *a, const double *x)
{
    int64_t k = 0;
    for (int32_t i = 0; i < a->n_rows; i++) {
        krill_oz_fast f;
        double s;
        krill_oz_fast_init(&f);
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
            krill_oz_fast_add(&f, a->val[p], x[a->col[p]]);
        k += !krill_oz_fast_end(&f, &s);
    }
    return k;
}

/* y = alpha A x + beta y0 in `format` on ctx (host arrays); 0 when it could not run */
static int spmv_on(krill_ctx *ctx, const krill_csr *a, const char *format, double alpha,
                   const double *x, double beta, const double *y0, double *y)
{
    krill_mat *m = NULL;
    krill_vec *vx = NULL, *vy = NULL;
    int ok = 0;
    CHECK_OK(krill_mat_create(ctx, a, format, &m));
    CHECK_OK(krill_vec_create(ctx, a->n_cols, &vx));
    CHECK_OK(krill_vec_create(ctx, a->n_rows, &vy));
    if (m && vx && vy) {
        CHECK_OK(krill_vec_upload(vx, x));
        CHECK_OK(krill_vec_upload(vy, y0));
        CHECK_OK(krill_mat_spmv(m, alpha, vx, beta, vy));
        CHECK_OK(krill_vec_download(vy, y));
        ok = 1;
    }
    krill_vec_destroy(&vx);
    krill_vec_destroy(&vy);
    krill_mat_destroy(&m);
    return ok;
}

static int64_t count_mismatch(const double *y, const double *ref, int64_t n, const char *what)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++)
        if (!rs_same(y[i], ref[i])) {
            if (bad < 3)
                fprintf(stderr, "  %s: row %lld: %a, expected %a\n", what, (long long)i, y[i],
                        ref[i]);
            bad++;
        }
    return bad;
}

static void test_spmv_lanes(krill_ctx *gpu, krill_ctx *cpu)
{
    static const int means[] = {1, 3, 6, 12, 24, 48, 100};
    static const char *const formats[] = {"csr", "cusparse", "segscan", "ell", "rbp-csr"};
    const int32_t n = LANES_ROWS;
    double *x = lanes_x(n), *y0 = xmalloc((size_t)n * sizeof *y0);
    double *ref = xmalloc((size_t)n * sizeof *ref), *yc = xmalloc((size_t)n * sizeof *yc);
    double *yg = xmalloc((size_t)n * sizeof *yg);
    int64_t plain_differs = 0;
    for (int32_t i = 0; i < n; i++) y0[i] = ordinary(9000000u + (uint64_t)i);
    for (int t = 0; t < (int)(sizeof means / sizeof *means); t++) {
        krill_csr *a = lanes_matrix(n, means[t]);
        const int64_t declined = declined_rows(a, x);
        printf("mean %3d: %d lanes a row, %lld of %d rows left to the exact path\n", means[t],
               krill_gpu_lanes_per_row((double)a->nnz / n, n, 1), (long long)declined, n);
        CHECK(declined >= n / 8);
        for (int ab = 0; ab < 2; ab++) {
            const double alpha = ab ? 2.0 : 1.0, beta = ab ? -0.5 : 0.0;
            rs_reference(a, x, alpha, beta, y0, ref);
            CHECK(spmv_on(cpu, a, "csr", alpha, x, beta, y0, yc));
            CHECK(count_mismatch(yc, ref, n, "CPU csr") == 0);
            for (int f = 0; f < (int)(sizeof formats / sizeof *formats); f++) {
                char what[96];
                snprintf(what, sizeof what, "mean %d, GPU %s, alpha %g", means[t], formats[f],
                         alpha);
                if (spmv_on(gpu, a, formats[f], alpha, x, beta, y0, yg))
                    CHECK(count_mismatch(yg, yc, n, what) == 0);
            }
        }
        CHECK_OK(krill_ctx_set_repro(gpu, KRILL_REPRO_OFF, 0));
        if (spmv_on(gpu, a, "csr", 1.0, x, 0.0, y0, yg)) {
            rs_reference(a, x, 1.0, 0.0, y0, ref);
            for (int32_t i = 0; i < n; i++) plain_differs += !rs_same(yg[i], ref[i]);
        }
        CHECK_OK(krill_ctx_set_repro(gpu, KRILL_REPRO_OZAKI, 0));
        krill_csr_destroy(&a);
    }
    printf("plain GPU csr differs from the exact rows in %lld rows\n", (long long)plain_differs);
    CHECK(plain_differs > 0);
    free(x);
    free(y0);
    free(ref);
    free(yc);
    free(yg);
}

/* z = M^{-1} r with preconditioner `name` built on ctx from a; 0 when it could not run */
static int pc_apply_on(krill_ctx *ctx, const krill_csr *a, const char *name, const double *r,
                       double *z)
{
    krill_mat *m = NULL;
    krill_pc *pc = NULL;
    krill_vec *vr = NULL, *vz = NULL;
    int ok = 0;
    CHECK_OK(krill_mat_create(ctx, a, "csr", &m));
    if (m) CHECK_OK(krill_pc_create(m, name, &pc));
    CHECK_OK(krill_vec_create(ctx, a->n_rows, &vr));
    CHECK_OK(krill_vec_create(ctx, a->n_rows, &vz));
    if (pc && vr && vz) {
        CHECK_OK(krill_vec_upload(vr, r));
        CHECK_OK(krill_pc_apply(pc, vr, vz));
        CHECK_OK(krill_vec_download(vz, z));
        ok = 1;
    }
    krill_vec_destroy(&vr);
    krill_vec_destroy(&vz);
    krill_pc_destroy(&pc);
    krill_mat_destroy(&m);
    return ok;
}

static void pc_case(krill_ctx *gpu, krill_ctx *cpu, const char *spec, const char *name,
                    int plain_must_differ)
{
    krill_csr *a = su_gen(spec);
    const int64_t n = a->n_rows;
    double *r = xmalloc((size_t)n * sizeof *r), *zc = xmalloc((size_t)n * sizeof *zc);
    double *zg = xmalloc((size_t)n * sizeof *zg);
    int64_t bad = 0, plain = 0;
    char what[96];
    CHECK_OK(krill_gen_dot_vectors(n, 4.0, 4242u, r, NULL));
    for (int64_t i = 0; i < n; i++) {
        if (i % 11 == 3) r[i] = 1e-200;
        if (i % 13 == 5) r[i] = -1e200;
    }
    snprintf(what, sizeof what, "%s %s", spec, name);
    if (pc_apply_on(cpu, a, name, r, zc) && pc_apply_on(gpu, a, name, r, zg))
        bad = count_mismatch(zg, zc, n, what);
    printf("%-22s %-10s GPU vs CPU: %lld of %lld entries differ", spec, name, (long long)bad,
           (long long)n);
    CHECK(bad == 0);
    CHECK_OK(krill_ctx_set_repro(gpu, KRILL_REPRO_OFF, 0));
    if (pc_apply_on(gpu, a, name, r, zg))
        for (int64_t i = 0; i < n; i++) plain += !rs_same(zg[i], zc[i]);
    CHECK_OK(krill_ctx_set_repro(gpu, KRILL_REPRO_OZAKI, 0));
    printf("; plain GPU differs in %lld\n", (long long)plain);
    if (plain_must_differ) CHECK(plain > 0);
    free(r);
    free(zc);
    free(zg);
    krill_csr_destroy(&a);
}

int main(void)
{
    krill_ctx *gpu = tu_gpu_ctx_or_skip(), *cpu = tu_cpu_ctx(3);
    CHECK_OK(krill_ctx_set_repro(gpu, KRILL_REPRO_OZAKI, 0));
    CHECK_OK(krill_ctx_set_repro(cpu, KRILL_REPRO_OZAKI, 0));
    test_spmv_lanes(gpu, cpu);
    pc_case(gpu, cpu, "poisson3d:20", "bjacobi:5", 0);
    pc_case(gpu, cpu, "poisson3d:20", "bjacobi:8", 0);
    pc_case(gpu, cpu, "poisson3d:20", "bjacobi:16", 0);
    pc_case(gpu, cpu, "poisson3d:20", "ic0", 0);
    pc_case(gpu, cpu, "poisson3d:20", "ilu0", 1);
    pc_case(gpu, cpu, "elasticity3d:10,8,8", "ic0", 0);
    pc_case(gpu, cpu, "elasticity3d:10,8,8", "ilu0", 1);
    krill_ctx_destroy(&cpu);
    krill_ctx_destroy(&gpu);
    return tu_finish("test_gpu_repro_lanes");
}
