/* apsp/gpu_kernels.cuh - the device code of APSP on the GPU, shared by apsp/gpu_methods.cu
 * (the methods' launches) and apsp/gpu_device.cu (D in device memory): the weight types'
 * arithmetic, the tile kernel of the pivot and panels, the plain per-k kernel, and the host
 * helpers both files use (the min-plus products, built on these: apsp/gpu_minplus.cuh).
 * What each kernel does and why is in gpu_methods.cu's opening comment and doc/apsp.md. */
#ifndef KRILL_APSP_GPU_KERNELS_CUH
#define KRILL_APSP_GPU_KERNELS_CUH
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "apsp/apsp_impl.h"
#include "core/cuda_impl.h"

/* t: 128 (above). A multiple of 32: the tile kernels' 32 x 32 threads own 4 x 4 elements. */
#define APSP_GPU_TILE 128
#define APSP_TILE_THREADS 1024
/* k steps per shared-memory chunk of the min-plus products: 16 keeps the prefetch registers
 * (2 x 128 x 16 values over the block) small enough for two blocks per SM. */
#define APSP_GPU_BK 16
/* shared rows of a chunk are padded by 4 elements: 16-byte aligned, fewer bank conflicts */
#define APSP_SPAD 4

/* The device layer's state (run->device_state). */
typedef struct gpu_state {
    cudaEvent_t *events;
    int n_events;
    int *big;                    /* the int32 packing flag (k_minplus); device memory */
    cudaStream_t side;           /* when not NULL, kernels go there (fw-a's lookahead) */
} gpu_state;

static inline cudaStream_t stream_of(apsp_run *run)
{
    const gpu_state *s = (const gpu_state *)run->device_state;
    return s && s->side ? s->side : (cudaStream_t)run->ctx->cuda->stream;
}

static inline int *big_flag(apsp_run *run) { return ((gpu_state *)run->device_state)->big; }

static inline krill_status cuda_ok(cudaError_t e, const char *what)
{
    krill_status st = KRILL_OK;
    if (e != cudaSuccess) {
        st = krill_error(KRILL_ERR_DEVICE, "apsp: %s: %s", what, cudaGetErrorString(e));
        (void)cudaGetLastError();
    }
    return st;
}

/* ---- the weight types --------------------------------------------------------------------
 * sum: a + b in a dependent kernel (int32: clamped); relax: min(a + b, c) in a product;
 * fix: a product's value as stored (int32: clamped). */
template <typename T> struct W;
template <> struct W<int32_t> {
    static __device__ __forceinline__ int32_t inf() { return APSP_I32_INF; }
    static __device__ __forceinline__ int32_t sum(int32_t a, int32_t b, int32_t hi)
    {
        int32_t s = a + b;
        return s >= hi ? APSP_I32_INF : max(s, -APSP_I32_INF);
    }
    static __device__ __forceinline__ int32_t relax(int32_t a, int32_t b, int32_t c)
    {
        return __viaddmin_s32(a, b, c);
    }
    static __device__ __forceinline__ int32_t add(int32_t a, int32_t b) { return a + b; }
    /* c = min(a + b, c); true when a + b < c (strictly): then the predecessor changes */
    static __device__ __forceinline__ bool relax_p(int32_t a, int32_t b, int32_t &c)
    {
        bool keep;
        c = __vibmin_s32(c, a + b, &keep);   /* keep = (c <= a + b) */
        return !keep;
    }
    static __device__ __forceinline__ int32_t fix(int32_t v, int32_t hi)
    {
        return v >= hi ? APSP_I32_INF : max(v, -APSP_I32_INF);
    }
    static __device__ __forceinline__ bool is_inf(int32_t v) { return v >= APSP_I32_INF; }
};
template <typename F> struct WF {
    static __device__ __forceinline__ F inf() { return (F)INFINITY; }
    static __device__ __forceinline__ F sum(F a, F b, int32_t) { return a + b; }
    static __device__ __forceinline__ F relax(F a, F b, F c) { return min(a + b, c); }
    static __device__ __forceinline__ F add(F a, F b) { return a + b; }
    static __device__ __forceinline__ bool relax_p(F a, F b, F &c)
    {
        F s = a + b;
        bool better = s < c;
        c = better ? s : c;
        return better;
    }
    static __device__ __forceinline__ F fix(F v, int32_t) { return v; }
    static __device__ __forceinline__ bool is_inf(F v) { return isinf(v) && v > 0; }
};
template <> struct W<float> : WF<float> {};
template <> struct W<double> : WF<double> {};

