/* tests/test_overlap.c - the overlap executor on the CPU backend (threads as lanes): the
 * DGEMM client against the unsplit product (bit for bit) and a plain triple loop, for
 * several block sides, budgets that force evictions, both modes and thread counts; an
 * in-place problem with dependencies whose regions are evicted and read back (the
 * write-through path); both through whole-region staging and through chunks smaller than
 * a row (one slot and three; rows split across chunks); timelines checked step by step;
 * sends kept moving while a kernel runs; a kernel that fails; allocation faults; the
 * model's cache; the SVG. Run with XDG_CACHE_HOME in the build tree. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "overlap/overlap_impl.h"
#include "testutil.h"

/* C = A B summing each element's products in order of k, as the block kernel does. */
static void reference_gemm(int64_t h, int64_t m, int64_t w, const double *a, int64_t lda,
                           const double *b, int64_t ldb, double *c, int64_t ldc)
{
    for (int64_t i = 0; i < h; i++)
        for (int64_t j = 0; j < w; j++) {
            double s = 0;
            for (int64_t k = 0; k < m; k++) s += a[i * lda + k] * b[k * ldb + j];
            c[i * ldc + j] = s;
        }
}

static void test_gemm(krill_ctx *ctx)
{
    const int64_t h = 157, m = 93, w = 211, lda = 97, ldb = 215, ldc = 213;
    double *a = malloc(sizeof(double) * h * lda), *b = malloc(sizeof(double) * m * ldb);
    double *ref = calloc((size_t)(h * ldc), sizeof(double)), *c = malloc(sizeof(double) * h * ldc);
    static const int64_t sides[] = {16, 50, 64, 157, 300, 0};
    static const double budgets[] = {0, 60e3, 400e3};
    /* staging: whole regions (3 slots); 1000-byte chunks (rows of 744 and 1688 bytes split
       across them) through 3 slots; 256-byte chunks through one slot each way (one side and
       budget: thousands of chunks, each a hand-over between threads) */
    static const int64_t chunks[] = {0, 1000, 256};
    static const int slots[] = {3, 3, 1};
    tu_random(a, h * lda, 1);
    tu_random(b, m * ldb, 2);
    reference_gemm(h, m, w, a, lda, b, ldb, ref, ldc);
    for (int si = 0; si < 6; si++)
        for (int bi = 0; bi < 3; bi++)
            for (int mode = 0; mode < 3; mode++)
            for (int ci = 0; ci < 3; ci++) {
                krill_overlap_gemm_opts o;
                krill_overlap_gemm_report rep;
                krill_overlap_timeline tl;
                krill_status st;
                int same = 1;
                if (ci == 2 && (si != 2 || bi != 1)) continue;
                krill_overlap_gemm_opts_default(&o);
                o.block = sides[si];
                o.plan.memory = budgets[bi];
                o.plan.mode = (krill_overlap_mode)mode;
                o.plan.chunk_bytes = chunks[ci];
                o.plan.send_slots = o.plan.recv_slots = slots[ci];
                o.timeline = &tl;
                for (int64_t k = 0; k < h * ldc; k++) c[k] = -7;   /* padding must stay -7 */
                st = krill_overlap_dgemm(ctx, h, m, w, a, lda, b, ldb, c, ldc, &o, &rep);
                if (st == KRILL_ERR_DEVICE_ALLOC && budgets[bi] > 0 && sides[si] > 0) {
                    /* refused only when one block's panels do not fit */
                    int64_t bh = sides[si] < h ? sides[si] : h, bw = sides[si] < w ? sides[si] : w;
                    double need = 0;
                    int64_t bytes[3] = {bh * m * 8, m * bw * 8, bh * bw * 8};
                    for (int q = 0; q < 3; q++) need += (double)((bytes[q] + 255) / 256 * 256);
                    CHECK(need > budgets[bi]);
                    continue;
                }
                CHECK_OK(st);
                if (st != KRILL_OK) continue;
                for (int64_t i = 0; i < h; i++)
                    for (int64_t j = 0; j < ldc; j++)
                        same &= j < w ? c[i * ldc + j] == ref[i * ldc + j] : c[i * ldc + j] == -7;
                if (!same)
                    fprintf(stderr, "gemm side %lld budget %g mode %d chunk %lld differs\n",
                            (long long)sides[si], budgets[bi], mode, (long long)chunks[ci]);
                CHECK(same);
                CHECK(rep.block >= 1 && (sides[si] == 0 || rep.block == sides[si]));
                if (budgets[bi] > 0) CHECK(rep.plan.device_bytes <= budgets[bi]);
                CHECK(rep.plan.sequential == (mode == KRILL_OVERLAP_SEQUENTIAL) ||
                      mode == KRILL_OVERLAP_AUTO);
                CHECK(tl.efficiency > 0 && tl.efficiency <= 1.0 + 1e-9);
                krill_overlap_timeline_free(&tl);
            }
    free(a);
    free(b);
    free(ref);
    free(c);
}

