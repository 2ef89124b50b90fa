// solver/timing_cuda.cu - the GPU side of the solvers' phase timer: a ring of CUDA events.
//
// krill_cuda_timer_record puts an event on the context's stream, tagged with the phase that
// starts there. krill_cuda_timer_poll adds the time between consecutive finished events to
// the earlier event's phase; without wait_all it never blocks (cudaEventQuery), so polling
// at the solver's existing synchronization points adds no host synchronization. The last
// recorded event stays in the ring as the start of the open interval.
#include <cuda_runtime.h>

#include "core/cuda_impl.h"
#include "solver/solver_impl.h"

namespace {

// Events kept before a poll. The solvers poll every iteration and record at most six
// events per iteration, so the ring never fills; if a caller did fill it, recording waits
// for the oldest interval instead of losing it.
constexpr int kRingEvents = 64;

struct EventRing {
    cudaStream_t stream;
    cudaEvent_t event[kRingEvents];
    int phase[kRingEvents];
    int created;     // events created (all of them once setup succeeded)
    int head;        // oldest event still in the ring
    int count;       // events in the ring
};

krill_status cuda_fail(cudaError_t err, const char *what)
{
    return krill_error(KRILL_ERR_DEVICE, "%s: %s", what, cudaGetErrorString(err));
}

// Account the oldest interval: wait for its end if `wait`, else only if it has finished.
// *done = 1 when an interval was accounted.
krill_status pop_interval(EventRing *ring, double *acc, int wait, int *done)
{
    *done = 0;
    if (ring->count < 2) return KRILL_OK;
    int first = ring->head, second = (ring->head + 1) % kRingEvents;
    cudaError_t err = wait ? cudaEventSynchronize(ring->event[second])
                           : cudaEventQuery(ring->event[second]);
    if (err == cudaErrorNotReady) return KRILL_OK;
    if (err != cudaSuccess) return cuda_fail(err, "solver timer: waiting for an event");
    float ms = 0.0f;
    err = cudaEventElapsedTime(&ms, ring->event[first], ring->event[second]);
    if (err != cudaSuccess) return cuda_fail(err, "solver timer: cudaEventElapsedTime");
    acc[ring->phase[first]] += 1e-3 * (double)ms;
    ring->head = second;
    ring->count--;
    *done = 1;
    return KRILL_OK;
}

}  // namespace

extern "C" krill_status krill_cuda_timer_create(krill_ctx *ctx, void **out)
{
    krill_status st = KRILL_OK;
    EventRing *ring = NULL;
    *out = NULL;
    KRILL_CALLOC(ring, 1);
    ring->stream = (cudaStream_t)ctx->cuda->stream;
    for (; ring->created < kRingEvents; ring->created++) {
        cudaError_t err = cudaEventCreate(&ring->event[ring->created]);
        if (err != cudaSuccess) {
            st = cuda_fail(err, "solver timer: cudaEventCreate");
            goto cleanup;
        }
    }
    *out = ring;
    ring = NULL;
cleanup:
    krill_cuda_timer_destroy(ring);
    return st;
}

extern "C" krill_status krill_cuda_timer_record(void *opaque, int phase, double *acc)
{
    krill_status st = KRILL_OK;
    EventRing *ring = (EventRing *)opaque;
    int done = 0, slot;
    cudaError_t err;
    if (ring->count == kRingEvents) KRILL_TRY(pop_interval(ring, acc, 1, &done));
    slot = (ring->head + ring->count) % kRingEvents;
    err = cudaEventRecord(ring->event[slot], ring->stream);
    if (err != cudaSuccess) {
        st = cuda_fail(err, "solver timer: cudaEventRecord");
        goto cleanup;
    }
    ring->phase[slot] = phase;
    ring->count++;
cleanup:
    return st;
}

extern "C" krill_status krill_cuda_timer_poll(void *opaque, double *acc, int wait_all)
{
    krill_status st = KRILL_OK;
    EventRing *ring = (EventRing *)opaque;
    int done = 1;
    while (done) KRILL_TRY(pop_interval(ring, acc, wait_all, &done));
cleanup:
    return st;
}

extern "C" void krill_cuda_timer_reset(void *opaque)
{
    EventRing *ring = (EventRing *)opaque;
    ring->count = 0;   // every event recorded so far is forgotten
}

extern "C" void krill_cuda_timer_destroy(void *opaque)
{
    EventRing *ring = (EventRing *)opaque;
    if (!ring) return;
    for (int i = 0; i < ring->created; i++) cudaEventDestroy(ring->event[i]);
    krill_free(ring);
}
