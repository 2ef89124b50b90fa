/* apsp/apsp.c - krill_apsp_solve and the result accessors.
 *
 * The driver: check the graph and the options, choose the method (auto: by the device, the
 * sign of the weights and the density), check that D (and P) fit in free memory before
 * allocating, build D on the device, then either walk the blocked rounds -- for k = 0 ..
 * npad/t - 1: the pivot tile, the pivot row and column tiles, the rest, with a time stamp
 * after each so that every tile kind is timed (the APSP paper's Table 4) -- or call the
 * method's `whole`. It never knows a kernel: methods are apsp_ops tables (methods.c), the
 * device is an apsp_device (cpu_device.c, gpu_device.cu). Finally the n x n corner of D (and
 * P) comes to host memory and the diagonal is searched for a negative cycle. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <omp.h>

#include "apsp/apsp_impl.h"
#include "krill/overlap.h"

struct krill_apsp {
    int32_t n;
    krill_apsp_weight weight;
    size_t elem;
    void *dist;                  /* n x n, row-major */
    int32_t *pred;               /* n x n or NULL */
};

static size_t weight_bytes(krill_apsp_weight w) { return w == KRILL_APSP_DOUBLE ? 8 : 4; }

const char *krill_apsp_weight_name(krill_apsp_weight weight)
{
    return weight == KRILL_APSP_INT32 ? "int32"
           : weight == KRILL_APSP_FLOAT ? "float"
           : weight == KRILL_APSP_DOUBLE ? "double" : "unknown";
}

krill_status krill_apsp_weight_parse(const char *name, krill_apsp_weight *weight)
{
    krill_status st = KRILL_OK;
    KRILL_REQUIRE(name != NULL && weight != NULL, "krill_apsp_weight_parse: NULL argument");
    if (!strcmp(name, "int32")) *weight = KRILL_APSP_INT32;
    else if (!strcmp(name, "float")) *weight = KRILL_APSP_FLOAT;
    else if (!strcmp(name, "double")) *weight = KRILL_APSP_DOUBLE;
    else st = krill_error(KRILL_ERR_ARG, "unknown weight type \"%s\" (int32, float or double)", name);
cleanup:
    return st;
}

/* ---- checks of the graph ------------------------------------------------------------ */

/* Weights the type can hold; for int32 also the overflow rule of apsp_impl.h: the sum
 * over vertices of the largest |weight| leaving each bounds every simple path's length,
 * and must stay below clamp_hi. Sets run->has_negative and run->clamp_hi. */
static krill_status check_weights(apsp_run *run)
{
    krill_status st = KRILL_OK;
    const krill_csr *g = run->graph;
    double bound = 0.0;
    run->has_negative = 0;
    for (int64_t e = 0; e < g->nnz; e++)
        if (g->val[e] < 0) run->has_negative = 1;
    for (int32_t u = 0; u < g->n_rows && st == KRILL_OK; u++) {
        double largest = 0.0;
        for (int64_t e = g->row_ptr[u]; e < g->row_ptr[u + 1] && st == KRILL_OK; e++) {
            double w = g->val[e];
            if (run->weight == KRILL_APSP_INT32 && w != floor(w))
                st = krill_error(KRILL_ERR_ARG, "apsp: the weight %.17g of arc %d -> %d is "
                                 "not an integer: use float or double weights", w, u, g->col[e]);
            else if (run->weight == KRILL_APSP_INT32 && fabs(w) >= APSP_I32_INF)
                st = krill_error(KRILL_ERR_UNSUPPORTED, "apsp: the weight %.17g of arc %d -> %d "
                                 "is beyond the int32 limit %d: use float or double weights",
                                 w, u, g->col[e], APSP_I32_INF - 1);
            else if (run->weight == KRILL_APSP_FLOAT && fabs(w) > FLT_MAX)
                st = krill_error(KRILL_ERR_ARG, "apsp: the weight %.17g of arc %d -> %d "
                                 "overflows float: use double weights", w, u, g->col[e]);
            if (g->col[e] != u || w < 0) largest = fmax(largest, fabs(w));
        }
        bound += largest;
    }
    run->clamp_hi = run->has_negative ? APSP_I32_INF / 2 : APSP_I32_INF;
    if (st == KRILL_OK && run->weight != KRILL_APSP_INT32 &&
        !(bound <= (run->weight == KRILL_APSP_FLOAT ? FLT_MAX : DBL_MAX)))
        st = krill_error(KRILL_ERR_UNSUPPORTED, "apsp: %s distances could overflow (the sum "
                         "over vertices of the largest |weight| leaving each is %g)%s",
                         krill_apsp_weight_name(run->weight), bound,
                         run->weight == KRILL_APSP_FLOAT ? ": use double weights" : "");
    if (st == KRILL_OK && run->weight == KRILL_APSP_INT32 && bound >= run->clamp_hi)
        st = krill_error(KRILL_ERR_UNSUPPORTED, "apsp: int32 distances could reach %.0f "
                         "(the sum over vertices of the largest |weight| leaving each), "
                         "over the int32 limit %d%s: use float or double weights", bound,
                         run->clamp_hi, run->has_negative ? " for graphs with negative weights" : "");
    return st;
}

