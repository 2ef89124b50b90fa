/* formats/rbp_csr.c - RBP-CSR on the CPU: the "rbp-csr" table for CPU contexts.
 *
 * Storage: the arrays of Algorithm 3 (krill_rbp_host, formats/rbp.c), formula (4) of the
 * RBP paper: 12 (N + 1) + 4 N_col + 8 N_val + 12 N_non bytes.
 *
 * SpMV (Algorithm 4, one row per iteration of an OpenMP loop): a run (c, d) with values
 * v_c .. v_d adds v_j x_j for j = c .. d, the columns counted up from c instead of read;
 * the isolated entries are added as in CSR. Algorithm 4 adds all runs first, then the
 * isolated entries; here each isolated entry is added just before the first run that lies
 * to its right, so a row is summed in CSR column order: y has the bits of
 * krill_csr_spmv_ref (one comparison per run and entry pays for it). Traffic per SpMV:
 * the bytes above, x (gathered) and y (written; read when beta != 0). */
#include <string.h>

#include "formats/formats_impl.h"

typedef struct rbp_csr_cpu {
    krill_rbp_host h;
    int threads;
    int chunk;                /* rows per dynamic OpenMP task (krill_rbp_cpu_chunk) */
    krill_format_stats stats;
} rbp_csr_cpu;

static void rbp_csr_destroy(krill_ctx *ctx, void *impl)
{
    rbp_csr_cpu *m = impl;
    (void)ctx;
    if (!m) return;
    krill_rbp_host_free(&m->h);
    krill_free(m);
}

static krill_status rbp_csr_build(krill_ctx *ctx, const krill_csr *csr, const char *param,
                                  void **impl)
{
    krill_status st = KRILL_OK;
    rbp_csr_cpu *m = NULL;
    KRILL_REQUIRE(param == NULL || strcmp(param, "auto") == 0,
                  "format 'rbp-csr:%s': the CPU rbp-csr has no variant '%s'", param, param);
    KRILL_CALLOC(m, 1);
    m->threads = ctx->threads > 0 ? ctx->threads : 1;
    m->chunk = krill_rbp_cpu_chunk(csr->n_rows, m->threads);
    KRILL_TRY(krill_rbp_host_build(csr, "rbp-csr", ctx->threads, &m->h));
    krill_csr_row_stats(csr, &m->stats);
    krill_csr_run_stats(csr, ctx->threads, &m->stats);
    m->stats.bytes = krill_rbp_csr_bytes(&m->h);
    strcpy(m->stats.variant, "row-merged");
    *impl = m;
    m = NULL;
cleanup:
    rbp_csr_destroy(ctx, m);
    return st;
}

static krill_status rbp_csr_spmv(krill_ctx *ctx, const void *impl, double alpha,
                                 const double *x, double beta, double *y)
{
    const krill_rbp_host *h = &((const rbp_csr_cpu *)impl)->h;
    (void)ctx;
#pragma omp parallel for schedule(dynamic, ((const rbp_csr_cpu *)impl)->chunk) \
    num_threads(((const rbp_csr_cpu *)impl)->threads)
    for (int64_t i = 0; i < h->n_rows; i++) {
        int64_t q = h->row_ptr[i], v = h->val_ptr[i];
        const int64_t q_end = h->row_ptr[i + 1];
        double s = 0.0;
        for (int64_t c = h->col_ptr[i]; c < h->col_ptr[i + 1]; c += 2) {
            const int32_t first = h->comp_col[c], last = h->comp_col[c + 1];
            for (; q < q_end && h->non_col[q] < first; q++) s += h->non_val[q] * x[h->non_col[q]];
            for (int64_t j = first; j <= last; j++) s += h->comp_val[v++] * x[j];
        }
        for (; q < q_end; q++) s += h->non_val[q] * x[h->non_col[q]];
        y[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y[i];
    }
    return KRILL_OK;
}

/* the row visitor of spmv_repro: row i's runs (columns first .. last counted up), then its
 * isolated entries */
static void rbp_csr_row_terms(const void *impl, int64_t i, const double *x,
                              krill_row_sink *sink)
{
    const krill_rbp_host *h = &((const rbp_csr_cpu *)impl)->h;
    int64_t v = h->val_ptr[i];
    for (int64_t c = h->col_ptr[i]; c < h->col_ptr[i + 1]; c += 2) {   /* a run: x contiguous */
        const int64_t len = (int64_t)h->comp_col[c + 1] - h->comp_col[c] + 1;
        krill_row_sink_span(sink, h->comp_val + v, NULL, len, x + h->comp_col[c]);
        v += len;
    }
    krill_row_sink_span(sink, h->non_val + h->row_ptr[i], h->non_col + h->row_ptr[i],
                        h->row_ptr[i + 1] - h->row_ptr[i], x);
}

static krill_status rbp_csr_spmv_repro(krill_ctx *ctx, const void *impl, double alpha,
                                       const double *x, double beta, double *y)
{
    const rbp_csr_cpu *m = impl;
    (void)ctx;
    krill_spmv_repro_rows(rbp_csr_row_terms, m, m->h.n_rows, m->threads, alpha, x, beta, y);
    return KRILL_OK;
}

static krill_status rbp_csr_update_values(krill_ctx *ctx, void *impl, const double *values)
{
    krill_rbp_host *h = &((rbp_csr_cpu *)impl)->h;
    (void)ctx;
    krill_rbp_host_scatter(h, values, h->comp_val, h->non_val);
    return KRILL_OK;
}

/* a_ii lies in the run with first <= i <= last, or among the isolated entries */
static krill_status rbp_csr_diagonal(krill_ctx *ctx, const void *impl, double *d)
{
    const krill_rbp_host *h = &((const rbp_csr_cpu *)impl)->h;
#pragma omp parallel for schedule(static) num_threads(ctx->threads > 0 ? ctx->threads : 1)
    for (int64_t i = 0; i < h->n_rows; i++) {
        double di = 0.0;
        int64_t v = h->val_ptr[i];
        for (int64_t c = h->col_ptr[i]; c < h->col_ptr[i + 1]; c += 2) {
            const int32_t first = h->comp_col[c], last = h->comp_col[c + 1];
            if (first <= i && i <= last) di = h->comp_val[v + (i - first)];
            v += last - first + 1;
        }
        for (int64_t q = h->row_ptr[i]; q < h->row_ptr[i + 1]; q++)
            if (h->non_col[q] == i) di = h->non_val[q];
        d[i] = di;
    }
    return KRILL_OK;
}

static krill_status rbp_csr_to_csr(krill_ctx *ctx, const void *impl, krill_csr **csr)
{
    (void)ctx;
    return krill_rbp_host_to_csr(&((const rbp_csr_cpu *)impl)->h, csr);
}

static void rbp_csr_stats(const void *impl, krill_format_stats *s)
{
    *s = ((const rbp_csr_cpu *)impl)->stats;
}

const krill_format_ops krill_rbp_csr_cpu_ops = {
    .name = "rbp-csr",
    .build = rbp_csr_build,
    .spmv = rbp_csr_spmv,
    .spmv_repro = rbp_csr_spmv_repro,
    .update_values = rbp_csr_update_values,
    .diagonal = rbp_csr_diagonal,
    .to_csr = rbp_csr_to_csr,
    .stats = rbp_csr_stats,
    .destroy = rbp_csr_destroy,
};
