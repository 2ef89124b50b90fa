/* precond/ilu_groups.c - the tasks of the GPU's level-scheduled triangular solves: groups of
 * B consecutive rows (ilu_impl.h, struct krill_ilu_groups).
 *
 * Why groups. A level-scheduled solve costs about one chain of dependent L2 accesses per level
 * (barrier, gather of x, store: about 2 us on an H100), whatever the level's width, and the
 * natural orderings of FEM and finite-difference grids make long chains of rows that each
 * need the row just before: the three dofs of an elasticity node (row 3k + 1 reads 3k, row
 * 3k + 2 both), or a grid line of a 7-point stencil (row i reads i - 1). A task that solves B
 * consecutive rows one after the other in registers takes those links off the level chain:
 * the level of group G is 1 + the largest level of the groups holding the columns of its
 * rows outside G (0 when there are none), so only links between groups count.
 *   elasticity3d:100,40,40: 1020 levels a triangle with B = 1, 340 with B = 3;
 *   poisson3d:128: 382 with B = 1, 318 with B = 2, 286 with B = 4
 * (a B that does not divide the grid line makes groups that straddle two lines, and a chain
 * along the next line: poisson3d:128 with B = 3 has 319876 levels; the choice sees it).
 * A level of groups costs more than a level of rows (B rows summed by a sub-warp, then solved
 * in turn with a broadcast each): measured on an H100 (bench_trsv --groups 1,2,3,4 on
 * poisson3d:128 and elasticity3d:100,40,40, doc/preconditioners.md) about 1.2x a row level
 * for B = 2, 1.5x for B = 3 and 4, and 2x for B = 6. krill_ilu_group_rows picks the B of
 * krill_ilu_group_sizes whose levels in both triangles together, times that weight, are
 * the fewest (the smaller B on a tie): B = 3 for elasticity3d (1020 levels a triangle -> 340,
 * an apply 0.88x -> 0.44x cusparseSpSV's time), B = 1 for poisson3d (B = 4 cuts 382 levels
 * to 286 but measured 6% slower).
 *
 * Cost of the analysis: one pass over the pattern per candidate B (the levels only), then
 * one to build the chosen layout: O(nnz) each, integers only. */
#include <string.h>

#include "precond/ilu_impl.h"

const int32_t krill_ilu_group_sizes[KRILL_ILU_GROUP_SIZES] = {1, 2, 3, 4, 6};

/* The cost of a level of groups of krill_ilu_group_sizes[k] rows, in quarters of a level of
 * single rows (the weights above). */
static const int64_t group_level_cost[KRILL_ILU_GROUP_SIZES] = {4, 5, 6, 6, 8};

/* Group G's rows [g0, g1) for groups of `rows` rows. */
static void group_rows(int32_t n, int32_t rows, int32_t G, int32_t *g0, int32_t *g1)
{
    *g0 = G * rows;
    *g1 = *g0 + rows < n ? *g0 + rows : n;
}

/* krill_ilu_group_levels for a constant `rows` (inlined into it once per group size, so that
 * j / rows is a multiplication). */
static inline __attribute__((always_inline)) int32_t
group_levels_of(const krill_ilu_host *h, const int32_t rows, int upper, int32_t *level)
{
    const int32_t n = h->n, n_groups = (n + rows - 1) / rows;
    int32_t top = -1;
    for (int32_t step = 0; step < n_groups; step++) {
        const int32_t G = upper ? n_groups - 1 - step : step;
        int32_t g0, g1, l = 0;
        group_rows(n, rows, G, &g0, &g1);
        for (int32_t i = g0; i < g1; i++) {
            const int64_t lo = upper ? h->diag[i] + 1 : h->row_ptr[i];
            const int64_t hi = upper ? h->row_ptr[i + 1] : h->diag[i];
            for (int64_t e = lo; e < hi; e++) {
                const int32_t j = h->col[e];
                if ((upper ? j >= g1 : j < g0) && level[j / rows] + 1 > l) l = level[j / rows] + 1;
            }
        }
        level[G] = l;
        if (l > top) top = l;
    }
    return top + 1;
}

int32_t krill_ilu_group_levels(const krill_ilu_host *h, int32_t rows, int upper, int32_t *level)
{
    switch (rows) {
    case 1: return group_levels_of(h, 1, upper, level);
    case 2: return group_levels_of(h, 2, upper, level);
    case 3: return group_levels_of(h, 3, upper, level);
    case 4: return group_levels_of(h, 4, upper, level);
    default: return group_levels_of(h, 6, upper, level);
    }
}

krill_status krill_ilu_group_rows(const krill_ilu_host *h, int32_t *rows)
{
    krill_status st = KRILL_OK;
    int32_t *level = NULL;
    int64_t best = -1;
    *rows = 1;
    KRILL_ALLOC(level, h->n > 0 ? h->n : 1);
    for (int k = 0; k < KRILL_ILU_GROUP_SIZES; k++) {
        const int32_t b = krill_ilu_group_sizes[k];
        int64_t levels;
        if (b > 1 && b > h->n) break;
        levels = b == 1 ? (int64_t)h->lower.n_levels + h->upper.n_levels   /* rows' levels */
                        : (int64_t)krill_ilu_group_levels(h, b, 0, level) +
                              krill_ilu_group_levels(h, b, 1, level);
        levels *= group_level_cost[k];
        if (best < 0 || levels < best) {
            best = levels;
            *rows = b;
        }
    }
cleanup:
    krill_free(level);
    return st;
}