/* Four consecutive elements through 16-byte accesses (two for double); p 16-byte aligned. */
template <typename T> struct V4;
template <> struct V4<int32_t> {
    static __device__ __forceinline__ void ld(const int32_t *p, int32_t *o)
    { int4 v = *(const int4 *)p; o[0] = v.x; o[1] = v.y; o[2] = v.z; o[3] = v.w; }
    static __device__ __forceinline__ void st(int32_t *p, const int32_t *o)
    { *(int4 *)p = make_int4(o[0], o[1], o[2], o[3]); }
};
template <> struct V4<float> {
    static __device__ __forceinline__ void ld(const float *p, float *o)
    { float4 v = *(const float4 *)p; o[0] = v.x; o[1] = v.y; o[2] = v.z; o[3] = v.w; }
    static __device__ __forceinline__ void st(float *p, const float *o)
    { *(float4 *)p = make_float4(o[0], o[1], o[2], o[3]); }
};
template <> struct V4<double> {
    static __device__ __forceinline__ void ld(const double *p, double *o)
    {
        double2 a = *(const double2 *)p, b = *(const double2 *)(p + 2);
        o[0] = a.x; o[1] = a.y; o[2] = b.x; o[3] = b.y;
    }
    static __device__ __forceinline__ void st(double *p, const double *o)
    {
        *(double2 *)p = make_double2(o[0], o[1]);
        *(double2 *)(p + 2) = make_double2(o[2], o[3]);
    }
};

/* ---- device layer: building D ----------------------------------------------------------- */

template <typename T>
__global__ void k_init_fill(T *d, int32_t *p, int64_t npad)
{
    const int64_t cells = npad * npad;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < cells;
         e += (int64_t)gridDim.x * blockDim.x) {
        int64_t i = e / npad, j = e - i * npad;
        d[e] = i == j ? (T)0 : W<T>::inf();
        if (p) p[e] = KRILL_APSP_NO_PRED;
    }
}

/* One thread per vertex u: its arcs into row u (self loops only lower the diagonal). */
template <typename T>
__global__ void k_init_arcs(T *d, int32_t *p, int64_t npad, int32_t n, const int64_t *row_ptr,
                            const int32_t *col, const double *val)
{
    int32_t u = blockIdx.x * blockDim.x + threadIdx.x;
    if (u >= n) return;
    T *row = d + (int64_t)u * npad;
    for (int64_t e = row_ptr[u]; e < row_ptr[u + 1]; e++) {
        int32_t v = col[e];
        T w = (T)val[e];
        if (v == u) {
            if (w < 0) row[u] = w;
        } else {
            row[v] = w;
            if (p) p[(int64_t)u * npad + v] = u;
        }
    }
}

/* int32 predecessors by packed keys: a product with P stages 32 a and 32 b + (k + 1) for the
 * chunk's step k, so one DPX min(a + b, c) on keys gives the minimum and, in the low five
 * bits, the first step that reached it (0: the old value stands, which wins ties -- the
 * strict rule). Exact while every finite operand lies in (-R, R): an operand >= hi (INF) is
 * staged as Q, sums of finite operands stay below 2R = T, sums with an INF operand are at
 * least Q - R > T, and 32 (Q + Q) + 16 < 2^31. A decoded value >= T is INF. Every kernel
 * that writes a finite |value| >= R into D sets *big, after which the products use the
 * compare-and-select loop (stream order makes the flag current for the next launch). */
#define APSP_PACK_R (1 << 23)
#define APSP_PACK_T (1 << 24)
#define APSP_PACK_Q ((1 << 25) - 1)

/* ---- the tile kernels: pivot and panels (dependent steps) -------------------------------- */

/* role per block: pivot_only -> tile (K,K); else blocks 0..nt-2 the row panel (K,J),
 * blocks nt-1..2nt-3 the column panel (I,K). */
