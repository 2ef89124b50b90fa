/* tests/test_mm_read.c - the Matrix Market reader on hand-written files: every format,
 * field and symmetry; duplicates, sorting, expansion; every malformed case with its status,
 * file name and line; the number lexer against strtod; large buffers read in parallel
 * against core's krill_csr_from_triplets; gzip files; allocation failures. */
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef KRILL_HAVE_ZLIB
#include <zlib.h>
#endif

#include "core/core_impl.h"
#include "io/io_impl.h"
#include "testutil.h"

#define NAME "t.mtx"
#ifdef KRILL_HAVE_ZLIB
#define HAVE_GZIP 1
#else
#define HAVE_GZIP 0
#endif

typedef struct ent {
    int32_t i, j;
    double v;
} ent;

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static krill_status read_text(const char *text, krill_csr **a, krill_mm_info *info)
{
    return krill_mm_read_buffer(NAME, text, strlen(text), a, info);
}

/* a must hold exactly the entries x[0..n) (row-major order), bit for bit. */
static void check_entries(const krill_csr *a, int32_t rows, int32_t cols, const ent *x,
                          int64_t n, int line)
{
    int bad = 0;
    if (!a) {
        fprintf(stderr, "test line %d: no matrix\n", line);
        tu_failures++;
        return;
    }
    CHECK_OK(krill_csr_check(a, "read"));
    bad |= a->n_rows != rows || a->n_cols != cols || a->nnz != n;
    for (int64_t k = 0; k < n && !bad; k++) {
        bad |= x[k].i >= a->n_rows || a->row_ptr[x[k].i] > k || a->row_ptr[x[k].i + 1] <= k;
        bad |= a->col[k] != x[k].j || !same_bits(a->val[k], x[k].v);
    }
    tu_checks++;
    if (bad) {
        tu_failures++;
        fprintf(stderr, "test line %d: matrix differs (%d x %d, nnz %lld):\n", line, a->n_rows,
                a->n_cols, (long long)a->nnz);
        for (int32_t i = 0; i < a->n_rows; i++)
            for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
                fprintf(stderr, "  (%d, %d) %.17g\n", i, a->col[p], a->val[p]);
    }
}

#define EXPECT(text, rows, cols, ...)                                                    \
    do {                                                                                 \
        const ent x_[] = {__VA_ARGS__};                                                  \
        krill_csr *a_ = NULL;                                                            \
        CHECK_OK(read_text((text), &a_, NULL));                                          \
        check_entries(a_, rows, cols, x_, (int64_t)(sizeof x_ / sizeof x_[0]), __LINE__); \
        krill_csr_destroy(&a_);                                                          \
    } while (0)

/* The read fails with `status`, returns no matrix, and the message starts with
 * "t.mtx:LINE:" (LINE > 0) and contains `what`. */
static void expect_fail(const char *text, size_t len, krill_status status, int line,
                        const char *what, int src_line)
{
    krill_csr *a = NULL;
    krill_status st = krill_mm_read_buffer(NAME, text, len, &a, NULL);
    const char *msg = krill_last_error();
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s:%d: ", NAME, line);
    tu_checks++;
    if (st != status || a != NULL || strncmp(msg, prefix, strlen(prefix)) != 0 ||
        !strstr(msg, what)) {
        tu_failures++;
        fprintf(stderr, "test line %d: got %s \"%s\", expected %s \"%s...%s...\"\n", src_line,
                krill_status_string(st), msg, krill_status_string(status), prefix, what);
    }
    krill_csr_destroy(&a);
}
#define FAIL(text, line, what)                                                           \
    expect_fail(text, strlen(text), KRILL_ERR_PARSE, line, what, __LINE__)
#define FAIL_WITH(text, status, line, what)                                              \
    expect_fail(text, strlen(text), status, line, what, __LINE__)

#define GEN "%%MatrixMarket matrix coordinate real general\n"
#define SYM "%%MatrixMarket matrix coordinate real symmetric\n"
#define SKEW "%%MatrixMarket matrix coordinate real skew-symmetric\n"
#define ARR "%%MatrixMarket matrix array real general\n"

