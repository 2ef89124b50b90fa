/* formats/rbp_csr.cu - RBP-CSR on the GPU: the "rbp-csr" table for CUDA contexts.
 *
 * Storage: the arrays of Algorithm 3 (krill_rbp_host, built on the host by formats/rbp.c)
 * uploaded as they are: formula (4), 12 (N + 1) + 4 N_col + 8 N_val + 12 N_non bytes. The
 * host keeps the index arrays (not the values, about a third of those bytes) to scatter new
 * values for update_values, which then uploads N_val + N_non doubles.
 *
 * Kernels:
 *   "scalar": Algorithm 4, one thread per row, rows cyclic over a grid-stride loop. For
 *     each run (first, last) the thread reads the pair once and the columns of its values
 *     are first, first + 1, ..., last: no column index is read per value. Then the
 *     isolated entries, as in CSR.
 *   "vector:L" (L = 2..32): a sub-warp of L lanes per row. The row's run values are one
 *     contiguous stretch of Comp_Values, so lane l takes values l, l + L, ... of it (the
 *     sub-warp reads neighbouring addresses) and finds each one's column by walking the
 *     row's pairs forward (all lanes read the same few pairs: one cache line, broadcast);
 *     then lanes stride over the isolated entries, and a shuffle tree adds the lanes.
 * Choice ("rbp-csr" or "rbp-csr:auto"): the rule of the csr kernels (formats/csr.cu, which
 * measured it): L the power of two nearest mean row length / 3 on a log scale, in [1, 32],
 * L = 1 being "scalar". One thread per row reads 32 separate rows per warp step, 32 cache
 * lines, which is what made the paper's row-per-thread CSR slow on rows of tens of entries;
 * the sub-warp keeps a warp's loads on a few lines. "rbp-csr:scalar" forces Algorithm 4 and
 * "rbp-csr:vector[:L]" the sub-warp kernel.
 * Each lane sums its entries in order with fused multiply-adds (run values first, then the
 * isolated entries, as Algorithm 4), so y is run-to-run exact; y_r = alpha*sum + beta*y_r
 * is rounded as written (beta == 0: y not read).
 * Traffic per SpMV: the bytes above, x (gathered: each run's entries are neighbours), y. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/formats_impl.h"
#include "kernels/kernels_impl.cuh"
#include "ozaki/ozaki_row.cuh"

namespace {

struct rbp_csr_gpu {
    int64_t n_rows;
    int lanes;                /* 1: Algorithm 4 (scalar); 2..32: lanes per row (vector) */
    int32_t *val_ptr;         /* device, N + 1 */
    int32_t *col_ptr;         /* device, N + 1 */
    int32_t *row_ptr;         /* device, N + 1 */
    int32_t *comp_col;        /* device, N_col */
    double *comp_val;         /* device, N_val */
    int32_t *non_col;         /* device, N_non */
    double *non_val;          /* device, N_non */
    krill_rbp_host host;      /* host: the index arrays only (values released after upload) */
    krill_format_stats stats;
};

/* The device arrays a kernel reads. */
struct rbp_csr_view {
    const int32_t *__restrict__ val_ptr;
    const int32_t *__restrict__ col_ptr;
    const int32_t *__restrict__ row_ptr;
    const int32_t *__restrict__ comp_col;
    const double *__restrict__ comp_val;
    const int32_t *__restrict__ non_col;
    const double *__restrict__ non_val;
};

/* ---- kernels ------------------------------------------------------------------------- */

