/* precond/ilu_host.c - ILU(0) / IC(0) on the host: the analysis both devices share (pattern,
 * diagonal positions, level sets; the GPU's transpose map), the CPU factorization, which is
 * also the plain C reference of the GPU's, and the CPU triangular solves. Layout, pivot rule
 * and dependency graph: precond/ilu_impl.h.
 *
 * Factorization of row i (rows in order; `pos` maps a column of row i to its offset in the
 * row, 32 bits: a row has at most n entries; half the cache footprint of a 64-bit map):
 *   ilu0 (IKJ): for k in the strictly lower columns of row i, ascending:
 *                 a_ik = a_ik / u_kk;  a_ij -= a_ik * u_kj  for j > k in both row k and row i.
 *   ic0 (up-looking, row i of L from the finished rows above it):
 *                 for k < i in row i, ascending:
 *                   l_ik = a_ik / l_kk;  d_i -= l_ik^2;
 *                   a_ij -= l_ik * l_jk  for k < j < i in row i, l_jk read at (k, j): row j's
 *                   lower part was copied to its transposed places when row j finished;
 *                 l_ii = sqrt(d_i), d_i = a_ii - sum_k l_ik^2; then L's row i is copied to
 *                 the upper places (k, i) (L^T).
 * Every entry gets its updates in ascending k, like the textbook KIJ loops, so the bits are
 * theirs (products and differences rounded as written: -ffp-contract=off).
 *
 * ic0's transposed places without a map: rows run in ascending i, so the entries (k, i) that
 * row k's upper part receives arrive in its own column order. A cursor per row k, starting
 * after the diagonal, finds (k, i) when row i starts and then steps past it; the same look
 * checks a_ki == a_ik (both still A's values then), so symmetry costs no pass of its own, and
 * the k-loop of row i stops at the cursor: row k's entries left of it are the (k, j), j < i.
 * Besides A's values and pattern (read, and the values written, once) the factorization
 * touches two n-vectors (pos, 4 bytes; ic0's cursors, 8 bytes) and, for each (i, k), row k's
 * upper part up to i (ic0) or to its end (ilu0).
 * The row's max |a_ij| (the pivot scale) is taken when the row's values are first read.
 *
 * Solves: forward y_i = (r_i - sum_{j<i} a_ij y_j) [* (1 / l_ii)], backward z_i = (y_i -
 * sum_{j>i} a_ij z_j) * (1 / a_ii), each row summed in column order. The reciprocals are
 * rounded once per factorization (krill_ilu_diag_inverse, krill_ilu_perm_values): a row's
 * result feeds the next rows' sums, so the solves are a chain of dependent rows, and a
 * multiply in that chain instead of a division (latency about 4 cycles against 13-20 on
 * x86-64) made CG + IC(0) on poisson3d:40 0.68-0.76 ms per iteration instead of 0.91-0.96
 * (one thread, bench_solve; PETSc stores its factors' inverse diagonal too). Serially in row order (y in
 * z), or, when krill_ilu_cpu_parallel says so, level by level (one OpenMP loop and barrier
 * per level) on the permuted copies of krill_ilu_perm (ilu_impl.h says why); the same bits
 * either way. Memory traffic of an apply, serial: every stored entry once (12 bytes: value
 * and column), the row offsets, diagonal positions and reciprocals (24 bytes per row and
 * solve), r read,
 * y written and read, z written (32 bytes per row), plus the gathers of y and z. Level by
 * level: the entries and 8-byte row offsets of the copies, the diagonals (8 bytes per row
 * and solve), and three permutation passes (r gathered, y moved, z scattered: about 24
 * bytes per row each, plus the 4-byte maps), the level vectors streaming in between.
 *
 * Reproducible solves (krill_ilu_solve_repro, ilu_impl.h): rows in A's numbering, level by
 * level (the forward levels, then the backward ones), each row an exact sum rounded once
 * (precond_repro.h) over the factors in A's order, y and z in place in z. Each row reads its
 * entries twice (the sum's two passes) and computes a few digits per term: compute-bound,
 * not memory-bound like the plain solves.
 */
