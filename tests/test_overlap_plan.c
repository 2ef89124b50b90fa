/* tests/test_overlap_plan.c - the overlap planner on synthetic models and problems: the
 * block order (section 4.1's rule, dependencies, cycles), placement within the memory
 * budget, the prediction arithmetic against hand-computed schedules, the lower bound, the
 * fall-back to the sequential schedule, the host pack latency, direct plans and the cost of
 * pitched copies, malformed problems and allocation faults. Nothing runs: regions point at
 * a dummy byte. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apsp/apsp_impl.h"
#include "overlap/overlap_impl.h"
#include "testutil.h"

static char dummy;

static krill_status no_kernel(void *user, int32_t block, void *stream, void *const *in,
                              void *const *out)
{
    (void)user, (void)block, (void)stream, (void)in, (void)out;
    return KRILL_OK;
}

/* A model with round numbers: 1 GB/s each way, no latency, free host copies. */
static krill_overlap_model unit_model(void)
{
    krill_overlap_model m;
    memset(&m, 0, sizeof m);
    m.device = -1;
    m.h2d_bandwidth = m.d2h_bandwidth = 1e9;
    m.copies_overlap = m.copy_kernel_overlap = 1;
    return m;
}

/* A GEMM-shaped problem: nbi A panels of `abytes`, nbj B panels of `bbytes`, nbi x nbj C
 * blocks of `cbytes`, kernel `k` seconds each. */
typedef struct shaped {
    krill_overlap_region regions[64];
    krill_overlap_block blocks[64];
    int32_t lists[64][3];
    krill_overlap_problem pb;
} shaped;

static void gemm_shaped(shaped *s, int nbi, int nbj, size_t abytes, size_t bbytes, size_t cbytes,
                        double k)
{
    int nr = 0;
    memset(s, 0, sizeof *s);
    for (int i = 0; i < nbi; i++) s->regions[nr++] = (krill_overlap_region){&dummy, abytes, 1, abytes};
    for (int j = 0; j < nbj; j++) s->regions[nr++] = (krill_overlap_region){&dummy, bbytes, 1, bbytes};
    for (int b = 0; b < nbi * nbj; b++) {
        s->regions[nr] = (krill_overlap_region){&dummy, cbytes, 1, cbytes};
        s->lists[b][0] = b / nbj;
        s->lists[b][1] = nbi + b % nbj;
        s->lists[b][2] = nr++;
        s->blocks[b] = (krill_overlap_block){s->lists[b], s->lists[b] + 2, NULL, 2, 1, 0, k};
    }
    s->pb = (krill_overlap_problem){s->regions, s->blocks, nr, nbi * nbj, no_kernel, NULL};
}

static krill_overlap_plan_opts opts_with(double memory, krill_overlap_mode mode)
{
    krill_overlap_plan_opts o;
    krill_overlap_plan_opts_default(&o);
    o.memory = memory;
    o.mode = mode;
    return o;
}

/* Section 4.1: the next region sent is the one that completes the most blocks per byte. */
static void test_order_rule(void)
{
    shaped s;
    krill_overlap_model m = unit_model();
    krill_overlap_plan_opts o = opts_with(1e12, KRILL_OVERLAP_PIPELINED);
    krill_overlap_plan *p = NULL;
    krill_overlap_plan_info info;
    /* A panels 4x the B panels: after block (0,0), B panels come first (0,1), (0,2) ... */
    gemm_shaped(&s, 3, 3, 4096, 1024, 256, 1e-6);
    CHECK_OK(krill_overlap_plan_create(&m, &s.pb, &o, &p));
    if (p) {
        const int32_t *order = krill_overlap_plan_order(p);
        CHECK(order[0] == 0);
        CHECK(order[1] == 1 && order[2] == 2);          /* B1, then B2: 1 block per 1 KiB */
        CHECK(order[3] == 3 && order[4] == 4 && order[5] == 5);   /* A1 completes 3 blocks */
        krill_overlap_plan_info_get(p, &info);
        CHECK(info.sends == 6);                          /* every panel sent once */
        CHECK(info.recvs == 9);
        CHECK(info.send_bytes == 3 * 4096 + 3 * 1024);
        CHECK(info.device_bytes <= o.memory);
        krill_overlap_plan_destroy(&p);
    }
    /* B panels 4x the A panels: the order goes down the first column of blocks first */
    gemm_shaped(&s, 3, 3, 1024, 4096, 256, 1e-6);
    CHECK_OK(krill_overlap_plan_create(&m, &s.pb, &o, &p));
    if (p) {
        const int32_t *order = krill_overlap_plan_order(p);
        CHECK(order[0] == 0 && order[1] == 3 && order[2] == 6);
        krill_overlap_plan_destroy(&p);
    }
}