/* ---- an in-place chain over 12 regions of 1000 doubles: block 0 adds 1 to x_0, block k
 * (1..11) adds x_{k-1} + k to x_k, block 12 adds x_11 + 12 to x_0 (so x_0, written and
 * evicted early, is read back from host memory when the budget is small). */
typedef struct chain {
    double data[12][1000];
    krill_overlap_region regions[12];
    krill_overlap_block blocks[13];
    int32_t in[13][2], out[13], after[13];
    int fail_block;              /* the kernel of this block fails (-1: none) */
} chain;

static krill_status chain_kernel(void *user, int32_t block, void *stream, void *const *in,
                                 void *const *out)
{
    chain *ch = (chain *)user;
    double *x = (double *)out[0];
    (void)stream;
    if (block == ch->fail_block) return krill_error(KRILL_ERR_NUMERIC, "the chain broke");
    if (block == 0) {
        for (int i = 0; i < 1000; i++) x[i] += 1;
    } else {
        const double *prev = (const double *)in[1];
        CHECK(in[0] == out[0]);                           /* in place */
        for (int i = 0; i < 1000; i++) x[i] += prev[i] + block;
    }
    return KRILL_OK;
}

static krill_overlap_problem chain_problem(chain *ch, int fail_block)
{
    memset(ch, 0, sizeof *ch);
    ch->fail_block = fail_block;
    for (int k = 0; k < 13; k++) {
        if (k < 12) {
            for (int i = 0; i < 1000; i++) ch->data[k][i] = i * 0.5 + k;
            ch->regions[k] = (krill_overlap_region){ch->data[k], 8000, 1, 8000};
        }
        ch->in[k][0] = k % 12;
        ch->in[k][1] = k > 0 ? k - 1 : 0;
        ch->out[k] = k % 12;
        ch->after[k] = k - 1;
        ch->blocks[k] = (krill_overlap_block){ch->in[k], &ch->out[k], &ch->after[k],
                                              k > 0 ? 2 : 1, 1, k > 0 ? 1 : 0, 1e-5};
    }
    return (krill_overlap_problem){ch->regions, ch->blocks, 12, 13, chain_kernel, ch};
}

