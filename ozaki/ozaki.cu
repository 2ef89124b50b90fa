/* ozaki/ozaki.cu - reproducible reductions on the GPU: the stats and dot kernels, the device
 * workspace's setup (contracts in ozaki/ozaki_impl.h, the arithmetic in ozaki/ozaki_math.h,
 * the proofs in doc/reproducible.md; the fast path in ozaki/fast.cu, the fused Gram-Schmidt
 * pass in ozaki/cgs.cu, what they share in ozaki/ozaki_dev.cuh).
 *
 *   stats kernel  max |v| (as bits) and min lsb of up to KRILL_OZ_KMAX + 1 vectors: warp
 *                 shuffles, shared atomics, one global atomicMax / atomicMin per block and
 *                 vector; the last block (ticket counter) writes the stats and resets the
 *                 accumulators. Traffic: one read of each vector. Exact mode with the fast
 *                 path off, the other modes, and krill_ozaki_stats.
 *   dot kernel    the k dot products V[:, j]'w (k <= KRILL_OZ_KMAX) of one pass. Each block
 *                 derives every column's parameters from the stats in device memory (no host
 *                 round trip: the slice counts are known only there), then per column:
 *                 - register path (max(s_x, s_y) <= 8 and the exactness bound below): per
 *                   row, the digits of V_ij and w_i in registers from the chain of
 *                   krill_oz_digit and their products added into per-thread double
 *                   accumulators per diagonal c = p + q; after `rows` rows each accumulator
 *                   (an integer below 2^53: rows min(s_x, s_y) 2^(2d) <= 2^53 is the bound
 *                   checked) becomes an int64, is summed over the warp and added to the
 *                   block's shared int64 sums with one shared atomic per warp;
 *                 - general path (more slices, or tiny n where the bound fails): the windowed
 *                   digits of each element, each product added as an int64 to the block's
 *                   shared diagonal sums by a shared atomic (slow, always exact).
 *                 Block sums go to the workspace's int64 sums by global atomics; integer
 *                 sums are exact, so the order in which blocks and atomics arrive cannot
 *                 change a bit. The last block rounds each column once (krill_oz_finish:
 *                 NearSum's role, on the device), writes results[j] and resets the sums;
 *                 for a GPU rank of a communicator it leaves them unrounded in the
 *                 workspace instead (stride > 0), as the fast kernel its merged sums
 *                 (merged_only), for the host to add up over the ranks (ozaki/comm.c).
 *                 Traffic: one read of V (k columns) and w; w is re-read per column from L1
 *                 within a tile of `rows` x blockDim rows (k = 1: one tile per block).
 * Grid: one resident wave (or the tuning's blocks); neither it nor the block size changes a
 * result bit, which the tests check. */
#include "ozaki/ozaki_dev.cuh"

using namespace krill_oz;

namespace {

constexpr int OZ_REG_MAX = 8;                    /* slices per operand of the register path */
constexpr int OZ_REG_DIAG = 2 * OZ_REG_MAX - 1;  /* its diagonals */

/* COL_DONE: decided by the fast kernel, skipped */
enum { COL_ZERO, COL_SPECIAL, COL_REG, COL_GENERAL, COL_DONE };

__device__ __forceinline__ long long warp_sum_ll(long long v)
{
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(OZ_FULL, v, off);
    return v;
}

__device__ __forceinline__ int warp_or(int v)
{
    for (int off = 16; off > 0; off >>= 1) v |= __shfl_down_sync(OZ_FULL, v, off);
    return v;
}

__global__ void oz_stats_kernel(int64_t n, int k, const double *__restrict__ V, int64_t ldv,
                                const double *__restrict__ w, oz_dev_ws *ws, double *out)
{
    __shared__ unsigned long long s_amax[KRILL_OZ_KMAX + 1];
    __shared__ int s_lsb[KRILL_OZ_KMAX + 1];
    __shared__ bool is_last;
    const int nv = k + (w != nullptr);
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int v = threadIdx.x; v < nv; v += blockDim.x) {
        s_amax[v] = 0;
        s_lsb[v] = KRILL_OZ_LSB_NONE;
    }
    __syncthreads();
    for (int v = 0; v < nv; v++) {
        const double *x = v < k ? V + (int64_t)v * ldv : w;
        uint64_t amax = 0;
        int lsb = KRILL_OZ_LSB_NONE;
        for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
            krill_oz_stats_add(x[i], &amax, &lsb);
        oz_stats_warp(amax, lsb, &s_amax[v], &s_lsb[v]);
    }
    __syncthreads();
    oz_stats_block(nv, s_amax, s_lsb, ws);
    __threadfence();   /* the block's atomics are done before its ticket */
    __syncthreads();
    if (threadIdx.x == 0) is_last = atomicAdd(&ws->stats_counter, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!is_last) return;
    __threadfence();
    oz_stats_out(nv, ws, out);
    if (threadIdx.x == 0) ws->stats_counter = 0u;
}

