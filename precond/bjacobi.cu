/* precond/bjacobi.cu - point-block Jacobi's apply on the GPU (precond/bjacobi.c builds the
 * inverses on the host and says what they are).
 *
 * z_g = sum_j Binv_k[i][j] r_kB+j for g = kB + i: one thread per entry g of z, grid-stride.
 * Row i of block k starts at binv[(kB + i) * B] = binv[g * B], so the 32 threads of a warp
 * read one contiguous span of 32 * B doubles (over their B steps: each 32-byte sector is
 * fetched once and served from L1 to the neighbouring threads), and the B entries of r that
 * a block's B threads share are one contiguous run. Memory traffic: (B + 2) n doubles, the
 * least an apply can move (Binv, r, z once each). The products are added in order
 * j = 0..B-1 with explicitly rounded multiply and add (no FMA), as the CPU loop does, so
 * both devices give the same bits.
 *
 * Reproducible mode (bjacobi_apply_repro_kernel<L>): each z_g the correctly rounded sum of
 * its B products by precond_repro.h, the functions the CPU loop calls. A sub-warp of L lanes
 * takes a row (krill_gpu_lanes_per_row of B: 1 lane below B = 5, 2 below 9, 4 up to 16),
 * lane l the products l, l + L, ...: the fast path's states merged by shuffles
 * (krill_oz_fast_reduce), then the first lane decides, or runs the exact path alone over
 * the row (rare), with a local scratch of KRILL_OZ_ROW_MAX_DIAG int64 (B <= 16 terms need
 * fewer than that). */
#include <stdint.h>

#include "precond/precond_impl.h"
#include "precond/precond_repro.h"
#include "kernels/kernels_impl.cuh"
#include "ozaki/ozaki_row.cuh"

namespace {

__global__ void bjacobi_apply_kernel(int64_t n, int b, const double *__restrict__ binv,
                                     const double *__restrict__ r, double *__restrict__ z)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; g < n; g += stride) {
        const double *row = binv + g * b;
        /* r_kB, the block's first entry; n <= INT32_MAX (CSR rows), so 32-bit modulo */
        const double *rk = r + (g - (int32_t)g % b);
        double s = 0.0;
        for (int j = 0; j < b; j++) s = __dadd_rn(s, __dmul_rn(__ldg(&row[j]), __ldg(&rk[j])));
        z[g] = s;
    }
}

/* z_g for g < n, 32 / L rows per warp and step, warps cyclic over a grid-stride loop whose
 * test depends only on the warp (every lane reaches every shuffle). */
template <int L>
__global__ void __launch_bounds__(KRILL_CUDA_THREADS)
bjacobi_apply_repro_kernel(int64_t n, int b, const double *__restrict__ binv,
                           const double *__restrict__ r, double *__restrict__ z)
{
    constexpr int rows_per_warp = 32 / L;
    int64_t acc[KRILL_OZ_ROW_MAX_DIAG];
    const int lane = threadIdx.x & 31;
    const int sub = lane / L, sublane = lane % L;
    const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x / 32);
    for (int64_t first = warp * rows_per_warp; first < n; first += warps * rows_per_warp) {
        const int64_t g = first + sub;
        const bool mine = g < n;
        /* row g of the inverses and r_kB, the block's first entry (32-bit modulo: n <=
         * INT32_MAX, CSR rows) */
        const double *row = binv + g * b, *rk = r + (g - (int32_t)g % b);
        krill_oz_fast f;
        double s;
        krill_oz_fast_init(&f);
        if (mine) krill_pc_repro_dense_fast(&f, b, row, rk, sublane, L);
        krill_oz_fast_reduce<L>(&f);
        if (mine && sublane == 0) {
            if (!krill_oz_fast_end(&f, &s)) s = krill_pc_repro_dense_exact(b, row, rk, acc);
            z[g] = s;
        }
    }
}

template <int L>
krill_status launch_apply_repro(krill_ctx *ctx, int64_t n, int b, const double *binv,
                                const double *r, double *z)
{
    krill_cuda_launch(ctx, bjacobi_apply_repro_kernel<L>, n * L, krill_cuda_stream(ctx), n, b, binv,
                      r, z);
    return krill_cuda_check_launch("bjacobi_apply_repro_kernel");
}

} /* namespace */

extern "C" krill_status krill_bjacobi_cuda_apply(krill_ctx *ctx, int64_t n, int b,
                                                 const double *binv, const double *r,
                                                 double *z)
{
    if (n == 0) return KRILL_OK;
    krill_cuda_launch(ctx, bjacobi_apply_kernel, n, krill_cuda_stream(ctx), n, b, binv, r, z);
    return krill_cuda_check_launch("bjacobi_apply_kernel");
}

extern "C" krill_status krill_bjacobi_cuda_apply_repro(krill_ctx *ctx, int64_t n, int b,
                                                       const double *binv, const double *r,
                                                       double *z)
{
    if (n == 0) return KRILL_OK;
    switch (krill_gpu_lanes_per_row((double)b, 0, 1)) {
    case 1: return launch_apply_repro<1>(ctx, n, b, binv, r, z);
    case 2: return launch_apply_repro<2>(ctx, n, b, binv, r, z);
    default: return launch_apply_repro<4>(ctx, n, b, binv, r, z);
    }
}
