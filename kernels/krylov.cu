// kernels/krylov.cu - the solvers' fused GPU kernels and their extern "C" launchers
// (contracts in solver/solver_impl.h; the CPU twins, which are the test oracle, in
// solver/fused.c).
//
//   cg_residual   alpha = rz / pAp (read from device memory); r -= alpha q; r'r and, with
//                 a diagonal preconditioner, r'(dinv .* r) by one grid sum whose last block
//                 runs the CG state update (beta, stop codes).
//                 Traffic: reads r, q (+ dinv), writes r: 3 (4) vector passes.
//                 On GPU ranks (cg_residual_sums) the sums go to the state's rr_next and
//                 rz_next instead; the caller sums them over the ranks and runs the state
//                 update with cg_finish_repro.
//   cg_scalars    one thread: the state update for a general preconditioner.
//   cg_direction  x += alpha p; p = z + beta p (z = dinv .* r fused, or r, or M^{-1} r).
//                 Traffic: reads x, p, r (+ dinv), writes x, p: 5 (6) vector passes.
//   axpy_dot      w -= c v (c read from device memory); u'w or w'w by a grid sum. MGS's
//                 projection of step i fused with the dot of step i + 1: 4 passes (3 for w'w).
//   pipecg_update pipelined CG's recurrences and its three sums in one pass (the CPU twin:
//                 solver/pipecg.c's merged_update, same element order per row):
//                 z = n + beta z, q = m + beta q, s = w + beta s, p = u + beta p, x += alpha p,
//                 r -= alpha s, u -= alpha q, w -= alpha z (Jacobi: m = dinv .* w); r'u, w'u,
//                 r'r by one grid sum into context memory. Traffic: 13 vector passes without
//                 M (u = r, m = w, q = s), 20 with Jacobi, 18 with another M.
//   cgs_pass      one pass of CGS2 over the n x k block V (k <= KRILL_CGS_MAX_COLS): per row,
//                 w_i -= V_i: h_sub (optional), then h_out += V_i:' w_i and ss += w_i^2 with
//                 the new w_i. Row i's update needs only row i, so the projection of one
//                 Gram-Schmidt pass and the dot products of the next share one read of V
//                 (V_i: is loaded once into registers). Traffic: k + 1 reads, + 1 write
//                 with h_sub.
//   gemv_t/gemv_n cuBLAS Dgemv on the contiguous n x k block of Krylov vectors (CGS2
//                 with more than KRILL_CGS_MAX_COLS columns; GMRES's solution update).
//   dcgs2_gemm    cuBLAS Dgemm: DCGS2's 2k + 3 sums beyond KRILL_DCGS2_MAX_COLS columns
//                 (its fused sweep and update pass are in kernels/dcgs2.cu).
//   async read    cudaMemcpyAsync into the context's pinned buffer + an event.
//
// Reproducible mode (ctx->repro; solver/solver_impl.h): no kernel here reduces; the sums come
// from ozaki/. What runs instead:
//   gemv_n_repro        w = alpha V h + beta w per element in fused.c's CPU order (beta
//                       first, then columns j = 0..k-1), for GMRES's w -= V h and x += V y
//                       and BiCGStab's two-column updates. Traffic: k+1 reads, 1 write.
//   cg_residual_repro   r -= alpha q (and z = dinv .* r over q). Traffic: 3 (5) passes.
//   cg_finish_repro     one thread: krill_cg_finish_repro after the Ozaki dots.
//   cg_direction        the same kernel, instantiated without contraction.
// These kernels round every product and sum on its own (KRILL_OZ_MUL / _ADD / _SUB, that is
// __dmul_rn / __dadd_rn / __dsub_rn, which nvcc never fuses), exactly as the host loops do
// under -ffp-contract=off, so their bits equal the CPU's. We do not build this file with
// --fmad=false instead: that would also change the plain kernels (the CGS pass's sums are
// FMAs on purpose) and the plain mode's bits; the explicit operations cost nothing here, as
// every one of these kernels is bound by memory traffic.
//
// Every CG kernel first reads the state's stop code and returns at once when the iteration
// is frozen; all its blocks read the same state, so they all agree. Sums use the fixed
// grid of krill_cuda_blocks and the fixed-order grid sum: the same GPU gives the same bits.
#include <cublas_v2.h>
#include <string.h>

