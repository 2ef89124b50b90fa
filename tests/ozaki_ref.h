/* tests/ozaki_ref.h - references for the reproducible-mode tests: the exact dot product by
 * MPFR rounded once to double, the paper's Algorithm 1 written out literally (real sigmas in
 * plain double arithmetic) with its slice products summed exactly by MPFR, and the inputs.
 * Built with MPFR when CMake found it (KRILL_HAVE_MPFR); otherwise the MPFR functions return
 * 0 and the tests say that those comparisons were skipped. */
#ifndef KRILL_TESTS_OZAKI_REF_H
#define KRILL_TESTS_OZAKI_REF_H

#include <stdint.h>

#include "krill/ctx.h"

int oz_ref_have_mpfr(void);

/* *out = the double nearest to the exact sum_i x_i y_i (ties to even), for finite inputs;
 * an exact zero gives +0. Returns 1, or 0 without MPFR. */
int oz_ref_dot(int64_t n, const double *x, const double *y, double *out);

/* *out = the double nearest to sum_c acc[c] 2^(e_last + (nd - 1 - c) d). Returns 1 or 0. */
int oz_ref_round_diagonals(const int64_t *acc, int nd, int d, int e_last, double *out);

/* Algorithm 1 of the paper with the slice exponents of krill's scheme (sigma_p =
 * 2^(rho + tau - p d), tau from frexp of max|.|), run in plain doubles: x_split[p] =
 * fl((x + sigma) - sigma), x = fl(x - x_split[p]), for S slices of each operand; then the
 * exact sum of the slice products (p + q <= S - 1 only when fast), rounded once by MPFR.
 * Valid when every sigma is a normal number (moderate ranges). Returns 1 or 0. */
int oz_ref_dot_slices(int64_t n, const double *x, const double *y, int slices, int fast,
                      double *out);

/* x_i = (rand - 0.5) exp(phi randn), rand uniform in (0, 1), randn standard normal
 * (Box-Muller); deterministic in seed. */
void oz_ref_phi_vector(double *x, int64_t n, double phi, uint64_t seed);

/* The reproducible modes every test runs: exact, S = 1..4, fast S = 2, 3, 4, 7. */
typedef struct oz_mode {
    krill_repro_mode mode;
    int slices;
    const char *name;
} oz_mode;
extern const oz_mode oz_modes[];
#define OZ_NMODES 9

/* bitwise equality (NaN == NaN of the same bits; +0 != -0) */
int oz_same_bits(double a, double b);

#endif
