/* tests/repro_spmv_data.c - see repro_spmv_data.h. Compiled with -ffp-contract=off like the
 * library, so the reference's products and sums are rounded one by one. */
#include "repro_spmv_data.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ozaki/ozaki_row.h"
#include "testutil.h"

const char *const rs_kind_names[RS_KINDS] = {"fixed", "cancel", "range", "subnormal", "zeros",
                                             "ties", "special", "wild", "empty"};
const double rs_alpha[RS_NAB] = {1.0, -1.0, 2.0};
const double rs_beta[RS_NAB] = {0.0, 1.0, -0.5};

int rs_same(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

/* ---- random numbers (splitmix64) ------------------------------------------------------ */

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int irand(uint64_t *s, int lo, int hi)
{
    return lo + (int)(next(s) % (uint64_t)(hi - lo + 1));
}

static double u01(uint64_t *s) { return (double)(next(s) >> 11) * 0x1p-53; }
static double sgn(uint64_t *s) { return (next(s) & 1) ? -1.0 : 1.0; }
/* a random 53-bit significand times 2^e, random sign */
static double mant(uint64_t *s, int e) { return sgn(s) * ldexp(1.0 + u01(s), e); }

static double randn(uint64_t *s)
{
    double u = u01(s);
    while (u == 0.0) u = u01(s);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * u01(s));
}

static double wild(uint64_t *s) { return (u01(s) - 0.5) * exp(4.0 * randn(s)); }

/* ---- the rows ----------------------------------------------------------------------- */

typedef struct terms {
    double *a, *x;
    int n;
} terms;

static void put(terms *t, double a, double x)
{
    t->a[t->n] = a;
    t->x[t->n++] = x;
}

#define MAX_LEN 200

/* hand-picked rows: n (a, x) pairs each, in this order */
static const struct {
    int n;
    double t[6];
} fixed_rows[] = {
    {3, {1e300, 1, 1e-300, 1, -1e300, 1}},          /* 1e-300 */
    {3, {1e300, 1e8, 1e-300, 1e-8, -1e300, 1e8}},   /* a subnormal */
    {3, {DBL_MAX, 2, -DBL_MAX, 2, 1, 1}},           /* 1: the products overflow */
    {2, {DBL_MAX, 1, DBL_MAX, 1}},                  /* Inf */
    {2, {DBL_MAX, 1, 0x1p970, 1}},                  /* DBL_MAX + ulp/2: Inf */
    {2, {DBL_MAX, 1, 0x1p970, 0.99}},               /* just under: DBL_MAX */
    {1, {0.0, 5}},                                  /* +0 */
    {2, {-1, 0.0, -0.0, 3}},                        /* -0 products: +0 */
    {2, {1, 1, 0x1p-53, 1}},                        /* tie to even: 1 */
    {3, {1, 1, 0x1p-53, 1, 0x1p-110, 1}},           /* tie broken: 1 + 2^-52 */
    {2, {1 + 0x1p-52, 1, 0x1p-53, 1}},              /* tie to even: 1 + 2^-51 */
    {1, {0x1p-1074, 0.5}},                          /* half the least subnormal: +0 */
    {2, {0x1p-1074, 0.5, 0x1p-1074, 0.25}},         /* 2^-1074 */
    {1, {0x1.8p-1073, 0.5}},                        /* 1.5 2^-1074: 2^-1073 */
    {1, {1e-200, 1e-200}},                          /* +0 */
    {1, {-1e-200, 1e-200}},                         /* -0 */
    {2, {0.1, 3, -0.3, 1}},                         /* the residual of 0.1 * 3 */
    {2, {1, 1, -1, 1}},                             /* +0 */
};
#define N_FIXED ((int32_t)(sizeof fixed_rows / sizeof fixed_rows[0]))

static void shuffle(terms *t, uint64_t *s)
{
    for (int k = t->n - 1; k > 0; k--) {
        const int j = irand(s, 0, k);
        double ta = t->a[k], tx = t->x[k];
        t->a[k] = t->a[j];
        t->x[k] = t->x[j];
        t->a[j] = ta;
        t->x[j] = tx;
    }
}

static void row_cancel(terms *t, uint64_t *s, int len)
{
    const int m = len / 2;
    for (int k = 0; k < m; k++) {
        const double a = mant(s, irand(s, -30, 30)), x = mant(s, irand(s, -30, 30));
        put(t, a, x);
        switch (irand(s, 0, 2)) {   /* its exact negation, in one of three forms */
        case 0: put(t, -a, x); break;
        case 1: put(t, a, -x); break;
        default: put(t, -2.0 * a, 0.5 * x); break;
        }
    }
    if (t->n < len) put(t, mant(s, irand(s, -90, -60)), mant(s, 0));
}

