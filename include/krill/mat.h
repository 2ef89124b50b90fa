/* krill/mat.h - sparse matrices in a storage format, on a context.
 *
 * A matrix is built from a host CSR in a named format ("csr", "csr:scalar", "csr:vector",
 * "cusparse", ...; krill_format_names() lists them) and lives in its context's memory.
 * The solvers only ever call krill_mat_spmv: they never know the storage. */
#ifndef KRILL_MAT_H
#define KRILL_MAT_H

#include <stddef.h>
#include <stdint.h>
#include "krill/csr.h"
#include "krill/ctx.h"
#include "krill/vec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a format stores and the quantities that explain it. Fields a format does not use
 * are 0. */
typedef struct krill_format_stats {
    int64_t n_rows, n_cols, nnz;
    size_t bytes;            /* bytes of matrix data actually stored (values + indices) */
    int64_t max_row_nnz;     /* K: longest row */
    double mean_row_nnz;
    int64_t empty_rows;
    /* The RBP paper's quantities (0 where a format has none). A run is two or more
     * consecutive columns in one row; RBP stores it as its (first, last) columns and all
     * its values, and keeps the isolated (non-run) entries in a CSR part. */
    int64_t n_val;           /* N_val: values stored in runs (Comp_Values) */
    int64_t n_col;           /* N_col: run column indices stored, 2 per run (Comp_Columns) */
    int64_t n_non;           /* N_non: isolated entries (the CSR part) */
    int64_t kv;              /* K_v: most run values in one row (RBP-ELL value columns) */
    int64_t kc;              /* K_c: most run column indices in one row (2 x runs) */
    char variant[32];        /* kernel chosen, e.g. "vector:8" (8 lanes per row) */
} krill_format_stats;

typedef struct krill_mat krill_mat;

/* Build a matrix on ctx from a host CSR (validated first: structure and finite values).
 * format NULL means "csr"; "auto" chooses one, weighing each format's build against 32
 * SpMVs (one GMRES(30) cycle), "auto:spmvs=N" against N, "auto:measure" by timing the
 * candidates (doc/auto.md); krill_mat_format names the format built, krill_mat_choice
 * why. Unknown names fail with KRILL_ERR_ARG listing the known ones.
 * A format that exists only on the GPU (cusparse) fails on a CPU context. */
krill_status krill_mat_create(krill_ctx *ctx, const krill_csr *csr, const char *format,
                              krill_mat **mat);
void krill_mat_destroy(krill_mat **mat);                 /* NULL-safe; sets *mat = NULL */

/* Matrix-free operators (doc/shell.md). A shell matrix or preconditioner applies itself
 * through a callback of the caller: y = A x (krill_mat_create_shell) or z = M^{-1} r
 * (krill_pc_create_shell). x and y are n doubles in the context's memory: host pointers on a
 * CPU context, device pointers on a GPU one (what CuPy, Thrust or a FEM code's kernels take).
 * They never overlap; x must not be written, y is to be overwritten entirely (its old
 * contents are garbage). On a GPU context krill's queued work is finished before the call,
 * and y must be complete when the callback returns (synchronize the stream you used). It is
 * called from the thread that called the solve, never from inside a parallel region, and
 * the pointers are valid only during the call. Return KRILL_OK, or any other status to stop:
 * the solve (or SpMV) then returns that status, with a message naming the shell and, when
 * the callback left one (krill_last_error after a failing krill call), its message. */
typedef krill_status (*krill_shell_apply)(void *user, const double *x, double *y, int64_t n);

/* A square n x n matrix known only by y = A x = apply(user, x, y, n). `user` is the caller's
 * (kept alive while the matrix exists; not freed). Accepted by every solver and by
 * krill_mat_spmv (y = alpha A x + beta y through one n-vector of context memory allocated
 * here) and krill_mat_time_spmv; its format is "shell", its nnz 0. What needs the entries
 * refuses it with KRILL_ERR_UNSUPPORTED naming the shell matrix: krill_mat_to_csr,
 * krill_mat_diagonal, krill_mat_update_values, every krill_pc_create but "none" (use
 * krill_pc_create_shell), and reproducible mode (the callback's sums are not the Ozaki
 * scheme's: nothing could make the solve's bits independent of the thread count).
 * n < 0, a NULL ctx, apply or mat: KRILL_ERR_ARG naming the argument. */
krill_status krill_mat_create_shell(krill_ctx *ctx, int64_t n, krill_shell_apply apply,
                                    void *user, krill_mat **mat);

