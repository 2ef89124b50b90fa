/* apsp/cpu_blocked.c - iterative blocked Floyd-Warshall on the CPU: fw-a and fw-b, the
 * kernels every blocked CPU method shares (cpu_kernels.h, instantiated here) and their state.
 *
 * Reference: T. Okuyama, F. Ino, K. Hagihara, "A fast blocked Floyd-Warshall algorithm on
 * the GPU" (papers/004), section 3, Fig. 1 (the iterative blocked algorithm), section 4.2
 * (method A: the non-pivot tiles as a matrix product, kept in registers) and 4.3 (method
 * B: two-level blocking), mapped from the GPU's registers / shared memory to the CPU's
 * registers / L1 / L2.
 *
 * D (npad x npad) is cut into t x t tiles T_IJ; round k (0 <= k < npad / t):
 *   pivot   T_kk := closure(T_kk)                              by fw-rec's recursion on the
 *                                                              tile (cpu_rec.c), base 32
 *   panels  T_kJ := min(T_kJ, T_kk (x) T_kJ)   for J != k     one tile per task (OpenMP)
 *           T_Ik := min(T_Ik, T_Ik (x) T_kk)   for I != k
 *   rest    T_IJ := min(T_IJ, T_Ik (x) T_kJ)   for I, J != k  one tile per task
 * The panels are Fig. 1's FWI(T_kJ, T_kk, T_kJ) and FWI(T_Ik, T_Ik, T_kk) written as
 * products with the closed pivot tile: the same distances (a shortest path from row i of
 * block k leaves the block at its last block-k vertex kk, and T_kk already holds the best
 * way to kk), at the product's speed instead of t dependent row sweeps. A panel tile is
 * both an operand and the result, so its task first copies it (per-thread scratch): the
 * product then means the same whatever the kernel's blocking, instruction set or thread
 * count, and the results are bit for bit the same on all of them. Every stored int32 value
 * is clamped (apsp_impl.h), so no sum can wrap. With P, ties are broken by hop counts
 * (cpu_kernels.h), so that P's paths never loop around a zero-weight cycle.
 *   fw-a  rest by the register-blocked product (cpu_kernels.h: mm)
 *   fw-b  rest by two-level blocking: 32 x 32 sub-tiles for L1 inside tiles for L2 (mm2)
 * Both give the same bits, float and double included (a min of single sums of the same
 * operands, and the same pivot and panels), and the same predecessors. The kernels work on
 * n rounded up to 32 (apsp_cpu_extent): the padding beyond is isolated and left alone, so a
 * large tile costs no padded work.
 *
 * Memory traffic per round (element size s): the pivot tile t^2 s (a few times); each panel
 * tile reads the pivot and itself (twice: the copy) and writes itself, 2 (npad/t - 1)
 * tiles; each rest tile reads T_Ik (it stays in L2 along a row of tiles) and T_kJ and reads
 * and writes itself: about 3 npad^2 s per round, 3 npad^3 s / t in all (with P: the same
 * again for P and for the hop counts, 4 bytes a cell each). With t = 256 and int32 that is
 * 0.05 byte per relaxation: the register kernel, not memory, bounds the speed.
 *
 * Tile sizes, measured on this project's 2-core AMD EPYC (Zen 5, AVX-512, 1 MiB L2 per
 * core), n = 2048, one thread, Grelax/s = n^3 / time (best of 5, complete graph):
 *              t = 64    128    256    512
 *   fw-a int32    71.5   90.0   98.1   97.4
 *   fw-a double   25.0   28.4   29.6   28.8
 * A larger tile makes the product's k loop longer (the accumulators are loaded and stored
 * once per t steps) and the tiles fewer; at 512 the pivot (serial) and the panels (2 t / n
 * of the work, with a copy each) catch up, and three 512^2 tiles no longer fit L2. Two
 * threads: fw-a int32 171 (t = 128) / 186 (t = 256), double 55 / 57. FWA_TILE = 256; three
 * int32 tiles (768 KiB) fit L2. fw-b, t = 256: int32 39, double 22 (its inner loop loads and
 * stores C's row from L1 for every k: about half the register kernel's rate), the same tile
 * (FWB_TILE). SciPy 1.17's floyd_warshall on the same 2048-vertex dense double graph: 1.5
 * Grelax/s on this machine, so fw-a is 20x (double) to 65x (int32) one core of it. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "apsp/cpu_kernels.h"

/* ---- the kernels, once per weight type and instruction set ---------------------------- */

#define APSP_VSEL_MIN(x, y) K(vsel)((x) < (y), (x), (y))

