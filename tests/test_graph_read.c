/* tests/test_graph_read.c - the graph readers (krill/graph.h) on hand-written buffers and
 * the real files of testdata/graphs: every format (DIMACS, METIS with every fmt, edge lists
 * with each id numbering, Matrix Market with each symmetry) against its known adjacency;
 * parallel arcs (minimum), self loops, isolated vertices, CRLF, comments; the format chosen
 * from the name; every malformed case with its status, file name and line; gzip and plain
 * files; allocation failures (each one in turn). With --testdata (test_graph_testdata): the
 * files of testdata/graphs against their headers and known counts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef KRILL_HAVE_ZLIB
#include <zlib.h>
#endif

#include "core/core_impl.h"
#include "testutil.h"

typedef struct arc {
    int32_t u, v;
    double w;
} arc;

static krill_status read_as(const char *name, const char *text, const krill_graph_opts *opts,
                            krill_csr **g, krill_graph_info *info)
{
    return krill_graph_read_buffer(name, text, strlen(text), opts, g, info);
}

/* g must hold exactly the arcs x[0..n) (in row order, each row by head), weights exact. */
static void check_arcs(const krill_csr *g, int32_t nv, const arc *x, int64_t n, int line)
{
    int bad = 0;
    tu_checks++;
    if (!g) {
        tu_failures++;
        fprintf(stderr, "test line %d: no graph (%s)\n", line, krill_last_error());
        return;
    }
    bad |= krill_csr_check(g, "graph") != KRILL_OK;
    bad |= g->n_rows != nv || g->n_cols != nv || g->nnz != n;
    for (int64_t k = 0; k < n && !bad; k++) {
        bad |= x[k].u >= g->n_rows || g->row_ptr[x[k].u] > k || g->row_ptr[x[k].u + 1] <= k;
        bad |= g->col[k] != x[k].v || g->val[k] != x[k].w;
    }
    if (bad) {
        tu_failures++;
        fprintf(stderr, "test line %d: graph differs (n %d, arcs %lld):\n", line, g->n_rows,
                (long long)g->nnz);
        for (int32_t u = 0; u < g->n_rows; u++)
            for (int64_t p = g->row_ptr[u]; p < g->row_ptr[u + 1]; p++)
                fprintf(stderr, "  %d -> %d  %.17g\n", u, g->col[p], g->val[p]);
    }
}

#define EXPECT_OPTS(name, opts, text, n, ...)                                            \
    do {                                                                                 \
        const arc x_[] = {__VA_ARGS__};                                                  \
        krill_csr *g_ = NULL;                                                            \
        CHECK_OK(read_as((name), (text), (opts), &g_, NULL));                            \
        check_arcs(g_, (n), x_, (int64_t)(sizeof x_ / sizeof x_[0]), __LINE__);          \
        krill_csr_destroy(&g_);                                                          \
    } while (0)
#define EXPECT(name, text, n, ...) EXPECT_OPTS(name, NULL, text, n, __VA_ARGS__)

/* The read fails with `status`, returns no graph, and the message starts with
 * "NAME:LINE: " and contains `what`. */
static void expect_fail(const char *name, const krill_graph_opts *opts, const char *text,
                        krill_status status, int line, const char *what, int src_line)
{
    krill_csr *g = (krill_csr *)&g;           /* must come back NULL */
    krill_status st = krill_graph_read_buffer(name, text, strlen(text), opts, &g, NULL);
    const char *msg = krill_last_error();
    char prefix[96];
    snprintf(prefix, sizeof prefix, "%s:%d: ", name, line);
    tu_checks++;
    if (st != status || g != NULL || strncmp(msg, prefix, strlen(prefix)) != 0 ||
        !strstr(msg, what)) {
        tu_failures++;
        fprintf(stderr, "test line %d: got %s \"%s\", expected %s \"%s...%s...\"\n", src_line,
                krill_status_string(st), msg, krill_status_string(status), prefix, what);
    }
    if (st == KRILL_OK) krill_csr_destroy(&g);
}
#define FAIL(name, text, line, what)                                                     \
    expect_fail(name, NULL, text, KRILL_ERR_PARSE, line, what, __LINE__)
#define FAIL_OPTS(name, opts, text, line, what)                                          \
    expect_fail(name, opts, text, KRILL_ERR_PARSE, line, what, __LINE__)