/* A CSR matrix whose arrays are already in a GPU context's device memory (a FEM code's
 * assembly on the GPU, CuPy's cupyx.scipy.sparse.csr_matrix): nothing is copied, the
 * matrix is krill's "csr" format reading the caller's arrays in every SpMV. row_ptr holds
 * n_rows + 1 offsets of type int32_t (index_bytes 4, CuPy's and SciPy's) or int64_t
 * (index_bytes 8), col nnz int32_t column indices, val nnz doubles, all device pointers of
 * ctx's GPU. The caller keeps ownership: the arrays must stay allocated and unchanged
 * (except through krill_mat_update_values, below) until krill_mat_destroy, and work of the
 * caller's on them must be finished before krill uses them (synchronize the stream that
 * wrote them). The structure is checked on the GPU before anything else (no copy to the
 * host): row_ptr[0] = 0, row_ptr[n_rows] = nnz, offsets nondecreasing, column indices in
 * [0, n_cols) and strictly increasing within each row (else KRILL_ERR_ARG naming an
 * offending row or entry), values finite (else KRILL_ERR_NUMERIC, as krill_mat_create's
 * check says). What krill allocates is the
 * long-row tables of the CSR kernels (rows of more than 128 x lanes entries; none for most
 * FEM matrices: krill_ctx_alloc_stats_get shows it) and a host copy of the row offsets
 * during this call. krill_mat_update_values works on it: host values are uploaded into
 * `val` (krill writes the caller's array), and values = NULL says the caller changed `val`
 * in place (checked finite again: after a failure the array holds the caller's bad values,
 * so the matrix must get finite ones before its next use). Everything else (solvers, preconditioners, reproducible
 * mode, krill_mat_to_csr) is as for krill_mat_create(ctx, csr, "csr"). A CPU context is
 * KRILL_ERR_UNSUPPORTED (use krill_mat_create); a NULL argument (col and val may be NULL
 * when nnz = 0), n_rows or n_cols outside [0, 2^31 - 1), nnz < 0 or index_bytes other than 4
 * or 8 is KRILL_ERR_ARG naming it; int32_t offsets need nnz < 2^31. */
krill_status krill_mat_create_device_csr(krill_ctx *ctx, int64_t n_rows, int64_t n_cols,
                                         int64_t nnz, const void *row_ptr, int index_bytes,
                                         const int32_t *col, double *val, krill_mat **mat);

/* y = alpha*A*x + beta*y. beta == 0 ignores y's old contents (NaN included). */
krill_status krill_mat_spmv(const krill_mat *mat, double alpha, const krill_vec *x,
                            double beta, krill_vec *y);

/* New values, same pattern: `values` are nnz host doubles in the order of the CSR the
 * matrix was created from. No re-analysis. Non-finite values are refused. A matrix of
 * krill_mat_create_device_csr also takes NULL: its caller's array changed in place. */
krill_status krill_mat_update_values(krill_mat *mat, const double *values);

/* The matrix as a new host CSR (its current values; free with krill_csr_destroy): what it
 * was created from, whatever the format and device. Costs a pass over the matrix (and a
 * download on the GPU): for setup, never for a solve loop. */
krill_status krill_mat_to_csr(const krill_mat *mat, krill_csr **csr);

/* The diagonal into d (a vector of n_rows on the same context); missing entries are 0. */
krill_status krill_mat_diagonal(const krill_mat *mat, krill_vec *d);

void krill_mat_stats(const krill_mat *mat, krill_format_stats *stats);
const char *krill_mat_format(const krill_mat *mat);     /* registry name, e.g. "csr" */
int64_t krill_mat_rows(const krill_mat *mat);
int64_t krill_mat_cols(const krill_mat *mat);
int64_t krill_mat_nnz(const krill_mat *mat);
krill_ctx *krill_mat_ctx(const krill_mat *mat);

/* Time y = A*x (alpha = 1, beta = 0, x = 1) on the matrix's context: `warmup` untimed
 * SpMVs, then `reps` timed one by one (CUDA events on the context's stream on the GPU, the
 * monotonic host clock on the CPU); *median_seconds receives the median. reps >= 1. */
krill_status krill_mat_time_spmv(const krill_mat *mat, int warmup, int reps,
                                 double *median_seconds);

/* For a matrix created with "auto" or "auto:measure": one line saying which format was
 * chosen and why (e.g. "rbp-ell: 31% fewer bytes than csr, rows 27 +- 0"); for any other
 * format: NULL. krill_mat_format() then names the chosen format. */
const char *krill_mat_choice(const krill_mat *mat);

/* Registered format names, NULL-terminated. */
const char *const *krill_format_names(void);

#ifdef __cplusplus
}
#endif
#endif
