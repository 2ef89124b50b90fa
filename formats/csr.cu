/* formats/csr.cu - CSR on the GPU: the "csr" format table for CUDA contexts.
 *
 * Storage: row offsets as int32_t when nnz <= INT32_MAX (else int64_t; the kernels are
 * templates on the offset type), int32_t columns, double values: (n_rows + 1) * 4 + 12 nnz
 * bytes in the common case. The oracle is krill_csr_spmv_ref (core/csr.c).
 *
 * Kernels (the two of the SpMV paper, sections 2-3), one template csr_rows_kernel<L>:
 *   "scalar" (L = 1): one thread per row;
 *   "vector:L" (L = 2..32): a sub-warp of L lanes per row, each lane summing every L-th
 *     entry of the row, then a shuffle tree inside the sub-warp.
 * Both use cyclic assignment: consecutive threads (sub-warps) take consecutive rows, and a
 * grid-stride loop moves the whole grid on by its width, so that a warp's loads fall on
 * neighbouring rows - the assignment that won for band1 and band3 in the paper.
 * The paper's section 3 variants, for comparison in benchmarks (forced, no long-row path):
 *   "cyclic": one thread per row, cyclic assignment (the "scalar" kernel, named as the paper
 *     names it);
 *   "block": one thread per row, block assignment (csr_block_rows_kernel): thread t of T
 *     takes the contiguous rows [t ceil(N/T), (t+1) ceil(N/T)), so a warp's 32 loads at each
 *     step fall ceil(N/T) rows apart;
 *   "warp": one warp (32 lanes) per row, the paper's row-per-MP kernel with its reduction
 *     ("vector:32"; "vector" picks fewer lanes for short rows).
 * Each row's sum is accumulated in entry order per lane with fused multiply-adds, so y is
 * run-to-run exact; y_r = alpha*sum + beta*y_r is rounded as written (beta == 0: y not read).
 *
 * Choice ("csr" or "csr:auto"), from the mean row length computed at build: L lanes per row,
 * (krill_gpu_lanes_per_row, formats/csr.c) L the power of two nearest mean / 3 (on a log scale) in [1, 32], and
 * L = 1 is "scalar". With 3 entries per lane: scalar below a mean of 4.24, vector:2 below
 * 8.49, vector:4 below 17, vector:8 below 34, vector:16 below 68, vector:32 from there on.
 * "csr:vector" applies the same rule with at least 2 lanes. The automatic choice then gives a
 * small matrix more lanes, up to 32, so that it still fills the GPU (CSR_FILL_THREADS).
 * In the automatic choice, rows longer than CSR_LONG_ROUNDS * L entries ("long rows", such as
 * the full first row of the paper's band1x) are skipped by the row kernel and summed by
 * whole blocks instead: each block adds one chunk of at most CSR_CHUNK entries of one long
 * row (csr_chunk_kernel), then one warp per long row adds its chunk sums in chunk order and
 * updates y (csr_long_rows_kernel). The forced variants ("scalar", "vector", "vector:N") run
 * the plain paper kernels, whatever the rows, so that they can be compared as such.
 *
 * Tried and dropped (2026-11-28, H100, `bench_spmv --device gpu --formats csr` on the paper
 * matrices, poisson3d:160 and elasticity3d:160,64,64, old and new binaries alternating): a
 * lane issuing four rounds of loads before adding, with the next row's offsets loaded during
 * the current row: elasticity3d 906 us against 836 (slower), rand100 196 against 203,
 * the others within 1%.
 *
 * Memory traffic of one SpMV: 12 nnz + 4 (n + 1) bytes of matrix, the x entries the columns
 * touch, y written (and read when beta != 0). spmv_dot adds nothing: the dot x'y is formed
 * from y_r in the register that writes it (and x_r, from cache for most matrices). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/formats_impl.h"
#include "kernels/kernels_impl.cuh"
#include "krill/csr.h"
#include "ozaki/ozaki_row.cuh"

namespace {

/* A row is long (automatic choice only) when its L lanes would need more than this many
 * rounds of loads for it: 128 rounds is many times the few rounds of a typical row, so one
 * such row would hold its (sub-)warp, and the tail of the whole SpMV, long after the rest. */
