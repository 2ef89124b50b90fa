/* formats/csr.c - CSR on the CPU: y = alpha*A*x + beta*y with OpenMP.
 *
 * Rows are split at build time into KRILL_CSR_PARTS_PER_THREAD contiguous blocks per thread,
 * each holding about nnz/blocks entries (balanced by nonzeros, not rows: a matrix with a few
 * long rows still spreads evenly), and the threads take blocks dynamically: a thread slowed
 * by a neighbour on its core (shared or oversubscribed hosts) hands its remaining blocks to
 * the others instead of holding up the whole SpMV. Each row is summed by one thread in
 * column order, so y has the same bits for any thread count and schedule. Traffic per SpMV:
 * the CSR arrays (8 (n+1) + 12 nnz bytes), x (gathered, >= 8 n bytes) and y (8 n written,
 * + 8 n read when beta != 0). */
#include <omp.h>
#include <string.h>

#include "formats/formats_impl.h"

/* Most row blocks a CPU CSR uses; spmv_dot keeps their partial sums on the stack. */
#define KRILL_CSR_MAX_PARTS 1024
/* Row blocks per thread: 4 keeps each block large (nnz / (4 threads) entries: the dynamic
 * hand-out costs one atomic per block) while letting a late thread's work be taken over. */
#define KRILL_CSR_PARTS_PER_THREAD 4

typedef struct csr_cpu {
    krill_csr a;             /* own copy of the arrays */
    int threads;             /* OpenMP threads of the context */
    int parts;               /* nnz-balanced row blocks, taken dynamically by the threads */
    int32_t *part_row;       /* parts + 1 row boundaries */
    krill_format_stats stats;
} csr_cpu;

void krill_csr_row_stats(const krill_csr *a, krill_format_stats *s)
{
    s->n_rows = a->n_rows;
    s->n_cols = a->n_cols;
    s->nnz = a->nnz;
    s->max_row_nnz = 0;
    s->empty_rows = 0;
    for (int32_t i = 0; i < a->n_rows; i++) {
        int64_t len = a->row_ptr[i + 1] - a->row_ptr[i];
        if (len > s->max_row_nnz) s->max_row_nnz = len;
        if (len == 0) s->empty_rows++;
    }
    s->mean_row_nnz = a->n_rows ? (double)a->nnz / a->n_rows : 0.0;
}

/* Lanes per row of the GPU row kernels (csr, rbp-csr): about 3 entries per lane keeps a few
 * independent loads in flight per lane while few lanes idle at the ends of rows and the
 * shuffle tree stays short; with 1-3 entries per row one thread per row reads 32
 * neighbouring short rows per step, a few cache lines that the next steps re-read from L1.
 * Measured on an H100 (CUDA 13.0, bench_spmv, every variant forced): poisson3d:160 and
 * convdiff3d:128 (mean 7) ran fastest with vector:2, in 0.74x the time of vector:8;
 * elasticity3d:100,40,40 (mean about 76), band101 and rand100 (mean 100-101) fastest with
 * 16 or 32 lanes (within 5%); band1, band3 and rand1 (mean 1-3) with one thread per row.
 * A small matrix cannot fill the GPU that way: while fewer than GPU_FILL_THREADS threads
 * would run and rows are longer than the lanes, the lanes double (a quarter of an H100's
 * 132 x 2048 resident threads; bcsstk13, 2,003 rows of mean 42, and bcsstk15, 3,948 rows
 * of mean 30, ran in 0.81x and 0.74x the time of the mean rule's 16 and 8 lanes with 32). */
#define GPU_ENTRIES_PER_LANE 3.0
#define GPU_FILL_THREADS 65536
int krill_gpu_lanes_per_row(double mean_row_nnz, int64_t n_rows, int min_lanes)
{
    int lanes = min_lanes;
    /* the power of two nearest mean / 3 on a log scale: mean >= 3 sqrt(2) L to double L */
    while (lanes < 32 && mean_row_nnz >= GPU_ENTRIES_PER_LANE * 1.4142135623730951 * lanes)
        lanes *= 2;
    while (lanes < 32 && lanes < mean_row_nnz && n_rows > 0 &&
           n_rows * lanes < GPU_FILL_THREADS)
        lanes *= 2;
    return lanes;
}

/* Runs (Algorithm 3 of the RBP paper): within each row, a maximal stretch of two or more
 * consecutive columns is one run, stored as 2 column indices and all its values; every
 * other entry is isolated. One pass over the column indices. */