#define APSP_TGT
#define APSP_VB 16
#define APSP_MR 4
#define APSP_NV 2
#define APSP_T int32_t
#define APSP_IT int32_t
#define APSP_INT 1
#define APSP_N i32_generic
#define APSP_VMIN APSP_VSEL_MIN
#include "apsp/cpu_kernels.h"
#define APSP_T float
#define APSP_IT int32_t
#define APSP_INT 0
#define APSP_N f32_generic
#define APSP_VMIN APSP_VSEL_MIN
#include "apsp/cpu_kernels.h"
#define APSP_T double
#define APSP_IT int64_t
#define APSP_INT 0
#define APSP_N f64_generic
#define APSP_VMIN APSP_VSEL_MIN
#include "apsp/cpu_kernels.h"
#undef APSP_TGT
#undef APSP_VB
#undef APSP_MR
#undef APSP_NV

#if defined(__x86_64__) && defined(__GNUC__)
#define APSP_HAVE_X86 1
#include <immintrin.h>

#define APSP_TGT __attribute__((target("avx2")))
#define APSP_VB 32
#define APSP_MR 8
#define APSP_NV 2
#define APSP_T int32_t
#define APSP_IT int32_t
#define APSP_INT 1
#define APSP_N i32_avx2
#define APSP_VMIN(x, y) ((K(vt))_mm256_min_epi32((__m256i)(x), (__m256i)(y)))
#include "apsp/cpu_kernels.h"
#define APSP_T float
#define APSP_IT int32_t
#define APSP_INT 0
#define APSP_N f32_avx2
#define APSP_VMIN(x, y) ((K(vt))_mm256_min_ps((__m256)(x), (__m256)(y)))
#include "apsp/cpu_kernels.h"
#define APSP_T double
#define APSP_IT int64_t
#define APSP_INT 0
#define APSP_N f64_avx2
#define APSP_VMIN(x, y) ((K(vt))_mm256_min_pd((__m256d)(x), (__m256d)(y)))
#include "apsp/cpu_kernels.h"
#undef APSP_TGT
#undef APSP_VB

#define APSP_TGT __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq")))
#define APSP_VB 64
#define APSP_T int32_t
#define APSP_IT int32_t
#define APSP_INT 1
#define APSP_N i32_avx512
#define APSP_VMIN(x, y) ((K(vt))_mm512_min_epi32((__m512i)(x), (__m512i)(y)))
#include "apsp/cpu_kernels.h"
#define APSP_T float
#define APSP_IT int32_t
#define APSP_INT 0
#define APSP_N f32_avx512
#define APSP_VMIN(x, y) ((K(vt))_mm512_min_ps((__m512)(x), (__m512)(y)))
#include "apsp/cpu_kernels.h"
#define APSP_T double
#define APSP_IT int64_t
#define APSP_INT 0
#define APSP_N f64_avx512
#define APSP_VMIN(x, y) ((K(vt))_mm512_min_pd((__m512d)(x), (__m512d)(y)))
#include "apsp/cpu_kernels.h"
#undef APSP_TGT
#undef APSP_VB
#undef APSP_MR
#undef APSP_NV
#else
#define APSP_HAVE_X86 0
#endif

