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
#include "ozaki/ozaki_row.h"

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
    /* Reproducible SpMV (NULL = not offered; krill_mat_spmv_raw calls it when the context's
     * krill_ctx_repro is not KRILL_REPRO_OFF): y_i = krill_oz_axpby(alpha, s_i, beta, y_i)
     * for every row i, where s_i is the correctly rounded value of the exact sum of row i's
     * stored products a_ij x_j (ozaki/ozaki_row.h; whatever the context's slice count).
     * s_i depends only on the multiset of products, so every format, thread count and device
     * gives the same bits. Padding is never multiplied (0 * Inf would be NaN); beta == 0
     * does not read y; alpha == 0 still computes s_i. A GPU table refuses a matrix with a row
     * longer than KRILL_OZ_ROW_MAX_N with KRILL_ERR_UNSUPPORTED (ozaki/ozaki_row.cuh). */
    krill_status (*spmv_repro)(krill_ctx *ctx, const void *impl, double alpha, const double *x,
                               double beta, double *y);
    /* Optional (NULL = not offered): y = A*x and *xy = x'y (xy in context memory) in one
     * pass, which saves CG a read of x and y per iteration. */
    krill_status (*spmv_dot)(krill_ctx *ctx, const void *impl, const double *x, double *y,
                             double *xy);
    /* New values (host, CSR order of the build), same pattern. */
    krill_status (*update_values)(krill_ctx *ctx, void *impl, const double *values);
    /* d[i] = a_ii (0 where absent), d in context memory. */
    krill_status (*diagonal)(krill_ctx *ctx, const void *impl, double *d);
    /* The matrix back as a new host CSR (pattern and current values, the CSR order of the
     * build): what preconditioners factor. Not in any solve loop (a GPU format downloads). */
    krill_status (*to_csr)(krill_ctx *ctx, const void *impl, krill_csr **csr);
    void (*stats)(const void *impl, krill_format_stats *stats);
    void (*destroy)(krill_ctx *ctx, void *impl);
    /* Optional (NULL = not offered): the n_rows / b dense b x b diagonal blocks of A (b
     * divides n_rows), row-major, block after block, into host memory (n_rows * b doubles;
     * entries absent from the pattern are 0). What block-Jacobi inverts, without the whole
     * matrix leaving a GPU. */
    krill_status (*diagonal_blocks)(krill_ctx *ctx, const void *impl, int b, double *blocks);
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
    char choice[640];                    /* "auto": the format chosen and why; "" otherwise */
    /* krill_mat_create_device_csr: the caller's device arrays (update_values may take NULL) */
    const void *device_row_ptr;
    int device_wide;
    const int32_t *device_col;
    const double *device_val;
};

/* Raw-pointer forms for the solvers (x, y, xy in context memory). */
krill_status krill_mat_spmv_raw(const krill_mat *a, double alpha, const double *x,
                                double beta, double *y);
/* y = A*x and *xy = x'y; falls back to spmv + dot when the format has no spmv_dot. */
krill_status krill_mat_spmv_dot_raw(const krill_mat *a, const double *x, double *y, double *xy);
krill_status krill_mat_diagonal_raw(const krill_mat *a, double *d);
/* The format's diagonal_blocks, or KRILL_ERR_UNSUPPORTED without a message when it offers
 * none (the caller goes through krill_mat_to_csr instead). */
krill_status krill_mat_diagonal_blocks_raw(const krill_mat *a, int b, double *blocks);

/* The shell matrix (formats/shell.c): a matrix known by a callback y = A x. */
extern const krill_format_ops krill_shell_ops;
int krill_mat_is_shell(const krill_mat *a);      /* 1 for a krill_mat_create_shell matrix */
/* y = apply(user, x, y, n) after synchronizing ctx (x complete on a GPU); a failing
 * callback's status comes back with a message naming `what` ("shell matrix") and what the
 * callback left in krill_last_error. Shared by the shell matrix and the shell
 * preconditioner (precond/shell.c). */
