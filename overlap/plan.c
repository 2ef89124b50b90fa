/* overlap/plan.c - the planner: a problem (regions, blocks) and a platform model in, a plan
 * (ordered steps with their waits, device offsets, predictions) out.
 *
 * 1. Order (section 4.1 of Homma & Suda): the blocks run in an order that respects `after`
 *    and makes the most blocks runnable per byte sent. Repeatedly: run every ready block
 *    whose inputs are all resident (lowest index first); else send the region r that
 *    completes the most ready blocks per byte, gain(r) / bytes(r), where gain(r) counts the
 *    ready blocks whose only missing input is r, and run the first of them; else run the
 *    ready block with the fewest missing bytes. Residency is simulated with the memory
 *    budget (least recently used region evicted first).
 * 2. Placement: walking that order, each region a block needs and the device lacks is
 *    placed first-fit in an arena of `memory` bytes; when nothing fits, the resident region
 *    used furthest in the future (or never again) is evicted (Belady's rule, exact here
 *    since the order is known). Reusing bytes makes the new occupant's send (or kernel)
 *    wait for the old occupant's last kernel and receive.
 * 3. Steps: per block, its sends, its kernel (waiting for those sends, for the placements
 *    of its out regions, and for earlier receives of the regions it overwrites), then one
 *    receive per out region. A region written by a block is received right after it
 *    (write-through), so host memory is current whenever a region is evicted.
 * 4. Prediction: overlap_plan_simulate runs the steps on the model (pipelined: three lanes
 *    and the host packing sends; sequential: one step at a time); AUTO keeps the pipelined
 *    schedule unless the sequential one is predicted faster. */
#include <math.h>
#include <string.h>
#include "overlap/overlap_impl.h"

static int64_t align_up(int64_t bytes)
{
    return (bytes + OVERLAP_ALIGN - 1) / OVERLAP_ALIGN * OVERLAP_ALIGN;
}

void krill_overlap_plan_opts_default(krill_overlap_plan_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->send_slots = 3;
    opts->recv_slots = 3;
    opts->mode = KRILL_OVERLAP_AUTO;
}

/* ---- the problem, checked and copied --------------------------------------------------- */
typedef struct planner {
    krill_overlap_plan *plan;
    int32_t *after_first, *after;        /* `after` as CSR */
    int32_t *dep_first, *dep;            /* its reverse: the blocks waiting for each block */
} planner;

static krill_status copy_list(int32_t **first, int32_t **list, const krill_overlap_problem *pb,
                              int which, int32_t limit, const char *what)
{
    krill_status st = KRILL_OK;
    int64_t total = 0;
    KRILL_ALLOC(*first, (size_t)pb->n_blocks + 1);
    for (int32_t b = 0; b < pb->n_blocks; b++) {
        const krill_overlap_block *blk = &pb->blocks[b];
        int32_t n = which == 0 ? blk->n_in : which == 1 ? blk->n_out : blk->n_after;
        const int32_t *l = which == 0 ? blk->in : which == 1 ? blk->out : blk->after;
        KRILL_REQUIRE(n >= 0 && (n == 0 || l), "overlap: block %d: %d %s but no list", b, n, what);
        (*first)[b] = (int32_t)total;
        total += n;
        KRILL_REQUIRE(total < INT32_MAX, "overlap: too many %s entries", what);
    }
    (*first)[pb->n_blocks] = (int32_t)total;
    KRILL_ALLOC(*list, (size_t)total + 1);
    for (int32_t b = 0; b < pb->n_blocks; b++) {
        const krill_overlap_block *blk = &pb->blocks[b];
        const int32_t *l = which == 0 ? blk->in : which == 1 ? blk->out : blk->after;
        for (int32_t k = (*first)[b]; k < (*first)[b + 1]; k++) {
            int32_t v = l[k - (*first)[b]];
            KRILL_REQUIRE(v >= 0 && v < limit && !(which == 2 && v == b),
                          "overlap: block %d: %s[%d] = %d is out of range [0, %d)%s", b, what,
                          k - (*first)[b], v, limit, which == 2 && v == b ? " or itself" : "");
            for (int32_t q = (*first)[b]; q < k; q++)
                KRILL_REQUIRE((*list)[q] != v, "overlap: block %d lists %s %d twice", b, what, v);
            (*list)[k] = v;
        }
    }
cleanup:
    return st;
}