void krill_csr_run_stats(const krill_csr *a, int threads, krill_format_stats *s)
{
    int64_t n_val = 0, n_col = 0, n_non = 0, kv = 0, kc = 0;   /* integer sums: any order */
    if (threads <= 0) threads = omp_get_max_threads();
#pragma omp parallel for schedule(static) reduction(+ : n_val, n_col, n_non) \
    reduction(max : kv, kc) num_threads(threads) if (a->nnz >= KRILL_BUILD_PARALLEL_MIN)
    for (int32_t i = 0; i < a->n_rows; i++) {
        int64_t row_val, row_col, isolated;
        krill_csr_row_runs(a, i, &row_val, &row_col, &isolated);
        n_val += row_val;
        n_col += row_col;
        n_non += isolated;
        if (row_val > kv) kv = row_val;
        if (row_col > kc) kc = row_col;
    }
    s->n_val = n_val;
    s->n_col = n_col;
    s->n_non = n_non;
    s->kv = kv;
    s->kc = kc;
}

static void csr_destroy(krill_ctx *ctx, void *impl)
{
    csr_cpu *m = impl;
    (void)ctx;
    if (!m) return;
    krill_free(m->a.row_ptr);
    krill_free(m->a.col);
    krill_free(m->a.val);
    krill_free(m->part_row);
    krill_free(m);
}

/* block p starts at the first row whose offset reaches p*nnz/parts (rows never split) */
static void balance(csr_cpu *m)
{
    const krill_csr *a = &m->a;
    int32_t row = 0;
    m->part_row[0] = 0;
    for (int p = 1; p < m->parts; p++) {
        int64_t target = a->nnz / m->parts * p + a->nnz % m->parts * p / m->parts;
        while (row < a->n_rows && a->row_ptr[row] < target) row++;
        m->part_row[p] = row;
    }
    m->part_row[m->parts] = a->n_rows;
}

static krill_status csr_build(krill_ctx *ctx, const krill_csr *csr, const char *param, void **impl)
{
    krill_status st = KRILL_OK;
    csr_cpu *m = NULL;
    KRILL_REQUIRE(param == NULL || strcmp(param, "auto") == 0,
                  "format 'csr:%s': the CPU CSR has no variant '%s'", param, param);
    KRILL_CALLOC(m, 1);
    m->a.n_rows = csr->n_rows;
    m->a.n_cols = csr->n_cols;
    m->a.nnz = csr->nnz;
    KRILL_ALLOC(m->a.row_ptr, (size_t)csr->n_rows + 1);
    KRILL_ALLOC(m->a.col, csr->nnz);
    KRILL_ALLOC(m->a.val, csr->nnz);
    memcpy(m->a.row_ptr, csr->row_ptr, ((size_t)csr->n_rows + 1) * sizeof(int64_t));
    m->threads = ctx->threads < 1 ? 1 : ctx->threads;
    m->parts = m->threads == 1 ? 1 : m->threads * KRILL_CSR_PARTS_PER_THREAD;
    if (m->parts > KRILL_CSR_MAX_PARTS) m->parts = KRILL_CSR_MAX_PARTS;
    KRILL_ALLOC(m->part_row, (size_t)m->parts + 1);
    balance(m);
    /* the columns and values copied by the SpMV's blocks, in parallel: the copy is the
     * build's whole cost (12 bytes an entry read and written, and the new pages' first
     * touch, which one thread alone took at about 2.4 GB/s) */
#pragma omp parallel for schedule(static) num_threads(m->threads) \
    if (csr->nnz >= KRILL_BUILD_PARALLEL_MIN)
    for (int part = 0; part < m->parts; part++) {
        const int64_t lo = csr->row_ptr[m->part_row[part]];
        const int64_t hi = csr->row_ptr[m->part_row[part + 1]];
        if (hi > lo) {   /* (an empty matrix's arrays may be NULL) */
            memcpy(m->a.col + lo, csr->col + lo, (size_t)(hi - lo) * sizeof(int32_t));
            memcpy(m->a.val + lo, csr->val + lo, (size_t)(hi - lo) * sizeof(double));
        }
    }
    krill_csr_row_stats(csr, &m->stats);
    m->stats.bytes = ((size_t)csr->n_rows + 1) * sizeof(int64_t) +
                     (size_t)csr->nnz * (sizeof(int32_t) + sizeof(double));
    strcpy(m->stats.variant, m->parts > 1 ? "omp-nnz-dynamic" : "serial");
    *impl = m;
    m = NULL;
cleanup:
    csr_destroy(ctx, m);
    return st;
}

