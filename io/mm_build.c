/* io/mm_build.c - the CSR of a parsed Matrix Market file.
 *
 * Coordinate files: a counting sort by row, in parallel and stable. The entries are split
 * into P contiguous parts; part t counts its entries per row (a mirrored entry (j, i) of
 * symmetric storage counts in row j), and slot  row_ptr[r] + sum_{t' < t} count[t'][r]
 * is where part t's first entry of row r goes. Scattering in order keeps each row in file
 * order for every P, so duplicates are later summed in file order: the same bits whatever
 * the thread count. Parts cost a counter per row each, so there are several only while
 * the rows do not outnumber the entries; a single part counts in the CSR's row offsets
 * themselves: the work arrays grow with the entries read, never with the declared rows
 * alone. Files written column by column (the usual order) come out with sorted
 * rows; a row that is not sorted is sorted by a stable merge sort. Only when duplicates
 * exist is the CSR compacted into a second, exact-size one.
 *
 * Array files: dense, column-major in the file; every entry becomes a CSR entry. A
 * symmetric array stores the lower triangle column by column, a skew-symmetric one the
 * part strictly below the diagonal; the rest is mirrored (negated for skew; zero diagonal).
 *
 * Memory traffic, coordinate: the triplets are read twice (count, scatter), the CSR
 * written once and read once (sort check); with duplicates, read and written once more. */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "io/io_impl.h"

#define BUILD_PARALLEL_MIN ((int64_t)1 << 16)   /* fewer entries: one thread */

/* Sort the rows that are not sorted; returns the number of duplicate entries (equal
 * neighbours) left in all rows. */
static krill_status sort_rows(krill_csr *a, int threads, int64_t *dups_out)
{
    krill_status st = KRILL_OK;
    int32_t *tc = NULL;
    double *tv = NULL;
    int64_t longest = 0, dups = 0;
    const int32_t n = a->n_rows;

#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1) \
    reduction(max : longest) reduction(+ : dups)
    for (int32_t r = 0; r < n; r++) {
        int64_t lo = a->row_ptr[r], hi = a->row_ptr[r + 1], d = 0;
        int sorted = 1;
        for (int64_t p = lo + 1; p < hi && sorted; p++) {
            sorted = a->col[p] >= a->col[p - 1];
            d += a->col[p] == a->col[p - 1];
        }
        if (sorted) dups += d;
        else if (hi - lo > longest) longest = hi - lo;
    }
    if (longest > 0) {
        KRILL_ALLOC(tc, (size_t)threads * (size_t)longest);
        KRILL_ALLOC(tv, (size_t)threads * (size_t)longest);
#pragma omp parallel for schedule(dynamic, 256) num_threads(threads) if (threads > 1) \
    reduction(+ : dups)
        for (int32_t r = 0; r < n; r++) {
            int64_t lo = a->row_ptr[r], hi = a->row_ptr[r + 1];
            int64_t p = lo + 1;
            while (p < hi && a->col[p] >= a->col[p - 1]) p++;
            if (p >= hi) continue;               /* sorted: counted above */
            size_t scratch = (size_t)omp_get_thread_num() * (size_t)longest;
            krill_sort_pairs(a->col + lo, a->val + lo, tc + scratch, tv + scratch, hi - lo);
            for (p = lo + 1; p < hi; p++) dups += a->col[p] == a->col[p - 1];
        }
    }
    *dups_out = dups;
cleanup:
    krill_free(tc);
    krill_free(tv);
    return st;
}

/* A new CSR with the sorted rows of a, equal columns summed in order. */
static krill_status sum_duplicates(const krill_csr *a, int64_t dups, int threads,
                                   krill_csr **out)
{
    krill_status st = KRILL_OK;
    krill_csr *b = NULL;
    const int32_t n = a->n_rows;
    KRILL_TRY(krill_csr_create(n, a->n_cols, a->nnz - dups, &b));
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (int32_t r = 0; r < n; r++) {
        int64_t unique = a->row_ptr[r + 1] > a->row_ptr[r];
        for (int64_t p = a->row_ptr[r] + 1; p < a->row_ptr[r + 1]; p++)
            unique += a->col[p] != a->col[p - 1];
        b->row_ptr[r + 1] = unique;
    }
    for (int32_t r = 0; r < n; r++) b->row_ptr[r + 1] += b->row_ptr[r];
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (int32_t r = 0; r < n; r++) {
        int64_t q = b->row_ptr[r] - 1;
        for (int64_t p = a->row_ptr[r]; p < a->row_ptr[r + 1]; p++) {
            if (p > a->row_ptr[r] && a->col[p] == a->col[p - 1]) {
                b->val[q] += a->val[p];
            } else {
                b->col[++q] = a->col[p];
                b->val[q] = a->val[p];
            }
        }
    }
    *out = b;
    b = NULL;
cleanup:
    krill_csr_destroy(&b);
    return st;
}

