/* tests/test_apsp.c - krill_apsp_solve on the CPU through the public API: every method and
 * weight type against the plain Floyd-Warshall oracle and the shortest-path certificate
 * (apsp_testutil.h), edge cases (n = 0, 1, tile +- 1, isolated vertices, self loops,
 * zero weights, negative arcs), the errors (negative cycles, dijkstra with negative
 * weights, int32 overflow, non-integer int32 weights, memory), allocation faults, and the
 * graphs of testdata. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apsp_testutil.h"
#include "core/core_impl.h"
#include "testutil.h"

static const char *const methods[] = {"plain", "fw-a", "fw-b", "fw-rec", "dijkstra"};
enum { N_METHODS = 5 };
static const krill_apsp_weight weights[] = {KRILL_APSP_INT32, KRILL_APSP_FLOAT,
                                            KRILL_APSP_DOUBLE};

static krill_csr *from_arcs(int32_t n, int m, const int32_t *u, const int32_t *v, const double *w)
{
    krill_csr *g = NULL;
    if (krill_csr_from_triplets(n, n, m, u, v, w, &g) != KRILL_OK) {
        fprintf(stderr, "from_arcs: %s\n", krill_last_error());
        exit(1);
    }
    return g;
}

/* A 5-vertex graph with a known answer: 0->1 (4), 0->2 (1), 2->1 (2), 1->3 (1), 2->3 (5),
 * a zero-weight arc 3->0 and a positive self loop on 2; vertex 4 is isolated. */
static void test_known(krill_ctx *ctx)
{
    const int32_t u[] = {0, 0, 2, 1, 2, 3, 2}, v[] = {1, 2, 1, 3, 3, 0, 2};
    const double w[] = {4, 1, 2, 1, 5, 0, 7};
    const double want[4][4] = {{0, 3, 1, 4}, {1, 0, 2, 1}, {3, 2, 0, 3}, {0, 3, 1, 0}};
    krill_csr *g = from_arcs(5, 7, u, v, w);
    for (int m = 0; m < N_METHODS; m++)
        for (int t = 0; t < 3; t++) {
            krill_apsp *r = at_solve(ctx, g, methods[m], weights[t], 1);
            CHECK(r != NULL);
            if (!r) continue;
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) CHECK(krill_apsp_dist_at(r, i, j) == want[i][j]);
            for (int i = 0; i < 4; i++) {
                CHECK(isinf(krill_apsp_dist_at(r, i, 4)) && isinf(krill_apsp_dist_at(r, 4, i)));
                CHECK(krill_apsp_pred(r)[i * 5 + 4] == KRILL_APSP_NO_PRED);
            }
            CHECK(krill_apsp_dist_at(r, 4, 4) == 0);
            int32_t path[5], len = 0;
            CHECK_OK(krill_apsp_path(r, 0, 3, path, &len));
            CHECK(len == 4 && path[0] == 0 && path[1] == 2 && path[2] == 1 && path[3] == 3);
            CHECK_OK(krill_apsp_path(r, 1, 4, path, &len));
            CHECK(len == 0);
            CHECK_OK(krill_apsp_path(r, 2, 2, path, &len));
            CHECK(len == 1 && path[0] == 2);
            CHECK_STATUS(krill_apsp_path(r, 0, 5, path, &len), KRILL_ERR_ARG);
            int64_t unreachable = 0;
            double largest = 0;
            krill_apsp_summary(r, &unreachable, &largest, NULL);
            CHECK(unreachable == 8 && largest == 4);
            CHECK(at_certify(g, r, 0, 1, 0.0, methods[m]) == 0);
            krill_apsp_destroy(&r);
            CHECK(r == NULL);
        }
    krill_csr_destroy(&g);
}

