/* ozaki/ozaki.c - reproducible reductions: krill_ctx_set_repro, argument checks, the
 * context's workspace, and the dispatch to the GPU (ozaki.cu, fast.cu, cgs.cu) or the CPU
 * (cpu.c: its passes and their memory traffic); on a context with a communicator the ranks
 * agree through comm.c's collectives (its file comment: why the bits are those of one
 * process). */
#include <string.h>

#include "ozaki/ozaki_impl.h"

#define CPU_PAIR_MAX 16                     /* cpu.c's pair path: slices per operand */

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
int krill_ozaki_use_fast_path(const krill_ctx *ctx, int64_t n)
{
    const int exact = ctx->repro == KRILL_REPRO_OFF ||
                      (ctx->repro == KRILL_REPRO_OZAKI && ctx->repro_slices == 0);
    return tuning.fast_path && exact && n >= 1 && n <= KRILL_OZ_FAST_MAX_N;
}

/* A GPU rank of a communicator of more than one rank: its sums go through comm.c (one
 * rank alone keeps the device path: its sums are the sums) */
static int gpu_rank_of_many(const krill_ctx *ctx)
{
    return krill_on_gpu(ctx) && ctx->comm && ctx->comm->size > 1;
}

/* ---- the context's workspace ------------------------------------------------------------ */

static krill_status repro_dot(krill_ctx *ctx, int64_t n, const double *x, const double *y,
                              double *result)
{
    return krill_ozaki_dot(ctx, n, x, y, result);
}

static krill_status repro_nrm2(krill_ctx *ctx, int64_t n, const double *x, double *result)
{
    return krill_ozaki_nrm2(ctx, n, x, result);
}

static const krill_repro_ops ozaki_repro_ops = {
    .fini = krill_ozaki_ctx_fini,
    .dot = repro_dot,
    .nrm2 = repro_nrm2,
};

/* With a communicator every rank makes its workspace in the same call, so they agree on a
 * failure (nobody goes on into a collective another left). */
krill_status krill_ozaki_ctx_init(krill_ctx *ctx)
{
    krill_status st = KRILL_OK;
    krill_ozaki_ws *ws = NULL;
    ctx->repro_ops = &ozaki_repro_ops;
    if (ctx->ozaki || (!krill_on_gpu(ctx) && !ctx->comm)) goto cleanup;
    st = krill_calloc((void **)&ws, sizeof *ws, "reproducible mode's workspace");
#ifdef KRILL_HAVE_CUDA
    if (st == KRILL_OK && krill_on_gpu(ctx)) st = krill_ozaki_cuda_init(ctx, &ws->dev, ws->launch);
#endif
    if (st == KRILL_OK && ctx->comm)
        st = krill_alloc_n((void **)&ws->gather, (size_t)ctx->comm->size, KRILL_OZ_GATHER_BYTES,
                           0, "reproducible mode's allgather buffer");
    if (st == KRILL_OK && ctx->comm && krill_on_gpu(ctx))
        st = krill_alloc_n((void **)&ws->sums, KRILL_OZ_SUMS_COUNT, sizeof(int64_t), 0,
                           "reproducible mode's host sums");
    KRILL_TRY(krill_ctx_agree(ctx, st));
    ctx->ozaki = ws;
    ws = NULL;
cleanup:
    if (ws) {   /* this rank's parts, when another rank failed */
#ifdef KRILL_HAVE_CUDA
        if (ws->dev) krill_ozaki_cuda_fini(ctx, ws->dev);
#endif
        krill_free(ws->sums);
        krill_free(ws->gather);
        krill_free(ws);
    }
    return st;
}

void krill_ozaki_ctx_fini(krill_ctx *ctx)
{
    krill_ozaki_ws *ws;
    if (!ctx || !ctx->ozaki) return;
    ws = ctx->ozaki;
#ifdef KRILL_HAVE_CUDA
    if (ws->dev) krill_ozaki_cuda_fini(ctx, ws->dev);
#endif
    krill_free(ws->sums);
    krill_free(ws->gather);
    krill_free(ws);
    ctx->ozaki = NULL;
}

/* The mode is checked, then the workspace is made (a reproducible mode allocates everything
 * it needs here, not in the first reduction); on failure the mode is unchanged. On a
 * context with a communicator: collective. */
