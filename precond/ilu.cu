/* precond/ilu.cu - ILU(0) / IC(0) on the GPU: the factorization and both triangular solves.
 * Layout, pivot rule and dependency graphs: precond/ilu_impl.h; the host analysis and the C
 * reference of every kernel here: precond/ilu_host.c.
 *
 * Solves: level-scheduled, one cooperative launch per triangle, over groups of B consecutive
 * rows (krill_ilu_groups, ilu_impl.h; B chosen at build by ilu_groups.c, or "ilu0:G"): a
 * group is one task, so the links inside it (a node's dofs, a grid line's neighbours) leave
 * the chain of levels. Each triangle is kept in solve order (groups by level, a group's rows
 * consecutive, columns as positions, only the entries outside the group), packed from the
 * factors after every factorization (pack_kernel: those entries, 1 / the diagonal, and the
 * entries inside each group as a small dense block, `intra`). A launch walks the levels: the
 * groups of a level are spread over the grid's sub-warps (LANES threads a group, solve_lanes
 * of its mean entry count and at least B), a grid barrier separates levels, and runs of
 * levels narrow enough for one block are done by block 0 alone with __syncthreads() between
 * them. Each block's last warp takes no groups: it makes the barrier's release and polls,
 * while the other warps load what the next level reads besides x (offsets, entries,
 * right-hand sides, diagonals, inner blocks; the level's offsets were loaded one level
 * earlier still), so a level costs about one barrier plus one gather of x from L2, a sub-warp
 * sum per row and B broadcasts. The forward solve's right-hand side is r gathered into its
 * solve order (gather_kernel), solved in place, y also written in the backward solve's order,
 * which the backward solve solves in place and scatters to the caller's z. Sums: the lanes of
 * a group take every LANES-th entry (fused multiply-adds) and a butterfly adds them: not the
 * CPU's bits, which the tests compare within a backward-error bound.
 * Why not sync-free (one row per sub-warp polling ready flags, what this file did first): on
 * an H100 it cost about 8 us a level on the critical path (poll, fence, gather, release) and
 * 3.7x cuSPARSE's cusparseSpSV on poisson3d:128; measurements in doc/preconditioners.md.
 * Memory traffic of an apply (both solves): 12 bytes per stored entry (column, value) and
 * B - 1 doubles per group (the inner blocks), per row and solve 4 (offsets) + 8 (rhs) + 8 (x
 * written) + 8 (diagonal) bytes, plus 24 for the gather of r and 20 for the writes of y and z
 * in the other order, and the gathers of x (from L2). Memory: the triangles in solve order
 * hold a second copy of the factors (12 bytes per entry, 4 (B - 1) bytes per row for the
 * inner blocks) and 2 work vectors.
 *
 * Factorization (factor_kernel): sync-free in level order over the forward graph, one
 * sub-warp per row; blocks draw a ticket from an atomic counter and take the rows at
 * positions [ticket * rows_per_block, ...) of the order, so rows start in level order whatever
 * order the hardware schedules blocks in. A row's sub-warp spins on the ready flags of the rows
 * it reads (all in earlier levels, hence in blocks that drew earlier tickets and are running,
 * or in its own block: no deadlock; sub-warps of one warp progress independently on sm_70+),
 * then computes, then publishes its result with a release store of its flag. Flags hold an
 * epoch: every factorization takes the next one, so nothing is cleared between launches (the
 * flags are zeroed once, and again when the epoch wraps); the ticket counter is put back to 0
 * by the last block to finish. For k in row i's lower part, ascending: l_ik = a_ik / pivot_k
 * (all lanes compute it), then the lanes take the entries j of row k's upper part in turn,
 * find j in row i by binary search and update a_ij -= l_ik * a_kj (ilu0; for ic0 only j < i,
 * a_kj holding l_jk there, and d_i -= l_ik^2). Products and differences are rounded as written
 * (__dmul_rn, __dsub_rn: no FMA) and each entry gets its updates in ascending k, so the factors
 * have the bits of the CPU's (ilu_host.c). A refused row (ilu_impl.h's rule) still raises its
 * flag, so that no row waits forever; the smallest refused row is kept with atomicMin, and
 * since every row before it is exact, it is the CPU's first refused row, reported with the
 * same message.
 *
 * Reproducible solves (repro_level_kernel; what they compute: ilu_impl.h): the simplest level
 * schedule, one launch per level, rows in A's numbering through the level order
 * (lower_order / upper_order), entries read from the factors in A's CSR order (row_ptr, col,
 * val). A row is taken by a sub-warp of the triangle's solve lanes (solve_lanes of its mean
 * row length, as the plain solve), each lane running the fast path of ozaki_row.h over
 * every lanes-th entry (krill_pc_repro_tri_fast, lane 0 also the right-hand side); the
 * states are merged by shuffles (krill_oz_fast_reduce) and the first lane decides the row,
 * or runs the exact path alone over the whole row (krill_pc_repro_tri_exact, rare), with a
 * thread-local int64 scratch of KRILL_OZ_ROW_MAX_DIAG (rows of more than KRILL_OZ_ROW_MAX_N
 * terms are refused before: krill_ilu_gpu_repro_fits), then divides: the functions the CPU
 * calls, so the bits are the CPU's. y and z live in place in the caller's z: a row reads
 * its own entry and those of rows in earlier levels, which earlier launches on the stream
 * finished. Cost: a launch per level, instead of one cooperative launch per solve; the
 * plain path is untouched. Measured on an H100 with one thread per row and the fast path
 * and statistics in one pass (one apply, both solves): poisson3d:128 (2.1M rows, 382
 * levels a solve) ic0 4.7 ms against 1.7 ms plain, ilu0 6.7 ms against 1.7 ms;
 * elasticity3d:60,60,60 (0.67M rows of up to 81 entries, about 40 a triangle) ic0 66 ms
 * against 5.4 ms; the lanes are meant for those long rows (not measured yet). */
#include <stdint.h>
#include <string.h>

#include "kernels/kernels_impl.cuh"
#include "precond/ilu_impl.h"
#include "precond/precond_repro.h"
#include "ozaki/ozaki_row.cuh"

