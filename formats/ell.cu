/* formats/ell.cu - ELL and ELL-R on the GPU: the "ell" and "ellr" tables for CUDA contexts.
 *
 * The arrays are built on the device from the CSR, uploaded in chunks through the staging
 * pipe (below, "the build"), and equal the host build's (krill_ell_host_build, formats/ell.c):
 * column-major N x K, so that thread i (row i) and thread i+1 read neighbouring addresses
 * at every step k: the coalesced access that is ELL's point. One thread per row, cyclic
 * (grid-stride) over rows. ELL runs every row to K and skips the padding (column -1, its
 * value is not read); ELL-R stops at the row's length. Each row is summed in CSR order.
 * Device bytes: formulas (2) and (3) of the RBP paper, 12 N K (+ 4 N for ELL-R); the row
 * lengths of ELL stay on the host (they scatter new values). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "formats/formats_impl.h"
#include "kernels/kernels_impl.cuh"
#include "ozaki/ozaki_row.cuh"

namespace {

struct ell_gpu {
    int64_t n_rows, n_cols, nnz, k;
    int with_len;             /* ELL-R */
    int32_t *col;             /* device, N * K, -1 in padding */
    double *val;              /* device, N * K, 0 in padding */
    int32_t *len;             /* device, N row lengths (ELL-R only) */
    krill_ell_host host;      /* host: the sizes and len only (col and val NULL) */
};

template <bool WITH_LEN>
__global__ void ell_kernel(int64_t n, int64_t k, const int32_t *__restrict__ col,
                           const double *__restrict__ val, const int32_t *__restrict__ len,
                           double alpha, const double *__restrict__ x, double beta,
                           double *__restrict__ y)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int64_t stop = WITH_LEN ? len[i] : k;
        double s = 0.0;
        for (int64_t j = 0; j < stop; j++) {
            const int32_t c = col[j * n + i];
            if (WITH_LEN || c >= 0) s += val[j * n + i] * __ldg(&x[c]);
        }
        y[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y[i];
    }
}

/* The row visitor of reproducible SpMV (ozaki/ozaki_row.cuh): row i's entries up to K with
 * the padding (column -1) skipped (ELL), or up to its length (ELL-R: len != NULL). */
struct ell_row_visitor {
    int64_t n, k;
    const int32_t *__restrict__ col;
    const double *__restrict__ val;
    const int32_t *__restrict__ len;
    struct row {
        int64_t i, stop;
    };
    __device__ row locate(int64_t i) const { return row{i, len ? (int64_t)len[i] : k}; }
    template <class Op>
    __device__ void visit(const row &r, const double *__restrict__ x, Op &op) const
    {
        for (int64_t j = 0; j < r.stop; j++) {
            const int32_t c = col[j * n + r.i];
            if (c >= 0) op(val[j * n + r.i], __ldg(&x[c]));
        }
    }
};

__global__ void ell_diagonal_kernel(int64_t n, int64_t k, const int32_t *__restrict__ col,
                                    const double *__restrict__ val, double *__restrict__ d)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double di = 0.0;
        for (int64_t j = 0; j < k; j++)
            if (col[j * n + i] == i) di = val[j * n + i];
        d[i] = di;
    }
}

void ell_cuda_destroy(krill_ctx *ctx, void *impl)
{
    ell_gpu *m = static_cast<ell_gpu *>(impl);
    if (!m) return;
    krill_mem_free(ctx, m->col);
    krill_mem_free(ctx, m->val);
    krill_mem_free(ctx, m->len);
    krill_ell_host_free(&m->host);
    krill_free(m);
}

/* ---- the build: CSR chunks uploaded through the staging pipe, scattered on the device ----
 * The row offsets go up first (8 (N + 1) bytes, freed after the build); then the entries in
 * chunks of slot_bytes / 12: the host packs chunk [e0, e1) as its values and then its
 * columns into a staging slot (krill_cuda_pipe_run, core/cuda_stage.cu), and once it has
 * landed ell_scatter_kernel puts each entry p of row i at slot (p - row_ptr[i]) * N + i
 * (one thread per row the chunk touches: neighbouring threads write neighbouring addresses).
 * The padding is written once before (columns -1 by a byte fill of 0xff, values 0). Device
 * traffic: 12 nnz bytes in, 12 N K out, far below the bus's 12 nnz; host: the pack's copy
 * of 12 nnz bytes. The arrays equal krill_ell_host_build's bit for bit. */
