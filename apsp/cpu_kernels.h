/* apsp/cpu_kernels.h - the CPU kernels of the blocked methods (fw-a, fw-b, fw-rec), written
 * once for every weight type and instruction set, and the state those methods share.
 *
 * Part 1 (included once): apsp_blk (a block of D with its P and hop counts), the kernel
 * table apsp_cpu_kern and its lookup, the methods' state (cpu_blocked.c). The instruction
 * set is the best the CPU has (AVX-512 F/VL/BW/DQ, AVX2, or the generic build), asked of
 * libgcc's CPU model at each call; the environment variable KRILL_APSP_CPU_ISA = generic |
 * avx2 caps it (tests and benchmarks compare the variants: all give the same bits).
 *
 * Predecessors and hop counts. Blocked FW relaxes (i, j, k) with values that already use
 * later intermediates than plain FW's would, so where a cycle weighs 0 it can record a walk
 * around that cycle, and following P from j then loops (papers/004's Fig. 1 does so too).
 * With predecessors the blocked methods therefore also keep H[i][j], the arcs of the path
 * D[i][j] stands for, and compare (D, H) lexicographically: a sum that ties D[i][j] (and is
 * not INF) but has fewer arcs also wins. Every cycle is then positive in that order, so the
 * chain P gives ends at i (in exact arithmetic; integer weights always). D is unchanged:
 * only ties are broken. H lives in the state (npad^2 int32), built by begin from P (1 for
 * an arc, else 0), and saturates at APSP_HOPS_CAP (a negative cycle's walks grow forever).
 *
 * Part 2 (the template): cpu_blocked.c includes this file once per weight type and
 * instruction set with APSP_T (the element type), APSP_IT (the signed integer type of its
 * width), APSP_INT (1 for int32: the clamp rule of apsp_impl.h), APSP_N (the name suffix),
 * APSP_TGT (a target attribute or nothing), APSP_VB (vector bytes), APSP_VMIN(x, y) (lane
 * minimum, x where x < y) and APSP_MR, APSP_NV (the register block: APSP_MR rows by APSP_NV
 * vectors) defined. The kernels:
 *   fw   Floyd-Warshall on one t x t block in place: for kk, for i != kk (row kk does not
 *        change in step kk unless D[kk][kk] < 0, a negative cycle), row i relaxed through row
 *        kk; int32 sums clamped one by one (they feed later steps). Rows whose D[i][kk] is
 *        INF are skipped (no sum through them can win).
 *   mm   C = min(C, A (x) B), the min-plus product, by a register block of APSP_MR x NR
 *        accumulators (NR = APSP_NV vectors; APSP_MRP rows with predecessors, whose indices
 *        and hop counts take registers too): per k one load of B's row piece, one broadcast
 *        of A[i][k] per row, one add and one min per vector. Blocked by MC rows and KC
 *        columns of A so that A's block stays in L2 and B's strip (KC x NR) in L1. int32
 *        sums stay unclamped in registers (two values of [-INF, INF] cannot wrap) and are
 *        clamped when written back. C must not share memory with A or B.
 *   mm2  the same product by two-level blocking (fw-b, the paper's method B on caches):
 *        32 x 32 sub-blocks of C, A and B copied into packed buffers (L1: the shared memory
 *        of the paper), then for k, for i: C's row piece relaxed through B's row k with
 *        A[i][k] broadcast, the j loop vectorized by the compiler; C's sub-block clamped and
 *        written back once.
 * Every sum D[i][k] + D[k][j] is one rounding of the same two stored values whatever the
 * order, and min is exact, so mm and mm2 (and every instruction set) give the same bits for
 * float and double too; predecessors take the first k of the (D, H) minimum in both. */
#ifndef APSP_CPU_KERNELS_H
#define APSP_CPU_KERNELS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "apsp/apsp_impl.h"

/* Tiles and blocks handed to the kernels are multiples of this (the widest register block,
 * 32 int32 lanes by 8 rows, divides it). */
#define APSP_CPU_GRANULE 32

/* Hop counts saturate here, so that the sum of two stays an int32 (only a negative cycle,
 * whose walks grow without end, can get there). */
#define APSP_HOPS_CAP ((1 << 30) - 1)

static inline int32_t apsp_hops_add(int32_t a, int32_t b)
{
    const int32_t s = a + b;
    return s < APSP_HOPS_CAP ? s : APSP_HOPS_CAP;
}

