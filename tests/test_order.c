/* Reverse Cuthill-McKee and the permutation functions of order/.
 *
 * Oracles, each derived apart from the code under test: a slow RCM on a dense adjacency
 * matrix that applies the same rules (compared perm for perm on random graphs, symmetric or
 * not, connected or not); B = P A P^T checked entry by entry against A by binary search;
 * bandwidths known in closed form (a path: 1; an m x m grid: at most 2m - 1; a K^3 grid: at
 * most 2 L - 1 for its largest diagonal plane L, which is below 2 K^2, twice the natural
 * ordering's K^2); B (P x) = P (A x) within the rounding of two row sums. Plus argument
 * checks, 1 x 1, n = 0, isolated nodes, allocation failures, RBP runs after RCM on a
 * shuffled elasticity matrix, and every square testdata matrix (reported, not asserted:
 * RCM need not narrow a band that is already narrow). */
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "core/core_impl.h"
#include "formats/formats_impl.h"

/* Largest matrix the dense reference RCM takes. */
#define REF_MAX_N 128
/* Sweeps of the pseudo-peripheral search per component, as RCM_MAX_SWEEPS in order/rcm.c. */
#define REF_MAX_SWEEPS 16

static uint64_t rng_next(uint64_t *s)     /* xorshift64* */
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* A uniformly random permutation (Fisher-Yates). */
static void random_perm(int32_t n, uint64_t seed, int32_t *perm)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int32_t i = 0; i < n; i++) perm[i] = i;
    for (int32_t i = n - 1; i > 0; i--) {
        int32_t j = (int32_t)(rng_next(&s) % (uint64_t)(i + 1));
        int32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

static int is_permutation(const int32_t *perm, int32_t n)
{
    char *seen = calloc((size_t)n + 1, 1);
    int ok = seen != NULL;
    for (int32_t i = 0; ok && i < n; i++) {
        ok = perm[i] >= 0 && perm[i] < n && !seen[perm[i]];
        if (ok) seen[perm[i]] = 1;
    }
    free(seen);
    return ok;
}

/* B must be P A P^T: a valid CSR, row i as long as row perm[i] of A, and every b_ij equal
 * (bitwise) to a_perm[i],perm[j], found by binary search in A's sorted row. */
static int is_permuted(const krill_csr *a, const int32_t *perm, const krill_csr *b)
{
    if (!b || b->n_rows != a->n_rows || b->nnz != a->nnz) return 0;
    if (krill_csr_check(b, "B") != KRILL_OK) return 0;
    for (int32_t i = 0; i < b->n_rows; i++) {
        const int64_t lo = a->row_ptr[perm[i]], hi = a->row_ptr[perm[i] + 1];
        if (b->row_ptr[i + 1] - b->row_ptr[i] != hi - lo) return 0;
        for (int64_t p = b->row_ptr[i]; p < b->row_ptr[i + 1]; p++) {
            const int32_t old_col = perm[b->col[p]];
            int64_t l = lo, h = hi;
            while (l < h) {
                int64_t m = l + (h - l) / 2;
                if (a->col[m] < old_col) l = m + 1; else h = m;
            }
            if (l == hi || a->col[l] != old_col ||
                memcmp(&a->val[l], &b->val[p], sizeof(double)) != 0)
                return 0;
        }
    }
    return 1;
}

static krill_csr *permuted(const krill_csr *a, const int32_t *perm)
{
    krill_csr *b = NULL;
    CHECK_OK(krill_csr_permute(a, perm, &b));
    return b;
}

/* Q A Q^T for a random Q: the matrix with its numbering thrown away */
static krill_csr *shuffled(const krill_csr *a, uint64_t seed)
{
    int32_t *q = malloc((size_t)a->n_rows * sizeof *q + 4);
    random_perm(a->n_rows, seed, q);
    krill_csr *b = permuted(a, q);
    free(q);
    return b;
}

/* RCM of a: checked to be a permutation and to give a B that is P A P^T; returns B (the
 * permutation in *perm_out when asked for) */
static krill_csr *rcm_of(const krill_csr *a, int32_t **perm_out)
{
    int32_t *perm = malloc((size_t)a->n_rows * sizeof *perm + 4);
    krill_csr *b = NULL;
    CHECK_OK(krill_order_rcm(a, perm));
    CHECK(is_permutation(perm, a->n_rows));
    b = permuted(a, perm);
    CHECK(is_permuted(a, perm, b));
    if (perm_out) *perm_out = perm; else free(perm);
    return b;
}

static krill_csr *triplets(int32_t n, int64_t nnz, const int32_t *r, const int32_t *c)
{
    double *v = malloc((size_t)nnz * sizeof *v + 8);
    krill_csr *a = NULL;
    for (int64_t k = 0; k < nnz; k++) v[k] = 1.0 + (double)k;
    CHECK_OK(krill_csr_from_triplets(n, n, nnz, r, c, v, &a));
    free(v);
    return a;
}

/* ---- the dense reference ------------------------------------------------------------- */
typedef struct ref_graph {
    int32_t n;
    unsigned char adj[REF_MAX_N][REF_MAX_N];
    int32_t deg[REF_MAX_N];
    int numbered[REF_MAX_N];
} ref_graph;

static int ref_before(const ref_graph *g, int32_t u, int32_t v)   /* (deg, index) order */
{
    return g->deg[u] < g->deg[v] || (g->deg[u] == g->deg[v] && u < v);
}

/* BFS from root over unnumbered vertices, each vertex's new neighbours appended in
 * (degree, index) order found by repeated minimum search. Returns the visited count;
 * level[] holds the distances, queue the order. */
static int32_t ref_bfs(const ref_graph *g, int32_t root, int32_t *queue, int32_t *level)
{
    int32_t head = 0, tail = 1;
    for (int32_t v = 0; v < g->n; v++) level[v] = -1;
    queue[0] = root;
    level[root] = 0;
    while (head < tail) {
        const int32_t v = queue[head++];
        for (;;) {
            int32_t best = -1;
            for (int32_t u = 0; u < g->n; u++)
                if (g->adj[v][u] && !g->numbered[u] && level[u] < 0 &&
                    (best < 0 || ref_before(g, u, best)))
                    best = u;
            if (best < 0) break;
            level[best] = level[v] + 1;
            queue[tail++] = best;
        }
    }
    return tail;
}

static void reference_rcm(const krill_csr *a, int32_t *perm)
{
    static ref_graph g;
    int32_t queue[REF_MAX_N], level[REF_MAX_N], count = 0;
    memset(&g, 0, sizeof g);
    g.n = a->n_rows;
    for (int32_t i = 0; i < g.n; i++)
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
            if (a->col[p] != i) g.adj[i][a->col[p]] = g.adj[a->col[p]][i] = 1;
    for (int32_t i = 0; i < g.n; i++)
        for (int32_t j = 0; j < g.n; j++) g.deg[i] += g.adj[i][j];
    while (count < g.n) {
        int32_t start = -1;
        for (int32_t v = 0; v < g.n; v++)
            if (!g.numbered[v] && (start < 0 || ref_before(&g, v, start))) start = v;
        int32_t size = ref_bfs(&g, start, queue, level);
        int32_t ecc = level[queue[size - 1]];
        for (int sweep = 1; sweep < REF_MAX_SWEEPS; sweep++) {
            int32_t x = -1;
            for (int32_t k = 0; k < size; k++)
                if (level[queue[k]] == ecc && (x < 0 || ref_before(&g, queue[k], x)))
                    x = queue[k];
            size = ref_bfs(&g, x, queue, level);
            if (level[queue[size - 1]] <= ecc) break;
            ecc = level[queue[size - 1]];
        }
        for (int32_t k = 0; k < size; k++) {
            g.numbered[queue[k]] = 1;
            perm[g.n - 1 - (count + k)] = queue[k];
        }
        count += size;
    }
}

/* ---- tests -------------------------------------------------------------------------- */
static void test_arguments(void)
{
    int32_t r[] = {0, 1, 2}, c[] = {1, 2, 3};
    double v[] = {1, 2, 3};
    int32_t perm[4] = {0, 1, 2, 3};
    krill_csr *rect = NULL, *a = NULL, *b = NULL;
    CHECK_OK(krill_csr_from_triplets(3, 4, 3, r, c, v, &rect));
    CHECK_STATUS(krill_order_rcm(NULL, perm), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "krill_order_rcm") && strstr(krill_last_error(), "NULL"));
    CHECK_STATUS(krill_order_rcm(rect, perm), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "3 x 4") && strstr(krill_last_error(), "square"));
    CHECK_STATUS(krill_csr_permute(rect, perm, &b), KRILL_ERR_ARG);
    CHECK(b == NULL && strstr(krill_last_error(), "square"));

    int32_t ri[] = {0, 1, 2, 3}, ci[] = {1, 2, 3, 0};
    a = triplets(4, 4, ri, ci);
    CHECK_STATUS(krill_order_rcm(a, NULL), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "perm is NULL") != NULL);
    CHECK_STATUS(krill_csr_permute(a, NULL, &b), KRILL_ERR_ARG);
    CHECK_STATUS(krill_csr_permute(a, perm, NULL), KRILL_ERR_ARG);
    CHECK_STATUS(krill_csr_permute(NULL, perm, &b), KRILL_ERR_ARG);

    int32_t out_of_range[4] = {0, 1, 4, 2}, repeated[4] = {3, 1, 0, 1};
    int32_t negative[4] = {-1, 0, 1, 2};
    CHECK_STATUS(krill_csr_permute(a, out_of_range, &b), KRILL_ERR_ARG);
    CHECK(b == NULL && strstr(krill_last_error(), "perm[2] = 4") != NULL);
    CHECK_STATUS(krill_csr_permute(a, repeated, &b), KRILL_ERR_ARG);
    CHECK(b == NULL && strstr(krill_last_error(), "perm[3] = 1 repeats perm[1]") != NULL);
    CHECK_STATUS(krill_csr_permute(a, negative, &b), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "perm[0] = -1") != NULL);

    /* a broken structure is refused before it is walked */
    a->col[2] = 7;
    CHECK_STATUS(krill_order_rcm(a, perm), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "column 7") != NULL);
    CHECK_STATUS(krill_csr_permute(a, perm, &b), KRILL_ERR_ARG);
    a->col[2] = 3;
    a->row_ptr[2] = 9;
    CHECK_STATUS(krill_order_rcm(a, perm), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "row_ptr") != NULL);
    krill_csr_destroy(&a);
    CHECK_OK(krill_csr_create(2, 2, 2, &a));           /* row 0 = {1, 0}: not sorted */
    if (a) {
        a->row_ptr[1] = a->row_ptr[2] = 2;
        a->col[0] = 1;
        a->col[1] = 0;
        a->val[0] = a->val[1] = 1.0;
        CHECK_STATUS(krill_order_rcm(a, perm), KRILL_ERR_ARG);
        CHECK(strstr(krill_last_error(), "row 0 is not sorted") != NULL);
        CHECK_STATUS(krill_csr_permute(a, perm, &b), KRILL_ERR_ARG);
    }
    krill_csr_destroy(&a);
    krill_csr_destroy(&rect);
    CHECK(krill_csr_bandwidth(NULL) == 0);
}

