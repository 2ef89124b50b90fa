// kernels/dcgs2.cu - the GPU kernels of DCGS2, the delayed classical Gram-Schmidt of GMRES
// (contracts in solver/solver_impl.h, the algorithm in solver/dcgs2.c, the CPU twins, which
// are the test oracle, in solver/fused.c).
//
//   dcgs2_dots    Q = V[:, 0..k-1], u = V[:, k], w = V[:, k+1] (k <= KRILL_DCGS2_MAX_COLS):
//                 per row, Q_i:'u_i and Q_i:'w_i (2k sums), u_i^2, u_i w_i, w_i^2; one grid
//                 sum of the 2k + 3 accumulators, laid out as [Q u w]^T [u w]. Each element
//                 of V is loaded once and meets both u_i and w_i.
//                 Traffic: k + 2 reads. Beyond KRILL_DCGS2_MAX_COLS columns the 2k + 3
//                 accumulators would not stay in registers; krill_cuda_dcgs2_gemm (cuBLAS,
//                 kernels/krylov.cu) takes over.
//   dcgs2_update  per row: u_i <- c[k] u_i + sum_j c[j] v_ij, then w_i <- c[2k+2] w_i +
//                 sum_j c[k+1+j] v_ij + c[2k+1] u_i (the new u_i). Any k: the coefficients
//                 are broadcast loads through the read-only cache.
//                 Traffic: k + 2 reads, 2 writes.
//
// Reproducible mode: the sums come from ozaki/ (solver/fused.c never calls dcgs2_dots then);
// dcgs2_update runs as dcgs2_update_kernel<true>, every product and sum rounded on its own
// (KRILL_OZ_MUL / KRILL_OZ_ADD: __dmul_rn / __dadd_rn, never contracted) in the order of
// the CPU loop, so the bits equal the CPU's. The plain instance lets nvcc contract.
//
// dcgs2_dots sums as cgs_pass_kernel does (kernels/krylov.cu): rows in order per thread, a
// fixed warp tree, block partials in krill_cuda_cgs_partials(ctx) doubles, the last block
// adding them in block order over krill_cuda_cgs_blocks(ctx, n) blocks: the same GPU gives
// the same bits.
#include "kernels/kernels_impl.cuh"
#include "ozaki/ozaki_math.h"
#include "solver/solver_impl.h"

namespace {

constexpr int MAXC = KRILL_DCGS2_MAX_COLS;
// Accumulators: [0, MAXC) Q'u, [MAXC, 2 MAXC) Q'w, 2 MAXC u'u, 2 MAXC + 1 u'w, 2 MAXC + 2 w'w.
constexpr int NACC = 2 * MAXC + 3;
static_assert(NACC <= KRILL_CGS_MAX_COLS + 1,
              "DCGS2's partials must fit the CGS passes' buffer (krill_cuda_cgs_partials)");

// Whether accumulator a carries a sum for k columns.
__device__ __forceinline__ bool active(int a, int k)
{
    return a >= 2 * MAXC || (a < MAXC ? a < k : a - MAXC < k);
}

__global__ void __launch_bounds__(KRILL_CUDA_THREADS, KRILL_CGS_BLOCKS_PER_SM)
dcgs2_dots_kernel(int64_t n, int k, const double *__restrict__ v, int64_t ldv,
                  double *__restrict__ partial, double *work, double *__restrict__ out)
{
    const double *u = v + (int64_t)k * ldv, *w = u + ldv;

    double acc[NACC];
#pragma unroll
    for (int a = 0; a < NACC; a++) acc[a] = 0.0;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const double ui = __ldg(&u[i]), wi = __ldg(&w[i]);
#pragma unroll
        for (int c = 0; c < MAXC; c++) {
            if (c < k) {
                const double vic = __ldg(&v[i + c * ldv]);
                acc[c] += vic * ui;
                acc[MAXC + c] += vic * wi;
            }
        }
        acc[2 * MAXC] += ui * ui;
        acc[2 * MAXC + 1] += ui * wi;
        acc[2 * MAXC + 2] += wi * wi;
    }

    // the sums, laid out as [Q u w]^T [u w] (u'w twice)
    const auto live = [k](int a) { return active(a, k); };
    const auto store = [k, out](int a, double s) {
        if (a < MAXC) {
            out[a] = s;
        } else if (a < 2 * MAXC) {
            out[k + 2 + (a - MAXC)] = s;
        } else if (a == 2 * MAXC) {
            out[k] = s;
        } else if (a == 2 * MAXC + 1) {
            out[k + 1] = s;
            out[2 * k + 2] = s;
        } else {
            out[2 * k + 3] = s;
        }
    };
    krill_grid_sum_wide<NACC>(acc, partial, work, live, store);
}

// One thread per row (grid-stride). Q's columns are only read, u and w only by their own
// row's thread.
template <bool REPRO>
__global__ void dcgs2_update_kernel(int64_t n, int k, double *v, int64_t ldv,
                                    const double *__restrict__ c)
{
    double *u = v + (int64_t)k * ldv, *w = u + ldv;
    const double cu = __ldg(&c[k]), cq = __ldg(&c[2 * k + 1]), cw = __ldg(&c[2 * k + 2]);
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double ui = u[i], wi = w[i];
        if (REPRO) {
            ui = KRILL_OZ_MUL(ui, cu);
            wi = KRILL_OZ_MUL(wi, cw);
        } else {
            ui *= cu;
            wi *= cw;
        }
        for (int j = 0; j < k; j++) {
            const double vij = __ldg(&v[i + (int64_t)j * ldv]);
            const double su = __ldg(&c[j]), sw = __ldg(&c[k + 1 + j]);
            if (REPRO) {
                ui = KRILL_OZ_ADD(ui, KRILL_OZ_MUL(su, vij));
                wi = KRILL_OZ_ADD(wi, KRILL_OZ_MUL(sw, vij));
            } else {
                ui += su * vij;
                wi += sw * vij;
            }
        }
        wi = REPRO ? KRILL_OZ_ADD(wi, KRILL_OZ_MUL(cq, ui)) : wi + cq * ui;
        u[i] = ui;
        w[i] = wi;
    }
}

}  // namespace

extern "C" krill_status krill_cuda_dcgs2_dots(krill_ctx *ctx, double *partial, int64_t n, int k,
                                             const double *v, int64_t ldv, double *out)
{
    if (k < 0 || k > MAXC)
        return krill_error(KRILL_ERR_INTERNAL, "dcgs2_dots: %d columns (0 to %d allowed)", k,
                           MAXC);
    dcgs2_dots_kernel<<<krill_cuda_cgs_blocks(ctx, n), KRILL_CUDA_THREADS, 0,
                        krill_cuda_stream(ctx)>>>(n, k, v, ldv, partial, ctx->cuda->work, out);
    return krill_cuda_check_launch("dcgs2_dots_kernel");
}

extern "C" krill_status krill_cuda_dcgs2_update(krill_ctx *ctx, int64_t n, int k, double *v,
                                               int64_t ldv, const double *c)
{
    if (n == 0) return KRILL_OK;
    const int blocks = krill_cuda_blocks(ctx, n);
    if (ctx->repro != KRILL_REPRO_OFF)
        dcgs2_update_kernel<true><<<blocks, KRILL_CUDA_THREADS, 0, krill_cuda_stream(ctx)>>>(
            n, k, v, ldv, c);
    else
        dcgs2_update_kernel<false><<<blocks, KRILL_CUDA_THREADS, 0, krill_cuda_stream(ctx)>>>(
            n, k, v, ldv, c);
    return krill_cuda_check_launch("dcgs2_update_kernel");
}
