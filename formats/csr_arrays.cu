/* formats/csr_arrays.cu - device CSR arrays, whoever owns them (the "csr" and "cusparse"
 * formats, a caller's arrays under krill_mat_create_device_csr): the download into a host
 * krill_csr, the reproducible SpMV over them (ozaki/ozaki_row.cuh's range visitor), and the
 * structure check of arrays that never were on the host (krill_csr_cuda_check). */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "formats/formats_impl.h"
#include "kernels/kernels_impl.cuh"
#include "krill/csr.h"
#include "ozaki/ozaki_row.cuh"

namespace {

/* count indices of type From in device memory into the host array out of type To: straight
 * when the widths agree, else through a host staging array (To holds every value: the
 * indices were converted from it at the build). */
template <typename From, typename To>
krill_status download_indices(krill_ctx *ctx, const void *src, int64_t count, To *out)
{
    krill_status st = KRILL_OK;
    From *stage = NULL;
    if constexpr (sizeof(From) == sizeof(To)) {
        KRILL_TRY(krill_mem_download(ctx, out, src, (size_t)count * sizeof(To)));
    } else {
        KRILL_ALLOC(stage, count);
        KRILL_TRY(krill_mem_download(ctx, stage, src, (size_t)count * sizeof(From)));
        for (int64_t k = 0; k < count; k++) out[k] = (To)stage[k];
    }
cleanup:
    krill_free(stage);
    return st;
}

/* The range visitor of reproducible SpMV (ozaki/ozaki_row.cuh) on CSR arrays with offsets
 * of type I and columns of type J: row i is the range [row_ptr[i], row_ptr[i + 1]), every
 * element an entry, its sum y's row out_rows[i] (out_rows NULL: row i). */
template <typename I, typename J>
struct csr_row_visitor {
    const I *__restrict__ row_ptr;
    const J *__restrict__ col;
    const double *__restrict__ val;
    const int32_t *__restrict__ out_rows;
    __device__ int64_t out_row(int64_t i) const { return out_rows ? out_rows[i] : i; }
    __device__ void locate_rows(int64_t first, int count, int sub, int64_t *begin,
                                int64_t *end) const
    {
        if (sub < count) {
            *begin = (int64_t)row_ptr[first + sub];
            *end = (int64_t)row_ptr[first + sub + 1];
        }
    }
    __device__ bool term(int64_t k, const double *__restrict__ x, double *a, double *xv) const
    {
        *a = val[k];
        *xv = __ldg(&x[col[k]]);
        return true;
    }
};

template <typename I, typename J>
krill_status csr_spmv_repro_typed(krill_ctx *ctx, const char *format, int64_t n_rows,
                                  int64_t max_row_nnz, int lanes, const void *row_ptr,
                                  const void *col, const double *val, const int32_t *out_rows,
                                  double alpha, const double *x, double beta, double *y)
{
    const csr_row_visitor<I, J> v{static_cast<const I *>(row_ptr), static_cast<const J *>(col),
                                  val, out_rows};
    return krill_oz_spmv_range_launch(ctx, format, v, n_rows, max_row_nnz, lanes, alpha, x,
                                      beta, y);
}

/* The device part of krill_csr_cuda_check, one thread per row (grid-stride): the least
 * entry whose column is outside [0, n_cols) into bad[0], the least entry whose column does
 * not exceed its predecessor's in the row into bad[1] (each UINT64_MAX when none). The
 * offsets were checked on the host: every row's range lies in [0, nnz). */
template <typename I>
__global__ void csr_check_columns_kernel(int64_t n_rows, int64_t n_cols, const I *row_ptr,
                                         const int32_t *col, unsigned long long *bad)
{
    for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < n_rows;
         r += (int64_t)gridDim.x * blockDim.x) {
        const int64_t begin = (int64_t)row_ptr[r], end = (int64_t)row_ptr[r + 1];
        for (int64_t k = begin; k < end; k++) {
            const int32_t c = col[k];
            if (c < 0 || c >= n_cols) {
                atomicMin(&bad[0], (unsigned long long)k);
                break;
            }
            if (k > begin && c <= col[k - 1]) {
                atomicMin(&bad[1], (unsigned long long)k);
                break;
            }
        }
    }
}

/* The least entry of val that is not finite into bad[2]. */
__global__ void csr_check_values_kernel(int64_t nnz, const double *val, unsigned long long *bad)
{
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < nnz;
         k += (int64_t)gridDim.x * blockDim.x)
        if (!isfinite(val[k])) atomicMin(&bad[2], (unsigned long long)k);
}

/* the row holding entry k: the last r with host_row_ptr[r] <= k */
int64_t row_of(const int64_t *host_row_ptr, int64_t n_rows, int64_t k)
{
    int64_t lo = 0, hi = n_rows;   /* host_row_ptr[lo] <= k < host_row_ptr[hi] */
    while (hi - lo > 1) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (host_row_ptr[mid] <= k) lo = mid;
        else hi = mid;
    }
    return lo;
}

} /* namespace */

/* Device CSR arrays that never were on the host (krill_mat_create_device_csr): with
 * host_row_ptr (the offsets, already checked on the host: nondecreasing from 0 to nnz) the
 * columns (in [0, n_cols), strictly increasing in each row), and always the values (finite).
 * Reads the arrays once on the GPU; the three answers travel in the context's scalar slots
 * (no allocation). A bad column is KRILL_ERR_ARG naming an offending entry, its row and
 * column (the least one of its kind: out of range first, then order); a non-finite value
 * KRILL_ERR_NUMERIC naming the least such entry, as krill_csr_check does on the host. */