/* Algorithm 4: y_i = alpha * (A x)_i + beta * y_i, one thread per row. */
__global__ void __launch_bounds__(KRILL_CUDA_THREADS)
rbp_csr_scalar_kernel(int64_t n, rbp_csr_view a, double alpha, const double *__restrict__ x,
                      double beta, double *__restrict__ y)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double s = 0.0;
        int64_t c = a.col_ptr[i], v = a.val_ptr[i];
        const int64_t v_end = a.val_ptr[i + 1];
        while (v < v_end) {      /* one run per pass: its columns first .. last counted up */
            const int32_t first = a.comp_col[c], last = a.comp_col[c + 1];
            for (int32_t j = first; j <= last; j++) s = __fma_rn(a.comp_val[v++], __ldg(&x[j]), s);
            c += 2;
        }
        const int64_t q_end = a.row_ptr[i + 1];
        for (int64_t q = a.row_ptr[i]; q < q_end; q++)
            s = __fma_rn(a.non_val[q], __ldg(&x[a.non_col[q]]), s);
        y[i] = beta == 0.0 ? __dmul_rn(alpha, s)
                           : __dadd_rn(__dmul_rn(alpha, s), __dmul_rn(beta, y[i]));
    }
}

/* The sub-warp kernel: L lanes per row, rows cyclic over sub-warps. The loop over row groups
 * depends only on the warp, so every lane reaches every shuffle. */
template <int L>
__global__ void __launch_bounds__(KRILL_CUDA_THREADS)
rbp_csr_vector_kernel(int64_t n, rbp_csr_view a, double alpha, const double *__restrict__ x,
                      double beta, double *__restrict__ y)
{
    constexpr int rows_per_warp = 32 / L;
    const int lane = threadIdx.x & 31;
    const int sub = lane / L, sublane = lane % L;
    const int64_t warp = ((int64_t)blockIdx.x * KRILL_CUDA_THREADS + threadIdx.x) / 32;
    const int64_t warps = (int64_t)gridDim.x * KRILL_CUDA_WARPS;
    for (int64_t group = warp * rows_per_warp; group < n; group += warps * rows_per_warp) {
        const int64_t r = group + sub;
        const bool mine = r < n;
        double s = 0.0;
        if (mine) {
            const int64_t v_begin = a.val_ptr[r], v_end = a.val_ptr[r + 1];
            int64_t c = a.col_ptr[r], run_start = v_begin;   /* the run holding value v */
            int32_t first = 0, last = -1;
            if (v_begin < v_end) {
                first = a.comp_col[c];
                last = a.comp_col[c + 1];
            }
            for (int64_t v = v_begin + sublane; v < v_end; v += L) {
                while (v > run_start + (last - first)) {   /* v lies in a later run */
                    run_start += last - first + 1;
                    c += 2;
                    first = a.comp_col[c];
                    last = a.comp_col[c + 1];
                }
                s = __fma_rn(a.comp_val[v], __ldg(&x[first + (v - run_start)]), s);
            }
            const int64_t q_end = a.row_ptr[r + 1];
            for (int64_t q = a.row_ptr[r] + sublane; q < q_end; q += L)
                s = __fma_rn(a.non_val[q], __ldg(&x[a.non_col[q]]), s);
        }
#pragma unroll
        for (int offset = L / 2; offset > 0; offset >>= 1)
            s += __shfl_down_sync(0xffffffffu, s, offset, L);
        if (mine && sublane == 0)
            y[r] = beta == 0.0 ? __dmul_rn(alpha, s)
                               : __dadd_rn(__dmul_rn(alpha, s), __dmul_rn(beta, y[r]));
    }
}

/* The row visitor of reproducible SpMV (ozaki/ozaki_row.cuh): row i's runs, their columns
 * counted up from first to last, then its isolated entries (Algorithm 4's walk). */
struct rbp_csr_row_visitor {
    rbp_csr_view a;
    typedef int64_t row;
    __device__ row locate(int64_t i) const { return i; }
    template <class Op>
    __device__ void visit(const row &i, const double *__restrict__ x, Op &op) const
    {
        int64_t c = a.col_ptr[i], v = a.val_ptr[i];
        const int64_t v_end = a.val_ptr[i + 1];
        while (v < v_end) {
            const int32_t first = a.comp_col[c], last = a.comp_col[c + 1];
            for (int32_t j = first; j <= last; j++) op(a.comp_val[v++], __ldg(&x[j]));
            c += 2;
        }
        for (int64_t q = a.row_ptr[i]; q < a.row_ptr[i + 1]; q++)
            op(a.non_val[q], __ldg(&x[a.non_col[q]]));
    }
};

