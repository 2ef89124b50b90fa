/* overlap/steps.c - the planner's placement and steps (plan.c's parts 2 and 3): walking the
 * block order, place each region a block needs in an arena of `memory` device bytes and
 * emit the block's steps with their waits.
 *
 * Placement: the block's missing regions, largest first, go first-fit; when one does not
 * fit, the resident region used furthest in the future (or never again) that the block
 * does not use is evicted (Belady's rule: exact, the order is known), preferring regions
 * whose bytes are free in time. Reused bytes wait for the old occupant's last kernel and
 * receive, and the new send follows; so on the kernel-bound clock (the model's kernel
 * seconds of the blocks placed so far) a victim is in time when its last kernel's end plus
 * its receive plus the new send is at most the clock at this block's kernel. Belady alone
 * picks, in a cyclic sweep (every tile of out-of-core APSP once a round), the region the
 * previous block just wrote -- used again only next round -- and the kernel lane then waits
 * for its receive and the send behind it (recv + send per block, about a kernel's time at
 * blocks of 2048). The preference applies only while the sends keep ahead of the kernels
 * (the send lane's model seconds so far at most the kernel clock), since evicting a region
 * used sooner may send it again: where the bus is the bottleneck, fewest bytes (Belady)
 * win. If eviction still leaves no room (the free bytes are fragmented around the block's
 * own resident regions), the arena is
 * emptied and all the block's regions are placed afresh from offset 0, which succeeds
 * whenever their sizes (rounded to OVERLAP_ALIGN) sum to at most `memory`; its inputs are
 * then sent again. Reused bytes make the new occupant's send (or, for a region the block
 * only writes, its kernel) wait for the old occupant's last kernel and receive.
 *
 * Steps per block: a send per input placed afresh (after the region's last receive has
 * reached host memory: host_after), the kernel (after those sends, and after earlier
 * receives of the regions it writes, which must have read them first), a receive per
 * output (write-through: host memory is current whenever a region is evicted). */
#include <math.h>
#include <string.h>
#include "overlap/overlap_impl.h"

typedef struct span {            /* device bytes [offset, offset + bytes) */
    int64_t offset, bytes;
    int32_t region;              /* -1 for a freed span (a "dead" one) */
    int64_t release[2];          /* steps that last used it: kernel, receive (-1: none) */
} span;

typedef struct placer {
    krill_overlap_plan *p;
    span *live, *dead;           /* live: sorted by offset */
    int64_t n_live, n_dead, cap_dead, cap_waits, peak;
    int64_t *where;              /* region -> index in live, -1 if not resident */
    int64_t *release_kernel, *last_recv;   /* per region: its last kernel and receive */
    int64_t *use_first, *use_pos;  /* CSR: the positions (in the order) each region is used */
    int64_t *use_cursor, *next_use;  /* per region: its next entry in use_pos, and that position */
    char *fresh;                 /* per region: placed for the current block */
    int32_t *list;               /* scratch: a block's regions */
    /* the kernel-bound clock: model seconds of the kernels and sends placed so far, and per
       region when its bytes are free (its last kernel's end, plus its receive if written) */
    double kernel_clock, send_clock, *free_at;
} placer;

static int64_t aligned_bytes(const krill_overlap_plan *p, int32_t r)
{
    return (overlap_region_bytes(&p->regions[r]) + OVERLAP_ALIGN - 1) / OVERLAP_ALIGN *
           OVERLAP_ALIGN;
}

static krill_status push_wait(placer *pc, int64_t step)
{
    krill_status st = KRILL_OK;
    krill_overlap_plan *p = pc->p;
    overlap_step *s = &p->steps[p->n_steps];
    if (step < 0) goto cleanup;
    if (s->wait_first + s->n_wait >= pc->cap_waits) {
        int64_t *grown = NULL;
        KRILL_ALLOC(grown, (size_t)pc->cap_waits * 2);
        memcpy(grown, p->waits, (size_t)pc->cap_waits * sizeof *grown);
        krill_free(p->waits);
        p->waits = grown;
        pc->cap_waits *= 2;
    }
    p->waits[s->wait_first + s->n_wait++] = step;
cleanup:
    return st;
}

