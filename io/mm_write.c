/* io/mm_write.c - Matrix Market writers: a CSR as `coordinate real general`, a dense
 * column-major array (or a vector) as `array real general`. A path ending in ".gz" is
 * written gzip-compressed (with zlib).
 *
 * Values are printed with %.17g: 17 significant digits tell every two doubles apart, and
 * the reader rounds correctly, so reading the file back gives the same bits (negative zero
 * and subnormals included). Lines are formatted in parallel, one block of lines per thread,
 * and written in order. Non-finite values are refused: the reader would refuse them. The
 * file is written whole or not at all (outfile.c): a failed write leaves no partial file,
 * and a file of that name that existed is left as it was. */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#ifdef KRILL_HAVE_ZLIB
#include <unistd.h>
#include <zlib.h>
#endif

#include "io/io_impl.h"

#define WRITE_BLOCK ((int64_t)1 << 15)   /* lines one thread formats per round */
#define MAX_LINE 64       /* longest line: two 10-digit indices, a 24-character %.17g, blanks */
#define VALUE_LEN 32      /* room for one %.17g value and its NUL */

typedef struct mm_sink {
    krill_outfile out;           /* the file, written whole or not at all */
#ifdef KRILL_HAVE_ZLIB
    gzFile gz;                   /* a gzip stream into it when the path ends in .gz */
#endif
} mm_sink;

/* What lines are formatted from: the entries of a CSR, or values one per line. */
typedef struct mm_lines {
    const krill_csr *csr;
    const double *values;
    char decimal_point;          /* the locale's; printed as '.' */
} mm_lines;

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Open the output file; for a .gz path, a gzip stream on a duplicate of its descriptor. */
static krill_status sink_open(mm_sink *s, const char *path)
{
    krill_status st = KRILL_OK;
    const int gz = ends_with(path, ".gz");
    memset(s, 0, sizeof *s);
#ifndef KRILL_HAVE_ZLIB
    if (gz) {
        st = krill_error(KRILL_ERR_UNSUPPORTED, "%s: cannot write a .gz file: krill was built "
                         "without zlib", path);
        goto cleanup;
    }
#endif
    KRILL_TRY(krill_outfile_open(&s->out, path));
#ifdef KRILL_HAVE_ZLIB
    if (gz) {
        const int fd = dup(fileno(s->out.f));
        s->gz = fd >= 0 ? gzdopen(fd, "wb") : NULL;
        if (!s->gz) {
            st = krill_error(KRILL_ERR_IO, "%s: cannot start the gzip stream: %s", path,
                             strerror(errno));
            if (fd >= 0) close(fd);
        }
    }
#endif
cleanup:
    return st;
}

static krill_status sink_write(mm_sink *s, const char *buf, size_t n)
{
    int ok;
#ifdef KRILL_HAVE_ZLIB
    if (s->gz)
        ok = n == 0 || gzwrite(s->gz, buf, (unsigned)n) == (int)n;
    else
#endif
        ok = fwrite(buf, 1, n, s->out.f) == n;
    return ok ? KRILL_OK
              : krill_error(KRILL_ERR_IO, "%s: write failed: %s", s->out.name, strerror(errno));
}

/* Close the sink: the gzip stream first (it writes its last block), then the file, which
 * replaces the target only when nothing failed (`failed`: an earlier write did). */
static krill_status sink_close(mm_sink *s, int failed)
{
    krill_status st = KRILL_OK, closed = KRILL_OK;
#ifdef KRILL_HAVE_ZLIB
    if (s->gz && gzclose(s->gz) != Z_OK && !failed) {
        st = krill_error(KRILL_ERR_IO, "%s: write failed: %s", s->out.name,
                         strerror(errno));
        failed = 1;
    }
    s->gz = NULL;
#endif
    closed = krill_outfile_close(&s->out, !failed);
    return st != KRILL_OK ? st : closed;
}

/* Decimal digits of v >= 0 at out; returns the count. */
static size_t put_uint(char *out, uint64_t v)
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
    return n;
}

/* %.17g of v at out, with '.' whatever the locale; returns the length. */
static size_t put_value(char *out, double v, char decimal_point)
{
    int n = snprintf(out, VALUE_LEN, "%.17g", v);
    if (decimal_point != '.') {
        char *dp = memchr(out, decimal_point, (size_t)n);
        if (dp) *dp = '.';
    }
    return (size_t)n;
}

