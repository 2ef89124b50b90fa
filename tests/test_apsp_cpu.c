/* tests/test_apsp_cpu.c - the CPU APSP kernels (apsp/cpu_*.c) through the internal
 * contract (apsp/apsp_impl.h), without the driver: an apsp_run built by hand in host
 * memory, D and P initialised from the graph here, each method's functions called as the
 * driver would (begin, pivot/panels/rest for every round or whole, end).
 *
 * Checks: every method against plain (int32 bit for bit; float and double too on integer
 * weights, whose sums are exact; within a tolerance on fractional ones); fw-a against fw-b
 * bit for bit on every type (D and P); 1 and 2 threads, and each instruction set
 * (KRILL_APSP_CPU_ISA), bit for bit; the padding left as isolated vertices; every path that
 * P gives made of real arcs, of the length D says; a negative cycle left on the diagonal
 * with int32 values in [-INF, INF]; Dijkstra's scratch allocation failing cleanly. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apsp/apsp_impl.h"
#include "testutil.h"

/* ---- graphs ---------------------------------------------------------------------------- */

static uint64_t rng_state;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

enum { G_PLAIN = 0, G_SHIFT = 1, G_SPLIT = 2, G_FRAC = 4, G_NEGCYCLE = 8 };

/* n vertices, 4n random arcs with weights in [0, n) (duplicates summed), a few zero weights
 * and self loops (positive ones: ignored). G_SHIFT: w + pi(u) - pi(v) (negative arcs, no
 * negative cycle); G_SPLIT: arcs only within two halves (disconnected); G_FRAC: + k / 997
 * (fractional: sums round, differently in different orders); G_NEGCYCLE: the arcs of a
 * cycle 0 -> 1 -> 2 -> 0 set to -(n + 1) each. */
static krill_csr *make_graph(int32_t n, int kind, uint64_t seed)
{
    const int64_t m = 4 * (int64_t)n + (kind & G_NEGCYCLE ? 3 : 0);
    int32_t *rows = malloc(sizeof(int32_t) * (size_t)(m + 1));
    int32_t *cols = malloc(sizeof(int32_t) * (size_t)(m + 1));
    double *vals = malloc(sizeof(double) * (size_t)(m + 1));
    int32_t *pi = malloc(sizeof(int32_t) * (size_t)n);
    krill_csr *g = NULL;
    rng_state = seed * 0x9E3779B97F4A7C15ull + 12345;
    for (int64_t e = 0; e < 4 * (int64_t)n; e++) {
        int32_t u = (int32_t)(rng() % (uint64_t)n), v = (int32_t)(rng() % (uint64_t)n);
        if ((kind & G_SPLIT) && n > 1) v = (u < n / 2) ? v % (n / 2) : n / 2 + v % (n - n / 2);
        rows[e] = u;
        cols[e] = v;
        vals[e] = rng() % 7 == 0 ? 0.0 : (double)(rng() % (uint64_t)n);
        if (kind & G_FRAC) vals[e] += (double)(rng() % 1000) / 997.0;
    }
    if (kind & G_NEGCYCLE)
        for (int e = 0; e < 3; e++) {
            rows[4 * n + e] = e;
            cols[4 * n + e] = (e + 1) % 3;
            vals[4 * n + e] = 0;   /* set below, after the shift */
        }
    if (krill_csr_from_triplets(n, n, m, rows, cols, vals, &g) != KRILL_OK) {
        fprintf(stderr, "krill_csr_from_triplets: %s\n", krill_last_error());
        exit(1);
    }
    for (int32_t v = 0; v < n; v++) pi[v] = (int32_t)(rng() % (uint64_t)n);
    if (kind & G_SHIFT)
        for (int32_t u = 0; u < n; u++)
            for (int64_t e = g->row_ptr[u]; e < g->row_ptr[u + 1]; e++)
                if (g->col[e] != u) g->val[e] += pi[u] - pi[g->col[e]];
    if (kind & G_NEGCYCLE)
        for (int32_t u = 0; u < 3; u++)
            for (int64_t e = g->row_ptr[u]; e < g->row_ptr[u + 1]; e++)
                if (g->col[e] == (u + 1) % 3) g->val[e] = -(double)n - 1;
    free(rows);
    free(cols);
    free(vals);
    free(pi);
    return g;
}

