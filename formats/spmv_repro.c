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

/* Passes 2 and 3 of a row the fast path (its state f) left undecided: the statistics,
 * which decide it when f's third level was summed exactly, else the exact accumulation. */
static double row_exact(krill_row_visit_fn visit, const void *impl, int64_t row,
                        const double *x, int64_t *acc, const krill_oz_fast *f)
{
    krill_oz_row r;
    krill_row_sink sink;
    double s;
    krill_oz_row_init(&r);
    sink.fast = NULL;
    sink.row = &r;
    sink.acc = NULL;
    sink.n = 0;
    visit(impl, row, x, &sink);                 /* pass 2: max, lowest bit, Inf/NaN, count */
    if (krill_oz_fast_exact(f, &r, &s)) return s;   /* lo summed exactly: no pass 3 */
    sink.acc = acc;
    if (krill_oz_row_begin(&r, acc) > 0) visit(impl, row, x, &sink);   /* pass 3 */
    return krill_oz_row_end(&r, acc);
}

double krill_row_sum_repro(krill_row_visit_fn visit, const void *impl, int64_t row,
                           const double *x, int64_t *acc)
{
    krill_oz_fast f;
    krill_row_sink sink;
    double s;
    krill_oz_fast_init(&f);
    sink.fast = &f;
    sink.row = NULL;
    sink.acc = NULL;
    sink.n = 0;
    visit(impl, row, x, &sink);                 /* pass 1: the fast path */
    krill_row_sink_flush(&sink);
    return krill_oz_fast_end(&f, &s) ? s : row_exact(visit, impl, row, x, acc, &f);
}

/* Rows in groups of ROW_GROUP: each row's terms are gathered into its own sink (a full chunk
 * of a long row is summed as it fills), then the group's last chunks go through
 * krill_oz_fast_terms4: on AVX2 hosts the four rows as one 4-wide vector, each row's terms in
 * its own order, so the bits are those of one row at a time. The CPU's reproducible SpMV is
 * bound by the compensated sum's arithmetic (24-39 operations a term), not by memory:
 * 1.09-1.17x faster this way on the 2-core VM (doc/reproducible.md). */
#define ROW_GROUP 4

void krill_spmv_repro_rows(krill_row_visit_fn visit, const void *impl, int64_t n_rows,
                           int threads, double alpha, const double *x, double beta, double *y)
{
    const int64_t groups = (n_rows + ROW_GROUP - 1) / ROW_GROUP;
    int chunk = krill_rbp_cpu_chunk(n_rows, threads) / ROW_GROUP;
    if (chunk < 1) chunk = 1;
#pragma omp parallel for schedule(dynamic, chunk) num_threads(threads)
    for (int64_t g = 0; g < groups; g++) {
        int64_t acc[KRILL_OZ_MAX_DIAG];
        krill_oz_fast f[ROW_GROUP];
        krill_row_sink sink[ROW_GROUP];
        const double *a[ROW_GROUP], *xs[ROW_GROUP];
        int n[ROW_GROUP];
        const int64_t first = g * ROW_GROUP;
        const int rows = n_rows - first < ROW_GROUP ? (int)(n_rows - first) : ROW_GROUP;
        for (int l = 0; l < ROW_GROUP; l++) {
            krill_oz_fast_init(&f[l]);
            sink[l].fast = &f[l];
            sink[l].row = NULL;
            sink[l].acc = NULL;
            sink[l].n = 0;
            if (l < rows) visit(impl, first + l, x, &sink[l]);   /* pass 1's terms */
            a[l] = sink[l].a;
            xs[l] = sink[l].x;
            n[l] = sink[l].n;
        }
        krill_oz_fast_terms4(f, a, xs, n);
        for (int l = 0; l < rows; l++) {
            double s;
            if (!krill_oz_fast_end(&f[l], &s))
                s = row_exact(visit, impl, first + l, x, acc, &f[l]);
            y[first + l] = beta == 0.0 ? krill_oz_axpby(alpha, s, 0.0, 0.0)
                                       : krill_oz_axpby(alpha, s, beta, y[first + l]);
        }
    }
}
