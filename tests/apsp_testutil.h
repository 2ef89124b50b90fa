/* tests/apsp_testutil.h - checks the APSP tests share (test_apsp.c, test_gpu_apsp.c).
 *
 * The certificate: a distance matrix D is the shortest-path matrix of a graph without
 * negative cycles exactly when (1) D[i][i] = 0, (2) no arc (u, v) can shorten a row,
 * D[i][v] <= D[i][u] + w(u, v) (Bellman's condition), and (3) every finite D[i][j] is the
 * length of a real path (here: the one P gives) and every infinite one has none. It needs
 * no second APSP code, so it checks every method, and the predecessors with it. */
#ifndef KRILL_APSP_TESTUTIL_H
#define KRILL_APSP_TESTUTIL_H

#include <stdint.h>
#include "krill.h"

/* The weight of arc u -> v (binary search in row u), or NaN if there is none. */
double at_arc(const krill_csr *g, int32_t u, int32_t v);

/* The certificate for rows i = first, first + step, ... < n; float and double sums may
 * differ from D by rel_tol * (the path's sum of |w|) (0 for exact checks). Conditions (1)
 * and (2) always; (3) only when the result has P. Returns the failures (printing the first
 * few, prefixed with `what`). */
int at_certify(const krill_csr *g, const krill_apsp *r, int32_t first, int32_t step,
               double rel_tol, const char *what);

/* 0 when D of a and b (of any weight types, read as doubles) agree: exactly when rel_tol ==
 * 0, else within rel_tol (relative, infinities equal). Prints the first few differences, prefixed with `what`. */
int at_compare(const krill_apsp *a, const krill_apsp *b, double rel_tol, const char *what);

/* A random graph: krill_graph_gen("random:N,DEG,SEED"), then, when `shift`, weights made
 * w + pi(u) - pi(v) with pi random in [0, N): some negative, no negative cycle. */
krill_csr *at_random_graph(int32_t n, int deg, uint64_t seed, int shift);

/* Solve; prints the error and returns NULL on failure. */
krill_apsp *at_solve(krill_ctx *ctx, const krill_csr *g, const char *method,
                     krill_apsp_weight weight, int paths);

#endif