/* ---- runs ------------------------------------------------------------------------------ */

typedef struct result {
    int32_t n, npad;
    krill_apsp_weight weight;
    void *d;             /* npad x npad */
    int32_t *p;          /* npad x npad or NULL */
} result;

static void result_free(result *r)
{
    krill_free(r->d);
    krill_free(r->p);
    memset(r, 0, sizeof *r);
}

static double d_at(const result *r, int64_t i, int64_t j)
{
    const int64_t x = i * r->npad + j;
    if (r->weight == KRILL_APSP_INT32) {
        int32_t v = ((const int32_t *)r->d)[x];
        return v == APSP_I32_INF ? INFINITY : (double)v;
    }
    return r->weight == KRILL_APSP_FLOAT ? (double)((const float *)r->d)[x]
                                         : ((const double *)r->d)[x];
}

static double convert(krill_apsp_weight w, double val)
{
    return w == KRILL_APSP_INT32 ? (double)(int32_t)val
           : w == KRILL_APSP_FLOAT ? (double)(float)val : val;
}

/* D and P from the graph as the device layer builds them (apsp_impl.h) */
static void init_dp(const krill_csr *g, result *r)
{
    for (int64_t u = 0; u < r->npad; u++)
        for (int64_t v = 0; v < r->npad; v++) {
            const int64_t x = u * r->npad + v;
            double w = u == v ? 0.0 : INFINITY;
            int32_t p = KRILL_APSP_NO_PRED;
            if (u < g->n_rows)
                for (int64_t e = g->row_ptr[u]; e < g->row_ptr[u + 1]; e++)
                    if (g->col[e] == v) {
                        double c = convert(r->weight, g->val[e]);
                        if (u != v) w = c, p = (int32_t)u;
                        else if (c < 0) w = c;
                    }
            if (r->weight == KRILL_APSP_INT32)
                ((int32_t *)r->d)[x] = isinf(w) ? APSP_I32_INF : (int32_t)w;
            else if (r->weight == KRILL_APSP_FLOAT)
                ((float *)r->d)[x] = (float)w;
            else
                ((double *)r->d)[x] = w;
            if (r->p) r->p[x] = p;
        }
}

/* Run `ops` with tile `tile` (0: its own) on g; returns the status, fills *out. */
static krill_status run_ops(krill_ctx *ctx, const krill_csr *g, const apsp_ops *ops, int tile,
                            krill_apsp_weight weight, int paths, int fills_d, result *out)
{
    krill_status st = KRILL_OK;
    apsp_run run;
    int began = 0;
    memset(&run, 0, sizeof run);
    memset(out, 0, sizeof *out);
    run.ctx = ctx;
    run.graph = g;
    run.weight = weight;
    run.elem = weight == KRILL_APSP_DOUBLE ? 8 : 4;
    run.n = g->n_rows;
    run.tile = tile > 0 ? tile : ops->tile;
    run.npad = (run.n + run.tile - 1) / run.tile * run.tile;
    for (int64_t e = 0; e < g->nnz; e++)
        if (g->val[e] < 0) run.has_negative = 1;
    run.clamp_hi = run.has_negative ? APSP_I32_INF / 2 : APSP_I32_INF;
    out->n = run.n;
    out->npad = run.npad;
    out->weight = weight;
    KRILL_TRY(krill_alloc_n(&out->d, (size_t)run.npad * run.npad + 1, run.elem, 0, "D"));
    if (paths) KRILL_ALLOC(out->p, (size_t)run.npad * run.npad + 1);
    run.d = out->d;
    run.p = out->p;
    if (fills_d) {   /* garbage: the method must write every element */
        memset(out->d, 0x5a, (size_t)run.npad * run.npad * run.elem);
        if (out->p) memset(out->p, 0x5a, (size_t)run.npad * run.npad * sizeof(int32_t));
    } else {
        init_dp(g, out);
    }
    if (ops->begin) KRILL_TRY(ops->begin(&run));
    began = 1;
    if (ops->whole) {
        KRILL_TRY(ops->whole(&run));
    } else {
        for (int32_t k = 0; k < run.npad / run.tile; k++) {
            KRILL_TRY(ops->pivot(&run, k));
            KRILL_TRY(ops->panels(&run, k));
            KRILL_TRY(ops->rest(&run, k));
        }
    }
cleanup:
    if (began && ops->end) ops->end(&run);
    return st;
}

