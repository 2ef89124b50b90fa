/* ozaki/comm.c - reproducible sums over the ranks of a communicator (CPU or GPU ranks).
 *
 * A sum runs over every rank's rows and gives the bits one process holding them all would:
 * the slicing depends only on the global length and the global statistics, the int64
 * diagonal sums are exact in any order, and the fast path's merged state is a valid bound in
 * any merge order. Per group of columns, collectives in the same order on every rank:
 *   1. an allgather of (local length, the fast path's merged state per column), which
 *      every rank merges in rank order, so all take the same decisions (exact mode with
 *      every column decided ends here: one collective, as a plain dot product);
 *   2. when a column is left: the statistics' maximum (|x| bits, -lsb) as int64;
 *   3. the int64 diagonal sums, added by one allreduce, then rounded once on every rank.
 * A rank with no rows takes part in all three. A rank whose local work failed sends a mark
 * inside the collective (a length of -1, one more int64), and then every rank returns the
 * failure through krill_ctx_agree: none is left waiting.
 *
 * CPU ranks run their passes in ozaki.c / cpu.c and call steps 1 and 2 here. A GPU rank
 * (krill_ozaki_gpu_rank_group) runs the device's passes in a mode that leaves their partials
 * unrounded in the workspace and takes them to the host for each step: the fast pass's
 * merged sums (k states of 48 bytes), then, for the columns left, its statistics bounds and
 * the products pass's diagonal sums (k x the most diagonals, int64) and flags; the results
 * go back to context memory in one copy. Device traffic as on one GPU (one read of the k + 1
 * vectors when the fast path decides every column, else 2); host round trips: one when
 * every column is decided (the allgather between the copy down and the copy up, as a plain
 * distributed dot's allreduce), else three. The statistics of exact mode are the fast pass's
 * bounds (fast.cu: exact mode's value does not depend on them beyond the bound), those of
 * the other modes exact; either way a maximum over the ranks is what one process would use.
 *
 * Two right-hand sides (krill_ozaki_rank_mdot2, DCGS2's sweep [Q u w]'u, [Q u w]'w, k <=
 * KRILL_OZ_KMAX): step 1 for both in one allgather of 2k states, so an iteration of
 * distributed DCGS2 makes one collective when the fast path decides every sum (a GPU rank's
 * fast pass reads each column once for both: k + 2 vector reads); a right-hand side with a
 * sum left undecided then makes its whole round (steps 1-3, its fast pass again), on every
 * rank alike, and the decided side's results are written after it. */
#include <string.h>

#include "ozaki/ozaki_impl.h"

/* krill_ozaki_fault_step_after: checkpoints left before a forced failure (0: off) */
static long fault_steps_left;

void krill_ozaki_fault_step_after(long n) { fault_steps_left = n > 0 ? n : 0; }

/* A local status checkpoint before a collective: the status, or the tests' forced failure */
static krill_status checkpoint(krill_status local)
{
    if (local == KRILL_OK && fault_steps_left > 0 && --fault_steps_left == 0)
        local = krill_error(KRILL_ERR_INTERNAL, "reproducible sum: a failure forced by the "
                            "tests' hook (krill_ozaki_fault_step_after)");
    return local;
}

/* a failure mark: the collective carries it, krill_ctx_agree then names the failing rank */
static krill_status agree_if_marked(krill_ctx *ctx, krill_status local, int marked)
{
    krill_status st = KRILL_OK;
    if (marked) {
        st = krill_ctx_agree(ctx, local);
        if (st == KRILL_OK)   /* not reached: some rank sent the mark, so agree fails */
            st = krill_error(KRILL_ERR_INTERNAL, "a rank failed in a reproducible sum");
    }
    return st;
}

