/* overlap/exec.c - the executor: runs a plan's steps through a backend (exec_cpu.c,
 * gpu.cu) and the pinned staging ring, and records the timeline.
 *
 * The calling thread is the host lane. It walks the steps in issue order; for a send it
 * packs the region from user memory into the next send slot (once the slot's previous send
 * has ended) and queues the copy; for a receive it queues the copy into the next receive
 * slot (once the slot's previous content has been unpacked into user memory); kernels are
 * queued as they come. Sends may be issued ahead of the walk (the lookahead), as long as
 * the steps they wait for are queued and a send slot is free without waiting: that keeps
 * the host->device lane busy while the kernel lane works. Whenever it would otherwise
 * idle, the host unpacks finished receives, in order. Traffic per region: one host copy
 * (pack or unpack, at memcpy speed with the context's threads) and one DMA copy.
 *
 * Sequential plans run the same steps, each after the previous one (unpacks included).
 *
 * Direct plans (the regions in page-locked memory on a GPU, overlap_direct) have no staging:
 * each copy goes between the region itself (pitched) and the device, a receive needs no
 * unpacking, and a send that must see an earlier receive's data waits for that copy on the
 * device (the backend adds the wait). Traffic per region: the DMA copy alone. */
#include <stdio.h>
#include <string.h>
#include "overlap/overlap_impl.h"

void overlap_pack(const krill_overlap_region *r, void *packed, int to_packed, int threads)
{
    char *host = (char *)r->host, *buf = (char *)packed;
    const int64_t rows = (int64_t)r->rows;
    const size_t rb = r->row_bytes, pitch = r->pitch, total = r->rows * r->row_bytes;
    const int parallel = total >= ((size_t)512 << 10) && threads > 1;   /* a fork: ~ 5 us */
    if (pitch == rb) {               /* one contiguous run: split it among the threads */
        const int64_t chunks = parallel ? threads : 1;
        #pragma omp parallel for num_threads(threads) schedule(static) if (parallel)
        for (int64_t c = 0; c < chunks; c++) {
            size_t lo = total / (size_t)chunks * (size_t)c;
            size_t hi = c == chunks - 1 ? total : total / (size_t)chunks * (size_t)(c + 1);
            if (to_packed) memcpy(buf + lo, host + lo, hi - lo);
            else memcpy(host + lo, buf + lo, hi - lo);
        }
    } else {
        #pragma omp parallel for num_threads(threads) schedule(static) if (parallel)
        for (int64_t i = 0; i < rows; i++) {
            if (to_packed) memcpy(buf + (size_t)i * rb, host + (size_t)i * pitch, rb);
            else memcpy(host + (size_t)i * pitch, buf + (size_t)i * rb, rb);
        }
    }
}

void overlap_kernel_args(const overlap_exec *x, int64_t s, void **in, void **out)
{
    const krill_overlap_plan *p = x->plan;
    const overlap_step *step = &p->steps[s];
    const int32_t b = step->block, n_in = p->blk_in_first[b + 1] - p->blk_in_first[b];
    for (int32_t k = 0; k < overlap_blk_count(p, b); k++) {
        char *at = x->arena + p->args[step->args_first + k];
        if (k < n_in) in[k] = at;
        else out[k - n_in] = at;
    }
}

krill_status overlap_run_kernel(const overlap_exec *x, int64_t s, void *stream,
                                void *const *in, void *const *out)
{
    const krill_overlap_plan *p = x->plan;
    const int32_t b = p->steps[s].block;
    krill_status st = p->kernel(p->user, b, stream, in, out);
    if (st != KRILL_OK) {
        char why[256];                   /* a copy: krill_error rewrites the message */
        snprintf(why, sizeof why, "%s", krill_last_error());
        st = krill_error(st, "overlap: the kernel of block %d failed: %s", b,
                         why[0] ? why : krill_status_string(st));
    }
    return st;
}

typedef struct runner {
    overlap_exec x;
    char *issued;                /* per step */
    int64_t *send_last;          /* per send slot: the last send queued from it, or -1 */
    int64_t *recv_held;          /* per receive slot: the receive whose data it holds, or -1 */
    int64_t *recv_slot;          /* per step: the receive slot a receive used */
    int64_t *pending;            /* receives not yet unpacked, in issue order (a FIFO) */
    int64_t head, tail;
    int64_t n_sent, n_received;
    char *unpacked;              /* per step */
    void **in_ptr, **out_ptr;    /* a kernel's arguments */
} runner;