#define KERN(sfx) {#sfx, fw_i32_##sfx, mm_i32_##sfx, mm2_i32_##sfx},       \
                  {#sfx, fw_f32_##sfx, mm_f32_##sfx, mm2_f32_##sfx},       \
                  {#sfx, fw_f64_##sfx, mm_f64_##sfx, mm2_f64_##sfx}


static const apsp_cpu_kern kern_table[][3] = {
    {KERN(generic)},
#if APSP_HAVE_X86
    {KERN(avx2)},
    {KERN(avx512)},
#endif
};

/* The instruction set: libgcc's CPU model is filled in before main, so this is a few loads
 * and bit tests, with no cached state for threads to race on. */
int apsp_cpu_isa(void)
{
    int isa = APSP_ISA_GENERIC;
    const char *cap = getenv("KRILL_APSP_CPU_ISA");
#if APSP_HAVE_X86
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
        isa = APSP_ISA_AVX512;
    else if (__builtin_cpu_supports("avx2"))
        isa = APSP_ISA_AVX2;
#endif
    if (cap && !strcmp(cap, "generic")) isa = APSP_ISA_GENERIC;
    if (cap && !strcmp(cap, "avx2") && isa > APSP_ISA_AVX2) isa = APSP_ISA_AVX2;
    return isa;
}

const apsp_cpu_kern *apsp_cpu_kern_for(krill_apsp_weight weight)
{
    return &kern_table[apsp_cpu_isa()][weight == KRILL_APSP_INT32 ? 0
                                  : weight == KRILL_APSP_FLOAT ? 1 : 2];
}

/* ---- the state ------------------------------------------------------------------------ */

double apsp_cpu_state_bytes(const apsp_run *run, int paths, size_t scratch)
{
    const double cells = (double)run->npad * (double)run->npad;
    const double cell_bytes = (double)run->elem + (paths ? 2.0 * sizeof(int32_t) : 0.0);
    return apsp_cpu_threads(run) * (double)scratch * cell_bytes +
           (paths ? cells * sizeof(int32_t) : 0.0);
}

krill_status apsp_cpu_state_begin(apsp_run *run, size_t scratch)
{
    krill_status st = KRILL_OK;
    apsp_cpu_state *s = NULL;
    const size_t cells = (size_t)run->npad * (size_t)run->npad;
    const size_t cell_bytes = run->elem + (run->p ? 2 * sizeof(int32_t) : 0);
    KRILL_CALLOC(s, 1);
    s->threads = apsp_cpu_threads(run);
    s->scratch = scratch;
    KRILL_TRY(krill_alloc_n((void **)&s->scratch_mem, (size_t)s->threads * scratch, cell_bytes,
                            0, "APSP per-thread scratch"));
    if (run->p) {   /* an arc is one hop; INF and the diagonal none */
        KRILL_TRY(krill_alloc_n((void **)&s->hops, cells, sizeof(int32_t), 0,
                                "APSP hop counts (with paths)"));
#pragma omp parallel for schedule(static) num_threads(s->threads)
        for (int64_t x = 0; x < (int64_t)cells; x++)
            s->hops[x] = run->p[x] != KRILL_APSP_NO_PRED;
    }
    run->state = s;
    s = NULL;
cleanup:
    if (s) {
        krill_free(s->scratch_mem);
        krill_free(s);
    }
    return st;
}

void apsp_cpu_state_end(apsp_run *run)
{
    apsp_cpu_state *s = (apsp_cpu_state *)run->state;
    if (s) {
        krill_free(s->hops);
        krill_free(s->scratch_mem);
        krill_free(s);
    }
    run->state = NULL;
}

apsp_blk apsp_cpu_at(const apsp_run *run, int32_t i, int32_t j)
{
    const apsp_cpu_state *s = (const apsp_cpu_state *)run->state;
    const size_t off = (size_t)i * (size_t)run->npad + (size_t)j;
    apsp_blk b;
    b.d = (char *)run->d + off * run->elem;
    b.p = run->p ? run->p + off : NULL;
    b.h = run->p ? s->hops + off : NULL;
    b.ld = run->npad;
    return b;
}

apsp_blk apsp_cpu_copy(const apsp_run *run, int thread, const apsp_blk *src, int32_t m,
                       int32_t n)
{
    const apsp_cpu_state *s = (const apsp_cpu_state *)run->state;
    const size_t cells = s->scratch;
    char *mem = s->scratch_mem + (size_t)thread * cells * (run->elem + (run->p ? 8 : 0));
    apsp_blk b;
    b.d = mem;
    b.p = run->p ? (int32_t *)(mem + cells * run->elem) : NULL;
    b.h = run->p ? b.p + cells : NULL;
    b.ld = n;
    for (int32_t i = 0; i < m; i++) {
        memcpy((char *)b.d + (size_t)i * n * run->elem,
               (const char *)src->d + (size_t)i * src->ld * run->elem, (size_t)n * run->elem);
        if (b.p) {
            memcpy(b.p + (size_t)i * n, src->p + (size_t)i * src->ld, (size_t)n * 4);
            memcpy(b.h + (size_t)i * n, src->h + (size_t)i * src->ld, (size_t)n * 4);
        }
    }
    return b;
}

/* ---- fw-a and fw-b -------------------------------------------------------------------- */

/* Tile t: ... (measured, see the opening comment) */
#define FWA_TILE 256
#define FWB_TILE 256
#define PIVOT_BASE 32

/* the side of tile I that holds real vertices (apsp_cpu_extent): t but for the last */
static int32_t extent(const apsp_run *run, int32_t I)
{
    const int32_t left = apsp_cpu_extent(run) - I * run->tile;
    return left < run->tile ? left : run->tile;
}

static size_t blocked_scratch(const apsp_run *run)
{
    const size_t tile = (size_t)run->tile * (size_t)run->tile;
    const size_t rec = apsp_cpu_rec_scratch(run->tile, PIVOT_BASE);
    return tile > rec ? tile : rec;
}

static krill_status blocked_begin(apsp_run *run)
{
    return apsp_cpu_state_begin(run, blocked_scratch(run));
}

static double blocked_bytes(const apsp_run *run, int paths)
{
    return apsp_cpu_state_bytes(run, paths, blocked_scratch(run));
}

/* The pivot tile closed by the recursive algorithm (cpu_rec.c) down to PIVOT_BASE: the
 * same distances as FW on the tile, mostly at the product's speed. */
static krill_status blocked_pivot(apsp_run *run, int32_t k)
{
    apsp_cpu_rec_close(run, k * run->tile, extent(run, k), PIVOT_BASE);
    return KRILL_OK;
}

/* The panels as products with the closed pivot tile. Each reads the tile it writes (the
 * row panel's columns, the column panel's rows), so the task copies that operand first:
 * the product then has one meaning, whatever the kernel's blocking or the thread count. */
static krill_status blocked_panels(apsp_run *run, int32_t k)
{
    const apsp_cpu_kern *kern = apsp_cpu_kern_for(run->weight);
    const int32_t t = run->tile, others = run->npad / t - 1, ek = extent(run, k);
    const apsp_blk pivot = apsp_cpu_at(run, k * t, k * t);
#pragma omp parallel for schedule(static) num_threads(apsp_cpu_threads(run))
    for (int32_t x = 0; x < 2 * others; x++) {
        int32_t o = x % others;
        o += o >= k;
        const int32_t eo = extent(run, o);
        if (x < others) {   /* T_ko := min(T_ko, T_kk (x) T_ko) */
            const apsp_blk c = apsp_cpu_at(run, k * t, o * t);
            const apsp_blk b = apsp_cpu_copy(run, omp_get_thread_num(), &c, ek, eo);
            kern->mm(&c, &pivot, &b, ek, eo, ek, run->clamp_hi);
        } else {            /* T_ok := min(T_ok, T_ok (x) T_kk) */
            const apsp_blk c = apsp_cpu_at(run, o * t, k * t);
            const apsp_blk a = apsp_cpu_copy(run, omp_get_thread_num(), &c, eo, ek);
            kern->mm(&c, &a, &pivot, eo, ek, ek, run->clamp_hi);
        }
    }
    return KRILL_OK;
}

/* T_IJ := min(T_IJ, T_Ik (x) T_kJ) for I, J != k: by mm (two_level 0) or mm2 */
static krill_status blocked_rest(apsp_run *run, int32_t k, int two_level)
{
    const apsp_cpu_kern *kern = apsp_cpu_kern_for(run->weight);
    const int32_t t = run->tile, others = run->npad / t - 1, ek = extent(run, k);
#pragma omp parallel for schedule(static) num_threads(apsp_cpu_threads(run))
    for (int64_t x = 0; x < (int64_t)others * others; x++) {
        int32_t I = (int32_t)(x / others), J = (int32_t)(x % others);
        I += I >= k;
        J += J >= k;
        const int32_t eI = extent(run, I), eJ = extent(run, J);
        const apsp_blk c = apsp_cpu_at(run, I * t, J * t), a = apsp_cpu_at(run, I * t, k * t),
                       b = apsp_cpu_at(run, k * t, J * t);
        if (two_level)
            kern->mm2(&c, &a, &b, eI, eJ, ek, run->clamp_hi);
        else
            kern->mm(&c, &a, &b, eI, eJ, ek, run->clamp_hi);
    }
    return KRILL_OK;
}

static krill_status fwa_rest(apsp_run *run, int32_t k) { return blocked_rest(run, k, 0); }
static krill_status fwb_rest(apsp_run *run, int32_t k) { return blocked_rest(run, k, 1); }

const apsp_ops apsp_cpu_fw_a = {
    .tile = FWA_TILE,
    .granule = APSP_CPU_GRANULE,
    .begin = blocked_begin,
    .pivot = blocked_pivot,
    .panels = blocked_panels,
    .rest = fwa_rest,
    .end = apsp_cpu_state_end,
    .extra_bytes = blocked_bytes,
};

const apsp_ops apsp_cpu_fw_b = {
    .tile = FWB_TILE,
    .granule = APSP_CPU_GRANULE,
    .begin = blocked_begin,
    .pivot = blocked_pivot,
    .panels = blocked_panels,
    .rest = fwb_rest,
    .end = apsp_cpu_state_end,
    .extra_bytes = blocked_bytes,
};
