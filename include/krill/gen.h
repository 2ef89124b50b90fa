/* krill/gen.h - deterministic test-problem generators.
 *
 * SPEC strings (the same as `krill gen SPEC`):
 *   poisson3d:K            7-point Laplacian on a K^3 grid, Dirichlet; SPD
 *   convdiff3d:K[,PE]      7-point convection-diffusion, first-order upwind convection with
 *                          cell Peclet number PE (default 1); nonsymmetric
 *   elasticity3d:NX,NY,NZ  linear elasticity, trilinear hexahedra (NX x NY x NZ elements on a
 *                          unit-size box), 3 dofs per node interleaved, clamped at x = 0,
 *                          2x2x2 Gauss quadrature; SPD, up to 81 nonzeros per row
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

#ifdef __cplusplus
}
#endif
#endif