krill_status krill_ozaki_gather_step(krill_ctx *ctx, krill_status local, int64_t n, int k,
                                     krill_oz_fast *sum, int64_t *n_all)
{
    krill_status st = KRILL_OK;
    unsigned char mine[KRILL_OZ_GATHER_BYTES];
    const size_t rec = sizeof(int64_t) + (size_t)k * sizeof(krill_oz_fast);
    int64_t len;
    const unsigned char *all;
    int marked = 0;
    if (k < 0 || k > KRILL_OZ_GATHER_SUMS)
        return krill_error(KRILL_ERR_INTERNAL, "krill_ozaki_gather_step: %d sums", k);
    KRILL_TRY(krill_ozaki_ctx_init(ctx));
    local = checkpoint(local);
    len = local == KRILL_OK ? n : -1;
    all = ((krill_ozaki_ws *)ctx->ozaki)->gather;
    memcpy(mine, &len, sizeof len);
    memcpy(mine + sizeof len, sum, (size_t)k * sizeof *sum);
    KRILL_TRY(krill_ctx_allgather(ctx, mine, rec, ((krill_ozaki_ws *)ctx->ozaki)->gather));
    *n_all = 0;
    for (int j = 0; j < k; j++) krill_oz_fast_init(&sum[j]);
    for (int r = 0; r < ctx->comm->size; r++) {
        int64_t nr;
        memcpy(&nr, all + (size_t)r * rec, sizeof nr);
        marked |= nr < 0;
        *n_all += nr;
        for (int j = 0; j < k; j++) {
            krill_oz_fast g;
            memcpy(&g, all + (size_t)r * rec + sizeof nr + (size_t)j * sizeof g, sizeof g);
            krill_oz_fast_merge(&sum[j], &g);
        }
    }
    KRILL_TRY(agree_if_marked(ctx, local, marked));
    if (*n_all > KRILL_OZ_MAX_N)
        st = krill_error(KRILL_ERR_ARG, "reproducible sum over %d ranks: n = %lld is above the "
                         "reproducible mode's limit 2^%d (the slices would have fewer than 8 "
                         "bits)", ctx->comm->size, (long long)*n_all, KRILL_OZ_MAX_LOG2N);
cleanup:
    return st;
}

/* max |x| as its bits (which orders NaN above Inf above the finite values), the lowest set
 * bit as a maximum of -lsb, and the failure mark, in one int64 maximum */
krill_status krill_ozaki_stats_step(krill_ctx *ctx, krill_status local, int nv, double *area)
{
    krill_status st = KRILL_OK;
    int64_t m[2 * (KRILL_OZ_KMAX + 1) + 1];
    local = checkpoint(local);
    for (int v = 0; v < nv; v++) {
        uint64_t bits;
        memcpy(&bits, &area[2 * v], sizeof bits);
        m[v] = (int64_t)bits;
        m[nv + v] = -(int64_t)area[2 * v + 1];
    }
    m[2 * nv] = local != KRILL_OK;
    KRILL_TRY(krill_ctx_allreduce_i64(ctx, m, 2 * nv + 1, KRILL_REDUCE_MAX));
    KRILL_TRY(agree_if_marked(ctx, local, m[2 * nv] != 0));
    for (int v = 0; v < nv; v++) {
        const uint64_t bits = (uint64_t)m[v];
        memcpy(&area[2 * v], &bits, sizeof bits);
        area[2 * v + 1] = (double)-m[nv + v];
    }
cleanup:
    return st;
}

#ifdef KRILL_HAVE_CUDA
/* The statistics of the nv vectors (k columns, then w unless sqrt_mode) on the host: given
 * (context memory), the fast pass's (in the workspace: have), the stats kernel's, or an
 * empty vector's. Only a call with a column left comes here, so a decided one copies no
 * statistics. */
static krill_status rank_stats(krill_ctx *ctx, krill_ozaki_ws *ws, int64_t n, int k,
                               const double *V, int64_t ldv, const double *vstats,
                               const double *w, const double *wstats, int sqrt_mode, int have,
                               double *area)
{
    krill_status st = KRILL_OK;
    const int nv = k + !sqrt_mode;
    double *dev = krill_ozaki_cuda_stats_area(ws->dev);
    if (n == 0) {
        for (int v = 0; v < nv; v++) {
            area[2 * v] = 0.0;
            area[2 * v + 1] = KRILL_OZ_LSB_NONE;
        }
    } else if (vstats) {
        KRILL_TRY(krill_mem_download(ctx, area, vstats, 2 * (size_t)k * sizeof *area));
        if (!sqrt_mode)
            KRILL_TRY(krill_mem_download(ctx, area + 2 * k, wstats, 2 * sizeof *area));
    } else {
        if (!have)
            KRILL_TRY(krill_ozaki_cuda_stats(ctx, ws->dev, ws->launch, n, k, V, ldv,
                                             sqrt_mode ? NULL : w, dev));
        KRILL_TRY(krill_mem_download(ctx, area, dev, 2 * (size_t)nv * sizeof *area));
    }
cleanup:
    return st;
}

/* Step 3 on a GPU rank: the products pass of the columns left (done[j] = 0) with the global
 * statistics (area) and length, its partials down, every rank's added (with the flags as
 * counts of ranks, and the failure mark), rounded into res. */