krill_status krill_ctx_set_repro(krill_ctx *ctx, krill_repro_mode mode, int slices)
{
    krill_status st = KRILL_OK;
    KRILL_REQUIRE(ctx != NULL, "krill_ctx_set_repro: ctx is NULL");
    KRILL_REQUIRE(mode == KRILL_REPRO_OFF || mode == KRILL_REPRO_OZAKI ||
                  mode == KRILL_REPRO_OZAKI_FAST,
                  "krill_ctx_set_repro: mode = %d is not KRILL_REPRO_OFF (0), KRILL_REPRO_OZAKI "
                  "(1) or KRILL_REPRO_OZAKI_FAST (2)", (int)mode);
    KRILL_REQUIRE(slices >= 0, "krill_ctx_set_repro: slices = %d < 0 (0 = exact, S >= 1 = at "
                  "most S slices)", slices);
    KRILL_REQUIRE(mode != KRILL_REPRO_OFF || slices == 0,
                  "krill_ctx_set_repro: slices = %d given with KRILL_REPRO_OFF (plain reductions "
                  "have no slices; use 0)", slices);
    KRILL_REQUIRE(mode != KRILL_REPRO_OZAKI_FAST || slices >= 1,
                  "krill_ctx_set_repro: slices = %d with KRILL_REPRO_OZAKI_FAST: fast mode needs "
                  "a fixed slice count S >= 1 (exact mode is KRILL_REPRO_OZAKI with 0)", slices);
    if (mode != KRILL_REPRO_OFF) KRILL_TRY(krill_ozaki_ctx_init(ctx));
    ctx->repro = mode;
    ctx->repro_slices = slices;
cleanup:
    return st;
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
static krill_ozaki_ws *gpu_ws(krill_ctx *ctx) { return (krill_ozaki_ws *)ctx->ozaki; }
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
    krill_ozaki_cpu_stats(ctx, n, 1, x, n, NULL, stats);
cleanup:
    return st;
}

/* The CPU's group: the fast path's merged state per column (exact mode), and with a
 * communicator steps 1 and 2 of comm.c, then cpu.c's products and sums. */