constexpr int64_t CSR_LONG_ROUNDS = 128;

/* Entries of a long row summed by one block: 16 per thread of a 256-thread block, enough
 * loads in flight per thread and few enough chunk sums for the second pass. */
constexpr int64_t CSR_CHUNK = 16 * KRILL_CUDA_THREADS;

struct csr_gpu {
    int64_t n_rows, n_cols, nnz;
    bool wide;                /* row offsets stored as int64_t (nnz > INT32_MAX, or the
                                 caller's int64_t offsets), else int32_t */
    bool borrowed;            /* row_ptr, col and val are the caller's (device CSR): not freed */
    void *row_ptr;            /* n_rows + 1 offsets */
    int32_t *col;             /* nnz columns */
    double *val;              /* nnz values */
    int lanes;                /* threads per row: 1 (scalar) or 2..32 (vector) */
    bool block_rows;          /* "block": one thread per contiguous chunk of rows */
    int64_t long_min;         /* rows with more entries go to the long-row path */
    int64_t n_long;           /* number of long rows (0: no long-row path) */
    int64_t n_chunks;         /* chunks of CSR_CHUNK entries over all long rows */
    int32_t *long_row;        /* n_long row indices, ascending */
    int64_t *long_first;      /* n_long + 1: row i's chunks are [long_first[i], long_first[i+1]) */
    int64_t *chunk_begin;     /* n_chunks: the chunk's entries are [chunk_begin, chunk_end) */
    int64_t *chunk_end;
    double *chunk_sum;        /* n_chunks partial sums, rewritten by every SpMV */
    int64_t max_row_nnz, empty_rows;
    double mean_row_nnz;
    char variant[32];
};

/* ---- kernels ------------------------------------------------------------------------- */

/* y_r = alpha * (A x)_r + beta * y_r (beta == 0: y_r not read) for the rows with at most
 * long_min entries; with DOT also *xy = sum_r x_r y_r over those rows (the caller passes
 * alpha = 1, beta = 0 and no long rows). Sub-warps of L lanes take rows cyclically; the
 * loop test depends only on the warp, so every lane reaches every shuffle. */
template <int L, typename I, bool DOT>
__global__ void __launch_bounds__(KRILL_CUDA_THREADS)
csr_rows_kernel(int64_t n_rows, const I *__restrict__ row_ptr, const int32_t *__restrict__ col,
                const double *__restrict__ val, int64_t long_min, double alpha,
                const double *__restrict__ x, double beta, double *__restrict__ y, double *work,
                double *xy)
{
    constexpr int rows_per_warp = 32 / L;
    const int lane = threadIdx.x & 31;
    const int sub = lane / L, sublane = lane % L;
    const int64_t warp = ((int64_t)blockIdx.x * KRILL_CUDA_THREADS + threadIdx.x) / 32;
    const int64_t warps = (int64_t)gridDim.x * KRILL_CUDA_WARPS;
    double dot[1] = {0.0};
    for (int64_t first = warp * rows_per_warp; first < n_rows; first += warps * rows_per_warp) {
        const int64_t r = first + sub;
        bool mine = r < n_rows;
        int64_t begin = 0, end = 0;
        if (mine) {
            begin = row_ptr[r];
            end = row_ptr[r + 1];
            mine = end - begin <= long_min;
        }
        double sum = 0.0;
        if (mine)
            for (int64_t k = begin + sublane; k < end; k += L)
                sum = __fma_rn(val[k], x[col[k]], sum);
#pragma unroll
        for (int offset = L / 2; offset > 0; offset >>= 1)
            sum += __shfl_down_sync(0xffffffffu, sum, offset, L);
        if (mine && sublane == 0) {
            const double yr = beta == 0.0 ? __dmul_rn(alpha, sum)
                                          : __dadd_rn(__dmul_rn(alpha, sum), __dmul_rn(beta, y[r]));
            y[r] = yr;
            if (DOT) dot[0] = __fma_rn(x[r], yr, dot[0]);
        }
    }
    if (DOT) krill_grid_sum<1>(dot, work, krill_store_sum{xy});
}

