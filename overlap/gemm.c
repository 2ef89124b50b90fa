/* overlap/gemm.c - client: out-of-core DGEMM, C = A B, through the overlap scheduler.
 *
 * With C cut into sh x sw blocks (edge blocks smaller), block (i, j) reads A's row panel i
 * (sh x m) and B's column panel j (m x sw) and writes C(i, j) (sh x sw): regions are the
 * nbi A panels, the nbj B panels and the nbi x nbj C blocks. The planner's order sends a panel
 * once while it stays resident, so the traffic is between the minimum 8(hm + mw + hw) bytes
 * (everything resident) and 8(hm nbj + mw + hw) (one A panel at a time). Flops 2 h m w.
 *
 * The blocks: the caller's side (square), or the candidate whose plan predicts the shortest
 * time among squares of side 32, 64, ..., 16384, full-width strips of as many rows (C's
 * and A's regions contiguous: one DMA each, where a pitched block copy pays per row), and
 * the whole C (the unsplit, sequential run); the kernel time per
 * block is measured on zeroed scratch of the block's shape (cuBLAS on a GPU), not on the
 * data, so choosing costs no transfers. On the CPU the block kernel computes each element
 * as the sum of its m products in order of k (no FMA contraction), so C does not depend on
 * the block side and equals the unsplit product bit for bit. On a GPU, when A, B and C all
 * lie in page-locked memory (cudaMallocHost, cudaHostRegister), the plan copies the panels
 * and blocks straight from and to them (no staging, no host packing). */
#include <math.h>
#include <string.h>
#include "overlap/overlap_impl.h"

/* The most blocks of a candidate side: the planner's order costs O(blocks^2) steps, and
 * blocks small enough to be that many run cuBLAS below its best anyway. */
#define GEMM_MAX_BLOCKS 16384

typedef struct gemm_job {
    krill_ctx *ctx;
    int64_t h, m, w, sh, sw, nbi, nbj;   /* C's blocks: sh x sw */
    const double *a, *b;
    double *c;
    int64_t lda, ldb, ldc;
    /* the description for one side */
    krill_overlap_region *regions;
    krill_overlap_block *blocks;
    int32_t *lists;              /* per block: in A, in B, out C */
} gemm_job;

/* C (bh x bw) = A (bh x m) B (m x bw), all packed row-major; every C element sums its
 * products in order of k. Traffic: A and C once, B once per row of A (from cache). */
static void cpu_dgemm_block(int64_t bh, int64_t m, int64_t bw, const double *a, const double *b,
                            double *c, int threads)
{
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t i = 0; i < bh; i++) {
        double *ci = c + i * bw;
        for (int64_t j = 0; j < bw; j++) ci[j] = 0;
        for (int64_t k = 0; k < m; k++) {
            const double aik = a[i * m + k];
            const double *bk = b + k * bw;
            for (int64_t j = 0; j < bw; j++) ci[j] += aik * bk[j];
        }
    }
}

static void block_shape(const gemm_job *g, int32_t block, int64_t *bh, int64_t *bw)
{
    int64_t i = block / g->nbj, j = block % g->nbj;
    *bh = g->h - i * g->sh < g->sh ? g->h - i * g->sh : g->sh;
    *bw = g->w - j * g->sw < g->sw ? g->w - j * g->sw : g->sw;
}

static krill_status gemm_kernel(void *user, int32_t block, void *stream, void *const *in,
                                void *const *out)
{
    krill_status st = KRILL_OK;
    gemm_job *g = (gemm_job *)user;
    int64_t bh, bw;
    block_shape(g, block, &bh, &bw);
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(g->ctx))
        st = overlap_gpu_dgemm_block(g->ctx, stream, bh, g->m, bw, (const double *)in[0],
                                     (const double *)in[1], (double *)out[0]);
    else
#endif
        cpu_dgemm_block(bh, g->m, bw, (const double *)in[0], (const double *)in[1],
                        (double *)out[0], g->ctx->threads);
    (void)stream;
    return st;
}

