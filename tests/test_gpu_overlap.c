/* tests/test_gpu_overlap.c - the overlap scheduler on a GPU: the model (measured, cached),
 * the DGEMM client pipelined equal bit for bit to the sequential run of the same blocks
 * and, within the rounding bound, to one whole cuBLAS DGEMM (the unsplit plan) and to the
 * CPU; every timeline consistent; the memory budget respected (out-of-core: a budget far
 * below the operands); staging in chunks (rows split across them, one slot and three) with
 * the same bits; page-locked operands copied directly (no staging), with the same bits as
 * through the staging ring; a kernel that fails; allocation faults. Skips without
 * a GPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef KRILL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#include "overlap/overlap_impl.h"
#include "testutil.h"

typedef struct run_result {
    krill_status st;
    krill_overlap_gemm_report rep;
} run_result;

static int64_t stage_chunk;      /* the plans' staging chunk and slots (0: the defaults) */
static int stage_slots;

static run_result gemm(krill_ctx *ctx, int64_t h, int64_t m, int64_t w, const double *a,
                       const double *b, double *c, int64_t side, double memory,
                       krill_overlap_mode mode, krill_overlap_timeline *tl)
{
    run_result r;
    krill_overlap_gemm_opts o;
    krill_overlap_gemm_opts_default(&o);
    o.block = side;
    o.plan.memory = memory;
    o.plan.mode = mode;
    o.plan.chunk_bytes = stage_chunk;
    o.plan.send_slots = o.plan.recv_slots = stage_slots;
    o.timeline = tl;
    r.st = krill_overlap_dgemm(ctx, h, m, w, a, m, b, w, c, w, &o, &r.rep);
    return r;
}

static void test_gemm(krill_ctx *gpu, krill_ctx *cpu)
{
    const int64_t h = 1500, m = 700, w = 1300;
    double *a = malloc(sizeof(double) * h * m), *b = malloc(sizeof(double) * m * w);
    double *c_pipe = malloc(sizeof(double) * h * w), *c_seq = malloc(sizeof(double) * h * w);
    double *c_whole = malloc(sizeof(double) * h * w), *c_cpu = malloc(sizeof(double) * h * w);
    double max_diff = 0, max_diff_cpu = 0;
    krill_overlap_timeline tl;
    run_result r;
    tu_random(a, h * m, 11);
    tu_random(b, m * w, 12);
    /* unsplit: one whole cuBLAS DGEMM */
    r = gemm(gpu, h, m, w, a, b, c_whole, h, 0, KRILL_OVERLAP_AUTO, NULL);
    CHECK_OK(r.st);
    CHECK(r.rep.plan.n_blocks == 1);
    r = gemm(cpu, h, m, w, a, b, c_cpu, 0, 0, KRILL_OVERLAP_AUTO, NULL);
    CHECK_OK(r.st);
    /* out of core: 256-row blocks in a 12 MB budget (A, B and C take 31 MB) */
    for (int trial = 0; trial < 2; trial++) {
        const double memory = trial == 0 ? 12e6 : 0;
        r = gemm(gpu, h, m, w, a, b, c_pipe, 256, memory, KRILL_OVERLAP_PIPELINED, &tl);
        CHECK_OK(r.st);
        if (r.st == KRILL_OK) {
            CHECK_OK(krill_overlap_timeline_check(NULL, &tl));
            CHECK(tl.efficiency > 0 && tl.efficiency <= 1 + 1e-9);
            if (memory > 0) CHECK(r.rep.plan.device_bytes <= memory);
            krill_overlap_timeline_free(&tl);
        }
        r = gemm(gpu, h, m, w, a, b, c_seq, 256, memory, KRILL_OVERLAP_SEQUENTIAL, NULL);
        CHECK_OK(r.st);
        CHECK(memcmp(c_pipe, c_seq, sizeof(double) * h * w) == 0);
    }
    /* staged in chunks of 100000 bytes through 3 slots (A's contiguous panels and B's rows
       of 2048 bytes split across chunks) and of 4096 through one (B's 160-byte edge rows
       split), both modes: the same bits */
    for (int v = 0; v < 4; v++) {
        stage_chunk = v < 2 ? 100000 : 4096;
        stage_slots = v < 2 ? 3 : 1;
        memset(c_pipe, 0xff, sizeof(double) * h * w);
        r = gemm(gpu, h, m, w, a, b, c_pipe, 256, 12e6,
                 v % 2 ? KRILL_OVERLAP_SEQUENTIAL : KRILL_OVERLAP_PIPELINED, &tl);
        stage_chunk = 0;
        stage_slots = 0;
        CHECK_OK(r.st);
        if (r.st != KRILL_OK) continue;
        CHECK(r.rep.plan.pinned_bytes == (v < 2 ? 6 * 100000.0 : 2 * 4096.0));
        CHECK_OK(krill_overlap_timeline_check(NULL, &tl));
        krill_overlap_timeline_free(&tl);
        CHECK(memcmp(c_pipe, c_seq, sizeof(double) * h * w) == 0);
    }
    /* |C - C_whole| <= 2 m eps sum_k |a_ik| |b_kj| <= 2 m eps m (entries in [-1, 1]) */
    for (int64_t k = 0; k < h * w; k++) {
        max_diff = fmax(max_diff, fabs(c_pipe[k] - c_whole[k]));
        max_diff_cpu = fmax(max_diff_cpu, fabs(c_pipe[k] - c_cpu[k]));
    }
    CHECK(max_diff <= 2.0 * m * m * 2.3e-16);
    CHECK(max_diff_cpu <= 2.0 * m * m * 2.3e-16);
    /* the planner's own side, on the device's default memory */
    r = gemm(gpu, h, m, w, a, b, c_pipe, 0, 0, KRILL_OVERLAP_AUTO, NULL);
    CHECK_OK(r.st);
    /* too little memory for one block: refused before anything runs */
    r = gemm(gpu, h, m, w, a, b, c_pipe, 256, 1e5, KRILL_OVERLAP_AUTO, NULL);
    CHECK_STATUS(r.st, KRILL_ERR_DEVICE_ALLOC);
    free(a);
    free(b);
    free(c_pipe);
    free(c_seq);
    free(c_whole);
    free(c_cpu);
}