/* A tight budget: fewer regions resident, some panels sent again, never over the budget;
 * a budget below one block's regions is refused naming the block. */
static void test_budget(void)
{
    shaped s;
    krill_overlap_model m = unit_model();
    krill_overlap_plan *p = NULL;
    krill_overlap_plan_info info;
    gemm_shaped(&s, 4, 4, 4096, 4096, 4096, 1e-6);
    for (double mem = 3 * 4096; mem <= 40 * 4096; mem += 4096) {
        krill_overlap_plan_opts o = opts_with(mem, KRILL_OVERLAP_AUTO);
        CHECK_OK(krill_overlap_plan_create(&m, &s.pb, &o, &p));
        if (!p) continue;
        krill_overlap_plan_info_get(p, &info);
        CHECK(info.device_bytes <= mem);
        CHECK(info.sends >= 8 && info.recvs == 16);
        if (mem >= 24 * 4096) CHECK(info.sends == 8);   /* all panels and C blocks fit */
        krill_overlap_plan_destroy(&p);
    }
    {
        krill_overlap_plan_opts o = opts_with(2 * 4096, KRILL_OVERLAP_AUTO);
        CHECK_STATUS(krill_overlap_plan_create(&m, &s.pb, &o, &p), KRILL_ERR_DEVICE_ALLOC);
        CHECK(strstr(krill_last_error(), "block 0") != NULL);
        CHECK(p == NULL);
    }
}

/* `after` is respected, a cycle is refused. */
static void test_dependencies(void)
{
    krill_overlap_region r[6];
    krill_overlap_block b[6];
    int32_t io[6][2], after[6][2];
    krill_overlap_model m = unit_model();
    krill_overlap_plan_opts o = opts_with(1e9, KRILL_OVERLAP_AUTO);
    krill_overlap_plan *p = NULL;
    for (int k = 0; k < 6; k++) {
        r[k] = (krill_overlap_region){&dummy, 64, 1, 64};
        io[k][0] = k;
        /* block k runs after k + 1 (a reversed chain), and block 0 after 5 */
        after[k][0] = k + 1 < 6 ? k + 1 : 0;
        b[k] = (krill_overlap_block){io[k], io[k], after[k], 1, 1, k + 1 < 6 ? 1 : 0, 1e-6};
    }
    {
        krill_overlap_problem pb = {r, b, 6, 6, no_kernel, NULL};
        CHECK_OK(krill_overlap_plan_create(&m, &pb, &o, &p));
        if (p) {
            const int32_t *order = krill_overlap_plan_order(p);
            for (int k = 0; k < 6; k++) CHECK(order[k] == 5 - k);
            krill_overlap_plan_destroy(&p);
        }
        b[5].n_after = 1;                                 /* 5 after 0: a cycle */
        CHECK_STATUS(krill_overlap_plan_create(&m, &pb, &o, &p), KRILL_ERR_ARG);
        CHECK(strstr(krill_last_error(), "cycle") != NULL);
    }
}

/* Three independent blocks: block k reads region 2k and writes 2k + 1, 1 MB each, its
 * kernel `seconds` long. */
static void three_blocks(krill_overlap_region r[6], krill_overlap_block b[3], int32_t io[3][2],
                         double seconds)
{
    for (int k = 0; k < 3; k++) {
        r[2 * k] = r[2 * k + 1] = (krill_overlap_region){&dummy, 1000000, 1, 1000000};
        io[k][0] = 2 * k;
        io[k][1] = 2 * k + 1;
        b[k] = (krill_overlap_block){&io[k][0], &io[k][1], NULL, 1, 1, 0, seconds};
    }
}

/* Three independent blocks, each send, kernel and receive taking t: pipelined 5t (fill t,
 * three kernels, drain t), sequential 9t, bound 5t. Then the host copy and latency terms. */