static void test_chain(krill_ctx *ctx)
{
    chain *ch = malloc(sizeof *ch);
    krill_overlap_model model;
    krill_overlap_plan *plan = NULL;
    krill_overlap_plan_info info;
    krill_overlap_timeline tl;
    CHECK_OK(krill_overlap_calibrate(ctx, 0, &model));
    for (int mode = 0; mode < 3; mode++)
        for (double memory = 2 * 8192; memory <= 12 * 8192; memory += 5 * 8192)
        for (int chunked = 0; chunked < 2; chunked++) {   /* whole; 8 chunks of 1000 bytes */
            krill_overlap_problem pb = chain_problem(ch, -1);
            krill_overlap_plan_opts o;
            double expect[1000];
            int same = 1;
            krill_overlap_plan_opts_default(&o);
            o.memory = memory;
            o.mode = (krill_overlap_mode)mode;
            o.chunk_bytes = chunked ? 1000 : 0;
            o.send_slots = o.recv_slots = chunked ? 2 : 0;
            CHECK_OK(krill_overlap_plan_create(&model, &pb, &o, &plan));
            if (!plan) continue;
            krill_overlap_plan_info_get(plan, &info);
            CHECK(info.device_bytes <= memory);
            if (memory < 3 * 8192) CHECK(info.sends == 13);  /* x_0 read back */
            CHECK_OK(krill_overlap_execute(ctx, plan, &tl));
            CHECK_OK(krill_overlap_timeline_check(plan, &tl));
            /* x_0 + 1, then x_k + x_{k-1} + k, sequentially */
            for (int i = 0; i < 1000; i++) expect[i] = i * 0.5 + 1;
            for (int k = 1; k < 12; k++)
                for (int i = 0; i < 1000; i++) {
                    double prev = expect[i];
                    expect[i] = (i * 0.5 + k) + prev + k;
                    same &= ch->data[k][i] == expect[i];
                }
            for (int i = 0; i < 1000; i++) same &= ch->data[0][i] == (i * 0.5 + 1) + expect[i] + 12;
            CHECK(same);
            if (mode == KRILL_OVERLAP_SEQUENTIAL)      /* one step at a time, in order */
                for (int64_t s = 1; s < tl.n_events; s++)
                    CHECK(tl.events[s].start >= tl.events[s - 1].end);
            krill_overlap_timeline_free(&tl);
            krill_overlap_plan_destroy(&plan);
        }
    /* a failing kernel: drained, reported with its block, nothing leaks (whole regions
       and chunks in flight) */
    for (int chunked = 0; chunked < 2; chunked++) {
        krill_overlap_problem pb = chain_problem(ch, 7);
        krill_overlap_plan_opts o;
        krill_overlap_plan_opts_default(&o);
        o.memory = 3 * 8192;
        o.chunk_bytes = chunked ? 1000 : 0;
        o.mode = KRILL_OVERLAP_PIPELINED;        /* the lanes at work when it fails */
        CHECK_OK(krill_overlap_plan_create(&model, &pb, &o, &plan));
        CHECK_STATUS(krill_overlap_execute(ctx, plan, &tl), KRILL_ERR_NUMERIC);
        CHECK(strstr(krill_last_error(), "block 7") && strstr(krill_last_error(), "chain broke"));
        CHECK(tl.events == NULL && tl.n_events == 0);
        krill_overlap_plan_destroy(&plan);
    }
    free(ch);
}

/* ---- the host keeps the sends moving while a kernel runs: 3 blocks, each copying a 4 MiB
 * region into another after sleeping 30 ms, staged in 256 KiB chunks through one slot each
 * way, pipelined. Block 0's receive cannot land before its kernel ends; the host must not
 * wait for it while block 1's send has chunks to pack (it did, until 2026-11-28: block 1's
 * send then ended after kernel 0). The copies equal their inputs. */
enum { AHEAD_BYTES = 4 << 20 };

static krill_status sleepy_kernel(void *user, int32_t block, void *stream, void *const *in,
                                  void *const *out)
{
    struct timespec nap = {0, 30000000};
    (void)user, (void)block, (void)stream;
    nanosleep(&nap, NULL);
    memcpy(out[0], in[0], AHEAD_BYTES);
    return KRILL_OK;
}

