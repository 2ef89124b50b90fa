/* overlap/exec.c - the executor: runs a plan's steps through a backend (exec_cpu.c,
 * gpu.cu) and the pinned staging ring, and records the timeline.
 *
 * The calling thread is the host lane. Each of the three lanes (sends, kernels, receives)
 * queues its steps in plan order, a step once the steps it waits for are queued, so the
 * lanes move independently: a kernel is queued as soon as its sends are, a receive as soon
 * as its kernel is, and a send (whose packing takes the host's time) never holds up the
 * kernels and receives behind it in the plan.
 *
 * Staged plans (pageable regions). A copy moves through the staging ring in chunks of
 * plan->chunk_bytes (overlap_chunks): the host packs chunk c of a send into the next send
 * slot once that slot's previous DMA copy has ended, then queues the copy; so the host packs
 * chunk c + 1 while the copy engine moves chunk c, and the pinned memory is send_slots +
 * recv_slots slots of at most chunk_bytes whatever the regions' sizes. A receive's chunks
 * are queued as receive slots come free, and the host unpacks each chunk into the region
 * once its copy has ended, in queue order. The host's loop: queue the kernels it can,
 * unpack the receive chunks that have landed and queue the next ones, pack one send chunk
 * if a slot is free; when none of that is possible it blocks on the earliest-queued of the
 * copies it is waiting for (a send slot, the oldest receive chunk) -- some lane's oldest
 * unqueued step can always start, so the loop never waits on nothing. A send that must see
 * an earlier receive's data in host memory (host_after) waits until that receive is
 * unpacked. Traffic per region: one host copy (pack or unpack, at memcpy speed with the
 * context's threads) and one DMA copy.
 *
 * Sequential plans run the same steps, each after the previous one has ended (a receive:
 * once unpacked); within one copy the chunks still pipeline through the ring (that is how
 * a staged copy is made, not overlap between steps).
 *
 * Direct plans (the regions in page-locked memory on a GPU, overlap_direct) have no staging:
 * each copy goes between the region itself (pitched) and the device in one call, a receive
 * needs no unpacking, and a send that must see an earlier receive's data waits for that copy
 * on the device (the backend adds the wait). Traffic per region: the DMA copy alone. */
#include <stdio.h>
#include <string.h>
#include "overlap/overlap_impl.h"

