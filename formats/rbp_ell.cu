/* formats/rbp_ell.cu - RBP-ELL and RBP-ELL-R on the GPU: the "rbp-ell" and "rbp-ellr"
 * tables for CUDA contexts.
 *
 * The arrays are built on the host (krill_rbp_ell_host_build, formats/rbp_ell.c) and
 * uploaded: ValuesELL N x K_v and ColumnsELL N x K_c column-major, the CSR part of the
 * isolated entries, and for RBP-ELL-R the run values per row. Bytes: formula (5), and (6)
 * for RBP-ELL-R. The host keeps ColumnsELL, RowPtr and ColumnsCSR to scatter new values.
 *
 * Kernel: Algorithm 5, one thread per row, rows cyclic over a grid-stride loop. The loop
 * runs over the value columns j, so at every step the threads of a warp read neighbouring
 * entries of ValuesELL (coalesced); the thread holds its current run (StartELL, EndELL) in
 * registers, counts the column up, and reads the next pair only when the run is used up.
 * RBP-ELL loops to K_v and stops at the first padding pair (first == last, Algorithm 5
 * line 14) or after the row's K_c entries; RBP-ELL-R loops to the row's length. Then the
 * isolated entries, as in CSR. Padding is never multiplied, so no x is read for it.
 * Each row is summed in that order with fused multiply-adds (run-to-run exact).
 * Traffic per SpMV: ELL-R reads 8 per run value + 8 per run + 12 per isolated entry
 * + 8 per row (lengths, RowPtr) plus the padded cache lines it touches; ELL adds the
 * padding pair that stops each row. Then x (gathered) and y. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "formats/formats_impl.h"
#include "kernels/kernels_impl.cuh"
#include "ozaki/ozaki_row.cuh"

namespace {

struct rbp_ell_gpu {
    int64_t n_rows, kv, kc;
    int with_len;             /* RBP-ELL-R */
    int32_t *col;             /* device, N * K_c pairs, (0, 0) in padding */
    double *val;              /* device, N * K_v, 0 in padding */
    int32_t *len;             /* device, N run values per row (RBP-ELL-R only) */
    int32_t *row_ptr;         /* device, N + 1 */
    int32_t *non_col;         /* device, N_non */
    double *non_val;          /* device, N_non */
    krill_rbp_ell_host host;  /* host: col, row_ptr, non_col (for update_values) */
    krill_format_stats stats;
};

/* The device arrays a kernel reads. */
struct rbp_ell_view {
    const int32_t *__restrict__ col;
    const double *__restrict__ val;
    const int32_t *__restrict__ len;
    const int32_t *__restrict__ row_ptr;
    const int32_t *__restrict__ non_col;
    const double *__restrict__ non_val;
};

/* Algorithm 5: y_i = alpha * (A x)_i + beta * y_i, one thread per row. */
template <bool WITH_LEN>
__global__ void __launch_bounds__(KRILL_CUDA_THREADS)
rbp_ell_kernel(int64_t n, int64_t kv, int64_t kc, rbp_ell_view a, double alpha,
               const double *__restrict__ x, double beta, double *__restrict__ y)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int64_t stop = WITH_LEN ? a.len[i] : kv;
        int64_t count = 0;                  /* next entry of the row's pairs */
        int32_t start = 0, end = -1;        /* StartELL, EndELL; start == end + 1: used up */
        double s = 0.0;
        for (int64_t j = 0; j < stop; j++) {
            if (start == end + 1) {         /* the next run (lines 10-13) */
                if (!WITH_LEN && count == kc) break;
                start = a.col[count * n + i];
                end = a.col[(count + 1) * n + i];
                count += 2;
                if (!WITH_LEN && start == end) break;   /* padding (line 14) */
            }
            s = __fma_rn(a.val[j * n + i], __ldg(&x[start]), s);
            start++;
        }
        const int64_t q_end = a.row_ptr[i + 1];
        for (int64_t q = a.row_ptr[i]; q < q_end; q++)
            s = __fma_rn(a.non_val[q], __ldg(&x[a.non_col[q]]), s);
        y[i] = beta == 0.0 ? __dmul_rn(alpha, s)
                           : __dadd_rn(__dmul_rn(alpha, s), __dmul_rn(beta, y[i]));
    }
}

