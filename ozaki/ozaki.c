/* ozaki/ozaki.c - reproducible reductions: argument checks, the context's workspace, the
 * dispatch to the GPU (ozaki.cu), and the CPU path (OpenMP).
 *
 * CPU path, for k columns V[:, j] against w (a dot product is k = 1, V = x, w = y):
 *   pass 0  exact mode only (the fast path, ozaki_impl.h): per thread and column a
 *           compensated sum with its error bound (krill_oz_fast_add over the thread's rows,
 *           tile by tile so that w's tile stays in L1 across the columns), the threads' sums
 *           merged per column in whatever order they arrive (the bound holds for any merge
 *           tree); a column the bound decides is done, and only when some column is left
 *           do passes 1 and 2 run (for those columns). Unlike the GPU's, this pass does not
 *           gather pass 1's stats: the CPU path is bound by arithmetic, not by memory, so
 *           that would save undecided calls little and cost decided ones (by far the most)
 *           about 65% more (measured).
 *   pass 1  stats of every column and of w: per thread max |v| (as bits) and min lsb,
 *           combined by max / min (order-free).
 *   pass 2  each thread takes a contiguous chunk and, per tile of CPU_TILE rows, per column:
 *           - pair path (max(s_x, s_y) <= 16): the digits of V_ij and w_i from the chain of
 *             krill_oz_digit, the products added into T[p][q] (double; every partial sum of
 *             T[p][q] is an integer below 2^53, so exact), T flushed to int64 diagonal sums
 *             after each tile;
 *           - general path (more slices): the windowed digits of each element
 *             (krill_oz_accumulate), products added to int64 diagonal sums one by one.
 *           Thread sums are added (int64, exact, any order) and rounded once (krill_oz_round).
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

static const krill_ozaki_tuning tuning_default = {
    .gpu_threads = 256, .gpu_blocks = 0, .gpu_rows = 8, .gpu_reg_slices = 8,
    .cpu_reg_slices = CPU_PAIR_MAX, .cpu_min_n = 8192, .fast_path = 1};
static krill_ozaki_tuning tuning = {
    .gpu_threads = 256, .gpu_blocks = 0, .gpu_rows = 8, .gpu_reg_slices = 8,
    .cpu_reg_slices = CPU_PAIR_MAX, .cpu_min_n = 8192, .fast_path = 1};

/* The fast path's verdicts of the calling thread's last CPU call (krill_ozaki_fast_verdicts):
 * per column 1 / 0 / -1, for the first verdict_k columns. Thread-local: no allocation, no
 * race between host threads working on different contexts. */
static _Thread_local int cpu_verdict[KRILL_OZ_KMAX];
static _Thread_local int cpu_verdict_k;

void krill_ozaki_tuning_get(krill_ozaki_tuning *t) { *t = tuning; }

void krill_ozaki_tuning_set(const krill_ozaki_tuning *t)
{
    krill_ozaki_tuning v = t ? *t : tuning_default;
    if (v.gpu_threads < 32 || v.gpu_threads > 1024 || v.gpu_threads % 32 != 0)
        v.gpu_threads = tuning_default.gpu_threads;
    if (v.gpu_blocks < 0) v.gpu_blocks = 0;
    if (v.gpu_rows < 1) v.gpu_rows = 1;
    if (v.gpu_reg_slices < 0) v.gpu_reg_slices = 0;
    if (v.gpu_reg_slices > 8) v.gpu_reg_slices = 8;
    if (v.cpu_reg_slices < 0) v.cpu_reg_slices = 0;
    if (v.cpu_reg_slices > CPU_PAIR_MAX) v.cpu_reg_slices = CPU_PAIR_MAX;
    if (v.cpu_min_n < 0) v.cpu_min_n = 0;
    v.fast_path = v.fast_path != 0;
    tuning = v;
}

/* Does a call of length n on ctx try the fast path? Exact mode only (OZAKI with 0 slices, or
 * OFF, whose direct calls compute exact mode): fixed S and fast mode are not correctly
 * rounded, so a compensated sum cannot give their bits. */
static int use_fast_path(const krill_ctx *ctx, int64_t n)
{
    const int exact = ctx->repro == KRILL_REPRO_OFF ||
                      (ctx->repro == KRILL_REPRO_OZAKI && ctx->repro_slices == 0);
    return tuning.fast_path && exact && n >= 1 && n <= KRILL_OZ_FAST_MAX_N;
}