__global__ void ell_scatter_kernel(int64_t n, int64_t first_row, int64_t rows,
                                   const int64_t *__restrict__ row_ptr, int64_t e0, int64_t e1,
                                   const double *__restrict__ chunk_val,
                                   const int32_t *__restrict__ chunk_col, int32_t *__restrict__ col,
                                   double *__restrict__ val)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < rows; t += stride) {
        const int64_t i = first_row + t, begin = row_ptr[i];
        const int64_t lo = begin > e0 ? begin : e0;
        const int64_t hi = row_ptr[i + 1] < e1 ? row_ptr[i + 1] : e1;
        for (int64_t p = lo; p < hi; p++) {
            col[(p - begin) * n + i] = chunk_col[p - e0];
            val[(p - begin) * n + i] = chunk_val[p - e0];
        }
    }
}

struct ell_upload {
    krill_ctx *ctx;
    const krill_csr *a;
    ell_gpu *m;
    const int64_t *row_ptr;   /* device copy of a->row_ptr */
    int64_t per_chunk;        /* entries a chunk holds */
};

/* chunk k's entries [e0, e1): values (8-byte aligned at the slot's start), then columns */
void chunk_range(const ell_upload *u, int64_t k, int64_t *e0, int64_t *e1)
{
    *e0 = k * u->per_chunk;
    *e1 = *e0 + u->per_chunk < u->a->nnz ? *e0 + u->per_chunk : u->a->nnz;
}

size_t ell_pack(void *user, int64_t k, void *slot, size_t slot_bytes)
{
    const ell_upload *u = static_cast<const ell_upload *>(user);
    int64_t e0, e1;
    (void)slot_bytes;
    chunk_range(u, k, &e0, &e1);
    const size_t n = (size_t)(e1 - e0);
    krill_host_copy(u->ctx, slot, u->a->val + e0, n * sizeof(double));
    krill_host_copy(u->ctx, static_cast<char *>(slot) + n * sizeof(double), u->a->col + e0,
                    n * sizeof(int32_t));
    return n * (sizeof(double) + sizeof(int32_t));
}

/* the row holding entry e (row_ptr[r] <= e < row_ptr[r + 1]): the last r with row_ptr[r] <= e */
int64_t row_of(const krill_csr *a, int64_t e)
{
    int64_t lo = 0, hi = a->n_rows;   /* row_ptr[lo] <= e < row_ptr[hi] */
    while (hi - lo > 1) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (a->row_ptr[mid] <= e) lo = mid;
        else hi = mid;
    }
    return lo;
}

krill_status ell_land(krill_ctx *ctx, void *user, int64_t k, const void *buffer, size_t bytes)
{
    const ell_upload *u = static_cast<const ell_upload *>(user);
    int64_t e0, e1;
    (void)bytes;
    chunk_range(u, k, &e0, &e1);
    const int64_t first = row_of(u->a, e0), rows = row_of(u->a, e1 - 1) - first + 1;
    const double *chunk_val = static_cast<const double *>(buffer);
    const int32_t *chunk_col = reinterpret_cast<const int32_t *>(chunk_val + (e1 - e0));
    krill_cuda_launch(ctx, ell_scatter_kernel, rows, krill_cuda_stream(ctx), u->m->n_rows, first,
                      rows, u->row_ptr, e0, e1, chunk_val, chunk_col, u->m->col, u->m->val);
    return krill_cuda_check_launch("ell_scatter_kernel");
}