/* "block": y_r = alpha * (A x)_r + beta * y_r with one thread per row and block assignment:
 * thread t of T = gridDim.x * KRILL_CUDA_THREADS takes rows [t c, t c + c), c = ceil(N / T).
 * Each row is summed as in csr_rows_kernel<1> (the same bits as "scalar"); with DOT also
 * *xy = sum_r x_r y_r (alpha = 1, beta = 0). */
template <typename I, bool DOT>
__global__ void __launch_bounds__(KRILL_CUDA_THREADS)
csr_block_rows_kernel(int64_t n_rows, const I *__restrict__ row_ptr,
                      const int32_t *__restrict__ col, const double *__restrict__ val,
                      double alpha, const double *__restrict__ x, double beta,
                      double *__restrict__ y, double *work, double *xy)
{
    const int64_t threads = (int64_t)gridDim.x * KRILL_CUDA_THREADS;
    const int64_t chunk = (n_rows + threads - 1) / threads;
    const int64_t lo = ((int64_t)blockIdx.x * KRILL_CUDA_THREADS + threadIdx.x) * chunk;
    const int64_t hi = lo + chunk < n_rows ? lo + chunk : n_rows;
    double dot[1] = {0.0};
    for (int64_t r = lo; r < hi; r++) {
        const int64_t end = row_ptr[r + 1];
        double sum = 0.0;
        for (int64_t k = row_ptr[r]; k < end; k++) sum = __fma_rn(val[k], x[col[k]], sum);
        const double yr = beta == 0.0 ? __dmul_rn(alpha, sum)
                                      : __dadd_rn(__dmul_rn(alpha, sum), __dmul_rn(beta, y[r]));
        y[r] = yr;
        if (DOT) dot[0] = __fma_rn(x[r], yr, dot[0]);
    }
    if (DOT) krill_grid_sum<1>(dot, work, krill_store_sum{xy});
}

/* chunk_sum[c] = sum of val[k] * x[col[k]] over chunk c's entries, one block per chunk. */
__global__ void __launch_bounds__(KRILL_CUDA_THREADS)
csr_chunk_kernel(int64_t n_chunks, const int64_t *__restrict__ chunk_begin,
                 const int64_t *__restrict__ chunk_end, const int32_t *__restrict__ col,
                 const double *__restrict__ val, const double *__restrict__ x,
                 double *__restrict__ chunk_sum)
{
    for (int64_t c = blockIdx.x; c < n_chunks; c += gridDim.x) {   /* uniform over the block */
        double s[1] = {0.0};
        const int64_t end = chunk_end[c];
        for (int64_t k = chunk_begin[c] + threadIdx.x; k < end; k += KRILL_CUDA_THREADS)
            s[0] = __fma_rn(val[k], x[col[k]], s[0]);
        krill_block_sum<1>(s);
        if (threadIdx.x == 0) chunk_sum[c] = s[0];
        __syncthreads();   /* the next block sum reuses the shared array */
    }
}

/* For each long row, one warp adds its chunk sums (in a fixed order) and updates y. */
__global__ void __launch_bounds__(KRILL_CUDA_THREADS)
csr_long_rows_kernel(int64_t n_long, const int32_t *__restrict__ long_row,
                     const int64_t *__restrict__ long_first,
                     const double *__restrict__ chunk_sum, double alpha, double beta,
                     double *__restrict__ y)
{
    const int lane = threadIdx.x & 31;
    const int64_t warp = ((int64_t)blockIdx.x * KRILL_CUDA_THREADS + threadIdx.x) / 32;
    const int64_t warps = (int64_t)gridDim.x * KRILL_CUDA_WARPS;
    for (int64_t i = warp; i < n_long; i += warps) {   /* uniform over the warp */
        double s = 0.0;
        for (int64_t c = long_first[i] + lane; c < long_first[i + 1]; c += 32) s += chunk_sum[c];
        s = krill_warp_sum(s);
        if (lane == 0) {
            const int32_t r = long_row[i];
            y[r] = beta == 0.0 ? __dmul_rn(alpha, s)
                               : __dadd_rn(__dmul_rn(alpha, s), __dmul_rn(beta, y[r]));
        }
    }
}

/* ---- launchers --------------------------------------------------------------------- */

