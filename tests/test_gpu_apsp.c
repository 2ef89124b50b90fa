/* tests/test_gpu_apsp.c - APSP on the GPU against the CPU: every GPU method (plain, fw-a,
 * fw-b, fw-rec) and weight type, with and without paths, on graphs whose sizes straddle the
 * tile; int32 bit for bit (and float/double too where every sum is exact), real weights
 * within rounding, every path checked arc by arc (apsp_testutil.h's certificate); negative
 * arcs and cycles; the graphs of testdata against the CPU's Dijkstra; the memory check.
 * Skips (exit 77) without a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apsp_testutil.h"
#include "testutil.h"

static const char *const gpu_methods[] = {"plain", "fw-a", "fw-b", "fw-rec"};
enum { N_GPU = 4 };
static const krill_apsp_weight weights[] = {KRILL_APSP_INT32, KRILL_APSP_FLOAT,
                                            KRILL_APSP_DOUBLE};

/* A graph size by quick level (tu_quick): the full run's, quick mode's, racecheck's (every
 * shared-memory access of the tile kernels instrumented: sizes of a few tiles). */
static int32_t size_for(int32_t full, int32_t quick, int32_t race)
{
    const int level = tu_quick();
    return level == 0 ? full : level == 1 ? quick : race;
}

static void test_random(krill_ctx *gpu, krill_ctx *cpu)
{
    const int32_t sizes[] = {2, 100, 127, 128, 129, 300, 513};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        /* quick: 2, 129 and 300; racecheck: 2 and 129 */
        if (tu_quick() && sizes[s] != 2 && sizes[s] != 129 && sizes[s] != 300) continue;
        if (tu_quick() > 1 && sizes[s] == 300) continue;
        for (int shift = 0; shift < 2; shift++) {
            krill_csr *g = at_random_graph(sizes[s], 4, 21 + s, shift);
            for (int t = 0; t < 3; t++) {
                krill_apsp *ref;
                if (!tu_shard_mine()) continue;   /* one unit of work (KRILL_TEST_SHARD) */
                ref = at_solve(cpu, g, "fw-a", weights[t], 0);
                CHECK(ref != NULL);
                for (int m = 0; m < N_GPU && ref; m++)
                    for (int paths = 0; paths < 2; paths++) {
                        char what[96];
                        snprintf(what, sizeof what, "gpu n %d shift %d %s %s paths %d", sizes[s],
                                 shift, gpu_methods[m], krill_apsp_weight_name(weights[t]), paths);
                        krill_apsp *r = at_solve(gpu, g, gpu_methods[m], weights[t], paths);
                        CHECK(r != NULL);
                        if (r) CHECK(at_compare(r, ref, 0.0, what) == 0);
                        if (r && paths) CHECK(at_certify(g, r, 0, sizes[s] > 200 ? 7 : 1, 0.0, what) == 0);
                        krill_apsp_destroy(&r);
                    }
                krill_apsp_destroy(&ref);
            }
            krill_csr_destroy(&g);
        }
    }
}

/* Weights 0 and 1 (cycles of weight 0 everywhere): every path real and of length D. */
static void test_zero_cycles(krill_ctx *gpu)
{
    krill_csr *g = at_random_graph(size_for(600, 600, 200), 4, 13, 0);
    for (int64_t e = 0; e < g->nnz; e++) g->val[e] = (double)((int64_t)g->val[e] % 2);
    for (int m = 0; m < N_GPU; m++)
        for (int t = 0; t < 3; t++) {
            krill_apsp *r = at_solve(gpu, g, gpu_methods[m], weights[t], 1);
            CHECK(r && at_certify(g, r, 0, 3, 0.0, "gpu zero-weight cycles") == 0);
            krill_apsp_destroy(&r);
        }
    krill_csr_destroy(&g);
}