#include "kernels/kernels_impl.cuh"
#include "ozaki/ozaki_math.h"
#include "solver/solver_impl.h"

namespace {

// ---- CG ---------------------------------------------------------------------------------

// finish() of the residual's grid sum: the CG state update, by thread 0 of the last block.
struct CgResidualFinish {
    krill_cg_state *s;
    int k, pc_mode;
    double alpha;
    bool diagonal;
    __device__ void operator()(const double (&sum)[2]) const
    {
        krill_cg_finish_residual(s, k, pc_mode, alpha, sum[0], diagonal ? sum[1] : sum[0]);
    }
};

// finish() of the residual's grid sum on GPU ranks: this rank's r'r and r'(dinv .* r) into
// rr_next and rz_next, to be summed over the ranks before the state step.
struct CgResidualSums {
    krill_cg_state *s;
    __device__ void operator()(const double (&sum)[2]) const
    {
        s->rr_next = sum[0];
        s->rz_next = sum[1];
    }
};

// RANKS: the sums go to CgResidualSums (GPU ranks), else the state update follows at once.
template <bool RANKS>
__global__ void cg_residual_kernel(int64_t n, int k, int pc_mode, krill_cg_state *s,
                                   const double *__restrict__ q, double *__restrict__ r,
                                   const double *__restrict__ dinv, double *work)
{
    if (s->stop != KRILL_CG_RUNNING) return;          // frozen: every block returns
    double alpha = 0.0;
    const int code = krill_cg_step(s, &alpha);
    if (code != KRILL_CG_RUNNING) {                   // every block sees the same p'Ap
        if (blockIdx.x == 0 && threadIdx.x == 0) s->stop = code;
        return;
    }
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    double sum[2] = {0.0, 0.0};
    if (dinv) {
        for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
            const double ri = r[i] - alpha * q[i];
            r[i] = ri;
            sum[0] += ri * ri;
            sum[1] += ri * (dinv[i] * ri);
        }
    } else {
        for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
            const double ri = r[i] - alpha * q[i];
            r[i] = ri;
            sum[0] += ri * ri;
        }
    }
    if (RANKS) krill_grid_sum<2>(sum, work, CgResidualSums{s});
    else krill_grid_sum<2>(sum, work, CgResidualFinish{s, k, pc_mode, alpha, dinv != nullptr});
}

__global__ void cg_scalars_kernel(int k, krill_cg_state *s)
{
    if (s->stop == KRILL_CG_RUNNING && s->applied == k) krill_cg_next_direction(s, s->rz_next);
}

// REPRO: every product and sum rounded on its own, the host loop's bits (see the top).
template <bool REPRO>
__global__ void cg_direction_kernel(int64_t n, int k, const krill_cg_state *s,
                                    const double *__restrict__ src,
                                    const double *__restrict__ dinv, double *__restrict__ x,
                                    double *__restrict__ p)
{
    if (s->applied != k) return;                      // the residual step was not taken
    const double alpha = s->alpha, beta = s->beta;
    const bool running = s->stop == KRILL_CG_RUNNING;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const double pi = p[i];
        if (REPRO) {
            x[i] = KRILL_OZ_ADD(x[i], KRILL_OZ_MUL(alpha, pi));
            if (running)
                p[i] = KRILL_OZ_ADD(dinv ? KRILL_OZ_MUL(dinv[i], src[i]) : src[i],
                                    KRILL_OZ_MUL(beta, pi));
        } else {
            x[i] += alpha * pi;
            if (running) p[i] = (dinv ? dinv[i] * src[i] : src[i]) + beta * pi;
        }
    }
}

// ---- reproducible mode (see the top) --------------------------------------------------------

