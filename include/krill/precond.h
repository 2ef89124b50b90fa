/* krill/precond.h - preconditioners.
 *
 * A preconditioner M approximates A; the solvers apply z = M^{-1} r. Built from a matrix
 * on the same context by name: "none" or "jacobi" (z_i = r_i / a_ii; a zero or non-finite
 * diagonal entry is refused with KRILL_ERR_NUMERIC naming the row). */
#ifndef KRILL_PRECOND_H
#define KRILL_PRECOND_H

#include "krill/mat.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct krill_pc krill_pc;

krill_status krill_pc_create(const krill_mat *a, const char *name, krill_pc **pc);
void krill_pc_destroy(krill_pc **pc);                    /* NULL-safe; sets *pc = NULL */

/* z = M^{-1} r (r and z distinct vectors on the matrix's context). */
krill_status krill_pc_apply(const krill_pc *pc, const krill_vec *r, krill_vec *z);

/* Recompute from the matrix's current values (after krill_mat_update_values). */
krill_status krill_pc_update(krill_pc *pc);

const char *krill_pc_name(const krill_pc *pc);
const char *const *krill_pc_names(void);                 /* NULL-terminated */

#ifdef __cplusplus
}
#endif
#endif