template <typename I, bool DOT>
krill_status launch_rows(krill_ctx *ctx, const csr_gpu *m, int64_t long_min, double alpha,
                         const double *x, double beta, double *y, double *xy)
{
    const I *rp = static_cast<const I *>(m->row_ptr);
    /* one thread per row and lane, rounded up to whole warps */
    const int64_t rows_per_warp = 32 / m->lanes;
    const int64_t grid_items = (m->n_rows + rows_per_warp - 1) / rows_per_warp * 32;
    cudaStream_t s = krill_cuda_stream(ctx);
    double *w = ctx->cuda->work;
    if (m->block_rows) {
        krill_cuda_launch(ctx, csr_block_rows_kernel<I, DOT>, grid_items, s, m->n_rows, rp, m->col,
                          m->val, alpha, x, beta, y, w, xy);
        return krill_cuda_check_launch("csr_block_rows_kernel");
    }
    switch (m->lanes) {
    case 1:
        krill_cuda_launch(ctx, csr_rows_kernel<1, I, DOT>, grid_items, s, m->n_rows, rp, m->col,
                          m->val, long_min, alpha, x, beta, y, w, xy);
        break;
    case 2:
        krill_cuda_launch(ctx, csr_rows_kernel<2, I, DOT>, grid_items, s, m->n_rows, rp, m->col,
                          m->val, long_min, alpha, x, beta, y, w, xy);
        break;
    case 4:
        krill_cuda_launch(ctx, csr_rows_kernel<4, I, DOT>, grid_items, s, m->n_rows, rp, m->col,
                          m->val, long_min, alpha, x, beta, y, w, xy);
        break;
    case 8:
        krill_cuda_launch(ctx, csr_rows_kernel<8, I, DOT>, grid_items, s, m->n_rows, rp, m->col,
                          m->val, long_min, alpha, x, beta, y, w, xy);
        break;
    case 16:
        krill_cuda_launch(ctx, csr_rows_kernel<16, I, DOT>, grid_items, s, m->n_rows, rp, m->col,
                          m->val, long_min, alpha, x, beta, y, w, xy);
        break;
    case 32:
        krill_cuda_launch(ctx, csr_rows_kernel<32, I, DOT>, grid_items, s, m->n_rows, rp, m->col,
                          m->val, long_min, alpha, x, beta, y, w, xy);
        break;
    default:
        return krill_error(KRILL_ERR_INTERNAL, "csr: %d lanes per row is not a power of two "
                           "in [1, 32]", m->lanes);
    }
    return krill_cuda_check_launch("csr_rows_kernel");
}

/* y = alpha*A*x + beta*y for all rows: the row kernel, then the long-row path if any. */
krill_status csr_spmv_all(krill_ctx *ctx, const csr_gpu *m, double alpha, const double *x,
                          double beta, double *y)
{
    krill_status st = KRILL_OK;
    cudaStream_t s = krill_cuda_stream(ctx);
    if (m->wide)
        KRILL_TRY((launch_rows<int64_t, false>(ctx, m, m->long_min, alpha, x, beta, y, NULL)));
    else
        KRILL_TRY((launch_rows<int32_t, false>(ctx, m, m->long_min, alpha, x, beta, y, NULL)));
    if (m->n_long > 0) {
        const int chunk_blocks = (int)(m->n_chunks < KRILL_REDUCE_MAX_BLOCKS
                                       ? m->n_chunks : KRILL_REDUCE_MAX_BLOCKS);
        csr_chunk_kernel<<<chunk_blocks, KRILL_CUDA_THREADS, 0, s>>>(
            m->n_chunks, m->chunk_begin, m->chunk_end, m->col, m->val, x, m->chunk_sum);
        KRILL_TRY(krill_cuda_check_launch("csr_chunk_kernel"));
        krill_cuda_launch(ctx, csr_long_rows_kernel, m->n_long * 32, s, m->n_long, m->long_row,
                          m->long_first, m->chunk_sum, alpha, beta, y);
        KRILL_TRY(krill_cuda_check_launch("csr_long_rows_kernel"));
    }
cleanup:
    return st;
}

/* ---- the format table's functions ---------------------------------------------------- */

/* param: NULL or "auto" -> 0 (automatic), "scalar" or "cyclic" -> 1, "block" -> 1 with
 * *block_rows, "warp" -> 32, "vector" -> -1 (L from the mean), "vector:N" -> N for N in
 * {2, 4, 8, 16, 32}. */
