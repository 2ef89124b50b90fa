/* overlap/predict.c - the planner's prediction (plan.c's part 4) and the lower bound.
 *
 * Pipelined: a step starts when its waits have ended and its lane is free (copies in both
 * directions share one lane when the model says they do not overlap; everything shares one
 * when copies do not overlap kernels). Staged copies move in chunks (exec.c): the host (the
 * executor's calling thread) packs a send's chunk into the next send slot once the slot's
 * previous copy has ended, and the chunk's copy starts once it is packed and the previous
 * chunk's copy has ended; a receive's chunk is copied once its slot's previous chunk was
 * unpacked, and the host unpacks chunks in order: as soon as a chunk has landed if the host
 * is free by then, or when it would otherwise wait: when the slot is needed again, when a
 * send needs the region in host memory, or at the end. (The executor's receive lane stops
 * at a held slot and lets the host pack later sends meanwhile; a simulation that let those
 * unpacks not hold the host predicted receive-heavy splits better than they ran -- H200,
 * 79dcd30: 512:512:16384 in two 256-row strips 65.9 ms against 3.4 unsplit -- so the host
 * waits here, which errs towards fewer, larger blocks.) A chunk's copy takes its share of the step's model time
 * (bytes / bandwidth and its latency); its pack or unpack takes the host host_copy_latency
 * + bytes / host_copy_bandwidth, + host_copy_row_seconds a row when the region's rows are
 * pitched. The host also queues every kernel and every chunk (issue_seconds each: the API
 * calls), one thing at a time in the order the steps come, and nothing starts on the
 * device before the host has queued it. Sequential: each step, packing and unpacking
 * included, starts when the previous one has ended; so does every step of the CPU
 * executor (threads for lanes) when its model says copies do not overlap kernels, as its
 * packing then competes for the kernel's cores too. Direct plans (page-locked regions,
 * overlap_direct) copy each region whole and pack nothing: their host lane only queues, no
 * slot limits how far sends run ahead, and a send that must see a receive's data waits on
 * the device for that receive's end. */
#include <math.h>
#include <string.h>
#include "overlap/overlap_impl.h"

static int sim_lane(const krill_overlap_model *m, int kind)
{
    return !m->copy_kernel_overlap ? 0 : (!m->copies_overlap && kind == OVERLAP_RECV) ? 0 : kind;
}

typedef struct pending_chunk {
    int64_t step;
    double seconds, landed;      /* its unpack's host time, its copy's end */
    int slot;
} pending_chunk;

typedef struct sim {
    const krill_overlap_plan *p;
    double host_bw, host_lat, host_row, host_free, total;
    double issue;                /* the host's time to queue a step or a chunk */
    double *end, *unpacked;      /* per step; unpacked < 0: a receive not yet unpacked */
    int64_t *left;               /* per receive step: chunks not yet unpacked */
    pending_chunk *fifo;         /* receive chunks to unpack, in issue order (a ring) */
    int64_t head, tail, cap;
    char *held;                  /* per receive slot: holds a chunk not yet unpacked */
    double *slot_free;           /* per receive slot: when its last chunk was unpacked */
} sim;

/* The host unpacks the oldest pending chunk, once it has landed. `wait`: the host has
   nothing else to do until then; else it does later work in the meantime (its clock
   advances by the unpack alone). */
static void unpack_oldest(sim *m, int wait)
{
    const pending_chunk *c = &m->fifo[m->head++ % m->cap];
    const double end = (m->host_free > c->landed ? m->host_free : c->landed) + c->seconds;
    m->host_free = wait ? end : m->host_free + c->seconds;
    m->held[c->slot] = 0;
    m->slot_free[c->slot] = end;
    if (--m->left[c->step] == 0) m->unpacked[c->step] = end;
    if (end > m->total) m->total = end;
}

static void unpack_through(sim *m, int64_t s)
{
    while (m->unpacked[s] < 0 && m->head < m->tail) unpack_oldest(m, 1);
}

/* Chunk c's bytes of a copy of `bytes` in chunks of `chunk` (n chunks). */
static double chunk_bytes(double bytes, int64_t chunk, int64_t c, int64_t n)
{
    return c < n - 1 ? (double)chunk : bytes - (double)chunk * (double)(n - 1);
}

/* The host's time to pack or unpack b bytes of region r. */
static double pack_seconds(const sim *m, const krill_overlap_region *r, double b)
{
    const int pitched = r->rows > 1 && r->pitch != r->row_bytes;
    return m->host_lat + b / m->host_bw + (pitched ? b / (double)r->row_bytes * m->host_row : 0);
}

