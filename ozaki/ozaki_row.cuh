/* ozaki/ozaki_row.cuh - the GPU half of every format's reproducible SpMV (spmv_repro):
 * y_i = alpha s_i + beta y_i with s_i the correctly rounded exact sum of row i's stored
 * products (ozaki/ozaki_row.h), and the sub-warp merge of fast-path states that the
 * preconditioners' lanes use too. Included by CUDA sources only.
 *
 * Two kernel templates, both running ozaki_row.h's passes: the fast path over every row,
 * then, for the rare row it leaves undecided, the exact path (statistics, exact digit
 * products into per-diagonal int64 sums, one rounding). The bits are those of the CPU's
 * krill_row_sum_repro (formats/spmv_repro.c) for the same products, whatever the format,
 * the launch geometry and the lanes.
 *
 * Rows stored as ranges (krill_oz_spmv_range_kernel: csr, cusparse's CSR arrays, segscan):
 * row i is a range [begin, end) of one stream of elements, some of which may be padding.
 * The visitor V is a small struct of device pointers with
 *   __device__ void V::locate_rows(int64_t first, int count, int sub, int64_t *begin,
 *                                  int64_t *end) const
 *       called by all 32 lanes of a warp together: the warp's rows are first .. first +
 *       count - 1 (count <= 32); a lane with sub < count gets row first + sub's range;
 *   __device__ bool V::term(int64_t k, const double *x, double *a, double *xv) const
 *       element k's product a x_j, false for padding (never 0 * x_j: 0 * Inf is NaN);
 *   __device__ int64_t V::out_row(int64_t i) const
 *       the row of y that row i's sum goes to (i, or a map's entry: a subset of the rows).
 * A sub-warp of L lanes takes a row (cyclically, like the plain csr kernel), lane l the
 * elements begin + l, begin + l + L, ..., so a warp's loads fall on neighbouring addresses;
 * the lanes merge their fast-path states with shuffles (krill_oz_fast_reduce) and the first
 * lane decides; a row it leaves undecided (rare: a sum within its error bound of a
 * midpoint, a term outside the guard's range, an exact zero with error terms left at the
 * third level) takes the exact path with its lanes sharing the terms, the warp waiting.
 *
 * Rows reached by a walk (krill_oz_spmv_kernel: ell, ellr, rbp-*; column-major ELL storage
 * is already coalesced with a thread per row): a thread per row, the visitor V with
 *   typename V::row                        what locating a row yields (an index, a range);
 *   __device__ V::row V::locate(int64_t i) const;
 *   template <class Op> __device__ void V::visit(const V::row &r, const double *x, Op &op)
 *                                          calls op(a_ij, x_j) once for every stored entry
 *                                          of the row, in any order, padding skipped.
 *
 * Scratch of the exact path: each thread's int64_t acc[KRILL_OZ_ROW_MAX_DIAG] (1768 bytes)
 * in local memory, enough for rows of up to KRILL_OZ_ROW_MAX_N entries; the launchers refuse
 * a matrix whose longest row (known from the build) is longer, before any launch. The
 * driver reserves local memory for every thread the GPU can hold at once (about 1.9 KB a
 * thread: 515 MB on an H100, of which a CUDA context holds 277 MB from its start; the first
 * launch takes the rest, and the context keeps it). Untouched by rows the fast path decides. */
#ifndef KRILL_OZAKI_ROW_CUH
#define KRILL_OZAKI_ROW_CUH

#include "formats/formats_impl.h"
#include "kernels/kernels_impl.cuh"
#include "ozaki/ozaki_row.h"

