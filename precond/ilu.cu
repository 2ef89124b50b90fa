/* precond/ilu.cu - ILU(0) / IC(0) on the GPU: the factorization and both triangular solves.
 * Layout, pivot rule and dependency graphs: precond/ilu_impl.h; the host analysis and the C
 * reference of every kernel here: precond/ilu_host.c.
 *
 * Scheme: sync-free in level order. The level sets are computed once at build on the host;
 * the device keeps, per graph, the rows sorted by level (`order`). One kernel launch does a
 * whole solve (or the whole factorization): a sub-warp of LANES threads takes one row; blocks
 * draw a ticket from an atomic counter and take the rows at positions
 * [ticket * rows_per_block, ...) of the order, so rows start in level order whatever order
 * the hardware schedules blocks in (a solve's blocks are persistent: a block draws its next
 * ticket when its rows are done; ILU_SOLVE_BLOCKS_PER_SM). A row's sub-warp spins on the
 * ready flags of the rows it reads (all in earlier levels, hence in blocks that drew earlier
 * tickets and are running, or in its own block: no deadlock; sub-warps of one warp progress
 * independently on sm_70+), then computes, then publishes its result with a release store of
 * its flag. Speed (H100, bench/run_trsv.sh): 3.7x cuSPARSE's cusparseSpSV time on
 * poisson3d:128 (382 levels: ~8 us a level on the critical path: poll, fence, gather,
 * release), 2.5x on elasticity3d: the issue's target (at most 1x) is not met. Why not one launch
 * per level: poisson3d:128 has 382 levels per solve, and a launch plus a grid-wide drain
 * costs a few microseconds each, more than the work of most levels; sync-free keeps the GPU
 * busy across level boundaries and costs one launch per solve.
 *
 * Flags hold an epoch: every solve and factorization takes the next one, so nothing is
 * cleared between launches (the flags are zeroed once, and again when the epoch wraps). The
 * ticket counter is put back to 0 by the last block to finish.
 *
 * Solves (trsv_kernel): y_i = (r_i - sum_{j<i} a_ij y_j) [/ a_ii], then in place
 * z_i = (y_i - sum_{j>i} a_ij z_j) / a_ii. The lanes of a row's sub-warp take every LANES-th
 * entry (fused multiply-adds), then a shuffle tree sums them: not the CPU's bits, which the
 * tests compare within a backward-error bound. LANES per graph: krill_gpu_lanes_per_row of
 * its mean row length (1 for the 7-point stencils: 3 entries a row; 16 for elasticity).
 * Memory traffic of an apply (both solves): 12 bytes per stored entry, 4 (order) + 8 (row
 * offsets) + 4 (diagonal position) + 4 (flag written) bytes per row and solve, the flags of
 * the dependencies (from L2), r read, y written and read, z written (32 bytes per row).
 *
 * Factorization (factor_kernel): the same scheme over the forward graph, one sub-warp per
 * row. For k in row i's lower part, ascending: l_ik = a_ik / pivot_k (all lanes compute it),
 * then the lanes take the entries j of row k's upper part in turn, find j in row i by binary
 * search and update a_ij -= l_ik * a_kj (ilu0; for ic0 only j < i, a_kj holding l_jk there,
 * and d_i -= l_ik^2). Products and differences are rounded as written (__dmul_rn, __dsub_rn:
 * no FMA) and each entry gets its updates in ascending k, so the factors have the bits of the
 * CPU's (ilu_host.c). A refused row (ilu_impl.h's rule) still raises its flag, so that no
 * row waits forever; the smallest refused row is kept with atomicMin, and since every row
 * before it is exact, it is the CPU's first refused row, reported with the same message. */
#include <stdint.h>
#include <string.h>

#include "kernels/kernels_impl.cuh"
#include "precond/ilu_impl.h"

