/* GPU BLAS-1 (krill_blas_* on a CUDA context) against plain C loops, for n in {0, 1, 31,
 * 1000, 2^20 + 3} and for every alignment case of the kernels: all operands 16-byte aligned,
 * all one double off (a scalar head element), and mixed (no vector accesses). Elementwise
 * results must equal the C loops bit for bit (both round every product and sum: no FMA
 * contraction), and never touch the guard elements around the range; dot and nrm2 must be
 * within 1e-13 of a long-double reference (dot: relative to sum |x_i y_i|) and give the
 * same bits on every run. Needs a GPU (else 77). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_impl.h"
#include "testutil.h"

#define GUARD 2                  /* extra doubles on each side of every device range */
#define SENTINEL (-12345.6789)

static krill_ctx *ctx;

/* A device buffer of n + 2*GUARD doubles; the vector starts at GUARD + offset. */
typedef struct dbuf {
    double *base;
    int64_t n;
    int offset;
} dbuf;

static double *dptr(dbuf *b) { return b->base + GUARD + b->offset; }

static dbuf dbuf_make(int64_t n, int offset, const double *values)
{
    dbuf b = {NULL, n, offset};
    size_t total = (size_t)(n + 2 * GUARD);
    double *h = malloc(total * sizeof *h);
    for (size_t i = 0; i < total; i++) h[i] = SENTINEL;
    if (values) memcpy(h + GUARD + offset, values, (size_t)n * sizeof *h);
    CHECK_OK(krill_mem_alloc(ctx, (void **)&b.base, total * sizeof *h, "test vector"));
    if (b.base) CHECK_OK(krill_mem_upload(ctx, b.base, h, total * sizeof *h));
    free(h);
    return b;
}

/* Download the vector into out (n doubles); 0 if a guard element changed. */
static int dbuf_read(dbuf *b, double *out)
{
    size_t total = (size_t)(b->n + 2 * GUARD);
    double *h = malloc(total * sizeof *h);
    int guards_ok = 1;
    CHECK_OK(krill_mem_download(ctx, h, b->base, total * sizeof *h));
    for (size_t i = 0; i < total; i++) {
        int inside = (int64_t)i >= GUARD + b->offset && (int64_t)i < GUARD + b->offset + b->n;
        if (!inside && h[i] != SENTINEL) guards_ok = 0;
    }
    memcpy(out, h + GUARD + b->offset, (size_t)b->n * sizeof *out);
    free(h);
    return guards_ok;
}

static void dbuf_free(dbuf *b) { krill_mem_free(ctx, b->base); }

/* exact equality of n values, reporting the first difference */
static int same(const double *got, const double *want, int64_t n, const char *what, int64_t size,
                int ox, int oy)
{
    for (int64_t i = 0; i < n; i++)
        if (!(got[i] == want[i])) {
            fprintf(stderr, "%s n=%lld offsets %d,%d: [%lld] = %.17g, expected %.17g\n", what,
                    (long long)size, ox, oy, (long long)i, got[i], want[i]);
            return 0;
        }
    return 1;
}

