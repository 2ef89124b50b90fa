/* tests/test_graph_gen.c - the graph generators (krill_graph_gen): sizes, determinism (the
 * same spec gives the same bits, another seed another graph), random graphs without self
 * loops and with parallel arcs reduced to their minimum, weight ranges, the grid's structure
 * and symmetric weights, the complete graph's arcs and weights, every kind of bad spec, the
 * help lines and allocation failures. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/core_impl.h"
#include "testutil.h"

static int same_graph(const krill_csr *a, const krill_csr *b)
{
    return a && b && a->n_rows == b->n_rows && a->n_cols == b->n_cols && a->nnz == b->nnz &&
           memcmp(a->row_ptr, b->row_ptr, ((size_t)a->n_rows + 1) * sizeof *a->row_ptr) == 0 &&
           memcmp(a->col, b->col, (size_t)a->nnz * sizeof *a->col) == 0 &&
           memcmp(a->val, b->val, (size_t)a->nnz * sizeof *a->val) == 0;
}

/* Every weight an integer in [lo, hi]; no arc u -> u. Returns the number of bad arcs. */
static int64_t bad_arcs(const krill_csr *g, double lo, double hi)
{
    int64_t bad = 0;
    for (int32_t u = 0; u < g->n_rows; u++)
        for (int64_t p = g->row_ptr[u]; p < g->row_ptr[u + 1]; p++)
            bad += g->col[p] == u || g->val[p] < lo || g->val[p] > hi ||
                   floor(g->val[p]) != g->val[p];
    return bad;
}

static void test_random(void)
{
    krill_csr *a = NULL, *b = NULL, *c = NULL;
    CHECK_OK(krill_graph_gen("random:1000", &a));
    CHECK_OK(krill_graph_gen("random:1000,4,1", &b));     /* the defaults spelt out */
    CHECK_OK(krill_graph_gen("random:1000,4,2", &c));
    CHECK(a && b && c);
    if (a && b && c) {
        CHECK_OK(krill_csr_check(a, "random:1000"));
        CHECK(a->n_rows == 1000 && a->n_cols == 1000);
        /* 4000 arcs drawn among ~10^6 pairs: a few parallel ones at most */
        CHECK(a->nnz <= 4000 && a->nnz > 3950);
        CHECK(bad_arcs(a, 0, 999) == 0);
        CHECK(same_graph(a, b));
        CHECK(!same_graph(a, c) && c->nnz > 3950);
        /* weights uniform in [0, N): mean near 499.5, both ends of the range reached */
        double sum = 0, lo = 1e9, hi = -1;
        for (int64_t p = 0; p < a->nnz; p++) {
            sum += a->val[p];
            lo = fmin(lo, a->val[p]);
            hi = fmax(hi, a->val[p]);
        }
        CHECK(fabs(sum / (double)a->nnz - 499.5) < 25 && lo < 10 && hi > 990);
        /* ends spread over all vertices: every vertex has out-arcs (P(none) = e^-4 each,
         * so not all) and the tails are not all small */
        int32_t empty = 0;
        for (int32_t u = 0; u < a->n_rows; u++) empty += a->row_ptr[u + 1] == a->row_ptr[u];
        CHECK(empty > 0 && empty < 60);
    }
    krill_csr_destroy(&a);
    krill_csr_destroy(&b);
    krill_csr_destroy(&c);

    /* the same spec twice: the same bits (a fresh call, not a cached result) */
    CHECK_OK(krill_graph_gen("random:5000,8,12345", &a));
    CHECK_OK(krill_graph_gen("random:5000,8,12345", &b));
    CHECK(same_graph(a, b) && a->nnz > 39000 && bad_arcs(a, 0, 4999) == 0);
    krill_csr_destroy(&a);
    krill_csr_destroy(&b);
    /* seed 0 is a seed like any other */
    CHECK_OK(krill_graph_gen("random:50,2,0", &a));
    CHECK(a && a->n_rows == 50 && bad_arcs(a, 0, 49) == 0);
    krill_csr_destroy(&a);

    /* parallel arcs reduced to the minimum: 2 vertices, 100 arcs over the 2 possible ones
     * with weights 0 or 1 -> both arcs of weight 0 (a sum or the last would not be);
     * 3 vertices, 300 arcs over 6, weights 0..2 -> all 0 */
    CHECK_OK(krill_graph_gen("random:2,50", &a));
    CHECK(a && a->nnz == 2 && a->col[0] == 1 && a->col[1] == 0 && a->val[0] == 0 &&
          a->val[1] == 0);
    krill_csr_destroy(&a);
    CHECK_OK(krill_graph_gen("random:3,100,7", &a));
    CHECK(a && a->nnz == 6 && bad_arcs(a, 0, 0) == 0);
    krill_csr_destroy(&a);
}