/* The SpMV kernels' __launch_bounds__. By default the block size alone: ptxas (CUDA 13.0,
 * sm_90, -Xptxas -v) then gives them 48 registers a thread, 5 blocks of 256 threads an SM
 * (62% of an H100 SM's threads). -DKRILL_OZ_ROW_MIN_BLOCKS=N asks for N blocks an SM: 6
 * gives 40 registers and 36-64 bytes of spills, 8 gives 32 registers (every thread
 * resident) and about 120 bytes of spills (and 1 gives 56-59 registers: no cap at all).
 * (Register counts from before the twice-compensated fast path.) Both caps were slower on
 * an H100, csr's reproducible SpMV (command below): 6 blocks 1082 us on elasticity3d:160,64,64
 * and 105 us on poisson3d:128 against the default's 941 and 90; 8 blocks 2561 against 1607
 * (elasticity, the plain lane rule). */
#ifdef KRILL_OZ_ROW_MIN_BLOCKS
#define KRILL_OZ_ROW_BOUNDS __launch_bounds__(KRILL_CUDA_THREADS, KRILL_OZ_ROW_MIN_BLOCKS)
#else
#define KRILL_OZ_ROW_BOUNDS __launch_bounds__(KRILL_CUDA_THREADS)
#endif

/* The fast-path states of each sub-warp of L lanes (L a power of two <= 32) merged into its
 * first lane by a shuffle tree (krill_oz_fast_merge: any merge order gives the correctly
 * rounded sum). All 32 lanes of the warp must call it; the other lanes' states are then
 * partial. Rows of at most KRILL_OZ_ROW_MAX_N terms (what the GPU takes): m < 2^31, so it
 * travels as one 32-bit shuffle. A level costs 6 shuffles and a merge (three TwoSums and 6
 * more operations), about as much as a term of the sum. */
template <int L>
__device__ __forceinline__ void krill_oz_fast_reduce(krill_oz_fast *f)
{
#pragma unroll
    for (int offset = L / 2; offset > 0; offset >>= 1) {
        krill_oz_fast g;
        g.hi = __shfl_down_sync(0xffffffffu, f->hi, offset, L);
        g.mid = __shfl_down_sync(0xffffffffu, f->mid, offset, L);
        g.lo = __shfl_down_sync(0xffffffffu, f->lo, offset, L);
        g.t = __shfl_down_sync(0xffffffffu, f->t, offset, L);
        g.m = __shfl_down_sync(0xffffffffu, (int)f->m, offset, L);
        g.ok = __shfl_down_sync(0xffffffffu, f->ok, offset, L);
        krill_oz_fast_merge(f, &g);
    }
}

/* y_i = krill_oz_axpby(alpha, s, beta, y_i) (beta == 0: y_i not read) */
__device__ __forceinline__ void krill_oz_store_row(double *y, int64_t i, double alpha, double s,
                                                   double beta)
{
    y[i] = beta == 0.0 ? krill_oz_axpby(alpha, s, 0.0, 0.0)
                       : krill_oz_axpby(alpha, s, beta, y[i]);
}

/* ---- rows reached by a walk ---------------------------------------------------------------- */

/* pass 1: a term into the fast path */
struct krill_oz_fast_op {
    krill_oz_fast *f;
    __device__ __forceinline__ void operator()(double a, double x) const
    {
        krill_oz_fast_add(f, a, x);
    }
};

/* pass 2: a term into the row's statistics and, again, into a fast state (for
 * krill_oz_fast_exact) */
struct krill_oz_stats_op {
    krill_oz_row *r;
    krill_oz_fast *f;
    __device__ __forceinline__ void operator()(double a, double x) const
    {
        krill_oz_row_stats(r, a, x);
        krill_oz_fast_add(f, a, x);
    }
};

/* pass 3: a term's digit products into the diagonal sums */
struct krill_oz_add_op {
    const krill_oz_row *r;
    int64_t *acc;
    __device__ __forceinline__ void operator()(double a, double x) const
    {
        krill_oz_row_add(r, a, x, acc);
    }
};

/* The exact path of a walked row (pass 2, which also sums the row's fast state again, then
 * krill_oz_fast_exact, or pass 3). The fast state is recomputed here, not handed over by
 * the caller: a pointer to the caller's would keep it in local memory through the fast
 * loop, and passing its fields would hold 12 more registers there (measured: 48 -> 74 in the
 * range kernel, the SpMV 1.3x slower). Not inlined: rare, and large. */
