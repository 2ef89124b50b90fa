/* tests/apsp_testutil.c - the certificate, comparisons and graphs of the APSP tests. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apsp_testutil.h"

#define AT_PRINT_MAX 5

double at_arc(const krill_csr *g, int32_t u, int32_t v)
{
    int64_t lo = g->row_ptr[u], hi = g->row_ptr[u + 1];
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (g->col[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo < g->row_ptr[u + 1] && g->col[lo] == v ? g->val[lo] : NAN;
}

static int close_enough(double got, double want, double tol)
{
    return got == want || (isfinite(got) && isfinite(want) && fabs(got - want) <= tol);
}

int at_certify(const krill_csr *g, const krill_apsp *r, int32_t first, int32_t step,
               double rel_tol, const char *what)
{
    const int32_t n = krill_apsp_n(r);
    int fails = 0;
    int32_t *path = malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
    double wmax = 0.0;
    for (int64_t e = 0; e < g->nnz; e++) wmax = fmax(wmax, fabs(g->val[e]));
    for (int32_t i = first; i < n; i += step) {
        if (krill_apsp_dist_at(r, i, i) != 0.0 && fails++ < AT_PRINT_MAX)
            fprintf(stderr, "%s: D[%d][%d] = %g, not 0\n", what, i, i, krill_apsp_dist_at(r, i, i));
        for (int32_t u = 0; u < n; u++) {
            double du = krill_apsp_dist_at(r, i, u);
            if (isinf(du)) continue;
            for (int64_t e = g->row_ptr[u]; e < g->row_ptr[u + 1]; e++) {
                int32_t v = g->col[e];
                double dv = krill_apsp_dist_at(r, i, v), bound = du + g->val[e];
                double tol = rel_tol * (fabs(du) + fabs(g->val[e]) + n * wmax);
                if (dv > bound + tol && fails++ < AT_PRINT_MAX)
                    fprintf(stderr, "%s: arc %d -> %d (w %g) shortens D[%d][%d] = %.17g to %.17g\n",
                            what, u, v, g->val[e], i, v, dv, bound);
            }
        }
        if (!krill_apsp_pred(r)) continue;
        for (int32_t j = 0; j < n; j++) {
            int32_t len = -1;
            double dij = krill_apsp_dist_at(r, i, j), sum = 0.0, abs_sum = 0.0;
            krill_status st = krill_apsp_path(r, i, j, path, &len);
            if (st != KRILL_OK) {
                if (fails++ < AT_PRINT_MAX)
                    fprintf(stderr, "%s: path %d -> %d: %s\n", what, i, j, krill_last_error());
                continue;
            }
            if (isinf(dij) != (len == 0)) {
                if (fails++ < AT_PRINT_MAX)
                    fprintf(stderr, "%s: D[%d][%d] = %g but the path has %d vertices\n", what, i,
                            j, dij, len);
                continue;
            }
            if (len > 0 && (path[0] != i || path[len - 1] != j) && fails++ < AT_PRINT_MAX)
                fprintf(stderr, "%s: path %d -> %d runs %d -> %d\n", what, i, j, path[0],
                        path[len - 1]);
            for (int32_t s = 0; s + 1 < len; s++) {
                double w = at_arc(g, path[s], path[s + 1]);
                if (isnan(w)) {
                    if (fails++ < AT_PRINT_MAX)
                        fprintf(stderr, "%s: path %d -> %d uses %d -> %d, not an arc\n", what, i,
                                j, path[s], path[s + 1]);
                    sum = NAN;
                    break;
                }
                sum += w;
                abs_sum += fabs(w);
            }
            if (len > 1 && !isnan(sum) && !close_enough(sum, dij, rel_tol * abs_sum) &&
                fails++ < AT_PRINT_MAX)
                fprintf(stderr, "%s: path %d -> %d sums to %.17g, D says %.17g\n", what, i, j,
                        sum, dij);
        }
    }
    free(path);
    return fails;
}

int at_compare(const krill_apsp *a, const krill_apsp *b, double rel_tol, const char *what)
{
    const int32_t n = krill_apsp_n(a);
    int fails = 0;
    if (n != krill_apsp_n(b)) {
        fprintf(stderr, "%s: results of different shapes\n", what);
        return 1;
    }
    if (rel_tol == 0.0 && krill_apsp_weight_type(a) == krill_apsp_weight_type(b) &&
        !memcmp(krill_apsp_dist(a), krill_apsp_dist(b),
                (size_t)n * (size_t)n * (krill_apsp_weight_type(a) == KRILL_APSP_DOUBLE ? 8 : 4)))
        return 0;                   /* the same bytes: equal (the loop below says where not) */
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            double x = krill_apsp_dist_at(a, (int32_t)i, (int32_t)j);
            double y = krill_apsp_dist_at(b, (int32_t)i, (int32_t)j);
            int same = rel_tol == 0.0 ? memcmp(&x, &y, sizeof x) == 0
                                      : close_enough(x, y, rel_tol * fmax(1.0, fabs(y)));
            if (!same && fails++ < AT_PRINT_MAX)
                fprintf(stderr, "%s: D[%lld][%lld] = %.17g vs %.17g\n", what, (long long)i,
                        (long long)j, x, y);
        }
    return fails;
}

krill_csr *at_random_graph(int32_t n, int deg, uint64_t seed, int shift)
{
    char spec[96];
    krill_csr *g = NULL;
    snprintf(spec, sizeof spec, "random:%d,%d,%llu", n, deg, (unsigned long long)seed);
    if (krill_graph_gen(spec, &g) != KRILL_OK) {
        fprintf(stderr, "krill_graph_gen(%s): %s\n", spec, krill_last_error());
        exit(1);
    }
    if (shift) {
        uint64_t x = seed * 2654435761u + 1;
        int32_t *pi = malloc(sizeof(int32_t) * (size_t)n);
        for (int32_t v = 0; v < n; v++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            pi[v] = (int32_t)(x % (uint64_t)n);
        }
        for (int32_t u = 0; u < n; u++)
            for (int64_t e = g->row_ptr[u]; e < g->row_ptr[u + 1]; e++)
                g->val[e] += pi[u] - pi[g->col[e]];
        free(pi);
    }
    return g;
}

krill_apsp *at_solve(krill_ctx *ctx, const krill_csr *g, const char *method,
                     krill_apsp_weight weight, int paths)
{
    krill_apsp_opts o = KRILL_APSP_OPTS_INIT;
    krill_apsp *r = NULL;
    o.method = method;
    o.weight = weight;
    o.paths = paths;
    if (krill_apsp_solve(ctx, g, &o, &r, NULL) != KRILL_OK)
        fprintf(stderr, "apsp %s %s%s: %s\n", method, krill_apsp_weight_name(weight),
                paths ? " paths" : "", krill_last_error());
    return r;
}