/* A block of D (elements of the weight type) with its predecessors and hop counts (both
 * NULL without P), all with leading dimension ld. */
typedef struct apsp_blk {
    void *d;
    int32_t *p;
    int32_t *h;
    ptrdiff_t ld;
} apsp_blk;

typedef struct apsp_cpu_kern {
    const char *isa;     /* "avx512", "avx2" or "generic" */
    /* FW on the t x t block a in place */
    void (*fw)(const apsp_blk *a, int32_t t, int32_t clamp_hi);
    /* C (m x n) = min(C, A (m x k) (x) B (k x n)); m, n, k multiples of APSP_CPU_GRANULE;
       C shares no memory with A or B */
    void (*mm)(const apsp_blk *c, const apsp_blk *a, const apsp_blk *b, int32_t m, int32_t n,
               int32_t k, int32_t clamp_hi);
    /* the same by two-level blocking (32 x 32 sub-blocks) */
    void (*mm2)(const apsp_blk *c, const apsp_blk *a, const apsp_blk *b, int32_t m,
                int32_t n, int32_t k, int32_t clamp_hi);
} apsp_cpu_kern;

/* The kernels for `weight` on the best instruction set available (cpu_blocked.c). */
const apsp_cpu_kern *apsp_cpu_kern_for(krill_apsp_weight weight);

/* The blocked methods' state (run->state): hop counts, and per thread a scratch block of
 * `scratch` cells (D, P and H) for the copy of an operand that a product would otherwise
 * read while writing it (the panels, fw-rec's M12 := M11 (x) M12 and the like). */
typedef struct apsp_cpu_state {
    int32_t *hops;           /* npad x npad, or NULL without P */
    char *scratch_mem;       /* threads x scratch x (elem [+ 8 with P]) bytes */
    size_t scratch;          /* cells per thread */
    int threads;
} apsp_cpu_state;

krill_status apsp_cpu_state_begin(apsp_run *run, size_t scratch);
/* the bytes apsp_cpu_state_begin(run, scratch) takes, with or without P */
double apsp_cpu_state_bytes(const apsp_run *run, int paths, size_t scratch);
void apsp_cpu_state_end(apsp_run *run);
/* D, P, H at (i, j) of the whole matrix */
apsp_blk apsp_cpu_at(const apsp_run *run, int32_t i, int32_t j);
/* Thread `thread`'s scratch as an m x n block (ld n) holding a copy of src's m x n. */
apsp_blk apsp_cpu_copy(const apsp_run *run, int thread, const apsp_blk *src, int32_t m,
                       int32_t n);

/* cpu_rec.c: close the block of side s (a multiple of the granule) at (o, o) by the
 * recursive algorithm with base blocks of side `base` (fw-rec, and the pivot tiles of
 * fw-a and fw-b); the scratch cells per thread it needs. */
void apsp_cpu_rec_close(apsp_run *run, int32_t o, int32_t s, int32_t base);
size_t apsp_cpu_rec_scratch(int32_t s, int32_t base);

/* The vertices the kernels work on: n rounded up to the granule (<= npad, as npad is a
 * multiple of the granule); the padded ones beyond are isolated and never change. */
static inline int32_t apsp_cpu_extent(const apsp_run *run)
{
    const int32_t e = (run->n + APSP_CPU_GRANULE - 1) / APSP_CPU_GRANULE * APSP_CPU_GRANULE;
    return e < run->npad ? e : run->npad;
}

/* OpenMP threads of the run's context */
static inline int apsp_cpu_threads(const apsp_run *run)
{
    int t = krill_ctx_threads(run->ctx);
    return t > 0 ? t : 1;
}

#endif /* APSP_CPU_KERNELS_H */

/* ---- part 2: the template ------------------------------------------------------------- */
#ifdef APSP_T

#define APSP_CAT2(a, b) a##_##b
#define APSP_CAT(a, b) APSP_CAT2(a, b)
#define K(name) APSP_CAT(name, APSP_N)

