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
//                 sum_j c[k+1+j] v_ij + c[2k+1] u_i (the new u_i). The coefficients
//                 travel as kernel parameters (k <= 32: no copy before the launch).
//                 Traffic: k + 2 reads, 2 writes.
//
// Both kernels are instantiated for a column bound C of 8, 16 or 32 (the smallest that
// holds k), the loops over columns unrolled to C with a test against k, so that a thread
// issues all of its row's loads of V before it needs the first one: the k + 2 loads in
// flight per thread are what hide the memory latency. The sweep's bound of 32 holds
// 2C + 3 = 67 accumulators in registers, which leaves room for one block of 256 threads
// per multiprocessor (32 loads of 8 bytes each in flight: 64 KiB per SM, above the ~30 KiB
// that the bandwidth-latency product of an H100 or H200 asks per SM); smaller bounds run
// 2 or 3 blocks per SM (3 x 256 threads leave 85 registers each for 19 accumulators and 8
// loads), so that short sweeps still keep enough bytes in flight (at 16 columns, 128
// registers: sm_90 spills 12 bytes, outside the loop). The update has no accumulators and
// no launch bounds; it runs on one wave of krill_cuda_blocks (at 32 columns, 90 registers:
// two resident blocks per SM).
//
// Reproducible mode: the sums come from ozaki/ (solver/fused.c never calls dcgs2_dots then);
// dcgs2_update runs as dcgs2_update_kernel<C, true>, every product and sum rounded on its own
// (KRILL_OZ_MUL / KRILL_OZ_ADD: __dmul_rn / __dadd_rn, never contracted) in the order of
// the CPU loop, so the bits equal the CPU's. The plain instances let nvcc contract.
//
// dcgs2_dots sums as cgs_pass_kernel does (kernels/krylov.cu): rows in order per thread, a
// fixed warp tree, block partials in krill_cuda_cgs_partials(ctx) doubles, the last block
// adding them in block order over the grid of krill_cuda_sweep_blocks: the same GPU gives
// the same bits.
#include <string.h>

#include "kernels/kernels_impl.cuh"
#include "ozaki/ozaki_math.h"
#include "solver/solver_impl.h"

namespace {

// Blocks per multiprocessor for column bound C (see the file comment).
__host__ __device__ constexpr int blocks_per_sm(int c) { return c <= 8 ? 3 : c <= 16 ? 2 : 1; }

// Accumulators for bound C: [0, C) Q'u, [C, 2C) Q'w, 2C u'u, 2C + 1 u'w, 2C + 2 w'w.
__host__ __device__ constexpr int n_acc(int c) { return 2 * c + 3; }

static_assert(KRILL_DCGS2_MAX_COLS == 32, "the instances below stop at 32 columns");
static_assert(n_acc(8) * blocks_per_sm(8) <= KRILL_SWEEP_PARTIALS_PER_SM &&
                  n_acc(16) * blocks_per_sm(16) <= KRILL_SWEEP_PARTIALS_PER_SM &&
                  n_acc(32) * blocks_per_sm(32) <= KRILL_SWEEP_PARTIALS_PER_SM,
              "DCGS2's partials must fit the sweeps' buffer (krill_cuda_cgs_partials)");

template <int C>
__global__ void __launch_bounds__(KRILL_CUDA_THREADS, blocks_per_sm(C))
dcgs2_dots_kernel(int64_t n, int k, const double *__restrict__ v, int64_t ldv,
                  double *__restrict__ partial, double *work, double *__restrict__ out)
{
    constexpr int NACC = n_acc(C);
    const double *u = v + (int64_t)k * ldv, *w = u + ldv;

    double acc[NACC];
#pragma unroll
    for (int a = 0; a < NACC; a++) acc[a] = 0.0;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const double ui = __ldg(&u[i]), wi = __ldg(&w[i]);
        double q[C];
#pragma unroll
        for (int c = 0; c < C; c++) q[c] = c < k ? __ldg(&v[i + c * ldv]) : 0.0;
#pragma unroll
        for (int c = 0; c < C; c++) {
            if (c < k) {
                acc[c] += q[c] * ui;
                acc[C + c] += q[c] * wi;
            }
        }
        acc[2 * C] += ui * ui;
        acc[2 * C + 1] += ui * wi;
        acc[2 * C + 2] += wi * wi;
    }

    // the sums, laid out as [Q u w]^T [u w] (u'w twice)
    const auto live = [k](int a) { return a >= 2 * C || (a < C ? a < k : a - C < k); };
    const auto store = [k, out](int a, double s) {
        if (a < C) {
            out[a] = s;
        } else if (a < 2 * C) {
            out[k + 2 + (a - C)] = s;
        } else if (a == 2 * C) {
            out[k] = s;
        } else if (a == 2 * C + 1) {
            out[k + 1] = s;
            out[2 * k + 2] = s;
        } else {
            out[2 * k + 3] = s;
        }
    };
    krill_grid_sum_wide<NACC>(acc, partial, work, live, store);
}

// The update's coefficients passed by value (kernel parameters: no copy to the device
// before the launch), laid out by column so that the unrolled loop indexes them with
// constants. The solver's layout indexed by k (c[k + 1 + j]) ran at 0.69x the copy rate at
// k = 15 against 1.03x for this one (H200, bench_ortho): a parameter at a computed offset
// is a load of its own in the loop, where a constant offset is an operand.
struct dcgs2_coefs {
    double su[KRILL_DCGS2_MAX_COLS], sw[KRILL_DCGS2_MAX_COLS];   // c[j], c[k + 1 + j]
    double cu, cq, cw;                                           // c[k], c[2k + 1], c[2k + 2]
};

