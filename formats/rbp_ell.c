/* formats/rbp_ell.c - RBP-ELL and RBP-ELL-R on the CPU, and the host build both devices
 * share (RBP paper, section 3.3 and Algorithm 5).
 *
 * The runs of the RBP decomposition (formats/rbp.c) go to a compressed ELL: a value matrix
 * of N x K_v (K_v = the most run values in a row) and a column matrix of N x K_c holding
 * each row's (first, last) pairs (K_c = the most pair entries in a row), both column-major
 * like ell, so that consecutive rows (GPU threads) read consecutive addresses. The isolated
 * entries go to a CSR part (RowPtr, ColumnsCSR, ValuesCSR). RBP-ELL-R adds each row's
 * count of run values, and its loops end there instead of at the padding.
 * Bytes: formula (5) 8 N K_v + 4 N K_c + 12 N_non + 4 (N + 1); (6) adds 4 N.
 * Padding: value 0 and the pair (0, 0). A run has first < last, so a pair with
 * first == last is padding (the paper's test in Algorithm 5, line 14), and the loops stop
 * there, before any x is read: 0 * x_j is never computed (it would turn an Inf in x into
 * a NaN). The lengths are rbp-ellr's; rbp-ell does not keep them.
 *
 * CPU SpMV: one row per loop iteration; the isolated entries are merged in before the run
 * to their right, so each row is summed in CSR column order and y has the bits of
 * krill_csr_spmv_ref. Traffic: the bytes above (the column-major layout makes a CPU thread
 * stride by N through them, as in ell), x gathered, y written (read when beta != 0). */
#include <omp.h>
#include <string.h>

#include "formats/formats_impl.h"

typedef struct rbp_ell_cpu {
    krill_rbp_ell_host e;
    int with_len;            /* RBP-ELL-R */
    int threads;
    int chunk;                /* rows per dynamic OpenMP task (krill_rbp_cpu_chunk) */
    krill_format_stats stats;
} rbp_ell_cpu;

void krill_rbp_ell_host_free(krill_rbp_ell_host *e)
{
    krill_free(e->col);
    krill_free(e->val);
    krill_free(e->len);
    krill_free(e->row_ptr);
    krill_free(e->non_col);
    krill_free(e->non_val);
    memset(e, 0, sizeof *e);
}

krill_status krill_rbp_ell_host_build(const krill_csr *a, const char *format, int threads,
                                      krill_rbp_ell_host *e)
{
    krill_status st = KRILL_OK;
    krill_rbp_host h = {0};
    krill_format_stats runs = {0};
    const int64_t n = a->n_rows;
    memset(e, 0, sizeof *e);
    runs.n_rows = n;
    krill_csr_run_stats(a, threads, &runs);
    KRILL_TRY(krill_rbp_fits(format, 1, &runs));   /* before anything of N * K_v is made */
    KRILL_TRY(krill_rbp_host_build(a, format, threads, &h));
    e->n_rows = n;
    e->n_cols = a->n_cols;
    e->nnz = a->nnz;
    e->kv = runs.kv;
    e->kc = runs.kc;
    e->n_non = h.n_non;
    KRILL_ALLOC(e->col, n * e->kc);
    KRILL_ALLOC(e->val, n * e->kv);
    KRILL_ALLOC(e->len, n);
    if (threads <= 0) threads = omp_get_max_threads();
    /* zeros first, then each row's runs at [c * N + i]: the rows in parallel, each thread
     * touching the pages of its own rows' slots first */
#pragma omp parallel for schedule(static) num_threads(threads) if (a->nnz >= KRILL_BUILD_PARALLEL_MIN)
    for (int64_t i = 0; i < n; i++) {
        for (int64_t c = 0; c < e->kc; c++) e->col[c * n + i] = 0;
        for (int64_t j = 0; j < e->kv; j++) e->val[j * n + i] = 0.0;
    }
#pragma omp parallel for schedule(static) num_threads(threads) if (a->nnz >= KRILL_BUILD_PARALLEL_MIN)
    for (int64_t i = 0; i < n; i++) {
        const int64_t c0 = h.col_ptr[i], v0 = h.val_ptr[i];
        for (int64_t c = 0; c < h.col_ptr[i + 1] - c0; c++) e->col[c * n + i] = h.comp_col[c0 + c];
        e->len[i] = h.val_ptr[i + 1] - h.val_ptr[i];
        for (int64_t j = 0; j < e->len[i]; j++) e->val[j * n + i] = h.comp_val[v0 + j];
    }
    e->row_ptr = h.row_ptr;   /* the CSR part is the decomposition's, as it is */
    e->non_col = h.non_col;
    e->non_val = h.non_val;
    h.row_ptr = h.non_col = NULL;
    h.non_val = NULL;
cleanup:
    krill_rbp_host_free(&h);
    if (st != KRILL_OK) krill_rbp_ell_host_free(e);
    return st;
}

