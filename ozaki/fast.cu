/* ozaki/fast.cu - exact mode's fast path on the GPU (contracts in ozaki/ozaki_impl.h; the
 * workspace, the sums' merges and decision, the ranges and the launch helpers in
 * ozaki/ozaki_dev.cuh, shared with ozaki.cu's stats and dot kernels and cgs.cu's fused pass).
 *
 *   fast kernel   exact mode's fast path (ozaki_impl.h; the bound in ozaki_row.h): per thread
 *                 and column a compensated sum (krill_oz_fast_sum) over its rows of a tile,
 *                 the guard decided once from the ranges of the thread's elements
 *                 (oz_range_ok) instead of term by term, merged over the warp by shuffles
 *                 and into the warp's shared sum per column;
 *                 each block's sums go to the workspace, and the last block (ticket counter)
 *                 merges the blocks' sums per column, decides each column
 *                 (krill_oz_fast_result), writes results[j] where decided and the verdicts,
 *                 which the dot kernel reads on the device: it skips the decided columns,
 *                 and when every column is decided its blocks return at once (the host
 *                 queues both and never waits). Merges in any order: the bound holds for
 *                 every merge tree, and a decided value is the correctly rounded one, so the
 *                 launch configuration may change which columns are decided, never a bit.
 *                 Unless the stats are given, it also writes statistics bounds from the same
 *                 ranges (oz_fast_kernel<true, *>; oz_range_stats: all exact mode needs), and
 *                 the stats kernel is not launched: a column it leaves needs only the dot
 *                 kernel's pass. Traffic: one read of V (k columns) and w; w is re-read per
 *                 column from L2 within a tile (k = 1: one tile per block).
 * Grid: one resident wave (or the tuning's blocks); neither it nor the block size changes a
 * result bit, which the tests check. */
#include "ozaki/ozaki_dev.cuh"

using namespace krill_oz;

