/* order/rcm.c - Reverse Cuthill-McKee ordering.
 *
 * Graph: vertex i for row and column i, an edge {i, j} for every entry a_ij or a_ji with
 * i != j: the pattern of A + A^T without the diagonal, so a nonsymmetric pattern is
 * renumbered by its symmetric hull.
 *
 * Algorithm (Cuthill and McKee 1969, reversed as George 1971 proposed; start nodes by the
 * pseudo-peripheral node finder of George and Liu 1979):
 *   1. Adjacency lists of the graph: row v of A merged with row v of A^T, v dropped;
 *      deg(v) = length of v's list.
 *   2. Every list sorted by (degree, index) at once: take the vertices in increasing
 *      (degree, index) order (a counting sort by degree) and append each one to the lists
 *      of its neighbours. A breadth-first search over these lists visits each vertex's
 *      unvisited neighbours in increasing degree, which is the Cuthill-McKee rule, so the
 *      search's queue IS the Cuthill-McKee sequence of its component.
 *   3. Each connected component, taken in the order of its vertex of least (degree, index)
 *      r: BFS from r gives the rooted level structure of eccentricity e(r); x = the vertex of
 *      least degree in its last level; BFS from x; if e(x) > e(r), r = x and repeat, else x
 *      is pseudo-peripheral and the queue of its BFS is the component's sequence.
 *   4. The whole sequence reversed: perm[new] = cm[n - 1 - new].
 *
 * Cost: steps 1, 2 and 4 are O(n + nnz) time; a BFS of step 3 is O(edges of the component)
 * and a component takes at most RCM_MAX_SWEEPS of them, so the ordering is O(n + nnz), no
 * sorting by comparison anywhere. Memory besides perm: at most 4 bytes per entry of A (the
 * pattern of A^T) plus 8 per edge (two copies of the lists), 28 bytes per vertex and a
 * degree histogram. */
#include <string.h>

#include "core/core_impl.h"
#include "krill/order.h"
#include "order/order_impl.h"

/* Most breadth-first searches per component in the pseudo-peripheral search. Every search
 * but the last raises the eccentricity, which starts at diameter / 2 or more, so the search
 * ends by itself after at most diameter / 2 + 2 of them; on the generators and on every
 * testdata matrix it ended after 2 to 4. The cap only bounds the cost on graphs built to
 * creep one level per search; the node it stops at is still the most eccentric seen. */
#define RCM_MAX_SWEEPS 16

typedef struct rcm_graph {
    int32_t n;
    int64_t *xadj;           /* n + 1 offsets into adj */
    int32_t *adj;            /* neighbours of v at adj[xadj[v] .. xadj[v+1]) */
} rcm_graph;

static int32_t degree(const rcm_graph *g, int32_t v)
{
    return (int32_t)(g->xadj[v + 1] - g->xadj[v]);
}

/* The union of two sorted lists without `skip`, into out (when not NULL); returns its
 * length. */
static int64_t merge_lists(const int32_t *x, int64_t nx, const int32_t *y, int64_t ny,
                           int32_t skip, int32_t *out)
{
    int64_t i = 0, j = 0, len = 0;
    while (i < nx || j < ny) {
        int32_t next;
        if (j == ny || (i < nx && x[i] < y[j])) next = x[i++];
        else if (i == nx || y[j] < x[i]) next = y[j++];
        else { next = x[i++]; j++; }          /* in both: a_ij and a_ji */
        if (next == skip) continue;
        if (out) out[len] = next;
        len++;
    }
    return len;
}

/* Step 1: the list of v is the union of row v of A and row v of A^T (both sorted and
 * unique: A^T is built by a counting pass, which leaves its rows sorted) without v itself. */
static krill_status hull_adjacency(const krill_csr *a, rcm_graph *g)
{
    krill_status st = KRILL_OK;
    const int32_t n = a->n_rows;
    int64_t *t_ptr = NULL, *fill = NULL;
    int32_t *t_col = NULL;
    KRILL_CALLOC(t_ptr, (size_t)n + 1);
    for (int64_t p = 0; p < a->nnz; p++) t_ptr[a->col[p] + 1]++;
    for (int32_t i = 0; i < n; i++) t_ptr[i + 1] += t_ptr[i];
    KRILL_ALLOC(t_col, a->nnz);
    KRILL_ALLOC(fill, n);
    memcpy(fill, t_ptr, (size_t)n * sizeof *fill);
    for (int32_t i = 0; i < n; i++)
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++) t_col[fill[a->col[p]]++] = i;

    g->n = n;
    KRILL_CALLOC(g->xadj, (size_t)n + 1);
    for (int32_t v = 0; v < n; v++)     /* lengths first, then the lists */
        g->xadj[v + 1] = g->xadj[v] +
            merge_lists(a->col + a->row_ptr[v], a->row_ptr[v + 1] - a->row_ptr[v],
                        t_col + t_ptr[v], t_ptr[v + 1] - t_ptr[v], v, NULL);
    KRILL_ALLOC(g->adj, g->xadj[n]);
    for (int32_t v = 0; v < n; v++)
        merge_lists(a->col + a->row_ptr[v], a->row_ptr[v + 1] - a->row_ptr[v],
                    t_col + t_ptr[v], t_ptr[v + 1] - t_ptr[v], v, g->adj + g->xadj[v]);
