/* krill/order.h - renumbering: Reverse Cuthill-McKee and symmetric permutation.
 *
 * Renumbering the unknowns of a FEM mesh so that neighbours get nearby numbers narrows the
 * band of the matrix and lengthens the runs of consecutive columns in each row, which is
 * what the RBP formats compress. A permutation is stored as perm[new] = old. */
#ifndef KRILL_ORDER_H
#define KRILL_ORDER_H

#include <stdint.h>
#include "krill/csr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reverse Cuthill-McKee ordering of a square matrix's graph (the pattern of A + A^T, the
 * diagonal ignored), every connected component started from a pseudo-peripheral node.
 * perm receives n_rows entries, perm[new] = old. */
krill_status krill_order_rcm(const krill_csr *a, int32_t *perm);

/* B = P A P^T for a square A: b_ij = a_perm[i],perm[j]; columns sorted in each row. perm is
 * checked to be a permutation. */
krill_status krill_csr_permute(const krill_csr *a, const int32_t *perm, krill_csr **b);

/* Vectors: y[new] = x[perm[new]] (into the new numbering) and back, x[perm[new]] = y[new]. */
void krill_vec_permute_host(int32_t n, const int32_t *perm, const double *x, double *y);
void krill_vec_unpermute_host(int32_t n, const int32_t *perm, const double *y, double *x);

/* Half bandwidth max |i - j| over the entries (0 for a diagonal or empty matrix). */
int32_t krill_csr_bandwidth(const krill_csr *a);

#ifdef __cplusplus
}
#endif
#endif