/* Lines first .. first+count-1 into out (at most count * MAX_LINE bytes); returns bytes. */
static size_t format_lines(const mm_lines *src, int64_t first, int64_t count, char *out)
{
    size_t n = 0;
    if (!src->csr) {
        for (int64_t k = first; k < first + count; k++) {
            n += put_value(out + n, src->values[k], src->decimal_point);
            out[n++] = '\n';
        }
        return n;
    }
    const krill_csr *a = src->csr;
    int32_t lo = 0, hi = a->n_rows;          /* the row holding entry `first`: last r with */
    while (hi - lo > 1) {                    /* row_ptr[r] <= first (skipping empty rows) */
        int32_t mid = lo + (hi - lo) / 2;
        if (a->row_ptr[mid] <= first) lo = mid;
        else hi = mid;
    }
    int32_t r = lo;
    for (int64_t k = first; k < first + count; k++) {
        while (a->row_ptr[r + 1] <= k) r++;
        n += put_uint(out + n, (uint64_t)r + 1);
        out[n++] = ' ';
        n += put_uint(out + n, (uint64_t)a->col[k] + 1);
        out[n++] = ' ';
        n += put_value(out + n, a->val[k], src->decimal_point);
        out[n++] = '\n';
    }
    return n;
}

/* The header, then `total` lines of src, formatted in parallel blocks. */
static krill_status write_file(const char *path, const char *header, const mm_lines *src,
                               int64_t total)
{
    krill_status st = KRILL_OK;
    mm_sink sink = {0};
    char *buf = NULL;
    size_t *used = NULL;
    const int threads = mm_threads_for(total, 2 * WRITE_BLOCK);
    const size_t block_bytes = (size_t)WRITE_BLOCK * MAX_LINE;
    KRILL_ALLOC(buf, (size_t)threads * block_bytes);
    KRILL_CALLOC(used, threads);
    KRILL_TRY(sink_open(&sink, path));
    KRILL_TRY(sink_write(&sink, header, strlen(header)));
    for (int64_t start = 0; start < total; start += threads * WRITE_BLOCK) {
#pragma omp parallel for schedule(static, 1) num_threads(threads) if (threads > 1)
        for (int t = 0; t < threads; t++) {
            int64_t first = start + t * WRITE_BLOCK;
            int64_t count = total - first < WRITE_BLOCK ? total - first : WRITE_BLOCK;
            used[t] = count > 0 ? format_lines(src, first, count, buf + t * block_bytes) : 0;
        }
        for (int t = 0; t < threads; t++)
            KRILL_TRY(sink_write(&sink, buf + t * block_bytes, used[t]));
    }
cleanup:
    if (sink.out.f) {
        krill_status closed = sink_close(&sink, st != KRILL_OK);
        if (st == KRILL_OK) st = closed;
    }
    krill_free(buf);
    krill_free(used);
    return st;
}

krill_status krill_mm_write(const char *path, const krill_csr *csr)
{
    krill_status st = KRILL_OK;
    char header[256];
    KRILL_REQUIRE(path != NULL && csr != NULL, "krill_mm_write: path or csr is NULL");
    KRILL_TRY(krill_csr_check(csr, "krill_mm_write"));
    snprintf(header, sizeof header, "%%%%MatrixMarket matrix coordinate real general\n"
             "%% written by krill %s\n%d %d %lld\n", KRILL_VERSION_STRING, csr->n_rows,
             csr->n_cols, (long long)csr->nnz);
    mm_lines src = {csr, NULL, localeconv()->decimal_point[0]};
    KRILL_TRY(write_file(path, header, &src, csr->nnz));
cleanup:
    return st;
}

krill_status krill_mm_write_array(const char *path, const double *a, int64_t n_rows,
                                  int64_t n_cols)
{
    krill_status st = KRILL_OK;
    char header[256];
    KRILL_REQUIRE(path != NULL, "krill_mm_write_array: path is NULL");
    KRILL_REQUIRE(n_rows >= 0 && n_cols >= 0 && n_rows <= INT32_MAX && n_cols <= INT32_MAX,
                  "krill_mm_write_array: %lld x %lld: sizes must be in 0..%d", (long long)n_rows,
                  (long long)n_cols, INT32_MAX);
    const int64_t total = n_rows * n_cols;
    KRILL_REQUIRE(a != NULL || total == 0, "krill_mm_write_array: a is NULL");
    for (int64_t k = 0; k < total; k++)
        if (!isfinite(a[k])) {
            st = krill_error(KRILL_ERR_NUMERIC, "krill_mm_write_array: entry (%lld, %lld) is %g: "
                             "values must be finite", (long long)(k % n_rows),
                             (long long)(k / n_rows), a[k]);
            goto cleanup;
        }
    snprintf(header, sizeof header, "%%%%MatrixMarket matrix array real general\n"
             "%% written by krill %s\n%lld %lld\n", KRILL_VERSION_STRING, (long long)n_rows,
             (long long)n_cols);
    mm_lines src = {NULL, a, localeconv()->decimal_point[0]};
    KRILL_TRY(write_file(path, header, &src, total));
cleanup:
    return st;
}

krill_status krill_mm_write_vector(const char *path, const double *x, int64_t n)
{
    return krill_mm_write_array(path, x, n, 1);
}