/* Unpack the oldest pending receive (waiting for it if `block`); *did: 1 if one was. */
static krill_status unpack_oldest(runner *rn, int block, int *did)
{
    krill_status st = KRILL_OK;
    const krill_overlap_plan *p = rn->x.plan;
    int64_t s, slot;
    *did = 0;
    if (rn->head == rn->tail) goto cleanup;
    s = rn->pending[rn->head];
    if (!block && !rn->x.backend->done(&rn->x, s)) goto cleanup;
    KRILL_TRY(rn->x.backend->wait(&rn->x, s));
    slot = rn->recv_slot[s];
    overlap_pack(&p->regions[p->steps[s].region], rn->x.recv_slot[slot], 0, rn->x.ctx->threads);
    rn->recv_held[slot] = -1;
    rn->unpacked[s] = 1;
    rn->head++;
    *did = 1;
cleanup:
    return st;
}

/* Unpack pending receives until receive `s` is unpacked (waiting as needed). */
static krill_status unpack_through(runner *rn, int64_t s)
{
    krill_status st = KRILL_OK;
    int did = 1;
    while (!rn->unpacked[s] && did) KRILL_TRY(unpack_oldest(rn, 1, &did));
    if (!rn->unpacked[s])
        st = krill_error(KRILL_ERR_INTERNAL, "overlap: receive step %lld was never queued",
                         (long long)s);
cleanup:
    return st;
}

/* Can send `s` be queued now without waiting? (its waits queued, its slot free, the data
   it needs from an earlier receive already in host memory or arriving) */
static int send_ready(runner *rn, int64_t s)
{
    const krill_overlap_plan *p = rn->x.plan;
    const overlap_step *st = &p->steps[s];
    int64_t last = rn->x.direct ? -1 : rn->send_last[rn->n_sent % rn->x.n_send];
    int ok = last < 0 || rn->x.backend->done(&rn->x, last);
    for (int32_t w = 0; w < st->n_wait && ok; w++) ok = rn->issued[p->waits[st->wait_first + w]];
    if (ok && st->host_after >= 0) ok = rn->unpacked[st->host_after];
    return ok;
}

static krill_status issue(runner *rn, int64_t s)
{
    krill_status st = KRILL_OK;
    const krill_overlap_plan *p = rn->x.plan;
    const overlap_step *step = &p->steps[s];
    const overlap_backend *be = rn->x.backend;
    if (rn->x.direct && step->kind != OVERLAP_KERNEL) {   /* the region itself, no slot */
        KRILL_TRY(be->issue(&rn->x, s, p->regions[step->region].host, NULL, NULL));
        rn->unpacked[s] = step->kind == OVERLAP_RECV;     /* nothing to unpack */
    } else if (step->kind == OVERLAP_SEND) {
        int64_t slot = rn->n_sent % rn->x.n_send;
        if (rn->send_last[slot] >= 0) KRILL_TRY(be->wait(&rn->x, rn->send_last[slot]));
        if (step->host_after >= 0) KRILL_TRY(unpack_through(rn, step->host_after));
        overlap_pack(&p->regions[step->region], rn->x.send_slot[slot], 1, rn->x.ctx->threads);
        KRILL_TRY(be->issue(&rn->x, s, rn->x.send_slot[slot], NULL, NULL));
        rn->send_last[slot] = s;
        rn->n_sent++;
    } else if (step->kind == OVERLAP_RECV) {
        int64_t slot = rn->n_received % rn->x.n_recv;
        if (rn->recv_held[slot] >= 0) KRILL_TRY(unpack_through(rn, rn->recv_held[slot]));
        KRILL_TRY(be->issue(&rn->x, s, rn->x.recv_slot[slot], NULL, NULL));
        rn->recv_slot[s] = slot;
        rn->recv_held[slot] = s;
        rn->pending[rn->tail++] = s;
        rn->n_received++;
    } else {
        overlap_kernel_args(&rn->x, s, rn->in_ptr, rn->out_ptr);
        KRILL_TRY(be->issue(&rn->x, s, NULL, rn->in_ptr, rn->out_ptr));
    }
    rn->issued[s] = 1;
cleanup:
    return st;
}

/* Walk the steps (pipelined: with the send lookahead; sequential: each step waited for). */
static krill_status walk(runner *rn)
{
    krill_status st = KRILL_OK;
    const krill_overlap_plan *p = rn->x.plan;
    const int sequential = p->info.sequential;
    int64_t ahead = 0;
    int did = 0;
    for (int64_t s = 0; s < p->n_steps; s++) {
        if (!rn->issued[s]) KRILL_TRY(issue(rn, s));
        if (sequential) {
            KRILL_TRY(rn->x.backend->wait(&rn->x, s));
            if (p->steps[s].kind == OVERLAP_RECV) KRILL_TRY(unpack_through(rn, s));
            continue;
        }
        if (ahead <= s) ahead = s + 1;
        while (ahead < p->n_steps) {
            if (p->steps[ahead].kind != OVERLAP_SEND) ahead++;
            else if (send_ready(rn, ahead)) KRILL_TRY(issue(rn, ahead++));
            else break;
        }
        do KRILL_TRY(unpack_oldest(rn, 0, &did)); while (did);
    }
    do KRILL_TRY(unpack_oldest(rn, 1, &did)); while (did);
cleanup:
    return st;
}

