/* overlap/timeline.c - a run's timeline: its consistency check and its picture. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/io_impl.h"
#include "overlap/overlap_impl.h"

/* Clock slack: CUDA events resolve about 0.5 us; the CPU clock is exact. */
#define TIMELINE_SLACK 2e-6

typedef struct lane_step {
    double start, end;
    int64_t step;
} lane_step;

static int by_start(const void *a, const void *b)
{
    double x = ((const lane_step *)a)->start, y = ((const lane_step *)b)->start;
    return (x > y) - (x < y);
}

/* Without the plan: a block's kernel starts after the block's sends end, its receives
   start after its kernel ends. */
static krill_status check_blocks(const krill_overlap_timeline *tl)
{
    krill_status st = KRILL_OK;
    double *k_start = NULL, *k_end = NULL;
    int32_t nb = 0;
    for (int64_t s = 0; s < tl->n_events; s++)
        if (tl->events[s].block >= nb) nb = tl->events[s].block + 1;
    KRILL_ALLOC(k_start, (size_t)nb + 1);
    KRILL_ALLOC(k_end, (size_t)nb + 1);
    for (int32_t b = 0; b < nb; b++) k_start[b] = k_end[b] = -1;
    for (int64_t s = 0; s < tl->n_events; s++)
        if (tl->events[s].lane == KRILL_OVERLAP_LANE_KERNEL && tl->events[s].block >= 0)
            k_start[tl->events[s].block] = tl->events[s].start,
            k_end[tl->events[s].block] = tl->events[s].end;
    for (int64_t s = 0; s < tl->n_events; s++) {
        const krill_overlap_event *e = &tl->events[s];
        int early = e->block < 0 || k_start[e->block] < 0 ||
                    (e->lane == KRILL_OVERLAP_LANE_H2D && k_start[e->block] < e->end - TIMELINE_SLACK) ||
                    (e->lane == KRILL_OVERLAP_LANE_D2H && e->start < k_end[e->block] - TIMELINE_SLACK);
        if (early) {
            st = krill_error(KRILL_ERR_INTERNAL, "overlap timeline: event %lld (lane %d, block "
                             "%d, %.9f-%.9f s) is out of order with its block's kernel",
                             (long long)s, (int)e->lane, e->block, e->start, e->end);
            goto cleanup;
        }
    }
cleanup:
    krill_free(k_start);
    krill_free(k_end);
    return st;
}

/* With the plan, independently of its waits: walking the steps in plan order, the device
   copy of a region is produced by its send or by the last kernel that wrote it; a kernel
   (for each region it reads) and a receive must start after that producer ended, and a
   send must start after the region's last receive ended (host memory current). */
static krill_status check_data_flow(const krill_overlap_plan *p, const krill_overlap_timeline *tl)
{
    krill_status st = KRILL_OK;
    int64_t *producer = NULL, *last_recv = NULL, bad = -1, from = -1;
    KRILL_ALLOC(producer, (size_t)p->n_regions + 1);
    KRILL_ALLOC(last_recv, (size_t)p->n_regions + 1);
    for (int32_t r = 0; r < p->n_regions; r++) producer[r] = last_recv[r] = -1;
    for (int64_t s = 0; s < p->n_steps && bad < 0; s++) {
        const overlap_step *step = &p->steps[s];
        const double start = tl->events[s].start + TIMELINE_SLACK;
        if (step->kind == OVERLAP_SEND) {
            from = last_recv[step->region];
            if (from >= 0 && tl->events[from].end > start) bad = s;
            producer[step->region] = s;
        } else if (step->kind == OVERLAP_RECV) {
            from = producer[step->region];
            if (from < 0 || tl->events[from].end > start) bad = s;
            last_recv[step->region] = s;
        } else {
            const int32_t b = step->block, n_in = p->blk_in_first[b + 1] - p->blk_in_first[b];
            for (int32_t k = 0; k < n_in && bad < 0; k++) {
                from = producer[overlap_blk_region(p, b, k)];
                if (from < 0 || tl->events[from].end > start) bad = s;
            }
            for (int32_t k = n_in; k < overlap_blk_count(p, b); k++)
                producer[overlap_blk_region(p, b, k)] = s;
        }
    }
    if (bad >= 0)
        st = krill_error(KRILL_ERR_INTERNAL, "overlap timeline: step %lld (lane %d, block %d) "
                         "started at %.9f s before the data it needs was there (step %lld)",
                         (long long)bad, (int)tl->events[bad].lane, tl->events[bad].block,
                         tl->events[bad].start, (long long)from);
cleanup:
    krill_free(producer);
    krill_free(last_recv);
    return st;
}