static void test_runs_ahead(krill_ctx *ctx)
{
    char *data = malloc((size_t)6 * AHEAD_BYTES);
    krill_overlap_region r[6];
    krill_overlap_block b[3];
    int32_t io[3][2];
    krill_overlap_model model;
    krill_overlap_plan_opts o;
    krill_overlap_plan *plan = NULL;
    krill_overlap_timeline tl;
    double send1_end = 0, kernel0_end = 0;
    if (!data) exit(1);
    for (size_t i = 0; i < (size_t)3 * AHEAD_BYTES; i++) data[i] = (char)(i * 7 + 1);
    memset(data + (size_t)3 * AHEAD_BYTES, 0, (size_t)3 * AHEAD_BYTES);
    for (int k = 0; k < 6; k++)
        r[k] = (krill_overlap_region){data + (size_t)k * AHEAD_BYTES, AHEAD_BYTES, 1, AHEAD_BYTES};
    for (int k = 0; k < 3; k++) {
        io[k][0] = k;
        io[k][1] = 3 + k;
        b[k] = (krill_overlap_block){&io[k][0], &io[k][1], NULL, 1, 1, 0, 0.03};
    }
    krill_overlap_problem pb = {r, b, 6, 3, sleepy_kernel, NULL};
    CHECK_OK(krill_overlap_calibrate(ctx, 0, &model));
    krill_overlap_plan_opts_default(&o);
    o.memory = 64 << 20;
    o.mode = KRILL_OVERLAP_PIPELINED;
    o.chunk_bytes = 256 << 10;
    o.send_slots = o.recv_slots = 1;
    CHECK_OK(krill_overlap_plan_create(&model, &pb, &o, &plan));
    CHECK_OK(krill_overlap_execute(ctx, plan, &tl));
    CHECK_OK(krill_overlap_timeline_check(plan, &tl));
    for (int64_t s = 0; s < tl.n_events; s++) {
        const krill_overlap_event *e = &tl.events[s];
        if (e->lane == KRILL_OVERLAP_LANE_H2D && e->block == 1) send1_end = e->end;
        if (e->lane == KRILL_OVERLAP_LANE_KERNEL && e->block == 0) kernel0_end = e->end;
    }
    CHECK(send1_end > 0 && kernel0_end > 0 && send1_end < kernel0_end);
    CHECK(memcmp(data, data + (size_t)3 * AHEAD_BYTES, (size_t)3 * AHEAD_BYTES) == 0);
    krill_overlap_timeline_free(&tl);
    krill_overlap_plan_destroy(&plan);
    free(data);
}

/* ---- allocation faults: every allocating public function, through the shared walk ------ */
typedef struct fault_ctx {
    krill_ctx *ctx;
    double a[40 * 30], b[30 * 50], c[40 * 50];
    chain *ch;
    krill_overlap_model model;
    krill_overlap_plan *plan;
    krill_overlap_timeline tl;
} fault_ctx;

static krill_status run_dgemm(void *user)
{
    fault_ctx *f = (fault_ctx *)user;
    krill_overlap_gemm_opts o;
    krill_overlap_gemm_opts_default(&o);
    o.block = 16;
    o.plan.memory = 20e3;
    return krill_overlap_dgemm(f->ctx, 40, 30, 50, f->a, 30, f->b, 50, f->c, 50, &o, NULL);
}

static krill_status run_calibrate(void *user)
{
    fault_ctx *f = (fault_ctx *)user;
    return krill_overlap_calibrate(f->ctx, 1, &f->model);
}

static krill_status run_plan(void *user)
{
    fault_ctx *f = (fault_ctx *)user;
    krill_overlap_problem pb = chain_problem(f->ch, -1);
    krill_overlap_plan_opts o;
    krill_overlap_plan_opts_default(&o);
    o.memory = 2 * 8192;
    o.mode = KRILL_OVERLAP_PIPELINED;
    return krill_overlap_plan_create(&f->model, &pb, &o, &f->plan);
}

static int plan_null(void *user) { return ((fault_ctx *)user)->plan == NULL; }

static void plan_free(void *user) { krill_overlap_plan_destroy(&((fault_ctx *)user)->plan); }

static krill_status run_execute(void *user)
{
    fault_ctx *f = (fault_ctx *)user;
    return krill_overlap_execute(f->ctx, f->plan, &f->tl);
}

static int timeline_empty(void *user)
{
    const fault_ctx *f = (const fault_ctx *)user;
    return f->tl.events == NULL && f->tl.n_events == 0;
}

static void timeline_free(void *user) { krill_overlap_timeline_free(&((fault_ctx *)user)->tl); }

static krill_status run_check(void *user)
{
    fault_ctx *f = (fault_ctx *)user;
    return krill_overlap_timeline_check(f->plan, &f->tl);
}

static krill_status run_svg(void *user)
{
    fault_ctx *f = (fault_ctx *)user;
    return krill_overlap_timeline_svg(&f->tl, "faults", "test_overlap_faults.svg");
}

