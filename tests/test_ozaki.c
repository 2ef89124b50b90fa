/* Reproducible mode on the CPU (ozaki/): krill_ctx_set_repro; the arithmetic of
 * ozaki_math.h (rho, exponents, the one rounding against MPFR); exact mode against the MPFR
 * reference bit for bit on the (rand - 0.5) exp(phi randn) family (phi in 0, 1, 2, 4, 8) and
 * on edge cases (n = 0, zeros, subnormals, huge range, cancellation, near DBL_MAX, Inf/NaN);
 * identical bits for 1, 2, 3 and 7 threads, for the pair and general paths and with exact
 * mode's fast path on and off, in every mode; the fast path deciding what it must (well-
 * conditioned dots, x'x, norms, mdot columns, the stats variants) and declining what it must
 * (exact and near cancellation, terms the guard refuses, Inf/NaN), per column,
 * and never tried outside exact mode;
 * fixed S and fast mode against Algorithm 1 written out literally; plain mode differing
 * across thread counts (so that the equalities prove something); nrm2, mdot, the stats
 * variants, the krill_blas / krill_vec dispatch; no allocation on the CPU path.
 * Without MPFR the MPFR comparisons are skipped with a message and the rest runs. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_impl.h"
#include "ozaki/ozaki_impl.h"
#include "ozaki_ref.h"
#include "testutil.h"

#define NT 4
static const int thread_counts[NT] = {1, 2, 3, 7};
static krill_ctx *ctxs[NT];


static int mpfr_checks = 0;

/* the pair or the general path; exact mode's fast path on or off */
static void set_paths_fast(int general, int fast)
{
    krill_ozaki_tuning t;
    krill_ozaki_tuning_get(&t);
    t.cpu_reg_slices = general ? 0 : 16;
    t.cpu_min_n = 1;   /* thread even small inputs */
    t.fast_path = fast;
    krill_ozaki_tuning_set(&t);
}

static void set_paths(int general) { set_paths_fast(general, 1); }

static void set_mode_all(const oz_mode *m)
{
    for (int c = 0; c < NT; c++) CHECK_OK(krill_ctx_set_repro(ctxs[c], m->mode, m->slices));
}

static double bits_of(double v, char *buf)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    sprintf(buf, "%.17g (0x%016llx)", v, (unsigned long long)b);
    return v;
}

static void report(const char *what, const char *mode_name, int64_t n, double got, double want)
{
    char a[64], b[64];
    bits_of(got, a);
    bits_of(want, b);
    fprintf(stderr, "  %s [%s, n = %lld]: got %s, expected %s\n", what, mode_name, (long long)n,
            a, b);
}

/* x'y in mode m on every thread count, both paths, fast path on and off: all the same bits;
 * returns them */
static double dot_everywhere(const oz_mode *m, int64_t n, const double *x, const double *y,
                             const char *what)
{
    double first = 0.0;
    int have = 0;
    set_mode_all(m);
    for (int fast = 0; fast < 2; fast++)
        for (int general = 0; general < 2; general++) {
            set_paths_fast(general, fast);
            for (int c = 0; c < NT; c++) {
                double r = -1.0;
                CHECK_OK(krill_ozaki_dot(ctxs[c], n, x, y, &r));
                if (!have) {
                    first = r;
                    have = 1;
                } else {
                    tu_checks++;
                    if (!oz_same_bits(r, first)) {
                        tu_failures++;
                        fprintf(stderr, "%s: %d threads, %s path, fast path %s differ:\n", what,
                                thread_counts[c], general ? "general" : "pair",
                                fast ? "on" : "off");
                        report(what, m->name, n, r, first);
                    }
                }
            }
        }
    set_paths(0);
    return first;
}

/* exact mode equals MPFR (bits) and every mode agrees across threads and paths */
static void check_dot(int64_t n, const double *x, const double *y, const char *what)
{
    double ref;
    const double exact = dot_everywhere(&oz_modes[0], n, x, y, what);
    if (oz_ref_dot(n, x, y, &ref)) {
        mpfr_checks++;
        tu_checks++;
        if (!oz_same_bits(exact, ref)) {
            tu_failures++;
            fprintf(stderr, "%s: exact mode is not MPFR's correctly rounded value\n", what);
            report(what, "exact", n, exact, ref);
        }
    }
    for (int k = 1; k < OZ_NMODES; k++) (void)dot_everywhere(&oz_modes[k], n, x, y, what);
}

/* ---- the context API ---------------------------------------------------------------------- */

static void test_ctx_api(void)
{
    krill_ctx *ctx = tu_cpu_ctx(2);
    int s = -1;
    CHECK(krill_ctx_repro(ctx, &s) == KRILL_REPRO_OFF && s == 0);
    CHECK_OK(krill_ctx_set_repro(ctx, KRILL_REPRO_OZAKI, 0));
    CHECK(krill_ctx_repro(ctx, &s) == KRILL_REPRO_OZAKI && s == 0);
    CHECK_OK(krill_ctx_set_repro(ctx, KRILL_REPRO_OZAKI_FAST, 3));
    CHECK(krill_ctx_repro(ctx, NULL) == KRILL_REPRO_OZAKI_FAST);
    CHECK(krill_ctx_repro(ctx, &s) == KRILL_REPRO_OZAKI_FAST && s == 3);
    CHECK_STATUS(krill_ctx_set_repro(ctx, (krill_repro_mode)3, 0), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "mode = 3") != NULL);
    CHECK_STATUS(krill_ctx_set_repro(ctx, KRILL_REPRO_OZAKI, -2), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "slices = -2") != NULL);
    CHECK_STATUS(krill_ctx_set_repro(ctx, KRILL_REPRO_OZAKI_FAST, 0), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "slices = 0") != NULL);
    CHECK_STATUS(krill_ctx_set_repro(ctx, KRILL_REPRO_OFF, 2), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "slices = 2") != NULL);
    CHECK(krill_ctx_repro(ctx, &s) == KRILL_REPRO_OZAKI_FAST && s == 3);   /* unchanged */
    CHECK_OK(krill_ctx_set_repro(ctx, KRILL_REPRO_OFF, 0));
    CHECK(krill_ctx_repro(ctx, &s) == KRILL_REPRO_OFF && s == 0);
    CHECK_STATUS(krill_ctx_set_repro(NULL, KRILL_REPRO_OZAKI, 0), KRILL_ERR_ARG);
    /* argument checks of the internal API */
    {
        double r;
        CHECK_STATUS(krill_ozaki_dot(ctx, -1, &r, &r, &r), KRILL_ERR_ARG);
        CHECK(strstr(krill_last_error(), "n = -1") != NULL);
        CHECK_STATUS(krill_ozaki_dot(ctx, KRILL_OZ_MAX_N + 1, &r, &r, &r), KRILL_ERR_ARG);
        CHECK(strstr(krill_last_error(), "limit") != NULL);
        CHECK_STATUS(krill_ozaki_mdot(ctx, 10, 2, &r, 5, &r, &r), KRILL_ERR_ARG);
        CHECK(strstr(krill_last_error(), "ldv = 5") != NULL);
        CHECK_STATUS(krill_ozaki_mdot(ctx, 10, -1, &r, 10, &r, &r), KRILL_ERR_ARG);
    }
    krill_ctx_destroy(&ctx);
}