#include <math.h>
#include <string.h>

#include "precond/ilu_impl.h"
#include "precond/precond_repro.h"

void krill_ilu_host_free(krill_ilu_host *h)
{
    krill_free(h->row_ptr);
    krill_free(h->col);
    krill_free(h->diag);
    krill_free(h->transpose);
    krill_free(h->row_max);
    krill_free(h->lower.level_ptr);
    krill_free(h->lower.rows);
    krill_free(h->upper.level_ptr);
    krill_free(h->upper.rows);
    memset(h, 0, sizeof *h);
}

/* Level sets of the forward (upper = 0: columns j < i) or backward (columns j > i) graph. */
static krill_status build_levels(const krill_ilu_host *h, int upper, krill_ilu_levels *lv)
{
    krill_status st = KRILL_OK;
    const int32_t n = h->n;
    int32_t *level = NULL, *next = NULL;
    KRILL_ALLOC(level, n > 0 ? n : 1);
    lv->n_levels = krill_ilu_group_levels(h, 1, upper, level);   /* groups of one row */
    KRILL_CALLOC(lv->level_ptr, (size_t)lv->n_levels + 1);
    KRILL_ALLOC(lv->rows, n);
    KRILL_ALLOC(next, (size_t)lv->n_levels + 1);
    for (int32_t i = 0; i < n; i++) lv->level_ptr[level[i] + 1]++;
    for (int32_t l = 0; l < lv->n_levels; l++) lv->level_ptr[l + 1] += lv->level_ptr[l];
    memcpy(next, lv->level_ptr, ((size_t)lv->n_levels + 1) * sizeof *next);
    for (int32_t i = 0; i < n; i++) lv->rows[next[level[i]]++] = i;
cleanup:
    krill_free(level);
    krill_free(next);
    return st;
}

/* The error of an IC(0) build or update given a matrix that is not symmetric. */
static krill_status not_symmetric(const char *name)
{
    return krill_error(KRILL_ERR_ARG, "%s: the matrix is not symmetric (pattern and values); "
                       "IC(0) factors symmetric matrices: use ilu0", name);
}

/* h's diagonal positions, lower_nnz and max_tri_row from its pattern; the first row without
 * a stored diagonal, or -1. */
static int32_t find_diagonals(krill_ilu_host *h)
{
    for (int32_t i = 0; i < h->n; i++) {
        const int64_t begin = h->row_ptr[i], end = h->row_ptr[i + 1];
        int64_t p = begin;
        while (p < end && h->col[p] < i) p++;
        if (p == end || h->col[p] != i) return i;
        h->diag[i] = p;
        h->lower_nnz += p - begin;
        if (p - begin > h->max_tri_row) h->max_tri_row = p - begin;
        if (end - p - 1 > h->max_tri_row) h->max_tri_row = end - p - 1;
    }
    return -1;
}

krill_status krill_ilu_analyze(krill_csr *a, krill_ilu_kind kind, const char *name,
                               krill_ilu_host *h)
{
    krill_status st = KRILL_OK;
    int32_t missing;
    memset(h, 0, sizeof *h);
    h->kind = kind;
    h->n = a->n_rows;
    h->nnz = a->nnz;
    h->row_ptr = a->row_ptr;   /* borrowed until success */
    h->col = a->col;
    KRILL_ALLOC(h->diag, h->n);
    KRILL_CALLOC(h->row_max, h->n);
    missing = find_diagonals(h);
    if (missing >= 0) {
        st = kind == KRILL_ILU_KIND_IC0 && !krill_csr_is_symmetric(a)
                 ? not_symmetric(name)
                 : krill_error(KRILL_ERR_NUMERIC, "%s: row %d (0-based) has no diagonal entry "
                               "in its pattern; the factorization keeps A's pattern and needs "
                               "every a_ii stored", name, missing);
        goto cleanup;
    }
    KRILL_TRY(build_levels(h, 0, &h->lower));
    KRILL_TRY(build_levels(h, 1, &h->upper));
    a->row_ptr = NULL;
    a->col = NULL;
cleanup:
    if (st != KRILL_OK) {
        h->row_ptr = NULL;     /* still a's */
        h->col = NULL;
        krill_ilu_host_free(h);
    }
    return st;
}

