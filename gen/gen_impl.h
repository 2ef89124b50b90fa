/* gen/gen_impl.h - internals of the generators: parsed arguments, the builders behind the
 * table in gen.c, the size check, and the elasticity element (exposed for its tests). */
#ifndef KRILL_GEN_IMPL_H
#define KRILL_GEN_IMPL_H

#include <stdint.h>
#include "core/core_impl.h"
#include "krill/gen.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KRILL_GEN_MAX_ARGS 3

/* The arguments of one spec after validation (gen.c): integer parameters in `integer`,
 * real ones in `real`, both at the parameter's position; omitted optional parameters hold
 * their documented defaults. */
typedef struct krill_gen_args {
    const char *name;                  /* the generator's name, for messages */
    int64_t integer[KRILL_GEN_MAX_ARGS];
    double real[KRILL_GEN_MAX_ARGS];
} krill_gen_args;

typedef krill_status (*krill_gen_build_fn)(const krill_gen_args *args, krill_csr **csr);

/* stencil.c */
krill_status krill_gen_poisson3d(const krill_gen_args *args, krill_csr **csr);
krill_status krill_gen_convdiff3d(const krill_gen_args *args, krill_csr **csr);
/* elasticity.c */
krill_status krill_gen_elasticity3d(const krill_gen_args *args, krill_csr **csr);
/* saddle.c */
krill_status krill_gen_stokes2d(const krill_gen_args *args, krill_csr **csr);
/* paper.c: the six matrices of the SpMV paper's Table 2 */
krill_status krill_gen_band1(const krill_gen_args *args, krill_csr **csr);
krill_status krill_gen_band3(const krill_gen_args *args, krill_csr **csr);
krill_status krill_gen_band101(const krill_gen_args *args, krill_csr **csr);
krill_status krill_gen_rand1(const krill_gen_args *args, krill_csr **csr);
krill_status krill_gen_rand100(const krill_gen_args *args, krill_csr **csr);
krill_status krill_gen_band1x(const krill_gen_args *args, krill_csr **csr);

/* rows = a * b * c, failing with KRILL_ERR_ARG (naming the generator, `what` -- how the
 * factors were formed, e.g. "K x K x K" -- and their values) when the product exceeds
 * INT32_MAX rows. Factors are >= 1 and a <= 3 * INT32_MAX, b, c <= INT32_MAX + 1. */
krill_status krill_gen_rows(const krill_gen_args *args, const char *what, int64_t a,
                            int64_t b, int64_t c, int32_t *rows);

/* ---- elasticity element ----------------------------------------------------------------
 * Isotropic linear elasticity on one cube element of side KRILL_ELASTICITY_H with the
 * material below. Local node a = ax + 2*ay + 4*az sits at corner (ax, ay, az) * h with
 * ax, ay, az in {0, 1}; local dof 3*a + c is the displacement component c (0 = x, 1 = y,
 * 2 = z) of node a. */
#define KRILL_ELASTICITY_E 1.0       /* Young's modulus */
#define KRILL_ELASTICITY_NU 0.3      /* Poisson's ratio */
#define KRILL_ELASTICITY_H 1.0       /* element side: the box is [0,NX] x [0,NY] x [0,NZ] */

/* The 24 x 24 element stiffness K_e = sum over the 2x2x2 Gauss points of w * B' D B det J,
 * exactly symmetric (the upper triangle is computed, the lower one mirrored). */
void krill_elasticity_element(double ke[24][24]);

/* ---- vector.c: exp, log and randn from correctly rounded operations only, so that
 * krill_gen_dot_vectors gives the same bits everywhere (a few ulps from the true values) */
double krill_gen_det_log(double s);          /* ln s, s finite and > 0 */
double krill_gen_det_exp(double t);          /* e^t, |t| <= 700 */
double krill_gen_det_randn(uint64_t *state); /* standard normal; advances a splitmix64 state */

#ifdef __cplusplus
}
#endif
#endif