/* ---- the method ----------------------------------------------------------------------- */

/* auto: on the GPU fw-a (blocked FW); on the CPU Dijkstra from every source when no
 * weight is negative and its estimated work, n (m + n) log2 n heap steps at about
 * DIJKSTRA_STEP_COST relaxations each, is below FW's n^3 relaxations; else fw-a. The cost:
 * random:N graphs (4 arcs a vertex) on 2 AVX-512 cores took 104-173 FW relaxations' time
 * per heap step at N = 1024..4096 (Dijkstra 0.23 s against fw-a 0.084 s at 2048); AVX2
 * halves FW's rate, so 100 leans a little towards Dijkstra. */
#define DIJKSTRA_STEP_COST 100.0

static krill_status choose_method(apsp_run *run, const char *asked, const apsp_method **method,
                                  char *why, size_t why_size)
{
    krill_status st = KRILL_OK;
    const int gpu = krill_on_gpu(run->ctx);
    const apsp_method *m = NULL;
    if (asked && strcmp(asked, "auto")) {
        m = apsp_method_find(asked);
        KRILL_REQUIRE(m != NULL, "apsp: unknown method \"%s\" (known: auto, plain, fw-a, fw-b, "
                      "fw-rec, dijkstra)", asked);
        KRILL_REQUIRE(gpu ? m->gpu != NULL : m->cpu != NULL, "apsp: method \"%s\" has no %s "
                      "implementation", asked, gpu ? "GPU" : "CPU");
        snprintf(why, why_size, "asked for");
    } else {
        double n = run->n, arcs = (double)run->graph->nnz;
        double fw = n * n * n, dij = DIJKSTRA_STEP_COST * n * (arcs + n) * log2(n + 2.0);
        if (gpu) {
            m = apsp_method_find("fw-a");
            snprintf(why, why_size, "GPU: blocked Floyd-Warshall, method A (the fastest here)");
        } else if (run->has_negative) {
            m = apsp_method_find("fw-a");
            snprintf(why, why_size, "negative weights: Floyd-Warshall (Dijkstra needs weights >= 0)");
        } else if (dij < fw) {
            m = apsp_method_find("dijkstra");
            snprintf(why, why_size, "sparse, weights >= 0: Dijkstra's estimated work %.3g < "
                     "Floyd-Warshall's %.3g (m/n^2 = %.2g)", dij, fw, arcs / fmax(1.0, n * n));
        } else {
            m = apsp_method_find("fw-a");
            snprintf(why, why_size, "dense: Floyd-Warshall's work %.3g <= Dijkstra's estimated "
                     "%.3g (m/n^2 = %.2g)", fw, dij, arcs / fmax(1.0, n * n));
        }
    }
    KRILL_REQUIRE(!(m->needs_nonnegative && run->has_negative), "apsp: method \"%s\" needs "
                  "weights >= 0 and the graph has negative ones (use fw-a)", m->name);
    *method = m;
cleanup:
    return st;
}

/* ---- memory --------------------------------------------------------------------------- */