krill_status ell_cuda_build_common(krill_ctx *ctx, const krill_csr *csr, const char *param,
                                   int with_len, void **impl)
{
    krill_status st = KRILL_OK;
    ell_gpu *m = NULL;
    int64_t *row_ptr = NULL;
    int64_t entries;
    ell_upload u;
    KRILL_REQUIRE(param == NULL, "format '%s:%s': the format takes no parameter",
                  with_len ? "ellr" : "ell", param);
    KRILL_CALLOC(m, 1);
    m->with_len = with_len;
    KRILL_TRY(krill_ell_host_shape(csr, &m->host));
    m->n_rows = m->host.n_rows;
    m->n_cols = m->host.n_cols;
    m->nnz = m->host.nnz;
    m->k = m->host.k;
    entries = m->n_rows * m->k;
    KRILL_MEM_ALLOC(ctx, m->col, entries);
    KRILL_MEM_ALLOC(ctx, m->val, entries);
    KRILL_CUDA_TRY(cudaMemsetAsync(m->col, 0xff, (size_t)entries * sizeof(int32_t),
                                   krill_cuda_stream(ctx)));   /* -1 in every padding slot */
    KRILL_TRY(krill_mem_zero(ctx, m->val, (size_t)entries * sizeof(double)));
    if (with_len) {
        KRILL_MEM_ALLOC(ctx, m->len, m->n_rows);
        KRILL_TRY(krill_mem_upload(ctx, m->len, m->host.len, (size_t)m->n_rows * sizeof(int32_t)));
    }
    if (m->nnz > 0) {
        krill_cuda_pipe pipe;
        KRILL_MEM_ALLOC(ctx, row_ptr, m->n_rows + 1);
        KRILL_TRY(krill_mem_upload(ctx, row_ptr, csr->row_ptr,
                                   (size_t)(m->n_rows + 1) * sizeof *row_ptr));
        u = {ctx, csr, m, row_ptr,
             (int64_t)(krill_cuda_stage_slot_bytes(0) / (sizeof(double) + sizeof(int32_t)))};
        pipe = {(m->nnz + u.per_chunk - 1) / u.per_chunk,
                (size_t)u.per_chunk * (sizeof(double) + sizeof(int32_t)), ell_pack, NULL,
                ell_land, &u};
        KRILL_TRY(krill_cuda_pipe_run(ctx, &pipe));
    }
    KRILL_TRY(krill_cuda_sync(ctx));   /* the row offsets may go now */
    *impl = m;
    m = NULL;
cleanup:
    krill_mem_free(ctx, row_ptr);
    ell_cuda_destroy(ctx, m);
    return st;
}

krill_status ell_cuda_build(krill_ctx *ctx, const krill_csr *csr, const char *param, void **impl)
{
    return ell_cuda_build_common(ctx, csr, param, 0, impl);
}

krill_status ellr_cuda_build(krill_ctx *ctx, const krill_csr *csr, const char *param,
                             void **impl)
{
    return ell_cuda_build_common(ctx, csr, param, 1, impl);
}

krill_status ell_cuda_spmv(krill_ctx *ctx, const void *impl, double alpha, const double *x,
                           double beta, double *y)
{
    const ell_gpu *m = static_cast<const ell_gpu *>(impl);
    if (m->n_rows == 0) return KRILL_OK;
    const int64_t grid_items = m->n_rows;
    cudaStream_t s = krill_cuda_stream(ctx);
    if (m->with_len)
        krill_cuda_launch(ctx, ell_kernel<true>, grid_items, s, m->n_rows, m->k, m->col, m->val,
                          m->len, alpha, x, beta, y);
    else
        krill_cuda_launch(ctx, ell_kernel<false>, grid_items, s, m->n_rows, m->k, m->col, m->val,
                          m->len, alpha, x, beta, y);
    return krill_cuda_check_launch("ell_kernel");
}

/* Every row's exact sum, one thread per row; K (the longest row) must not pass
 * KRILL_OZ_ROW_MAX_N. */
krill_status ell_cuda_spmv_repro(krill_ctx *ctx, const void *impl, double alpha, const double *x,
                                 double beta, double *y)
{
    const ell_gpu *m = static_cast<const ell_gpu *>(impl);
    const ell_row_visitor v{m->n_rows, m->k, m->col, m->val, m->with_len ? m->len : NULL};
    return krill_oz_spmv_launch(ctx, m->with_len ? "ellr" : "ell", v, m->n_rows, m->k, alpha, x,
                                beta, y);
}

