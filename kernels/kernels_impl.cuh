/* kernels/kernels_impl.cuh - what the .cu files of krill share: CUDA error checks, launch
 * geometry, and deterministic warp / block / grid sums. Included by CUDA sources only.
 *
 * Determinism. Every sum here adds in an order fixed by the launch geometry, and the
 * geometry (krill_cuda_blocks) depends only on the problem size and the device, never on
 * timing or on which block finishes first. The same input on the same GPU therefore gives
 * the same bits on every run.
 *
 * Workspace. A grid sum keeps its per-block partial sums in ctx->cuda->work:
 *   work[k * KRILL_REDUCE_MAX_BLOCKS + b]  partial of accumulator k from block b,
 *   work[KRILL_REDUCE_COUNTER_SLOT]        an unsigned int counting finished blocks; zeroed
 *                                          when the context is created, and put back to 0
 *                                          by the last block of every grid sum.
 * A grid sum uses the workspace only while its kernel runs, so reductions queued one after
 * another on the context's stream may all use it. Results go to a caller's pointer, which
 * may be one of the result slots at the end of the workspace (KRILL_CUDA_SLOT, core_impl.h):
 * partials and the counter stay below KRILL_CUDA_PARTIALS. */
#ifndef KRILL_KERNELS_IMPL_CUH
#define KRILL_KERNELS_IMPL_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "core/cuda_impl.h"

/* The most blocks of one grid, which is also the number of partial-sum slots per
 * accumulator in the workspace. 1024 blocks of 256 threads are about one full wave on the
 * GPUs we build for (A100: 108 SMs x 8 blocks = 864, H100: 132 x 8 = 1056); grid-stride
 * loops cover larger problems. */
#define KRILL_REDUCE_MAX_BLOCKS 1024
/* The most accumulators of one grid sum (nrm2 carries three). */
#define KRILL_REDUCE_MAX_ACC 3
#define KRILL_REDUCE_COUNTER_SLOT (KRILL_CUDA_PARTIALS - 1)   /* below the callers' result slots */
static_assert(KRILL_REDUCE_MAX_ACC * KRILL_REDUCE_MAX_BLOCKS <= KRILL_REDUCE_COUNTER_SLOT,
              "the partial sums of a grid sum must fit below the counter in the workspace");

/* ---- host side ---------------------------------------------------------------------- */

/* KRILL_OK, or KRILL_ERR_DEVICE with "CALL failed: cudaErrorName (description)". A failed
 * call also leaves its code as CUDA's last error; it is read here so that the next launch
 * check does not report it a second time. */
static inline krill_status krill_cuda_call(cudaError_t err, const char *call)
{
    if (err == cudaSuccess) return KRILL_OK;
    (void)cudaGetLastError();
    return krill_error(KRILL_ERR_DEVICE, "%s failed: %s (%s)", call, cudaGetErrorName(err),
                       cudaGetErrorString(err));
}

/* Run a CUDA runtime call; on failure set the message and jump to cleanup. */
#define KRILL_CUDA_TRY(call) KRILL_TRY(krill_cuda_call((call), #call))

static inline cudaStream_t krill_cuda_stream(const krill_ctx *ctx)
{
    return (cudaStream_t)ctx->cuda->stream;
}

/* Blocks of KRILL_CUDA_THREADS threads for the grid-stride kernel `kernel` over `items` work
 * items (one item per thread): enough for every item, at most one resident wave of that
 * kernel on the device and at most KRILL_REDUCE_MAX_BLOCKS, at least 1. A wave is what the
 * multiprocessors hold of this kernel, not of a 32-register one: a grid of 8 blocks an SM
 * for a kernel that keeps 6 (40 registers a thread) ran in two waves, the second a third
 * full: CG's fused SpMV and dot (csr_rows_kernel<2, int, true>, 40 registers) took 0.353 ms
 * on poisson3d:200 where it takes 0.256-0.261 now, and CG + Jacobi's iteration went from
 * 0.530 to 0.431-0.433 ms (H200, doc/benchmarks.md). Depends only on `items`, the kernel
 * and the device, so grid sums over the result are the same run to run. */