static krill_status check_memory(apsp_run *run, const apsp_device *dev, const apsp_ops *ops,
                                 int paths, double *needed)
{
    krill_status st = KRILL_OK;
    double cells = (double)run->npad * (double)run->npad;
    double dev_bytes = cells * ((double)run->elem + (paths ? 4.0 : 0.0)) +
                       (ops->extra_bytes ? ops->extra_bytes(run, paths) : 0.0);
    double host_bytes = (double)run->n * run->n * ((double)run->elem + (paths ? 4.0 : 0.0));
    double free_dev = 0.0, free_host = 0.0;
    *needed = dev_bytes;
    KRILL_TRY(dev->free_bytes(run, &free_dev));
    KRILL_TRY(apsp_cpu_device.free_bytes(run, &free_host));
    if (krill_on_gpu(run->ctx)) {
        if (dev_bytes > free_dev)
            st = krill_error(KRILL_ERR_DEVICE_ALLOC, "apsp: D%s of %d x %d (%s) and the method's "
                             "scratch need %.0f bytes of GPU memory, %.0f are free",
                             paths ? " and P" : "", run->npad,
                             run->npad, krill_apsp_weight_name(run->weight), dev_bytes, free_dev);
    } else {
        host_bytes += dev_bytes;     /* the padded working copy and the result */
    }
    if (st == KRILL_OK && host_bytes > free_host)
        st = krill_error(KRILL_ERR_ALLOC, "apsp: D%s of %d x %d (%s) and the method's scratch "
                         "need %.0f bytes of host memory, %.0f are available",
                         paths ? " and P" : "", run->n, run->n,
                         krill_apsp_weight_name(run->weight), host_bytes, free_host);
cleanup:
    return st;
}

/* ---- negative cycles ------------------------------------------------------------------ */

static double dist_value(const krill_apsp *r, int64_t idx)
{
    if (r->weight == KRILL_APSP_INT32) {
        int32_t v = ((const int32_t *)r->dist)[idx];
        return v >= APSP_I32_INF ? INFINITY : (double)v;
    }
    return r->weight == KRILL_APSP_FLOAT ? (double)((const float *)r->dist)[idx]
                                         : ((const double *)r->dist)[idx];
}

/* A vertex v with D[v][v] < 0 (or NaN, which only a negative cycle makes), else -1: v lies
 * on a closed walk of negative weight, not necessarily on a negative cycle. */
static int32_t negative_vertex(const krill_apsp *r)
{
    int32_t found = -1;
    for (int32_t v = 0; v < r->n && found < 0; v++) {
        double d = dist_value(r, (int64_t)v * r->n + v);
        if (d < 0 || isnan(d)) found = v;
    }
    return found;
}

/* Bellman-Ford from v over the graph (doubles, independent of D's type): n passes; a vertex
 * still improved in the last one leads, n parent steps back, onto a negative cycle, read off
 * the parents. Fills cycle[0..min(len, max) - 1] in arc order and returns its length, or 0
 * when the work, n m, passes APSP_CYCLE_WORK or memory is short (the caller then names v). */
#define APSP_CYCLE_WORK 4e9

static int32_t find_negative_cycle(const krill_csr *g, int32_t v, int32_t *cycle, int32_t max)
{
    const int32_t n = g->n_rows;
    double *dist = NULL;
    int32_t *parent = NULL, last = -1, len = 0;
    if ((double)n * (double)(g->nnz + 1) > APSP_CYCLE_WORK || krill_alloc_n((void **)&dist,
        (size_t)n, sizeof *dist, 0, "cycle search") != KRILL_OK ||
        krill_alloc_n((void **)&parent, (size_t)n, sizeof *parent, 0, "cycle search") != KRILL_OK)
        goto cleanup;
    for (int32_t u = 0; u < n; u++) {
        dist[u] = INFINITY;
        parent[u] = -1;
    }
    dist[v] = 0.0;
    for (int32_t pass = 0; pass < n; pass++) {
        last = -1;
        for (int32_t u = 0; u < n; u++) {
            if (isinf(dist[u])) continue;
            for (int64_t e = g->row_ptr[u]; e < g->row_ptr[u + 1]; e++)
                if (dist[u] + g->val[e] < dist[g->col[e]]) {
                    dist[g->col[e]] = dist[u] + g->val[e];
                    parent[g->col[e]] = u;
                    last = g->col[e];
                }
        }
        if (last < 0) goto cleanup;                 /* settled: no cycle reachable from v */
    }
    for (int32_t s = 0; s < n; s++) last = parent[last];
    int32_t u = last;
    do {                                            /* parents run against the arcs */
        len++;
        u = parent[u];
    } while (u != last && len <= n);
    u = last;
    for (int32_t k = len - 1; k >= 0; k--) {
        if (k < max) cycle[k] = u;
        u = parent[u];
    }
cleanup:
    krill_free(dist);
    krill_free(parent);
    return len;
}