static void test_prediction(void)
{
    const double t = 1e-3;
    krill_overlap_region r[6];
    krill_overlap_block b[3];
    int32_t io[3][2];
    krill_overlap_model m = unit_model();
    krill_overlap_plan_opts o = opts_with(1e9, KRILL_OVERLAP_AUTO);
    krill_overlap_plan *p = NULL;
    krill_overlap_plan_info info;
    three_blocks(r, b, io, t);
    {
        krill_overlap_problem pb = {r, b, 6, 3, no_kernel, NULL};
        CHECK_OK(krill_overlap_plan_create(&m, &pb, &o, &p));
        krill_overlap_plan_info_get(p, &info);
        CHECK_CLOSE(info.predicted_pipelined, 5 * t, 1e-12);
        CHECK_CLOSE(info.predicted_sequential, 9 * t, 1e-12);
        CHECK_CLOSE(info.bound, 5 * t, 1e-12);
        CHECK(!info.sequential);
        CHECK_CLOSE(info.send_seconds, 3 * t, 1e-12);
        krill_overlap_plan_destroy(&p);

        /* one slot each way, a 0.5 ms host copy per region, 0.1 ms latency per copy:
           send 1.1, kernel 1, receive 1.1 (ms). The host packs and unpacks one region at a
           time; a send slot is reused once its send ended, a receive slot once its content
           was unpacked, which the host does (waiting) when it needs the slot. Hand schedule
           (ms):
             pack S0 0-0.5, S0 0.5-1.6, K0 1.6-2.6, R0 2.6-3.7
             pack S1 1.6-2.1 (slot free at 1.6), S1 2.1-3.2, K1 3.2-4.2
             R1 needs R0's slot: unpack R0 3.7-4.2, R1 4.2-5.3
             pack S2 4.2-4.7, S2 4.7-5.8, K2 5.8-6.8
             R2 needs R1's slot: unpack R1 5.3-5.8, R2 6.8-7.9, unpack R2 7.9-8.4 */
        m.h2d_latency = m.d2h_latency = 1e-4;
        m.host_copy_bandwidth = 2e9;
        o.send_slots = o.recv_slots = 1;
        CHECK_OK(krill_overlap_plan_create(&m, &pb, &o, &p));
        krill_overlap_plan_info_get(p, &info);
        CHECK_CLOSE(info.predicted_pipelined, 8.4e-3, 1e-9);
        /* sequential: 3 x (0.5 + 1.1 + 1 + 1.1 + 0.5) */
        CHECK_CLOSE(info.predicted_sequential, 3 * 4.2e-3, 1e-9);
        krill_overlap_plan_destroy(&p);

        /* copies that cannot overlap kernels: no gain, so AUTO runs sequentially */
        m = unit_model();
        m.copy_kernel_overlap = 0;
        o = opts_with(1e9, KRILL_OVERLAP_AUTO);
        CHECK_OK(krill_overlap_plan_create(&m, &pb, &o, &p));
        krill_overlap_plan_info_get(p, &info);
        CHECK(info.sequential);
        CHECK_CLOSE(info.predicted, 9 * t, 1e-12);
        krill_overlap_plan_destroy(&p);
        o.mode = KRILL_OVERLAP_PIPELINED;                /* the mode overrides */
        CHECK_OK(krill_overlap_plan_create(&m, &pb, &o, &p));
        krill_overlap_plan_info_get(p, &info);
        CHECK(!info.sequential);
        krill_overlap_plan_destroy(&p);
    }
}

/* The model's newer terms, on test_prediction's three blocks (1 MB in, 1 MB out, 1 ms
 * kernel; copies 1.1 ms with 0.1 ms latency):
 *  - the host pack latency: test_prediction's one-slot schedule with 0.6 ms packs and
 *    unpacks (0.5 + 0.1) instead of 0.5: pack S0 0-0.6, S0 0.6-1.7, K0 1.7-2.7, R0 2.7-3.8;
 *    pack S1 1.7-2.3, S1 2.3-3.4, K1 3.4-4.4; unpack R0 3.8-4.4, R1 4.4-5.5; pack S2
 *    4.4-5.0, S2 5.0-6.1, K2 6.1-7.1; unpack R1 5.5-6.1, R2 7.1-8.2, unpack R2 8.2-8.8;
 *    sequential 3 x (0.6 + 1.1 + 1 + 1.1 + 0.6);
 *  - a direct plan (page-locked regions, a GPU model): no packing, no pinned staging:
 *    S 0-1.1-2.2-3.3, K 1.1-2.1, 2.2-3.2, 3.3-4.3, R 2.1-3.2-4.3-5.4; sequential 3 x 3.2;
 *    with 10 pitched rows a region and 10 us a row each copy takes 0.1 ms more, and only
 *    in the direct plan (a staged copy is contiguous);
 *  - host_page_locked on the CPU's model changes nothing. */