/* ---- DIMACS ------------------------------------------------------------------------------ */
static void test_dimacs(void)
{
    /* comments and blank lines anywhere, parallel arcs to the minimum, a self loop, an
     * isolated vertex (4), negative weights, unsorted heads */
    const char *text = "c a small graph\n\np sp 5 7\nc arcs\na 1 3 7\na 1 2 5\na 1 3 -2\n"
                       "a 3 3 4\n  a\t2 1 10 \na 5 1 0\na 1 3 9\n";
    EXPECT("t.gr", text, 5, {0, 1, 5}, {0, 2, -2}, {1, 0, 10}, {2, 2, 4}, {4, 0, 0});
    krill_csr *g = NULL;
    krill_graph_info info;
    CHECK_OK(read_as("t.gr", text, NULL, &g, &info));
    CHECK(info.format == KRILL_GRAPH_DIMACS && info.n == 5);
    CHECK(info.arcs_read == 7 && info.arcs == 5 && info.self_loops == 1 && info.negative == 1);
    CHECK(info.integer_weights == 1 && info.min_weight == -2 && info.max_weight == 10);
    CHECK(info.max_id == 0);
    krill_csr_destroy(&g);

    /* CRLF, no newline at the end, a comment line that is only "c" */
    EXPECT("t.gr", "c\r\np sp 2 2\r\na 1 2 3\r\na 2 1 +4\r\n", 2, {0, 1, 3}, {1, 0, 4});
    EXPECT("t.gr", "p sp 2 1\na 2 1 8", 2, {1, 0, 8});
    /* no arcs at all: an edgeless graph */
    CHECK_OK(read_as("t.gr", "p sp 3 0\n", NULL, &g, &info));
    CHECK(g && g->n_rows == 3 && g->nnz == 0 && info.arcs == 0 && info.min_weight == 0 &&
          info.max_weight == 0 && info.integer_weights == 1);
    krill_csr_destroy(&g);
    /* integer weights below 2^53 in magnitude (all exact) */
    EXPECT("t.gr", "p sp 2 2\na 1 2 9007199254740991\na 2 1 -9007199254740991\n", 2,
           {0, 1, 9007199254740991.0}, {1, 0, -9007199254740991.0});

    /* malformed: header */
    FAIL("t.gr", "", 1, "empty file");
    FAIL("t.gr", "c only a comment\n\n", 2, "missing 'p sp N M'");
    FAIL("t.gr", "p max 3 2\n", 1, "problem type 'max'");
    FAIL("t.gr", "p\n", 1, "expected 'p sp N M'");
    FAIL("t.gr", "p sp 3\n", 1, "missing arc count M");
    FAIL("t.gr", "p sp\n", 1, "missing vertex count N");
    FAIL("t.gr", "p sp 0 0\n", 1, "vertex count N 0 is outside 1..");
    FAIL("t.gr", "p sp 2147483648 1\n", 1, "32-bit");
    FAIL("t.gr", "p sp x 1\n", 1, "bad vertex count N 'x'");
    FAIL("t.gr", "p sp 3 2 1\n", 1, "unexpected '1'");
    FAIL("t.gr", "p sp 3 1\na 1 2 1\np sp 3 1\n", 3, "second 'p' line (the first is line 1)");
    FAIL("t.gr", "c x\na 1 2 1\np sp 3 1\n", 2, "arc line before");
    FAIL("t.gr", "p sp 3 1\nx 1 2 1\n", 2, "unknown line type 'x'");
    FAIL("t.gr", "p sp 3 1\nab 1 2 1\n", 2, "unknown line type 'ab'");
    FAIL("t.gr", "p sp 3 1\ncomment\n", 2, "unknown line type 'comment'");
    /* malformed: counts */
    FAIL("t.gr", "p sp 3 2\na 1 2 1\n", 2, "ends after 1 of the 2 arcs");
    FAIL("t.gr", "p sp 3 2\na 1 2 1\n\n\n", 4, "ends after 1 of the 2 arcs");
    FAIL("t.gr", "p sp 3 1000000000000000\na 1 2 1\n", 2, "ends after 1 of the");
    FAIL("t.gr", "p sp 3 1\na 1 2 1\na 2 3 1\na 3 1 x\n", 3, "more arc lines than the M = 1");
    /* malformed: arcs */
    FAIL("t.gr", "p sp 3 1\na 0 2 1\n", 2, "tail vertex 0 is outside 1..3");
    FAIL("t.gr", "p sp 3 1\na 1 4 1\n", 2, "head vertex 4 is outside 1..3");
    FAIL("t.gr", "p sp 3 1\na -1 2 1\n", 2, "bad tail vertex '-1'");
    FAIL("t.gr", "p sp 3 1\na 1 2\n", 2, "missing weight");
    FAIL("t.gr", "p sp 3 1\na 1\n", 2, "missing head vertex");
    FAIL("t.gr", "p sp 3 1\na 1 2 x\n", 2, "bad weight 'x'");
    FAIL("t.gr", "p sp 3 1\na 1 2 2.5\n", 2, "bad weight '2.5' (expected an integer)");
    FAIL("t.gr", "p sp 3 1\na 1 2 nan\n", 2, "non-finite weight 'nan'");
    FAIL("t.gr", "p sp 3 1\na 1 2 -Inf\n", 2, "non-finite weight '-Inf'");
    FAIL("t.gr", "p sp 3 1\na 1 2 9007199254740992\n", 2, "out of range");
    FAIL("t.gr", "p sp 3 1\na 1 2 -9007199254740993\n", 2, "out of range");
    FAIL("t.gr", "p sp 3 1\na 1 2 1e400\n", 2, "bad weight");
    FAIL("t.gr", "p sp 3 1\na 1 2 3 4\n", 2, "unexpected '4'");
    FAIL("t.gr", "p sp 3 1\na 1 2 3x\n", 2, "bad weight '3x'");
    FAIL("t.gr", "p sp 3 1\na 1 2 3\r\na 1 2 3 junk\r\n", 3, "more arc lines");
    /* the first problem in file order is the one reported */
    FAIL("t.gr", "p sp 3 2\na 1 2 x\na 9 2 1\n", 2, "bad weight 'x'");
}

