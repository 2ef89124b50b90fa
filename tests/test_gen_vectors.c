/* tests/test_gen_vectors.c - krill_gen_dot_vectors, the inputs of the accuracy experiment
 * (`krill dot`, bench_dot): its exp / log / randn against the C library and the normal
 * law, fixed bits (the same on every machine: recorded once, any change of the generator
 * shows here), independence from the thread count, the prefix property, phi = 0, and the
 * argument errors. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen_impl.h"
#include "testutil.h"

static const double ulp1 = 0x1.0p-52;

/* det_log and det_exp within two ulps of the C library (itself within an ulp). */
static void test_exp_log(void)
{
    double worst_log = 0.0, worst_exp = 0.0;
    uint64_t state = 12345;
    for (int k = 0; k < 200000; k++) {
        /* s over (0, 1] with exponents down to 2^-110 (the polar method needs (2^-104, 1)) */
        const double s = ldexp(0.5 + 0.5 * fabs(krill_gen_det_randn(&state)) / 13.0,
                               -(k % 111));
        const double t = 700.0 * sin((double)k);   /* [-700, 700] */
        if (s > 0.0 && s <= 1.0 && s != 1.0)
            worst_log = fmax(worst_log, fabs(krill_gen_det_log(s) - log(s)) / fabs(log(s)));
        worst_exp = fmax(worst_exp, fabs(krill_gen_det_exp(t) - exp(t)) / exp(t));
    }
    printf("det_log: max rel error %.3g ulp; det_exp: %.3g ulp\n", worst_log / ulp1,
           worst_exp / ulp1);
    CHECK(worst_log <= 2 * ulp1);
    CHECK(worst_exp <= 2 * ulp1);
    CHECK(krill_gen_det_log(1.0) == 0.0);
    CHECK(krill_gen_det_exp(0.0) == 1.0);
    CHECK_CLOSE(krill_gen_det_log(0x1.0p-100), -100 * log(2.0), 1e-15);
}

/* randn: mean 0, variance 1, P(|z| < 1) = 0.6827, P(|z| < 2) = 0.9545, within about six
 * standard deviations of the sample statistics for N = 400000. */
static void test_randn(void)
{
    enum { N = 400000 };
    double sum = 0.0, sum2 = 0.0, max_abs = 0.0;
    long within1 = 0, within2 = 0;
    uint64_t state = 99;
    for (int k = 0; k < N; k++) {
        const double z = krill_gen_det_randn(&state);
        sum += z;
        sum2 += z * z;
        max_abs = fmax(max_abs, fabs(z));
        within1 += fabs(z) < 1.0;
        within2 += fabs(z) < 2.0;
    }
    const double mean = sum / N, var = sum2 / N - mean * mean;
    printf("randn: mean %.4f, variance %.4f, P(|z|<1) %.4f, P(|z|<2) %.4f, max |z| %.2f\n",
           mean, var, (double)within1 / N, (double)within2 / N, max_abs);
    CHECK(fabs(mean) < 6.0 / sqrt((double)N));
    CHECK(fabs(var - 1.0) < 6.0 * sqrt(2.0 / N));
    CHECK(fabs((double)within1 / N - 0.682689) < 6.0 * sqrt(0.2167 / N));
    CHECK(fabs((double)within2 / N - 0.954500) < 6.0 * sqrt(0.0434 / N));
    CHECK(max_abs < 12.2);   /* the bound vector.c's range argument uses */
}