/* d_i = a_ii: in the run with first <= i <= last, or among the isolated entries; else 0. */
__global__ void rbp_csr_diagonal_kernel(int64_t n, rbp_csr_view a, double *__restrict__ d)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double di = 0.0;
        int64_t v = a.val_ptr[i];
        for (int64_t c = a.col_ptr[i]; c < a.col_ptr[i + 1]; c += 2) {
            const int32_t first = a.comp_col[c], last = a.comp_col[c + 1];
            if (first <= i && i <= last) di = a.comp_val[v + (i - first)];
            v += last - first + 1;
        }
        for (int64_t q = a.row_ptr[i]; q < a.row_ptr[i + 1]; q++)
            if (a.non_col[q] == i) di = a.non_val[q];
        d[i] = di;
    }
}

/* ---- the format table's functions ---------------------------------------------------- */

rbp_csr_view view_of(const rbp_csr_gpu *m)
{
    return rbp_csr_view{m->val_ptr, m->col_ptr, m->row_ptr, m->comp_col,
                        m->comp_val, m->non_col, m->non_val};
}

/* param: NULL or "auto" -> 0 (automatic), "scalar" -> 1, "vector" -> -1 (L from the mean,
 * at least 2), "vector:N" -> N for N in {2, 4, 8, 16, 32}. */
krill_status parse_param(const char *param, int *lanes)
{
    *lanes = 0;
    if (!param || strcmp(param, "auto") == 0) return KRILL_OK;
    if (strcmp(param, "scalar") == 0) {
        *lanes = 1;
        return KRILL_OK;
    }
    if (strcmp(param, "vector") == 0) {
        *lanes = -1;
        return KRILL_OK;
    }
    if (strncmp(param, "vector:", 7) == 0) {
        char *end = NULL;
        const long n = strtol(param + 7, &end, 10);
        const bool power = n == 2 || n == 4 || n == 8 || n == 16 || n == 32;
        if (end != param + 7 && *end == '\0' && power) {
            *lanes = (int)n;
            return KRILL_OK;
        }
    }
    return krill_error(KRILL_ERR_ARG, "rbp-csr: unknown variant \"%s\" (expected auto, scalar, "
                       "vector or vector:N with N = 2, 4, 8, 16 or 32)", param);
}

void rbp_csr_cuda_destroy(krill_ctx *ctx, void *impl)
{
    rbp_csr_gpu *m = static_cast<rbp_csr_gpu *>(impl);
    if (!m) return;
    krill_mem_free(ctx, m->val_ptr);
    krill_mem_free(ctx, m->col_ptr);
    krill_mem_free(ctx, m->row_ptr);
    krill_mem_free(ctx, m->comp_col);
    krill_mem_free(ctx, m->comp_val);
    krill_mem_free(ctx, m->non_col);
    krill_mem_free(ctx, m->non_val);
    krill_rbp_host_free(&m->host);
    krill_free(m);
}