static krill_status copy_problem(planner *pl, const krill_overlap_problem *pb)
{
    krill_status st = KRILL_OK;
    krill_overlap_plan *p = pl->plan;
    KRILL_REQUIRE(pb->n_blocks <= OVERLAP_MAX_BLOCKS, "overlap: %d blocks, more than the "
                  "planner takes (%d: its order costs O(blocks^2), about a minute there); "
                  "use larger blocks", pb->n_blocks, OVERLAP_MAX_BLOCKS);
    KRILL_REQUIRE(pb->n_regions >= 0 && pb->n_blocks >= 1 && pb->kernel &&
                  (pb->n_regions == 0 || pb->regions) && pb->blocks,
                  "overlap: a problem needs blocks, a kernel and its regions");
    p->n_regions = pb->n_regions;
    p->n_blocks = pb->n_blocks;
    p->kernel = pb->kernel;
    p->user = pb->user;
    KRILL_ALLOC(p->regions, (size_t)pb->n_regions + 1);
    for (int32_t r = 0; r < pb->n_regions; r++) {
        const krill_overlap_region *g = &pb->regions[r];
        KRILL_REQUIRE(g->host && g->rows >= 1 && g->row_bytes >= 1 && g->pitch >= g->row_bytes &&
                      g->rows <= (size_t)INT64_MAX / g->row_bytes,
                      "overlap: region %d is malformed (host %p, %zu rows of %zu bytes, pitch %zu)",
                      r, g->host, g->rows, g->row_bytes, g->pitch);
        p->regions[r] = *g;
    }
    KRILL_TRY(copy_list(&p->blk_in_first, &p->blk_in, pb, 0, pb->n_regions, "in"));
    KRILL_TRY(copy_list(&p->blk_out_first, &p->blk_out, pb, 1, pb->n_regions, "out"));
    KRILL_TRY(copy_list(&pl->after_first, &pl->after, pb, 2, pb->n_blocks, "after"));
    KRILL_ALLOC(p->blk_seconds, (size_t)pb->n_blocks);
    for (int32_t b = 0; b < pb->n_blocks; b++) {
        KRILL_REQUIRE(isfinite(pb->blocks[b].seconds) && pb->blocks[b].seconds >= 0,
                      "overlap: block %d: kernel seconds %g", b, pb->blocks[b].seconds);
        p->blk_seconds[b] = pb->blocks[b].seconds;
    }
    /* the reverse of `after` */
    KRILL_CALLOC(pl->dep_first, (size_t)pb->n_blocks + 1);
    KRILL_ALLOC(pl->dep, (size_t)pl->after_first[pb->n_blocks] + 1);
    for (int32_t k = 0; k < pl->after_first[pb->n_blocks]; k++) pl->dep_first[pl->after[k] + 1]++;
    for (int32_t b = 0; b < pb->n_blocks; b++) pl->dep_first[b + 1] += pl->dep_first[b];
    {
        int32_t *fill = NULL;
        st = krill_alloc_n((void **)&fill, (size_t)pb->n_blocks, sizeof *fill, 0, "fill");
        if (st != KRILL_OK) goto cleanup;
        memcpy(fill, pl->dep_first, (size_t)pb->n_blocks * sizeof *fill);
        for (int32_t b = 0; b < pb->n_blocks; b++)
            for (int32_t k = pl->after_first[b]; k < pl->after_first[b + 1]; k++)
                pl->dep[fill[pl->after[k]]++] = b;
        krill_free(fill);
    }
cleanup:
    return st;
}

/* ---- 1. the order ------------------------------------------------------------------------ */
typedef struct residency {
    const krill_overlap_plan *p;
    char *resident;
    int64_t *stamp;              /* last use, for LRU */
    int64_t clock, bytes, budget;
} residency;