/* The measured times, the lanes' busy time and the bound. */
static krill_status record(runner *rn, krill_overlap_timeline *tl)
{
    krill_status st = KRILL_OK;
    const krill_overlap_plan *p = rn->x.plan;
    double *seconds = NULL;
    KRILL_ALLOC(seconds, (size_t)p->n_steps);
    KRILL_ALLOC(tl->events, (size_t)p->n_steps);
    tl->n_events = p->n_steps;
    for (int64_t s = 0; s < p->n_steps; s++) {
        const overlap_step *step = &p->steps[s];
        krill_overlap_event *e = &tl->events[s];
        KRILL_TRY(rn->x.backend->times(&rn->x, s, &e->start, &e->end));
        e->lane = (krill_overlap_lane)step->kind;
        e->block = step->block;
        e->region = step->region;
        e->bytes = step->region >= 0 ? (double)overlap_region_bytes(&p->regions[step->region]) : 0;
        seconds[s] = e->end - e->start;
        tl->busy[e->lane] += seconds[s];
        if (e->end > tl->elapsed) tl->elapsed = e->end;
    }
    tl->bound = overlap_bound(p, seconds);
    tl->efficiency = tl->elapsed > 0 ? tl->bound / tl->elapsed : 0;
    tl->sequential = p->info.sequential;
cleanup:
    krill_free(seconds);
    return st;
}

krill_status krill_overlap_execute(krill_ctx *ctx, const krill_overlap_plan *plan,
                                   krill_overlap_timeline *timeline)
{
    krill_status st = KRILL_OK, drained;
    runner rn;
    int opened = 0;
    int32_t max_args = 1;
    memset(&rn, 0, sizeof rn);
    if (timeline) memset(timeline, 0, sizeof *timeline);
    KRILL_REQUIRE(ctx && plan, "krill_overlap_execute: NULL argument");
    rn.x.ctx = ctx;
    rn.x.plan = plan;
#ifdef KRILL_HAVE_CUDA
    rn.x.backend = krill_on_gpu(ctx) ? &overlap_gpu_backend : &overlap_cpu_backend;
    rn.x.direct = rn.x.backend == &overlap_gpu_backend && overlap_direct(plan);
#else
    rn.x.backend = &overlap_cpu_backend;
#endif
    /* a sequential plan holds one region in staging at a time each way */
    rn.x.n_send = rn.x.direct ? 0 : plan->info.sequential ? 1 : plan->opts.send_slots;
    rn.x.n_recv = rn.x.direct ? 0 : plan->info.sequential ? 1 : plan->opts.recv_slots;
    for (int32_t b = 0; b < plan->n_blocks; b++)
        if (overlap_blk_count(plan, b) > max_args) max_args = overlap_blk_count(plan, b);
    rn.x.max_args = max_args;
    KRILL_CALLOC(rn.issued, (size_t)plan->n_steps);
    KRILL_CALLOC(rn.unpacked, (size_t)plan->n_steps);
    KRILL_ALLOC(rn.recv_slot, (size_t)plan->n_steps);
    KRILL_ALLOC(rn.pending, (size_t)plan->n_steps);
    KRILL_ALLOC(rn.send_last, (size_t)plan->opts.send_slots);
    KRILL_ALLOC(rn.recv_held, (size_t)plan->opts.recv_slots);
    KRILL_ALLOC(rn.in_ptr, (size_t)max_args);
    KRILL_ALLOC(rn.out_ptr, (size_t)max_args);
    for (int k = 0; k < rn.x.n_send; k++) rn.send_last[k] = -1;
    for (int k = 0; k < rn.x.n_recv; k++) rn.recv_held[k] = -1;
    opened = 1;                              /* close frees what a failed open took */
    KRILL_TRY(rn.x.backend->open(&rn.x));
    st = walk(&rn);
    drained = rn.x.backend->drain(&rn.x);   /* after a failure too: nothing may stay queued */
    if (st == KRILL_OK) st = drained;
    if (st == KRILL_OK && timeline) st = record(&rn, timeline);
cleanup:
    if (opened) rn.x.backend->close(&rn.x);
    if (st != KRILL_OK && timeline) krill_overlap_timeline_free(timeline);
    krill_free(rn.issued);
    krill_free(rn.unpacked);
    krill_free(rn.recv_slot);
    krill_free(rn.pending);
    krill_free(rn.send_last);
    krill_free(rn.recv_held);
    krill_free(rn.in_ptr);
    krill_free(rn.out_ptr);
    return st;
}

#ifndef KRILL_HAVE_CUDA
void krill_overlap_release_staging(void)
{
    /* the CPU executor keeps no staging */
}
#endif

void krill_overlap_timeline_free(krill_overlap_timeline *timeline)
{
    if (timeline) {
        krill_free(timeline->events);
        memset(timeline, 0, sizeof *timeline);
    }
}
