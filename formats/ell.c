/* formats/ell.c - ELLPACK (ELL) and ELL-R on the CPU, and the host build both devices share.
 *
 * ELL stores every row with K = max row length entries, column-major (entry k of row i at
 * k*N + i), padded with value 0 and column -1 (formula (2) of the RBP paper: 8NK + 4NK
 * bytes). ELL-R adds the row lengths (formula (3): + 4N bytes), so a row's loop ends at its
 * own length instead of skipping padding up to K. The two differ by that one array, so they
 * share this file pair (one ops table each); see doc/decisions.md.
 *
 * y_i = alpha * sum_k a_ik x_col + beta * y_i, each row summed in CSR order with padding
 * skipped (never 0 * x_j, which would turn an Inf in x into NaN): the CPU result has the
 * same bits as krill_csr_spmv_ref. Traffic per SpMV: ELL reads 12 N K bytes of matrix
 * (padding included: that is ELL's cost), ELL-R 12 nnz + 4 N plus whatever of the padded
 * cache lines it touches, and both x (gathered) and y. */
#include <omp.h>
#include <string.h>

#include "formats/formats_impl.h"

/* Most entries N * K an ELL may hold; beyond it the padding alone is tens of GB. */
#define ELL_MAX_ENTRIES INT32_MAX

typedef struct ell_cpu {
    krill_ell_host e;
    int with_len;            /* ELL-R */
    int threads;
} ell_cpu;

void krill_ell_host_free(krill_ell_host *e)
{
    krill_free(e->col);
    krill_free(e->val);
    krill_free(e->len);
    memset(e, 0, sizeof *e);
}

krill_status krill_ell_host_shape(const krill_csr *a, krill_ell_host *e)
{
    krill_status st = KRILL_OK;
    int64_t k = 0, n = a->n_rows, entries;
    memset(e, 0, sizeof *e);
    for (int32_t i = 0; i < a->n_rows; i++)
        if (a->row_ptr[i + 1] - a->row_ptr[i] > k) k = a->row_ptr[i + 1] - a->row_ptr[i];
    entries = n * k;
    if (entries > ELL_MAX_ENTRIES) {
        st = krill_error(KRILL_ERR_UNSUPPORTED, "ell: %lld rows x K = %lld (the longest row) "
                         "= %lld entries, more than %d: the padding would dominate; use csr",
                         (long long)n, (long long)k, (long long)entries, ELL_MAX_ENTRIES);
        goto cleanup;
    }
    e->n_rows = n;
    e->n_cols = a->n_cols;
    e->nnz = a->nnz;
    e->k = k;
    KRILL_ALLOC(e->len, n);
    for (int32_t i = 0; i < a->n_rows; i++) e->len[i] = (int32_t)(a->row_ptr[i + 1] - a->row_ptr[i]);
cleanup:
    return st;
}

krill_status krill_ell_host_build(const krill_csr *a, int threads, krill_ell_host *e)
{
    krill_status st = KRILL_OK;
    int64_t entries, n = a->n_rows;
    KRILL_TRY(krill_ell_host_shape(a, e));
    entries = n * e->k;
    KRILL_ALLOC(e->col, entries);
    KRILL_ALLOC(e->val, entries);
    if (threads <= 0) threads = omp_get_max_threads();
    /* row i's K slots at [j * N + i]: its entries in CSR order, then padding; the rows in
     * parallel (each thread writes its own rows' slots, so the arrays are those of one) */
#pragma omp parallel for schedule(static) num_threads(threads) \
    if (entries >= KRILL_BUILD_PARALLEL_MIN)
    for (int64_t i = 0; i < n; i++) {
        const int64_t lo = a->row_ptr[i];
        for (int64_t j = 0; j < e->k; j++) {
            const int in_row = j < e->len[i];
            e->col[j * n + i] = in_row ? a->col[lo + j] : -1;
            e->val[j * n + i] = in_row ? a->val[lo + j] : 0.0;
        }
    }
cleanup:
    if (st != KRILL_OK) krill_ell_host_free(e);
    return st;
}

void krill_ell_host_scatter(krill_ell_host *e, const double *values)
{
    int64_t p = 0;
    for (int64_t i = 0; i < e->n_rows; i++)
        for (int64_t j = 0; j < e->len[i]; j++) e->val[j * e->n_rows + i] = values[p++];
}

/* Row i's entries are col/val[j * N + i] for j < len[i] (the padding lies after them), in
 * the CSR order of the build: row offsets from the lengths first, so the fill stays inside
 * the nnz entries allocated. */
krill_status krill_ell_host_to_csr(const krill_ell_host *e, krill_csr **csr)
{
    krill_status st = KRILL_OK;
    krill_csr *a = NULL;
    const int64_t n = e->n_rows;
    *csr = NULL;
    KRILL_TRY(krill_csr_create((int32_t)n, (int32_t)e->n_cols, e->nnz, &a));
    for (int64_t i = 0; i < n; i++) a->row_ptr[i + 1] = a->row_ptr[i] + e->len[i];
    if (a->row_ptr[n] != e->nnz) {
        st = krill_error(KRILL_ERR_INTERNAL, "ell: the row lengths add up to %lld entries, "
                         "the matrix has %lld", (long long)a->row_ptr[n], (long long)e->nnz);
        goto cleanup;
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0, p = a->row_ptr[i]; j < e->len[i]; j++, p++) {
            a->col[p] = e->col[j * n + i];
            a->val[p] = e->val[j * n + i];
        }
    *csr = a;
    a = NULL;
cleanup:
    krill_csr_destroy(&a);
    return st;
}