krill_status krill_shell_call(krill_ctx *ctx, krill_shell_apply apply, void *user,
                              const double *x, double *y, int64_t n, const char *what);

/* Row statistics every format reports: n_rows, n_cols, nnz, max_row_nnz, mean_row_nnz,
 * empty_rows (bytes and variant are left to the format). */
void krill_csr_row_stats(const krill_csr *csr, krill_format_stats *stats);
/* krill_mat_create of a registered format (not auto) for a CSR that krill_csr_check has
 * passed: what auto builds its choice with, so that the matrix is checked once. */
krill_status krill_mat_build(krill_ctx *ctx, const krill_csr *csr, const char *format,
                             krill_mat **out);
/* Lanes per row of the GPU csr and rbp-csr row kernels for rows of mean length
 * mean_row_nnz: a power of two in [min_lanes, 32] (1 = a thread per row); n_rows > 0 also
 * gives a matrix too small to fill the GPU more lanes (formats/csr.c says how). */
int krill_gpu_lanes_per_row(double mean_row_nnz, int64_t n_rows, int min_lanes);
/* The RBP quantities of a CSR (n_val, n_col, n_non, kv, kc; the rest untouched): what
 * every RBP format stores and what `auto` estimates bytes from, without building; the rows
 * on `threads` threads (0: OpenMP's default; integer sums, the same for any count). */
void krill_csr_run_stats(const krill_csr *csr, int threads, krill_format_stats *stats);
/* The runs of row i: *run_values values in runs (two or more consecutive columns), 2 column
 * indices per run in *run_cols, the other entries in *isolated. One branch-free pass over
 * the row: entry p links to p - 1 when col[p] = col[p - 1] + 1; a run of L entries is L - 1
 * links, and a link not preceded by one starts a run, so values = links + runs. */
static inline void krill_csr_row_runs(const krill_csr *a, int64_t i, int64_t *run_values,
                                      int64_t *run_cols, int64_t *isolated)
{
    const int64_t start = a->row_ptr[i], end = a->row_ptr[i + 1];
    int64_t links = 0, runs = 0;
    int prev = 0;
    for (int64_t p = start + 1; p < end; p++) {
        const int link = a->col[p] == a->col[p - 1] + 1;
        runs += link & !prev;
        links += link;
        prev = link;
    }
    *run_values = links + runs;
    *run_cols = 2 * runs;
    *isolated = end - start - *run_values;
}

/* ELL and ELL-R on the host (formats/ell.c; the GPU builds its own from the CSR, ell.cu).
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

/* The arrays from a validated CSR, the rows in parallel on `threads` threads (0: OpenMP's
 * default; the same arrays for any count). */
krill_status krill_ell_host_build(const krill_csr *csr, int threads, krill_ell_host *e);
/* The build's first half: the sizes, K (checked) and the row lengths, col and val NULL (the
 * GPU build fills its device arrays from the CSR itself, formats/ell.cu). */
krill_status krill_ell_host_shape(const krill_csr *csr, krill_ell_host *e);
/* Scatter nnz new values (the CSR order of the build) into e->val. */
void krill_ell_host_scatter(krill_ell_host *e, const double *values);
/* The matrix back as a new host CSR (to_csr) from e's col, val and len, which must all be on
 * the host (the GPU passes a copy of its host struct with the downloaded col and val). */
krill_status krill_ell_host_to_csr(const krill_ell_host *e, krill_csr **csr);
void krill_ell_host_free(krill_ell_host *e);
/* Stats shared by both devices: formulas (2) ELL and (3) ELL-R of the RBP paper with
 * krill's widths: 8 N K + 4 N K (+ 4 N) bytes. */
void krill_ell_stats(const krill_ell_host *e, int with_len, krill_format_stats *s);

/* `auto` (formats/auto.c): choose a format for a validated CSR from its row and run
 * statistics, weighing each format's build against the SpMVs expected (param NULL: one
 * GMRES(30) cycle; "spmvs=N": N), or by timing the plausible candidates (param "measure"),
 * build it, and record the reason in (*mat)->choice. Other params, and an N that is not a
 * whole number from 1 to 10^15, fail with KRILL_ERR_ARG. */