/* The row visitor of reproducible SpMV (ozaki/ozaki_row.cuh): row i's runs up to its padding
 * pair (first == last) or K_c (RBP-ELL), or up to its count of run values (RBP-ELL-R:
 * a.len != NULL), then its isolated entries. */
struct rbp_ell_row_visitor {
    int64_t n, kc;
    rbp_ell_view a;
    typedef int64_t row;
    __device__ row locate(int64_t i) const { return i; }
    template <class Op>
    __device__ void visit(const row &i, const double *__restrict__ x, Op &op) const
    {
        const int64_t stop = a.len ? (int64_t)a.len[i] : INT64_MAX;
        int64_t j = 0;
        for (int64_t c = 0; c < kc && j < stop; c += 2) {
            const int32_t first = a.col[c * n + i], last = a.col[(c + 1) * n + i];
            if (first == last) break;   /* padding */
            for (int32_t k = first; k <= last; k++) op(a.val[(j++) * n + i], __ldg(&x[k]));
        }
        for (int64_t q = a.row_ptr[i]; q < a.row_ptr[i + 1]; q++)
            op(a.non_val[q], __ldg(&x[a.non_col[q]]));
    }
};

/* d_i = a_ii: in the run with first <= i <= last, or among the isolated entries; else 0. */
__global__ void rbp_ell_diagonal_kernel(int64_t n, int64_t kc, rbp_ell_view a,
                                        double *__restrict__ d)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double di = 0.0;
        int64_t j = 0;
        for (int64_t c = 0; c < kc; c += 2) {
            const int32_t first = a.col[c * n + i], last = a.col[(c + 1) * n + i];
            if (first == last) break;
            if (first <= i && i <= last) di = a.val[(j + i - first) * n + i];
            j += last - first + 1;
        }
        for (int64_t q = a.row_ptr[i]; q < a.row_ptr[i + 1]; q++)
            if (a.non_col[q] == i) di = a.non_val[q];
        d[i] = di;
    }
}

rbp_ell_view view_of(const rbp_ell_gpu *m)
{
    return rbp_ell_view{m->col, m->val, m->len, m->row_ptr, m->non_col, m->non_val};
}

void rbp_ell_cuda_destroy(krill_ctx *ctx, void *impl)
{
    rbp_ell_gpu *m = static_cast<rbp_ell_gpu *>(impl);
    if (!m) return;
    krill_mem_free(ctx, m->col);
    krill_mem_free(ctx, m->val);
    krill_mem_free(ctx, m->len);
    krill_mem_free(ctx, m->row_ptr);
    krill_mem_free(ctx, m->non_col);
    krill_mem_free(ctx, m->non_val);
    krill_rbp_ell_host_free(&m->host);
    krill_free(m);
}