/* Finite values can sum to an infinity: the first such entry (row order) is a parse error. */
static krill_status check_sums(const char *name, const krill_csr *a)
{
    for (int32_t r = 0; r < a->n_rows; r++)
        for (int64_t p = a->row_ptr[r]; p < a->row_ptr[r + 1]; p++)
            if (!isfinite(a->val[p]))
                return krill_error(KRILL_ERR_PARSE, "%s: the duplicate entries at (%d, %d) sum to "
                                   "%g: values must be finite", name, r + 1, a->col[p] + 1,
                                   a->val[p]);
    return KRILL_OK;
}

/* Scatter the entries into a, whose row_ptr is all zero, with no array over the rows but
 * row_ptr itself: counts in row_ptr[r + 1], a prefix sum makes row_ptr[r] row r's next
 * slot, the scatter leaves it at row r's end, and a shift puts the offsets back. */
static void scatter_serial(const mm_entries *e, int mirror, double mirror_sign, krill_csr *a)
{
    int64_t *rp = a->row_ptr;
    for (int64_t k = 0; k < e->count; k++) {
        rp[e->row[k] + 1]++;
        if (mirror && e->row[k] != e->col[k]) rp[e->col[k] + 1]++;
    }
    for (int32_t r = 0; r < a->n_rows; r++) rp[r + 1] += rp[r];
    for (int64_t k = 0; k < e->count; k++) {
        int64_t p = rp[e->row[k]]++;
        a->col[p] = e->col[k];
        a->val[p] = e->val[k];
        if (mirror && e->row[k] != e->col[k]) {
            p = rp[e->col[k]]++;
            a->col[p] = e->row[k];
            a->val[p] = mirror_sign * e->val[k];
        }
    }
    for (int32_t r = a->n_rows; r > 0; r--) rp[r] = rp[r - 1];
    rp[0] = 0;
}

/* The same with `parts` threads, each counting its contiguous share of the entries per row
 * in slot (parts x rows, zeroed); slot then holds each part's next slot of each row. */
static void scatter_parts(const mm_entries *e, int mirror, double mirror_sign, int parts,
                          int64_t *slot, krill_csr *a)
{
    const int32_t rows = a->n_rows;
    const int64_t count = e->count;
    const int32_t *row = e->row, *col = e->col;
    const double *val = e->val;
    const size_t stride = (size_t)rows;
#pragma omp parallel for schedule(static, 1) num_threads(parts)
    for (int t = 0; t < parts; t++) {
        int64_t *mine = slot + (size_t)t * stride;
        for (int64_t k = count * t / parts; k < count * (t + 1) / parts; k++) {
            mine[row[k]]++;
            if (mirror && row[k] != col[k]) mine[col[k]]++;
        }
    }
#pragma omp parallel for schedule(static) num_threads(parts)
    for (int32_t r = 0; r < rows; r++) {
        int64_t in_row = 0;
        for (int t = 0; t < parts; t++) {
            int64_t c = slot[(size_t)t * stride + (size_t)r];
            slot[(size_t)t * stride + (size_t)r] = in_row;
            in_row += c;
        }
        a->row_ptr[r + 1] = in_row;
    }
    for (int32_t r = 0; r < rows; r++) a->row_ptr[r + 1] += a->row_ptr[r];
#pragma omp parallel for schedule(static, 1) num_threads(parts)
    for (int t = 0; t < parts; t++) {
        int64_t *mine = slot + (size_t)t * stride;
        for (int32_t r = 0; r < rows; r++) mine[r] += a->row_ptr[r];
        for (int64_t k = count * t / parts; k < count * (t + 1) / parts; k++) {
            int64_t p = mine[row[k]]++;
            a->col[p] = col[k];
            a->val[p] = val[k];
            if (mirror && row[k] != col[k]) {
                p = mine[col[k]]++;
                a->col[p] = row[k];
                a->val[p] = mirror_sign * val[k];
            }
        }
    }
}

