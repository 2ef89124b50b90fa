/* tests/test_ozaki_row.c - the row sums of ozaki/ozaki_row.h on the host: krill_oz_row_gather
 * (fast path, else exact path) and the exact path alone (krill_oz_dot_seq in exact mode)
 * against MPFR, and the fast path (krill_oz_fast_*) against the exact path. Whenever the fast
 * path claims a result it must be the exact path's bits; it must decline rows whose sum lies
 * at or near a midpoint between two doubles, rows with operands out of its range and zero
 * sums with something left over; and on ordinary rows it must decide almost all (else it
 * would be no fast path). Rows are also split among 1..8 "lanes" whose states are merged,
 * as a GPU kernel does.
 * The pass structure of the header (pass 1 the fast path alone; an undecided row then the
 * statistics pass and the accumulate pass, lanes merging their statistics and adding their
 * diagonal sums) on rows the fast path decides and rows it must leave to the exact path,
 * against the exact path alone and MPFR. And TwoProduct (krill_oz_two_prod: Dekker's
 * product on a host compiled without FMA) on random and extreme operands of the fast path's
 * range: p must be fl(a x) and p + e = a x exactly, checked in 128-bit integers and against
 * libm's correctly rounded fma. */
#include <float.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "krill/gen.h"
#include "ozaki/ozaki_fast_host.h"
#include "ozaki/ozaki_row.h"
#include "ozaki_ref.h"
#include "testutil.h"

#define MAX_LEN 300

static int64_t acc[KRILL_OZ_MAX_DIAG];
static int32_t cols[MAX_LEN];

static double exact_row(int n, const double *a, const double *x)
{
    return krill_oz_dot_seq(n, a, 1, x, 1, 0, 0, acc);
}

/* the fast path over the terms split into `lanes` interleaved parts, merged; 1 if decided */
static int fast_row(int n, const double *a, const double *x, int lanes, double *sum)
{
    krill_oz_fast part[8], all;
    for (int l = 0; l < lanes; l++) krill_oz_fast_init(&part[l]);
    for (int k = 0; k < n; k++) krill_oz_fast_add(&part[k % lanes], a[k], x[k]);
    all = part[0];
    for (int l = 1; l < lanes; l++) krill_oz_fast_merge(&all, &part[l]);
    return krill_oz_fast_end(&all, sum);
}

/* check one row: the exact path against MPFR (finite rows), the fast path against the exact
 * path for 1, 3 and 8 lanes; returns 1 when the fast path decided (with one lane) */
static int check_row(int n, const double *a, const double *x, const char *what)
{
    const double ex = exact_row(n, a, x);
    double ref, fast;
    int decided = 0;
    if (!oz_same_bits(krill_oz_row_gather(n, a, cols, 1, x, acc), ex)) {
        fprintf(stderr, "%s (n %d): krill_oz_row_gather %a, exact %a\n", what, n,
                krill_oz_row_gather(n, a, cols, 1, x, acc), ex);
        CHECK(0);
    }
    if (oz_ref_dot(n, a, x, &ref) && isfinite(ex)) {
        if (!oz_same_bits(ex, ref)) {
            fprintf(stderr, "%s (n %d): exact row %.17g, MPFR %.17g\n", what, n, ex, ref);
            CHECK(0);
        }
    }
    for (int lanes = 1; lanes <= 8; lanes += lanes == 1 ? 2 : 5) {
        if (fast_row(n, a, x, lanes, &fast)) {
            if (!oz_same_bits(fast, ex)) {
                fprintf(stderr, "%s (n %d, %d lanes): fast %a, exact %a\n", what, n, lanes, fast, ex);
                CHECK(0);
            }
            if (lanes == 1) decided = 1;
        }
    }
    return decided;
}