krill_status rbp_ell_cuda_build_common(krill_ctx *ctx, const krill_csr *csr, const char *param,
                                       int with_len, void **impl)
{
    krill_status st = KRILL_OK;
    rbp_ell_gpu *m = NULL;
    const char *name = with_len ? "rbp-ellr" : "rbp-ell";
    const krill_rbp_ell_host *h;
    int64_t n;
    KRILL_REQUIRE(param == NULL, "format '%s:%s': the format takes no parameter", name, param);
    KRILL_CALLOC(m, 1);
    h = &m->host;
    m->with_len = with_len;
    KRILL_TRY(krill_rbp_ell_host_build(csr, name, ctx->threads, &m->host));
    n = m->n_rows = h->n_rows;
    m->kv = h->kv;
    m->kc = h->kc;
    krill_csr_row_stats(csr, &m->stats);
    krill_csr_run_stats(csr, ctx->threads, &m->stats);
    m->stats.bytes = krill_rbp_ell_bytes(h, with_len);
    snprintf(m->stats.variant, sizeof m->stats.variant, "%s", with_len ? "row-lengths" : "padded");

    KRILL_MEM_ALLOC(ctx, m->col, n * h->kc);
    KRILL_MEM_ALLOC(ctx, m->val, n * h->kv);
    KRILL_MEM_ALLOC(ctx, m->row_ptr, n + 1);
    KRILL_MEM_ALLOC(ctx, m->non_col, h->n_non);
    KRILL_MEM_ALLOC(ctx, m->non_val, h->n_non);
    KRILL_TRY(krill_mem_upload(ctx, m->col, h->col, (size_t)(n * h->kc) * sizeof(int32_t)));
    KRILL_TRY(krill_mem_upload(ctx, m->val, h->val, (size_t)(n * h->kv) * sizeof(double)));
    KRILL_TRY(krill_mem_upload(ctx, m->row_ptr, h->row_ptr, (size_t)(n + 1) * sizeof(int32_t)));
    KRILL_TRY(krill_mem_upload(ctx, m->non_col, h->non_col, (size_t)h->n_non * sizeof(int32_t)));
    KRILL_TRY(krill_mem_upload(ctx, m->non_val, h->non_val, (size_t)h->n_non * sizeof(double)));
    if (with_len) {
        KRILL_MEM_ALLOC(ctx, m->len, n);
        KRILL_TRY(krill_mem_upload(ctx, m->len, h->len, (size_t)n * sizeof(int32_t)));
    }
    KRILL_TRY(krill_cuda_sync(ctx));   /* the host values and lengths may go now */
    krill_free(m->host.val);
    krill_free(m->host.non_val);
    krill_free(m->host.len);
    m->host.val = NULL;
    m->host.non_val = NULL;
    m->host.len = NULL;
    *impl = m;
    m = NULL;
cleanup:
    rbp_ell_cuda_destroy(ctx, m);
    return st;
}

krill_status rbp_ell_cuda_build(krill_ctx *ctx, const krill_csr *csr, const char *param,
                                void **impl)
{
    return rbp_ell_cuda_build_common(ctx, csr, param, 0, impl);
}

krill_status rbp_ellr_cuda_build(krill_ctx *ctx, const krill_csr *csr, const char *param,
                                 void **impl)
{
    return rbp_ell_cuda_build_common(ctx, csr, param, 1, impl);
}

krill_status rbp_ell_cuda_spmv(krill_ctx *ctx, const void *impl, double alpha, const double *x,
                               double beta, double *y)
{
    const rbp_ell_gpu *m = static_cast<const rbp_ell_gpu *>(impl);
    if (m->n_rows == 0) return KRILL_OK;
    const int64_t grid_items = m->n_rows;
    cudaStream_t s = krill_cuda_stream(ctx);
    if (m->with_len)
        krill_cuda_launch(ctx, rbp_ell_kernel<true>, grid_items, s, m->n_rows, m->kv, m->kc,
                          view_of(m), alpha, x, beta, y);
    else
        krill_cuda_launch(ctx, rbp_ell_kernel<false>, grid_items, s, m->n_rows, m->kv, m->kc,
                          view_of(m), alpha, x, beta, y);
    return krill_cuda_check_launch("rbp_ell_kernel");
}

/* Every row's exact sum, one thread per row. */
krill_status rbp_ell_cuda_spmv_repro(krill_ctx *ctx, const void *impl, double alpha,
                                     const double *x, double beta, double *y)
{
    const rbp_ell_gpu *m = static_cast<const rbp_ell_gpu *>(impl);
    const rbp_ell_row_visitor v{m->n_rows, m->kc, view_of(m)};
    return krill_oz_spmv_launch(ctx, m->with_len ? "rbp-ellr" : "rbp-ell", v, m->n_rows,
                                m->stats.max_row_nnz, alpha, x, beta, y);
}

/* New values: dealt out on the host into a zeroed N x K_v staging matrix (its padding stays
 * 0) and the isolated values, then uploaded. */
