/* formats/formats_impl.h - the sparse-format function table and the registry.
 *
 * Each format is one file pair: NAME.c (host build, CPU SpMV, and the ops tables) and
 * NAME.cu (device kernels behind extern "C" launchers). A format has one const table per
 * device; the registry (registry.c) lists them by name. Adding a format is a file pair and
 * a registry line: the solvers never see a format's functions, only krill_mat_* below. */
#ifndef KRILL_FORMATS_IMPL_H
#define KRILL_FORMATS_IMPL_H

#include "core/core_impl.h"
#include "krill/mat.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct krill_format_ops {
    const char *name;
    /* Build from a validated host CSR. `param` is the text after "name:" (NULL if none),
     * e.g. "vector" for "csr:vector"; an unknown param fails with KRILL_ERR_ARG. */
    krill_status (*build)(krill_ctx *ctx, const krill_csr *csr, const char *param, void **impl);
    /* y = alpha*A*x + beta*y, x and y in context memory, beta == 0 ignores y. */
    krill_status (*spmv)(krill_ctx *ctx, const void *impl, double alpha, const double *x,
                         double beta, double *y);
    /* Optional (NULL = not offered): y = A*x and *xy = x'y (xy in context memory) in one
     * pass, which saves CG a read of x and y per iteration. */
    krill_status (*spmv_dot)(krill_ctx *ctx, const void *impl, const double *x, double *y,
                             double *xy);
    /* New values (host, CSR order of the build), same pattern. */
    krill_status (*update_values)(krill_ctx *ctx, void *impl, const double *values);
    /* d[i] = a_ii (0 where absent), d in context memory. */
    krill_status (*diagonal)(krill_ctx *ctx, const void *impl, double *d);
    void (*stats)(const void *impl, krill_format_stats *stats);
    void (*destroy)(krill_ctx *ctx, void *impl);
} krill_format_ops;

typedef struct krill_format_entry {
    const char *name;                    /* registry name, e.g. "csr" */
    const char *summary;                 /* one line for `krill formats` and errors */
    const krill_format_ops *cpu;         /* NULL: no CPU implementation */
    const krill_format_ops *cuda;        /* NULL: no GPU implementation (or no CUDA build) */
} krill_format_entry;

/* Find a format by "name" or "name:param"; *param receives the text after ':' or NULL. */
const krill_format_entry *krill_format_find(const char *name, const char **param);

struct krill_mat {
    krill_ctx *ctx;
    const krill_format_ops *ops;
    void *impl;
    int64_t n_rows, n_cols, nnz;
    char name[64];                       /* as asked, e.g. "csr:vector" */
};

/* Raw-pointer forms for the solvers (x, y, xy in context memory). */
krill_status krill_mat_spmv_raw(const krill_mat *a, double alpha, const double *x,
                                double beta, double *y);
/* y = A*x and *xy = x'y; falls back to spmv + dot when the format has no spmv_dot. */
krill_status krill_mat_spmv_dot_raw(const krill_mat *a, const double *x, double *y, double *xy);
krill_status krill_mat_diagonal_raw(const krill_mat *a, double *d);

/* Row statistics every format reports: n_rows, n_cols, nnz, max_row_nnz, mean_row_nnz,
 * empty_rows (bytes and variant are left to the format). */
void krill_csr_row_stats(const krill_csr *csr, krill_format_stats *stats);
/* The RBP quantities of a CSR (n_val, n_col, n_non, kv, kc; the rest untouched): what
 * every RBP format stores and what `auto` estimates bytes from, without building. */
void krill_csr_run_stats(const krill_csr *csr, krill_format_stats *stats);

/* ELL and ELL-R on the host (formats/ell.c; the GPU build in ell.cu uploads these arrays).
 * Column-major N x K: entry k of row i at [k * N + i], so consecutive rows (threads) read
 * consecutive addresses. Padding: value 0, column -1, and the kernels skip it, so a row is
 * summed in CSR order, nothing added. K is the longest row; N * K above INT32_MAX entries is
 * refused (KRILL_ERR_UNSUPPORTED): ELL would store more padding than any GPU holds. */
typedef struct krill_ell_host {
    int64_t n_rows, n_cols, nnz, k;
    int32_t *col;            /* N * K column indices, -1 in padding */
    double *val;             /* N * K values, 0 in padding */
    int32_t *len;            /* N row lengths (ELL-R's extra array; ELL uses it to scatter new
                                values and does not count it as stored) */
} krill_ell_host;

krill_status krill_ell_host_build(const krill_csr *csr, krill_ell_host *e);
/* Scatter nnz new values (the CSR order of the build) into e->val. */
void krill_ell_host_scatter(krill_ell_host *e, const double *values);
void krill_ell_host_free(krill_ell_host *e);
/* Stats shared by both devices: formulas (2) ELL and (3) ELL-R of the RBP paper with
 * krill's widths: 8 N K + 4 N K (+ 4 N) bytes. */
void krill_ell_stats(const krill_ell_host *e, int with_len, krill_format_stats *s);

/* Format tables, defined in formats/NAME.c (CPU) and formats/NAME.cu (CUDA). */
extern const krill_format_ops krill_csr_cpu_ops;
extern const krill_format_ops krill_ell_cpu_ops;
extern const krill_format_ops krill_ellr_cpu_ops;
#ifdef KRILL_HAVE_CUDA
extern const krill_format_ops krill_csr_cuda_ops;
extern const krill_format_ops krill_ell_cuda_ops;
extern const krill_format_ops krill_ellr_cuda_ops;
extern const krill_format_ops krill_cusparse_cuda_ops;
#endif

#ifdef __cplusplus
}
#endif
#endif
