/* overlap/predict.c - the planner's prediction (plan.c's part 4) and the lower bound.
 *
 * Pipelined: a step starts when its waits have ended and its lane is free (copies in both
 * directions share one lane when the model says they do not overlap; everything shares one
 * when copies do not overlap kernels). The host (the executor's calling thread) packs and
 * unpacks one region at a time: a send is packed into a staging slot once the slot's
 * previous send has ended; a receive is unpacked when the executor would otherwise wait:
 * when its slot is needed again, when a send needs the region in host memory, or at the
 * end -- or as soon as it has ended if the host is idle by then. Sequential: each step,
 * packing and unpacking included, starts when the previous one has ended; so does every
 * step of the CPU executor (threads for lanes) when its model says copies do not overlap
 * kernels, as its packing then competes for the kernel's cores too. Direct plans (page-locked
 * regions, overlap_direct) pack nothing: their host lane takes no time. */
#include <math.h>
#include "overlap/overlap_impl.h"

static int sim_lane(const krill_overlap_model *m, int kind)
{
    return !m->copy_kernel_overlap ? 0 : (!m->copies_overlap && kind == OVERLAP_RECV) ? 0 : kind;
}

typedef struct sim {
    const krill_overlap_plan *p;
    double host_bw, host_lat, host_free, total;   /* a pack: host_lat + bytes / host_bw */
    double *end, *unpacked;      /* per step; unpacked < 0: a receive not yet unpacked */
    int64_t *pending, head, tail;    /* receives to unpack, in issue order */
} sim;

/* The host unpacks the oldest pending receive (after it has ended). */
static void unpack_oldest(sim *m)
{
    const int64_t s = m->pending[m->head++];
    const double bytes = (double)overlap_region_bytes(&m->p->regions[m->p->steps[s].region]);
    if (m->host_free < m->end[s]) m->host_free = m->end[s];
    m->host_free += m->host_lat + bytes / m->host_bw;
    m->unpacked[s] = m->host_free;
    if (m->host_free > m->total) m->total = m->host_free;
}

static void unpack_through(sim *m, int64_t s)
{
    while (m->unpacked[s] < 0 && m->head < m->tail) unpack_oldest(m);
}

krill_status overlap_plan_simulate(const krill_overlap_plan *p, int sequential, double *elapsed)
{
    krill_status st = KRILL_OK;
    const krill_overlap_model *mod = &p->model;
    /* direct copies (page-locked regions): no packing, the host lane costs nothing */
    const int packs = mod->host_copy_bandwidth > 0 && !overlap_direct(p);
    sim m = {p, packs ? mod->host_copy_bandwidth : INFINITY, packs ? mod->host_copy_latency : 0,
             0, 0, NULL, NULL, NULL, 0, 0};
    double *send_free = NULL, lane_free[KRILL_OVERLAP_LANES] = {0, 0, 0}, last = 0;
    int64_t *recv_held = NULL, n_sent = 0, n_recv = 0;
    /* the CPU executor's lanes and packing share the cores its kernel uses unless the
       model says copies overlap kernels: then nothing overlaps */
    if (mod->device < 0 && !mod->copy_kernel_overlap) sequential = 1;
    KRILL_ALLOC(m.end, (size_t)p->n_steps + 1);
    KRILL_ALLOC(m.unpacked, (size_t)p->n_steps + 1);
    KRILL_ALLOC(m.pending, (size_t)p->n_steps + 1);
    KRILL_CALLOC(send_free, (size_t)p->opts.send_slots);
    KRILL_ALLOC(recv_held, (size_t)p->opts.recv_slots);
    for (int k = 0; k < p->opts.recv_slots; k++) recv_held[k] = -1;
    for (int64_t i = 0; i < p->n_steps; i++) {
        const overlap_step *s = &p->steps[i];
        const int lane = sim_lane(mod, s->kind);
        const double bytes = s->region >= 0 ? (double)overlap_region_bytes(&p->regions[s->region]) : 0;
        double ready = sequential ? last : 0;
        if (sequential && m.host_free < last) m.host_free = last;
        while (m.head < m.tail && m.end[m.pending[m.head]] <= m.host_free) unpack_oldest(&m);
        for (int32_t w = 0; w < s->n_wait; w++)
            if (m.end[p->waits[s->wait_first + w]] > ready) ready = m.end[p->waits[s->wait_first + w]];
        if (ready < lane_free[lane]) ready = lane_free[lane];
        m.unpacked[i] = -1;
        if (s->kind == OVERLAP_SEND) {
            double *slot = &send_free[n_sent++ % p->opts.send_slots];
            if (s->host_after >= 0) unpack_through(&m, s->host_after);
            if (m.host_free < *slot) m.host_free = *slot;
            m.host_free += m.host_lat + bytes / m.host_bw;   /* the pack */
            if (ready < m.host_free) ready = m.host_free;
            m.end[i] = ready + s->seconds;
            *slot = m.end[i];
        } else if (s->kind == OVERLAP_RECV) {
            int64_t *slot = &recv_held[n_recv++ % p->opts.recv_slots];
            if (*slot >= 0) {                                /* its previous content */
                unpack_through(&m, *slot);
                if (ready < m.unpacked[*slot]) ready = m.unpacked[*slot];
            }
            m.end[i] = ready + s->seconds;
            m.pending[m.tail++] = i;
            *slot = i;
            if (sequential) unpack_through(&m, i);
        } else {
            m.end[i] = ready + s->seconds;
        }
        lane_free[lane] = m.end[i];
        last = m.unpacked[i] > m.end[i] ? m.unpacked[i] : m.end[i];
        if (last > m.total) m.total = last;
    }
    while (m.head < m.tail) unpack_oldest(&m);
    *elapsed = m.total;
cleanup:
    krill_free(m.end);
    krill_free(m.unpacked);
    krill_free(m.pending);
    krill_free(send_free);
    krill_free(recv_held);
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