/* ---- checks ---------------------------------------------------------------------------- */

static int failures_shown;
#define REPORT(...)                                                                      \
    do {                                                                                 \
        if (failures_shown++ < 20) fprintf(stderr, __VA_ARGS__);                         \
    } while (0)

/* D (n x n corner) equal: bitwise (tol 0) or within tol (absolute); P bitwise if both and
 * `pred` */
static int same(const result *a, const result *b, double tol, int pred, const char *what)
{
    int bad = 0;
    for (int64_t i = 0; i < a->n; i++)
        for (int64_t j = 0; j < a->n; j++) {
            double x = d_at(a, i, j), y = d_at(b, i, j);
            int ok = tol == 0 ? memcmp(&x, &y, sizeof x) == 0
                              : (x == y || fabs(x - y) <= tol);
            if (pred && a->p && b->p && a->p[i * a->npad + j] != b->p[i * b->npad + j]) ok = 0;
            if (!ok && bad++ == 0)
                REPORT("%s: n %d: D[%lld][%lld] = %.17g vs %.17g, P %d vs %d\n", what, a->n,
                       (long long)i, (long long)j, x, y, a->p ? a->p[i * a->npad + j] : 0,
                       b->p ? b->p[i * b->npad + j] : 0);
        }
    return bad;
}

/* padded vertices still isolated: INF off the diagonal, 0 on it, NO_PRED */
static int padding_ok(const result *r, const char *what)
{
    int bad = 0;
    for (int64_t i = 0; i < r->npad; i++)
        for (int64_t j = 0; j < r->npad; j++) {
            if (i < r->n && j < r->n) continue;
            double want = i == j ? 0.0 : INFINITY;
            if (d_at(r, i, j) != want || (r->p && r->p[i * r->npad + j] != KRILL_APSP_NO_PRED))
                if (bad++ == 0)
                    REPORT("%s: padding D[%lld][%lld] = %g (n %d, npad %d)\n", what,
                           (long long)i, (long long)j, d_at(r, i, j), r->n, r->npad);
        }
    return bad;
}