krill_status krill_auto_create(krill_ctx *ctx, const krill_csr *csr, const char *param,
                               krill_mat **mat);
/* The chooser's estimate for one format it knows (csr, ell, ellr, rbp-csr, rbp-ell,
 * rbp-ellr, segscan) on a validated CSR: the bytes the format would store and its model
 * SpMV seconds on ctx's device; another name fails with KRILL_ERR_ARG. */
krill_status krill_auto_estimate(krill_ctx *ctx, const krill_csr *csr, const char *format,
                                 double *stored_bytes, double *seconds);

#ifdef KRILL_HAVE_CUDA
/* A stopwatch of two CUDA events for krill_mat_time_spmv (formats/measure.cu): start and
 * stop are recorded on the context's stream; stop waits for the stop event and gives the
 * seconds of device time between the two. */
krill_status krill_cuda_stopwatch_create(krill_ctx *ctx, void **watch);
krill_status krill_cuda_stopwatch_start(krill_ctx *ctx, void *watch);
krill_status krill_cuda_stopwatch_stop(krill_ctx *ctx, void *watch, double *seconds);
void krill_cuda_stopwatch_destroy(void *watch);         /* NULL-safe */
/* A new host CSR from CSR arrays in device memory (formats/csr_arrays.cu; the to_csr of the
 * GPU csr and cusparse): n_rows + 1 row offsets and nnz columns, each 64-bit when its wide flag is
 * set, else 32-bit, and nnz values. */
krill_status krill_csr_cuda_download(krill_ctx *ctx, int64_t n_rows, int64_t n_cols, int64_t nnz,
                                     const void *row_ptr, int wide_offsets, const void *col,
                                     int wide_cols, const double *val, krill_csr **csr);
/* KRILL_ERR_UNSUPPORTED naming `format` when max_row_nnz (the longest row of the build)
 * passes KRILL_OZ_ROW_MAX_N, the most a GPU thread's exact path holds (the GPU launchers of
 * ozaki/ozaki_row.cuh, and dist/'s whole rows when it builds them). */
static inline krill_status krill_oz_spmv_fits(const char *format, int64_t max_row_nnz)
{
    if (max_row_nnz > KRILL_OZ_ROW_MAX_N)
        return krill_error(KRILL_ERR_UNSUPPORTED, "%s: reproducible SpMV on the GPU: a row has "
                           "%lld entries, more than the %lld a GPU thread's exact row sum holds "
                           "(KRILL_OZ_ROW_MAX_N); run this matrix on a CPU context", format,
                           (long long)max_row_nnz, (long long)KRILL_OZ_ROW_MAX_N);
    return KRILL_OK;
}

/* The spmv_repro of CSR arrays in device memory (formats/csr_arrays.cu; the GPU csr and
 * cusparse, and dist/'s whole rows):
 * offsets 64-bit when wide_offsets is set, columns too when wide_cols is (which implies
 * wide_offsets, as in cusparse), else 32-bit; max_row_nnz from the build (a row longer
 * than KRILL_OZ_ROW_MAX_N: KRILL_ERR_UNSUPPORTED naming `format`); mean_row_nnz sets the
 * lanes per row (krill_oz_row_lanes, ozaki/ozaki_row.cuh). out_rows (device, n_rows
 * entries, or NULL for the identity): row i's result goes to y[out_rows[i]], so the arrays
 * may hold a subset of y's rows (the other rows of y are not touched). */
krill_status krill_csr_cuda_spmv_repro(krill_ctx *ctx, const char *format, int64_t n_rows,
                                       int64_t max_row_nnz, double mean_row_nnz,
                                       const void *row_ptr, int wide_offsets, const void *col,
                                       int wide_cols, const double *val,
                                       const int32_t *out_rows, double alpha, const double *x,
                                       double beta, double *y);