// The residual kernel's update without its sums: the same state checks, then r -= alpha q and,
// with a diagonal preconditioner, z = dinv .* r into q (q is not read again before the next
// SpMV overwrites it).
__global__ void cg_residual_repro_kernel(int64_t n, krill_cg_state *s, double *__restrict__ q,
                                         double *__restrict__ r,
                                         const double *__restrict__ dinv)
{
    if (s->stop != KRILL_CG_RUNNING) return;          // frozen: every block returns
    double alpha = 0.0;
    const int code = krill_cg_step(s, &alpha);
    if (code != KRILL_CG_RUNNING) {                   // every block sees the same p'Ap
        if (blockIdx.x == 0 && threadIdx.x == 0) s->stop = code;
        return;
    }
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const double ri = KRILL_OZ_SUB(r[i], KRILL_OZ_MUL(alpha, q[i]));
        r[i] = ri;
        if (dinv) q[i] = KRILL_OZ_MUL(dinv[i], ri);
    }
}

__global__ void cg_finish_repro_kernel(int k, int pc_mode, krill_cg_state *s)
{
    krill_cg_finish_repro(s, k, pc_mode);
}

// w = alpha V h + beta w, element by element in fused.c's order: w_i <- 0, w_i or w_i beta,
// then w_i <- w_i + (alpha h_j) v_ij for j = 0, 1, ..., k-1. A thread per element; the
// coefficients are read by every thread (one broadcast load per warp, from L1).
__global__ void gemv_n_repro_kernel(int64_t n, int k, double alpha,
                                    const double *__restrict__ v, int64_t ldv,
                                    const double *__restrict__ h, double beta,
                                    double *__restrict__ w)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double wi = 0.0;
        if (beta == 1.0) wi = w[i];
        else if (beta != 0.0) wi = KRILL_OZ_MUL(w[i], beta);
        for (int j = 0; j < k; j++) {
            const double c = KRILL_OZ_MUL(alpha, __ldg(&h[j]));
            wi = KRILL_OZ_ADD(wi, KRILL_OZ_MUL(c, __ldg(&v[i + (int64_t)j * ldv])));
        }
        w[i] = wi;
    }
}

// ---- pipelined CG ---------------------------------------------------------------------------

struct PipecgSums {
    double *out;
    __device__ void operator()(const double (&sum)[3]) const
    {
        out[0] = sum[0];
        out[1] = sum[1];
        out[2] = sum[2];
    }
};

template <int MODE>
__global__ void pipecg_update_kernel(int64_t len, double alpha, double beta,
                                     krill_pipecg_vectors v, double *sums, double *work)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    double acc[3] = {0.0, 0.0, 0.0};   // r'u, w'u, r'r
    for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < len; j += stride) {
        if (MODE == KRILL_CG_PC_NONE) {                 // u = r, m = w, q = s
            const double zj = v.n[j] + beta * v.z[j], sj = v.w[j] + beta * v.s[j];
            const double pj = v.r[j] + beta * v.p[j];
            const double rj = v.r[j] - alpha * sj, wj = v.w[j] - alpha * zj;
            v.z[j] = zj;
            v.s[j] = sj;
            v.p[j] = pj;
            v.x[j] += alpha * pj;
            v.r[j] = rj;
            v.w[j] = wj;
            acc[0] += rj * rj;
            acc[1] += wj * rj;
        } else {
            const double zj = v.n[j] + beta * v.z[j], qj = v.m[j] + beta * v.q[j];
            const double sj = v.w[j] + beta * v.s[j], pj = v.u[j] + beta * v.p[j];
            const double rj = v.r[j] - alpha * sj, uj = v.u[j] - alpha * qj;
            const double wj = v.w[j] - alpha * zj;
            v.z[j] = zj;
            v.q[j] = qj;
            v.s[j] = sj;
            v.p[j] = pj;
            v.x[j] += alpha * pj;
            v.r[j] = rj;
            v.u[j] = uj;
            v.w[j] = wj;
            if (MODE == KRILL_CG_PC_DIAGONAL) v.m[j] = v.dinv[j] * wj;
            acc[0] += rj * uj;
            acc[1] += wj * uj;
            acc[2] += rj * rj;
        }
    }
    if (MODE == KRILL_CG_PC_NONE) acc[2] = acc[0];
    krill_grid_sum<3>(acc, work, PipecgSums{sums});
}

// ---- MGS --------------------------------------------------------------------------------

__global__ void axpy_dot_kernel(int64_t n, const double *coeff, const double *__restrict__ v,
                                double *__restrict__ w, const double *__restrict__ u,
                                double *result, double *work)
{
    const double c = *coeff;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    double sum[1] = {0.0};
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const double wi = w[i] - c * v[i];
        w[i] = wi;
        sum[0] += (u ? u[i] : wi) * wi;
    }
    krill_grid_sum<1>(sum, work, krill_store_sum{result});
}