krill_status parse_param(const char *param, int *lanes, bool *block_rows)
{
    *lanes = 0;
    *block_rows = false;
    if (!param || strcmp(param, "auto") == 0) return KRILL_OK;
    if (strcmp(param, "scalar") == 0 || strcmp(param, "cyclic") == 0) {
        *lanes = 1;
        return KRILL_OK;
    }
    if (strcmp(param, "block") == 0) {
        *lanes = 1;
        *block_rows = true;
        return KRILL_OK;
    }
    if (strcmp(param, "warp") == 0) {
        *lanes = 32;
        return KRILL_OK;
    }
    if (strcmp(param, "vector") == 0) {
        *lanes = -1;
        return KRILL_OK;
    }
    if (strncmp(param, "vector:", 7) == 0) {
        char *end = NULL;
        long n = strtol(param + 7, &end, 10);
        const bool power = n == 2 || n == 4 || n == 8 || n == 16 || n == 32;
        if (end != param + 7 && *end == '\0' && power) {
            *lanes = (int)n;
            return KRILL_OK;
        }
    }
    return krill_error(KRILL_ERR_ARG, "csr: unknown variant \"%s\" (expected auto, scalar, "
                       "cyclic, block, warp, vector or vector:N with N = 2, 4, 8, 16 or 32)",
                       param);
}

void csr_cuda_destroy(krill_ctx *ctx, void *impl)
{
    csr_gpu *m = static_cast<csr_gpu *>(impl);
    if (!m) return;
    if (!m->borrowed) {
        krill_mem_free(ctx, m->row_ptr);
        krill_mem_free(ctx, m->col);
        krill_mem_free(ctx, m->val);
    }
    krill_mem_free(ctx, m->long_row);
    krill_mem_free(ctx, m->long_first);
    krill_mem_free(ctx, m->chunk_begin);
    krill_mem_free(ctx, m->chunk_end);
    krill_mem_free(ctx, m->chunk_sum);
    krill_free(m);
}

/* Find the long rows and cut them into chunks; upload the tables. Host arrays are staged
 * and released here. */
krill_status build_long_rows(krill_ctx *ctx, const krill_csr *a, csr_gpu *m)
{
    krill_status st = KRILL_OK;
    int32_t *long_row = NULL;
    int64_t *long_first = NULL, *chunk_begin = NULL, *chunk_end = NULL;
    int64_t n_long = 0, n_chunks = 0, i = 0, c = 0;
    for (int64_t r = 0; r < a->n_rows; r++) {
        const int64_t len = a->row_ptr[r + 1] - a->row_ptr[r];
        if (len > m->long_min) {
            n_long++;
            n_chunks += (len + CSR_CHUNK - 1) / CSR_CHUNK;
        }
    }
    if (n_long == 0) goto cleanup;
    KRILL_ALLOC(long_row, n_long);
    KRILL_ALLOC(long_first, n_long + 1);
    KRILL_ALLOC(chunk_begin, n_chunks);
    KRILL_ALLOC(chunk_end, n_chunks);
    for (int64_t r = 0; r < a->n_rows; r++) {
        const int64_t begin = a->row_ptr[r], end = a->row_ptr[r + 1];
        if (end - begin <= m->long_min) continue;
        long_row[i] = (int32_t)r;
        long_first[i++] = c;
        for (int64_t k = begin; k < end; k += CSR_CHUNK) {
            chunk_begin[c] = k;
            chunk_end[c++] = end - k < CSR_CHUNK ? end : k + CSR_CHUNK;
        }
    }
    long_first[n_long] = c;
    KRILL_TRY(krill_mem_alloc(ctx, (void **)&m->long_row, (size_t)n_long * sizeof *long_row,
                              "CSR long-row list"));
    KRILL_TRY(krill_mem_alloc(ctx, (void **)&m->long_first,
                              (size_t)(n_long + 1) * sizeof *long_first,
                              "CSR long-row chunk index"));
    KRILL_TRY(krill_mem_alloc(ctx, (void **)&m->chunk_begin, (size_t)n_chunks * sizeof *chunk_begin,
                              "CSR long-row chunk starts"));
    KRILL_TRY(krill_mem_alloc(ctx, (void **)&m->chunk_end, (size_t)n_chunks * sizeof *chunk_end,
                              "CSR long-row chunk ends"));
    KRILL_TRY(krill_mem_alloc(ctx, (void **)&m->chunk_sum, (size_t)n_chunks * sizeof(double),
                              "CSR long-row chunk sums"));
    KRILL_TRY(krill_mem_upload(ctx, m->long_row, long_row, (size_t)n_long * sizeof *long_row));
    KRILL_TRY(krill_mem_upload(ctx, m->long_first, long_first,
                               (size_t)(n_long + 1) * sizeof *long_first));
    KRILL_TRY(krill_mem_upload(ctx, m->chunk_begin, chunk_begin,
                               (size_t)n_chunks * sizeof *chunk_begin));
    KRILL_TRY(krill_mem_upload(ctx, m->chunk_end, chunk_end, (size_t)n_chunks * sizeof *chunk_end));
    KRILL_TRY(krill_cuda_sync(ctx));   /* the staged host tables are freed below */
    m->n_long = n_long;
    m->n_chunks = n_chunks;
cleanup:
    krill_free(long_row);
    krill_free(long_first);
    krill_free(chunk_begin);
    krill_free(chunk_end);
    return st;
}