template <class V>
__device__ __noinline__ double krill_oz_walk_exact(const V v, const typename V::row where,
                                                   const double *__restrict__ x, int64_t *acc)
{
    krill_oz_row r;
    krill_oz_fast f;
    double s;
    krill_oz_row_init(&r);
    krill_oz_fast_init(&f);
    krill_oz_stats_op stats{&r, &f};
    v.visit(where, x, stats);
    if (krill_oz_fast_exact(&f, &r, &s)) return s;    /* lo summed exactly: no pass 3 */
    if (krill_oz_row_begin(&r, acc) > 0) {
        krill_oz_add_op add{&r, acc};
        v.visit(where, x, add);
    }
    return krill_oz_row_end(&r, acc);
}

/* A thread per row, rows cyclic over a grid-stride loop. Every operation whose bits matter
 * is ozaki_row.h's (__dadd_rn / __dmul_rn / __fma_rn, integer steps), so nvcc cannot
 * contract anything. */
template <class V>
__global__ void KRILL_OZ_ROW_BOUNDS
krill_oz_spmv_kernel(V v, int64_t n_rows, double alpha, const double *__restrict__ x,
                     double beta, double *__restrict__ y)
{
    int64_t acc[KRILL_OZ_ROW_MAX_DIAG];
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n_rows; i += stride) {
        const typename V::row where = v.locate(i);
        krill_oz_fast f;
        double s;
        krill_oz_fast_init(&f);
        krill_oz_fast_op fast{&f};
        v.visit(where, x, fast);
        if (!krill_oz_fast_end(&f, &s)) s = krill_oz_walk_exact(v, where, x, acc);
        krill_oz_store_row(y, i, alpha, s, beta);
    }
}

/* ---- rows stored as ranges ----------------------------------------------------------------- */

/* The exact path of each sub-warp's range [begin, end) (an empty range for a sub-warp with
 * nothing to do), by its L lanes: called by all 32 lanes of the warp together. Pass 2: each
 * lane's statistics of its elements (begin + l, + L, ...), merged over the sub-warp by an
 * xor butterfly so that every lane holds the row's; pass 3: each lane's digit products into
 * its own acc[] (the parameters, from the same statistics, are the same in every lane), then
 * acc[] summed down the sub-warp (int64: exact in any order). Returns the row's sum in the
 * sub-warp's first lane (the other lanes' return values mean nothing). After pass 2 the
 * first lane tries krill_oz_fast_exact on the row's merged fast state, which the kernel left
 * in shared memory (`fast`: through a register, a pointer to the kernel's own state would
 * keep it in local memory through the fast loop); the sub-warp skips pass 3 when that
 * decides. A rare path (sums the
 * fast path left undecided), but one that a lane alone would walk at 1/L of the speed with
 * its warp waiting: with the lanes, each takes 1/L of the terms. */