krill_status rbp_csr_cuda_build(krill_ctx *ctx, const krill_csr *csr, const char *param,
                                void **impl)
{
    krill_status st = KRILL_OK;
    rbp_csr_gpu *m = NULL;
    int forced = 0;
    const krill_rbp_host *h;
    const size_t offsets = ((size_t)csr->n_rows + 1) * sizeof(int32_t);
    KRILL_TRY(parse_param(param, &forced));
    KRILL_CALLOC(m, 1);
    h = &m->host;
    KRILL_TRY(krill_rbp_host_build(csr, "rbp-csr", ctx->threads, &m->host));
    m->n_rows = h->n_rows;
    krill_csr_row_stats(csr, &m->stats);
    krill_csr_run_stats(csr, ctx->threads, &m->stats);
    m->stats.bytes = krill_rbp_csr_bytes(h);
    if (forced == 0) m->lanes = krill_gpu_lanes_per_row(m->stats.mean_row_nnz, m->n_rows, 1);
    else if (forced < 0) m->lanes = krill_gpu_lanes_per_row(m->stats.mean_row_nnz, 0, 2);
    else m->lanes = forced;
    if (m->lanes == 1) snprintf(m->stats.variant, sizeof m->stats.variant, "scalar");
    else snprintf(m->stats.variant, sizeof m->stats.variant, "vector:%d", m->lanes);

    KRILL_MEM_ALLOC(ctx, m->val_ptr, h->n_rows + 1);
    KRILL_MEM_ALLOC(ctx, m->col_ptr, h->n_rows + 1);
    KRILL_MEM_ALLOC(ctx, m->row_ptr, h->n_rows + 1);
    KRILL_MEM_ALLOC(ctx, m->comp_col, h->n_col);
    KRILL_MEM_ALLOC(ctx, m->comp_val, h->n_val);
    KRILL_MEM_ALLOC(ctx, m->non_col, h->n_non);
    KRILL_MEM_ALLOC(ctx, m->non_val, h->n_non);
    KRILL_TRY(krill_mem_upload(ctx, m->val_ptr, h->val_ptr, offsets));
    KRILL_TRY(krill_mem_upload(ctx, m->col_ptr, h->col_ptr, offsets));
    KRILL_TRY(krill_mem_upload(ctx, m->row_ptr, h->row_ptr, offsets));
    KRILL_TRY(krill_mem_upload(ctx, m->comp_col, h->comp_col, (size_t)h->n_col * sizeof(int32_t)));
    KRILL_TRY(krill_mem_upload(ctx, m->comp_val, h->comp_val, (size_t)h->n_val * sizeof(double)));
    KRILL_TRY(krill_mem_upload(ctx, m->non_col, h->non_col, (size_t)h->n_non * sizeof(int32_t)));
    KRILL_TRY(krill_mem_upload(ctx, m->non_val, h->non_val, (size_t)h->n_non * sizeof(double)));
    KRILL_TRY(krill_cuda_sync(ctx));   /* the host values may go now */
    krill_free(m->host.comp_val);
    krill_free(m->host.non_val);
    m->host.comp_val = NULL;
    m->host.non_val = NULL;
    *impl = m;
    m = NULL;
cleanup:
    rbp_csr_cuda_destroy(ctx, m);
    return st;
}

template <int L>
void launch_vector(krill_ctx *ctx, const rbp_csr_gpu *m, double alpha, const double *x,
                   double beta, double *y)
{
    constexpr int64_t rows_per_warp = 32 / L;
    const int64_t grid_items = (m->n_rows + rows_per_warp - 1) / rows_per_warp * 32;
    krill_cuda_launch(ctx, rbp_csr_vector_kernel<L>, grid_items, krill_cuda_stream(ctx), m->n_rows,
                      view_of(m), alpha, x, beta, y);
}

krill_status rbp_csr_cuda_spmv(krill_ctx *ctx, const void *impl, double alpha, const double *x,
                               double beta, double *y)
{
    const rbp_csr_gpu *m = static_cast<const rbp_csr_gpu *>(impl);
    if (m->n_rows == 0) return KRILL_OK;
    switch (m->lanes) {
    case 1:
        krill_cuda_launch(ctx, rbp_csr_scalar_kernel, m->n_rows, krill_cuda_stream(ctx), m->n_rows,
                          view_of(m), alpha, x, beta, y);
        break;
    case 2: launch_vector<2>(ctx, m, alpha, x, beta, y); break;
    case 4: launch_vector<4>(ctx, m, alpha, x, beta, y); break;
    case 8: launch_vector<8>(ctx, m, alpha, x, beta, y); break;
    case 16: launch_vector<16>(ctx, m, alpha, x, beta, y); break;
    case 32: launch_vector<32>(ctx, m, alpha, x, beta, y); break;
    default:
        return krill_error(KRILL_ERR_INTERNAL, "rbp-csr: %d lanes per row is not a power of two "
                           "in [1, 32]", m->lanes);
    }
    return krill_cuda_check_launch(m->lanes == 1 ? "rbp_csr_scalar_kernel"
                                                 : "rbp_csr_vector_kernel");
}

