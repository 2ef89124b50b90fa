/* solver/fused_cg.c - CG's fused vector operations (the residual step with its sums, the
 * scalars, the direction update) and the asynchronous reads the GPU solvers poll with:
 * OpenMP loops on the CPU, dispatch to kernels/krylov.cu on the GPU. Contracts and
 * per-call traffic are in solver_impl.h; the CPU loops' rules (thread chunks, partial sums
 * in thread order, the reproducible variants, one allreduce per reduction point on a
 * communicator) are fused.c's. */
#include <omp.h>
#include <stddef.h>
#include <string.h>

#include "ozaki/ozaki_impl.h"
#include "solver/solver_impl.h"

static int repro(const krill_ctx *ctx) { return ctx->repro != KRILL_REPRO_OFF; }

/* ---- CG ------------------------------------------------------------------------------------- */

_Static_assert(offsetof(krill_cg_state, rr_next) ==
                   offsetof(krill_cg_state, rz_next) + sizeof(double),
               "the residual sums are one run of two doubles: rz_next, rr_next");

/* rr_next = r'r and, DIAGONAL (q holds z), rz_next = r'z: Ozaki sums, the two as one pair
 * call (on GPU ranks of a communicator, one round trip for both: krill_ozaki_dot_pairs) */
static krill_status residual_sums_repro(krill_ctx *ctx, int64_t n, krill_cg_state *s,
                                        const double *q, const double *r, const double *dinv)
{
    const double *xs[2] = {r, r}, *ys[2] = {q, r};
    return dinv ? krill_ozaki_dot_pairs(ctx, n, 2, xs, ys, &s->rz_next)
                : krill_ozaki_dot(ctx, n, r, r, &s->rr_next);
}

/* Reproducible residual step (solver_impl.h): r -= alpha q and, DIAGONAL, z = dinv .* r over
 * q; rr_next = r'r and rz_next = r'z (residual_sums_repro); then the state step. On the GPU
 * the state is on the device, so its kernels decide whether to update (the dots then read an
 * unchanged r, and krill_cg_finish_repro ignores them). Traffic: r, q (+ dinv) read, r
 * (+ q) written, then 4 reads per dot. */
static krill_status cg_residual_repro(krill_ctx *ctx, int64_t n, int k, int pc_mode,
                                      krill_cg_state *s, double *q, double *r,
                                      const double *dinv)
{
    krill_status st = KRILL_OK;
    double alpha = 0.0;
    int code;
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) {
        KRILL_TRY(krill_cuda_cg_residual_repro(ctx, n, s, q, r, dinv));
        KRILL_TRY(residual_sums_repro(ctx, n, s, q, r, dinv));
        KRILL_TRY(krill_cuda_cg_finish_repro(ctx, k, pc_mode, s));
        goto cleanup;
    }
#endif
    if (s->stop != KRILL_CG_RUNNING) goto cleanup;
    code = krill_cg_step(s, &alpha);
    if (code != KRILL_CG_RUNNING) {
        s->stop = code;
        goto cleanup;
    }
#pragma omp parallel num_threads(krill_fused_threads(ctx)) if (n >= KRILL_FUSED_PARALLEL_MIN)
    {
        int64_t lo, hi;
        krill_fused_chunk(n, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
        for (int64_t i = lo; i < hi; i++) {
            double ri = r[i] - alpha * q[i];
            r[i] = ri;
            if (dinv) q[i] = dinv[i] * ri;
        }
    }
    KRILL_TRY(residual_sums_repro(ctx, n, s, q, r, dinv));
    krill_cg_finish_repro(s, k, pc_mode);
cleanup:
    return st;
}

#ifdef KRILL_HAVE_CUDA
/* GPU ranks, plain mode (solver_impl.h): the update and this rank's sums by the residual
 * kernel, both sums over the ranks in one allreduce, then the state step. Traffic: the
 * one-rank kernel's (3 or 4 passes) and 16 bytes each way. */
static krill_status cg_residual_ranks(krill_ctx *ctx, int64_t n, int k, int pc_mode,
                                      krill_cg_state *s, const double *q, double *r,
                                      const double *dinv)
{
    krill_status st = krill_cuda_cg_residual_sums(ctx, n, k, pc_mode, s, q, r, dinv);
    KRILL_TRY(krill_ctx_allreduce_device(ctx, st, &s->rz_next, 2, NULL, 0));
    KRILL_TRY(krill_cuda_cg_finish_repro(ctx, k, pc_mode, s));
cleanup:
    return st;
}
#endif

