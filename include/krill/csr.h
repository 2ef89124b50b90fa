/* krill/csr.h - host CSR, the exchange format.
 *
 * Readers produce it, generators produce it, every format is built from it and every
 * test compares against it. Row offsets are int64_t (nnz may exceed 2^31), column indices
 * int32_t, sorted and unique within each row, zero-based. */
#ifndef KRILL_CSR_H
#define KRILL_CSR_H

#include <stdint.h>
#include "krill/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct krill_csr {
    int32_t n_rows;
    int32_t n_cols;
    int64_t nnz;
    int64_t *row_ptr;        /* n_rows + 1 offsets, row_ptr[0] = 0, row_ptr[n_rows] = nnz */
    int32_t *col;            /* nnz column indices, sorted and unique within each row */
    double *val;             /* nnz values */
} krill_csr;

/* Allocate a CSR with room for nnz entries (row_ptr zeroed, col/val uninitialized).
 * A krill_csr filled by the caller with its own arrays is also valid input everywhere;
 * only pass to krill_csr_destroy what krill allocated. */
krill_status krill_csr_create(int32_t n_rows, int32_t n_cols, int64_t nnz, krill_csr **csr);
void krill_csr_destroy(krill_csr **csr);             /* NULL-safe; sets *csr = NULL */

/* Build a CSR from nnz triplets (zero-based): rows sorted, duplicates summed. Indices out
 * of range fail with KRILL_ERR_ARG. */
krill_status krill_csr_from_triplets(int32_t n_rows, int32_t n_cols, int64_t nnz,
                                     const int32_t *rows, const int32_t *cols,
                                     const double *vals, krill_csr **csr);

/* Check the structure (offsets monotone, columns in range, sorted, unique) and that every
 * value is finite. `what` names the matrix in the error message. */
krill_status krill_csr_check(const krill_csr *csr, const char *what);

/* Deep copy. */
krill_status krill_csr_copy(const krill_csr *src, krill_csr **dst);

/* Reference y = alpha*A*x + beta*y: serial, in row order, plain C. The oracle every
 * format and device is tested against. beta == 0 ignores y's old contents. */
void krill_csr_spmv_ref(const krill_csr *a, double alpha, const double *x, double beta,
                        double *y);

/* 1 if the pattern and values are symmetric (exactly), else 0. */
int krill_csr_is_symmetric(const krill_csr *a);

#ifdef __cplusplus
}
#endif
#endif