/* The checks of a caller's device CSR arrays (formats/csr_arrays.cu): with host_row_ptr (the
 * offsets as checked on the host) the columns (KRILL_ERR_ARG), and always the values
 * (KRILL_ERR_NUMERIC); the message names `who` and an offending entry. */
krill_status krill_csr_cuda_check(krill_ctx *ctx, const char *who, int64_t n_rows,
                                  int64_t n_cols, int64_t nnz, const void *row_ptr,
                                  int wide_offsets, const int64_t *host_row_ptr,
                                  const int32_t *col, const double *val);
/* The GPU csr format over the caller's checked device arrays, without a copy (formats/csr.cu;
 * `host` carries the sizes and the offsets on the host, its col and val unused). */
krill_status krill_csr_cuda_wrap(krill_ctx *ctx, const krill_csr *host, const void *row_ptr,
                                 int wide_offsets, const int32_t *col, double *val, void **impl);
#endif

/* Row Block Packing (formats/rbp.c; the RBP paper, Algorithms 3-5). In each row, a run of
 * two or more consecutive columns is stored as its (first, last) column pair and all its
 * values; the other (isolated) entries go to a CSR part. krill_rbp_host is the RBP-CSR
 * layout of Algorithm 3, built on the host for both devices; RBP-ELL is derived from it.
 * Widths are the paper's: 4-byte columns and offsets. A matrix whose N_val or N_non passes
 * 2^31 - 1 is refused (KRILL_ERR_UNSUPPORTED), as is an RBP-ELL with N * K_v past it. */
typedef struct krill_rbp_host {
    int64_t n_rows, n_cols, nnz;
    int64_t n_val, n_col, n_non;  /* lengths of comp_val, comp_col, non_col and non_val */
    int32_t *val_ptr;        /* N + 1: row i's run values are comp_val[val_ptr[i] ..] */
    int32_t *col_ptr;        /* N + 1: its (first, last) pairs comp_col[col_ptr[i] ..] */
    int32_t *row_ptr;        /* N + 1: its isolated entries non_*[row_ptr[i] ..] (RowPtr) */
    int32_t *comp_col;       /* N_col: first, last, first, last, ... (Comp_Columns) */
    double *comp_val;        /* N_val: every value of every run (Comp_Values) */
    int32_t *non_col;        /* N_non: isolated columns (ColumnsCSR) */
    double *non_val;         /* N_non: isolated values (ValuesCSR) */
} krill_rbp_host;

/* KRILL_OK when the counts in s (krill_csr_run_stats) fit the 4-byte widths of `format`
 * ("rbp-csr", or "rbp-ell"/"rbp-ellr" with ell_layout = 1, which also caps N * K_v at
 * 2^31 - 1 like ell); else KRILL_ERR_UNSUPPORTED with the count and a way out. */
krill_status krill_rbp_fits(const char *format, int ell_layout, const krill_format_stats *s);
/* Algorithm 3 on a validated CSR; `format` names the caller in the refusal message; the
 * rows in parallel on `threads` threads (0: OpenMP's default; the arrays the same for any
 * count). */
krill_status krill_rbp_host_build(const krill_csr *csr, const char *format, int threads,
                                  krill_rbp_host *h);
/* New values (nnz, the CSR order of the build) into comp_val (n_val) and non_val (n_non),
 * which may be h's own arrays or others of their lengths. Uses only h's index arrays. */
void krill_rbp_host_scatter(const krill_rbp_host *h, const double *values, double *comp_val,
                            double *non_val);
/* The matrix back as a new host CSR (to_csr): runs and isolated entries merged by column.
 * Reads every array of h, values included, on the host (the GPU passes a copy of its host
 * struct with the downloaded comp_val and non_val). */
krill_status krill_rbp_host_to_csr(const krill_rbp_host *h, krill_csr **csr);
void krill_rbp_host_free(krill_rbp_host *h);
/* Rows per dynamic OpenMP chunk of the CPU RBP kernels for n_rows rows on `threads`. */
int krill_rbp_cpu_chunk(int64_t n_rows, int threads);