/* Predicted kernel seconds of a bh x m x bw block. On the CPU: the kernel timed (best of
 * 3) on zeroed scratch of min(bh, 64) x min(m, 64) x bw, scaled by the rows and the depth
 * left out (the time is linear in both; bw, which sets the cache behaviour, is kept). On a
 * GPU: cuBLAS timed on min(bh, 4096) x min(m, 4096) x min(bw, 4096), scaled by the flops
 * left out (at 4096 a dimension no longer changes DGEMM's rate; timing the whole block
 * would take seconds and gigabytes of scratch for the largest candidates). */
static krill_status kernel_seconds(gemm_job *g, int64_t bh, int64_t bw, double *seconds)
{
    krill_status st = KRILL_OK;
    double *scratch = NULL, best = INFINITY;
    const int64_t ph = bh < 64 ? bh : 64, pm = g->m < 64 ? g->m : 64;
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(g->ctx)) {
        const int64_t cap = 4096, th = bh < cap ? bh : cap, tm = g->m < cap ? g->m : cap;
        const int64_t tw = bw < cap ? bw : cap;
        KRILL_TRY(overlap_gpu_time_dgemm(g->ctx, th, tm, tw, seconds));
        *seconds *= ((double)bh / (double)th) * ((double)g->m / (double)tm) * ((double)bw / (double)tw);
        goto cleanup;
    }
#endif
    KRILL_CALLOC(scratch, (size_t)(ph * pm + pm * bw + ph * bw));
    for (int rep = 0; rep < 3; rep++) {
        double t = krill_wtime();
        cpu_dgemm_block(ph, pm, bw, scratch, scratch + ph * pm, scratch + ph * pm + pm * bw,
                        g->ctx->threads);
        t = krill_wtime() - t;
        if (t < best) best = t;
    }
    *seconds = best * ((double)bh / (double)ph) * ((double)g->m / (double)pm);
cleanup:
    krill_free(scratch);
    return st;
}

static void gemm_release(gemm_job *g)
{
    krill_free(g->regions);
    krill_free(g->blocks);
    krill_free(g->lists);
    g->regions = NULL;
    g->blocks = NULL;
    g->lists = NULL;
}

/* The problem for blocks of sh x sw. */
static krill_status describe(gemm_job *g, int64_t sh, int64_t sw, krill_overlap_problem *pb)
{
    krill_status st = KRILL_OK;
    int64_t nb, nr;
    double full = 0, edge_h = 0, edge_w = 0, corner = 0;
    gemm_release(g);
    g->sh = sh;
    g->sw = sw;
    g->nbi = (g->h + sh - 1) / sh;
    g->nbj = (g->w + sw - 1) / sw;
    nb = g->nbi * g->nbj;
    nr = g->nbi + g->nbj + nb;
    KRILL_REQUIRE(nr < INT32_MAX / 3, "overlap gemm: %lld blocks are too many (%lld x %lld)",
                  (long long)nb, (long long)sh, (long long)sw);
    KRILL_ALLOC(g->regions, (size_t)nr);
    KRILL_ALLOC(g->blocks, (size_t)nb);
    KRILL_ALLOC(g->lists, (size_t)nb * 3);
    for (int64_t i = 0; i < g->nbi; i++) {      /* A's row panels: contiguous rows */
        int64_t rows = g->h - i * sh < sh ? g->h - i * sh : sh;
        g->regions[i] = (krill_overlap_region){(void *)(g->a + i * sh * g->lda),
                                               (size_t)g->m * 8, (size_t)rows, (size_t)g->lda * 8};
    }
    for (int64_t j = 0; j < g->nbj; j++) {      /* B's column panels: m strided rows */
        int64_t cols = g->w - j * sw < sw ? g->w - j * sw : sw;
        g->regions[g->nbi + j] = (krill_overlap_region){(void *)(g->b + j * sw), (size_t)cols * 8,
                                                        (size_t)g->m, (size_t)g->ldb * 8};
    }
    /* kernel times: one measurement per distinct block shape (at most four) */
    {
        int64_t bh_last = g->h - (g->nbi - 1) * sh, bw_last = g->w - (g->nbj - 1) * sw;
        int64_t fh = g->nbi > 1 ? sh : bh_last, fw = g->nbj > 1 ? sw : bw_last;
        KRILL_TRY(kernel_seconds(g, fh, fw, &full));
        KRILL_TRY(kernel_seconds(g, bh_last, fw, &edge_h));
        KRILL_TRY(kernel_seconds(g, fh, bw_last, &edge_w));
        KRILL_TRY(kernel_seconds(g, bh_last, bw_last, &corner));
    }
    for (int64_t blk = 0; blk < nb; blk++) {
        int64_t i = blk / g->nbj, j = blk % g->nbj, bh, bw;
        int32_t *l = g->lists + 3 * blk;
        block_shape(g, (int32_t)blk, &bh, &bw);
        g->regions[g->nbi + g->nbj + blk] = (krill_overlap_region){
            (void *)(g->c + i * sh * g->ldc + j * sw), (size_t)bw * 8, (size_t)bh,
            (size_t)g->ldc * 8};
        l[0] = (int32_t)i;
        l[1] = (int32_t)(g->nbi + j);
        l[2] = (int32_t)(g->nbi + g->nbj + blk);
        g->blocks[blk] = (krill_overlap_block){l, l + 2, NULL, 2, 1, 0, 0};
        g->blocks[blk].seconds = i == g->nbi - 1 ? (j == g->nbj - 1 ? corner : edge_h)
                                                 : (j == g->nbj - 1 ? edge_w : full);
    }
    pb->regions = g->regions;
    pb->blocks = g->blocks;
    pb->n_regions = (int32_t)nr;
    pb->n_blocks = (int32_t)nb;
    pb->kernel = gemm_kernel;
    pb->user = g;
cleanup:
    return st;
}