static krill_status rank_products(krill_ctx *ctx, krill_ozaki_ws *ws, krill_status local,
                                  int64_t n, int64_t n_all, int k, const double *V, int64_t ldv,
                                  const double *w, int sqrt_mode, const int *done,
                                  const double *area, double *res)
{
    krill_status st = KRILL_OK;
    const int fast = ctx->repro == KRILL_REPRO_OZAKI_FAST;
    const int slices = ctx->repro == KRILL_REPRO_OFF ? 0 : ctx->repro_slices;
    const double *wst = sqrt_mode ? area : area + 2 * k;
    krill_oz_params p[KRILL_OZ_KMAX];
    int64_t *buf = ws->sums;
    int stride = 1, count;
    for (int j = 0; j < k; j++) {   /* the same parameters as the kernel's, on every rank */
        if (done[j]) continue;
        krill_oz_params_make(n_all, area + 2 * j, wst, fast, slices, &p[j]);
        if (p[j].state != KRILL_OZ_ZERO && p[j].state != KRILL_OZ_SPECIAL && p[j].ndiag > stride)
            stride = p[j].ndiag;
    }
    count = k * stride + KRILL_OZ_FLAG_BITS * k + 1;   /* sums, flag counts, mark */
    memset(buf, 0, (size_t)count * sizeof *buf);
    if (n > 0 && local == KRILL_OK) {   /* a failed rank sends its mark and zeros */
        int64_t *part = krill_ozaki_cuda_part_area(ws->dev);
        local = krill_mem_upload(ctx, krill_ozaki_cuda_verdict_area(ws->dev), done,
                                 (size_t)k * sizeof *done);
        if (local == KRILL_OK)
            local = krill_ozaki_cuda_mdot(ctx, ws->dev, ws->launch, n, n_all, k, V, ldv,
                                          krill_ozaki_cuda_stats_area(ws->dev), w,
                                          krill_ozaki_cuda_stats_area(ws->dev) +
                                              (sqrt_mode ? 0 : 2 * k),
                                          NULL, sqrt_mode, 0, stride);
        if (local == KRILL_OK)
            local = krill_mem_download(ctx, buf, part, (size_t)(k * stride + k) * sizeof *buf);
        /* flags -> counts, 3 a column, in place from the last column down (column j's
         * counts land at or after its flags, past the columns still to read); a decided
         * column's slots are stale (the kernel skipped it): zeros */
        for (int j = k - 1; local == KRILL_OK && j >= 0; j--) {
            const int flags = done[j] ? 0 : (int)buf[k * stride + j];
            krill_oz_flags_to_counts(flags, buf + k * stride + KRILL_OZ_FLAG_BITS * j);
            if (done[j]) memset(buf + (int64_t)j * stride, 0, (size_t)stride * sizeof *buf);
        }
    }
    local = checkpoint(local);
    buf[count - 1] = local != KRILL_OK;
    KRILL_TRY(krill_ctx_allreduce_i64(ctx, buf, count, KRILL_REDUCE_SUM));
    KRILL_TRY(agree_if_marked(ctx, local, buf[count - 1] != 0));
    for (int j = 0; j < k; j++) {
        if (done[j]) continue;
        res[j] = krill_oz_finish(&p[j], buf + (int64_t)j * stride,
                                 krill_oz_counts_to_flags(buf + k * stride +
                                                          KRILL_OZ_FLAG_BITS * j),
                                 sqrt_mode);
    }
cleanup:
    return st;
}

/* The start of a GPU rank's call of k sums: the workspace (made on first use; collective),
 * no verdicts recorded, every state empty, every result 0, nothing decided. */
static krill_status rank_begin(krill_ctx *ctx, int k, krill_oz_fast *sum, double *res,
                               int *done, krill_ozaki_ws **ws)
{
    krill_status st = krill_ozaki_ctx_init(ctx);
    if (st == KRILL_OK) {
        *ws = (krill_ozaki_ws *)ctx->ozaki;
        (*ws)->fast_k = 0;
    }
    for (int j = 0; j < k; j++) {
        krill_oz_fast_init(&sum[j]);
        res[j] = 0.0;
        done[j] = 0;
    }
    return st;
}
#endif