static void test_model_terms(void)
{
    krill_overlap_region r[6];
    krill_overlap_block b[3];
    int32_t io[3][2];
    krill_overlap_model m = unit_model();
    krill_overlap_plan_opts o = opts_with(1e9, KRILL_OVERLAP_AUTO);
    krill_overlap_plan *p = NULL;
    krill_overlap_plan_info info;
    three_blocks(r, b, io, 1e-3);
    krill_overlap_problem pb = {r, b, 6, 3, no_kernel, NULL};
    m.h2d_latency = m.d2h_latency = 1e-4;
    m.host_copy_bandwidth = 2e9;
    m.host_copy_latency = 1e-4;
    o.send_slots = o.recv_slots = 1;
    CHECK_OK(krill_overlap_plan_create(&m, &pb, &o, &p));
    krill_overlap_plan_info_get(p, &info);
    CHECK_CLOSE(info.predicted_pipelined, 8.8e-3, 1e-9);
    CHECK_CLOSE(info.predicted_sequential, 3 * 4.4e-3, 1e-9);
    CHECK(!info.direct && info.pinned_bytes == 2e6);
    krill_overlap_plan_destroy(&p);

    o.host_page_locked = 1;                      /* the CPU's model: still staged */
    CHECK_OK(krill_overlap_plan_create(&m, &pb, &o, &p));
    krill_overlap_plan_info_get(p, &info);
    CHECK(!info.direct && info.pinned_bytes > 0);
    CHECK_CLOSE(info.predicted_pipelined, 8.8e-3, 1e-9);
    krill_overlap_plan_destroy(&p);

    m.device = 0;                                /* a GPU's model: direct */
    o = opts_with(1e9, KRILL_OVERLAP_AUTO);
    o.host_page_locked = 1;
    CHECK_OK(krill_overlap_plan_create(&m, &pb, &o, &p));
    krill_overlap_plan_info_get(p, &info);
    CHECK(info.direct && info.pinned_bytes == 0);
    CHECK_CLOSE(info.predicted_pipelined, 5.4e-3, 1e-9);
    CHECK_CLOSE(info.predicted_sequential, 3 * 3.2e-3, 1e-9);
    CHECK_CLOSE(info.send_seconds, 3 * 1.1e-3, 1e-12);
    krill_overlap_plan_destroy(&p);

    m.h2d_row_seconds = m.d2h_row_seconds = 1e-5;   /* 10 rows of 100 kB, 200 kB apart */
    for (int k = 0; k < 6; k++) r[k] = (krill_overlap_region){&dummy, 100000, 10, 200000};
    for (int direct = 1; direct >= 0; direct--) {
        o.host_page_locked = direct;
        CHECK_OK(krill_overlap_plan_create(&m, &pb, &o, &p));
        krill_overlap_plan_info_get(p, &info);
        CHECK(info.direct == direct);
        CHECK_CLOSE(info.send_seconds, 3 * (direct ? 1.2e-3 : 1.1e-3), 1e-12);
        CHECK_CLOSE(info.recv_seconds, 3 * (direct ? 1.2e-3 : 1.1e-3), 1e-12);
        krill_overlap_plan_destroy(&p);
    }
}

/* Staged copies in chunks: one block, 1 MB in, 1 MB out, a 1 ms kernel; copies at 1 GB/s
 * with 0.1 ms latency a chunk, host packs at 2 GB/s; chunks of 0.5 MB (0.6 ms copies, 0.25
 * ms packs). Hand schedules (ms):
 *  - one slot each way: pack 0-0.25, copy 0.25-0.85, pack 0.85-1.1 (the slot is free once
 *    its copy ended), copy 1.1-1.7; K 1.7-2.7; R chunk 0 2.7-3.3, its unpack 3.3-3.55 frees
 *    the slot, chunk 1 3.55-4.15, unpack 4.15-4.4: 4.4, pipelined or not (one block);
 *  - two slots: packs 0-0.25 and 0.25-0.5, copies 0.25-0.85 and 0.85-1.45; K 1.45-2.45;
 *    R 2.45-3.05 and 3.05-3.65, unpacks 3.05-3.3 and 3.65-3.9: 3.9;
 *  - one chunk (the default 8 MiB): pack 0-0.5, copy 0.5-1.6 (one latency), K 1.6-2.6,
 *    R 2.6-3.7, unpack 3.7-4.2: 4.2;
 *  - the same with 0.05 ms of the host's time to queue each step: pack 0-0.5, queue S
 *    0.5-0.55, S 0.55-1.65; K queued 0.55-0.6, runs 1.65-2.65; R queued 0.6-0.65, runs
 *    2.65-3.75, unpack 3.75-4.25: 4.25. Sequentially the host queues each step once the
 *    previous one ended: S 0.55-1.65, queue K 1.65-1.7, K 1.7-2.7, queue R 2.7-2.75, R
 *    2.75-3.85, unpack 3.85-4.35: 4.35.
 * The pinned staging is slots x min(chunk, region). */