namespace {

/* Threads per block: 8 warps, as the other kernels (KRILL_CUDA_THREADS). */
constexpr int ILU_BLOCK = KRILL_CUDA_THREADS;

/* Threads per block of the level-scheduled solves. A level of at most this many rows (per
 * lane count) is done by block 0 alone, without a grid barrier; see doc/preconditioners.md
 * for the sizes measured. */
#ifndef KRILL_ILU_SOLVE_BLOCK
#define KRILL_ILU_SOLVE_BLOCK 256
#endif
constexpr int ILU_SOLVE_BLOCK = KRILL_ILU_SOLVE_BLOCK;

/* Threads per row of the level-scheduled solves: the fewest (a power of two) that leave at
 * most this many entries of a row of mean length to each lane. Fewer lanes than SpMV's rule
 * (krill_gpu_lanes_per_row): a solve is bound by the latency of its levels, and fewer lanes
 * a row mean more rows a block, fewer blocks in each grid barrier and shorter shuffle trees. */
#ifndef KRILL_ILU_SOLVE_ENTRIES_PER_LANE
#define KRILL_ILU_SOLVE_ENTRIES_PER_LANE 3
#endif

/* Blocks per SM of a level-scheduled solve, at most (fewer when the widest level needs
 * fewer, or occupancy allows fewer): every block takes part in each grid barrier, whose cost
 * grows with the blocks, and the rows of one level rarely need more. Measured on an H100
 * (bench/run_trsv.sh): see doc/preconditioners.md. */
#ifndef KRILL_ILU_SOLVE_BLOCKS_PER_SM
#define KRILL_ILU_SOLVE_BLOCKS_PER_SM 2
#endif

/* No refused row (the initial value of fail_row). */
constexpr int32_t ILU_NO_FAILURE = INT32_MAX;

/* One triangle of the solves on the device, in solve order (level_tri says what each
 * array holds); the pattern comes from krill_ilu_groups_build, the values from
 * pack_kernel. */
struct tri_gpu {
    int32_t n_levels, n_groups;
    int rows;                      /* B: rows per group (ilu_impl.h, krill_ilu_groups) */
    int32_t *level_ptr, *level_pos, *level_mode, *group_start, *order, *ptr, *col;
    double *val, *inv_diag;        /* inv_diag: NULL for ilu0's unit lower triangle */
    double *intra;                 /* n_groups * B (B - 1) / 2, NULL when B = 1 */
    double *x;                     /* n: the solve's result in solve order */
    int lanes;                     /* threads per group */
    unsigned int grid;             /* blocks of a solve (all resident: cooperative launch) */
    unsigned int barriers;         /* grid barriers in a solve */
};

struct ilu_gpu {
    int32_t n;
    int64_t nnz;
    bool ic;                      /* IC(0): lower part non-unit, L^T copied to the upper */
    int32_t *row_ptr;             /* n + 1 */
    int32_t *col;                 /* nnz */
    int32_t *diag;                /* n: position of a_ii */
    int32_t *transpose;           /* ic: nnz, position of (j, i) for (i, j); else NULL */
    int32_t *lower_order;         /* n: rows sorted by forward level (factorization, repro) */
    int32_t *upper_order;         /* n: rows sorted by backward level (repro) */
    int32_t *to_backward;         /* n: forward position -> backward position of its row */
    int lower_row_lanes;          /* threads per row of the reproducible solves */
    int upper_row_lanes;
    double *val;                  /* nnz: A's values, then the factors (A's CSR order) */
    double *pivot_min;            /* n: the smallest pivot each row accepts (strictly above) */
    int32_t *flags;               /* n: the epoch of the last factorization that did the row */
    unsigned int *counters;       /* 2: block tickets taken, blocks finished */
    unsigned int *barrier;        /* the solves' grid barrier counters (grid_arrive) */
    unsigned int *counted;        /* host, ILU_BARRIER_COUNTERS: their values after the
                                     launches queued so far */
    int32_t *fail_row;            /* 1: the smallest refused row, or ILU_NO_FAILURE */
    int32_t *epoch;               /* host: the last epoch handed out */
    tri_gpu lower, upper;         /* the forward and the backward solve */
    int factor_lanes;             /* threads per row of the factorization */
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

/* Sum over the sub-warp; every lane gets the total (the same bits: a butterfly). */
template <int LANES>
__device__ __forceinline__ double subwarp_allsum(double v, unsigned int mask)
{
#pragma unroll
    for (int offset = LANES / 2; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(mask, v, offset, LANES);
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

/* ---- the level-scheduled solves --------------------------------------------------------- */

/* level_mode bits of a level: block 0 runs it alone (it has at most a block's rows), and a
 * grid barrier follows it (it is a grid level, or the last of a run of one-block levels
 * before a grid level); one-block levels followed by another one-block level end in
 * __syncthreads() instead. */
constexpr int32_t ILU_LEVEL_ONE_BLOCK = 1;
constexpr int32_t ILU_LEVEL_GRID_BARRIER = 2;

/* The grid barrier's counters (grid_arrive): how many, and their spacing in unsigned ints
 * (128 bytes: one L2 line each). */
constexpr unsigned int ILU_BARRIER_COUNTERS = 8;
constexpr unsigned int ILU_BARRIER_STRIDE = 32;

/* One triangle of a solve in solve order, as the kernel reads it (device pointers). */
struct level_tri {
    int32_t n_levels;
    const int32_t *level_ptr;    /* n_levels + 1: level l is groups [level_ptr[l], ...) */
    const int32_t *level_pos;    /* n_levels + 1: and positions [level_pos[l], ...), its
                                    k-th group [level_pos[l] + k B, ...): every group of a
                                    level but its last has B rows (level_ptr when B = 1) */
    const int32_t *level_mode;   /* n_levels: ILU_LEVEL_* bits */
    const int32_t *ptr;          /* n + 1: position p's entries outside its group */
    const int32_t *col;          /* entries' columns as positions (all in earlier levels) */
    const double *val;           /* entries' values */
    const double *inv_diag;      /* n: 1 / the diagonal entry of position p; NULL: unit */
    const double *intra;         /* group s's entries inside it: B (B - 1) / 2 from
                                    s B (B - 1) / 2, (b, c) at b (b - 1) / 2 + c for its b-th
                                    and c-th rows in solve order, c < b (0 where A has none) */
    const double *rhs;           /* n: position p's right-hand side, in solve order; may be x
                                    (p reads rhs[p] before it writes x[p]) */
    double *x;                   /* n: the solution in solve order */
    const int32_t *out_index;    /* n or NULL: also out[out_index[p]] = x_p */
    double *out;
    unsigned int *counters;      /* the grid barrier's counters (grid_arrive) */
    unsigned int base[ILU_BARRIER_COUNTERS];  /* their values when this launch starts */
};

/* Groups a block of the level-scheduled solves takes at once: a sub-warp each, in all warps
 * but the last (poll_warp). */
__host__ __device__ constexpr int solve_groups_per_block(int lanes)
{
    return (ILU_SOLVE_BLOCK - 32) / lanes;
}

/* Entries per lane loaded ahead of the barrier: registers for up to 8 (LANES <= 8) or about
 * 64 B entries a group (more lanes, at most 8 a lane); the rest of a longer group is read
 * after the barrier. */
__host__ __device__ constexpr int ahead_entries(int lanes, int rows)
{
    return lanes <= 8 || 64 * rows / lanes >= 8 ? 8 : 64 * rows / lanes;
}

/* A group's entries inside it: B (B - 1) / 2 (one slot when B = 1, unused). */
__host__ __device__ constexpr int intra_entries(int rows) { return rows > 1 ? rows * (rows - 1) / 2 : 1; }

template <int AHEAD, int B>
struct group_ahead {
    int32_t p0, m;               /* the group's positions [p0, p0 + m) */
    int32_t lo, hi;              /* its entries outside it */
    int32_t row_end[B];          /* the end of its b-th row's entries (row_end[m-1..] = hi) */
    double rhs, inv_diag;        /* lane b < m: of the group's row b */
    int32_t out;                 /* lane b < m: out_index[p0 + b], when there is an out */
    double intra[B > 1 ? B - 1 : 1];  /* lane b: the group's entries (b, c), c < b */
    int32_t col[AHEAD];          /* entry lo + lane + k * LANES, or -1 past the group's end */
    double val[AHEAD];
};

/* Level l as a sub-warp sees it: its groups for this sub-warp (first, end, step), where the
 * level starts in groups and positions, and its mode bits. */
struct level_span_t {
    int32_t first, end, stride;
    int32_t group, pos, pos_end;
    int32_t mode;
};

/* Level l's offsets and mode (loads only: the kernel issues them a level early, so that
 * they are in registers when the level starts; level_start completes the span). */
template <int B>
__device__ __forceinline__ level_span_t level_span(const level_tri &t, int32_t l)
{
    level_span_t v;
    v.mode = __ldg(t.level_mode + l);
    v.group = __ldg(t.level_ptr + l);
    v.end = __ldg(t.level_ptr + l + 1);
    v.pos = v.pos_end = 0;
    if constexpr (B > 1) {
        v.pos = __ldg(t.level_pos + l);
        v.pos_end = __ldg(t.level_pos + l + 1);
    }
    return v;
}

/* The first group and step in level span v of sub-warp `sub` of the GROUPS of a block (none
 * for the poller warp, sub < 0, or for a one-block level outside block 0). */
template <int GROUPS>
__device__ __forceinline__ void level_start(level_span_t *v, int sub)
{
    const bool one_block = v->mode & ILU_LEVEL_ONE_BLOCK;
    if (sub < 0 || (one_block && blockIdx.x != 0)) {
        v->first = v->end = 0;
        v->stride = 1;
        return;
    }
    v->stride = one_block ? GROUPS : (int32_t)gridDim.x * GROUPS;
    v->first = v->group + (one_block ? sub : (int32_t)blockIdx.x * GROUPS + sub);
}

/* Everything of group s that does not depend on x (written before this launch). */
template <int LANES, bool UNIT, int AHEAD, int B>
__device__ __forceinline__ void load_ahead(const level_tri &t, int32_t s,
                                           const level_span_t &span, int lane,
                                           group_ahead<AHEAD, B> *a)
{
    if constexpr (B == 1) {
        a->p0 = s;
        a->m = 1;
    } else {
        a->p0 = span.pos + (s - span.group) * B;
        a->m = min(B, span.pos_end - a->p0);
    }
    a->lo = __ldg(t.ptr + a->p0);
    a->hi = __ldg(t.ptr + a->p0 + a->m);
#pragma unroll
    for (int b = 0; b < B; b++) a->row_end[b] = b + 1 < a->m ? __ldg(t.ptr + a->p0 + b + 1) : a->hi;
    a->rhs = 0.0;
    a->inv_diag = 1.0;
    a->out = 0;
    if (lane < a->m) {
        const int32_t p = a->p0 + lane;
        a->rhs = t.rhs[p];
        a->inv_diag = UNIT ? 1.0 : __ldg(t.inv_diag + p);
        a->out = t.out ? __ldg(t.out_index + p) : 0;
        if constexpr (B > 1) {
            const int64_t first = (int64_t)s * intra_entries(B) + lane * (lane - 1) / 2;
#pragma unroll
            for (int c = 0; c < B - 1; c++) a->intra[c] = c < lane ? __ldg(t.intra + first + c) : 0.0;
        }
    }
#pragma unroll
    for (int k = 0; k < AHEAD; k++) {
        const int32_t q = a->lo + lane + k * LANES;
        a->col[k] = q < a->hi ? __ldg(t.col + q) : -1;
        a->val[k] = q < a->hi ? __ldg(t.val + q) : 0.0;
    }
}

/* sum[b] += v * x for the group row b that entry q belongs to. */
template <int B>
__device__ __forceinline__ void add_term(const int32_t *row_end, int32_t q, double v, double x,
                                         double *sum)
{
    if constexpr (B == 1) {
        sum[0] = fma(v, x, sum[0]);
    } else {
        int r = 0;
#pragma unroll
        for (int b = 0; b + 1 < B; b++) r += q >= row_end[b];
#pragma unroll
        for (int b = 0; b < B; b++)
            if (r == b) sum[b] = fma(v, x, sum[b]);
    }
}

/* The group's rows from the loaded part, the rest of its entries and x of earlier levels
 * (from L2: __ldcg, never a line an SM's L1 kept from before the barrier), summed over the
 * sub-warp so that every lane has every row's sum; then its rows in turn, row b on lane b,
 * x_b = (rhs_b - sum_b - sum_{c<b} intra_bc x_c) [* inv_diag_b], each broadcast to the
 * sub-warp for the rows after it (LANES >= B). */
template <int LANES, bool UNIT, int AHEAD, int B>
__device__ __forceinline__ void finish_group(const level_tri &t, int lane, unsigned int mask,
                                             const group_ahead<AHEAD, B> &a)
{
    double sum[B], mine = 0.0, x_prev[B];
#pragma unroll
    for (int b = 0; b < B; b++) sum[b] = 0.0;
#pragma unroll
    for (int k = 0; k < AHEAD; k++)
        if (a.col[k] >= 0)
            add_term<B>(a.row_end, a.lo + lane + k * LANES, a.val[k], __ldcg(t.x + a.col[k]), sum);
    for (int32_t q = a.lo + lane + AHEAD * LANES; q < a.hi; q += LANES)
        add_term<B>(a.row_end, q, __ldg(t.val + q), __ldcg(t.x + __ldg(t.col + q)), sum);
#pragma unroll
    for (int b = 0; b < B; b++) {
        sum[b] = subwarp_allsum<LANES>(sum[b], mask);
        if (lane == b) mine = sum[b];
    }
    double v = a.rhs - mine;
#pragma unroll
    for (int b = 0; b < B; b++) {
        if (lane == b) {
#pragma unroll
            for (int c = 0; c < b; c++) v = fma(-a.intra[c], x_prev[c], v);
            if (!UNIT) v = v * a.inv_diag;
        }
        if constexpr (B > 1) x_prev[b] = __shfl_sync(mask, v, b, LANES);
    }
    if (lane < a.m) {
        t.x[a.p0 + lane] = v;
        if (t.out) t.out[a.out] = v;
    }
}

__device__ __forceinline__ unsigned int load_acquire_u32(const unsigned int *p)
{
    unsigned int v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void add_release_u32(unsigned int *p, unsigned int v)
{
    asm volatile("red.release.gpu.global.add.u32 [%0], %1;" : : "l"(p), "r"(v) : "memory");
}

/* A grid barrier in two halves, so that a block can load ahead between them: every block of
 * the (co-resident: cooperative launch) grid arrives, then waits for the others; what any
 * block wrote before arriving is visible to every block after its wait. Arrivals are spread
 * over ILU_BARRIER_COUNTERS counters, each on its own 128-byte line (block b adds to counter
 * b % ILU_BARRIER_COUNTERS), so that they do not queue at one L2 slice: one release add per
 * block. The counters only grow: the host knows how many arrivals each launch adds to each,
 * so every barrier has its own targets, compared modulo 2^32, and nothing is reset.
 * The block's last warp takes no rows (ILU_POLL_WARP): its lane 0 makes the release add and
 * its lanes 0 .. ILU_BARRIER_COUNTERS - 1 poll a counter each, while the other warps issue
 * their loads ahead; so neither the release (which waits for the thread's outstanding
 * memory operations) nor the polling waits behind the chain of loads ahead (level offsets,
 * row offsets, then entries). */
__device__ __forceinline__ bool poll_warp() { return threadIdx.x >= ILU_SOLVE_BLOCK - 32; }

__device__ __forceinline__ void grid_arrive(unsigned int *counters)
{
    __syncthreads();       /* the block's writes are ordered before the poller's release */
    if (threadIdx.x == ILU_SOLVE_BLOCK - 32)
        add_release_u32(counters + (blockIdx.x % ILU_BARRIER_COUNTERS) * ILU_BARRIER_STRIDE, 1u);
}

/* Arrivals at counter c in one barrier of a grid of `grid` blocks. */
__host__ __device__ __forceinline__ unsigned int counter_arrivals(unsigned int grid, unsigned int c)
{
    return grid / ILU_BARRIER_COUNTERS + (c < grid % ILU_BARRIER_COUNTERS ? 1u : 0u);
}

/* Wait until counter c has reached base[c] + k * counter_arrivals(gridDim.x, c). */
__device__ __forceinline__ void grid_wait(const unsigned int *counters, const unsigned int *base,
                                          unsigned int k)
{
    if (poll_warp()) {
        const unsigned int c = threadIdx.x - (ILU_SOLVE_BLOCK - 32);
        bool waiting = false;
        unsigned int target = 0;
        if (c < ILU_BARRIER_COUNTERS) {
            target = base[c] + k * counter_arrivals(gridDim.x, c);
            waiting = (int)(load_acquire_u32(counters + c * ILU_BARRIER_STRIDE) - target) < 0;
        }
        while (__any_sync(0xffffffffu, waiting))
            if (waiting)
                waiting = (int)(load_acquire_u32(counters + c * ILU_BARRIER_STRIDE) - target) < 0;
    }
    __syncthreads();       /* the pollers' acquires before the block's reads */
}

/* ---- kernels ---------------------------------------------------------------------------- */

/* Level-scheduled triangular solve over one triangle stored in solve order (struct
 * level_tri): the groups of a level are consecutive, so are the positions of a group,
 * columns are positions of earlier levels, x is in solve order. For each level, every
 * sub-warp of LANES threads takes the groups level_ptr[l] + g, + G, ... (g its index, G the
 * sub-warps of the grid, or of block 0 alone for a level that one block covers) and solves
 * their rows in turn (finish_group), then waits at the level's barrier: a grid barrier, or
 * __syncthreads() between levels that block 0 runs alone. What a group needs besides x (its
 * pointers, its first entries, rhs, diagonals, inner entries) is loaded before the barrier
 * that precedes its level (struct group_ahead), so after the barrier a group costs one
 * gather of x from L2, B dependent multiply-adds and B stores. */
template <int LANES, bool UNIT, int B>
__global__ void __launch_bounds__(ILU_SOLVE_BLOCK) level_solve_kernel(level_tri t)
{
    constexpr int GROUPS = solve_groups_per_block(LANES);
    constexpr int AHEAD = ahead_entries(LANES, B);
    const int lane = (int)(threadIdx.x % LANES);
    const int sub = poll_warp() ? -1 : (int)(threadIdx.x / LANES);
    const unsigned int mask = subwarp_mask<LANES>();
    group_ahead<AHEAD, B> a;
    level_span_t now = level_span<B>(t, 0), next = now;
    unsigned int barriers = 0;
    if (t.n_levels > 1) next = level_span<B>(t, 1);
    level_start<GROUPS>(&now, sub);
    if (now.first < now.end) load_ahead<LANES, UNIT>(t, now.first, now, lane, &a);
    for (int32_t l = 0; l < t.n_levels; l++) {
        for (int32_t s = now.first; s < now.end;) {
            finish_group<LANES, UNIT>(t, lane, mask, a);
            s += now.stride;
            if (s < now.end) load_ahead<LANES, UNIT>(t, s, now, lane, &a);
        }
        if (l + 1 < t.n_levels) {
            const bool grid = now.mode & ILU_LEVEL_GRID_BARRIER;
            if (grid) grid_arrive(t.counters);
            now = next;
            if (l + 2 < t.n_levels) next = level_span<B>(t, l + 2);
            level_start<GROUPS>(&now, sub);
            if (now.first < now.end) load_ahead<LANES, UNIT>(t, now.first, now, lane, &a);
            if (grid) {
                grid_wait(t.counters, t.base, ++barriers);
            } else {
                __syncthreads();
            }
        }
    }
}

/* Values of the factors (val, A's CSR order) into one triangle in solve order (UPPER: the
 * backward solve's): position p holds row order[p]'s strictly lower (upper) entries outside
 * its group, in their order, and 1 / its diagonal entry (none for ilu0's unit lower
 * triangle); its entries inside the group go to the group's block of intra (the slots the
 * pattern lacks stay 0 from the build). One thread per group s of groups of `rows` rows.
 * (A multiplication by the stored inverse is shorter on the critical path than a division;
 * the result differs from the CPU's division by at most an ulp or so, within the tests'
 * backward-error bound.) */
template <bool UPPER>
__global__ void __launch_bounds__(ILU_BLOCK)
pack_kernel(int32_t n, int32_t n_groups, int32_t rows, const int32_t *__restrict__ row_ptr,
            const int32_t *__restrict__ col, const int32_t *__restrict__ diag,
            const double *__restrict__ val, const int32_t *__restrict__ group_start,
            const int32_t *__restrict__ order, const int32_t *__restrict__ tri_ptr,
            double *__restrict__ tri_val, double *__restrict__ inv_diag,
            double *__restrict__ intra)
{
    const int64_t per_group = (int64_t)rows * (rows - 1) / 2;
    for (int64_t s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; s < n_groups;
         s += (int64_t)gridDim.x * blockDim.x) {
        const int32_t p0 = group_start ? group_start[s] : (int32_t)s;
        const int32_t m = group_start ? group_start[s + 1] - p0 : 1;
        for (int32_t b = 0; b < m; b++) {
            const int32_t i = order[p0 + b];
            const int32_t g0 = i / rows * rows, g1 = g0 + rows < n ? g0 + rows : n;
            const int32_t lo = UPPER ? diag[i] + 1 : row_ptr[i];
            const int32_t hi = UPPER ? row_ptr[i + 1] : diag[i];
            int32_t k = tri_ptr[p0 + b];
            for (int32_t e = lo; e < hi; e++) {
                const int32_t j = col[e];
                if (j >= g0 && j < g1) {
                    const int32_t c = UPPER ? g1 - 1 - j : j - g0;
                    intra[s * per_group + b * (b - 1) / 2 + c] = val[e];
                } else {
                    tri_val[k++] = val[e];
                }
            }
            if (inv_diag) inv_diag[p0 + b] = 1.0 / val[diag[i]];
        }
    }
}

/* x[p] = r[order[p]], p < n: the forward solve's right-hand side in its solve order. */
__global__ void __launch_bounds__(ILU_BLOCK)
gather_kernel(int32_t n, const int32_t *__restrict__ order, const double *__restrict__ r,
              double *__restrict__ x)
{
    for (int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; p < n;
         p += (int64_t)gridDim.x * blockDim.x)
        x[p] = r[order[p]];
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

/* Threads per block of the reproducible solves: each holds KRILL_OZ_ROW_MAX_DIAG int64 of
 * local scratch; small blocks leave the short levels spread over more SMs. */
constexpr int ILU_REPRO_BLOCK = 128;

/* The rows order[first .. first + count) of one level (all independent), L lanes each:
 * x_i = RN(rhs_i - sum_j a_ij x_j) [/ a_ii] over row i's strictly lower (UPPER false) or
 * strictly upper part of the factors val; unit: no division. rhs may be x (the backward
 * solve reads its own y_i from there before writing z_i). Every lane of every warp reaches
 * the shuffles (no loop, no early return). */
template <bool UPPER, int L>
__global__ void __launch_bounds__(ILU_REPRO_BLOCK)
repro_level_kernel(int32_t first, int32_t count, const int32_t *__restrict__ order,
                   const int32_t *__restrict__ row_ptr, const int32_t *__restrict__ col,
                   const int32_t *__restrict__ diag, const double *__restrict__ val, bool unit,
                   const double *rhs, double *x)
{
    int64_t acc[KRILL_OZ_ROW_MAX_DIAG];
    const int sublane = (int)(threadIdx.x % L);
    const int64_t t = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / L;
    const bool mine = t < count;
    int32_t i = 0, di = 0, lo = 0, hi = 0;
    krill_oz_fast f;
    double s;
    krill_oz_fast_init(&f);
    if (mine) {
        i = order[first + t];
        di = diag[i];
        lo = UPPER ? di + 1 : row_ptr[i];
        hi = UPPER ? row_ptr[i + 1] : di;
        krill_pc_repro_tri_fast(&f, sublane == 0 ? rhs[i] : 0.0, lo, hi, val, col, x, sublane,
                                L);
    }
    krill_oz_fast_reduce<L>(&f);
    if (mine && sublane == 0) {
        if (!krill_oz_fast_end(&f, &s))
            s = krill_pc_repro_tri_exact(rhs[i], lo, hi, val, col, x, &f, acc);
        x[i] = krill_pc_repro_tri_divide(s, unit ? NULL : val + di);
    }
}

/* ---- launchers ------------------------------------------------------------------------- */

/* One level of a reproducible solve with L lanes a row. */
template <bool UPPER, int L>
krill_status repro_level(krill_ctx *ctx, const ilu_gpu *g, int32_t first, int32_t count,
                         const int32_t *order, bool unit, const double *rhs, double *x,
                         const char *what)
{
    const unsigned int blocks = (unsigned int)(((int64_t)count * L + ILU_REPRO_BLOCK - 1) /
                                               ILU_REPRO_BLOCK);
    repro_level_kernel<UPPER, L><<<blocks, ILU_REPRO_BLOCK, 0, krill_cuda_stream(ctx)>>>(
        first, count, order, g->row_ptr, g->col, g->diag, g->val, unit, rhs, x);
    return krill_cuda_check_launch(what);
}

/* One triangle's reproducible solve: a launch per level of lv, `lanes` a row. */
template <bool UPPER>
krill_status repro_solve(krill_ctx *ctx, const ilu_gpu *g, const krill_ilu_levels *lv,
                         const int32_t *order, int lanes, bool unit, const double *rhs,
                         double *x, const char *what)
{
    krill_status st = KRILL_OK;
    for (int32_t l = 0; l < lv->n_levels; l++) {
        const int32_t first = lv->level_ptr[l], count = lv->level_ptr[l + 1] - first;
        switch (lanes) {
        case 1: st = repro_level<UPPER, 1>(ctx, g, first, count, order, unit, rhs, x, what); break;
        case 2: st = repro_level<UPPER, 2>(ctx, g, first, count, order, unit, rhs, x, what); break;
        case 4: st = repro_level<UPPER, 4>(ctx, g, first, count, order, unit, rhs, x, what); break;
        case 8: st = repro_level<UPPER, 8>(ctx, g, first, count, order, unit, rhs, x, what); break;
        case 16:
            st = repro_level<UPPER, 16>(ctx, g, first, count, order, unit, rhs, x, what);
            break;
        default:
            st = repro_level<UPPER, 32>(ctx, g, first, count, order, unit, rhs, x, what);
            break;
        }
        KRILL_TRY(st);
    }
cleanup:
    return st;
}

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

/* The grid of a level solve (grid != NULL, t ignored: blocks for a triangle whose widest
 * grid level has `widest` groups), or its launch. */
template <int LANES, bool UNIT, int B>
krill_status level_solve_lanes(krill_ctx *ctx, int32_t widest, unsigned int *grid,
                               const level_tri *t, unsigned int launch_grid, const char *what)
{
    krill_status st = KRILL_OK;
    if (grid) {
        int per_sm = 0;
        KRILL_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, level_solve_kernel<LANES, UNIT, B>, ILU_SOLVE_BLOCK, 0));
        const int64_t groups = solve_groups_per_block(LANES);
        int64_t blocks = ((int64_t)widest + groups - 1) / groups;
        const int64_t cap = (int64_t)ctx->cuda->sm_count *
                            (per_sm < KRILL_ILU_SOLVE_BLOCKS_PER_SM ? per_sm
                                                                    : KRILL_ILU_SOLVE_BLOCKS_PER_SM);
        if (blocks > cap) blocks = cap;
        *grid = blocks < 1 ? 1u : (unsigned int)blocks;
    } else {
        level_tri copy = *t;
        void *params[] = {&copy};
        KRILL_TRY(krill_cuda_call(
            cudaLaunchCooperativeKernel((const void *)level_solve_kernel<LANES, UNIT, B>,
                                        launch_grid, ILU_SOLVE_BLOCK, params, 0,
                                        krill_cuda_stream(ctx)),
            what));
    }
cleanup:
    return st;
}

template <bool UNIT, int B>
krill_status level_solve_rows(krill_ctx *ctx, int lanes, int32_t widest, unsigned int *grid,
                              const level_tri *t, unsigned int launch_grid, const char *what)
{
    switch (lanes) {
    case 1: return level_solve_lanes<1, UNIT, B>(ctx, widest, grid, t, launch_grid, what);
    case 2: return level_solve_lanes<2, UNIT, B>(ctx, widest, grid, t, launch_grid, what);
    case 4: return level_solve_lanes<4, UNIT, B>(ctx, widest, grid, t, launch_grid, what);
    case 8: return level_solve_lanes<8, UNIT, B>(ctx, widest, grid, t, launch_grid, what);
    case 16: return level_solve_lanes<16, UNIT, B>(ctx, widest, grid, t, launch_grid, what);
    default: return level_solve_lanes<32, UNIT, B>(ctx, widest, grid, t, launch_grid, what);
    }
}

/* The grid (grid != NULL, t ignored) or the launch of a level solve with groups of `rows`
 * rows (one of krill_ilu_group_sizes) and `lanes` threads a group. */
template <bool UNIT>
krill_status level_solve(krill_ctx *ctx, int rows, int lanes, int32_t widest, unsigned int *grid,
                         const level_tri *t, unsigned int launch_grid, const char *what)
{
    switch (rows) {
    case 1: return level_solve_rows<UNIT, 1>(ctx, lanes, widest, grid, t, launch_grid, what);
    case 2: return level_solve_rows<UNIT, 2>(ctx, lanes, widest, grid, t, launch_grid, what);
    case 3: return level_solve_rows<UNIT, 3>(ctx, lanes, widest, grid, t, launch_grid, what);
    case 4: return level_solve_rows<UNIT, 4>(ctx, lanes, widest, grid, t, launch_grid, what);
    default: return level_solve_rows<UNIT, 6>(ctx, lanes, widest, grid, t, launch_grid, what);
    }
}

int solve_lanes(double mean_entries)
{
    int lanes = 1;
    while (lanes < 32 && mean_entries > KRILL_ILU_SOLVE_ENTRIES_PER_LANE * lanes) lanes *= 2;
    return lanes;
}

/* level_mode of every level (ILU_LEVEL_* bits) of a triangle for `lanes` threads a group,
 * and the groups of the widest level that is not a one-block level (0 if none). */
void level_modes(const krill_ilu_tri_groups *lv, int lanes, int32_t *mode, int32_t *widest)
{
    const int32_t groups = solve_groups_per_block(lanes);
    *widest = 0;
    for (int32_t l = 0; l < lv->n_levels; l++) {
        const int32_t w = lv->level_ptr[l + 1] - lv->level_ptr[l];
        mode[l] = w <= groups ? ILU_LEVEL_ONE_BLOCK : 0;
        if (w > groups && w > *widest) *widest = w;
    }
    for (int32_t l = 0; l < lv->n_levels; l++) {
        const bool next_grid = l + 1 < lv->n_levels && !(mode[l + 1] & ILU_LEVEL_ONE_BLOCK);
        if (!(mode[l] & ILU_LEVEL_ONE_BLOCK) || next_grid) mode[l] |= ILU_LEVEL_GRID_BARRIER;
    }
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
    switch (g->factor_lanes) {
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

/* What one solve of t adds to each barrier counter. */
void count_arrivals(unsigned int *counted, const tri_gpu *t)
{
    for (unsigned int c = 0; c < ILU_BARRIER_COUNTERS; c++)
        counted[c] += t->barriers * counter_arrivals(t->grid, c);
}

void tri_free(krill_ctx *ctx, tri_gpu *t)
{
    krill_mem_free(ctx, t->level_ptr);
    krill_mem_free(ctx, t->level_mode);
    krill_mem_free(ctx, t->level_pos);
    krill_mem_free(ctx, t->group_start);
    krill_mem_free(ctx, t->order);
    krill_mem_free(ctx, t->ptr);
    krill_mem_free(ctx, t->col);
    krill_mem_free(ctx, t->val);
    krill_mem_free(ctx, t->inv_diag);
    krill_mem_free(ctx, t->intra);
    krill_mem_free(ctx, t->x);
}

/* One triangle's layout (from krill_ilu_groups_build) and its launch geometry on the
 * device. */
krill_status tri_create(krill_ctx *ctx, const krill_ilu_tri_groups *lv, int rows, int32_t n,
                        bool unit, tri_gpu *t)
{
    krill_status st = KRILL_OK;
    int32_t *mode = NULL, *level_pos = NULL, widest = 0;
    const int64_t intra = (int64_t)lv->n_groups * (rows - 1) * rows / 2;
    t->n_levels = lv->n_levels;
    t->n_groups = lv->n_groups;
    t->rows = rows;
    t->lanes = solve_lanes(lv->n_groups > 0 ? (double)lv->nnz / (double)lv->n_groups : 0.0);
    while (t->lanes < rows) t->lanes *= 2;     /* a lane per row of a group */
    KRILL_ALLOC(mode, lv->n_levels > 0 ? lv->n_levels : 1);
    level_modes(lv, t->lanes, mode, &widest);
    t->barriers = 0;
    for (int32_t l = 0; l + 1 < lv->n_levels; l++)
        t->barriers += (mode[l] & ILU_LEVEL_GRID_BARRIER) ? 1u : 0u;
    KRILL_TRY(upload_copy(ctx, &t->level_ptr, lv->level_ptr, (int64_t)lv->n_levels + 1,
                          "ilu level offsets"));
    KRILL_TRY(upload_copy(ctx, &t->level_mode, mode, lv->n_levels, "ilu level modes"));
    if (rows > 1) {
        KRILL_ALLOC(level_pos, (size_t)lv->n_levels + 1);
        for (int32_t l = 0; l <= lv->n_levels; l++) level_pos[l] = lv->group_start[lv->level_ptr[l]];
        KRILL_TRY(upload_copy(ctx, &t->level_pos, level_pos, (int64_t)lv->n_levels + 1,
                              "ilu level positions"));
        KRILL_TRY(upload_copy(ctx, &t->group_start, lv->group_start, (int64_t)lv->n_groups + 1,
                              "ilu group offsets"));
    }
    KRILL_TRY(upload_copy(ctx, &t->order, lv->order, n, "ilu solve order"));
    KRILL_TRY(upload_int32(ctx, &t->ptr, lv->ptr, (int64_t)n + 1, "ilu solve-order offsets"));
    KRILL_TRY(upload_copy(ctx, &t->col, lv->col, lv->nnz, "ilu solve-order columns"));
    KRILL_MEM_ALLOC(ctx, t->val, lv->nnz > 0 ? lv->nnz : 1);
    if (!unit) KRILL_MEM_ALLOC(ctx, t->inv_diag, n);
    if (rows > 1) {
        KRILL_MEM_ALLOC(ctx, t->intra, intra > 0 ? intra : 1);
        KRILL_TRY(krill_cuda_memset0(ctx, t->intra, (size_t)(intra > 0 ? intra : 1) *
                                                        sizeof *t->intra));
    }
    KRILL_MEM_ALLOC(ctx, t->x, n);
    KRILL_TRY(unit ? level_solve<true>(ctx, rows, t->lanes, widest, &t->grid, NULL, 0, NULL)
                   : level_solve<false>(ctx, rows, t->lanes, widest, &t->grid, NULL, 0, NULL));
cleanup:
    krill_free(mode);
    krill_free(level_pos);
    return st;
}

/* The factors g->val into one triangle t (UPPER: the backward solve's). */
template <bool UPPER>
krill_status pack(krill_ctx *ctx, const ilu_gpu *g, const tri_gpu *t)
{
    krill_cuda_launch(ctx, pack_kernel<UPPER>, t->n_groups, krill_cuda_stream(ctx), g->n,
                      t->n_groups, t->rows, g->row_ptr, g->col, g->diag, g->val, t->group_start,
                      t->order, t->ptr, t->val, t->inv_diag, t->intra);
    return krill_cuda_check_launch(UPPER ? "ilu factors into solve order, backward (pack_kernel)"
                                         : "ilu factors into solve order, forward (pack_kernel)");
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
    krill_mem_free(ctx, g->to_backward);
    krill_mem_free(ctx, g->val);
    krill_mem_free(ctx, g->pivot_min);
    krill_mem_free(ctx, g->flags);
    krill_mem_free(ctx, g->counters);
    krill_mem_free(ctx, g->barrier);
    krill_free(g->counted);
    krill_mem_free(ctx, g->fail_row);
    tri_free(ctx, &g->lower);
    tri_free(ctx, &g->upper);
    krill_free(g->epoch);
    krill_free(g);
}

extern "C" krill_status krill_ilu_cuda_create(krill_ctx *ctx, const krill_ilu_host *h,
                                              int32_t group_rows, void **dev)
{
    krill_status st = KRILL_OK;
    ilu_gpu *g = NULL;
    krill_ilu_groups q;
    int cooperative = 0;
    const int64_t n = h->n;
    memset(&q, 0, sizeof q);
    *dev = NULL;
    /* 32-bit positions; the strided loops step past the end by less than a warp */
    if (h->nnz > INT32_MAX - 32 || n > INT32_MAX - 32) {
        st = krill_error(KRILL_ERR_UNSUPPORTED, "%s on the GPU: %lld rows, %lld entries: the "
                         "GPU factors keep 32-bit offsets (at most %d rows and entries)",
                         h->kind == KRILL_ILU_KIND_IC0 ? "ic0" : "ilu0", (long long)n,
                         (long long)h->nnz, INT32_MAX - 32);
        goto cleanup;
    }
    KRILL_CUDA_TRY(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch,
                                          ctx->device_id));
    if (!cooperative) {
        st = krill_error(KRILL_ERR_UNSUPPORTED, "%s on the GPU: device %d does not support "
                         "cooperative launches, which the level-scheduled solves need",
                         h->kind == KRILL_ILU_KIND_IC0 ? "ic0" : "ilu0", ctx->device_id);
        goto cleanup;
    }
    KRILL_CALLOC(g, 1);
    KRILL_CALLOC(g->epoch, 1);
    KRILL_CALLOC(g->counted, ILU_BARRIER_COUNTERS);
    g->n = h->n;
    g->nnz = h->nnz;
    g->ic = h->kind == KRILL_ILU_KIND_IC0;
    KRILL_TRY(upload_int32(ctx, &g->row_ptr, h->row_ptr, n + 1, "ilu row offsets"));
    KRILL_TRY(upload_copy(ctx, &g->col, h->col, h->nnz, "ilu columns"));
    KRILL_TRY(upload_int32(ctx, &g->diag, h->diag, n, "ilu diagonal positions"));
    if (g->ic) KRILL_TRY(upload_int32(ctx, &g->transpose, h->transpose, h->nnz, "ic0 L^T map"));
    KRILL_TRY(upload_copy(ctx, &g->lower_order, h->lower.rows, n, "ilu forward order"));
    KRILL_TRY(upload_copy(ctx, &g->upper_order, h->upper.rows, n, "ilu backward order"));
    if (group_rows == 0) KRILL_TRY(krill_ilu_group_rows(h, &group_rows));
    KRILL_TRY(krill_ilu_groups_build(h, group_rows, &q));
    KRILL_TRY(upload_copy(ctx, &g->to_backward, q.to_backward, n,
                          "ilu forward-to-backward positions"));
    {
        const int64_t upper_nnz = h->nnz - n - h->lower_nnz;
        const double mean_lower = n > 0 ? (double)h->lower_nnz / (double)n : 0.0;
        const double mean_upper = n > 0 ? (double)upper_nnz / (double)n : 0.0;
        g->factor_lanes = krill_gpu_lanes_per_row(mean_upper, 0, 1);
        g->lower_row_lanes = solve_lanes(mean_lower);
        g->upper_row_lanes = solve_lanes(mean_upper);
        KRILL_TRY(tri_create(ctx, &q.lower, group_rows, g->n, !g->ic, &g->lower));
        KRILL_TRY(tri_create(ctx, &q.upper, group_rows, g->n, false, &g->upper));
    }
    krill_ilu_groups_free(&q);
    KRILL_MEM_ALLOC(ctx, g->val, h->nnz);
    KRILL_MEM_ALLOC(ctx, g->pivot_min, n);
    KRILL_MEM_ALLOC(ctx, g->flags, n);
    KRILL_MEM_ALLOC(ctx, g->counters, 2);
    KRILL_MEM_ALLOC(ctx, g->barrier, ILU_BARRIER_COUNTERS * ILU_BARRIER_STRIDE);
    KRILL_MEM_ALLOC(ctx, g->fail_row, 1);
    KRILL_TRY(krill_cuda_memset0(ctx, g->flags, (size_t)n * sizeof *g->flags));
    KRILL_TRY(krill_cuda_memset0(ctx, g->counters, 2 * sizeof *g->counters));
    KRILL_TRY(krill_cuda_memset0(ctx, g->barrier, ILU_BARRIER_COUNTERS * ILU_BARRIER_STRIDE *
                                                      sizeof *g->barrier));
    *dev = g;
    g = NULL;
cleanup:
    krill_ilu_groups_free(&q);
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
        goto cleanup;
    }
    KRILL_TRY(pack<false>(ctx, g, &g->lower));
    KRILL_TRY(pack<true>(ctx, g, &g->upper));
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
    {
        /* y = L^{-1} r in forward order, then z = U^{-1} y in backward order, scattered to z */
        const tri_gpu *lo = &g->lower, *up = &g->upper;
        level_tri fwd = {lo->n_levels, lo->level_ptr, lo->level_pos, lo->level_mode, lo->ptr,
                         lo->col, lo->val, lo->inv_diag, lo->intra, lo->x, lo->x,
                         g->to_backward, up->x, g->barrier, {0}};
        level_tri bwd = {up->n_levels, up->level_ptr, up->level_pos, up->level_mode, up->ptr,
                         up->col, up->val, up->inv_diag, up->intra, up->x, up->x, up->order, z,
                         g->barrier, {0}};
        krill_cuda_launch(ctx, gather_kernel, g->n, krill_cuda_stream(ctx), g->n, lo->order, r,
                          lo->x);
        KRILL_TRY(krill_cuda_check_launch("ilu right-hand side into solve order (gather_kernel)"));
        memcpy(fwd.base, g->counted, sizeof fwd.base);
        KRILL_TRY(g->ic ? level_solve<false>(ctx, lo->rows, lo->lanes, 0, NULL, &fwd, lo->grid,
                                             "ic0 forward solve (level_solve_kernel)")
                        : level_solve<true>(ctx, lo->rows, lo->lanes, 0, NULL, &fwd, lo->grid,
                                            "ilu0 forward solve (level_solve_kernel)"));
        count_arrivals(g->counted, lo);     /* counted once the launch is queued */
        memcpy(bwd.base, g->counted, sizeof bwd.base);
        KRILL_TRY(level_solve<false>(ctx, up->rows, up->lanes, 0, NULL, &bwd, up->grid,
                                     g->ic ? "ic0 backward solve (level_solve_kernel)"
                                           : "ilu0 backward solve (level_solve_kernel)"));
        count_arrivals(g->counted, up);
    }
cleanup:
    return st;
}

extern "C" krill_status krill_ilu_cuda_apply_repro(krill_ctx *ctx, const void *dev,
                                                   const krill_ilu_host *h, const double *r,
                                                   double *z)
{
    krill_status st = KRILL_OK;
    const ilu_gpu *g = static_cast<const ilu_gpu *>(dev);
    /* y = L^{-1} r into z, then z = U^{-1} y in place */
    KRILL_TRY(repro_solve<false>(ctx, g, &h->lower, g->lower_order, g->lower_row_lanes, !g->ic, r, z,
                                 g->ic ? "ic0 reproducible forward solve (repro_level_kernel)"
                                       : "ilu0 reproducible forward solve (repro_level_kernel)"));
    KRILL_TRY(repro_solve<true>(ctx, g, &h->upper, g->upper_order, g->upper_row_lanes, false, z, z,
                                g->ic ? "ic0 reproducible backward solve (repro_level_kernel)"
                                      : "ilu0 reproducible backward solve (repro_level_kernel)"));
cleanup:
    return st;
}

extern "C" void krill_ilu_cuda_layout(const void *dev, int32_t *group_rows,
                                      int32_t *forward_levels, int32_t *backward_levels)
{
    const ilu_gpu *g = static_cast<const ilu_gpu *>(dev);
    *group_rows = g->lower.rows;
    *forward_levels = g->lower.n_levels;
    *backward_levels = g->upper.n_levels;
}

extern "C" void krill_ilu_cuda_factors(const void *dev, krill_ilu_factors *f)
{
    const ilu_gpu *g = static_cast<const ilu_gpu *>(dev);
    f->val = g->val;
    f->dev_row_ptr = g->row_ptr;
    f->dev_col = g->col;
}