/* ---- METIS ------------------------------------------------------------------------------- */
static void test_metis(void)
{
    /* fmt absent: weights 1; comments; an isolated vertex (blank line) */
    const char *plain = "% a comment\n4 2\n2 3\n1\n% inside\n1\n\n";
    EXPECT("t.graph", plain, 4, {0, 1, 1}, {0, 2, 1}, {1, 0, 1}, {2, 0, 1});
    krill_csr *g = NULL;
    krill_graph_info info;
    CHECK_OK(read_as("t.graph", plain, NULL, &g, &info));
    CHECK(info.format == KRILL_GRAPH_METIS && info.n == 4 && info.arcs_read == 4 &&
          info.arcs == 4 && info.self_loops == 0);
    krill_csr_destroy(&g);
    /* the same with fmt 0 / 000, trailing blank lines, CRLF, no last newline */
    EXPECT("t.graph", "4 2 0\n2 3\n1\n1\n\n\n\n", 4, {0, 1, 1}, {0, 2, 1}, {1, 0, 1},
           {2, 0, 1});
    EXPECT("t.graph", "4 2 000\r\n2 3\r\n1\r\n1\r\n\r\n", 4, {0, 1, 1}, {0, 2, 1}, {1, 0, 1},
           {2, 0, 1});
    /* the last vertex isolated: its line is blank (without it the file is short, below) */
    EXPECT("t.graph", "3 1\n2\n1\n\n", 3, {0, 1, 1}, {1, 0, 1});
    /* edge weights (fmt 1 and 001): asymmetric listings kept as arcs, parallel to the min,
     * a self loop */
    EXPECT("t.graph", "3 3 1\n2 5 2 3 3 7\n1 4\n1 7 3 1\n", 3, {0, 1, 3}, {0, 2, 7},
           {1, 0, 4}, {2, 0, 7}, {2, 2, 1});
    EXPECT("t.graph", "2 1 001\n2 -3\n1 -3\n", 2, {0, 1, -3}, {1, 0, -3});
    /* vertex weights (10, 010), ncon of them (11 with ncon 2), sizes (100, 110, 111) */
    EXPECT("t.graph", "2 1 10\n5 2\n6 1\n", 2, {0, 1, 1}, {1, 0, 1});
    EXPECT("t.graph", "2 1 011 2\n5 6 2 9\n7 8 1 9\n", 2, {0, 1, 9}, {1, 0, 9});
    EXPECT("t.graph", "2 1 100\n3 2\n4 1\n", 2, {0, 1, 1}, {1, 0, 1});
    EXPECT("t.graph", "2 1 110 3\n3 1 1 1 2\n4 0 0 0 1\n", 2, {0, 1, 1}, {1, 0, 1});
    EXPECT("t.graph", "3 1 111\n3 1 2 8\n4 0 1 8\n0 0\n", 3, {0, 1, 8}, {1, 0, 8});
    /* no edges */
    CHECK_OK(read_as("t.graph", "2 0\n\n\n", NULL, &g, &info));
    CHECK(g && g->n_rows == 2 && g->nnz == 0);
    krill_csr_destroy(&g);

    /* malformed */
    FAIL("t.graph", "", 1, "empty file");
    FAIL("t.graph", "% only\n%comments\n", 2, "missing header");
    FAIL("t.graph", "0 0\n", 1, "vertex count n 0 is outside");
    FAIL("t.graph", "x 0\n", 1, "bad vertex count n 'x'");
    FAIL("t.graph", "2\n", 1, "missing edge count m");
    FAIL("t.graph", "3000000000 1\n", 1, "32-bit");
    FAIL("t.graph", "2 1 2\n", 1, "bad fmt '2'");
    FAIL("t.graph", "2 1 1011\n", 1, "bad fmt '1011'");
    FAIL("t.graph", "2 1 1 2\n", 1, "ncon = 2 but fmt gives no vertex weights");
    FAIL("t.graph", "2 1 10 0\n", 1, "ncon 0 is outside");
    FAIL("t.graph", "2 1 10 1 5\n", 1, "unexpected '5'");
    FAIL("t.graph", "3 1\n2\n1\n", 3, "ends after 2 of the 3 vertex lines");
    FAIL("t.graph", "2 1\n2\n1\n1\n", 4, "more vertex lines than the n = 2");
    FAIL("t.graph", "2 2\n2\n1\n", 3, "2 neighbour entries, but the header's m = 2");
    FAIL("t.graph", "2 1\n2 2 2\n1\n", 2, "more neighbour entries than the 2m = 2");
    FAIL("t.graph", "2 1\n3\n1\n", 2, "neighbour 3 is outside 1..2");
    FAIL("t.graph", "2 1\n0\n1\n", 2, "neighbour 0 is outside 1..2");
    FAIL("t.graph", "2 1\n2\n1 x\n", 3, "bad neighbour 'x'");
    FAIL("t.graph", "2 1 1\n2\n1 1\n", 2, "missing edge weight");
    FAIL("t.graph", "2 1 1\n2 1.5\n1 1\n", 2, "bad edge weight '1.5'");
    FAIL("t.graph", "2 1 1\n2 nan\n1 1\n", 2, "non-finite edge weight");
    FAIL("t.graph", "2 1 1\n2 1\n1 99999999999999999\n", 3, "out of range");
    FAIL("t.graph", "2 1 10\n\n5 1\n", 2, "missing vertex weight");
    FAIL("t.graph", "2 1 10\n-1 2\n5 1\n", 2, "bad vertex weight '-1'");
    FAIL("t.graph", "2 1 100\nx 2\n5 1\n", 2, "bad vertex size 'x'");
    FAIL("t.graph", "2 1000000000000 \n2\n1\n", 3, "2 neighbour entries");
}