/* One vertex, with a positive self loop (ignored: D = 0) and with a negative one. */
static void test_one(krill_ctx *ctx)
{
    const int32_t z = 0;
    const double pos = 3, neg = -3;
    krill_csr *g = from_arcs(1, 1, &z, &z, &pos), *h = from_arcs(1, 1, &z, &z, &neg);
    for (int m = 0; m < N_METHODS; m++) {
        krill_apsp *r = at_solve(ctx, g, methods[m], KRILL_APSP_INT32, 1);
        CHECK(r && krill_apsp_n(r) == 1 && krill_apsp_dist_at(r, 0, 0) == 0);
        CHECK(r && krill_apsp_pred(r)[0] == KRILL_APSP_NO_PRED);
        krill_apsp_destroy(&r);
        krill_apsp_opts o = KRILL_APSP_OPTS_INIT;
        o.method = methods[m];
        CHECK_STATUS(krill_apsp_solve(ctx, h, &o, &r, NULL),
                     m == N_METHODS - 1 ? KRILL_ERR_ARG : KRILL_ERR_NUMERIC);
    }
    krill_csr_destroy(&g);
    krill_csr_destroy(&h);
}

/* Every method and type against plain on random graphs whose sizes straddle the tiles. */
static void test_random(krill_ctx *ctx)
{
    const int32_t sizes[] = {2, 3, 31, 63, 64, 65, 127, 128, 129, 200};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int shift = 0; shift < 2; shift++) {
            krill_csr *g = at_random_graph(sizes[s], 4, 7 + s, shift);
            for (int t = 0; t < 3; t++)
                for (int paths = 0; paths < 2; paths++) {
                    char what[96];
                    krill_apsp *ref = at_solve(ctx, g, "plain", weights[t], paths);
                    CHECK(ref != NULL);
                    for (int m = 1; m < N_METHODS && ref; m++) {
                        if (shift && !strcmp(methods[m], "dijkstra")) continue;
                        snprintf(what, sizeof what, "n %d shift %d %s %s paths %d", sizes[s],
                                 shift, methods[m], krill_apsp_weight_name(weights[t]), paths);
                        krill_apsp *r = at_solve(ctx, g, methods[m], weights[t], paths);
                        CHECK(r != NULL);
                        /* integer weights: every sum here is exact, in float too */
                        if (r) CHECK(at_compare(r, ref, 0.0, what) == 0);
                        if (r) CHECK(at_certify(g, r, 0, 1, 0.0, what) == 0);
                        krill_apsp_destroy(&r);
                    }
                    krill_apsp_destroy(&ref);
                }
            krill_csr_destroy(&g);
        }
}

/* Weights 0 and 1: cycles of weight 0 everywhere, where blocked FW's predecessors could
 * loop; every path must still be a real path of length D, on every method and type. */
static void test_zero_cycles(krill_ctx *ctx)
{
    krill_csr *g = at_random_graph(300, 4, 12, 0);
    for (int64_t e = 0; e < g->nnz; e++) g->val[e] = (double)((int64_t)g->val[e] % 2);
    for (int m = 0; m < N_METHODS; m++)
        for (int t = 0; t < 3; t++) {
            krill_apsp *r = at_solve(ctx, g, methods[m], weights[t], 1);
            CHECK(r != NULL);
            if (r) CHECK(at_certify(g, r, 0, 1, 0.0, "zero-weight cycles") == 0);
            krill_apsp_destroy(&r);
        }
    krill_csr_destroy(&g);
}

/* Real weights: float and double results agree with the double oracle within rounding. */
static void test_real_weights(krill_ctx *ctx)
{
    krill_csr *g = at_random_graph(150, 4, 99, 0);
    for (int64_t e = 0; e < g->nnz; e++) g->val[e] = 0.1 + g->val[e] / 7.0;
    krill_apsp *ref = at_solve(ctx, g, "plain", KRILL_APSP_DOUBLE, 0);
    for (int m = 0; m < N_METHODS && ref; m++)
        for (int t = 1; t < 3; t++) {
            krill_apsp *r = at_solve(ctx, g, methods[m], weights[t], 1);
            double tol = weights[t] == KRILL_APSP_FLOAT ? 150 * 6e-8 : 150 * 1.2e-16;
            CHECK(r != NULL);
            if (r) CHECK(at_compare(r, ref, tol, methods[m]) == 0);
            if (r) CHECK(at_certify(g, r, 0, 7, tol, methods[m]) == 0);
            krill_apsp_destroy(&r);
        }
    krill_apsp_destroy(&ref);
    krill_csr_destroy(&g);
}