void overlap_pack_range(const krill_overlap_region *r, void *packed, size_t lo, size_t hi,
                        int to_packed, int threads)
{
    char *host = (char *)r->host, *buf = (char *)packed;   /* buf[0]: packed byte lo */
    const size_t rb = r->row_bytes, pitch = r->pitch;
    const int parallel = hi - lo >= ((size_t)512 << 10) && threads > 1;   /* a fork: ~ 5 us */
    if (pitch == rb || r->rows == 1) {   /* one contiguous run: split it among the threads */
        const int64_t chunks = parallel ? threads : 1;
        const size_t total = hi - lo;
        #pragma omp parallel for num_threads(threads) schedule(static) if (parallel)
        for (int64_t c = 0; c < chunks; c++) {
            size_t a = total / (size_t)chunks * (size_t)c;
            size_t b = c == chunks - 1 ? total : total / (size_t)chunks * (size_t)(c + 1);
            if (to_packed) memcpy(buf + a, host + lo + a, b - a);
            else memcpy(host + lo + a, buf + a, b - a);
        }
    } else {                             /* the rows [lo, hi) meets, the ends in part */
        const int64_t first = (int64_t)(lo / rb), last = (int64_t)((hi - 1) / rb);
        #pragma omp parallel for num_threads(threads) schedule(static) if (parallel)
        for (int64_t i = first; i <= last; i++) {
            const size_t row = (size_t)i * rb;
            const size_t a = lo > row ? lo : row, b = hi < row + rb ? hi : row + rb;
            char *h = host + (size_t)i * pitch + (a - row);
            if (to_packed) memcpy(buf + (a - lo), h, b - a);
            else memcpy(h, buf + (a - lo), b - a);
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

typedef struct recv_chunk {
    int64_t step, chunk, seq;    /* the receive, its chunk, the copy's queue number */
    int slot;
} recv_chunk;

typedef struct runner {
    overlap_exec x;
    char *issued;                /* per step: wholly queued (its end recorded) */
    char *unpacked;              /* per step: a receive's bytes are in host memory */
    int64_t next[KRILL_OVERLAP_LANES];   /* per lane: its next step to queue */
    int64_t chunk[KRILL_OVERLAP_LANES];  /* per copy lane: that step's next chunk */
    int64_t limit;               /* only steps before it may be queued (sequential: one) */
    int64_t seq;                 /* copies queued so far (the queue numbers) */
    int64_t n_send_chunks, n_recv_chunks;   /* chunks queued each way (the ring positions) */
    int64_t *send_seq;           /* per send slot: queue number of its last copy, -1: none */
    char *recv_held;             /* per receive slot: holds a chunk not yet unpacked */
    recv_chunk *fifo;            /* receive chunks not yet unpacked, in queue order */
    int64_t head, tail, fifo_cap;
    int64_t *chunks_left;        /* per receive step: chunks not yet unpacked */
    void **in_ptr, **out_ptr;    /* a kernel's arguments */
} runner;

/* The next step of `lane` at or after step s (n_steps if none). */
static int64_t lane_next(const krill_overlap_plan *p, int lane, int64_t s)
{
    while (s < p->n_steps && p->steps[s].kind != lane) s++;
    return s;
}

/* Can step s be queued now? (its waits queued; before the limit; a staged send: the data
   an earlier receive brings back already in host memory) */
static int can_start(const runner *rn, int64_t s)
{
    const krill_overlap_plan *p = rn->x.plan;
    const overlap_step *st = &p->steps[s];
    int ok = s < rn->limit;
    for (int32_t w = 0; w < st->n_wait && ok; w++) ok = rn->issued[p->waits[st->wait_first + w]];
    if (ok && st->host_after >= 0)
        ok = rn->x.direct ? rn->issued[st->host_after] : rn->unpacked[st->host_after];
    return ok;
}

/* Step s queued whole: the lane moves on. */
static void finish_step(runner *rn, int lane, int64_t s)
{
    rn->issued[s] = 1;
    rn->chunk[lane] = 0;
    rn->next[lane] = lane_next(rn->x.plan, lane, s + 1);
}

/* The packed bytes [lo, hi) of chunk c of region r. */
static void chunk_span(const krill_overlap_plan *p, int32_t r, int64_t c, int64_t *lo, int64_t *hi)
{
    const int64_t bytes = overlap_region_bytes(&p->regions[r]);
    *lo = c * p->chunk_bytes;
    *hi = *lo + p->chunk_bytes < bytes ? *lo + p->chunk_bytes : bytes;
}

/* Unpack the oldest receive chunk (waiting for its copy if `block`); *did: 1 if one was. */
static krill_status unpack_oldest(runner *rn, int block, int *did)
{
    krill_status st = KRILL_OK;
    const krill_overlap_plan *p = rn->x.plan;
    recv_chunk rc;
    int64_t lo, hi;
    *did = 0;
    if (rn->head == rn->tail) goto cleanup;
    rc = rn->fifo[rn->head % rn->fifo_cap];
    if (!block && !rn->x.backend->slot_done(&rn->x, OVERLAP_RECV, rc.slot)) goto cleanup;
    KRILL_TRY(rn->x.backend->slot_wait(&rn->x, OVERLAP_RECV, rc.slot));
    chunk_span(p, p->steps[rc.step].region, rc.chunk, &lo, &hi);
    overlap_pack_range(&p->regions[p->steps[rc.step].region], rn->x.recv_slot[rc.slot],
                       (size_t)lo, (size_t)hi, 0, rn->x.ctx->threads);
    rn->recv_held[rc.slot] = 0;
    if (--rn->chunks_left[rc.step] == 0) rn->unpacked[rc.step] = 1;
    rn->head++;
    *did = 1;
cleanup:
    return st;
}

/* Kernels: queue every one that can start. */
static krill_status pump_kernels(runner *rn, int *progress)
{
    krill_status st = KRILL_OK;
    int64_t s;
    while ((s = rn->next[OVERLAP_KERNEL]) < rn->x.plan->n_steps && can_start(rn, s)) {
        overlap_kernel_args(&rn->x, s, rn->in_ptr, rn->out_ptr);
        KRILL_TRY(rn->x.backend->issue(&rn->x, s, rn->in_ptr, rn->out_ptr));
        finish_step(rn, OVERLAP_KERNEL, s);
        *progress = 1;
    }
cleanup:
    return st;
}

/* Receives: unpack the chunks that have landed, then queue chunks into the free slots. */
static krill_status pump_receives(runner *rn, int *progress)
{
    krill_status st = KRILL_OK;
    const krill_overlap_plan *p = rn->x.plan;
    int did = 1;
    int64_t s;
    while (did) {
        KRILL_TRY(unpack_oldest(rn, 0, &did));
        *progress |= did;
    }
    while ((s = rn->next[OVERLAP_RECV]) < p->n_steps && can_start(rn, s)) {
        const int32_t r = p->steps[s].region;
        const int64_t c = rn->chunk[OVERLAP_RECV];
        int64_t lo, hi, n;
        int slot;
        if (rn->x.direct) {              /* the region itself: nothing to unpack */
            KRILL_TRY(rn->x.backend->issue(&rn->x, s, NULL, NULL));
            rn->unpacked[s] = 1;
            finish_step(rn, OVERLAP_RECV, s);
            *progress = 1;
            continue;
        }
        slot = (int)(rn->n_recv_chunks % rn->x.n_recv);
        if (rn->recv_held[slot]) break;  /* its chunk is not unpacked yet */
        n = overlap_chunks(p, r);
        chunk_span(p, r, c, &lo, &hi);
        if (c == 0) rn->chunks_left[s] = n;
        KRILL_TRY(rn->x.backend->copy(&rn->x, s, slot, lo, hi - lo, c == 0, c == n - 1));
        rn->recv_held[slot] = 1;
        rn->fifo[rn->tail++ % rn->fifo_cap] = (recv_chunk){s, c, rn->seq++, slot};
        rn->n_recv_chunks++;
        rn->chunk[OVERLAP_RECV]++;
        if (c == n - 1) finish_step(rn, OVERLAP_RECV, s);
        *progress = 1;
    }
cleanup:
    return st;
}

/* Sends: pack and queue one chunk of the next send if its slot is free (direct: the whole
   copy). *slot_busy: the slot the send waits for, or -1. */
static krill_status pump_send(runner *rn, int *progress, int *slot_busy)
{
    krill_status st = KRILL_OK;
    const krill_overlap_plan *p = rn->x.plan;
    const int64_t s = rn->next[OVERLAP_SEND];
    int32_t r;
    int64_t c, n, lo, hi;
    int slot;
    *slot_busy = -1;
    if (s >= p->n_steps || !can_start(rn, s)) goto cleanup;
    if (rn->x.direct) {
        KRILL_TRY(rn->x.backend->issue(&rn->x, s, NULL, NULL));
        finish_step(rn, OVERLAP_SEND, s);
        *progress = 1;
        goto cleanup;
    }
    slot = (int)(rn->n_send_chunks % rn->x.n_send);
    if (rn->send_seq[slot] >= 0 && !rn->x.backend->slot_done(&rn->x, OVERLAP_SEND, slot)) {
        *slot_busy = slot;
        goto cleanup;
    }
    r = p->steps[s].region;
    c = rn->chunk[OVERLAP_SEND];
    n = overlap_chunks(p, r);
    chunk_span(p, r, c, &lo, &hi);
    overlap_pack_range(&p->regions[r], rn->x.send_slot[slot], (size_t)lo, (size_t)hi, 1,
                       rn->x.ctx->threads);
    KRILL_TRY(rn->x.backend->copy(&rn->x, s, slot, lo, hi - lo, c == 0, c == n - 1));
    rn->send_seq[slot] = rn->seq++;
    rn->n_send_chunks++;
    rn->chunk[OVERLAP_SEND]++;
    if (c == n - 1) finish_step(rn, OVERLAP_SEND, s);
    *progress = 1;
cleanup:
    return st;
}

/* Sequential: step limit - 1 has ended (a staged receive: is unpacked; a direct one's copy
   is its end); move the limit on. */
static int step_complete(runner *rn)
{
    const int64_t s = rn->limit - 1;
    const krill_overlap_plan *p = rn->x.plan;
    return rn->issued[s] && (p->steps[s].kind == OVERLAP_RECV && !rn->x.direct
                                 ? rn->unpacked[s] : rn->x.backend->done(&rn->x, s));
}

/* 1 once every step receive s waits for (its kernel) has ended: its chunks can land. */
static int recv_can_land(runner *rn, int64_t s)
{
    const krill_overlap_plan *p = rn->x.plan;
    const overlap_step *st = &p->steps[s];
    int ok = 1;
    for (int32_t w = 0; w < st->n_wait && ok; w++)
        ok = rn->x.backend->done(&rn->x, p->waits[st->wait_first + w]);
    return ok;
}

/* Nothing could be queued: wait for a copy the host is held up by -- a send slot, or the
   oldest receive chunk: the earlier queued of the two, but never a receive whose kernel is
   still running while a send slot would free within one chunk's copy (the next block's
   sends would stand still for the whole kernel) -- or, sequentially, for the step before
   the limit. */
static krill_status block_once(runner *rn, int send_slot)
{
    krill_status st = KRILL_OK;
    const int have_recv = rn->head < rn->tail;
    const int64_t recv_seq = have_recv ? rn->fifo[rn->head % rn->fifo_cap].seq : -1;
    int did = 0;
    if (send_slot >= 0 &&
        (!have_recv || rn->send_seq[send_slot] < recv_seq ||
         !recv_can_land(rn, rn->fifo[rn->head % rn->fifo_cap].step))) {
        KRILL_TRY(rn->x.backend->slot_wait(&rn->x, OVERLAP_SEND, send_slot));
    } else if (have_recv) {
        KRILL_TRY(unpack_oldest(rn, 1, &did));
    } else if (rn->limit <= rn->x.plan->n_steps && rn->issued[rn->limit - 1]) {
        KRILL_TRY(rn->x.backend->wait(&rn->x, rn->limit - 1));
    } else {
        st = krill_error(KRILL_ERR_INTERNAL, "overlap: the executor has nothing to wait for "
                         "with steps %lld, %lld and %lld unqueued", (long long)rn->next[0],
                         (long long)rn->next[1], (long long)rn->next[2]);
    }
cleanup:
    return st;
}

/* Queue every step (see the file comment), then unpack what is left. */
static krill_status walk(runner *rn)
{
    krill_status st = KRILL_OK;
    const krill_overlap_plan *p = rn->x.plan;
    const int sequential = p->info.sequential;
    int did = 1;
    rn->limit = sequential ? 1 : p->n_steps;
    for (int l = 0; l < KRILL_OVERLAP_LANES; l++) rn->next[l] = lane_next(p, l, 0);
    while (rn->next[0] < p->n_steps || rn->next[1] < p->n_steps || rn->next[2] < p->n_steps) {
        int progress = 0, send_slot = -1;
        KRILL_TRY(pump_kernels(rn, &progress));
        KRILL_TRY(pump_receives(rn, &progress));
        KRILL_TRY(pump_send(rn, &progress, &send_slot));
        if (sequential && rn->limit < p->n_steps && step_complete(rn)) rn->limit++, progress = 1;
        if (!progress) KRILL_TRY(block_once(rn, send_slot));
    }
    while (did) KRILL_TRY(unpack_oldest(rn, 1, &did));
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
    rn.x.n_send = rn.x.direct ? 0 : plan->opts.send_slots;
    rn.x.n_recv = rn.x.direct ? 0 : plan->opts.recv_slots;
    for (int32_t b = 0; b < plan->n_blocks; b++)
        if (overlap_blk_count(plan, b) > max_args) max_args = overlap_blk_count(plan, b);
    rn.x.max_args = max_args;
    rn.fifo_cap = rn.x.n_recv > 0 ? rn.x.n_recv : 1;   /* a held slot per pending chunk */
    KRILL_CALLOC(rn.issued, (size_t)plan->n_steps);
    KRILL_CALLOC(rn.unpacked, (size_t)plan->n_steps);
    KRILL_CALLOC(rn.chunks_left, (size_t)plan->n_steps);
    KRILL_ALLOC(rn.fifo, (size_t)rn.fifo_cap);
    KRILL_ALLOC(rn.send_seq, (size_t)plan->opts.send_slots);
    KRILL_CALLOC(rn.recv_held, (size_t)plan->opts.recv_slots);
    KRILL_ALLOC(rn.in_ptr, (size_t)max_args);
    KRILL_ALLOC(rn.out_ptr, (size_t)max_args);
    for (int k = 0; k < plan->opts.send_slots; k++) rn.send_seq[k] = -1;
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
    krill_free(rn.chunks_left);
    krill_free(rn.fifo);
    krill_free(rn.send_seq);
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