static void row_range(terms *t, uint64_t *s, int len)
{
    if (len >= 3 && (next(s) & 1)) {   /* a cancelling pair at the top of the range */
        const double big = mant(s, 1000);
        put(t, big, 1.0);
        put(t, -big, 1.0);
    }
    while (t->n < len) {
        const int ea = irand(s, -1000, 1000);
        int ex = irand(s, -100, 100);
        if (ea + ex > 1000) ex = 1000 - ea;
        put(t, mant(s, ea), mant(s, ex));
    }
}

static void row_subnormal(terms *t, uint64_t *s, int len)
{
    while (t->n < len) {
        uint64_t bits = next(s) & ((1ull << 52) - 1);
        double a, x;
        if (bits == 0) bits = 1;
        if (next(s) & 1) memcpy(&a, &bits, sizeof a);   /* a subnormal */
        else a = ldexp(1.0 + u01(s), -1022 + irand(s, -3, 3));
        a *= sgn(s);
        x = irand(s, 0, 3) == 0 ? mant(s, -500) : mant(s, irand(s, -2, 2));
        put(t, a, x);
    }
}

static void row_zeros(terms *t, uint64_t *s, int len)
{
    while (t->n < len) {
        const int r = irand(s, 0, 3);
        put(t, r == 0 ? 0.0 : r == 1 ? -0.0 : wild(s), r == 2 ? 0.0 : wild(s));
    }
}

static void row_ties(terms *t, uint64_t *s, int len)
{
    const int e = irand(s, -900, 1000);
    const double v = mant(s, e), ulp = ldexp(1.0, e - 52);
    put(t, v, 1.0);
    if (next(s) & 1) {   /* the half ulp in one product or in two */
        put(t, ulp, 0.5 * sgn(s));
    } else {
        const double h = 0.25 * sgn(s);
        put(t, ulp, h);
        put(t, h, ulp);
    }
    if (next(s) & 1) put(t, ldexp(sgn(s), e - 112), 1.0);   /* breaks the tie */
    while (t->n + 2 <= len) {                               /* exactly cancelling pairs */
        const double p = mant(s, e - irand(s, 0, 40));
        put(t, p, 1.0);
        put(t, 1.0, -p);
    }
}

static void row_special(terms *t, uint64_t *s, int len)
{
    const int specials = irand(s, 1, 3);
    while (t->n < len) put(t, mant(s, irand(s, -20, 20)), mant(s, irand(s, -20, 20)));
    for (int k = 0; k < specials; k++) {
        const int r = irand(s, 0, 3), at = irand(s, 0, t->n - 1);
        t->x[at] = r == 0 ? INFINITY : r == 1 ? -INFINITY : NAN;
        if (r == 3) t->a[at] = 0.0;   /* 0 * NaN; with Inf below, 0 * Inf */
        if (r == 3 && (next(s) & 1)) t->x[at] = INFINITY;
    }
}

static void make_row(int kind, int32_t i, uint64_t *s, terms *t)
{
    const int len = kind == RS_EMPTY ? 0 : irand(s, kind == RS_CANCEL || kind == RS_TIES ? 2 : 1,
                                                 MAX_LEN);
    t->n = 0;
    switch (kind) {
    case RS_FIXED:
        for (int k = 0; k < fixed_rows[i].n; k++)
            put(t, fixed_rows[i].t[2 * k], fixed_rows[i].t[2 * k + 1]);
        return;   /* in its order */
    case RS_CANCEL: row_cancel(t, s, len); break;
    case RS_RANGE: row_range(t, s, len); break;
    case RS_SUBNORMAL: row_subnormal(t, s, len); break;
    case RS_ZEROS: row_zeros(t, s, len); break;
    case RS_TIES: row_ties(t, s, len); break;
    case RS_SPECIAL: row_special(t, s, len); break;
    case RS_WILD:
        while (t->n < len) put(t, wild(s), wild(s));
        break;
    default: break;
    }
    shuffle(t, s);
}

