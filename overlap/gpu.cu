/* overlap/gpu.cu - the overlap scheduler on a GPU: the platform measurements, the
 * executor's backend (one stream per lane, two timing events per step, pinned staging),
 * and the DGEMM client's cuBLAS block kernel.
 *
 * Order of API calls (section 3 of Homma & Suda). Each lane has its own non-blocking
 * stream, and a step's dependencies are cudaStreamWaitEvent on the end events of the steps
 * it waits for, so no step waits for anything but its real inputs: with Hyper-Q (every GPU
 * we build for) streams map to separate hardware queues, and the false serialization the
 * paper measured on Fermi (a kernel of another stream issued between a copy and the kernel
 * that needs it) cannot occur. The host queues each lane's steps as soon as their waits are
 * queued and a send's chunk as soon as a staging slot is free (exec.c), so the copy engine
 * is fed while the kernels run.
 * Direct plans (page-locked regions) copy each region with one cudaMemcpy2DAsync between its
 * pitched host rows and its packed device place, and allocate no staging. */
#include <cublas_v2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
#include <algorithm>
#include <mutex>

#include "kernels/kernels_impl.cuh"
#include "overlap/overlap_impl.h"

namespace {

krill_status cuda_ok(cudaError_t e, const char *what)
{
    krill_status st = KRILL_OK;
    if (e != cudaSuccess) {
        st = krill_error(e == cudaErrorMemoryAllocation ? KRILL_ERR_DEVICE_ALLOC : KRILL_ERR_DEVICE,
                         "overlap: %s: %s", what, cudaGetErrorString(e));
        (void)cudaGetLastError();
    }
    return st;
}

/* Page-locked host memory through the fault hook. */
krill_status pinned_alloc(void **p, size_t bytes, const char *what)
{
    krill_status st = KRILL_OK;
    *p = NULL;
    if (krill_fault_check()) {
        st = krill_error(KRILL_ERR_ALLOC, "overlap: out of page-locked host memory allocating "
                         "%zu bytes for %s (injected fault)", bytes, what);
    } else {
        cudaError_t e = cudaMallocHost(p, bytes);
        if (e != cudaSuccess) {
            *p = NULL;
            (void)cudaGetLastError();
            st = krill_error(KRILL_ERR_ALLOC, "overlap: out of page-locked host memory "
                             "allocating %zu bytes for %s: %s", bytes, what, cudaGetErrorString(e));
        }
    }
    return st;
}

/* The staging ring outlives an execution: slots go back to a process-wide list (at most
 * STAGING_KEEP bytes, larger slots freed) and the next execution takes slots of its size
 * from it, so a client that runs many plans (the bench's repetitions, a solver's setup)
 * pays cudaMallocHost (about 0.1 s a GB) once. krill_overlap_release_staging empties it. */
#define STAGING_KEEP ((size_t)1 << 30)

struct staging_list {
    std::mutex lock;
    std::vector<std::pair<void *, size_t>> slots;
    size_t bytes = 0;
};

staging_list &staging()
{
    static staging_list list;
    return list;
}

/* A slot of exactly `bytes`: a kept one, else a new allocation. */
krill_status slot_take(void **p, size_t bytes, const char *what)
{
    {
        staging_list &l = staging();
        std::lock_guard<std::mutex> g(l.lock);
        for (size_t k = 0; k < l.slots.size(); k++)
            if (l.slots[k].second == bytes) {
                *p = l.slots[k].first;
                l.slots.erase(l.slots.begin() + (long)k);
                l.bytes -= bytes;
                return KRILL_OK;
            }
    }
    return pinned_alloc(p, bytes, what);
}

/* Back to the list, or freed when the list is full. */
void slot_give(void *p, size_t bytes)
{
    staging_list &l = staging();
    std::lock_guard<std::mutex> g(l.lock);
    if (l.bytes + bytes <= STAGING_KEEP) {
        l.slots.emplace_back(p, bytes);
        l.bytes += bytes;
    } else {
        (void)cudaFreeHost(p);
    }
}

__global__ void spin(long long cycles)
{
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

__global__ void empty_kernel() {}

/* Seconds between two recorded events. */
krill_status event_seconds(cudaEvent_t a, cudaEvent_t b, double *seconds)
{
    krill_status st = KRILL_OK;
    float ms = 0;
    KRILL_TRY(cuda_ok(cudaEventSynchronize(b), "cudaEventSynchronize"));
    KRILL_TRY(cuda_ok(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime"));
    *seconds = 1e-3 * ms;
cleanup:
    return st;
}

/* ---- the platform model ------------------------------------------------------------------- */
struct probe {
    cudaStream_t s[2];
    cudaEvent_t e[4];
    void *pinned, *dev, *dev2, *pageable;
    size_t bytes;
};

/* Best time of one copy of `bytes` (kind: H2D or D2H) from pinned memory on stream 0. */
krill_status time_copy(probe *pr, size_t bytes, cudaMemcpyKind kind, int reps, double *best)
{
    krill_status st = KRILL_OK;
    std::vector<double> t((size_t)reps);
    for (int r = 0; r < reps; r++) {
        void *dst = kind == cudaMemcpyHostToDevice ? pr->dev : pr->pinned;
        const void *src = kind == cudaMemcpyHostToDevice ? pr->pinned : pr->dev;
        KRILL_TRY(cuda_ok(cudaEventRecord(pr->e[0], pr->s[0]), "cudaEventRecord"));
        KRILL_TRY(cuda_ok(cudaMemcpyAsync(dst, src, bytes, kind, pr->s[0]), "cudaMemcpyAsync"));
        KRILL_TRY(cuda_ok(cudaEventRecord(pr->e[1], pr->s[0]), "cudaEventRecord"));
        KRILL_TRY(event_seconds(pr->e[0], pr->e[1], &t[(size_t)r]));
    }
    std::sort(t.begin(), t.end());
    *best = reps > 3 ? t[(size_t)reps / 2] : t[0];    /* small copies: the median */
cleanup:
    return st;
}

/* Best of 3 of a pitched copy between the pinned buffer (rows of `row` bytes at a pitch of
 * `spread` rows, spread 2 or 4: over its first spread / 2 x bytes) and packed device
 * memory: bytes / 2 in bytes / (2 row) rows. */
krill_status time_copy2d(probe *pr, size_t row, size_t spread, cudaMemcpyKind kind, double *best)
{
    krill_status st = KRILL_OK;
    const size_t rows = pr->bytes / (2 * row), pitch = spread * row;
    *best = 1e30;
    for (int r = 0; r < 3; r++) {
        double t = 0;
        KRILL_TRY(cuda_ok(cudaEventRecord(pr->e[0], pr->s[0]), "cudaEventRecord"));
        if (kind == cudaMemcpyHostToDevice)
            KRILL_TRY(cuda_ok(cudaMemcpy2DAsync(pr->dev, row, pr->pinned, pitch, row, rows, kind,
                                                pr->s[0]), "cudaMemcpy2DAsync"));
        else
            KRILL_TRY(cuda_ok(cudaMemcpy2DAsync(pr->pinned, pitch, pr->dev, row, row, rows, kind,
                                                pr->s[0]), "cudaMemcpy2DAsync"));
        KRILL_TRY(cuda_ok(cudaEventRecord(pr->e[1], pr->s[0]), "cudaEventRecord"));
        KRILL_TRY(event_seconds(pr->e[0], pr->e[1], &t));
        *best = std::min(*best, t);
    }
cleanup:
    return st;
}

/* Seconds of a pageable copy (synchronous cudaMemcpy), best of 3. */
krill_status time_pageable(probe *pr, cudaMemcpyKind kind, double *best)
{
    krill_status st = KRILL_OK;
    *best = 1e30;
    for (int r = 0; r < 3; r++) {
        double t = krill_wtime();
        void *dst = kind == cudaMemcpyHostToDevice ? pr->dev : pr->pageable;
        const void *src = kind == cudaMemcpyHostToDevice ? pr->pageable : pr->dev;
        KRILL_TRY(cuda_ok(cudaMemcpy(dst, src, pr->bytes, kind), "cudaMemcpy (pageable)"));
        t = krill_wtime() - t;
        if (t < *best) *best = t;
    }
cleanup:
    return st;
}

/* Seconds of two things run together on the probe's two streams: a copy of `bytes` on
 * stream 0 and, on stream 1, a D2H copy (what = 0) or a spin kernel of `cycles` (what = 1). */
krill_status time_pair(probe *pr, int what, long long cycles, double *seconds)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize"));
    KRILL_TRY(cuda_ok(cudaEventRecord(pr->e[0], pr->s[0]), "cudaEventRecord"));
    KRILL_TRY(cuda_ok(cudaStreamWaitEvent(pr->s[1], pr->e[0], 0), "cudaStreamWaitEvent"));
    KRILL_TRY(cuda_ok(cudaMemcpyAsync(pr->dev, pr->pinned, pr->bytes, cudaMemcpyHostToDevice,
                                      pr->s[0]), "cudaMemcpyAsync"));
    if (what == 0)
        KRILL_TRY(cuda_ok(cudaMemcpyAsync((char *)pr->pinned + pr->bytes, pr->dev2, pr->bytes,
                                          cudaMemcpyDeviceToHost, pr->s[1]), "cudaMemcpyAsync"));
    else {
        spin<<<1, 1, 0, pr->s[1]>>>(cycles);
        KRILL_TRY(cuda_ok(cudaGetLastError(), "spin kernel"));
    }
    KRILL_TRY(cuda_ok(cudaEventRecord(pr->e[2], pr->s[1]), "cudaEventRecord"));
    KRILL_TRY(cuda_ok(cudaStreamWaitEvent(pr->s[0], pr->e[2], 0), "cudaStreamWaitEvent"));
    KRILL_TRY(cuda_ok(cudaEventRecord(pr->e[1], pr->s[0]), "cudaEventRecord"));
    KRILL_TRY(event_seconds(pr->e[0], pr->e[1], seconds));
cleanup:
    return st;
}

}  // namespace

krill_status overlap_gpu_identify(const krill_ctx *ctx, krill_overlap_model *model)
{
    krill_status st = KRILL_OK;
    cudaDeviceProp prop;
    KRILL_TRY(cuda_ok(cudaGetDeviceProperties(&prop, ctx->device_id), "cudaGetDeviceProperties"));
    KRILL_TRY(cuda_ok(cudaDriverGetVersion(&model->driver_version), "cudaDriverGetVersion"));
    snprintf(model->device_name, sizeof model->device_name, "%.95s", prop.name);
cleanup:
    return st;
}

int overlap_gpu_page_locked(const void *p, size_t bytes)
{
    int locked = p != NULL && bytes > 0;
    for (int end = 0; end < 2 && locked; end++) {
        cudaPointerAttributes at;
        const char *q = (const char *)p + (end ? bytes - 1 : 0);
        if (cudaPointerGetAttributes(&at, q) != cudaSuccess) {
            (void)cudaGetLastError();
            locked = 0;
        } else {
            locked = at.type == cudaMemoryTypeHost;
        }
    }
    return locked;
}

krill_status overlap_gpu_free_memory(krill_ctx *ctx, double *bytes)
{
    krill_status st = KRILL_OK;
    size_t free_b = 0, total_b = 0;
    KRILL_TRY(cuda_ok(cudaSetDevice(ctx->device_id), "cudaSetDevice"));
    KRILL_TRY(cuda_ok(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo"));
    *bytes = (double)free_b;
cleanup:
    return st;
}

/* Copies of `bytes` (rates: best of 3) and of 8 bytes (latency: median of 21); pitched
 * copies of 16 KiB rows (the cost per row beyond the contiguous rate); the copy
 * engines overlap when two copies (or a copy and a kernel about as long, timed alone) together
 * take less than 3/4 of their sum; launch latency: 200 empty kernels, per launch. Takes
 * 2 x bytes of device and of pinned memory, and bytes of pageable. */
static krill_status calibrate_with(krill_ctx *ctx, krill_overlap_model *m, size_t bytes)
{
    krill_status st = KRILL_OK;
    probe pr;
    double t_big = 0, t_small = 0, t_pair = 0, t_d2h = 0;
    memset(&pr, 0, sizeof pr);
    pr.bytes = bytes;
    KRILL_TRY(cuda_ok(cudaSetDevice(ctx->device_id), "cudaSetDevice"));
    for (int k = 0; k < 2; k++)
        KRILL_TRY(cuda_ok(cudaStreamCreateWithFlags(&pr.s[k], cudaStreamNonBlocking), "cudaStreamCreate"));
    for (int k = 0; k < 4; k++) KRILL_TRY(cuda_ok(cudaEventCreate(&pr.e[k]), "cudaEventCreate"));
    KRILL_TRY(pinned_alloc(&pr.pinned, 2 * pr.bytes, "calibration"));
    KRILL_TRY(krill_cuda_alloc(ctx, &pr.dev, pr.bytes, "calibration"));
    KRILL_TRY(krill_cuda_alloc(ctx, &pr.dev2, pr.bytes, "calibration"));
    KRILL_TRY(krill_alloc(&pr.pageable, pr.bytes, "calibration"));
    memset(pr.pinned, 1, 2 * pr.bytes);
    memset(pr.pageable, 1, pr.bytes);
    KRILL_TRY(cuda_ok(cudaMemset(pr.dev, 0, pr.bytes), "cudaMemset"));
    KRILL_TRY(cuda_ok(cudaMemset(pr.dev2, 0, pr.bytes), "cudaMemset"));

    KRILL_TRY(time_copy(&pr, pr.bytes, cudaMemcpyHostToDevice, 3, &t_big));
    KRILL_TRY(time_copy(&pr, 8, cudaMemcpyHostToDevice, 21, &t_small));
    m->h2d_latency = t_small;
    m->h2d_bandwidth = (double)pr.bytes / std::max(t_big - t_small, 1e-9);
    KRILL_TRY(time_copy(&pr, pr.bytes, cudaMemcpyDeviceToHost, 3, &t_d2h));
    KRILL_TRY(time_copy(&pr, 8, cudaMemcpyDeviceToHost, 21, &t_small));
    m->d2h_latency = t_small;
    m->d2h_bandwidth = (double)pr.bytes / std::max(t_d2h - t_small, 1e-9);
    {   /* pitched copies of 16 KiB rows (a 2048-column block of doubles) at pitches of 2 and
           4 rows: the larger cost per row beyond a contiguous copy of the same bytes */
        const size_t row = 16384, rows = pr.bytes / (2 * row);
        double t2d = 0;
        m->h2d_row_seconds = m->d2h_row_seconds = 0;
        for (size_t spread = 2; spread <= 4; spread += 2) {
            KRILL_TRY(time_copy2d(&pr, row, spread, cudaMemcpyHostToDevice, &t2d));
            m->h2d_row_seconds = std::max(m->h2d_row_seconds, (t2d - m->h2d_latency -
                (double)(pr.bytes / 2) / m->h2d_bandwidth) / (double)rows);
            KRILL_TRY(time_copy2d(&pr, row, spread, cudaMemcpyDeviceToHost, &t2d));
            m->d2h_row_seconds = std::max(m->d2h_row_seconds, (t2d - m->d2h_latency -
                (double)(pr.bytes / 2) / m->d2h_bandwidth) / (double)rows);
        }
    }
    KRILL_TRY(time_pageable(&pr, cudaMemcpyHostToDevice, &t_small));
    m->h2d_pageable_bandwidth = (double)pr.bytes / t_small;
    KRILL_TRY(time_pageable(&pr, cudaMemcpyDeviceToHost, &t_small));
    m->d2h_pageable_bandwidth = (double)pr.bytes / t_small;
    {   /* packing: one contiguous run (its rate), 1 MiB packs (the latency), and pitched
           rows (the cost per row). Measured beside DMA traffic both ways the contiguous rate
           came out 0.75x of this (29.9 GB/s on an H200), yet the executor's unsplit staged
           copies packed 8 MiB chunks faster than that while the copy engine ran at 48.6 GB/s
           (doc/overlap.md): the rate alone is the better predictor */
        const krill_overlap_region whole = {pr.pageable, pr.bytes, 1, pr.bytes};
        double best = 1e30;
        for (int rep = 0; rep < 3; rep++) {
            double t = krill_wtime();
            overlap_pack(&whole, pr.pinned, 1, ctx->threads);
            best = std::min(best, krill_wtime() - t);
        }
        m->host_copy_bandwidth = (double)pr.bytes / best;
        m->host_copy_latency = overlap_pack_latency(pr.pageable, pr.pinned, m->host_copy_bandwidth,
                                                    ctx->threads);
        m->host_copy_row_seconds = overlap_pack_row_seconds(
            (char *)pr.pageable, (char *)pr.pinned, m->host_copy_bandwidth, m->host_copy_latency,
            ctx->threads);
    }
    KRILL_TRY(time_pair(&pr, 0, 0, &t_pair));
    m->copies_overlap = t_pair < 0.75 * (t_big + t_d2h);
    {
        int khz = 0;                         /* the SM clock (kHz), for the spin's length */
        KRILL_TRY(cuda_ok(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, ctx->device_id),
                          "cudaDeviceGetAttribute"));
        /* a spin kernel about as long as the copy beside it (the clock attribute is the
           top clock, the SM may run slower: the spin's own time is measured) */
        const long long cycles = (long long)(t_big * (double)khz * 1e3);
        double t_spin = 0;
        KRILL_TRY(cuda_ok(cudaEventRecord(pr.e[0], pr.s[1]), "cudaEventRecord"));
        spin<<<1, 1, 0, pr.s[1]>>>(cycles);
        KRILL_TRY(cuda_ok(cudaGetLastError(), "spin kernel"));
        KRILL_TRY(cuda_ok(cudaEventRecord(pr.e[1], pr.s[1]), "cudaEventRecord"));
        KRILL_TRY(event_seconds(pr.e[0], pr.e[1], &t_spin));
        KRILL_TRY(time_pair(&pr, 1, cycles, &t_pair));
        m->copy_kernel_overlap = t_pair < 0.75 * (t_big + t_spin);
    }
    KRILL_TRY(cuda_ok(cudaEventRecord(pr.e[0], pr.s[0]), "cudaEventRecord"));
    for (int k = 0; k < 200; k++) empty_kernel<<<1, 32, 0, pr.s[0]>>>();
    KRILL_TRY(cuda_ok(cudaGetLastError(), "empty kernel"));
    KRILL_TRY(cuda_ok(cudaEventRecord(pr.e[1], pr.s[0]), "cudaEventRecord"));
    KRILL_TRY(event_seconds(pr.e[0], pr.e[1], &t_small));
    m->launch_latency = t_small / 200;
    {   /* the host's time to queue one step as the executor does (a copy between its start
           and end events, and a query of an earlier one: the executor polls its lanes),
           wall time of 200 queued back to back on the copy's stream */
        double t = krill_wtime();
        for (int k = 0; k < 200; k++) {
            KRILL_TRY(cuda_ok(cudaEventRecord(pr.e[2], pr.s[0]), "cudaEventRecord"));
            KRILL_TRY(cuda_ok(cudaMemcpyAsync(pr.dev, pr.pinned, 8, cudaMemcpyHostToDevice, pr.s[0]),
                              "cudaMemcpyAsync"));
            KRILL_TRY(cuda_ok(cudaEventRecord(pr.e[3], pr.s[0]), "cudaEventRecord"));
            if (cudaEventQuery(pr.e[2]) == cudaErrorNotReady) (void)cudaGetLastError();
        }
        m->issue_seconds = (krill_wtime() - t) / 200;
    }
cleanup:
    (void)cudaDeviceSynchronize();
    for (int k = 0; k < 2; k++)
        if (pr.s[k]) (void)cudaStreamDestroy(pr.s[k]);
    for (int k = 0; k < 4; k++)
        if (pr.e[k]) (void)cudaEventDestroy(pr.e[k]);
    if (pr.pinned) (void)cudaFreeHost(pr.pinned);
    krill_cuda_free(ctx, pr.dev);
    krill_cuda_free(ctx, pr.dev2);
    krill_free(pr.pageable);
    return st;
}

/* 256 MiB copies, or 32 MiB ones on a device (or host) short of memory: the out-of-core
 * clients calibrate exactly when memory is scarce. */
krill_status overlap_gpu_calibrate(krill_ctx *ctx, krill_overlap_model *m)
{
    krill_status st = calibrate_with(ctx, m, (size_t)256 << 20);
    if (st == KRILL_ERR_ALLOC || st == KRILL_ERR_DEVICE_ALLOC) {
        krill_clear_error();
        st = calibrate_with(ctx, m, (size_t)32 << 20);
    }
    return st;
}

/* ---- the executor's backend ----------------------------------------------------------------- */
namespace {

struct gpu_state {
    cudaStream_t lane[KRILL_OVERLAP_LANES];
    cudaEvent_t origin;          /* recorded at open; every lane waits for it */
    cudaEvent_t *start, *end;    /* per step */
    int64_t n_events;            /* events created (of each kind) */
    cudaEvent_t *slot_ev[2];     /* per send (0) and receive (1) slot: after its last copy */
    int n_slot_ev[2];            /* created */
    double base;                 /* the earliest step start, seconds after origin (-1: unknown) */
};

krill_status gpu_open(overlap_exec *x)
{
    krill_status st = KRILL_OK;
    const krill_overlap_plan *p = x->plan;
    gpu_state *gs = NULL;
    KRILL_CALLOC(gs, 1);
    x->state = gs;
    gs->base = -1;
    KRILL_TRY(cuda_ok(cudaSetDevice(x->ctx->device_id), "cudaSetDevice"));
    for (int l = 0; l < KRILL_OVERLAP_LANES; l++)
        KRILL_TRY(cuda_ok(cudaStreamCreateWithFlags(&gs->lane[l], cudaStreamNonBlocking),
                          "cudaStreamCreate"));
    KRILL_CALLOC(gs->start, (size_t)p->n_steps);
    KRILL_CALLOC(gs->end, (size_t)p->n_steps);
    for (; gs->n_events < p->n_steps; gs->n_events++) {
        KRILL_TRY(cuda_ok(cudaEventCreate(&gs->start[gs->n_events]), "cudaEventCreate"));
        st = cuda_ok(cudaEventCreate(&gs->end[gs->n_events]), "cudaEventCreate");
        if (st != KRILL_OK) {
            (void)cudaEventDestroy(gs->start[gs->n_events]);
            goto cleanup;
        }
    }
    KRILL_TRY(cuda_ok(cudaEventCreate(&gs->origin), "cudaEventCreate"));
    for (int d = 0; d < 2; d++) {
        const int n = d == 0 ? x->n_send : x->n_recv;
        KRILL_CALLOC(gs->slot_ev[d], (size_t)n + 1);
        for (; gs->n_slot_ev[d] < n; gs->n_slot_ev[d]++)
            KRILL_TRY(cuda_ok(cudaEventCreateWithFlags(&gs->slot_ev[d][gs->n_slot_ev[d]],
                                                       cudaEventDisableTiming), "cudaEventCreate"));
    }
    KRILL_TRY(krill_cuda_alloc(x->ctx, (void **)&x->arena, (size_t)p->arena_bytes, "overlap arena"));
    KRILL_CALLOC(x->send_slot, (size_t)x->n_send);
    KRILL_CALLOC(x->recv_slot, (size_t)x->n_recv);
    KRILL_TRY(krill_host_mem_check((size_t)(x->n_send + x->n_recv) * (size_t)p->slot_bytes,
                                   "the overlap scheduler's pinned staging slots"));
    for (int k = 0; k < x->n_send; k++)
        KRILL_TRY(slot_take(&x->send_slot[k], (size_t)p->slot_bytes, "a send staging slot"));
    for (int k = 0; k < x->n_recv; k++)
        KRILL_TRY(slot_take(&x->recv_slot[k], (size_t)p->slot_bytes, "a receive staging slot"));
    KRILL_TRY(cuda_ok(cudaEventRecord(gs->origin, gs->lane[0]), "cudaEventRecord"));
    for (int l = 1; l < KRILL_OVERLAP_LANES; l++)
        KRILL_TRY(cuda_ok(cudaStreamWaitEvent(gs->lane[l], gs->origin, 0), "cudaStreamWaitEvent"));
cleanup:
    return st;
}

/* The waits of step s on its stream, then its start event. */
krill_status begin_step(overlap_exec *x, int64_t s, cudaStream_t stream)
{
    krill_status st = KRILL_OK;
    gpu_state *gs = (gpu_state *)x->state;
    const krill_overlap_plan *p = x->plan;
    const overlap_step *step = &p->steps[s];
    for (int32_t w = 0; w < step->n_wait; w++)
        KRILL_TRY(cuda_ok(cudaStreamWaitEvent(stream, gs->end[p->waits[step->wait_first + w]], 0),
                          "cudaStreamWaitEvent"));
    if (x->direct && step->kind == OVERLAP_SEND && step->host_after >= 0)   /* its data */
        KRILL_TRY(cuda_ok(cudaStreamWaitEvent(stream, gs->end[step->host_after], 0),
                          "cudaStreamWaitEvent"));
    KRILL_TRY(cuda_ok(cudaEventRecord(gs->start[s], stream), "cudaEventRecord"));
cleanup:
    return st;
}

/* A kernel, or a direct plan's copy of the pitched region itself. */
krill_status gpu_issue(overlap_exec *x, int64_t s, void *const *in, void *const *out)
{
    krill_status st = KRILL_OK;
    gpu_state *gs = (gpu_state *)x->state;
    const krill_overlap_plan *p = x->plan;
    const overlap_step *step = &p->steps[s];
    cudaStream_t stream = gs->lane[step->kind];
    KRILL_TRY(begin_step(x, s, stream));
    if (step->kind != OVERLAP_KERNEL) {
        const krill_overlap_region *r = &p->regions[step->region];
        char *dev = x->arena + step->offset;
        if (step->kind == OVERLAP_SEND)
            KRILL_TRY(cuda_ok(cudaMemcpy2DAsync(dev, r->row_bytes, r->host, r->pitch, r->row_bytes,
                                                r->rows, cudaMemcpyHostToDevice, stream),
                              "cudaMemcpy2DAsync (send)"));
        else
            KRILL_TRY(cuda_ok(cudaMemcpy2DAsync(r->host, r->pitch, dev, r->row_bytes, r->row_bytes,
                                                r->rows, cudaMemcpyDeviceToHost, stream),
                              "cudaMemcpy2DAsync (receive)"));
    } else {
        KRILL_TRY(overlap_run_kernel(x, s, (void *)stream, in, out));
    }
    KRILL_TRY(cuda_ok(cudaEventRecord(gs->end[s], stream), "cudaEventRecord"));
cleanup:
    return st;
}

/* One chunk of a staged copy, then the slot's event. */
krill_status gpu_copy(overlap_exec *x, int64_t s, int slot, int64_t at, int64_t bytes, int first,
                      int last)
{
    krill_status st = KRILL_OK;
    gpu_state *gs = (gpu_state *)x->state;
    const overlap_step *step = &x->plan->steps[s];
    const int recv = step->kind == OVERLAP_RECV;
    cudaStream_t stream = gs->lane[step->kind];
    char *dev = x->arena + step->offset + at;
    if (first) KRILL_TRY(begin_step(x, s, stream));
    if (recv)
        KRILL_TRY(cuda_ok(cudaMemcpyAsync(x->recv_slot[slot], dev, (size_t)bytes,
                                          cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync (receive)"));
    else
        KRILL_TRY(cuda_ok(cudaMemcpyAsync(dev, x->send_slot[slot], (size_t)bytes,
                                          cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync (send)"));
    KRILL_TRY(cuda_ok(cudaEventRecord(gs->slot_ev[recv][slot], stream), "cudaEventRecord"));
    if (last) KRILL_TRY(cuda_ok(cudaEventRecord(gs->end[s], stream), "cudaEventRecord"));
cleanup:
    return st;
}

/* 1 once the slot's last copy has ended, or failed (gpu_slot_wait then reports it) */
int gpu_slot_done(overlap_exec *x, int kind, int slot)
{
    cudaError_t e = cudaEventQuery(((gpu_state *)x->state)->slot_ev[kind == OVERLAP_RECV][slot]);
    if (e == cudaErrorNotReady) (void)cudaGetLastError();
    return e != cudaErrorNotReady;
}

krill_status gpu_slot_wait(overlap_exec *x, int kind, int slot)
{
    return cuda_ok(cudaEventSynchronize(((gpu_state *)x->state)->slot_ev[kind == OVERLAP_RECV][slot]),
                   "a staging copy");
}

/* 1 once step s has ended, or failed (gpu_wait then reports the failure) */
int gpu_done(overlap_exec *x, int64_t s)
{
    cudaError_t e = cudaEventQuery(((gpu_state *)x->state)->end[s]);
    if (e == cudaErrorNotReady) (void)cudaGetLastError();
    return e != cudaErrorNotReady;
}

krill_status gpu_wait(overlap_exec *x, int64_t s)
{
    return cuda_ok(cudaEventSynchronize(((gpu_state *)x->state)->end[s]), "a queued step");
}

krill_status gpu_drain(overlap_exec *x)
{
    krill_status st = KRILL_OK;
    gpu_state *gs = (gpu_state *)x->state;
    for (int l = 0; l < KRILL_OVERLAP_LANES; l++) {
        krill_status lane_st = cuda_ok(cudaStreamSynchronize(gs->lane[l]), "cudaStreamSynchronize");
        if (st == KRILL_OK) st = lane_st;
    }
    return st;
}

krill_status gpu_times(overlap_exec *x, int64_t s, double *start, double *end)
{
    krill_status st = KRILL_OK;
    gpu_state *gs = (gpu_state *)x->state;
    double a = 0, b = 0;
    if (gs->base < 0) {
        gs->base = 1e30;
        for (int64_t i = 0; i < x->plan->n_steps; i++) {
            KRILL_TRY(event_seconds(gs->origin, gs->start[i], &a));
            gs->base = std::min(gs->base, a);
        }
    }
    KRILL_TRY(event_seconds(gs->origin, gs->start[s], &a));
    KRILL_TRY(event_seconds(gs->origin, gs->end[s], &b));
    *start = a - gs->base;
    *end = b - gs->base;
cleanup:
    return st;
}

void gpu_close(overlap_exec *x)
{
    gpu_state *gs = (gpu_state *)x->state;
    if (gs) {
        for (int l = 0; l < KRILL_OVERLAP_LANES; l++)
            if (gs->lane[l]) (void)cudaStreamDestroy(gs->lane[l]);
        for (int64_t i = 0; i < gs->n_events; i++) {
            (void)cudaEventDestroy(gs->start[i]);
            (void)cudaEventDestroy(gs->end[i]);
        }
        if (gs->origin) (void)cudaEventDestroy(gs->origin);
        for (int d = 0; d < 2; d++) {
            for (int k = 0; k < gs->n_slot_ev[d]; k++) (void)cudaEventDestroy(gs->slot_ev[d][k]);
            krill_free(gs->slot_ev[d]);
        }
        krill_free(gs->start);
        krill_free(gs->end);
        krill_free(gs);
        x->state = NULL;
    }
    for (int k = 0; x->send_slot && k < x->n_send; k++)
        if (x->send_slot[k]) slot_give(x->send_slot[k], (size_t)x->plan->slot_bytes);
    for (int k = 0; x->recv_slot && k < x->n_recv; k++)
        if (x->recv_slot[k]) slot_give(x->recv_slot[k], (size_t)x->plan->slot_bytes);
    krill_free(x->send_slot);
    krill_free(x->recv_slot);
    krill_cuda_free(x->ctx, x->arena);
    x->send_slot = x->recv_slot = NULL;
    x->arena = NULL;
}

}  // namespace

extern "C" const overlap_backend overlap_gpu_backend = {
    "gpu", gpu_open, gpu_issue, gpu_copy, gpu_slot_done, gpu_slot_wait, gpu_done, gpu_wait,
    gpu_times, gpu_drain, gpu_close,
};

/* ---- the DGEMM client's kernel ------------------------------------------------------------
 * Row-major C (bh x bw) = A (bh x m) B (m x bw) is column-major C^T = B^T A^T: one
 * cublasDgemm with the operands swapped. The context's handle is pointed at the lane's
 * stream for the call and back at the context's stream after it. */
krill_status overlap_gpu_dgemm_block(krill_ctx *ctx, void *stream, int64_t bh, int64_t m,
                                     int64_t bw, const double *a, const double *b, double *c)
{
    krill_status st = KRILL_OK;
    cublasHandle_t h = (cublasHandle_t)ctx->cuda->cublas;
    const double one = 1, zero = 0;
    cublasStatus_t cs;
    KRILL_REQUIRE(bh <= INT32_MAX && m <= INT32_MAX && bw <= INT32_MAX,
                  "overlap gemm: a block of %lld x %lld x %lld exceeds cuBLAS's int sizes",
                  (long long)bh, (long long)m, (long long)bw);
    cs = cublasSetStream(h, (cudaStream_t)stream);
    if (cs == CUBLAS_STATUS_SUCCESS)
        cs = cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)bw, (int)bh, (int)m, &one, b, (int)bw,
                         a, (int)m, &zero, c, (int)bw);
    (void)cublasSetStream(h, (cudaStream_t)ctx->cuda->stream);
    if (cs != CUBLAS_STATUS_SUCCESS)
        st = krill_error(KRILL_ERR_DEVICE, "overlap gemm: cublasDgemm (%lld x %lld x %lld): %s",
                         (long long)bh, (long long)m, (long long)bw, cublasGetStatusString(cs));
cleanup:
    return st;
}

/* Seconds of one bh x m x bw DGEMM on zeroed scratch: one warm-up, then the best of 3
 * (CUDA events on the context's stream). */
krill_status overlap_gpu_time_dgemm(krill_ctx *ctx, int64_t bh, int64_t m, int64_t bw,
                                    double *seconds)
{
    krill_status st = KRILL_OK;
    double *scratch = NULL;
    cudaEvent_t e[2] = {NULL, NULL};
    cudaStream_t stream = (cudaStream_t)ctx->cuda->stream;
    const size_t count = (size_t)(bh * m + m * bw + bh * bw);
    *seconds = 1e30;
    KRILL_TRY(krill_cuda_alloc(ctx, (void **)&scratch, count * sizeof(double), "DGEMM timing"));
    KRILL_TRY(cuda_ok(cudaMemsetAsync(scratch, 0, count * sizeof(double), stream), "cudaMemsetAsync"));
    for (int k = 0; k < 2; k++) KRILL_TRY(cuda_ok(cudaEventCreate(&e[k]), "cudaEventCreate"));
    for (int rep = 0; rep < 4; rep++) {
        double t = 0;
        KRILL_TRY(cuda_ok(cudaEventRecord(e[0], stream), "cudaEventRecord"));
        KRILL_TRY(overlap_gpu_dgemm_block(ctx, stream, bh, m, bw, scratch, scratch + bh * m,
                                          scratch + bh * m + m * bw));
        KRILL_TRY(cuda_ok(cudaEventRecord(e[1], stream), "cudaEventRecord"));
        KRILL_TRY(event_seconds(e[0], e[1], &t));
        if (rep > 0) *seconds = std::min(*seconds, t);
    }
cleanup:
    for (int k = 0; k < 2; k++)
        if (e[k]) (void)cudaEventDestroy(e[k]);
    krill_cuda_free(ctx, scratch);
    return st;
}

extern "C" void krill_overlap_release_staging(void)
{
    staging_list &l = staging();
    std::lock_guard<std::mutex> g(l.lock);
    for (auto &slot : l.slots) (void)cudaFreeHost(slot.first);
    l.slots.clear();
    l.bytes = 0;
}