static int same_bits(const double *a, const double *b, int64_t n)
{
    return memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

static void test_vectors(void)
{
    enum { N = 1000 };
    double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    double *x2 = malloc(N * sizeof *x2), *y2 = malloc(N * sizeof *y2);
    if (!x || !y || !x2 || !y2) {
        CHECK(!"out of memory");
        goto cleanup;
    }
    CHECK_OK(krill_gen_dot_vectors(N, 2.0, 1, x, y));
    /* the bits, recorded once: the same on every machine (see gen/vector.c) */
    CHECK(x[0] == -0x1.9317faaf7ebaap-3);
    CHECK(x[1] == -0x1.9268245d4590fp-6);
    CHECK(y[0] == -0x1.419cd93c0a9d7p+0);
    CHECK(y[N - 1] == -0x1.f99e31f889cd5p-5);
    /* and all 2N of them, through a polynomial hash of their bits */
    uint64_t hash = 0;
    for (int i = 0; i < N; i++) {
        uint64_t bx = 0, by = 0;
        memcpy(&bx, &x[i], sizeof bx);
        memcpy(&by, &y[i], sizeof by);
        hash = (hash * 31 + bx) * 31 + by;
    }
    printf("x[0] = %a, x[1] = %a, y[0] = %a, y[N-1] = %a, hash %016llx\n", x[0], x[1], y[0],
           y[N - 1], (unsigned long long)hash);
    CHECK(hash == 0xb1fab148cadaa870ull);

    /* thread counts */
    const int threads = omp_get_max_threads();
    for (int t = 1; t <= 3; t++) {
        omp_set_num_threads(t);
        CHECK_OK(krill_gen_dot_vectors(N, 2.0, 1, x2, y2));
        CHECK(same_bits(x, x2, N) && same_bits(y, y2, N));
    }
    omp_set_num_threads(threads);

    /* a shorter vector is a prefix; y may be NULL */
    memset(x2, 0, N * sizeof *x2);
    CHECK_OK(krill_gen_dot_vectors(10, 2.0, 1, x2, NULL));
    CHECK(same_bits(x, x2, 10) && x2[10] == 0.0);

    /* other seeds and x vs y differ */
    CHECK_OK(krill_gen_dot_vectors(N, 2.0, 2, x2, y2));
    CHECK(x2[0] != x[0] && y2[0] != y[0] && x[0] != y[0]);

    /* phi = 0: x_i = rand - 0.5 in (-0.5, 0.5), both signs, about uniform */
    CHECK_OK(krill_gen_dot_vectors(N, 0.0, 7, x2, y2));
    int inside = 1, negative = 0;
    double mean_abs = 0.0;
    for (int i = 0; i < N; i++) {
        inside &= fabs(x2[i]) < 0.5 && fabs(y2[i]) < 0.5 && x2[i] != 0.0;
        negative += x2[i] < 0.0;
        mean_abs += fabs(x2[i]) / N;
    }
    CHECK(inside);
    CHECK(negative > 400 && negative < 600);
    CHECK(fabs(mean_abs - 0.25) < 0.03);

    /* phi widens the range: max |x| / min |x| grows with phi */
    double ratio[2] = { 0.0, 0.0 };
    const double phis[2] = { 1.0, 8.0 };
    for (int k = 0; k < 2; k++) {
        double lo = INFINITY, hi = 0.0;
        CHECK_OK(krill_gen_dot_vectors(N, phis[k], 3, x2, NULL));
        for (int i = 0; i < N; i++) {
            lo = fmin(lo, fabs(x2[i]));
            hi = fmax(hi, fabs(x2[i]));
        }
        ratio[k] = log2(hi / lo);
    }
    printf("log2(max|x|/min|x|): phi = 1: %.1f, phi = 8: %.1f\n", ratio[0], ratio[1]);
    CHECK(ratio[1] > ratio[0] + 30.0);

    /* the largest phi stays finite and nonzero */
    CHECK_OK(krill_gen_dot_vectors(N, KRILL_GEN_PHI_MAX, 4, x2, y2));
    int finite = 1;
    for (int i = 0; i < N; i++)
        finite &= isfinite(x2[i] * y2[i]) && x2[i] * y2[i] != 0.0;
    CHECK(finite);
cleanup:
    free(x);
    free(y);
    free(x2);
    free(y2);
}

static void test_errors(void)
{
    double v[4];
    CHECK_STATUS(krill_gen_dot_vectors(-1, 1.0, 1, v, v), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "n = -1") != NULL);
    CHECK_STATUS(krill_gen_dot_vectors(4, -0.5, 1, v, v), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "phi = -0.5") != NULL);
    CHECK_STATUS(krill_gen_dot_vectors(4, KRILL_GEN_PHI_MAX + 1, 1, v, v), KRILL_ERR_ARG);
    CHECK_STATUS(krill_gen_dot_vectors(4, NAN, 1, v, v), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "phi") != NULL);
    CHECK_STATUS(krill_gen_dot_vectors(4, 1.0, 1, NULL, v), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "x is NULL") != NULL);
    CHECK_OK(krill_gen_dot_vectors(0, 1.0, 1, NULL, NULL));
}

int main(void)
{
    test_exp_log();
    test_randn();
    test_vectors();
    test_errors();
    return tu_finish("test_gen_vectors");
}