/* The error of a negative cycle: a vertex on one (and the cycle, up to 16 vertices), found
 * from v, a vertex of a negative closed walk; v itself when the search is too costly. */
static krill_status negative_cycle_error(const krill_csr *g, int32_t v, int32_t *named)
{
    int32_t cycle[16];
    int32_t len = find_negative_cycle(g, v, cycle, 16);
    char text[400] = "";
    size_t used = 0;
    if (len == 0) {
        *named = v;
        return krill_error(KRILL_ERR_NUMERIC, "apsp: the graph has a negative cycle (reachable "
                           "from vertex %d, returning to it: D[%d][%d] < 0): shortest paths are "
                           "undefined", v, v, v);
    }
    *named = cycle[0];
    if (len <= 16) {
        used = (size_t)snprintf(text, sizeof text, "; the cycle:");
        for (int32_t k = 0; k < len && used < sizeof text; k++)
            used += (size_t)snprintf(text + used, sizeof text - used, " %d ->", cycle[k]);
        if (used < sizeof text) snprintf(text + used, sizeof text - used, " %d", cycle[0]);
    } else {
        snprintf(text, sizeof text, " (a cycle of %d vertices)", len);
    }
    return krill_error(KRILL_ERR_NUMERIC, "apsp: the graph has a negative cycle through vertex "
                       "%d%s: shortest paths are undefined", cycle[0], text);
}

/* ---- predecessors around cycles of weight 0 ----------------------------------------------
 * Blocked FW with the strict rule can record, at a tie, a walk around a cycle of weight 0,
 * and then P[i][.] loops. A loop in row i's predecessors needs such a cycle: P[i][v] = u
 * leaves D[i][v] >= D[i][u] + w(u, v) (D only decreases later), and summing that around a
 * loop gives a cycle weight <= 0, so = 0 without negative cycles. So when some arc u -> v,
 * u != v, closes a cycle of weight 0 (D[v][u] + w(u, v) = 0; float and double within
 * rounding), P is rebuilt: from every source, breadth first over the tight arcs (D[i][u] +
 * w(u, v) = D[i][v]), which gives a tree of shortest paths. O(n m), only for such graphs. */
static double tight_tol(const krill_apsp *r, double a, double b)
{
    double eps = r->weight == KRILL_APSP_INT32 ? 0.0 : r->weight == KRILL_APSP_FLOAT ? 1e-5 : 1e-12;
    return eps * (fabs(a) + fabs(b));
}

static int closes_zero_cycle(const krill_csr *g, const krill_apsp *r)
{
    int found = 0;
    for (int32_t u = 0; u < g->n_rows && !found; u++)
        for (int64_t e = g->row_ptr[u]; e < g->row_ptr[u + 1] && !found; e++) {
            double back = dist_value(r, (int64_t)g->col[e] * r->n + u);
            found = g->col[e] != u && isfinite(back) &&
                    fabs(back + g->val[e]) <= tight_tol(r, back, g->val[e]);
        }
    return found;
}

static krill_status rebuild_pred(const krill_csr *g, krill_apsp *r, int threads)
{
    krill_status st = KRILL_OK;
    const int32_t n = r->n;
    int32_t *queue = NULL;
    KRILL_ALLOC(queue, (size_t)threads * (size_t)n);
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads)
    for (int32_t i = 0; i < n; i++) {
        int32_t *q = queue + (size_t)omp_get_thread_num() * n, head = 0, tail = 0;
        int32_t *p = r->pred + (int64_t)i * n;
        for (int32_t v = 0; v < n; v++) p[v] = KRILL_APSP_NO_PRED;
        p[i] = i;                          /* a mark while searching; NO_PRED at the end */
        q[tail++] = i;
        while (head < tail) {
            int32_t u = q[head++];
            double du = dist_value(r, (int64_t)i * n + u);
            for (int64_t e = g->row_ptr[u]; e < g->row_ptr[u + 1]; e++) {
                int32_t v = g->col[e];
                double dv = dist_value(r, (int64_t)i * n + v);
                if (p[v] == KRILL_APSP_NO_PRED && isfinite(dv) &&
                    fabs(du + g->val[e] - dv) <= tight_tol(r, du + g->val[e], dv)) {
                    p[v] = u;
                    q[tail++] = v;
                }
            }
        }
        p[i] = KRILL_APSP_NO_PRED;
    }
