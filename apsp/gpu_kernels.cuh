/* apsp/gpu_kernels.cuh - the device code of APSP on the GPU, shared by apsp/gpu_methods.cu
 * (the methods' launches) and apsp/gpu_device.cu (D in device memory): the weight types'
 * arithmetic, the tile kernel of the pivot and panels, the min-plus product kernels of
 * methods A and B, the plain per-k kernel, and the host helpers both files use. What each
 * kernel does and why is in gpu_methods.cu's opening comment and doc/apsp.md. */
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

/* ---- the min-plus products ----------------------------------------------------------------
 * Cout[M x N] = min(Cin, A[M x kdim] (x) B[kdim x N]) on row-major views; M a multiple of BM,
 * N of 128, kdim of APSP_GPU_BK. Block (bx, by) computes rows by*BM.. and columns bx*128..;
 * a block row or column that falls on [skip*128, skip*128 + 128) is moved past it (the rest
 * phase leaves the pivot row and column tiles alone). Predecessors: P of B's rows (pb, with
 * ldb) beside B, P of C beside Cin / Cout. */
struct mp_args {
    const void *a, *b, *cin;
    void *cout;
    const int32_t *pb, *pcin;
    int32_t *pcout;
    int64_t lda, ldb, ldc, ldo;
    int32_t kdim, hi;
    int32_t skip_r, skip_r2, skip_c, skip_c2;   /* tile rows / columns to leave out, in order */
    int *big;                    /* int32 with P: set once a finite |value| >= APSP_PACK_R */
};

static __device__ __forceinline__ int32_t pack_cap(int32_t x, int32_t hi)
{
    return x >= hi ? APSP_PACK_Q : x;
}

#define APSP_NO_SKIP (INT32_MAX / APSP_GPU_TILE)

/* Block origin after leaving out the tile bands s1 < s2 (APSP_NO_SKIP: none). */
static __device__ __forceinline__ int64_t skip_band(int64_t x, int32_t s1, int32_t s2)
{
    if (x >= (int64_t)s1 * APSP_GPU_TILE) x += APSP_GPU_TILE;
    if (x >= (int64_t)s2 * APSP_GPU_TILE) x += APSP_GPU_TILE;
    return x;
}

/* One chunk of A (BM x BK) and B (BK x 128) (and PB) from global memory into registers. */
template <typename T, bool WP, int BM, int NT, int BK = APSP_GPU_BK>
struct chunk {
    static constexpr int NA = BM * BK / NT, NB = 128 * BK / NT;
    T a[NA], b[NB];
    int32_t pb[WP ? NB : 1];
    __device__ __forceinline__ void load(const T *A, const T *B, const int32_t *PB, int64_t lda,
                                         int64_t ldb, int k0)
    {
#pragma unroll
        for (int q = 0; q < NA; q++) {
            int e = threadIdx.x + q * NT, row = e / BK, col = e % BK;
            a[q] = A[row * lda + k0 + col];
        }
#pragma unroll
        for (int q = 0; q < NB; q++) {
            int e = threadIdx.x + q * NT, row = e / 128, col = e % 128;
            b[q] = B[(int64_t)(k0 + row) * ldb + col];
            if (WP) pb[q] = PB[(int64_t)(k0 + row) * ldb + col];
        }
    }
    /* into shared: As[k][row] (k-major, rows padded), Bs[k][col], PBs[k][col]; packed:
       the keys of the int32 predecessor scheme above */
    __device__ __forceinline__ void store(T *As, T *Bs, int32_t *PBs, bool packed, int32_t hi) const
    {
#pragma unroll
        for (int q = 0; q < NA; q++) {
            int e = threadIdx.x + q * NT, row = e / BK, col = e % BK;
            T x = a[q];
            if (packed) x = (T)(32 * pack_cap((int32_t)x, hi));
            As[col * (BM + APSP_SPAD) + row] = x;
        }
#pragma unroll
        for (int q = 0; q < NB; q++) {
            int e = threadIdx.x + q * NT, row = e / 128, col = e % 128;
            T x = b[q];
            if (packed) x = (T)(32 * pack_cap((int32_t)x, hi) + row + 1);
            Bs[row * (128 + APSP_SPAD) + col] = x;
            if (WP) PBs[row * (128 + APSP_SPAD) + col] = pb[q];
        }
    }
};