void krill_overlap_gemm_opts_default(krill_overlap_gemm_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    krill_overlap_plan_opts_default(&opts->plan);
}

/* Device bytes of one block of sh x sw: its A and B panels and its C block. */
static double block_bytes(const gemm_job *g, int64_t sh, int64_t sw)
{
    const double bh = (double)(sh < g->h ? sh : g->h), bw = (double)(sw < g->w ? sw : g->w);
    return 8.0 * (bh * (double)g->m + (double)g->m * bw + bh * bw);
}

/* The plan for square blocks of `side`, or (side 0) the candidate with the shortest
 * predicted time: full-width strips (rows x w), then squares, of 32, 64, ..., 16384 rows,
 * and the whole C. A later candidate must predict 1% less to replace an earlier one: the
 * strips' contiguous copies win ties (B stays resident, A and C move once, and a pitched
 * copy of a square block can lose more to the DMA engine than the model's cost per row). */
static krill_status choose(gemm_job *g, const krill_overlap_model *model,
                           const krill_overlap_plan_opts *po, int64_t side,
                           krill_overlap_plan **plan)
{
    krill_status st = KRILL_OK;
    static const int64_t candidates[] = {32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 0};
    const int n_cand = (int)(sizeof candidates / sizeof *candidates);
    const int64_t whole = g->h > g->w ? g->h : g->w;
    krill_overlap_plan *trial = NULL;
    krill_overlap_problem pb;
    int64_t best_h = side, best_w = side;
    double best = 0;
    for (int k = 0; side == 0 && k < 2 * n_cand; k++) {
        const int strip = k < n_cand;
        const int64_t s = candidates[k % n_cand] == 0 || candidates[k % n_cand] > whole
                              ? whole : candidates[k % n_cand];
        const int64_t sh = s, sw = strip ? g->w : s;
        krill_overlap_plan_info info;
        if (k % n_cand > 0 && s == (candidates[k % n_cand - 1] > whole ? whole
                                                                     : candidates[k % n_cand - 1]))
            continue;                             /* the same side as the previous one */
        if (strip && (s >= g->h || s >= g->w)) continue;   /* a square's blocks */
        if (block_bytes(g, sh, sw) > po->memory) continue; /* one block does not fit */
        if ((double)((g->h + sh - 1) / sh) * (double)((g->w + sw - 1) / sw) > GEMM_MAX_BLOCKS)
            continue;                             /* more blocks than are worth planning */
        st = describe(g, sh, sw, &pb);            /* (times a block: may run out of memory) */
        if (st == KRILL_OK) st = krill_overlap_plan_create(model, &pb, po, &trial);
        if (st == KRILL_ERR_DEVICE_ALLOC) {       /* does not fit: try the next side */
            krill_clear_error();
            st = KRILL_OK;
            continue;
        }
        KRILL_TRY(st);
        krill_overlap_plan_info_get(trial, &info);
        if (best_h == 0 || info.predicted < 0.99 * best)
            best = info.predicted, best_h = sh, best_w = sw;
        krill_overlap_plan_destroy(&trial);
    }
    if (best_h == 0) {
        st = krill_error(KRILL_ERR_DEVICE_ALLOC, "overlap gemm: no block side fits the %.0f "
                         "bytes of device memory: a 32-row panel of A and of B take %.0f",
                         po->memory, 2.0 * 32 * 8 * (double)g->m);
        goto cleanup;
    }
    KRILL_TRY(describe(g, best_h, best_w, &pb));
    KRILL_TRY(krill_overlap_plan_create(model, &pb, po, plan));
cleanup:
    krill_overlap_plan_destroy(&trial);
    return st;
}