namespace {

/* Rows per thread and tile of the fast kernel when k > 1: at most this many times the
 * tuning's gpu_rows (default 8 x 16 = 128: a tile of w, 128 x 256 rows = 256 KB, is read
 * from memory once and from L2 for the other columns; the warp merge per column and tile
 * costs about what 8 rows do), fewer where that would leave blocks without work. Measured
 * on an H100 (bench_solve --device gpu --maxit 200 --repro 0, GMRES(30) orthogonalization
 * seconds, poisson3d:128 / elasticity3d:160,64,64): scale 1: 0.151 / 0.150, 4: 0.134 /
 * 0.133, 16: 0.129 / 0.128. */
#ifndef KRILL_OZ_FAST_ROWS_SCALE
#define KRILL_OZ_FAST_ROWS_SCALE 16
#endif
constexpr int OZ_FAST_ROWS_SCALE = KRILL_OZ_FAST_ROWS_SCALE;
/* The fast kernel's dynamic shared memory at most: the default 48 KB a block less 1 KB for
 * its static arrays (the launcher takes fewer threads where kc sums would need more) */
constexpr size_t OZ_FAST_SMEM = 47 * 1024;
static_assert(OZ_FAST_SUMS * sizeof(krill_oz_fast) * 8 <= OZ_FAST_SMEM,
              "64 sums leave the fast kernel 8 warps a block at least");
static_assert(OZ_NV * (sizeof(unsigned long long) + sizeof(int)) + 16 <= 1024,
              "the fast kernel's static shared arrays fit the 1 KB left");

/* ---- the fast path ------------------------------------------------------------------------ */

struct oz_fast_args {
    int64_t n;
    int k;
    const double *V;
    int64_t ldv;
    const double *w;
    const double *w2;       /* oz_fast_kernel<*, 2>: the second right-hand side */
    double *results;        /* V[:, j]'w at j */
    double *results2;       /* V[:, j]'w2 at j (two right-hand sides) */
    oz_dev_ws *ws;
    int rows;               /* rows per thread per tile */
    int sqrt_mode;          /* results[0] = sqrt(x'x) where decided */
    double *stats;          /* oz_fast_kernel<true, *>: the stats of the k columns, then of w
                               (and w2) */
    int stats_w;            /* 1: w's stats too (not in sqrt_mode, where w is the column) */
    bool merged_only;       /* the merged sums into ws->merged, nothing decided */
};

/* f[q] <- f[q] + the terms x_i y[q]_i of the rows i0, i0 + blockDim, ... (< rows of them,
 * < n) by krill_oz_fast_sum, q < NR (each x_i loaded once for the NR right-hand sides), the
 * elements into the ranges xr and yr[q] (the guard and the statistics come from those), m
 * counted; 4 / NR rows' loads at a time (8 in flight with one right-hand side, 6 with
 * two) */
template <int NR>
__device__ __forceinline__ void oz_fast_rows(krill_oz_fast *f, const double *__restrict__ x,
                                             const double *const *y, int64_t i0, int rows,
                                             int64_t n, oz_range *xr, oz_range *yr)
{
    constexpr int U = 4 / NR;
    const int64_t step = blockDim.x;
    int64_t i = i0;
    int r = 0;
    for (; r + U <= rows && i + (U - 1) * step < n; r += U, i += U * step) {
        double xv[U], yv[NR][U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            xv[u] = x[i + u * step];
#pragma unroll
            for (int q = 0; q < NR; q++) yv[q][u] = y[q][i + u * step];
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
#pragma unroll
            for (int q = 0; q < NR; q++) krill_oz_fast_sum(&f[q], xv[u], yv[q][u]);
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            oz_range_add(xr, xv[u]);
#pragma unroll
            for (int q = 0; q < NR; q++) oz_range_add(&yr[q], yv[q][u]);
        }
    }
    for (; r < rows && i < n; r++, i += step) {
        const double xi = x[i];
#pragma unroll
        for (int q = 0; q < NR; q++) {
            const double yi = y[q][i];
            krill_oz_fast_sum(&f[q], xi, yi);
            oz_range_add(&yr[q], yi);
        }
        oz_range_add(xr, xi);
    }
#pragma unroll
    for (int q = 0; q < NR; q++) f[q].m += 2 * (int64_t)r;
}

/* The work items are the (tile, column) pairs, tile-major (the k items of a tile run at
 * about the same time, so w's tile is read from memory once and then from L2), taken by the
 * blocks in turn: each a thread's rows of the tile, then one warp merge per sum. NR = 2: the
 * item sums V[:, j]'w and V[:, j]'w2 from one read of the column, the sums numbered j and
 * k + j (kc = NR k of them; results2 takes the second k). Dynamic shared memory: kc x
 * (blockDim / 32) krill_oz_fast, warp v's part of sum c at c (blockDim / 32) + v. STATS: the
 * stats too, as oz_stats_kernel gathers them (w's, and w2's, with column 0's items). */
template <bool STATS, int NR>
__global__ void oz_fast_kernel(oz_fast_args A)
{
    extern __shared__ krill_oz_fast s_warp[];
    __shared__ unsigned long long s_amax[OZ_NV];
    __shared__ int s_lsb[OZ_NV];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, warps = blockDim.x >> 5;
    const int kc = NR * A.k, nv = A.k + NR * A.stats_w;
    const double *const rhs[2] = {A.w, A.w2};
    const int64_t tile_rows = (int64_t)A.rows * blockDim.x;
    const int64_t items = (A.n + tile_rows - 1) / tile_rows * A.k;
    oz_dev_ws *ws = A.ws;

    oz_pdl_wait();
    oz_pdl_release();
    for (int e = tid; e < kc * warps; e += blockDim.x) krill_oz_fast_init(&s_warp[e]);
    for (int v = tid; STATS && v < nv; v += blockDim.x) {
        s_amax[v] = 0;
        s_lsb[v] = KRILL_OZ_LSB_NONE;
    }
    __syncthreads();
    for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
        const int64_t t0 = item / A.k * tile_rows;
        const int j = (int)(item % A.k);
        const bool wst = STATS && j == 0 && A.stats_w;
        const double *col = A.V + (int64_t)j * A.ldv;
        krill_oz_fast f[NR];
        oz_range xr, yr[NR];
        oz_range_init(&xr);
#pragma unroll
        for (int r = 0; r < NR; r++) {
            krill_oz_fast_init(&f[r]);
            oz_range_init(&yr[r]);
        }
        oz_fast_rows<NR>(f, col, rhs, t0 + tid, A.rows, A.n, &xr, yr);
#pragma unroll
        for (int r = 0; r < NR; r++) {
            f[r].ok = oz_range_ok(xr, yr[r]);
            oz_fast_warp(&f[r]);
            if (lane == 0) krill_oz_fast_merge(&s_warp[(r * A.k + j) * warps + warp], &f[r]);
        }
        if (STATS) {
            unsigned long long a;
            int l;
            oz_range_stats(xr, &a, &l);
            oz_stats_warp(a, l, &s_amax[j], &s_lsb[j]);
            if (wst) {
#pragma unroll
                for (int r = 0; r < NR; r++) {
                    oz_range_stats(yr[r], &a, &l);
                    oz_stats_warp(a, l, &s_amax[A.k + r], &s_lsb[A.k + r]);
                }
            }
        }
    }
    __syncthreads();