static void test_elementwise(int64_t n, int ox, int oy)
{
    double *x = malloc((size_t)(n + 1) * sizeof *x), *y = malloc((size_t)(n + 1) * sizeof *y);
    double *want = malloc((size_t)(n + 1) * sizeof *want);
    double *got = malloc((size_t)(n + 1) * sizeof *got);
    double *nans = malloc((size_t)(n + 1) * sizeof *nans);
    tu_random(x, n, 1 + (uint64_t)n);
    tu_random(y, n, 2 + (uint64_t)n);
    for (int64_t i = 0; i < n; i++) nans[i] = NAN;

    /* fill */
    dbuf bx = dbuf_make(n, ox, x);
    CHECK_OK(krill_blas_fill(ctx, n, 0.25, dptr(&bx)));
    for (int64_t i = 0; i < n; i++) want[i] = 0.25;
    CHECK(dbuf_read(&bx, got));
    CHECK(same(got, want, n, "fill", n, ox, oy));
    dbuf_free(&bx);

    /* scal */
    bx = dbuf_make(n, ox, x);
    CHECK_OK(krill_blas_scal(ctx, n, -1.7, dptr(&bx)));
    for (int64_t i = 0; i < n; i++) want[i] = -1.7 * x[i];
    CHECK(dbuf_read(&bx, got));
    CHECK(same(got, want, n, "scal", n, ox, oy));
    dbuf_free(&bx);

    /* copy */
    bx = dbuf_make(n, ox, x);
    dbuf by = dbuf_make(n, oy, y);
    CHECK_OK(krill_blas_copy(ctx, n, dptr(&bx), dptr(&by)));
    CHECK(dbuf_read(&by, got));
    CHECK(same(got, x, n, "copy", n, ox, oy));
    dbuf_free(&bx);
    dbuf_free(&by);

    /* axpby, including the special cases: beta = 0 must ignore y (NaN there), alpha = 0
     * must ignore x (NaN there), beta = 1 is axpy */
    static const double ab[][2] = {{0.7, -1.3}, {0.7, 0.0}, {0.0, -1.3}, {0.0, 0.0},
                                   {1.0, 1.0},  {-2.5, 1.0}, {1.0, 0.0}, {0.0, 1.0}};
    for (size_t c = 0; c < sizeof ab / sizeof ab[0]; c++) {
        double alpha = ab[c][0], beta = ab[c][1];
        char what[64];
        snprintf(what, sizeof what, "axpby(%g, %g)", alpha, beta);
        bx = dbuf_make(n, ox, alpha == 0.0 ? nans : x);
        by = dbuf_make(n, oy, beta == 0.0 ? nans : y);
        for (int64_t i = 0; i < n; i++) {
            if (alpha == 0.0) want[i] = beta == 0.0 ? 0.0 : beta * y[i];
            else if (beta == 0.0) want[i] = alpha * x[i];
            else want[i] = alpha * x[i] + beta * y[i];
        }
        if (beta == 1.0) CHECK_OK(krill_blas_axpy(ctx, n, alpha, dptr(&bx), dptr(&by)));
        else CHECK_OK(krill_blas_axpby(ctx, n, alpha, dptr(&bx), beta, dptr(&by)));
        CHECK(dbuf_read(&by, got));
        CHECK(same(got, want, n, what, n, ox, oy));
        dbuf_free(&bx);
        dbuf_free(&by);
    }

    /* xmy: z = x .* y with z at either offset */
    for (int oz = 0; oz <= 1; oz++) {
        bx = dbuf_make(n, ox, x);
        by = dbuf_make(n, oy, y);
        dbuf bz = dbuf_make(n, oz, NULL);
        CHECK_OK(krill_blas_xmy(ctx, n, dptr(&bx), dptr(&by), dptr(&bz)));
        for (int64_t i = 0; i < n; i++) want[i] = x[i] * y[i];
        CHECK(dbuf_read(&bz, got));
        CHECK(same(got, want, n, "xmy", n, ox, oy));
        dbuf_free(&bx);
        dbuf_free(&by);
        dbuf_free(&bz);
    }
    free(x);
    free(y);
    free(want);
    free(got);
    free(nans);
}

/* A reduction's result in device memory, read back; run three times to check that the
 * bits repeat. op 0: dot(x, y), op 1: nrm2(x). */
static double reduce(int op, int64_t n, double *dx, double *dy, double *dres, int *repeatable)
{
    double r[3];
    for (int k = 0; k < 3; k++) {
        if (op == 0) CHECK_OK(krill_blas_dot(ctx, n, dx, dy, dres));
        else CHECK_OK(krill_blas_nrm2(ctx, n, dx, dres));
        r[k] = NAN;
        CHECK_OK(krill_scalars_read(ctx, dres, &r[k], 1));
    }
    *repeatable = memcmp(&r[0], &r[1], sizeof r[0]) == 0 && memcmp(&r[0], &r[2], sizeof r[0]) == 0;
    return r[0];
}

static long double ref_dot(const double *x, const double *y, int64_t n, long double *abs_sum)
{
    long double s = 0.0L, a = 0.0L;
    for (int64_t i = 0; i < n; i++) {
        s += (long double)x[i] * y[i];
        a += fabsl((long double)x[i] * y[i]);
    }
    *abs_sum = a;
    return s;
}

static long double ref_nrm2(const double *x, int64_t n)
{
    long double s = 0.0L;   /* x87 long double: squares of 1e300 and 1e-300 are representable */
    for (int64_t i = 0; i < n; i++) s += (long double)x[i] * x[i];
    return sqrtl(s);
}

static void test_reductions(int64_t n, int ox, int oy)
{
    double *x = malloc((size_t)(n + 1) * sizeof *x), *y = malloc((size_t)(n + 1) * sizeof *y);
    double *res = NULL;
    int rep = 0;
    tu_random(x, n, 3 + (uint64_t)n);
    tu_random(y, n, 4 + (uint64_t)n);
    CHECK_OK(krill_mem_alloc(ctx, (void **)&res, sizeof *res, "result"));
    dbuf bx = dbuf_make(n, ox, x), by = dbuf_make(n, oy, y);

    long double abs_sum;
    long double want = ref_dot(x, y, n, &abs_sum);
    double got = reduce(0, n, dptr(&bx), dptr(&by), res, &rep);
    CHECK(rep);
    if (!(fabsl((long double)got - want) <= 1e-13L * abs_sum)) {
        CHECK(0);
        fprintf(stderr, "dot n=%lld offsets %d,%d: %.17g, expected %.17Lg\n", (long long)n, ox, oy,
                got, want);
    }
    if (n == 0) CHECK(got == 0.0);

    want = ref_nrm2(x, n);
    got = reduce(1, n, dptr(&bx), NULL, res, &rep);
    CHECK(rep);
    if (!(fabsl((long double)got - want) <= 1e-13L * want)) {
        CHECK(0);
        fprintf(stderr, "nrm2 n=%lld offset %d: %.17g, expected %.17Lg\n", (long long)n, ox, got,
                want);
    }
    dbuf_free(&bx);
    dbuf_free(&by);
    krill_mem_free(ctx, res);
    free(x);
    free(y);
}

