/* krill/gen.h - deterministic test-problem generators.
 *
 * SPEC strings (the same as `krill gen SPEC`):
 *   poisson3d:K            7-point Laplacian on a K^3 grid, Dirichlet; SPD
 *   convdiff3d:K[,PE]      7-point convection-diffusion, first-order upwind convection with
 *                          velocity (1,1,1) and cell Peclet number PE >= 0 (default 1):
 *                          diagonal 6+3PE, upwind -1-PE, downwind -1; nonsymmetric
 *   elasticity3d:NX,NY,NZ  linear elasticity (E = 1, nu = 0.3) on NX x NY x NZ unit-cube
 *                          trilinear hexahedra, 3 dofs per node interleaved, clamped at x = 0
 *                          (those dofs eliminated), 2x2x2 Gauss quadrature; SPD,
 *                          3*NX*(NY+1)*(NZ+1) rows, up to 81 nonzeros per row
 *   band1[:N] band3[:N] band101[:N] rand1[:N] rand100[:N] band1x[:N]
 *                          the six matrices of the SpMV paper (Table 2) at its sizes by
 *                          default, with values that make each system nonsingular
 * The same SPEC always gives the same matrix, bit for bit. */
#ifndef KRILL_GEN_H
#define KRILL_GEN_H

#include "krill/csr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Generate the matrix named by spec. Bad specs fail with KRILL_ERR_ARG naming the part. */
krill_status krill_gen(const char *spec, krill_csr **csr);

/* One line per generator: "name:ARGS  description", NULL-terminated. */
const char *const *krill_gen_help(void);

/* ---- the vectors of the Ozaki-scheme accuracy experiment (`krill dot`, bench_dot) ----- */
#define KRILL_GEN_PHI_MAX 20.0   /* keeps every product x_i y_i far from over/underflow */

/* x_i = (rand - 0.5) * exp(phi * randn) and y_i likewise (independent), i < n: rand
 * uniform on (0, 1), randn standard normal; phi in [0, KRILL_GEN_PHI_MAX] widens the range
 * of exponents. The same (n, phi, seed) gives the same bits on every machine and thread
 * count, and a shorter vector is a prefix of a longer one. y may be NULL (x only). Fails
 * with KRILL_ERR_ARG for n < 0, phi out of range (or NaN), or x == NULL with n > 0. */
krill_status krill_gen_dot_vectors(int64_t n, double phi, uint64_t seed, double *x, double *y);

#ifdef __cplusplus
}
#endif
#endif
