/* tests/test_apsp_ooc.c - out-of-core APSP (apsp/ooc.c) on the CPU executor: a device
 * memory cap smaller than D sends the blocked methods through the overlap scheduler; the
 * distances must equal the in-core run bit for bit (int32, and float/double on integer
 * weights, where every sum is exact) and pass the shortest-path certificate, for sizes
 * around the block side, negative weights, a negative cycle (reported as in core), real
 * graphs of testdata; and the refusals (paths, a cap below one block), allocation faults. */
#include <stdlib.h>
#include <string.h>
#include "apsp_testutil.h"
#include "core/core_impl.h"
#include "testutil.h"

static krill_apsp *solve_method(krill_ctx *ctx, const krill_csr *g, const char *method,
                                krill_apsp_weight weight, double cap, krill_apsp_info *info,
                                krill_status *status)
{
    krill_apsp_opts o = KRILL_APSP_OPTS_INIT;
    krill_apsp *r = NULL;
    o.method = method;
    o.weight = weight;
    o.device_memory = cap;
    *status = krill_apsp_solve(ctx, g, &o, &r, info);
    return r;
}

static krill_apsp *solve_capped(krill_ctx *ctx, const krill_csr *g, krill_apsp_weight weight,
                                double cap, krill_apsp_info *info, krill_status *status)
{
    return solve_method(ctx, g, "fw-a", weight, cap, info, status);
}

/* Every blocked method goes out of core (the kernels are the module's, not the method's),
 * and the pipelined schedule gives the same bits as AUTO's choice (sequential on 2 cores). */
static void test_methods_and_modes(krill_ctx *ctx)
{
    static const char *const methods[] = {"fw-a", "fw-b", "fw-rec"};
    krill_csr *g = at_random_graph(230, 5, 61, 1);
    krill_apsp *ref = at_solve(ctx, g, "plain", KRILL_APSP_INT32, 0);
    for (int m = 0; m < 3; m++)
        for (int pipelined = 0; pipelined < 2; pipelined++) {
            krill_apsp_info info;
            krill_status st;
            krill_apsp *r;
            if (pipelined) setenv("KRILL_OVERLAP_MODE", "pipelined", 1);
            r = solve_method(ctx, g, methods[m], KRILL_APSP_INT32, 65536, &info, &st);
            unsetenv("KRILL_OVERLAP_MODE");
            CHECK_OK(st);
            CHECK(info.out_of_core > 0);
            if (r && ref) CHECK(at_compare(r, ref, 0.0, methods[m]) == 0);
            krill_apsp_destroy(&r);
        }
    krill_apsp_destroy(&ref);
    krill_csr_destroy(&g);
}

static void test_random(krill_ctx *ctx)
{
    static const int32_t sizes[] = {65, 128, 200, 257, 300};
    static const krill_apsp_weight weights[] = {KRILL_APSP_INT32, KRILL_APSP_FLOAT,
                                                KRILL_APSP_DOUBLE};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (int shift = 0; shift < 2; shift++)
            for (int t = 0; t < 3; t++) {
                krill_csr *g = at_random_graph(sizes[s], 5, 40 + s, shift);
                krill_apsp *ref = at_solve(ctx, g, "fw-a", weights[t], 0);
                /* 8 blocks of 32 (or 64 for the larger caps) fit; D does not */
                for (double cap = 8.0 * 32 * 32 * 8; cap <= 8.0 * 64 * 64 * 8; cap *= 4) {
                    krill_apsp_info info;
                    krill_status st;
                    char what[96];
                    krill_apsp *r = solve_capped(ctx, g, weights[t], cap, &info, &st);
                    snprintf(what, sizeof what, "ooc n %d shift %d %s cap %.0f", sizes[s], shift,
                             krill_apsp_weight_name(weights[t]), cap);
                    CHECK_OK(st);
                    if (!r || !ref) continue;
                    CHECK(info.out_of_core >= 32 && info.ooc_bytes_moved > 0);
                    CHECK(strstr(info.why, "out of core") != NULL);
                    CHECK(at_compare(r, ref, 0.0, what) == 0);
                    CHECK(at_certify(g, r, 0, 7, 0.0, what) == 0);
                    krill_apsp_destroy(&r);
                }
                krill_apsp_destroy(&ref);
                krill_csr_destroy(&g);
            }
}

/* A negative cycle: reported as in core (KRILL_ERR_NUMERIC naming a vertex). */
static void test_negative_cycle(krill_ctx *ctx)
{
    krill_csr *g = NULL;
    krill_apsp_info info;
    krill_status st;
    krill_apsp *r;
    CHECK_OK(krill_graph_gen("random:150,4,3", &g));
    if (!g) return;
    for (int64_t e = 0; e < g->nnz; e++) g->val[e] = -g->val[e];   /* every cycle negative */
    r = solve_capped(ctx, g, KRILL_APSP_INT32, 8.0 * 32 * 32 * 4, &info, &st);
    CHECK(st == KRILL_ERR_NUMERIC && r == NULL);
    CHECK(info.negative_cycle >= 0);
    CHECK(strstr(krill_last_error(), "negative cycle") != NULL);
    krill_csr_destroy(&g);
}

