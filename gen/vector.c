/* gen/vector.c - krill_gen_dot_vectors: the input vectors of the Ozaki-scheme accuracy
 * experiment (Table 3 of the OzBLAS paper, after Ozaki, Ogita, Oishi and Rump):
 *
 *     x_i = (rand - 0.5) * exp(phi * randn),   y_i likewise, independently,
 *
 * rand uniform on (0, 1) and randn standard normal; the larger phi, the wider the range of
 * exponents, and the more slices an exact dot product needs.
 *
 * The same (n, phi, seed) gives the same bits on every machine, thread count and compiler:
 *   - randomness is splitmix64 (integer arithmetic only), one stream per entry, started
 *     at a hash of (seed, vector, index): entry i does not depend on n or on how entries
 *     are shared among threads, and a shorter vector is a prefix of a longer one;
 *   - randn is Marsaglia's polar method, rand and the polar method's uniforms have 52
 *     random bits (so rand - 0.5 and 2U - 1 are exact);
 *   - exp and log are computed here with +, -, *, / and sqrt (all correctly rounded by
 *     IEEE 754) and frexp / ldexp / floor (exact), never with the C library's exp / log,
 *     whose last bits differ between libraries. Host code is compiled with
 *     -ffp-contract=off, so no FMA changes a rounding.
 * Their accuracy (a few ulps) does not matter for the experiment; their determinism does.
 *
 * Range: |randn| < 12.2 for every pair of 52-bit uniforms (s >= 2^-104 when accepted), so
 * with phi <= KRILL_GEN_PHI_MAX = 20 every |x_i| lies in (2^-53 e^-244, 0.5 e^244):
 * products x_i y_i stay far from overflow and from the subnormals (|x_i y_i| < 2^700). */
#include <math.h>

#include "gen/gen_impl.h"

/* ---- splitmix64 streams ---------------------------------------------------------------- */

static uint64_t vec_mix64(uint64_t z)   /* the splitmix64 finalizer (a bijection) */
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t vec_next(uint64_t *state)
{
    *state += 0x9E3779B97F4A7C15ull;   /* 2^64 / golden ratio */
    return vec_mix64(*state);
}

/* Uniform on (0, 1): (k + 1/2) 2^-52 with k the top 52 bits; never 0 or 1, and 2U - 1 and
 * U - 1/2 are exact (k + 1/2 needs 53 bits). */
static double vec_unit(uint64_t *state)
{
    return ((double)(vec_next(state) >> 12) + 0.5) * 0x1.0p-52;
}

/* ---- exp, log and randn from correctly rounded operations ------------------------------- */

/* ln s for finite s > 0. s = m 2^e with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(f) with
 * f = (m - 1) / (m + 1), |f| <= 0.1716, summed as 2 f (1 + f^2/3 + ... + f^22/23): the
 * first term left out is below f^24/25 < 2^-63 relative. */
double krill_gen_det_log(double s)
{
    int e = 0;
    double m = frexp(s, &e);   /* m in [1/2, 1) */
    if (m < 0x1.6a09e667f3bcdp-1) {   /* sqrt(1/2) */
        m = 2.0 * m;
        e -= 1;
    }
    const double f = (m - 1.0) / (m + 1.0);
    const double f2 = f * f;
    double series = 1.0 / 23.0;
    for (int k = 21; k >= 1; k -= 2)
        series = 1.0 / (double)k + f2 * series;
    /* ln 2 split so that e * LN2_HI is exact for |e| < 2^11 */
    const double ln2_hi = 0x1.62e42fee00000p-1, ln2_lo = 0x1.a39ef35793c76p-33;
    return ((double)e * ln2_hi + (double)e * ln2_lo) + 2.0 * f * series;
}

/* e^t for |t| <= 700. t = k ln 2 + r with k = round(t / ln 2), |r| <= 0.35 (Cody-Waite:
 * k * LN2_HI is exact for |k| < 2^11); e^r by its Taylor polynomial of degree 17 (the
 * remainder is below 0.35^18 / 18! < 2^-80), then scaled by 2^k exactly. */
double krill_gen_det_exp(double t)
{
    const double inv_ln2 = 0x1.71547652b82fep+0;
    const double ln2_hi = 0x1.62e42fee00000p-1, ln2_lo = 0x1.a39ef35793c76p-33;
    const double k = floor(t * inv_ln2 + 0.5);
    const double r = (t - k * ln2_hi) - k * ln2_lo;
    double poly = 1.0;
    for (int j = 17; j >= 1; j--)
        poly = 1.0 + (r / (double)j) * poly;   /* 1 + r/j (1 + r/(j+1) (...)) */
    return ldexp(poly, (int)k);
}

/* A standard normal variate by Marsaglia's polar method: (u, v) uniform on the square
 * (-1, 1)^2 until 0 < s = u^2 + v^2 < 1, then u sqrt(-2 ln s / s). */
double krill_gen_det_randn(uint64_t *state)
{
    double u = 0.0, s = 0.0;
    do {
        u = 2.0 * vec_unit(state) - 1.0;
        const double v = 2.0 * vec_unit(state) - 1.0;
        s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    return u * sqrt(-2.0 * krill_gen_det_log(s) / s);
}

/* ---- the vectors ------------------------------------------------------------------------ */

/* The stream of entry i of vector `which` (0 = x, 1 = y): hashed, not offset, since
 * splitmix64 streams started at nearby states overlap. */
static uint64_t entry_stream(uint64_t seed, int which, int64_t i)
{
    const uint64_t vector_key = vec_mix64(vec_mix64(seed) ^ (0xD1B54A32D192ED03ull + (uint64_t)which));
    return vec_mix64(vector_key ^ vec_mix64((uint64_t)i + 1));
}

static void fill_vector(int64_t n, double phi, uint64_t seed, int which, double *v)
{
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        uint64_t state = entry_stream(seed, which, i);
        const double uniform = vec_unit(&state);
        const double normal = krill_gen_det_randn(&state);
        v[i] = (uniform - 0.5) * krill_gen_det_exp(phi * normal);
    }
}

krill_status krill_gen_dot_vectors(int64_t n, double phi, uint64_t seed, double *x, double *y)
{
    krill_status st = KRILL_OK;
    KRILL_REQUIRE(n >= 0, "krill_gen_dot_vectors: n = %lld < 0", (long long)n);
    KRILL_REQUIRE(phi >= 0.0 && phi <= KRILL_GEN_PHI_MAX,
                  "krill_gen_dot_vectors: phi = %g is not in [0, %g]", phi,
                  (double)KRILL_GEN_PHI_MAX);
    KRILL_REQUIRE(n == 0 || x != NULL, "krill_gen_dot_vectors: x is NULL (n = %lld)",
                  (long long)n);
    if (n > 0) {
        fill_vector(n, phi, seed, 0, x);
        if (y) fill_vector(n, phi, seed, 1, y);
    }
cleanup:
    return st;
}