static void test_tiny(void)
{
    krill_csr *empty = NULL, *b = NULL, *diag = NULL;
    int32_t perm[5] = {-1, -1, -1, -1, -1};
    CHECK_OK(krill_csr_create(0, 0, 0, &empty));
    CHECK_OK(krill_order_rcm(empty, NULL));          /* n = 0: nothing to number */
    CHECK_OK(krill_csr_permute(empty, NULL, &b));
    CHECK(b && b->n_rows == 0 && b->nnz == 0 && krill_csr_bandwidth(b) == 0);
    krill_csr_destroy(&b);

    int32_t r0 = 0, c0 = 0;
    krill_csr *one = triplets(1, 1, &r0, &c0);
    CHECK_OK(krill_order_rcm(one, perm));
    CHECK(perm[0] == 0 && krill_csr_bandwidth(one) == 0);

    int32_t rd[] = {0, 1, 2, 3, 4};                  /* diagonal: five isolated nodes */
    diag = triplets(5, 5, rd, rd);
    CHECK_OK(krill_order_rcm(diag, perm));
    CHECK(is_permutation(perm, 5));
    b = permuted(diag, perm);
    CHECK(is_permuted(diag, perm, b) && krill_csr_bandwidth(b) == 0);
    krill_csr_destroy(&b);
    krill_csr_destroy(&one);
    krill_csr_destroy(&diag);
    krill_csr_destroy(&empty);
}