#ifdef KRILL_HAVE_CUDA
/* A, B and C page-locked: the plans copy straight from and to them (direct, no staging),
 * pipelined and sequential, and C has the bits of the staged (pageable) run. */
static void test_direct(krill_ctx *gpu)
{
    const int64_t h = 1000, m = 600, w = 900;
    double *a = NULL, *b = NULL, *c = NULL, *ref = malloc(sizeof(double) * h * w);
    double *pa = malloc(sizeof(double) * h * m), *pb = malloc(sizeof(double) * m * w);
    krill_overlap_timeline tl;
    run_result r;
    CHECK(cudaMallocHost((void **)&a, sizeof(double) * h * m) == cudaSuccess);
    CHECK(cudaMallocHost((void **)&b, sizeof(double) * m * w) == cudaSuccess);
    CHECK(cudaMallocHost((void **)&c, sizeof(double) * h * w) == cudaSuccess);
    if (!a || !b || !c || !ref || !pa || !pb) exit(1);
    tu_random(pa, h * m, 21);
    tu_random(pb, m * w, 22);
    memcpy(a, pa, sizeof(double) * h * m);
    memcpy(b, pb, sizeof(double) * m * w);
    CHECK(!overlap_gpu_page_locked(pa, 8) && overlap_gpu_page_locked(a, sizeof(double) * h * m));
    r = gemm(gpu, h, m, w, pa, pb, ref, 200, 8e6, KRILL_OVERLAP_PIPELINED, NULL);
    CHECK_OK(r.st);
    CHECK(!r.rep.plan.direct && r.rep.plan.pinned_bytes > 0);
    for (int mode = 0; mode < 2; mode++) {
        memset(c, 0xff, sizeof(double) * h * w);
        r = gemm(gpu, h, m, w, a, b, c, 200, 8e6,
                 mode ? KRILL_OVERLAP_SEQUENTIAL : KRILL_OVERLAP_PIPELINED, &tl);
        CHECK_OK(r.st);
        CHECK(r.rep.plan.direct == 1 && r.rep.plan.pinned_bytes == 0);
        CHECK(r.rep.plan.device_bytes <= 8e6);
        if (r.st == KRILL_OK) CHECK_OK(krill_overlap_timeline_check(NULL, &tl));
        for (int64_t s = 1; mode && s < tl.n_events; s++)   /* one step at a time, in order */
            CHECK(tl.events[s].start >= tl.events[s - 1].end);
        krill_overlap_timeline_free(&tl);
        CHECK(memcmp(c, ref, sizeof(double) * h * w) == 0);
    }
    (void)cudaFreeHost(a);
    (void)cudaFreeHost(b);
    (void)cudaFreeHost(c);
    free(ref);
    free(pa);
    free(pb);
}
#endif

/* The staging slots outlive an execution: running the same pageable plan again allocates
 * six fewer times (3 + 3 slots taken from the kept list), and after
 * krill_overlap_release_staging as many times as the first run. */