krill_status krill_ilu_symmetric_map(krill_ilu_host *h, const double *val, const char *name)
{
    krill_status st = KRILL_OK;
    int64_t *cursor = NULL;
    const int64_t *rp = h->row_ptr;
    const int32_t *col = h->col;
    const int fill = h->transpose == NULL;
    KRILL_ALLOC(cursor, h->n);
    if (fill) KRILL_ALLOC(h->transpose, h->nnz);
    memcpy(cursor, rp, (size_t)h->n * sizeof *cursor);
    for (int32_t i = 0; i < h->n; i++)
        for (int64_t p = rp[i]; p < rp[i + 1]; p++) {
            const int32_t j = col[p];
            const int64_t q = cursor[j]++;
            if (q >= rp[j + 1] || col[q] != i || val[q] != val[p]) {
                st = not_symmetric(name);
                goto cleanup;
            }
            if (fill) h->transpose[p] = q;
        }
    for (int32_t j = 0; j < h->n; j++)
        if (cursor[j] != rp[j + 1]) {
            st = not_symmetric(name);
            goto cleanup;
        }
cleanup:
    krill_free(cursor);
    if (st != KRILL_OK && fill) {
        krill_free(h->transpose);
        h->transpose = NULL;
    }
    return st;
}

krill_status krill_ilu_check_same(const krill_ilu_host *h, const krill_csr *a, const char *name)
{
    krill_status st = KRILL_OK;
    KRILL_REQUIRE(a->n_rows == h->n && a->nnz == h->nnz &&
                  memcmp(a->row_ptr, h->row_ptr, ((size_t)h->n + 1) * sizeof *h->row_ptr) == 0 &&
                  memcmp(a->col, h->col, (size_t)h->nnz * sizeof *h->col) == 0,
                  "%s: update: the matrix's pattern is not the one the preconditioner was "
                  "built from; create a new preconditioner", name);
cleanup:
    return st;
}

void krill_ilu_set_row_max(krill_ilu_host *h, const double *a_val)
{
    for (int32_t i = 0; i < h->n; i++) {
        double m = 0.0;
        for (int64_t p = h->row_ptr[i]; p < h->row_ptr[i + 1]; p++)
            if (fabs(a_val[p]) > m) m = fabs(a_val[p]);
        h->row_max[i] = m;
    }
}

/* The entries of row i that the factorization wrote: the whole row for ilu0, the lower part
 * with the diagonal for ic0 (its upper part still holds A's values). */
static int64_t written_end(const krill_ilu_host *h, int32_t i)
{
    return h->kind == KRILL_ILU_KIND_IC0 ? h->diag[i] + 1 : h->row_ptr[i + 1];
}

/* 1 when the pivot candidate (u_ii, or d_i for ic0) passes the rule of ilu_impl.h */
static int pivot_ok(const krill_ilu_host *h, int32_t i, double pivot)
{
    const double m = krill_ilu_pivot_min(h, i);
    if (!isfinite(pivot)) return 0;
    return h->kind == KRILL_ILU_KIND_IC0 ? pivot > m : fabs(pivot) > m;
}

static int row_ok(const krill_ilu_host *h, int32_t i, const double *val)
{
    if (!pivot_ok(h, i, val[h->diag[i]])) return 0;
    for (int64_t p = h->row_ptr[i]; p < written_end(h, i); p++)
        if (!isfinite(val[p])) return 0;
    return 1;
}

/* What a refused row's message suggests: the shift where the preconditioner does not search
 * one (ic0:noshift, ilu0), nothing where it does (the search's own message follows). */