/* The model's time of copying region r: latency + bytes / bandwidth, and in a direct plan
 * the per-row cost of a pitched copy (the DMA engine walks the rows); a staged copy is
 * contiguous (its packing is the host's) and pays the latency once per chunk. */
static double copy_seconds(const krill_overlap_plan *p, int32_t r, double latency,
                           double bandwidth, double row_seconds)
{
    const krill_overlap_region *reg = &p->regions[r];
    const int direct = overlap_direct(p);
    const int pitched = direct && reg->rows > 1 && reg->pitch != reg->row_bytes;
    return latency * (direct ? 1.0 : (double)overlap_chunks(p, r)) +
           (double)overlap_region_bytes(reg) / bandwidth +
           (pitched ? (double)reg->rows * row_seconds : 0);
}

/* Begin step p->n_steps (its waits follow the previous step's in p->waits). */
static void step_begin(placer *pc, overlap_step_kind kind, int32_t block, int32_t region)
{
    krill_overlap_plan *p = pc->p;
    overlap_step *s = &p->steps[p->n_steps];
    int64_t wait_first = p->n_steps > 0 ? s[-1].wait_first + s[-1].n_wait : 0;
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->block = block;
    s->region = region;
    s->wait_first = wait_first;
    s->host_after = -1;
    s->args_first = -1;
}

/* Waits on the dead spans [offset, offset + bytes) overlaps; spans it covers are dropped
 * (a later occupant of their bytes waits on this one, which waited on them). */
static krill_status wait_on_dead(placer *pc, int64_t offset, int64_t bytes)
{
    krill_status st = KRILL_OK;
    int64_t kept = 0;
    for (int64_t k = 0; k < pc->n_dead; k++) {
        span d = pc->dead[k];
        int overlaps = d.offset < offset + bytes && offset < d.offset + d.bytes;
        if (overlaps) {
            KRILL_TRY(push_wait(pc, d.release[0]));
            KRILL_TRY(push_wait(pc, d.release[1]));
        }
        if (!(overlaps && d.offset >= offset && d.offset + d.bytes <= offset + bytes))
            pc->dead[kept++] = d;
    }
    pc->n_dead = kept;
cleanup:
    return st;
}

/* First-fit offset for `bytes` in the arena, or -1. */
static int64_t first_fit(const placer *pc, int64_t bytes)
{
    int64_t at = 0, found = -1;
    for (int64_t k = 0; k <= pc->n_live && found < 0; k++) {
        int64_t end = k < pc->n_live ? pc->live[k].offset : (int64_t)pc->p->opts.memory;
        if (end - at >= bytes) found = at;
        if (k < pc->n_live) at = pc->live[k].offset + pc->live[k].bytes;
    }
    return found;
}

/* Free the live span k; its bytes become a dead span that later occupants wait on. */
static krill_status evict(placer *pc, int64_t k)
{
    krill_status st = KRILL_OK;
    span s = pc->live[k];
    const int32_t r = s.region;
    if (pc->n_dead == pc->cap_dead) {
        span *grown = NULL;
        KRILL_ALLOC(grown, (size_t)pc->cap_dead * 2);
        memcpy(grown, pc->dead, (size_t)pc->n_dead * sizeof *grown);
        krill_free(pc->dead);
        pc->dead = grown;
        pc->cap_dead *= 2;
    }
    s.region = -1;
    s.release[0] = pc->release_kernel[r];
    s.release[1] = pc->last_recv[r];
    pc->dead[pc->n_dead++] = s;
    memmove(&pc->live[k], &pc->live[k + 1], (size_t)(pc->n_live - k - 1) * sizeof *pc->live);
    pc->n_live--;
    pc->where[r] = -1;
    for (int64_t q = k; q < pc->n_live; q++) pc->where[pc->live[q].region] = q;
cleanup:
    return st;
}

/* Place region r for block b, evicting regions b does not use: those free in time first
 * (while the sends keep ahead), then furthest next use first (see the opening comment).
 * KRILL_ERR_DEVICE_ALLOC when no such region is left and r still does not fit. */