/* ---- the context's workspace ------------------------------------------------------------ */

/* ctx->ozaki on a CUDA context */
typedef struct ozaki_ws {
    void *dev;              /* device workspace (ozaki.cu) */
    int launch[3];          /* blocks per SM, most threads per block, fast kernel's blocks per
                               SM (krill_ozaki_cuda_init) */
    int fast_k;             /* columns of the last group whose verdicts are in the workspace
                               (0: the fast path was not tried) */
} ozaki_ws;

krill_status krill_ozaki_ctx_init(krill_ctx *ctx)
{
    krill_status st = KRILL_OK;
#ifdef KRILL_HAVE_CUDA
    ozaki_ws *ws = NULL;
    if (!krill_on_gpu(ctx) || ctx->ozaki) goto cleanup;
    KRILL_CALLOC(ws, 1);
    KRILL_TRY(krill_ozaki_cuda_init(ctx, &ws->dev, ws->launch));
    ctx->ozaki = ws;
    ws = NULL;
cleanup:
    krill_free(ws);
#else
    (void)ctx;
#endif
    return st;
}

void krill_ozaki_ctx_fini(krill_ctx *ctx)
{
    if (!ctx || !ctx->ozaki) return;
#ifdef KRILL_HAVE_CUDA
    krill_ozaki_cuda_fini(ctx, ((ozaki_ws *)ctx->ozaki)->dev);
#endif
    krill_free(ctx->ozaki);
    ctx->ozaki = NULL;
}

/* ---- the CPU path ------------------------------------------------------------------------ */