/* ---- ozaki_math.h ------------------------------------------------------------------------ */

static void test_math(void)
{
    CHECK(krill_oz_rho(1) == 27);            /* (53 + 0) / 2 up */
    CHECK(krill_oz_rho(2) == 27);            /* 54 / 2 */
    CHECK(krill_oz_rho(3) == 28);            /* L = 2: 55 / 2 up */
    CHECK(krill_oz_rho(4) == 28);
    CHECK(krill_oz_rho(5) == 28);            /* L = 3: 56 / 2 */
    CHECK(krill_oz_rho((int64_t)1 << 20) == 37);
    CHECK(krill_oz_rho(((int64_t)1 << 20) + 1) == 37);   /* L = 21: 74 / 2 */
    CHECK(krill_oz_rho((int64_t)1 << 26) == 40);
    CHECK(krill_oz_rho(KRILL_OZ_MAX_N) == 45);
    for (int64_t n = 1; n < 5000; n = n * 3 + 1) {   /* n 2^(2d) <= 2^53 and rho is the least */
        const int rho = krill_oz_rho(n), d = 53 - rho;
        CHECK(ldexp((double)n, 2 * d) <= 0x1p53);
        CHECK(ldexp((double)n, 2 * (d + 1)) > 0x1p53);
    }
    CHECK(krill_oz_exponent(1.0) == 0 && krill_oz_exponent(-1.5) == 0);
    CHECK(krill_oz_exponent(0x1p-1074) == -1074 && krill_oz_exponent(0x1.8p-1070) == -1070);
    CHECK(krill_oz_exponent(DBL_MAX) == 1023 && krill_oz_exponent(0x1p-1022) == -1022);
    CHECK(krill_oz_tau(1.0) == 0 && krill_oz_tau(1.5) == 1 && krill_oz_tau(0.75) == 0);
    CHECK(krill_oz_tau(DBL_MAX) == 1024 && krill_oz_tau(0x1p-1074) == -1074);
    CHECK(krill_oz_tau(0x1.8p-1073) == -1072 && krill_oz_tau(0x1p-1073) == -1073);
    CHECK(krill_oz_lsb(1.0) == 0 && krill_oz_lsb(3.0) == 0 && krill_oz_lsb(-6.0) == 1);
    CHECK(krill_oz_lsb(0.1) == -55 && krill_oz_lsb(0x1p-1074) == -1074);
    CHECK(krill_oz_lsb(DBL_MAX) == 971 && krill_oz_lsb(0x1.8p-1073) == -1074);
    CHECK(krill_oz_pow2(-1074) == 0x1p-1074 && krill_oz_pow2(1023) == 0x1p1023);
    CHECK(krill_oz_pow2(-1030) == 0x1p-1030 && krill_oz_pow2(0) == 1.0);
    CHECK(krill_oz_mul_pow2(0x1p-1074, 2000) == 0x1p926);
    CHECK(krill_oz_mul_pow2(0x1p1000, -2070) == 0x1p-1070);
    {   /* the digits of one value rebuild it exactly */
        const double v = -0x1.23456789abcdfp-3;
        /* d = 16, rho = 37, tau = -2: k0 = 35, R = v 2^(53 - 35) */
        double r = v * 0x1p18, sum = 0.0;
        for (int p = 0; p < 6; p++) {
            const double m = krill_oz_digit(&r, 0x1p16);
            CHECK(m == floor(m) && fabs(m) <= 0x1p16);
            sum += ldexp(m, 35 - 16 * p - 53);
        }
        CHECK(sum == v && r == 0.0);
    }
}

/* krill_oz_round on random diagonal sums, against MPFR: ordinary, subnormal and overflowing
 * exponents, cancelling signs, one nonzero diagonal, exact ties */
static void test_round(void)
{
    uint64_t s = 12345;
    int count = 0;
    if (!oz_ref_have_mpfr()) {
        printf("MPFR absent: krill_oz_round is not compared with MPFR\n");
        return;
    }
    for (int trial = 0; trial < 20000; trial++) {
        int64_t acc[40], copy[40];
        double got, want;
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        const int d = 8 + (int)(s % 19);                  /* 8 .. 26 */
        const int nd = 1 + (int)((s >> 8) % 39);
        const int shape = (int)((s >> 16) % 6);
        int e_last;
        switch ((s >> 24) % 5) {
        case 0: e_last = -(int)((s >> 32) % 200); break;                   /* ordinary */
        case 1: e_last = -1074 - nd * d - (int)((s >> 32) % 120); break;   /* subnormal */
        case 2: e_last = 1024 - nd * d - (int)((s >> 32) % 90); break;     /* near overflow */
        case 3: e_last = -2200 - (int)((s >> 32) % 200); break;            /* deep underflow */
        default: e_last = -1100 + (int)((s >> 32) % 100); break;
        }
        for (int c = 0; c < nd; c++) {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            int64_t v = (int64_t)(s >> 3) - ((int64_t)1 << 60);            /* |v| < 2^61 */
            if (shape == 1) v >>= (int)(s % 61);                           /* mixed sizes */
            if (shape == 2 && c > 0) v = 0;                                /* one diagonal */
            if (shape == 3) v = (c % 2 ? 1 : -1) * (int64_t)((s >> 40) % 5);   /* tiny, signs */
            if (shape == 4 && c == nd - 1) v = 0;
            acc[c] = v;
        }
        if (shape == 5 && nd >= 2) {   /* a tie: the top + exactly half an ulp below */
            acc[0] = (int64_t)1 << 40;
            for (int c = 1; c < nd; c++) acc[c] = 0;
            acc[nd - 1] = (nd - 1) * d > 60 ? 0 : (int64_t)1;
        }
        memcpy(copy, acc, sizeof copy);
        got = krill_oz_round(copy, nd, d, e_last, 0);
        if (!oz_ref_round_diagonals(acc, nd, d, e_last, &want)) break;
        count++;
        tu_checks++;
        if (!oz_same_bits(got, want)) {
            tu_failures++;
            if (tu_failures < 10) {
                fprintf(stderr, "krill_oz_round d = %d nd = %d e_last = %d shape %d:\n", d, nd,
                        e_last, shape);
                report("round", "-", nd, got, want);
            }
        }
    }
    mpfr_checks += count;
}