/* ---- dot products ------------------------------------------------------------------------ */

struct oz_dot_args {
    int64_t n;
    int64_t n_all;          /* the slicing's length (a communicator's global n; else n) */
    int k;
    const double *V;
    int64_t ldv;
    const double *vstats;   /* 2 per column */
    const double *w;
    const double *wstats;
    double *results;
    oz_dev_ws *ws;
    int fast, slices;       /* the context's mode */
    int reg_max;            /* register path up to this many slices per operand */
    int rows;               /* rows per thread per tile (between flushes) */
    int sqrt_mode;          /* results[0] = sqrt(x'x) */
    const int *verdict;     /* the fast kernel's verdicts (decided columns skipped), or nullptr */
    int stride;             /* > 0: the last block leaves the sums, unrounded, in ws->part */
};

/* Register path for one column over the rows i0, i0 + blockDim, ... (< rows of them, < n):
 * digits in registers, products into per-thread double sums per diagonal, then into the
 * block's int64 sums sacc[c] (one shared atomic per warp and diagonal). SM >= max(sx, sy);
 * digits past sx / sy are 0, so their products add nothing. */
template <int SM, bool FAST>
__device__ void oz_reg_rows(const krill_oz_params &P, const double *__restrict__ x,
                            const double *__restrict__ y, int64_t i0, int rows, int64_t n,
                            unsigned long long *sacc)
{
    double acc[2 * SM - 1];
    /* the column's parameters in registers (P is in shared memory) */
    const int sx = P.sx, sy = P.sy, cut = P.cut;
    const double two_d = P.two_d, scx1 = P.scx1, scx2 = P.scx2, scy1 = P.scy1, scy2 = P.scy2;
    const int64_t step = blockDim.x;
    int64_t i = i0;
    double xn = 0.0, yn = 0.0;
#pragma unroll
    for (int c = 0; c < 2 * SM - 1; c++) acc[c] = 0.0;
    if (rows > 0 && i < n) {
        xn = x[i];
        yn = y[i];
    }
    for (int r = 0; r < rows && i < n; r++, i += step) {
        const double xv = xn, yv = yn;
        if (r + 1 < rows && i + step < n) {   /* the next row's loads in flight meanwhile */
            xn = x[i + step];
            yn = y[i + step];
        }
        double rx = __dmul_rn(__dmul_rn(xv, scx1), scx2);
        double ry = __dmul_rn(__dmul_rn(yv, scy1), scy2);
        double dx[SM], dy[SM];
#pragma unroll
        for (int a = 0; a < SM; a++) dx[a] = a < sx ? krill_oz_digit(&rx, two_d) : 0.0;
#pragma unroll
        for (int b = 0; b < SM; b++) dy[b] = b < sy ? krill_oz_digit(&ry, two_d) : 0.0;
#pragma unroll
        for (int a = 0; a < SM; a++) {
            if (a < sx) {
#pragma unroll
                for (int b = 0; b < SM; b++)
                    if (!FAST || a + b <= cut) acc[a + b] = __fma_rn(dx[a], dy[b], acc[a + b]);
            }
        }
    }
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int c = 0; c < 2 * SM - 1; c++) {
        const long long v = warp_sum_ll(__double2ll_rn(acc[c]));
        if (lane == 0 && v != 0) atomicAdd(&sacc[c], (unsigned long long)v);
    }
}