/* (rand - 0.5) exp(phi randn) rows: the fast path decides nearly every one */
static void test_random_rows(void)
{
    static const double phis[] = {0.0, 1.0, 4.0, 8.0};
    double a[MAX_LEN], x[MAX_LEN];
    for (int f = 0; f < 4; f++) {
        int rows = 0, decided = 0;
        for (int r = 0; r < 3000; r++) {
            const int n = 1 + (int)((r * 7919u) % MAX_LEN);
            oz_ref_phi_vector(a, n, phis[f], 1000u + (uint64_t)r);
            oz_ref_phi_vector(x, n, phis[f], 900000u + (uint64_t)r);
            decided += check_row(n, a, x, "random row");
            rows++;
        }
        printf("phi %g: the fast path decided %d of %d rows\n", phis[f], decided, rows);
        CHECK(decided >= rows * 99 / 100);
    }
}

/* sums at, just above and just below the midpoint between 1 and 1 + 2^-52, and cancellation
 * to exactly zero: the fast path must decline or agree */
static void test_midpoints(void)
{
    double a[4] = {1.0, 0x1p-53, 0x1p-110, -0x1p-110}, x[4] = {1.0, 1.0, 1.0, 1.0}, s;
    check_row(2, a, x, "midpoint");                       /* 1 + 2^-53: ties to even, 1 */
    CHECK(exact_row(2, a, x) == 1.0);
    CHECK(fast_row(2, a, x, 1, &s) && s == 1.0);          /* nothing left at the third level: */
                                                          /* one IEEE addition rounds it     */
    check_row(3, a, x, "above the midpoint");             /* rounds up */
    CHECK(exact_row(3, a, x) == 1.0 + 0x1p-52);
    a[2] = -0x1p-110;
    check_row(3, a, x, "below the midpoint");             /* rounds down */
    CHECK(exact_row(3, a, x) == 1.0);
    {
        double c[3] = {3.0, -3.0, 0.0}, y[3] = {0.1, 0.1, 5.0};
        check_row(3, c, y, "exact zero");                 /* the products' errors cancel too: */
        CHECK(oz_same_bits(exact_row(3, c, y), 0.0));     /* +0, and the fast path's second   */
        CHECK(fast_row(3, c, y, 1, &s) && oz_same_bits(s, 0.0));   /* level sums them exactly */
        c[2] = 1e-30;                                     /* 3 (0.1) - 3 (0.1) + tiny */
        check_row(3, c, y, "cancellation");
    }
    {   /* -0 products only: +0 */
        double c[2] = {-0.0, 0.0}, y[2] = {1.0, -2.0};
        CHECK(fast_row(2, c, y, 1, &s) && oz_same_bits(s, 0.0));
        CHECK(oz_same_bits(exact_row(2, c, y), 0.0));
    }
}

/* One row sum through the passes as the SpMV runs them, with krill_oz_fast_exact between
 * the statistics and the digit products; counts the sums the bounds leave undecided, those
 * it decides, and those with T > 0. Whenever it decides, it must be the exact path's bits. */
static void check_tail(int n, const double *a, const double *x, int lanes, int *undecided,
                       int *decided, int *with_t)
{
    krill_oz_fast part[8], f;
    krill_oz_row r;
    double s;
    for (int l = 0; l < 8; l++) krill_oz_fast_init(&part[l]);   /* lanes <= 8 */
    for (int k = 0; k < n; k++) krill_oz_fast_add(&part[k % lanes], a[k], x[k]);
    f = part[0];
    for (int l = 1; l < lanes; l++) krill_oz_fast_merge(&f, &part[l]);
    if (krill_oz_fast_end(&f, &s)) return;
    (*undecided)++;
    krill_oz_row_init(&r);
    for (int k = 0; k < n; k++) krill_oz_row_stats(&r, a[k], x[k]);
    if (!krill_oz_fast_exact(&f, &r, &s)) return;
    (*decided)++;
    *with_t += f.t > 0.0;
    if (!oz_same_bits(s, exact_row(n, a, x))) {
        fprintf(stderr, "exact tail (n %d, %d lanes): %a, exact %a\n", n, lanes, s,
                exact_row(n, a, x));
        CHECK(0);
    }
}