/* nrm2 where the plain sum of squares would overflow or underflow, and NaN / Inf. */
static void test_nrm2_range(void)
{
    enum { N = 5003 };
    static const double scales[] = {1e300, 1e-300, 1e-160, 1e160};
    double *x = malloc(N * sizeof *x), *res = NULL;
    int rep = 0;
    CHECK_OK(krill_mem_alloc(ctx, (void **)&res, sizeof *res, "result"));
    for (size_t s = 0; s < sizeof scales / sizeof *scales; s++) {
        tu_random(x, N, 77 + s);
        for (int i = 0; i < N; i++) x[i] *= scales[s];
        dbuf bx = dbuf_make(N, 0, x);
        long double want = ref_nrm2(x, N);
        double got = reduce(1, N, dptr(&bx), NULL, res, &rep);
        CHECK(rep && isfinite(got) && got > 0.0);
        if (!(fabsl((long double)got - want) <= 1e-13L * want)) {
            CHECK(0);
            fprintf(stderr, "nrm2 scaled by %g: %.17g, expected %.17Lg\n", scales[s], got, want);
        }
        dbuf_free(&bx);
    }
    /* all three ranges at once: huge, tiny and ordinary entries */
    tu_random(x, N, 99);
    x[17] = 3e305;
    x[18] = -4e305;
    for (int i = 100; i < 200; i++) x[i] *= 1e-310;
    dbuf bx = dbuf_make(N, 1, x);
    long double want = ref_nrm2(x, N);
    double got = reduce(1, N, dptr(&bx), NULL, res, &rep);
    CHECK(fabsl((long double)got - want) <= 1e-13L * want);
    dbuf_free(&bx);
    /* small and ordinary entries only (the combination branch) */
    tu_random(x, N, 98);
    for (int i = 0; i < N; i += 2) x[i] *= 1e-200;
    for (int i = 1; i < N; i += 2) x[i] *= 1e-150;
    bx = dbuf_make(N, 0, x);
    want = ref_nrm2(x, N);
    got = reduce(1, N, dptr(&bx), NULL, res, &rep);
    CHECK(fabsl((long double)got - want) <= 1e-13L * want);
    dbuf_free(&bx);
    /* NaN anywhere gives NaN; Inf gives Inf */
    tu_random(x, N, 97);
    x[4000] = NAN;
    x[10] = 1e300;
    bx = dbuf_make(N, 0, x);
    CHECK(isnan(reduce(1, N, dptr(&bx), NULL, res, &rep)));
    dbuf_free(&bx);
    tu_random(x, N, 96);
    x[N - 1] = -INFINITY;
    bx = dbuf_make(N, 0, x);
    CHECK(isinf(reduce(1, N, dptr(&bx), NULL, res, &rep)));
    dbuf_free(&bx);
    /* an all-zero vector */
    memset(x, 0, N * sizeof *x);
    bx = dbuf_make(N, 0, x);
    CHECK(reduce(1, N, dptr(&bx), NULL, res, &rep) == 0.0);
    dbuf_free(&bx);
    krill_mem_free(ctx, res);
    free(x);
}

int main(void)
{
    static const int64_t sizes[] = {0, 1, 2, 3, 31, 1000, (1 << 20) + 3};
    static const int offsets[][2] = {{0, 0}, {1, 1}, {0, 1}, {1, 0}};
    ctx = tu_gpu_ctx_or_skip();
    printf("%s\n", krill_ctx_describe(ctx));
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (size_t o = 0; o < sizeof offsets / sizeof *offsets; o++) {
            test_elementwise(sizes[s], offsets[o][0], offsets[o][1]);
            test_reductions(sizes[s], offsets[o][0], offsets[o][1]);
        }
    test_nrm2_range();

    /* negative lengths are refused */
    double *p = NULL;
    CHECK_OK(krill_mem_alloc(ctx, (void **)&p, 8, "p"));
    CHECK_STATUS(krill_blas_dot(ctx, -1, p, p, p), KRILL_ERR_ARG);
    CHECK_STATUS(krill_blas_fill(ctx, -5, 0.0, p), KRILL_ERR_ARG);
    krill_mem_free(ctx, p);
    CHECK_OK(krill_ctx_sync(ctx));
    krill_ctx_destroy(&ctx);
    return tu_finish("test_gpu_blas1");
}