/* What depends on the row offsets alone (a->row_ptr, on the host): the row statistics, the
 * lanes per row and the long-row threshold (forced: parse_param's lanes, 0 automatic). */
void plan_rows(const krill_csr *a, int forced, csr_gpu *m)
{
    for (int64_t r = 0; r < a->n_rows; r++) {
        const int64_t len = a->row_ptr[r + 1] - a->row_ptr[r];
        if (len > m->max_row_nnz) m->max_row_nnz = len;
        if (len == 0) m->empty_rows++;
    }
    m->mean_row_nnz = a->n_rows > 0 ? (double)a->nnz / (double)a->n_rows : 0.0;

    if (forced == 0) m->lanes = krill_gpu_lanes_per_row(m->mean_row_nnz, m->n_rows, 1);
    else if (forced < 0) m->lanes = krill_gpu_lanes_per_row(m->mean_row_nnz, 0, 2);
    else m->lanes = forced;
    m->long_min = forced == 0 ? CSR_LONG_ROUNDS * m->lanes : INT64_MAX;
}

/* The variant's name in the stats: the paper's names, "scalar", "vector:L", "+long". */
void name_variant(const char *param, csr_gpu *m)
{
    if (param && (strcmp(param, "cyclic") == 0 || strcmp(param, "block") == 0 ||
                  strcmp(param, "warp") == 0))
        snprintf(m->variant, sizeof m->variant, "%s", param);
    else if (m->lanes == 1) snprintf(m->variant, sizeof m->variant, "scalar");
    else snprintf(m->variant, sizeof m->variant, "vector:%d", m->lanes);
    if (m->n_long > 0) strncat(m->variant, "+long", sizeof m->variant - strlen(m->variant) - 1);
}