extern "C" krill_status krill_csr_cuda_check(krill_ctx *ctx, const char *who, int64_t n_rows,
                                             int64_t n_cols, int64_t nnz, const void *row_ptr,
                                             int wide_offsets, const int64_t *host_row_ptr,
                                             const int32_t *col, const double *val)
{
    krill_status st = KRILL_OK;
    unsigned long long bad[3] = {ULLONG_MAX, ULLONG_MAX, ULLONG_MAX};
    unsigned long long *dbad = reinterpret_cast<unsigned long long *>(KRILL_CUDA_SLOT(ctx, 0));
    static_assert(sizeof(double) == sizeof(unsigned long long), "a slot holds one index");
    KRILL_TRY(krill_mem_upload(ctx, dbad, bad, sizeof bad));
    if (host_row_ptr && n_rows > 0) {
        if (wide_offsets)
            krill_cuda_launch(ctx, csr_check_columns_kernel<int64_t>, n_rows,
                              krill_cuda_stream(ctx), n_rows, n_cols,
                              static_cast<const int64_t *>(row_ptr), col, dbad);
        else
            krill_cuda_launch(ctx, csr_check_columns_kernel<int32_t>, n_rows,
                              krill_cuda_stream(ctx), n_rows, n_cols,
                              static_cast<const int32_t *>(row_ptr), col, dbad);
        KRILL_TRY(krill_cuda_check_launch("csr_check_columns_kernel"));
    }
    if (nnz > 0) {
        krill_cuda_launch(ctx, csr_check_values_kernel, nnz, krill_cuda_stream(ctx), nnz, val,
                          dbad);
        KRILL_TRY(krill_cuda_check_launch("csr_check_values_kernel"));
    }
    KRILL_TRY(krill_mem_download(ctx, bad, dbad, sizeof bad));   /* waits for the kernels */
    for (int kind = 0; kind < 3; kind++) {
        const int64_t k = (int64_t)bad[kind];
        int32_t c[2] = {0, 0};
        double v = 0.0;
        if (bad[kind] == ULLONG_MAX) continue;
        if (kind < 2) KRILL_TRY(krill_mem_download(ctx, c, col + k - kind, (1 + kind) * sizeof *c));
        if (kind == 0)
            st = krill_error(KRILL_ERR_ARG, "%s: entry %lld (row %lld) has column %d, outside "
                             "[0, %lld)", who, (long long)k,
                             (long long)row_of(host_row_ptr, n_rows, k), (int)c[0],
                             (long long)n_cols);
        else if (kind == 1)
            st = krill_error(KRILL_ERR_ARG, "%s: row %lld's columns are not strictly increasing: "
                             "entry %lld has column %d after %d (sort each row's columns and "
                             "sum duplicates first)", who,
                             (long long)row_of(host_row_ptr, n_rows, k), (long long)k, (int)c[1],
                             (int)c[0]);
        else {
            KRILL_TRY(krill_mem_download(ctx, &v, val + k, sizeof v));
            st = krill_error(KRILL_ERR_NUMERIC, "%s: value %lld is %g: values must be finite",
                             who, (long long)k, v);
        }
        break;
    }
cleanup:
    return st;
}


/* The device arrays into a new krill_csr (int64_t offsets, int32_t columns); every download
 * waits for the stream, so the host arrays are complete on return. */
extern "C" krill_status krill_csr_cuda_download(krill_ctx *ctx, int64_t n_rows, int64_t n_cols,
                                                int64_t nnz, const void *row_ptr,
                                                int wide_offsets, const void *col, int wide_cols,
                                                const double *val, krill_csr **csr)
{
    krill_status st = KRILL_OK;
    krill_csr *a = NULL;
    *csr = NULL;
    KRILL_TRY(krill_csr_create((int32_t)n_rows, (int32_t)n_cols, nnz, &a));
    if (wide_offsets)
        KRILL_TRY((download_indices<int64_t, int64_t>(ctx, row_ptr, n_rows + 1, a->row_ptr)));
    else
        KRILL_TRY((download_indices<int32_t, int64_t>(ctx, row_ptr, n_rows + 1, a->row_ptr)));
    if (wide_cols)
        KRILL_TRY((download_indices<int64_t, int32_t>(ctx, col, nnz, a->col)));
    else
        KRILL_TRY((download_indices<int32_t, int32_t>(ctx, col, nnz, a->col)));
    KRILL_TRY(krill_mem_download(ctx, a->val, val, (size_t)nnz * sizeof *a->val));
    *csr = a;
    a = NULL;
cleanup:
    krill_csr_destroy(&a);
    return st;
}

extern "C" krill_status krill_csr_cuda_spmv_repro(krill_ctx *ctx, const char *format,
                                                  int64_t n_rows, int64_t max_row_nnz,
                                                  double mean_row_nnz, const void *row_ptr,
                                                  int wide_offsets, const void *col,
                                                  int wide_cols, const double *val,
                                                  const int32_t *out_rows, double alpha,
                                                  const double *x, double beta, double *y)
{
    const int lanes = krill_oz_row_lanes(mean_row_nnz, n_rows);
    if (wide_cols)   /* cusparse past INT32_MAX entries: both 64-bit */
        return csr_spmv_repro_typed<int64_t, int64_t>(ctx, format, n_rows, max_row_nnz, lanes,
                                                      row_ptr, col, val, out_rows, alpha, x,
                                                      beta, y);
    if (wide_offsets)
        return csr_spmv_repro_typed<int64_t, int32_t>(ctx, format, n_rows, max_row_nnz, lanes,
                                                      row_ptr, col, val, out_rows, alpha, x,
                                                      beta, y);
    return csr_spmv_repro_typed<int32_t, int32_t>(ctx, format, n_rows, max_row_nnz, lanes,
                                                  row_ptr, col, val, out_rows, alpha, x, beta,
                                                  y);
}