static krill_status cpu_group(krill_ctx *ctx, int64_t n, int k, const double *V, int64_t ldv,
                              const double *vstats, const double *w, const double *wstats,
                              double *results, int sqrt_mode)
{
    krill_status st = KRILL_OK;
    krill_oz_fast sum[KRILL_OZ_KMAX];
    double area[2 * (KRILL_OZ_KMAX + 1)];
    int done[KRILL_OZ_KMAX] = {0}, left = k, fast;
    int64_t n_all = n;
    const int nv = k + !sqrt_mode;   /* sqrt_mode: V = w = x, one vector */
    for (int j = 0; j < k; j++) krill_oz_fast_init(&sum[j]);
    if (ctx->comm ? krill_ozaki_use_fast_path(ctx, 1) && n >= 1 : krill_ozaki_use_fast_path(ctx, n))
        krill_ozaki_cpu_fast(ctx, n, k, V, ldv, w, sum);
    if (ctx->comm) KRILL_TRY(krill_ozaki_gather_step(ctx, KRILL_OK, n, k, sum, &n_all));
    fast = krill_ozaki_use_fast_path(ctx, n_all);
    cpu_verdict_k = k;
    for (int j = 0; j < k; j++) {
        done[j] = fast && krill_oz_fast_result(&sum[j], sqrt_mode, &results[j]);
        cpu_verdict[j] = fast ? done[j] : -1;
        left -= done[j];
    }
    if (n_all == 0) {
        memset(results, 0, (size_t)k * sizeof *results);
        goto cleanup;
    }
    if (left == 0) goto cleanup;
    if (vstats) {   /* given: this rank's, made global below */
        memcpy(area, vstats, 2 * (size_t)k * sizeof *area);
        if (!sqrt_mode) memcpy(area + 2 * k, wstats, 2 * sizeof *area);
    } else {
        krill_ozaki_cpu_stats(ctx, n, k, V, ldv, sqrt_mode ? NULL : w, area);
    }
    if (ctx->comm) KRILL_TRY(krill_ozaki_stats_step(ctx, KRILL_OK, nv, area));
    KRILL_TRY(krill_ozaki_cpu_mdot(ctx, n, n_all, k, V, ldv, area, w,
                                   sqrt_mode ? area : area + 2 * k, done, results, sqrt_mode));
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
    forget_verdicts(ctx);
    if (k == 0) goto cleanup;
    if (!krill_on_gpu(ctx)) {   /* a rank with no rows too: it takes part in the collectives */
        st = cpu_group(ctx, n, k, V, ldv, vstats, w, wstats, results, sqrt_mode);
        goto cleanup;
    }
    if (gpu_rank_of_many(ctx)) {   /* a rank with no rows too */
        st = krill_ozaki_gpu_rank_group(ctx, n, k, V, ldv, vstats, w, wstats, results,
                                        sqrt_mode);
        goto cleanup;
    }
    if (n == 0) {
        KRILL_TRY(zero_results(ctx, k, results));
        goto cleanup;
    }
#ifdef KRILL_HAVE_CUDA
    {
        const int fast = krill_ozaki_use_fast_path(ctx, n);
        krill_ozaki_ws *ws;
        double *area;
        KRILL_TRY(krill_ozaki_ctx_init(ctx));
        ws = gpu_ws(ctx);
        area = krill_ozaki_cuda_stats_area(ws->dev);
        if (fast) {   /* the stats too, unless given */
            KRILL_TRY(krill_ozaki_cuda_fast(ctx, ws->dev, ws->launch, n, k, V, ldv, w, results,
                                            sqrt_mode, vstats ? NULL : area, 0));
            ws->fast_k = k;
        } else if (!vstats) {   /* sqrt_mode: V = w = x, one vector */
            KRILL_TRY(krill_ozaki_cuda_stats(ctx, ws->dev, ws->launch, n, k, V, ldv,
                                             sqrt_mode ? NULL : w, area));
        }
        if (!vstats) {
            vstats = area;
            wstats = sqrt_mode ? area : area + 2 * k;
        }
        KRILL_TRY(krill_ozaki_cuda_mdot(ctx, ws->dev, ws->launch, n, n, k, V, ldv, vstats,
                                        w, wstats, results, sqrt_mode, fast ? 0 : -1, 0));
        goto cleanup;
    }
#endif
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

/* Host res[0 .. parts k) into context memory at results (one copy) */
static krill_status put_results(krill_ctx *ctx, double *results, const double *res, int parts,
                                int k)
{
    const size_t bytes = (size_t)parts * (size_t)k * sizeof *res;
    if (parts == 0) return KRILL_OK;
    if (krill_on_gpu(ctx)) return krill_mem_upload(ctx, results, res, bytes);
    memcpy(results, res, bytes);
    return KRILL_OK;
}

#ifdef KRILL_HAVE_CUDA
/* The start of a fused call on a lone GPU: no verdicts yet, the workspace made, *area its
 * stats area */
static krill_status gpu_fused_begin(krill_ctx *ctx, krill_ozaki_ws **ws, double **area)
{
    krill_status st = KRILL_OK;
    forget_verdicts(ctx);
    KRILL_TRY(krill_ozaki_ctx_init(ctx));
    *ws = gpu_ws(ctx);
    *area = krill_ozaki_cuda_stats_area((*ws)->dev);
cleanup:
    return st;
}

/* One group of k <= KRILL_OZ_MDOT2_COLS columns against u and w on a lone GPU, exact mode:
 * the fast kernel with both right-hand sides (one read of each column, the stats of the
 * columns, u and w from the same read), then for each right-hand side the products pass,
 * which skips on the device what the fast kernel decided (the verdicts of u's sums, then
 * w's). */
static krill_status mdot2_group(krill_ctx *ctx, int64_t n, int k, const double *V, int64_t ldv,
                                const double *u, const double *w, double *results_u,
                                double *results_w)
{
    krill_status st = KRILL_OK;
    krill_ozaki_ws *ws;
    double *area;
    KRILL_TRY(gpu_fused_begin(ctx, &ws, &area));
    KRILL_TRY(krill_ozaki_cuda_fast2(ctx, ws->dev, ws->launch, n, k, V, ldv, u, w, results_u,
                                     results_w, area, 0));
    ws->fast_k = 2 * k;
    KRILL_TRY(krill_ozaki_cuda_mdot(ctx, ws->dev, ws->launch, n, n, k, V, ldv, area, u,
                                    area + 2 * k, results_u, 0, 0, 0));
    KRILL_TRY(krill_ozaki_cuda_mdot(ctx, ws->dev, ws->launch, n, n, k, V, ldv, area, w,
                                    area + 2 * k + 2, results_w, 0, k, 0));
cleanup:
    return st;
}
#endif

krill_status krill_ozaki_mdot2(krill_ctx *ctx, int64_t n, int k, const double *V, int64_t ldv,
                               const double *u, const double *w, double *results)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(check_args("krill_ozaki_mdot2", ctx, n, k, ldv));
    if (ctx->comm && (!krill_on_gpu(ctx) || gpu_rank_of_many(ctx)) &&
        krill_ozaki_use_fast_path(ctx, 1) && k >= 1 && k <= KRILL_OZ_KMAX) {
        /* a rank: one allgather for both right-hand sides; a right-hand side with a sum left
         * undecided then makes its whole round (the same on every rank); the decided side's
         * results written last, after every collective (no verdicts recorded) */
        double res[2 * KRILL_OZ_KMAX];
        int left_u, left_w;
        KRILL_TRY(krill_ozaki_rank_mdot2(ctx, n, k, V, ldv, u, w, res, &left_u, &left_w));
        if (left_u) KRILL_TRY(mdot_group(ctx, n, k, V, ldv, NULL, u, NULL, results, 0));
        if (left_w) KRILL_TRY(mdot_group(ctx, n, k, V, ldv, NULL, w, NULL, results + k, 0));
        forget_verdicts(ctx);
        st = put_results(ctx, results + (left_u ? k : 0), res + (left_u ? k : 0),
                         (!left_u) + (!left_w), k);
        goto cleanup;
    }
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx) && !gpu_rank_of_many(ctx) && krill_ozaki_use_fast_path(ctx, n)) {
        for (int j0 = 0; j0 < k; j0 += KRILL_OZ_MDOT2_COLS) {
            const int kg = k - j0 < KRILL_OZ_MDOT2_COLS ? k - j0 : KRILL_OZ_MDOT2_COLS;
            KRILL_TRY(mdot2_group(ctx, n, kg, V + (int64_t)j0 * ldv, ldv, u, w, results + j0,
                                  results + k + j0));
        }
        goto cleanup;
    }
