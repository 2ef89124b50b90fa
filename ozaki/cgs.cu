/* ozaki/cgs.cu - the fused Gram-Schmidt pass of exact mode on the GPU (contracts in
 * ozaki/ozaki_impl.h; the workspace, the sums' merges and decision, the ranges and the launch
 * helpers in ozaki/ozaki_dev.cuh).
 *
 *   cgs kernel    krill_ozaki_cgs_pass: a Gram-Schmidt pass in one kernel, w -= V h per row
 *                 (phase A, V's row and the new w_i into shared memory) and the fast path's
 *                 sums of V'w and w'w from shared memory (phase B), then as the fast kernel;
 *                 the dot kernel follows for undecided columns. Traffic: the plain pass's.
 * Grid: one resident wave (or the tuning's blocks); neither it nor the block size changes a
 * result bit, which the tests check. */
#include "ozaki/ozaki_dev.cuh"

using namespace krill_oz;

namespace {

/* The fused Gram-Schmidt kernel's shared memory limit: the tile of 33 columns at 256
 * threads (within sm_80's and sm_90's opt-in maximum). */
constexpr size_t OZ_CGS_SMEM = (KRILL_OZ_KMAX + 1) * 256 * sizeof(double);

struct oz_cgs_args {
    int64_t n;
    int k;                  /* columns of V */
    const double *V;
    int64_t ldv;
    const double *h;        /* w -= V h first, or nullptr */
    double *w;
    int kd;                 /* dot columns: V's first kd (0 or k) against w */
    int ss;                 /* 1: w'w too, as dot column kd */
    double *results;        /* kd results */
    double *ss_result;      /* w'w */
    oz_dev_ws *ws;
    double *stats;          /* the stats of V's first kd columns, then w's */
};

/* A tile is blockDim rows. Phase A, a thread per row: w_i <- w_i + (-h_j) v_ij for
 * j = 0..k-1 (krill_cuda_gemv_n_repro's operations, alpha = -1), written back; V's row (its
 * first kd columns) and the new w_i into shared memory, w_i into the thread's range. Phase
 * B: the kc = kd + ss dot columns share the threads, P = blockDim / kc each (thread t:
 * column t / P, rows t % P + P r of the tile), each thread's compensated sum
 * (krill_oz_fast_sum, no guard) and its column's range running over all its tiles. At the
 * end the P sums of a column are merged by a tree in shared memory, the guard is decided
 * per column from the block's ranges (oz_range_ok) and oz_fast_decide finishes as in the
 * fast kernel; the ranges also give the statistics bounds an undecided column's exact path
 * uses (oz_range_stats). Per term: the sum's 24 FP64 operations, two shared loads and the
 * range's 6 integer steps (the fast kernel's guard and statistics take about 50). Dynamic
 * shared memory: max((kd + 1) blockDim doubles, blockDim states). Traffic: k + 1 reads and
 * 1 write (h given; else kd + 1 reads), the plain CGS pass's. */
__global__ void oz_cgs_kernel(oz_cgs_args A)
{
    extern __shared__ double s_tile[];   /* V's tile, column-major (kd x T), then w's (T) */
    __shared__ double s_h[KRILL_OZ_KMAX];
    __shared__ oz_range s_xr[KRILL_OZ_KMAX + 1], s_yr;
    const int T = blockDim.x, tid = threadIdx.x, kc = A.kd + A.ss;
    const int P = kc ? T / kc : 1, col = tid / P, part = tid % P;
    const bool active = col < kc;
    const int kload = A.h ? A.k : A.kd;
    double *s_w = s_tile + (int64_t)A.kd * T;
    const double *s_x = col < A.kd ? s_tile + (int64_t)col * T : s_w;
    krill_oz_fast f;
    oz_range xr, yr;
    int terms = 0;
    oz_dev_ws *ws = A.ws;

    oz_pdl_wait();
    oz_pdl_release();
    krill_oz_fast_init(&f);
    oz_range_init(&xr);
    oz_range_init(&yr);
    for (int j = tid; A.h && j < A.k; j += T) s_h[j] = KRILL_OZ_MUL(-1.0, A.h[j]);
    for (int j = tid; j <= kc; j += T) oz_range_init(j < kc ? &s_xr[j] : &s_yr);
    __syncthreads();
    for (int64_t t0 = (int64_t)blockIdx.x * T; t0 < A.n; t0 += (int64_t)gridDim.x * T) {
        const int64_t i = t0 + tid;
        const int rows = A.n - t0 < T ? (int)(A.n - t0) : T;
        if (i < A.n) {
            const double *v = A.V + i;
            double wi = A.w[i];
            int j = 0;
            for (; j + 4 <= kload; j += 4) {   /* four loads in flight */
                const double v0 = v[j * A.ldv], v1 = v[(j + 1) * A.ldv],
                             v2 = v[(j + 2) * A.ldv], v3 = v[(j + 3) * A.ldv];
                if (j < A.kd) {
                    s_tile[j * T + tid] = v0;
                    s_tile[(j + 1) * T + tid] = v1;
                    s_tile[(j + 2) * T + tid] = v2;
                    s_tile[(j + 3) * T + tid] = v3;
                }
                if (A.h) {
                    wi = KRILL_OZ_ADD(wi, KRILL_OZ_MUL(s_h[j], v0));
                    wi = KRILL_OZ_ADD(wi, KRILL_OZ_MUL(s_h[j + 1], v1));
                    wi = KRILL_OZ_ADD(wi, KRILL_OZ_MUL(s_h[j + 2], v2));
                    wi = KRILL_OZ_ADD(wi, KRILL_OZ_MUL(s_h[j + 3], v3));
                }
            }
            for (; j < kload; j++) {
                const double v0 = v[j * A.ldv];
                if (j < A.kd) s_tile[j * T + tid] = v0;
                if (A.h) wi = KRILL_OZ_ADD(wi, KRILL_OZ_MUL(s_h[j], v0));
            }
            if (A.h) A.w[i] = wi;
            s_w[tid] = wi;
            oz_range_add(&yr, wi);
        }
        __syncthreads();
        for (int r = part; active && r < rows; r += P) {
            const double x = s_x[r];
            krill_oz_fast_sum(&f, x, s_w[r]);
            oz_range_add(&xr, x);
            terms++;
        }
        __syncthreads();
    }

    /* the block's ranges by shared atomics; each column's P sums by a tree (part + s into
     * part) */
    krill_oz_fast *s_part = reinterpret_cast<krill_oz_fast *>(s_tile);
    f.m = 2 * (int64_t)terms;
    s_part[tid] = f;
    if (active) {
        atomicMax(&s_xr[col].max, xr.max);
        atomicMin(&s_xr[col].min1, xr.min1);
    }
    atomicMax(&s_yr.max, yr.max);
    atomicMin(&s_yr.min1, yr.min1);
    __syncthreads();
    for (int s = 1; s < P; s <<= 1) {
        if (active && part % (2 * s) == 0 && part + s < P) {
            krill_oz_fast_merge(&f, &s_part[tid + s]);
            s_part[tid] = f;
        }
        __syncthreads();
    }
    /* the block's sums, their guard decided from the ranges, and the stats bounds of the kd
     * columns and of w */
    for (int j = tid; j < kc; j += T) {
        krill_oz_fast b = s_part[j * P];
        b.ok = oz_range_ok(s_xr[j], s_yr);
        ws->fast_part[(int64_t)blockIdx.x * kc + j] = b;
    }
    for (int v = tid; kc && v <= A.kd; v += T) {
        unsigned long long amax;
        int lsb;
        oz_range_stats(v < A.kd ? s_xr[v] : s_yr, &amax, &lsb);
        atomicMax(&ws->amax_bits[v], amax);
        atomicMin(&ws->lsb_min[v], lsb);
    }
    __syncthreads();   /* s_part is the last block's scratch */
    if (kc && oz_fast_decide(ws, kc, A.results, A.kd, A.ss_result, 0, s_part, false))
        oz_stats_out(A.kd + 1, ws, A.stats);
}

} /* namespace */