/* Make block b's regions resident (evicting the least recently used others) and touch them. */
static krill_status reside(residency *rs, int32_t b)
{
    krill_status st = KRILL_OK;
    const krill_overlap_plan *p = rs->p;
    int64_t need = 0;
    rs->clock++;
    for (int pass = 0; pass < 2; pass++) {
        const int32_t *first = pass ? p->blk_out_first : p->blk_in_first;
        const int32_t *list = pass ? p->blk_out : p->blk_in;
        for (int32_t k = first[b]; k < first[b + 1]; k++) {
            int32_t r = list[k];
            if (!rs->resident[r]) {
                rs->resident[r] = 1;
                rs->bytes += align_up(overlap_region_bytes(&p->regions[r]));
            }
            if (rs->stamp[r] != rs->clock) need += align_up(overlap_region_bytes(&p->regions[r]));
            rs->stamp[r] = rs->clock;
        }
    }
    if (need > rs->budget) {
        st = krill_error(KRILL_ERR_DEVICE_ALLOC, "overlap: block %d needs %lld bytes of device "
                         "memory, more than the plan's %lld", b, (long long)need,
                         (long long)rs->budget);
        goto cleanup;
    }
    while (rs->bytes > rs->budget) {           /* evict the least recently used */
        int32_t victim = -1;
        for (int32_t r = 0; r < p->n_regions; r++)
            if (rs->resident[r] && rs->stamp[r] != rs->clock &&
                (victim < 0 || rs->stamp[r] < rs->stamp[victim]))
                victim = r;
        rs->resident[victim] = 0;
        rs->bytes -= align_up(overlap_region_bytes(&p->regions[victim]));
    }
cleanup:
    return st;
}

/* Bytes of block b's inputs not resident, and how many of them (at most 2 counted). */
static int64_t missing(const residency *rs, int32_t b, int *count, int32_t *only)
{
    const krill_overlap_plan *p = rs->p;
    int64_t bytes = 0;
    *count = 0;
    for (int32_t k = p->blk_in_first[b]; k < p->blk_in_first[b + 1]; k++) {
        int32_t r = p->blk_in[k];
        if (!rs->resident[r]) {
            bytes += overlap_region_bytes(&p->regions[r]);
            (*count)++;
            *only = r;
        }
    }
    return bytes;
}

static krill_status order_blocks(planner *pl)
{
    krill_status st = KRILL_OK;
    krill_overlap_plan *p = pl->plan;
    const int32_t nb = p->n_blocks;
    int32_t *waiting = NULL;     /* `after` blocks not yet run; -1 once the block ran */
    double *gain = NULL;
    residency rs = {p, NULL, NULL, 0, 0, (int64_t)p->opts.memory};
    KRILL_CALLOC(rs.resident, (size_t)p->n_regions + 1);
    KRILL_CALLOC(rs.stamp, (size_t)p->n_regions + 1);
    KRILL_ALLOC(waiting, (size_t)nb);
    KRILL_ALLOC(gain, (size_t)p->n_regions + 1);
    for (int32_t b = 0; b < nb; b++) waiting[b] = pl->after_first[b + 1] - pl->after_first[b];
    for (int32_t done = 0; done < nb; done++) {
        int32_t pick = -1, best_r = -1, cheapest = -1;
        int64_t cheapest_bytes = INT64_MAX;
        double best_ratio = 0;
        for (int32_t r = 0; r < p->n_regions; r++) gain[r] = 0;
        for (int32_t b = 0; b < nb && pick < 0; b++) {
            int count = 0;
            int32_t only = -1;
            int64_t bytes;
            if (waiting[b] != 0) continue;
            bytes = missing(&rs, b, &count, &only);
            if (count == 0) pick = b;
            if (count == 1) gain[only] += 1;
            if (bytes < cheapest_bytes) cheapest_bytes = bytes, cheapest = b;
        }
        if (pick < 0) {                          /* the region with the most blocks per byte */
            for (int32_t r = 0; r < p->n_regions; r++) {
                double ratio = gain[r] / (double)overlap_region_bytes(&p->regions[r]);
                if (gain[r] > 0 && ratio > best_ratio) best_ratio = ratio, best_r = r;
            }
            for (int32_t b = 0; b < nb && best_r >= 0 && pick < 0; b++) {
                int count = 0;
                int32_t only = -1;
                if (waiting[b] == 0 && (missing(&rs, b, &count, &only), count == 1) &&
                    only == best_r)
                    pick = b;
            }
        }
        if (pick < 0) pick = cheapest;
        if (pick < 0) {
            st = krill_error(KRILL_ERR_ARG, "overlap: the blocks' `after` lists form a cycle "
                             "(%d of %d blocks can run)", done, nb);
            goto cleanup;
        }
        KRILL_TRY(reside(&rs, pick));
        p->order[done] = pick;
        waiting[pick] = -1;
        for (int32_t k = pl->dep_first[pick]; k < pl->dep_first[pick + 1]; k++)
            waiting[pl->dep[k]]--;
    }
cleanup:
    krill_free(rs.resident);
    krill_free(rs.stamp);
    krill_free(waiting);
    krill_free(gain);
    return st;
}