krill_status cublas_call(cublasStatus_t status, const char *call)
{
    if (status == CUBLAS_STATUS_SUCCESS) return KRILL_OK;
    return krill_error(KRILL_ERR_DEVICE, "%s failed: %s", call, cublasGetStatusString(status));
}

// The two events of an asynchronous read, one per slot.
struct ReadEvents {
    cudaEvent_t event[2];
    int created;
};

// Slot `slot` of the async read area: the last KRILL_ASYNC_READ_DOUBLES doubles of the
// context's pinned buffer.
unsigned char *read_slot(const krill_ctx *ctx, int slot)
{
    double *area = ctx->cuda->pinned + KRILL_CUDA_PINNED_DOUBLES - KRILL_ASYNC_READ_DOUBLES;
    return reinterpret_cast<unsigned char *>(area) + (size_t)slot * KRILL_ASYNC_READ_BYTES;
}

}  // namespace

// ---- launchers -------------------------------------------------------------------------

extern "C" krill_status krill_cuda_cg_residual(krill_ctx *ctx, int64_t n, int k, int pc_mode,
                                               krill_cg_state *s, const double *q, double *r,
                                               const double *dinv)
{
    const int64_t grid_items = n;
    krill_cuda_launch(ctx, cg_residual_kernel<false>, grid_items, krill_cuda_stream(ctx), n, k,
                      pc_mode, s, q, r, dinv, ctx->cuda->work);
    return krill_cuda_check_launch("cg_residual_kernel");
}

extern "C" krill_status krill_cuda_cg_residual_sums(krill_ctx *ctx, int64_t n, int k,
                                                    int pc_mode, krill_cg_state *s,
                                                    const double *q, double *r,
                                                    const double *dinv)
{
    const int64_t grid_items = n;
    krill_cuda_launch(ctx, cg_residual_kernel<true>, grid_items, krill_cuda_stream(ctx), n, k,
                      pc_mode, s, q, r, dinv, ctx->cuda->work);
    return krill_cuda_check_launch("cg_residual_kernel (ranks)");
}

extern "C" krill_status krill_cuda_cg_scalars(krill_ctx *ctx, int k, krill_cg_state *s)
{
    cg_scalars_kernel<<<1, 1, 0, krill_cuda_stream(ctx)>>>(k, s);
    return krill_cuda_check_launch("cg_scalars_kernel");
}

extern "C" krill_status krill_cuda_cg_direction(krill_ctx *ctx, int64_t n, int k,
                                                const krill_cg_state *s, const double *src,
                                                const double *dinv, double *x, double *p)
{
    const int64_t grid_items = n;
    if (ctx->repro != KRILL_REPRO_OFF)
        krill_cuda_launch(ctx, cg_direction_kernel<true>, grid_items, krill_cuda_stream(ctx), n, k,
                          s, src, dinv, x, p);
    else
        krill_cuda_launch(ctx, cg_direction_kernel<false>, grid_items, krill_cuda_stream(ctx), n, k,
                          s, src, dinv, x, p);
    return krill_cuda_check_launch("cg_direction_kernel");
}

extern "C" krill_status krill_cuda_cg_residual_repro(krill_ctx *ctx, int64_t n,
                                                     krill_cg_state *s, double *q, double *r,
                                                     const double *dinv)
{
    const int64_t grid_items = n;
    krill_cuda_launch(ctx, cg_residual_repro_kernel, grid_items, krill_cuda_stream(ctx), n, s, q, r,
                      dinv);
    return krill_cuda_check_launch("cg_residual_repro_kernel");
}

extern "C" krill_status krill_cuda_cg_finish_repro(krill_ctx *ctx, int k, int pc_mode,
                                                   krill_cg_state *s)
{
    cg_finish_repro_kernel<<<1, 1, 0, krill_cuda_stream(ctx)>>>(k, pc_mode, s);
    return krill_cuda_check_launch("cg_finish_repro_kernel");
}