/* Distances of 4-byte weights on tiles of up to 64 rows (int32 and float without P: the
 * products the GPU targets are set on) take the operands through a three-stage pipeline of
 * asynchronous copies (cp.async, sm_80 on) instead of the prefetch registers: chunk c + 2 is
 * copied into its stage while chunk c is used, and one barrier per chunk suffices (the stage
 * a copy overwrites was last read before that barrier). Three stages of a 64-row tile: 38 KB
 * of shared memory, two blocks per SM. APSP_GPU_PIPELINE=0 builds the register path alone
 * (the comparison of doc/apsp.md). */
#ifndef APSP_GPU_PIPELINE
#define APSP_GPU_PIPELINE 1
#endif
#define APSP_STAGES 3
/* cp.async exists from sm_80 on: a build for an older GPU takes the register path there */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define APSP_HAVE_CP_ASYNC 0
#else
#define APSP_HAVE_CP_ASYNC 1
#endif

static __device__ __forceinline__ void cp_async4(void *dst, const void *src)
{
#if APSP_HAVE_CP_ASYNC
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(src) : "memory");
#else
    (void)dst, (void)src;
#endif
}
static __device__ __forceinline__ void cp_async16(void *dst, const void *src)
{
#if APSP_HAVE_CP_ASYNC
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src) : "memory");
#else
    (void)dst, (void)src;