static void test_coordinate(void)
{
    /* duplicates summed in file order, rows sorted, rectangular */
    const char *dup = GEN "% comment\n3 4 6\n3 4 -2.5\n1 2 1.5\n2 1 4\n1 2 2.25\n1 1 0.125\n"
                          "3 1 7\n";
    EXPECT(dup, 3, 4, {0, 0, 0.125}, {0, 1, 3.75}, {1, 0, 4}, {2, 0, 7}, {2, 3, -2.5});
    krill_csr *a = NULL;
    krill_mm_info info;
    CHECK_OK(read_text(dup, &a, &info));
    CHECK(info.is_array == 0 && info.field == KRILL_MM_REAL && info.symmetry == KRILL_MM_GENERAL);
    CHECK(info.rows == 3 && info.cols == 4 && info.entries == 6);
    krill_csr_destroy(&a);
    /* finite duplicates whose sum overflows: refused, naming the entry (1-based) */
    CHECK_STATUS(read_text(GEN "2 2 3\n2 2 1\n1 2 1e308\n1 2 1e308\n", &a, &info),
                 KRILL_ERR_PARSE);
    CHECK(a == NULL && strstr(krill_last_error(), "(1, 2) sum to inf") != NULL);

    /* symmetric: the lower triangle mirrored; or the upper one */
    EXPECT(SYM "3 3 4\n1 1 2\n2 1 -1\n3 2 -1\n3 3 2\n", 3, 3, {0, 0, 2}, {0, 1, -1},
           {1, 0, -1}, {1, 2, -1}, {2, 1, -1}, {2, 2, 2});
    EXPECT(SYM "3 3 4\n1 1 2\n1 2 -1\n2 3 -1\n3 3 2\n", 3, 3, {0, 0, 2}, {0, 1, -1},
           {1, 0, -1}, {1, 2, -1}, {2, 1, -1}, {2, 2, 2});
    /* a duplicate diagonal entry is summed once, a duplicate off-diagonal one mirrored */
    EXPECT(SYM "2 2 4\n2 1 1\n1 1 3\n2 1 0.5\n1 1 4\n", 2, 2, {0, 0, 7}, {0, 1, 1.5},
           {1, 0, 1.5});

    /* skew-symmetric: mirrored with the sign changed */
    EXPECT(SKEW "3 3 2\n2 1 1.5\n3 1 -2\n", 3, 3, {0, 1, -1.5}, {0, 2, 2}, {1, 0, 1.5},
           {2, 0, -2});

    /* pattern: values 1, duplicates summed like any other */
    EXPECT("%%MatrixMarket matrix coordinate pattern general\n2 3 3\n1 3\n2 1\n1 3\n", 2, 3,
           {0, 2, 2}, {1, 0, 1});
    EXPECT("%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n", 2, 2,
           {0, 0, 1}, {0, 1, 1}, {1, 0, 1});

    /* integer: beyond 2^53 rounded to nearest like strtod */
    EXPECT("%%MatrixMarket matrix coordinate integer general\n2 2 3\n1 1 -7\n"
           "2 2 12345678901234567\n1 2 +3\n",
           2, 2, {0, 0, -7}, {0, 1, 3}, {1, 1, strtod("12345678901234567", NULL)});
    EXPECT("%%MatrixMarket matrix coordinate integer symmetric\n2 2 2\n1 1 5\n2 1 -3\n", 2, 2,
           {0, 0, 5}, {0, 1, -3}, {1, 0, -3});

    /* banner words in any case; blanks, tabs, CRLF, comments and blank lines anywhere after
     * the banner; a last line without newline */
    EXPECT("%%matrixmarket MATRIX Coordinate REAL General\r\n%c\r\n\r\n  2 2 2 \r\n"
           "\t1\t1   1.5\r\n% mid\r\n\r\n   \r\n2 2 -0.5",
           2, 2, {0, 0, 1.5}, {1, 1, -0.5});
}

static void test_empty_and_zeros(void)
{
    krill_csr *a = NULL;
    CHECK_OK(read_text(GEN "3 3 0\n", &a, NULL));
    CHECK(a && a->n_rows == 3 && a->n_cols == 3 && a->nnz == 0 && a->row_ptr[3] == 0);
    krill_csr_destroy(&a);
    CHECK_OK(read_text(GEN "0 0 0\n", &a, NULL));
    CHECK(a && a->n_rows == 0 && a->n_cols == 0 && a->nnz == 0);
    krill_csr_destroy(&a);
    CHECK_OK(read_text(GEN "2 2 2\n1 1 0\n2 1 -0\n", &a, NULL));
    CHECK(a && a->nnz == 2 && same_bits(a->val[0], 0.0) && same_bits(a->val[1], -0.0));
    krill_csr_destroy(&a);
}

static void test_array(void)
{
    EXPECT(ARR "2 3\n1\n2\n3\n4\n5\n6\n", 2, 3, {0, 0, 1}, {0, 1, 3}, {0, 2, 5}, {1, 0, 2},
           {1, 1, 4}, {1, 2, 6});
    EXPECT("%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n", 3, 3,
           {0, 0, 1}, {0, 1, 2}, {0, 2, 3}, {1, 0, 2}, {1, 1, 4}, {1, 2, 5}, {2, 0, 3},
           {2, 1, 5}, {2, 2, 6});
    EXPECT("%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n", 3, 3, {0, 0, 0},
           {0, 1, -1}, {0, 2, -2}, {1, 0, 1}, {1, 1, 0}, {1, 2, -3}, {2, 0, 2}, {2, 1, 3},
           {2, 2, 0});
    EXPECT("%%MatrixMarket matrix array integer general\n2 2\n1\n-2\n% c\n3\n4\n", 2, 2,
           {0, 0, 1}, {0, 1, 3}, {1, 0, -2}, {1, 1, 4});
    krill_mm_info info;
    krill_csr *a = NULL;
    CHECK_OK(read_text("%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n",
                       &a, &info));
    CHECK(info.is_array == 1 && info.symmetry == KRILL_MM_SYMMETRIC && info.entries == 6);
    krill_csr_destroy(&a);
}