/* New values: scattered into a temporary host N x K array (the layout), then uploaded. */
krill_status ell_cuda_update_values(krill_ctx *ctx, void *impl, const double *values)
{
    krill_status st = KRILL_OK;
    ell_gpu *m = static_cast<ell_gpu *>(impl);
    krill_ell_host scatter = m->host;
    const int64_t entries = m->n_rows * m->k;
    scatter.val = NULL;
    KRILL_CALLOC(scatter.val, entries);
    krill_ell_host_scatter(&scatter, values);
    KRILL_TRY(krill_cuda_upload_values(ctx, m->val, scatter.val, entries));
cleanup:
    krill_free(scatter.val);
    return st;
}

krill_status ell_cuda_diagonal(krill_ctx *ctx, const void *impl, double *d)
{
    const ell_gpu *m = static_cast<const ell_gpu *>(impl);
    if (m->n_rows == 0) return KRILL_OK;
    krill_cuda_launch(ctx, ell_diagonal_kernel, m->n_rows, krill_cuda_stream(ctx), m->n_rows, m->k,
                      m->col, m->val, d);
    return krill_cuda_check_launch("ell_diagonal_kernel");
}

/* col and val downloaded into a copy of the host struct (which keeps len), then the shared
 * host walk. */
krill_status ell_cuda_to_csr(krill_ctx *ctx, const void *impl, krill_csr **csr)
{
    krill_status st = KRILL_OK;
    const ell_gpu *m = static_cast<const ell_gpu *>(impl);
    krill_ell_host stage = m->host;
    const int64_t entries = m->n_rows * m->k;
    *csr = NULL;
    stage.col = NULL;
    stage.val = NULL;
    KRILL_ALLOC(stage.col, entries);
    KRILL_ALLOC(stage.val, entries);
    KRILL_TRY(krill_mem_download(ctx, stage.col, m->col, (size_t)entries * sizeof *stage.col));
    KRILL_TRY(krill_mem_download(ctx, stage.val, m->val, (size_t)entries * sizeof *stage.val));
    KRILL_TRY(krill_ell_host_to_csr(&stage, csr));
cleanup:
    krill_free(stage.col);
    krill_free(stage.val);
    return st;
}

void ell_cuda_stats(const void *impl, krill_format_stats *s)
{
    const ell_gpu *m = static_cast<const ell_gpu *>(impl);
    krill_ell_stats(&m->host, m->with_len, s);
    snprintf(s->variant, sizeof s->variant, "%s", m->with_len ? "row-lengths" : "padded");
}

} /* namespace */

extern "C" const krill_format_ops krill_ell_cuda_ops = {
    "ell",                      /* name */
    ell_cuda_build,             /* build */
    ell_cuda_spmv,              /* spmv */
    ell_cuda_spmv_repro,        /* spmv_repro */
    NULL,                       /* spmv_dot: spmv, then a dot */
    ell_cuda_update_values,     /* update_values */
    ell_cuda_diagonal,          /* diagonal */
    ell_cuda_to_csr,            /* to_csr */
    ell_cuda_stats,             /* stats */
    ell_cuda_destroy,           /* destroy */
    NULL,                       /* diagonal_blocks: none (bjacobi goes through to_csr) */
};

extern "C" const krill_format_ops krill_ellr_cuda_ops = {
    "ellr",                     /* name */
    ellr_cuda_build,            /* build */
    ell_cuda_spmv,              /* spmv */
    ell_cuda_spmv_repro,        /* spmv_repro */
    NULL,                       /* spmv_dot: spmv, then a dot */
    ell_cuda_update_values,     /* update_values */
    ell_cuda_diagonal,          /* diagonal */
    ell_cuda_to_csr,            /* to_csr */
    ell_cuda_stats,             /* stats */
    ell_cuda_destroy,           /* destroy */
    NULL,                       /* diagonal_blocks: none (bjacobi goes through to_csr) */
};