/* A negative cycle 1 -> 2 -> 3 -> 1 (weight -1) reached from 0: an error naming a vertex
 * of it, with paths the cycle; every method, every type; no result. */
static void test_negative_cycle(krill_ctx *ctx)
{
    const int32_t u[] = {0, 1, 2, 3, 3}, v[] = {1, 2, 3, 1, 4};
    const double w[] = {5, 2, -4, 1, 1};
    krill_csr *g = from_arcs(5, 5, u, v, w);
    for (int m = 0; m < N_METHODS - 1; m++)
        for (int t = 0; t < 3; t++)
            for (int paths = 0; paths < 2; paths++) {
                krill_apsp_opts o = KRILL_APSP_OPTS_INIT;
                krill_apsp_info info;
                krill_apsp *r = NULL;
                o.method = methods[m];
                o.weight = weights[t];
                o.paths = paths;
                CHECK_STATUS(krill_apsp_solve(ctx, g, &o, &r, &info), KRILL_ERR_NUMERIC);
                CHECK(r == NULL);
                CHECK(info.negative_cycle >= 1 && info.negative_cycle <= 3);
                CHECK(strstr(krill_last_error(), "negative cycle through vertex") != NULL);
                CHECK(strstr(krill_last_error(), "the cycle:") != NULL);
            }
    /* a negative self loop is a negative cycle too */
    const int32_t su[] = {0, 1}, sv[] = {1, 1};
    const double sw[] = {1, -1};
    krill_csr *s = from_arcs(2, 2, su, sv, sw);
    krill_apsp *r = NULL;
    CHECK_STATUS(krill_apsp_solve(ctx, s, NULL, &r, NULL), KRILL_ERR_NUMERIC);
    CHECK(strstr(krill_last_error(), "vertex 1; the cycle: 1 -> 1") != NULL);
    krill_csr_destroy(&s);
    krill_csr_destroy(&g);
}