/* krill_oz_fast_exact on the sums the bounds leave undecided: the rows of A u on
 * elasticity3d:12,8,8 with u a linear displacement field (u = B X at node X, 3 dofs a node,
 * nodes x-fastest), which the stiffness maps to zero in the interior: those rows cancel down
 * to the rounding of u and land on or near midpoints (CG's A p do the same: 12% of the rows
 * of its second product on elasticity3d:40,16,16). Split over 1, 3 and 8 lanes, it must
 * decide most of them, some with T > 0 (what the T = 0 rule cannot), and agree with the
 * exact path; and decline a tie whose terms span 2^700. */
static void test_exact_tail(void)
{
    static const double B[3][3] = {{0.3, 0.7, -0.2}, {0.11, -0.5, 0.9}, {0.37, 0.13, 0.61}};
    const int nx = 12, ny = 8;
    krill_csr *m = NULL;
    double *b = NULL, a_row[128], x_row[128];
    int undecided = 0, decided = 0, with_t = 0;
    CHECK(krill_gen("elasticity3d:12,8,8", &m) == KRILL_OK);
    if (!m) return;
    b = malloc((size_t)m->n_rows * sizeof *b);
    if (!b) exit(1);
    for (int32_t r = 0; r < m->n_rows; r++) {
        const int node = r / 3, d = r % 3;
        const double X[3] = {node % nx + 1, (node / nx) % (ny + 1), node / (nx * (ny + 1))};
        b[r] = B[d][0] * X[0] + B[d][1] * X[1] + B[d][2] * X[2];
    }
    for (int32_t i = 0; i < m->n_rows; i++) {
        const int64_t lo = m->row_ptr[i], len = m->row_ptr[i + 1] - lo;
        if (len > 128) continue;
        for (int64_t k = 0; k < len; k++) {
            a_row[k] = m->val[lo + k];
            x_row[k] = b[m->col[lo + k]];
        }
        for (int lanes = 1; lanes <= 8; lanes += lanes == 1 ? 2 : 5)
            check_tail((int)len, a_row, x_row, lanes, &undecided, &decided, &with_t);
    }
    printf("  exact tail: %d of %d undecided sums decided, %d with T > 0\n", decided, undecided,
           with_t);
    CHECK(undecided > 100 && decided * 10 >= undecided * 9 && with_t > 0);
    free(b);
    krill_csr_destroy(&m);
    {   /* 1 + 2^-53 + 2^-700 (3 - 3): a tie whose terms span 2^700: declined */
        double a[4] = {1.0, 0x1p-53, 0x1p-700, -0x1p-700}, x[4] = {1.0, 1.0, 0.1, 0.1}, s;
        krill_oz_fast f;
        krill_oz_row r;
        krill_oz_fast_init(&f);
        krill_oz_row_init(&r);
        for (int k = 0; k < 4; k++) {
            krill_oz_fast_add(&f, a[k], x[k]);
            krill_oz_row_stats(&r, a[k], x[k]);
        }
        if (!krill_oz_fast_end(&f, &s)) CHECK(!krill_oz_fast_exact(&f, &r, &s));
        check_row(4, a, x, "wide tie");
    }
}

/* operands the fast path must leave to the exact path */
static void test_out_of_range(void)
{
    double a[3] = {1.0, 1e-300, 2.0}, x[3] = {1.0, 1.0, 1.0}, s;
    CHECK(!fast_row(3, a, x, 1, &s));
    check_row(3, a, x, "tiny operand");
    a[1] = 1e300;
    CHECK(!fast_row(3, a, x, 1, &s));
    check_row(3, a, x, "huge operand");
    a[1] = INFINITY;
    CHECK(!fast_row(3, a, x, 1, &s));
    CHECK(exact_row(3, a, x) == INFINITY);
    a[1] = NAN;
    CHECK(!fast_row(3, a, x, 1, &s));
    CHECK(isnan(exact_row(3, a, x)));
}