static const char *suggestion(const krill_ilu_host *h)
{
    if (h->shift) return "";
    return h->kind == KRILL_ILU_KIND_IC0
               ? "; ic0 without :noshift shifts the diagonal until IC(0) succeeds (A + alpha "
                 "diag(A)), or use jacobi or bjacobi"
               : "; try ilu0:shift (factors A + alpha diag(A), alpha raised until ILU(0) "
                 "succeeds), jacobi or bjacobi, or reorder the matrix";
}

krill_status krill_ilu_row_failure(const krill_ilu_host *h, const char *name, int32_t row,
                                   const double *row_val)
{
    const int64_t begin = h->row_ptr[row];
    const double pivot = row_val[h->diag[row] - begin], scale = h->row_max[row];
    if (!pivot_ok(h, row, pivot)) {
        if (h->kind == KRILL_ILU_KIND_IC0 && pivot <= 0.0)
            return krill_error(KRILL_ERR_NUMERIC, "%s: pivot d = %.6g <= 0 in row %d (0-based): "
                               "the matrix is not SPD enough for IC(0)%s", name, pivot, row,
                               suggestion(h));
        if (!isfinite(pivot))
            return krill_error(KRILL_ERR_NUMERIC, "%s: pivot %s = %g in row %d (0-based) is not "
                               "finite (growth in the factorization)%s", name,
                               h->kind == KRILL_ILU_KIND_IC0 ? "d" : "u_ii", pivot, row,
                               suggestion(h));
        return krill_error(KRILL_ERR_NUMERIC, "%s: zero or tiny pivot %s = %.6g in row %d "
                           "(0-based): |pivot| <= %g x %g (the row's largest |a_ij|); the "
                           "factorization would divide by it%s", name,
                           h->kind == KRILL_ILU_KIND_IC0 ? "d" : "u_ii", pivot, row,
                           KRILL_ILU_PIVOT_TOL, scale, suggestion(h));
    }
    for (int64_t p = begin; p < written_end(h, row); p++)
        if (!isfinite(row_val[p - begin]))
            return krill_error(KRILL_ERR_NUMERIC, "%s: the factor entry (%d, %d) is %g, not "
                               "finite, in row %d (0-based) (growth in the factorization)%s",
                               name, row, h->col[p], row_val[p - begin], row, suggestion(h));
    return krill_error(KRILL_ERR_INTERNAL, "%s: row %d (0-based) was reported as failed but its "
                       "pivot and entries are fine", name, row);
}

/* ic0: row i's strictly lower entries (i, k) against their places (k, i), which the
 * cursors of rows k reach in turn (the comment at the top): 1 when each is there with the
 * same value (row i still holds A's values, and so do the (k, i) until row i is done), the
 * cursors then stepped past them; 0 at the first that is not. */
static int symmetric_row(const krill_ilu_host *h, int32_t i, const double *val, int64_t *cursor)
{
    for (int64_t p = h->row_ptr[i]; p < h->diag[i]; p++) {
        const int32_t k = h->col[p];
        const int64_t q = cursor[k]++;
        if (q >= h->row_ptr[k + 1] || h->col[q] != i || val[q] != val[p]) return 0;
    }
    return 1;
}

/* ic0: the check of symmetric_row over rows from .. n - 1, then that every upper entry was
 * met by its transpose (each cursor at its row's end): 1 when A is symmetric. */
static int symmetric_rest(const krill_ilu_host *h, int32_t from, const double *val,
                          int64_t *cursor)
{
    for (int32_t i = from; i < h->n; i++)
        if (!symmetric_row(h, i, val, cursor)) return 0;
    for (int32_t k = 0; k < h->n; k++)
        if (cursor[k] != h->row_ptr[k + 1]) return 0;
    return 1;
}

/* Row i of the factorization (the comment at the top); pos maps row i's columns, and for
 * ic0 the cursors stand just past the places (k, i). Returns d_i for ic0, else 0. */