/* ---- 2 and 3. placement and steps -------------------------------------------------------- */
typedef struct span {            /* device bytes [offset, offset + bytes) */
    int64_t offset, bytes;
    int32_t region;              /* -1 for a freed span (the "graveyard") */
    int64_t release[2];          /* steps that last used it: kernel, receive (-1: none) */
} span;

typedef struct placer {
    krill_overlap_plan *p;
    span *live, *dead;
    int64_t n_live, n_dead;
    int64_t *where;              /* region -> index in live, -1 if not resident */
    int64_t *release_kernel, *last_recv;   /* per region */
    int64_t *use_first, *use_pos;  /* CSR: the positions (in the order) each region is used */
    int64_t *use_cursor, *next_use;  /* per region: its next entry in use_pos, and that position */
    int64_t cap_dead, cap_waits;
    int64_t peak;
} placer;

static krill_status push_wait(placer *pc, int64_t step)
{
    krill_status st = KRILL_OK;
    krill_overlap_plan *p = pc->p;
    if (step < 0) goto cleanup;
    if (p->steps[p->n_steps].n_wait + p->steps[p->n_steps].wait_first >= pc->cap_waits) {
        int64_t *grown = NULL;
        pc->cap_waits *= 2;
        KRILL_ALLOC(grown, (size_t)pc->cap_waits);
        memcpy(grown, p->waits, (size_t)(pc->cap_waits / 2) * sizeof *grown);
        krill_free(p->waits);
        p->waits = grown;
    }
    p->waits[p->steps[p->n_steps].wait_first + p->steps[p->n_steps].n_wait++] = step;
cleanup:
    return st;
}

/* Begin step p->n_steps (its waits follow it in p->waits). */
static void step_begin(placer *pc, overlap_step_kind kind, int32_t block, int32_t region)
{
    krill_overlap_plan *p = pc->p;
    overlap_step *s = &p->steps[p->n_steps];
    int64_t wait_first = 0;
    if (p->n_steps > 0) wait_first = s[-1].wait_first + s[-1].n_wait;
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->block = block;
    s->region = region;
    s->wait_first = wait_first;
    s->host_after = -1;
    s->args_first = -1;
}

/* Waits on the freed spans [offset, offset + bytes) overlaps; spans it covers are dropped. */
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

/* First-fit offset for `bytes` in the arena, or -1. live is sorted by offset. */
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
    int32_t r = s.region;
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