/* many terms that each sit just under a half ulp of the running sum: the bound must hold */
static void test_adversarial(void)
{
    double a[MAX_LEN], x[MAX_LEN], s;
    int decided = 0;
    for (int r = 0; r < 2000; r++) {
        const int n = 2 + r % (MAX_LEN - 2);
        double scale = 1.0;
        a[0] = 1.0 + (double)(r % 97) * 0x1p-52;
        x[0] = 1.0;
        for (int k = 1; k < n; k++) {
            scale *= 0.5;
            a[k] = ((k + r) % 3 == 0 ? -1.0 : 1.0) * (0x1p-53 + (double)(k % 5) * 0x1p-106) *
                   (k % 7 == 0 ? scale : 1.0);
            x[k] = 1.0 - (double)((k * r) % 11) * 0x1p-53;
        }
        decided += check_row(n, a, x, "adversarial");
        if (fast_row(n, a, x, 2, &s)) CHECK(oz_same_bits(s, exact_row(n, a, x)));
    }
    printf("adversarial rows: the fast path decided %d of 2000\n", decided);
}

/* ---- the pass structure, with lanes ------------------------------------------------------ */

#define MAX_LANES 8
static int64_t lane_acc[MAX_LANES][KRILL_OZ_ROW_MAX_DIAG];

/* ozaki_row.h's passes over the terms dealt to `lanes` lanes in turn, as a GPU kernel whose
 * lanes share a row: pass 1 the fast-path states, merged; an undecided row then pass 2 (each
 * lane's statistics, merged; every lane begins from the merged state) and pass 3 (each lane
 * its own diagonal sums, added into lane 0's, which ends). *decided: the fast path's verdict;
 * *passes: the passes run (1 or 3). */
static double lanes_row(int n, const double *a, const double *x, int lanes, int *decided,
                        int *passes)
{
    krill_oz_fast f[MAX_LANES];
    krill_oz_row r[MAX_LANES], all;
    double s = 0.0;
    int nd = 0;
    for (int l = 0; l < lanes; l++) krill_oz_fast_init(&f[l]);
    for (int k = 0; k < n; k++) krill_oz_fast_add(&f[k % lanes], a[k], x[k]);
    for (int l = 1; l < lanes; l++) krill_oz_fast_merge(&f[0], &f[l]);
    *decided = krill_oz_fast_end(&f[0], &s);
    *passes = 1;
    if (*decided) return s;
    *passes = 3;
    krill_oz_row_init(&all);
    for (int l = 0; l < lanes; l++) krill_oz_row_init(&r[l]);
    for (int k = 0; k < n; k++) krill_oz_row_stats(&r[k % lanes], a[k], x[k]);
    for (int l = 0; l < lanes; l++) krill_oz_row_merge(&all, &r[l]);
    for (int l = 0; l < lanes; l++) {
        r[l] = all;
        nd = krill_oz_row_begin(&r[l], lane_acc[l]);
    }
    if (nd > 0) {
        for (int k = 0; k < n; k++)
            krill_oz_row_add(&r[k % lanes], a[k], x[k], lane_acc[k % lanes]);
        for (int l = 1; l < lanes; l++)
            for (int c = 0; c < nd; c++) lane_acc[0][c] += lane_acc[l][c];
    }
    return krill_oz_row_end(&r[0], lane_acc[0]);
}

/* one row through lanes_row with 1, 2, 3 and 8 lanes: the exact path's bits (and MPFR's for
 * finite rows) every time, and the same verdict of the fast path every time when
 * `must_fall_back` (which then must be a decline); returns 1 when one lane decided */