#endif
}
static __device__ __forceinline__ void cp_async_commit()
{
#if APSP_HAVE_CP_ASYNC
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
/* every group but the newest `pending` complete (this thread's copies) */
template <int pending> static __device__ __forceinline__ void cp_async_wait()
{
#if APSP_HAVE_CP_ASYNC
    asm volatile("cp.async.wait_group %0;\n" ::"n"(pending) : "memory");
#endif
}

/* Copies of one chunk, A (BM x BK, into As[k][row]: one 4-byte copy per element, as the
 * chunk is transposed) and B (BK x 128, into Bs[k][col]: 16-byte copies; B's rows start at
 * 16-byte boundaries, as every view of D does), by NT threads. */
template <typename T, int BM, int NT, int BK>
static __device__ __forceinline__ void chunk_copy_async(T *As, T *Bs, const T *A, const T *B,
                                                        int64_t lda, int64_t ldb, int k0)
{
    static_assert(sizeof(T) == 4, "the pipeline copies 4-byte weights");
#pragma unroll
    for (int q = 0; q < BM * BK / NT; q++) {
        const int e = threadIdx.x + q * NT, row = e / BK, col = e % BK;
        cp_async4(&As[col * (BM + APSP_SPAD) + row], &A[row * lda + k0 + col]);
    }
#pragma unroll
    for (int q = 0; q < BK * 32 / NT; q++) {
        const int e = threadIdx.x + q * NT, row = e / 32, col = (e % 32) * 4;
        cp_async16(&Bs[row * (128 + APSP_SPAD) + col], &B[(int64_t)(k0 + row) * ldb + col]);
    }
}

/* Method A: TM x TN per thread; rows g*(BM/(TM/4)) + ty*4 + {0..3}, columns likewise.
 * Predecessors: int32 by packed keys (above) while every finite value fits, else -- and for
 * float and double -- a compare and select at every relaxation. */
template <typename T, bool WP, int BM, int TM, int TN, int BK>
__global__ void __launch_bounds__((BM / TM) * (128 / TN))
k_minplus(mp_args g)
{
    constexpr int NT = (BM / TM) * (128 / TN), TXN = 128 / TN;
    constexpr int RS = BM / (TM / 4), CS = 128 / (TN / 4);      /* row / column group strides */
    constexpr int AS = BM + APSP_SPAD, BS = 128 + APSP_SPAD;
    constexpr bool I32 = sizeof(T) == 4 && (T)0.5 == (T)0;
    constexpr bool PIPE = APSP_GPU_PIPELINE && APSP_HAVE_CP_ASYNC && !WP && sizeof(T) == 4 &&
                          BM <= 64;
    constexpr int NS = PIPE ? APSP_STAGES : 1;   /* shared stages */
    __shared__ __align__(16) T As[NS * BK * AS];
    __shared__ __align__(16) T Bs[NS * BK * BS];
    __shared__ __align__(16) int32_t PBs[WP ? BK * BS : 1];
    const int tx = threadIdx.x % TXN, ty = threadIdx.x / TXN;
    const int64_t r0 = skip_band((int64_t)blockIdx.y * BM, g.skip_r, g.skip_r2);
    const int64_t c0 = skip_band((int64_t)blockIdx.x * 128, g.skip_c, g.skip_c2);
    const T *A = (const T *)g.a + r0 * g.lda;
    const T *B = (const T *)g.b + c0;
    const int32_t *PB = WP ? g.pb + c0 : nullptr;
    const bool packed = WP && I32 && *(volatile int *)g.big == 0;    /* uniform per launch */
    T v[TM][TN];
    int32_t pv[WP ? TM : 1][WP ? TN : 1];
    {
        const T *C = (const T *)g.cin + r0 * g.ldc + c0;
#pragma unroll
        for (int i = 0; i < TM; i++) {
            const int row = (i / 4) * RS + ty * 4 + i % 4;
#pragma unroll
            for (int jg = 0; jg < TN / 4; jg++) {
                const int col = jg * CS + tx * 4;
                V4<T>::ld(C + row * g.ldc + col, &v[i][jg * 4]);
                if (WP) V4<int32_t>::ld(g.pcin + (r0 + row) * g.ldc + c0 + col, &pv[i][jg * 4]);
            }
            if (packed)
#pragma unroll
                for (int j = 0; j < TN; j++) v[i][j] = (T)(32 * pack_cap((int32_t)v[i][j], g.hi));
        }
    }
    const int chunks = g.kdim / BK;
    if constexpr (PIPE) {
        /* stages: chunk c in stage c % 3; groups committed in chunk order, one a chunk (empty
           past the last), so waiting for all but the newest leaves chunk c complete */
        chunk_copy_async<T, BM, NT, BK>(As, Bs, A, B, g.lda, g.ldb, 0);
        cp_async_commit();
        if (chunks > 1)
            chunk_copy_async<T, BM, NT, BK>(As + BK * AS, Bs + BK * BS, A, B, g.lda, g.ldb, BK);
        cp_async_commit();
        for (int ch = 0; ch < chunks; ch++) {
            cp_async_wait<1>();
            __syncthreads();    /* chunk ch visible to all; chunk ch - 1's stage read by all */
            if (ch + 2 < chunks) {
                const int s2 = (ch + 2) % APSP_STAGES;
                chunk_copy_async<T, BM, NT, BK>(As + s2 * BK * AS, Bs + s2 * BK * BS, A, B,
                                                g.lda, g.ldb, (ch + 2) * BK);
            }
            cp_async_commit();
            const T *as = As + (ch % APSP_STAGES) * BK * AS, *bs = Bs + (ch % APSP_STAGES) * BK * BS;
#pragma unroll
            for (int k = 0; k < BK; k++) {
                T a[TM], b[TN];
#pragma unroll
                for (int ig = 0; ig < TM / 4; ig++) V4<T>::ld(&as[k * AS + ig * RS + ty * 4], &a[ig * 4]);
#pragma unroll
                for (int jg = 0; jg < TN / 4; jg++) V4<T>::ld(&bs[k * BS + jg * CS + tx * 4], &b[jg * 4]);
#pragma unroll
                for (int i = 0; i < TM; i++)
#pragma unroll
                    for (int j = 0; j < TN; j++) v[i][j] = W<T>::relax(a[i], b[j], v[i][j]);
            }
        }
    }
    chunk<T, WP, BM, NT, BK> next;
    if (!PIPE) {
        next.load(A, B, PB, g.lda, g.ldb, 0);
        next.store(As, Bs, PBs, packed, g.hi);
        __syncthreads();
    }
    for (int ch = 0; ch < (PIPE ? 0 : chunks); ch++) {
        if (ch + 1 < chunks) next.load(A, B, PB, g.lda, g.ldb, (ch + 1) * BK);
        if (!WP || packed) {
#pragma unroll
            for (int k = 0; k < BK; k++) {
                T a[TM], b[TN];
#pragma unroll
                for (int ig = 0; ig < TM / 4; ig++)
                    V4<T>::ld(&As[k * AS + ig * RS + ty * 4], &a[ig * 4]);
#pragma unroll
                for (int jg = 0; jg < TN / 4; jg++)
                    V4<T>::ld(&Bs[k * BS + jg * CS + tx * 4], &b[jg * 4]);
#pragma unroll
                for (int i = 0; i < TM; i++)
#pragma unroll
                    for (int j = 0; j < TN; j++) v[i][j] = W<T>::relax(a[i], b[j], v[i][j]);
            }
            if (WP) {                   /* decode the keys: the step that set each minimum */
#pragma unroll
                for (int i = 0; i < TM; i++)
#pragma unroll
                    for (int j = 0; j < TN; j++) {
                        const int32_t key = (int32_t)v[i][j], step = key & 31;
                        if (step) {
                            pv[i][j] = PBs[(step - 1) * BS + (j / 4) * CS + tx * 4 + j % 4];
                            v[i][j] = (T)(key & ~31);
                        }
                    }
            }
        } else {
#pragma unroll 2
            for (int k = 0; k < BK; k++) {
                T a[TM], b[TN];
                int32_t pb[TN];
#pragma unroll
                for (int ig = 0; ig < TM / 4; ig++)
                    V4<T>::ld(&As[k * AS + ig * RS + ty * 4], &a[ig * 4]);
#pragma unroll
                for (int jg = 0; jg < TN / 4; jg++) {
                    V4<T>::ld(&Bs[k * BS + jg * CS + tx * 4], &b[jg * 4]);
                    V4<int32_t>::ld(&PBs[k * BS + jg * CS + tx * 4], &pb[jg * 4]);
                }
#pragma unroll
                for (int i = 0; i < TM; i++)
#pragma unroll
                    for (int j = 0; j < TN; j++)
                        if (W<T>::relax_p(a[i], b[j], v[i][j])) pv[WP ? i : 0][WP ? j : 0] = pb[j];
            }
        }
        if (ch + 1 < chunks) {         /* one shared stage: the next chunk waits in registers */
            __syncthreads();
            next.store(As, Bs, PBs, packed, g.hi);
            __syncthreads();
        }
    }
    T *C = (T *)g.cout + r0 * g.ldo + c0;
    bool big = false;
#pragma unroll
    for (int i = 0; i < TM; i++) {
        const int row = (i / 4) * RS + ty * 4 + i % 4;
#pragma unroll
        for (int j = 0; j < TN; j++) {
            T f;
            if (packed) {
                const int32_t x = (int32_t)v[i][j] >> 5;
                f = (T)(x >= APSP_PACK_T ? APSP_I32_INF : x);
            } else {
                f = W<T>::fix(v[i][j], g.hi);
            }
            if (WP && W<T>::is_inf(f)) pv[i][j] = KRILL_APSP_NO_PRED;
            if (WP && I32) big |= !W<T>::is_inf(f) && (f >= (T)APSP_PACK_R || f <= -(T)APSP_PACK_R);
            v[i][j] = f;
        }
#pragma unroll
        for (int jg = 0; jg < TN / 4; jg++) {
            const int col = jg * CS + tx * 4;
            V4<T>::st(C + row * g.ldo + col, &v[i][jg * 4]);
            if (WP) V4<int32_t>::st(g.pcout + (r0 + row) * g.ldo + c0 + col, &pv[i][jg * 4]);
        }
    }
    if (big) atomicOr(g.big, 1);
}

/* Method B: 512 threads on a BM x 128 tile; thread = column tid % 128 and BM/4 rows of group
 * tid / 128; the row operand comes from shared memory at every update. BM = 128 for 4-byte
 * weights without P (32 values a thread); 64 otherwise, so that 512 threads stay within
 * 128 registers. */
#define APSP_B_THREADS 512
template <typename T, bool WP> struct cfg_b {
    static constexpr int BM = (sizeof(T) == 8 || WP) ? 64 : 128;
};
template <typename T, bool WP>
__global__ void __launch_bounds__(APSP_B_THREADS)
k_minplus_b(mp_args g)
{
    constexpr int BM = cfg_b<T, WP>::BM, NT = APSP_B_THREADS, RPT = BM * 128 / NT;
    constexpr int AS = BM + APSP_SPAD, BS = 128 + APSP_SPAD;
    __shared__ __align__(16) T As[APSP_GPU_BK * AS];
    __shared__ __align__(16) T Bs[APSP_GPU_BK * BS];
    __shared__ __align__(16) int32_t PBs[WP ? APSP_GPU_BK * BS : 1];
    const int j = threadIdx.x % 128, rg = threadIdx.x / 128;
    const int64_t r0 = skip_band((int64_t)blockIdx.y * BM, g.skip_r, g.skip_r2);
    const int64_t c0 = skip_band((int64_t)blockIdx.x * 128, g.skip_c, g.skip_c2);
    const T *A = (const T *)g.a + r0 * g.lda;
    const T *B = (const T *)g.b + c0;
    const int32_t *PB = WP ? g.pb + c0 : nullptr;
    T v[RPT];
    int32_t pv[WP ? RPT : 1];
#pragma unroll
    for (int i = 0; i < RPT; i++) {
        const int64_t row = r0 + rg * RPT + i;
        v[i] = ((const T *)g.cin)[row * g.ldc + c0 + j];
        if (WP) pv[i] = g.pcin[row * g.ldc + c0 + j];
    }
    chunk<T, WP, BM, NT> next;
    next.load(A, B, PB, g.lda, g.ldb, 0);
    next.store(As, Bs, PBs, false, 0);
    __syncthreads();
    const int chunks = g.kdim / APSP_GPU_BK;
    for (int ch = 0; ch < chunks; ch++) {
        if (ch + 1 < chunks) next.load(A, B, PB, g.lda, g.ldb, (ch + 1) * APSP_GPU_BK);
#pragma unroll 4
        for (int k = 0; k < APSP_GPU_BK; k++) {
            const T b = Bs[k * BS + j];
            const int32_t pb = WP ? PBs[k * BS + j] : 0;
#pragma unroll
            for (int i = 0; i < RPT; i++) {
                const T a = As[k * AS + rg * RPT + i];
                if (WP) {
                    if (W<T>::relax_p(a, b, v[i])) pv[i] = pb;
                } else {
                    v[i] = W<T>::relax(a, b, v[i]);
                }
            }
        }
        if (ch + 1 < chunks) {         /* one shared stage: the next chunk waits in registers */
            __syncthreads();
            next.store(As, Bs, PBs, false, 0);
            __syncthreads();
        }
    }
#pragma unroll
    for (int i = 0; i < RPT; i++) {
        const int64_t row = r0 + rg * RPT + i;
        T f = W<T>::fix(v[i], g.hi);
        ((T *)g.cout)[row * g.ldo + c0 + j] = f;
        if (WP) g.pcout[row * g.ldo + c0 + j] = W<T>::is_inf(f) ? KRILL_APSP_NO_PRED : pv[i];
    }
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
/* gpu_methods.cu: C = min(C_in, A (x) B) over rows x cols (multiples of the product's block
 * tile: 128 serves every type) by method A's kernel, without predecessors, on
 * stream_of(run); gpu_ooc.cu uses it on packed blocks. */
krill_status apsp_gpu_product(apsp_run *run, const mp_args &g, int64_t rows, int64_t cols);

#define APSP_DISPATCH(run, FN, ...)                                                       \
    ((run)->weight == KRILL_APSP_INT32                                                    \
         ? ((run)->p ? FN<int32_t, true>(__VA_ARGS__) : FN<int32_t, false>(__VA_ARGS__))  \
     : (run)->weight == KRILL_APSP_FLOAT                                                  \
         ? ((run)->p ? FN<float, true>(__VA_ARGS__) : FN<float, false>(__VA_ARGS__))      \
         : ((run)->p ? FN<double, true>(__VA_ARGS__) : FN<double, false>(__VA_ARGS__)))

#endif