static void test_grid(void)
{
    krill_csr *g = NULL, *h = NULL;
    const int32_t rows = 3, cols = 4;
    CHECK_OK(krill_graph_gen("grid2d:3,4", &g));
    CHECK(g != NULL);
    if (!g) return;
    CHECK_OK(krill_csr_check(g, "grid2d:3,4"));
    CHECK(g->n_rows == 12 && g->nnz == 2 * (3 * 3 + 4 * 2));
    CHECK(bad_arcs(g, 1, 100) == 0);
    CHECK(krill_csr_is_symmetric(g));                     /* both ways, the same weight */
    /* exactly the 4-neighbours */
    int wrong = 0;
    for (int32_t r = 0; r < rows; r++) {
        for (int32_t c = 0; c < cols; c++) {
            int32_t u = r * cols + c, want[4], k = 0;
            if (r > 0) want[k++] = u - cols;
            if (c > 0) want[k++] = u - 1;
            if (c + 1 < cols) want[k++] = u + 1;
            if (r + 1 < rows) want[k++] = u + cols;
            wrong += g->row_ptr[u + 1] - g->row_ptr[u] != k;
            for (int32_t j = 0; j < k && !wrong; j++) wrong += g->col[g->row_ptr[u] + j] != want[j];
        }
    }
    CHECK(wrong == 0);
    CHECK_OK(krill_graph_gen("grid2d:3,4", &h));
    CHECK(same_graph(g, h));
    krill_csr_destroy(&g);
    krill_csr_destroy(&h);

    /* weights spread over [1, 100] on a larger grid; degenerate grids */
    CHECK_OK(krill_graph_gen("grid2d:100,120", &g));
    if (g) {
        double lo = 1e9, hi = -1;
        for (int64_t p = 0; p < g->nnz; p++) {
            lo = fmin(lo, g->val[p]);
            hi = fmax(hi, g->val[p]);
        }
        CHECK(g->n_rows == 12000 && g->nnz == 2 * (100 * 119 + 120 * 99) && lo == 1 &&
              hi == 100 && bad_arcs(g, 1, 100) == 0 && krill_csr_is_symmetric(g));
    }
    krill_csr_destroy(&g);
    CHECK_OK(krill_graph_gen("grid2d:1,1", &g));
    CHECK(g && g->n_rows == 1 && g->nnz == 0);
    krill_csr_destroy(&g);
    CHECK_OK(krill_graph_gen("grid2d:1,5", &g));
    CHECK(g && g->n_rows == 5 && g->nnz == 8 && krill_csr_is_symmetric(g));
    krill_csr_destroy(&g);
}

static void test_complete(void)
{
    krill_csr *g = NULL;
    CHECK_OK(krill_graph_gen("complete:7", &g));
    CHECK(g != NULL);
    if (!g) return;
    CHECK_OK(krill_csr_check(g, "complete:7"));
    CHECK(g->n_rows == 7 && g->nnz == 42 && bad_arcs(g, 1, 97) == 0);
    int wrong = 0;
    for (int32_t u = 0; u < 7; u++) {
        int64_t p = g->row_ptr[u];
        for (int32_t v = 0; v < 7; v++) {
            if (v == u) continue;
            wrong += g->col[p] != v || g->val[p] != 1 + (u * 7 + v * 13) % 97;
            p++;
        }
    }
    CHECK(wrong == 0);
    krill_csr_destroy(&g);
    CHECK_OK(krill_graph_gen("complete:1", &g));
    CHECK(g && g->n_rows == 1 && g->nnz == 0);
    krill_csr_destroy(&g);
    CHECK_OK(krill_graph_gen("complete:300", &g));
    CHECK(g && g->nnz == 300 * 299 && bad_arcs(g, 1, 97) == 0);
    krill_csr_destroy(&g);
}