/* ---- dot products ------------------------------------------------------------------------- */

static void test_phi_family(void)
{
    static const double phis[] = {0, 1, 2, 4, 8};
    static const int64_t sizes[] = {1, 2, 3, 7, 100, 1000, 20000};
    for (int ip = 0; ip < 5; ip++)
        for (int is = 0; is < 7; is++) {
            const int64_t n = sizes[is];
            const int seeds = n <= 100 ? 6 : 2;
            for (int seed = 0; seed < seeds; seed++) {
                double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
                char what[96];
                oz_ref_phi_vector(x, n, phis[ip], 1000 * ip + 10 * is + seed + 1);
                oz_ref_phi_vector(y, n, phis[ip], 5000 * ip + 10 * is + seed + 2);
                snprintf(what, sizeof what, "phi = %g n = %lld seed %d", phis[ip], (long long)n,
                         seed);
                check_dot(n, x, y, what);
                /* fixed S and fast mode against Algorithm 1 written out literally */
                for (int k = 1; k < OZ_NMODES && n <= 1000; k++) {
                    double lit, got;
                    if (!oz_ref_dot_slices(n, x, y, oz_modes[k].slices,
                                           oz_modes[k].mode == KRILL_REPRO_OZAKI_FAST, &lit))
                        break;
                    CHECK_OK(krill_ctx_set_repro(ctxs[2], oz_modes[k].mode, oz_modes[k].slices));
                    CHECK_OK(krill_ozaki_dot(ctxs[2], n, x, y, &got));
                    mpfr_checks++;
                    tu_checks++;
                    if (!oz_same_bits(got, lit)) {
                        tu_failures++;
                        fprintf(stderr, "%s: not Algorithm 1's value\n", what);
                        report(what, oz_modes[k].name, n, got, lit);
                    }
                }
                /* y scaled to the ends of the exponent range: the same digits, new weights */
                if (n == 1000 && seed == 0) {
                    for (int64_t i = 0; i < n; i++) y[i] = ldexp(y[i], phis[ip] > 2 ? 900 : -980);
                    check_dot(n, x, y, "phi family, y scaled by 2^900 / 2^-980");
                    for (int64_t i = 0; i < n; i++) x[i] = ldexp(x[i], phis[ip] > 2 ? 60 : -80);
                    check_dot(n, x, y, "phi family, both scaled (results near the range ends)");
                }
                free(x);
                free(y);
            }
        }
}