/* RBP-ELL and RBP-ELL-R on the host (formats/rbp_ell.c; rbp_ell.cu uploads these arrays):
 * the runs in a compressed ELL, column-major like ell (entry k of row i at k * N + i); the
 * isolated entries in a CSR part. Row i's pairs are col[(2p) N + i], col[(2p + 1) N + i] for
 * p = 0, 1, ...; its run values val[j N + i], j = 0 .. len[i] - 1, in the same order.
 * Padding: value 0 and the pair (0, 0), which no run can be (first < last); the kernels stop
 * at it before reading x. */
typedef struct krill_rbp_ell_host {
    int64_t n_rows, n_cols, nnz;
    int64_t kv, kc, n_non;
    int32_t *col;            /* N * K_c run column pairs (ColumnsELL) */
    double *val;             /* N * K_v run values (ValuesELL) */
    int32_t *len;            /* N: run values of each row (RBP-ELL-R's array) */
    int32_t *row_ptr;        /* N + 1 (RowPtr of the CSR part) */
    int32_t *non_col;        /* N_non */
    double *non_val;         /* N_non */
} krill_rbp_ell_host;

krill_status krill_rbp_ell_host_build(const krill_csr *csr, const char *format, int threads,
                                      krill_rbp_ell_host *e);
/* New values (nnz, CSR order of the build) into val (N * K_v, padding left as it is) and
 * non_val (N_non). Uses only e's index arrays. */
void krill_rbp_ell_host_scatter(const krill_rbp_ell_host *e, const double *values, double *val,
                                double *non_val);
/* The matrix back as a new host CSR (to_csr) from e's col, val, row_ptr, non_col and
 * non_val on the host (len is not needed; the GPU passes a copy of its host struct with the
 * downloaded val and non_val). */
krill_status krill_rbp_ell_host_to_csr(const krill_rbp_ell_host *e, krill_csr **csr);
void krill_rbp_ell_host_free(krill_rbp_ell_host *e);

/* Stats shared by both devices: row and run statistics of the CSR the matrix was built
 * from, and bytes as stored: formula (4) RBP-CSR 12 (N + 1) + 4 N_col + 8 N_val + 12 N_non;
 * (5) RBP-ELL 8 N K_v + 4 N K_c + 12 N_non + 4 (N + 1); (6) RBP-ELL-R (5) + 4 N. */
size_t krill_rbp_csr_bytes(const krill_rbp_host *h);
size_t krill_rbp_ell_bytes(const krill_rbp_ell_host *e, int with_len);

/* Segmented scan (formats/segscan.c, segscan.cu; the SpMV paper, section 4), built on the
 * host for both devices. The nonzeros in CSR order form one stream, with one stored zero
 * for each empty row (so that every row has an element and its y_i is written) and zeros
 * after the last row up to a whole warp tile. The stream is cut into segments of
 * KRILL_SEGSCAN_SEG elements; every element carries a hint byte computed here, once:
 *   bits 0-4  its index in its run (a run: the part of a row inside one segment), which
 *             drives the branch-free halving-threshold tree of the GPU kernel;
 *   HEAD      first element of its row;  TAIL  last element of its row;
 *   PAD       a stored zero, no entry of the matrix (x is not read for it).
 * The zeros after the last row belong to it (TAIL moves to the stream's end). A warp sums
 * KRILL_SEGSCAN_WARP_SEGS consecutive segments (a warp tile) and a block of
 * KRILL_SEGSCAN_BLOCK_WARPS warps one tile; a row with elements in two or more tiles is a
 * "span", finished by a fix-up pass from the partial sums each tile leaves. Stream indices
 * are 64-bit; rows, row counts and tile numbers 32-bit (more than 2^31 - 1 tiles refused). */