/* the weight of arc u -> v (binary search in row u), or NaN */
static double arc(const krill_csr *g, int32_t u, int32_t v)
{
    int64_t lo = g->row_ptr[u], hi = g->row_ptr[u + 1];
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (g->col[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo < g->row_ptr[u + 1] && g->col[lo] == v ? g->val[lo] : NAN;
}

/* every path P gives: real arcs, at most n - 1 of them, summing to D (exactly when tol =
 * 0, else within tol); NO_PRED exactly where j == i or D is INF. Per row, each vertex's path sum is found
 * once (from its predecessor's, in path order from i), so a row costs O(n). */
static int paths_ok(const krill_csr *g, const result *r, double tol, const char *what)
{
    const int32_t n = r->n;
    int bad = 0;
    double *sum = malloc(sizeof(double) * (size_t)(n + 1));
    int32_t *state = malloc(sizeof(int32_t) * (size_t)(n + 1));   /* 0 new, 1 on the walk, 2 done */
    int32_t *stack = malloc(sizeof(int32_t) * (size_t)(n + 1));
    for (int32_t i = 0; i < n && bad == 0; i++) {
        const int32_t *pi = r->p + (int64_t)i * r->npad;
        for (int32_t v = 0; v < n; v++) state[v] = 0;
        state[i] = 2;
        sum[i] = 0.0;
        for (int32_t j = 0; j < n && bad == 0; j++) {
            const double dij = d_at(r, i, j);
            int32_t top = 0, x = j;
            if (i == j || isinf(dij)) {
                if (pi[j] != KRILL_APSP_NO_PRED && bad++ == 0)
                    REPORT("%s: P[%d][%d] = %d where D = %g\n", what, i, j, pi[j], dij);
                continue;
            }
            while (state[x] == 0) {   /* walk back to a vertex whose sum is known */
                const int32_t u = pi[x];
                state[x] = 1;
                stack[top++] = x;
                if (u < 0 || u >= n || u == x || isnan(arc(g, u, x)) || state[u] == 1) {
                    REPORT("%s: n %d: the path %d -> %d from P reaches %d, then %d: %s\n", what,
                           n, i, j, x, u, state[u] == 1 ? "a loop" : "no such arc");
                    bad++;
                    break;
                }
                x = u;
            }
            while (top > 0 && bad == 0) {   /* sums in path order from i */
                const int32_t v = stack[--top];
                sum[v] = sum[pi[v]] + convert(r->weight, arc(g, pi[v], v));
                state[v] = 2;
            }
            if (bad == 0 && (tol == 0 ? sum[j] != dij
                                      : fabs(sum[j] - dij) > tol)) {
                REPORT("%s: n %d: the path %d -> %d from P has length %.17g, D = %.17g\n", what,
                       n, i, j, sum[j], dij);
                bad++;
            }
        }
    }
    free(sum);
    free(state);
    free(stack);
    return bad;
}

/* ---- the methods ----------------------------------------------------------------------- */

typedef struct method {
    const char *name;
    const apsp_ops *ops;
    int tile;            /* 0: its own */
    int nonnegative;     /* dijkstra */
} method;

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

/* T: the tile the sizes are chosen around (fw-a's own is larger: it runs too) */
#define T 128

static const method methods[] = {
    {"fw-a", &apsp_cpu_fw_a, 0, 0},        {"fw-a/T", &apsp_cpu_fw_a, T, 0},
    {"fw-a/32", &apsp_cpu_fw_a, 32, 0},    {"fw-b", &apsp_cpu_fw_b, 0, 0},
    {"fw-b/32", &apsp_cpu_fw_b, 32, 0},    {"fw-rec", &apsp_cpu_fw_rec, 0, 0},
    {"fw-rec/32", &apsp_cpu_fw_rec, 32, 0}, {"fw-rec/T", &apsp_cpu_fw_rec, T, 0},
    {"dijkstra", &apsp_cpu_dijkstra, 0, 1}, {"dijkstra/32", &apsp_cpu_dijkstra, 32, 1},
};
#define N_METHODS ((int)(sizeof methods / sizeof methods[0]))

static const char *wname(krill_apsp_weight w) { return krill_apsp_weight_name(w); }

/* every method on g against plain (on one thread: a loaded machine makes the many short
 * parallel regions slow); `variants`: also 2 threads and the other instruction sets */
static void check_graph(krill_ctx *ctx1, krill_ctx *ctx2, const krill_csr *g, int kind,
                        int variants)
{
    const int negative = (kind & G_SHIFT) != 0;
    /* fractional weights: sums in different orders differ by rounding, up to about the
       unit roundoff times the largest partial sum, n max |w| (8 of them allowed) */
    double wmax = 0;
    for (int64_t e = 0; e < g->nnz; e++) wmax = fmax(wmax, fabs(g->val[e]));
    const double scale = kind & G_FRAC ? 8.0 * g->n_rows * wmax : 0;
    const double tol_f = scale * 0x1p-24, tol_d = scale * 0x1p-53;
    for (int wt = 0; wt < 3; wt++) {
        const krill_apsp_weight weight = (krill_apsp_weight)wt;
        const double tol = weight == KRILL_APSP_INT32 ? 0 : weight == KRILL_APSP_FLOAT ? tol_f : tol_d;
        if (weight == KRILL_APSP_INT32 && (kind & G_FRAC)) continue;
        for (int paths = 0; paths <= 1; paths++) {
            result ref, fwa, r, r2;
            char what[128];
            snprintf(what, sizeof what, "plain %s%s kind %d", wname(weight), paths ? " +P" : "",
                     kind);
            CHECK_OK(run_ops(ctx1, g, &apsp_cpu_plain, 0, weight, paths, 0, &ref));
            if (paths) CHECK(paths_ok(g, &ref, tol, what) == 0);
            if (variants) {   /* the oracle itself: 1 thread = 2 threads */
                CHECK_OK(run_ops(ctx2, g, &apsp_cpu_plain, 0, weight, paths, 0, &r2));
                CHECK(same(&r2, &ref, 0, 1, what) == 0);
                result_free(&r2);
            }
            CHECK_OK(run_ops(ctx1, g, &apsp_cpu_fw_a, 32, weight, paths, 0, &fwa));
            for (int m = 0; m < N_METHODS; m++) {
                const method *me = &methods[m];
                if (me->nonnegative && negative) continue;
                snprintf(what, sizeof what, "%s %s%s kind %d", me->name, wname(weight),
                         paths ? " +P" : "", kind);
                CHECK_OK(run_ops(ctx1, g, me->ops, me->tile, weight, paths,
                                 me->ops == &apsp_cpu_dijkstra, &r));
                CHECK(same(&r, &ref, tol, 0, what) == 0);
                CHECK(padding_ok(&r, what) == 0);
                if (paths) CHECK(paths_ok(g, &r, tol, what) == 0);
                if (me->ops == &apsp_cpu_fw_b && me->tile == 32)   /* fw-a/32's rounds */
                    CHECK(same(&r, &fwa, 0, 1, what) == 0);
                if (variants) {
                    static const char *const isa[] = {"generic", "avx2"};
                    CHECK_OK(run_ops(ctx2, g, me->ops, me->tile, weight, paths,
                                     me->ops == &apsp_cpu_dijkstra, &r2));
                    CHECK(same(&r2, &r, 0, 1, what) == 0);   /* 1 thread = 2 threads */
                    result_free(&r2);
                    for (int x = 0; x < 2 && me->ops != &apsp_cpu_dijkstra; x++) {
                        char what2[160];
                        snprintf(what2, sizeof what2, "%s on %s", what, isa[x]);
                        setenv("KRILL_APSP_CPU_ISA", isa[x], 1);
                        CHECK_OK(run_ops(ctx1, g, me->ops, me->tile, weight, paths, 0, &r2));
                        unsetenv("KRILL_APSP_CPU_ISA");
                        CHECK(same(&r2, &r, 0, 1, what2) == 0);
                        result_free(&r2);
                    }
                }
                result_free(&r);
            }
            result_free(&fwa);
            result_free(&ref);
        }
    }
}

/* a negative cycle: every method but Dijkstra leaves some D[i][i] < 0; int32 values stay
 * in [-INF, INF] */
static void check_negative_cycle(krill_ctx *ctx, int32_t n)
{
    krill_csr *g = make_graph(n, G_SHIFT | G_NEGCYCLE, 7);
    for (int wt = 0; wt < 3; wt++)
        for (int m = -1; m < N_METHODS; m++) {
            const apsp_ops *ops = m < 0 ? &apsp_cpu_plain : methods[m].ops;
            result r;
            int negative = 0, in_range = 1;
            if (m >= 0 && methods[m].nonnegative) continue;
            CHECK_OK(run_ops(ctx, g, ops, m < 0 ? 0 : methods[m].tile, (krill_apsp_weight)wt, 1,
                             0, &r));
            for (int64_t i = 0; i < n; i++) negative |= d_at(&r, i, i) < 0;
            if (wt == KRILL_APSP_INT32)
                for (int64_t x = 0; x < (int64_t)r.npad * r.npad; x++) {
                    int32_t v = ((int32_t *)r.d)[x];
                    in_range &= v >= -APSP_I32_INF && v <= APSP_I32_INF;
                }
            if (!negative || !in_range)
                REPORT("negative cycle, n %d, %s %s: negative diagonal %d, in range %d\n", n,
                       m < 0 ? "plain" : methods[m].name, wname((krill_apsp_weight)wt),
                       negative, in_range);
            CHECK(negative);
            CHECK(in_range);
            result_free(&r);
        }
    krill_csr_destroy(&g);
}

/* Dijkstra's per-thread scratch failing: KRILL_ERR_ALLOC with a message, nothing leaked
 * (the sanitizer build checks that) */
static void check_dijkstra_alloc(krill_ctx *ctx)
{
    krill_csr *g = make_graph(50, G_PLAIN, 3);
    result r;
    apsp_run run;
    memset(&run, 0, sizeof run);
    CHECK_OK(run_ops(ctx, g, &apsp_cpu_dijkstra, 0, KRILL_APSP_DOUBLE, 1, 1, &r));
    run.ctx = ctx;
    run.graph = g;
    run.weight = KRILL_APSP_DOUBLE;
    run.elem = 8;
    run.n = run.npad = 50;
    run.tile = 1;
    run.d = r.d;
    run.p = r.p;
    for (int k = 1; k <= 2; k++) {
        krill_fault_alloc_after(k);
        CHECK_STATUS(apsp_cpu_dijkstra.whole(&run), KRILL_ERR_ALLOC);
        krill_fault_alloc_after(0);
        CHECK(strstr(krill_last_error(), "dijkstra") != NULL);
    }
    result_free(&r);
    krill_csr_destroy(&g);
}

int main(void)
{
    krill_ctx *ctx1 = NULL, *ctx2 = NULL;
    krill_ctx_opts o = KRILL_CTX_OPTS_INIT;
    const int t = T;
    const int32_t sizes[] = {1, 2, 31, 32, 33, t - 1, t, t + 1, 2 * t + 3, 300};
    o.device = KRILL_DEVICE_CPU;
    o.threads = 1;
    CHECK_OK(krill_ctx_create(&o, &ctx1));
    o.threads = 2;
    CHECK_OK(krill_ctx_create(&o, &ctx2));
    if (!ctx1 || !ctx2) return tu_finish("test_apsp_cpu");

    for (int s = 0; s < (int)(sizeof sizes / sizeof sizes[0]); s++) {
        const int32_t n = sizes[s];
        static const int kinds[] = {G_PLAIN, G_SHIFT, G_SPLIT, G_FRAC, G_SHIFT | G_FRAC};
        for (int k = 0; k < 5; k++) {
            /* the split and fractional graphs at a few sizes; 2 threads and the other
               instruction sets at two. Under the sanitizers (a minute or more otherwise)
               the extra graphs at one size and no n = 300 */
            if (kinds[k] != G_PLAIN && kinds[k] != G_SHIFT &&
                (SANITIZED ? n != 33 : n != 33 && n != t + 1 && n != 300))
                continue;
            if (SANITIZED && n == 300) continue;
            krill_csr *g = make_graph(n, kinds[k], (uint64_t)(100 * s + k));
            check_graph(ctx1, ctx2, g, kinds[k], n == 33 || n == t + 1);
            krill_csr_destroy(&g);
        }
    }
    check_negative_cycle(ctx2, 40);
    check_negative_cycle(ctx1, 2 * t + 3);
    check_dijkstra_alloc(ctx2);

    krill_ctx_destroy(&ctx1);
    krill_ctx_destroy(&ctx2);
    return tu_finish("test_apsp_cpu");
}
