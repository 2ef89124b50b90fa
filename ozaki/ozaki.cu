/* ozaki/ozaki.cu - reproducible reductions on the GPU (contracts in ozaki/ozaki_impl.h, the
 * arithmetic in ozaki/ozaki_math.h, the proofs in doc/reproducible.md).
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
 *   cgs kernel    krill_ozaki_cgs_pass: a Gram-Schmidt pass in one kernel, w -= V h per row
 *                 (phase A, V's row and the new w_i into shared memory) and the fast path's
 *                 sums of V'w and w'w from shared memory (phase B), then as the fast kernel;
 *                 the dot kernel follows for undecided columns. Traffic: the plain pass's.
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
#include <cstddef>

#include "kernels/kernels_impl.cuh"
#include "ozaki/ozaki_impl.h"

namespace {

constexpr int OZ_REG_MAX = 8;                    /* slices per operand of the register path */
constexpr int OZ_REG_DIAG = 2 * OZ_REG_MAX - 1;  /* its diagonals */
constexpr int OZ_DIAG_PAD = 528;                 /* >= KRILL_OZ_MAX_DIAG */
constexpr int OZ_LSB_INIT = 0x7f7f7f7f;          /* the lsb accumulators' reset value (memset) */
constexpr unsigned int OZ_FULL = 0xffffffffu;
/* The fast kernel's per-block sums in the workspace (3 MB): its grid has at most
 * OZ_FAST_SLOTS / kc blocks for kc sums (65536 for a dot product, 1024 for 32 columns
 * against two right-hand sides: above a wave of 256-thread blocks on an H100 or H200). */
constexpr int OZ_FAST_SLOTS = 65536;
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
/* The fused Gram-Schmidt kernel's shared memory limit: the tile of 33 columns at 256
 * threads (within sm_80's and sm_90's opt-in maximum). */
constexpr size_t OZ_CGS_SMEM = (KRILL_OZ_KMAX + 1) * 256 * sizeof(double);
static_assert(OZ_DIAG_PAD >= KRILL_OZ_MAX_DIAG, "diagonal sums must fit");
static_assert(OZ_LSB_INIT > KRILL_OZ_LSB_NONE, "reset value above every lsb");
/* The fast kernel's sums: k columns against one right-hand side or two (kc = k or 2 k, at
 * most OZ_FAST_SUMS), and the stats of the k columns and the right-hand sides. */
constexpr int OZ_FAST_SUMS = 2 * KRILL_OZ_KMAX;
constexpr int OZ_NV = KRILL_OZ_KMAX + 2;
/* Its dynamic shared memory at most: the default 48 KB a block less 1 KB for its static
 * arrays (the launcher takes fewer threads where kc sums would need more) */
constexpr size_t OZ_FAST_SMEM = 47 * 1024;
static_assert(OZ_FAST_SUMS * sizeof(krill_oz_fast) * 8 <= OZ_FAST_SMEM,
              "64 sums leave the fast kernel 8 warps a block at least");
static_assert(OZ_NV * (sizeof(unsigned long long) + sizeof(int)) + 16 <= 1024,
              "the fast kernel's static shared arrays fit the 1 KB left");

/* The device workspace. Accumulators are at their reset values between kernels: the last
 * block of every kernel puts back what it used (atomicExch reads and resets at once). */
struct oz_dev_ws {
    unsigned int stats_counter;                         /* finished blocks, stats kernel */
    unsigned int dot_counter;                           /* finished blocks, dot kernel */
    int flags[KRILL_OZ_KMAX];                           /* special-value flags per column */
    int lsb_min[OZ_NV];                                 /* reset OZ_LSB_INIT */
    unsigned long long amax_bits[OZ_NV];                /* reset 0 */
    double stats[2 * OZ_NV];                            /* stats computed for a dot itself */
    unsigned long long acc[KRILL_OZ_KMAX][OZ_DIAG_PAD]; /* diagonal sums (int64 bits), reset 0 */
    unsigned int fast_counter;                          /* finished blocks, fast kernel */
    int verdict[OZ_FAST_SUMS];                          /* last fast pass: 1 = decided */
    krill_oz_fast fast_part[OZ_FAST_SLOTS];             /* block b's sum c: b kc + c */
    /* A GPU rank of a communicator (ozaki/comm.c) takes the local partials to the host: */
    krill_oz_fast merged[KRILL_OZ_KMAX];                /* the fast pass's merged sums */
    long long part[KRILL_OZ_KMAX * (OZ_DIAG_PAD + 1)];  /* the dot pass's diagonal sums (column
                                                           j at j stride), then k flags */
};

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

