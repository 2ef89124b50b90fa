/* ozaki/cpu.c - the CPU path of the reproducible reductions (OpenMP), for k columns V[:, j]
 * against w (a dot product is k = 1, V = x, w = y); ozaki.c runs the passes in order and
 * adds, on a context with a communicator, what the ranks must agree on between them.
 *
 *   pass 0  exact mode only (the fast path, ozaki_impl.h): per thread and column a
 *           compensated sum with its error bound (krill_oz_fast_add over the thread's rows,
 *           tile by tile so that w's tile stays in L1 across the columns), the threads' sums
 *           merged per column in whatever order they arrive (the bound holds for any merge
 *           tree). Unlike the GPU's, this pass does not gather pass 1's stats: the CPU path
 *           is bound by arithmetic, not by memory, so that would save undecided calls little
 *           and cost decided ones (by far the most) about 65% more (measured).
 *   pass 1  stats of every column and of w: per thread max |v| (as bits) and min lsb,
 *           combined by max / min (order-free).
 *   pass 2  each thread takes a contiguous chunk and, per tile of CPU_TILE rows, per column:
 *           - pair path (max(s_x, s_y) <= 16): the digits of V_ij and w_i from the chain of
 *             krill_oz_digit, the products added into T[p][q] (double; every partial sum of
 *             T[p][q] is an integer below 2^53, so exact), T flushed to int64 diagonal sums
 *             after each tile;
 *           - general path (more slices): the windowed digits of each element
 *             (krill_oz_accumulate), products added to int64 diagonal sums one by one.
 *           Thread sums are added (int64, exact, any order) and, with a communicator, the
 *           ranks' sums too (one int64 allreduce); then rounded once (krill_oz_round).
 * Memory traffic: pass 1 reads the k + 1 vectors, pass 2 reads them again (w from cache
 * per column within a tile): 2 (k + 1) vector reads; 1 (k + 1) with the stats given. In
 * exact mode (fast path on) pass 0 reads them once: 1 (k + 1) reads when it decides every
 * column, else 3 (k + 1), or 2 (k + 1) with the stats given.
 * Nothing is allocated: scratch lives on the stacks (at most 8 KB + 4 KB per thread). */
#include <omp.h>
#include <string.h>

#include "ozaki/ozaki_fast_host.h"
#include "ozaki/ozaki_impl.h"

#define CPU_PAIR_MAX 16                     /* slices per operand of the pair path */
#define CPU_PAIR_DIAG (2 * CPU_PAIR_MAX - 1)
#define CPU_TILE 1024                       /* rows per flush of the pair sums (w stays in L1) */
#define CPU_MAX_THREADS 1024

static int cpu_threads(const krill_ctx *ctx, int64_t n)
{
    krill_ozaki_tuning tuning;
    int t = ctx->threads;
    krill_ozaki_tuning_get(&tuning);
    if (n < tuning.cpu_min_n || t < 1) return 1;
    return t < CPU_MAX_THREADS ? t : CPU_MAX_THREADS;
}

/* rows [*lo, *hi) of thread tid of nt */
static void chunk(int64_t n, int tid, int nt, int64_t *lo, int64_t *hi)
{
    int64_t q = n / nt, r = n % nt;
    *lo = tid * q + (tid < r ? tid : r);
    *hi = *lo + q + (tid < r ? 1 : 0);
}

/* the vector v of the k columns and w (v == k) */
static const double *column(const double *V, int64_t ldv, int k, const double *w, int v)
{
    return v < k ? V + (int64_t)v * ldv : w;
}