cleanup:
    krill_free(t_ptr);
    krill_free(t_col);
    krill_free(fill);
    return st;
}

/* Step 2: `order` = the vertices by increasing (degree, index) (counting sort on the degree;
 * a stable pass keeps the index order within a degree), and every list of g rewritten in
 * that order. */
static krill_status sort_by_degree(rcm_graph *g, int32_t *order)
{
    krill_status st = KRILL_OK;
    const int32_t n = g->n;
    int32_t max_degree = 0;
    int64_t *start = NULL, *fill = NULL;
    int32_t *sorted = NULL;
    for (int32_t v = 0; v < n; v++)
        if (degree(g, v) > max_degree) max_degree = degree(g, v);
    KRILL_CALLOC(start, (size_t)max_degree + 2);
    for (int32_t v = 0; v < n; v++) start[degree(g, v) + 1]++;
    for (int32_t d = 0; d <= max_degree; d++) start[d + 1] += start[d];
    for (int32_t v = 0; v < n; v++) order[start[degree(g, v)]++] = v;

    KRILL_ALLOC(sorted, g->xadj[n]);
    KRILL_ALLOC(fill, n);
    memcpy(fill, g->xadj, (size_t)n * sizeof *fill);
    for (int32_t k = 0; k < n; k++) {   /* symmetric lists: v is in u's list iff u in v's */
        const int32_t v = order[k];
        for (int64_t p = g->xadj[v]; p < g->xadj[v + 1]; p++) sorted[fill[g->adj[p]]++] = v;
    }
    krill_free(g->adj);
    g->adj = sorted;
    sorted = NULL;
cleanup:
    krill_free(start);
    krill_free(fill);
    krill_free(sorted);
    return st;
}

/* BFS from root over the vertices with level -1, writing the visit order to queue and each
 * visited vertex's distance from root to level. Returns the number visited; *last receives
 * the queue position where the last level starts. */
static int32_t level_structure(const rcm_graph *g, int32_t root, int32_t *queue, int32_t *level,
                               int32_t *last)
{
    int32_t head = 0, tail = 1;
    queue[0] = root;
    level[root] = 0;
    while (head < tail) {
        const int32_t v = queue[head++];
        for (int64_t p = g->xadj[v]; p < g->xadj[v + 1]; p++)
            if (level[g->adj[p]] < 0) {
                level[g->adj[p]] = level[v] + 1;
                queue[tail++] = g->adj[p];
            }
    }
    int32_t lo = tail - 1;
    while (lo > 0 && level[queue[lo - 1]] == level[queue[tail - 1]]) lo--;
    *last = lo;
    return tail;
}

/* Step 3 for the component of `start`: its Cuthill-McKee sequence into queue (which has room
 * for the component), its vertices left with level >= 0 (numbered). Returns its size. */
static int32_t number_component(const rcm_graph *g, int32_t start, int32_t *queue, int32_t *level)
{
    int32_t last = 0;
    int32_t size = level_structure(g, start, queue, level, &last);
    int32_t eccentricity = level[queue[size - 1]];
    for (int sweep = 1; sweep < RCM_MAX_SWEEPS; sweep++) {
        int32_t x = queue[last];
        for (int32_t k = last + 1; k < size; k++) {
            const int32_t v = queue[k];
            if (degree(g, v) < degree(g, x) || (degree(g, v) == degree(g, x) && v < x)) x = v;
        }
        for (int32_t k = 0; k < size; k++) level[queue[k]] = -1;
        size = level_structure(g, x, queue, level, &last);
        if (level[queue[size - 1]] <= eccentricity) break;   /* x is pseudo-peripheral */
        eccentricity = level[queue[size - 1]];
    }
    return size;
}

krill_status krill_order_rcm(const krill_csr *a, int32_t *perm)
{
    krill_status st = KRILL_OK;
    rcm_graph g = { 0 };
    int32_t *order = NULL, *level = NULL;
    KRILL_TRY(krill_order_check_square(a, "krill_order_rcm"));
    KRILL_REQUIRE(perm != NULL || a->n_rows == 0, "krill_order_rcm: perm is NULL");
    const int32_t n = a->n_rows;
    KRILL_TRY(hull_adjacency(a, &g));
    KRILL_ALLOC(order, n);
    KRILL_TRY(sort_by_degree(&g, order));
    KRILL_ALLOC(level, n);
    for (int32_t v = 0; v < n; v++) level[v] = -1;

    /* perm first holds the Cuthill-McKee sequence, component after component */
    int32_t numbered = 0;
    for (int32_t k = 0; k < n; k++)
        if (level[order[k]] < 0)
            numbered += number_component(&g, order[k], perm + numbered, level);
    for (int32_t i = 0, j = n - 1; i < j; i++, j--) {
        const int32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
cleanup:
    krill_free(g.xadj);
    krill_free(g.adj);
    krill_free(order);
    krill_free(level);
    return st;
}
