/* overlap/plan.c - the planner: a problem (regions, blocks) and a platform model in, a plan
 * (ordered steps with their waits, device offsets, predictions) out.
 *
 * 1. Order (section 4.1 of Homma & Suda; here): the blocks run in an order that respects
 *    `after` and makes the most blocks runnable per byte sent. Repeatedly: run every ready
 *    block whose inputs are all resident (lowest index first); else send the region r that
 *    completes the most ready blocks per byte, gain(r) / bytes(r), where gain(r) counts the
 *    ready blocks whose only missing input is r, and run the first of them; else run the
 *    ready block with the fewest missing bytes. Residency is simulated with the memory
 *    budget (least recently used region evicted first). The search is O(blocks^2) steps.
 *    A block that writes a region the previous block wrote (it "chases" it) is taken last:
 *    after the other resident ready blocks and after sending the best region for another,
 *    since its kernel, updating the region's device bytes, must wait for the previous
 *    block's receive of them (bytes / D2H bandwidth after that kernel), which another
 *    block's kernel in between hides. The rule runs blocks as soon as they are ready, so it
 *    looks ahead across rounds by itself (out-of-core APSP: round K + 1's panels run once
 *    round K wrote their tiles, between round K's other tiles); without the rule each such
 *    block chased its tile and the kernel lane waited a receive for it.
 * 2. and 3. Placement in device memory and the steps with their waits: steps.c.
 * 4. Prediction (predict.c): the steps run on the model, pipelined and sequential; AUTO
 *    keeps the pipelined schedule unless the sequential one is predicted no slower. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "overlap/overlap_impl.h"

static int64_t align_up(int64_t bytes)
{
    return (bytes + OVERLAP_ALIGN - 1) / OVERLAP_ALIGN * OVERLAP_ALIGN;
}

void krill_overlap_plan_opts_default(krill_overlap_plan_opts *opts)
{
    const char *mode = getenv("KRILL_OVERLAP_MODE");   /* tests, experiments */
    memset(opts, 0, sizeof *opts);
    opts->send_slots = 3;
    opts->recv_slots = 3;
    opts->chunk_bytes = OVERLAP_CHUNK_BYTES;
    opts->mode = KRILL_OVERLAP_AUTO;
    if (mode && !strcmp(mode, "pipelined")) opts->mode = KRILL_OVERLAP_PIPELINED;
    if (mode && !strcmp(mode, "sequential")) opts->mode = KRILL_OVERLAP_SEQUENTIAL;
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
                      g->rows <= (size_t)(INT64_MAX / 4) / g->row_bytes,
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
    for (int32_t k = 0; k < overlap_blk_count(p, b); k++) {
        int32_t r = overlap_blk_region(p, b, k);
        if (!rs->resident[r]) {
            rs->resident[r] = 1;
            rs->bytes += align_up(overlap_region_bytes(&p->regions[r]));
        }
        if (rs->stamp[r] != rs->clock) need += align_up(overlap_region_bytes(&p->regions[r]));
        rs->stamp[r] = rs->clock;
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

/* Bytes of block b's inputs not resident; *count of them, *only the last one found. */
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

/* 1 if block b writes a region that the block at position done - 1 of the order wrote
 * (written[r]: the position of r's last writer, -1 if none; at done = 0 none chases). */
static int chases(const krill_overlap_plan *p, const int32_t *written, int32_t b, int32_t done)
{
    int found = 0;
    for (int32_t k = p->blk_out_first[b]; k < p->blk_out_first[b + 1] && !found && done > 0; k++)
        found = written[p->blk_out[k]] == done - 1;
    return found;
}

static krill_status order_blocks(planner *pl)
{
    krill_status st = KRILL_OK;
    krill_overlap_plan *p = pl->plan;
    const int32_t nb = p->n_blocks;
    int32_t *waiting = NULL;     /* `after` blocks not yet run; -1 once the block ran */
    int32_t *written = NULL;     /* per region: the position of its last writer, or -1 */
    double *gain = NULL;
    residency rs = {p, NULL, NULL, 0, 0, (int64_t)p->opts.memory};
    KRILL_CALLOC(rs.resident, (size_t)p->n_regions + 1);
    KRILL_CALLOC(rs.stamp, (size_t)p->n_regions + 1);
    KRILL_ALLOC(waiting, (size_t)nb);
    KRILL_ALLOC(gain, (size_t)p->n_regions + 1);
    KRILL_ALLOC(written, (size_t)p->n_regions + 1);
    for (int32_t r = 0; r < p->n_regions; r++) written[r] = -1;
    for (int32_t b = 0; b < nb; b++) waiting[b] = pl->after_first[b + 1] - pl->after_first[b];
    for (int32_t done = 0; done < nb; done++) {
        int32_t pick = -1, chasing = -1, best_r = -1, cheapest = -1;
        int64_t cheapest_bytes = INT64_MAX;
        double best_ratio = 0;
        for (int32_t r = 0; r < p->n_regions; r++) gain[r] = 0;
        for (int32_t b = 0; b < nb && pick < 0; b++) {
            int count = 0, chaser;
            int32_t only = -1;
            int64_t bytes;
            if (waiting[b] != 0) continue;
            bytes = missing(&rs, b, &count, &only);
            chaser = count == 0 && chases(p, written, b, done);
            if (count == 0 && !chaser) pick = b;
            if (chaser && chasing < 0) chasing = b;
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
                    only == best_r) {
                    if (!chases(p, written, b, done)) pick = b;
                    else if (chasing < 0) chasing = b;
                }
            }
        }
        if (pick < 0) pick = chasing;
        if (pick < 0) pick = cheapest;
        if (pick < 0) {
            st = krill_error(KRILL_ERR_ARG, "overlap: the blocks' `after` lists form a cycle "
                             "(%d of %d blocks can run)", done, nb);
            goto cleanup;
        }
        KRILL_TRY(reside(&rs, pick));
        p->order[done] = pick;
        for (int32_t k = p->blk_out_first[pick]; k < p->blk_out_first[pick + 1]; k++)
            written[p->blk_out[k]] = done;
        waiting[pick] = -1;
        for (int32_t k = pl->dep_first[pick]; k < pl->dep_first[pick + 1]; k++)
            waiting[pl->dep[k]]--;
    }