template <typename T, bool WP>
__global__ void __launch_bounds__(APSP_TILE_THREADS)
k_fw_tile(T *d, int32_t *p, int64_t ld, int32_t K, int32_t nt, int32_t hi, int pivot_only,
          int *big)
{
    constexpr int t = APSP_GPU_TILE, R = t / 32;
    extern __shared__ __align__(16) unsigned char smem[];
    const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
    int role = 0, I = K, J = K;
    if (!pivot_only) {
        int b = blockIdx.x;
        if (b < nt - 1) {
            role = 1;
            J = b + (b >= K);
        } else {
            b -= nt - 1;
            role = 2;
            I = b + (b >= K);
        }
    }
    /* shared: [pivot tile t*t T] (panels) | row k: t T | column k: t T | row k's P: t int32 */
    T *piv_s = (T *)smem;
    T *row_s = piv_s + (role ? t * t : 0);
    T *col_s = row_s + t;
    int32_t *rowp_s = (int32_t *)(col_s + t);

    T *tile = d + (int64_t)I * t * ld + (int64_t)J * t;
    int32_t *ptile = WP ? p + (int64_t)I * t * ld + (int64_t)J * t : nullptr;
    const T *piv = d + (int64_t)K * t * ld + (int64_t)K * t;
    /* the pivot tile's P (column panels): read from global memory only on an update */
    const int32_t *pivp = WP ? p + (int64_t)K * t * ld + (int64_t)K * t : nullptr;
    /* Without P, and for int32 without negative weights (values stay in [0, INF], sums below
       2 INF), one min(a + b, c) per update: DPX for int32; else the sum with the clamp. */
    const bool fast = !WP && (!(sizeof(T) == 4 && (T)0.5 == (T)0) || hi == APSP_I32_INF);
    T v[R][R];
    int32_t pv[R][R];
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int c = 0; c < R; c++) {
            int64_t off = (int64_t)(ty + 32 * r) * ld + tx + 32 * c;
            v[r][c] = tile[off];
            if (WP) pv[r][c] = ptile[off];
        }
    if (role) {
        for (int e = threadIdx.x; e < t * t; e += APSP_TILE_THREADS)
            piv_s[e] = piv[(int64_t)(e / t) * ld + e % t];
    }
    __syncthreads();
    for (int k = 0; k < t; k++) {
        const int kr = k >> 5, kl = k & 31;
        if (role != 2 && ty == kl) {            /* row k of this tile */
#pragma unroll
            for (int r = 0; r < R; r++)
                if (r == kr)
#pragma unroll
                    for (int c = 0; c < R; c++) {
                        row_s[tx + 32 * c] = v[r][c];
                        if (WP) rowp_s[tx + 32 * c] = pv[r][c];
                    }
        }
        if (role != 1 && tx == kl) {            /* column k of this tile */
#pragma unroll
            for (int c = 0; c < R; c++)
                if (c == kr)
#pragma unroll
                    for (int r = 0; r < R; r++) col_s[ty + 32 * r] = v[r][c];
        }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < R; r++) {
            const int i = ty + 32 * r;
            const T a = role == 1 ? piv_s[i * t + k] : col_s[i];
#pragma unroll
            for (int c = 0; c < R; c++) {
                const int j = tx + 32 * c;
                const T b = role == 2 ? piv_s[k * t + j] : row_s[j];
                if (fast) {
                    v[r][c] = W<T>::relax(a, b, v[r][c]);
                } else {
                    const T s = W<T>::sum(a, b, hi);
                    if (s < v[r][c]) {
                        v[r][c] = s;
                        if (WP) pv[r][c] = role == 2 ? pivp[(int64_t)k * ld + j] : rowp_s[j];
                    }
                }
            }
        }
        __syncthreads();
    }
    bool large = false;
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int c = 0; c < R; c++) {
            int64_t off = (int64_t)(ty + 32 * r) * ld + tx + 32 * c;
            tile[off] = v[r][c];
            if (WP) ptile[off] = pv[r][c];
            if (WP && sizeof(T) == 4 && (T)0.5 == (T)0)    /* int32: the packing flag */
                large |= !W<T>::is_inf(v[r][c]) && (v[r][c] >= (T)APSP_PACK_R ||
                                                   v[r][c] <= -(T)APSP_PACK_R);
        }
    if (large) atomicOr(big, 1);
}

/* ---- plain: one launch per k --------------------------------------------------------------- */

template <typename T, bool WP>
__global__ void k_fw_plain(T *d, int32_t *p, int64_t ld, int32_t n, int32_t k, int32_t hi)
{
    const int32_t j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= n || j >= n) return;
    const T s = W<T>::sum(d[(int64_t)i * ld + k], d[(int64_t)k * ld + j], hi);
    if (s < d[(int64_t)i * ld + j]) {
        d[(int64_t)i * ld + j] = s;
        if (WP) p[(int64_t)i * ld + j] = p[(int64_t)k * ld + j];
    }
}

/* ---- dispatch by weight type and paths ----------------------------------------------------
 * Each entry point below calls its template for the run's (type, paths). */

#define APSP_DISPATCH(run, FN, ...)                                                       \
    ((run)->weight == KRILL_APSP_INT32                                                    \
         ? ((run)->p ? FN<int32_t, true>(__VA_ARGS__) : FN<int32_t, false>(__VA_ARGS__))  \
     : (run)->weight == KRILL_APSP_FLOAT                                                  \
         ? ((run)->p ? FN<float, true>(__VA_ARGS__) : FN<float, false>(__VA_ARGS__))      \
         : ((run)->p ? FN<double, true>(__VA_ARGS__) : FN<double, false>(__VA_ARGS__)))

#endif