krill_status csr_cuda_build(krill_ctx *ctx, const krill_csr *a, const char *param, void **impl)
{
    krill_status st = KRILL_OK;
    csr_gpu *m = NULL;
    int32_t *row32 = NULL;
    int forced = 0;
    bool block_rows = false;
    *impl = NULL;
    KRILL_TRY(parse_param(param, &forced, &block_rows));
    KRILL_CALLOC(m, 1);
    m->n_rows = a->n_rows;
    m->n_cols = a->n_cols;
    m->nnz = a->nnz;
    m->wide = a->nnz > INT32_MAX;
    m->block_rows = block_rows;
    plan_rows(a, forced, m);
    if (m->wide) {
        KRILL_TRY(krill_mem_alloc(ctx, &m->row_ptr, (size_t)(a->n_rows + 1) * sizeof(int64_t),
                                  "CSR row offsets"));
        KRILL_TRY(krill_mem_upload(ctx, m->row_ptr, a->row_ptr,
                                   (size_t)(a->n_rows + 1) * sizeof(int64_t)));
    } else {
        KRILL_ALLOC(row32, a->n_rows + 1);
        for (int64_t r = 0; r <= a->n_rows; r++) row32[r] = (int32_t)a->row_ptr[r];
        KRILL_TRY(krill_mem_alloc(ctx, &m->row_ptr, (size_t)(a->n_rows + 1) * sizeof *row32,
                                  "CSR row offsets"));
        KRILL_TRY(krill_mem_upload(ctx, m->row_ptr, row32,
                                   (size_t)(a->n_rows + 1) * sizeof *row32));
    }
    KRILL_TRY(krill_mem_alloc(ctx, (void **)&m->col, (size_t)a->nnz * sizeof *m->col,
                              "CSR column indices"));
    KRILL_TRY(krill_mem_alloc(ctx, (void **)&m->val, (size_t)a->nnz * sizeof *m->val,
                              "CSR values"));
    KRILL_TRY(krill_mem_upload(ctx, m->col, a->col, (size_t)a->nnz * sizeof *m->col));
    KRILL_TRY(krill_mem_upload(ctx, m->val, a->val, (size_t)a->nnz * sizeof *m->val));
    KRILL_TRY(build_long_rows(ctx, a, m));
    KRILL_TRY(krill_cuda_sync(ctx));   /* row32 and the caller's arrays may go after return */
    name_variant(param, m);
    *impl = m;
    m = NULL;
cleanup:
    krill_free(row32);
    csr_cuda_destroy(ctx, m);
    return st;
}

krill_status csr_cuda_spmv(krill_ctx *ctx, const void *impl, double alpha, const double *x,
                           double beta, double *y)
{
    const csr_gpu *m = static_cast<const csr_gpu *>(impl);
    if (m->n_rows == 0) return KRILL_OK;
    if (alpha == 0.0) return krill_cuda_axpby(ctx, m->n_rows, 0.0, NULL, beta, y);  /* x unread */
    return csr_spmv_all(ctx, m, alpha, x, beta, y);
}

/* Every row's exact sum, one thread per row whatever the variant (the lanes and the
 * long-row path are for plain sums). */
krill_status csr_cuda_spmv_repro(krill_ctx *ctx, const void *impl, double alpha,
                                 const double *x, double beta, double *y)
{
    const csr_gpu *m = static_cast<const csr_gpu *>(impl);
    return krill_csr_cuda_spmv_repro(ctx, "csr", m->n_rows, m->max_row_nnz, m->mean_row_nnz,
                                     m->row_ptr, m->wide, m->col, 0, m->val, NULL, alpha, x,
                                     beta, y);
}

/* y = A x and *xy = x'y (square matrices). Fused in the row kernel unless there are long
 * rows; then the SpMV is followed by a separate dot. */
krill_status csr_cuda_spmv_dot(krill_ctx *ctx, const void *impl, const double *x, double *y,
                               double *xy)
{
    krill_status st = KRILL_OK;
    const csr_gpu *m = static_cast<const csr_gpu *>(impl);
    KRILL_REQUIRE(m->n_rows == m->n_cols,
                  "csr spmv_dot: x'y needs a square matrix, not %lld x %lld",
                  (long long)m->n_rows, (long long)m->n_cols);
    if (m->n_rows == 0) {
        KRILL_TRY(krill_cuda_memset0(ctx, xy, sizeof *xy));
    } else if (m->n_long > 0) {
        KRILL_TRY(csr_spmv_all(ctx, m, 1.0, x, 0.0, y));
        KRILL_TRY(krill_cuda_dot(ctx, m->n_rows, x, y, xy));
    } else if (m->wide) {
        KRILL_TRY((launch_rows<int64_t, true>(ctx, m, INT64_MAX, 1.0, x, 0.0, y, xy)));
    } else {
        KRILL_TRY((launch_rows<int32_t, true>(ctx, m, INT64_MAX, 1.0, x, 0.0, y, xy)));
    }
cleanup:
    return st;
}

/* New values in the build's CSR order. */
krill_status csr_cuda_update_values(krill_ctx *ctx, void *impl, const double *values)
{
    csr_gpu *m = static_cast<csr_gpu *>(impl);
    return krill_cuda_upload_values(ctx, m->val, values, m->nnz);
}

