/* solver/timing.c - the phase timer of the solvers (how it measures: solver_impl.h).
 * CPU: wall clock at each switch. GPU: CUDA events in a ring (timing_cuda.cu). */
#include <string.h>

#include "solver/solver_impl.h"

void krill_timer_init(krill_phase_timer *t, krill_ctx *ctx)
{
    memset(t, 0, sizeof *t);
    t->ctx = ctx;
    t->current = KRILL_PHASE_OTHER;
    t->t_start = krill_wtime();
    t->t_switch = t->t_start;
    t->comm_start = ctx->comm_seconds;
    t->halo_start = ctx->halo_seconds;
    t->halo_hidden_start = ctx->halo_hidden_seconds;
}

krill_status krill_timer_setup(krill_phase_timer *t)
{
#ifdef KRILL_HAVE_CUDA
    /* the ring's allocation may fail on one rank: every rank returns it (collective on a
       communicator, where every rank is on a GPU or none is) */
    if (krill_on_gpu(t->ctx)) return krill_ctx_agree(t->ctx, krill_cuda_timer_create(t->ctx, &t->ring));
#endif
    (void)t;
    return KRILL_OK;
}

krill_status krill_timer_phase(krill_phase_timer *t, krill_phase phase)
{
#ifdef KRILL_HAVE_CUDA
    if (t->ring) return krill_cuda_timer_record(t->ring, (int)phase, t->acc);
#endif
    double now = krill_wtime();
    t->acc[t->current] += now - t->t_switch;
    t->current = phase;
    t->t_switch = now;
    return KRILL_OK;
}

/* The setup ends when its GPU work has: without the wait, work still queued (kept workspace
 * blocks need no cudaMalloc, whose implicit synchronization used to do it) would be timed
 * twice, in setup's wall time and by the loop's first event. Phases switched during the
 * setup (a first SpMV, pipelined CG's start) belong to it: their times are dropped, on the
 * GPU with the events recorded so far. */
krill_status krill_timer_loop(krill_phase_timer *t, krill_phase phase)
{
    krill_status st = KRILL_OK;
    double now;
    if (t->ring) KRILL_TRY(krill_ctx_sync(t->ctx));
#ifdef KRILL_HAVE_CUDA
    if (t->ring) krill_cuda_timer_reset(t->ring);
#endif
    memset(t->acc, 0, sizeof t->acc);
    now = krill_wtime();
    t->setup = now - t->t_start;
    t->current = phase;
    t->t_switch = now;
#ifdef KRILL_HAVE_CUDA
    if (t->ring) st = krill_cuda_timer_record(t->ring, (int)phase, t->acc);
#endif
cleanup:
    return st;
}

krill_status krill_timer_poll(krill_phase_timer *t)
{
#ifdef KRILL_HAVE_CUDA
    if (t->ring) return krill_cuda_timer_poll(t->ring, t->acc, 0);
#endif
    (void)t;
    return KRILL_OK;
}

krill_status krill_timer_finish(krill_phase_timer *t, krill_solve_times *times)
{
    krill_status st = KRILL_OK;
    double accounted;
    KRILL_TRY(krill_timer_phase(t, KRILL_PHASE_OTHER));
#ifdef KRILL_HAVE_CUDA
    if (t->ring) KRILL_TRY(krill_cuda_timer_poll(t->ring, t->acc, 1));
#endif
    times->setup = t->setup;
    times->spmv = t->acc[KRILL_PHASE_SPMV];
    times->precond = t->acc[KRILL_PHASE_PRECOND];
    times->ortho = t->acc[KRILL_PHASE_ORTHO];
    times->total = krill_wtime() - t->t_start;
    times->comm = t->ctx->comm_seconds - t->comm_start;
    times->halo = t->ctx->halo_seconds - t->halo_start;
    times->halo_hidden = t->ctx->halo_hidden_seconds - t->halo_hidden_start;
    accounted = times->setup + times->spmv + times->precond + times->ortho;
    times->other = times->total > accounted ? times->total - accounted : 0.0;
cleanup:
    return st;
}

void krill_timer_destroy(krill_phase_timer *t)
{
#ifdef KRILL_HAVE_CUDA
    if (t->ring) krill_cuda_timer_destroy(t->ring);
#endif
    t->ring = NULL;
}