static double factor_row(const krill_ilu_host *h, int32_t i, const int32_t *pos,
                         const int64_t *cursor, double *val)
{
    const int64_t *rp = h->row_ptr, *diag = h->diag;
    const int32_t *col = h->col;
    double d = val[diag[i]], *row = val + rp[i];
    for (int64_t p = rp[i]; p < diag[i]; p++) {
        const int32_t k = col[p];
        const double lik = val[p] / val[diag[k]];
        val[p] = lik;
        if (cursor) {   /* ic0: the (k, j), k < j < i, end just before (k, i) */
            d -= lik * lik;
            for (int64_t q = diag[k] + 1; q < cursor[k] - 1; q++)
                if (pos[col[q]] >= 0) row[pos[col[q]]] -= lik * val[q];
        } else {
            for (int64_t q = diag[k] + 1; q < rp[k + 1]; q++)
                if (pos[col[q]] >= 0) row[pos[col[q]]] -= lik * val[q];
        }
    }
    return cursor ? d : 0.0;
}

krill_status krill_ilu_factor_cpu(krill_ilu_host *h, const char *name, double *val)
{
    krill_status st = KRILL_OK;
    const int64_t *rp = h->row_ptr, *diag = h->diag;
    const int32_t *col = h->col;
    const int ic = h->kind == KRILL_ILU_KIND_IC0;
    int32_t *pos = NULL;
    int64_t *cursor = NULL;
    KRILL_ALLOC(pos, h->n);
    for (int32_t j = 0; j < h->n; j++) pos[j] = -1;
    if (ic) {
        KRILL_ALLOC(cursor, h->n);
        for (int32_t k = 0; k < h->n; k++) cursor[k] = diag[k] + 1;
    }
    for (int32_t i = 0; i < h->n; i++) {
        double m = 0.0, d;
        for (int64_t p = rp[i]; p < rp[i + 1]; p++) {
            pos[col[p]] = (int32_t)(p - rp[i]);
            if (fabs(val[p]) > m) m = fabs(val[p]);
        }
        h->row_max[i] = m;
        if (ic && !symmetric_row(h, i, val, cursor)) {
            st = not_symmetric(name);
            goto cleanup;
        }
        d = factor_row(h, i, pos, cursor, val);
        for (int64_t p = rp[i]; p < rp[i + 1]; p++) pos[col[p]] = -1;
        if (ic) val[diag[i]] = d;
        if (!row_ok(h, i, val)) {
            st = krill_ilu_row_failure(h, name, i, val + rp[i]);
            /* the rows below still hold A's values: asymmetry is reported first */
            if (ic && !symmetric_rest(h, i + 1, val, cursor)) st = not_symmetric(name);
            goto cleanup;
        }
        if (ic) {
            val[diag[i]] = sqrt(d);
            for (int64_t p = rp[i]; p < diag[i]; p++) val[cursor[col[p]] - 1] = val[p];
        }
    }
    if (ic && !symmetric_rest(h, h->n, val, cursor)) st = not_symmetric(name);
cleanup:
    krill_free(pos);
    krill_free(cursor);
    return st;
}

int krill_ilu_cpu_parallel(const krill_ilu_host *h, int threads)
{
    const int32_t levels = h->lower.n_levels > h->upper.n_levels ? h->lower.n_levels
                                                                 : h->upper.n_levels;
    return threads > 1 && levels > 0 && (int64_t)h->n >= (int64_t)KRILL_ILU_CPU_LEVEL_ROWS * levels;
}

void krill_ilu_diag_inverse(const krill_ilu_host *h, const double *val, double *dinv)
{
    for (int32_t i = 0; i < h->n; i++) dinv[i] = 1.0 / val[h->diag[i]];
}

void krill_ilu_solve_serial(const krill_ilu_host *h, const double *val, const double *dinv,
                            const double *r, double *z)
{
    const int ic = h->kind == KRILL_ILU_KIND_IC0;
    for (int32_t i = 0; i < h->n; i++) {
        double s = r[i];
        for (int64_t p = h->row_ptr[i]; p < h->diag[i]; p++) s -= val[p] * z[h->col[p]];
        z[i] = ic ? s * dinv[i] : s;
    }
    for (int32_t i = h->n - 1; i >= 0; i--) {
        double s = z[i];
        for (int64_t p = h->diag[i] + 1; p < h->row_ptr[i + 1]; p++) s -= val[p] * z[h->col[p]];
        z[i] = s * dinv[i];
    }
}