static int check_passes(int n, const double *a, const double *x, int must_fall_back,
                        const char *what)
{
    static const int lane_counts[] = {1, 2, 3, 8};
    const double ex = exact_row(n, a, x);
    double ref;
    int decided1 = 0;
    for (int t = 0; t < 4; t++) {
        int decided, passes;
        const double s = lanes_row(n, a, x, lane_counts[t], &decided, &passes);
        if (!oz_same_bits(s, ex)) {
            fprintf(stderr, "%s (n %d, %d lanes, %d passes): %a, exact %a\n", what, n,
                    lane_counts[t], passes, s, ex);
            CHECK(0);
        }
        CHECK(passes == (decided ? 1 : 3));
        if (must_fall_back && decided) {
            fprintf(stderr, "%s (n %d, %d lanes): the fast path decided a row it must "
                            "decline\n", what, n, lane_counts[t]);
            CHECK(0);
        }
        if (t == 0) decided1 = decided;
    }
    if (oz_ref_dot(n, a, x, &ref) && isfinite(ex) && !oz_same_bits(ex, ref)) {
        fprintf(stderr, "%s (n %d): exact %a, MPFR %a\n", what, n, ex, ref);
        CHECK(0);
    }
    CHECK(oz_same_bits(krill_oz_row_gather(n, a, cols, 1, x, acc), ex));
    return decided1;
}

/* rows the fast path decides in one pass, and rows it must leave to the exact path (placed
 * among ordinary terms, so that the lanes holding the hard term differ) */
static void test_pass_structure(void)
{
    double a[MAX_LEN], x[MAX_LEN];
    int rows = 0, one_pass = 0, fell_back = 0;
    for (int r = 0; r < 600; r++) {      /* ordinary rows: one pass nearly always */
        const int n = 1 + (int)((r * 104729u) % 120);
        oz_ref_phi_vector(a, n, (double)(r % 5), 77000u + (uint64_t)r);
        oz_ref_phi_vector(x, n, (double)(r % 3), 88000u + (uint64_t)r);
        one_pass += check_passes(n, a, x, 0, "ordinary row");
        rows++;
    }
    printf("pass structure: %d of %d ordinary rows in one pass\n", one_pass, rows);
    CHECK(one_pass >= rows * 99 / 100);
    for (int r = 0; r < 400; r++) {      /* rows that must take all three passes */
        const int n = 4 + r % 60, at = (r * 31) % n, kind = r % 8;
        const double hard[8] = {1e-300, 1e300, INFINITY, NAN, 0x1p-1050, 0x1p401,
                                -INFINITY, 0x1p-900};
        for (int k = 0; k + 1 < n; k += 2) {   /* pairs that cancel exactly */
            a[k] = 1.0 + (double)((k * 7 + r) % 13) / 16.0;
            a[k + 1] = -a[k];
            x[k] = x[k + 1] = 0.75 + (double)((k + r) % 5) / 8.0;
        }
        if (n % 2) a[n - 1] = x[n - 1] = 0.0;
        a[at] = hard[kind];              /* a term the guard refuses: a product below 2^-800, */
        x[at] = 1.5;                     /* an operand of 2^401 or more, subnormal, Inf, NaN  */
        check_passes(n, a, x, 1, "hard row");
        fell_back++;
    }
    {   /* an exact zero whose products have rounding errors, 3 (0.1) + 2 (0.7) - 3 (0.1) -
         * 2 (0.7): +0, in one pass on every lane split (the errors cancel exactly at the
         * second level: a one-level compensated sum would have to decline); the same with
         * 1e300 (0.1) - 1e300 (0.1) added: out of range, +0 by the exact path */
        double c[6] = {3.0, 2.0, -3.0, -2.0, 1e300, -1e300}, y[6] = {0.1, 0.7, 0.1, 0.7, 0.1, 0.1};
        CHECK(check_passes(4, c, y, 0, "exact zero") == 1);
        CHECK(oz_same_bits(exact_row(4, c, y), 0.0));
        check_passes(6, c, y, 1, "exact zero out of range");
        CHECK(oz_same_bits(exact_row(6, c, y), 0.0));
        fell_back++;
    }
    printf("pass structure: %d rows left to the exact path, with lanes\n", fell_back);
}

/* ---- TwoProduct ----------------------------------------------------------------------------- */

__extension__ typedef __int128 oz_i128;

/* a x == p + e exactly, in integers: with b the sum of the exponents of the operands' last
 * places (a = ma 2^(ea - 53), 2^52 <= |ma| < 2^53), a x is ma mx 2^b, and p and e must be
 * integer multiples of 2^b below 2^107 (normal operands) */