krill_status krill_overlap_timeline_check(const krill_overlap_plan *plan,
                                          const krill_overlap_timeline *tl)
{
    krill_status st = KRILL_OK;
    lane_step *ls = NULL;
    KRILL_REQUIRE(tl && (tl->events || tl->n_events == 0),
                  "krill_overlap_timeline_check: NULL argument");
    if (!plan) KRILL_TRY(check_blocks(tl));
    KRILL_REQUIRE(!plan || tl->n_events == plan->n_steps, "krill_overlap_timeline_check: %lld "
                  "events for a plan of %lld steps", (long long)tl->n_events,
                  (long long)(plan ? plan->n_steps : 0));
    for (int64_t s = 0; plan && s < plan->n_steps; s++) {   /* waits ended before the step began */
        const overlap_step *step = &plan->steps[s];
        const krill_overlap_event *e = &tl->events[s];
        for (int32_t w = 0; w < step->n_wait; w++) {
            const krill_overlap_event *before = &tl->events[plan->waits[step->wait_first + w]];
            if (e->start < before->end - TIMELINE_SLACK) {
                st = krill_error(KRILL_ERR_INTERNAL, "overlap timeline: step %lld (lane %d, "
                                 "block %d) started at %.9f s, before step %lld (lane %d, block "
                                 "%d) it waits for ended at %.9f s", (long long)s, (int)e->lane,
                                 e->block, e->start, (long long)plan->waits[step->wait_first + w],
                                 (int)before->lane, before->block, before->end);
                goto cleanup;
            }
        }
    }
    if (plan) KRILL_TRY(check_data_flow(plan, tl));
    KRILL_ALLOC(ls, (size_t)tl->n_events + 1);
    for (int lane = 0; lane < KRILL_OVERLAP_LANES; lane++) {   /* one step at a time per lane */
        int64_t n = 0;
        for (int64_t s = 0; s < tl->n_events; s++)
            if ((int)tl->events[s].lane == lane)
                ls[n++] = (lane_step){tl->events[s].start, tl->events[s].end, s};
        qsort(ls, (size_t)n, sizeof *ls, by_start);
        for (int64_t k = 0; k < n; k++)
            if (ls[k].end < ls[k].start || (k > 0 && ls[k].start < ls[k - 1].end - TIMELINE_SLACK)) {
                st = krill_error(KRILL_ERR_INTERNAL, "overlap timeline: step %lld ends before "
                                 "it starts or overlaps the one before it on lane %d",
                                 (long long)ls[k].step, lane);
                goto cleanup;
            }
    }
cleanup:
    krill_free(ls);
    return st;
}

/* Three lanes, one rectangle per step (x: time), a time axis in milliseconds. Written whole
 * or not at all (io/outfile.c). */
krill_status krill_overlap_timeline_svg(const krill_overlap_timeline *tl, const char *title,
                                        const char *path)
{
    krill_status st = KRILL_OK;
    static const char *const names[KRILL_OVERLAP_LANES] = {"H2D", "compute", "D2H"};
    static const char *const colors[KRILL_OVERLAP_LANES] = {"#4c78a8", "#f58518", "#54a24b"};
    const double left = 80, width = 900, lane_h = 36, top = 40;
    const double span = tl && tl->elapsed > 0 ? tl->elapsed : 1;
    krill_outfile out;
    FILE *f;
    int opened = 0;
    KRILL_REQUIRE(tl && path, "krill_overlap_timeline_svg: NULL argument");
    KRILL_TRY(krill_outfile_open(&out, path));
    opened = 1;
    f = out.f;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n", left + width + 20,
            top + 3 * lane_h + 50);
    fprintf(f, "<text x=\"%.0f\" y=\"20\" font-size=\"14\">", left);
    for (const char *c = title ? title : ""; *c; c++) {   /* escaped title */
        if (*c == '<') fputs("&lt;", f);
        else if (*c == '&') fputs("&amp;", f);
        else fputc(*c, f);
    }
    fprintf(f, " (%.3f ms, efficiency %.2f%s)</text>\n", 1e3 * tl->elapsed, tl->efficiency,
            tl->sequential ? ", sequential" : "");
    for (int l = 0; l < KRILL_OVERLAP_LANES; l++)
        fprintf(f, "<text x=\"10\" y=\"%.0f\">%s</text>\n", top + l * lane_h + 22, names[l]);
    for (int64_t k = 0; k < tl->n_events; k++) {
        const krill_overlap_event *e = &tl->events[k];
        double x = left + width * e->start / span, w = width * (e->end - e->start) / span;
        fprintf(f, "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%.0f\" fill=\"%s\" "
                "stroke=\"white\" stroke-width=\"0.3\"><title>block %d%s %.3f-%.3f ms</title></rect>\n",
                x, top + (int)e->lane * lane_h + 4, w > 0.3 ? w : 0.3, lane_h - 8,
                colors[e->lane], e->block, e->region >= 0 ? " copy" : " kernel", 1e3 * e->start,
                1e3 * e->end);
    }
    for (int t = 0; t <= 10; t++)                      /* the axis */
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">%.3g</text>\n",
                left + width * t / 10, top + 3 * lane_h + 20, 1e3 * span * t / 10);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">ms</text>\n</svg>\n",
            left + width / 2, top + 3 * lane_h + 40);
    opened = 0;
    KRILL_TRY(krill_outfile_close(&out, 1));
cleanup:
    if (opened) (void)krill_outfile_close(&out, 0);
    return st;
}
