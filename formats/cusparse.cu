/* formats/cusparse.cu - the "cusparse" reference format (GPU only): cuSPARSE's generic SpMV
 * (cusparseSpMV on a CSR descriptor) over the same CSR arrays as krill's own "csr", for
 * side-by-side comparison in tests and benchmarks.
 *
 * Storage: 32-bit row offsets and columns when nnz <= INT32_MAX, else 64-bit both (cuSPARSE
 * is given one index type for both arrays), double values. Build makes the matrix and vector
 * descriptors, asks cusparseSpMV_bufferSize for the workspace, allocates it once and runs
 * cusparseSpMV_preprocess once; an SpMV then only points the vector descriptors at x and y.
 * Params: NULL or "alg1" -> CUSPARSE_SPMV_CSR_ALG1 (the CSR default, what a user of cuSPARSE
 * gets), "alg2" -> CSR_ALG2. ALG2 gives the same bits on every run; ALG1 does not on matrices
 * with long rows (seen on an H100 with CUDA 13.0: band1x, rajat01), so only ALG2 can be
 * compared with krill's kernels bit for bit. */
#include <cusparse.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "formats/formats_impl.h"
#include "kernels/kernels_impl.cuh"
#include "krill/csr.h"

namespace {

struct cusparse_gpu {
    int64_t n_rows, n_cols, nnz;
    bool wide;                     /* 64-bit offsets and columns, else 32-bit */
    void *row_ptr;                 /* n_rows + 1 offsets */
    void *col;                     /* nnz columns */
    double *val;                   /* nnz values */
    cusparseHandle_t handle;       /* the context's, bound to its stream */
    cusparseSpMVAlg_t alg;
    cusparseConstSpMatDescr_t mat; /* NULL when nnz == 0 (then SpMV is y = beta*y) */
    cusparseDnVecDescr_t vx, vy;   /* pointed at x and y by every SpMV */
    void *buffer;                  /* cusparseSpMV's workspace */
    int64_t max_row_nnz, empty_rows;
    double mean_row_nnz;
};

krill_status cusparse_call(cusparseStatus_t status, const char *call)
{
    if (status == CUSPARSE_STATUS_SUCCESS) return KRILL_OK;
    return krill_error(KRILL_ERR_DEVICE, "%s failed: %s", call, cusparseGetErrorString(status));
}

#define CUSPARSE_TRY(call) KRILL_TRY(cusparse_call((call), #call))

void cusparse_destroy(krill_ctx *ctx, void *impl)
{
    cusparse_gpu *m = static_cast<cusparse_gpu *>(impl);
    if (!m) return;
    if (m->mat) (void)cusparseDestroySpMat(m->mat);
    if (m->vx) (void)cusparseDestroyDnVec(m->vx);
    if (m->vy) (void)cusparseDestroyDnVec(m->vy);
    krill_mem_free(ctx, m->buffer);
    krill_mem_free(ctx, m->row_ptr);
    krill_mem_free(ctx, m->col);
    krill_mem_free(ctx, m->val);
    krill_free(m);
}

/* Upload the index arrays at the chosen width (converted on the host when 64-bit offsets
 * must become 32-bit or 32-bit columns 64-bit). */
krill_status upload_indices(krill_ctx *ctx, const krill_csr *a, cusparse_gpu *m)
{
    krill_status st = KRILL_OK;
    int32_t *row32 = NULL;
    int64_t *col64 = NULL;
    const size_t n1 = (size_t)a->n_rows + 1, nnz = (size_t)a->nnz;
    if (m->wide) {
        KRILL_ALLOC(col64, nnz);
        for (size_t k = 0; k < nnz; k++) col64[k] = a->col[k];
        KRILL_TRY(krill_mem_alloc(ctx, &m->row_ptr, n1 * sizeof(int64_t), "cuSPARSE row offsets"));
        KRILL_TRY(krill_mem_alloc(ctx, &m->col, nnz * sizeof(int64_t), "cuSPARSE columns"));
        KRILL_TRY(krill_mem_upload(ctx, m->row_ptr, a->row_ptr, n1 * sizeof(int64_t)));
        KRILL_TRY(krill_mem_upload(ctx, m->col, col64, nnz * sizeof(int64_t)));
    } else {
        KRILL_ALLOC(row32, n1);
        for (size_t r = 0; r < n1; r++) row32[r] = (int32_t)a->row_ptr[r];
        KRILL_TRY(krill_mem_alloc(ctx, &m->row_ptr, n1 * sizeof(int32_t), "cuSPARSE row offsets"));
        KRILL_TRY(krill_mem_alloc(ctx, &m->col, nnz * sizeof(int32_t), "cuSPARSE columns"));
        KRILL_TRY(krill_mem_upload(ctx, m->row_ptr, row32, n1 * sizeof(int32_t)));
        KRILL_TRY(krill_mem_upload(ctx, m->col, a->col, nnz * sizeof(int32_t)));
    }
    KRILL_TRY(krill_cuda_sync(ctx));   /* the staged host arrays are freed below */
cleanup:
    krill_free(row32);
    krill_free(col64);
    return st;
}

/* The descriptors, the workspace and the one-time analysis, with zeroed stand-in vectors
 * for x and y (each SpMV points the descriptors at its own). */
krill_status make_descriptors(krill_ctx *ctx, cusparse_gpu *m)
{
    krill_status st = KRILL_OK;
    const cusparseIndexType_t index = m->wide ? CUSPARSE_INDEX_64I : CUSPARSE_INDEX_32I;
    const double one = 1.0, zero = 0.0;
    double *tx = NULL, *ty = NULL;
    size_t buffer_bytes = 0;
    KRILL_TRY(krill_mem_alloc(ctx, (void **)&tx, (size_t)m->n_cols * sizeof *tx,
                              "cuSPARSE analysis vector x"));
    KRILL_TRY(krill_mem_alloc(ctx, (void **)&ty, (size_t)m->n_rows * sizeof *ty,
                              "cuSPARSE analysis vector y"));
    KRILL_TRY(krill_cuda_memset0(ctx, tx, (size_t)m->n_cols * sizeof *tx));
    KRILL_TRY(krill_cuda_memset0(ctx, ty, (size_t)m->n_rows * sizeof *ty));
    CUSPARSE_TRY(cusparseCreateConstCsr(&m->mat, m->n_rows, m->n_cols, m->nnz, m->row_ptr,
                                        m->col, m->val, index, index, CUSPARSE_INDEX_BASE_ZERO,
                                        CUDA_R_64F));
    CUSPARSE_TRY(cusparseCreateDnVec(&m->vx, m->n_cols, tx, CUDA_R_64F));
    CUSPARSE_TRY(cusparseCreateDnVec(&m->vy, m->n_rows, ty, CUDA_R_64F));
    CUSPARSE_TRY(cusparseSetPointerMode(m->handle, CUSPARSE_POINTER_MODE_HOST));
    CUSPARSE_TRY(cusparseSpMV_bufferSize(m->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, m->mat,
                                         m->vx, &zero, m->vy, CUDA_R_64F, m->alg, &buffer_bytes));
    KRILL_TRY(krill_mem_alloc(ctx, &m->buffer, buffer_bytes, "cuSPARSE SpMV workspace"));
    CUSPARSE_TRY(cusparseSpMV_preprocess(m->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, m->mat,
                                         m->vx, &zero, m->vy, CUDA_R_64F, m->alg, m->buffer));
    KRILL_TRY(krill_cuda_sync(ctx));
cleanup:
    krill_mem_free(ctx, tx);
    krill_mem_free(ctx, ty);
    return st;
}

krill_status cusparse_build(krill_ctx *ctx, const krill_csr *a, const char *param, void **impl)
{
    krill_status st = KRILL_OK;
    cusparse_gpu *m = NULL;
    void *handle = NULL;
    *impl = NULL;
    KRILL_CALLOC(m, 1);
    if (!param || strcmp(param, "alg1") == 0) {
        m->alg = CUSPARSE_SPMV_CSR_ALG1;
    } else if (strcmp(param, "alg2") == 0) {
        m->alg = CUSPARSE_SPMV_CSR_ALG2;
    } else {
        st = krill_error(KRILL_ERR_ARG, "cusparse: unknown variant \"%s\" (expected alg1 or alg2)",
                         param);
        goto cleanup;
    }
    m->n_rows = a->n_rows;
    m->n_cols = a->n_cols;
    m->nnz = a->nnz;
    m->wide = a->nnz > INT32_MAX;
    for (int64_t r = 0; r < a->n_rows; r++) {
        const int64_t len = a->row_ptr[r + 1] - a->row_ptr[r];
        if (len > m->max_row_nnz) m->max_row_nnz = len;
        if (len == 0) m->empty_rows++;
    }
    m->mean_row_nnz = a->n_rows > 0 ? (double)a->nnz / (double)a->n_rows : 0.0;

    KRILL_TRY(krill_cuda_cusparse(ctx, &handle));
    m->handle = static_cast<cusparseHandle_t>(handle);
    KRILL_TRY(upload_indices(ctx, a, m));
    KRILL_TRY(krill_mem_alloc(ctx, (void **)&m->val, (size_t)a->nnz * sizeof *m->val,
                              "cuSPARSE values"));
    KRILL_TRY(krill_mem_upload(ctx, m->val, a->val, (size_t)a->nnz * sizeof *m->val));
    if (a->nnz > 0) KRILL_TRY(make_descriptors(ctx, m));
    KRILL_TRY(krill_cuda_sync(ctx));   /* the caller's arrays may go after return */
    *impl = m;
    m = NULL;
cleanup:
    cusparse_destroy(ctx, m);
    return st;
}

krill_status cusparse_spmv(krill_ctx *ctx, const void *impl, double alpha, const double *x,
                           double beta, double *y)
{
    krill_status st = KRILL_OK;
    const cusparse_gpu *m = static_cast<const cusparse_gpu *>(impl);
    if (m->n_rows == 0) goto cleanup;
    if (alpha == 0.0 || !m->mat) {   /* A x does not contribute: y = beta*y, x unread */
        KRILL_TRY(krill_cuda_axpby(ctx, m->n_rows, 0.0, NULL, beta, y));
        goto cleanup;
    }
    CUSPARSE_TRY(cusparseDnVecSetValues(m->vx, const_cast<double *>(x)));
    CUSPARSE_TRY(cusparseDnVecSetValues(m->vy, y));
    CUSPARSE_TRY(cusparseSetPointerMode(m->handle, CUSPARSE_POINTER_MODE_HOST));
    CUSPARSE_TRY(cusparseSpMV(m->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, m->mat, m->vx,
                              &beta, m->vy, CUDA_R_64F, m->alg, m->buffer));
cleanup:
    return st;
}

/* Reproducible mode: krill's exact row sums on the same CSR arrays (cuSPARSE has none). */
krill_status cusparse_spmv_repro(krill_ctx *ctx, const void *impl, double alpha,
                                 const double *x, double beta, double *y)
{
    const cusparse_gpu *m = static_cast<const cusparse_gpu *>(impl);
    return krill_csr_cuda_spmv_repro(ctx, "cusparse", m->n_rows, m->max_row_nnz,
                                     m->mean_row_nnz, m->row_ptr, m->wide, m->col, m->wide,
                                     m->val, NULL, alpha, x, beta, y);
}

/* New values in the build's CSR order; the descriptor keeps pointing at the same array. */
krill_status cusparse_update_values(krill_ctx *ctx, void *impl, const double *values)
{
    cusparse_gpu *m = static_cast<cusparse_gpu *>(impl);
    return krill_cuda_upload_values(ctx, m->val, values, m->nnz);
}

krill_status cusparse_diagonal(krill_ctx *ctx, const void *impl, double *d)
{
    const cusparse_gpu *m = static_cast<const cusparse_gpu *>(impl);
    return m->wide ? krill_csr_cuda_diagonal(ctx, m->n_rows,
                                             static_cast<const int64_t *>(m->row_ptr),
                                             static_cast<const int64_t *>(m->col), m->val, d)
                   : krill_csr_cuda_diagonal(ctx, m->n_rows,
                                             static_cast<const int32_t *>(m->row_ptr),
                                             static_cast<const int32_t *>(m->col), m->val, d);
}

krill_status cusparse_diagonal_blocks(krill_ctx *ctx, const void *impl, int b, double *blocks)
{
    const cusparse_gpu *m = static_cast<const cusparse_gpu *>(impl);
    return m->wide ? krill_csr_cuda_diagonal_blocks(ctx, m->n_rows, b,
                                                    static_cast<const int64_t *>(m->row_ptr),
                                                    static_cast<const int64_t *>(m->col),
                                                    m->val, blocks)
                   : krill_csr_cuda_diagonal_blocks(ctx, m->n_rows, b,
                                                    static_cast<const int32_t *>(m->row_ptr),
                                                    static_cast<const int32_t *>(m->col),
                                                    m->val, blocks);
}

krill_status cusparse_to_csr(krill_ctx *ctx, const void *impl, krill_csr **csr)
{
    const cusparse_gpu *m = static_cast<const cusparse_gpu *>(impl);
    return krill_csr_cuda_download(ctx, m->n_rows, m->n_cols, m->nnz, m->row_ptr, m->wide,
                                   m->col, m->wide, m->val, csr);
}

/* Bytes of matrix data on the device (offsets, columns, values); cuSPARSE's workspace is not
 * matrix data and is not counted. */
void cusparse_stats(const void *impl, krill_format_stats *s)
{
    const cusparse_gpu *m = static_cast<const cusparse_gpu *>(impl);
    const size_t index = m->wide ? sizeof(int64_t) : sizeof(int32_t);
    memset(s, 0, sizeof *s);
    s->n_rows = m->n_rows;
    s->n_cols = m->n_cols;
    s->nnz = m->nnz;
    s->bytes = (size_t)(m->n_rows + 1) * index + (size_t)m->nnz * (index + sizeof(double));
    s->max_row_nnz = m->max_row_nnz;
    s->mean_row_nnz = m->mean_row_nnz;
    s->empty_rows = m->empty_rows;
    snprintf(s->variant, sizeof s->variant, "%s",
             m->alg == CUSPARSE_SPMV_CSR_ALG2 ? "alg2" : "alg1");
}

} /* namespace */

extern "C" const krill_format_ops krill_cusparse_cuda_ops = {
    "cusparse",                 /* name */
    cusparse_build,             /* build */
    cusparse_spmv,              /* spmv */
    cusparse_spmv_repro,        /* spmv_repro */
    NULL,                       /* spmv_dot: none; krill_mat_spmv_dot_raw does spmv + dot */
    cusparse_update_values,     /* update_values */
    cusparse_diagonal,          /* diagonal */
    cusparse_to_csr,            /* to_csr */
    cusparse_stats,             /* stats */
    cusparse_destroy,           /* destroy */
    cusparse_diagonal_blocks,   /* diagonal_blocks */
};