template <int L, class V>
__device__ __noinline__ double krill_oz_range_exact(const V v, int64_t begin, int64_t end,
                                                    const double *__restrict__ x,
                                                    const krill_oz_fast *fast, int64_t *acc)
{
    krill_oz_row r;
    double a, xv, s = 0.0;
    int nd, nd_max, exact = 0;
    const int sublane = (threadIdx.x & 31) % L;
    krill_oz_row_init(&r);
    for (int64_t k = begin + sublane; k < end; k += L)
        if (v.term(k, x, &a, &xv)) krill_oz_row_stats(&r, a, xv);
#pragma unroll
    for (int off = L / 2; off > 0; off >>= 1) {
        krill_oz_row o;
        o.amax = __shfl_xor_sync(0xffffffffu, (unsigned long long)r.amax, off, L);
        o.xmax = __shfl_xor_sync(0xffffffffu, (unsigned long long)r.xmax, off, L);
        o.alsb = __shfl_xor_sync(0xffffffffu, r.alsb, off, L);
        o.xlsb = __shfl_xor_sync(0xffffffffu, r.xlsb, off, L);
        o.flags = __shfl_xor_sync(0xffffffffu, r.flags, off, L);
        o.n = __shfl_xor_sync(0xffffffffu, (int)r.n, off, L);    /* <= KRILL_OZ_ROW_MAX_N */
        krill_oz_row_merge(&r, &o);
    }
    if (sublane == 0 && begin < end) exact = krill_oz_fast_exact(fast, &r, &s);
    exact = __shfl_sync(0xffffffffu, exact, 0, L);
    nd = exact ? 0 : krill_oz_row_begin(&r, acc);
    if (nd > 0)
        for (int64_t k = begin + sublane; k < end; k += L)
            if (v.term(k, x, &a, &xv)) krill_oz_row_add(&r, a, xv, acc);
    nd_max = __reduce_max_sync(0xffffffffu, (unsigned)nd);   /* every sub-warp's shuffles */
    for (int c = 0; c < nd_max; c++) {
        long long t = c < nd ? (long long)acc[c] : 0;
#pragma unroll
        for (int off = L / 2; off > 0; off >>= 1) t += __shfl_down_sync(0xffffffffu, t, off, L);
        if (c < nd) acc[c] = (int64_t)t;
    }
    return exact ? s : krill_oz_row_end(&r, acc);
}

/* L lanes per row (1, 2, 4, ..., 32), 32 / L rows per warp and step, warps cyclic over a
 * grid-stride loop. The loop test depends only on the warp, so every lane reaches every
 * shuffle; when a sub-warp's fast path leaves its row undecided, the whole warp runs the
 * exact path (krill_oz_range_exact) with empty ranges for the sub-warps already done. */
template <int L, class V>
__global__ void KRILL_OZ_ROW_BOUNDS
krill_oz_spmv_range_kernel(V v, int64_t n_rows, double alpha, const double *__restrict__ x,
                           double beta, double *__restrict__ y)
{
    constexpr int rows_per_warp = 32 / L;
    __shared__ krill_oz_fast s_fast[KRILL_CUDA_THREADS / L];   /* undecided rows' states */
    int64_t acc[KRILL_OZ_ROW_MAX_DIAG];
    const int lane = threadIdx.x & 31;
    const int sub = lane / L, sublane = lane % L;
    const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x / 32);
    for (int64_t first = warp * rows_per_warp; first < n_rows; first += warps * rows_per_warp) {
        const int count = n_rows - first < rows_per_warp ? (int)(n_rows - first) : rows_per_warp;
        int64_t begin = 0, end = 0;
        krill_oz_fast f;
        double a, xv, s = 0.0;
        int decided = 1;
        v.locate_rows(first, count, sub, &begin, &end);
        if (sub >= count) begin = end = 0;
        krill_oz_fast_init(&f);
        for (int64_t k = begin + sublane; k < end; k += L)
            if (v.term(k, x, &a, &xv)) krill_oz_fast_add(&f, a, xv);
        krill_oz_fast_reduce<L>(&f);
        if (sublane == 0) decided = krill_oz_fast_end(&f, &s);
        decided = __shfl_sync(0xffffffffu, decided, 0, L);   /* the sub-warp's verdict */
        if (__any_sync(0xffffffffu, !decided)) {
            krill_oz_fast *slot = &s_fast[threadIdx.x / L];
            if (!decided && sublane == 0) *slot = f;
            __syncwarp();
            const double e = krill_oz_range_exact<L>(v, decided ? 0 : begin, decided ? 0 : end,
                                                     x, slot, acc);
            if (!decided) s = e;
        }
        if (sub < count && sublane == 0)
            krill_oz_store_row(y, v.out_row(first + sub), alpha, s, beta);
    }
}

/* ---- launchers ----------------------------------------------------------------------------- */

/* The spmv_repro of a walked format on ctx's stream: krill_oz_spmv_fits's refusal
 * (formats_impl.h), nothing for no rows, else one launch of a thread per row (at most a
 * resident wave of blocks). */