/* Programmatic dependent launch (sm_90). The fast, fused and products kernels are launched
 * so (oz_launch) and begin with oz_pdl_wait: until the kernel before them on the stream has
 * ended and its writes are visible, they touch no memory. Then oz_pdl_release lets the
 * kernel after them be scheduled before they end. So the products kernel that follows a fast
 * pass (and returns at once when the pass decided every column) is on the SMs when the pass
 * ends, instead of a launch later, and the next dot's fast pass likewise. Before sm_90 both
 * are no-ops and the launches ordinary. */
__device__ __forceinline__ void oz_pdl_release()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ void oz_pdl_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* ---- stats ------------------------------------------------------------------------------ */

/* The warp's max of a (|v| bits) and min of lsb into the block's shared s_amax / s_lsb
 * (lane 0; every lane takes part in the shuffles). */
__device__ __forceinline__ void oz_stats_warp(unsigned long long a, int lsb,
                                              unsigned long long *s_amax, int *s_lsb)
{
    for (int off = 16; off > 0; off >>= 1) {
        const unsigned long long a2 = __shfl_down_sync(OZ_FULL, a, off);
        const int l2 = __shfl_down_sync(OZ_FULL, lsb, off);
        a = a2 > a ? a2 : a;
        lsb = l2 < lsb ? l2 : lsb;
    }
    if ((threadIdx.x & 31) == 0) {
        atomicMax(s_amax, a);
        atomicMin(s_lsb, lsb);
    }
}

/* The block's shared stats of nv vectors into the workspace's accumulators (before the
 * block's ticket). */
__device__ __forceinline__ void oz_stats_block(int nv, const unsigned long long *s_amax,
                                               const int *s_lsb, oz_dev_ws *ws)
{
    for (int v = threadIdx.x; v < nv; v += blockDim.x) {
        atomicMax(&ws->amax_bits[v], s_amax[v]);
        atomicMin(&ws->lsb_min[v], s_lsb[v]);
    }
}