static krill_status place(placer *pc, int32_t r, int32_t b)
{
    krill_status st = KRILL_OK;
    const krill_overlap_plan *p = pc->p;
    const krill_overlap_model *m = &p->model;
    const int64_t bytes = aligned_bytes(p, r);
    const double send = copy_seconds(p, r, m->h2d_latency, m->h2d_bandwidth, m->h2d_row_seconds);
    const int slack = pc->send_clock + send <= pc->kernel_clock;
    int64_t at, k;
    while ((at = first_fit(pc, bytes)) < 0) {
        int64_t victim = -1, victim_next = -1;
        int victim_in_time = 0;
        for (k = 0; k < pc->n_live; k++) {
            int32_t v = pc->live[k].region;
            int in_time = slack && pc->free_at[v] + send <= pc->kernel_clock;
            if (!overlap_blk_uses(p, b, v) && (in_time > victim_in_time ||
                (in_time == victim_in_time && pc->next_use[v] > victim_next)))
                victim = k, victim_next = pc->next_use[v], victim_in_time = in_time;
        }
        if (victim < 0) {
            st = krill_error(KRILL_ERR_DEVICE_ALLOC, "overlap: block %d does not fit in the "
                             "plan's %.0f bytes of device memory (region %d needs %lld more)",
                             b, p->opts.memory, r, (long long)bytes);
            goto cleanup;
        }
        KRILL_TRY(evict(pc, victim));
    }
    for (k = pc->n_live; k > 0 && pc->live[k - 1].offset > at; k--) pc->live[k] = pc->live[k - 1];
    pc->live[k] = (span){at, bytes, r, {-1, -1}};
    pc->n_live++;
    for (int64_t q = k; q < pc->n_live; q++) pc->where[pc->live[q].region] = q;
    if (at + bytes > pc->peak) pc->peak = at + bytes;
    pc->fresh[r] = 1;
cleanup:
    return st;
}

/* pc->list = block b's regions (each once) that are not resident (all of them when `all`),
 * largest first; returns their count. */
static int32_t missing_regions(placer *pc, int32_t b, int all)
{
    const krill_overlap_plan *p = pc->p;
    int32_t n = 0;
    for (int32_t k = 0; k < overlap_blk_count(p, b); k++) {
        int32_t r = overlap_blk_region(p, b, k), dup = 0;
        for (int32_t q = 0; q < n; q++) dup |= pc->list[q] == r;
        if (dup || (!all && pc->where[r] >= 0)) continue;
        int32_t q = n++;          /* insertion by size, descending */
        for (; q > 0 && aligned_bytes(p, pc->list[q - 1]) < aligned_bytes(p, r); q--)
            pc->list[q] = pc->list[q - 1];
        pc->list[q] = r;
    }
    return n;
}

/* Make every region of block b resident (see the opening comment). */
static krill_status place_block(placer *pc, int32_t b)
{
    krill_status st = KRILL_OK;
    const krill_overlap_plan *p = pc->p;
    int32_t n = missing_regions(pc, b, 0);
    int64_t total = 0;
    for (int32_t k = 0; k < overlap_blk_count(p, b); k++) pc->fresh[overlap_blk_region(p, b, k)] = 0;
    for (int32_t k = 0; k < n && st == KRILL_OK; k++) st = place(pc, pc->list[k], b);
    if (st != KRILL_ERR_DEVICE_ALLOC) goto cleanup;
    krill_clear_error();                         /* fragmented: empty the arena */
    st = KRILL_OK;
    while (pc->n_live > 0) KRILL_TRY(evict(pc, 0));
    n = missing_regions(pc, b, 1);
    for (int32_t k = 0; k < n; k++) total += aligned_bytes(p, pc->list[k]);
    if (total > (int64_t)p->opts.memory) {
        st = krill_error(KRILL_ERR_DEVICE_ALLOC, "overlap: block %d needs %lld bytes of device "
                         "memory, more than the plan's %.0f", b, (long long)total,
                         p->opts.memory);
        goto cleanup;
    }
    for (int32_t k = 0; k < n; k++) KRILL_TRY(place(pc, pc->list[k], b));
cleanup:
    return st;
}