/* ---- edge lists --------------------------------------------------------------------------- */
static void test_edgelist(void)
{
    const krill_graph_opts remap = {KRILL_GRAPH_EDGELIST, KRILL_GRAPH_IDS_REMAP, 0};
    const krill_graph_opts base0 = {KRILL_GRAPH_EDGELIST, KRILL_GRAPH_IDS_BASE0, 0};
    const krill_graph_opts base1 = {KRILL_GRAPH_EDGELIST, KRILL_GRAPH_IDS_BASE1, 0};
    const krill_graph_opts undirected = {KRILL_GRAPH_AUTO, KRILL_GRAPH_IDS_REMAP, 1};
    /* SNAP style: comments, tabs, ids far apart (remapped by rank), weight 1 by default */
    const char *snap = "# Directed graph\n# Nodes: 4 Edges: 4\n# FromNodeId\tToNodeId\n"
                       "100\t7\n7\t5000000000\n100\t5000000000\n% another comment\n5000000000\t"
                       "42\n";
    EXPECT("t.txt", snap, 4, {0, 3, 1}, {2, 0, 1}, {2, 3, 1}, {3, 1, 1});
    EXPECT_OPTS("t.txt", &remap, snap, 4, {0, 3, 1}, {2, 0, 1}, {2, 3, 1}, {3, 1, 1});
    krill_csr *g = NULL;
    krill_graph_info info;
    CHECK_OK(read_as("t.txt", snap, NULL, &g, &info));
    CHECK(info.format == KRILL_GRAPH_EDGELIST && info.n == 4 && info.arcs_read == 4 &&
          info.arcs == 4 && info.max_id == 5000000000 && info.integer_weights == 1);
    krill_csr_destroy(&g);
    /* weights (reals), parallel arcs to the minimum, self loops, CRLF, blanks */
    const char *weighted = "1 2 0.5\r\n2 2 3\r\n  1 2 0.25  \r\n\r\n3 1 -1e3\r\n1 2 7";
    EXPECT("t.el", weighted, 3, {0, 1, 0.25}, {1, 1, 3}, {2, 0, -1000});
    CHECK_OK(read_as("t.el", weighted, NULL, &g, &info));
    CHECK(info.n == 3 && info.arcs_read == 5 && info.arcs == 3 && info.self_loops == 1 &&
          info.negative == 1 && info.integer_weights == 0 && info.min_weight == -1000 &&
          info.max_weight == 3 && info.max_id == 3);
    krill_csr_destroy(&g);
    /* ids as given: from 0 (vertex 3 isolated), from 1; mixed 2 and 3 columns */
    EXPECT_OPTS("t.txt", &base0, "0 2\n2 4 2.5\n", 5, {0, 2, 1}, {2, 4, 2.5});
    EXPECT_OPTS("t.txt", &base1, "1 3\n3 5 2.5\n", 5, {0, 2, 1}, {2, 4, 2.5});
    /* undirected: both arcs of each edge; a self loop once */
    EXPECT_OPTS("t.txt", &undirected, "10 20 2\n20 30 3\n30 30 1\n", 3, {0, 1, 2},
                {1, 0, 2}, {1, 2, 3}, {2, 1, 3}, {2, 2, 1});
    CHECK_OK(read_as("t.txt", "10 20 2\n20 30 3\n30 30 1\n", &undirected, &g, &info));
    CHECK(info.arcs_read == 6 && info.arcs == 5 && info.self_loops == 1);
    krill_csr_destroy(&g);
    /* ids both dense (a table of ranks) and sparse (sorted ids): the same graph */
    EXPECT("t.txt", "5 3\n3 9\n9 5\n", 3, {0, 2, 1}, {1, 0, 1}, {2, 1, 1});
    EXPECT("t.txt", "5 3\n3 900000000000\n900000000000 5\n", 3, {0, 2, 1}, {1, 0, 1},
           {2, 1, 1});
    /* a graph of one vertex (a self loop with id 0) */
    EXPECT("t.txt", "0 0\n", 1, {0, 0, 1});

    /* malformed */
    FAIL("t.txt", "", 1, "empty file");
    FAIL("t.txt", "# nothing\n\n", 2, "no edges");
    FAIL("t.txt", "1 2\n3\n", 2, "missing second vertex id");
    FAIL("t.txt", "1 2\n-3 4\n", 2, "bad first vertex id '-3'");
    FAIL("t.txt", "1 2\n3 x\n", 2, "bad second vertex id 'x'");
    FAIL("t.txt", "1 2\n3 4.0\n", 2, "bad second vertex id '4.0'");
    FAIL("t.txt", "1 2\n3 4 x\n", 2, "bad weight 'x'");
    FAIL("t.txt", "1 2\n3 4 nan\n", 2, "non-finite weight 'nan'");
    FAIL("t.txt", "1 2\n3 4 inf\n", 2, "non-finite weight 'inf'");
    FAIL("t.txt", "1 2\n3 4 1e999\n", 2, "out of the range of a double");
    FAIL("t.txt", "1 2\n3 4 5 6\n", 2, "unexpected '6' after the weight");
    FAIL("t.txt", "1 2\n3 4 5 # comment\n", 2, "unexpected '#'");
    FAIL("t.txt", "1 2\n1234567890123456789 4\n", 2, "too large");
    FAIL_OPTS("t.txt", &base1, "1 2\n0 1\n", 2, "first vertex id 0 is outside 1..2147483647");
    FAIL_OPTS("t.txt", &base1, "1 2147483648\n", 1, "32-bit");
    FAIL_OPTS("t.txt", &base0, "1 2147483647\n", 1, "second vertex id 2147483647 is outside "
              "0..2147483646");
}