    /* the block's part of each sum (and stats) into the workspace, then the ticket */
    for (int c = tid; c < kc; c += blockDim.x) {
        krill_oz_fast b = s_warp[c * warps];
        for (int v = 1; v < warps; v++) krill_oz_fast_merge(&b, &s_warp[c * warps + v]);
        ws->fast_part[(int64_t)blockIdx.x * kc + c] = b;
    }
    if (STATS) oz_stats_block(nv, s_amax, s_lsb, ws);
    if (!oz_fast_decide(ws, kc, A.results, A.k, A.results2, A.sqrt_mode, s_warp, A.merged_only))
        return;
    if (STATS) oz_stats_out(nv, ws, A.stats);
}

} /* namespace */

krill_status krill_oz::oz_fast_attributes(int *fast_per_sm, int *max_threads)
{
    krill_status st = KRILL_OK;
    cudaFuncAttributes attr;
    void (*const fast_kernels[4])(oz_fast_args) = {oz_fast_kernel<true, 1>,
                                                   oz_fast_kernel<false, 1>,
                                                   oz_fast_kernel<true, 2>,
                                                   oz_fast_kernel<false, 2>};
    KRILL_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        fast_per_sm, oz_fast_kernel<true, 1>, 256, 8 * sizeof(krill_oz_fast)));
    for (int i = 0; i < 4; i++) {
        KRILL_CUDA_TRY(cudaFuncGetAttributes(&attr, fast_kernels[i]));
        if (attr.maxThreadsPerBlock < *max_threads) *max_threads = attr.maxThreadsPerBlock;
    }
cleanup:
    return st;
}

/* The fast pass with one right-hand side w, or two (w2 != nullptr, results2 their sums,
 * sqrt_mode off): krill_ozaki_cuda_fast and _fast2. */