/* Every row's exact sum, one thread per row whatever the variant. */
krill_status rbp_csr_cuda_spmv_repro(krill_ctx *ctx, const void *impl, double alpha,
                                     const double *x, double beta, double *y)
{
    const rbp_csr_gpu *m = static_cast<const rbp_csr_gpu *>(impl);
    const rbp_csr_row_visitor v{view_of(m)};
    return krill_oz_spmv_launch(ctx, "rbp-csr", v, m->n_rows, m->stats.max_row_nnz, alpha, x,
                                beta, y);
}

/* New values: dealt out on the host into staging arrays (formats/rbp.c), then uploaded. */
krill_status rbp_csr_cuda_update_values(krill_ctx *ctx, void *impl, const double *values)
{
    krill_status st = KRILL_OK;
    rbp_csr_gpu *m = static_cast<rbp_csr_gpu *>(impl);
    double *comp_val = NULL, *non_val = NULL;
    KRILL_ALLOC(comp_val, m->host.n_val);
    KRILL_ALLOC(non_val, m->host.n_non);
    krill_rbp_host_scatter(&m->host, values, comp_val, non_val);
    KRILL_TRY(krill_mem_upload(ctx, m->comp_val, comp_val, (size_t)m->host.n_val * sizeof(double)));
    KRILL_TRY(krill_cuda_upload_values(ctx, m->non_val, non_val, m->host.n_non));
cleanup:
    krill_free(comp_val);
    krill_free(non_val);
    return st;
}

krill_status rbp_csr_cuda_diagonal(krill_ctx *ctx, const void *impl, double *d)
{
    const rbp_csr_gpu *m = static_cast<const rbp_csr_gpu *>(impl);
    if (m->n_rows == 0) return KRILL_OK;
    krill_cuda_launch(ctx, rbp_csr_diagonal_kernel, m->n_rows, krill_cuda_stream(ctx), m->n_rows,
                      view_of(m), d);
    return krill_cuda_check_launch("rbp_csr_diagonal_kernel");
}

/* The values downloaded into a copy of the host struct (which keeps the index arrays), then
 * the shared host merge (formats/rbp.c). */
krill_status rbp_csr_cuda_to_csr(krill_ctx *ctx, const void *impl, krill_csr **csr)
{
    krill_status st = KRILL_OK;
    const rbp_csr_gpu *m = static_cast<const rbp_csr_gpu *>(impl);
    krill_rbp_host stage = m->host;
    *csr = NULL;
    stage.comp_val = NULL;
    stage.non_val = NULL;
    KRILL_ALLOC(stage.comp_val, stage.n_val);
    KRILL_ALLOC(stage.non_val, stage.n_non);
    KRILL_TRY(krill_mem_download(ctx, stage.comp_val, m->comp_val,
                                 (size_t)stage.n_val * sizeof *stage.comp_val));
    KRILL_TRY(krill_mem_download(ctx, stage.non_val, m->non_val,
                                 (size_t)stage.n_non * sizeof *stage.non_val));
    KRILL_TRY(krill_rbp_host_to_csr(&stage, csr));
cleanup:
    krill_free(stage.comp_val);
    krill_free(stage.non_val);
    return st;
}

void rbp_csr_cuda_stats(const void *impl, krill_format_stats *s)
{
    *s = static_cast<const rbp_csr_gpu *>(impl)->stats;
}

} /* namespace */

extern "C" const krill_format_ops krill_rbp_csr_cuda_ops = {
    "rbp-csr",                      /* name */
    rbp_csr_cuda_build,             /* build */
    rbp_csr_cuda_spmv,              /* spmv */
    rbp_csr_cuda_spmv_repro,        /* spmv_repro */
    NULL,                           /* spmv_dot: spmv, then a dot */
    rbp_csr_cuda_update_values,     /* update_values */
    rbp_csr_cuda_diagonal,          /* diagonal */
    rbp_csr_cuda_to_csr,            /* to_csr */
    rbp_csr_cuda_stats,             /* stats */
    rbp_csr_cuda_destroy,           /* destroy */
    NULL,                       /* diagonal_blocks: none (bjacobi goes through to_csr) */
};
