/* io/graph_edgelist.c - the SNAP-style edge-list reader.
 *
 *   # comment (or % comment), anywhere; blank lines skipped
 *   U V [W]                 one arc U -> V (both U -> V and V -> U when undirected) of
 *                           weight W, a finite real (1 when absent); blanks or tabs between,
 *                           CRLF line endings accepted
 *
 * Ids are non-negative decimal integers (at most 18 digits). krill_graph_ids says how they
 * become vertices: REMAP numbers the distinct ids in increasing order - through a table over
 * 0..max id when the ids are dense (SNAP's usually are), else by an LSD radix sort of all
 * ids and a binary search per id (no table of the size of a large max id);
 * BASE0 / BASE1 take them as vertex numbers from 0 / 1, so n = the largest id + 1 / the
 * largest id, and an id that would make n exceed INT32_MAX (or id 0 under BASE1) is a
 * parse error on its line. A file without any edge is a parse error (no vertices). */
#include <locale.h>
#include <string.h>

#include "io/io_impl.h"

#define RADIX_BITS 8
#define RADIX (1 << RADIX_BITS)

/* Sort keys[0..n) ascending (LSD radix, scratch of n), only over the bytes up to `max`'s
 * highest one. */
static void radix_sort(uint64_t *keys, uint64_t *scratch, int64_t n, uint64_t max)
{
    uint64_t *from = keys, *to = scratch;
    for (int shift = 0; shift < 64 && (max >> shift) != 0; shift += RADIX_BITS) {
        int64_t count[RADIX + 1];
        memset(count, 0, sizeof count);
        for (int64_t k = 0; k < n; k++) count[((from[k] >> shift) & (RADIX - 1)) + 1]++;
        for (int b = 0; b < RADIX; b++) count[b + 1] += count[b];
        for (int64_t k = 0; k < n; k++) to[count[(from[k] >> shift) & (RADIX - 1)]++] = from[k];
        uint64_t *t = from;
        from = to;
        to = t;
    }
    if (from != keys) memcpy(keys, from, (size_t)n * sizeof *keys);
}