cleanup:
    krill_free(queue);
    return st;
}

/* ---- the driver ----------------------------------------------------------------------- */

static krill_status run_rounds(apsp_run *run, const apsp_ops *ops, const apsp_device *dev,
                               const krill_apsp_opts *o, int stamp0)
{
    krill_status st = KRILL_OK;
    const int32_t rounds = run->npad / run->tile;
    const int32_t every = rounds >= 64 ? rounds / 64 : 1;
    for (int32_t k = 0; k < rounds; k++) {
        KRILL_TRY(ops->pivot(run, k));
        KRILL_TRY(dev->stamp(run, stamp0 + 3 * k + 1));
        KRILL_TRY(ops->panels(run, k));
        KRILL_TRY(dev->stamp(run, stamp0 + 3 * k + 2));
        KRILL_TRY(ops->rest(run, k));
        KRILL_TRY(dev->stamp(run, stamp0 + 3 * k + 3));
        if (o->progress && (k + 1) % every == 0) {
            KRILL_TRY(dev->sync(run));
            o->progress((double)(k + 1) / rounds, o->progress_user);
        }
    }
cleanup:
    return st;
}

static krill_status check_args(krill_ctx *ctx, const krill_csr *graph, const krill_apsp_opts *o)
{
    krill_status st = KRILL_OK;
    KRILL_REQUIRE(ctx != NULL, "krill_apsp_solve: ctx is NULL");
    KRILL_REQUIRE(graph != NULL, "krill_apsp_solve: graph is NULL");
    KRILL_REQUIRE(graph->n_rows == graph->n_cols, "krill_apsp_solve: the adjacency is %d x %d, "
                  "not square", graph->n_rows, graph->n_cols);
    KRILL_TRY(krill_csr_check(graph, "apsp graph"));
    KRILL_REQUIRE(o->weight == KRILL_APSP_INT32 || o->weight == KRILL_APSP_FLOAT ||
                  o->weight == KRILL_APSP_DOUBLE, "krill_apsp_solve: weight type %d unknown",
                  (int)o->weight);
    KRILL_REQUIRE(o->tile >= 0, "krill_apsp_solve: tile %d < 0", o->tile);
cleanup:
    return st;
}