static void test_edges(void)
{
    double x[64], y[64], r;
    const double tiny = 0x1p-1074, big = DBL_MAX;

    /* n = 0, on every mode and thread count: +0 */
    for (int k = 0; k < OZ_NMODES; k++) {
        r = dot_everywhere(&oz_modes[k], 0, x, y, "n = 0");
        CHECK(oz_same_bits(r, 0.0));
    }
    /* all zeros, signed zeros */
    for (int i = 0; i < 64; i++) {
        x[i] = i % 2 ? -0.0 : 0.0;
        y[i] = i - 30.5;
    }
    check_dot(64, x, y, "all-zero x");
    r = dot_everywhere(&oz_modes[0], 64, x, y, "all-zero x");
    CHECK(oz_same_bits(r, 0.0));
    /* exact cancellation: [a, -a] . [b, b] and a random vector against itself negated */
    oz_ref_phi_vector(x, 32, 4.0, 77);
    oz_ref_phi_vector(y, 32, 4.0, 78);
    for (int i = 0; i < 32; i++) {
        x[32 + i] = -x[i];
        y[32 + i] = y[i];
    }
    check_dot(64, x, y, "exact cancellation");
    r = dot_everywhere(&oz_modes[0], 64, x, y, "exact cancellation");
    CHECK(oz_same_bits(r, 0.0));
    x[63] = nextafter(x[63], 0.0);   /* cancellation leaving one tiny product */
    check_dot(64, x, y, "cancellation to one ulp");
    /* subnormals: products below 2^-1074, results rounding into the subnormals or to 0 */
    for (int i = 0; i < 16; i++) {
        x[i] = (i + 1) * tiny * (i % 3 ? 1 : -1);
        y[i] = ldexp(1.0 + i / 16.0, -3 - i);
    }
    check_dot(16, x, y, "subnormal x");
    for (int i = 0; i < 16; i++) y[i] = ldexp(1.5 + i, 1000 - 20 * i);
    check_dot(16, x, y, "subnormal x, huge y");
    x[0] = tiny;
    y[0] = 0.5;
    check_dot(1, x, y, "2^-1075: a tie rounds to even (0)");
    y[0] = 0.75;
    check_dot(1, x, y, "0.75 2^-1074 rounds up");
    x[0] = -tiny;
    y[0] = 0.25;
    check_dot(1, x, y, "a tiny negative rounds to -0");
    r = dot_everywhere(&oz_modes[0], 1, x, y, "-0");
    CHECK(oz_same_bits(r, -0.0));
    /* huge dynamic range: 2^1000-sized products cancelling, leaving the subnormal part */
    x[0] = 0x1p1000; y[0] = 0x1p20;
    x[1] = 0x1p1000; y[1] = -0x1p20;
    x[2] = tiny;     y[2] = 3.0;
    x[3] = 0x1.fffffffffffffp1000; y[3] = 0x1p-1074;
    x[4] = -0x1.fffffffffffffp1000; y[4] = 0x1p-1074;
    check_dot(5, x, y, "range 2^1020 .. 2^-1074 cancelling to 3 2^-1074");
    r = dot_everywhere(&oz_modes[0], 5, x, y, "range");
    CHECK(oz_same_bits(r, 3 * tiny));
    x[0] = 0x1p1000; y[0] = 0x1p-1000;   /* same vector lengths, products spanning 2^-2148.. */
    x[1] = tiny; y[1] = tiny;
    x[2] = -1.0; y[2] = 1.0;
    check_dot(3, x, y, "1 + 2^-2148 - 1");
    /* near DBL_MAX: overflowing products whose sum is finite, true overflow, rounding to Inf */
    x[0] = big; y[0] = 1.0;
    x[1] = big; y[1] = -1.0;
    x[2] = 1.0; y[2] = 2.0;
    check_dot(3, x, y, "DBL_MAX - DBL_MAX + 2");
    x[0] = big; y[0] = 2.0;
    x[1] = -big; y[1] = 1.5;
    check_dot(2, x, y, "2 DBL_MAX - 1.5 DBL_MAX");
    r = dot_everywhere(&oz_modes[0], 2, x, y, "DBL_MAX / 2");
    CHECK(oz_same_bits(r, big * 0.5));
    x[0] = big; y[0] = big;
    check_dot(1, x, y, "DBL_MAX^2 overflows");
    r = dot_everywhere(&oz_modes[0], 1, x, y, "overflow");
    CHECK(isinf(r) && r > 0);
    x[0] = big; y[0] = 1.0;
    x[1] = 0x1p970; y[1] = 1.0;   /* DBL_MAX + half an ulp: ties to even, which is 2^1024: Inf */
    check_dot(2, x, y, "DBL_MAX + ulp / 2");
    r = dot_everywhere(&oz_modes[0], 2, x, y, "DBL_MAX + ulp/2");
    CHECK(isinf(r));
    x[1] = 0x1.fffp969;           /* just below the tie: DBL_MAX */
    check_dot(2, x, y, "DBL_MAX + just under ulp / 2");
    x[0] = -big; y[0] = big;
    x[1] = big; y[1] = big;
    x[2] = 0x1p-1074; y[2] = 1.0;
    check_dot(3, x, y, "-DBL_MAX^2 + DBL_MAX^2 + 2^-1074");
    /* Inf and NaN, as IEEE: any NaN -> NaN, Inf 0 -> NaN, +Inf + -Inf -> NaN */
    {
        struct { double x0, y0, x1, y1; int expect; } sp[] = {
            {INFINITY, 2.0, 1.0, 1.0, 1},  {INFINITY, -2.0, 1.0, 1.0, -1},
            {-INFINITY, -3.0, big, big, 1}, {INFINITY, 0.0, 1.0, 1.0, 0},
            {INFINITY, 1.0, INFINITY, -1.0, 0}, {NAN, 1.0, 1.0, 1.0, 0},
            {1.0, NAN, INFINITY, 1.0, 0},   {0.0, 1.0, 1.0, -INFINITY, -1},
            {0.0, INFINITY, 0.0, 0.0, 0},   {INFINITY, INFINITY, 1.0, 1.0, 1},
        };
        for (size_t t = 0; t < sizeof sp / sizeof sp[0]; t++) {
            x[0] = sp[t].x0; y[0] = sp[t].y0; x[1] = sp[t].x1; y[1] = sp[t].y1;
            for (int k = 0; k < OZ_NMODES; k++) {
                r = dot_everywhere(&oz_modes[k], 2, x, y, "Inf/NaN");
                if (sp[t].expect == 0) CHECK(isnan(r));
                else CHECK(isinf(r) && (r > 0) == (sp[t].expect > 0));
            }
        }
    }
    /* one element with every digit full (n = 1: three slices of 26 bits) */
    x[0] = 0x1.fffffffffffffp0;
    y[0] = -0x1.5555555555555p-1;
    check_dot(1, x, y, "n = 1, full mantissas");
    x[1] = 0x1.0000000000001p0;
    y[1] = 0x1.ffffffffffffep-3;
    check_dot(2, x, y, "n = 2, full mantissas");
    /* integers: one slice each */
    for (int i = 0; i < 64; i++) {
        x[i] = i + 1;
        y[i] = 1.0;
    }
    check_dot(64, x, y, "integers");
    r = dot_everywhere(&oz_modes[0], 64, x, y, "integers");
    CHECK(r == 64.0 * 65.0 / 2.0);
}

/* a long vector with a wide range of magnitudes: the general path with many slices */
static void test_many_slices(void)
{
    const int64_t n = 30000;
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    oz_ref_phi_vector(x, n, 1.0, 901);
    oz_ref_phi_vector(y, n, 1.0, 902);
    for (int64_t i = 0; i < n; i++) {
        x[i] = ldexp(x[i], (int)(i % 61) * 30 - 900);   /* 2^-900 .. 2^900 */
        y[i] = ldexp(y[i], -(int)(i % 47) * 20 + 400);
    }
    check_dot(n, x, y, "range 2^1800 (exact mode needs > 100 slices)");
    {
        krill_oz_params p;
        double xs[2] = {0x1p900, -1000.0}, ys[2] = {0x1p400, -600.0};
        krill_oz_params_make(n, xs, ys, 0, 0, &p);
        CHECK(p.sx > 16 && p.sy > 16);   /* so the general path was used */
    }
    free(x);
    free(y);
}

/* plain mode is not reproducible across thread counts (else the tests above prove little) */
static void test_plain_differs(void)
{
    const int64_t n = 200000;
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    int differs = 0;
    for (int seed = 0; seed < 8 && !differs; seed++) {
        double r[NT];
        oz_ref_phi_vector(x, n, 4.0, 300 + seed);
        oz_ref_phi_vector(y, n, 4.0, 400 + seed);
        for (int c = 0; c < NT; c++) {
            CHECK_OK(krill_ctx_set_repro(ctxs[c], KRILL_REPRO_OFF, 0));
            CHECK_OK(krill_blas_dot(ctxs[c], n, x, y, &r[c]));
        }
        for (int c = 1; c < NT; c++) differs |= !oz_same_bits(r[c], r[0]);
    }
    CHECK(differs);
    free(x);
    free(y);
}