/* Place region r (needed by the block at position pos) on the device; *offset its place. */
static krill_status place(placer *pc, int32_t r, int32_t block, int64_t *offset)
{
    krill_status st = KRILL_OK;
    krill_overlap_plan *p = pc->p;
    int64_t bytes = align_up(overlap_region_bytes(&p->regions[r])), at, k;
    while ((at = first_fit(pc, bytes)) < 0) {
        int64_t victim = -1, victim_next = -1;
        for (k = 0; k < pc->n_live; k++) {
            int32_t v = pc->live[k].region;
            int64_t next = pc->next_use[v];
            int in_block = 0;
            for (int32_t q = p->blk_in_first[block]; q < p->blk_in_first[block + 1]; q++)
                in_block |= p->blk_in[q] == v;
            for (int32_t q = p->blk_out_first[block]; q < p->blk_out_first[block + 1]; q++)
                in_block |= p->blk_out[q] == v;
            if (!in_block && next > victim_next) victim = k, victim_next = next;
        }
        if (victim < 0) {
            st = krill_error(KRILL_ERR_DEVICE_ALLOC, "overlap: block %d does not fit in the "
                             "plan's %.0f bytes of device memory (region %d needs %lld more)",
                             block, p->opts.memory, r, (long long)bytes);
            goto cleanup;
        }
        KRILL_TRY(evict(pc, victim));
    }
    for (k = pc->n_live; k > 0 && pc->live[k - 1].offset > at; k--) pc->live[k] = pc->live[k - 1];
    pc->live[k] = (span){at, bytes, r, {-1, -1}};
    pc->n_live++;
    for (int64_t q = k; q < pc->n_live; q++) pc->where[pc->live[q].region] = q;
    if (at + bytes > pc->peak) pc->peak = at + bytes;
    *offset = at;
cleanup:
    return st;
}

/* Positions (in the order) at which each region is used, for Belady's rule. */
static krill_status index_uses(placer *pc)
{
    krill_status st = KRILL_OK;
    krill_overlap_plan *p = pc->p;
    int64_t *fill = NULL;
    KRILL_CALLOC(pc->use_first, (size_t)p->n_regions + 1);
    for (int pass = 0; pass < 2; pass++)
        for (int32_t pos = 0; pos < p->n_blocks; pos++) {
            int32_t b = p->order[pos];
            const int32_t *first = pass ? p->blk_out_first : p->blk_in_first;
            const int32_t *list = pass ? p->blk_out : p->blk_in;
            for (int32_t k = first[b]; k < first[b + 1]; k++) pc->use_first[list[k] + 1]++;
        }
    for (int32_t r = 0; r < p->n_regions; r++) pc->use_first[r + 1] += pc->use_first[r];
    KRILL_ALLOC(pc->use_pos, (size_t)pc->use_first[p->n_regions] + 1);
    KRILL_ALLOC(fill, (size_t)p->n_regions + 1);
    memcpy(fill, pc->use_first, (size_t)p->n_regions * sizeof *fill);
    for (int32_t pos = 0; pos < p->n_blocks; pos++)  /* positions ascending per region */
        for (int pass = 0; pass < 2; pass++) {
            int32_t b = p->order[pos];
            const int32_t *first = pass ? p->blk_out_first : p->blk_in_first;
            const int32_t *list = pass ? p->blk_out : p->blk_in;
            for (int32_t k = first[b]; k < first[b + 1]; k++) pc->use_pos[fill[list[k]]++] = pos;
        }
    KRILL_ALLOC(pc->next_use, (size_t)p->n_regions + 1);
    KRILL_ALLOC(pc->use_cursor, (size_t)p->n_regions + 1);
    for (int32_t r = 0; r < p->n_regions; r++) {     /* the first use, INT64_MAX if none */
        pc->use_cursor[r] = pc->use_first[r];
        pc->next_use[r] = pc->use_first[r] < pc->use_first[r + 1] ? pc->use_pos[pc->use_first[r]]
                                                                 : INT64_MAX;
    }
cleanup:
    krill_free(fill);
    return st;
}