static void test_staging_kept(krill_ctx *gpu)
{
    const int64_t h = 600, m = 300, w = 500;
    double *a = calloc((size_t)(h * m), sizeof(double)), *b = calloc((size_t)(m * w), sizeof(double));
    double *c = malloc(sizeof(double) * h * w);
    long calls[3];
    if (!a || !b || !c) exit(1);
    krill_overlap_release_staging();
    for (int k = 0; k < 3; k++) {
        long before = krill_alloc_calls();
        run_result r = gemm(gpu, h, m, w, a, b, c, 128, 4e6, KRILL_OVERLAP_PIPELINED, NULL);
        CHECK_OK(r.st);
        CHECK(r.rep.plan.pinned_bytes > 0);
        calls[k] = krill_alloc_calls() - before;
        if (k == 1) krill_overlap_release_staging();
    }
    CHECK(calls[1] == calls[0] - 6 && calls[2] == calls[0]);
    krill_overlap_release_staging();
    free(a);
    free(b);
    free(c);
}

/* A problem whose third kernel fails: drained, reported with its block. */
static krill_status failing_kernel(void *user, int32_t block, void *stream, void *const *in,
                                   void *const *out)
{
    (void)user, (void)stream, (void)in, (void)out;
    return block == 2 ? krill_error(KRILL_ERR_NUMERIC, "no luck") : KRILL_OK;
}

static void test_failure(krill_ctx *gpu)
{
    static double data[4][512];
    krill_overlap_region r[4];
    krill_overlap_block b[4];
    int32_t io[4];
    krill_overlap_model model;
    krill_overlap_plan_opts o;
    krill_overlap_plan *plan = NULL;
    krill_overlap_timeline tl;
    for (int k = 0; k < 4; k++) {
        r[k] = (krill_overlap_region){data[k], sizeof data[k], 1, sizeof data[k]};
        io[k] = k;
        b[k] = (krill_overlap_block){&io[k], &io[k], NULL, 1, 1, 0, 1e-6};
    }
    krill_overlap_problem pb = {r, b, 4, 4, failing_kernel, NULL};
    krill_overlap_plan_opts_default(&o);
    o.memory = 1e6;
    CHECK_OK(krill_overlap_calibrate(gpu, 0, &model));
    CHECK(model.device >= 0 && model.h2d_bandwidth > 1e9 && model.d2h_bandwidth > 1e9);
    {   /* the host half is measured with the context's threads: the cache file names them */
        char path[4096], want[32];
        CHECK_OK(krill_overlap_cache_path(gpu, path, sizeof path));
        snprintf(want, sizeof want, "-gpu%d-t%d.txt", model.device, krill_ctx_threads(gpu));
        CHECK(strstr(path, want) != NULL);
    }
    /* below a millisecond, except under compute-sanitizer (quick mode), where a launch
     * takes several */
    CHECK(model.launch_latency > 0 && (tu_quick() || model.launch_latency < 1e-3));
    CHECK_OK(krill_overlap_plan_create(&model, &pb, &o, &plan));
    CHECK_STATUS(krill_overlap_execute(gpu, plan, &tl), KRILL_ERR_NUMERIC);
    CHECK(strstr(krill_last_error(), "block 2") != NULL);
    krill_overlap_plan_destroy(&plan);
}

static void test_faults(krill_ctx *gpu)
{
    const int64_t h = 300, m = 200, w = 100;
    double *a = calloc((size_t)(h * m), sizeof(double)), *b = calloc((size_t)(m * w), sizeof(double));
    double *c = malloc(sizeof(double) * h * w);
    int failed = 0;
    for (long k = 1; k < 2000; k++) {
        run_result r;
        krill_fault_alloc_after(k);
        r = gemm(gpu, h, m, w, a, b, c, 64, 1e6, KRILL_OVERLAP_AUTO, NULL);
        krill_fault_alloc_after(0);
        if (r.st == KRILL_OK) break;
        failed++;
        CHECK(r.st == KRILL_ERR_ALLOC || r.st == KRILL_ERR_DEVICE_ALLOC);
    }
    CHECK(failed > 10);
    free(a);
    free(b);
    free(c);
}

int main(void)
{
    krill_ctx *gpu = tu_gpu_ctx_or_skip(), *cpu = tu_cpu_ctx(0);
    test_failure(gpu);
    TU_STEP(test_gemm(gpu, cpu));
#ifdef KRILL_HAVE_CUDA
    TU_STEP(test_direct(gpu));
#endif
    TU_STEP(test_staging_kept(gpu));
    TU_STEP(test_faults(gpu));
    krill_overlap_release_staging();   /* nothing page-locked left for memcheck's leak check */
    krill_ctx_destroy(&gpu);
    krill_ctx_destroy(&cpu);
    return tu_finish("test_gpu_overlap");
}