static krill_status fast_launch(krill_ctx *ctx, void *ws, const int launch[3], int64_t n, int k,
                                const double *V, int64_t ldv, const double *w, const double *w2,
                                double *results, double *results2, int sqrt_mode, double *stats,
                                int merged_only)
{
    krill_ozaki_tuning t;
    oz_fast_args a;
    size_t smem;
    int blocks, threads;
    const int nr = w2 ? 2 : 1, kc = nr * k;
    int64_t rows;
    krill_status st = KRILL_OK;
    void (*kernel)(oz_fast_args) =
        w2 ? (stats ? oz_fast_kernel<true, 2> : oz_fast_kernel<false, 2>)
           : (stats ? oz_fast_kernel<true, 1> : oz_fast_kernel<false, 1>);
    krill_ozaki_tuning_get(&t);
    threads = oz_threads(t, launch);
    if (n <= 0 || k < 1 || k > KRILL_OZ_KMAX || (w2 && sqrt_mode)) {
        st = krill_error(KRILL_ERR_INTERNAL, "krill_ozaki_cuda_fast%s: n = %lld, k = %d",
                         w2 ? "2" : "", (long long)n, k);
        goto cleanup;
    }
    if ((size_t)kc * (threads / 32) * sizeof(krill_oz_fast) > OZ_FAST_SMEM)   /* fewer warps */
        threads = (int)(OZ_FAST_SMEM / ((size_t)kc * sizeof(krill_oz_fast))) * 32;
    smem = (size_t)kc * (threads / 32) * sizeof(krill_oz_fast);
    if (w2) {   /* two sums a thread: its own wave */
        int per_sm = 0;
        int64_t b;
        KRILL_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads,
                                                                     smem));
        b = t.gpu_blocks > 0 ? t.gpu_blocks
                             : (int64_t)ctx->cuda->sm_count * (per_sm > 0 ? per_sm : 1);
        if (b > (n + threads - 1) / threads) b = (n + threads - 1) / threads;
        blocks = b > 65535 ? 65535 : (int)b;
    } else {   /* the tuning's grid, or one wave of this kernel */
        const int wave[3] = {launch[2], launch[1], launch[2]};
        blocks = oz_blocks(ctx, wave, t, threads, n);
    }
    if (blocks > OZ_FAST_SLOTS / kc) blocks = OZ_FAST_SLOTS / kc;
    if (k == 1) {   /* one tile per block: one warp merge per thread */
        const int64_t all = (int64_t)blocks * threads;
        rows = (n + all - 1) / all;
    } else {
        /* at most q items a block (the last few blocks q - 1): the block that takes one
         * item more than the others sets the kernel's time (Nsight Compute, the sweep of
         * k = 16 on an H200: 1152 items on 528 blocks, SMs active 61% of the time). At most
         * OZ_FAST_ROWS_SCALE gpu_rows rows a thread (tiles_min tiles at least), q the fewest
         * items a block that allows, then as many tiles as q items a block fill, at most. */
        const int64_t cap = (int64_t)OZ_FAST_ROWS_SCALE * t.gpu_rows * threads;
        const int64_t tiles_min = (n + cap - 1) / cap;
        const int64_t q = (tiles_min * k + blocks - 1) / blocks;
        const int64_t tiles = q * blocks / k;   /* >= tiles_min */
        rows = (n + tiles * threads - 1) / (tiles * threads);
    }
    a.rows = rows > (1 << 30) ? (1 << 30) : (int)rows;
    {   /* the items, q = ceil(items / blocks) a block at most, and no idle block */
        const int64_t tile = (int64_t)a.rows * threads;
        const int64_t items = (n + tile - 1) / tile * k;
        const int64_t q = (items + blocks - 1) / blocks;
        blocks = (int)((items + q - 1) / q);
    }
    a.n = n;
    a.k = k;
    a.V = V;
    a.ldv = ldv;
    a.w = w;
    a.w2 = w2;
    a.results = results;
    a.results2 = results2;
    a.ws = static_cast<oz_dev_ws *>(ws);
    a.sqrt_mode = sqrt_mode;
    a.stats = stats;
    a.stats_w = stats && !sqrt_mode;
    a.merged_only = merged_only != 0;
    st = oz_launch(ctx, kernel, blocks, threads, smem, a, "oz_fast_kernel");
cleanup:
    return st;
}

extern "C" krill_status krill_ozaki_cuda_fast(krill_ctx *ctx, void *ws, const int launch[3],
                                              int64_t n, int k, const double *V, int64_t ldv,
                                              const double *w, double *results, int sqrt_mode,
                                              double *stats, int merged_only)
{
    return fast_launch(ctx, ws, launch, n, k, V, ldv, w, nullptr, results, nullptr, sqrt_mode,
                       stats, merged_only);
}

extern "C" krill_status krill_ozaki_cuda_fast2(krill_ctx *ctx, void *ws, const int launch[3],
                                               int64_t n, int k, const double *V, int64_t ldv,
                                               const double *u, const double *w,
                                               double *results_u, double *results_w,
                                               double *stats, int merged_only)
{
    return fast_launch(ctx, ws, launch, n, k, V, ldv, u, w, results_u, results_w, 0, stats,
                       merged_only);
}