static void test_refusals(krill_ctx *ctx)
{
    krill_csr *g = at_random_graph(100, 4, 5, 0);
    krill_apsp_opts o = KRILL_APSP_OPTS_INIT;
    krill_apsp *r = NULL;
    krill_apsp_info info;
    krill_status st;
    o.method = "fw-a";
    o.paths = 1;
    o.device_memory = 20000;
    CHECK_STATUS(krill_apsp_solve(ctx, g, &o, &r, NULL), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "distances only") != NULL);
    r = solve_capped(ctx, g, KRILL_APSP_INT32, 1000, &info, &st);  /* 8 blocks of 32: 32 KiB */
    CHECK(st == KRILL_ERR_DEVICE_ALLOC && r == NULL);
    o.paths = 0;
    o.method = "dijkstra";                   /* not blocked: the cap is not a reason */
    CHECK_OK(krill_apsp_solve(ctx, g, &o, &r, &info));
    CHECK(info.out_of_core == 0);
    krill_apsp_destroy(&r);
    o.method = "fw-a";                       /* a cap D fits in: in core */
    o.device_memory = 1e9;
    CHECK_OK(krill_apsp_solve(ctx, g, &o, &r, &info));
    CHECK(info.out_of_core == 0);
    krill_apsp_destroy(&r);
    krill_csr_destroy(&g);
}

/* Real graphs of testdata (the local set has a few; the shared one more). */
static void test_testdata(krill_ctx *ctx)
{
    static const char *const files[] = {"graphs/Random4-n.10.0.gr", "graphs/fast_paths_23rd.gr",
                                        "graphs/4elt.graph"};
    int tested = 0;
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        krill_csr *g = NULL;
        krill_apsp *ref, *r;
        krill_apsp_info info;
        krill_status st;
        if (!tu_testdata_has(files[f])) continue;
        CHECK_OK(krill_graph_read(tu_testdata_path(files[f]), NULL, &g, NULL));
        if (g && g->n_rows >= 200 && g->n_rows <= 2000) {  /* half of D: out of core */
            ref = at_solve(ctx, g, "fw-a", KRILL_APSP_INT32, 0);
            r = solve_capped(ctx, g, KRILL_APSP_INT32, 2.0 * g->n_rows * g->n_rows, &info, &st);
            CHECK_OK(st);
            if (r && ref) CHECK(at_compare(r, ref, 0.0, files[f]) == 0);
            CHECK(info.out_of_core > 0);
            tested++;
            krill_apsp_destroy(&r);
            krill_apsp_destroy(&ref);
        }
        krill_csr_destroy(&g);
    }
    if (!tested) printf("test_apsp_ooc: no testdata graph found, the random graphs only\n");
}

/* Every allocation of an out-of-core solve, failed in turn, fails the solve cleanly: the
 * failures counted equal the allocations of an unfaulted solve (the model's cache is warm
 * and this test's own, so no calibration, whose best-effort cache write may fail quietly,
 * runs between them). */
static void test_faults(krill_ctx *ctx)
{
    krill_csr *g = at_random_graph(130, 4, 9, 0);
    const double cap = 8.0 * 32 * 32 * 4;
    krill_apsp_info info;
    krill_status st;
    krill_apsp *r = solve_capped(ctx, g, KRILL_APSP_INT32, cap, &info, &st);
    long calls = krill_alloc_calls(), failed = 0;
    CHECK_OK(st);
    krill_apsp_destroy(&r);
    r = solve_capped(ctx, g, KRILL_APSP_INT32, cap, &info, &st);
    calls = krill_alloc_calls() - calls;
    CHECK_OK(st);
    CHECK(info.out_of_core > 0);
    krill_apsp_destroy(&r);
    for (long k = 1; k <= calls + 1; k++) {
        krill_fault_alloc_after(k);
        r = solve_capped(ctx, g, KRILL_APSP_INT32, cap, &info, &st);
        krill_fault_alloc_after(0);
        if (st == KRILL_OK) {
            krill_apsp_destroy(&r);
            break;
        }
        failed++;
        CHECK((st == KRILL_ERR_ALLOC || st == KRILL_ERR_DEVICE_ALLOC) && r == NULL);
    }
    if (failed != calls)
        printf("test_apsp_ooc: %ld of the solve's %ld allocations failed it\n", failed, calls);
    CHECK(calls > 20 && failed == calls);
    krill_csr_destroy(&g);
}

int main(void)
{
    krill_ctx *ctx = tu_cpu_ctx(2);
    test_random(ctx);
    test_methods_and_modes(ctx);
    test_negative_cycle(ctx);
    test_refusals(ctx);
    test_testdata(ctx);
    test_faults(ctx);
    krill_ctx_destroy(&ctx);
    return tu_finish("test_apsp_ooc");
}