cleanup:
    krill_free(rs.resident);
    krill_free(rs.stamp);
    krill_free(waiting);
    krill_free(written);
    krill_free(gain);
    return st;
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
    if (p->slot_bytes > p->chunk_bytes) p->slot_bytes = p->chunk_bytes;
    KRILL_TRY(overlap_plan_simulate(p, 0, &in->predicted_pipelined, NULL));
    KRILL_TRY(overlap_plan_simulate(p, 1, &in->predicted_sequential, NULL));
    in->sequential = p->opts.mode == KRILL_OVERLAP_SEQUENTIAL ||
                     (p->opts.mode == KRILL_OVERLAP_AUTO &&
                      in->predicted_sequential <= in->predicted_pipelined);
    in->predicted = in->sequential ? in->predicted_sequential : in->predicted_pipelined;
    in->bound = overlap_bound(p, seconds);
    in->device_bytes = (double)p->arena_bytes;
    in->direct = overlap_direct(p);
    in->pinned_bytes = in->direct ? 0 : (double)(p->opts.send_slots + p->opts.recv_slots) *
                                            (double)p->slot_bytes;
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
    if (p->opts.chunk_bytes == 0) p->opts.chunk_bytes = OVERLAP_CHUNK_BYTES;
    KRILL_REQUIRE(p->opts.chunk_bytes >= OVERLAP_ALIGN,
                  "krill_overlap_plan_create: chunk_bytes %lld: at least %d",
                  (long long)p->opts.chunk_bytes, OVERLAP_ALIGN);
    p->chunk_bytes = p->opts.chunk_bytes;
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
    KRILL_TRY(overlap_build_steps(p));
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
