/* krill/precond.h - preconditioners.
 *
 * A preconditioner M approximates A; the solvers apply z = M^{-1} r. Built from a matrix
 * on the same context by name: "none" or "jacobi" (z_i = r_i / a_ii; a zero or non-finite
 * diagonal entry is refused with KRILL_ERR_NUMERIC naming the row), "bjacobi:B" (point-block
 * Jacobi, dense B x B diagonal blocks inverted, B in 1..16, n % B == 0; a singular block is
 * refused with KRILL_ERR_NUMERIC naming it) or "bjacobi" (B detected from a uniform block
 * pattern, the largest in 6..2, else 1: krill_pc_describe says which), "ilu0" (incomplete LU
 * on A's pattern, A ~ L U) or "ic0" (incomplete Cholesky of a symmetric A, A ~ L L^T; a
 * nonsymmetric A is KRILL_ERR_ARG). ilu0 and ic0 need every a_ii stored; a zero, tiny
 * (|pivot| <= 1e-12 x the row's largest |a_ij|) or non-finite pivot, a non-positive one for
 * ic0, or a non-finite factor entry refuses the row. Options after a colon, separated by
 * commas: G (1, 2, 3, 4 or 6 rows per group of the GPU's triangular solves), "shift" or
 * "noshift", e.g. "ilu0:4,shift". With a shift (ic0's default, as PETSc's ICC; ilu0:shift) a
 * refused row makes the factorization start again on A + alpha diag(A), alpha raised and
 * lowered by PETSc's positive-definite search until the factorization succeeds (at most 7
 * factorizations; krill_pc_describe gives alpha; krill_pc_update_values searches again);
 * without one (ilu0's default, ic0:noshift), or when no alpha helps (ic0 with a_ii <= 0 in
 * some row but not all), KRILL_ERR_NUMERIC names the row and, unshifted, the option. ic0 of
 * a matrix whose every a_ii is negative factors -A = L L^T and applies M^{-1} = -(L L^T)^{-1}
 * (PCG on -A then runs as on A). */
#ifndef KRILL_PRECOND_H
#define KRILL_PRECOND_H

#include "krill/mat.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct krill_pc krill_pc;

krill_status krill_pc_create(const krill_mat *a, const char *name, krill_pc **pc);
void krill_pc_destroy(krill_pc **pc);                    /* NULL-safe; sets *pc = NULL */

/* A preconditioner of the caller's: z = M^{-1} r = apply(user, r, z, n) for vectors of n
 * doubles in ctx's memory (krill_shell_apply in krill/mat.h says what the callback may
 * assume and must do). For any matrix of n rows on ctx, shell or not; every solver takes it
 * (FGMRES also one that changes between applications; CG and MINRES assume it symmetric
 * definite). Its name is "shell"; krill_pc_update_values does nothing (change what the
 * callback computes instead). Reproducible mode refuses it (KRILL_ERR_UNSUPPORTED) at the
 * first apply. n < 0, a NULL ctx, apply or pc: KRILL_ERR_ARG naming the argument. */
krill_status krill_pc_create_shell(krill_ctx *ctx, int64_t n, krill_shell_apply apply,
                                   void *user, krill_pc **pc);

/* z = M^{-1} r (r and z distinct vectors on the matrix's context). */
krill_status krill_pc_apply(const krill_pc *pc, const krill_vec *r, krill_vec *z);

/* New values, same pattern (Newton, time stepping): recompute from the matrix's current
 * values (after krill_mat_update_values) without analysing the pattern again. */
krill_status krill_pc_update_values(krill_pc *pc);

const char *krill_pc_name(const krill_pc *pc);
/* One line saying what was built, e.g. "bjacobi: 3x3 blocks (detected), 23120 blocks"; for
 * preconditioners with nothing to report, their summary. NULL pc: "none"'s summary. */
const char *krill_pc_describe(const krill_pc *pc);
const char *const *krill_pc_names(void);                 /* NULL-terminated */

#ifdef __cplusplus
}
#endif
#endif