static void test_chunks(void)
{
    krill_overlap_region r[2] = {{&dummy, 1000000, 1, 1000000}, {&dummy, 1000000, 1, 1000000}};
    int32_t in = 0, out = 1;
    krill_overlap_block b = {&in, &out, NULL, 1, 1, 0, 1e-3};
    krill_overlap_problem pb = {r, &b, 2, 1, no_kernel, NULL};
    krill_overlap_model m = unit_model();
    krill_overlap_plan *p = NULL;
    krill_overlap_plan_info info;
    const struct { int64_t chunk; int slots; double predicted, send, pinned; } cases[] = {
        {500000, 1, 4.4e-3, 1.2e-3, 1e6}, {500000, 2, 3.9e-3, 1.2e-3, 2e6}, {0, 1, 4.2e-3, 1.1e-3, 2e6}};
    m.h2d_latency = m.d2h_latency = 1e-4;
    m.host_copy_bandwidth = 2e9;
    for (int c = 0; c < 3; c++) {
        krill_overlap_plan_opts o = opts_with(1e9, KRILL_OVERLAP_PIPELINED);
        o.chunk_bytes = cases[c].chunk;
        o.send_slots = o.recv_slots = cases[c].slots;
        CHECK_OK(krill_overlap_plan_create(&m, &pb, &o, &p));
        krill_overlap_plan_info_get(p, &info);
        CHECK_CLOSE(info.predicted_pipelined, cases[c].predicted, 1e-9);
        CHECK_CLOSE(info.predicted_sequential, cases[c].predicted, 1e-9);
        CHECK_CLOSE(info.send_seconds, cases[c].send, 1e-12);
        CHECK(info.pinned_bytes == cases[c].pinned);
        krill_overlap_plan_destroy(&p);
    }
    {
        krill_overlap_plan_opts o = opts_with(1e9, KRILL_OVERLAP_PIPELINED);
        o.send_slots = o.recv_slots = 1;
        m.issue_seconds = 5e-5;
        CHECK_OK(krill_overlap_plan_create(&m, &pb, &o, &p));
        krill_overlap_plan_info_get(p, &info);
        CHECK_CLOSE(info.predicted_pipelined, 4.25e-3, 1e-9);
        CHECK_CLOSE(info.predicted_sequential, 4.35e-3, 1e-9);
        krill_overlap_plan_destroy(&p);
        m.issue_seconds = 0;
    }
    {   /* a chunk under the placement granule is refused, naming the option */
        krill_overlap_plan_opts o = opts_with(1e9, KRILL_OVERLAP_AUTO);
        o.chunk_bytes = 100;
        CHECK_STATUS(krill_overlap_plan_create(&m, &pb, &o, &p), KRILL_ERR_ARG);
        CHECK(strstr(krill_last_error(), "chunk_bytes") != NULL);
    }
}

/* xorshift64: the random problems' draws */
static uint64_t next_u(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Direct plans: a send that must see an earlier receive's data (host_after) waits for that
 * receive on the device, so the prediction must not start it earlier, even where no chain
 * of waits leads there. Random problems: 10 blocks over 7 regions of 2-8 kB, each reading
 * one or two and writing one (in place or not), `after` the earlier writers of what it
 * touches and the earlier readers of what it writes; budgets of 1-4 x 8 kB, so regions are
 * evicted and read back; receives 10-1000x slower than sends (the data comes back late); a
 * GPU model with page-locked regions. Every such send's predicted start (its end less its
 * time) at or after the receive's end. */