/* Real weights: within rounding of the CPU's double result. */
static void test_real(krill_ctx *gpu, krill_ctx *cpu)
{
    const int32_t n = size_for(700, 700, 200);
    krill_csr *g = at_random_graph(n, 4, 5, 0);
    for (int64_t e = 0; e < g->nnz; e++) g->val[e] = 0.25 + g->val[e] / 3.0;
    krill_apsp *ref = at_solve(cpu, g, "dijkstra", KRILL_APSP_DOUBLE, 0);
    for (int m = 1; m < N_GPU && ref; m++)
        for (int t = 1; t < 3; t++) {
            double tol = weights[t] == KRILL_APSP_FLOAT ? n * 6e-8 : n * 1.2e-16;
            krill_apsp *r = at_solve(gpu, g, gpu_methods[m], weights[t], 1);
            CHECK(r && at_compare(r, ref, tol, gpu_methods[m]) == 0);
            CHECK(r && at_certify(g, r, 3, 50, tol, gpu_methods[m]) == 0);
            krill_apsp_destroy(&r);
        }
    krill_apsp_destroy(&ref);
    krill_csr_destroy(&g);
}

/* A negative cycle far from vertex 0 in a 300-vertex graph (racecheck: 200): every method,
 * every type. */
static void test_negative_cycle(krill_ctx *gpu)
{
    const int32_t n = size_for(300, 300, 200), v = n - 50;
    krill_csr *g = at_random_graph(n, 4, 8, 0);
    for (int64_t e = g->row_ptr[v]; e < g->row_ptr[v + 1]; e++) g->val[e] = -100000;
    /* vertex v's arcs are so negative that a return to v closes a negative cycle */
    for (int m = 0; m < N_GPU; m++)
        for (int t = 0; t < 3; t++)
            for (int paths = 0; paths < 2; paths++) {
                krill_apsp_opts o = KRILL_APSP_OPTS_INIT;
                krill_apsp_info info;
                krill_apsp *r = NULL;
                o.method = gpu_methods[m];
                o.weight = weights[t];
                o.paths = paths;
                CHECK_STATUS(krill_apsp_solve(gpu, g, &o, &r, &info), KRILL_ERR_NUMERIC);
                CHECK(r == NULL && info.negative_cycle >= 0);
            }
    krill_csr_destroy(&g);
}

/* Larger: n = 2500 (quick: 600, racecheck: 260) against the CPU's Dijkstra, bit for bit,
 * timed per tile kind. */
static void test_large(krill_ctx *gpu, krill_ctx *cpu)
{
    const int32_t n = size_for(2500, 600, 260);
    krill_csr *g = at_random_graph(n, 4, 77, 0);
    krill_apsp *ref = at_solve(cpu, g, "dijkstra", KRILL_APSP_INT32, 0);
    for (int m = 1; m < N_GPU && ref; m++) {
        krill_apsp_opts o = KRILL_APSP_OPTS_INIT;
        krill_apsp_info info;
        krill_apsp *r = NULL;
        o.method = gpu_methods[m];
        o.paths = 1;
        CHECK_OK(krill_apsp_solve(gpu, g, &o, &r, &info));
        CHECK(r && at_compare(r, ref, 0.0, gpu_methods[m]) == 0);
        CHECK(r && at_certify(g, r, 1, 97, 0.0, gpu_methods[m]) == 0);
        if (m != 3) CHECK(info.t_rest > 0 && info.t_pivot > 0 && info.t_panels > 0);
        CHECK(info.t_compute > 0 && info.n_padded >= n && info.n_padded % 128 == 0);
        CHECK(n != 2500 || info.n_padded == 2560);
        printf("%s n %d paths: compute %.3f ms (pivot %.3f panels %.3f rest %.3f)\n",
               gpu_methods[m], n, 1e3 * info.t_compute, 1e3 * info.t_pivot, 1e3 * info.t_panels,
               1e3 * info.t_rest);
        krill_apsp_destroy(&r);
    }
    krill_apsp_destroy(&ref);
    krill_csr_destroy(&g);
}

/* int32 paths switch from packed keys to compare-and-select once a finite value reaches
 * 2^23: a huge arc from the start, and a chain whose distances pass 2^23 on the way. */