krill_status overlap_plan_simulate(const krill_overlap_plan *p, int sequential, double *elapsed,
                                   double *step_end)
{
    krill_status st = KRILL_OK;
    const krill_overlap_model *mod = &p->model;
    /* direct copies (page-locked regions): no packing, the host lane costs nothing */
    const int direct = overlap_direct(p), packs = mod->host_copy_bandwidth > 0 && !direct;
    const int n_send = p->opts.send_slots, n_recv = p->opts.recv_slots;
    sim m = {p, packs ? mod->host_copy_bandwidth : INFINITY, packs ? mod->host_copy_latency : 0,
             packs ? mod->host_copy_row_seconds : 0, 0, 0, mod->issue_seconds, NULL, NULL, NULL,
             NULL, 0, 0, n_recv, NULL, NULL};
    double *send_free = NULL, lane_free[KRILL_OVERLAP_LANES] = {0, 0, 0}, last = 0;
    int64_t n_sent = 0, n_recvd = 0;
    /* the CPU executor's lanes and packing share the cores its kernel uses unless the
       model says copies overlap kernels: then nothing overlaps */
    if (mod->device < 0 && !mod->copy_kernel_overlap) sequential = 1;
    KRILL_ALLOC(m.end, (size_t)p->n_steps + 1);
    KRILL_ALLOC(m.unpacked, (size_t)p->n_steps + 1);
    KRILL_CALLOC(m.left, (size_t)p->n_steps + 1);
    KRILL_ALLOC(m.fifo, (size_t)n_recv);
    KRILL_CALLOC(m.held, (size_t)n_recv);
    KRILL_CALLOC(m.slot_free, (size_t)n_recv);
    KRILL_CALLOC(send_free, (size_t)n_send);
    for (int64_t i = 0; i < p->n_steps; i++) {
        const overlap_step *s = &p->steps[i];
        const int lane = sim_lane(mod, s->kind);
        const double bytes = s->region >= 0 ? (double)overlap_region_bytes(&p->regions[s->region]) : 0;
        const int64_t n = s->region >= 0 && !direct ? overlap_chunks(p, s->region) : 1;
        double ready = sequential ? last : 0, at;
        if (sequential && m.host_free < last) m.host_free = last;
        while (m.head < m.tail && m.fifo[m.head % m.cap].landed <= m.host_free) unpack_oldest(&m, 1);
        for (int32_t w = 0; w < s->n_wait; w++)
            if (m.end[p->waits[s->wait_first + w]] > ready) ready = m.end[p->waits[s->wait_first + w]];
        if (ready < lane_free[lane]) ready = lane_free[lane];
        m.unpacked[i] = -1;
        at = ready;
        if (s->kind == OVERLAP_SEND) {
            if (s->host_after >= 0) unpack_through(&m, s->host_after);
            /* direct: the copy waits on the device for the receive bringing its data */
            if (direct && s->host_after >= 0 && at < m.end[s->host_after]) at = m.end[s->host_after];
            for (int64_t c = 0; c < n; c++) {
                const double b = chunk_bytes(bytes, p->chunk_bytes, c, n);
                double *slot = direct ? NULL : &send_free[n_sent++ % n_send];
                if (slot && m.host_free < *slot) m.host_free = *slot;
                m.host_free += pack_seconds(&m, &p->regions[s->region], b) + m.issue;
                if (at < m.host_free) at = m.host_free;
                at += s->seconds * (bytes > 0 ? b / bytes : 1);
                if (slot) *slot = at;
            }
        } else if (s->kind == OVERLAP_RECV) {
            m.left[i] = n;
            for (int64_t c = 0; c < n && !direct; c++) {
                const double b = chunk_bytes(bytes, p->chunk_bytes, c, n);
                const int slot = (int)(n_recvd++ % n_recv);
                while (m.held[slot] && m.head < m.tail) unpack_oldest(&m, 1);  /* its previous chunk */
                m.host_free += m.issue;
                if (at < m.host_free) at = m.host_free;
                if (at < m.slot_free[slot]) at = m.slot_free[slot];
                at += s->seconds * (bytes > 0 ? b / bytes : 1);
                m.fifo[m.tail++ % m.cap] =
                    (pending_chunk){i, pack_seconds(&m, &p->regions[s->region], b), at, slot};
                m.held[slot] = 1;
            }
            if (direct) {
                m.host_free += m.issue;
                if (at < m.host_free) at = m.host_free;
                at += s->seconds;
                m.unpacked[i] = at;
            } else if (sequential) {
                unpack_through(&m, i);
            }
        } else {
            m.host_free += m.issue;
            if (at < m.host_free) at = m.host_free;
            at += s->seconds;
        }
        m.end[i] = at;
        lane_free[lane] = at;
        last = m.unpacked[i] > at ? m.unpacked[i] : at;
        if (last > m.total) m.total = last;
    }
    while (m.head < m.tail) unpack_oldest(&m, 1);
    *elapsed = m.total;
    if (step_end) memcpy(step_end, m.end, (size_t)p->n_steps * sizeof *step_end);
cleanup:
    krill_free(m.end);
    krill_free(m.unpacked);
    krill_free(m.left);
    krill_free(m.fifo);
    krill_free(m.held);
    krill_free(m.slot_free);
    krill_free(send_free);
    return st;
}

double overlap_bound(const krill_overlap_plan *p, const double *step_seconds)
{
    double lane[KRILL_OVERLAP_LANES] = {0, 0, 0}, fill = 0, first_kernel = -1, drain = 0;
    double kmin = INFINITY, bound;
    const int32_t last_block = p->order[p->n_blocks - 1];
    for (int64_t i = 0; i < p->n_steps; i++) {
        const overlap_step *s = &p->steps[i];
        lane[s->kind] += step_seconds[i];
        if (s->kind == OVERLAP_KERNEL && first_kernel < 0) first_kernel = step_seconds[i];
        if (s->kind == OVERLAP_KERNEL && step_seconds[i] < kmin) kmin = step_seconds[i];
        if (s->kind == OVERLAP_SEND && first_kernel < 0) fill += step_seconds[i];
        if (s->kind == OVERLAP_RECV && s->block == last_block) drain += step_seconds[i];
    }
    bound = lane[OVERLAP_SEND] + kmin;
    if (fill + lane[OVERLAP_KERNEL] + drain > bound) bound = fill + lane[OVERLAP_KERNEL] + drain;
    if (fill + first_kernel + lane[OVERLAP_RECV] > bound)
        bound = fill + first_kernel + lane[OVERLAP_RECV];
    return bound;
}