static void test_errors(krill_ctx *ctx)
{
    krill_apsp_opts o = KRILL_APSP_OPTS_INIT;
    krill_apsp *r = NULL;
    const int32_t u[] = {0, 1}, v[] = {1, 2};
    const double neg[] = {1, -1}, frac[] = {1, 0.5}, big[] = {6e8, 6e8};
    krill_csr *g = from_arcs(3, 2, u, v, neg);
    o.method = "dijkstra";
    CHECK_STATUS(krill_apsp_solve(ctx, g, &o, &r, NULL), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "weights >= 0") != NULL);
    o.method = "nosuch";
    CHECK_STATUS(krill_apsp_solve(ctx, g, &o, &r, NULL), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "nosuch") != NULL);
    o.method = "fw-a";
    o.tile = 7;
    CHECK_STATUS(krill_apsp_solve(ctx, g, &o, &r, NULL), KRILL_ERR_ARG);
    o.tile = 0;
    o.weight = (krill_apsp_weight)9;
    CHECK_STATUS(krill_apsp_solve(ctx, g, &o, &r, NULL), KRILL_ERR_ARG);
    CHECK_STATUS(krill_apsp_solve(NULL, g, NULL, &r, NULL), KRILL_ERR_ARG);
    CHECK_STATUS(krill_apsp_solve(ctx, NULL, NULL, &r, NULL), KRILL_ERR_ARG);
    CHECK_STATUS(krill_apsp_solve(ctx, g, NULL, NULL, NULL), KRILL_ERR_ARG);
    krill_csr_destroy(&g);

    g = from_arcs(3, 2, u, v, frac);
    CHECK_STATUS(krill_apsp_solve(ctx, g, NULL, &r, NULL), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "0.5") != NULL);
    o = (krill_apsp_opts)KRILL_APSP_OPTS_INIT;
    o.weight = KRILL_APSP_DOUBLE;
    CHECK_OK(krill_apsp_solve(ctx, g, &o, &r, NULL));
    CHECK(r && krill_apsp_dist_at(r, 0, 2) == 1.5);
    krill_apsp_destroy(&r);
    krill_csr_destroy(&g);

    g = from_arcs(3, 2, u, v, big);              /* a path of 1.2e9 > the int32 limit */
    CHECK_STATUS(krill_apsp_solve(ctx, g, NULL, &r, NULL), KRILL_ERR_UNSUPPORTED);
    CHECK(strstr(krill_last_error(), "int32") != NULL);
    o.weight = KRILL_APSP_DOUBLE;
    CHECK_OK(krill_apsp_solve(ctx, g, &o, &r, NULL));
    CHECK(r && krill_apsp_dist_at(r, 0, 2) == 1.2e9);
    krill_apsp_destroy(&r);
    krill_csr_destroy(&g);

    /* an integer weight beyond int32: unsupported (krill apsp then retries in double) */
    const double huge_w[] = {2e9, 1};
    g = from_arcs(3, 2, u, v, huge_w);
    CHECK_STATUS(krill_apsp_solve(ctx, g, NULL, &r, NULL), KRILL_ERR_UNSUPPORTED);
    o = (krill_apsp_opts)KRILL_APSP_OPTS_INIT;
    o.weight = KRILL_APSP_FLOAT;                 /* float sums could overflow: refused */
    g->val[0] = 3e38;
    g->val[1] = 3e38;
    CHECK_STATUS(krill_apsp_solve(ctx, g, &o, &r, NULL), KRILL_ERR_UNSUPPORTED);
    CHECK(strstr(krill_last_error(), "overflow") != NULL);
    o.weight = KRILL_APSP_DOUBLE;
    CHECK_OK(krill_apsp_solve(ctx, g, &o, &r, NULL));
    CHECK(r && krill_apsp_dist_at(r, 0, 2) == 6e38);
    krill_apsp_destroy(&r);
    o.method = "plain";                          /* an untiled method refuses a tile */
    o.tile = 64;
    CHECK_STATUS(krill_apsp_solve(ctx, g, &o, &r, NULL), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "no tile") != NULL);
    krill_csr_destroy(&g);

    /* every distance negative: the largest finite one is negative, not 0 */
    const double negs[] = {-5, -1};
    g = from_arcs(3, 2, u, v, negs);
    CHECK_OK(krill_apsp_solve(ctx, g, NULL, &r, NULL));
    double largest = 0;
    krill_apsp_summary(r, NULL, &largest, NULL);
    CHECK(largest == -1);
    krill_apsp_destroy(&r);
    krill_csr_destroy(&g);

    /* D of 300000^2 doubles (720 GB): refused before allocating, with both numbers */
    krill_csr *huge = NULL;
    o = (krill_apsp_opts)KRILL_APSP_OPTS_INIT;
    o.weight = KRILL_APSP_DOUBLE;
    CHECK_OK(krill_csr_create(300000, 300000, 0, &huge));
    CHECK_STATUS(krill_apsp_solve(ctx, huge, &o, &r, NULL), KRILL_ERR_ALLOC);
    CHECK(strstr(krill_last_error(), "available") != NULL);
    krill_csr_destroy(&huge);

    krill_csr *rect = NULL;
    CHECK_OK(krill_csr_create(2, 3, 0, &rect));
    CHECK_STATUS(krill_apsp_solve(ctx, rect, NULL, &r, NULL), KRILL_ERR_ARG);
    krill_csr_destroy(&rect);

    krill_csr *empty = NULL;                     /* n = 0: an empty result */
    CHECK_OK(krill_csr_create(0, 0, 0, &empty));
    CHECK_OK(krill_apsp_solve(ctx, empty, NULL, &r, NULL));
    CHECK(r && krill_apsp_n(r) == 0);
    krill_apsp_destroy(&r);
    krill_csr_destroy(&empty);
}