/* a directed path i -> i+1 (upper entries only: a nonsymmetric pattern) under a random
 * numbering: its hull is a path, whose RCM bandwidth is 1 */
static void test_path(void)
{
    enum { N = 60 };
    int32_t r[2 * N], c[2 * N], q[N];
    int64_t nnz = 0;
    random_perm(N, 11, q);
    for (int32_t i = 0; i < N; i++) {
        r[nnz] = q[i];
        c[nnz++] = q[i];
        if (i + 1 < N) {
            r[nnz] = q[i];
            c[nnz++] = q[i + 1];
        }
    }
    krill_csr *a = triplets(N, nnz, r, c);
    CHECK(krill_csr_bandwidth(a) > 1);
    krill_csr *b = rcm_of(a, NULL);
    CHECK(b && krill_csr_bandwidth(b) == 1);
    krill_csr_destroy(&a);
    krill_csr_destroy(&b);
}

/* three paths (lengths 7, 20, 2) and four isolated nodes, numbered at random: bandwidth 1,
 * and every component a contiguous block of the new numbering */
static void test_components(void)
{
    enum { N = 33 };
    static const int32_t lengths[3] = {7, 20, 2};
    int32_t r[2 * N], c[2 * N], q[N], comp[N], *perm = NULL;
    int64_t nnz = 0;
    int32_t v = 0;
    random_perm(N, 5, q);
    for (int k = 0; k < 3; k++)
        for (int32_t i = 0; i < lengths[k]; i++, v++) {
            comp[q[v]] = k;
            if (i + 1 < lengths[k]) {
                r[nnz] = q[v + 1];          /* lower entries only this time */
                c[nnz++] = q[v];
            }
        }
    const int32_t v_paths = v;
    for (int k = 3; v < N; v++, k++) comp[q[v]] = k;   /* isolated: no entry at all */
    krill_csr *a = triplets(N, nnz, r, c);
    krill_csr *b = rcm_of(a, &perm);
    CHECK(b && krill_csr_bandwidth(b) == 1);
    for (int k = 0; perm && k < 3 + N - v_paths; k++) {   /* its new numbers: an interval */
        int32_t first = N, last = -1, count = 0;
        for (int32_t i = 0; i < N; i++)
            if (comp[perm[i]] == k) {
                first = i < first ? i : first;
                last = i;
                count++;
            }
        CHECK(count > 0 && last - first + 1 == count);
    }
    free(perm);
    krill_csr_destroy(&a);
    krill_csr_destroy(&b);
}