krill_status krill_ozaki_gpu_rank_group(krill_ctx *ctx, int64_t n, int k, const double *V,
                                        int64_t ldv, const double *vstats, const double *w,
                                        const double *wstats, double *results, int sqrt_mode)
{
    krill_status st = KRILL_OK;
#ifdef KRILL_HAVE_CUDA
    krill_status local = KRILL_OK;
    krill_oz_fast sum[KRILL_OZ_KMAX];
    double area[2 * (KRILL_OZ_KMAX + 1)], res[KRILL_OZ_KMAX];
    int done[KRILL_OZ_KMAX], left = k, have_stats = 0;
    int64_t n_all = n;
    const int nv = k + !sqrt_mode;
    krill_ozaki_ws *ws = NULL;
    KRILL_TRY(rank_begin(ctx, k, sum, res, done, &ws));
    if (krill_ozaki_use_fast_path(ctx, 1) && n >= 1) {   /* exact mode: merged sums (+ stats) */
        double *dev_stats = vstats ? NULL : krill_ozaki_cuda_stats_area(ws->dev);
        local = krill_ozaki_cuda_fast(ctx, ws->dev, ws->launch, n, k, V, ldv, w, NULL,
                                      sqrt_mode, dev_stats, 1);
        if (local == KRILL_OK)
            local = krill_mem_download(ctx, sum, krill_ozaki_cuda_merged_area(ws->dev),
                                       (size_t)k * sizeof *sum);
        have_stats = dev_stats != NULL;
    }
    KRILL_TRY(krill_ozaki_gather_step(ctx, local, n, k, sum, &n_all));
    if (krill_ozaki_use_fast_path(ctx, n_all))
        for (int j = 0; j < k; j++) {
            done[j] = krill_oz_fast_result(&sum[j], sqrt_mode, &res[j]);
            left -= done[j];
        }
    if (n_all > 0 && left > 0) {
        local = rank_stats(ctx, ws, n, k, V, ldv, vstats, w, wstats, sqrt_mode, have_stats,
                           area);
        KRILL_TRY(krill_ozaki_stats_step(ctx, local, nv, area));
        if (n > 0)   /* the global statistics, where the products pass reads them */
            local = krill_mem_upload(ctx, krill_ozaki_cuda_stats_area(ws->dev), area,
                                     2 * (size_t)nv * sizeof *area);
        KRILL_TRY(rank_products(ctx, ws, local, n, n_all, k, V, ldv, w, sqrt_mode, done, area,
                                res));
    }
    /* n_all == 0: every sum empty, nothing decided, res all zeros */
    st = krill_mem_upload(ctx, results, res, (size_t)k * sizeof *res);
cleanup:
#else
    (void)ctx; (void)n; (void)k; (void)V; (void)ldv; (void)vstats; (void)w; (void)wstats;
    (void)results; (void)sqrt_mode;
    st = krill_error(KRILL_ERR_INTERNAL, "krill_ozaki_gpu_rank_group: a build without CUDA");
#endif
    return st;
}

/* m independent dot products x[p]'y[p] on a GPU rank, in exact mode: the fast pass of each
 * pair (merged_only; one read of the pair) and its merged sum copied on the device to slot
 * KRILL_OZ_KMAX - KRILL_OZ_PAIRS_MAX + p of the merged area (the next pass writes slot 0
 * again), the m states down in one copy, one allgather of them, the decided results up in
 * one copy: one host round trip for the m sums. A pair the merged bound leaves undecided
 * then takes krill_ozaki_gpu_rank_group's whole round alone (every rank sees the same
 * verdicts, so all make the same rounds), as does every pair outside exact mode. */