static void test_pack_fallback(krill_ctx *gpu, krill_ctx *cpu)
{
    const int32_t n = size_for(300, 300, 200);
    for (int kind = 0; kind < 3; kind++) {
        krill_csr *g = at_random_graph(n, 3, 31 + kind, 0);
        for (int32_t u = 0; u < n; u++)
            for (int64_t e = g->row_ptr[u]; e < g->row_ptr[u + 1]; e++) {
                if (kind == 0 && u == 5 && e == g->row_ptr[u]) g->val[e] = 9000000;
                if (kind == 1) g->val[e] = g->col[e] == u + 1 ? 100000 : 3000000;
                if (kind == 2) g->val[e] = g->col[e] == u + 1 ? 30000 : 20000000;
            }
        krill_apsp *ref = at_solve(cpu, g, "dijkstra", KRILL_APSP_INT32, 0);
        for (int m = 1; m < N_GPU && ref; m++) {
            krill_apsp *r = at_solve(gpu, g, gpu_methods[m], KRILL_APSP_INT32, 1);
            CHECK(r && at_compare(r, ref, 0.0, "pack fallback") == 0);
            CHECK(r && at_certify(g, r, 0, 3, 0.0, "pack fallback") == 0);
            krill_apsp_destroy(&r);
        }
        krill_apsp_destroy(&ref);
        krill_csr_destroy(&g);
    }
}

/* One vertex, with and without a self loop. */
static void test_one(krill_ctx *gpu)
{
    const int32_t z = 0;
    const double w = 3;
    krill_csr *g = NULL;
    CHECK_OK(krill_csr_from_triplets(1, 1, 1, &z, &z, &w, &g));
    for (int m = 0; m < N_GPU; m++) {
        krill_apsp *r = at_solve(gpu, g, gpu_methods[m], KRILL_APSP_INT32, 1);
        CHECK(r && krill_apsp_n(r) == 1 && krill_apsp_dist_at(r, 0, 0) == 0);
        CHECK(r && krill_apsp_pred(r)[0] == KRILL_APSP_NO_PRED);
        krill_apsp_destroy(&r);
    }
    krill_csr_destroy(&g);
}

static void each_graph(const char *path, const char *name, void *user)
{
    krill_ctx **ctx = (krill_ctx **)user;
    krill_csr *g = NULL;
    krill_graph_info gi;
    if (!tu_shard_mine()) return;   /* one unit of work (KRILL_TEST_SHARD) */
    if (krill_graph_read(path, NULL, &g, &gi) != KRILL_OK) {
        fprintf(stderr, "%s: %s\n", name, krill_last_error());
        CHECK(0);
        return;
    }
    krill_apsp_weight wt = gi.integer_weights ? KRILL_APSP_INT32 : KRILL_APSP_DOUBLE;
    if (gi.n > size_for(INT32_MAX, 1100, 100)) {   /* quick: up to 1100 vertices, racecheck 100 */
        printf("graph %s: n %d, left out in quick mode\n", name, gi.n);
    } else if (strstr(name, "negative-cycles")) {
        krill_apsp *r = NULL;
        CHECK_STATUS(krill_apsp_solve(ctx[0], g, NULL, &r, NULL), KRILL_ERR_NUMERIC);
    } else if (gi.n <= 41000) {      /* every graph of the shared set (bremen: 40461) */
        /* the CPU's D where it takes seconds (Dijkstra from all of bremen's vertices on the
           tests' two threads takes minutes); the certificate on every graph */
        const int with_cpu = gi.n <= 12000;
        krill_apsp *fw = at_solve(ctx[0], g, "fw-a", wt, 1);
        krill_apsp *ref = with_cpu ? at_solve(ctx[1], g, gi.negative ? "fw-a" : "dijkstra", wt, 0)
                                   : NULL;
        if (with_cpu) CHECK(fw && ref && at_compare(fw, ref, 0.0, name) == 0);
        CHECK(fw && at_certify(g, fw, 0, gi.n / 20 + 1, 0.0, name) == 0);
        printf("graph %s: n %d, %s\n", name, gi.n,
               with_cpu ? "checked against the CPU" : "certified (sampled rows)");
        krill_apsp_destroy(&fw);
        krill_apsp_destroy(&ref);
    } else {
        printf("graph %s: n %d, skipped (D would take %.1f GB)\n", name, gi.n,
               4e-9 * gi.n * (double)gi.n);
    }
    krill_csr_destroy(&g);
}