template <typename... Args>
static inline int krill_cuda_blocks(const krill_ctx *ctx, void (*kernel)(Args...), int64_t items)
{
    const int64_t wave = (int64_t)ctx->cuda->sm_count *
                         krill_cuda_resident_blocks(ctx->cuda, (const void *)kernel);
    const int64_t need = (items + KRILL_CUDA_THREADS - 1) / KRILL_CUDA_THREADS;
    int64_t blocks = need < wave ? need : wave;
    if (blocks > KRILL_REDUCE_MAX_BLOCKS) blocks = KRILL_REDUCE_MAX_BLOCKS;
    return blocks < 1 ? 1 : (int)blocks;
}

/* kernel<<<krill_cuda_blocks(ctx, kernel, items), KRILL_CUDA_THREADS, 0, stream>>>(args...):
 * a grid-stride kernel over `items` work items on one resident wave (the caller checks the
 * launch). */
template <typename... Params, typename... Args>
static inline void krill_cuda_launch(const krill_ctx *ctx, void (*kernel)(Params...),
                                     int64_t items, cudaStream_t stream, Args... args)
{
    kernel<<<krill_cuda_blocks(ctx, kernel, items), KRILL_CUDA_THREADS, 0, stream>>>(args...);
}

/* Blocks of a sweep kernel that keeps per_sm blocks on each multiprocessor (its registers
 * allow no more), fewer for short vectors: the grid of the CGS and DCGS2 sweeps, whose block
 * partials fit krill_cuda_cgs_partials(ctx) (KRILL_SWEEP_PARTIALS_PER_SM per SM). */
static inline int krill_cuda_sweep_blocks(const krill_ctx *ctx, int64_t n, int per_sm)
{
    const int64_t most = (int64_t)ctx->cuda->sm_count * per_sm;
    const int64_t need = (n + KRILL_CUDA_THREADS - 1) / KRILL_CUDA_THREADS;
    const int64_t blocks = need < most ? need : most;
    return blocks < 1 ? 1 : (int)blocks;
}

/* ---- device side -------------------------------------------------------------------- */

/* Sum of v over the 32 lanes of a warp (all lanes must call it); lane 0 gets the sum.
 * Fixed butterfly order: lane i adds lane i + 16, then i + 8, ... */