krill_status rbp_ell_cuda_update_values(krill_ctx *ctx, void *impl, const double *values)
{
    krill_status st = KRILL_OK;
    rbp_ell_gpu *m = static_cast<rbp_ell_gpu *>(impl);
    const int64_t entries = m->n_rows * m->kv;
    double *val = NULL, *non_val = NULL;
    KRILL_CALLOC(val, entries);
    KRILL_ALLOC(non_val, m->host.n_non);
    krill_rbp_ell_host_scatter(&m->host, values, val, non_val);
    KRILL_TRY(krill_mem_upload(ctx, m->val, val, (size_t)entries * sizeof(double)));
    KRILL_TRY(krill_cuda_upload_values(ctx, m->non_val, non_val, m->host.n_non));
cleanup:
    krill_free(val);
    krill_free(non_val);
    return st;
}

krill_status rbp_ell_cuda_diagonal(krill_ctx *ctx, const void *impl, double *d)
{
    const rbp_ell_gpu *m = static_cast<const rbp_ell_gpu *>(impl);
    if (m->n_rows == 0) return KRILL_OK;
    krill_cuda_launch(ctx, rbp_ell_diagonal_kernel, m->n_rows, krill_cuda_stream(ctx), m->n_rows,
                      m->kc, view_of(m), d);
    return krill_cuda_check_launch("rbp_ell_diagonal_kernel");
}

/* The values downloaded into a copy of the host struct (which keeps the pairs and the CSR
 * part's indices), then the shared host merge (formats/rbp_ell.c). */
krill_status rbp_ell_cuda_to_csr(krill_ctx *ctx, const void *impl, krill_csr **csr)
{
    krill_status st = KRILL_OK;
    const rbp_ell_gpu *m = static_cast<const rbp_ell_gpu *>(impl);
    krill_rbp_ell_host stage = m->host;
    const int64_t entries = m->n_rows * m->kv;
    *csr = NULL;
    stage.val = NULL;
    stage.non_val = NULL;
    KRILL_ALLOC(stage.val, entries);
    KRILL_ALLOC(stage.non_val, stage.n_non);
    KRILL_TRY(krill_mem_download(ctx, stage.val, m->val, (size_t)entries * sizeof *stage.val));
    KRILL_TRY(krill_mem_download(ctx, stage.non_val, m->non_val,
                                 (size_t)stage.n_non * sizeof *stage.non_val));
    KRILL_TRY(krill_rbp_ell_host_to_csr(&stage, csr));
cleanup:
    krill_free(stage.val);
    krill_free(stage.non_val);
    return st;
}

void rbp_ell_cuda_stats(const void *impl, krill_format_stats *s)
{
    *s = static_cast<const rbp_ell_gpu *>(impl)->stats;
}

} /* namespace */

extern "C" const krill_format_ops krill_rbp_ell_cuda_ops = {
    "rbp-ell",                      /* name */
    rbp_ell_cuda_build,             /* build */
    rbp_ell_cuda_spmv,              /* spmv */
    rbp_ell_cuda_spmv_repro,        /* spmv_repro */
    NULL,                           /* spmv_dot: spmv, then a dot */
    rbp_ell_cuda_update_values,     /* update_values */
    rbp_ell_cuda_diagonal,          /* diagonal */
    rbp_ell_cuda_to_csr,            /* to_csr */
    rbp_ell_cuda_stats,             /* stats */
    rbp_ell_cuda_destroy,           /* destroy */
    NULL,                       /* diagonal_blocks: none (bjacobi goes through to_csr) */
};

extern "C" const krill_format_ops krill_rbp_ellr_cuda_ops = {
    "rbp-ellr",                     /* name */
    rbp_ellr_cuda_build,            /* build */
    rbp_ell_cuda_spmv,              /* spmv */
    rbp_ell_cuda_spmv_repro,        /* spmv_repro */
    NULL,                           /* spmv_dot: spmv, then a dot */
    rbp_ell_cuda_update_values,     /* update_values */
    rbp_ell_cuda_diagonal,          /* diagonal */
    rbp_ell_cuda_to_csr,            /* to_csr */
    rbp_ell_cuda_stats,             /* stats */
    rbp_ell_cuda_destroy,           /* destroy */
    NULL,                       /* diagonal_blocks: none (bjacobi goes through to_csr) */
};