#define APSP_LANES ((int)(APSP_VB / sizeof(APSP_T)))
#define APSP_NR (APSP_NV * APSP_LANES)
#define APSP_MRP (APSP_MR / 2)        /* rows of the block with predecessors */
#define APSP_KC ((int32_t)(1024 / sizeof(APSP_T)))   /* A's block: MC x KC, 256 KiB */
#define APSP_MC 256
#define APSP_SUB APSP_CPU_GRANULE              /* mm2's sub-blocks: APSP_SUB x APSP_SUB */
#if APSP_INT
#define APSP_TINF APSP_I32_INF
#define APSP_IS_INF(x, hi) ((x) >= (hi))     /* stored as INF by the clamp rule */
#else
#define APSP_TINF ((APSP_T)INFINITY)
#define APSP_IS_INF(x, hi) ((x) == APSP_TINF)
#endif

typedef APSP_T K(vt) __attribute__((vector_size(APSP_VB)));
typedef APSP_IT K(vi) __attribute__((vector_size(APSP_VB)));
typedef int32_t K(vp) __attribute__((vector_size(APSP_LANES * 4)));

static inline APSP_TGT K(vt) K(vload)(const APSP_T *p)
{
    K(vt) v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline APSP_TGT void K(vstore)(APSP_T *p, K(vt) v) { memcpy(p, &v, sizeof v); }
static inline APSP_TGT K(vp) K(pload)(const int32_t *p)
{
    K(vp) v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline APSP_TGT void K(pstore)(int32_t *p, K(vp) v) { memcpy(p, &v, sizeof v); }
/* lanes of x where m is set (all ones), else of y */
static inline APSP_TGT K(vt) K(vsel)(K(vi) m, K(vt) x, K(vt) y)
{
    return (K(vt))((m & (K(vi))x) | (~m & (K(vi))y));
}

/* The int32 rule on a value about to be stored; where it is INF (any type), P = NO_PRED
 * and H = 0, and H saturates at APSP_HOPS_CAP (p, h NULL: no predecessors). P and H come
 * as lanes of the element's width. */
static inline APSP_TGT K(vt) K(vclamp)(K(vt) x, K(vi) *p, K(vi) *h, int32_t hi)
{
#if APSP_INT
    const K(vt) inf = (K(vt)){0} + APSP_I32_INF, ninf = (K(vt)){0} - APSP_I32_INF;
    const K(vi) big = x >= (K(vt)){0} + hi;
    x = K(vsel)(big, inf, x);
    x = K(vsel)(x < ninf, ninf, x);
#else
    const K(vi) big = x == (K(vt)){0} + APSP_TINF;
    (void)hi;
#endif
    if (p) {
        const K(vi) cap = (K(vi)){0} + APSP_HOPS_CAP, over = *h > cap;
        *p = (big & ((K(vi)){0} + KRILL_APSP_NO_PRED)) | (~big & *p);
        *h = ~big & ((over & cap) | (~over & *h));
    }
    return x;
}

/* ---- fw: the dependent kernel ----------------------------------------------------------- */

static inline APSP_TGT APSP_T K(sum)(APSP_T a, APSP_T b, int32_t hi)
{
#if APSP_INT
    return apsp_i32_clamp(a + b, hi);
#else
    (void)hi;
    return a + b;
#endif
}

/* row di relaxed through row dk: di[j] = min(di[j], clamp(dik + dk[j])) */
static inline APSP_TGT void K(relax)(APSP_T *restrict di, const APSP_T *restrict dk, APSP_T dik,
                                     int32_t len, int32_t hi)
{
    for (int32_t j = 0; j < len; j++) {
        APSP_T s = K(sum)(dik, dk[j], hi);
        di[j] = s < di[j] ? s : di[j];
    }
}

/* the same on (D, H) in lexicographic order, P following (the opening comment) */
static inline APSP_TGT void K(relaxp)(APSP_T *restrict di, const APSP_T *restrict dk, APSP_T dik,
                                      int32_t *restrict pi, const int32_t *restrict pk,
                                      int32_t *restrict hi_, const int32_t *restrict hk,
                                      int32_t hik, int32_t len, int32_t hi)
{
    for (int32_t j = 0; j < len; j++) {
        const APSP_T s = K(sum)(dik, dk[j], hi);
        const int32_t hs = apsp_hops_add(hik, hk[j]);
        const int lt = s < di[j] || (s == di[j] && hs < hi_[j] && s != APSP_TINF);
        pi[j] = lt ? pk[j] : pi[j];
        hi_[j] = lt ? hs : hi_[j];
        di[j] = lt ? s : di[j];
    }
}

static APSP_TGT void K(fw)(const apsp_blk *blk, int32_t t, int32_t hi)
{
    APSP_T *a = (APSP_T *)blk->d;
    int32_t *pa = blk->p, *ha = blk->h;
    const ptrdiff_t ld = blk->ld;
    for (int32_t kk = 0; kk < t; kk++) {
        const APSP_T *ak = a + kk * ld;
        for (int32_t i = 0; i < t; i++) {
            const APSP_T aik = a[i * ld + kk];
            if (i == kk || aik == APSP_TINF) continue;
            if (pa)
                K(relaxp)(a + i * ld, ak, aik, pa + i * ld, pa + kk * ld, ha + i * ld,
                          ha + kk * ld, ha[i * ld + kk], t, hi);
            else
                K(relax)(a + i * ld, ak, aik, t, hi);
        }
    }
}

/* ---- mm: the register-blocked product ---------------------------------------------------- */

/* APSP_MR rows x NR columns of C at c; A's rows at a (kn columns), B's row piece at b */
static inline APSP_TGT void K(mk)(APSP_T *restrict c, ptrdiff_t ldc, const APSP_T *restrict a,
                                  ptrdiff_t lda, const APSP_T *restrict b, ptrdiff_t ldb,
                                  int32_t kn, int32_t hi)
{
    K(vt) acc[APSP_MR][APSP_NV];
    for (int r = 0; r < APSP_MR; r++)
        for (int v = 0; v < APSP_NV; v++) acc[r][v] = K(vload)(c + r * ldc + v * APSP_LANES);
    for (int32_t k = 0; k < kn; k++) {
        K(vt) bk[APSP_NV];
        for (int v = 0; v < APSP_NV; v++) bk[v] = K(vload)(b + k * ldb + v * APSP_LANES);
        for (int r = 0; r < APSP_MR; r++) {
            const APSP_T ar = a[r * lda + k];
            for (int v = 0; v < APSP_NV; v++) acc[r][v] = APSP_VMIN(ar + bk[v], acc[r][v]);
        }
    }
    for (int r = 0; r < APSP_MR; r++)
        for (int v = 0; v < APSP_NV; v++)
            K(vstore)(c + r * ldc + v * APSP_LANES, K(vclamp)(acc[r][v], NULL, NULL, hi));
}

/* the same with predecessors: (sum, hops) lexicographically below the lane's (D, H) wins,
 * and the lane takes P_B[k][j]. P and H are held in lanes of the element's width (int64
 * for double), so that one comparison mask serves all three. */
static inline APSP_TGT void K(mkp)(const apsp_blk *cb, const apsp_blk *ab, const apsp_blk *bb,
                                   int32_t i0, int32_t j0, int32_t k0, int32_t kn, int32_t hi)
{
    APSP_T *c = (APSP_T *)cb->d + i0 * cb->ld + j0;
    const APSP_T *a = (const APSP_T *)ab->d + i0 * ab->ld + k0;
    const APSP_T *b = (const APSP_T *)bb->d + k0 * bb->ld + j0;
    int32_t *pc = cb->p + i0 * cb->ld + j0, *hc = cb->h + i0 * cb->ld + j0;
    const int32_t *ha = ab->h + i0 * ab->ld + k0;
    const int32_t *pb = bb->p + k0 * bb->ld + j0, *hb = bb->h + k0 * bb->ld + j0;
    const ptrdiff_t ldc = cb->ld, lda = ab->ld, ldb = bb->ld;
    K(vt) acc[APSP_MRP][APSP_NV];
    K(vi) pacc[APSP_MRP][APSP_NV], hacc[APSP_MRP][APSP_NV];
    for (int r = 0; r < APSP_MRP; r++)
        for (int v = 0; v < APSP_NV; v++) {
            acc[r][v] = K(vload)(c + r * ldc + v * APSP_LANES);
            pacc[r][v] = __builtin_convertvector(K(pload)(pc + r * ldc + v * APSP_LANES), K(vi));
            hacc[r][v] = __builtin_convertvector(K(pload)(hc + r * ldc + v * APSP_LANES), K(vi));
        }
    for (int32_t k = 0; k < kn; k++) {
        K(vt) bk[APSP_NV];
        K(vi) pk[APSP_NV], hk[APSP_NV];
        for (int v = 0; v < APSP_NV; v++) {
            bk[v] = K(vload)(b + k * ldb + v * APSP_LANES);
            pk[v] = __builtin_convertvector(K(pload)(pb + k * ldb + v * APSP_LANES), K(vi));
            hk[v] = __builtin_convertvector(K(pload)(hb + k * ldb + v * APSP_LANES), K(vi));
        }
        for (int r = 0; r < APSP_MRP; r++) {
            const APSP_T ar = a[r * lda + k];
            const APSP_IT hr = ha[r * lda + k];
            for (int v = 0; v < APSP_NV; v++) {
                const K(vt) s = ar + bk[v];
                const K(vi) hs = hr + hk[v];   /* <= 2 APSP_HOPS_CAP: capped when stored */
                const K(vi) lt = (s < acc[r][v]) | ((s == acc[r][v]) & (hs < hacc[r][v]));
                acc[r][v] = K(vsel)(lt, s, acc[r][v]);
                pacc[r][v] = (lt & pk[v]) | (~lt & pacc[r][v]);
                hacc[r][v] = (lt & hs) | (~lt & hacc[r][v]);
            }
        }
    }
    for (int r = 0; r < APSP_MRP; r++)
        for (int v = 0; v < APSP_NV; v++) {
            K(vt) x = K(vclamp)(acc[r][v], &pacc[r][v], &hacc[r][v], hi);
            K(vstore)(c + r * ldc + v * APSP_LANES, x);
            K(pstore)(pc + r * ldc + v * APSP_LANES, __builtin_convertvector(pacc[r][v], K(vp)));
            K(pstore)(hc + r * ldc + v * APSP_LANES, __builtin_convertvector(hacc[r][v], K(vp)));
        }
}

static APSP_TGT void K(mm)(const apsp_blk *cb, const apsp_blk *ab, const apsp_blk *bb, int32_t m,
                           int32_t n, int32_t kn, int32_t hi)
{
    APSP_T *c = (APSP_T *)cb->d;
    const APSP_T *a = (const APSP_T *)ab->d, *b = (const APSP_T *)bb->d;
    for (int32_t kc = 0; kc < kn; kc += APSP_KC) {
        const int32_t klen = kn - kc < APSP_KC ? kn - kc : APSP_KC;
        for (int32_t ic = 0; ic < m; ic += APSP_MC) {
            const int32_t iend = m - ic < APSP_MC ? m : ic + APSP_MC;
            for (int32_t jb = 0; jb < n; jb += APSP_NR) {
                if (cb->p)
                    for (int32_t ib = ic; ib < iend; ib += APSP_MRP)
                        K(mkp)(cb, ab, bb, ib, jb, kc, klen, hi);
                else
                    for (int32_t ib = ic; ib < iend; ib += APSP_MR)
                        K(mk)(c + ib * cb->ld + jb, cb->ld, a + ib * ab->ld + kc, ab->ld,
                              b + kc * bb->ld + jb, bb->ld, klen, hi);
            }
        }
    }
}

/* ---- mm2: two-level blocking ------------------------------------------------------------- */

/* C's row piece ci relaxed through B's row bk (both APSP_SUB long: the compiler unrolls the
 * vectorized loop) */
static inline APSP_TGT void K(rowmin)(APSP_T *restrict ci, const APSP_T *restrict bk, APSP_T aik)
{
    for (int32_t j = 0; j < APSP_SUB; j++) {
        APSP_T s = aik + bk[j];
        ci[j] = s < ci[j] ? s : ci[j];
    }
}

static inline APSP_TGT void K(rowminp)(APSP_T *restrict ci, const APSP_T *restrict bk,
                                       APSP_T aik, int32_t *restrict pi,
                                       const int32_t *restrict pk, int32_t *restrict hi_,
                                       const int32_t *restrict hk, int32_t hik)
{
    for (int32_t j = 0; j < APSP_SUB; j++) {
        const APSP_T s = aik + bk[j];
        const int32_t hs = apsp_hops_add(hik, hk[j]);
        const int lt = s < ci[j] || (s == ci[j] && hs < hi_[j]);
        pi[j] = lt ? pk[j] : pi[j];
        hi_[j] = lt ? hs : hi_[j];
        ci[j] = lt ? s : ci[j];
    }
}

/* an APSP_SUB x APSP_SUB sub-block (of D, P or H: `size` bytes an element) between a
 * matrix with leading dimension ld and a packed buffer */
static inline void K(pack)(void *restrict dst, const void *restrict src, ptrdiff_t ld,
                           size_t size)
{
    for (int i = 0; i < APSP_SUB; i++)
        memcpy((char *)dst + i * APSP_SUB * size, (const char *)src + i * ld * size,
               APSP_SUB * size);
}
static inline void K(unpack)(void *restrict dst, const void *restrict src, ptrdiff_t ld,
                             size_t size)
{
    for (int i = 0; i < APSP_SUB; i++)
        memcpy((char *)dst + i * ld * size, (const char *)src + i * APSP_SUB * size,
               APSP_SUB * size);
}

/* The sub-blocks of C, A and B are copied into packed buffers (the paper's shared memory;
 * here L1, 12 KiB for int32): in the matrix their rows are npad apart, and with npad a
 * power of two they would fall into a few cache sets. Within a sub-block k runs outside
 * i, so that consecutive row updates are independent (with i outside, each would wait for
 * the store of the step before). */
static APSP_TGT void K(mm2)(const apsp_blk *cb, const apsp_blk *ab, const apsp_blk *bb,
                            int32_t m, int32_t n, int32_t kn, int32_t hi)
{
    APSP_T cs[APSP_SUB][APSP_SUB], as[APSP_SUB][APSP_SUB], bs[APSP_SUB][APSP_SUB];
    const ptrdiff_t ldc = cb->ld, lda = ab->ld, ldb = bb->ld;
    const size_t te = sizeof(APSP_T), pe = sizeof(int32_t);
    for (int32_t ib = 0; ib < m; ib += APSP_SUB)
        for (int32_t jb = 0; jb < n; jb += APSP_SUB) {
            int32_t pcs[APSP_SUB][APSP_SUB], hcs[APSP_SUB][APSP_SUB], has[APSP_SUB][APSP_SUB];
            int32_t pbs[APSP_SUB][APSP_SUB], hbs[APSP_SUB][APSP_SUB];
            K(pack)(cs, (APSP_T *)cb->d + ib * ldc + jb, ldc, te);
            if (cb->p) {
                K(pack)(pcs, cb->p + ib * ldc + jb, ldc, pe);
                K(pack)(hcs, cb->h + ib * ldc + jb, ldc, pe);
            }
            for (int32_t kb = 0; kb < kn; kb += APSP_SUB) {
                K(pack)(as, (const APSP_T *)ab->d + ib * lda + kb, lda, te);
                K(pack)(bs, (const APSP_T *)bb->d + kb * ldb + jb, ldb, te);
                if (cb->p) {
                    K(pack)(has, ab->h + ib * lda + kb, lda, pe);
                    K(pack)(pbs, bb->p + kb * ldb + jb, ldb, pe);
                    K(pack)(hbs, bb->h + kb * ldb + jb, ldb, pe);
                }
                for (int k = 0; k < APSP_SUB; k++)
                    for (int i = 0; i < APSP_SUB; i++) {
                        if (as[i][k] == APSP_TINF) continue;
                        if (cb->p)
                            K(rowminp)(cs[i], bs[k], as[i][k], pcs[i], pbs[k], hcs[i], hbs[k],
                                       has[i][k]);
                        else
                            K(rowmin)(cs[i], bs[k], as[i][k]);
                    }
            }
            /* the int32 rule once per value; INF gets NO_PRED and no hops */
            for (int i = 0; i < APSP_SUB; i++)
                for (int j = 0; j < APSP_SUB; j++) {
                    if (cb->p && APSP_IS_INF(cs[i][j], hi)) {
                        pcs[i][j] = KRILL_APSP_NO_PRED;
                        hcs[i][j] = 0;
                    }
#if APSP_INT
                    cs[i][j] = apsp_i32_clamp(cs[i][j], hi);
#endif
                }
            K(unpack)((APSP_T *)cb->d + ib * ldc + jb, cs, ldc, te);
            if (cb->p) {
                K(unpack)(cb->p + ib * ldc + jb, pcs, ldc, pe);
                K(unpack)(cb->h + ib * ldc + jb, hcs, ldc, pe);
            }
        }
    (void)hi;
}

#undef APSP_IS_INF
#undef APSP_TINF
#undef APSP_SUB
#undef APSP_MC
#undef APSP_KC
#undef APSP_MRP
#undef APSP_NR
#undef APSP_LANES
#undef K
#undef APSP_T
#undef APSP_IT
#undef APSP_INT
#undef APSP_N
#undef APSP_VMIN
#endif /* APSP_T */