#define KRILL_SEGSCAN_SEG 32            /* segment length: one element per lane of a warp */
#define KRILL_SEGSCAN_WARP_SEGS 8       /* segments per warp tile: loads in flight per lane */
#define KRILL_SEGSCAN_WARP_TILE (KRILL_SEGSCAN_SEG * KRILL_SEGSCAN_WARP_SEGS)       /* 256 */
#define KRILL_SEGSCAN_BLOCK_WARPS 8     /* warp tiles per tile: a block of 256 threads */
#define KRILL_SEGSCAN_TILE (KRILL_SEGSCAN_WARP_TILE * KRILL_SEGSCAN_BLOCK_WARPS)    /* 2048 */
#define KRILL_SEGSCAN_INDEX 0x1f
#define KRILL_SEGSCAN_HEAD 0x20
#define KRILL_SEGSCAN_PAD 0x40
#define KRILL_SEGSCAN_TAIL 0x80

typedef struct krill_segscan_host {
    int64_t n_rows, n_cols, nnz;
    int64_t len;             /* stream length: nnz + empty rows, rounded up to a warp tile */
    int64_t n_tiles;         /* tiles of KRILL_SEGSCAN_TILE elements (the last may be short) */
    int64_t n_span;          /* rows with elements in more than one tile */
    int64_t n_empty;         /* empty rows */
    double *val;             /* len values, 0 at PAD */
    int32_t *col;            /* len columns, 0 at PAD */
    uint8_t *hint;           /* len hint bytes */
    int32_t *warp_heads;     /* len / KRILL_SEGSCAN_WARP_TILE: row heads before each warp tile,
                                so element k is in row (heads in [0, k]) - 1 */
    int32_t *span;           /* 3 n_span: row, first tile, last tile (ascending rows) */
    int64_t *empty_pos;      /* n_empty stream positions of the empty rows' zeros (host only:
                                update_values scatters around them) */
    krill_format_stats stats;   /* row statistics and bytes (the same on both devices) */
} krill_segscan_host;

/* Build the stream, hints, warp-tile row counts and spans from a validated CSR, the rows
 * in parallel on `threads` threads (0: OpenMP's default; the same arrays for any count). */
krill_status krill_segscan_host_build(const krill_csr *csr, int threads, krill_segscan_host *h);
/* The stream's len values from nnz new values in CSR order (zeros at the PAD positions). */
void krill_segscan_host_scatter(const krill_segscan_host *h, const double *values, double *val);
/* The matrix back as a new host CSR (to_csr) from h's val, col and hint on the host (the
 * GPU passes a copy of its host struct with the downloaded stream). */
krill_status krill_segscan_host_to_csr(const krill_segscan_host *h, krill_csr **csr);
void krill_segscan_host_free(krill_segscan_host *h);

/* ---- reproducible SpMV on the CPU (formats/spmv_repro.c) --------------------------------
 * A format's row visitor hands every stored entry a_ij of one row, with x_j, to
 * krill_row_sink_term, in any order, each entry once, padding skipped (never a 0 * x_j: an
 * Inf in x would make it NaN). It is called once per row with a sink that runs the fast
 * path, and for the rare row that the fast path leaves undecided twice more: with a sink
 * that gathers the row's statistics, then with one that accumulates the exact products
 * (the passes of ozaki/ozaki_row.h). In the fast pass the terms are gathered into the
 * sink's arrays and summed a chunk at a time (krill_row_sink_flush), by a loop that keeps
 * the compensated sum in registers: summed term by term through the sink's pointer, the
 * sum's dependency chains would pass through memory (a store and a load per term). */
#define KRILL_ROW_SINK_CHUNK 64
typedef struct krill_row_sink {
    krill_oz_fast *fast;             /* pass 1: the fast path's state; NULL after */
    krill_oz_row *row;               /* passes 2 (acc NULL: statistics) and 3 (products) */
    int64_t *acc;                    /* pass 3: the row's diagonal sums */
    int n;                           /* pass 1: terms waiting in a[] and x[] */
    double a[KRILL_ROW_SINK_CHUNK], x[KRILL_ROW_SINK_CHUNK];
} krill_row_sink;

/* pass 1: the n waiting terms into *fast, n <- 0 */
void krill_row_sink_flush(krill_row_sink *sink);