static void test_nrm2(void)
{
    static const int scales[] = {0, 600, -600, 1000, -1000};
    const int64_t n = 5000;
    double *x = malloc((size_t)n * sizeof *x), unscaled = 0.0;
    for (int is = 0; is < 5; is++) {
        double ref = 0.0, r[NT];
        int have_ref;
        oz_ref_phi_vector(x, n, 2.0, 55);
        for (int64_t i = 0; i < n; i++) x[i] = ldexp(x[i], scales[is]);
        have_ref = oz_ref_dot(n, x, x, &ref);
        for (int k = 0; k < OZ_NMODES; k++) {
            set_mode_all(&oz_modes[k]);
            for (int c = 0; c < NT; c++) CHECK_OK(krill_ozaki_nrm2(ctxs[c], n, x, &r[c]));
            for (int c = 1; c < NT; c++) CHECK(oz_same_bits(r[c], r[0]));
            set_paths_fast(0, 0);   /* the exact path alone: the same bits */
            for (int c = 0; c < NT; c++) {
                double off = -1.0;
                CHECK_OK(krill_ozaki_nrm2(ctxs[c], n, x, &off));
                CHECK(oz_same_bits(off, r[0]));
            }
            set_paths(0);
            if (k != 0) continue;
            CHECK(isfinite(r[0]) && r[0] > 0.0);   /* no overflow or underflow */
            /* where fl(x'x) is normal: exactly sqrt(fl(x'x)) */
            if (have_ref && ref > 0x1p-1022 && isfinite(ref)) CHECK(r[0] == sqrt(ref));
            /* scaling x by 2^s scales the norm by exactly 2^s, past the range of x'x too */
            if (is == 0) unscaled = r[0];
            else CHECK(r[0] == ldexp(unscaled, scales[is]));
        }
    }
    /* n = 0, zeros, Inf, NaN */
    CHECK_OK(krill_ctx_set_repro(ctxs[1], KRILL_REPRO_OZAKI, 0));
    {
        double r = -1.0, v[3] = {0.0, -0.0, 0.0};
        CHECK_OK(krill_ozaki_nrm2(ctxs[1], 0, v, &r));
        CHECK(oz_same_bits(r, 0.0));
        CHECK_OK(krill_ozaki_nrm2(ctxs[1], 3, v, &r));
        CHECK(oz_same_bits(r, 0.0));
        v[1] = -INFINITY;
        CHECK_OK(krill_ozaki_nrm2(ctxs[1], 3, v, &r));
        CHECK(isinf(r) && r > 0);
        v[2] = NAN;
        CHECK_OK(krill_ozaki_nrm2(ctxs[1], 3, v, &r));
        CHECK(isnan(r));
        v[0] = 3.0; v[1] = -4.0; v[2] = 0.0;
        CHECK_OK(krill_ozaki_nrm2(ctxs[1], 3, v, &r));
        CHECK(r == 5.0);
        v[0] = 3e300; v[1] = -4e300;
        CHECK_OK(krill_ozaki_nrm2(ctxs[1], 3, v, &r));
        CHECK_CLOSE(r / 5e300, 1.0, 1e-15);
        v[0] = 3e-320; v[1] = -4e-320;   /* subnormal: sqrt of a scaled sum, rounded once more */
        CHECK_OK(krill_ozaki_nrm2(ctxs[1], 3, v, &r));
        CHECK(fabs(r - 5e-320) <= 0x1p-1074);
    }
    free(x);
}

/* mdot: every column equals the single dot (bits), groups of more than KRILL_OZ_KMAX, the
 * stats variants, ldv > n, special and zero columns among ordinary ones; fast path on and
 * off (every result the bits of the exact path alone) */
static void test_mdot(void)
{
    const int64_t n = 3000, ldv = 3011;
    const int k = 37;
    double *V = malloc((size_t)(ldv * k) * sizeof *V), *w = malloc((size_t)n * sizeof *w);
    double res[37], res2[37], base[37], one, vst[2 * 37], wst[2];
    oz_ref_phi_vector(w, n, 2.0, 7);
    for (int j = 0; j < k; j++) {
        oz_ref_phi_vector(V + j * ldv, n, (double)(j % 5) * 2.0, 100 + j);
        for (int64_t i = n; i < ldv; i++) V[j * ldv + i] = NAN;   /* never read */
    }
    for (int64_t i = 0; i < n; i++) {
        V[3 * ldv + i] = 0.0;                                      /* a zero column */
        V[5 * ldv + i] = ldexp(V[5 * ldv + i], 700 - (int)(i % 90) * 20);   /* general path */
    }
    V[9 * ldv + 17] = INFINITY;                                    /* a special column */
    for (int im = 0; im < OZ_NMODES; im++) for (int fast = 0; fast < 2; fast++) {
        for (int c = 0; c < NT; c++) {
            set_paths_fast(c % 2, fast);
            CHECK_OK(krill_ctx_set_repro(ctxs[c], oz_modes[im].mode, oz_modes[im].slices));
            CHECK_OK(krill_ozaki_mdot(ctxs[c], n, k, V, ldv, w, res));
            if (fast == 0 && c == 0) memcpy(base, res, sizeof base);   /* the exact path */
            for (int j = 0; j < k; j++) CHECK(oz_same_bits(res[j], base[j]));
            for (int j = 0; j < k; j++) {
                CHECK_OK(krill_ozaki_dot(ctxs[c], n, V + j * ldv, w, &one));
                tu_checks++;
                if (!oz_same_bits(res[j], one)) {
                    tu_failures++;
                    fprintf(stderr, "mdot column %d, %d threads:\n", j, thread_counts[c]);
                    report("mdot", oz_modes[im].name, n, res[j], one);
                }
                CHECK_OK(krill_ozaki_stats(ctxs[c], n, V + j * ldv, vst + 2 * j));
            }
            CHECK_OK(krill_ozaki_stats(ctxs[c], n, w, wst));
            CHECK_OK(krill_ozaki_mdot_stats(ctxs[c], n, k, V, ldv, vst, w, wst, res2));
            for (int j = 0; j < k; j++) CHECK(oz_same_bits(res2[j], res[j]));
            CHECK_OK(krill_ozaki_dot_stats(ctxs[c], n, V, vst, w, wst, &one));
            CHECK(oz_same_bits(one, res[0]));
            CHECK(isinf(res[9]) && oz_same_bits(res[3], 0.0));
        }
    }
    set_paths(0);
    if (oz_ref_have_mpfr()) {
        double ref;
        CHECK_OK(krill_ctx_set_repro(ctxs[3], KRILL_REPRO_OZAKI, 0));
        CHECK_OK(krill_ozaki_mdot(ctxs[3], n, k, V, ldv, w, res));
        for (int j = 0; j < k; j++) {
            if (j == 9) continue;
            oz_ref_dot(n, V + j * ldv, w, &ref);
            mpfr_checks++;
            CHECK(oz_same_bits(res[j], ref));
        }
    }
    /* stats: lower lsb is allowed (same exact result), k = 0 is a no-op */
    CHECK_OK(krill_ozaki_stats(ctxs[0], n, w, wst));
    CHECK(wst[0] > 0.0 && wst[1] < 0.0);
    {
        double lower[2] = {wst[0], -1074.0}, r1, r2;
        CHECK_OK(krill_ctx_set_repro(ctxs[0], KRILL_REPRO_OZAKI, 0));
        CHECK_OK(krill_ozaki_dot_stats(ctxs[0], n, w, wst, V, vst, &r1));
        CHECK_OK(krill_ozaki_dot_stats(ctxs[0], n, w, lower, V, vst, &r2));
        CHECK(oz_same_bits(r1, r2));
        CHECK_OK(krill_ozaki_mdot(ctxs[0], n, 0, V, ldv, w, res));
    }
    free(V);
    free(w);
}