/* Positions (in the order) at which each region is used, for Belady's rule. */
static krill_status index_uses(placer *pc)
{
    krill_status st = KRILL_OK;
    const krill_overlap_plan *p = pc->p;
    int64_t *fill = NULL;
    KRILL_CALLOC(pc->use_first, (size_t)p->n_regions + 1);
    for (int32_t pos = 0; pos < p->n_blocks; pos++)
        for (int32_t k = 0; k < overlap_blk_count(p, p->order[pos]); k++)
            pc->use_first[overlap_blk_region(p, p->order[pos], k) + 1]++;
    for (int32_t r = 0; r < p->n_regions; r++) pc->use_first[r + 1] += pc->use_first[r];
    KRILL_ALLOC(pc->use_pos, (size_t)pc->use_first[p->n_regions] + 1);
    KRILL_ALLOC(fill, (size_t)p->n_regions + 1);
    memcpy(fill, pc->use_first, (size_t)p->n_regions * sizeof *fill);
    for (int32_t pos = 0; pos < p->n_blocks; pos++)      /* ascending per region */
        for (int32_t k = 0; k < overlap_blk_count(p, p->order[pos]); k++)
            pc->use_pos[fill[overlap_blk_region(p, p->order[pos], k)]++] = pos;
    KRILL_ALLOC(pc->next_use, (size_t)p->n_regions + 1);
    KRILL_ALLOC(pc->use_cursor, (size_t)p->n_regions + 1);
    for (int32_t r = 0; r < p->n_regions; r++) {         /* the first use, INT64_MAX if none */
        pc->use_cursor[r] = pc->use_first[r];
        pc->next_use[r] = pc->use_first[r] < pc->use_first[r + 1] ? pc->use_pos[pc->use_first[r]]
                                                                 : INT64_MAX;
    }
cleanup:
    krill_free(fill);
    return st;
}

/* After the block at position pos: region r's next use moves past pos. */
static void advance_uses(placer *pc, int32_t r, int64_t pos)
{
    while (pc->use_cursor[r] < pc->use_first[r + 1] && pc->use_pos[pc->use_cursor[r]] <= pos)
        pc->use_cursor[r]++;
    pc->next_use[r] = pc->use_cursor[r] < pc->use_first[r + 1] ? pc->use_pos[pc->use_cursor[r]]
                                                                : INT64_MAX;
}

/* The steps of the block at position pos. */
static krill_status block_steps(placer *pc, int64_t pos, int64_t *n_args)
{
    krill_status st = KRILL_OK;
    krill_overlap_plan *p = pc->p;
    const krill_overlap_model *m = &p->model;
    const int32_t b = p->order[pos], n_in = p->blk_in_first[b + 1] - p->blk_in_first[b];
    const int64_t first_send = p->n_steps;
    int64_t kernel_step;
    KRILL_TRY(place_block(pc, b));
    for (int32_t k = 0; k < n_in; k++) {                         /* the sends */
        int32_t r = overlap_blk_region(p, b, k);
        const span *at;
        if (!pc->fresh[r]) continue;
        at = &pc->live[pc->where[r]];
        step_begin(pc, OVERLAP_SEND, b, r);
        KRILL_TRY(wait_on_dead(pc, at->offset, at->bytes));
        p->steps[p->n_steps].offset = at->offset;
        p->steps[p->n_steps].host_after = pc->last_recv[r];
        p->steps[p->n_steps].seconds = copy_seconds(p, r, m->h2d_latency, m->h2d_bandwidth,
                                                    m->h2d_row_seconds);
        pc->send_clock += p->steps[p->n_steps].seconds;
        pc->fresh[r] = 0;                                        /* sent */
        p->n_steps++;
    }
    kernel_step = p->n_steps;                                    /* the kernel */
    step_begin(pc, OVERLAP_KERNEL, b, -1);
    for (int64_t s = first_send; s < kernel_step; s++) KRILL_TRY(push_wait(pc, s));
    for (int32_t k = n_in; k < overlap_blk_count(p, b); k++) {
        int32_t r = overlap_blk_region(p, b, k);
        KRILL_TRY(push_wait(pc, pc->last_recv[r]));   /* an earlier receive still reading it */
        if (pc->fresh[r]) {                           /* placed for an output only */
            KRILL_TRY(wait_on_dead(pc, pc->live[pc->where[r]].offset, pc->live[pc->where[r]].bytes));
            pc->fresh[r] = 0;
        }
    }
    p->steps[kernel_step].args_first = *n_args;
    p->steps[kernel_step].seconds =
        p->blk_seconds[b] > m->launch_latency ? p->blk_seconds[b] : m->launch_latency;
    pc->kernel_clock += p->steps[kernel_step].seconds;
    for (int32_t k = 0; k < overlap_blk_count(p, b); k++) {
        int32_t r = overlap_blk_region(p, b, k);
        p->args[(*n_args)++] = pc->live[pc->where[r]].offset;
        pc->release_kernel[r] = kernel_step;
        /* a region read after its writer's receive was queued stays busy until then */
        pc->free_at[r] = fmax(pc->free_at[r], pc->kernel_clock);
    }
    p->n_steps++;
    for (int32_t k = n_in; k < overlap_blk_count(p, b); k++) {  /* the receives */
        int32_t r = overlap_blk_region(p, b, k);
        step_begin(pc, OVERLAP_RECV, b, r);
        KRILL_TRY(push_wait(pc, kernel_step));
        p->steps[p->n_steps].offset = pc->live[pc->where[r]].offset;
        p->steps[p->n_steps].seconds = copy_seconds(p, r, m->d2h_latency, m->d2h_bandwidth,
                                                    m->d2h_row_seconds);
        pc->last_recv[r] = p->n_steps;
        pc->free_at[r] += p->steps[p->n_steps].seconds;
        p->n_steps++;
    }
    for (int32_t k = 0; k < overlap_blk_count(p, b); k++)
        advance_uses(pc, overlap_blk_region(p, b, k), pos);
cleanup:
    return st;
}

