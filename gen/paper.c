/* gen/paper.c - the six test matrices of the SpMV paper (Table 2 of
 * papers/000_6c430966c5a5e2e4.txt): shapes and default sizes as published, with values
 * chosen so that each system is nonsingular and well conditioned.
 *
 *   name      default N   nnz (default)   shape
 *   band1     2,000,000    2,000,000      diagonal
 *   band3     2,000,000    5,999,998      tridiagonal
 *   band101     200,000   20,197,450      band of width 101 (half-bandwidth 50)
 *   rand1     2,000,000    2,000,000      one entry per row at a random column
 *   rand100     200,000   20,000,000      100 distinct random columns per row
 *   band1x    2,000,000    3,999,999      band1 with the first row completely full
 *
 * Values (r uniform in [0,1), u uniform in [-1,1), fresh draws for every entry):
 *   - off-diagonal entries of band3, band101 and rand100 are u; the diagonal is
 *     1 + r + sum of the row's |off-diagonals|. Every Gershgorin disc then lies in
 *     Re z >= 1: nonsingular, eigenvalues with positive real part, and since the signs are
 *     random the spectrum clusters around the diagonal. rand100 always includes the
 *     diagonal among its 100 columns so that it can dominate.
 *   - band1: diagonal 1 + r (condition number < 2).
 *   - rand1: the columns form a random permutation (distinct, so the matrix is a scaled
 *     permutation: nonsingular, singular values 1 + r in [1,2)); values 1 + r.
 *   - band1x: first-row off-diagonals u / (N-1), its diagonal 1 + r + sum of their
 *     |values| (< 2 + r); the other rows' diagonals 1 + r. Each row and each column is
 *     then strictly diagonally dominant, and the condition number stays small (a first row
 *     of O(1) entries would make it grow like N).
 *
 * Randomness is splitmix64 (Steele, Lea and Flood, 2014). The seed is the FNV-1a hash of
 * the generator's name mixed with N; each row draws from its own stream (the seed mixed
 * with the row number), so rows fill in parallel and any thread count gives the same
 * bits. rand1's permutation is one Fisher-Yates shuffle on the stream of row 0. */
#include <string.h>

#include "gen/gen_impl.h"

/* ---- random numbers -------------------------------------------------------------------- */

/* The splitmix64 output function (a bijective 64-bit finalizer). */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

typedef struct rng {
    uint64_t state;
} rng;

static uint64_t rng_next(rng *g)
{
    g->state += 0x9E3779B97F4A7C15ull;   /* 2^64 / golden ratio */
    return mix64(g->state);
}

/* Uniform in [0, 1) from the top 53 bits. */
static double rng_unit(rng *g) { return (double)(rng_next(g) >> 11) * 0x1.0p-53; }

/* Uniform in [-1, 1). */
static double rng_signed(rng *g) { return 2.0 * rng_unit(g) - 1.0; }

/* Uniform in [0, m), m >= 1; the modulo bias is below m / 2^64 (< 2^-32 here). */
static uint64_t rng_below(rng *g, uint64_t m) { return rng_next(g) % m; }

static uint64_t paper_seed(const char *name, int64_t n)
{
    uint64_t h = 0xCBF29CE484222325ull;  /* FNV-1a offset basis */
    for (const char *c = name; *c; c++)
        h = (h ^ (uint64_t)(unsigned char)*c) * 0x100000001B3ull;   /* FNV prime */
    return mix64(h ^ mix64((uint64_t)n));
}

/* The stream of `row`: unrelated starting points for different rows (hashed, not
 * offset, since splitmix64 streams started at nearby states would overlap). */
static rng row_stream(uint64_t seed, int64_t row)
{
    rng g = {mix64(seed ^ mix64((uint64_t)row + 1))};
    return g;
}

/* ---- band matrices: band1, band3, band101 -------------------------------------------- */

/* Columns i-w .. i+w clipped to [0, n). */
static krill_status band_build(const krill_gen_args *args, int64_t w, krill_csr **out)
{
    krill_status st = KRILL_OK;
    krill_csr *a = NULL;
    const int64_t n = args->integer[0];
    const uint64_t seed = paper_seed(args->name, n);
    int64_t nnz = 0;
    for (int64_t i = 0; i < n; i++)
        nnz += (i + w < n - 1 ? i + w : n - 1) - (i - w > 0 ? i - w : 0) + 1;
    KRILL_TRY(krill_csr_create((int32_t)n, (int32_t)n, nnz, &a));
    a->row_ptr[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        const int64_t first = i - w > 0 ? i - w : 0, last = i + w < n - 1 ? i + w : n - 1;
        a->row_ptr[i + 1] = a->row_ptr[i] + (last - first + 1);
    }
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        rng g = row_stream(seed, i);
        const int64_t first = i - w > 0 ? i - w : 0, last = i + w < n - 1 ? i + w : n - 1;
        int64_t p = a->row_ptr[i], diag_pos = 0;
        double off_sum = 0.0;
        for (int64_t j = first; j <= last; j++, p++) {
            a->col[p] = (int32_t)j;
            if (j == i) {
                diag_pos = p;
            } else {
                a->val[p] = rng_signed(&g);
                off_sum += a->val[p] < 0 ? -a->val[p] : a->val[p];
            }
        }
        a->val[diag_pos] = 1.0 + rng_unit(&g) + off_sum;
    }
    *out = a;
    a = NULL;
cleanup:
    krill_csr_destroy(&a);
    return st;
}