/* ---- exact mode's fast path ---------------------------------------------------------------- */

/* The verdicts of the last call on ctxs[c] (first k columns) against want (1 decided, 0 the
 * exact path, -1 not tried) */
/* want[j]: 1 decided, 0 declined, -1 not tried, VERDICT_EITHER (an exact tie: decided where
 * the split left no third-level error, declined elsewhere; the bits are checked either way) */
#define VERDICT_EITHER 2
static void check_verdicts(int c, int k, const int *want, const char *what)
{
    int got[KRILL_OZ_KMAX];
    CHECK_OK(krill_ozaki_fast_verdicts(ctxs[c], k, got));
    for (int j = 0; j < k; j++) {
        tu_checks++;
        if (want[j] != VERDICT_EITHER && got[j] != want[j]) {
            tu_failures++;
            fprintf(stderr, "%s: %d threads, column %d: fast path verdict %d, expected %d\n",
                    what, thread_counts[c], j, got[j], want[j]);
        }
    }
}

/* x'y in exact mode with the fast path on, on every thread count: the verdict must be
 * `decided`, the bits those of the exact path alone (fast path off) and MPFR's; the same for
 * the stats variant (the fast path runs there too) */
static void check_fast_dot(int64_t n, const double *x, const double *y, int decided,
                           const char *what)
{
    double off, ref, xs[2], ys[2];
    set_mode_all(&oz_modes[0]);
    set_paths_fast(0, 0);
    CHECK_OK(krill_ozaki_dot(ctxs[0], n, x, y, &off));
    check_verdicts(0, 1, (const int[]){-1}, what);
    if (oz_ref_dot(n, x, y, &ref)) {
        mpfr_checks++;
        tu_checks++;
        if (!oz_same_bits(off, ref)) {
            tu_failures++;
            report(what, "exact, fast path off", n, off, ref);
        }
    }
    CHECK_OK(krill_ozaki_stats(ctxs[0], n, x, xs));
    CHECK_OK(krill_ozaki_stats(ctxs[0], n, y, ys));
    set_paths(0);
    for (int c = 0; c < NT; c++) {
        double r = -1.0, rs = -1.0;
        CHECK_OK(krill_ozaki_dot(ctxs[c], n, x, y, &r));
        check_verdicts(c, 1, &decided, what);
        CHECK_OK(krill_ozaki_dot_stats(ctxs[c], n, x, xs, y, ys, &rs));
        check_verdicts(c, 1, &decided, what);
        tu_checks++;
        if (!oz_same_bits(r, off) || !oz_same_bits(rs, off)) {
            tu_failures++;
            fprintf(stderr, "%s: %d threads, fast path on differs from off:\n", what,
                    thread_counts[c]);
            report(what, "exact", n, r, off);
            report(what, "exact, stats given", n, rs, off);
        }
    }
}