extern "C" krill_status krill_cuda_gemv_n_repro(krill_ctx *ctx, int64_t n, int k, double alpha,
                                                const double *v, int64_t ldv, const double *h,
                                                double beta, double *w)
{
    if (n == 0) return KRILL_OK;
    krill_cuda_launch(ctx, gemv_n_repro_kernel, n, krill_cuda_stream(ctx), n, k, alpha, v, ldv, h,
                      beta, w);
    return krill_cuda_check_launch("gemv_n_repro_kernel");
}

extern "C" krill_status krill_cuda_axpy_dot(krill_ctx *ctx, int64_t n, const double *coeff,
                                            const double *v, double *w, const double *u,
                                            double *result)
{
    const int64_t grid_items = n;
    krill_cuda_launch(ctx, axpy_dot_kernel, grid_items, krill_cuda_stream(ctx), n, coeff, v, w, u,
                      result, ctx->cuda->work);
    return krill_cuda_check_launch("axpy_dot_kernel");
}

extern "C" krill_status krill_cuda_pipecg_update(krill_ctx *ctx, int64_t n, int pc_mode,
                                                 double alpha, double beta,
                                                 const krill_pipecg_vectors *v, double *sums)
{
    const int64_t grid_items = n;
    cudaStream_t stream = krill_cuda_stream(ctx);
    if (pc_mode == KRILL_CG_PC_NONE)
        krill_cuda_launch(ctx, pipecg_update_kernel<KRILL_CG_PC_NONE>, grid_items, stream, n, alpha,
                          beta, *v, sums, ctx->cuda->work);
    else if (pc_mode == KRILL_CG_PC_DIAGONAL)
        krill_cuda_launch(ctx, pipecg_update_kernel<KRILL_CG_PC_DIAGONAL>, grid_items, stream, n,
                          alpha, beta, *v, sums, ctx->cuda->work);
    else
        krill_cuda_launch(ctx, pipecg_update_kernel<KRILL_CG_PC_GENERAL>, grid_items, stream, n,
                          alpha, beta, *v, sums, ctx->cuda->work);
    return krill_cuda_check_launch("pipecg_update_kernel");
}

// ---- GMRES: fused CGS2 passes -------------------------------------------------------------

namespace {

// Instances for a column bound C of 8, 16 or 32 (the smallest that holds k), as DCGS2's
// sweep (kernels/dcgs2.cu): row i's k values of V are loaded once into registers, before
// the first is needed, and serve both the subtraction and the dot products (the row is
// read once from memory: k + 1 reads, + 1 write with h_sub). Accumulator C holds w'w,
// accumulators c < k hold V[:, c]'w. C = 32 with the sums holds 33 accumulators and 32
// loads: one block of 256 threads per multiprocessor; the subtraction alone, two.
__host__ __device__ constexpr int cgs_blocks_per_sm(int c, bool hout)
{
    return c <= 8 ? 3 : c <= 16 || !hout ? 2 : 1;
}
static_assert(9 * cgs_blocks_per_sm(8, true) <= KRILL_SWEEP_PARTIALS_PER_SM &&
                  17 * cgs_blocks_per_sm(16, true) <= KRILL_SWEEP_PARTIALS_PER_SM &&
                  33 * cgs_blocks_per_sm(32, false) <= KRILL_SWEEP_PARTIALS_PER_SM,
              "the CGS pass's partials must fit the sweeps' buffer");
static_assert(KRILL_CGS_MAX_COLS == 32, "the instances below stop at 32 columns");

// One CGS pass (see the file comment). Sums: each thread accumulates its rows in order,
// each block adds its threads warp by warp in a fixed tree and stores its partials at
// partial[c * gridDim.x + block]; the last block (atomic counter in the context's
// workspace) adds the partials of each accumulator in block order, one warp per
// accumulator. The order depends only on the grid, so the same GPU gives the same bits.
template <int C, bool SUB, bool HOUT>
__global__ void __launch_bounds__(KRILL_CUDA_THREADS, cgs_blocks_per_sm(C, HOUT))
cgs_pass_kernel(int64_t n, int k, const double *__restrict__ v, int64_t ldv,
                const double *__restrict__ h_sub, double *__restrict__ w,
                double *__restrict__ partial, double *work, double *__restrict__ h_out,
                double *__restrict__ ss_out)
{
    constexpr int NACC = C + 1;
    __shared__ double hs[C];
    if (SUB && threadIdx.x < k) hs[threadIdx.x] = h_sub[threadIdx.x];
    __syncthreads();

    double acc[NACC];
#pragma unroll
    for (int c = 0; c < NACC; c++) acc[c] = 0.0;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double wi = w[i], q[C];
#pragma unroll
        for (int c = 0; c < C; c++) q[c] = c < k ? __ldg(&v[i + c * ldv]) : 0.0;
        if (SUB) {
#pragma unroll
            for (int c = 0; c < C; c++)
                if (c < k) wi -= q[c] * hs[c];
            w[i] = wi;
        }
        if (HOUT) {
#pragma unroll
            for (int c = 0; c < C; c++)
                if (c < k) acc[c] += q[c] * wi;
        }
        acc[C] += wi * wi;
    }