krill_status overlap_build_steps(krill_overlap_plan *p)
{
    krill_status st = KRILL_OK;
    placer pc;
    int64_t max_steps = 0, n_args = 0;
    int32_t widest = 1;
    memset(&pc, 0, sizeof pc);
    pc.p = p;
    for (int32_t b = 0; b < p->n_blocks; b++) {
        max_steps += overlap_blk_count(p, b) + 1;
        if (overlap_blk_count(p, b) > widest) widest = overlap_blk_count(p, b);
    }
    KRILL_ALLOC(p->steps, (size_t)max_steps);
    KRILL_ALLOC(p->args, (size_t)(max_steps - p->n_blocks) + 1);
    pc.cap_waits = 2 * max_steps + 16;
    KRILL_ALLOC(p->waits, (size_t)pc.cap_waits);
    KRILL_ALLOC(pc.live, (size_t)p->n_regions + 1);
    pc.cap_dead = p->n_regions + 1;
    KRILL_ALLOC(pc.dead, (size_t)pc.cap_dead);
    KRILL_ALLOC(pc.where, (size_t)p->n_regions + 1);
    KRILL_ALLOC(pc.release_kernel, (size_t)p->n_regions + 1);
    KRILL_ALLOC(pc.last_recv, (size_t)p->n_regions + 1);
    KRILL_CALLOC(pc.fresh, (size_t)p->n_regions + 1);
    KRILL_ALLOC(pc.list, (size_t)widest);
    KRILL_CALLOC(pc.free_at, (size_t)p->n_regions + 1);
    for (int32_t r = 0; r < p->n_regions; r++)
        pc.where[r] = pc.release_kernel[r] = pc.last_recv[r] = -1;
    KRILL_TRY(index_uses(&pc));
    for (int64_t pos = 0; pos < p->n_blocks; pos++) KRILL_TRY(block_steps(&pc, pos, &n_args));
    p->arena_bytes = pc.peak > 0 ? pc.peak : OVERLAP_ALIGN;
cleanup:
    krill_free(pc.live);
    krill_free(pc.dead);
    krill_free(pc.where);
    krill_free(pc.release_kernel);
    krill_free(pc.last_recv);
    krill_free(pc.use_first);
    krill_free(pc.use_pos);
    krill_free(pc.use_cursor);
    krill_free(pc.next_use);
    krill_free(pc.fresh);
    krill_free(pc.list);
    krill_free(pc.free_at);
    return st;
}