/* The last block: the stats of nv vectors into out[2 v], out[2 v + 1], accumulators reset. */
__device__ __forceinline__ void oz_stats_out(int nv, oz_dev_ws *ws, double *out)
{
    for (int v = threadIdx.x; v < nv; v += blockDim.x) {
        const unsigned long long a = atomicExch(&ws->amax_bits[v], 0ull);
        const int l = atomicExch(&ws->lsb_min[v], OZ_LSB_INIT);
        out[2 * v] = __longlong_as_double((long long)a);
        out[2 * v + 1] = l < KRILL_OZ_LSB_NONE ? (double)l : (double)KRILL_OZ_LSB_NONE;
    }
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

/* f <- f merged with the state of lane + off (every lane of the warp takes part) */
__device__ __forceinline__ void oz_fast_shfl_merge(krill_oz_fast *f, int off)
{
    krill_oz_fast g;
    g.hi = __shfl_down_sync(OZ_FULL, f->hi, off);
    g.mid = __shfl_down_sync(OZ_FULL, f->mid, off);
    g.lo = __shfl_down_sync(OZ_FULL, f->lo, off);
    g.t = __shfl_down_sync(OZ_FULL, f->t, off);
    g.m = __shfl_down_sync(OZ_FULL, (long long)f->m, off);
    g.ok = __shfl_down_sync(OZ_FULL, f->ok, off);
    krill_oz_fast_merge(f, &g);
}

/* lane 0's f <- the merge of the warp's 32 states (a tree: lane l merges lane l + off) */
__device__ __forceinline__ void oz_fast_warp(krill_oz_fast *f)
{
    for (int off = 16; off > 0; off >>= 1) oz_fast_shfl_merge(f, off);
}

/* a block's sum from the workspace, through L2 (written by other blocks of this grid) */
__device__ __forceinline__ krill_oz_fast oz_fast_load(const krill_oz_fast *p)
{
    krill_oz_fast g;
    g.hi = __ldcg(&p->hi);
    g.mid = __ldcg(&p->mid);
    g.lo = __ldcg(&p->lo);
    g.t = __ldcg(&p->t);
    g.m = __ldcg(reinterpret_cast<const long long *>(&p->m));
    g.ok = __ldcg(&p->ok);
    return g;
}

/* After the block has written its sum of each of the kc columns to ws->fast_part (slot
 * blockIdx.x kc + j) and its stats atomics: the ticket. The last block merges the blocks'
 * sums per column (strided over its threads, then warps, then the column's group of warps),
 * decides each column (krill_oz_fast_result) and writes its result (column j < kres to
 * results[j], the others to extra[j - kres]) where decided, and the verdicts; it resets
 * the counter and returns true (it may then write the stats). merged_only: the merged sums
 * go to ws->merged and nothing is decided (verdicts 0; a communicator's ranks decide on the
 * host from every rank's sums, ozaki/comm.c). Every thread calls this; scratch: blockDim / 32
 * states of shared memory the block no longer needs. */
__device__ bool oz_fast_decide(oz_dev_ws *ws, int kc, double *results, int kres, double *extra,
                               int sqrt_mode, krill_oz_fast *scratch, bool merged_only)
{
    __shared__ bool is_last;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, warps = blockDim.x >> 5;
    __threadfence();
    __syncthreads();
    if (tid == 0) is_last = atomicAdd(&ws->fast_counter, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!is_last) return false;
    __threadfence();

    /* the warps in groups of `per` (all of them for one column, one each for kc >= warps),
     * group q taking columns q, q + groups, ...: its threads merge the blocks' sums
     * (strided), each warp its lanes', the group's first warp the group's warps'; that
     * warp's lane 0 decides and writes */
    const int per = warps >= kc ? warps / kc : 1, groups = warps / per;
    const int q = warp / per, g = warp % per;
    for (int j0 = 0; j0 < kc; j0 += groups) {
        const int j = j0 + q;
        const bool mine = q < groups && j < kc;
        krill_oz_fast f;
        krill_oz_fast_init(&f);
        for (int b = g * 32 + lane; mine && b < (int)gridDim.x; b += per * 32) {
            const krill_oz_fast h = oz_fast_load(&ws->fast_part[(int64_t)b * kc + j]);
            krill_oz_fast_merge(&f, &h);
        }
        oz_fast_warp(&f);
        if (lane == 0) scratch[warp] = f;
        __syncthreads();
        if (mine && g == 0 && lane == 0) {
            double r = 0.0;
            for (int v = 1; v < per; v++) krill_oz_fast_merge(&f, &scratch[warp + v]);
            if (merged_only) ws->merged[j] = f;
            const int decided = !merged_only && krill_oz_fast_result(&f, sqrt_mode, &r);
            if (decided) *(j < kres ? results + j : extra + (j - kres)) = r;
            ws->verdict[j] = decided;
        }
        __syncthreads();
    }
    if (tid == 0) ws->fast_counter = 0u;
    return true;
}

/* The range of a vector's elements from the high words of their magnitudes: key(v) = the
 * high 32 bits of |v|, with bit 0 set when the low 32 bits are not zero (so key(v) = 0 iff
 * v = 0, and the exponent field is key >> 20); max is the largest key, min1 the smallest
 * key - 1 (a zero wraps to 0xffffffff and so counts only when all are zero). */
struct oz_range {
    unsigned max, min1;
};

__device__ __forceinline__ void oz_range_init(oz_range *r)
{
    r->max = 0u;
    r->min1 = 0xffffffffu;
}

__device__ __forceinline__ void oz_range_add(oz_range *r, double v)
{
    const unsigned key = ((unsigned)__double2hiint(v) & 0x7fffffffu) |
                         (unsigned)(__double2loint(v) != 0);
    r->max = key > r->max ? key : r->max;
    r->min1 = key - 1u < r->min1 ? key - 1u : r->min1;
}

/* The guard's conditions (krill_oz_fast_guard) for every term x_i y_i at once from the two
 * ranges: every nonzero element normal with exponent at most 400 (keys in [2^20, (1023 +
 * 401) 2^20)), and, when both have nonzeros, the least exponents Ex + Ey >= -800, so every
 * product of nonzero elements is at least 2^(Ex + Ey) >= 2^-800. Stricter than the guard
 * term by term (the least elements need not meet), never looser. */
__device__ __forceinline__ bool oz_range_ok(const oz_range &x, const oz_range &y)
{
    const unsigned lo = 1u << 20, hi = (1023u + 401u) << 20;
    const bool xz = x.max == 0u, yz = y.max == 0u;
    const bool xin = xz || (x.max < hi && x.min1 + 1u >= lo);
    const bool yin = yz || (y.max < hi && y.min1 + 1u >= lo);
    const int e = (int)((x.min1 + 1u) >> 20) + (int)((y.min1 + 1u) >> 20) - 2 * 1023;
    return xin && yin && (xz || yz || e >= -800);
}

/* Exact mode's statistics from a range, as bounds: max|v| <= the double with v's largest
 * high word and all low bits set (0 for a zero vector; Inf and NaN keys give a NaN bound,
 * which marks the vector as special just as the exact statistics would), and the lowest set
 * bit >= the last place of the least nonzero element's binade. Exact mode's value does not
 * depend on the statistics beyond these bounds (a larger maximum or a lower bit only adds
 * slices; the sum is exact either way), and only exact mode takes the fast path. */
__device__ __forceinline__ void oz_range_stats(const oz_range &r, unsigned long long *amax,
                                               int *lsb)
{
    const int e = (int)((r.min1 + 1u) >> 20);
    *amax = r.max ? ((unsigned long long)r.max << 32) | 0xffffffffull : 0ull;
    *lsb = r.max ? (e > 1 ? e : 1) - 1075 : KRILL_OZ_LSB_NONE;
}

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

/* ---- the fused Gram-Schmidt pass ---------------------------------------------------------- */

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

/* ---- launch geometry ---------------------------------------------------------------------- */

/* threads per block: the tuning's, lowered to what the kernels can be launched with */
int oz_threads(const krill_ozaki_tuning &t, const int launch[3])
{
    return t.gpu_threads <= launch[1] ? t.gpu_threads : launch[1];
}

/* blocks of `threads` for `items` work items (one per thread): the tuning's, or about one
 * resident wave */
int oz_blocks(const krill_ctx *ctx, const int launch[3], const krill_ozaki_tuning &t,
              int threads, int64_t items)
{
    int64_t blocks = t.gpu_blocks > 0 ? t.gpu_blocks
                                      : (int64_t)ctx->cuda->sm_count *
                                            (launch[0] > 0 ? launch[0] : 1) * 256 / threads;
    const int64_t need = (items + threads - 1) / threads;
    if (blocks > need) blocks = need;
    if (blocks > 65535) blocks = 65535;
    return blocks < 1 ? 1 : (int)blocks;
}

/* kernel<<<blocks, threads, smem, the context's stream>>>(args), as a programmatic dependent
 * launch on sm_90 (the kernel calls oz_pdl_wait before it touches memory) */
template <typename Args>
krill_status oz_launch(const krill_ctx *ctx, void (*kernel)(Args), int blocks, int threads,
                       size_t smem, const Args &args, const char *name)
{
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.gridDim = dim3((unsigned)blocks);
    cfg.blockDim = dim3((unsigned)threads);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = krill_cuda_stream(ctx);
    cfg.attrs = attr;
    cfg.numAttrs = ctx->cuda->cc_major >= 9 ? 1 : 0;
    const cudaError_t err = cudaLaunchKernelEx(&cfg, kernel, args);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return krill_error(KRILL_ERR_DEVICE, "%s: kernel launch failed: %s (%s)", name,
                           cudaGetErrorName(err), cudaGetErrorString(err));
    }
    return krill_cuda_check_launch(name);
}

} /* namespace */