static int exact_in_integers(double a, double x, double p, double e)
{
    int ea, ex, b;
    double pb, eb;
    if (a == 0.0 || x == 0.0) return p == 0.0 && e == 0.0;
    const int64_t ma = (int64_t)ldexp(frexp(a, &ea), 53), mx = (int64_t)ldexp(frexp(x, &ex), 53);
    b = ea - 53 + ex - 53;
    pb = ldexp(p, -b);
    eb = ldexp(e, -b);
    if (pb != floor(pb) || eb != floor(eb)) return 0;
    return (oz_i128)ma * mx == (oz_i128)pb + (oz_i128)eb;
}

/* a random double: 53-bit significand, sign, exponent in [e_lo, e_hi] */
static double random_double(uint64_t *state, int e_lo, int e_hi)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    {
        const double m = 1.0 + (double)(z & ((1ull << 52) - 1)) * 0x1p-52;   /* [1, 2) */
        const int e = e_lo + (int)((z >> 52) % (uint64_t)(e_hi - e_lo + 1));
        return (z >> 63 ? -1.0 : 1.0) * ldexp(m, e);
    }
}

/* a guarded term's TwoProduct is exact (and the guard passes it) */
static int check_two_prod(double a, double x)
{
    double e;
    const double p = krill_oz_two_prod(a, x, &e);
    const int ok = oz_same_bits(p, a * x) && e == fma(a, x, -p) &&
                   exact_in_integers(a, x, p, e) && krill_oz_fast_guard(a, x, p);
    if (!ok) {
        fprintf(stderr, "TwoProduct %a * %a: p %a e %a (fma %a)\n", a, x, p, e, fma(a, x, -p));
        CHECK(0);
    }
    return ok;
}

static void test_two_prod(void)
{
    static const double ext[] = {0x1p-400, 0x1.0000000000001p-400, 0x1.fffffffffffffp-400,
                                 0x1p400, 0x1.fffffffffffffp400, 0x1.fffffffffffffp-1,
                                 0x1.0000000000001p0, 0x1.5555555555555p-2, 3.0, 0x1.fffffffp200,
                                 0x1.8000000000001p-200, 0.0};
    /* the guard's corners: a normal operand as small as 2^-1022 whose product reaches 2^-800 */
    static const double tiny[][2] = {{0x1p-1022, 0x1p222}, {0x1.fffffffffffffp-1022, 0x1.fffffffffffffp221},
                                     {0x1.0000000000001p-1022, 0x1.fffffffffffffp399}, {0x1p-400, 0x1p-400},
                                     {0x1.fffffffffffffp-601, 0x1.0000000000001p-200}};
    const int n_ext = (int)(sizeof ext / sizeof ext[0]);
    uint64_t state = 12345;
    int bad = 0, checked = 0;
#if defined(__FMA__)
    printf("TwoProduct: the hardware FMA (this host build has __FMA__)\n");
#else
    printf("TwoProduct: Dekker's product over Veltkamp's split (no __FMA__)\n");
#endif
    for (int i = 0; i < n_ext; i++)      /* every pair of extremes, every sign */
        for (int j = 0; j < n_ext; j++)
            for (int sgn = 0; sgn < 4; sgn++) {
                bad += !check_two_prod(sgn & 1 ? -ext[i] : ext[i], sgn & 2 ? -ext[j] : ext[j]);
                checked++;
            }
    for (int i = 0; i < (int)(sizeof tiny / sizeof tiny[0]); i++) {
        bad += !check_two_prod(tiny[i][0], tiny[i][1]) + !check_two_prod(-tiny[i][1], tiny[i][0]);
        checked += 2;
    }
    for (int k = 0; k < 200000; k++) {   /* random operands, and extremes times random ones */
        const double a = random_double(&state, -400, 399), x = random_double(&state, -400, 399);
        /* a normal operand anywhere, its partner so that a x >= 2^-800 */
        const double b = random_double(&state, -1022, 399);
        const int eb = ilogb(b), lo = -800 - eb > -1022 ? -800 - eb : -1022;
        const double y = random_double(&state, lo, 399);
        bad += !check_two_prod(a, x);
        bad += !check_two_prod(ext[k % n_ext], x);
        bad += !check_two_prod(b, y);
        checked += 3;
    }
    {   /* what the guard refuses: a subnormal operand, one of 2^401 or more, a product of
         * normal operands below 2^-800 (its error may not be representable), Inf, NaN */
        const double refused[][2] = {{0x1p-1074, 1.0}, {0x1p401, 1.0},
                                     {0x1p-1022, 0x1.fffffffffffffp221}, {0x1p-500, 0x1p-301},
                                     {INFINITY, 1.0}, {NAN, 1.0}};
        for (int i = 0; i < (int)(sizeof refused / sizeof refused[0]); i++) {
            const double a = refused[i][0], x = refused[i][1];
            CHECK(!krill_oz_fast_guard(a, x, a * x) && !krill_oz_fast_guard(x, a, x * a));
        }
        CHECK(krill_oz_fast_guard(0x1p-1074 * 0.0, 0x1p399, 0.0));   /* zero times anything */
    }
    {   /* the integer check itself rejects an error term rounded to a float's 24 bits:
         * (1 - 2^-53)(1 + 2^-52) = 1 + 2^-53 - 2^-105, p = 1, e = 2^-53 - 2^-105 */
        const double a = 0x1.fffffffffffffp-1, x = 0x1.0000000000001p0;
        double e;
        const double p = krill_oz_two_prod(a, x, &e);
        CHECK(p == 1.0 && e == 0x1p-53 - 0x1p-105);
        CHECK(!exact_in_integers(a, x, p, (double)(float)e));
    }
    printf("TwoProduct: %d of %d products exact\n", checked - bad, checked);
    CHECK(bad == 0);
}