krill_status krill_ozaki_gpu_rank_pairs(krill_ctx *ctx, int64_t n, int m,
                                        const double *const *x, const double *const *y,
                                        double *results)
{
    krill_status st = KRILL_OK;
#ifdef KRILL_HAVE_CUDA
    krill_status local = KRILL_OK;
    krill_oz_fast sum[KRILL_OZ_PAIRS_MAX];
    double res[KRILL_OZ_PAIRS_MAX];
    int done[KRILL_OZ_PAIRS_MAX], fast;
    int64_t n_all = n;
    krill_ozaki_ws *ws = NULL;
    KRILL_TRY(rank_begin(ctx, m, sum, res, done, &ws));
    fast = krill_ozaki_use_fast_path(ctx, 1);
    if (fast && n >= 1) {
        krill_oz_fast *merged = krill_ozaki_cuda_merged_area(ws->dev);
        krill_oz_fast *slots = merged + KRILL_OZ_KMAX - KRILL_OZ_PAIRS_MAX;
        for (int p = 0; local == KRILL_OK && p < m; p++) {
            local = krill_ozaki_cuda_fast(ctx, ws->dev, ws->launch, n, 1, x[p], n, y[p], NULL,
                                          0, NULL, 1);
            if (local == KRILL_OK) local = krill_mem_copy(ctx, slots + p, merged, sizeof *merged);
        }
        if (local == KRILL_OK)
            local = krill_mem_download(ctx, sum, slots, (size_t)m * sizeof *sum);
    }
    if (fast) {
        KRILL_TRY(krill_ozaki_gather_step(ctx, local, n, m, sum, &n_all));
        for (int p = 0; krill_ozaki_use_fast_path(ctx, n_all) && p < m; p++)
            done[p] = krill_oz_fast_result(&sum[p], 0, &res[p]);
        /* n_all == 0: every sum empty, res zeros (the rounds below would give the same) */
        if (n_all == 0)
            for (int p = 0; p < m; p++) done[p] = 1;
        KRILL_TRY(krill_mem_upload(ctx, results, res, (size_t)m * sizeof *res));
    }
    for (int p = 0; p < m; p++)   /* the undecided pairs' rounds overwrite their zeros */
        if (!done[p])
            KRILL_TRY(krill_ozaki_gpu_rank_group(ctx, n, 1, x[p], n, NULL, y[p], NULL,
                                                 results + p, 0));
cleanup:
#else
    (void)ctx; (void)n; (void)m; (void)x; (void)y; (void)results;
    st = krill_error(KRILL_ERR_INTERNAL, "krill_ozaki_gpu_rank_pairs: a build without CUDA");
#endif
    return st;
}

/* The 2k merged states (u's sums, then w's) on a GPU rank: one fast pass (merged_only) over
 * [V u w] and one copy down; nothing for no rows */
static krill_status rank_fast2(krill_ctx *ctx, int64_t n, int k, const double *V, int64_t ldv,
                               const double *u, const double *w, krill_oz_fast *sum)
{
    krill_status st = KRILL_OK;
#ifdef KRILL_HAVE_CUDA
    krill_ozaki_ws *ws = (krill_ozaki_ws *)ctx->ozaki;
    if (n >= 1) {
        KRILL_TRY(krill_ozaki_cuda_fast2(ctx, ws->dev, ws->launch, n, k, V, ldv, u, w, NULL,
                                         NULL, NULL, 1));
        KRILL_TRY(krill_mem_download(ctx, sum, krill_ozaki_cuda_merged_area(ws->dev),
                                     2 * (size_t)k * sizeof *sum));
    }
cleanup:
#else
    (void)ctx; (void)n; (void)k; (void)V; (void)ldv; (void)u; (void)w; (void)sum;
    st = krill_error(KRILL_ERR_INTERNAL, "krill_ozaki_rank_mdot2: a GPU rank in a build without "
                     "CUDA");
#endif
    return st;
}

krill_status krill_ozaki_rank_mdot2(krill_ctx *ctx, int64_t n, int k, const double *V,
                                    int64_t ldv, const double *u, const double *w, double *res,
                                    int *left_u, int *left_w)
{
    krill_status st = KRILL_OK, local = KRILL_OK;
    krill_oz_fast sum[KRILL_OZ_GATHER_SUMS];
    int64_t n_all = n;
    *left_u = *left_w = 1;
    if (k < 1 || k > KRILL_OZ_KMAX || !ctx->comm)
        return krill_error(KRILL_ERR_INTERNAL, "krill_ozaki_rank_mdot2: k = %d", k);
    KRILL_TRY(krill_ozaki_ctx_init(ctx));
    for (int j = 0; j < 2 * k; j++) {
        krill_oz_fast_init(&sum[j]);
        res[j] = 0.0;
    }
    if (krill_on_gpu(ctx)) {
        local = rank_fast2(ctx, n, k, V, ldv, u, w, sum);
    } else if (n >= 1) {
        krill_ozaki_cpu_fast(ctx, n, k, V, ldv, u, sum);
        krill_ozaki_cpu_fast(ctx, n, k, V, ldv, w, sum + k);
    }
    KRILL_TRY(krill_ozaki_gather_step(ctx, local, n, 2 * k, sum, &n_all));
    *left_u = *left_w = 0;
    for (int j = 0; j < 2 * k; j++) {   /* n_all == 0: every sum empty, 0 */
        const int done = n_all == 0 || (krill_ozaki_use_fast_path(ctx, n_all) &&
                                        krill_oz_fast_result(&sum[j], 0, &res[j]));
        *(j < k ? left_u : left_w) |= !done;
    }
cleanup:
    return st;
}