/* auto: Dijkstra on a sparse graph with weights >= 0, Floyd-Warshall on a denser one and
 * with negative weights. */
static void test_auto(krill_ctx *ctx)
{
    krill_csr *g = at_random_graph(4000, 1, 3, 0), *h = at_random_graph(300, 4, 3, 1);
    krill_csr *d = at_random_graph(600, 4, 3, 0);
    krill_apsp *r = NULL;
    krill_apsp_info info;
    CHECK_OK(krill_apsp_solve(ctx, g, NULL, &r, &info));
    CHECK(!strcmp(info.method, "dijkstra") && strstr(info.why, "sparse") != NULL);
    krill_apsp_destroy(&r);
    CHECK_OK(krill_apsp_solve(ctx, d, NULL, &r, &info));
    CHECK(!strcmp(info.method, "fw-a") && strstr(info.why, "dense") != NULL);
    krill_apsp_destroy(&r);
    krill_csr_destroy(&d);
    CHECK_OK(krill_apsp_solve(ctx, h, NULL, &r, &info));
    CHECK(!strcmp(info.method, "fw-a") && strstr(info.why, "negative") != NULL);
    CHECK(info.relaxations == 300.0 * 300 * 300 && info.t_compute > 0);
    krill_apsp_destroy(&r);
    krill_csr_destroy(&g);
    krill_csr_destroy(&h);
}

/* The min-plus peak: positive for every type, arguments checked; weight names both ways. */
static void test_peak(krill_ctx *ctx)
{
    double rate = 0;
    for (int t = 0; t < 3; t++) {
        krill_apsp_weight w;
        CHECK_OK(krill_apsp_peak(ctx, weights[t], 0.01, &rate));
        CHECK(rate > 1e6 && isfinite(rate));
        CHECK_OK(krill_apsp_weight_parse(krill_apsp_weight_name(weights[t]), &w));
        CHECK(w == weights[t]);
    }
    CHECK_STATUS(krill_apsp_peak(ctx, (krill_apsp_weight)7, 0.01, &rate), KRILL_ERR_ARG);
    CHECK_STATUS(krill_apsp_peak(ctx, KRILL_APSP_INT32, -1.0, &rate), KRILL_ERR_ARG);
    CHECK_STATUS(krill_apsp_peak(NULL, KRILL_APSP_INT32, 0.01, &rate), KRILL_ERR_ARG);
    CHECK_STATUS(krill_apsp_peak(ctx, KRILL_APSP_INT32, 0.01, NULL), KRILL_ERR_ARG);
    krill_apsp_weight w;
    CHECK_STATUS(krill_apsp_weight_parse("int64", &w), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "int64") != NULL);
}

/* The k-th allocation fails, for every k: a clean status, no leak (ASan), then success. */
static void test_faults(krill_ctx *ctx)
{
    krill_csr *g = at_random_graph(70, 4, 5, 0);
    int done = 0;
    for (long k = 1; k < 200 && !done; k++)
        for (int m = 0; m < N_METHODS; m++) {
            krill_apsp *r = NULL;
            krill_apsp_opts o = KRILL_APSP_OPTS_INIT;
            o.method = methods[m];
            o.paths = 1;
            krill_fault_alloc_after(k);
            krill_status st = krill_apsp_solve(ctx, g, &o, &r, NULL);
            krill_fault_alloc_after(0);
            CHECK(st == KRILL_OK || st == KRILL_ERR_ALLOC);
            CHECK((st == KRILL_OK) == (r != NULL));
            if (st == KRILL_OK && m == 0) done = 1;
            krill_apsp_destroy(&r);
        }
    CHECK(done);
    krill_csr_destroy(&g);
}

