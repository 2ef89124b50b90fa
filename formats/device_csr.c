/* formats/device_csr.c - krill_mat_create_device_csr: the GPU "csr" format over a caller's
 * CSR arrays in device memory, without a copy (include/krill/mat.h).
 *
 * What it reads: the row offsets once to the host (4 or 8 (n_rows + 1) bytes: checked there,
 * and the input of the row plan and long-row tables of formats/csr.cu), the columns and
 * values once on the GPU (krill_csr_cuda_check, formats/csr_arrays.cu). What it allocates on
 * the device: the long-row tables alone (none when no row has more than 128 x lanes
 * entries). Every SpMV then reads the caller's arrays, as the "csr" format reads its own. */
#include <stdint.h>
#include <string.h>

#include "formats/formats_impl.h"

#define WHO "krill_mat_create_device_csr"

#ifdef KRILL_HAVE_CUDA
/* the offsets of row_ptr (index_bytes 4 or 8) into host[0..n_rows], as int64_t */
static krill_status download_offsets(krill_ctx *ctx, const void *row_ptr, int index_bytes,
                                     int64_t n_rows, int64_t *host)
{
    krill_status st = KRILL_OK;
    int32_t *row32 = NULL;
    if (index_bytes == 8) {
        st = krill_mem_download(ctx, host, row_ptr, (size_t)(n_rows + 1) * sizeof *host);
        goto cleanup;
    }
    KRILL_ALLOC(row32, n_rows + 1);
    KRILL_TRY(krill_mem_download(ctx, row32, row_ptr, (size_t)(n_rows + 1) * sizeof *row32));
    for (int64_t r = 0; r <= n_rows; r++) host[r] = row32[r];
cleanup:
    krill_free(row32);
    return st;
}

/* row_ptr[0] = 0, nondecreasing, row_ptr[n_rows] = nnz: every row's range inside [0, nnz) */
static krill_status check_offsets(const int64_t *rp, int64_t n_rows, int64_t nnz)
{
    krill_status st = KRILL_OK;
    KRILL_REQUIRE(rp[0] == 0, WHO ": row_ptr[0] = %lld; CSR offsets start at 0", (long long)rp[0]);
    for (int64_t r = 0; r < n_rows; r++)
        KRILL_REQUIRE(rp[r + 1] >= rp[r], WHO ": row_ptr[%lld] = %lld < row_ptr[%lld] = %lld: "
                      "the offsets must not decrease", (long long)(r + 1), (long long)rp[r + 1],
                      (long long)r, (long long)rp[r]);
    KRILL_REQUIRE(rp[n_rows] == nnz, WHO ": row_ptr[%lld] = %lld, but nnz = %lld",
                  (long long)n_rows, (long long)rp[n_rows], (long long)nnz);
cleanup:
    return st;
}
#endif

krill_status krill_mat_create_device_csr(krill_ctx *ctx, int64_t n_rows, int64_t n_cols,
                                         int64_t nnz, const void *row_ptr, int index_bytes,
                                         const int32_t *col, double *val, krill_mat **out)
{
    krill_status st = KRILL_OK;
    krill_mat *a = NULL;
    krill_csr host;
    memset(&host, 0, sizeof host);
    KRILL_REQUIRE(out != NULL, WHO ": mat is NULL");
    *out = NULL;
    KRILL_REQUIRE(ctx != NULL, WHO ": ctx is NULL");
    KRILL_REQUIRE(n_rows >= 0 && n_rows < INT32_MAX, WHO ": n_rows = %lld is outside "
                  "[0, 2^31 - 1)", (long long)n_rows);
    KRILL_REQUIRE(n_cols >= 0 && n_cols < INT32_MAX, WHO ": n_cols = %lld is outside "
                  "[0, 2^31 - 1)", (long long)n_cols);
    KRILL_REQUIRE(nnz >= 0, WHO ": nnz = %lld < 0", (long long)nnz);
    KRILL_REQUIRE(index_bytes == 4 || index_bytes == 8, WHO ": index_bytes = %d: row_ptr holds "
                  "int32_t (4) or int64_t (8) offsets", index_bytes);
    KRILL_REQUIRE(index_bytes == 8 || nnz <= INT32_MAX, WHO ": nnz = %lld needs int64_t offsets "
                  "(index_bytes 8)", (long long)nnz);
    KRILL_REQUIRE(row_ptr != NULL, WHO ": row_ptr is NULL");
    KRILL_REQUIRE(nnz == 0 || (col != NULL && val != NULL), WHO ": %s is NULL with nnz = %lld",
                  col ? "val" : "col", (long long)nnz);
    if (!krill_on_gpu(ctx)) {
        st = krill_error(KRILL_ERR_UNSUPPORTED, WHO ": the context is a CPU one (%s): the arrays "
                         "must be in a GPU context's device memory (host arrays: "
                         "krill_mat_create)", krill_ctx_describe(ctx));
        goto cleanup;
    }
#ifdef KRILL_HAVE_CUDA
    KRILL_TRY(krill_mem_check_pointer(ctx, row_ptr, WHO ": row_ptr"));
    KRILL_TRY(krill_mem_check_pointer(ctx, col, WHO ": col"));
    KRILL_TRY(krill_mem_check_pointer(ctx, val, WHO ": val"));
    host.n_rows = (int32_t)n_rows;
    host.n_cols = (int32_t)n_cols;
    host.nnz = nnz;
    KRILL_ALLOC(host.row_ptr, n_rows + 1);
    KRILL_TRY(download_offsets(ctx, row_ptr, index_bytes, n_rows, host.row_ptr));
    KRILL_TRY(check_offsets(host.row_ptr, n_rows, nnz));
    KRILL_TRY(krill_csr_cuda_check(ctx, WHO, n_rows, n_cols, nnz, row_ptr, index_bytes == 8,
                                   host.row_ptr, col, val));
    KRILL_CALLOC(a, 1);
    a->ctx = ctx;
    a->ops = &krill_csr_cuda_ops;
    a->n_rows = n_rows;
    a->n_cols = n_cols;
    a->nnz = nnz;
    strcpy(a->name, "csr");
    a->device_row_ptr = row_ptr;
    a->device_wide = index_bytes == 8;
    a->device_col = col;
    a->device_val = val;
    KRILL_TRY(krill_csr_cuda_wrap(ctx, &host, row_ptr, index_bytes == 8, col, val, &a->impl));
    *out = a;
    a = NULL;
#endif
cleanup:
    krill_free(host.row_ptr);
    krill_mat_destroy(&a);
    return st;
}