template <class V>
krill_status krill_oz_spmv_launch(krill_ctx *ctx, const char *format, const V &v, int64_t n_rows,
                                  int64_t max_row_nnz, double alpha, const double *x,
                                  double beta, double *y)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(krill_oz_spmv_fits(format, max_row_nnz));
    if (n_rows == 0) goto cleanup;
    krill_cuda_launch(ctx, krill_oz_spmv_kernel<V>, n_rows, krill_cuda_stream(ctx), v, n_rows,
                      alpha, x, beta, y);
    KRILL_TRY(krill_cuda_check_launch("krill_oz_spmv_kernel"));
cleanup:
    return st;
}

template <int L, class V>
krill_status krill_oz_spmv_range_launch_lanes(krill_ctx *ctx, const V &v, int64_t n_rows,
                                              double alpha, const double *x, double beta,
                                              double *y)
{
    krill_cuda_launch(ctx, krill_oz_spmv_range_kernel<L, V>, n_rows * L, krill_cuda_stream(ctx), v,
                      n_rows, alpha, x, beta, y);
    return krill_cuda_check_launch("krill_oz_spmv_range_kernel");
}

/* Lanes a row of the range kernel for n_rows rows of mean length mean_row_nnz: the plain
 * csr kernel's rule (krill_gpu_lanes_per_row: about 3 entries a lane) applied to
 * mean_row_nnz / KRILL_OZ_ROW_LANE_DIVISOR, so about 12 entries a lane. A lane's term costs
 * about 24 FP64 operations and each level of the merge tree about one term's worth plus 6
 * shuffles, so rows run faster with fewer lanes than the plain kernel's. Measured on an H100
 * (bench_spmv --device gpu --repro --formats csr,segscan elasticity3d:160,64,64
 * poisson3d:128; reproducible / plain time, csr): divisor 1 (the plain rule) 1.92 and 1.40,
 * 2: 1.35 and 1.13, 4: 1.12 and 1.13; 4 with __launch_bounds__ asking 6 blocks an SM
 * (KRILL_OZ_ROW_MIN_BLOCKS=6): 1.29 and 1.32. */
#ifndef KRILL_OZ_ROW_LANE_DIVISOR
#define KRILL_OZ_ROW_LANE_DIVISOR 4
#endif
static inline int krill_oz_row_lanes(double mean_row_nnz, int64_t n_rows)
{
    return krill_gpu_lanes_per_row(mean_row_nnz / KRILL_OZ_ROW_LANE_DIVISOR, n_rows, 1);
}

/* The spmv_repro of a range format on ctx's stream with `lanes` per row (a power of two in
 * [1, 32], krill_oz_row_lanes): krill_oz_spmv_fits's refusal, nothing for no rows, else one
 * launch (at most a resident wave of blocks). */
template <class V>
krill_status krill_oz_spmv_range_launch(krill_ctx *ctx, const char *format, const V &v,
                                        int64_t n_rows, int64_t max_row_nnz, int lanes,
                                        double alpha, const double *x, double beta, double *y)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(krill_oz_spmv_fits(format, max_row_nnz));
    if (n_rows == 0) goto cleanup;
    switch (lanes) {
    case 1: st = krill_oz_spmv_range_launch_lanes<1>(ctx, v, n_rows, alpha, x, beta, y); break;
    case 2: st = krill_oz_spmv_range_launch_lanes<2>(ctx, v, n_rows, alpha, x, beta, y); break;
    case 4: st = krill_oz_spmv_range_launch_lanes<4>(ctx, v, n_rows, alpha, x, beta, y); break;
    case 8: st = krill_oz_spmv_range_launch_lanes<8>(ctx, v, n_rows, alpha, x, beta, y); break;
    case 16: st = krill_oz_spmv_range_launch_lanes<16>(ctx, v, n_rows, alpha, x, beta, y); break;
    default: st = krill_oz_spmv_range_launch_lanes<32>(ctx, v, n_rows, alpha, x, beta, y); break;
    }
cleanup:
    return st;
}

#endif