void krill_ozaki_cpu_stats(krill_ctx *ctx, int64_t n, int k, const double *V, int64_t ldv,
                      const double *w, double *out)
{
    const int nv = k + (w != NULL);
    uint64_t amax[KRILL_OZ_KMAX + 1];
    int lsb[KRILL_OZ_KMAX + 1];
    for (int v = 0; v < nv; v++) {
        amax[v] = 0;
        lsb[v] = KRILL_OZ_LSB_NONE;
    }
#pragma omp parallel num_threads(cpu_threads(ctx, n))
    {
        int64_t lo, hi;
        chunk(n, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
        for (int v = 0; v < nv; v++) {
            const double *x = column(V, ldv, k, w, v);
            uint64_t a = 0;
            int l = KRILL_OZ_LSB_NONE;
            for (int64_t i = lo; i < hi; i++) krill_oz_stats_add(x[i], &a, &l);
#pragma omp critical(krill_ozaki_stats)
            {
                if (a > amax[v]) amax[v] = a;
                if (l < lsb[v]) lsb[v] = l;
            }
        }
    }
    for (int v = 0; v < nv; v++) {
        out[2 * v] = krill_oz_from_bits(amax[v]);
        out[2 * v + 1] = lsb[v];
    }
}

/* The fast path's sums of V[:, j]'w, per thread over its chunk, a tile of CPU_TILE rows at a
 * time: the guard is taken from the ranges of the column's and w's rows in the tile
 * (krill_oz_range_ok, as the GPU's fast kernels take it from a thread's few rows) instead of
 * term by term; w's range once a tile for every column. The ranges are stricter than the
 * guard (the least elements of the two need not meet), more so the more rows they span; a
 * sum they refuse takes the exact path, with the same bits. Why: on the 2-core VM (AMD EPYC,
 * AVX2 build) a dot's rows took 1.80 ns a term with the guard term by term, 0.90 without it
 * (the loop of ozaki_fast_avx2.c), and 1.39 with the two ranges a tile of 1024 rows; 64-row
 * tiles cost 1.88 (the lanes' merges and the calls per tile). doc/reproducible.md. */
void krill_ozaki_cpu_fast(krill_ctx *ctx, int64_t n, int k, const double *V, int64_t ldv,
                         const double *w, krill_oz_fast *sum)
{
    for (int j = 0; j < k; j++) krill_oz_fast_init(&sum[j]);
#pragma omp parallel num_threads(cpu_threads(ctx, n))
    {
        int64_t lo, hi;
        krill_oz_fast f[KRILL_OZ_KMAX];
        chunk(n, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
        for (int j = 0; j < k; j++) krill_oz_fast_init(&f[j]);
        for (int64_t t0 = lo; t0 < hi; t0 += CPU_TILE) {
            const int64_t t1 = hi - t0 < CPU_TILE ? hi : t0 + CPU_TILE;
            krill_oz_range rw;
            krill_oz_range_init(&rw);
            krill_oz_range_rows(&rw, w, t0, t1);
            for (int j = 0; j < k; j++) {
                const double *v = V + (int64_t)j * ldv;
                krill_oz_range rv;
                krill_oz_range_init(&rv);
                krill_oz_range_rows(&rv, v, t0, t1);
                f[j].ok = f[j].ok && krill_oz_range_ok(&rv, &rw);
                krill_oz_fast_rows_unguarded(&f[j], v, w, t0, t1);
            }
        }
#pragma omp critical(krill_ozaki_fast)
        for (int j = 0; j < k; j++) krill_oz_fast_merge(&sum[j], &f[j]);
    }
}

/* How a column is computed (COL_DONE: decided by the fast path). */
enum { COL_ZERO, COL_SPECIAL, COL_PAIR, COL_GENERAL, COL_DONE };

/* Pair path over rows [lo, hi) of x'y with a body of N slices (a constant after inlining:
 * the loops unroll and T stays in registers for small N): the chain digits of x_i and y_i
 * (zero past sx / sy), all N x N products into T[p][q] (double; every partial sum of a
 * T[p][q] is an integer below 2^53), then T into the int64 diagonal sums dl[p + q] for
 * p + q <= cut only (fast mode drops the other pairs here). Two rows per step for
 * instruction-level parallelism: the digit chain is a sequence of dependent operations. */
static inline __attribute__((always_inline)) void
pair_rows_n(const int N, const krill_oz_params *p, const double *x, const double *y,
            int64_t lo, int64_t hi, int64_t *dl)
{
    const int sx = p->sx, sy = p->sy, cut = p->cut;
    const double two_d = p->two_d;
    double t[CPU_PAIR_MAX][CPU_PAIR_MAX];
    int64_t i = lo;
    for (int a = 0; a < N; a++)
        for (int b = 0; b < N; b++) t[a][b] = 0.0;
    for (; i + 1 < hi; i += 2) {
        double dx0[CPU_PAIR_MAX], dy0[CPU_PAIR_MAX], dx1[CPU_PAIR_MAX], dy1[CPU_PAIR_MAX];
        double rx0 = x[i] * p->scx1 * p->scx2, ry0 = y[i] * p->scy1 * p->scy2;
        double rx1 = x[i + 1] * p->scx1 * p->scx2, ry1 = y[i + 1] * p->scy1 * p->scy2;
        for (int a = 0; a < N; a++) {
            dx0[a] = krill_oz_digit(&rx0, two_d);
            dx1[a] = krill_oz_digit(&rx1, two_d);
            dy0[a] = krill_oz_digit(&ry0, two_d);
            dy1[a] = krill_oz_digit(&ry1, two_d);
            if (a >= sx) dx0[a] = dx1[a] = 0.0;
            if (a >= sy) dy0[a] = dy1[a] = 0.0;
        }
        for (int a = 0; a < N; a++)
            for (int b = 0; b < N; b++) t[a][b] += dx0[a] * dy0[b] + dx1[a] * dy1[b];
    }
    if (i < hi) {
        double dx[CPU_PAIR_MAX], dy[CPU_PAIR_MAX];
        double rx = x[i] * p->scx1 * p->scx2, ry = y[i] * p->scy1 * p->scy2;
        for (int a = 0; a < N; a++) {
            dx[a] = a < sx ? krill_oz_digit(&rx, two_d) : 0.0;
            dy[a] = a < sy ? krill_oz_digit(&ry, two_d) : 0.0;
        }
        for (int a = 0; a < N; a++)
            for (int b = 0; b < N; b++) t[a][b] += dx[a] * dy[b];
    }
    for (int a = 0; a < N && a < sx; a++)
        for (int b = 0; b < N && b < sy && a + b <= cut; b++) dl[a + b] += (int64_t)t[a][b];
}

static void pair_rows(const krill_oz_params *p, const double *x, const double *y, int64_t lo,
                      int64_t hi, int64_t *dl)
{
    const int s = p->sx > p->sy ? p->sx : p->sy;
    if (s <= 1) pair_rows_n(1, p, x, y, lo, hi, dl);
    else if (s <= 2) pair_rows_n(2, p, x, y, lo, hi, dl);
    else if (s <= 3) pair_rows_n(3, p, x, y, lo, hi, dl);
    else if (s <= 4) pair_rows_n(4, p, x, y, lo, hi, dl);
    else if (s <= 6) pair_rows_n(6, p, x, y, lo, hi, dl);
    else if (s <= 8) pair_rows_n(8, p, x, y, lo, hi, dl);
    else if (s <= 12) pair_rows_n(12, p, x, y, lo, hi, dl);
    else pair_rows_n(CPU_PAIR_MAX, p, x, y, lo, hi, dl);
}

krill_status krill_ozaki_cpu_mdot(krill_ctx *ctx, int64_t n, int64_t n_all, int k,
                                  const double *V, int64_t ldv, const double *vstats,
                                  const double *w, const double *wstats, const int *done,
                                  double *results, int sqrt_mode)
{
    krill_status st = KRILL_OK;
    krill_ozaki_tuning tuning;
    const int fast = ctx->repro == KRILL_REPRO_OZAKI_FAST;
    const int slices = ctx->repro == KRILL_REPRO_OFF ? 0 : ctx->repro_slices;
    const int nt = cpu_threads(ctx, n);
    krill_oz_params p[KRILL_OZ_KMAX];
    int kind[KRILL_OZ_KMAX], flags[KRILL_OZ_KMAX];
    int64_t pair_sum[KRILL_OZ_KMAX][CPU_PAIR_DIAG];
    int64_t gen_sum[KRILL_OZ_MAX_DIAG];
    int tiled = 0;

    krill_ozaki_tuning_get(&tuning);
    for (int j = 0; j < k; j++) {
        flags[j] = 0;
        memset(pair_sum[j], 0, sizeof pair_sum[j]);
        if (done[j]) {
            kind[j] = COL_DONE;
            continue;
        }
        krill_oz_params_make(n_all, vstats + 2 * j, wstats, fast, slices, &p[j]);
        if (p[j].state == KRILL_OZ_ZERO) kind[j] = COL_ZERO;
        else if (p[j].state == KRILL_OZ_SPECIAL) kind[j] = COL_SPECIAL;
        else if (p[j].sx <= tuning.cpu_reg_slices && p[j].sy <= tuning.cpu_reg_slices)
            kind[j] = COL_PAIR;
        else kind[j] = COL_GENERAL;
        tiled |= kind[j] == COL_PAIR || kind[j] == COL_SPECIAL;
    }

    /* pair-path and special columns: one sweep, tile by tile */
    if (tiled) {
#pragma omp parallel num_threads(nt)
        {
            int64_t lo, hi;
            int64_t dl[KRILL_OZ_KMAX][CPU_PAIR_DIAG];
            int fl[KRILL_OZ_KMAX];
            chunk(n, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
            memset(dl, 0, sizeof dl);
            memset(fl, 0, sizeof fl);
            for (int64_t t0 = lo; t0 < hi; t0 += CPU_TILE) {
                const int64_t t1 = hi - t0 < CPU_TILE ? hi : t0 + CPU_TILE;
                for (int j = 0; j < k; j++) {
                    const double *x = V + (int64_t)j * ldv;
                    if (kind[j] == COL_PAIR) {
                        pair_rows(&p[j], x, w, t0, t1, dl[j]);
                    } else if (kind[j] == COL_SPECIAL) {
                        for (int64_t i = t0; i < t1; i++) fl[j] |= krill_oz_special(x[i], w[i]);
                    }
                }
            }
#pragma omp critical(krill_ozaki_sum)
            for (int j = 0; j < k; j++) {
                flags[j] |= fl[j];
                for (int c = 0; c < CPU_PAIR_DIAG; c++) pair_sum[j][c] += dl[j][c];
            }
        }
    }

    if (ctx->comm && tiled) {   /* every rank's sums: exact in int64, so in any order */
        for (int j = 0; j < k; j++)
            if (kind[j] == COL_SPECIAL) krill_oz_flags_to_counts(flags[j], pair_sum[j]);
        KRILL_TRY(krill_ctx_allreduce_i64(ctx, &pair_sum[0][0], k * CPU_PAIR_DIAG,
                                          KRILL_REDUCE_SUM));
        for (int j = 0; j < k; j++)
            if (kind[j] == COL_SPECIAL) flags[j] = krill_oz_counts_to_flags(pair_sum[j]);
    }
    for (int j = 0; j < k; j++) {
        if (kind[j] == COL_DONE) continue;
        if (kind[j] != COL_GENERAL) {
            results[j] = krill_oz_finish(&p[j], pair_sum[j], flags[j], sqrt_mode);
            continue;
        }
        /* general path: one sweep per column, int64 diagonal sums per thread */
        memset(gen_sum, 0, (size_t)p[j].ndiag * sizeof gen_sum[0]);
#pragma omp parallel num_threads(nt)
        {
            int64_t lo, hi;
            int64_t g[KRILL_OZ_MAX_DIAG];
            const double *x = V + (int64_t)j * ldv;
            chunk(n, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
            memset(g, 0, (size_t)p[j].ndiag * sizeof g[0]);
            for (int64_t i = lo; i < hi; i++) krill_oz_accumulate(&p[j], x[i], w[i], g);
#pragma omp critical(krill_ozaki_sum)
            for (int c = 0; c < p[j].ndiag; c++) gen_sum[c] += g[c];
        }
        KRILL_TRY(krill_ctx_allreduce_i64(ctx, gen_sum, p[j].ndiag, KRILL_REDUCE_SUM));
        results[j] = krill_oz_finish(&p[j], gen_sum, 0, sqrt_mode);
    }
cleanup:
    return st;
}

