/* fuzz/fuzz_vector.c - libFuzzer harness of krill_mm_read_vector.
 *
 * The input is written to a scratch file and read as a vector. Properties of a vector
 * read without error: every value is finite; the same file read as a matrix is n x 1 and
 * holds the same values (entry i, or 0 where row i is empty; compared with ==, since a
 * vector's empty entry is +0 where the matrix has none); written with
 * krill_mm_write_vector and read again it is the same bit for bit. */
#include <math.h>
#include <string.h>

#include "fuzz_util.h"
#include "krill/io.h"

/* x[0..n) against the matrix a: n x 1 with the same values. */
static void same_as_matrix(const double *x, int64_t n, const krill_csr *a)
{
    if (a->n_rows != n || a->n_cols != 1)
        fuzz_fail("a vector of %lld read as a %d x %d matrix", (long long)n, a->n_rows,
                  a->n_cols);
    for (int32_t i = 0; i < a->n_rows; i++) {
        double m = a->row_ptr[i + 1] > a->row_ptr[i] ? a->val[a->row_ptr[i]] : 0.0;
        if (!(x[i] == m)) fuzz_fail("vector entry %d is %.17g, the matrix has %.17g", i, x[i], m);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    double *x = NULL, *again = NULL;
    int64_t n = 0, n_again = 0;
    krill_csr *a = NULL;
    const char *path = fuzz_path("input.mtx"), *copy = fuzz_path("vector.mtx");
    fuzz_write(path, data, size);
    krill_status st = krill_mm_read_vector(path, &x, &n);
    if ((st == KRILL_OK) != (x != NULL))
        fuzz_fail("status %d with%s a vector", (int)st, x ? "" : "out");
    if (st == KRILL_OK) {
        for (int64_t i = 0; i < n; i++)
            if (!isfinite(x[i])) fuzz_fail("vector entry %lld is %g", (long long)i, x[i]);
        if (krill_mm_read(path, &a, NULL) != KRILL_OK)
            fuzz_fail("read as a vector but not as a matrix: %s", krill_last_error());
        same_as_matrix(x, n, a);
        if (krill_mm_write_vector(copy, x, n) != KRILL_OK)
            fuzz_fail("krill_mm_write_vector: %s", krill_last_error());
        if (krill_mm_read_vector(copy, &again, &n_again) != KRILL_OK)
            fuzz_fail("reading back what krill_mm_write_vector wrote: %s", krill_last_error());
        if (n_again != n || memcmp(x, again, (size_t)n * sizeof *x) != 0)
            fuzz_fail("vector write-then-read round trip differs");
    }
    krill_host_free(x);
    krill_host_free(again);
    krill_csr_destroy(&a);
    return 0;
}