krill_status krill_gen_band1(const krill_gen_args *args, krill_csr **csr)
{
    return band_build(args, 0, csr);
}

krill_status krill_gen_band3(const krill_gen_args *args, krill_csr **csr)
{
    return band_build(args, 1, csr);
}

krill_status krill_gen_band101(const krill_gen_args *args, krill_csr **csr)
{
    return band_build(args, 50, csr);
}

/* ---- rand1: a scaled random permutation ------------------------------------------------ */

krill_status krill_gen_rand1(const krill_gen_args *args, krill_csr **out)
{
    krill_status st = KRILL_OK;
    krill_csr *a = NULL;
    const int64_t n = args->integer[0];
    const uint64_t seed = paper_seed(args->name, n);
    KRILL_TRY(krill_csr_create((int32_t)n, (int32_t)n, n, &a));
    rng shuffle = row_stream(seed, 0);
    for (int64_t i = 0; i < n; i++) {
        a->row_ptr[i + 1] = i + 1;
        a->col[i] = (int32_t)i;
    }
    /* Fisher-Yates: col becomes a uniformly random permutation of 0..n-1. */
    for (int64_t i = n - 1; i > 0; i--) {
        const int64_t j = (int64_t)rng_below(&shuffle, (uint64_t)i + 1);
        const int32_t t = a->col[i];
        a->col[i] = a->col[j];
        a->col[j] = t;
    }
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        rng g = row_stream(seed, i + 1);   /* stream 0 was the shuffle's */
        a->val[i] = 1.0 + rng_unit(&g);
    }
    *out = a;
    a = NULL;
cleanup:
    krill_csr_destroy(&a);
    return st;
}

/* ---- rand100: 100 distinct random columns per row, the diagonal among them ------------- */

#define RAND100_PER_ROW 100

/* Insert `c` into the sorted cols[0..*count) unless it is already there. */
static void sorted_insert(int32_t *cols, int *count, int32_t c)
{
    int lo = 0, hi = *count;   /* binary search for the first element >= c */
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (cols[mid] < c)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < *count && cols[lo] == c)
        return;
    memmove(cols + lo + 1, cols + lo, (size_t)(*count - lo) * sizeof *cols);
    cols[lo] = c;
    (*count)++;
}

krill_status krill_gen_rand100(const krill_gen_args *args, krill_csr **out)
{
    krill_status st = KRILL_OK;
    krill_csr *a = NULL;
    const int64_t n = args->integer[0];
    const uint64_t seed = paper_seed(args->name, n);
    KRILL_REQUIRE(n >= RAND100_PER_ROW,
                  "%s: N must be at least %d (that many distinct columns per row), got %lld",
                  args->name, RAND100_PER_ROW, (long long)n);
    KRILL_TRY(krill_csr_create((int32_t)n, (int32_t)n, RAND100_PER_ROW * n, &a));
    for (int64_t i = 0; i <= n; i++)
        a->row_ptr[i] = RAND100_PER_ROW * i;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        rng g = row_stream(seed, i);
        int32_t *cols = a->col + a->row_ptr[i];
        double *vals = a->val + a->row_ptr[i];
        int count = 1;
        cols[0] = (int32_t)i;
        /* Uniform draws over all columns, repeats rejected: 99 distinct off-diagonal
         * columns, uniformly random among the other n - 1. */
        while (count < RAND100_PER_ROW)
            sorted_insert(cols, &count, (int32_t)rng_below(&g, (uint64_t)n));
        int diag_pos = 0;
        double off_sum = 0.0;
        for (int k = 0; k < RAND100_PER_ROW; k++) {
            if (cols[k] == i) {
                diag_pos = k;
            } else {
                vals[k] = rng_signed(&g);
                off_sum += vals[k] < 0 ? -vals[k] : vals[k];
            }
        }
        vals[diag_pos] = 1.0 + rng_unit(&g) + off_sum;
    }
    *out = a;
    a = NULL;
cleanup:
    krill_csr_destroy(&a);
    return st;
}

/* ---- band1x: diagonal plus a full first row --------------------------------------------- */

krill_status krill_gen_band1x(const krill_gen_args *args, krill_csr **out)
{
    krill_status st = KRILL_OK;
    krill_csr *a = NULL;
    const int64_t n = args->integer[0];
    const uint64_t seed = paper_seed(args->name, n);
    KRILL_TRY(krill_csr_create((int32_t)n, (int32_t)n, 2 * n - 1, &a));
    /* Row 0: columns 0..n-1; row i >= 1: column i. */
    a->row_ptr[0] = 0;
    for (int64_t i = 1; i <= n; i++)
        a->row_ptr[i] = n + (i - 1);
    rng g0 = row_stream(seed, 0);
    const double scale = n > 1 ? 1.0 / (double)(n - 1) : 0.0;
    double off_sum = 0.0;
    a->col[0] = 0;
    for (int64_t j = 1; j < n; j++) {
        a->col[j] = (int32_t)j;
        a->val[j] = rng_signed(&g0) * scale;
        off_sum += a->val[j] < 0 ? -a->val[j] : a->val[j];
    }
    a->val[0] = 1.0 + rng_unit(&g0) + off_sum;
#pragma omp parallel for schedule(static)
    for (int64_t i = 1; i < n; i++) {
        rng g = row_stream(seed, i);
        a->col[n + i - 1] = (int32_t)i;
        a->val[n + i - 1] = 1.0 + rng_unit(&g);
    }
    *out = a;
    a = NULL;
cleanup:
    krill_csr_destroy(&a);
    return st;
}