/* One triangle's reproducible solve in level order (upper = 0: forward, x_i from r_i and
 * the lower part, divided by the diagonal for ic0; upper = 1: backward, from x_i = y_i and
 * the upper part, divided by the diagonal). Inside a parallel region. */
static void solve_repro_levels(const krill_ilu_host *h, const double *val, int upper,
                               const double *r, double *x)
{
    const krill_ilu_levels *lv = upper ? &h->upper : &h->lower;
    const int unit = !upper && h->kind == KRILL_ILU_KIND_ILU0;
    for (int32_t l = 0; l < lv->n_levels; l++) {
#pragma omp for schedule(static)
        for (int32_t p = lv->level_ptr[l]; p < lv->level_ptr[l + 1]; p++) {
            int64_t acc[KRILL_OZ_MAX_DIAG];
            const int32_t i = lv->rows[p];
            const int64_t lo = upper ? h->diag[i] + 1 : h->row_ptr[i];
            const int64_t hi = upper ? h->row_ptr[i + 1] : h->diag[i];
            x[i] = krill_pc_repro_tri_row(upper ? x[i] : r[i], lo, hi, val, h->col, x,
                                          unit ? NULL : val + h->diag[i], acc);
        }
    }
}

void krill_ilu_solve_repro(const krill_ilu_host *h, const double *val, int threads,
                           const double *r, double *z)
{
#pragma omp parallel num_threads(threads)
    {
        solve_repro_levels(h, val, 0, r, z);
        solve_repro_levels(h, val, 1, r, z);
    }
}

krill_status krill_ilu_gpu_repro_fits(const krill_ilu_host *h, const char *name)
{
    if (h->max_tri_row + 1 <= KRILL_OZ_ROW_MAX_N) return KRILL_OK;
    return krill_error(KRILL_ERR_UNSUPPORTED, "%s on the GPU in reproducible mode: a row of the "
                       "triangular solves has %lld terms (%lld entries and the right-hand side), "
                       "more than the %lld that a GPU thread's exact row sum holds "
                       "(KRILL_OZ_ROW_MAX_N); use the CPU, plain mode or another "
                       "preconditioner", name, (long long)(h->max_tri_row + 1),
                       (long long)h->max_tri_row, (long long)KRILL_OZ_ROW_MAX_N);
}

void krill_ilu_perm_free(krill_ilu_perm *q)
{
    krill_free(q->lower_ptr);
    krill_free(q->lower_col);
    krill_free(q->lower_val);
    krill_free(q->lower_dinv);
    krill_free(q->upper_ptr);
    krill_free(q->upper_col);
    krill_free(q->upper_val);
    krill_free(q->upper_dinv);
    krill_free(q->mid);
    krill_free(q->work);
    memset(q, 0, sizeof *q);
}

