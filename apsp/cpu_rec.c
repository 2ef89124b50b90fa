/* apsp/cpu_rec.c - recursive blocked Floyd-Warshall on the CPU: the fw-rec method, and the
 * closure of the pivot tiles of fw-a and fw-b.
 *
 * Reference: papers/004, section 4.4 and Fig. 6 (after Buluc, Gilbert, Budak, "Solving
 * path problems on the GPU", Parallel Computing 36, 2010: R-Kleene). On the square block M
 * of side s (rows and columns [o, o + s) of D), with (x) the min-plus product and
 * X := Y (x) Z meaning X = min(X, Y (x) Z):
 *
 *   rec(M): if s <= base: FW on M, return            (cpu_kernels.h: fw, int32 clamped)
 *     M11 = rec(M11)
 *     M12 := M11 (x) M12        M21 := M21 (x) M11       M22 := M21 (x) M12
 *     M22 = rec(M22)
 *     M21 := M22 (x) M21        M12 := M12 (x) M22       M11 := M12 (x) M21
 *
 * The split is at s1 = ceil(ceil(s / base) / 2) base, so any multiple of the granule (32)
 * splits: no power of two is needed, and the recursion covers only n rounded up to 32
 * (apsp_cpu_extent), not the padding up to npad. Products run on the register-blocked kernel
 * of fw-a (cpu_kernels.h: mm). Four of them read the block they write: M12 := M11 (x) M12
 * (and M21 := M22 (x) M21) reads column j of M12 to write column j, so the work is cut into
 * column strips of REC_STRIP, each task copying its strip of M12 into per-thread scratch
 * first; M21 := M21 (x) M11 (and M12 := M12 (x) M22) likewise into row strips. So every
 * product means what it says (out of place), whatever the kernel's blocking, instruction
 * set or thread count: the results are the same bits on all of them. M22 := M21 (x) M12 and
 * M11 := M12 (x) M21 write a block they do not read: cut into square tiles. Products below
 * REC_PARALLEL_MIN relaxations stay on one thread.
 *
 * Memory traffic: the products do n^3 relaxations in all; one of m x k by k x n in strips
 * of width w reads A n / w times (its KC-column panels stay in L2), B and C about once, and
 * copies its strip once: O(n^3 s / w) bytes over the recursion (w = 64, tiles 128), the
 * order of fw-a's 3 n^3 s / t. The base blocks add n base^2 relaxations of the dependent
 * kernel, one thread each. Scratch: (n / 2 + base) x 64 cells per thread.
 *
 * Base size: n = 2048, int32, Grelax/s for base 64 / 128 / 256: one thread 95 / 92 / 88, two
 * threads 194 / 186; double 58 / 59 (two threads). REC_BASE = 64. */
#include <omp.h>

#include "apsp/cpu_kernels.h"

#define REC_BASE 64     /* base size: FW on blocks of at most this side */
#define REC_STRIP 64    /* width of the strips of the in-place products */
#define REC_TILE 128    /* side of the tiles of the independent products */
#define REC_PARALLEL_MIN (128.0 * 128.0 * 128.0)   /* relaxations worth a parallel region */

typedef struct rec_ctx {
    const apsp_cpu_kern *kern;
    apsp_run *run;
    int32_t base;
    int threads;
} rec_ctx;

/* D[ci.., cj..] (m x n) := D[ai.., aj..] (m x k) (x) D[bi.., bj..] (k x n). how: 'c' in
 * column strips (B is C: each task copies its strip of B first), 'r' in row strips (A is C:
 * likewise its strip of A), 't' in tiles (no sharing). Small products stay on one thread. */