template <bool FAST>
__device__ void oz_reg_dispatch(int sm, const krill_oz_params &P, const double *x,
                                const double *y, int64_t i0, int rows, int64_t n,
                                unsigned long long *sacc)
{
    switch (sm) {
    case 1: oz_reg_rows<1, FAST>(P, x, y, i0, rows, n, sacc); break;
    case 2: oz_reg_rows<2, FAST>(P, x, y, i0, rows, n, sacc); break;
    case 3: oz_reg_rows<3, FAST>(P, x, y, i0, rows, n, sacc); break;
    case 4: oz_reg_rows<4, FAST>(P, x, y, i0, rows, n, sacc); break;
    case 5: oz_reg_rows<5, FAST>(P, x, y, i0, rows, n, sacc); break;
    case 6: oz_reg_rows<6, FAST>(P, x, y, i0, rows, n, sacc); break;
    default: oz_reg_rows<8, FAST>(P, x, y, i0, rows, n, sacc); break;
    }
}

/* the register body for s slices: the smallest of 1..6, 8 that is >= s */
__device__ __forceinline__ int oz_body(int s) { return s <= 6 ? s : 8; }

/* General path for one element: windowed digits, each product an int64 shared atomic. */
__device__ void oz_gen_element(const krill_oz_params &P, double xv, double yv,
                               unsigned long long *sgen)
{
    double dx[KRILL_OZ_MAX_WINDOW], dy[KRILL_OZ_MAX_WINDOW];
    const int px = krill_oz_window(xv, P.kx, P.d, P.sx, P.window, P.two_d, dx);
    if (px < 0) return;
    const int py = krill_oz_window(yv, P.ky, P.d, P.sy, P.window, P.two_d, dy);
    if (py < 0) return;
    for (int a = 0; a < P.window; a++) {
        if (dx[a] == 0.0) continue;
        for (int b = 0; b < P.window && px + a + py + b <= P.cut; b++) {
            const long long v = __double2ll_rn(__dmul_rn(dx[a], dy[b]));
            if (v != 0) atomicAdd(&sgen[px + a + py + b], (unsigned long long)v);
        }
    }
}

