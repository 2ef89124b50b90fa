/* apsp/gpu_minplus.cuh - the min-plus product kernels of the GPU methods (method A's
 * k_minplus with its cp.async pipeline, method B's k_minplus_b), on the weight types and
 * packing of apsp/gpu_kernels.cuh; launched by apsp/gpu_methods.cu (the in-core methods)
 * and apsp/gpu_ooc.cu (the out-of-core products). What each kernel does and why is in
 * gpu_methods.cu's opening comment and doc/apsp.md. */
#ifndef KRILL_APSP_GPU_MINPLUS_CUH
#define KRILL_APSP_GPU_MINPLUS_CUH
#include "apsp/gpu_kernels.cuh"

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

/* 4-byte weights on tiles of up to 64 rows (int32 and float, with or without P: the
 * products the GPU targets are set on) take the operands through a pipeline of asynchronous
 * copies (cp.async, sm_80 on) instead of the prefetch registers: while chunk c is used, the
 * next NS - 1 chunks are being copied into their stages, and one barrier per chunk suffices
 * (the stage a copy overwrites was last read before that barrier). On a 64-row tile: without
 * P three stages (38 KB of shared memory, two blocks per SM); with P two (A, B and B's
 * predecessors: 42 KB, within the 48 KB of static shared memory). The
 * packed int32 keys (above) are made in place: each thread rewrites the elements it copied,
 * once its copies have landed and before the barrier that shows them to the block.
 * APSP_GPU_PIPELINE=0 builds the register path alone (the comparison of doc/apsp.md). */
#ifndef APSP_GPU_PIPELINE
#define APSP_GPU_PIPELINE 1
#endif
#define APSP_STAGES 3
#define APSP_STAGES_P 2
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
 * chunk is transposed), B (BK x 128, into Bs[k][col]: 16-byte copies; B's rows start at
 * 16-byte boundaries, as every view of D and P does) and with P, B's predecessors likewise
 * into PBs, by NT threads. */
template <typename T, bool WP, int BM, int NT, int BK>
static __device__ __forceinline__ void chunk_copy_async(T *As, T *Bs, int32_t *PBs, const T *A,
                                                        const T *B, const int32_t *PB,
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
        const int64_t src = (int64_t)(k0 + row) * ldb + col;
        cp_async16(&Bs[row * (128 + APSP_SPAD) + col], &B[src]);
        if (WP) cp_async16(&PBs[row * (128 + APSP_SPAD) + col], &PB[src]);
    }
}

/* The packed int32 keys of one chunk made in place from the values this thread copied
 * (chunk_copy_async's element assignment): A's 32 cap(a), B's 32 cap(b) + step + 1. */
template <typename T, int BM, int NT, int BK>
static __device__ __forceinline__ void chunk_pack_own(T *As, T *Bs, int32_t hi)
{
#pragma unroll
    for (int q = 0; q < BM * BK / NT; q++) {
        const int e = threadIdx.x + q * NT, row = e / BK, col = e % BK;
        T *x = &As[col * (BM + APSP_SPAD) + row];
        *x = (T)(32 * pack_cap((int32_t)*x, hi));
    }
#pragma unroll
    for (int q = 0; q < BK * 32 / NT; q++) {
        const int e = threadIdx.x + q * NT, row = e / 32, col = (e % 32) * 4;
#pragma unroll
        for (int u = 0; u < 4; u++) {
            T *x = &Bs[row * (128 + APSP_SPAD) + col + u];
            *x = (T)(32 * pack_cap((int32_t)*x, hi) + row + 1);
        }
    }
}

/* The BK relaxation steps of one chunk in shared memory (As[k][row], Bs[k][col], PBs[k][col])
 * on a thread's TM x TN accumulators: plain or packed keys, then with P the keys decoded (the
 * step that set each minimum gives its predecessor), or a compare and select per step. */
