/* formats/rbp.c - Row Block Packing (RBP) on the host: the decomposition that rbp-csr,
 * rbp-ell and rbp-ellr are built from, on both devices (RBP paper, section 3).
 *
 * Within a row, a maximal stretch of two or more consecutive columns c, c+1, ..., d is a
 * run: it is stored as the pair (c, d) and its d - c + 1 values, so its column indices
 * cost 8 bytes however long it is. Every other entry is isolated and goes to a plain CSR
 * part. Algorithm 3 builds the RBP-CSR arrays in one pass over the CSR, row by row:
 *   Comp_Columns (N_col = 2 x runs), Comp_Values (N_val = entries in runs),
 *   ColumnsCSR / ValuesCSR (N_non isolated entries), and three N + 1 offset arrays:
 *   Col_ptr, Val_ptr (where each row's pairs and run values start) and RowPtr (where its
 *   isolated entries start).
 * The array lengths come first from krill_csr_run_stats (formats/csr.c), so every array is
 * allocated once at its exact size; the fill below is checked against them.
 *
 * Widths (formula (4) of the paper): 4-byte columns and 4-byte offsets. Offsets index
 * Comp_Values and the CSR part, so N_val or N_non above 2^31 - 1 cannot be stored; such a
 * matrix (over 16 GB of values alone) is refused with KRILL_ERR_UNSUPPORTED, "use csr". */
#include <omp.h>
#include <string.h>

#include "formats/formats_impl.h"

krill_status krill_rbp_fits(const char *format, int ell_layout, const krill_format_stats *s)
{
    krill_status st = KRILL_OK;
    const int64_t entries = s->n_rows * s->kv;   /* N * K_v of the compressed ELL */
    if (!ell_layout && s->n_val > INT32_MAX) {
        st = krill_error(KRILL_ERR_UNSUPPORTED, "%s: %lld entries lie in runs (N_val), more "
                         "than its 4-byte offsets (Val_ptr) can index (%d); use csr", format,
                         (long long)s->n_val, INT32_MAX);
    } else if (s->n_non > INT32_MAX) {
        st = krill_error(KRILL_ERR_UNSUPPORTED, "%s: %lld isolated entries (N_non), more than "
                         "its 4-byte offsets (RowPtr) can index (%d); use csr", format,
                         (long long)s->n_non, INT32_MAX);
    } else if (ell_layout && entries > INT32_MAX) {
        st = krill_error(KRILL_ERR_UNSUPPORTED, "%s: %lld rows x K_v = %lld (the most run "
                         "values in a row) = %lld entries, more than %d: the padding would "
                         "dominate; use rbp-csr or csr", format, (long long)s->n_rows,
                         (long long)s->kv, (long long)entries, INT32_MAX);
    }
    return st;
}

void krill_rbp_host_free(krill_rbp_host *h)
{
    krill_free(h->val_ptr);
    krill_free(h->col_ptr);
    krill_free(h->row_ptr);
    krill_free(h->comp_col);
    krill_free(h->comp_val);
    krill_free(h->non_col);
    krill_free(h->non_val);
    memset(h, 0, sizeof *h);
}

/* Row i's runs and isolated entries into the arrays from the row's own offsets (Algorithm
 * 3's loop body); 1 when the row ends where the next row's offsets start. */
static int fill_row(const krill_csr *a, int32_t i, krill_rbp_host *h)
{
    int64_t p = a->row_ptr[i], cnt1 = h->col_ptr[i], cnt2 = h->val_ptr[i], cnt3 = h->row_ptr[i];
    const int64_t end = a->row_ptr[i + 1];
    while (p < end) {
        int64_t q = p + 1;   /* [p, q): the longest stretch of consecutive columns */
        while (q < end && a->col[q] == a->col[q - 1] + 1) q++;
        if (q - p >= 2) {    /* a run: its first and last column, all its values */
            h->comp_col[cnt1++] = a->col[p];
            h->comp_col[cnt1++] = a->col[q - 1];
            for (int64_t k = p; k < q; k++) h->comp_val[cnt2++] = a->val[k];
        } else {             /* isolated */
            h->non_col[cnt3] = a->col[p];
            h->non_val[cnt3++] = a->val[p];
        }
        p = q;
    }
    return cnt1 == h->col_ptr[i + 1] && cnt2 == h->val_ptr[i + 1] && cnt3 == h->row_ptr[i + 1];
}