/* rows [lo, hi) of y = alpha*A*x + beta*y; returns sum x_i*y_i over them when want_dot */
static double spmv_rows(const krill_csr *a, int32_t lo, int32_t hi, double alpha,
                        const double *x, double beta, double *y, int want_dot)
{
    const int64_t *rp = a->row_ptr;
    const int32_t *col = a->col;
    const double *val = a->val;
    double dot = 0.0;
    for (int32_t i = lo; i < hi; i++) {
        double s = 0.0;
        for (int64_t p = rp[i]; p < rp[i + 1]; p++) s += val[p] * x[col[p]];
        double yi = beta == 0.0 ? alpha * s : alpha * s + beta * y[i];
        y[i] = yi;
        if (want_dot) dot += x[i] * yi;
    }
    return dot;
}

static krill_status csr_spmv(krill_ctx *ctx, const void *impl, double alpha, const double *x,
                             double beta, double *y)
{
    const csr_cpu *m = impl;
    (void)ctx;
#pragma omp parallel for schedule(dynamic, 1) num_threads(m->threads)
    for (int p = 0; p < m->parts; p++)
        spmv_rows(&m->a, m->part_row[p], m->part_row[p + 1], alpha, x, beta, y, 0);
    return KRILL_OK;
}

/* y = A x and x'y; per-block partial dots added in block order (the same bits for a given
 * thread count, whichever thread ran which block). */
static krill_status csr_spmv_dot(krill_ctx *ctx, const void *impl, const double *x, double *y,
                                 double *xy)
{
    const csr_cpu *m = impl;
    double partial[KRILL_CSR_MAX_PARTS];
    (void)ctx;
#pragma omp parallel for schedule(dynamic, 1) num_threads(m->threads)
    for (int p = 0; p < m->parts; p++)
        partial[p] = spmv_rows(&m->a, m->part_row[p], m->part_row[p + 1], 1.0, x, 0.0, y, 1);
    double sum = 0.0;
    for (int p = 0; p < m->parts; p++) sum += partial[p];
    *xy = sum;
    return KRILL_OK;
}

/* the row visitor of spmv_repro: row i's entries in column order */
static void csr_row_terms(const void *impl, int64_t i, const double *x, krill_row_sink *sink)
{
    const krill_csr *a = &((const csr_cpu *)impl)->a;
    const int64_t p = a->row_ptr[i];
    krill_row_sink_span(sink, a->val + p, a->col + p, a->row_ptr[i + 1] - p, x);
}

static krill_status csr_spmv_repro(krill_ctx *ctx, const void *impl, double alpha,
                                   const double *x, double beta, double *y)
{
    const csr_cpu *m = impl;
    (void)ctx;
    krill_spmv_repro_rows(csr_row_terms, m, m->a.n_rows, m->threads, alpha, x, beta, y);
    return KRILL_OK;
}

static krill_status csr_update_values(krill_ctx *ctx, void *impl, const double *values)
{
    csr_cpu *m = impl;
    (void)ctx;
    memcpy(m->a.val, values, (size_t)m->a.nnz * sizeof(double));
    return KRILL_OK;
}

static krill_status csr_diagonal(krill_ctx *ctx, const void *impl, double *d)
{
    const csr_cpu *m = impl;
    const krill_csr *a = &m->a;
#pragma omp parallel for schedule(static) num_threads(ctx->threads)
    for (int32_t i = 0; i < a->n_rows; i++) {
        double di = 0.0;
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
            if (a->col[p] == i) di = a->val[p];
        d[i] = di;
    }
    return KRILL_OK;
}

static krill_status csr_to_csr(krill_ctx *ctx, const void *impl, krill_csr **csr)
{
    (void)ctx;
    return krill_csr_copy(&((const csr_cpu *)impl)->a, csr);
}

static void csr_stats(const void *impl, krill_format_stats *s)
{
    *s = ((const csr_cpu *)impl)->stats;
}

const krill_format_ops krill_csr_cpu_ops = {
    .name = "csr",
    .build = csr_build,
    .spmv = csr_spmv,
    .spmv_repro = csr_spmv_repro,
    .spmv_dot = csr_spmv_dot,
    .update_values = csr_update_values,
    .diagonal = csr_diagonal,
    .to_csr = csr_to_csr,
    .stats = csr_stats,
    .destroy = csr_destroy,
};