krill_status rs_hard_rows(int32_t n_rows, uint64_t seed, krill_csr **out, double **xout,
                          int **kind_out)
{
    krill_status st = KRILL_OK;
    uint64_t s = seed;
    const int64_t cap = (int64_t)n_rows * MAX_LEN;
    terms t = {malloc(MAX_LEN * sizeof(double)), malloc(MAX_LEN * sizeof(double)), 0};
    double *va = malloc((size_t)cap * sizeof *va), *vx = malloc((size_t)cap * sizeof *vx);
    int32_t *col = malloc((size_t)cap * sizeof *col);
    int64_t *rp = calloc((size_t)n_rows + 1, sizeof *rp);
    int *kind = malloc((size_t)n_rows * sizeof *kind);
    int32_t c = 0;
    krill_csr *a = NULL;
    double *x = NULL;
    *out = NULL;
    *xout = NULL;
    if (kind_out) *kind_out = NULL;
    for (int32_t i = 0; i < n_rows; i++) {
        kind[i] = i < N_FIXED ? RS_FIXED : 1 + (i - N_FIXED) % (RS_KINDS - 1);
        make_row(kind[i], i, &s, &t);
        for (int k = 0; k < t.n; k++) {
            const int64_t p = rp[i] + k;
            if (k > 0) c += irand(&s, 0, 3) == 0 ? 2 : 1;   /* gaps: runs and isolated entries */
            col[p] = c;
            va[p] = t.a[k];
            vx[p] = t.x[k];
        }
        rp[i + 1] = rp[i] + t.n;
        c += 2;   /* the next row's columns start after a gap */
    }
    st = krill_csr_create(n_rows, c, rp[n_rows], &a);
    if (st != KRILL_OK) goto cleanup;
    x = malloc((size_t)c * sizeof *x);
    for (int32_t j = 0; j < c; j++) x[j] = NAN;
    memcpy(a->row_ptr, rp, ((size_t)n_rows + 1) * sizeof *rp);
    for (int64_t p = 0; p < a->nnz; p++) {
        a->col[p] = col[p];
        a->val[p] = va[p];
        x[col[p]] = vx[p];
    }
    *out = a;
    *xout = x;
    if (kind_out) {
        *kind_out = kind;
        kind = NULL;
    }
cleanup:
    free(t.a);
    free(t.x);
    free(va);
    free(vx);
    free(col);
    free(rp);
    free(kind);
    return st;
}

/* ---- references --------------------------------------------------------------------- */

double rs_row_sum(const krill_csr *a, int32_t i, const double *x)
{
    int64_t acc[KRILL_OZ_MAX_DIAG];
    const int64_t lo = a->row_ptr[i];
    return krill_oz_row_gather(a->row_ptr[i + 1] - lo, a->val + lo, a->col + lo, 1, x, acc);
}

void rs_reference(const krill_csr *a, const double *x, double alpha, double beta,
                  const double *y0, double *y)
{
    for (int32_t i = 0; i < a->n_rows; i++) {
        const double s = rs_row_sum(a, i, x);
        y[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y0[i];
    }
}

krill_status rs_long_row(int32_t n_rows, int32_t full, int32_t which, krill_csr **out)
{
    krill_status st = KRILL_OK;
    krill_csr *a = NULL;
    uint64_t s = 12345;
    int64_t p = 0;
    *out = NULL;
    st = krill_csr_create(n_rows, full, (int64_t)full + n_rows - 1, &a);
    if (st != KRILL_OK) return st;
    for (int32_t i = 0; i < n_rows; i++) {
        const int32_t len = i == which ? full : 1;
        for (int32_t k = 0; k < len; k++, p++) {
            a->col[p] = i == which ? k : i % full;
            a->val[p] = u01(&s) - 0.5;
        }
        a->row_ptr[i + 1] = p;
    }
    *out = a;
    return st;
}

krill_status rs_gen(const char *spec, int every, krill_csr **out)
{
    krill_status st = krill_gen(spec, out);
    krill_csr *a = *out;
    int64_t p = 0, lo = 0;
    if (st != KRILL_OK || every <= 0) return st;
    for (int32_t i = 0; i < a->n_rows; i++) {   /* compact, dropping every every-th row */
        const int64_t hi = a->row_ptr[i + 1];
        if (i % every != every - 1)
            for (int64_t q = lo; q < hi; q++, p++) {
                a->col[p] = a->col[q];
                a->val[p] = a->val[q];
            }
        a->row_ptr[i + 1] = p;
        lo = hi;
    }
    a->nnz = p;
    return st;
}

int rs_ell_type(const char *format) { return strstr(format, "ell") != NULL; }

int64_t rs_longest_row(const krill_csr *a)
{
    int64_t k = 0;
    for (int32_t i = 0; i < a->n_rows; i++)
        if (a->row_ptr[i + 1] - a->row_ptr[i] > k) k = a->row_ptr[i + 1] - a->row_ptr[i];
    return k;
}

void rs_print_bits(const char *what, double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    fprintf(stderr, "    %s %.17g (0x%016llx)\n", what, v, (unsigned long long)b);
}

void rs_with_inputs(const krill_csr *a, const char *name,
                    void (*check)(const krill_csr *a, const char *name, const double *x,
                                  const double *y0))
{
    double *x = malloc((size_t)(a->n_cols > 0 ? a->n_cols : 1) * sizeof *x);
    double *y0 = malloc((size_t)(a->n_rows > 0 ? a->n_rows : 1) * sizeof *y0);
    CHECK_OK(krill_gen_dot_vectors(a->n_cols, 4.0, 11, x, NULL));
    CHECK_OK(krill_gen_dot_vectors(a->n_rows, 4.0, 12, y0, NULL));
    check(a, name, x, y0);
    free(x);
    free(y0);
}