/* Three passes, the first and last over the rows in parallel (`threads`, one below
 * KRILL_BUILD_PARALLEL_MIN entries): each row's counts (krill_csr_row_runs) into the offset
 * arrays, their prefix sums (serial, checked against the 4-byte widths first), then each
 * row's fill at its offsets. The arrays do not depend on the thread count. */
krill_status krill_rbp_host_build(const krill_csr *a, const char *format, int threads,
                                  krill_rbp_host *h)
{
    krill_status st = KRILL_OK;
    krill_format_stats runs = {0};
    int32_t bad_row = a->n_rows;
    const int par = a->nnz >= KRILL_BUILD_PARALLEL_MIN;
    memset(h, 0, sizeof *h);
    if (threads <= 0) threads = omp_get_max_threads();
    h->n_rows = a->n_rows;
    h->n_cols = a->n_cols;
    h->nnz = a->nnz;
    KRILL_ALLOC(h->val_ptr, (size_t)a->n_rows + 1);
    KRILL_ALLOC(h->col_ptr, (size_t)a->n_rows + 1);
    KRILL_ALLOC(h->row_ptr, (size_t)a->n_rows + 1);
    h->val_ptr[0] = h->col_ptr[0] = h->row_ptr[0] = 0;
#pragma omp parallel for schedule(static) num_threads(threads) if (par)
    for (int32_t i = 0; i < a->n_rows; i++) {
        int64_t row_val, row_col, isolated;
        krill_csr_row_runs(a, i, &row_val, &row_col, &isolated);
        h->val_ptr[i + 1] = (int32_t)row_val;   /* a row's counts fit: a row has < 2^31 */
        h->col_ptr[i + 1] = (int32_t)row_col;
        h->row_ptr[i + 1] = (int32_t)isolated;
    }
    runs.n_rows = a->n_rows;
    for (int32_t i = 0; i < a->n_rows; i++) {
        runs.n_val += h->val_ptr[i + 1];
        runs.n_col += h->col_ptr[i + 1];
        runs.n_non += h->row_ptr[i + 1];
    }
    KRILL_TRY(krill_rbp_fits(format, 0, &runs));
    for (int32_t i = 0; i < a->n_rows; i++) {   /* the offsets: every sum fits now */
        h->val_ptr[i + 1] += h->val_ptr[i];
        h->col_ptr[i + 1] += h->col_ptr[i];
        h->row_ptr[i + 1] += h->row_ptr[i];
    }
    h->n_val = runs.n_val;
    h->n_col = runs.n_col;
    h->n_non = runs.n_non;
    KRILL_ALLOC(h->comp_col, h->n_col);
    KRILL_ALLOC(h->comp_val, h->n_val);
    KRILL_ALLOC(h->non_col, h->n_non);
    KRILL_ALLOC(h->non_val, h->n_non);
#pragma omp parallel for schedule(static) reduction(min : bad_row) num_threads(threads) if (par)
    for (int32_t i = 0; i < a->n_rows; i++)
        if (!fill_row(a, i, h) && i < bad_row) bad_row = i;
    if (bad_row < a->n_rows)
        st = krill_error(KRILL_ERR_INTERNAL, "%s: row %d filled other counts than its run "
                         "statistics", format, bad_row);
cleanup:
    if (st != KRILL_OK) krill_rbp_host_free(h);
    return st;
}

/* Row by row, the CSR order of a row is its runs and isolated entries merged by column
 * (both are ascending and no column is in both), so new values are dealt out in one pass. */