static int cpu_threads(const krill_ctx *ctx, int64_t n)
{
    int t = ctx->threads;
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

/* stats of V[:, j] (j < k) and of w (when not NULL) into out[2 v], out[2 v + 1] */
static void cpu_stats(krill_ctx *ctx, int64_t n, int k, const double *V, int64_t ldv,
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

/* Pass 0, the fast path: per thread and column j < k a compensated sum over the thread's
 * rows (krill_oz_fast_rows of V[:, j] and w, tile by tile), merged per column
 * (krill_oz_fast_merge, in the order the threads arrive: the bound holds for any order, and
 * a decided value is the correctly rounded one, so the order can change which columns are
 * decided, never a result bit). Where the bound decides column j: results[j] = its value
 * (krill_oz_fast_result) and done[j] = 1; else done[j] = 0. Returns the columns left. */
static int cpu_fast(krill_ctx *ctx, int64_t n, int k, const double *V, int64_t ldv,
                    const double *w, double *results, int *done, int sqrt_mode)
{
    krill_oz_fast sum[KRILL_OZ_KMAX];
    int left = 0;
    for (int j = 0; j < k; j++) krill_oz_fast_init(&sum[j]);
#pragma omp parallel num_threads(cpu_threads(ctx, n))
    {
        int64_t lo, hi;
        krill_oz_fast f[KRILL_OZ_KMAX];
        chunk(n, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
        for (int j = 0; j < k; j++) krill_oz_fast_init(&f[j]);
        for (int64_t t0 = lo; t0 < hi; t0 += CPU_TILE) {
            const int64_t t1 = hi - t0 < CPU_TILE ? hi : t0 + CPU_TILE;
            for (int j = 0; j < k; j++) krill_oz_fast_rows(&f[j], V + (int64_t)j * ldv, w, t0, t1);
        }
#pragma omp critical(krill_ozaki_fast)
        for (int j = 0; j < k; j++) krill_oz_fast_merge(&sum[j], &f[j]);
    }
    for (int j = 0; j < k; j++) {
        done[j] = krill_oz_fast_result(&sum[j], sqrt_mode, &results[j]);
        left += !done[j];
    }
    return left;
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

/* results[j] = V[:, j]'w (j < k <= KRILL_OZ_KMAX, n >= 1, columns with done[j] skipped)
 * from the stats vstats, wstats (host memory); sqrt_mode: the norm (V = w). */
static void cpu_mdot(krill_ctx *ctx, int64_t n, int k, const double *V, int64_t ldv,
                     const double *vstats, const double *w, const double *wstats,
                     const int *done, double *results, int sqrt_mode)
{
    const int fast = ctx->repro == KRILL_REPRO_OZAKI_FAST;
    const int slices = ctx->repro == KRILL_REPRO_OFF ? 0 : ctx->repro_slices;
    const int nt = cpu_threads(ctx, n);
    krill_oz_params p[KRILL_OZ_KMAX];
    int kind[KRILL_OZ_KMAX], flags[KRILL_OZ_KMAX];
    int64_t pair_sum[KRILL_OZ_KMAX][CPU_PAIR_DIAG];
    int64_t gen_sum[KRILL_OZ_MAX_DIAG];
    int tiled = 0;

    for (int j = 0; j < k; j++) {
        flags[j] = 0;
        memset(pair_sum[j], 0, sizeof pair_sum[j]);
        if (done[j]) {
            kind[j] = COL_DONE;
            continue;
        }
        krill_oz_params_make(n, vstats + 2 * j, wstats, fast, slices, &p[j]);
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
        results[j] = krill_oz_finish(&p[j], gen_sum, 0, sqrt_mode);
    }
}

/* ---- entry points ------------------------------------------------------------------------ */

static krill_status check_args(const char *fn, krill_ctx *ctx, int64_t n, int k, int64_t ldv)
{
    if (!ctx) return krill_error(KRILL_ERR_ARG, "%s: ctx is NULL", fn);
    if (n < 0) return krill_error(KRILL_ERR_ARG, "%s: n = %lld < 0", fn, (long long)n);
    if (n > KRILL_OZ_MAX_N)
        return krill_error(KRILL_ERR_ARG, "%s: n = %lld is above the reproducible mode's limit "
                           "2^%d (the slices would have fewer than 8 bits)", fn, (long long)n,
                           KRILL_OZ_MAX_LOG2N);
    if (k < 0) return krill_error(KRILL_ERR_ARG, "%s: k = %d < 0", fn, k);
    if (k > 1 && ldv < n)
        return krill_error(KRILL_ERR_ARG, "%s: ldv = %lld < n = %lld", fn, (long long)ldv,
                           (long long)n);
    return KRILL_OK;
}

/* results[0..k) = 0 in context memory (n == 0: every sum is empty) */
static krill_status zero_results(krill_ctx *ctx, int k, double *results)
{
    return krill_mem_zero(ctx, results, (size_t)k * sizeof(double));
}

#ifdef KRILL_HAVE_CUDA
static ozaki_ws *gpu_ws(krill_ctx *ctx) { return (ozaki_ws *)ctx->ozaki; }
#endif

/* No verdicts yet for the call being made (krill_ozaki_fast_verdicts) */
static void forget_verdicts(krill_ctx *ctx)
{
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) {
        if (gpu_ws(ctx)) gpu_ws(ctx)->fast_k = 0;
        return;
    }
#endif
    (void)ctx;
    cpu_verdict_k = 0;
}

krill_status krill_ozaki_stats(krill_ctx *ctx, int64_t n, const double *x, double *stats)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(check_args("krill_ozaki_stats", ctx, n, 1, n));
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) {
        const double empty[2] = {0.0, KRILL_OZ_LSB_NONE};
        KRILL_TRY(krill_ozaki_ctx_init(ctx));
        if (n == 0) KRILL_TRY(krill_scalars_write(ctx, stats, empty, 2));
        else KRILL_TRY(krill_ozaki_cuda_stats(ctx, gpu_ws(ctx)->dev, gpu_ws(ctx)->launch,
                                              n, 1, x, n, NULL, stats));
        goto cleanup;
    }
#endif
    cpu_stats(ctx, n, 1, x, n, NULL, stats);
cleanup:
    return st;
}

/* One group of at most KRILL_OZ_KMAX columns: in exact mode the fast path first (the
 * columns it decides are done; on the GPU, unless vstats is given, it gathers the stats
 * too); then, for the others, the stats given (context memory) or computed into the
 * workspace (GPU) or the stack (CPU), and the products. On the GPU both kernels are queued
 * whatever the fast path decides (the host never waits for its verdicts): the products
 * kernel reads them on the device and skips what is done. */
static krill_status mdot_group(krill_ctx *ctx, int64_t n, int k, const double *V, int64_t ldv,
                               const double *vstats, const double *w, const double *wstats,
                               double *results, int sqrt_mode)
{
    krill_status st = KRILL_OK;
    const int fast = use_fast_path(ctx, n);
    forget_verdicts(ctx);
    if (k == 0) goto cleanup;
    if (n == 0) {
        KRILL_TRY(zero_results(ctx, k, results));
        goto cleanup;
    }
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) {
        ozaki_ws *ws;
        double *area;
        KRILL_TRY(krill_ozaki_ctx_init(ctx));
        ws = gpu_ws(ctx);
        area = krill_ozaki_cuda_stats_area(ws->dev);
        if (fast) {   /* the stats too, unless given */
            KRILL_TRY(krill_ozaki_cuda_fast(ctx, ws->dev, ws->launch, n, k, V, ldv, w, results,
                                            sqrt_mode, vstats ? NULL : area));
            ws->fast_k = k;
        } else if (!vstats) {   /* sqrt_mode: V = w = x, one vector */
            KRILL_TRY(krill_ozaki_cuda_stats(ctx, ws->dev, ws->launch, n, k, V, ldv,
                                             sqrt_mode ? NULL : w, area));
        }
        if (!vstats) {
            vstats = area;
            wstats = sqrt_mode ? area : area + 2 * k;
        }
        KRILL_TRY(krill_ozaki_cuda_mdot(ctx, ws->dev, ws->launch, n, k, V, ldv, vstats,
                                        w, wstats, results, sqrt_mode, fast ? 0 : -1));
        goto cleanup;
    }
#endif
    {
        double area[2 * (KRILL_OZ_KMAX + 1)];
        int done[KRILL_OZ_KMAX] = {0};
        const int left = fast ? cpu_fast(ctx, n, k, V, ldv, w, results, done, sqrt_mode) : k;
        cpu_verdict_k = k;
        for (int j = 0; j < k; j++) cpu_verdict[j] = fast ? done[j] : -1;
        if (left == 0) goto cleanup;
        if (!vstats) {
            cpu_stats(ctx, n, k, V, ldv, sqrt_mode ? NULL : w, area);
            vstats = area;
            wstats = sqrt_mode ? area : area + 2 * k;
        }
        cpu_mdot(ctx, n, k, V, ldv, vstats, w, wstats, done, results, sqrt_mode);
    }
cleanup:
    return st;
}