static void tri_groups_free(krill_ilu_tri_groups *t)
{
    krill_free(t->level_ptr);
    krill_free(t->group_start);
    krill_free(t->order);
    krill_free(t->ptr);
    krill_free(t->col);
    memset(t, 0, sizeof *t);
}

void krill_ilu_groups_free(krill_ilu_groups *g)
{
    tri_groups_free(&g->lower);
    tri_groups_free(&g->upper);
    krill_free(g->to_backward);
    memset(g, 0, sizeof *g);
}

/* One triangle's layout; position (n) receives each row's position in it. */
static krill_status tri_groups_build(const krill_ilu_host *h, int32_t rows, int upper,
                                     krill_ilu_tri_groups *t, int32_t *position)
{
    krill_status st = KRILL_OK;
    const int32_t n = h->n, n_groups = (n + rows - 1) / rows;
    int32_t *place = NULL, *cursor = NULL, *group_at = NULL;
    t->n_groups = n_groups;
    KRILL_ALLOC(place, n_groups > 0 ? n_groups : 1);
    KRILL_ALLOC(group_at, n_groups > 0 ? n_groups : 1);
    t->n_levels = krill_ilu_group_levels(h, rows, upper, place);   /* place[G]: G's level */
    KRILL_CALLOC(t->level_ptr, (size_t)t->n_levels + 1);
    KRILL_ALLOC(cursor, (size_t)t->n_levels + 1);
    KRILL_ALLOC(t->group_start, (size_t)n_groups + 1);
    KRILL_ALLOC(t->order, n > 0 ? n : 1);
    KRILL_ALLOC(t->ptr, (size_t)n + 1);
    for (int32_t G = 0; G < n_groups; G++) t->level_ptr[place[G] + 1]++;
    for (int32_t l = 0; l < t->n_levels; l++) t->level_ptr[l + 1] += t->level_ptr[l];
    memcpy(cursor, t->level_ptr, ((size_t)t->n_levels + 1) * sizeof *cursor);
    /* solve order: levels ascending, groups ascending inside a level */
    for (int32_t G = 0; G < n_groups; G++) group_at[cursor[place[G]]++] = G;
    t->group_start[0] = 0;
    for (int32_t s = 0; s < n_groups; s++) {
        int32_t g0, g1;
        group_rows(n, rows, group_at[s], &g0, &g1);
        for (int32_t k = 0; k < g1 - g0; k++) {
            const int32_t p = t->group_start[s] + k, i = upper ? g1 - 1 - k : g0 + k;
            t->order[p] = i;
            position[i] = p;
        }
        t->group_start[s + 1] = t->group_start[s] + (g1 - g0);
    }
    /* entries outside the group, in the row's column order, columns as positions */
    t->ptr[0] = 0;
    t->nnz = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) KRILL_ALLOC(t->col, t->nnz > 0 ? t->nnz : 1);
        for (int32_t p = 0; p < n; p++) {
            const int32_t i = t->order[p];
            const int64_t lo = upper ? h->diag[i] + 1 : h->row_ptr[i];
            const int64_t hi = upper ? h->row_ptr[i + 1] : h->diag[i];
            int32_t g0, g1;
            int64_t k = pass == 1 ? t->ptr[p] : 0;
            group_rows(n, rows, i / rows, &g0, &g1);
            for (int64_t e = lo; e < hi; e++) {
                const int32_t j = h->col[e];
                if (j >= g0 && j < g1) continue;
                if (pass == 1) t->col[k++] = position[j];
                else t->nnz++;
            }
            if (pass == 0) t->ptr[p + 1] = t->nnz;
        }
    }
cleanup:
    krill_free(place);
    krill_free(cursor);
    krill_free(group_at);
    return st;
}

krill_status krill_ilu_groups_build(const krill_ilu_host *h, int32_t rows, krill_ilu_groups *g)
{
    krill_status st = KRILL_OK;
    const int32_t n = h->n;
    int32_t *pos_f = NULL, *pos_b = NULL;
    memset(g, 0, sizeof *g);
    g->rows = rows;
    KRILL_ALLOC(pos_f, n > 0 ? n : 1);
    KRILL_ALLOC(pos_b, n > 0 ? n : 1);
    KRILL_TRY(tri_groups_build(h, rows, 0, &g->lower, pos_f));
    KRILL_TRY(tri_groups_build(h, rows, 1, &g->upper, pos_b));
    KRILL_ALLOC(g->to_backward, n > 0 ? n : 1);
    for (int32_t p = 0; p < n; p++) g->to_backward[p] = pos_b[g->lower.order[p]];
cleanup:
    krill_free(pos_f);
    krill_free(pos_b);
    if (st != KRILL_OK) krill_ilu_groups_free(g);
    return st;
}