    const auto live = [k](int c) { return c == C || (HOUT && c < k); };
    const auto store = [h_out, ss_out](int c, double s) {
        if (c < C) h_out[c] = s;
        else if (ss_out) *ss_out = s;
    };
    krill_grid_sum_wide<NACC>(acc, partial, work, live, store);
}

template <int C>
void launch_cgs_pass(krill_ctx *ctx, double *partial, int64_t n, int k, const double *v,
                     int64_t ldv, const double *h_sub, double *w, double *h_out,
                     double *ss_out)
{
    const int blocks = krill_cuda_sweep_blocks(ctx, n, cgs_blocks_per_sm(C, h_out != NULL));
    cudaStream_t s = krill_cuda_stream(ctx);
    double *work = ctx->cuda->work;
    if (h_sub && h_out)
        cgs_pass_kernel<C, true, true><<<blocks, KRILL_CUDA_THREADS, 0, s>>>(
            n, k, v, ldv, h_sub, w, partial, work, h_out, ss_out);
    else if (h_sub)
        cgs_pass_kernel<C, true, false><<<blocks, KRILL_CUDA_THREADS, 0, s>>>(
            n, k, v, ldv, h_sub, w, partial, work, h_out, ss_out);
    else
        cgs_pass_kernel<C, false, true><<<blocks, KRILL_CUDA_THREADS, 0, s>>>(
            n, k, v, ldv, h_sub, w, partial, work, h_out, ss_out);
}

}  // namespace

extern "C" size_t krill_cuda_cgs_partials(const krill_ctx *ctx)
{
    return (size_t)KRILL_SWEEP_PARTIALS_PER_SM * (size_t)ctx->cuda->sm_count;
}

extern "C" krill_status krill_cuda_cgs_pass(krill_ctx *ctx, double *partial, int64_t n, int k,
                                            const double *v, int64_t ldv, const double *h_sub,
                                            double *w, double *h_out, double *ss_out)
{
    if (k < 1 || k > KRILL_CGS_MAX_COLS || (!h_sub && !h_out))
        return krill_error(KRILL_ERR_INTERNAL, "cgs_pass: %d columns (1 to %d allowed), "
                           "h_sub %s, h_out %s", k, KRILL_CGS_MAX_COLS, h_sub ? "set" : "NULL",
                           h_out ? "set" : "NULL");
    if (k <= 8)
        launch_cgs_pass<8>(ctx, partial, n, k, v, ldv, h_sub, w, h_out, ss_out);
    else if (k <= 16)
        launch_cgs_pass<16>(ctx, partial, n, k, v, ldv, h_sub, w, h_out, ss_out);
    else
        launch_cgs_pass<32>(ctx, partial, n, k, v, ldv, h_sub, w, h_out, ss_out);
    return krill_cuda_check_launch("cgs_pass_kernel");
}

// h = V^T w. cuBLAS returns at once when a dimension is 0 without touching h, so n == 0
// zeroes h itself (the sum over no rows).
extern "C" krill_status krill_cuda_gemv_t(krill_ctx *ctx, int64_t n, int k, const double *v,
                                          int64_t ldv, const double *w, double *h)
{
    const double one = 1.0, zero = 0.0;
    if (k <= 0) return KRILL_OK;
    if (n == 0) return krill_cuda_memset0(ctx, h, (size_t)k * sizeof(double));
    return cublas_call(cublasDgemv((cublasHandle_t)ctx->cuda->cublas, CUBLAS_OP_T, (int)n, k,
                                   &one, v, (int)ldv, w, 1, &zero, h, 1),
                       "cublasDgemv (Krylov basis transposed times a vector)");
}