krill_status krill_apsp_solve(krill_ctx *ctx, const krill_csr *graph, const krill_apsp_opts *opts,
                              krill_apsp **result, krill_apsp_info *info)
{
    krill_status st = KRILL_OK;
    const krill_apsp_opts defaults = KRILL_APSP_OPTS_INIT;
    const krill_apsp_opts *o = opts ? opts : &defaults;
    krill_apsp_info local;
    krill_apsp_info *inf = info ? info : &local;
    const apsp_method *method = NULL;
    const apsp_ops *ops = NULL;
    const apsp_device *dev = NULL;
    apsp_run run;
    krill_apsp *r = NULL;
    double *times = NULL, t0 = krill_wtime();
    int began = 0, n_stamps = 0, out_of_core = 0;
    memset(&run, 0, sizeof run);
    memset(inf, 0, sizeof *inf);
    inf->negative_cycle = -1;
    KRILL_REQUIRE(result != NULL, "krill_apsp_solve: result is NULL");
    *result = NULL;
    KRILL_TRY(check_args(ctx, graph, o));

    run.ctx = ctx;
    run.graph = graph;
    run.weight = o->weight;
    run.elem = weight_bytes(o->weight);
    run.n = graph->n_rows;
    inf->n = run.n;
    inf->arcs = graph->nnz;
#ifdef KRILL_HAVE_CUDA
    dev = krill_on_gpu(ctx) ? &apsp_gpu_device : &apsp_cpu_device;
#else
    dev = &apsp_cpu_device;
#endif
    KRILL_TRY(check_weights(&run));
    KRILL_TRY(choose_method(&run, o->method, &method, inf->why, sizeof inf->why));
    ops = krill_on_gpu(ctx) ? method->gpu : method->cpu;
    snprintf(inf->method, sizeof inf->method, "%s", method->name);
    KRILL_REQUIRE(!(ops->whole && ops->tile == 1 && o->tile > 1), "krill_apsp_solve: method "
                  "%s has no tile (tile %d asked for)", method->name, o->tile);
    run.tile = o->tile > 0 ? o->tile : ops->tile;
    KRILL_REQUIRE(ops->granule ? run.tile % ops->granule == 0 : run.tile == ops->tile,
                  "krill_apsp_solve: tile %d is not %s %d (method %s on the %s)", run.tile,
                  ops->granule ? "a multiple of" : "the fixed tile", ops->granule ? ops->granule
                  : ops->tile, method->name, krill_on_gpu(ctx) ? "GPU" : "CPU");
    run.npad = run.n == 0 ? 0 : (int32_t)(((int64_t)run.n + run.tile - 1) / run.tile * run.tile);
    inf->tile = ops->whole ? (run.tile > 1 ? run.tile : 0) : run.tile;
    inf->n_padded = run.npad;
    inf->relaxations = method->fills_d ? (double)run.n * (double)graph->nnz
                                       : (double)run.n * run.n * run.n;
    st = check_memory(&run, dev, ops, o->paths, &inf->bytes_needed);
    if ((st == KRILL_ERR_DEVICE_ALLOC ||
         (st == KRILL_OK && o->device_memory > 0 && inf->bytes_needed > o->device_memory)) &&
        ops->tile > 1 && run.n > 0) {             /* a blocked method: out of core (ooc.c) */
        KRILL_REQUIRE(!o->paths, "apsp: D and P of %d x %d need %.0f bytes of device memory, "
                      "more than %.0f; out of core computes distances only (drop the paths)",
                      run.n, run.n, inf->bytes_needed, o->device_memory > 0 ? o->device_memory
                      : inf->bytes_needed);
        krill_clear_error();
        st = KRILL_OK;
        out_of_core = 1;
    }
    KRILL_TRY(st);

    KRILL_CALLOC(r, 1);
    r->n = run.n;
    r->weight = run.weight;
    r->elem = run.elem;
    KRILL_TRY(krill_alloc_n(&r->dist, (size_t)run.n * (size_t)run.n + 1, run.elem, 0,
                            "APSP result D"));
    krill_advise_huge(r->dist, (size_t)run.n * (size_t)run.n * run.elem);
    if (o->paths)
        KRILL_TRY(krill_alloc_n((void **)&r->pred, (size_t)run.n * (size_t)run.n + 1,
                                sizeof(int32_t), 0, "APSP result P"));
    krill_advise_huge(r->pred, (size_t)run.n * (size_t)run.n * sizeof(int32_t));
    if (out_of_core) {
        double memory = o->device_memory;
        if (memory <= 0) KRILL_TRY(krill_overlap_default_memory(ctx, &memory));
        KRILL_TRY(apsp_ooc_run(&run, memory, r->dist, inf));
        snprintf(inf->why + strlen(inf->why), sizeof inf->why - strlen(inf->why),
                 "; out of core: D does not fit in %.0f bytes, blocks of %d streamed",
                 memory, inf->out_of_core);
        if (o->progress) o->progress(1.0, o->progress_user);
    } else if (run.n > 0) {
        const int32_t rounds = ops->whole ? 0 : run.npad / run.tile;
        n_stamps = ops->whole ? 3 : 3 * rounds + 2;
        KRILL_TRY(dev->alloc(&run, o->paths, n_stamps));
        KRILL_ALLOC(times, n_stamps);
        KRILL_TRY(dev->stamp(&run, 0));
        if (!method->fills_d) KRILL_TRY(dev->init(&run, &inf->t_upload));
        KRILL_TRY(dev->stamp(&run, 1));
        if (ops->begin) KRILL_TRY(ops->begin(&run));
        began = 1;
        if (ops->whole) {
            KRILL_TRY(ops->whole(&run));
            KRILL_TRY(dev->stamp(&run, 2));
        } else {
            KRILL_TRY(run_rounds(&run, ops, dev, o, 1));
        }
        KRILL_TRY(dev->elapsed(&run, n_stamps, times));
        inf->t_setup = times[0];
        for (int i = 1; i + 1 < n_stamps; i++) {
            double *kind = ops->whole ? &inf->t_compute
                                      : ((i - 1) % 3 == 0 ? &inf->t_pivot
                                         : (i - 1) % 3 == 1 ? &inf->t_panels : &inf->t_rest);
            *kind += times[i];
        }
        if (!ops->whole) inf->t_compute = inf->t_pivot + inf->t_panels + inf->t_rest;
        inf->t_pivot += run.t_hidden_pivot;      /* overlapped: not in t_compute again */
        inf->t_panels += run.t_hidden_panels;
        double t_fetch = krill_wtime();
        KRILL_TRY(dev->fetch(&run, r->dist, r->pred));
        inf->t_download = krill_wtime() - t_fetch;
        if (o->progress) o->progress(1.0, o->progress_user);
    }
    inf->negative_cycle = negative_vertex(r);
    if (inf->negative_cycle >= 0) {
        st = negative_cycle_error(graph, inf->negative_cycle, &inf->negative_cycle);
        goto cleanup;
    }
    if (r->pred && closes_zero_cycle(graph, r))
        KRILL_TRY(rebuild_pred(graph, r, krill_ctx_threads(ctx)));
    *result = r;
    r = NULL;
cleanup:
    if (began && ops->end) ops->end(&run);
    if (dev) dev->release(&run);
    krill_free(times);
    krill_apsp_destroy(&r);
    inf->t_total = krill_wtime() - t0;
    return st;
}

