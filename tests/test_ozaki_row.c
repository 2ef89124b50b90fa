/* tests/test_ozaki_row.c - the row sums of ozaki/ozaki_row.h on the host: krill_oz_row_gather
 * (fast path, else exact path) and the exact path alone (krill_oz_dot_seq in exact mode)
 * against MPFR, and the fast path (krill_oz_fast_*) against the exact path. Whenever the fast path claims a result it must be the exact path's bits; it must
 * decline rows whose sum lies at or near a midpoint between two doubles, rows with operands
 * out of its range and zero sums with something left over; and on ordinary rows it must
 * decide almost all (else it would be no fast path). Rows are also split among 1..8 "lanes"
 * whose states are merged, as a GPU kernel does. */
#include <float.h>
#include <math.h>
#include <string.h>

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
    CHECK(!fast_row(2, a, x, 1, &s));                     /* a tie is never the fast path's */
    check_row(3, a, x, "above the midpoint");             /* rounds up */
    CHECK(exact_row(3, a, x) == 1.0 + 0x1p-52);
    a[2] = -0x1p-110;
    check_row(3, a, x, "below the midpoint");             /* rounds down */
    CHECK(exact_row(3, a, x) == 1.0);
    {
        double c[3] = {3.0, -3.0, 0.0}, y[3] = {0.1, 0.1, 5.0};
        check_row(3, c, y, "exact zero");                 /* the products' errors cancel too: */
        CHECK(oz_same_bits(exact_row(3, c, y), 0.0));     /* +0 (the fast path declines: its  */
        CHECK(!fast_row(3, c, y, 1, &s));                 /* bound is not zero)               */
        c[2] = 1e-30;                                     /* 3 (0.1) - 3 (0.1) + tiny */
        check_row(3, c, y, "cancellation");
    }
    {   /* -0 products only: +0 */
        double c[2] = {-0.0, 0.0}, y[2] = {1.0, -2.0};
        CHECK(fast_row(2, c, y, 1, &s) && oz_same_bits(s, 0.0));
        CHECK(oz_same_bits(exact_row(2, c, y), 0.0));
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

int main(void)
{
    for (int k = 0; k < MAX_LEN; k++) cols[k] = k;
    if (!oz_ref_have_mpfr()) printf("MPFR not available: the exact path is checked against the fast path only\n");
    test_random_rows();
    test_midpoints();
    test_out_of_range();
    test_adversarial();
    return tu_finish("test_ozaki_row");
}