/* The spec fails with KRILL_ERR_ARG, no graph, and a message containing `what`. */
static void expect_bad(const char *spec, const char *what, int line)
{
    krill_csr *g = NULL;
    krill_status st = krill_graph_gen(spec, &g);
    tu_checks++;
    if (st != KRILL_ERR_ARG || g != NULL || !strstr(krill_last_error(), what)) {
        tu_failures++;
        fprintf(stderr, "test line %d: '%s' gave %s \"%s\", expected an argument error "
                "naming \"%s\"\n", line, spec ? spec : "(null)", krill_status_string(st),
                krill_last_error(), what);
    }
    krill_csr_destroy(&g);
}
#define BAD(spec, what) expect_bad(spec, what, __LINE__)

static void test_bad_specs(void)
{
    BAD("", "unknown graph generator ''");
    BAD("foo", "unknown graph generator 'foo'");
    BAD("foo:1", "unknown graph generator 'foo'");
    BAD("Random:5", "unknown graph generator 'Random'");
    BAD("poisson3d:5", "unknown graph generator 'poisson3d'");
    BAD("random", "missing N");
    BAD("random:", "N must be a positive integer, got ''");
    BAD("random:0", "N must be a positive integer, got '0'");
    BAD("random:1", "N >= 2");
    BAD("random:x", "N must be a positive integer, got 'x'");
    BAD("random:-5", "N must be a positive integer");
    BAD("random:+5", "N must be a positive integer");
    BAD("random:1e3", "N must be a positive integer");
    BAD("random:10 ", "N must be a positive integer");
    BAD("random:10,", "DEG must be a positive integer, got ''");
    BAD("random:10,0", "DEG must be a positive integer, got '0'");
    BAD("random:10,4,", "SEED must be a non-negative integer, got ''");
    BAD("random:10,4,-1", "SEED must be a non-negative integer");
    BAD("random:10,4,1,5", "too many arguments");
    BAD("random:10;4", "N must be a positive integer, got '10;4'");
    BAD("random:1234567890123456789", "N = 1234567890123456789 is too large");
    BAD("random:3000000000", "more than 2147483647 vertices");
    BAD("random:2147483647,2", "N*DEG = 2147483647*2 arcs");
    BAD("random:1000,999999999999999999", "N*DEG");
    BAD("grid2d", "missing R");
    BAD("grid2d:3", "missing C");
    BAD("grid2d:3,0", "C must be a positive integer");
    BAD("grid2d:0,3", "R must be a positive integer");
    BAD("grid2d:3,4,5", "too many arguments");
    BAD("grid2d:100000,100000", "R*C");
    BAD("grid2d:40000,40000", "arcs");
    BAD("complete", "missing N");
    BAD("complete:0", "N must be a positive integer");
    BAD("complete:46342", "complete: N = 46342");
    BAD("complete:3,4", "too many arguments");
    krill_csr *g = NULL;
    CHECK_STATUS(krill_graph_gen(NULL, &g), KRILL_ERR_ARG);
    CHECK_STATUS(krill_graph_gen("complete:3", NULL), KRILL_ERR_ARG);
}

static void test_help(void)
{
    const char *const *help = krill_graph_gen_help();
    const char *names[] = {"random:", "grid2d:", "complete:"};
    int n = 0;
    CHECK(help != NULL);
    while (help && help[n]) n++;
    CHECK(n == 3);
    for (int k = 0; k < n && k < 3; k++) CHECK(strncmp(help[k], names[k], strlen(names[k])) == 0);
}

static void fault_loop(const char *spec)
{
    krill_csr *g = NULL;
    long before = krill_alloc_calls();
    CHECK_OK(krill_graph_gen(spec, &g));
    long needed = krill_alloc_calls() - before;
    krill_csr_destroy(&g);
    int wrong = 0;
    for (long k = 1; k <= needed + 1; k++) {
        krill_fault_alloc_after(k);
        krill_status st = krill_graph_gen(spec, &g);
        krill_fault_alloc_after(0);
        wrong += k <= needed ? (st != KRILL_ERR_ALLOC || g != NULL) : st != KRILL_OK;
        krill_csr_destroy(&g);
    }
    tu_checks++;
    if (needed == 0 || wrong) {
        tu_failures++;
        fprintf(stderr, "%s: %ld allocations, %d wrong results under faults\n", spec, needed,
                wrong);
    }
}

int main(void)
{
    test_random();
    test_grid();
    test_complete();
    test_bad_specs();
    test_help();
    fault_loop("random:40,3");          /* unsorted rows and parallel arcs */
    fault_loop("grid2d:4,5");
    fault_loop("complete:6");
    return tu_finish("test_graph_gen");
}