#endif
    KRILL_TRY(mdot_all("krill_ozaki_mdot2", ctx, n, k, V, ldv, NULL, u, NULL, results));
    KRILL_TRY(mdot_all("krill_ozaki_mdot2", ctx, n, k, V, ldv, NULL, w, NULL, results + k));
cleanup:
    return st;
}

int krill_ozaki_cgs_fused(const krill_ctx *ctx, int64_t n, int k)
{
    int fused = 0;
#ifdef KRILL_HAVE_CUDA
    fused = krill_on_gpu(ctx) && !gpu_rank_of_many(ctx) && krill_ozaki_use_fast_path(ctx, n) &&
            k >= 0 && k + 1 <= KRILL_OZ_KMAX;
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
        krill_ozaki_ws *ws;
        double *area;
        KRILL_TRY(gpu_fused_begin(ctx, &ws, &area));
        KRILL_TRY(krill_ozaki_cuda_cgs(ctx, ws->dev, ws->launch, n, k, V, ldv, h_sub, w,
                                       h_out, ss_out, area));
        ws->fast_k = kd + (ss_out != NULL);
        if (kd)
            KRILL_TRY(krill_ozaki_cuda_mdot(ctx, ws->dev, ws->launch, n, n, kd, V, ldv, area, w,
                                            area + 2 * kd, h_out, 0, 0, 0));
        if (ss_out)
            KRILL_TRY(krill_ozaki_cuda_mdot(ctx, ws->dev, ws->launch, n, n, 1, w, n, area + 2 * kd,
                                            w, area + 2 * kd, ss_out, 0, kd, 0));
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

krill_status krill_ozaki_dot_pairs(krill_ctx *ctx, int64_t n, int m, const double *const *x,
                                   const double *const *y, double *results)
{
    krill_status st = check_args("krill_ozaki_dot_pairs", ctx, n, 1, n);
    if (st == KRILL_OK && (m < 1 || m > KRILL_OZ_PAIRS_MAX || !x || !y))
        st = krill_error(KRILL_ERR_ARG, "krill_ozaki_dot_pairs: m = %d is outside [1, %d], or "
                         "x or y is NULL", m, KRILL_OZ_PAIRS_MAX);
    if (st == KRILL_OK && gpu_rank_of_many(ctx)) {
        st = krill_ozaki_gpu_rank_pairs(ctx, n, m, x, y, results);
        goto cleanup;
    }
    for (int p = 0; st == KRILL_OK && p < m; p++)
        st = mdot_group(ctx, n, 1, x[p], n, NULL, y[p], NULL, results + p, 0);
cleanup:
    return st;
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
    if (!ctx || !decided || k < 0 || k > 2 * KRILL_OZ_KMAX) {
        st = krill_error(KRILL_ERR_ARG, "krill_ozaki_fast_verdicts: ctx or decided is NULL, or "
                         "k = %d is outside [0, %d]", k, 2 * KRILL_OZ_KMAX);
        goto cleanup;
    }
    if (krill_on_gpu(ctx)) {
#ifdef KRILL_HAVE_CUDA
        krill_ozaki_ws *ws = gpu_ws(ctx);
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