extern "C" krill_status krill_ozaki_cuda_init(krill_ctx *ctx, void **ws, int launch[3])
{
    krill_status st = KRILL_OK;
    void *dev = NULL;
    cudaFuncAttributes dot_attr, stats_attr, fast_attr;
    int per_sm = 0, fast_per_sm = 0, most;
    *ws = NULL;
    KRILL_TRY(krill_mem_alloc(ctx, &dev, sizeof(oz_dev_ws),
                              "the reproducible mode's GPU workspace"));
    KRILL_TRY(krill_cuda_memset0(ctx, dev, sizeof(oz_dev_ws)));
    KRILL_CUDA_TRY(cudaMemsetAsync(static_cast<char *>(dev) + offsetof(oz_dev_ws, lsb_min), 0x7f,
                                   sizeof(((oz_dev_ws *)0)->lsb_min), krill_cuda_stream(ctx)));
    KRILL_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, oz_dot_kernel, 256, 0));
    KRILL_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &fast_per_sm, oz_fast_kernel<true, 1>, 256, 8 * sizeof(krill_oz_fast)));
    KRILL_CUDA_TRY(cudaFuncGetAttributes(&dot_attr, oz_dot_kernel));
    KRILL_CUDA_TRY(cudaFuncGetAttributes(&stats_attr, oz_stats_kernel));
    most = dot_attr.maxThreadsPerBlock < stats_attr.maxThreadsPerBlock
               ? dot_attr.maxThreadsPerBlock : stats_attr.maxThreadsPerBlock;
    {
        void (*const fast_kernels[4])(oz_fast_args) = {oz_fast_kernel<true, 1>,
                                                       oz_fast_kernel<false, 1>,
                                                       oz_fast_kernel<true, 2>,
                                                       oz_fast_kernel<false, 2>};
        for (int i = 0; i < 4; i++) {
            KRILL_CUDA_TRY(cudaFuncGetAttributes(&fast_attr, fast_kernels[i]));
            if (fast_attr.maxThreadsPerBlock < most) most = fast_attr.maxThreadsPerBlock;
        }
    }
    KRILL_CUDA_TRY(cudaFuncSetAttribute(oz_cgs_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        OZ_CGS_SMEM));
    KRILL_CUDA_TRY(cudaFuncGetAttributes(&fast_attr, oz_cgs_kernel));
    if (fast_attr.maxThreadsPerBlock < most) most = fast_attr.maxThreadsPerBlock;
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

/* The fast pass with one right-hand side w, or two (w2 != nullptr, results2 their sums,
 * sqrt_mode and merged_only off): krill_ozaki_cuda_fast and _fast2. */
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
    void (*kernel)(oz_fast_args) = w2 ? (stats ? oz_fast_kernel<true, 2> : oz_fast_kernel<false, 2>)
                                      : (stats ? oz_fast_kernel<true, 1> : oz_fast_kernel<false, 1>);
    krill_ozaki_tuning_get(&t);
    threads = oz_threads(t, launch);
    if (n <= 0 || k < 1 || k > KRILL_OZ_KMAX || (w2 && (sqrt_mode || merged_only))) {
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
                                               double *stats)
{
    return fast_launch(ctx, ws, launch, n, k, V, ldv, u, w, results_u, results_w, 0, stats, 0);
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
    if ((size_t)threads * tile_bytes > OZ_CGS_SMEM) threads = (int)(OZ_CGS_SMEM / tile_bytes) / 32 * 32;
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