krill_status csr_cuda_diagonal(krill_ctx *ctx, const void *impl, double *d)
{
    const csr_gpu *m = static_cast<const csr_gpu *>(impl);
    return m->wide ? krill_csr_cuda_diagonal(ctx, m->n_rows,
                                             static_cast<const int64_t *>(m->row_ptr), m->col,
                                             m->val, d)
                   : krill_csr_cuda_diagonal(ctx, m->n_rows,
                                             static_cast<const int32_t *>(m->row_ptr), m->col,
                                             m->val, d);
}

krill_status csr_cuda_diagonal_blocks(krill_ctx *ctx, const void *impl, int b, double *blocks)
{
    const csr_gpu *m = static_cast<const csr_gpu *>(impl);
    return m->wide ? krill_csr_cuda_diagonal_blocks(ctx, m->n_rows, b,
                                                    static_cast<const int64_t *>(m->row_ptr),
                                                    m->col, m->val, blocks)
                   : krill_csr_cuda_diagonal_blocks(ctx, m->n_rows, b,
                                                    static_cast<const int32_t *>(m->row_ptr),
                                                    m->col, m->val, blocks);
}

krill_status csr_cuda_to_csr(krill_ctx *ctx, const void *impl, krill_csr **csr)
{
    const csr_gpu *m = static_cast<const csr_gpu *>(impl);
    return krill_csr_cuda_download(ctx, m->n_rows, m->n_cols, m->nnz, m->row_ptr, m->wide,
                                   m->col, 0, m->val, csr);
}

/* Bytes of matrix data on the device: offsets at their width, columns and values. The
 * long-row tables (20 bytes per chunk of 4096 entries, 12 per long row) are not counted. */
void csr_cuda_stats(const void *impl, krill_format_stats *s)
{
    const csr_gpu *m = static_cast<const csr_gpu *>(impl);
    memset(s, 0, sizeof *s);
    s->n_rows = m->n_rows;
    s->n_cols = m->n_cols;
    s->nnz = m->nnz;
    s->bytes = (size_t)(m->n_rows + 1) * (m->wide ? sizeof(int64_t) : sizeof(int32_t)) +
               (size_t)m->nnz * (sizeof(int32_t) + sizeof(double));
    s->max_row_nnz = m->max_row_nnz;
    s->mean_row_nnz = m->mean_row_nnz;
    s->empty_rows = m->empty_rows;
    snprintf(s->variant, sizeof s->variant, "%s", m->variant);
}

} /* namespace */

/* krill_mat_create_device_csr's table entry point: the caller's device arrays, checked
 * (formats/device_csr.c), become the automatic "csr" variant without a copy; `host` holds
 * the same offsets on the host (int64_t) for the row plan and the long-row tables. */
extern "C" krill_status krill_csr_cuda_wrap(krill_ctx *ctx, const krill_csr *host,
                                            const void *row_ptr, int wide_offsets,
                                            const int32_t *col, double *val, void **impl)
{
    krill_status st = KRILL_OK;
    csr_gpu *m = NULL;
    *impl = NULL;
    KRILL_CALLOC(m, 1);
    m->n_rows = host->n_rows;
    m->n_cols = host->n_cols;
    m->nnz = host->nnz;
    m->wide = wide_offsets != 0;
    m->borrowed = true;
    m->row_ptr = const_cast<void *>(row_ptr);
    m->col = const_cast<int32_t *>(col);
    m->val = val;
    plan_rows(host, 0, m);
    KRILL_TRY(build_long_rows(ctx, host, m));
    KRILL_TRY(krill_cuda_sync(ctx));
    name_variant(NULL, m);
    *impl = m;
    m = NULL;
cleanup:
    csr_cuda_destroy(ctx, m);
    return st;
}

extern "C" const krill_format_ops krill_csr_cuda_ops = {
    "csr",                      /* name */
    csr_cuda_build,             /* build */
    csr_cuda_spmv,              /* spmv */
    csr_cuda_spmv_repro,        /* spmv_repro */
    csr_cuda_spmv_dot,          /* spmv_dot */
    csr_cuda_update_values,     /* update_values */
    csr_cuda_diagonal,          /* diagonal */
    csr_cuda_to_csr,            /* to_csr */
    csr_cuda_stats,             /* stats */
    csr_cuda_destroy,           /* destroy */
    csr_cuda_diagonal_blocks,   /* diagonal_blocks */
};