static inline void krill_row_sink_term(krill_row_sink *sink, double a, double x)
{
    if (sink->fast) {
        sink->a[sink->n] = a;
        sink->x[sink->n] = x;
        if (++sink->n == KRILL_ROW_SINK_CHUNK) krill_row_sink_flush(sink);
    } else if (!sink->acc) {
        krill_oz_row_stats(sink->row, a, x);
    } else {
        krill_oz_row_add(sink->row, a, x, sink->acc);
    }
}

/* krill_row_sink_term for the n terms val[k] x[col[k]], k < n, in order (col NULL: the
 * terms val[k] x[k], a run of consecutive columns): in pass 1 copied a chunk at a time (a
 * loop without the per-term branch and count: csr's repro SpMV 1.4x faster on rows of 80-100
 * entries, 1.05-1.3x on poisson3d's 7, on the 2-core VM, doc/reproducible.md), else term by
 * term. */
static inline void krill_row_sink_span(krill_row_sink *sink, const double *val,
                                       const int32_t *col, int64_t n, const double *x)
{
    if (!sink->fast) {
        for (int64_t k = 0; k < n; k++) krill_row_sink_term(sink, val[k], x[col ? col[k] : k]);
        return;
    }
    while (n > 0) {
        const int room = KRILL_ROW_SINK_CHUNK - sink->n;
        const int take = n < room ? (int)n : room;
        double *sa = sink->a + sink->n, *sx = sink->x + sink->n;
        for (int k = 0; k < take; k++) sa[k] = val[k];
        if (col)
            for (int k = 0; k < take; k++) sx[k] = x[col[k]];
        else
            for (int k = 0; k < take; k++) sx[k] = x[k];
        sink->n += take;
        val += take;
        x = col ? x : x + take;
        col = col ? col + take : NULL;
        n -= take;
        if (sink->n == KRILL_ROW_SINK_CHUNK) krill_row_sink_flush(sink);
    }
}

/* The visitor of row `row` (a row index, or any key the format's loop passes). */
typedef void (*krill_row_visit_fn)(const void *impl, int64_t row, const double *x,
                                   krill_row_sink *sink);

/* The correctly rounded sum of the products of one row; acc: KRILL_OZ_MAX_DIAG int64. */
double krill_row_sum_repro(krill_row_visit_fn visit, const void *impl, int64_t row,
                           const double *x, int64_t *acc);
/* y_i = krill_oz_axpby(alpha, s_i, beta, y_i) for rows i < n_rows (beta == 0: y not read),
 * each row by one of `threads` OpenMP threads, rows handed out in dynamic chunks
 * (krill_rbp_cpu_chunk): the bits do not depend on the thread count or the schedule. */
void krill_spmv_repro_rows(krill_row_visit_fn visit, const void *impl, int64_t n_rows,
                           int threads, double alpha, const double *x, double beta, double *y);

/* Format tables, defined in formats/NAME.c (CPU) and formats/NAME.cu (CUDA). */
extern const krill_format_ops krill_csr_cpu_ops;
extern const krill_format_ops krill_ell_cpu_ops;
extern const krill_format_ops krill_ellr_cpu_ops;
extern const krill_format_ops krill_segscan_cpu_ops;
extern const krill_format_ops krill_rbp_csr_cpu_ops;
extern const krill_format_ops krill_rbp_ell_cpu_ops;
extern const krill_format_ops krill_rbp_ellr_cpu_ops;
#ifdef KRILL_HAVE_CUDA
extern const krill_format_ops krill_csr_cuda_ops;
extern const krill_format_ops krill_ell_cuda_ops;
extern const krill_format_ops krill_ellr_cuda_ops;
extern const krill_format_ops krill_segscan_cuda_ops;
extern const krill_format_ops krill_rbp_csr_cuda_ops;
extern const krill_format_ops krill_rbp_ell_cuda_ops;
extern const krill_format_ops krill_rbp_ellr_cuda_ops;
extern const krill_format_ops krill_cusparse_cuda_ops;
#endif

#ifdef __cplusplus
}
#endif
#endif