krill_status krill_oz::oz_cgs_attributes(int *max_threads)
{
    krill_status st = KRILL_OK;
    cudaFuncAttributes attr;
    KRILL_CUDA_TRY(cudaFuncSetAttribute(oz_cgs_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        OZ_CGS_SMEM));
    KRILL_CUDA_TRY(cudaFuncGetAttributes(&attr, oz_cgs_kernel));
    if (attr.maxThreadsPerBlock < *max_threads) *max_threads = attr.maxThreadsPerBlock;
cleanup:
    return st;
}

extern "C" krill_status krill_ozaki_cuda_cgs(krill_ctx *ctx, void *ws, const int launch[3],
                                             int64_t n, int k, const double *V, int64_t ldv,
                                             const double *h, double *w, double *results,
                                             double *ss_result, double *stats)
{
    krill_ozaki_tuning t;
    oz_cgs_args a;
    size_t smem, tile_bytes;
    int threads, per_sm = 0, kc;
    int64_t blocks;
    krill_status st = KRILL_OK;
    krill_ozaki_tuning_get(&t);
    if (n <= 0 || k < 0 || k > KRILL_OZ_KMAX || (results && k + (ss_result != nullptr) >
                                                               KRILL_OZ_KMAX))
        return krill_error(KRILL_ERR_INTERNAL, "krill_ozaki_cuda_cgs: n = %lld, k = %d",
                           (long long)n, k);
    a.n = n;
    a.k = k;
    a.V = V;
    a.ldv = ldv;
    a.h = h;
    a.w = w;
    a.kd = results ? k : 0;
    a.ss = ss_result != nullptr;
    a.results = results;
    a.ss_result = ss_result;
    a.ws = static_cast<oz_dev_ws *>(ws);
    a.stats = stats;
    kc = a.kd + a.ss;
    /* threads: the tuning's, as many as the shared tile allows */
    threads = oz_threads(t, launch);
    tile_bytes = (size_t)(a.kd + 1) * sizeof(double);
    if (tile_bytes < sizeof(krill_oz_fast)) tile_bytes = sizeof(krill_oz_fast);
    if ((size_t)threads * tile_bytes > OZ_CGS_SMEM)
        threads = (int)(OZ_CGS_SMEM / tile_bytes) / 32 * 32;
    smem = (size_t)threads * tile_bytes;
    KRILL_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, oz_cgs_kernel, threads,
                                                                 smem));
    blocks = t.gpu_blocks > 0 ? t.gpu_blocks
                              : (int64_t)ctx->cuda->sm_count * (per_sm > 0 ? per_sm : 1);
    if (blocks > (n + threads - 1) / threads) blocks = (n + threads - 1) / threads;
    if (kc > 0 && blocks > OZ_FAST_SLOTS / kc) blocks = OZ_FAST_SLOTS / kc;
    if (blocks > 65535) blocks = 65535;
    st = oz_launch(ctx, oz_cgs_kernel, (int)blocks, threads, smem, a, "oz_cgs_kernel");
cleanup:
    return st;
}