static void test_memory(krill_ctx *gpu)
{
    double rate = 0;                  /* the GPU's min-plus peak: every type measurable */
    for (int t = 0; t < 3; t++) {
        CHECK_OK(krill_apsp_peak(gpu, weights[t], 0.02, &rate));
        CHECK(rate > 0 && isfinite(rate) && (tu_quick() || rate > 1e9));   /* quick: no bound */
    }
    krill_csr *huge = NULL;
    krill_apsp *r = NULL;
    krill_apsp_opts o = KRILL_APSP_OPTS_INIT;
    o.weight = KRILL_APSP_DOUBLE;
    CHECK_OK(krill_csr_create(1000000, 1000000, 0, &huge));
    CHECK_STATUS(krill_apsp_solve(gpu, huge, &o, &r, NULL), KRILL_ERR_ALLOC);
    /* D (8 TB) fits neither the GPU nor, for the out-of-core run, the host (a D of 320 GB,
       once used here, fits the host of a 4-GPU machine with 512 GiB, and ran out of core) */
    CHECK(strstr(krill_last_error(), "available") != NULL);
    o.method = "dijkstra";
    CHECK_STATUS(krill_apsp_solve(gpu, huge, &o, &r, NULL), KRILL_ERR_ARG);   /* no GPU Dijkstra */
    krill_csr_destroy(&huge);
}

/* Out of core on the GPU (a device memory cap): the CPU's in-core distances, bit for bit
 * (integer weights: exact in every type); blocks of 128 and 256. Where D exceeds the cap
 * (14 blocks) the solve streams blocks of exactly that side; where D fits, in core is as
 * right. Quick: n 300 and 600; racecheck: 600 (streamed) with blocks of 128. */
static void test_out_of_core(krill_ctx *gpu, krill_ctx *cpu)
{
    static const int32_t sizes[] = {300, 600, 1000, 2100};
    for (size_t s = tu_quick() > 1; s < (tu_quick() ? 2 : sizeof sizes / sizeof *sizes); s++)
        for (int t = 0; t < 3; t++) {
            krill_csr *g = at_random_graph(sizes[s], 6, 70 + s, t == 0);
            krill_apsp *ref = at_solve(cpu, g, "fw-a", weights[t], 0);
            for (int side = 128; side <= (tu_quick() > 1 ? 128 : 256); side *= 2) {
                const double elem = weights[t] == KRILL_APSP_DOUBLE ? 8 : 4;
                krill_apsp_opts o = KRILL_APSP_OPTS_INIT;
                krill_apsp_info info;
                krill_apsp *r = NULL;
                char what[80];
                o.method = "fw-a";
                o.weight = weights[t];
                /* 8 blocks and the GPU kernels' scratch (about 3 blocks), below 8 of 2 side */
                o.device_memory = 14.0 * side * side * elem;
                snprintf(what, sizeof what, "gpu out of core n %d %s side %d", sizes[s],
                         krill_apsp_weight_name(weights[t]), side);
                CHECK_OK(krill_apsp_solve(gpu, g, &o, &r, &info));
                if ((double)sizes[s] * sizes[s] * elem > o.device_memory) {
                    if (info.out_of_core != side)
                        fprintf(stderr, "%s: streamed blocks of %d\n", what, info.out_of_core);
                    CHECK(info.out_of_core == side);
                }
                if (r && ref) CHECK(at_compare(r, ref, 0.0, what) == 0);
                krill_apsp_destroy(&r);
            }
            krill_apsp_destroy(&ref);
            krill_csr_destroy(&g);
        }
}

int main(void)
{
    krill_ctx *gpu = tu_gpu_ctx_or_skip();
    krill_ctx *cpu = tu_cpu_ctx(0);
    krill_ctx *both[2] = {gpu, cpu};
    TU_SPLIT(test_random(gpu, cpu));   /* each (size, shift, weight) a unit of work */
    TU_STEP(test_real(gpu, cpu));
    TU_STEP(test_zero_cycles(gpu));
    TU_STEP(test_negative_cycle(gpu));
    TU_STEP(test_large(gpu, cpu));
    TU_STEP(test_pack_fallback(gpu, cpu));
    TU_STEP(test_one(gpu));
    TU_STEP(test_memory(gpu));
    TU_STEP(test_out_of_core(gpu, cpu));
    int graphs = tu_for_each_graph(each_graph, both);
    CHECK(graphs < 0 || graphs >= tu_testdata_expect(10, 2));
    krill_ctx_destroy(&cpu);
    krill_ctx_destroy(&gpu);
    return tu_finish("test_gpu_apsp");
}