static void test_direct_host_after(void)
{
    uint64_t seed = 77;
    int checked = 0;
    for (int trial = 0; trial < 3000; trial++) {
        enum { NR = 7, NB = 10 };
        krill_overlap_region r[NR];
        krill_overlap_block b[NB];
        int32_t in[NB][2], out[NB], after[NB][NB];
        krill_overlap_model m = unit_model();
        krill_overlap_plan_opts o = opts_with(8192.0 * (double)(1 + next_u(&seed) % 4),
                                              KRILL_OVERLAP_PIPELINED);
        krill_overlap_plan *p = NULL;
        double elapsed, *end = NULL;
        m.device = 0;
        m.h2d_bandwidth = 1e8 * (double)(1 + next_u(&seed) % 10);
        m.d2h_bandwidth = 1e6 * (double)(1 + next_u(&seed) % 10);
        for (int k = 0; k < NR; k++)
            r[k] = (krill_overlap_region){&dummy, 2000 * (1 + (size_t)(next_u(&seed) % 4)), 1, 8000};
        for (int k = 0; k < NB; k++) {
            const int n_in = 1 + (int)(next_u(&seed) % 2);
            int n_after = 0;
            in[k][0] = (int32_t)(next_u(&seed) % NR);
            in[k][1] = (int32_t)((in[k][0] + 1 + next_u(&seed) % (NR - 1)) % NR);
            out[k] = next_u(&seed) % 2 ? in[k][0] : (int32_t)(next_u(&seed) % NR);
            for (int j = 0; j < k; j++) {
                int dep = out[j] == out[k];
                for (int q = 0; q < n_in; q++) dep |= out[j] == in[k][q];
                for (int q = 0; q < b[j].n_in; q++) dep |= in[j][q] == out[k];
                if (dep) after[k][n_after++] = j;
            }
            b[k] = (krill_overlap_block){in[k], &out[k], after[k], n_in, 1, n_after,
                                         1e-5 * (double)(1 + next_u(&seed) % 5)};
        }
        o.host_page_locked = 1;
        {
            krill_overlap_problem pb = {r, b, NR, NB, no_kernel, NULL};
            if (krill_overlap_plan_create(&m, &pb, &o, &p) != KRILL_OK) {
                krill_clear_error();     /* one block does not fit the budget */
                continue;
            }
        }
        end = malloc(sizeof(double) * (size_t)p->n_steps);
        for (int seq = 0; seq < 2 && end; seq++) {
            CHECK_OK(overlap_plan_simulate(p, seq, &elapsed, end));
            for (int64_t s = 0; s < p->n_steps; s++) {
                const overlap_step *st = &p->steps[s];
                if (st->kind != OVERLAP_SEND || st->host_after < 0) continue;
                CHECK(end[s] - st->seconds >= end[st->host_after] - 1e-15);
                checked++;
            }
        }
        free(end);
        krill_overlap_plan_destroy(&p);
    }
    CHECK(checked > 1000);
}

/* Fragmentation: regions of 512, 256 and 768 bytes, block 0 reads {0, 1}, block 1 reads
 * {1, 2}, 1024 bytes of memory. First fit leaves region 1 at 512 after block 0, so region 2
 * (768) fits nowhere beside it: the arena is emptied and block 1 placed afresh (region 1
 * sent again). */
static void test_fragmentation(void)
{
    krill_overlap_region r[3] = {{&dummy, 512, 1, 512}, {&dummy, 256, 1, 256}, {&dummy, 768, 1, 768}};
    int32_t in0[2] = {0, 1}, in1[2] = {1, 2};
    krill_overlap_block b[2] = {{in0, NULL, NULL, 2, 0, 0, 1e-6}, {in1, NULL, NULL, 2, 0, 0, 1e-6}};
    krill_overlap_problem pb = {r, b, 3, 2, no_kernel, NULL};
    krill_overlap_model m = unit_model();
    krill_overlap_plan_opts o = opts_with(1024, KRILL_OVERLAP_AUTO);
    krill_overlap_plan *p = NULL;
    krill_overlap_plan_info info;
    CHECK_OK(krill_overlap_plan_create(&m, &pb, &o, &p));
    if (p) {
        krill_overlap_plan_info_get(p, &info);
        CHECK(info.sends == 4 && info.device_bytes <= 1024);
        krill_overlap_plan_destroy(&p);
    }
    o.memory = 1000;                            /* 256 + 768 > 1000: refused, naming block 1 */
    CHECK_STATUS(krill_overlap_plan_create(&m, &pb, &o, &p), KRILL_ERR_DEVICE_ALLOC);
    CHECK(strstr(krill_last_error(), "block 1") != NULL);
}