static krill_status mdot_all(const char *fn, krill_ctx *ctx, int64_t n, int k, const double *V,
                             int64_t ldv, const double *vstats, const double *w,
                             const double *wstats, double *results)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(check_args(fn, ctx, n, k, ldv));
    for (int j0 = 0; j0 < k; j0 += KRILL_OZ_KMAX) {
        const int kg = k - j0 < KRILL_OZ_KMAX ? k - j0 : KRILL_OZ_KMAX;
        KRILL_TRY(mdot_group(ctx, n, kg, V + (int64_t)j0 * ldv, ldv,
                             vstats ? vstats + 2 * j0 : NULL, w, wstats, results + j0, 0));
    }
cleanup:
    return st;
}

krill_status krill_ozaki_mdot(krill_ctx *ctx, int64_t n, int k, const double *V, int64_t ldv,
                              const double *w, double *results)
{
    return mdot_all("krill_ozaki_mdot", ctx, n, k, V, ldv, NULL, w, NULL, results);
}

krill_status krill_ozaki_mdot_stats(krill_ctx *ctx, int64_t n, int k, const double *V,
                                    int64_t ldv, const double *vstats, const double *w,
                                    const double *wstats, double *results)
{
    if (!vstats || !wstats)
        return krill_error(KRILL_ERR_ARG, "krill_ozaki_mdot_stats: vstats or wstats is NULL");
    return mdot_all("krill_ozaki_mdot_stats", ctx, n, k, V, ldv, vstats, w, wstats, results);
}

int krill_ozaki_cgs_fused(const krill_ctx *ctx, int64_t n, int k)
{
    int fused = 0;
#ifdef KRILL_HAVE_CUDA
    fused = krill_on_gpu(ctx) && use_fast_path(ctx, n) && k >= 0 && k + 1 <= KRILL_OZ_KMAX;
#else
    (void)ctx;
    (void)n;
    (void)k;
#endif
    return fused;
}

/* One fused kernel; then, on the device's verdicts, the products pass of the undecided
 * columns (stats from the fused kernel) and of w'w. */
krill_status krill_ozaki_cgs_pass(krill_ctx *ctx, int64_t n, int k, const double *V,
                                  int64_t ldv, const double *h_sub, double *w, double *h_out,
                                  double *ss_out)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(check_args("krill_ozaki_cgs_pass", ctx, n, k, ldv));
    if (!krill_ozaki_cgs_fused(ctx, n, k)) {
        st = krill_error(KRILL_ERR_INTERNAL,
                         "krill_ozaki_cgs_pass: not a fused case (n = %lld, k = %d)",
                         (long long)n, k);
        goto cleanup;
    }