/* ---- Matrix Market ------------------------------------------------------------------------ */
static void test_mtx(void)
{
    /* general: duplicates keep the minimum (not the sum), a self loop, an empty row */
    const char *gen = "%%MatrixMarket matrix coordinate real general\n% c\n3 3 5\n1 2 4\n"
                      "3 1 2.5\n1 2 3\n1 1 -1\n1 2 6\n";
    EXPECT("t.mtx", gen, 3, {0, 0, -1}, {0, 1, 3}, {2, 0, 2.5});
    krill_csr *g = NULL;
    krill_graph_info info;
    CHECK_OK(read_as("t.mtx", gen, NULL, &g, &info));
    CHECK(info.format == KRILL_GRAPH_MTX && info.n == 3 && info.arcs_read == 5 &&
          info.arcs == 3 && info.self_loops == 1 && info.negative == 1);
    krill_csr_destroy(&g);
    /* pattern: weight 1; symmetric: both directions (diagonal once) */
    EXPECT("t.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 2\n2 1\n1 2\n", 2,
           {0, 1, 1}, {1, 0, 1});
    EXPECT("t.mtx", "%%MatrixMarket matrix coordinate integer symmetric\n3 3 3\n2 1 5\n"
           "3 3 2\n3 2 7\n", 3, {0, 1, 5}, {1, 0, 5}, {1, 2, 7}, {2, 1, 7}, {2, 2, 2});
    EXPECT("t.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n2 1\n2 1\n", 2,
           {0, 1, 1}, {1, 0, 1});
    /* skew-symmetric: j -> i gets the negated weight */
    EXPECT("t.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 3\n", 2,
           {0, 1, -3}, {1, 0, 3});
    /* array: every value an arc, zeros included */
    EXPECT("t.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n0\n3\n4\n", 2,
           {0, 0, 1}, {0, 1, 3}, {1, 0, 0}, {1, 1, 4});
    CHECK_OK(read_as("t.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n0\n3\n4\n",
                     NULL, &g, &info));
    CHECK(info.arcs_read == 4 && info.arcs == 4 && info.self_loops == 2);
    krill_csr_destroy(&g);

    /* malformed or not a graph */
    FAIL("t.mtx", "", 1, "missing banner");
    FAIL("t.mtx", "%%MatrixMarket matrix coordinate real general\n", 1, "missing size line");
    FAIL("t.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n", 3,
         "ends after 1 of the 2");
    FAIL("t.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 3 1\n", 3,
         "column index 3 is outside 1..2");
    FAIL("t.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 nan\n", 3,
         "non-finite");
    FAIL("t.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 1 1\n", 3,
         "unexpected '1'");
    FAIL("t.mtx", "%%MatrixMarket matrix coordinate real general\n0 0 0\n", 2,
         "at least one vertex");
    FAIL("t.mtx", "%%MatrixMarket matrix coordinate real general\n3000000000 3000000000 0\n", 2,
         "at most 2147483647 vertices");
    expect_fail("t.mtx", NULL, "%%MatrixMarket matrix coordinate real general\n2 3 0\n",
                KRILL_ERR_UNSUPPORTED, 2, "must be square", __LINE__);
    expect_fail("t.mtx", NULL, "%%MatrixMarket matrix coordinate complex general\n2 2 0\n",
                KRILL_ERR_UNSUPPORTED, 1, "complex", __LINE__);
}

