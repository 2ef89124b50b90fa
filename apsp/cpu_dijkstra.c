/* apsp/cpu_dijkstra.c - all-pairs shortest paths by Dijkstra's algorithm from every source
 * (weights >= 0): the "dijkstra" method, for sparse graphs.
 *
 * Reference: E. W. Dijkstra, "A note on two problems in connexion with graphs", Numer.
 * Math. 1, 1959; the binary heap with decrease-key of Cormen, Leiserson, Rivest, Stein,
 * Introduction to Algorithms, 3rd ed., sections 6.5 and 24.3.
 *
 *   for every source s, in parallel (dynamic schedule: rows cost what s reaches):
 *     dist = inf, pred = NO_PRED; dist[s] = 0; heap = {s}
 *     while the heap is not empty: u = extract-min
 *       for each arc u -> v of weight w:  d = dist[u] + w (rounded to the weight type)
 *         if d < dist[v]: dist[v] = d, pred[v] = u, insert v or decrease its key
 *     row s of D = dist (INF where unreachable), of P = pred
 * Weights are converted as the device layer does (int32: (int32_t) w, float: (float) w),
 * and the sums are kept as doubles rounded to the weight type after each addition: exact
 * for int32 (the driver bounds every path below 2^30), the float sum itself for float (a
 * double holds the exact sum of two floats to within one rounding, and rounding that to
 * float gives the correctly rounded float sum), so D is what float arithmetic along each
 * path gives. Relaxation is strict, so a vertex keeps the first predecessor that reached
 * its distance. The padding rows and columns of D (and P) are written too (INF, 0 on the
 * diagonal, NO_PRED), so the method fills D by itself (fills_d).
 *
 * Per thread, once: dist (8 n bytes), pred, heap and position (4 n each): 20 n bytes.
 * Memory traffic per source: the graph's reachable rows (12 bytes an arc: column and
 * value), the scratch (O(n) in L2 for n up to ~50 000), and one row of D (and P) written:
 * n (m + n) log n work in all, npad^2 (s + 4) bytes of output. */
#include <math.h>

#include "apsp/apsp_impl.h"

typedef struct dj_scratch {
    double *dist;        /* n: tentative distances (as doubles, in the weight type's values) */
    int32_t *pred;       /* n */
    int32_t *heap;       /* n: vertices, a binary min-heap on dist */
    int32_t *pos;        /* n: where v is in the heap; -1 never inserted, -2 settled */
} dj_scratch;

static void heap_up(dj_scratch *w, int32_t at)
{
    const int32_t v = w->heap[at];
    while (at > 0) {
        const int32_t parent = (at - 1) / 2, pv = w->heap[parent];
        if (!(w->dist[v] < w->dist[pv])) break;
        w->heap[at] = pv;
        w->pos[pv] = at;
        at = parent;
    }
    w->heap[at] = v;
    w->pos[v] = at;
}

static int32_t heap_pop(dj_scratch *w, int32_t *size)
{
    const int32_t top = w->heap[0], v = w->heap[--*size];
    int32_t at = 0;
    for (;;) {   /* sift v down from the root */
        int32_t child = 2 * at + 1;
        if (child >= *size) break;
        if (child + 1 < *size && w->dist[w->heap[child + 1]] < w->dist[w->heap[child]]) child++;
        if (!(w->dist[w->heap[child]] < w->dist[v])) break;
        w->heap[at] = w->heap[child];
        w->pos[w->heap[at]] = at;
        at = child;
    }
    if (*size > 0) {
        w->heap[at] = v;
        w->pos[v] = at;
    }
    w->pos[top] = -2;
    return top;
}

/* the weight and the sum rounded to the weight type */
static inline double dj_weight(krill_apsp_weight type, double val)
{
    return type == KRILL_APSP_INT32 ? (double)(int32_t)val
           : type == KRILL_APSP_FLOAT ? (double)(float)val : val;
}
static inline double dj_round(krill_apsp_weight type, double sum)
{
    return type == KRILL_APSP_FLOAT ? (double)(float)sum : sum;
}