static void test_fast_path(void)
{
    const int64_t n = 20000;
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    double *V = malloc((size_t)(8 * n) * sizeof *V), r, off;
    int want[8];

    /* well-conditioned: the bound decides (its width is about 4 n u^2 sum |x_i y_i|, far
     * below half an ulp of these sums) */
    oz_ref_phi_vector(x, n, 2.0, 501);
    oz_ref_phi_vector(y, n, 2.0, 502);
    check_fast_dot(n, x, x, 1, "x'x");
    check_fast_dot(1000, x, y, 1, "random x'y, n = 1000 (condition about sqrt(n))");
    for (int64_t i = 0; i < n; i++) y[i] = fabs(y[i]) + 0.5;
    check_fast_dot(n, x, y, 1, "x'y, y > 0");
    check_fast_dot(7, x, y, 1, "n = 7");
    for (int64_t i = 0; i < n; i++) y[i] = ldexp(y[i], 370) * (i % 2 ? 1 : -1);
    check_fast_dot(n, x, y, 1, "y scaled by 2^370, towards the guard's top 2^401");
    /* ... and not: an exact zero left by cancelling rounding errors over a range of 2^+-40
     * (phi 4: the second level's sums are not exact), operands of 2^401 and more, subnormal
     * operands, products below 2^-800, Inf / NaN. It does decide a result of one ulp of the
     * terms (the bound is about u^3 times the sum of the |products|), an operand of 2^-401
     * whose products are not tiny, and an exact tie where no third-level error is left
     * (then one IEEE addition rounds the exact sum); a tie with such an error left it
     * cannot decide, and which split leaves one varies */
    oz_ref_phi_vector(x, 64, 4.0, 77);
    oz_ref_phi_vector(y, 64, 4.0, 78);
    for (int i = 0; i < 32; i++) {
        x[32 + i] = -x[i];
        y[32 + i] = y[i];
    }
    check_fast_dot(64, x, y, 0, "exact cancellation");
    x[63] = nextafter(x[63], 0.0);
    check_fast_dot(64, x, y, 1, "cancellation to one ulp");
    x[0] = 1.0; y[0] = 1.0;
    x[1] = 0x1p-53; y[1] = 1.0;
    check_fast_dot(2, x, y, 1, "1 + 2^-53: a tie (to even: 1)");
    x[1] = 0x1.8p-52; y[1] = 1.0;
    x[2] = 0.1; y[2] = 0.3;   /* inexact products that cancel exactly */
    x[3] = -0.1; y[3] = 0.3;
    check_fast_dot(4, x, y, VERDICT_EITHER,
                   "1 + 3 2^-53 + 0.1 0.3 - 0.1 0.3: a tie (to even: 1 + 2^-51)");
    x[2] = 0x1p-1074; y[2] = 0x1p-400;
    check_fast_dot(3, x, y, 0, "a subnormal operand");
    oz_ref_phi_vector(x, 1000, 1.0, 503);
    oz_ref_phi_vector(y, 1000, 1.0, 504);
    x[500] = 0x1p401;
    check_fast_dot(1000, x, y, 0, "an operand of 2^401");
    x[500] = 0x1p-401;
    check_fast_dot(1000, x, y, 1, "an operand of 2^-401, its product not tiny");
    x[500] = 0x1p-810;
    check_fast_dot(1000, x, y, 0, "a product below 2^-800");
    x[500] = 1.0;
    check_fast_dot(1000, x, y, 1, "the same in range");
    {
        double keep = y[17];
        y[17] = INFINITY;
        set_paths(0);
        CHECK_OK(krill_ozaki_dot(ctxs[1], 1000, x, y, &r));
        check_verdicts(1, 1, (const int[]){0}, "Inf");
        CHECK(isinf(r));
        y[17] = NAN;
        CHECK_OK(krill_ozaki_dot(ctxs[2], 1000, x, y, &r));
        check_verdicts(2, 1, (const int[]){0}, "NaN");
        CHECK(isnan(r));
        y[17] = keep;
    }

    /* nrm2: sqrt of the decided x'x; x'x out of range (operands 2^600) goes to the exact path */
    oz_ref_phi_vector(x, n, 2.0, 505);
    for (int scale = 0; scale <= 600; scale += 600) {
        for (int64_t i = 0; i < n; i++) y[i] = ldexp(x[i], scale);
        set_paths_fast(0, 0);
        CHECK_OK(krill_ozaki_nrm2(ctxs[0], n, y, &off));
        set_paths(0);
        for (int c = 0; c < NT; c++) {
            CHECK_OK(krill_ozaki_nrm2(ctxs[c], n, y, &r));
            check_verdicts(c, 1, (const int[]){scale == 0}, "nrm2");
            CHECK(oz_same_bits(r, off));
        }
    }

    /* mdot, column by column: decided, cancelling, out of range, Inf, zero, decided... */
    oz_ref_phi_vector(y, n, 1.0, 506);
    for (int j = 0; j < 8; j++) oz_ref_phi_vector(V + j * n, n, 1.0, 600 + j);
    for (int64_t i = 0; i < n / 2; i++) {   /* column 1 . y: exact cancellation */
        V[1 * n + n / 2 + i] = -V[1 * n + i];
        y[n / 2 + i] = y[i];
    }
    V[2 * n + 5] = 0x1p450;
    V[3 * n + 9] = -INFINITY;
    for (int64_t i = 0; i < n; i++) V[4 * n + i] = 0.0;   /* x'y = 0 exactly: decided */
    want[0] = 1; want[1] = 0; want[2] = 0; want[3] = 0; want[4] = 1;
    want[5] = want[6] = want[7] = 1;
    {
        double base[8], res[8], vst[16], wst[2];
        set_mode_all(&oz_modes[0]);
        set_paths_fast(0, 0);
        CHECK_OK(krill_ozaki_mdot(ctxs[0], n, 8, V, n, y, base));
        for (int j = 0; j < 8; j++)
            CHECK_OK(krill_ozaki_stats(ctxs[0], n, V + j * n, vst + 2 * j));
        CHECK_OK(krill_ozaki_stats(ctxs[0], n, y, wst));
        for (int j = 0; j < 8; j++) {
            double ref;
            if (j != 3 && oz_ref_dot(n, V + j * n, y, &ref)) {
                mpfr_checks++;
                CHECK(oz_same_bits(base[j], ref));
            }
        }
        CHECK(isinf(base[3]) && oz_same_bits(base[4], 0.0));
        for (int general = 0; general < 2; general++) {
            set_paths_fast(general, 1);
            for (int c = 0; c < NT; c++) {
                CHECK_OK(krill_ozaki_mdot(ctxs[c], n, 8, V, n, y, res));
                check_verdicts(c, 8, want, "mdot");
                for (int j = 0; j < 8; j++) CHECK(oz_same_bits(res[j], base[j]));
                CHECK_OK(krill_ozaki_mdot_stats(ctxs[c], n, 8, V, n, vst, y, wst, res));
                check_verdicts(c, 8, want, "mdot_stats");
                for (int j = 0; j < 8; j++) CHECK(oz_same_bits(res[j], base[j]));
            }
        }
    }

    /* not tried: fixed slices, fast mode, tuning off, n = 0; verdicts past the call's k */
    oz_ref_phi_vector(x, n, 2.0, 507);
    for (int k = 1; k < OZ_NMODES; k++) {
        set_mode_all(&oz_modes[k]);
        CHECK_OK(krill_ozaki_dot(ctxs[1], n, x, x, &r));
        check_verdicts(1, 1, (const int[]){-1}, oz_modes[k].name);
    }
    set_mode_all(&oz_modes[0]);
    CHECK_OK(krill_ozaki_dot(ctxs[1], n, x, x, &r));
    check_verdicts(1, 3, (const int[]){1, -1, -1}, "k past the call's");
    CHECK_OK(krill_ozaki_dot(ctxs[1], 0, x, x, &r));
    check_verdicts(1, 1, (const int[]){-1}, "n = 0");
    set_paths_fast(0, 0);
    CHECK_OK(krill_ozaki_dot(ctxs[1], n, x, x, &r));
    check_verdicts(1, 1, (const int[]){-1}, "tuning off");
    CHECK_OK(krill_ctx_set_repro(ctxs[1], KRILL_REPRO_OFF, 0));   /* direct calls: exact */
    set_paths(0);
    CHECK_OK(krill_ozaki_dot(ctxs[1], n, x, x, &off));
    check_verdicts(1, 1, (const int[]){1}, "mode off, a direct call");
    CHECK(oz_same_bits(off, r));
    CHECK_STATUS(krill_ozaki_fast_verdicts(ctxs[1], 2 * KRILL_OZ_KMAX + 1, want), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "k = 65") != NULL);
    free(x);
    free(y);
    free(V);
}