void krill_rbp_ell_host_scatter(const krill_rbp_ell_host *e, const double *values, double *val,
                                double *non_val)
{
    const int64_t n = e->n_rows;
    int64_t p = 0;   /* position in the CSR order */
    for (int64_t i = 0; i < n; i++) {
        int64_t q = e->row_ptr[i], j = 0;
        const int64_t q_end = e->row_ptr[i + 1];
        for (int64_t c = 0; c < e->kc; c += 2) {
            const int32_t first = e->col[c * n + i], last = e->col[(c + 1) * n + i];
            if (first == last) break;   /* padding: the row's runs are done */
            for (; q < q_end && e->non_col[q] < first; q++) non_val[q] = values[p++];
            for (int64_t k = first; k <= last; k++) val[(j++) * n + i] = values[p++];
        }
        for (; q < q_end; q++) non_val[q] = values[p++];
    }
}

/* The inverse of the scatter. Row i's runs are its pairs up to the padding (first == last)
 * or K_c; its length, the runs' values plus its isolated entries, is counted first, so the
 * fill stays inside the nnz entries allocated. Each isolated entry goes just before the
 * first run to its right: the row in column order, the CSR order of the build. */
krill_status krill_rbp_ell_host_to_csr(const krill_rbp_ell_host *e, krill_csr **csr)
{
    krill_status st = KRILL_OK;
    krill_csr *a = NULL;
    const int64_t n = e->n_rows;
    *csr = NULL;
    KRILL_TRY(krill_csr_create((int32_t)n, (int32_t)e->n_cols, e->nnz, &a));
    for (int64_t i = 0; i < n; i++) {
        int64_t len = e->row_ptr[i + 1] - e->row_ptr[i];
        for (int64_t c = 0; c < e->kc; c += 2) {
            const int32_t first = e->col[c * n + i], last = e->col[(c + 1) * n + i];
            if (first == last) break;   /* padding: the row's runs are done */
            len += (int64_t)last - first + 1;
        }
        a->row_ptr[i + 1] = a->row_ptr[i] + len;
    }
    if (a->row_ptr[n] != e->nnz) {
        st = krill_error(KRILL_ERR_INTERNAL, "rbp-ell: runs and isolated entries add up to "
                         "%lld entries, the matrix has %lld", (long long)a->row_ptr[n],
                         (long long)e->nnz);
        goto cleanup;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t p = a->row_ptr[i], q = e->row_ptr[i], j = 0;
        const int64_t q_end = e->row_ptr[i + 1];
        for (int64_t c = 0; c < e->kc; c += 2) {
            const int32_t first = e->col[c * n + i], last = e->col[(c + 1) * n + i];
            if (first == last) break;
            for (; q < q_end && e->non_col[q] < first; q++, p++) {
                a->col[p] = e->non_col[q];
                a->val[p] = e->non_val[q];
            }
            for (int64_t k = first; k <= last; k++, p++) {
                a->col[p] = (int32_t)k;
                a->val[p] = e->val[(j++) * n + i];
            }
        }
        for (; q < q_end; q++, p++) {
            a->col[p] = e->non_col[q];
            a->val[p] = e->non_val[q];
        }
    }
    *csr = a;
    a = NULL;
cleanup:
    krill_csr_destroy(&a);
    return st;
}