// DCGS2's sums for k > KRILL_DCGS2_MAX_COLS: out = [Q u w]^T [u w], (k+2) x 2, one DGEMM of
// the contiguous columns V[:, 0..k+1] and V[:, k..k+1] (u'w comes out twice, as the
// contract lays it out). n == 0 zeroes out, as krill_cuda_gemv_t does.
extern "C" krill_status krill_cuda_dcgs2_gemm(krill_ctx *ctx, int64_t n, int k, const double *v,
                                              int64_t ldv, double *out)
{
    const double one = 1.0, zero = 0.0;
    if (n == 0) return krill_cuda_memset0(ctx, out, (size_t)(2 * k + 4) * sizeof(double));
    return cublas_call(cublasDgemm((cublasHandle_t)ctx->cuda->cublas, CUBLAS_OP_T, CUBLAS_OP_N,
                                   k + 2, 2, (int)n, &one, v, (int)ldv, v + (int64_t)k * ldv,
                                   (int)ldv, &zero, out, k + 2),
                       "cublasDgemm (DCGS2: Krylov basis transposed times u and w)");
}

// w = alpha V h + beta w (beta == 0: w is not read, as in BLAS).
extern "C" krill_status krill_cuda_gemv_n(krill_ctx *ctx, int64_t n, int k, double alpha,
                                          const double *v, int64_t ldv, const double *h,
                                          double beta, double *w)
{
    if (n == 0) return KRILL_OK;
    if (k <= 0) {   // cuBLAS would return without scaling w
        return beta == 0.0 ? krill_cuda_memset0(ctx, w, (size_t)n * sizeof(double))
                           : krill_cuda_scal(ctx, n, beta, w);
    }
    return cublas_call(cublasDgemv((cublasHandle_t)ctx->cuda->cublas, CUBLAS_OP_N, (int)n, k,
                                   &alpha, v, (int)ldv, h, 1, &beta, w, 1),
                       "cublasDgemv (Krylov basis times a vector)");
}

extern "C" krill_status krill_cuda_async_read_create(krill_ctx *ctx, void **out)
{
    krill_status st = KRILL_OK;
    ReadEvents *ev = NULL;
    (void)ctx;
    *out = NULL;
    KRILL_CALLOC(ev, 1);
    for (; ev->created < 2; ev->created++)
        KRILL_CUDA_TRY(cudaEventCreateWithFlags(&ev->event[ev->created],
                                                cudaEventDisableTiming));
    *out = ev;
    ev = NULL;
cleanup:
    krill_cuda_async_read_destroy(ev);
    return st;
}

extern "C" krill_status krill_cuda_async_read_start(krill_ctx *ctx, void *events, int slot,
                                                    const void *src, size_t bytes)
{
    krill_status st = KRILL_OK;
    ReadEvents *ev = (ReadEvents *)events;
    KRILL_CUDA_TRY(cudaMemcpyAsync(read_slot(ctx, slot), src, bytes, cudaMemcpyDeviceToHost,
                                   krill_cuda_stream(ctx)));
    KRILL_CUDA_TRY(cudaEventRecord(ev->event[slot], krill_cuda_stream(ctx)));
cleanup:
    return st;
}

extern "C" krill_status krill_cuda_async_read_wait(krill_ctx *ctx, void *events, int slot,
                                                   void *dst, size_t bytes)
{
    krill_status st = KRILL_OK;
    ReadEvents *ev = (ReadEvents *)events;
    KRILL_CUDA_TRY(cudaEventSynchronize(ev->event[slot]));
    memcpy(dst, read_slot(ctx, slot), bytes);
cleanup:
    return st;
}

extern "C" void krill_cuda_async_read_destroy(void *events)
{
    ReadEvents *ev = (ReadEvents *)events;
    if (!ev) return;
    for (int i = 0; i < ev->created; i++) (void)cudaEventDestroy(ev->event[i]);
    krill_free(ev);
}
