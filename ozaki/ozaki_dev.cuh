/* ozaki/ozaki_dev.cuh - what the reproducible mode's GPU kernels share (ozaki.cu: the stats
 * and dot kernels; fast.cu: the fast path; cgs.cu: the fused Gram-Schmidt pass): the device
 * workspace, programmatic dependent launch, the statistics' block reductions, the fast
 * path's merges, decision and element ranges, and the launch geometry. Included by those
 * three files only; its names are in namespace krill_oz. */
#ifndef KRILL_OZAKI_DEV_CUH
#define KRILL_OZAKI_DEV_CUH

#include <cstddef>

#include "kernels/kernels_impl.cuh"
#include "ozaki/ozaki_impl.h"

namespace krill_oz {

constexpr int OZ_DIAG_PAD = 528;                 /* >= KRILL_OZ_MAX_DIAG */
constexpr int OZ_LSB_INIT = 0x7f7f7f7f;          /* the lsb accumulators' reset value (memset) */
constexpr unsigned int OZ_FULL = 0xffffffffu;
/* The fast kernel's per-block sums in the workspace (3 MB): its grid has at most
 * OZ_FAST_SLOTS / kc blocks for kc sums (65536 for a dot product, 1024 for 32 columns
 * against two right-hand sides: above a wave of 256-thread blocks on an H100 or H200). */
constexpr int OZ_FAST_SLOTS = 65536;
static_assert(OZ_DIAG_PAD >= KRILL_OZ_MAX_DIAG, "diagonal sums must fit");
static_assert(OZ_LSB_INIT > KRILL_OZ_LSB_NONE, "reset value above every lsb");
/* The fast kernel's sums: k columns against one right-hand side or two (kc = k or 2 k, at
 * most OZ_FAST_SUMS), and the stats of the k columns and the right-hand sides. */
constexpr int OZ_FAST_SUMS = 2 * KRILL_OZ_KMAX;
constexpr int OZ_NV = KRILL_OZ_KMAX + 2;

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
    krill_oz_fast merged[OZ_FAST_SUMS];                 /* the fast pass's merged sums */
    long long part[KRILL_OZ_KMAX * (OZ_DIAG_PAD + 1)];  /* the dot pass's diagonal sums (column
                                                           j at j stride), then k flags */
};

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

/* ---- the fast path's sums and ranges (fast.cu, cgs.cu) ------------------------------ */

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
__device__ inline bool oz_fast_decide(oz_dev_ws *ws, int kc, double *results, int kres,
                                      double *extra, int sqrt_mode, krill_oz_fast *scratch,
                                      bool merged_only)
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

/* ---- launch geometry ---------------------------------------------------------------------- */

/* threads per block: the tuning's, lowered to what the kernels can be launched with */
inline int oz_threads(const krill_ozaki_tuning &t, const int launch[3])
{
    return t.gpu_threads <= launch[1] ? t.gpu_threads : launch[1];
}

/* blocks of `threads` for `items` work items (one per thread): the tuning's, or about one
 * resident wave */
inline int oz_blocks(const krill_ctx *ctx, const int launch[3], const krill_ozaki_tuning &t,
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

/* fast.cu: the occupancy of the fast kernel (256 threads, 8 sums) into *fast_per_sm, and
 * *max_threads lowered to what every fast kernel can be launched with */
krill_status oz_fast_attributes(int *fast_per_sm, int *max_threads);

/* cgs.cu: the fused kernel's shared memory limit set, and *max_threads lowered to what it
 * can be launched with */
krill_status oz_cgs_attributes(int *max_threads);

} /* namespace krill_oz */

#endif /* KRILL_OZAKI_DEV_CUH */