size_t krill_rbp_ell_bytes(const krill_rbp_ell_host *e, int with_len)
{
    const size_t n = (size_t)e->n_rows;
    return n * (size_t)e->kv * sizeof(double) + n * (size_t)e->kc * sizeof(int32_t) +
           (size_t)e->n_non * (sizeof(int32_t) + sizeof(double)) + (n + 1) * sizeof(int32_t) +
           (with_len ? n * sizeof(int32_t) : 0);
}

static void rbp_ell_destroy(krill_ctx *ctx, void *impl)
{
    rbp_ell_cpu *m = impl;
    (void)ctx;
    if (!m) return;
    krill_rbp_ell_host_free(&m->e);
    krill_free(m);
}

static krill_status rbp_ell_build_common(krill_ctx *ctx, const krill_csr *csr, const char *param,
                                         int with_len, void **impl)
{
    krill_status st = KRILL_OK;
    rbp_ell_cpu *m = NULL;
    const char *name = with_len ? "rbp-ellr" : "rbp-ell";
    KRILL_REQUIRE(param == NULL, "format '%s:%s': the format takes no parameter", name, param);
    KRILL_CALLOC(m, 1);
    m->with_len = with_len;
    m->threads = ctx->threads > 0 ? ctx->threads : 1;
    m->chunk = krill_rbp_cpu_chunk(csr->n_rows, m->threads);
    KRILL_TRY(krill_rbp_ell_host_build(csr, name, ctx->threads, &m->e));
    if (!with_len) {         /* RBP-ELL stops at the padding and stores no lengths */
        krill_free(m->e.len);
        m->e.len = NULL;
    }
    krill_csr_row_stats(csr, &m->stats);
    krill_csr_run_stats(csr, ctx->threads, &m->stats);
    m->stats.bytes = krill_rbp_ell_bytes(&m->e, with_len);
    strcpy(m->stats.variant, with_len ? "row-lengths" : "padded");
    *impl = m;
    m = NULL;
cleanup:
    rbp_ell_destroy(ctx, m);
    return st;
}

static krill_status rbp_ell_build(krill_ctx *ctx, const krill_csr *csr, const char *param,
                                  void **impl)
{
    return rbp_ell_build_common(ctx, csr, param, 0, impl);
}

static krill_status rbp_ellr_build(krill_ctx *ctx, const krill_csr *csr, const char *param,
                                   void **impl)
{
    return rbp_ell_build_common(ctx, csr, param, 1, impl);
}