static krill_status build_coordinate(const char *name, const mm_header *h, const mm_entries *e,
                                     krill_csr **out)
{
    krill_status st = KRILL_OK;
    krill_csr *a = NULL;
    int64_t *slot = NULL;        /* parts x rows: counts, then each part's next slot */
    const int32_t rows = (int32_t)h->info.rows, cols = (int32_t)h->info.cols;
    const int64_t count = e->count;
    const int mirror = h->info.symmetry != KRILL_MM_GENERAL;
    const double mirror_sign = h->info.symmetry == KRILL_MM_SKEW_SYMMETRIC ? -1.0 : 1.0;
    int threads = mm_threads_for(count, BUILD_PARALLEL_MIN);
    /* each part keeps a count per row: worth it only while rows are not many more than
     * entries (otherwise the counters cost more than the entries they sort), so the work
     * arrays grow with the entries, never with the rows alone */
    while (threads > 1 && (int64_t)threads * rows > 4 * count) threads--;
    const int parts = threads;
    int64_t off_diagonal = 0;

#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1) \
    reduction(+ : off_diagonal)
    for (int64_t k = 0; k < count; k++) off_diagonal += mirror && e->row[k] != e->col[k];
    const int64_t nnz = count + off_diagonal;
    const size_t bytes = ((size_t)rows + 1) * sizeof(int64_t) +
                         (size_t)nnz * (sizeof(int32_t) + sizeof(double)) +
                         (parts > 1 ? (size_t)parts * (size_t)rows * sizeof *slot : 0);
    KRILL_TRY(mm_check_memory(name, h, bytes, "the CSR"));
    KRILL_TRY(krill_csr_create(rows, cols, nnz, &a));
    if (parts == 1) {
        scatter_serial(e, mirror, mirror_sign, a);
    } else {
        KRILL_CALLOC(slot, (size_t)parts * (size_t)rows);
        scatter_parts(e, mirror, mirror_sign, parts, slot, a);
        krill_free(slot);
        slot = NULL;
    }

    int64_t dups = 0;
    KRILL_TRY(sort_rows(a, mm_threads_for(a->nnz, BUILD_PARALLEL_MIN), &dups));
    if (dups > 0) {
        krill_csr *summed = NULL;
        KRILL_TRY(sum_duplicates(a, dups, mm_threads_for(a->nnz, BUILD_PARALLEL_MIN), &summed));
        krill_csr_destroy(&a);
        a = summed;
        KRILL_TRY(check_sums(name, a));
    }
    *out = a;
    a = NULL;
cleanup:
    krill_free(slot);
    krill_csr_destroy(&a);
    return st;
}

/* Entry (i, j) of a dense array file's matrix from its stored values v. */
static double array_entry(const mm_header *h, const double *v, int64_t i, int64_t j)
{
    const int64_t n = h->info.rows;
    switch (h->info.symmetry) {
    case KRILL_MM_SYMMETRIC: {
        /* column c of the lower triangle starts at sum_{c' < c} (n - c') */
        int64_t lo = i >= j ? i : j, c = i >= j ? j : i;
        return v[c * n - c * (c - 1) / 2 + (lo - c)];
    }
    case KRILL_MM_SKEW_SYMMETRIC: {
        /* column c of the strict lower triangle starts at sum_{c' < c} (n - 1 - c') */
        if (i == j) return 0.0;
        int64_t lo = i > j ? i : j, c = i > j ? j : i;
        double x = v[c * (n - 1) - c * (c - 1) / 2 + (lo - c - 1)];
        return i > j ? x : -x;
    }
    default:
        return v[j * n + i];
    }
}

static krill_status build_array(const char *name, const mm_header *h, const mm_entries *e,
                                krill_csr **out)
{
    krill_status st = KRILL_OK;
    krill_csr *a = NULL;
    const int32_t rows = (int32_t)h->info.rows, cols = (int32_t)h->info.cols;
    const int64_t nnz = (int64_t)rows * cols;
    const int threads = mm_threads_for(nnz, BUILD_PARALLEL_MIN);
    KRILL_TRY(mm_check_memory(name, h, ((size_t)rows + 1) * sizeof(int64_t) +
                              (size_t)nnz * (sizeof(int32_t) + sizeof(double)), "the CSR"));
    KRILL_TRY(krill_csr_create(rows, cols, nnz, &a));
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (int32_t i = 0; i < rows; i++) {
        int64_t base = (int64_t)i * cols;
        a->row_ptr[i + 1] = base + cols;
        for (int32_t j = 0; j < cols; j++) {
            a->col[base + j] = j;
            a->val[base + j] = array_entry(h, e->val, i, j);
        }
    }
    *out = a;
    a = NULL;
cleanup:
    krill_csr_destroy(&a);
    return st;
}

krill_status mm_build_csr(const char *name, const mm_header *h, const mm_entries *e,
                          krill_csr **csr)
{
    return h->info.is_array ? build_array(name, h, e, csr) : build_coordinate(name, h, e, csr);
}
