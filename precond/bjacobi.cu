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
 * Reproducible mode (bjacobi_apply_repro_kernel): the same threads and reads, each z_g the
 * correctly rounded sum of its B products by precond_repro.h, the function the CPU loop
 * calls; the thread's scratch is a local array of KRILL_OZ_ROW_MAX_DIAG int64 (B <= 16 terms
 * need fewer than that). */
#include <stdint.h>

#include "precond/precond_impl.h"
#include "precond/precond_repro.h"
#include "kernels/kernels_impl.cuh"

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

__global__ void bjacobi_apply_repro_kernel(int64_t n, int b, const double *__restrict__ binv,
                                           const double *__restrict__ r,
                                           double *__restrict__ z)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    int64_t acc[KRILL_OZ_ROW_MAX_DIAG];
    for (int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; g < n; g += stride)
        z[g] = krill_pc_repro_dense_row(b, binv + g * b, r + (g - (int32_t)g % b), acc);
}

} /* namespace */

extern "C" krill_status krill_bjacobi_cuda_apply(krill_ctx *ctx, int64_t n, int b,
                                                 const double *binv, const double *r,
                                                 double *z)
{
    if (n == 0) return KRILL_OK;
    bjacobi_apply_kernel<<<krill_cuda_blocks(ctx, n), KRILL_CUDA_THREADS, 0,
                           krill_cuda_stream(ctx)>>>(n, b, binv, r, z);
    return krill_cuda_check_launch("bjacobi_apply_kernel");
}

extern "C" krill_status krill_bjacobi_cuda_apply_repro(krill_ctx *ctx, int64_t n, int b,
                                                       const double *binv, const double *r,
                                                       double *z)
{
    if (n == 0) return KRILL_OK;
    bjacobi_apply_repro_kernel<<<krill_cuda_blocks(ctx, n), KRILL_CUDA_THREADS, 0,
                                 krill_cuda_stream(ctx)>>>(n, b, binv, r, z);
    return krill_cuda_check_launch("bjacobi_apply_repro_kernel");
}