static krill_status rbp_ell_spmv(krill_ctx *ctx, const void *impl, double alpha,
                                 const double *x, double beta, double *y)
{
    const rbp_ell_cpu *m = impl;
    const krill_rbp_ell_host *e = &m->e;
    const int64_t n = e->n_rows;
    (void)ctx;
#pragma omp parallel for schedule(dynamic, m->chunk) num_threads(m->threads)
    for (int64_t i = 0; i < n; i++) {
        int64_t q = e->row_ptr[i], j = 0;
        const int64_t q_end = e->row_ptr[i + 1];
        double s = 0.0;
        for (int64_t c = 0; c < e->kc; c += 2) {
            if (m->with_len && j == e->len[i]) break;   /* RBP-ELL-R: the row's length */
            const int32_t first = e->col[c * n + i], last = e->col[(c + 1) * n + i];
            if (first == last) break;                   /* RBP-ELL: the padding */
            for (; q < q_end && e->non_col[q] < first; q++) s += e->non_val[q] * x[e->non_col[q]];
            for (int64_t k = first; k <= last; k++) s += e->val[(j++) * n + i] * x[k];
        }
        for (; q < q_end; q++) s += e->non_val[q] * x[e->non_col[q]];
        y[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y[i];
    }
    return KRILL_OK;
}

/* the row visitor of spmv_repro: row i's runs up to its padding pair (RBP-ELL) or its
 * length (RBP-ELL-R), then its isolated entries */
static void rbp_ell_row_terms(const void *impl, int64_t i, const double *x,
                              krill_row_sink *sink)
{
    const rbp_ell_cpu *m = impl;
    const krill_rbp_ell_host *e = &m->e;
    const int64_t n = e->n_rows;
    int64_t j = 0;
    for (int64_t c = 0; c < e->kc; c += 2) {
        if (m->with_len && j == e->len[i]) break;
        const int32_t first = e->col[c * n + i], last = e->col[(c + 1) * n + i];
        if (first == last) break;
        for (int64_t k = first; k <= last; k++)
            krill_row_sink_term(sink, e->val[(j++) * n + i], x[k]);
    }
    krill_row_sink_span(sink, e->non_val + e->row_ptr[i], e->non_col + e->row_ptr[i],
                        e->row_ptr[i + 1] - e->row_ptr[i], x);
}

static krill_status rbp_ell_spmv_repro(krill_ctx *ctx, const void *impl, double alpha,
                                       const double *x, double beta, double *y)
{
    const rbp_ell_cpu *m = impl;
    (void)ctx;
    krill_spmv_repro_rows(rbp_ell_row_terms, m, m->e.n_rows, m->threads, alpha, x, beta, y);
    return KRILL_OK;
}

static krill_status rbp_ell_update_values(krill_ctx *ctx, void *impl, const double *values)
{
    krill_rbp_ell_host *e = &((rbp_ell_cpu *)impl)->e;
    (void)ctx;
    krill_rbp_ell_host_scatter(e, values, e->val, e->non_val);
    return KRILL_OK;
}

static krill_status rbp_ell_diagonal(krill_ctx *ctx, const void *impl, double *d)
{
    const krill_rbp_ell_host *e = &((const rbp_ell_cpu *)impl)->e;
    const int64_t n = e->n_rows;
#pragma omp parallel for schedule(static) num_threads(ctx->threads > 0 ? ctx->threads : 1)
    for (int64_t i = 0; i < n; i++) {
        double di = 0.0;
        int64_t j = 0;
        for (int64_t c = 0; c < e->kc; c += 2) {
            const int32_t first = e->col[c * n + i], last = e->col[(c + 1) * n + i];
            if (first == last) break;
            if (first <= i && i <= last) di = e->val[(j + i - first) * n + i];
            j += last - first + 1;
        }
        for (int64_t q = e->row_ptr[i]; q < e->row_ptr[i + 1]; q++)
            if (e->non_col[q] == i) di = e->non_val[q];
        d[i] = di;
    }
    return KRILL_OK;
}

static krill_status rbp_ell_to_csr(krill_ctx *ctx, const void *impl, krill_csr **csr)
{
    (void)ctx;
    return krill_rbp_ell_host_to_csr(&((const rbp_ell_cpu *)impl)->e, csr);
}

static void rbp_ell_stats(const void *impl, krill_format_stats *s)
{
    *s = ((const rbp_ell_cpu *)impl)->stats;
}

const krill_format_ops krill_rbp_ell_cpu_ops = {
    .name = "rbp-ell",
    .build = rbp_ell_build,
    .spmv = rbp_ell_spmv,
    .spmv_repro = rbp_ell_spmv_repro,
    .update_values = rbp_ell_update_values,
    .diagonal = rbp_ell_diagonal,
    .to_csr = rbp_ell_to_csr,
    .stats = rbp_ell_stats,
    .destroy = rbp_ell_destroy,
};

const krill_format_ops krill_rbp_ellr_cpu_ops = {
    .name = "rbp-ellr",
    .build = rbp_ellr_build,
    .spmv = rbp_ell_spmv,
    .spmv_repro = rbp_ell_spmv_repro,
    .update_values = rbp_ell_update_values,
    .diagonal = rbp_ell_diagonal,
    .to_csr = rbp_ell_to_csr,
    .stats = rbp_ell_stats,
    .destroy = rbp_ell_destroy,
};