static void test_faults(krill_ctx *ctx)
{
    fault_ctx *f = calloc(1, sizeof *f);
    tu_fault_call calls[] = {
        {"krill_overlap_dgemm", run_dgemm, NULL, NULL, f, 0},
        {"krill_overlap_calibrate", run_calibrate, NULL, NULL, f, 0},
        {"krill_overlap_plan_create", run_plan, plan_null, plan_free, f, 0},
    };
    tu_fault_call on_plan[] = {
        {"krill_overlap_execute", run_execute, timeline_empty, timeline_free, f, 0},
    };
    tu_fault_call on_timeline[] = {
        {"krill_overlap_timeline_check", run_check, NULL, NULL, f, 0},
        {"krill_overlap_timeline_svg", run_svg, NULL, NULL, f, 0},
    };
    f->ctx = ctx;
    f->ch = malloc(sizeof *f->ch);
    tu_random(f->a, 40 * 30, 3);
    tu_random(f->b, 30 * 50, 4);
    for (size_t k = 0; k < sizeof calls / sizeof *calls; k++) CHECK(tu_alloc_fault_walk(&calls[k]) > 0);
    CHECK_OK(run_plan(f));
    CHECK(tu_alloc_fault_walk(&on_plan[0]) > 0);
    CHECK_OK(run_execute(f));                    /* a timeline to check and draw */
    for (size_t k = 0; k < sizeof on_timeline / sizeof *on_timeline; k++)
        CHECK(tu_alloc_fault_walk(&on_timeline[k]) > 0);
    krill_overlap_timeline_free(&f->tl);
    krill_overlap_plan_destroy(&f->plan);
    free(f->ch);
    free(f);
}

static void test_model_and_svg(krill_ctx *ctx)
{
    krill_overlap_model m1, m2;
    char path[4096];
    FILE *f;
    krill_overlap_timeline tl;
    krill_overlap_event ev[2] = {{KRILL_OVERLAP_LANE_H2D, 0, 0, 0, 1e-3, 100},
                                 {KRILL_OVERLAP_LANE_KERNEL, 0, -1, 1e-3, 3e-3, 0}};
    CHECK_OK(krill_overlap_cache_path(ctx, path, sizeof path));
    remove(path);
    CHECK_OK(krill_overlap_calibrate(ctx, 0, &m1));          /* measured, then cached */
    CHECK(m1.h2d_bandwidth > 1e8 && m1.d2h_bandwidth > 1e8 && m1.device == -1);
    CHECK(access(path, R_OK) == 0);
    CHECK_OK(krill_overlap_calibrate(ctx, 0, &m2));          /* read back: the same */
    CHECK(memcmp(&m1, &m2, sizeof m1) == 0);
    f = fopen(path, "w");                                    /* a broken cache: measured again */
    if (f) {
        fputs("device_name cpu\nh2d_bandwidth nonsense\n", f);
        fclose(f);
    }
    CHECK_OK(krill_overlap_calibrate(ctx, 0, &m2));
    CHECK(m2.h2d_bandwidth > 1e8);
    CHECK_STATUS(krill_overlap_calibrate(NULL, 0, &m2), KRILL_ERR_ARG);

    memset(&tl, 0, sizeof tl);
    tl.events = ev;
    tl.n_events = 2;
    tl.elapsed = 3e-3;
    tl.efficiency = 1;
    CHECK_OK(krill_overlap_timeline_svg(&tl, "a <test> & more", "test_overlap.svg"));
    f = fopen("test_overlap.svg", "r");
    CHECK(f != NULL);
    if (f) {
        char buf[4096] = {0};
        CHECK(fread(buf, 1, sizeof buf - 1, f) > 0);
        CHECK(strstr(buf, "<svg") && strstr(buf, "&lt;test> &amp; more") && strstr(buf, "</svg>"));
        fclose(f);
    }
    CHECK_STATUS(krill_overlap_timeline_svg(&tl, "x", "/nonexistent-dir/t.svg"), KRILL_ERR_IO);
}

int main(void)
{
    krill_ctx *one = tu_cpu_ctx(1), *two = tu_cpu_ctx(2);
    test_model_and_svg(two);
    test_gemm(two);
    test_gemm(one);
    test_chain(two);
    test_runs_ahead(two);
    test_faults(two);
    krill_ctx_destroy(&one);
    krill_ctx_destroy(&two);
    return tu_finish("test_overlap");
}