static void test_malformed(void)
{
    shaped s;
    krill_overlap_model m = unit_model();
    krill_overlap_plan_opts o = opts_with(1e9, KRILL_OVERLAP_AUTO);
    krill_overlap_plan *p = NULL;
    gemm_shaped(&s, 2, 2, 64, 64, 64, 1e-6);
    s.lists[1][0] = 99;                                  /* region out of range */
    CHECK_STATUS(krill_overlap_plan_create(&m, &s.pb, &o, &p), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "block 1") != NULL);
    s.lists[1][0] = 3;                                   /* the same region twice */
    CHECK_STATUS(krill_overlap_plan_create(&m, &s.pb, &o, &p), KRILL_ERR_ARG);
    s.lists[1][0] = 0;
    s.regions[0].pitch = 1;                              /* pitch < row_bytes */
    CHECK_STATUS(krill_overlap_plan_create(&m, &s.pb, &o, &p), KRILL_ERR_ARG);
    s.regions[0].pitch = 64;
    s.blocks[2].seconds = NAN;
    CHECK_STATUS(krill_overlap_plan_create(&m, &s.pb, &o, &p), KRILL_ERR_ARG);
    s.blocks[2].seconds = 0;
    o.memory = 0;
    CHECK_STATUS(krill_overlap_plan_create(&m, &s.pb, &o, &p), KRILL_ERR_ARG);
    o.memory = 1e9;
    m.h2d_bandwidth = 0;
    CHECK_STATUS(krill_overlap_plan_create(&m, &s.pb, &o, &p), KRILL_ERR_ARG);
    m = unit_model();
    CHECK_STATUS(krill_overlap_plan_create(&m, NULL, &o, &p), KRILL_ERR_ARG);
    CHECK(p == NULL);
}

static void test_faults(void)
{
    shaped s;
    krill_overlap_model m = unit_model();
    krill_overlap_plan_opts o = opts_with(10 * 4096, KRILL_OVERLAP_AUTO);
    krill_overlap_plan *p = NULL;
    int failed = 0;
    krill_status st;
    gemm_shaped(&s, 3, 3, 4096, 4096, 4096, 1e-6);
    for (long k = 1; k < 1000; k++) {
        krill_fault_alloc_after(k);
        st = krill_overlap_plan_create(&m, &s.pb, &o, &p);
        krill_fault_alloc_after(0);
        if (st == KRILL_OK) break;
        failed++;
        CHECK(st == KRILL_ERR_ALLOC && p == NULL);
    }
    CHECK(failed > 10 && p != NULL);
    krill_overlap_plan_destroy(&p);
    krill_overlap_plan_destroy(&p);                      /* NULL-safe */
}

/* The blocks of out-of-core APSP (apsp/ooc.c) for nb x nb tiles of s x s int32: round K's
 * pivot (K,K,K), panels (K,K,J) and (K,I,K), rest (K,I,J), numbered (K nb + I) nb + J, with
 * ooc.c's regions (tile I nb + J) and `after` lists. Kernels `k` seconds each. */
typedef struct apsp_shaped {
    int32_t nb;
    krill_overlap_region *regions;
    krill_overlap_block *blocks;
    int32_t *lists;
    krill_overlap_problem pb;
} apsp_shaped;

/* nb x nb tiles of s int32 columns (of 4 s bytes each), ooc.c's blocks, k seconds each */
static int apsp_shape(apsp_shaped *a, int32_t nb, size_t s, double k)
{
    const int32_t nblocks = nb * nb * nb;
    a->nb = nb;
    a->regions = calloc((size_t)nb * nb, sizeof *a->regions);
    a->blocks = calloc((size_t)nblocks, sizeof *a->blocks);
    a->lists = calloc((size_t)nblocks * APSP_OOC_LIST_INTS(nb), sizeof *a->lists);
    if (!a->regions || !a->blocks || !a->lists) return 0;
    for (int32_t r = 0; r < nb * nb; r++)
        a->regions[r] = (krill_overlap_region){&dummy, 4 * s, s, 4 * s * (size_t)nb};
    apsp_ooc_blocks(nb, k, a->lists, a->blocks);
    a->pb = (krill_overlap_problem){a->regions, a->blocks, nb * nb, nblocks, no_kernel, NULL};
    return 1;
}