#ifdef KRILL_HAVE_CUDA
    {
        const int kd = h_out ? k : 0;
        ozaki_ws *ws;
        double *area;
        forget_verdicts(ctx);
        KRILL_TRY(krill_ozaki_ctx_init(ctx));
        ws = gpu_ws(ctx);
        area = krill_ozaki_cuda_stats_area(ws->dev);
        KRILL_TRY(krill_ozaki_cuda_cgs(ctx, ws->dev, ws->launch, n, k, V, ldv, h_sub, w,
                                       h_out, ss_out, area));
        ws->fast_k = kd + (ss_out != NULL);
        if (kd)
            KRILL_TRY(krill_ozaki_cuda_mdot(ctx, ws->dev, ws->launch, n, kd, V, ldv, area, w,
                                            area + 2 * kd, h_out, 0, 0));
        if (ss_out)
            KRILL_TRY(krill_ozaki_cuda_mdot(ctx, ws->dev, ws->launch, n, 1, w, n, area + 2 * kd,
                                            w, area + 2 * kd, ss_out, 0, kd));
    }
#else
    (void)V;
    (void)h_sub;
    (void)w;
    (void)h_out;
    (void)ss_out;
#endif
cleanup:
    return st;
}

krill_status krill_ozaki_dot(krill_ctx *ctx, int64_t n, const double *x, const double *y,
                             double *result)
{
    krill_status st = check_args("krill_ozaki_dot", ctx, n, 1, n);
    return st ? st : mdot_group(ctx, n, 1, x, n, NULL, y, NULL, result, 0);
}

krill_status krill_ozaki_dot_stats(krill_ctx *ctx, int64_t n, const double *x,
                                   const double *xstats, const double *y, const double *ystats,
                                   double *result)
{
    krill_status st = check_args("krill_ozaki_dot_stats", ctx, n, 1, n);
    if (!st && (!xstats || !ystats))
        st = krill_error(KRILL_ERR_ARG, "krill_ozaki_dot_stats: xstats or ystats is NULL");
    return st ? st : mdot_group(ctx, n, 1, x, n, xstats, y, ystats, result, 0);
}

krill_status krill_ozaki_nrm2(krill_ctx *ctx, int64_t n, const double *x, double *result)
{
    krill_status st = check_args("krill_ozaki_nrm2", ctx, n, 1, n);
    return st ? st : mdot_group(ctx, n, 1, x, n, NULL, x, NULL, result, 1);
}

krill_status krill_ozaki_nrm2_stats(krill_ctx *ctx, int64_t n, const double *x,
                                    const double *xstats, double *result)
{
    krill_status st = check_args("krill_ozaki_nrm2_stats", ctx, n, 1, n);
    if (!st && !xstats) st = krill_error(KRILL_ERR_ARG, "krill_ozaki_nrm2_stats: xstats is NULL");
    return st ? st : mdot_group(ctx, n, 1, x, n, xstats, x, xstats, result, 1);
}

krill_status krill_ozaki_fast_verdicts(krill_ctx *ctx, int k, int *decided)
{
    krill_status st = KRILL_OK;
    int have = 0;
    if (!ctx || !decided || k < 0 || k > KRILL_OZ_KMAX) {
        st = krill_error(KRILL_ERR_ARG, "krill_ozaki_fast_verdicts: ctx or decided is NULL, or "
                         "k = %d is outside [0, %d]", k, KRILL_OZ_KMAX);
        goto cleanup;
    }
    if (krill_on_gpu(ctx)) {
#ifdef KRILL_HAVE_CUDA
        ozaki_ws *ws = gpu_ws(ctx);
        have = ws ? (ws->fast_k < k ? ws->fast_k : k) : 0;
        if (have > 0)
            KRILL_TRY(krill_mem_download(ctx, decided, krill_ozaki_cuda_verdict_area(ws->dev),
                                         (size_t)have * sizeof *decided));
#endif
    } else {
        have = cpu_verdict_k < k ? cpu_verdict_k : k;
        for (int j = 0; j < have; j++) decided[j] = cpu_verdict[j];
    }
    for (int j = have; j < k; j++) decided[j] = -1;
cleanup:
    return st;
}