// One thread per row (grid-stride). Q's columns are only read, u and w only by their own
// row's thread. C > 0: the coefficients in cf (c unused), the loop over columns unrolled to
// C; C == 0: any k, the coefficients in device memory at c (restarts beyond 32).
template <int C, bool REPRO>
__global__ void dcgs2_update_kernel(int64_t n, int k, double *v, int64_t ldv,
                                    const dcgs2_coefs cf, const double *__restrict__ c)
{
    double *u = v + (int64_t)k * ldv, *w = u + ldv;
    const double cu = C > 0 ? cf.cu : __ldg(&c[k]);
    const double cq = C > 0 ? cf.cq : __ldg(&c[2 * k + 1]);
    const double cw = C > 0 ? cf.cw : __ldg(&c[2 * k + 2]);
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
        if (C > 0) {
            double q[C > 0 ? C : 1];
#pragma unroll
            for (int j = 0; j < C; j++) q[j] = j < k ? __ldg(&v[i + (int64_t)j * ldv]) : 0.0;
#pragma unroll
            for (int j = 0; j < C; j++) {
                if (j < k) {
                    const double su = cf.su[j], sw = cf.sw[j];
                    if (REPRO) {
                        ui = KRILL_OZ_ADD(ui, KRILL_OZ_MUL(su, q[j]));
                        wi = KRILL_OZ_ADD(wi, KRILL_OZ_MUL(sw, q[j]));
                    } else {
                        ui += su * q[j];
                        wi += sw * q[j];
                    }
                }
            }
        } else {
#pragma unroll 4
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
        }
        wi = REPRO ? KRILL_OZ_ADD(wi, KRILL_OZ_MUL(cq, ui)) : wi + cq * ui;
        u[i] = ui;
        w[i] = wi;
    }
}

template <int C>
void launch_dots(krill_ctx *ctx, double *partial, int64_t n, int k, const double *v,
                 int64_t ldv, double *out)
{
    const int blocks = krill_cuda_sweep_blocks(ctx, n, blocks_per_sm(C));
    dcgs2_dots_kernel<C><<<blocks, KRILL_CUDA_THREADS, 0, krill_cuda_stream(ctx)>>>(
        n, k, v, ldv, partial, ctx->cuda->work, out);
}

template <int C, bool REPRO>
void launch_update(krill_ctx *ctx, int64_t n, int k, double *v, int64_t ldv,
                   const dcgs2_coefs &cf, const double *c)
{
    krill_cuda_launch(ctx, dcgs2_update_kernel<C, REPRO>, n, krill_cuda_stream(ctx), n, k, v, ldv,
                      cf, c);
}

template <bool REPRO>
void launch_update_any(krill_ctx *ctx, int64_t n, int k, double *v, int64_t ldv,
                       const dcgs2_coefs &cf, const double *c)
{
    if (k <= 8)
        launch_update<8, REPRO>(ctx, n, k, v, ldv, cf, c);
    else if (k <= 16)
        launch_update<16, REPRO>(ctx, n, k, v, ldv, cf, c);
    else if (k <= 32)
        launch_update<32, REPRO>(ctx, n, k, v, ldv, cf, c);
    else
        launch_update<0, REPRO>(ctx, n, k, v, ldv, cf, c);
}

}  // namespace

extern "C" krill_status krill_cuda_dcgs2_dots(krill_ctx *ctx, double *partial, int64_t n, int k,
                                             const double *v, int64_t ldv, double *out)
{
    if (k < 0 || k > KRILL_DCGS2_MAX_COLS)
        return krill_error(KRILL_ERR_INTERNAL, "dcgs2_dots: %d columns (0 to %d allowed)", k,
                           KRILL_DCGS2_MAX_COLS);
    if (k <= 8)
        launch_dots<8>(ctx, partial, n, k, v, ldv, out);
    else if (k <= 16)
        launch_dots<16>(ctx, partial, n, k, v, ldv, out);
    else
        launch_dots<32>(ctx, partial, n, k, v, ldv, out);
    return krill_cuda_check_launch("dcgs2_dots_kernel");
}

extern "C" krill_status krill_cuda_dcgs2_update(krill_ctx *ctx, int64_t n, int k, double *v,
                                               int64_t ldv, const double *c, double *c_dev)
{
    krill_status st = KRILL_OK;
    dcgs2_coefs cf;
    if (n == 0) goto cleanup;
    memset(&cf, 0, sizeof cf);
    if (k <= KRILL_DCGS2_MAX_COLS) {
        memcpy(cf.su, c, (size_t)k * sizeof(double));
        memcpy(cf.sw, c + k + 1, (size_t)k * sizeof(double));
        cf.cu = c[k];
        cf.cq = c[2 * k + 1];
        cf.cw = c[2 * k + 2];
        c_dev = NULL;
    } else {
        KRILL_TRY(krill_scalars_write(ctx, c_dev, c, 2 * k + 3));
    }
    if (ctx->repro != KRILL_REPRO_OFF)
        launch_update_any<true>(ctx, n, k, v, ldv, cf, c_dev);
    else
        launch_update_any<false>(ctx, n, k, v, ldv, cf, c_dev);
    st = krill_cuda_check_launch("dcgs2_update_kernel");
cleanup:
    return st;
}