__device__ __forceinline__ double krill_warp_sum(double v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

/* Sums of NACC accumulators over a block of KRILL_CUDA_THREADS threads (all threads must
 * call it); thread 0 gets the sums in v. Warps reduce first, then warp 0 adds the warps'
 * sums in warp order. Two calls in one kernel must be separated by a __syncthreads(). */
template <int NACC>
__device__ __forceinline__ void krill_block_sum(double (&v)[NACC])
{
    __shared__ double warp_sums[NACC][KRILL_CUDA_WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int k = 0; k < NACC; k++) {
        double s = krill_warp_sum(v[k]);
        if (lane == 0) warp_sums[k][warp] = s;
    }
    __syncthreads();
    if (warp == 0) {
#pragma unroll
        for (int k = 0; k < NACC; k++)
            v[k] = krill_warp_sum(lane < KRILL_CUDA_WARPS ? warp_sums[k][lane] : 0.0);
    }
}

/* Sums of NACC accumulators over the whole grid, in one kernel: each block stores its
 * block sums in the workspace, and the last block to finish (found with an atomic counter)
 * adds the partials in block order 0, 1, ..., gridDim.x - 1 (strided over its threads,
 * then its block tree) and calls finish(sums) on thread 0. The order of the final sum does
 * not depend on which block came last. Requirements: every thread of the grid calls it
 * once, blockDim.x == KRILL_CUDA_THREADS, gridDim.x <= KRILL_REDUCE_MAX_BLOCKS, and
 * `work` is the context's workspace. */
template <int NACC, typename Finish>
__device__ __forceinline__ void krill_grid_sum(double (&v)[NACC], double *work,
                                               const Finish &finish)
{
    static_assert(NACC >= 1 && NACC <= KRILL_REDUCE_MAX_ACC, "too many accumulators");
    __shared__ bool is_last;
    unsigned int *counter = reinterpret_cast<unsigned int *>(work + KRILL_REDUCE_COUNTER_SLOT);
    krill_block_sum<NACC>(v);
    if (threadIdx.x == 0) {
#pragma unroll
        for (int k = 0; k < NACC; k++) work[k * KRILL_REDUCE_MAX_BLOCKS + blockIdx.x] = v[k];
        __threadfence();   /* the partials are visible device-wide before the count */
        is_last = atomicAdd(counter, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!is_last) return;  /* uniform over the block */
    __threadfence();
#pragma unroll
    for (int k = 0; k < NACC; k++) {
        double s = 0.0;
        for (unsigned int b = threadIdx.x; b < gridDim.x; b += KRILL_CUDA_THREADS)
            s += __ldcg(&work[k * KRILL_REDUCE_MAX_BLOCKS + b]);   /* from L2, not a stale L1 */
        v[k] = s;
    }
    krill_block_sum<NACC>(v);
    if (threadIdx.x == 0) {
        finish(v);
        *counter = 0u;     /* ready for the next grid sum on this stream */
    }
}

/* Grid sums of up to 2 KRILL_DCGS2_MAX_COLS + 3 accumulators (DCGS2's sweep), of which those
 * with live(a) are summed (the Gram-Schmidt kernels of kernels/krylov.cu and kernels/dcgs2.cu, whose live set
 * depends on the column count). Each block adds its threads warp by warp in a fixed tree,
 * thread a adds accumulator a's warp sums in warp order and stores them at
 * partial[a * gridDim.x + blockIdx.x]; the last block (atomic counter in `work`) adds each
 * live accumulator's partials in block order, one warp per accumulator, and lane 0 calls
 * store(a, sum). The order depends only on the grid. Requirements: every thread of the
 * grid calls it once, blockDim.x == KRILL_CUDA_THREADS, live(a) is the same for every
 * thread, and `partial` holds NACC * gridDim.x doubles. It must end the kernel: every block
 * but the last returns from it early, and code after the call would run in all of them. */
template <int NACC, typename Live, typename Store>
__device__ __forceinline__ void krill_grid_sum_wide(const double (&acc)[NACC], double *partial,
                                                    double *work, const Live &live,
                                                    const Store &store)
{
    __shared__ double warp_sums[NACC][KRILL_CUDA_WARPS];
    __shared__ bool is_last;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int a = 0; a < NACC; a++) {
        if (live(a)) {
            const double s = krill_warp_sum(acc[a]);
            if (lane == 0) warp_sums[a][warp] = s;
        }
    }
    __syncthreads();
    const int t = threadIdx.x;
    if (t < NACC && live(t)) {
        double s = 0.0;
        for (int q = 0; q < KRILL_CUDA_WARPS; q++) s += warp_sums[t][q];
        partial[(size_t)t * gridDim.x + blockIdx.x] = s;
        __threadfence();   /* the partial is visible device-wide before the count */
    }
    __syncthreads();
    unsigned int *counter = reinterpret_cast<unsigned int *>(work + KRILL_REDUCE_COUNTER_SLOT);
    if (threadIdx.x == 0) is_last = atomicAdd(counter, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!is_last) return;   /* uniform over the block */
    __threadfence();
    for (int a = warp; a < NACC; a += KRILL_CUDA_WARPS) {
        if (!live(a)) continue;   /* uniform over the warp */
        /* the lane's partials b = lane, lane + 32, ... added in that order; loaded eight
           at a time first (from L2, not a stale L1), so that their round trips overlap */
        const double *pa = partial + (size_t)a * gridDim.x;
        double s = 0.0;
        for (unsigned int b0 = lane; b0 < gridDim.x; b0 += 32u * 8u) {
            double part[8];
#pragma unroll
            for (unsigned int m = 0; m < 8u; m++)
                part[m] = b0 + 32u * m < gridDim.x ? __ldcg(&pa[b0 + 32u * m]) : 0.0;
#pragma unroll
            for (unsigned int m = 0; m < 8u; m++)
                if (b0 + 32u * m < gridDim.x) s += part[m];
        }
        s = krill_warp_sum(s);
        if (lane == 0) store(a, s);
    }
    __syncthreads();
    if (threadIdx.x == 0) *counter = 0u;   /* ready for the next grid sum on this stream */
}

/* finish() of a single sum: store it at a device pointer. */
struct krill_store_sum {
    double *result;
    __device__ void operator()(const double (&s)[1]) const { *result = s[0]; }
};

/* d[r] = a_rr (0 when row r stores no diagonal entry) for r < n_rows, from device CSR arrays
 * with row offsets of type I and sorted columns of type J: a binary search per row,
 * grid-stride. Shared by the formats that keep a CSR copy (csr, cusparse); static, so each
 * .cu file that launches it compiles its own copy. */
template <typename I, typename J>
static __global__ void krill_csr_diagonal_kernel(int64_t n_rows, const I *__restrict__ row_ptr,
                                                 const J *__restrict__ col,
                                                 const double *__restrict__ val,
                                                 double *__restrict__ d)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < n_rows; r += stride) {
        int64_t lo = row_ptr[r], hi = (int64_t)row_ptr[r + 1];   /* search [lo, hi) */
        double diag = 0.0;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            const int64_t c = col[mid];
            if (c == r) {
                diag = val[mid];
                break;
            }
            if (c < r) lo = mid + 1;
            else hi = mid;
        }
        d[r] = diag;
    }
}