/* ---- the CPU loops' variants ------------------------------------------------------------ */

static int same_state(const krill_oz_fast *f, const krill_oz_fast *g)
{
    return oz_same_bits(f->hi, g->hi) && oz_same_bits(f->mid, g->mid) &&
           oz_same_bits(f->lo, g->lo) && oz_same_bits(f->t, g->t) && f->m == g->m &&
           f->ok == g->ok;
}

/* krill_oz_fast_terms and krill_oz_fast_rows_unguarded as dispatched (the -mfma and AVX2
 * variants where the host has the instructions) leave the state of the generic loops, bit
 * for bit, on rows of every length up to MAX_LEN and range phi 0 to 8, a term the guard
 * refuses included; the unguarded rows equal the guarded generic loop wherever the ranges
 * pass */
static void test_fast_loops(void)
{
    double a[MAX_LEN], x[MAX_LEN];
    int same = 0, rows = 0, unguarded_same = 0, guarded_same = 0, guarded_checked = 0;
    printf("fast-path loops: %s\n", krill_oz_fast_host_fma()
                                        ? "the FMA variant runs on this host"
                                        : "no FMA variant on this host (generic against itself)");
    for (int r = 0; r < 2000; r++) {
        const int n = 1 + (int)((r * 7919u) % MAX_LEN);
        krill_oz_fast f, g, h;
        oz_ref_phi_vector(a, n, (double)(r % 9), 91000u + (uint64_t)r);
        oz_ref_phi_vector(x, n, (double)(r % 5), 92000u + (uint64_t)r);
        if (r % 97 == 0) a[r % n] = 1e-300;
        krill_oz_fast_init(&f);
        krill_oz_fast_init(&g);
        krill_oz_fast_init(&h);
        krill_oz_fast_terms(&f, a, x, n);
        krill_oz_fast_terms_generic(&g, a, x, n);
        krill_oz_fast_rows_generic(&h, a, x, 0, n);   /* guarded: the reference below */
        same += same_state(&f, &g);
        rows++;
        /* without the guard: the dispatched loop (the AVX2 one written with vector types)
         * against the generic; and against the guarded loop where every term passes the
         * guard (the guard only clears ok) */
        {
            krill_oz_fast u, v;
            krill_oz_range ra, rx;
            krill_oz_fast_init(&u);
            krill_oz_fast_init(&v);
            krill_oz_fast_rows_unguarded(&u, a, x, 0, n);
            krill_oz_fast_rows_unguarded_generic(&v, a, x, 0, n);
            krill_oz_range_init(&ra);
            krill_oz_range_init(&rx);
            krill_oz_range_rows(&ra, a, 0, n);
            krill_oz_range_rows(&rx, x, 0, n);
            unguarded_same += same_state(&u, &v);
            if (krill_oz_range_ok(&ra, &rx)) {
                guarded_checked++;
                guarded_same += same_state(&u, &h) && h.ok;
            }
        }
    }
    printf("fast-path loops: %d of %d rows the same state; unguarded %d of %d, and as the "
           "guarded loop on %d of %d rows whose ranges pass\n", same, rows, unguarded_same,
           rows, guarded_same, guarded_checked);
    CHECK(same == rows);
    CHECK(unguarded_same == rows);
    CHECK(guarded_checked > rows / 2 && guarded_same == guarded_checked);
}