void krill_rbp_host_scatter(const krill_rbp_host *h, const double *values, double *comp_val,
                            double *non_val)
{
    int64_t p = 0;   /* position in the CSR order */
    for (int64_t i = 0; i < h->n_rows; i++) {
        int64_t q = h->row_ptr[i], v = h->val_ptr[i];
        const int64_t q_end = h->row_ptr[i + 1];
        for (int64_t c = h->col_ptr[i]; c < h->col_ptr[i + 1]; c += 2) {
            const int32_t first = h->comp_col[c], last = h->comp_col[c + 1];
            for (; q < q_end && h->non_col[q] < first; q++) non_val[q] = values[p++];
            for (int64_t j = first; j <= last; j++) comp_val[v++] = values[p++];
        }
        for (; q < q_end; q++) non_val[q] = values[p++];
    }
}

/* The inverse of the scatter: row i has val_ptr[i + 1] - val_ptr[i] run values and
 * row_ptr[i + 1] - row_ptr[i] isolated entries (the offsets come first, so the fill stays
 * inside the nnz entries allocated); each isolated entry goes just before the first run to
 * its right, which puts the row back in column order, the CSR order of the build. */
krill_status krill_rbp_host_to_csr(const krill_rbp_host *h, krill_csr **csr)
{
    krill_status st = KRILL_OK;
    krill_csr *a = NULL;
    *csr = NULL;
    KRILL_TRY(krill_csr_create((int32_t)h->n_rows, (int32_t)h->n_cols, h->nnz, &a));
    for (int64_t i = 0; i < h->n_rows; i++)
        a->row_ptr[i + 1] = a->row_ptr[i] + (h->val_ptr[i + 1] - h->val_ptr[i]) +
                            (h->row_ptr[i + 1] - h->row_ptr[i]);
    if (a->row_ptr[h->n_rows] != h->nnz) {
        st = krill_error(KRILL_ERR_INTERNAL, "rbp: runs and isolated entries add up to %lld "
                         "entries, the matrix has %lld", (long long)a->row_ptr[h->n_rows],
                         (long long)h->nnz);
        goto cleanup;
    }
    for (int64_t i = 0; i < h->n_rows; i++) {
        int64_t p = a->row_ptr[i], q = h->row_ptr[i], v = h->val_ptr[i];
        const int64_t q_end = h->row_ptr[i + 1];
        for (int64_t c = h->col_ptr[i]; c < h->col_ptr[i + 1]; c += 2) {
            const int32_t first = h->comp_col[c], last = h->comp_col[c + 1];
            for (; q < q_end && h->non_col[q] < first; q++, p++) {
                a->col[p] = h->non_col[q];
                a->val[p] = h->non_val[q];
            }
            for (int64_t j = first; j <= last; j++, p++) {
                a->col[p] = (int32_t)j;
                a->val[p] = h->comp_val[v++];
            }
        }
        for (; q < q_end; q++, p++) {
            a->col[p] = h->non_col[q];
            a->val[p] = h->non_val[q];
        }
    }
    *csr = a;
    a = NULL;
cleanup:
    krill_csr_destroy(&a);
    return st;
}

size_t krill_rbp_csr_bytes(const krill_rbp_host *h)
{
    const size_t offsets = 3 * ((size_t)h->n_rows + 1) * sizeof(int32_t);
    return offsets + (size_t)h->n_col * sizeof(int32_t) + (size_t)h->n_val * sizeof(double) +
           (size_t)h->n_non * (sizeof(int32_t) + sizeof(double));
}

/* Rows differ in length (skewed matrices), so the CPU kernels hand rows out in dynamic
 * chunks: at most 256 rows (thousands of entries on FEM matrices, a negligible scheduling
 * cost), and few enough that every thread gets about 8 chunks (a small matrix in 256-row
 * chunks left most of 16 threads idle: bcsstk13, 2,003 rows, took 4x csr's time), but no
 * fewer than 16 rows. */
int krill_rbp_cpu_chunk(int64_t n_rows, int threads)
{
    int64_t chunk = n_rows / (8 * (int64_t)(threads > 0 ? threads : 1));
    return chunk > 256 ? 256 : chunk < 16 ? 16 : (int)chunk;
}