template <typename T, bool WP, int BM, int TM, int TN, int BK>
static __device__ __forceinline__ void chunk_relax(const T *As, const T *Bs, const int32_t *PBs,
                                                   T (&v)[TM][TN],
                                                   int32_t (&pv)[WP ? TM : 1][WP ? TN : 1],
                                                   bool packed)
{
    constexpr int TXN = 128 / TN, RS = BM / (TM / 4), CS = 128 / (TN / 4);
    constexpr int AS = BM + APSP_SPAD, BS = 128 + APSP_SPAD;
    const int tx = threadIdx.x % TXN, ty = threadIdx.x / TXN;
    if (!WP || packed) {
#pragma unroll
        for (int k = 0; k < BK; k++) {
            T a[TM], b[TN];
#pragma unroll
            for (int ig = 0; ig < TM / 4; ig++) V4<T>::ld(&As[k * AS + ig * RS + ty * 4], &a[ig * 4]);
#pragma unroll
            for (int jg = 0; jg < TN / 4; jg++) V4<T>::ld(&Bs[k * BS + jg * CS + tx * 4], &b[jg * 4]);
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
                        pv[WP ? i : 0][WP ? j : 0] =
                            PBs[(step - 1) * BS + (j / 4) * CS + tx * 4 + j % 4];
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
            for (int ig = 0; ig < TM / 4; ig++) V4<T>::ld(&As[k * AS + ig * RS + ty * 4], &a[ig * 4]);
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
    constexpr bool PIPE = APSP_GPU_PIPELINE && APSP_HAVE_CP_ASYNC && sizeof(T) == 4 && BM <= 64;
    constexpr int NS = PIPE ? (WP ? APSP_STAGES_P : APSP_STAGES) : 1;   /* shared stages */
    __shared__ __align__(16) T As[NS * BK * AS];
    __shared__ __align__(16) T Bs[NS * BK * BS];
    __shared__ __align__(16) int32_t PBs[WP ? NS * BK * BS : 1];
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
        /* chunk c in stage c % NS; groups committed in chunk order, one a chunk (empty past
           the last), so waiting for all but the newest NS - 2 leaves chunk c complete */
#pragma unroll
        for (int s = 0; s < NS - 1; s++) {
            if (s < chunks)
                chunk_copy_async<T, WP, BM, NT, BK>(As + s * BK * AS, Bs + s * BK * BS,
                                                    PBs + (WP ? s * BK * BS : 0), A, B, PB,
                                                    g.lda, g.ldb, s * BK);
            cp_async_commit();
        }
        for (int ch = 0; ch < chunks; ch++) {
            const int st = ch % NS;
            cp_async_wait<NS - 2>();
            if (packed) chunk_pack_own<T, BM, NT, BK>(As + st * BK * AS, Bs + st * BK * BS, g.hi);
            __syncthreads();    /* chunk ch visible to all; chunk ch - 1's stage read by all */
            if (ch + NS - 1 < chunks) {
                const int s2 = (ch + NS - 1) % NS;
                chunk_copy_async<T, WP, BM, NT, BK>(As + s2 * BK * AS, Bs + s2 * BK * BS,
                                                    PBs + (WP ? s2 * BK * BS : 0), A, B, PB,
                                                    g.lda, g.ldb, (ch + NS - 1) * BK);
            }
            cp_async_commit();
            chunk_relax<T, WP, BM, TM, TN, BK>(As + st * BK * AS, Bs + st * BK * BS,
                                               PBs + (WP ? st * BK * BS : 0), v, pv, packed);
        }
    } else {
        chunk<T, WP, BM, NT, BK> next;
        next.load(A, B, PB, g.lda, g.ldb, 0);
        next.store(As, Bs, PBs, packed, g.hi);
        __syncthreads();
        for (int ch = 0; ch < chunks; ch++) {
            if (ch + 1 < chunks) next.load(A, B, PB, g.lda, g.ldb, (ch + 1) * BK);
            chunk_relax<T, WP, BM, TM, TN, BK>(As, Bs, PBs, v, pv, packed);
            if (ch + 1 < chunks) {     /* one shared stage: the next chunk waits in registers */
                __syncthreads();
                next.store(As, Bs, PBs, packed, g.hi);
                __syncthreads();
            }
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

/* gpu_methods.cu: C = min(C_in, A (x) B) over rows x cols (multiples of the product's block
 * tile: 128 serves every type) by method A's kernel, without predecessors, on
 * stream_of(run); gpu_ooc.cu uses it on packed blocks. */
krill_status apsp_gpu_product(apsp_run *run, const mp_args &g, int64_t rows, int64_t cols);

#endif