/* krill_oz_fast_terms4 (dispatched and generic): four rows at once leave each row the state
 * of krill_oz_fast_terms_generic on it alone, for rows of lengths 0 to MAX_LEN in every
 * combination of shortest and longest, from a fresh state and from one with terms in it
 * (the spmv's long rows arrive with full chunks summed), a refused term included */
static void test_fast_terms4(void)
{
    static double a[4][MAX_LEN], x[4][MAX_LEN];
    int same = 0, groups = 0;
    for (int r = 0; r < 500; r++) {
        const double *pa[4] = {a[0], a[1], a[2], a[3]}, *px[4] = {x[0], x[1], x[2], x[3]};
        int n[4];
        krill_oz_fast f[4], g[4], ref[4];
        for (int l = 0; l < 4; l++) {
            n[l] = (int)(((unsigned)r * 7919u + (unsigned)l * 104729u) % (MAX_LEN + 1));
            if (r % 11 == l) n[l] = 0;
            oz_ref_phi_vector(a[l], n[l] ? n[l] : 1, (double)((r + l) % 9),
                              93000u + 4u * r + l);
            oz_ref_phi_vector(x[l], n[l] ? n[l] : 1, (double)((r + 2 * l) % 5),
                              94000u + 4u * r + l);
            if (r % 37 == l && n[l] > 0) a[l][r % n[l]] = 1e-300;
            krill_oz_fast_init(&ref[l]);
            if (r % 3 == 0) krill_oz_fast_terms_generic(&ref[l], x[l], a[l], n[l] / 2);
            f[l] = g[l] = ref[l];
            krill_oz_fast_terms_generic(&ref[l], a[l], x[l], n[l]);
        }
        krill_oz_fast_terms4(f, pa, px, n);
        krill_oz_fast_terms4_generic(g, pa, px, n);
        for (int l = 0; l < 4; l++)
            same += same_state(&f[l], &ref[l]) && same_state(&g[l], &ref[l]);
        groups += 4;
    }
    printf("fast-path four rows at once (%s): %d of %d rows the same state\n",
           krill_oz_fast_host_avx2() ? "AVX2 on this host" : "one row after the other", same,
           groups);
    CHECK(same == groups);
}

int main(void)
{
    for (int k = 0; k < MAX_LEN; k++) cols[k] = k;
    if (!oz_ref_have_mpfr()) printf("MPFR not available: the exact path is checked against the fast path only\n");
    test_random_rows();
    test_midpoints();
    test_exact_tail();
    test_out_of_range();
    test_adversarial();
    test_pass_structure();
    test_two_prod();
    test_fast_loops();
    test_fast_terms4();
    return tu_finish("test_ozaki_row");
}