void krill_ell_stats(const krill_ell_host *e, int with_len, krill_format_stats *s)
{
    int64_t empty = 0;
    s->n_rows = e->n_rows;
    s->n_cols = e->n_cols;
    s->nnz = e->nnz;
    s->max_row_nnz = e->k;
    s->mean_row_nnz = e->n_rows ? (double)e->nnz / (double)e->n_rows : 0.0;
    for (int64_t i = 0; i < e->n_rows; i++) empty += e->len[i] == 0;
    s->empty_rows = empty;
    s->bytes = (size_t)(e->n_rows * e->k) * (sizeof(double) + sizeof(int32_t)) +
               (with_len ? (size_t)e->n_rows * sizeof(int32_t) : 0);
}

static void ell_destroy(krill_ctx *ctx, void *impl)
{
    ell_cpu *m = impl;
    (void)ctx;
    if (!m) return;
    krill_ell_host_free(&m->e);
    krill_free(m);
}

static krill_status ell_build_common(krill_ctx *ctx, const krill_csr *csr, const char *param,
                                     int with_len, void **impl)
{
    krill_status st = KRILL_OK;
    ell_cpu *m = NULL;
    KRILL_REQUIRE(param == NULL, "format '%s:%s': the format takes no parameter",
                  with_len ? "ellr" : "ell", param);
    KRILL_CALLOC(m, 1);
    m->with_len = with_len;
    m->threads = ctx->threads > 0 ? ctx->threads : 1;
    KRILL_TRY(krill_ell_host_build(csr, ctx->threads, &m->e));
    *impl = m;
    m = NULL;
cleanup:
    ell_destroy(ctx, m);
    return st;
}

static krill_status ell_build(krill_ctx *ctx, const krill_csr *csr, const char *param, void **impl)
{
    return ell_build_common(ctx, csr, param, 0, impl);
}

static krill_status ellr_build(krill_ctx *ctx, const krill_csr *csr, const char *param,
                               void **impl)
{
    return ell_build_common(ctx, csr, param, 1, impl);
}

static krill_status ell_spmv(krill_ctx *ctx, const void *impl, double alpha, const double *x,
                             double beta, double *y)
{
    const ell_cpu *m = impl;
    const krill_ell_host *e = &m->e;
    const int64_t n = e->n_rows;
    (void)ctx;
#pragma omp parallel for schedule(static) num_threads(m->threads)
    for (int64_t i = 0; i < n; i++) {
        const int64_t stop = m->with_len ? e->len[i] : e->k;
        double s = 0.0;
        for (int64_t j = 0; j < stop; j++) {
            const int32_t c = e->col[j * n + i];
            if (c >= 0) s += e->val[j * n + i] * x[c];   /* ELL: padding skipped */
        }
        y[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y[i];
    }
    return KRILL_OK;
}

/* the row visitor of spmv_repro: row i's entries up to K (ELL, padding skipped) or its
 * length (ELL-R) */
static void ell_row_terms(const void *impl, int64_t i, const double *x, krill_row_sink *sink)
{
    const ell_cpu *m = impl;
    const krill_ell_host *e = &m->e;
    const int64_t stop = m->with_len ? e->len[i] : e->k;
    for (int64_t j = 0; j < stop; j++) {
        const int32_t c = e->col[j * e->n_rows + i];
        if (c >= 0) krill_row_sink_term(sink, e->val[j * e->n_rows + i], x[c]);
    }
}

static krill_status ell_spmv_repro(krill_ctx *ctx, const void *impl, double alpha,
                                   const double *x, double beta, double *y)
{
    const ell_cpu *m = impl;
    (void)ctx;
    krill_spmv_repro_rows(ell_row_terms, m, m->e.n_rows, m->threads, alpha, x, beta, y);
    return KRILL_OK;
}

static krill_status ell_update_values(krill_ctx *ctx, void *impl, const double *values)
{
    (void)ctx;
    krill_ell_host_scatter(&((ell_cpu *)impl)->e, values);
    return KRILL_OK;
}

static krill_status ell_diagonal(krill_ctx *ctx, const void *impl, double *d)
{
    const krill_ell_host *e = &((const ell_cpu *)impl)->e;
    (void)ctx;
    for (int64_t i = 0; i < e->n_rows; i++) {
        d[i] = 0.0;
        for (int64_t j = 0; j < e->len[i]; j++)
            if (e->col[j * e->n_rows + i] == i) d[i] = e->val[j * e->n_rows + i];
    }
    return KRILL_OK;
}

static krill_status ell_to_csr(krill_ctx *ctx, const void *impl, krill_csr **csr)
{
    (void)ctx;
    return krill_ell_host_to_csr(&((const ell_cpu *)impl)->e, csr);
}

static void ell_stats(const void *impl, krill_format_stats *s)
{
    const ell_cpu *m = impl;
    krill_ell_stats(&m->e, m->with_len, s);
    strcpy(s->variant, m->with_len ? "row-lengths" : "padded");
}

const krill_format_ops krill_ell_cpu_ops = {
    .name = "ell",
    .build = ell_build,
    .spmv = ell_spmv,
    .spmv_repro = ell_spmv_repro,
    .update_values = ell_update_values,
    .diagonal = ell_diagonal,
    .to_csr = ell_to_csr,
    .stats = ell_stats,
    .destroy = ell_destroy,
};

const krill_format_ops krill_ellr_cpu_ops = {
    .name = "ellr",
    .build = ellr_build,
    .spmv = ell_spmv,
    .spmv_repro = ell_spmv_repro,
    .update_values = ell_update_values,
    .diagonal = ell_diagonal,
    .to_csr = ell_to_csr,
    .stats = ell_stats,
    .destroy = ell_destroy,
};