krill_status krill_ilu_perm_build(const krill_ilu_host *h, krill_ilu_perm *q)
{
    krill_status st = KRILL_OK;
    const int32_t n = h->n;
    const int64_t upper_nnz = h->nnz - n - h->lower_nnz;
    const int32_t *fwd = h->lower.rows, *bwd = h->upper.rows;
    int32_t *pos_f = NULL, *pos_b = NULL;
    memset(q, 0, sizeof *q);
    KRILL_ALLOC(pos_f, n);
    KRILL_ALLOC(pos_b, n);
    KRILL_ALLOC(q->lower_ptr, (size_t)n + 1);
    KRILL_ALLOC(q->lower_col, h->lower_nnz);
    KRILL_ALLOC(q->upper_ptr, (size_t)n + 1);
    KRILL_ALLOC(q->upper_col, upper_nnz);
    KRILL_ALLOC(q->mid, n);
    KRILL_ALLOC(q->lower_val, h->lower_nnz);
    if (h->kind == KRILL_ILU_KIND_IC0) KRILL_ALLOC(q->lower_dinv, n);
    KRILL_ALLOC(q->upper_val, upper_nnz);
    KRILL_ALLOC(q->upper_dinv, n);
    KRILL_ALLOC(q->work, n);
    for (int32_t p = 0; p < n; p++) {
        pos_f[fwd[p]] = p;
        pos_b[bwd[p]] = p;
    }
    q->lower_ptr[0] = q->upper_ptr[0] = 0;
    for (int32_t p = 0; p < n; p++) {
        const int32_t i = fwd[p], b = bwd[p];
        int64_t k = q->lower_ptr[p], m = q->upper_ptr[p];
        for (int64_t e = h->row_ptr[i]; e < h->diag[i]; e++) q->lower_col[k++] = pos_f[h->col[e]];
        for (int64_t e = h->diag[b] + 1; e < h->row_ptr[b + 1]; e++)
            q->upper_col[m++] = pos_b[h->col[e]];
        q->lower_ptr[p + 1] = k;
        q->upper_ptr[p + 1] = m;
        q->mid[p] = pos_f[b];
    }
cleanup:
    krill_free(pos_f);
    krill_free(pos_b);
    if (st != KRILL_OK) krill_ilu_perm_free(q);
    return st;
}

void krill_ilu_perm_values(const krill_ilu_host *h, const double *val, krill_ilu_perm *q)
{
    for (int32_t p = 0; p < h->n; p++) {
        const int32_t i = h->lower.rows[p], b = h->upper.rows[p];
        const int64_t lo = h->diag[i] - h->row_ptr[i], up = h->row_ptr[b + 1] - h->diag[b] - 1;
        memcpy(q->lower_val + q->lower_ptr[p], val + h->row_ptr[i], (size_t)lo * sizeof *val);
        memcpy(q->upper_val + q->upper_ptr[p], val + h->diag[b] + 1, (size_t)up * sizeof *val);
        if (q->lower_dinv) q->lower_dinv[p] = 1.0 / val[h->diag[i]];
        q->upper_dinv[p] = 1.0 / val[h->diag[b]];
    }
}

void krill_ilu_solve_levels(const krill_ilu_host *h, const krill_ilu_perm *q, int threads,
                            const double *r, double *z)
{
    const krill_ilu_levels *lo = &h->lower, *up = &h->upper;
    const int32_t n = h->n;
    double *w = q->work;
    /* z serves as the forward-ordered r, then y; w as the backward-ordered y, then z */
#pragma omp parallel num_threads(threads)
    {
#pragma omp for schedule(static)
        for (int32_t p = 0; p < n; p++) z[p] = r[lo->rows[p]];
        for (int32_t l = 0; l < lo->n_levels; l++) {
#pragma omp for schedule(static)
            for (int32_t p = lo->level_ptr[l]; p < lo->level_ptr[l + 1]; p++) {
                double s = z[p];
                for (int64_t k = q->lower_ptr[p]; k < q->lower_ptr[p + 1]; k++)
                    s -= q->lower_val[k] * z[q->lower_col[k]];
                z[p] = q->lower_dinv ? s * q->lower_dinv[p] : s;
            }
        }
#pragma omp for schedule(static)
        for (int32_t p = 0; p < n; p++) w[p] = z[q->mid[p]];
        for (int32_t l = 0; l < up->n_levels; l++) {
#pragma omp for schedule(static)
            for (int32_t p = up->level_ptr[l]; p < up->level_ptr[l + 1]; p++) {
                double s = w[p];
                for (int64_t k = q->upper_ptr[p]; k < q->upper_ptr[p + 1]; k++)
                    s -= q->upper_val[k] * w[q->upper_col[k]];
                w[p] = s * q->upper_dinv[p];
            }
        }
#pragma omp for schedule(static)
        for (int32_t p = 0; p < n; p++) z[up->rows[p]] = w[p];
    }
}