/* ---- the result ------------------------------------------------------------------------ */

void krill_apsp_destroy(krill_apsp **result)
{
    if (result && *result) {
        krill_free((*result)->dist);
        krill_free((*result)->pred);
        krill_free(*result);
        *result = NULL;
    }
}

int32_t krill_apsp_n(const krill_apsp *r) { return r ? r->n : 0; }
krill_apsp_weight krill_apsp_weight_type(const krill_apsp *r) { return r ? r->weight : KRILL_APSP_INT32; }
const void *krill_apsp_dist(const krill_apsp *r) { return r ? r->dist : NULL; }
const int32_t *krill_apsp_pred(const krill_apsp *r) { return r ? r->pred : NULL; }

double krill_apsp_dist_at(const krill_apsp *r, int32_t i, int32_t j)
{
    if (!r || i < 0 || j < 0 || i >= r->n || j >= r->n) return NAN;
    return dist_value(r, (int64_t)i * r->n + j);
}

krill_status krill_apsp_path(const krill_apsp *r, int32_t i, int32_t j, int32_t *path, int32_t *len)
{
    krill_status st = KRILL_OK;
    KRILL_REQUIRE(r != NULL && path != NULL && len != NULL, "krill_apsp_path: NULL argument");
    *len = 0;
    KRILL_REQUIRE(r->pred != NULL, "krill_apsp_path: the solve did not compute predecessors "
                  "(set opts.paths = 1)");
    KRILL_REQUIRE(i >= 0 && i < r->n && j >= 0 && j < r->n, "krill_apsp_path: vertex %d or %d "
                  "outside 0..%d", i, j, r->n - 1);
    if (i == j) {
        path[0] = i;
        *len = 1;
    } else if (!isinf(krill_apsp_dist_at(r, i, j))) {
        const int32_t *p = r->pred + (int64_t)i * r->n;
        int32_t count = 0, v = j;
        while (v != i && v >= 0 && count < r->n) {
            path[count++] = v;
            v = p[v];
        }
        if (v != i) {
            st = krill_error(KRILL_ERR_INTERNAL, "krill_apsp_path: the predecessors of %d -> %d "
                             "do not lead back to %d", i, j, i);
            goto cleanup;
        }
        KRILL_REQUIRE(count < r->n, "krill_apsp_path: a path of more than %d vertices", r->n);
        path[count++] = i;
        for (int32_t a = 0, b = count - 1; a < b; a++, b--) {
            int32_t t = path[a];
            path[a] = path[b];
            path[b] = t;
        }
        *len = count;
    }
cleanup:
    return st;
}

void krill_apsp_summary(const krill_apsp *r, int64_t *unreachable, double *max_finite,
                        uint64_t *checksum)
{
    int64_t unreach = 0;
    double largest = -INFINITY;        /* 0 when there is no finite pair i != j */
    uint64_t h = 14695981039346656037ull;
    const int64_t n = r ? r->n : 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            double d = dist_value(r, i * n + j);
            if (i == j) continue;
            if (isinf(d)) unreach++;
            else if (d > largest) largest = d;
        }
    const unsigned char *bytes = r ? (const unsigned char *)r->dist : NULL;
    for (size_t b = 0; b < (size_t)(n * n) * (r ? r->elem : 0); b++) {
        h ^= bytes[b];
        h *= 1099511628211ull;
    }
    if (unreachable) *unreachable = unreach;
    if (max_finite) *max_finite = isinf(largest) ? 0.0 : largest;
    if (checksum) *checksum = h;
}