/* Threads do not change int32 results: 1 and 2 threads, every method. */
static void test_threads(void)
{
    krill_ctx *one = tu_cpu_ctx(1), *two = tu_cpu_ctx(2);
    krill_csr *g = at_random_graph(260, 4, 11, 0);
    for (int m = 0; m < N_METHODS; m++) {
        krill_apsp *a = at_solve(one, g, methods[m], KRILL_APSP_INT32, 1);
        krill_apsp *b = at_solve(two, g, methods[m], KRILL_APSP_INT32, 1);
        CHECK(a && b && at_compare(a, b, 0.0, methods[m]) == 0);
        CHECK(a && b && !memcmp(krill_apsp_pred(a), krill_apsp_pred(b), 260 * 260 * 4));
        krill_apsp_destroy(&a);
        krill_apsp_destroy(&b);
    }
    krill_csr_destroy(&g);
    krill_ctx_destroy(&one);
    krill_ctx_destroy(&two);
}

/* testdata graphs: small ones against plain and Dijkstra, the rest by the certificate on
 * sampled rows; the negative-cycle example refused. */
static void each_graph(const char *path, const char *name, void *user)
{
    krill_ctx *ctx = (krill_ctx *)user;
    krill_csr *g = NULL;
    krill_graph_info gi;
    int *count = NULL;
    if (krill_graph_read(path, NULL, &g, &gi) != KRILL_OK) {
        fprintf(stderr, "%s: %s\n", name, krill_last_error());
        CHECK(0);
        return;
    }
    (void)count;
    if (strstr(name, "negative-cycles")) {
        /* vertex 0 (the file's 1) lies on negative closed walks but on no negative cycle:
           the vertex named must be on one (the file's 3..8) */
        krill_apsp *r = NULL;
        krill_apsp_info info;
        CHECK_STATUS(krill_apsp_solve(ctx, g, NULL, &r, &info), KRILL_ERR_NUMERIC);
        CHECK(info.negative_cycle >= 2 && info.negative_cycle <= 7);
        printf("%s: %s\n", name, krill_last_error());
    } else if (gi.n <= 1100) {
        krill_apsp_weight wt = gi.integer_weights ? KRILL_APSP_INT32 : KRILL_APSP_DOUBLE;
        krill_apsp *ref = at_solve(ctx, g, "plain", wt, 1);
        krill_apsp *fw = at_solve(ctx, g, "fw-a", wt, 1);
        CHECK(ref && fw && at_compare(fw, ref, 0.0, name) == 0);
        CHECK(fw && at_certify(g, fw, 0, 13, 0.0, name) == 0);
        if (gi.negative == 0) {
            krill_apsp *dj = at_solve(ctx, g, "dijkstra", wt, 1);
            CHECK(ref && dj && at_compare(dj, ref, 0.0, name) == 0);
            krill_apsp_destroy(&dj);
        }
        krill_apsp_destroy(&ref);
        krill_apsp_destroy(&fw);
    } else if (gi.n <= 8000 && gi.negative == 0) {
        /* larger graphs: Dijkstra, certified on a sample of rows */
        krill_apsp *dj = at_solve(ctx, g, "dijkstra", gi.integer_weights ? KRILL_APSP_INT32
                                                                        : KRILL_APSP_DOUBLE, 1);
        CHECK(dj && at_certify(g, dj, 0, gi.n / 5 + 1, 0.0, name) == 0);
        krill_apsp_destroy(&dj);
    } else {
        printf("%s: n = %d, too large for the CPU test (the GPU test covers it)\n", name, gi.n);
    }
    printf("graph %s: n %d, %lld arcs\n", name, gi.n, (long long)gi.arcs);
    krill_csr_destroy(&g);
}

int main(void)
{
    krill_ctx *ctx = tu_cpu_ctx(2);
    test_known(ctx);
    test_one(ctx);
    test_random(ctx);
    test_real_weights(ctx);
    test_zero_cycles(ctx);
    test_negative_cycle(ctx);
    test_errors(ctx);
    test_auto(ctx);
    test_faults(ctx);
    test_peak(ctx);
    test_threads();
    int graphs = tu_for_each_graph(each_graph, ctx);
    CHECK(graphs < 0 || graphs >= tu_testdata_expect(10, 2));
    krill_ctx_destroy(&ctx);
    return tu_finish("test_apsp");
}