/* ---- the format from the name, options, arguments ---------------------------------------- */
static void test_auto_and_args(void)
{
    const char *gr = "p sp 2 1\na 1 2 3\n";
    krill_csr *g = NULL;
    krill_graph_info info;
    const char *names[] = {"a.gr", "dir.x/A.GR", "a.gr.gz", "b.graph", "b.Graph.GZ", "c.mtx",
                           "c.mtx.gz", "d.txt", "d", "d.gz", "e.el"};
    const krill_graph_format want[] = {KRILL_GRAPH_DIMACS, KRILL_GRAPH_DIMACS,
                                       KRILL_GRAPH_DIMACS, KRILL_GRAPH_METIS,
                                       KRILL_GRAPH_METIS,  KRILL_GRAPH_MTX,
                                       KRILL_GRAPH_MTX,    KRILL_GRAPH_EDGELIST,
                                       KRILL_GRAPH_EDGELIST, KRILL_GRAPH_EDGELIST,
                                       KRILL_GRAPH_EDGELIST};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        memset(&info, 0, sizeof info);
        (void)read_as(names[k], gr, NULL, &g, &info);   /* only the DIMACS ones succeed */
        CHECK(info.format == want[k]);
        CHECK((g != NULL) == (want[k] == KRILL_GRAPH_DIMACS));
        krill_csr_destroy(&g);
    }
    /* an explicit format wins over the name */
    const krill_graph_opts dimacs = {KRILL_GRAPH_DIMACS, KRILL_GRAPH_IDS_REMAP, 0};
    EXPECT_OPTS("x.txt", &dimacs, gr, 2, {0, 1, 3});
    /* NULL name: "<buffer>", an edge list */
    CHECK_STATUS(krill_graph_read_buffer(NULL, "1 2 x\n", 6, NULL, &g, NULL), KRILL_ERR_PARSE);
    CHECK(g == NULL && strncmp(krill_last_error(), "<buffer>:1: ", 12) == 0);

    CHECK(strcmp(krill_graph_format_name(KRILL_GRAPH_AUTO), "auto") == 0);
    CHECK(strcmp(krill_graph_format_name(KRILL_GRAPH_DIMACS), "dimacs") == 0);
    CHECK(strcmp(krill_graph_format_name(KRILL_GRAPH_METIS), "metis") == 0);
    CHECK(strcmp(krill_graph_format_name(KRILL_GRAPH_EDGELIST), "edgelist") == 0);
    CHECK(strcmp(krill_graph_format_name(KRILL_GRAPH_MTX), "mtx") == 0);
    CHECK(krill_graph_format_name((krill_graph_format)99) != NULL);

    krill_graph_opts bad = KRILL_GRAPH_OPTS_INIT;
    bad.format = (krill_graph_format)7;
    CHECK_STATUS(krill_graph_read_buffer("a.gr", gr, strlen(gr), &bad, &g, NULL), KRILL_ERR_ARG);
    bad.format = KRILL_GRAPH_AUTO;
    bad.ids = (krill_graph_ids)5;
    CHECK_STATUS(krill_graph_read_buffer("a.gr", gr, strlen(gr), &bad, &g, NULL), KRILL_ERR_ARG);
    CHECK_STATUS(krill_graph_read_buffer("a.gr", gr, strlen(gr), NULL, NULL, NULL),
                 KRILL_ERR_ARG);
    CHECK_STATUS(krill_graph_read_buffer("a.gr", NULL, 3, NULL, &g, NULL), KRILL_ERR_ARG);
    CHECK_STATUS(krill_graph_read(NULL, NULL, &g, NULL), KRILL_ERR_ARG);
    CHECK_STATUS(krill_graph_read("a.gr", NULL, NULL, NULL), KRILL_ERR_ARG);
    CHECK_STATUS(krill_graph_read("/nonexistent/dir/a.gr", NULL, &g, &info), KRILL_ERR_IO);
    CHECK(g == NULL);
    /* info on failure: as far as the reader got */
    CHECK_STATUS(read_as("t.gr", "p sp 7 3\na 1 2 1\na 2 3 1\na 3 9 1\n", NULL, &g, &info),
                 KRILL_ERR_PARSE);
    CHECK(g == NULL && info.format == KRILL_GRAPH_DIMACS && info.n == 7 && info.arcs_read == 2);
}

/* ---- files: plain and gzip ---------------------------------------------------------------- */
static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
}