/* Numbers in the syntaxes files use, compared with strtod. */
static void test_number_syntax(void)
{
    static const char *const tokens[] = {
        "0",     "-0",    "+0.0",   ".5",      "5.",     "-.5e1",   "1e3",   "1E-3",
        "+1e+3", "0.000001", "123456789012345678", "1.2345678901234567e-27",
        "9007199254740993", "9007199254740995", "2.2250738585072011e-308",
        "4.9406564584124654e-324", "2.4703282292062327e-324", "1.7976931348623157e308",
        "0.1",   "0.30000000000000004", "1e-400", "7.0e-10", "00012.50",
        "1234567890123456789012345678901234567890e-20", "0.000000000000000000000000000001"};
    for (size_t t = 0; t < sizeof tokens / sizeof tokens[0]; t++) {
        char text[256];
        snprintf(text, sizeof text, "%s1 1\n%s\n", ARR, tokens[t]);
        krill_csr *a = NULL;
        CHECK_OK(read_text(text, &a, NULL));
        tu_checks++;
        if (!a || !same_bits(a->val[0], strtod(tokens[t], NULL))) {
            tu_failures++;
            fprintf(stderr, "'%s' read as %.17g, strtod says %.17g\n", tokens[t],
                    a ? a->val[0] : 0.0, strtod(tokens[t], NULL));
        }
        krill_csr_destroy(&a);
    }
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A random decimal token: 1..25 digits, a point somewhere or none, an exponent or none;
 * half of them with 16..19 digits and small exponents (the 128-bit path), some long or
 * far out (strtod's path). */
static size_t random_token(uint64_t *s, char *out)
{
    size_t n = 0;
    uint64_t r = rng_next(s);
    if (r & 1) out[n++] = '-';
    int digits = (r >> 1) & 1 ? 16 + (int)((r >> 2) % 4) : 1 + (int)((r >> 2) % 25);
    int point = (int)((r >> 8) % (uint64_t)(digits + 2)) - 1;   /* -1: no point */
    for (int d = 0; d < digits; d++) {
        if (d == point) out[n++] = '.';
        out[n++] = (char)('0' + rng_next(s) % 10);
    }
    if (point == digits) out[n++] = '.';
    int kind = (int)((r >> 16) % 4);
    if (kind > 0) {
        int range = kind == 1 ? 30 : kind == 2 ? 330 : 10;
        int e = (int)((r >> 20) % (uint64_t)(2 * range + 1)) - range;
        n += (size_t)sprintf(out + n, "e%d", e);
    }
    out[n] = '\0';
    return n;
}

/* mm_lex_real on tok[0..n) must give strtod's bits, or MM_LEX_RANGE where strtod
 * overflows; the first mismatches are printed. */
static void compare_with_strtod(const char *tok, size_t n, long *mismatches)
{
    const char *p = tok;
    double v = 0.0, ref = strtod(tok, NULL);
    mm_lex r = mm_lex_real(&p, tok + n, '.', &v);
    int ok = isinf(ref) ? r == MM_LEX_RANGE
                        : r == MM_LEX_OK && p == tok + n && same_bits(v, ref);
    if (!ok && (*mismatches)++ < 10)
        fprintf(stderr, "lexer: '%s' -> %.17g (status %d), strtod %.17g\n", tok, v, (int)r, ref);
}

/* mm_lex_real against strtod: random tokens of every shape, %.17g and %.16e of random bit
 * patterns, every exponent of the power table, and strings next to exact midpoints. */
static void test_lexer_vs_strtod(void)
{
    uint64_t s = 0x1234567ull;
    long mismatches = 0;
    char tok[64];
    for (int k = 0; k < 1000000; k++) compare_with_strtod(tok, random_token(&s, tok), &mismatches);
    for (int k = 0; k < 1000000; k++) {
        uint64_t bits = rng_next(&s);
        double x;
        memcpy(&x, &bits, sizeof x);
        if (!isfinite(x)) continue;
        int n = snprintf(tok, sizeof tok, k % 2 ? "%.17g" : "%.16e", x);
        compare_with_strtod(tok, (size_t)n, &mismatches);
    }
    /* every decimal exponent of the power table and beyond, with 1..19 digits */
    for (int q = -360; q <= 330; q++)
        for (int k = 0; k < 300; k++) {
            int digits = 1 + k % 19, n = 0;
            tok[n++] = (char)('1' + rng_next(&s) % 9);
            while (n < digits) tok[n++] = (char)('0' + rng_next(&s) % 10);
            n += snprintf(tok + n, sizeof tok - (size_t)n, "e%d", q);
            compare_with_strtod(tok, (size_t)n, &mismatches);
        }
    /* near the midpoint of two neighbouring doubles: the exact midpoint (in long double,
     * 64-bit mantissa) printed with 17..25 digits lands just below, on or above it */
    for (int k = 0; k < 200000; k++) {
        uint64_t bits = rng_next(&s) & 0x7fffffffffffffffull;
        double x;
        memcpy(&x, &bits, sizeof x);
        if (!isfinite(x) || x == 0.0 || !isfinite(nextafter(x, INFINITY))) continue;
        long double mid = ((long double)x + (long double)nextafter(x, INFINITY)) / 2;
        int n = snprintf(tok, sizeof tok, "%.*Le", 16 + k % 9, mid);
        compare_with_strtod(tok, (size_t)n, &mismatches);
    }
    CHECK(mismatches == 0);
}

static void test_malformed_header(void)
{
    FAIL("", 1, "missing banner");
    FAIL("hello\n3 3 0\n", 1, "missing banner");
    FAIL("%%MatrixMarket matrix coordinate real\n3 3 0\n", 1, "incomplete banner");
    FAIL("%%MatrixMarket matrix coordinate real general extra\n3 3 0\n", 1, "unexpected 'extra'");
    FAIL("%%MatrixMarket vector coordinate real general\n3 3 0\n", 1, "unknown object 'vector'");
    FAIL("%%MatrixMarket matrix sparse real general\n3 3 0\n", 1, "unknown format 'sparse'");
    FAIL("%%MatrixMarket matrix coordinate double general\n3 3 0\n", 1, "unknown field 'double'");
    FAIL("%%MatrixMarket matrix coordinate real upper\n3 3 0\n", 1, "unknown symmetry 'upper'");
    FAIL("%%MatrixMarket matrix array pattern general\n3 3\n", 1, "pattern field needs");
    FAIL("%%MatrixMarket matrix coordinate pattern skew-symmetric\n3 3 0\n", 1, "pattern");
    FAIL("%%MatrixMarket matrix coordinate real hermitian\n3 3 0\n", 1, "hermitian");
    FAIL(GEN, 1, "missing size line");
    FAIL(GEN "% only comments\n\n", 3, "missing size line");
    FAIL(GEN "3 x 5\n", 2, "bad size 'x'");
    FAIL(GEN "3 3 1.5\n", 2, "bad size '1.5'");
    FAIL(GEN "% c\n-3 3 1\n", 3, "negative size '-3'");
    FAIL(GEN "3 3\n", 2, "found 2 numbers");
    FAIL(GEN "\n", 2, "missing size line");
    FAIL(GEN "3 3 1 7\n1 1 1\n", 2, "unexpected '7'");
    FAIL(ARR "3 3 9\n", 2, "unexpected '9'");
    FAIL(GEN "99999999999999999999 3 1\n", 2, "too large");
    FAIL(SYM "3 4 1\n1 1 1\n", 2, "must be square");
    FAIL(SKEW "4 3 0\n", 2, "must be square");
    FAIL_WITH(GEN "3000000000 3 0\n", KRILL_ERR_UNSUPPORTED, 2, "32-bit");

    /* complex and hermitian: refused with the reason, info filled */
    krill_csr *a = NULL;
    krill_mm_info info;
    const char *cplx = "%%MatrixMarket matrix coordinate complex hermitian\n2 2 1\n1 1 1 0\n";
    CHECK_STATUS(krill_mm_read_buffer(NAME, cplx, strlen(cplx), &a, &info),
                 KRILL_ERR_UNSUPPORTED);
    CHECK(a == NULL && strstr(krill_last_error(), "complex") != NULL);
    CHECK(info.field == KRILL_MM_COMPLEX && info.symmetry == KRILL_MM_HERMITIAN &&
          info.rows == 2 && info.cols == 2 && info.entries == 1);
    FAIL_WITH("%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1 0\n",
              KRILL_ERR_UNSUPPORTED, 1, "complex");
}

static void test_malformed_body(void)
{
    FAIL(GEN "3 3 4\n1 1 1\n2 2 1\n", 4, "ends after 2 of the 4 entries");
    FAIL(GEN "3 3 4\n1 1 1\n2 2 1", 4, "ends after 2 of the 4 entries");
    FAIL(GEN "3 3 4\n", 2, "ends after 0 of the 4 entries");
    FAIL(GEN "3 3 1000000000000\n1 1 1\n", 3, "ends after 1 of the 1000000000000");
    FAIL(GEN "3 3 1\n1 1 1\n2 2 1\n", 4, "more data lines than the 1 entry");
    FAIL(GEN "3 3 1\n1 1 1\n% c\n\ngarbage\n", 6, "more data lines");
    FAIL(GEN "3 3 2\n1 1 1\n0 2 1\n", 4, "row index 0 is outside 1..3");
    FAIL(GEN "3 3 2\n1 1 1\n4 2 1\n", 4, "row index 4 is outside 1..3");
    FAIL(GEN "3 5 2\n1 1 1\n2 6 1\n", 4, "column index 6 is outside 1..5");
    FAIL(GEN "3 3 1\n1 99999999999999999999 1\n", 3, "column index 99999999999999999999 is "
                                                     "outside");
    FAIL(GEN "3 3 1\na 1 1\n", 3, "bad row index 'a'");
    FAIL(GEN "3 3 1\n1.0 1 1\n", 3, "bad row index '1.0'");
    FAIL(GEN "3 3 1\n-1 1 1\n", 3, "bad row index '-1'");
    FAIL(GEN "3 3 1\n1 1 abc\n", 3, "bad value 'abc'");
    FAIL(GEN "3 3 1\n1 1 1.5x\n", 3, "bad value '1.5x'");
    FAIL(GEN "3 3 1\n1 1 1e\n", 3, "bad value '1e'");
    FAIL(GEN "3 3 1\n1 1 .\n", 3, "bad value '.'");
    FAIL(GEN "3 3 1\n1 1 1.0D+00\n", 3, "bad value '1.0D+00'");
    FAIL(GEN "3 3 1\n1 1 0x1p3\n", 3, "bad value '0x1p3'");
    FAIL(GEN "3 3 1\n1 1 nan\n", 3, "non-finite value 'nan'");
    FAIL(GEN "3 3 1\n1 1 -Inf\n", 3, "non-finite value '-Inf'");
    FAIL(GEN "3 3 1\n1 1 INFINITY\n", 3, "non-finite");
    FAIL(GEN "3 3 1\n1 1 1e400\n", 3, "out of the range of a double");
    FAIL(GEN "3 3 1\n1 1 -1.8e308\n", 3, "out of the range");
    FAIL(GEN "3 3 1\n1 1\n", 3, "missing value");
    FAIL(GEN "3 3 1\n1 1 \r\n", 3, "missing value");
    FAIL(GEN "3 3 1\n1\n", 3, "missing column index");
    FAIL(GEN "3 3 1\n1 1 1.0 5\n", 3, "unexpected '5' after the entry");
    FAIL(GEN "3 3 1\n1 1 1.0 % note\n", 3, "unexpected '%'");
    FAIL("%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1.0\n", 3,
         "unexpected '1.0'");
    FAIL("%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 1.5\n", 3,
         "bad integer value '1.5'");
    FAIL(SKEW "3 3 2\n2 1 1\n2 2 1\n", 4, "diagonal entry (2, 2)");
    FAIL(SYM "3 3 3\n1 1 2\n2 1 -1\n2 3 -1\n", 5, "entry (2, 3) is above the diagonal but line 4");
    FAIL(SYM "3 3 3\n1 2 2\n1 1 -1\n3 1 -1\n", 5, "entry (3, 1) is below the diagonal but line 3");
    FAIL(SKEW "3 3 2\n1 2 2\n3 1 -1\n", 4, "one triangle");
    /* line numbers count comments, blank lines and CRLF lines */
    FAIL(GEN "% a\r\n\r\n3 3 2\r\n% b\r\n1 1 1\r\n\r\n1 x 1\r\n", 8, "bad column index 'x'");
    /* a NUL byte inside a value */
    const char nul[] = GEN "3 3 1\n1 1 1\0002\n";
    expect_fail(nul, sizeof nul - 1, KRILL_ERR_PARSE, 3, "bad value '1?2'", __LINE__);

    FAIL(ARR "2 2\n1\n2\n3\n", 5, "ends after 3 of the 4 values");
    FAIL(ARR "2 2\n1\n2\n3\n4\n5\n", 7, "more data lines than the 4 values");
    FAIL(ARR "2 2\n1 2\n3\n4\n", 3, "unexpected '2' after the value");
    FAIL(ARR "2 2\n1\nNaN\n3\n4\n", 4, "non-finite");
    FAIL("%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n4\n", 6, "more data lines");
}

/* Text of a random n x n matrix with m entries (lower triangle when `lower`), values with
 * all 17 digits; the triplets, zero-based, in rows/cols/vals. */
static char *random_file(int32_t n, int64_t m, int lower, int32_t *rows, int32_t *cols,
                         double *vals, size_t *len)
{
    size_t cap = (size_t)m * 64 + 256, used = 0;
    char *text = malloc(cap);
    uint64_t s = 0xabcdefull + (uint64_t)m;
    used += (size_t)sprintf(text, "%%%%MatrixMarket matrix coordinate real %s\n%% random\n"
                            "%d %d %lld\n", lower ? "symmetric" : "general", n, n, (long long)m);
    tu_random(vals, m, 99);
    for (int64_t k = 0; k < m; k++) {
        int32_t i = (int32_t)(rng_next(&s) % (uint64_t)n);
        int32_t j = (int32_t)(rng_next(&s) % (uint64_t)n);
        if (lower && j > i) {
            int32_t t = i;
            i = j;
            j = t;
        }
        if (k % 1000 == 7) vals[k] = ldexp(vals[k], -1060);          /* subnormal */
        if (k % 1000 == 8) vals[k] = ldexp(vals[k], 1000);
        rows[k] = i;
        cols[k] = j;
        used += (size_t)sprintf(text + used, "%d %d %.17g\n", i + 1, j + 1, vals[k]);
        if (k % 50000 == 3) used += (size_t)sprintf(text + used, "%% a comment\n\n");
    }
    *len = used;
    return text;
}

static void expect_same_csr(const krill_csr *a, const krill_csr *b, const char *what)
{
    int same = a && b && a->n_rows == b->n_rows && a->n_cols == b->n_cols && a->nnz == b->nnz;
    same = same && memcmp(a->row_ptr, b->row_ptr, ((size_t)a->n_rows + 1) * 8) == 0;
    same = same && memcmp(a->col, b->col, (size_t)a->nnz * 4) == 0;
    same = same && memcmp(a->val, b->val, (size_t)a->nnz * 8) == 0;
    tu_checks++;
    if (!same) {
        tu_failures++;
        fprintf(stderr, "%s: matrices differ\n", what);
    }
}

/* Overwrite the first token of text line `line` (1-based) with 'x's. */
static void spoil_line(char *text, size_t len, int64_t line)
{
    size_t p = 0;
    for (int64_t l = 1; l < line && p < len; p++)
        if (text[p] == '\n') l++;
    for (; p < len && text[p] != ' ' && text[p] != '\n'; p++) text[p] = 'x';
}

static void write_file(const char *path, const char *text);

/* The same text through the file readers: a large plain file (read by parallel pieces) and a
 * gzip file of two members (the trailer's size is only the last member's, so the buffer must
 * grow) give the matrix read from memory. */
static void large_file_paths(const char *text, size_t len)
{
    char path[256];
    krill_csr *a = NULL, *b = NULL;
    snprintf(path, sizeof path, "test_mm_read_large_%d.mtx", (int)getpid());
    CHECK_OK(krill_mm_read_buffer(NAME, text, len, &b, NULL));
    FILE *f = fopen(path, "wb");
    fwrite(text, 1, len, f);
    fclose(f);
    CHECK_OK(krill_mm_read(path, &a, NULL));
    expect_same_csr(a, b, "large file");
    krill_csr_destroy(&a);
#ifdef KRILL_HAVE_ZLIB
    gzFile gz = gzopen(path, "wb");
    gzwrite(gz, text, (unsigned)(len / 2));
    gzclose(gz);
    gz = gzopen(path, "ab");                   /* a second member */
    gzwrite(gz, text + len / 2, (unsigned)(len - len / 2));
    gzclose(gz);
    CHECK_OK(krill_mm_read(path, &a, NULL));
    expect_same_csr(a, b, "two-member gzip");
    krill_csr_destroy(&a);
#endif
    krill_csr_destroy(&b);
    remove(path);
}

/* Multi-megabyte files, parsed in parallel chunks: the result equals core's triplet
 * assembly, bit for bit, for 1, 2 and 3 threads; errors are reported at the first bad line. */
static void test_large(void)
{
    const int32_t n = 5000;
    const int64_t m = 600000;                          /* > 16 MB of text */
    int32_t *rows = malloc((size_t)2 * m * sizeof *rows);
    int32_t *cols = malloc((size_t)2 * m * sizeof *cols);
    double *vals = malloc((size_t)2 * m * sizeof *vals);
    for (int lower = 0; lower <= 1; lower++) {
        size_t len = 0;
        char *text = random_file(n, m, lower, rows, cols, vals, &len);
        CHECK(len > ((size_t)16 << 20));               /* parallel chunks and loads */
        /* the reference: mirrored copies interleaved, as the file order says */
        int32_t *r2 = malloc((size_t)2 * m * sizeof *r2), *c2 = malloc((size_t)2 * m * sizeof *c2);
        double *v2 = malloc((size_t)2 * m * sizeof *v2);
        int64_t m2 = 0;
        for (int64_t k = 0; k < m; k++) {
            r2[m2] = rows[k];
            c2[m2] = cols[k];
            v2[m2++] = vals[k];
            if (lower && rows[k] != cols[k]) {
                r2[m2] = cols[k];
                c2[m2] = rows[k];
                v2[m2++] = vals[k];
            }
        }
        krill_csr *ref = NULL;
        CHECK_OK(krill_csr_from_triplets(n, n, m2, r2, c2, v2, &ref));
        for (int threads = 1; threads <= 3; threads++) {
            omp_set_num_threads(threads);
            krill_csr *a = NULL;
            CHECK_OK(krill_mm_read_buffer(NAME, text, len, &a, NULL));
            expect_same_csr(a, ref, lower ? "large symmetric" : "large general");
            krill_csr_destroy(&a);
        }
        omp_set_num_threads(2);
        krill_csr_destroy(&ref);
        free(r2);
        free(c2);
        free(v2);

        if (!lower) large_file_paths(text, len);
        if (!lower) {
            /* two bad lines far apart: the first is reported; then one earlier still */
            int64_t late = 3 + m - 1000, later = 3 + m - 10, early = 500;
            char msg[64];
            spoil_line(text, len, later);
            spoil_line(text, len, late);
            snprintf(msg, sizeof msg, "bad row index");
            expect_fail(text, len, KRILL_ERR_PARSE, (int)late, msg, __LINE__);
            spoil_line(text, len, early);
            expect_fail(text, len, KRILL_ERR_PARSE, (int)early, msg, __LINE__);
        }
        free(text);
    }
    free(rows);
    free(cols);
    free(vals);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    fputs(text, f);
    fclose(f);
}

static void test_files(void)
{
    char path[256], gzpath[256];
    const char *text = SYM "3 3 4\n1 1 2\n2 1 -1\n3 2 -1\n3 3 2\n";
    snprintf(path, sizeof path, "test_mm_read_%d.mtx", (int)getpid());
    snprintf(gzpath, sizeof gzpath, "test_mm_read_%d.mtx.gz", (int)getpid());
    write_file(path, text);
    krill_csr *a = NULL, *b = NULL;
    CHECK_OK(krill_mm_read(path, &a, NULL));
    CHECK_OK(read_text(text, &b, NULL));
    expect_same_csr(a, b, "file vs buffer");
    krill_csr_destroy(&a);

    /* a missing file: an I/O error naming it */
    CHECK_STATUS(krill_mm_read("no/such/file.mtx", &a, NULL), KRILL_ERR_IO);
    CHECK(a == NULL && strstr(krill_last_error(), "no/such/file.mtx") != NULL);
    /* the file name is in parse errors */
    write_file(path, GEN "2 2 1\n1 3 1\n");
    CHECK_STATUS(krill_mm_read(path, &a, NULL), KRILL_ERR_PARSE);
    CHECK(strncmp(krill_last_error(), path, strlen(path)) == 0 &&
          strstr(krill_last_error(), ":3: column index 3") != NULL);

#ifdef KRILL_HAVE_ZLIB
    /* gzip by magic bytes, whatever the name */
    gzFile gz = gzopen(gzpath, "wb");
    gzputs(gz, text);
    gzclose(gz);
    CHECK_OK(krill_mm_read(gzpath, &a, NULL));
    expect_same_csr(a, b, "gzip vs buffer");
    krill_csr_destroy(&a);
    rename(gzpath, path);                           /* gzip data named .mtx */
    CHECK_OK(krill_mm_read(path, &a, NULL));
    expect_same_csr(a, b, "gzip named .mtx");
    krill_csr_destroy(&a);
    write_file(gzpath, text);                       /* plain text named .gz */
    CHECK_OK(krill_mm_read(gzpath, &a, NULL));
    expect_same_csr(a, b, "plain named .gz");
    krill_csr_destroy(&a);
    /* a truncated gzip stream: refused, not a partial matrix */
    gz = gzopen(gzpath, "wb");
    for (int k = 0; k < 2000; k++) gzprintf(gz, "%s%d %d %.17g\n", k ? "" : GEN "3000 3000 2000\n",
                                            k + 1, k + 1, 1.0 / (k + 1));
    gzclose(gz);
    FILE *f = fopen(gzpath, "rb");
    char raw[65536];
    size_t got = fread(raw, 1, sizeof raw, f);
    fclose(f);
    f = fopen(gzpath, "wb");
    fwrite(raw, 1, got / 2, f);
    fclose(f);
    CHECK_STATUS(krill_mm_read(gzpath, &a, NULL), KRILL_ERR_PARSE);
    CHECK(a == NULL && strstr(krill_last_error(), "truncated") != NULL);
    /* bytes after the gzip stream that are not another member */
    gz = gzopen(gzpath, "wb");
    gzputs(gz, text);
    gzclose(gz);
    f = fopen(gzpath, "ab");
    fputs("junk", f);
    fclose(f);
    CHECK_STATUS(krill_mm_read(gzpath, &a, NULL), KRILL_ERR_PARSE);
    CHECK(a == NULL && strstr(krill_last_error(), "4 bytes that are not gzip") != NULL);
    /* a damaged member */
    raw[got / 2] ^= 0x55;
    f = fopen(gzpath, "wb");
    fwrite(raw, 1, got, f);
    fclose(f);
    CHECK_STATUS(krill_mm_read(gzpath, &a, NULL), KRILL_ERR_PARSE);
    CHECK(a == NULL && strstr(krill_last_error(), "corrupt gzip data") != NULL);
    remove(gzpath);
#else
    FILE *f = fopen(gzpath, "wb");
    fputs("\x1f\x8b rest", f);
    fclose(f);
    CHECK_STATUS(krill_mm_read(gzpath, &a, NULL), KRILL_ERR_UNSUPPORTED);
    CHECK(strstr(krill_last_error(), "without zlib") != NULL);
    remove(gzpath);
#endif
    /* a pipe, as in `krill solve <(gunzip -c A.mtx.gz)`: plain, and gzip with zlib */
    for (int compressed = 0; compressed <= HAVE_GZIP; compressed++) {
        remove(path);
        CHECK(mkfifo(path, 0600) == 0);
        pid_t child = fork();
        CHECK(child >= 0);
        if (child < 0) break;                   /* no writer: reading would block */
        if (child == 0) {                       /* the writer end */
            FILE *w = fopen(path, "wb");
#ifdef KRILL_HAVE_ZLIB
            if (compressed) {
                gzFile z = gzdopen(fileno(w), "wb");
                gzputs(z, text);
                gzclose(z);
                _exit(0);
            }
#endif
            fputs(text, w);
            fclose(w);
            _exit(0);
        }
        CHECK_OK(krill_mm_read(path, &a, NULL));
        waitpid(child, NULL, 0);
        expect_same_csr(a, b, compressed ? "gzip through a pipe" : "through a pipe");
        krill_csr_destroy(&a);
    }
    krill_csr_destroy(&b);
    remove(path);
}

static void test_vector(void)
{
    char path[256];
    snprintf(path, sizeof path, "test_mm_read_vec_%d.mtx", (int)getpid());
    double *x = NULL;
    int64_t n = -1;
    write_file(path, ARR "3 1\n1.5\n-2\n0.25\n");
    CHECK_OK(krill_mm_read_vector(path, &x, &n));
    CHECK(n == 3 && x && x[0] == 1.5 && x[1] == -2 && x[2] == 0.25);
    krill_host_free(x);
    write_file(path, GEN "4 1 3\n3 1 2\n1 1 1\n3 1 0.5\n");
    CHECK_OK(krill_mm_read_vector(path, &x, &n));
    CHECK(n == 4 && x && x[0] == 1 && x[1] == 0 && x[2] == 2.5 && x[3] == 0);
    krill_host_free(x);
    write_file(path, ARR "2 2\n1\n2\n3\n4\n");
    CHECK_STATUS(krill_mm_read_vector(path, &x, &n), KRILL_ERR_PARSE);
    CHECK(x == NULL && strstr(krill_last_error(), ":2: expected a vector") != NULL);
    write_file(path, ARR "3 1\n1\n2\n");
    CHECK_STATUS(krill_mm_read_vector(path, &x, &n), KRILL_ERR_PARSE);
    CHECK(x == NULL && strstr(krill_last_error(), ":4: the file ends after 2 of the 3") != NULL);
    remove(path);
}

/* Make each allocation of a read fail in turn: every one must give KRILL_ERR_ALLOC and no
 * matrix (ASan in CI checks that nothing leaks); one more than the read needs succeeds. */
static void fault_loop(const char *what, const char *text, size_t len)
{
    krill_csr *a = NULL;
    long before = krill_alloc_calls();
    CHECK_OK(krill_mm_read_buffer(NAME, text, len, &a, NULL));
    long needed = krill_alloc_calls() - before;
    krill_csr_destroy(&a);
    int wrong = 0;
    for (long k = 1; k <= needed + 1; k++) {
        krill_fault_alloc_after(k);
        krill_status st = krill_mm_read_buffer(NAME, text, len, &a, NULL);
        krill_fault_alloc_after(0);
        if (k <= needed ? (st != KRILL_ERR_ALLOC || a != NULL) : st != KRILL_OK) {
            if (!wrong++) fprintf(stderr, "%s: allocation %ld failing gave %s\n", what, k,
                                  krill_status_string(st));
        }
        krill_csr_destroy(&a);
    }
    CHECK(needed > 0 && wrong == 0);
}

static void test_faults(void)
{
    const char *dup = GEN "3 4 6\n3 4 -2.5\n1 2 1.5\n2 1 4\n1 2 2.25\n1 1 0.125\n3 1 7\n";
    fault_loop("general", dup, strlen(dup));
    const char *unsorted = SYM "4 4 5\n4 1 1\n2 1 2\n4 3 3\n4 1 4\n3 2 5\n";
    fault_loop("symmetric", unsorted, strlen(unsorted));
    const char *arr = "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n";
    fault_loop("array", arr, strlen(arr));
    /* a long unsorted row (merge sort scratch), in a file big enough for parallel parsing */
    size_t cap = 4u << 20, len = 0;
    char *big = malloc(cap);
    len += (size_t)sprintf(big, "%s2 60000 120000\n", GEN);
    for (int k = 0; k < 120000; k++)
        len += (size_t)sprintf(big + len, "%d %d 1.25\n", 1 + k % 2, 60000 - k / 2);
    fault_loop("large", big, len);

    /* the file readers too: matrix, vector, and a gzip file (whose buffer must grow) */
    char path[256], gzpath[256];
    snprintf(path, sizeof path, "test_mm_read_fault_%d.mtx", (int)getpid());
    snprintf(gzpath, sizeof gzpath, "test_mm_read_fault_%d.mtx.gz", (int)getpid());
    write_file(path, ARR "3 1\n1\n2\n3\n");
#ifdef KRILL_HAVE_ZLIB
    gzFile gz = gzopen(gzpath, "wb");
    gzwrite(gz, big, (unsigned)(len / 2));
    gzclose(gz);
    gz = gzopen(gzpath, "ab");
    gzwrite(gz, big + len / 2, (unsigned)(len - len / 2));
    gzclose(gz);
#else
    write_file(gzpath, dup);
#endif
    for (int which = 0; which < 3; which++) {
        const char *file = which == 2 ? gzpath : path;
        long before = krill_alloc_calls(), needed = 0;
        for (long k = 0, wrong = 0; k == 0 || k <= needed + 1; k++) {
            double *x = NULL;
            int64_t n = 0;
            krill_csr *a = NULL;
            krill_fault_alloc_after(k);
            krill_status st = which == 1 ? krill_mm_read_vector(file, &x, &n)
                                         : krill_mm_read(file, &a, NULL);
            krill_fault_alloc_after(0);
            if (k == 0) needed = krill_alloc_calls() - before;      /* the clean run */
            else if (k <= needed ? st != KRILL_ERR_ALLOC || a || x : st != KRILL_OK) wrong++;
            krill_host_free(x);
            krill_csr_destroy(&a);
            if (k == needed + 1) CHECK(st == KRILL_OK && wrong == 0);
        }
    }
    free(big);
    remove(path);
    remove(gzpath);
}

static void test_arguments(void)
{
    krill_csr *a = NULL;
    CHECK_STATUS(krill_mm_read_buffer(NAME, "x", 1, NULL, NULL), KRILL_ERR_ARG);
    CHECK_STATUS(krill_mm_read_buffer(NAME, NULL, 5, &a, NULL), KRILL_ERR_ARG);
    CHECK_STATUS(krill_mm_read(NULL, &a, NULL), KRILL_ERR_ARG);
    CHECK_STATUS(krill_mm_read_vector("x.mtx", NULL, NULL), KRILL_ERR_ARG);
    /* no name: a stand-in in the message */
    CHECK_STATUS(krill_mm_read_buffer(NULL, "junk", 4, &a, NULL), KRILL_ERR_PARSE);
    CHECK(strncmp(krill_last_error(), "<buffer>:1:", 11) == 0);
}

int main(void)
{
    omp_set_num_threads(2);
    test_coordinate();
    test_empty_and_zeros();
    test_array();
    test_number_syntax();
    test_lexer_vs_strtod();
    test_malformed_header();
    test_malformed_body();
    test_large();
    test_files();
    test_vector();
    test_faults();
    test_arguments();
    return tu_finish("test_mm_read");
}
