/* tests/test_mm_write.c - the Matrix Market writers: a matrix, an array and a vector read
 * back bit for bit (random bit patterns: every exponent, subnormals, negative zero, the
 * extremes), plain and gzip; refusals (non-finite values, bad arguments, unwritable
 * paths) leave no file; allocation failures. */
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core_impl.h"
#include "testutil.h"

static char path_buf[4][256];

static const char *tmp_path(int slot, const char *suffix)
{
    snprintf(path_buf[slot], sizeof path_buf[slot], "test_mm_write_%d_%d%s", (int)getpid(), slot,
             suffix);
    return path_buf[slot];
}

static int exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Finite doubles from random bits (all exponents, subnormals), then the special ones. */
static void hard_values(double *x, int64_t n, uint64_t seed)
{
    static const double special[] = {0.0, -0.0, DBL_MIN, -DBL_MIN, DBL_MAX, -DBL_MAX,
                                     DBL_TRUE_MIN, -DBL_TRUE_MIN, DBL_MIN - DBL_TRUE_MIN,
                                     DBL_EPSILON, 1.0 + DBL_EPSILON, 0.1, 1.0 / 3.0, 1e22,
                                     1e23, 9007199254740993.0, 5e-324, 1.7976931348623157e308};
    const int64_t ns = (int64_t)(sizeof special / sizeof special[0]);
    uint64_t s = seed;
    for (int64_t k = 0; k < n; k++) {
        if (k < ns) {
            x[k] = special[k];
            continue;
        }
        do {
            uint64_t bits = rng_next(&s);
            if (k % 4 == 1) bits &= 0x800fffffffffffffull;            /* subnormal */
            memcpy(&x[k], &bits, sizeof bits);
        } while (!isfinite(x[k]));
    }
}

/* A random sparse rows x cols CSR with sorted unique columns and the given values. */
static krill_csr *random_csr(int32_t rows, int32_t cols, int per_row, uint64_t seed)
{
    krill_csr *a = NULL;
    if (krill_csr_create(rows, cols, (int64_t)rows * per_row, &a) != KRILL_OK) return NULL;
    uint64_t s = seed;
    int64_t nnz = 0;
    for (int32_t i = 0; i < rows; i++) {
        int32_t c = -1;
        for (int k = 0; k < per_row; k++) {
            int32_t room = cols - 1 - c - (per_row - 1 - k);
            if (room <= 0) break;
            c += 1 + (int32_t)(rng_next(&s) % (uint64_t)(room < 50 ? room : 50));
            a->col[nnz++] = c;
        }
        a->row_ptr[i + 1] = nnz;
    }
    a->nnz = nnz;
    hard_values(a->val, nnz, seed + 1);
    return a;
}

static int same_csr(const krill_csr *a, const krill_csr *b)
{
    return a && b && a->n_rows == b->n_rows && a->n_cols == b->n_cols && a->nnz == b->nnz &&
           memcmp(a->row_ptr, b->row_ptr, ((size_t)a->n_rows + 1) * sizeof *a->row_ptr) == 0 &&
           memcmp(a->col, b->col, (size_t)a->nnz * sizeof *a->col) == 0 &&
           memcmp(a->val, b->val, (size_t)a->nnz * sizeof *a->val) == 0;
}

static void test_matrix_round_trip(const char *suffix)
{
    /* ~200k entries: several parallel blocks in the writer and chunks in the reader */
    krill_csr *a = random_csr(20000, 15000, 10, 7), *b = NULL;
    krill_mm_info info;
    const char *path = tmp_path(0, suffix);
    CHECK(a != NULL);
    CHECK_OK(krill_mm_write(path, a));
    CHECK_OK(krill_mm_read(path, &b, &info));
    CHECK(same_csr(a, b));
    CHECK(info.field == KRILL_MM_REAL && info.symmetry == KRILL_MM_GENERAL && !info.is_array &&
          info.entries == a->nnz);
    krill_csr_destroy(&b);

    /* empty rows, an empty matrix, a 0 x 0 one */
    krill_csr *e = NULL;
    CHECK_OK(krill_csr_create(5, 7, 0, &e));
    CHECK_OK(krill_mm_write(path, e));
    CHECK_OK(krill_mm_read(path, &b, NULL));
    CHECK(same_csr(e, b));
    krill_csr_destroy(&b);
    krill_csr_destroy(&e);
    CHECK_OK(krill_csr_create(0, 0, 0, &e));
    CHECK_OK(krill_mm_write(path, e));
    CHECK_OK(krill_mm_read(path, &b, NULL));
    CHECK(same_csr(e, b));
    krill_csr_destroy(&b);
    krill_csr_destroy(&e);
    remove(path);
    krill_csr_destroy(&a);
}

