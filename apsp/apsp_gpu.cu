/* apsp/apsp_gpu.cu - APSP on the GPU: the device layer (D and P in device memory, built
 * from the uploaded graph, CUDA-event time stamps) and the methods' kernels.
 *
 * Blocked Floyd-Warshall (the APSP paper, Okuyama, Ino and Hagihara; section 4), rounds of
 * tile t = APSP_GPU_TILE, npad = n rounded up to t:
 *   pivot   k_fw_tile, one block: tile (K,K) closed by FW, t steps. The paper's 4.1 design:
 *           every thread keeps its elements in registers; before step k the owners of row
 *           k and column k copy them to shared memory (2t values), one barrier, every
 *           element updated, one barrier.
 *   panels  k_fw_tile, 2(npad/t - 1) blocks: the pivot row tiles (K,J) and column tiles
 *           (I,K), the same loop with the pivot tile (read only) preloaded into shared
 *           memory as the other operand.
 *   rest    every other tile: D_IJ = min(D_IJ, D_IK (x) D_KJ), an independent min-plus
 *           product with inner dimension t. Method A (k_minplus, section 4.2): each thread
 *           keeps a TM x TN block of D in registers, the operands stream through shared
 *           memory in chunks of APSP_GPU_BK steps (the next chunk is loaded into registers
 *           while the current one is used), and each step costs TM + TN shared loads (four
 *           values per 16-byte load) for TM * TN relaxations: int32 through the DPX
 *           instruction min(a + b, c) (__viaddmin_s32), one instruction per relaxation.
 *           Method B (k_minplus_b, section 4.3): two-level blocking: the tile's k steps in
 *           sub-panels of t' = APSP_GPU_BK staged in shared memory; a thread keeps a column
 *           strip of 32 elements and takes the row operand from shared memory at every
 *           update (a broadcast load + the relaxation: the paper's "3-instruction" update,
 *           2 with DPX).
 * Traffic per round: the rest reads and writes all of D once (2 npad^2 elements) for
 * npad^2 t relaxations, so t = 128 moves 1/16 byte of int32 per relaxation: at ~3 TB/s
 * that allows ~48 G relaxations/s per TB/s... well above the ~15 T/s the H100 computes, so
 * the rest is compute bound (t = 64 would be at the limit, t = 32 -- the paper's choice for
 * a GTX 280 -- memory bound). The pivot and panels cost O(npad^2 t) of the O(npad^3).
 * Recursive FW (fw-rec, the paper's Fig. 6): the host recursion on quadrants, each product
 * a k_minplus launch on submatrix views (a product whose output is also an operand goes to
 * a scratch matrix and is copied back, so no block reads what another writes), the base
 * case a k_fw_tile on a diagonal tile.
 * plain: k_fw_plain, one launch per k over all of D: 2 npad^2 elements moved per k, the
 * pre-blocking baseline.
 * int32 clamping and the predecessor rule: apsp_impl.h. */
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

static cudaStream_t stream_of(apsp_run *run)
{
    const gpu_state *s = (const gpu_state *)run->device_state;
    return s && s->side ? s->side : (cudaStream_t)run->ctx->cuda->stream;
}

static int *big_flag(apsp_run *run) { return ((gpu_state *)run->device_state)->big; }

static krill_status cuda_ok(cudaError_t e, const char *what)
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

template <typename T, bool WP>
static size_t tile_smem(int pivot_only)
{
    const size_t t = APSP_GPU_TILE;
    return (pivot_only ? 0 : t * t * sizeof(T)) + 2 * t * sizeof(T) + (WP ? t * 4 : 0);
}