krill_status krill_overlap_dgemm(krill_ctx *ctx, int64_t h, int64_t m, int64_t w,
                                 const double *a, int64_t lda, const double *b, int64_t ldb,
                                 double *c, int64_t ldc, const krill_overlap_gemm_opts *opts,
                                 krill_overlap_gemm_report *report)
{
    krill_status st = KRILL_OK;
    krill_overlap_gemm_opts o;
    krill_overlap_model model;
    krill_overlap_plan *plan = NULL;
    krill_overlap_timeline own, *tl = &own;
    gemm_job g;
    double t;
    memset(&g, 0, sizeof g);
    memset(&own, 0, sizeof own);
    krill_overlap_gemm_opts_default(&o);
    if (opts) o = *opts;
    if (o.timeline) tl = o.timeline;
    KRILL_REQUIRE(ctx && a && b && c, "krill_overlap_dgemm: NULL argument");
    KRILL_REQUIRE(h >= 1 && m >= 1 && w >= 1 && lda >= m && ldb >= w && ldc >= w,
                  "krill_overlap_dgemm: shape h %lld, m %lld, w %lld with leading dimensions "
                  "%lld, %lld, %lld", (long long)h, (long long)m, (long long)w, (long long)lda,
                  (long long)ldb, (long long)ldc);
    KRILL_REQUIRE(o.block >= 0, "krill_overlap_dgemm: block %lld < 0", (long long)o.block);
    g = (gemm_job){.ctx = ctx, .h = h, .m = m, .w = w, .a = a, .b = b, .c = c, .lda = lda,
                   .ldb = ldb, .ldc = ldc};
    if (o.plan.memory == 0) KRILL_TRY(krill_overlap_default_memory(ctx, &o.plan.memory));
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx) && !o.plan.host_page_locked)   /* direct copies, no staging */
        o.plan.host_page_locked =
            overlap_gpu_page_locked(a, (size_t)((h - 1) * lda + m) * 8) &&
            overlap_gpu_page_locked(b, (size_t)((m - 1) * ldb + w) * 8) &&
            overlap_gpu_page_locked(c, (size_t)((h - 1) * ldc + w) * 8);
#endif
    KRILL_TRY(krill_overlap_calibrate(ctx, 0, &model));
    KRILL_TRY(choose(&g, &model, &o.plan, o.block, &plan));
    t = krill_wtime();
    KRILL_TRY(krill_overlap_execute(ctx, plan, tl));
    t = krill_wtime() - t;
    if (report) {
        memset(report, 0, sizeof *report);
        report->block = g.sh;
        report->block_cols = g.sw < w ? g.sw : w;
        krill_overlap_plan_info_get(plan, &report->plan);
        report->seconds = t;
        report->efficiency = tl->efficiency;
    }
cleanup:
    if (tl == &own) krill_overlap_timeline_free(&own);
    krill_overlap_plan_destroy(&plan);
    gemm_release(&g);
    return st;
}