/* After the block at position pos: each of its regions' next use moves past pos. */
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
    const int32_t b = p->order[pos];
    const int64_t first_send = p->n_steps;
    int64_t kernel_step, offset;
    for (int32_t k = p->blk_in_first[b]; k < p->blk_in_first[b + 1]; k++) {  /* the sends */
        int32_t r = p->blk_in[k];
        int64_t bytes = overlap_region_bytes(&p->regions[r]);
        if (pc->where[r] >= 0) continue;
        KRILL_TRY(place(pc, r, b, &offset));
        step_begin(pc, OVERLAP_SEND, b, r);
        KRILL_TRY(wait_on_dead(pc, offset, align_up(bytes)));
        p->steps[p->n_steps].offset = offset;
        p->steps[p->n_steps].host_after = pc->last_recv[r];
        p->steps[p->n_steps].seconds = m->h2d_latency + (double)bytes / m->h2d_bandwidth;
        p->n_steps++;
    }
    kernel_step = p->n_steps;                                            /* the kernel */
    step_begin(pc, OVERLAP_KERNEL, b, -1);
    for (int64_t s = first_send; s < kernel_step; s++) KRILL_TRY(push_wait(pc, s));
    for (int32_t k = p->blk_out_first[b]; k < p->blk_out_first[b + 1]; k++) {
        int32_t r = p->blk_out[k];
        KRILL_TRY(push_wait(pc, pc->last_recv[r]));    /* an earlier receive still reading */
        if (pc->where[r] >= 0) continue;
        KRILL_TRY(place(pc, r, b, &offset));
        KRILL_TRY(wait_on_dead(pc, offset, align_up(overlap_region_bytes(&p->regions[r]))));
    }
    p->steps[kernel_step].args_first = *n_args;
    p->steps[kernel_step].seconds = p->blk_seconds[b];
    for (int pass = 0; pass < 2; pass++) {
        const int32_t *first = pass ? p->blk_out_first : p->blk_in_first;
        const int32_t *list = pass ? p->blk_out : p->blk_in;
        for (int32_t k = first[b]; k < first[b + 1]; k++) {
            p->args[(*n_args)++] = pc->live[pc->where[list[k]]].offset;
            pc->release_kernel[list[k]] = kernel_step;
        }
    }
    p->n_steps++;
    for (int32_t k = p->blk_out_first[b]; k < p->blk_out_first[b + 1]; k++) {  /* receives */
        int32_t r = p->blk_out[k];
        int64_t bytes = overlap_region_bytes(&p->regions[r]);
        step_begin(pc, OVERLAP_RECV, b, r);
        KRILL_TRY(push_wait(pc, kernel_step));
        p->steps[p->n_steps].offset = pc->live[pc->where[r]].offset;
        p->steps[p->n_steps].seconds = m->d2h_latency + (double)bytes / m->d2h_bandwidth;
        pc->last_recv[r] = p->n_steps;
        p->n_steps++;
    }
    for (int pass = 0; pass < 2; pass++) {
        const int32_t *first = pass ? p->blk_out_first : p->blk_in_first;
        const int32_t *list = pass ? p->blk_out : p->blk_in;
        for (int32_t k = first[b]; k < first[b + 1]; k++) advance_uses(pc, list[k], pos);
    }
cleanup:
    return st;
}

static krill_status build_steps(krill_overlap_plan *p)
{
    krill_status st = KRILL_OK;
    placer pc;
    int64_t max_steps = 0, n_args = 0;
    memset(&pc, 0, sizeof pc);
    pc.p = p;
    for (int32_t b = 0; b < p->n_blocks; b++)
        max_steps += (p->blk_in_first[b + 1] - p->blk_in_first[b]) + 1 +
                     (p->blk_out_first[b + 1] - p->blk_out_first[b]);
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
    return st;
}

/* ---- 4. prediction ----------------------------------------------------------------------
 * Pipelined: a step starts when its waits have ended and its lane is free (copies in both
 * directions share one lane when the model says they do not overlap; everything shares one
 * when copies do not overlap kernels). A send is packed into a staging slot first, on the
 * host, one pack at a time, once the slot's previous send has ended; a receive needs a slot
 * whose previous content has been unpacked (unpacks run beside packs: the executor does
 * them when it would otherwise wait). Sequential: each step, packing and unpacking
 * included, starts when the previous one has ended; so does every step of the CPU
 * executor (threads for lanes) when its model says copies do not overlap kernels, as its
 * packing then competes for the kernel's cores too. */
static int sim_lane(const krill_overlap_model *m, int kind)
{
    return !m->copy_kernel_overlap ? 0 : (!m->copies_overlap && kind == OVERLAP_RECV) ? 0 : kind;
}