__global__ void oz_dot_kernel(oz_dot_args A)
{
    __shared__ krill_oz_params s_p[KRILL_OZ_KMAX];
    __shared__ int s_kind[KRILL_OZ_KMAX], s_body[KRILL_OZ_KMAX], s_flags[KRILL_OZ_KMAX];
    __shared__ unsigned long long s_acc[KRILL_OZ_KMAX][OZ_REG_DIAG + 1];
    __shared__ unsigned long long s_gen[OZ_DIAG_PAD];
    __shared__ bool is_last;
    const int tid = threadIdx.x, lane = tid & 31;
    const int64_t tile_rows = (int64_t)A.rows * blockDim.x;
    const int64_t tile_stride = tile_rows * gridDim.x;
    oz_dev_ws *ws = A.ws;
    oz_pdl_wait();
    oz_pdl_release();
    if (A.verdict) {   /* every block alike: when all are decided, no ticket is taken */
        int left = 0;
        for (int j = 0; j < A.k; j++) left += !A.verdict[j];
        if (left == 0) return;
    }

    /* every column's parameters, from the stats in device memory */
    for (int j = tid; j < A.k; j += blockDim.x) {
        krill_oz_params &P = s_p[j];
        if (A.verdict && A.verdict[j]) {
            s_kind[j] = COL_DONE;
            s_flags[j] = 0;
            continue;
        }
        krill_oz_params_make(A.n_all, A.vstats + 2 * j, A.wstats, A.fast, A.slices, &P);
        int kind = COL_GENERAL;
        if (P.state == KRILL_OZ_ZERO) {
            kind = COL_ZERO;
        } else if (P.state == KRILL_OZ_SPECIAL) {
            kind = COL_SPECIAL;
        } else {
            const int smax = P.sx > P.sy ? P.sx : P.sy, smin = P.sx < P.sy ? P.sx : P.sy;
            /* per-thread double sums stay exact integers: rows * smin * 2^(2d) <= 2^53 */
            if (smax <= A.reg_max && (int64_t)A.rows * smin <= ((int64_t)1 << (2 * P.rho - 53)))
                kind = COL_REG;
            s_body[j] = oz_body(smax);
        }
        s_kind[j] = kind;
        s_flags[j] = 0;
    }
    for (int e = tid; e < A.k * (OZ_REG_DIAG + 1); e += blockDim.x)
        s_acc[e / (OZ_REG_DIAG + 1)][e % (OZ_REG_DIAG + 1)] = 0ull;
    for (int c = tid; c < OZ_DIAG_PAD; c += blockDim.x) s_gen[c] = 0ull;
    __syncthreads();

    for (int j = 0; j < A.k; j++) {
        const int kind = s_kind[j];
        const double *x = A.V + (int64_t)j * A.ldv;
        if (kind == COL_SPECIAL) {   /* Inf or NaN somewhere: only the flags matter */
            int f = 0;
            for (int64_t t0 = (int64_t)blockIdx.x * tile_rows; t0 < A.n; t0 += tile_stride)
                for (int r = 0; r < A.rows; r++) {
                    const int64_t i = t0 + (int64_t)r * blockDim.x + tid;
                    if (i < A.n) f |= krill_oz_special(x[i], A.w[i]);
                }
            f = warp_or(f);
            if (lane == 0 && f) atomicOr(&s_flags[j], f);
        } else if (kind == COL_GENERAL) {
            const krill_oz_params &P = s_p[j];
            for (int64_t t0 = (int64_t)blockIdx.x * tile_rows; t0 < A.n; t0 += tile_stride)
                for (int r = 0; r < A.rows; r++) {
                    const int64_t i = t0 + (int64_t)r * blockDim.x + tid;
                    if (i < A.n) oz_gen_element(P, x[i], A.w[i], s_gen);
                }
            __syncthreads();
            for (int c = tid; c < P.ndiag; c += blockDim.x) {
                if (s_gen[c]) atomicAdd(&ws->acc[j][c], s_gen[c]);
                s_gen[c] = 0ull;
            }
            __syncthreads();
        }
    }

    /* register-path columns, tile by tile: w's tile stays in L1 across the columns */
    for (int64_t t0 = (int64_t)blockIdx.x * tile_rows; t0 < A.n; t0 += tile_stride)
        for (int j = 0; j < A.k; j++) {
            if (s_kind[j] != COL_REG) continue;
            const double *x = A.V + (int64_t)j * A.ldv;
            if (A.fast)
                oz_reg_dispatch<true>(s_body[j], s_p[j], x, A.w, t0 + tid, A.rows, A.n, s_acc[j]);
            else
                oz_reg_dispatch<false>(s_body[j], s_p[j], x, A.w, t0 + tid, A.rows, A.n, s_acc[j]);
        }
    __syncthreads();

    /* the block's sums and flags into the workspace, then the ticket */
    for (int e = tid; e < A.k * (OZ_REG_DIAG + 1); e += blockDim.x) {
        const int j = e / (OZ_REG_DIAG + 1), c = e % (OZ_REG_DIAG + 1);
        if (s_kind[j] == COL_REG && c < s_p[j].ndiag && s_acc[j][c])
            atomicAdd(&ws->acc[j][c], s_acc[j][c]);
    }
    for (int j = tid; j < A.k; j += blockDim.x)
        if (s_flags[j]) atomicOr(&ws->flags[j], s_flags[j]);
    __threadfence();
    __syncthreads();
    if (tid == 0) is_last = atomicAdd(&ws->dot_counter, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!is_last) return;
    __threadfence();

    /* last block: round every column once, reset the sums */
    for (int j = 0; j < A.k; j++) {
        const krill_oz_params &P = s_p[j];
        const int run = s_kind[j] == COL_REG || s_kind[j] == COL_GENERAL;
        if (s_kind[j] == COL_DONE) continue;   /* shared: the whole block skips it */
        if (run)
            for (int c = tid; c < P.ndiag; c += blockDim.x)
                s_gen[c] = atomicExch(&ws->acc[j][c], 0ull);
        __syncthreads();
        if (A.stride > 0) {   /* the rank's partials: the host adds every rank's, then rounds */
            for (int c = tid; c < A.stride; c += blockDim.x)
                ws->part[j * A.stride + c] = run && c < P.ndiag ? (long long)s_gen[c] : 0ll;
            if (tid == 0)   /* a stride below the column's diagonals (never: the host's
                               parameters are these) would show as NaN, not as wrong bits */
                ws->part[A.k * A.stride + j] = atomicExch(&ws->flags[j], 0) |
                                               (run && P.ndiag > A.stride ? KRILL_OZ_NAN : 0);
        } else if (tid == 0) {
            const int flags = atomicExch(&ws->flags[j], 0);
            A.results[j] = krill_oz_finish(&P, reinterpret_cast<int64_t *>(s_gen), flags,
                                           A.sqrt_mode);
        }
        __syncthreads();
    }
    if (tid == 0) ws->dot_counter = 0u;
}

} /* namespace */

