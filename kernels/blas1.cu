/* kernels/blas1.cu - BLAS-1 on the GPU: fill, scal, axpby, xmy, dot, nrm2 (core/cuda_impl.h).
 *
 * All are queued on the context's stream and return without waiting. Memory traffic per
 * element: fill 1 write; scal 1 read + 1 write; axpby 2 reads + 1 write (1 + 1 when beta = 0:
 * y is not read); xmy 2 + 1; dot 2 reads; nrm2 1 read.
 *
 * Rounding. The elementwise operations round every product and sum exactly as the plain C
 * loops written with -ffp-contract=off (no fused multiply-add: __dmul_rn/__dadd_rn cannot be
 * contracted), so they agree bit for bit with the CPU. The reductions use fused
 * multiply-adds on purpose and a fixed summation tree (kernels_impl.cuh): the same bits on
 * every run on a given GPU, within a few ulps of the exact value relative to sum |x_i y_i|.
 *
 * Vector loads. When all operands have the same 16-byte phase, elements go through 16-byte
 * double2 accesses: a possible unaligned first element (the "head") and odd last element
 * (the "tail") are done singly by thread 0. Otherwise every access is a plain double. */
#include <math.h>

#include "kernels/kernels_impl.cuh"

namespace {

/* Elementwise index split for n > 0 elements whose first element sits at 16-byte phase
 * `head` (0 or 1 doubles off alignment): element 0 alone when head = 1, then pairs
 * [head + 2p, head + 2p + 1] for p < pairs, then element n - 1 alone when n - head is odd. */
struct pair_split {
    int64_t head;
    int64_t pairs;
    bool tail;
    __device__ explicit pair_split(int64_t n, int64_t head_)
        : head(head_), pairs((n - head_) / 2), tail(((n - head_) & 1) != 0) {}
};

/* The phase (0 or 1 doubles past a 16-byte boundary) shared by all pointers, or -1 when
 * they differ (then no vector access is possible). */
int common_phase(const void *a, const void *b = nullptr, const void *c = nullptr)
{
    int pa = ((uintptr_t)a & 15u) != 0;
    if (b && (((uintptr_t)b & 15u) != 0) != pa) return -1;
    if (c && (((uintptr_t)c & 15u) != 0) != pa) return -1;
    return pa;
}

__device__ __forceinline__ int64_t global_thread()
{
    return (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_threads() { return (int64_t)gridDim.x * blockDim.x; }

/* ---- elementwise kernels: VEC = double2 accesses (head given), else plain doubles ----- */

/* x = value. A single operand is always vectorizable (its head absorbs the phase). */
__global__ void fill_kernel(int64_t n, int64_t head, double value, double *__restrict__ x)
{
    const int64_t t0 = global_thread(), stride = grid_threads();
    const pair_split s(n, head);
    double2 *x2 = reinterpret_cast<double2 *>(x + s.head);
    for (int64_t p = t0; p < s.pairs; p += stride) x2[p] = make_double2(value, value);
    if (t0 == 0) {
        if (s.head) x[0] = value;
        if (s.tail) x[n - 1] = value;
    }
}

/* x = alpha * x */
__global__ void scal_kernel(int64_t n, int64_t head, double alpha, double *__restrict__ x)
{
    const int64_t t0 = global_thread(), stride = grid_threads();
    const pair_split s(n, head);
    double2 *x2 = reinterpret_cast<double2 *>(x + s.head);
    for (int64_t p = t0; p < s.pairs; p += stride) {
        double2 v = x2[p];
        x2[p] = make_double2(__dmul_rn(alpha, v.x), __dmul_rn(alpha, v.y));
    }
    if (t0 == 0) {
        if (s.head) x[0] = __dmul_rn(alpha, x[0]);
        if (s.tail) x[n - 1] = __dmul_rn(alpha, x[n - 1]);
    }
}

/* y = alpha*x + beta*y, or y = alpha*x when BETA0 (y is then never read). */
template <bool BETA0>
__device__ __forceinline__ double axpby_one(double alpha, double x, double beta, double y)
{
    return BETA0 ? __dmul_rn(alpha, x) : __dadd_rn(__dmul_rn(alpha, x), __dmul_rn(beta, y));
}

template <bool VEC, bool BETA0>
__global__ void axpby_kernel(int64_t n, int64_t head, double alpha, const double *__restrict__ x,
                             double beta, double *__restrict__ y)
{
    const int64_t t0 = global_thread(), stride = grid_threads();
    if (VEC) {
        const pair_split s(n, head);
        const double2 *x2 = reinterpret_cast<const double2 *>(x + s.head);
        double2 *y2 = reinterpret_cast<double2 *>(y + s.head);
        for (int64_t p = t0; p < s.pairs; p += stride) {
            double2 a = x2[p], b = BETA0 ? make_double2(0.0, 0.0) : y2[p];
            y2[p] = make_double2(axpby_one<BETA0>(alpha, a.x, beta, b.x),
                                 axpby_one<BETA0>(alpha, a.y, beta, b.y));
        }
        if (t0 == 0) {
            if (s.head) y[0] = axpby_one<BETA0>(alpha, x[0], beta, BETA0 ? 0.0 : y[0]);
            if (s.tail)
                y[n - 1] = axpby_one<BETA0>(alpha, x[n - 1], beta, BETA0 ? 0.0 : y[n - 1]);
        }
    } else {
        for (int64_t i = t0; i < n; i += stride)
            y[i] = axpby_one<BETA0>(alpha, x[i], beta, BETA0 ? 0.0 : y[i]);
    }
}

/* z = x .* y */
template <bool VEC>
__global__ void xmy_kernel(int64_t n, int64_t head, const double *__restrict__ x,
                           const double *__restrict__ y, double *__restrict__ z)
{
    const int64_t t0 = global_thread(), stride = grid_threads();
    if (VEC) {
        const pair_split s(n, head);
        const double2 *x2 = reinterpret_cast<const double2 *>(x + s.head);
        const double2 *y2 = reinterpret_cast<const double2 *>(y + s.head);
        double2 *z2 = reinterpret_cast<double2 *>(z + s.head);
        for (int64_t p = t0; p < s.pairs; p += stride) {
            double2 a = x2[p], b = y2[p];
            z2[p] = make_double2(__dmul_rn(a.x, b.x), __dmul_rn(a.y, b.y));
        }
        if (t0 == 0) {
            if (s.head) z[0] = __dmul_rn(x[0], y[0]);
            if (s.tail) z[n - 1] = __dmul_rn(x[n - 1], y[n - 1]);
        }
    } else {
        for (int64_t i = t0; i < n; i += stride) z[i] = __dmul_rn(x[i], y[i]);
    }
}

/* ---- reductions ----------------------------------------------------------------------- */

/* *result = sum_i x_i y_i. Each thread accumulates its elements in index order with fused
 * multiply-adds, then krill_grid_sum adds the threads' sums in a fixed tree. */
template <bool VEC>
__global__ void dot_kernel(int64_t n, int64_t head, const double *__restrict__ x,
                           const double *__restrict__ y, double *work, double *result)
{
    const int64_t t0 = global_thread(), stride = grid_threads();
    double acc[1] = {0.0};
    if (VEC) {
        const pair_split s(n, head);
        const double2 *x2 = reinterpret_cast<const double2 *>(x + s.head);
        const double2 *y2 = reinterpret_cast<const double2 *>(y + s.head);
        if (t0 == 0 && s.head) acc[0] = __fma_rn(x[0], y[0], acc[0]);
        for (int64_t p = t0; p < s.pairs; p += stride) {
            double2 a = x2[p], b = y2[p];
            acc[0] = __fma_rn(a.x, b.x, acc[0]);
            acc[0] = __fma_rn(a.y, b.y, acc[0]);
        }
        if (t0 == 0 && s.tail) acc[0] = __fma_rn(x[n - 1], y[n - 1], acc[0]);
    } else {
        for (int64_t i = t0; i < n; i += stride) acc[0] = __fma_rn(x[i], y[i], acc[0]);
    }
    krill_grid_sum<1>(acc, work, krill_store_sum{result});
}

/* nrm2 without overflow or harmful underflow, in one pass (Blue's three accumulators, with
 * the thresholds and power-of-two scale factors of LAPACK 3.10's dnrm2 for IEEE double):
 * entries with |x| > 2^486 add (|x| 2^-538)^2 to `big`, entries with |x| < 2^-511 add
 * (|x| 2^537)^2 to `small`, all others add x^2 to `mid`. Scaling by powers of two is exact,
 * so each accumulator is a plain sum of squares that can neither overflow nor lose its small
 * terms for any n < 2^52; the finish combines them once. NaN lands in `mid` (comparisons with
 * NaN are false) and gives NaN; Inf lands in `big` and gives Inf. */
constexpr double nrm2_tsml = 0x1p-511;   /* below: scaled up into `small` */
constexpr double nrm2_tbig = 0x1p486;    /* above: scaled down into `big` */
constexpr double nrm2_ssml = 0x1p537;
constexpr double nrm2_sbig = 0x1p-538;

__device__ __forceinline__ void nrm2_add(double v, double (&acc)[3])
{
    double a = fabs(v);
    if (a > nrm2_tbig) {
        double s = a * nrm2_sbig;
        acc[2] = __fma_rn(s, s, acc[2]);
    } else if (a < nrm2_tsml) {
        double s = a * nrm2_ssml;
        acc[0] = __fma_rn(s, s, acc[0]);
    } else {
        acc[1] = __fma_rn(a, a, acc[1]);
    }
}

/* finish(): combine small = acc[0], mid = acc[1], big = acc[2] into sqrt(sum x_i^2). */
struct nrm2_finish {
    double *result;
    __device__ void operator()(const double (&acc)[3]) const
    {
        double small = acc[0], mid = acc[1], big = acc[2], norm;
        if (isnan(mid)) {
            norm = mid;
        } else if (big > 0.0) {
            /* mid's terms are below 2^972 each: scaled by 2^-1076 they are still normal
             * numbers comparable to big's (each above 2^-104) */
            norm = sqrt(big + (mid * nrm2_sbig) * nrm2_sbig) / nrm2_sbig;
        } else if (small > 0.0) {
            if (mid > 0.0) {
                /* sqrt(mid + small / ssml^2), without forming small / ssml^2 */
                double ymid = sqrt(mid), ysml = sqrt(small) / nrm2_ssml;
                double hi = fmax(ymid, ysml), lo = fmin(ymid, ysml), q = lo / hi;
                norm = hi * sqrt(1.0 + q * q);
            } else {
                norm = sqrt(small) / nrm2_ssml;
            }
        } else {
            norm = sqrt(mid);
        }
        *result = norm;
    }
};

template <bool VEC>
__global__ void nrm2_kernel(int64_t n, int64_t head, const double *__restrict__ x, double *work,
                            double *result)
{
    const int64_t t0 = global_thread(), stride = grid_threads();
    double acc[3] = {0.0, 0.0, 0.0};
    if (VEC) {
        const pair_split s(n, head);
        const double2 *x2 = reinterpret_cast<const double2 *>(x + s.head);
        if (t0 == 0 && s.head) nrm2_add(x[0], acc);
        for (int64_t p = t0; p < s.pairs; p += stride) {
            double2 a = x2[p];
            nrm2_add(a.x, acc);
            nrm2_add(a.y, acc);
        }
        if (t0 == 0 && s.tail) nrm2_add(x[n - 1], acc);
    } else {
        for (int64_t i = t0; i < n; i += stride) nrm2_add(x[i], acc);
    }
    krill_grid_sum<3>(acc, work, nrm2_finish{result});
}

krill_status check_n(int64_t n, const char *op)
{
    if (n < 0) return krill_error(KRILL_ERR_ARG, "%s: n = %lld < 0", op, (long long)n);
    return KRILL_OK;
}

/* Threads needed: one per pair when vectorized, one per element otherwise. */
int64_t items(int64_t n, int phase) { return phase >= 0 ? (n + 1) / 2 : n; }

} /* namespace */

extern "C" krill_status krill_cuda_fill(krill_ctx *ctx, int64_t n, double value, double *x)
{
    krill_status st = check_n(n, "krill_cuda_fill");
    if (st != KRILL_OK || n == 0) return st;
    const int phase = common_phase(x);
    krill_cuda_launch(ctx, fill_kernel, items(n, phase), krill_cuda_stream(ctx), n, phase, value,
                      x);
    return krill_cuda_check_launch("fill_kernel");
}

extern "C" krill_status krill_cuda_scal(krill_ctx *ctx, int64_t n, double alpha, double *x)
{
    krill_status st = check_n(n, "krill_cuda_scal");
    if (st != KRILL_OK || n == 0 || alpha == 1.0) return st;
    const int phase = common_phase(x);
    krill_cuda_launch(ctx, scal_kernel, items(n, phase), krill_cuda_stream(ctx), n, phase, alpha,
                      x);
    return krill_cuda_check_launch("scal_kernel");
}

/* y = alpha*x + beta*y. alpha == 0 never reads x and beta == 0 never reads y (NaN in the
 * ignored vector does not propagate); with both 0 this is a fill with 0, with alpha == 0 a
 * scal by beta. */
extern "C" krill_status krill_cuda_axpby(krill_ctx *ctx, int64_t n, double alpha, const double *x,
                                         double beta, double *y)
{
    krill_status st = check_n(n, "krill_cuda_axpby");
    if (st != KRILL_OK || n == 0) return st;
    if (alpha == 0.0) {
        if (beta == 0.0) return krill_cuda_fill(ctx, n, 0.0, y);
        return krill_cuda_scal(ctx, n, beta, y);
    }
    const int phase = common_phase(x, y);
    const int64_t grid_items = items(n, phase);
    cudaStream_t stream = krill_cuda_stream(ctx);
    if (beta == 0.0) {
        if (phase >= 0)
            krill_cuda_launch(ctx, axpby_kernel<true, true>, grid_items, stream, n, phase, alpha, x,
                              beta, y);
        else
            krill_cuda_launch(ctx, axpby_kernel<false, true>, grid_items, stream, n, 0, alpha, x,
                              beta, y);
    } else {
        if (phase >= 0)
            krill_cuda_launch(ctx, axpby_kernel<true, false>, grid_items, stream, n, phase, alpha,
                              x, beta, y);
        else
            krill_cuda_launch(ctx, axpby_kernel<false, false>, grid_items, stream, n, 0, alpha, x,
                              beta, y);
    }
    return krill_cuda_check_launch("axpby_kernel");
}

extern "C" krill_status krill_cuda_xmy(krill_ctx *ctx, int64_t n, const double *x, const double *y,
                                       double *z)
{
    krill_status st = check_n(n, "krill_cuda_xmy");
    if (st != KRILL_OK || n == 0) return st;
    const int phase = common_phase(x, y, z);
    const int64_t grid_items = items(n, phase);
    if (phase >= 0)
        krill_cuda_launch(ctx, xmy_kernel<true>, grid_items, krill_cuda_stream(ctx), n, phase, x, y,
                          z);
    else
        krill_cuda_launch(ctx, xmy_kernel<false>, grid_items, krill_cuda_stream(ctx), n, 0, x, y,
                          z);
    return krill_cuda_check_launch("xmy_kernel");
}

/* *result = x'y (result in device memory). n == 0 gives 0. */
extern "C" krill_status krill_cuda_dot(krill_ctx *ctx, int64_t n, const double *x, const double *y,
                                       double *result)
{
    krill_status st = check_n(n, "krill_cuda_dot");
    if (st != KRILL_OK) return st;
    const int phase = n > 0 ? common_phase(x, y) : -1;
    const int64_t grid_items = items(n, phase);
    if (phase >= 0)
        krill_cuda_launch(ctx, dot_kernel<true>, grid_items, krill_cuda_stream(ctx), n, phase, x, y,
                          ctx->cuda->work, result);
    else
        krill_cuda_launch(ctx, dot_kernel<false>, grid_items, krill_cuda_stream(ctx), n, 0, x, y,
                          ctx->cuda->work, result);
    return krill_cuda_check_launch("dot_kernel");
}

/* *result = ||x||_2 (result in device memory), overflow-safe (see nrm2_add). n == 0 gives 0. */
extern "C" krill_status krill_cuda_nrm2(krill_ctx *ctx, int64_t n, const double *x, double *result)
{
    krill_status st = check_n(n, "krill_cuda_nrm2");
    if (st != KRILL_OK) return st;
    const int phase = n > 0 ? common_phase(x) : -1;
    const int64_t grid_items = items(n, phase);
    if (phase >= 0)
        krill_cuda_launch(ctx, nrm2_kernel<true>, grid_items, krill_cuda_stream(ctx), n, phase, x,
                          ctx->cuda->work, result);
    else
        krill_cuda_launch(ctx, nrm2_kernel<false>, grid_items, krill_cuda_stream(ctx), n, 0, x,
                          ctx->cuda->work, result);
    return krill_cuda_check_launch("nrm2_kernel");
}
