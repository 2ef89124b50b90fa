/* dist/partition.c - rank 0's METIS graph partition for krill_dist_mat_scatter_metis (local;
 * the collective steps are scatter.c's). Built with or without METIS (KRILL_HAVE_METIS):
 * without it krill_dist_have_metis() is 0 and krill_dist_metis_order refuses.
 *
 * The graph is the pattern of A + A^T without self loops (METIS wants an undirected graph:
 * an edge i - j wherever a_ij or a_ji is stored, i != j), each vertex weighted by its row's
 * entry count, so METIS balances nonzeros as krill's default row blocks do (within its 3%
 * imbalance tolerance) while it minimises the edge cut, which is the halo: a cut edge i - j
 * makes x_j a ghost of i's rank, or x_i one of j's. The permutation groups each part's rows
 * in ascending original order (a stable counting sort), so part p becomes the row block
 * [offsets[p], offsets[p+1]). Costs: memory 4 (2 nnz + 3 n) bytes for the graph (idx_t of
 * 32 bits, Debian's), time O(nnz log d) for sorting the adjacency lists (d: the longest row)
 * plus METIS's multilevel k-way, about O(nnz). */
#include <stdlib.h>

#include "dist/dist_impl.h"

#ifdef KRILL_HAVE_METIS
#include <metis.h>

static int cmp_idx(const void *x, const void *y)
{
    const idx_t a = *(const idx_t *)x, b = *(const idx_t *)y;
    return (a > b) - (a < b);
}

/* xadj / adjncy of A + A^T without the diagonal: every stored a_ij (i != j) puts j in i's
 * list and i in j's; each list is then sorted and its duplicates (a_ij and a_ji both stored)
 * dropped, compacting the lists in place. *edges: adjncy's final length (twice the edges). */
static krill_status build_graph(const krill_csr *a, idx_t **xadj_out, idx_t **adj_out,
                                int64_t *edges)
{
    krill_status st = KRILL_OK;
    const int32_t n = a->n_rows;
    idx_t *xadj = NULL, *adj = NULL;
    int64_t *fill = NULL, total = 0, w = 0;
    KRILL_TRY(krill_alloc_n((void **)&xadj, (size_t)n + 1, sizeof *xadj, 1, "METIS graph"));
    KRILL_TRY(krill_alloc_n((void **)&fill, (size_t)n + 1, sizeof *fill, 1, "METIS graph"));
    for (int32_t i = 0; i < n; i++)
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
            if (a->col[p] != i) {
                fill[i + 1]++;
                fill[a->col[p] + 1]++;
            }
    for (int32_t i = 0; i < n; i++) fill[i + 1] += fill[i];
    total = fill[n];
    if (total > (int64_t)IDX_MAX) {
        st = krill_error(KRILL_ERR_UNSUPPORTED, "krill_dist_mat_scatter_metis: the graph of A + "
                         "A^T has %lld adjacency entries, more than METIS's idx_t holds",
                         (long long)total);
        goto cleanup;
    }
    KRILL_TRY(krill_alloc_n((void **)&adj, (size_t)(total > 0 ? total : 1), sizeof *adj, 0,
                            "METIS graph"));
    for (int32_t i = 0; i < n; i++)
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
            if (a->col[p] != i) {
                adj[fill[i]++] = a->col[p];
                adj[fill[a->col[p]]++] = i;
            }
    /* fill[i] now ends list i; list i starts where list i - 1 ended */
    for (int32_t i = 0; i < n; i++) {
        const int64_t start = i == 0 ? 0 : fill[i - 1], end = fill[i];
        qsort(adj + start, (size_t)(end - start), sizeof *adj, cmp_idx);
        xadj[i] = (idx_t)w;
        for (int64_t p = start; p < end; p++)
            if (p == start || adj[p] != adj[p - 1]) adj[w++] = adj[p];
    }
    xadj[n] = (idx_t)w;
    *edges = w;
    *xadj_out = xadj;
    *adj_out = adj;
    xadj = adj = NULL;
cleanup:
    krill_free(xadj);
    krill_free(adj);
    krill_free(fill);
    return st;
}

krill_status krill_dist_metis_order(const krill_csr *a, int parts, int32_t *perm,
                                    int64_t *offsets, int *used)
{
    krill_status st = KRILL_OK;
    const int32_t n = a->n_rows;
    idx_t *xadj = NULL, *adj = NULL, *vwgt = NULL, *part = NULL;
    idx_t nvtxs = n, ncon = 1, nparts = parts, objval = 0, options[METIS_NOPTIONS];
    int64_t edges = 0;
    int rc;
    *used = 0;
    if (parts < 2 || n < parts) goto cleanup;   /* nothing to partition: the caller's rows */
    KRILL_TRY(build_graph(a, &xadj, &adj, &edges));
    if (edges == 0) goto cleanup;                /* no edge to cut (diagonal A): rows */
    KRILL_TRY(krill_alloc_n((void **)&vwgt, (size_t)n, sizeof *vwgt, 0, "METIS weights"));
    KRILL_TRY(krill_alloc_n((void **)&part, (size_t)n, sizeof *part, 0, "METIS parts"));
    for (int32_t i = 0; i < n; i++) {
        const int64_t e = a->row_ptr[i + 1] - a->row_ptr[i];
        vwgt[i] = (idx_t)(e > 0 ? (e < IDX_MAX ? e : IDX_MAX) : 1);
    }
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_NUMBERING] = 0;
    options[METIS_OPTION_SEED] = 1;   /* the same partition on every run */
    rc = METIS_PartGraphKway(&nvtxs, &ncon, xadj, adj, vwgt, NULL, NULL, &nparts, NULL, NULL,
                             options, &objval, part);
    if (rc != METIS_OK) {
        st = krill_error(rc == METIS_ERROR_MEMORY ? KRILL_ERR_ALLOC : KRILL_ERR_INTERNAL,
                         "krill_dist_mat_scatter_metis: METIS_PartGraphKway failed (%s, %d "
                         "vertices, %lld edges, %d parts)", rc == METIS_ERROR_MEMORY ?
                         "out of memory" : rc == METIS_ERROR_INPUT ? "bad input" : "error",
                         n, (long long)(edges / 2), parts);
        goto cleanup;
    }
    /* stable counting sort by part: offsets[p] = the rows of parts before p */
    for (int p = 0; p <= parts; p++) offsets[p] = 0;
    for (int32_t i = 0; i < n; i++) offsets[part[i] + 1]++;
    for (int p = 0; p < parts; p++) offsets[p + 1] += offsets[p];
    {
        int64_t *next = offsets;   /* reuse: advanced per part, restored below */
        for (int32_t i = 0; i < n; i++) perm[next[part[i]]++] = i;
        for (int p = parts; p > 0; p--) offsets[p] = offsets[p - 1];
        offsets[0] = 0;
    }
    *used = 1;
cleanup:
    krill_free(xadj);
    krill_free(adj);
    krill_free(vwgt);
    krill_free(part);
    return st;
}

int krill_dist_have_metis(void)
{
    return 1;
}

#else

krill_status krill_dist_metis_order(const krill_csr *a, int parts, int32_t *perm,
                                    int64_t *offsets, int *used)
{
    (void)a;
    (void)parts;
    (void)perm;
    (void)offsets;
    *used = 0;
    return krill_error(KRILL_ERR_UNSUPPORTED, "krill_dist_mat_scatter_metis: this krill was "
                       "built without METIS (KRILL_WITH_METIS; Debian: libmetis-dev)");
}

int krill_dist_have_metis(void)
{
    return 0;
}

#endif