static void test_vector_and_array(void)
{
    const int64_t n = 100003;
    double *x = malloc((size_t)n * sizeof *x), *y = NULL;
    int64_t m = -1;
    hard_values(x, n, 11);
    const char *path = tmp_path(1, ".mtx");
    CHECK_OK(krill_mm_write_vector(path, x, n));
    CHECK_OK(krill_mm_read_vector(path, &y, &m));
    CHECK(m == n && y && memcmp(x, y, (size_t)n * sizeof *x) == 0);
    krill_host_free(y);

    /* a 3 x 4 column-major array read back as a dense CSR */
    double a[12];
    hard_values(a, 12, 5);
    krill_csr *c = NULL;
    CHECK_OK(krill_mm_write_array(path, a, 3, 4));
    CHECK_OK(krill_mm_read(path, &c, NULL));
    int same = c && c->n_rows == 3 && c->n_cols == 4 && c->nnz == 12;
    for (int i = 0; same && i < 3; i++)
        for (int j = 0; j < 4; j++)
            same = same && c->col[i * 4 + j] == j &&
                   memcmp(&c->val[i * 4 + j], &a[j * 3 + i], sizeof(double)) == 0;
    CHECK(same);
    krill_csr_destroy(&c);

    /* an empty vector */
    CHECK_OK(krill_mm_write_vector(path, NULL, 0));
    CHECK_OK(krill_mm_read_vector(path, &y, &m));
    CHECK(m == 0);
    krill_host_free(y);
    remove(path);
    free(x);
}

static void test_refusals(void)
{
    const char *path = tmp_path(2, ".mtx");
    krill_csr *a = random_csr(10, 10, 3, 3);
    a->val[4] = NAN;
    remove(path);
    CHECK_STATUS(krill_mm_write(path, a), KRILL_ERR_NUMERIC);
    CHECK(!exists(path));
    a->val[4] = 1.0;
    a->col[1] = a->col[0];                             /* unsorted: not a valid CSR */
    CHECK_STATUS(krill_mm_write(path, a), KRILL_ERR_ARG);
    CHECK(!exists(path));
    krill_csr_destroy(&a);
    double v[3] = {1.0, INFINITY, 2.0};
    CHECK_STATUS(krill_mm_write_vector(path, v, 3), KRILL_ERR_NUMERIC);
    CHECK(strstr(krill_last_error(), "(1, 0)") != NULL && !exists(path));
    CHECK_STATUS(krill_mm_write_vector(path, v, -1), KRILL_ERR_ARG);
    CHECK_STATUS(krill_mm_write_vector(NULL, v, 1), KRILL_ERR_ARG);
    CHECK_STATUS(krill_mm_write_vector(path, NULL, 2), KRILL_ERR_ARG);
    CHECK_STATUS(krill_mm_write(path, NULL), KRILL_ERR_ARG);
    CHECK_STATUS(krill_mm_write_array(path, v, 3000000000LL, 1), KRILL_ERR_ARG);
    CHECK_STATUS(krill_mm_write_vector("no/such/dir/x.mtx", v, 1), KRILL_ERR_IO);
    CHECK(strstr(krill_last_error(), "no/such/dir/x.mtx") != NULL);
    if (exists("/dev/full")) {                         /* a disk that is always full */
        double big[4096];
        hard_values(big, 4096, 2);
        CHECK_STATUS(krill_mm_write_vector("/dev/full", big, 4096), KRILL_ERR_IO);
    }
#ifndef KRILL_HAVE_ZLIB
    CHECK_STATUS(krill_mm_write_vector(tmp_path(2, ".mtx.gz"), v, 1), KRILL_ERR_UNSUPPORTED);
#endif
}

static void test_faults(void)
{
    const char *path = tmp_path(3, ".mtx");
    krill_csr *a = random_csr(50, 40, 4, 9), *b = NULL;
    long before = krill_alloc_calls();
    CHECK_OK(krill_mm_write(path, a));
    long needed = krill_alloc_calls() - before;
    int wrong = 0;
    for (long k = 1; k <= needed + 1; k++) {
        remove(path);
        krill_fault_alloc_after(k);
        krill_status st = krill_mm_write(path, a);
        krill_fault_alloc_after(0);
        if (k <= needed ? st != KRILL_ERR_ALLOC || exists(path) : st != KRILL_OK) wrong++;
    }
    CHECK(needed > 0 && wrong == 0);
    CHECK_OK(krill_mm_read(path, &b, NULL));
    CHECK(same_csr(a, b));
    krill_csr_destroy(&a);
    krill_csr_destroy(&b);
    remove(path);
}

/* Under a locale with a decimal comma (when one is installed) files still use '.'. */
static void test_comma_locale(void)
{
    static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8"};
    const char *set = NULL;
    for (size_t k = 0; k < sizeof names / sizeof names[0] && !set; k++)
        set = setlocale(LC_NUMERIC, names[k]);
    if (!set || localeconv()->decimal_point[0] != ',') {
        printf("no decimal-comma locale installed: locale round trip not tested\n");
        setlocale(LC_NUMERIC, "C");
        return;
    }
    krill_csr *a = random_csr(100, 100, 5, 21), *b = NULL;
    const char *path = tmp_path(3, ".mtx");
    CHECK_OK(krill_mm_write(path, a));
    CHECK_OK(krill_mm_read(path, &b, NULL));
    CHECK(same_csr(a, b));
    krill_csr_destroy(&a);
    krill_csr_destroy(&b);
    remove(path);
    setlocale(LC_NUMERIC, "C");
}

int main(void)
{
    test_matrix_round_trip(".mtx");
#ifdef KRILL_HAVE_ZLIB
    test_matrix_round_trip(".mtx.gz");
#endif
    test_vector_and_array();
    test_refusals();
    test_faults();
    test_comma_locale();
    return tu_finish("test_mm_write");
}