static void product(const rec_ctx *r, char how, int32_t ci, int32_t cj, int32_t ai,
                    int32_t aj, int32_t bi, int32_t bj, int32_t m, int32_t n, int32_t k)
{
    const int32_t w = how == 't' ? REC_TILE : REC_STRIP;
    const int32_t rows = how == 'c' ? 1 : (m + w - 1) / w;
    const int32_t cols = how == 'r' ? 1 : (n + w - 1) / w;
    const int parallel = (double)m * n * k >= REC_PARALLEL_MIN;
#pragma omp parallel for schedule(static) num_threads(r->threads) if (parallel)
    for (int32_t x = 0; x < rows * cols; x++) {
        const int32_t i0 = how == 'c' ? 0 : x / cols * w, j0 = how == 'r' ? 0 : x % cols * w;
        const int32_t mi = how == 'c' ? m : (m - i0 < w ? m - i0 : w);
        const int32_t nj = how == 'r' ? n : (n - j0 < w ? n - j0 : w);
        const apsp_blk c = apsp_cpu_at(r->run, ci + i0, cj + j0);
        apsp_blk a = apsp_cpu_at(r->run, ai + i0, aj), b = apsp_cpu_at(r->run, bi, bj + j0);
        if (how == 'c') b = apsp_cpu_copy(r->run, omp_get_thread_num(), &b, k, nj);
        if (how == 'r') a = apsp_cpu_copy(r->run, omp_get_thread_num(), &a, mi, k);
        r->kern->mm(&c, &a, &b, mi, nj, k, r->run->clamp_hi);
    }
}

/* the block of side s (a multiple of the granule) at (o, o) */
static void rec(const rec_ctx *r, int32_t o, int32_t s)
{
    if (s <= r->base) {
        const apsp_blk a = apsp_cpu_at(r->run, o, o);
        r->kern->fw(&a, s, r->run->clamp_hi);
    } else {
        const int32_t s1 = ((s + r->base - 1) / r->base + 1) / 2 * r->base, s2 = s - s1;
        const int32_t o2 = o + s1;
        rec(r, o, s1);
        product(r, 'c', o, o2, o, o, o, o2, s1, s2, s1);       /* M12 := M11 (x) M12 */
        product(r, 'r', o2, o, o2, o, o, o, s2, s1, s1);       /* M21 := M21 (x) M11 */
        product(r, 't', o2, o2, o2, o, o, o2, s2, s2, s1);     /* M22 := M21 (x) M12 */
        rec(r, o2, s2);
        product(r, 'c', o2, o, o2, o2, o2, o, s2, s1, s2);     /* M21 := M22 (x) M21 */
        product(r, 'r', o, o2, o, o2, o2, o2, s1, s2, s2);     /* M12 := M12 (x) M22 */
        product(r, 't', o, o, o, o2, o2, o, s1, s1, s2);       /* M11 := M12 (x) M21 */
    }
}

/* cells of scratch per thread that rec on a block of side s with base `base` needs */
size_t apsp_cpu_rec_scratch(int32_t s, int32_t base)
{
    const int32_t half = ((s + base - 1) / base + 1) / 2 * base;
    return s > base ? (size_t)half * REC_STRIP : 0;
}

void apsp_cpu_rec_close(apsp_run *run, int32_t o, int32_t s, int32_t base)
{
    rec_ctx r;
    r.kern = apsp_cpu_kern_for(run->weight);
    r.run = run;
    r.base = base;
    r.threads = apsp_cpu_threads(run);
    if (s > 0) rec(&r, o, s);
}

static krill_status rec_begin(apsp_run *run)
{
    krill_status st = KRILL_OK;
    KRILL_REQUIRE(run->tile > 0 && run->tile % APSP_CPU_GRANULE == 0,
                  "fw-rec: the base size %d is not a multiple of %d", run->tile,
                  APSP_CPU_GRANULE);
    KRILL_TRY(apsp_cpu_state_begin(run, apsp_cpu_rec_scratch(apsp_cpu_extent(run), run->tile)));
cleanup:
    return st;
}

/* D's first n rounded up to the granule rows and columns; beyond them the padded vertices
 * are isolated and stay as they are */
static krill_status rec_whole(apsp_run *run)
{
    apsp_cpu_rec_close(run, 0, apsp_cpu_extent(run), run->tile);
    return KRILL_OK;
}

static double rec_bytes(const apsp_run *run, int paths)
{
    return apsp_cpu_state_bytes(run, paths, apsp_cpu_rec_scratch(apsp_cpu_extent(run), run->tile));
}

const apsp_ops apsp_cpu_fw_rec = {
    .tile = REC_BASE,
    .granule = APSP_CPU_GRANULE,
    .begin = rec_begin,
    .whole = rec_whole,
    .end = apsp_cpu_state_end,
    .extra_bytes = rec_bytes,
};
