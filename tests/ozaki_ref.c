/* tests/ozaki_ref.c - see ozaki_ref.h. Compiled with -ffp-contract=off like the library. */
#include "ozaki_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef KRILL_HAVE_MPFR
#include <mpfr.h>
/* Enough bits for any exact sum of double products: they lie between 2^-2148 and 2^2048,
 * and n <= 2^40 of them add at most 40 bits. */
#define REF_PREC 4400
#endif

int oz_ref_have_mpfr(void)
{
#ifdef KRILL_HAVE_MPFR
    return 1;
#else
    return 0;
#endif
}

int oz_same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

#ifdef KRILL_HAVE_MPFR
/* acc += a b exactly (abort if MPFR says it rounded: the reference would be wrong) */
static void add_product(mpfr_t acc, mpfr_t prod, double a, double b)
{
    if (mpfr_set_d(prod, a, MPFR_RNDN) != 0 || mpfr_mul_d(prod, prod, b, MPFR_RNDN) != 0 ||
        mpfr_add(acc, acc, prod, MPFR_RNDN) != 0)
        abort();
}

static double round_exact(mpfr_t acc)
{
    if (mpfr_zero_p(acc)) return 0.0;   /* exact zero: +0 by krill's rule */
    return mpfr_get_d(acc, MPFR_RNDN);
}
#endif

int oz_ref_dot(int64_t n, const double *x, const double *y, double *out)
{
#ifdef KRILL_HAVE_MPFR
    mpfr_t acc, prod;
    mpfr_inits2(REF_PREC, acc, prod, (mpfr_ptr)0);
    mpfr_set_zero(acc, 1);
    for (int64_t i = 0; i < n; i++) add_product(acc, prod, x[i], y[i]);
    *out = round_exact(acc);
    mpfr_clears(acc, prod, (mpfr_ptr)0);
    return 1;
#else
    (void)n;
    (void)x;
    (void)y;
    (void)out;
    return 0;
#endif
}

int oz_ref_round_diagonals(const int64_t *acc, int nd, int d, int e_last, double *out)
{
#ifdef KRILL_HAVE_MPFR
    mpfr_t sum, term;
    mpfr_inits2(REF_PREC, sum, term, (mpfr_ptr)0);
    mpfr_set_zero(sum, 1);
    for (int c = 0; c < nd; c++) {
        if (mpfr_set_sj(term, acc[c], MPFR_RNDN) != 0) abort();
        mpfr_mul_2si(term, term, e_last + (long)(nd - 1 - c) * d, MPFR_RNDN);
        if (mpfr_add(sum, sum, term, MPFR_RNDN) != 0) abort();
    }
    *out = round_exact(sum);
    mpfr_clears(sum, term, (mpfr_ptr)0);
    return 1;
#else
    (void)acc;
    (void)nd;
    (void)d;
    (void)e_last;
    (void)out;
    return 0;
#endif
}

#ifdef KRILL_HAVE_MPFR
/* rho = ceil((53 + ceil(log2 n)) / 2), written independently of krill_oz_rho */
static int ref_rho(int64_t n)
{
    int l = 0;
    double p = 1.0;
    while (p < (double)n) {
        p *= 2.0;
        l++;
    }
    return (int)ceil((53.0 + l) / 2.0);
}

/* ceil(log2 max|v|) by frexp */
static int ref_tau(const double *v, int64_t n)
{
    double m = 0.0, f;
    int e;
    for (int64_t i = 0; i < n; i++)
        if (fabs(v[i]) > m) m = fabs(v[i]);
    f = frexp(m, &e);   /* m = f 2^e, f in [1/2, 1) */
    return f == 0.5 ? e - 1 : e;
}

/* slices[p * n + i], p < S, by Algorithm 1 with sigma_p = 2^(rho + tau - p d) */
static void ref_split(const double *v, int64_t n, int rho, int slices, double *out)
{
    const int d = 53 - rho, tau = ref_tau(v, n);
    double *r = malloc((size_t)n * sizeof *r);
    memcpy(r, v, (size_t)n * sizeof *r);
    for (int p = 0; p < slices; p++) {
        const double sigma = ldexp(1.0, rho + tau - p * d);
        for (int64_t i = 0; i < n; i++) {
            volatile double t = sigma + r[i];
            const double q = t - sigma;
            out[(int64_t)p * n + i] = q;
            r[i] = r[i] - q;
        }
    }
    free(r);
}
#endif

int oz_ref_dot_slices(int64_t n, const double *x, const double *y, int slices, int fast,
                      double *out)
{
#ifdef KRILL_HAVE_MPFR
    const int rho = ref_rho(n);
    double *xs = malloc((size_t)n * slices * sizeof *xs);
    double *ys = malloc((size_t)n * slices * sizeof *ys);
    mpfr_t acc, prod;
    ref_split(x, n, rho, slices, xs);
    ref_split(y, n, rho, slices, ys);
    mpfr_inits2(REF_PREC, acc, prod, (mpfr_ptr)0);
    mpfr_set_zero(acc, 1);
    for (int p = 0; p < slices; p++)
        for (int q = 0; q < slices; q++) {
            if (fast && p + q > slices - 1) continue;
            for (int64_t i = 0; i < n; i++)
                add_product(acc, prod, xs[(int64_t)p * n + i], ys[(int64_t)q * n + i]);
        }
    *out = round_exact(acc);
    mpfr_clears(acc, prod, (mpfr_ptr)0);
    free(xs);
    free(ys);
    return 1;
#else
    (void)n;
    (void)x;
    (void)y;
    (void)slices;
    (void)fast;
    (void)out;
    return 0;
#endif
}

void oz_ref_phi_vector(double *x, int64_t n, double phi, uint64_t seed)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
    for (int64_t i = 0; i < n; i++) {
        double u[3];
        for (int k = 0; k < 3; k++) {   /* uniform in (0, 1) */
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            u[k] = ((double)(s >> 11) + 0.5) * (1.0 / 9007199254740992.0);
        }
        const double randn = sqrt(-2.0 * log(u[1])) * cos(6.283185307179586 * u[2]);
        x[i] = (u[0] - 0.5) * exp(phi * randn);
    }
}

const oz_mode oz_modes[OZ_NMODES] = {
    {KRILL_REPRO_OZAKI, 0, "exact"},         {KRILL_REPRO_OZAKI, 1, "S=1"},
    {KRILL_REPRO_OZAKI, 2, "S=2"},           {KRILL_REPRO_OZAKI, 3, "S=3"},
    {KRILL_REPRO_OZAKI, 4, "S=4"},           {KRILL_REPRO_OZAKI_FAST, 2, "fast S=2"},
    {KRILL_REPRO_OZAKI_FAST, 3, "fast S=3"}, {KRILL_REPRO_OZAKI_FAST, 4, "fast S=4"},
    {KRILL_REPRO_OZAKI_FAST, 7, "fast S=7"},
};