/* random sparse graphs (nonsymmetric, often disconnected): the same perm as the reference */
static void test_against_reference(void)
{
    static const double density[] = {0.004, 0.02, 0.05, 0.2};
    uint64_t s = 2024;
    int mismatches = 0;
    for (int trial = 0; trial < 200; trial++) {
        const int32_t n = 1 + (int32_t)(rng_next(&s) % REF_MAX_N);
        const double p = density[trial % 4];
        int32_t *r = malloc((size_t)n * n * sizeof *r), *c = malloc((size_t)n * n * sizeof *c);
        int32_t got[REF_MAX_N], want[REF_MAX_N];
        int64_t nnz = 0;
        for (int32_t i = 0; i < n; i++)
            for (int32_t j = 0; j < n; j++)
                if ((double)(rng_next(&s) >> 11) * 0x1p-53 < p) {
                    r[nnz] = i;
                    c[nnz++] = j;
                }
        krill_csr *a = triplets(n, nnz, r, c);
        CHECK_OK(krill_order_rcm(a, got));
        reference_rcm(a, want);
        if (memcmp(got, want, (size_t)n * sizeof *got) != 0) mismatches++;
        krill_csr_destroy(&a);
        free(r);
        free(c);
    }
    CHECK(mismatches == 0);
    if (mismatches) fprintf(stderr, "  %d of 200 random graphs ordered unlike the reference\n",
                            mismatches);
}

/* the 5-point Laplacian on an m x m grid, natural numbering (bandwidth m) */
static krill_csr *grid2d(int32_t m)
{
    const int32_t n = m * m;
    int32_t *r = malloc((size_t)5 * n * sizeof *r), *c = malloc((size_t)5 * n * sizeof *c);
    int64_t nnz = 0;
    for (int32_t y = 0; y < m; y++)
        for (int32_t x = 0; x < m; x++) {
            const int32_t i = y * m + x;
            const int32_t nb[5][2] = {{x, y}, {x - 1, y}, {x + 1, y}, {x, y - 1}, {x, y + 1}};
            for (int k = 0; k < 5; k++)
                if (nb[k][0] >= 0 && nb[k][0] < m && nb[k][1] >= 0 && nb[k][1] < m) {
                    r[nnz] = i;
                    c[nnz++] = nb[k][1] * m + nb[k][0];
                }
        }
    krill_csr *a = triplets(n, nnz, r, c);
    free(r);
    free(c);
    return a;
}