/* Position of id in the sorted distinct ids u[0..d) (it is there). */
static int64_t rank_of(const uint64_t *u, int64_t d, uint64_t id)
{
    int64_t lo = 0, hi = d;
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (u[mid] <= id) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* REMAP when the ids are dense (max_id + 1 <= DENSE_FACTOR * count + DENSE_SLACK): a
 * table over 0..max_id marks the ids that occur, then holds their ranks. */
#define DENSE_FACTOR 4
#define DENSE_SLACK 4096

static krill_status remap_dense(int64_t *ends, int64_t count, int64_t max_id, int64_t *n)
{
    krill_status st = KRILL_OK;
    int64_t *rank = NULL;
    KRILL_CALLOC(rank, max_id + 1);
    for (int64_t k = 0; k < count; k++) rank[ends[k]] = 1;
    int64_t d = 0;
    for (int64_t id = 0; id <= max_id; id++) {
        int64_t present = rank[id];
        rank[id] = d;
        d += present;
    }
    for (int64_t k = 0; k < count; k++) ends[k] = rank[ends[k]];
    *n = d;
cleanup:
    krill_free(rank);
    return st;
}

/* REMAP for any ids: sorted distinct ids and a binary search per id. */
static krill_status remap_sparse(int64_t *ends, int64_t count, int64_t max_id, int64_t *n)
{
    krill_status st = KRILL_OK;
    uint64_t *u = NULL, *scratch = NULL;
    KRILL_ALLOC(u, count);
    KRILL_ALLOC(scratch, count);
    for (int64_t k = 0; k < count; k++) u[k] = (uint64_t)ends[k];
    radix_sort(u, scratch, count, (uint64_t)max_id);
    int64_t d = 0;
    for (int64_t k = 0; k < count; k++)
        if (k == 0 || u[k] != u[d - 1]) u[d++] = u[k];
    for (int64_t k = 0; k < count; k++) ends[k] = rank_of(u, d, (uint64_t)ends[k]);
    *n = d;
cleanup:
    krill_free(u);
    krill_free(scratch);
    return st;
}

/* The vertex of every id in ends[0..count) in place (REMAP), and the vertex count. */
static krill_status remap(const char *name, int64_t last, int64_t *ends, int64_t count,
                          int64_t max_id, int64_t *n)
{
    krill_status st = KRILL_OK;
    if (max_id < DENSE_FACTOR * count + DENSE_SLACK) {
        KRILL_TRY(remap_dense(ends, count, max_id, n));
    } else {
        KRILL_TRY(remap_sparse(ends, count, max_id, n));
    }
    if (*n > INT32_MAX)
        st = krill_error(KRILL_ERR_PARSE, "%s:%lld: %lld distinct vertex ids: a graph has at "
                         "most %d vertices", name, (long long)last, (long long)*n, INT32_MAX);
cleanup:
    return st;
}

krill_status graph_read_edgelist(const char *name, const char *text, size_t len,
                                 krill_graph_ids ids, int undirected, krill_csr **graph,
                                 krill_graph_info *info)
{
    krill_status st = KRILL_OK;
    graph_arcs arcs = {0, 0, NULL, NULL, NULL};
    graph_src s = {name, 0, localeconv()->decimal_point[0]};
    int64_t *ends = NULL;            /* the ids of edge k at 2k (first) and 2k + 1 (second) */
    double *w = NULL;
    const char *p = text, *end = text + len;
    const int64_t lines = graph_count_lines(text, len);
    const int64_t lo = ids == KRILL_GRAPH_IDS_BASE1 ? 1 : 0;
    const int64_t hi = ids == KRILL_GRAPH_IDS_BASE0   ? INT32_MAX - 1
                       : ids == KRILL_GRAPH_IDS_BASE1 ? INT32_MAX
                                                      : 999999999999999999;
    const int per_edge = undirected ? 2 : 1;
    int64_t edges = 0, max_id = -1, n = 0;

    KRILL_ALLOC(ends, 2 * lines);
    KRILL_ALLOC(w, lines);
    while (p < end) {
        const char *le = graph_line_end(p, end), *q = graph_skip_blanks(p, le);
        s.line++;
        p = le < end ? le + 1 : end;
        if (q == le || *q == '#' || *q == '%') continue;     /* blank or comment */
        int64_t a = 0, b = 0;
        double weight = 1.0;
        KRILL_TRY(graph_read_index(&s, &q, le, "first vertex id", lo, hi, &a));
        KRILL_TRY(graph_read_index(&s, &q, le, "second vertex id", lo, hi, &b));
        q = graph_skip_blanks(q, le);
        if (q < le) {
            KRILL_TRY(graph_read_weight(&s, &q, le, 0, "weight", &weight));
            KRILL_TRY(graph_line_done(&s, q, le, "the weight"));
        }
        ends[2 * edges] = a;
        ends[2 * edges + 1] = b;
        w[edges++] = weight;
        if (a > max_id) max_id = a;
        if (b > max_id) max_id = b;
        info->max_id = max_id;
        info->arcs_read = edges * per_edge;
    }
    if (edges == 0) {
        st = krill_error(KRILL_ERR_PARSE, "%s:%lld: %s", name, (long long)(lines > 0 ? lines : 1),
                         len == 0 ? "empty file: expected lines 'U V [W]'"
                                  : "no edges (lines 'U V [W]'): a graph needs a vertex");
        goto cleanup;
    }
    if (ids == KRILL_GRAPH_IDS_REMAP) {
        KRILL_TRY(remap(name, lines, ends, 2 * edges, max_id, &n));
    } else {
        n = ids == KRILL_GRAPH_IDS_BASE0 ? max_id + 1 : max_id;
        for (int64_t k = 0; k < 2 * edges; k++) ends[k] -= lo;
    }
    info->n = (int32_t)n;
    KRILL_TRY(graph_check_memory(name, lines, n, edges * per_edge));
    KRILL_TRY(graph_arcs_alloc(&arcs, edges * per_edge));
    for (int64_t k = 0; k < edges; k++) {
        int64_t c = arcs.count++;
        arcs.src[c] = (int32_t)ends[2 * k];
        arcs.dst[c] = (int32_t)ends[2 * k + 1];
        arcs.w[c] = w[k];
        if (undirected) {
            c = arcs.count++;
            arcs.src[c] = (int32_t)ends[2 * k + 1];
            arcs.dst[c] = (int32_t)ends[2 * k];
            arcs.w[c] = w[k];
        }
    }
    krill_free(ends);              /* lower the peak: the arcs hold everything now */
    ends = NULL;
    krill_free(w);
    w = NULL;
    KRILL_TRY(graph_build((int32_t)n, &arcs, graph, info));
cleanup:
    krill_free(ends);
    krill_free(w);
    graph_arcs_free(&arcs);
    return st;
}
