/* formats/spmv_repro.c - the CPU half of every format's reproducible SpMV (spmv_repro):
 * y_i = alpha s_i + beta y_i with s_i the correctly rounded exact sum of row i's products.
 *
 * Each format supplies a row visitor (formats_impl.h) that walks the stored entries of one
 * row; this file runs the passes of ozaki/ozaki_row.h over it: the fast path, and for a row
 * it leaves undecided the exact path (statistics, which decide it when the fast path's third
 * level was summed exactly, krill_oz_fast_exact; else the exact accumulation into
 * per-diagonal int64 sums, one rounding). s_i is a function of the multiset of the row's
 * products alone, so csr, ell, rbp-* and segscan, which visit the same entries in different
 * orders, give the same bits, on any thread count. The scratch (KRILL_OZ_MAX_DIAG int64,
 * 4.2 KB) lives on each thread's stack: no allocation. */
#include "formats/formats_impl.h"
#include "ozaki/ozaki_fast_host.h"

void krill_row_sink_flush(krill_row_sink *sink)
{
    krill_oz_fast_terms(sink->fast, sink->a, sink->x, sink->n);
    sink->n = 0;
}

double krill_row_sum_repro(krill_row_visit_fn visit, const void *impl, int64_t row,
                           const double *x, int64_t *acc)
{
    krill_oz_fast f;
    krill_oz_row r;
    krill_row_sink sink;
    double s;
    krill_oz_fast_init(&f);
    sink.fast = &f;
    sink.row = NULL;
    sink.acc = NULL;
    sink.n = 0;
    visit(impl, row, x, &sink);                 /* pass 1: the fast path */
    krill_row_sink_flush(&sink);
    if (krill_oz_fast_end(&f, &s)) return s;
    krill_oz_row_init(&r);
    sink.fast = NULL;
    sink.row = &r;
    visit(impl, row, x, &sink);                 /* pass 2: max, lowest bit, Inf/NaN, count */
    if (krill_oz_fast_exact(&f, &r, &s)) return s;   /* lo summed exactly: no pass 3 */
    sink.acc = acc;
    if (krill_oz_row_begin(&r, acc) > 0) visit(impl, row, x, &sink);   /* pass 3 */
    return krill_oz_row_end(&r, acc);
}

void krill_spmv_repro_rows(krill_row_visit_fn visit, const void *impl, int64_t n_rows,
                           int threads, double alpha, const double *x, double beta, double *y)
{
    const int chunk = krill_rbp_cpu_chunk(n_rows, threads);
#pragma omp parallel for schedule(dynamic, chunk) num_threads(threads)
    for (int64_t i = 0; i < n_rows; i++) {
        int64_t acc[KRILL_OZ_MAX_DIAG];
        const double s = krill_row_sum_repro(visit, impl, i, x, acc);
        y[i] = beta == 0.0 ? krill_oz_axpby(alpha, s, 0.0, 0.0)
                           : krill_oz_axpby(alpha, s, beta, y[i]);
    }
}