/* Grids under a random numbering. RCM starts at a corner (least degree, and of greatest
 * eccentricity), so its levels are the diagonal planes; an edge joins neighbouring levels,
 * and Cuthill-McKee numbers the levels one after the other, so |i - j| <= 2 L - 1 for the
 * largest level L: m for the m x m grid, the most points of i + j + k = s in [0, K)^3 for
 * the K^3 grid (about 3K^2/4). Both are below twice the natural bandwidth (m, K^2). */
static void test_grids(void)
{
    static const int32_t sizes[] = {12, 20};
    for (int t = 0; t < 2; t++) {
        const int32_t m = 3 * sizes[t];
        krill_csr *a = grid2d(m), *s = shuffled(a, 100 + t);
        krill_csr *b = s ? rcm_of(s, NULL) : NULL;
        const int32_t natural = krill_csr_bandwidth(a);
        CHECK(natural == m);
        CHECK(b && krill_csr_bandwidth(b) <= 2 * m - 1 && krill_csr_bandwidth(b) < 2 * natural);
        printf("grid %dx%d: half bandwidth natural %d, shuffled %d, rcm %d\n", m, m, natural,
               krill_csr_bandwidth(s), b ? krill_csr_bandwidth(b) : -1);
        krill_csr_destroy(&a);
        krill_csr_destroy(&s);
        krill_csr_destroy(&b);
    }
    for (int t = 0; t < 2; t++) {
        const int32_t k = sizes[t];
        char spec[32];
        krill_csr *a = NULL;
        int32_t largest = 0;
        for (int32_t sum = 0; sum <= 3 * (k - 1); sum++) {
            int32_t count = 0;
            for (int32_t i = 0; i < k; i++)
                for (int32_t j = 0; j < k; j++)
                    count += sum - i - j >= 0 && sum - i - j < k;
            if (count > largest) largest = count;
        }
        snprintf(spec, sizeof spec, "poisson3d:%d", k);
        CHECK_OK(krill_gen(spec, &a));
        if (!a) continue;
        krill_csr *s = shuffled(a, 200 + t), *b = s ? rcm_of(s, NULL) : NULL;
        const int32_t natural = krill_csr_bandwidth(a), shuffled_bw = krill_csr_bandwidth(s);
        CHECK(natural == k * k);
        CHECK(b && krill_csr_bandwidth(b) <= 2 * largest - 1);
        CHECK(b && krill_csr_bandwidth(b) <= 2 * natural);
        CHECK(b && 10 * krill_csr_bandwidth(b) < shuffled_bw);
        printf("%s: half bandwidth natural %d, shuffled %d, rcm %d (bound 2L-1 = %d)\n", spec,
               natural, shuffled_bw, b ? krill_csr_bandwidth(b) : -1, 2 * largest - 1);
        krill_csr_destroy(&a);
        krill_csr_destroy(&s);
        krill_csr_destroy(&b);
    }
}

/* elasticity3d:48,4,4 (a beam of 48 x 5 x 5 free nodes, 3 dofs each, n = 3600) with its
 * numbering thrown away: RCM brings back runs of consecutive columns (RBP's N_val grows,
 * N_non shrinks) and narrows the band far below the shuffled one (about n). Bound: RCM
 * starts at a corner dof (least degree) on an end face and ends its search on an end face;
 * the levels of the node graph (27-node neighbourhoods) are then Chebyshev shells: up to
 * distance 4 inside the first 5 cross-sections (125 nodes), after that one cross-section
 * each (25). So no level exceeds 375 dofs and the bandwidth is at most 2 x 375 - 1 = 749. */
