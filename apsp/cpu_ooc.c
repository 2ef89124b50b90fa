/* apsp/cpu_ooc.c - the CPU kernels of out-of-core APSP (apsp_ooc_kernels, ooc.c) on packed
 * side x side blocks: the closure by the recursive algorithm of cpu_rec.c (base 32, as the
 * pivot tiles of fw-a), and c = min(c, a (x) b) by fw-a's register-blocked product in row
 * stripes of 64, one per task. A product whose c is one of its operands (the panels)
 * copies that operand first, so it reads the old block, as the in-core panels do. Traffic of
 * a product: side^3 relaxations; A and C once per stripe, B once per stripe from L2/L3. */
#include <omp.h>
#include <string.h>

#include "apsp/cpu_kernels.h"

#define OOC_STRIP 64        /* rows of c per task */
#define OOC_PROBE 256       /* side of the timed product (scaled by (side / 256)^3) */

typedef struct cpu_ooc_state {
    apsp_run sub;            /* a run over one block: the closure's scratch lives in it */
    void *copy;              /* side^2 cells: the operand a panel product overwrites */
    void *probe;             /* 3 x OOC_PROBE^2 cells for time_minplus */
} cpu_ooc_state;

static void cpu_ooc_end(apsp_run *run, void *state)
{
    cpu_ooc_state *s = (cpu_ooc_state *)state;
    (void)run;
    if (s) {
        apsp_cpu_state_end(&s->sub);
        krill_free(s->copy);
        krill_free(s->probe);
        krill_free(s);
    }
}

static krill_status cpu_ooc_begin(apsp_run *run, int32_t side, void **state)
{
    krill_status st = KRILL_OK;
    cpu_ooc_state *s = NULL;
    const size_t cells = (size_t)side * (size_t)side;
    KRILL_CALLOC(s, 1);
    s->sub = *run;
    s->sub.d = NULL;
    s->sub.p = NULL;
    s->sub.state = NULL;
    s->sub.n = s->sub.npad = s->sub.tile = side;
    KRILL_TRY(apsp_cpu_state_begin(&s->sub, apsp_cpu_rec_scratch(side, APSP_CPU_GRANULE)));
    KRILL_TRY(krill_alloc_n(&s->copy, cells, run->elem, 0, "out-of-core APSP operand copy"));
    KRILL_TRY(krill_alloc_n(&s->probe, 3 * OOC_PROBE * OOC_PROBE, run->elem, 1,
                            "out-of-core APSP timing blocks"));
    *state = s;
    s = NULL;
cleanup:
    cpu_ooc_end(run, s);
    return st;
}

static krill_status cpu_ooc_close(apsp_run *run, void *state, void *stream, void *d, int32_t side)
{
    cpu_ooc_state *s = (cpu_ooc_state *)state;
    (void)run;
    (void)stream;
    s->sub.d = d;
    apsp_cpu_rec_close(&s->sub, 0, side, APSP_CPU_GRANULE);
    return KRILL_OK;
}

/* c = min(c, a (x) b) on blocks of side `side` (ld side), c not overlapping a or b. */
static void product(const apsp_run *run, void *c, const void *a, const void *b, int32_t side)
{
    const apsp_cpu_kern *kern = apsp_cpu_kern_for(run->weight);
    const int32_t strips = (side + OOC_STRIP - 1) / OOC_STRIP;
    const size_t elem = run->elem;
#pragma omp parallel for schedule(static) num_threads(apsp_cpu_threads(run))
    for (int32_t q = 0; q < strips; q++) {
        const int32_t rows = side - q * OOC_STRIP < OOC_STRIP ? side - q * OOC_STRIP : OOC_STRIP;
        const size_t off = (size_t)q * OOC_STRIP * (size_t)side * elem;
        const apsp_blk cb = {(char *)c + off, NULL, NULL, side};
        const apsp_blk ab = {(char *)a + off, NULL, NULL, side};
        const apsp_blk bb = {(void *)b, NULL, NULL, side};
        kern->mm(&cb, &ab, &bb, rows, side, side, run->clamp_hi);
    }
}

static krill_status cpu_ooc_minplus(apsp_run *run, void *state, void *stream, void *c,
                                    const void *a, const void *b, int32_t side)
{
    cpu_ooc_state *s = (cpu_ooc_state *)state;
    (void)stream;
    if (a == c || b == c) {
        memcpy(s->copy, c, (size_t)side * (size_t)side * run->elem);
        if (a == c) a = s->copy;
        if (b == c) b = s->copy;
    }
    product(run, c, a, b, side);
    return KRILL_OK;
}

static krill_status cpu_ooc_time(apsp_run *run, void *state, int32_t side, double *seconds)
{
    cpu_ooc_state *s = (cpu_ooc_state *)state;
    const int32_t p = side < OOC_PROBE ? side : OOC_PROBE;
    const size_t block = (size_t)OOC_PROBE * OOC_PROBE * run->elem;
    double best = 1e30, scale = (double)side / p;
    for (int rep = 0; rep < 3; rep++) {
        double t = krill_wtime();
        product(run, s->probe, (char *)s->probe + block, (char *)s->probe + 2 * block, p);
        t = krill_wtime() - t;
        if (t < best) best = t;
    }
    *seconds = best * scale * scale * scale;
    return KRILL_OK;
}

/* the CPU's "device" memory is the host's: its scratch does not count against the blocks */
static double cpu_ooc_scratch_bytes(const apsp_run *run, int32_t side)
{
    (void)run;
    (void)side;
    return 0;
}

const apsp_ooc_kernels apsp_cpu_ooc_kernels = {
    .granule = APSP_CPU_GRANULE,
    .begin = cpu_ooc_begin,
    .close = cpu_ooc_close,
    .minplus = cpu_ooc_minplus,
    .time_minplus = cpu_ooc_time,
    .scratch_bytes = cpu_ooc_scratch_bytes,
    .end = cpu_ooc_end,
};