namespace {

/* Threads per block: 8 warps, as the other kernels (KRILL_CUDA_THREADS). */
constexpr int ILU_BLOCK = KRILL_CUDA_THREADS;

/* Blocks per SM of a solve: the solve's blocks are persistent (each takes the next ticket
 * when its rows are done), so this caps the rows in flight, and with them the threads that
 * poll flags ahead of the frontier. Measured on an H100 (bench/run_trsv.sh, poisson3d:128
 * ilu0 apply): 1 block per SM 6.1 ms, 2: 6.8, 4: 8.6, 8: 15.6; one block per 256 rows (all
 * resident at once): 15.7-19.8. */
constexpr unsigned int ILU_SOLVE_BLOCKS_PER_SM = 1;

/* No refused row (the initial value of fail_row). */
constexpr int32_t ILU_NO_FAILURE = INT32_MAX;

struct ilu_gpu {
    int32_t n;
    int64_t nnz;
    bool ic;                      /* IC(0): lower part non-unit, L^T copied to the upper */
    int32_t *row_ptr;             /* n + 1 */
    int32_t *col;                 /* nnz */
    int32_t *diag;                /* n: position of a_ii */
    int32_t *transpose;           /* ic: nnz, position of (j, i) for (i, j); else NULL */
    int32_t *lower_order;         /* n: rows sorted by forward level */
    int32_t *upper_order;         /* n: rows sorted by backward level */
    double *val;                  /* nnz: A's values, then the factors */
    double *pivot_min;            /* n: the smallest pivot each row accepts (strictly above) */
    int32_t *flags;               /* n: the epoch of the last launch that finished the row */
    unsigned int *counters;       /* 2: block tickets taken, blocks finished */
    int32_t *fail_row;            /* 1: the smallest refused row, or ILU_NO_FAILURE */
    int32_t *epoch;               /* host: the last epoch handed out (apply is const) */
    int lanes_lower, lanes_upper; /* threads per row of the forward / backward graph */
};

/* ---- device helpers ------------------------------------------------------------------ */

/* A flag as it is in L2 now, without ordering: the polling load. (Polling with acquire loads
 * orders, and on sm_70+ invalidates the SM's L1, at every poll of every waiting thread; the
 * one acquire a row needs is the fence after its last wait, acquire_fence.) */
__device__ __forceinline__ int32_t load_relaxed(const int32_t *p)
{
    int32_t v;
    asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

/* With the relaxed loads before it that read release-stored flags, an acquire: what the
 * rows behind those flags wrote before their release is visible to the loads after it. */
__device__ __forceinline__ void acquire_fence()
{
    asm volatile("fence.acq_rel.gpu;" : : : "memory");
}

__device__ __forceinline__ void store_release(int32_t *p, int32_t v)
{
    asm volatile("st.release.gpu.global.b32 [%0], %1;" : : "l"(p), "r"(v) : "memory");
}

/* Back-off of a waiting thread: the first and the longest pause between two looks at a flag
 * (ns). Without it the rows ahead of the frontier (every resident block's: a few hundred
 * thousand threads) poll L2 flat out and slow the rows that are working; pauses up to a
 * quarter of a microsecond add at most that much per level to the critical path. */
constexpr unsigned int ILU_WAIT_NS_FIRST = 32;
constexpr unsigned int ILU_WAIT_NS_MAX = 256;

/* Wait until row j is finished in this epoch. Its flag was release-stored after row j's
 * results; the caller's acquire_fence after its last wait makes those results visible. */
__device__ __forceinline__ void wait_row(const int32_t *flags, int32_t j, int32_t epoch)
{
    unsigned int pause = ILU_WAIT_NS_FIRST;
    while (load_relaxed(flags + j) != epoch) {
        __nanosleep(pause);
        if (pause < ILU_WAIT_NS_MAX) pause *= 2;
    }
}

/* The block's ticket: blocks take consecutive tickets in the order they start. */
__device__ __forceinline__ unsigned int block_ticket(unsigned int *counters)
{
    __shared__ unsigned int ticket;
    if (threadIdx.x == 0) ticket = atomicAdd(&counters[0], 1u);
    __syncthreads();
    return ticket;
}

/* The last block to finish puts the counters back to 0 for the next launch. */
__device__ __forceinline__ void block_done(unsigned int *counters)
{
    __syncthreads();
    if (threadIdx.x == 0 && atomicAdd(&counters[1], 1u) == gridDim.x - 1) {
        counters[0] = 0u;
        counters[1] = 0u;
    }
}

/* The lanes of this thread's sub-warp of LANES threads. */
template <int LANES>
__device__ __forceinline__ unsigned int subwarp_mask()
{
    if constexpr (LANES == 32)
        return 0xffffffffu;
    else
        return ((1u << LANES) - 1u) << ((threadIdx.x & 31u) & ~(unsigned int)(LANES - 1));
}

/* Sum over the sub-warp; its lane 0 gets the total. */
template <int LANES>
__device__ __forceinline__ double subwarp_sum(double v, unsigned int mask)
{
#pragma unroll
    for (int offset = LANES / 2; offset > 0; offset >>= 1)
        v += __shfl_down_sync(mask, v, offset, LANES);
    return v;
}

/* Position of column j in col[lo, hi) (sorted), or -1. */
__device__ __forceinline__ int32_t find_col(const int32_t *__restrict__ col, int32_t lo,
                                            int32_t hi, int32_t j)
{
    while (lo < hi) {
        const int32_t mid = lo + (hi - lo) / 2;
        const int32_t c = col[mid];
        if (c == j) return mid;
        if (c < j) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

/* ---- kernels ---------------------------------------------------------------------------- */

/* One triangular solve: x_i = (rhs_i - sum a_ij x_j) [/ a_ii] over the lower (UPPER false,
 * columns j < i) or upper part of each row, rows taken in `order`. rhs may be x (in place:
 * row i reads its own x_i before writing it). */
template <int LANES, bool UPPER, bool UNIT>
__global__ void __launch_bounds__(ILU_BLOCK)
trsv_kernel(int32_t n, const int32_t *__restrict__ order, const int32_t *__restrict__ row_ptr,
            const int32_t *__restrict__ col, const int32_t *__restrict__ diag,
            const double *__restrict__ val, const double *rhs, double *x, int32_t *flags,
            unsigned int *counters, int32_t epoch)
{
    constexpr int ROWS = ILU_BLOCK / LANES;
    __shared__ unsigned int ticket;
    const int lane = (int)(threadIdx.x % LANES);
    const unsigned int mask = subwarp_mask<LANES>();
    for (;;) {
        __syncthreads();                  /* every thread has read the previous ticket */
        if (threadIdx.x == 0) ticket = atomicAdd(&counters[0], 1u);
        __syncthreads();
        const int64_t first = (int64_t)ticket * ROWS;
        if (first >= n) break;
        const int64_t pos = first + threadIdx.x / LANES;
        if (pos >= n) continue;
        const int32_t i = order[pos];
        const int32_t d = diag[i];
        const int32_t lo = UPPER ? d + 1 : row_ptr[i];
        const int32_t hi = UPPER ? row_ptr[i + 1] : d;
        double s = 0.0;
        for (int32_t p = lo + lane; p < hi; p += LANES) wait_row(flags, col[p], epoch);
        acquire_fence();
        for (int32_t p = lo + lane; p < hi; p += LANES) s = fma(val[p], __ldcg(x + col[p]), s);
        s = subwarp_sum<LANES>(s, mask);
        if (lane == 0) {
            double v = __ldcg(rhs + i) - s;
            if (!UNIT) v = v / val[d];
            x[i] = v;
            store_release(flags + i, epoch);
        }
    }
    block_done(counters);
}

/* ILU(0) (IC false) or IC(0) of every row, rows taken in the forward graph's `order`; see
 * the head of the file. Values of other rows are read with __ldcg (from L2, never a stale
 * L1 line) after the waits. */
template <int LANES, bool IC>
__global__ void __launch_bounds__(ILU_BLOCK)
factor_kernel(int32_t n, const int32_t *__restrict__ order, const int32_t *__restrict__ row_ptr,
              const int32_t *__restrict__ col, const int32_t *__restrict__ diag,
              const int32_t *__restrict__ transpose, const double *__restrict__ pivot_min,
              double *val, int32_t *flags, unsigned int *counters, int32_t *fail_row,
              int32_t epoch)
{
    constexpr int ROWS = ILU_BLOCK / LANES;
    const unsigned int ticket = block_ticket(counters);
    const int lane = (int)(threadIdx.x % LANES);
    const int64_t pos = (int64_t)ticket * ROWS + threadIdx.x / LANES;
    if (pos < n) {
        const unsigned int mask = subwarp_mask<LANES>();
        const int32_t i = order[pos];
        const int32_t begin = row_ptr[i], end = row_ptr[i + 1], di = diag[i];
        /* ic0 updates only the lower part (j < i); ilu0 the rest of the row */
        const int32_t update_end = IC ? di : end;
        for (int32_t p = begin + lane; p < di; p += LANES) wait_row(flags, col[p], epoch);
        acquire_fence();    /* with the barrier: every lane sees what every lane waited for */
        __syncwarp(mask);
        double d = __ldcg(val + di);   /* ic0: a_ii - sum l_ik^2, kept by every lane */
        for (int32_t p = begin; p < di; p++) {
            const int32_t k = col[p];
            const double lik = __ddiv_rn(__ldcg(val + p), __ldcg(val + diag[k]));
            if (IC) d = __dsub_rn(d, __dmul_rn(lik, lik));
            for (int32_t q = diag[k] + 1 + lane; q < row_ptr[k + 1]; q += LANES) {
                const int32_t j = col[q];
                if (IC && j >= i) break;
                const int32_t t = find_col(col, p + 1, update_end, j);
                if (t >= 0) val[t] = __dsub_rn(__ldcg(val + t), __dmul_rn(lik, __ldcg(val + q)));
            }
            __syncwarp(mask);   /* every lane has read a_ik before it is overwritten */
            if (lane == 0) val[p] = lik;
        }
        if (IC && lane == 0) val[di] = d;
        __syncwarp(mask);
        bool bad = false;
        for (int32_t p = begin + lane; p < (IC ? di + 1 : end); p += LANES)
            bad = bad || !isfinite(__ldcg(val + p));
        if (lane == 0) {
            const double pivot = IC ? d : __ldcg(val + di);
            const bool ok = IC ? pivot > pivot_min[i] : fabs(pivot) > pivot_min[i];
            bad = bad || !isfinite(pivot) || !ok;
        }
        bad = __any_sync(mask, bad);
        if (bad) {
            if (lane == 0) atomicMin(fail_row, i);
        } else if (IC) {
            for (int32_t p = begin + lane; p < di; p += LANES) val[transpose[p]] = __ldcg(val + p);
            if (lane == 0) val[di] = __dsqrt_rn(d);
        }
        __threadfence();
        __syncwarp(mask);
        if (lane == 0) store_release(flags + i, epoch);
    }
    block_done(counters);
}

/* ---- launchers ------------------------------------------------------------------------- */

unsigned int grid_for(int32_t n, int lanes)
{
    const int64_t rows_per_block = ILU_BLOCK / lanes;
    return (unsigned int)(((int64_t)n + rows_per_block - 1) / rows_per_block);
}

/* The next epoch for a launch; the flags are cleared when the epoch would wrap. */
krill_status next_epoch(krill_ctx *ctx, const ilu_gpu *g, int32_t *epoch)
{
    krill_status st = KRILL_OK;
    if (*g->epoch >= INT32_MAX - 1) {
        KRILL_TRY(krill_cuda_memset0(ctx, g->flags, (size_t)g->n * sizeof *g->flags));
        *g->epoch = 0;
    }
    *epoch = ++*g->epoch;
cleanup:
    return st;
}

template <int LANES, bool UPPER, bool UNIT>
krill_status launch_trsv_lanes(krill_ctx *ctx, const ilu_gpu *g, const int32_t *order,
                               const double *rhs, double *x, int32_t epoch)
{
    const cudaStream_t stream = krill_cuda_stream(ctx);
    const unsigned int cap = (unsigned int)ctx->cuda->sm_count * ILU_SOLVE_BLOCKS_PER_SM;
    const unsigned int grid = grid_for(g->n, LANES) < cap ? grid_for(g->n, LANES) : cap;
    trsv_kernel<LANES, UPPER, UNIT><<<grid, ILU_BLOCK, 0, stream>>>(
        g->n, order, g->row_ptr, g->col, g->diag, g->val, rhs, x, g->flags, g->counters, epoch);
    return krill_cuda_check_launch(UPPER ? "ilu backward solve (trsv_kernel)"
                                         : "ilu forward solve (trsv_kernel)");
}

template <bool UPPER, bool UNIT>
krill_status launch_trsv(krill_ctx *ctx, const ilu_gpu *g, int lanes, const int32_t *order,
                         const double *rhs, double *x)
{
    krill_status st = KRILL_OK;
    int32_t epoch = 0;
    KRILL_TRY(next_epoch(ctx, g, &epoch));
    switch (lanes) {
    case 1: st = launch_trsv_lanes<1, UPPER, UNIT>(ctx, g, order, rhs, x, epoch); break;
    case 2: st = launch_trsv_lanes<2, UPPER, UNIT>(ctx, g, order, rhs, x, epoch); break;
    case 4: st = launch_trsv_lanes<4, UPPER, UNIT>(ctx, g, order, rhs, x, epoch); break;
    case 8: st = launch_trsv_lanes<8, UPPER, UNIT>(ctx, g, order, rhs, x, epoch); break;
    case 16: st = launch_trsv_lanes<16, UPPER, UNIT>(ctx, g, order, rhs, x, epoch); break;
    default: st = launch_trsv_lanes<32, UPPER, UNIT>(ctx, g, order, rhs, x, epoch); break;
    }
cleanup:
    return st;
}

template <int LANES, bool IC>
krill_status launch_factor_lanes(krill_ctx *ctx, const ilu_gpu *g, int32_t epoch)
{
    factor_kernel<LANES, IC><<<grid_for(g->n, LANES), ILU_BLOCK, 0, krill_cuda_stream(ctx)>>>(
        g->n, g->lower_order, g->row_ptr, g->col, g->diag, g->transpose, g->pivot_min, g->val,
        g->flags, g->counters, g->fail_row, epoch);
    return krill_cuda_check_launch(IC ? "ic0 factorization (factor_kernel)"
                                      : "ilu0 factorization (factor_kernel)");
}

template <bool IC>
krill_status launch_factor(krill_ctx *ctx, const ilu_gpu *g, int32_t epoch)
{
    switch (g->lanes_upper) {
    case 1: return launch_factor_lanes<1, IC>(ctx, g, epoch);
    case 2: return launch_factor_lanes<2, IC>(ctx, g, epoch);
    case 4: return launch_factor_lanes<4, IC>(ctx, g, epoch);
    case 8: return launch_factor_lanes<8, IC>(ctx, g, epoch);
    case 16: return launch_factor_lanes<16, IC>(ctx, g, epoch);
    default: return launch_factor_lanes<32, IC>(ctx, g, epoch);
    }
}

/* n (or nnz) int64 values from the host as int32 on the device. */
krill_status upload_int32(krill_ctx *ctx, int32_t **dst, const int64_t *src, int64_t count,
                          const char *what)
{
    krill_status st = KRILL_OK;
    int32_t *tmp = NULL;
    KRILL_ALLOC(tmp, count);
    for (int64_t k = 0; k < count; k++) tmp[k] = (int32_t)src[k];
    KRILL_TRY(krill_mem_alloc(ctx, (void **)dst, (size_t)count * sizeof **dst, what));
    KRILL_TRY(krill_mem_upload(ctx, *dst, tmp, (size_t)count * sizeof *tmp));
cleanup:
    krill_free(tmp);   /* pageable: the upload has read it when it returns */
    return st;
}

krill_status upload_copy(krill_ctx *ctx, int32_t **dst, const int32_t *src, int64_t count,
                         const char *what)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(krill_mem_alloc(ctx, (void **)dst, (size_t)count * sizeof **dst, what));
    KRILL_TRY(krill_mem_upload(ctx, *dst, src, (size_t)count * sizeof *src));
cleanup:
    return st;
}

}  // namespace

/* ---- the extern "C" half of ilu_impl.h -------------------------------------------------- */

extern "C" void krill_ilu_cuda_destroy(krill_ctx *ctx, void *dev)
{
    ilu_gpu *g = static_cast<ilu_gpu *>(dev);
    if (!g) return;
    krill_mem_free(ctx, g->row_ptr);
    krill_mem_free(ctx, g->col);
    krill_mem_free(ctx, g->diag);
    krill_mem_free(ctx, g->transpose);
    krill_mem_free(ctx, g->lower_order);
    krill_mem_free(ctx, g->upper_order);
    krill_mem_free(ctx, g->val);
    krill_mem_free(ctx, g->pivot_min);
    krill_mem_free(ctx, g->flags);
    krill_mem_free(ctx, g->counters);
    krill_mem_free(ctx, g->fail_row);
    krill_free(g->epoch);
    krill_free(g);
}

extern "C" krill_status krill_ilu_cuda_create(krill_ctx *ctx, const krill_ilu_host *h,
                                              void **dev)
{
    krill_status st = KRILL_OK;
    ilu_gpu *g = NULL;
    const int64_t n = h->n;
    *dev = NULL;
    /* 32-bit positions; the strided loops step past the end by less than a warp */
    if (h->nnz > INT32_MAX - 32 || n > INT32_MAX - 32) {
        st = krill_error(KRILL_ERR_UNSUPPORTED, "%s on the GPU: %lld rows, %lld entries: the "
                         "GPU factors keep 32-bit offsets (at most %d rows and entries)",
                         h->kind == KRILL_ILU_KIND_IC0 ? "ic0" : "ilu0", (long long)n,
                         (long long)h->nnz, INT32_MAX - 32);
        goto cleanup;
    }
    KRILL_CALLOC(g, 1);
    KRILL_CALLOC(g->epoch, 1);
    g->n = h->n;
    g->nnz = h->nnz;
    g->ic = h->kind == KRILL_ILU_KIND_IC0;
    {
        const double mean_lower = n > 0 ? (double)h->lower_nnz / (double)n : 0.0;
        const double mean_upper = n > 0 ? (double)(h->nnz - n - h->lower_nnz) / (double)n : 0.0;
        g->lanes_lower = krill_gpu_lanes_per_row(mean_lower, 0, 1);
        g->lanes_upper = krill_gpu_lanes_per_row(mean_upper, 0, 1);
    }
    KRILL_TRY(upload_int32(ctx, &g->row_ptr, h->row_ptr, n + 1, "ilu row offsets"));
    KRILL_TRY(upload_copy(ctx, &g->col, h->col, h->nnz, "ilu columns"));
    KRILL_TRY(upload_int32(ctx, &g->diag, h->diag, n, "ilu diagonal positions"));
    if (g->ic) KRILL_TRY(upload_int32(ctx, &g->transpose, h->transpose, h->nnz, "ic0 L^T map"));
    KRILL_TRY(upload_copy(ctx, &g->lower_order, h->lower.rows, n, "ilu forward order"));
    KRILL_TRY(upload_copy(ctx, &g->upper_order, h->upper.rows, n, "ilu backward order"));
    KRILL_MEM_ALLOC(ctx, g->val, h->nnz);
    KRILL_MEM_ALLOC(ctx, g->pivot_min, n);
    KRILL_MEM_ALLOC(ctx, g->flags, n);
    KRILL_MEM_ALLOC(ctx, g->counters, 2);
    KRILL_MEM_ALLOC(ctx, g->fail_row, 1);
    KRILL_TRY(krill_cuda_memset0(ctx, g->flags, (size_t)n * sizeof *g->flags));
    KRILL_TRY(krill_cuda_memset0(ctx, g->counters, 2 * sizeof *g->counters));
    *dev = g;
    g = NULL;
cleanup:
    krill_ilu_cuda_destroy(ctx, g);
    return st;
}

extern "C" krill_status krill_ilu_cuda_factor(krill_ctx *ctx, void *dev, const krill_ilu_host *h,
                                              const char *name, const double *a_val)
{
    krill_status st = KRILL_OK;
    ilu_gpu *g = static_cast<ilu_gpu *>(dev);
    double *pivot_min = NULL, *row_val = NULL;
    int32_t fail = ILU_NO_FAILURE, epoch = 0;
    if (g->n == 0) goto cleanup;
    KRILL_ALLOC(pivot_min, g->n);
    for (int32_t i = 0; i < g->n; i++) pivot_min[i] = krill_ilu_pivot_min(h, i);
    KRILL_TRY(krill_mem_upload(ctx, g->val, a_val, (size_t)g->nnz * sizeof *a_val));
    KRILL_TRY(krill_mem_upload(ctx, g->pivot_min, pivot_min, (size_t)g->n * sizeof *pivot_min));
    KRILL_TRY(krill_mem_upload(ctx, g->fail_row, &fail, sizeof fail));
    KRILL_TRY(next_epoch(ctx, g, &epoch));
    KRILL_TRY(g->ic ? launch_factor<true>(ctx, g, epoch) : launch_factor<false>(ctx, g, epoch));
    KRILL_TRY(krill_mem_download(ctx, &fail, g->fail_row, sizeof fail));   /* waits */
    if (fail != ILU_NO_FAILURE) {
        const int64_t begin = h->row_ptr[fail], len = h->row_ptr[fail + 1] - begin;
        KRILL_ALLOC(row_val, len);
        KRILL_TRY(krill_mem_download(ctx, row_val, g->val + begin, (size_t)len * sizeof *row_val));
        st = krill_ilu_row_failure(h, name, fail, row_val);
    }
cleanup:
    krill_free(pivot_min);
    krill_free(row_val);
    return st;
}

extern "C" krill_status krill_ilu_cuda_apply(krill_ctx *ctx, const void *dev, const double *r,
                                             double *z)
{
    krill_status st = KRILL_OK;
    const ilu_gpu *g = static_cast<const ilu_gpu *>(dev);
    if (g->n == 0) goto cleanup;
    /* template arguments in parentheses: their commas would split the macro's argument */
    if (g->ic)
        KRILL_TRY((launch_trsv<false, false>(ctx, g, g->lanes_lower, g->lower_order, r, z)));
    else
        KRILL_TRY((launch_trsv<false, true>(ctx, g, g->lanes_lower, g->lower_order, r, z)));
    KRILL_TRY((launch_trsv<true, false>(ctx, g, g->lanes_upper, g->upper_order, z, z)));
cleanup:
    return st;
}

extern "C" void krill_ilu_cuda_factors(const void *dev, krill_ilu_factors *f)
{
    const ilu_gpu *g = static_cast<const ilu_gpu *>(dev);
    f->val = g->val;
    f->dev_row_ptr = g->row_ptr;
    f->dev_col = g->col;
}