static void test_elasticity_runs(void)
{
    krill_csr *a = NULL;
    CHECK_OK(krill_gen("elasticity3d:48,4,4", &a));
    if (!a) return;
    krill_csr *s = shuffled(a, 300), *b = s ? rcm_of(s, NULL) : NULL;
    krill_format_stats natural = {0}, before = {0}, after = {0};
    if (b) {
        krill_csr_run_stats(a, 0, &natural);
        krill_csr_run_stats(s, 0, &before);
        krill_csr_run_stats(b, 0, &after);
        CHECK(a->n_rows == 3600 && krill_csr_bandwidth(s) > 3000);
        CHECK(krill_csr_bandwidth(b) <= 749);
        CHECK(after.n_val > before.n_val);
        CHECK(after.n_non < before.n_non);
        printf("elasticity3d:48,4,4 (n %d, nnz %lld): half bandwidth natural %d, shuffled %d, "
               "rcm %d; N_val/N_non natural %lld/%lld, shuffled %lld/%lld, rcm %lld/%lld\n",
               a->n_rows, (long long)a->nnz, krill_csr_bandwidth(a), krill_csr_bandwidth(s),
               krill_csr_bandwidth(b), (long long)natural.n_val, (long long)natural.n_non,
               (long long)before.n_val, (long long)before.n_non, (long long)after.n_val,
               (long long)after.n_non);
    }
    krill_csr_destroy(&a);
    krill_csr_destroy(&s);
    krill_csr_destroy(&b);
}

/* B (P x) = P (A x): each row of B holds row perm[i] of A in another order, so the two sums
 * differ only by rounding: |difference| <= 2 len eps sum_j |a_ij x_j| (two row sums of len
 * terms, each within (len - 1) eps of the exact one) */
static void check_spmv(const krill_csr *a, const int32_t *perm, const krill_csr *b,
                       const char *what)
{
    const int32_t n = a->n_rows;
    double *x = malloc((size_t)n * 8 + 8), *px = malloc((size_t)n * 8 + 8);
    double *ax = malloc((size_t)n * 8 + 8), *pax = malloc((size_t)n * 8 + 8);
    double *bpx = malloc((size_t)n * 8 + 8);
    int ok = 1;
    tu_random(x, n, 17);
    krill_vec_permute_host(n, perm, x, px);
    krill_csr_spmv_ref(b, 1.0, px, 0.0, bpx);
    krill_csr_spmv_ref(a, 1.0, x, 0.0, ax);
    krill_vec_permute_host(n, perm, ax, pax);
    for (int32_t i = 0; i < n; i++) {
        const int32_t old = perm[i];
        double magnitude = 0.0;
        for (int64_t p = a->row_ptr[old]; p < a->row_ptr[old + 1]; p++)
            magnitude += fabs(a->val[p] * x[a->col[p]]);
        const double len = (double)(a->row_ptr[old + 1] - a->row_ptr[old]);
        ok &= fabs(bpx[i] - pax[i]) <= 2.0 * len * DBL_EPSILON * magnitude;
    }
    CHECK(ok);
    if (!ok) fprintf(stderr, "  %s: B (P x) differs from P (A x)\n", what);
    free(x);
    free(px);
    free(ax);
    free(pax);
    free(bpx);
}

/* permute then unpermute gives the same bits back, for vectors and matrices; and the
 * SpMV identity on a nonsymmetric and an SPD matrix */
static void test_roundtrip(void)
{
    static const char *specs[] = {"convdiff3d:9,2", "elasticity3d:5,3,4", "rand1:500"};
    for (size_t t = 0; t < sizeof specs / sizeof *specs; t++) {
        krill_csr *a = NULL, *b = NULL, *back = NULL;
        int32_t *perm = NULL, *inverse = NULL;
        CHECK_OK(krill_gen(specs[t], &a));
        if (!a) continue;
        const int32_t n = a->n_rows;
        double *x = malloc((size_t)n * 8), *y = malloc((size_t)n * 8), *z = malloc((size_t)n * 8);
        inverse = malloc((size_t)n * sizeof *inverse);
        b = rcm_of(a, &perm);
        if (b && perm) {
            tu_random(x, n, 3);
            krill_vec_permute_host(n, perm, x, y);
            krill_vec_unpermute_host(n, perm, y, z);
            CHECK(memcmp(x, z, (size_t)n * 8) == 0);
            for (int32_t i = 0; i < n; i++) inverse[perm[i]] = i;
            back = permuted(b, inverse);
            CHECK(back && memcmp(back->row_ptr, a->row_ptr, ((size_t)n + 1) * 8) == 0 &&
                  memcmp(back->col, a->col, (size_t)a->nnz * 4) == 0 &&
                  memcmp(back->val, a->val, (size_t)a->nnz * 8) == 0);
            check_spmv(a, perm, b, specs[t]);
            printf("%s: half bandwidth %d -> %d after RCM\n", specs[t], krill_csr_bandwidth(a),
                   krill_csr_bandwidth(b));
        }
        free(x);
        free(y);
        free(z);
        free(perm);
        free(inverse);
        krill_csr_destroy(&a);
        krill_csr_destroy(&b);
        krill_csr_destroy(&back);
    }
}