/* krill_blas_dot / nrm2 and krill_vec_dot / nrm2 follow the context's mode */
static void test_dispatch(void)
{
    const int64_t n = 10000;
    krill_vec *x = NULL, *y = NULL;
    double *hx = malloc((size_t)n * sizeof *hx), *hy = malloc((size_t)n * sizeof *hy);
    double a, b, c, d;
    oz_ref_phi_vector(hx, n, 8.0, 31);
    oz_ref_phi_vector(hy, n, 8.0, 32);
    CHECK_OK(krill_vec_create(ctxs[2], n, &x));
    CHECK_OK(krill_vec_create(ctxs[2], n, &y));
    CHECK_OK(krill_vec_upload(x, hx));
    CHECK_OK(krill_vec_upload(y, hy));
    for (int k = 0; k < OZ_NMODES; k++) {
        CHECK_OK(krill_ctx_set_repro(ctxs[2], oz_modes[k].mode, oz_modes[k].slices));
        CHECK_OK(krill_blas_dot(ctxs[2], n, hx, hy, &a));
        CHECK_OK(krill_vec_dot(x, y, &b));
        CHECK_OK(krill_ozaki_dot(ctxs[2], n, hx, hy, &c));
        CHECK(oz_same_bits(a, c) && oz_same_bits(b, c));
        CHECK_OK(krill_blas_nrm2(ctxs[2], n, hx, &a));
        CHECK_OK(krill_vec_nrm2(x, &b));
        CHECK_OK(krill_ozaki_nrm2(ctxs[2], n, hx, &d));
        CHECK(oz_same_bits(a, d) && oz_same_bits(b, d));
    }
    if (oz_ref_dot(n, hx, hy, &d)) {
        CHECK_OK(krill_ctx_set_repro(ctxs[2], KRILL_REPRO_OZAKI, 0));
        CHECK_OK(krill_vec_dot(x, y, &b));
        CHECK(oz_same_bits(b, d));
        mpfr_checks++;
    }
    CHECK_OK(krill_ctx_set_repro(ctxs[2], KRILL_REPRO_OFF, 0));   /* back to plain */
    CHECK_OK(krill_vec_dot(x, y, &b));
    CHECK_OK(krill_ctx_set_repro(ctxs[2], KRILL_REPRO_OZAKI, 0));
    CHECK_OK(krill_vec_dot(x, y, &c));
    {   /* plain is within n eps sum |x_i y_i| of the exact value */
        double sum_abs = 0.0;
        for (int64_t i = 0; i < n; i++) sum_abs += fabs(hx[i] * hy[i]);
        CHECK(fabs(b - c) <= (double)n * DBL_EPSILON * sum_abs);
    }
    krill_vec_destroy(&x);
    krill_vec_destroy(&y);
    free(hx);
    free(hy);
}

/* the sequential helper gives the parallel bits */
static void test_dot_seq(void)
{
    const int64_t n = 5000;
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    int64_t acc[KRILL_OZ_MAX_DIAG];
    oz_ref_phi_vector(x, n, 4.0, 3);
    oz_ref_phi_vector(y, n, 4.0, 4);
    for (int k = 0; k < OZ_NMODES; k++) {
        double par;
        const double seq = krill_oz_dot_seq(n, x, 1, y, 1, oz_modes[k].mode == KRILL_REPRO_OZAKI_FAST,
                                            oz_modes[k].slices, acc);
        CHECK_OK(krill_ctx_set_repro(ctxs[3], oz_modes[k].mode, oz_modes[k].slices));
        CHECK_OK(krill_ozaki_dot(ctxs[3], n, x, y, &par));
        CHECK(oz_same_bits(seq, par));
    }
    /* strided: every other element */
    {
        double par, seq;
        double *xe = malloc((size_t)(n / 2) * sizeof *xe), *ye = malloc((size_t)(n / 2) * sizeof *ye);
        for (int64_t i = 0; i < n / 2; i++) {
            xe[i] = x[2 * i];
            ye[i] = y[2 * i];
        }
        seq = krill_oz_dot_seq(n / 2, x, 2, y, 2, 0, 0, acc);
        CHECK_OK(krill_ctx_set_repro(ctxs[3], KRILL_REPRO_OZAKI, 0));
        CHECK_OK(krill_ozaki_dot(ctxs[3], n / 2, xe, ye, &par));
        CHECK(oz_same_bits(seq, par));
        free(xe);
        free(ye);
    }
    free(x);
    free(y);
}

/* the CPU path allocates nothing: allocation faults cannot reach it */
static void test_no_allocation(void)
{
    const int64_t n = 20000;
    double *x = malloc((size_t)n * sizeof *x), r1, r2;
    krill_ctx *ctx = tu_cpu_ctx(3);
    oz_ref_phi_vector(x, n, 2.0, 9);
    krill_fault_alloc_after(1);   /* the next allocation would fail */
    CHECK_OK(krill_ctx_set_repro(ctx, KRILL_REPRO_OZAKI, 0));
    CHECK_OK(krill_ozaki_dot(ctx, n, x, x, &r1));
    CHECK_OK(krill_ozaki_mdot(ctx, n, 1, x, n, x, &r2));
    CHECK_OK(krill_ozaki_nrm2(ctx, n, x, &r2));
    CHECK_OK(krill_blas_dot(ctx, n, x, x, &r2));
    CHECK(oz_same_bits(r1, r2));
    krill_fault_alloc_after(0);
    krill_ctx_destroy(&ctx);
    free(x);
}

int main(void)
{
    for (int c = 0; c < NT; c++) ctxs[c] = tu_cpu_ctx(thread_counts[c]);
    set_paths(0);
    test_ctx_api();
    test_math();
    test_round();
    test_phi_family();
    test_edges();
    test_many_slices();
    test_plain_differs();
    test_nrm2();
    test_mdot();
    test_fast_path();
    test_dispatch();
    test_dot_seq();
    test_no_allocation();
    krill_ozaki_tuning_set(NULL);
    for (int c = 0; c < NT; c++) krill_ctx_destroy(&ctxs[c]);
    if (oz_ref_have_mpfr()) printf("%d results compared with MPFR bit for bit\n", mpfr_checks);
    else printf("MPFR absent at build time: the MPFR comparisons were skipped\n");
    return tu_finish("test_ozaki");
}