/* Launch krill_csr_diagonal_kernel on the context's stream (nothing to do for no rows). */
template <typename I, typename J>
static krill_status krill_csr_cuda_diagonal(krill_ctx *ctx, int64_t n_rows, const I *row_ptr,
                                            const J *col, const double *val, double *d)
{
    if (n_rows == 0) return KRILL_OK;
    krill_cuda_launch(ctx, krill_csr_diagonal_kernel<I, J>, n_rows, krill_cuda_stream(ctx), n_rows,
                      row_ptr, col, val, d);
    return krill_cuda_check_launch("krill_csr_diagonal_kernel");
}

/* The n_rows / b dense b x b diagonal blocks of CSR arrays (b divides n_rows), row-major,
 * into `blocks` (zeroed before: absent entries stay 0). A thread per row: a binary search for
 * the first column >= the block's first, then the row's columns inside the block. */
template <typename I, typename J>
__global__ void krill_csr_block_diag_kernel(int64_t n_rows, int b, const I *__restrict__ row_ptr,
                                            const J *__restrict__ col,
                                            const double *__restrict__ val,
                                            double *__restrict__ blocks)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < n_rows; r += stride) {
        const int64_t c0 = r - r % b, end = (int64_t)row_ptr[r + 1];
        int64_t lo = row_ptr[r], hi = end;
        double *out = blocks + c0 * b + (r - c0) * b;
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            if ((int64_t)col[mid] < c0) lo = mid + 1;
            else hi = mid;
        }
        for (; lo < end && (int64_t)col[lo] < c0 + b; lo++) out[col[lo] - c0] = val[lo];
    }
}

/* The diagonal_blocks op of a format on device CSR arrays: gathered on the device, then the
 * n_rows * b doubles downloaded to `blocks` (host); waits. */
template <typename I, typename J>
static krill_status krill_csr_cuda_diagonal_blocks(krill_ctx *ctx, int64_t n_rows, int b,
                                                   const I *row_ptr, const J *col,
                                                   const double *val, double *blocks)
{
    krill_status st = KRILL_OK;
    double *dev = NULL;
    const size_t bytes = (size_t)n_rows * (size_t)b * sizeof(double);
    if (n_rows == 0) goto cleanup;
    KRILL_TRY(krill_mem_alloc(ctx, (void **)&dev, bytes, "diagonal blocks"));
    KRILL_TRY(krill_cuda_memset0(ctx, dev, bytes));
    krill_cuda_launch(ctx, krill_csr_block_diag_kernel<I, J>, n_rows, krill_cuda_stream(ctx),
                      n_rows, b, row_ptr, col, val, dev);
    KRILL_TRY(krill_cuda_check_launch("krill_csr_block_diag_kernel"));
    KRILL_TRY(krill_mem_download(ctx, blocks, dev, bytes));
cleanup:
    krill_mem_free(ctx, dev);
    return st;
}

/* A format's new values (host, nnz doubles) into its device array; waits, so the caller
 * may reuse `values` at once. */
static inline krill_status krill_cuda_upload_values(krill_ctx *ctx, double *dst,
                                                    const double *values, int64_t nnz)
{
    krill_status st = krill_mem_upload(ctx, dst, values, (size_t)nnz * sizeof(double));
    return st != KRILL_OK ? st : krill_cuda_sync(ctx);
}

#endif