/* every allocation of RCM and of the permutation, made to fail in turn: a clean
 * KRILL_ERR_ALLOC each time (and no leak: the sanitizer build checks) */
static void test_allocation_failures(void)
{
    krill_csr *a = NULL, *b = NULL;
    int32_t *perm = NULL;
    CHECK_OK(krill_gen("poisson3d:5", &a));
    perm = malloc(125 * sizeof *perm);
    int failures = 0;
    for (long k = 1; a && k < 100; k++) {
        krill_fault_alloc_after(k);
        krill_status st = krill_order_rcm(a, perm);
        krill_fault_alloc_after(0);
        if (st == KRILL_OK) break;
        CHECK(st == KRILL_ERR_ALLOC);
        failures++;
    }
    CHECK(failures >= 4);
    for (long k = 1; a && k < 100; k++) {
        krill_fault_alloc_after(k);
        krill_status st = krill_csr_permute(a, perm, &b);
        krill_fault_alloc_after(0);
        if (st == KRILL_OK) break;
        CHECK(st == KRILL_ERR_ALLOC && b == NULL);
    }
    CHECK(b != NULL);
    krill_csr_destroy(&a);
    krill_csr_destroy(&b);
    free(perm);
}

/* every square testdata matrix: a valid permutation, B = P A P^T; bandwidths and RBP runs
 * reported */
static void test_testdata(void)
{
    const char *dir = tu_testdata_path("mtx");
    char dirpath[4096];
    int tested = 0, narrower = 0, wider = 0;
    if (!dir) {
        printf("testdata absent ($KRILL_TESTDATA): real matrices skipped\n");
        return;
    }
    snprintf(dirpath, sizeof dirpath, "%s", dir);
    DIR *d = opendir(dirpath);
    CHECK(d != NULL);
    printf("%-24s %8s %10s %8s %8s %10s %10s %10s %10s\n", "matrix", "n", "nnz", "bw",
           "bw rcm", "N_val", "N_val rcm", "N_non", "N_non rcm");
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[8192];
        krill_csr *a = NULL;
        if (!strstr(e->d_name, ".mtx")) continue;
        snprintf(path, sizeof path, "%s/%s", dirpath, e->d_name);
        if (krill_mm_read(path, &a, NULL) != KRILL_OK) continue;   /* refused: io tests */
        if (a->n_rows == a->n_cols) {
            int32_t *perm = NULL;
            krill_csr *b = rcm_of(a, &perm);
            if (b && perm) {
                krill_format_stats before = {0}, after = {0};
                krill_csr_run_stats(a, 0, &before);
                krill_csr_run_stats(b, 0, &after);
                const int32_t bw = krill_csr_bandwidth(a), bw_rcm = krill_csr_bandwidth(b);
                printf("%-24s %8d %10lld %8d %8d %10lld %10lld %10lld %10lld\n", e->d_name,
                       a->n_rows, (long long)a->nnz, bw, bw_rcm, (long long)before.n_val,
                       (long long)after.n_val, (long long)before.n_non, (long long)after.n_non);
                narrower += bw_rcm < bw;
                wider += bw_rcm > bw;
                if (a->nnz <= 2000000) check_spmv(a, perm, b, e->d_name);
                tested++;
            }
            free(perm);
            krill_csr_destroy(&b);
        }
        krill_csr_destroy(&a);
    }
    if (d) closedir(d);
    printf("%d testdata matrices renumbered: RCM narrowed %d, widened %d\n", tested, narrower,
           wider);
    CHECK(tested > tu_testdata_expect(50, 10));
}

int main(void)
{
    test_arguments();
    test_tiny();
    test_path();
    test_components();
    test_against_reference();
    test_grids();
    test_elasticity_runs();
    test_roundtrip();
    test_allocation_failures();
    test_testdata();
    return tu_finish("test_order");
}