krill_status krill_fused_cg_residual(krill_ctx *ctx, const krill_reduce_ws *ws, int64_t n,
                                     int k, int pc_mode, krill_cg_state *s, double *q,
                                     double *r, const double *dinv)
{
    int used = 1, code;
    double alpha = 0.0;
    if (repro(ctx)) return cg_residual_repro(ctx, n, k, pc_mode, s, q, r, dinv);
#ifdef KRILL_HAVE_CUDA
    /* on a communicator the sums leave the device between the update and the state step */
    if (krill_on_gpu(ctx) && ctx->comm && ctx->comm->size > 1)
        return cg_residual_ranks(ctx, n, k, pc_mode, s, q, r, dinv);
    if (krill_on_gpu(ctx)) return krill_cuda_cg_residual(ctx, n, k, pc_mode, s, q, r, dinv);
#endif
    if (s->stop != KRILL_CG_RUNNING) return KRILL_OK;
    code = krill_cg_step(s, &alpha);
    if (code != KRILL_CG_RUNNING) {
        s->stop = code;
        return KRILL_OK;
    }
#pragma omp parallel num_threads(krill_fused_threads(ctx)) if (n >= KRILL_FUSED_PARALLEL_MIN)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        int64_t lo, hi;
        double rr = 0.0, rz = 0.0;
        if (t == 0) used = nt;
        krill_fused_chunk(n, t, nt, &lo, &hi);
        if (dinv) {
#pragma omp simd reduction(+ : rr, rz)
            for (int64_t i = lo; i < hi; i++) {
                double ri = r[i] - alpha * q[i];
                r[i] = ri;
                rr += ri * ri;
                rz += ri * (dinv[i] * ri);
            }
        } else {
#pragma omp simd reduction(+ : rr)
            for (int64_t i = lo; i < hi; i++) {
                double ri = r[i] - alpha * q[i];
                r[i] = ri;
                rr += ri * ri;
            }
        }
        ws->partial[(size_t)t * ws->stride] = rr;
        ws->partial[(size_t)t * ws->stride + 1] = rz;
    }
    {   /* r'r and r'z summed over the ranks (one allreduce) before the state step reads them */
        double sums[2] = {krill_reduce_ws_sum(ws, used, 0), dinv ? krill_reduce_ws_sum(ws, used, 1) : 0.0};
        krill_status st = krill_ctx_allreduce(ctx, sums, dinv ? 2 : 1, KRILL_REDUCE_SUM);
        if (st != KRILL_OK) return st;
        krill_cg_finish_residual(s, k, pc_mode, alpha, sums[0], dinv ? sums[1] : sums[0]);
    }
    return KRILL_OK;
}

krill_status krill_fused_cg_scalars(krill_ctx *ctx, int k, krill_cg_state *s)
{
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) return krill_cuda_cg_scalars(ctx, k, s);
#endif
    (void)ctx;
    if (s->stop == KRILL_CG_RUNNING && s->applied == k) krill_cg_next_direction(s, s->rz_next);
    return KRILL_OK;
}

krill_status krill_fused_cg_direction(krill_ctx *ctx, int64_t n, int k, const krill_cg_state *s,
                                      const double *src, const double *dinv, double *x,
                                      double *p)
{
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) return krill_cuda_cg_direction(ctx, n, k, s, src, dinv, x, p);
#endif
    if (s->applied != k) return KRILL_OK;
    const double alpha = s->alpha, beta = s->beta;
    const int running = s->stop == KRILL_CG_RUNNING;
#pragma omp parallel num_threads(krill_fused_threads(ctx)) if (n >= KRILL_FUSED_PARALLEL_MIN)
    {
        int64_t lo, hi;
        krill_fused_chunk(n, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
        if (!running) {
            for (int64_t i = lo; i < hi; i++) x[i] += alpha * p[i];
        } else if (dinv) {
            for (int64_t i = lo; i < hi; i++) {
                double pi = p[i];
                x[i] += alpha * pi;
                p[i] = dinv[i] * src[i] + beta * pi;
            }
        } else {
            for (int64_t i = lo; i < hi; i++) {
                double pi = p[i];
                x[i] += alpha * pi;
                p[i] = src[i] + beta * pi;
            }
        }
    }
    return KRILL_OK;
}

/* ---- asynchronous read ---------------------------------------------------------------------- */

krill_status krill_async_read_create(krill_ctx *ctx, size_t bytes, krill_async_read *r)
{
    memset(r, 0, sizeof *r);
    r->ctx = ctx;
    r->bytes = bytes;
    if (bytes > KRILL_ASYNC_READ_BYTES)
        return krill_error(KRILL_ERR_INTERNAL, "async read of %zu bytes; at most %d", bytes,
                           KRILL_ASYNC_READ_BYTES);
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) return krill_cuda_async_read_create(ctx, &r->events);
#endif
    return KRILL_OK;
}

krill_status krill_async_read_start(krill_async_read *r, int slot, const void *src)
{
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(r->ctx)) {
        krill_status st = KRILL_OK;
#ifdef KRILL_HAVE_NCCL   /* the reductions' failure flag beside the data (core/nccl.cu) */
        if (r->ctx->nccl) st = krill_nccl_mark(r->ctx, slot);
#endif
        if (st == KRILL_OK)
            st = krill_cuda_async_read_start(r->ctx, r->events, slot, src, r->bytes);
        return st;
    }
#endif
    memcpy(r->stash[slot], src, r->bytes);
    return KRILL_OK;
}

krill_status krill_async_read_wait(krill_async_read *r, int slot, void *dst)
{
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(r->ctx)) {
        krill_status st = krill_cuda_async_read_wait(r->ctx, r->events, slot, dst, r->bytes);
#ifdef KRILL_HAVE_NCCL
        if (st == KRILL_OK && r->ctx->nccl) st = krill_nccl_check(r->ctx, slot);
#endif
        return st;
    }
#endif
    memcpy(dst, r->stash[slot], r->bytes);
    return KRILL_OK;
}

void krill_async_read_destroy(krill_async_read *r)
{
#ifdef KRILL_HAVE_CUDA
    if (r->events) krill_cuda_async_read_destroy(r->events);
#endif
    r->events = NULL;
}
