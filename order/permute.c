/* order/permute.c - symmetric permutation of a CSR, permutation of vectors, bandwidth.
 *
 * A permutation is perm[new] = old. With P the matrix whose row `new` is e_perm[new]^T,
 * B = P A P^T has b_ij = a_perm[i],perm[j], (P x)_new = x_perm[new], and P^T undoes P.
 * A x = b becomes B (P x) = P b: the system in the new numbering, solved for y = P x, and
 * x = P^T y back in the original one. */
#include <omp.h>

#include "core/core_impl.h"
#include "krill/order.h"
#include "order/order_impl.h"

/* Rows handed to an OpenMP thread at a time: rows differ in length (and so in sort cost),
 * so the schedule is dynamic, in chunks large enough to make its overhead negligible. */
#define PERMUTE_ROWS_PER_TASK 256

krill_status krill_csr_permute(const krill_csr *a, const int32_t *perm, krill_csr **out)
{
    krill_status st = KRILL_OK;
    int32_t *inverse = NULL, *scratch_col = NULL;
    double *scratch_val = NULL;
    krill_csr *b = NULL;
    KRILL_REQUIRE(out != NULL, "krill_csr_permute: output pointer is NULL");
    *out = NULL;
    KRILL_TRY(krill_order_check_square(a, "krill_csr_permute"));
    const int32_t n = a->n_rows;
    KRILL_REQUIRE(perm != NULL || n == 0, "krill_csr_permute: perm is NULL");
    KRILL_REQUIRE(a->val != NULL || a->nnz == 0, "krill_csr_permute: val is NULL with nnz %lld",
                  (long long)a->nnz);

    /* inverse[old] = new, which also proves perm a permutation: n entries in [0, n), none
     * repeated */
    KRILL_ALLOC(inverse, n);
    for (int32_t old = 0; old < n; old++) inverse[old] = -1;
    for (int32_t i = 0; i < n; i++) {
        KRILL_REQUIRE(perm[i] >= 0 && perm[i] < n, "krill_csr_permute: perm[%d] = %d is "
                      "outside [0, %d), so perm is not a permutation", i, perm[i], n);
        KRILL_REQUIRE(inverse[perm[i]] < 0, "krill_csr_permute: perm[%d] = %d repeats "
                      "perm[%d], so perm is not a permutation", i, perm[i], inverse[perm[i]]);
        inverse[perm[i]] = i;
    }

    /* row i of B is row perm[i] of A with its columns renamed j -> inverse[j], re-sorted */
    KRILL_TRY(krill_csr_create(n, n, a->nnz, &b));
    int64_t longest = 0;
    for (int32_t i = 0; i < n; i++) {
        const int64_t len = a->row_ptr[perm[i] + 1] - a->row_ptr[perm[i]];
        b->row_ptr[i + 1] = b->row_ptr[i] + len;
        if (len > longest) longest = len;
    }
    /* rows are independent: OpenMP's threads, each with its own sort scratch of `longest`
     * pairs, and no more threads than keep the scratch within the size of A (one dense row
     * would otherwise cost n pairs per thread) */
    int threads = omp_get_max_threads();
    if (longest > 0 && a->nnz / longest < threads) threads = (int)(a->nnz / longest);
    KRILL_ALLOC(scratch_col, (size_t)threads * (size_t)longest);
    KRILL_ALLOC(scratch_val, (size_t)threads * (size_t)longest);
#pragma omp parallel for schedule(dynamic, PERMUTE_ROWS_PER_TASK) num_threads(threads)
    for (int32_t i = 0; i < n; i++) {
        const size_t mine = (size_t)omp_get_thread_num() * (size_t)longest;
        const int64_t lo = b->row_ptr[i];
        int64_t q = lo;
        for (int64_t p = a->row_ptr[perm[i]]; p < a->row_ptr[perm[i] + 1]; p++, q++) {
            b->col[q] = inverse[a->col[p]];
            b->val[q] = a->val[p];
        }
        krill_sort_pairs(b->col + lo, b->val + lo, scratch_col + mine, scratch_val + mine,
                         q - lo);
    }
    *out = b;
    b = NULL;
cleanup:
    krill_free(inverse);
    krill_free(scratch_col);
    krill_free(scratch_val);
    krill_csr_destroy(&b);
    return st;
}

/* These two cannot report an error: NULL arrays or n <= 0 do nothing. */
void krill_vec_permute_host(int32_t n, const int32_t *perm, const double *x, double *y)
{
    if (!perm || !x || !y) return;
    for (int32_t i = 0; i < n; i++) y[i] = x[perm[i]];
}

void krill_vec_unpermute_host(int32_t n, const int32_t *perm, const double *y, double *x)
{
    if (!perm || !x || !y) return;
    for (int32_t i = 0; i < n; i++) x[perm[i]] = y[i];
}

int32_t krill_csr_bandwidth(const krill_csr *a)
{
    int64_t width = 0;
    if (!a || !a->row_ptr || (a->nnz > 0 && !a->col)) return 0;
    for (int32_t i = 0; i < a->n_rows; i++)
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++) {
            const int64_t d = (int64_t)a->col[p] - i;
            if (d > width) width = d;
            if (-d > width) width = -d;
        }
    return (int32_t)width;
}
