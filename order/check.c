/* order/check.c - the structural check the renumbering functions run on their input. */
#include "core/core_impl.h"
#include "order/order_impl.h"

krill_status krill_order_check_square(const krill_csr *a, const char *fn)
{
    krill_status st = KRILL_OK;
    KRILL_REQUIRE(a != NULL, "%s: the matrix is NULL", fn);
    KRILL_REQUIRE(a->n_rows == a->n_cols, "%s: the matrix is %d x %d; renumbering needs a "
                  "square matrix", fn, a->n_rows, a->n_cols);
    KRILL_REQUIRE(a->n_rows >= 0 && a->nnz >= 0, "%s: negative size (n %d, nnz %lld)", fn,
                  a->n_rows, (long long)a->nnz);
    KRILL_REQUIRE(a->row_ptr != NULL, "%s: row_ptr is NULL", fn);
    KRILL_REQUIRE(a->nnz == 0 || a->col != NULL, "%s: col is NULL with nnz %lld", fn,
                  (long long)a->nnz);
    KRILL_REQUIRE(a->row_ptr[0] == 0, "%s: row_ptr[0] = %lld, expected 0", fn,
                  (long long)a->row_ptr[0]);
    for (int32_t i = 0; i < a->n_rows; i++)
        KRILL_REQUIRE(a->row_ptr[i + 1] >= a->row_ptr[i], "%s: row_ptr[%d] = %lld is below "
                      "row_ptr[%d] = %lld", fn, i + 1, (long long)a->row_ptr[i + 1], i,
                      (long long)a->row_ptr[i]);
    KRILL_REQUIRE(a->row_ptr[a->n_rows] == a->nnz, "%s: row_ptr[%d] = %lld, expected nnz = "
                  "%lld", fn, a->n_rows, (long long)a->row_ptr[a->n_rows], (long long)a->nnz);
    for (int32_t i = 0; i < a->n_rows; i++)
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++) {
            KRILL_REQUIRE(a->col[p] >= 0 && a->col[p] < a->n_cols, "%s: column %d of entry "
                          "%lld (row %d) is outside [0, %d)", fn, a->col[p], (long long)p, i,
                          a->n_cols);
            KRILL_REQUIRE(p == a->row_ptr[i] || a->col[p] > a->col[p - 1], "%s: row %d is not "
                          "sorted and unique (column %d after %d)", fn, i, a->col[p],
                          a->col[p - 1]);
        }
cleanup:
    return st;
}