extern "C" krill_status krill_ozaki_cuda_init(krill_ctx *ctx, void **ws, int launch[3])
{
    krill_status st = KRILL_OK;
    void *dev = NULL;
    cudaFuncAttributes dot_attr, stats_attr;
    int per_sm = 0, fast_per_sm = 0, most;
    *ws = NULL;
    KRILL_TRY(krill_mem_alloc(ctx, &dev, sizeof(oz_dev_ws),
                              "the reproducible mode's GPU workspace"));
    KRILL_TRY(krill_cuda_memset0(ctx, dev, sizeof(oz_dev_ws)));
    KRILL_CUDA_TRY(cudaMemsetAsync(static_cast<char *>(dev) + offsetof(oz_dev_ws, lsb_min), 0x7f,
                                   sizeof(((oz_dev_ws *)0)->lsb_min), krill_cuda_stream(ctx)));
    KRILL_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, oz_dot_kernel, 256, 0));
    KRILL_CUDA_TRY(cudaFuncGetAttributes(&dot_attr, oz_dot_kernel));
    KRILL_CUDA_TRY(cudaFuncGetAttributes(&stats_attr, oz_stats_kernel));
    most = dot_attr.maxThreadsPerBlock < stats_attr.maxThreadsPerBlock
               ? dot_attr.maxThreadsPerBlock : stats_attr.maxThreadsPerBlock;
    KRILL_TRY(oz_fast_attributes(&fast_per_sm, &most));
    KRILL_TRY(oz_cgs_attributes(&most));
    *ws = dev;
    dev = NULL;
    launch[0] = per_sm;
    launch[1] = most / 32 * 32;
    launch[2] = fast_per_sm;
cleanup:
    krill_mem_free(ctx, dev);
    return st;
}

extern "C" void krill_ozaki_cuda_fini(krill_ctx *ctx, void *ws)
{
    if (!ws) return;
    (void)cudaSetDevice(ctx->device_id);
    (void)cudaStreamSynchronize(krill_cuda_stream(ctx));   /* kernels may still use it */
    krill_mem_free(ctx, ws);
}

extern "C" double *krill_ozaki_cuda_stats_area(void *ws)
{
    return static_cast<oz_dev_ws *>(ws)->stats;
}