static void apsp_unshape(apsp_shaped *a)
{
    free(a->regions);
    free(a->blocks);
    free(a->lists);
}

/* Out-of-core APSP's plan on an H200-like direct model (tiles of 2048 int32: a send or a
 * receive about 0.4 ms, a kernel 0.72 ms), D 8 x 8 tiles, a budget of 17 tiles: the kernel
 * lane must not wait on transfers. The order keeps `after` (and runs blocks of round K + 1
 * as soon as round K wrote their tiles); few kernels update the tile the block just before
 * them wrote (each would wait for that tile's receive: 0.4 ms); no send waits for the
 * receive of the block just before its own (evicting the tile just written, as Belady's
 * rule alone does in this sweep, puts that receive and the send between two kernels). The
 * prediction is then within 5% of the kernels' sum (before both rules: 1.30x, 63 blocks
 * chasing, 76 such sends). */
static void test_apsp_lookahead(void)
{
    const int32_t nb = 8;
    const size_t s = 2048, tile = 4 * s * s;
    krill_overlap_model m = unit_model();
    krill_overlap_plan_opts o = opts_with(17.0 * tile, KRILL_OVERLAP_PIPELINED);
    krill_overlap_plan *p = NULL;
    krill_overlap_plan_info info;
    apsp_shaped a;
    int32_t *pos = NULL;
    m.device = 0;
    m.h2d_bandwidth = 54.7e9, m.d2h_bandwidth = 55.3e9;
    m.h2d_latency = 4.8e-6, m.d2h_latency = 4.0e-6, m.launch_latency = 4.9e-6;
    m.h2d_row_seconds = 36e-9, m.d2h_row_seconds = 48e-9;
    o.host_page_locked = 1;
    CHECK(apsp_shape(&a, nb, s, 0.72e-3));
    pos = calloc((size_t)nb * nb * nb, sizeof *pos);
    CHECK(pos != NULL);
    if (pos && a.lists) CHECK_OK(krill_overlap_plan_create(&m, &a.pb, &o, &p));
    if (p) {
        const int32_t *order = krill_overlap_plan_order(p);
        int chased = 0, late_sends = 0;
        krill_overlap_plan_info_get(p, &info);
        for (int32_t i = 0; i < a.pb.n_blocks; i++) pos[order[i]] = i;
        for (int32_t b = 0; b < a.pb.n_blocks; b++)
            for (int32_t k = 0; k < a.blocks[b].n_after; k++)
                CHECK(pos[a.blocks[b].after[k]] < pos[b]);
        for (int32_t i = 1; i < a.pb.n_blocks; i++)
            chased += a.lists[(size_t)order[i] * APSP_OOC_LIST_INTS(nb) + 3] ==
                      a.lists[(size_t)order[i - 1] * APSP_OOC_LIST_INTS(nb) + 3];
        for (int64_t t = 0; t < p->n_steps; t++) {
            const overlap_step *st = &p->steps[t];
            for (int32_t w = 0; w < st->n_wait && st->kind == OVERLAP_SEND; w++) {
                const overlap_step *on = &p->steps[p->waits[st->wait_first + w]];
                late_sends += on->kind == OVERLAP_RECV && pos[on->block] + 1 >= pos[st->block];
            }
        }
        printf("test_apsp_lookahead: %d of %d blocks chase the previous one, %d sends wait "
               "for the previous block's receive, predicted %.1f ms for %.1f ms of kernels\n",
               chased, a.pb.n_blocks, late_sends, info.predicted_pipelined * 1e3,
               info.kernel_seconds * 1e3);
        CHECK(chased <= a.pb.n_blocks / 16);
        CHECK(late_sends == 0);
        CHECK(p->arena_bytes <= (int64_t)o.memory);
        CHECK(!info.sequential && info.predicted_pipelined <= 1.05 * info.kernel_seconds);
    }
    krill_overlap_plan_destroy(&p);
    free(pos);
    apsp_unshape(&a);
}

int main(void)
{
    test_order_rule();
    test_budget();
    test_dependencies();
    test_prediction();
    test_model_terms();
    test_chunks();
    test_direct_host_after();
    test_fragmentation();
    test_malformed();
    test_faults();
    test_apsp_lookahead();
    return tu_finish("test_overlap_plan");
}