krill_status overlap_plan_simulate(const krill_overlap_plan *p, int sequential, double *elapsed)
{
    krill_status st = KRILL_OK;
    const krill_overlap_model *m = &p->model;
    const double host_bw = m->host_copy_bandwidth > 0 ? m->host_copy_bandwidth : INFINITY;
    double *end = NULL, *unpacked = NULL, *send_free = NULL, *recv_free = NULL;
    double lane_free[KRILL_OVERLAP_LANES] = {0, 0, 0}, host_free = 0, last = 0, total = 0;
    int64_t n_sent = 0, n_recv = 0;
    /* the CPU executor's lanes and packing share the cores its kernel uses unless the
       model says copies overlap kernels: then nothing overlaps */
    if (m->device < 0 && !m->copy_kernel_overlap) sequential = 1;
    KRILL_ALLOC(end, (size_t)p->n_steps + 1);
    KRILL_ALLOC(unpacked, (size_t)p->n_steps + 1);
    KRILL_CALLOC(send_free, (size_t)p->opts.send_slots);
    KRILL_CALLOC(recv_free, (size_t)p->opts.recv_slots);
    for (int64_t i = 0; i < p->n_steps; i++) {
        const overlap_step *s = &p->steps[i];
        int lane = sim_lane(m, s->kind);
        double ready = sequential ? last : 0;
        double bytes = s->region >= 0 ? (double)overlap_region_bytes(&p->regions[s->region]) : 0;
        for (int32_t w = 0; w < s->n_wait; w++)
            if (end[p->waits[s->wait_first + w]] > ready) ready = end[p->waits[s->wait_first + w]];
        if (ready < lane_free[lane]) ready = lane_free[lane];
        unpacked[i] = 0;
        if (s->kind == OVERLAP_SEND) {
            double *slot = &send_free[n_sent++ % p->opts.send_slots];
            double pack = sequential ? last : host_free;
            if (pack < *slot) pack = *slot;
            if (s->host_after >= 0 && pack < unpacked[s->host_after]) pack = unpacked[s->host_after];
            pack += bytes / host_bw;
            host_free = pack;
            if (ready < pack) ready = pack;
            end[i] = ready + s->seconds;
            *slot = end[i];
        } else if (s->kind == OVERLAP_RECV) {
            double *slot = &recv_free[n_recv++ % p->opts.recv_slots];
            if (ready < *slot) ready = *slot;
            end[i] = ready + s->seconds;
            unpacked[i] = end[i] + bytes / host_bw;
            *slot = unpacked[i];
        } else {
            end[i] = ready + s->seconds;
        }
        lane_free[lane] = end[i];
        last = unpacked[i] > end[i] ? unpacked[i] : end[i];
        if (last > total) total = last;
    }
    *elapsed = total;
cleanup:
    krill_free(end);
    krill_free(unpacked);
    krill_free(send_free);
    krill_free(recv_free);
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

/* ---- the public functions ------------------------------------------------------------------ */
static krill_status summarize(krill_overlap_plan *p)
{
    krill_status st = KRILL_OK;
    krill_overlap_plan_info *in = &p->info;
    double *seconds = NULL;
    KRILL_ALLOC(seconds, (size_t)p->n_steps);
    memset(in, 0, sizeof *in);
    in->n_blocks = p->n_blocks;
    p->slot_bytes = OVERLAP_ALIGN;
    for (int64_t i = 0; i < p->n_steps; i++) {
        const overlap_step *s = &p->steps[i];
        double bytes = s->region >= 0 ? (double)overlap_region_bytes(&p->regions[s->region]) : 0;
        seconds[i] = s->seconds;
        if (s->kind == OVERLAP_SEND) in->sends++, in->send_bytes += bytes, in->send_seconds += s->seconds;
        if (s->kind == OVERLAP_RECV) in->recvs++, in->recv_bytes += bytes, in->recv_seconds += s->seconds;
        if (s->kind == OVERLAP_KERNEL) in->kernel_seconds += s->seconds;
        if (s->region >= 0 && (int64_t)bytes > p->slot_bytes) p->slot_bytes = (int64_t)bytes;
    }
    KRILL_TRY(overlap_plan_simulate(p, 0, &in->predicted_pipelined));
    KRILL_TRY(overlap_plan_simulate(p, 1, &in->predicted_sequential));
    in->sequential = p->opts.mode == KRILL_OVERLAP_SEQUENTIAL ||
                     (p->opts.mode == KRILL_OVERLAP_AUTO &&
                      in->predicted_sequential <= in->predicted_pipelined);
    in->predicted = in->sequential ? in->predicted_sequential : in->predicted_pipelined;
    in->bound = overlap_bound(p, seconds);
    in->device_bytes = (double)p->arena_bytes;
    in->pinned_bytes = (double)(p->opts.send_slots + p->opts.recv_slots) * (double)p->slot_bytes;
cleanup:
    krill_free(seconds);
    return st;
}

static int model_ok(const krill_overlap_model *m)
{
    return m->h2d_bandwidth > 0 && m->d2h_bandwidth > 0 && m->h2d_latency >= 0 &&
           m->d2h_latency >= 0 && m->host_copy_bandwidth >= 0 && isfinite(m->h2d_latency) &&
           isfinite(m->d2h_latency);
}

krill_status krill_overlap_plan_create(const krill_overlap_model *model,
                                       const krill_overlap_problem *problem,
                                       const krill_overlap_plan_opts *opts,
                                       krill_overlap_plan **plan)
{
    krill_status st = KRILL_OK;
    krill_overlap_plan *p = NULL;
    planner pl;
    memset(&pl, 0, sizeof pl);
    KRILL_REQUIRE(model && problem && plan, "krill_overlap_plan_create: NULL argument");
    *plan = NULL;
    KRILL_REQUIRE(model_ok(model), "krill_overlap_plan_create: the model's rates are not "
                  "positive (calibrate it with krill_overlap_calibrate)");
    KRILL_CALLOC(p, 1);
    pl.plan = p;
    p->model = *model;
    krill_overlap_plan_opts_default(&p->opts);
    if (opts) p->opts = *opts;
    if (p->opts.send_slots == 0) p->opts.send_slots = 3;
    if (p->opts.recv_slots == 0) p->opts.recv_slots = 3;
    KRILL_REQUIRE(p->opts.send_slots >= 1 && p->opts.send_slots <= 64 &&
                  p->opts.recv_slots >= 1 && p->opts.recv_slots <= 64,
                  "krill_overlap_plan_create: slots %d and %d must be in [1, 64]",
                  p->opts.send_slots, p->opts.recv_slots);
    KRILL_REQUIRE(p->opts.memory >= OVERLAP_ALIGN && p->opts.memory < 9.2e18,
                  "krill_overlap_plan_create: memory %.0f bytes: give the budget "
                  "(krill_overlap_default_memory gives the device's)", p->opts.memory);
    KRILL_REQUIRE(p->opts.mode >= KRILL_OVERLAP_AUTO && p->opts.mode <= KRILL_OVERLAP_SEQUENTIAL,
                  "krill_overlap_plan_create: unknown mode %d", (int)p->opts.mode);
    KRILL_TRY(copy_problem(&pl, problem));
    KRILL_ALLOC(p->order, (size_t)p->n_blocks);
    KRILL_TRY(order_blocks(&pl));
    KRILL_TRY(build_steps(p));
    KRILL_TRY(summarize(p));
    *plan = p;
    p = NULL;
cleanup:
    krill_free(pl.after_first);
    krill_free(pl.after);
    krill_free(pl.dep_first);
    krill_free(pl.dep);
    krill_overlap_plan_destroy(&p);
    return st;
}

void krill_overlap_plan_destroy(krill_overlap_plan **plan)
{
    if (plan && *plan) {
        krill_overlap_plan *p = *plan;
        krill_free(p->regions);
        krill_free(p->blk_in_first);
        krill_free(p->blk_out_first);
        krill_free(p->blk_in);
        krill_free(p->blk_out);
        krill_free(p->blk_seconds);
        krill_free(p->order);
        krill_free(p->steps);
        krill_free(p->waits);
        krill_free(p->args);
        krill_free(p);
        *plan = NULL;
    }
}

void krill_overlap_plan_info_get(const krill_overlap_plan *plan, krill_overlap_plan_info *info)
{
    *info = plan->info;
}

const int32_t *krill_overlap_plan_order(const krill_overlap_plan *plan)
{
    return plan->order;
}