template <typename T, bool WP>
static krill_status launch_tile(apsp_run *run, int32_t K, int pivot_only)
{
    krill_status st = KRILL_OK;
    const int32_t nt = run->npad / APSP_GPU_TILE;
    const size_t smem = tile_smem<T, WP>(pivot_only);
    const int blocks = pivot_only ? 1 : 2 * (nt - 1);
    if (blocks > 0) {
        KRILL_TRY(cuda_ok(cudaFuncSetAttribute(k_fw_tile<T, WP>,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               (int)smem), "shared memory of the tile kernel"));
        k_fw_tile<T, WP><<<blocks, APSP_TILE_THREADS, smem, stream_of(run)>>>(
            (T *)run->d, run->p, run->npad, K, nt, run->clamp_hi, pivot_only, big_flag(run));
        KRILL_TRY(krill_cuda_check_launch(pivot_only ? "apsp pivot tile" : "apsp panel tiles"));
    }
cleanup:
    return st;
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
    __shared__ __align__(16) T As[BK * AS];
    __shared__ __align__(16) T Bs[BK * BS];
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
    chunk<T, WP, BM, NT, BK> next;
    next.load(A, B, PB, g.lda, g.ldb, 0);
    next.store(As, Bs, PBs, packed, g.hi);
    __syncthreads();
    const int chunks = g.kdim / BK;
    for (int ch = 0; ch < chunks; ch++) {
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

/* Block tile rows and per-thread blocks of method A by type and paths: 128 threads a block
 * and up to 255 registers a thread, so that two blocks share an SM (one block's barriers,
 * prologue and write-back overlap the other's relaxations: 7% on int32 n = 16384 and 12% on
 * n = 32768 against one 256-thread block per SM, H200): int32/float 8 x 8 per thread (64
 * accumulators) on 64-row tiles; with P, or double (two registers a value), 8 x 4 on 32-row
 * tiles; double with P 4 x 4 on 16-row tiles. BK: steps per chunk (32 for int32 without P
 * spilled its 48 prefetch registers at 128 threads: kept at 16). cfg_whole: 128-row tiles,
 * one block per whole tile (the panels' products). */
template <typename T, bool WP> struct cfg_a {
    static constexpr int BM = (sizeof(T) == 8 || WP) ? 32 : 64, TM = 8,
                         TN = (sizeof(T) == 8 || WP) ? 4 : 8, BK = APSP_GPU_BK;
};
template <> struct cfg_a<double, true> {
    static constexpr int BM = 16, TM = 4, TN = 4, BK = APSP_GPU_BK;
};
template <typename T, bool WP> struct cfg_whole {
    static constexpr int BM = 128, TM = WP ? 16 : 8, TN = WP ? 4 : 8, BK = APSP_GPU_BK;
};

/* Launch a product over rows x cols of output (multiples of the block tile) with method A's
 * kernel in configuration C, or with method B's. */
template <typename T, bool WP, typename C = cfg_a<T, WP>>
static krill_status launch_product(apsp_run *run, const mp_args &g, int64_t rows, int64_t cols,
                                   int method_b)
{
    krill_status st = KRILL_OK;
    const int bm = method_b ? cfg_b<T, WP>::BM : C::BM;
    dim3 grid((unsigned)(cols / 128), (unsigned)(rows / bm));
    if (grid.x > 0 && grid.y > 0) {
        if (method_b)
            k_minplus_b<T, WP><<<grid, APSP_B_THREADS, 0, stream_of(run)>>>(g);
        else
            k_minplus<T, WP, C::BM, C::TM, C::TN, C::BK>
                <<<grid, (C::BM / C::TM) * (128 / C::TN), 0, stream_of(run)>>>(g);
        KRILL_TRY(krill_cuda_check_launch(method_b ? "apsp min-plus product (method B)"
                                                   : "apsp min-plus product (method A)"));
    }
cleanup:
    return st;
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

static krill_status gpu_pivot(apsp_run *run, int32_t k)
{
    return APSP_DISPATCH(run, launch_tile, run, k, 1);
}

/* The panels of round K as two min-plus products with the closed pivot tile P* (zero
 * diagonal): row tiles D_KJ = min(D_KJ, P* (x) D_KJ), column tiles D_IK = min(D_IK, D_IK (x)
 * P*) -- the paths through the pivot block, which is what the k loop of k_fw_tile finds.
 * A product's output is also an operand, which is safe when one block computes a whole
 * tile: it reads its operand chunks before it writes (cfg_whole). So this serves int32 and
 * float; double (whose whole-tile blocks would not fit the registers) uses k_fw_tile. */
template <typename T, bool WP>
static krill_status panels_products(apsp_run *run, int32_t K)
{
    krill_status st = KRILL_OK;
    const int64_t ld = run->npad, t = APSP_GPU_TILE;
    T *d = (T *)run->d;
    mp_args g;
    memset(&g, 0, sizeof g);
    g.lda = g.ldb = g.ldc = g.ldo = ld;
    g.kdim = APSP_GPU_TILE;
    g.hi = run->clamp_hi;
    g.big = big_flag(run);
    int32_t *p = run->p;                             /* P beside D, same offsets */
    g.a = d + K * t * ld + K * t;                    /* row tiles: P* (x) D_K. */
    g.b = g.cin = g.cout = d + K * t * ld;
    if (WP) g.pb = g.pcin = g.pcout = p + K * t * ld;
    g.skip_r = g.skip_r2 = g.skip_c2 = APSP_NO_SKIP;
    g.skip_c = K;
    KRILL_TRY((launch_product<T, WP, cfg_whole<T, WP>>(run, g, t, ld - t, 0)));
    g.a = g.cin = g.cout = d + K * t;                /* column tiles: D_.K (x) P* */
    g.b = d + K * t * ld + K * t;
    if (WP) {
        g.pcin = g.pcout = p + K * t;
        g.pb = p + K * t * ld + K * t;
    }
    g.skip_r = K;
    g.skip_c = APSP_NO_SKIP;
    KRILL_TRY((launch_product<T, WP, cfg_whole<T, WP>>(run, g, ld - t, t, 0)));
cleanup:
    return st;
}

template <typename T, bool WP>
static krill_status panels_round(apsp_run *run, int32_t K)
{
    if constexpr (sizeof(T) == 8)
        return launch_tile<T, WP>(run, K, 0);
    else
        return panels_products<T, WP>(run, K);
}

static krill_status gpu_panels(apsp_run *run, int32_t k)
{
    return APSP_DISPATCH(run, panels_round, run, k);
}

/* The rest of round K (inner dimension t) over one part of D:
 *   REST_ALL    every tile but tile row and column K
 *   REST_MAIN   every tile but tile rows and columns K and K + 1 (the lookahead's main part)
 *   REST_ROW    tile row K + 1 but column K
 *   REST_COL    tile column K + 1 but rows K and K + 1 */
enum { REST_ALL, REST_MAIN, REST_ROW, REST_COL };

template <typename T, bool WP>
static krill_status rest_part(apsp_run *run, int32_t K, int part, int method_b)
{
    const int64_t ld = run->npad, t = APSP_GPU_TILE;
    const int64_t next = (int64_t)(K + 1) * t;
    T *d = (T *)run->d;
    int64_t rows = ld - t, cols = ld - t, c_off = 0;
    mp_args g;
    g.a = d + K * t;                 /* the pivot column panel: rows 0.., columns K t.. */
    g.b = d + K * t * ld;            /* the pivot row panel */
    g.pb = run->p ? run->p + K * t * ld : nullptr;
    g.lda = g.ldb = g.ldc = g.ldo = ld;
    g.kdim = APSP_GPU_TILE;
    g.skip_r = g.skip_c = K;
    g.skip_r2 = g.skip_c2 = APSP_NO_SKIP;
    g.hi = run->clamp_hi;
    g.big = big_flag(run);
    if (part == REST_MAIN) {
        g.skip_r2 = g.skip_c2 = K + 1;
        rows = cols = ld - 2 * t;
    } else if (part == REST_ROW) {
        g.a = (const T *)g.a + next * ld;
        c_off = next * ld;
        g.skip_r = APSP_NO_SKIP;
        rows = t;
    } else if (part == REST_COL) {
        g.b = (const T *)g.b + next;
        if (g.pb) g.pb += next;
        c_off = next;
        g.skip_c = APSP_NO_SKIP;
        g.skip_r2 = K + 1;
        rows = ld - 2 * t;
        cols = t;
    }
    g.cin = g.cout = d + c_off;
    g.pcin = g.pcout = run->p ? run->p + c_off : nullptr;
    return launch_product<T, WP>(run, g, rows, cols, method_b);
}

static krill_status gpu_rest_a(apsp_run *run, int32_t k)
{
    return APSP_DISPATCH(run, rest_part, run, k, REST_ALL, 0);
}
static krill_status gpu_rest_b(apsp_run *run, int32_t k)
{
    return APSP_DISPATCH(run, rest_part, run, k, REST_ALL, 1);
}

/* ---- fw-a's lookahead --------------------------------------------------------------------
 * Round K + 1's pivot and panels need from round K's rest only tile row and column K + 1.
 * So rest(K) computes those first on a second stream, which then goes on with pivot(K + 1)
 * and panels(K + 1), while the main stream computes the rest of round K (REST_MAIN, the
 * disjoint bulk); the main stream waits for the second before round K + 1. The pivot's
 * single block and the panels' few blocks then run beside the rest's many, instead of
 * between them. Their time, from events on the second stream, goes to t_pivot and t_panels
 * (run->t_hidden_*) without adding to the rounds' time. */
typedef struct la_state {
    cudaStream_t side;
    cudaEvent_t fork, join;
    cudaEvent_t *ev;             /* round k >= 1: before pivot(k), after it, after panels(k) */
    int n_ev, rounds;
} la_state;

static void la_end(apsp_run *run)
{
    la_state *la = (la_state *)run->state;
    if (la) {
        if (la->side) (void)cudaStreamSynchronize(la->side);
        for (int i = 0; i < la->n_ev; i++) (void)cudaEventDestroy(la->ev[i]);
        if (la->fork) (void)cudaEventDestroy(la->fork);
        if (la->join) (void)cudaEventDestroy(la->join);
        if (la->side) (void)cudaStreamDestroy(la->side);
        krill_free(la->ev);
        krill_free(la);
    }
    run->state = NULL;
}

static krill_status la_begin(apsp_run *run)
{
    krill_status st = KRILL_OK;
    la_state *la = NULL;
    KRILL_CALLOC(la, 1);
    run->state = la;
    la->rounds = run->npad / APSP_GPU_TILE;
    if (la->rounds >= 2) {
        KRILL_TRY(cuda_ok(cudaStreamCreateWithFlags(&la->side, cudaStreamNonBlocking),
                          "lookahead stream"));
        KRILL_TRY(cuda_ok(cudaEventCreateWithFlags(&la->fork, cudaEventDisableTiming), "event"));
        KRILL_TRY(cuda_ok(cudaEventCreateWithFlags(&la->join, cudaEventDisableTiming), "event"));
        KRILL_CALLOC(la->ev, 3 * la->rounds);
        for (; la->n_ev < 3 * la->rounds; la->n_ev++)
            KRILL_TRY(cuda_ok(cudaEventCreate(&la->ev[la->n_ev]), "event"));
    }
cleanup:
    return st;
}

static int la_on(const apsp_run *run) { return ((const la_state *)run->state)->rounds >= 2; }

static krill_status la_pivot(apsp_run *run, int32_t k)
{
    return k > 0 && la_on(run) ? KRILL_OK : APSP_DISPATCH(run, launch_tile, run, k, 1);
}

static krill_status la_panels(apsp_run *run, int32_t k)
{
    return k > 0 && la_on(run) ? KRILL_OK : gpu_panels(run, k);
}

/* The hidden pivot and panel times, once the last lookahead is done. */
static krill_status la_times(apsp_run *run)
{
    krill_status st = KRILL_OK;
    la_state *la = (la_state *)run->state;
    KRILL_TRY(cuda_ok(cudaEventSynchronize(la->ev[la->n_ev - 1]), "cudaEventSynchronize"));
    for (int k = 1; k < la->rounds; k++) {
        float a = 0, b = 0;
        KRILL_TRY(cuda_ok(cudaEventElapsedTime(&a, la->ev[3 * k], la->ev[3 * k + 1]), "lookahead time"));
        KRILL_TRY(cuda_ok(cudaEventElapsedTime(&b, la->ev[3 * k + 1], la->ev[3 * k + 2]), "lookahead time"));
        run->t_hidden_pivot += 1e-3 * a;
        run->t_hidden_panels += 1e-3 * b;
    }
cleanup:
    return st;
}

static krill_status la_rest(apsp_run *run, int32_t K)
{
    krill_status st = KRILL_OK;
    la_state *la = (la_state *)run->state;
    gpu_state *gs = (gpu_state *)run->device_state;
    cudaStream_t main_stream = stream_of(run);
    if (!la_on(run) || K + 1 >= la->rounds) {
        KRILL_TRY(gpu_rest_a(run, K));
        if (la_on(run)) KRILL_TRY(la_times(run));
    } else {
        cudaEvent_t *ev = la->ev + 3 * (K + 1);
        KRILL_TRY(cuda_ok(cudaEventRecord(la->fork, main_stream), "lookahead fork"));
        KRILL_TRY(cuda_ok(cudaStreamWaitEvent(la->side, la->fork, 0), "lookahead fork"));
        gs->side = la->side;
        KRILL_TRY(APSP_DISPATCH(run, rest_part, run, K, REST_ROW, 0));
        KRILL_TRY(APSP_DISPATCH(run, rest_part, run, K, REST_COL, 0));
        KRILL_TRY(cuda_ok(cudaEventRecord(ev[0], la->side), "lookahead event"));
        KRILL_TRY(APSP_DISPATCH(run, launch_tile, run, K + 1, 1));
        KRILL_TRY(cuda_ok(cudaEventRecord(ev[1], la->side), "lookahead event"));
        KRILL_TRY(gpu_panels(run, K + 1));
        KRILL_TRY(cuda_ok(cudaEventRecord(ev[2], la->side), "lookahead event"));
        KRILL_TRY(cuda_ok(cudaEventRecord(la->join, la->side), "lookahead join"));
        gs->side = NULL;
        KRILL_TRY(APSP_DISPATCH(run, rest_part, run, K, REST_MAIN, 0));
        KRILL_TRY(cuda_ok(cudaStreamWaitEvent(main_stream, la->join, 0), "lookahead join"));
    }
cleanup:
    gs->side = NULL;
    return st;
}

template <typename T, bool WP>
static krill_status plain_all(apsp_run *run)
{
    krill_status st = KRILL_OK;
    const dim3 block(32, 8);
    const dim3 grid((unsigned)((run->n + 31) / 32), (unsigned)((run->n + 7) / 8));
    for (int32_t k = 0; k < run->n; k++) {
        k_fw_plain<T, WP><<<grid, block, 0, stream_of(run)>>>((T *)run->d, run->p, run->npad,
                                                               run->n, k, run->clamp_hi);
        KRILL_TRY(krill_cuda_check_launch("apsp plain FW step"));
    }
cleanup:
    return st;
}

static krill_status gpu_plain_whole(apsp_run *run) { return APSP_DISPATCH(run, plain_all, run); }

/* ---- fw-rec -------------------------------------------------------------------------------- */

typedef struct rec_state {
    void *tmp;                   /* scratch for products whose output is an operand */
    int32_t *ptmp;
    int64_t ldt;                 /* its leading dimension */
} rec_state;

/* One view product: C[rc.., cc..] (rows x cols) = min(C, A[ra.., ca..] (x) B[rb.., cb..]),
 * inner kd; through the scratch when C is also A or B. */
template <typename T, bool WP>
static krill_status rec_product(apsp_run *run, int64_t rc, int64_t cc, int64_t ra, int64_t ca,
                                int64_t rb, int64_t cb, int64_t rows, int64_t cols, int64_t kd)
{
    krill_status st = KRILL_OK;
    const rec_state *rs = (const rec_state *)run->state;
    const int64_t ld = run->npad;
    T *d = (T *)run->d;
    const int alias = (ra == rc && ca == cc) || (rb == rc && cb == cc);
    mp_args g;
    g.a = d + ra * ld + ca;
    g.b = d + rb * ld + cb;
    g.cin = d + rc * ld + cc;
    g.pb = WP ? run->p + rb * ld + cb : nullptr;
    g.pcin = WP ? run->p + rc * ld + cc : nullptr;
    g.lda = g.ldb = g.ldc = ld;
    g.kdim = (int32_t)kd;
    g.skip_r = g.skip_c = g.skip_r2 = g.skip_c2 = APSP_NO_SKIP;
    g.hi = run->clamp_hi;
    g.big = big_flag(run);
    if (alias) {
        g.cout = rs->tmp;
        g.pcout = WP ? rs->ptmp : nullptr;
        g.ldo = rs->ldt;
    } else {
        g.cout = d + rc * ld + cc;
        g.pcout = WP ? run->p + rc * ld + cc : nullptr;
        g.ldo = ld;
    }
    KRILL_TRY((launch_product<T, WP>(run, g, rows, cols, 0)));
    if (alias) {
        KRILL_TRY(cuda_ok(cudaMemcpy2DAsync(d + rc * ld + cc, ld * sizeof(T), rs->tmp,
                                            rs->ldt * sizeof(T), cols * sizeof(T), rows,
                                            cudaMemcpyDeviceToDevice, stream_of(run)),
                          "fw-rec copy back"));
        if (WP)
            KRILL_TRY(cuda_ok(cudaMemcpy2DAsync(run->p + rc * ld + cc, ld * 4, rs->ptmp,
                                                rs->ldt * 4, cols * 4, rows,
                                                cudaMemcpyDeviceToDevice, stream_of(run)),
                              "fw-rec copy back"));
    }
cleanup:
    return st;
}

/* The paper's Fig. 6 on the diagonal block at o of side s (multiples of t): split at h. */
template <typename T, bool WP>
static krill_status rec_fw(apsp_run *run, int64_t o, int64_t s)
{
    krill_status st = KRILL_OK;
    const int64_t t = APSP_GPU_TILE;
    if (s <= t) {
        KRILL_TRY((launch_tile<T, WP>(run, (int32_t)(o / t), 1)));
    } else {
        const int64_t h = s / t / 2 * t, o2 = o + h, s2 = s - h;
        KRILL_TRY((rec_fw<T, WP>(run, o, h)));
        KRILL_TRY((rec_product<T, WP>(run, o, o2, o, o, o, o2, h, s2, h)));      /* M12 = M11 M12 */
        KRILL_TRY((rec_product<T, WP>(run, o2, o, o2, o, o, o, s2, h, h)));      /* M21 = M21 M11 */
        KRILL_TRY((rec_product<T, WP>(run, o2, o2, o2, o, o, o2, s2, s2, h)));   /* M22 = min(M22, M21 M12) */
        KRILL_TRY((rec_fw<T, WP>(run, o2, s2)));
        KRILL_TRY((rec_product<T, WP>(run, o2, o, o2, o2, o2, o, s2, h, s2)));   /* M21 = M22 M21 */
        KRILL_TRY((rec_product<T, WP>(run, o, o2, o, o2, o2, o2, h, s2, s2)));   /* M12 = M12 M22 */
        KRILL_TRY((rec_product<T, WP>(run, o, o, o, o2, o2, o, h, h, s2)));      /* M11 = min(M11, M12 M21) */
    }
cleanup:
    return st;
}

template <typename T, bool WP>
static krill_status rec_all(apsp_run *run) { return rec_fw<T, WP>(run, 0, run->npad); }

static krill_status gpu_rec_begin(apsp_run *run)
{
    krill_status st = KRILL_OK;
    rec_state *rs = NULL;
    const int64_t t = APSP_GPU_TILE, h = run->npad / t / 2 * t, side = run->npad - h;
    KRILL_CALLOC(rs, 1);
    run->state = rs;
    rs->ldt = side;
    if (h > 0) {
        KRILL_TRY(krill_cuda_alloc(run->ctx, &rs->tmp, (size_t)(side * side) * run->elem,
                                   "fw-rec scratch"));
        if (run->p)
            KRILL_TRY(krill_cuda_alloc(run->ctx, (void **)&rs->ptmp, (size_t)(side * side) * 4,
                                       "fw-rec scratch P"));
    }
cleanup:
    return st;
}

static void gpu_rec_end(apsp_run *run)
{
    rec_state *rs = (rec_state *)run->state;
    if (rs) {
        krill_cuda_free(run->ctx, rs->tmp);
        krill_cuda_free(run->ctx, rs->ptmp);
        krill_free(rs);
    }
    run->state = NULL;
}

static krill_status gpu_rec_whole(apsp_run *run) { return APSP_DISPATCH(run, rec_all, run); }

/* ---- the device layer ------------------------------------------------------------------------ */

static krill_status gpu_free_bytes(apsp_run *run, double *bytes)
{
    krill_status st = KRILL_OK;
    size_t free_b = 0, total_b = 0;
    (void)run;
    KRILL_TRY(cuda_ok(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo"));
    *bytes = (double)free_b;
cleanup:
    return st;
}

static krill_status gpu_alloc(apsp_run *run, int paths, int stamps)
{
    krill_status st = KRILL_OK;
    gpu_state *s = NULL;
    const size_t cells = (size_t)run->npad * (size_t)run->npad;
    KRILL_CALLOC(s, 1);
    run->device_state = s;
    KRILL_TRY(krill_cuda_alloc(run->ctx, &run->d, cells * run->elem, "APSP distance matrix D"));
    if (paths)
        KRILL_TRY(krill_cuda_alloc(run->ctx, (void **)&run->p, cells * 4,
                                   "APSP predecessor matrix P"));
    KRILL_TRY(krill_cuda_alloc(run->ctx, (void **)&s->big, sizeof(int), "APSP packing flag"));
    KRILL_CALLOC(s->events, stamps);
    for (; s->n_events < stamps; s->n_events++)
        KRILL_TRY(cuda_ok(cudaEventCreate(&s->events[s->n_events]), "cudaEventCreate"));
cleanup:
    return st;
}

template <typename T, bool WP>
static krill_status init_d(apsp_run *run, const int64_t *row_ptr, const int32_t *col,
                           const double *val)
{
    krill_status st = KRILL_OK;
    const int threads = 256;
    const int64_t cells = (int64_t)run->npad * run->npad;
    const int fill_blocks = (int)((cells + threads - 1) / threads < 65536 ? (cells + threads - 1) / threads : 65536);
    k_init_fill<T><<<fill_blocks, threads, 0, stream_of(run)>>>((T *)run->d, run->p, run->npad);
    KRILL_TRY(krill_cuda_check_launch("apsp fill D"));
    k_init_arcs<T><<<(run->n + threads - 1) / threads, threads, 0, stream_of(run)>>>(
        (T *)run->d, run->p, run->npad, run->n, row_ptr, col, val);
    KRILL_TRY(krill_cuda_check_launch("apsp arcs into D"));
cleanup:
    return st;
}

static krill_status gpu_init(apsp_run *run, double *upload)
{
    krill_status st = KRILL_OK;
    const krill_csr *g = run->graph;
    int64_t *row_ptr = NULL;
    int32_t *col = NULL;
    double *val = NULL;
    double t0 = krill_wtime();
    KRILL_TRY(krill_cuda_alloc(run->ctx, (void **)&row_ptr, (size_t)(g->n_rows + 1) * 8, "graph offsets"));
    KRILL_TRY(krill_cuda_alloc(run->ctx, (void **)&col, (size_t)g->nnz * 4 + 4, "graph heads"));
    KRILL_TRY(krill_cuda_alloc(run->ctx, (void **)&val, (size_t)g->nnz * 8 + 8, "graph weights"));
    KRILL_TRY(krill_cuda_memcpy(run->ctx, row_ptr, g->row_ptr, (size_t)(g->n_rows + 1) * 8, 0));
    if (g->nnz > 0) {
        KRILL_TRY(krill_cuda_memcpy(run->ctx, col, g->col, (size_t)g->nnz * 4, 0));
        KRILL_TRY(krill_cuda_memcpy(run->ctx, val, g->val, (size_t)g->nnz * 8, 0));
    }
    KRILL_TRY(krill_cuda_sync(run->ctx));
    *upload = krill_wtime() - t0;
    KRILL_TRY(APSP_DISPATCH(run, init_d, run, row_ptr, col, val));
    {
        int big = 0;              /* a finite weight out of the packing range */
        for (int64_t e = 0; e < g->nnz; e++)
            if (fabs(g->val[e]) >= APSP_PACK_R && g->val[e] < run->clamp_hi) big = 1;
        KRILL_TRY(krill_cuda_memcpy(run->ctx, big_flag(run), &big, sizeof big, 0));
    }
    KRILL_TRY(krill_cuda_sync(run->ctx));    /* the graph's buffers are freed below */
cleanup:
    krill_cuda_free(run->ctx, row_ptr);
    krill_cuda_free(run->ctx, col);
    krill_cuda_free(run->ctx, val);
    return st;
}

static krill_status gpu_stamp(apsp_run *run, int index)
{
    gpu_state *s = (gpu_state *)run->device_state;
    if (index < 0 || index >= s->n_events)
        return krill_error(KRILL_ERR_INTERNAL, "apsp: time stamp %d of %d", index, s->n_events);
    return cuda_ok(cudaEventRecord(s->events[index], stream_of(run)), "cudaEventRecord");
}

static krill_status gpu_elapsed(apsp_run *run, int count, double *out)
{
    krill_status st = KRILL_OK;
    gpu_state *s = (gpu_state *)run->device_state;
    if (count > 0) KRILL_TRY(cuda_ok(cudaEventSynchronize(s->events[count - 1]), "cudaEventSynchronize"));
    for (int i = 0; i + 1 < count; i++) {
        float ms = 0;
        KRILL_TRY(cuda_ok(cudaEventElapsedTime(&ms, s->events[i], s->events[i + 1]),
                          "cudaEventElapsedTime"));
        out[i] = 1e-3 * ms;
    }
cleanup:
    return st;
}

/* The n x n corner of a device matrix (leading dimension npad) into host memory through
 * two pinned staging buffers of APSP_STAGE_BYTES: the copy of chunk c + 1 to one buffer
 * runs while the host moves chunk c out of the other (a pageable cudaMemcpy2D of
 * 1 GiB took 0.73 s on the H100). Without pinned memory, the pageable copy. */
#define APSP_STAGE_BYTES (32u << 20)

static krill_status fetch_matrix(apsp_run *run, void *host, const void *dev, size_t elem)
{
    krill_status st = KRILL_OK;
    const size_t n = (size_t)run->n, npad = (size_t)run->npad, row = n * elem;
    const size_t rows = APSP_STAGE_BYTES / row > 0 ? APSP_STAGE_BYTES / row : 1;
    cudaStream_t stream = stream_of(run);
    void *stage[2] = {NULL, NULL};
    cudaEvent_t ready[2] = {NULL, NULL};
    if (cudaMallocHost(&stage[0], rows * row) != cudaSuccess ||
        cudaMallocHost(&stage[1], rows * row) != cudaSuccess) {
        (void)cudaGetLastError();
        KRILL_TRY(cuda_ok(cudaMemcpy2DAsync(host, row, dev, npad * elem, row, n,
                                            cudaMemcpyDeviceToHost, stream), "download"));
        KRILL_TRY(krill_cuda_sync(run->ctx));
        goto cleanup;
    }
    for (int b = 0; b < 2; b++)
        KRILL_TRY(cuda_ok(cudaEventCreateWithFlags(&ready[b], cudaEventDisableTiming), "event"));
    for (size_t first = 0, c = 0; first < n; first += rows, c++) {
        const size_t count = n - first < rows ? n - first : rows;
        if (c == 0) {          /* the first chunk; each later one is queued a step ahead */
            KRILL_TRY(cuda_ok(cudaMemcpy2DAsync(stage[0], row, (const char *)dev, npad * elem,
                                                row, count, cudaMemcpyDeviceToHost, stream),
                              "download"));
            KRILL_TRY(cuda_ok(cudaEventRecord(ready[0], stream), "event"));
        }
        if (first + rows < n) {
            const size_t next = n - first - rows < rows ? n - first - rows : rows;
            KRILL_TRY(cuda_ok(cudaMemcpy2DAsync(stage[(c + 1) & 1], row,
                                                (const char *)dev + (first + rows) * npad * elem,
                                                npad * elem, row, next, cudaMemcpyDeviceToHost,
                                                stream), "download"));
            KRILL_TRY(cuda_ok(cudaEventRecord(ready[(c + 1) & 1], stream), "event"));
        }
        KRILL_TRY(cuda_ok(cudaEventSynchronize(ready[c & 1]), "download"));
        memcpy((char *)host + first * row, stage[c & 1], count * row);
    }
cleanup:
    (void)cudaStreamSynchronize(stream);     /* no copy may still target a buffer freed here */
    for (int b = 0; b < 2; b++) {
        if (ready[b]) (void)cudaEventDestroy(ready[b]);
        if (stage[b]) (void)cudaFreeHost(stage[b]);
    }
    return st;
}

static krill_status gpu_fetch(apsp_run *run, void *dist, int32_t *pred)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(krill_cuda_sync(run->ctx));
    KRILL_TRY(fetch_matrix(run, dist, run->d, run->elem));
    if (pred && run->p) KRILL_TRY(fetch_matrix(run, pred, run->p, 4));
cleanup:
    return st;
}

static krill_status gpu_sync(apsp_run *run) { return krill_cuda_sync(run->ctx); }

static void gpu_release(apsp_run *run)
{
    gpu_state *s = (gpu_state *)run->device_state;
    if (run->d || run->p) (void)cudaStreamSynchronize(stream_of(run));
    krill_cuda_free(run->ctx, run->d);
    krill_cuda_free(run->ctx, run->p);
    run->d = NULL;
    run->p = NULL;
    if (s) {
        krill_cuda_free(run->ctx, s->big);
        for (int i = 0; i < s->n_events; i++) (void)cudaEventDestroy(s->events[i]);
        krill_free(s->events);
        krill_free(s);
    }
    run->device_state = NULL;
}

extern "C" {
const apsp_device apsp_gpu_device = {"gpu", gpu_free_bytes, gpu_alloc, gpu_init, gpu_stamp,
                                     gpu_elapsed, gpu_fetch, gpu_sync, gpu_release};
/* tile, granule, begin, pivot, panels, rest, whole, end */
const apsp_ops apsp_gpu_plain = {1, 1, NULL, NULL, NULL, NULL, gpu_plain_whole, NULL};
const apsp_ops apsp_gpu_fw_a = {APSP_GPU_TILE, 0, la_begin, la_pivot, la_panels, la_rest,
                                NULL, la_end};
const apsp_ops apsp_gpu_fw_b = {APSP_GPU_TILE, 0, NULL, gpu_pivot, gpu_panels,
                                gpu_rest_b, NULL, NULL};
const apsp_ops apsp_gpu_fw_rec = {APSP_GPU_TILE, 0, gpu_rec_begin, NULL, NULL,
                                  NULL, gpu_rec_whole, gpu_rec_end};
}