/* row s of D and P: the distances from s (s < n) or a padding row (s >= n) */
static void dj_store(const apsp_run *run, int64_t s, const dj_scratch *w)
{
    const int64_t npad = run->npad, n = run->n;
    int32_t *p = run->p ? run->p + s * npad : NULL;
    for (int64_t v = 0; v < npad; v++) {
        const int real = s < n && v < n;
        const double d = real ? w->dist[v] : (v == s ? 0.0 : INFINITY);
        if (run->weight == KRILL_APSP_INT32)
            ((int32_t *)run->d)[s * npad + v] = isinf(d) ? APSP_I32_INF : (int32_t)d;
        else if (run->weight == KRILL_APSP_FLOAT)
            ((float *)run->d)[s * npad + v] = (float)d;
        else
            ((double *)run->d)[s * npad + v] = d;
        if (p) p[v] = real ? w->pred[v] : KRILL_APSP_NO_PRED;
    }
}

static void dj_source(const apsp_run *run, int32_t s, dj_scratch *w)
{
    const krill_csr *g = run->graph;
    int32_t size = 0;
    for (int32_t v = 0; v < run->n; v++) {
        w->dist[v] = INFINITY;
        w->pred[v] = KRILL_APSP_NO_PRED;
        w->pos[v] = -1;
    }
    w->dist[s] = 0.0;
    w->heap[size++] = s;
    w->pos[s] = 0;
    while (size > 0) {
        const int32_t u = heap_pop(w, &size);
        const double du = w->dist[u];
        for (int64_t e = g->row_ptr[u]; e < g->row_ptr[u + 1]; e++) {
            const int32_t v = g->col[e];
            const double d = dj_round(run->weight, du + dj_weight(run->weight, g->val[e]));
            if (w->pos[v] == -2 || !(d < w->dist[v])) continue;
            w->dist[v] = d;
            w->pred[v] = u;
            if (w->pos[v] == -1) {
                w->heap[size] = v;
                w->pos[v] = size++;
            }
            heap_up(w, w->pos[v]);
        }
    }
}

static krill_status dj_whole(apsp_run *run)
{
    krill_status st = KRILL_OK;
    const int64_t npad = run->npad, n = run->n;
    const size_t bytes = (size_t)(n > 0 ? n : 1) * (sizeof(double) + 3 * sizeof(int32_t));
    const int threads = krill_ctx_threads(run->ctx) > 0 ? krill_ctx_threads(run->ctx) : 1;
    int failed = 0;
#pragma omp parallel num_threads(threads)
    {
        void *mem = NULL;
        dj_scratch w;
        if (krill_alloc(&mem, bytes, "dijkstra: a thread's scratch") != KRILL_OK) {
#pragma omp atomic write
            failed = 1;
        }
        w.dist = (double *)mem;
        w.pred = mem ? (int32_t *)(w.dist + n) : NULL;
        w.heap = mem ? w.pred + n : NULL;
        w.pos = mem ? w.heap + n : NULL;
#pragma omp for schedule(dynamic, 4)
        for (int64_t s = 0; s < npad; s++) {
            int stop;
#pragma omp atomic read
            stop = failed;
            if (stop) continue;          /* the solve fails: no more work */
            if (s < n) dj_source(run, (int32_t)s, &w);
            dj_store(run, s, &w);
        }
        krill_free(mem);
    }
    if (failed)   /* the message was set on the thread that failed: say it here */
        st = krill_error(KRILL_ERR_ALLOC, "dijkstra: could not allocate %zu bytes of scratch "
                         "for each of %d threads", bytes, threads);
    return st;
}

const apsp_ops apsp_cpu_dijkstra = {
    .tile = 1,
    .granule = 1,
    .whole = dj_whole,
};