static void test_files(void)
{
    char dir[] = "/tmp/krill_graph_XXXXXX";
    char path[512];
    krill_csr *g = NULL;
    krill_graph_info info;
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        tu_failures++;
        return;
    }
    const char *metis = "3 2 1\n2 4 3 6\n1 4\n1 6\n";
    snprintf(path, sizeof path, "%s/m.graph", dir);
    write_file(path, metis);
    CHECK_OK(krill_graph_read(path, NULL, &g, &info));
    CHECK(g && info.format == KRILL_GRAPH_METIS && info.n == 3 && info.arcs == 4);
    krill_csr_destroy(&g);
    /* a malformed file: the message names the path */
    write_file(path, "3 2 1\n2 4 3 6\n1 4\n");
    CHECK_STATUS(krill_graph_read(path, NULL, &g, NULL), KRILL_ERR_PARSE);
    char prefix[600];
    snprintf(prefix, sizeof prefix, "%s:3: ", path);
    CHECK(g == NULL && strncmp(krill_last_error(), prefix, strlen(prefix)) == 0);
    remove(path);
#ifdef KRILL_HAVE_ZLIB
    /* gzip: the format from the name without .gz, the content inflated by its magic */
    const char *gr = "c gz\np sp 3 3\na 1 2 5\na 2 3 6\na 1 2 4\n";
    snprintf(path, sizeof path, "%s/g.gr.gz", dir);
    gzFile gz = gzopen(path, "wb");
    CHECK(gz != NULL);
    if (gz) {
        gzputs(gz, gr);
        gzclose(gz);
        CHECK_OK(krill_graph_read(path, NULL, &g, &info));
        const arc want[] = {{0, 1, 4}, {1, 2, 6}};
        check_arcs(g, 3, want, 2, __LINE__);
        CHECK(info.format == KRILL_GRAPH_DIMACS && info.arcs_read == 3);
        krill_csr_destroy(&g);
        remove(path);
    }
#else
    printf("test_graph_read: built without zlib, gzip files not tested\n");
#endif
    rmdir(dir);
}

/* ---- allocation failures ------------------------------------------------------------------- */
static void fault_loop(const char *name, const char *text, const krill_graph_opts *opts)
{
    krill_csr *g = NULL;
    long before = krill_alloc_calls();
    CHECK_OK(read_as(name, text, opts, &g, NULL));
    long needed = krill_alloc_calls() - before;
    krill_csr_destroy(&g);
    int wrong = 0;
    for (long k = 1; k <= needed + 1; k++) {
        krill_fault_alloc_after(k);
        krill_status st = read_as(name, text, opts, &g, NULL);
        krill_fault_alloc_after(0);
        if (k <= needed ? (st != KRILL_ERR_ALLOC || g != NULL) : st != KRILL_OK) {
            if (!wrong++) fprintf(stderr, "%s: allocation %ld failing gave %s\n", name, k,
                                  krill_status_string(st));
        }
        krill_csr_destroy(&g);
    }
    CHECK(needed > 0 && wrong == 0);
}

static void test_faults(void)
{
    const krill_graph_opts undirected = {KRILL_GRAPH_AUTO, KRILL_GRAPH_IDS_REMAP, 1};
    const krill_graph_opts base1 = {KRILL_GRAPH_AUTO, KRILL_GRAPH_IDS_BASE1, 0};
    /* unsorted rows (the sort's scratch) and parallel arcs (the exact-size copy) */
    fault_loop("f.gr", "p sp 3 4\na 1 3 1\na 1 2 2\na 1 3 0\na 3 1 1\n", NULL);
    fault_loop("f.graph", "3 2 1\n3 1 2 4\n1 4\n1 1\n", NULL);
    fault_loop("f.txt", "10 30 1\n30 10\n10 20 2\n10 30 0.5\n", NULL);
    fault_loop("f.txt", "10 30 1\n30 10\n10 20 2\n", &undirected);
    fault_loop("f.txt", "10 9000000000 1\n9000000000 10\n10 20 2\n", NULL);  /* sparse ids */
    fault_loop("f.txt", "1 3 1\n3 1\n", &base1);
    fault_loop("f.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n3 1 1\n2 1 5\n"
               "3 1 0.5\n", NULL);
    fault_loop("f.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", NULL);
    /* and with a file (the load's buffer) */
    char path[] = "/tmp/krill_graph_fault_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return;
    close(fd);
    write_file(path, "p sp 3 2\na 1 3 1\na 1 2 2\n");
    const krill_graph_opts dimacs = {KRILL_GRAPH_DIMACS, KRILL_GRAPH_IDS_REMAP, 0};
    krill_csr *g = NULL;
    long before = krill_alloc_calls();
    CHECK_OK(krill_graph_read(path, &dimacs, &g, NULL));
    long needed = krill_alloc_calls() - before;
    krill_csr_destroy(&g);
    int wrong = 0;
    for (long k = 1; k <= needed + 1; k++) {
        krill_fault_alloc_after(k);
        krill_status st = krill_graph_read(path, &dimacs, &g, NULL);
        krill_fault_alloc_after(0);
        wrong += k <= needed ? (st != KRILL_ERR_ALLOC || g != NULL) : st != KRILL_OK;
        krill_csr_destroy(&g);
    }
    CHECK(needed > 0 && wrong == 0);
    remove(path);
}