extern "C" int *krill_ozaki_cuda_verdict_area(void *ws)
{
    return static_cast<oz_dev_ws *>(ws)->verdict;
}

extern "C" krill_oz_fast *krill_ozaki_cuda_merged_area(void *ws)
{
    return static_cast<oz_dev_ws *>(ws)->merged;
}

extern "C" int64_t *krill_ozaki_cuda_part_area(void *ws)
{
    static_assert(sizeof(long long) == sizeof(int64_t), "int64 partials");
    return reinterpret_cast<int64_t *>(static_cast<oz_dev_ws *>(ws)->part);
}

extern "C" krill_status krill_ozaki_cuda_stats(krill_ctx *ctx, void *ws, const int launch[3],
                                               int64_t n, int k, const double *V, int64_t ldv,
                                               const double *w, double *out)
{
    krill_ozaki_tuning t;
    int threads;
    krill_ozaki_tuning_get(&t);
    threads = oz_threads(t, launch);
    if (n <= 0 || k < 1 || k > KRILL_OZ_KMAX)
        return krill_error(KRILL_ERR_INTERNAL, "krill_ozaki_cuda_stats: n = %lld, k = %d",
                           (long long)n, k);
    oz_stats_kernel<<<oz_blocks(ctx, launch, t, threads, n), threads, 0,
                      krill_cuda_stream(ctx)>>>(n, k, V, ldv, w, static_cast<oz_dev_ws *>(ws),
                                                out);
    return krill_cuda_check_launch("oz_stats_kernel");
}

extern "C" krill_status krill_ozaki_cuda_mdot(krill_ctx *ctx, void *ws, const int launch[3],
                                              int64_t n, int64_t n_all, int k, const double *V,
                                              int64_t ldv, const double *vstats, const double *w,
                                              const double *wstats, double *results,
                                              int sqrt_mode, int verdict_base, int stride)
{
    krill_ozaki_tuning t;
    oz_dot_args a;
    int blocks, threads;
    krill_ozaki_tuning_get(&t);
    threads = oz_threads(t, launch);
    if (n <= 0 || n_all < n || k < 1 || k > KRILL_OZ_KMAX || stride < 0 || stride > OZ_DIAG_PAD ||
        verdict_base + k > OZ_FAST_SUMS)
        return krill_error(KRILL_ERR_INTERNAL, "krill_ozaki_cuda_mdot: n = %lld of %lld, k = %d, "
                           "stride %d", (long long)n, (long long)n_all, k, stride);
    blocks = oz_blocks(ctx, launch, t, threads, n);
    a.n = n;
    a.n_all = n_all;
    a.stride = stride;
    a.k = k;
    a.V = V;
    a.ldv = ldv;
    a.vstats = vstats;
    a.w = w;
    a.wstats = wstats;
    a.results = results;
    a.ws = static_cast<oz_dev_ws *>(ws);
    a.fast = ctx->repro == KRILL_REPRO_OZAKI_FAST;
    a.slices = ctx->repro == KRILL_REPRO_OFF ? 0 : ctx->repro_slices;
    a.reg_max = t.gpu_reg_slices;
    a.sqrt_mode = sqrt_mode;
    a.verdict = verdict_base >= 0 ? a.ws->verdict + verdict_base : nullptr;
    if (k == 1) {   /* one tile per block: one flush per thread */
        const int64_t all = (int64_t)blocks * threads;
        const int64_t rows = (n + all - 1) / all;
        a.rows = rows > (1 << 30) ? (1 << 30) : (int)rows;
    } else {
        a.rows = t.gpu_rows;
    }
    {   /* no more blocks than tiles */
        const int64_t tile = (int64_t)a.rows * threads;
        const int64_t tiles = (n + tile - 1) / tile;
        if (tiles < blocks) blocks = (int)tiles;
    }
    return oz_launch(ctx, oz_dot_kernel, blocks, threads, 0, a, "oz_dot_kernel");
}