/* ---- testdata/graphs ------------------------------------------------------------------------- */
typedef struct known_file {
    const char *rel;
    int32_t n;
    int64_t arcs_read;       /* -1: from the file's "# Nodes: N Edges: E" line (E) */
    int64_t negative;        /* -1: not checked */
} known_file;

/* The "# Nodes: N Edges: E" line of a SNAP file. */
static int snap_counts(const char *path, long long *nodes, long long *edges)
{
    char line[512];
    int found = 0;
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    for (int k = 0; k < 10 && !found && fgets(line, sizeof line, f); k++)
        found = sscanf(line, "# Nodes: %lld Edges: %lld", nodes, edges) == 2;
    fclose(f);
    return found;
}

static void test_testdata(void)
{
    static const known_file files[] = {
        {"graphs/Random4-n.10.0.gr", 1024, 4096, 0},
        {"graphs/Random4-n.13.0.gr", 8192, 32768, 0},
        {"graphs/negative-cycles-example.gr", 8, 13, 4},
        {"graphs/fast_paths_23rd.gr", 2346, 5170, 0},
        {"graphs/fast_paths_ballard.gr", 7442, 16510, 0},
        {"graphs/fast_paths_bremen_dist.gr.gz", 40461, 86149, 0},
        {"graphs/fast_paths_south_seattle_car.gr.gz", 29763, 49604, 0},
        {"graphs/4elt.graph", 15606, 2 * 45878, 0},
        {"graphs/lesmis.graph", 77, 2 * 254, 0},
        {"graphs/CA-CondMat.txt", 0, -1, 0},
        {"graphs/wiki-Vote.txt", 0, -1, 0},
        {"graphs/p2p-Gnutella05.txt", 0, -1, 0},
    };
    int read = 0;
    if (!tu_testdata_path("graphs")) tu_skip("testdata/graphs absent");
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        const known_file *f = &files[k];
        const char *found = tu_testdata_path(f->rel);
        char path[1024];
        if (!found) {
            printf("test_graph_read: %s absent, skipped\n", f->rel);
            continue;
        }
#ifndef KRILL_HAVE_ZLIB
        if (strstr(f->rel, ".gz")) {
            printf("test_graph_read: built without zlib, %s skipped\n", f->rel);
            continue;
        }
#endif
        snprintf(path, sizeof path, "%s", found);
        long long nodes = f->n, edges = f->arcs_read;
        if (f->arcs_read < 0) CHECK(snap_counts(path, &nodes, &edges));
        krill_csr *g = NULL;
        krill_graph_info info;
        double t = krill_wtime();
        CHECK_OK(krill_graph_read(path, NULL, &g, &info));
        t = krill_wtime() - t;
        if (!g) continue;
        read++;
        CHECK_OK(krill_csr_check(g, f->rel));
        tu_checks++;
        if (info.n != nodes || info.arcs_read != edges || g->n_rows != info.n ||
            g->nnz != info.arcs || info.arcs > info.arcs_read || info.arcs <= 0 ||
            (f->negative >= 0 && info.negative != f->negative) || !info.integer_weights) {
            tu_failures++;
            fprintf(stderr, "%s: n %d arcs read %lld kept %lld negative %lld, expected n %lld "
                    "arcs read %lld negative %lld\n", f->rel, info.n, (long long)info.arcs_read,
                    (long long)info.arcs, (long long)info.negative, nodes, edges,
                    (long long)f->negative);
        }
        printf("%-45s %-8s n %6d arcs read %7lld kept %7lld loops %lld weights [%g, %g] "
               "%.1f ms\n", f->rel, krill_graph_format_name(info.format), info.n,
               (long long)info.arcs_read, (long long)info.arcs, (long long)info.self_loops,
               info.min_weight, info.max_weight, 1e3 * t);
        /* the edge lists again as undirected graphs: symmetric, every arc of the directed
         * reading kept (SNAP files list each edge once or from both ends) */
        if (f->arcs_read < 0) {
            krill_csr *u = NULL;
            krill_graph_info ui;
            const krill_graph_opts und = {KRILL_GRAPH_AUTO, KRILL_GRAPH_IDS_REMAP, 1};
            CHECK_OK(krill_graph_read(path, &und, &u, &ui));
            CHECK(u && ui.n == info.n && ui.arcs_read == 2 * info.arcs_read &&
                  ui.arcs >= info.arcs && krill_csr_is_symmetric(u));
            krill_csr_destroy(&u);
        }
        krill_csr_destroy(&g);
    }
    CHECK(read > 0);
}

/* No argument: the hand-written cases (test_graph_read, label unit); --testdata: the files
 * of testdata/graphs (test_graph_testdata, label data). */
int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--testdata") == 0) {
        test_testdata();
        return tu_finish("test_graph_testdata");
    }
    test_dimacs();
    test_metis();
    test_edgelist();
    test_mtx();
    test_auto_and_args();
    test_files();
    test_faults();
    return tu_finish("test_graph_read");
}
