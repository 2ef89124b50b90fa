/* io/mm_body.c - the data lines of a Matrix Market file, parsed in parallel.
 *
 * The body (everything after the size line) is cut into chunks of whole lines. Pass 1
 * counts the data lines of each chunk (lines that are neither blank nor a % comment); a
 * prefix sum gives each chunk the index of its first entry, so pass 2 parses every chunk
 * straight into the shared triplet arrays, in file order. Each chunk remembers its first
 * problem (byte offset and text); the problem with the smallest offset is the one reported,
 * so the message does not depend on the thread count. Line numbers are computed only then,
 * by counting newlines up to the offset.
 *
 * A data line holds exactly: `I J VALUE` (coordinate real|integer), `I J` (pattern) or
 * `VALUE` (array), separated by blanks; anything more on the line is an error.
 *
 * Symmetric and skew-symmetric coordinate files: the format stores the lower triangle.
 * Files that store the upper triangle instead exist, and mirroring them gives the intended
 * matrix, so an entry above the diagonal is accepted - but all off-diagonal entries must lie
 * in one triangle: a file that mixes both (most likely a full matrix mislabelled symmetric,
 * which mirroring would double) is a parse error at the first entry on the other side. A
 * skew-symmetric file has a zero diagonal, which must not be stored: a diagonal entry is an
 * error. */
#include <locale.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "io/io_impl.h"

#define PARALLEL_MIN_BYTES ((int64_t)1 << 20)  /* smaller bodies: one chunk, no threads */
#define CHUNKS_PER_THREAD 4                     /* slack for chunks of uneven cost */
#define MSG_LEN 240
#define NO_POS SIZE_MAX

typedef struct body_job {
    const char *text;            /* the whole file: offsets and line numbers count from here */
    const mm_header *h;
    char decimal_point;
    mm_entries *e;
} body_job;

typedef struct body_chunk {
    const char *begin, *end;     /* whole lines */
    int64_t lines;               /* data lines (pass 1) */
    int64_t first;               /* index of the chunk's first data line in the file */
    size_t err_at;               /* offset of the first problem, NO_POS if none */
    char err[MSG_LEN];
    size_t lower_at, upper_at;   /* first entry strictly below / above the diagonal */
    int64_t lower_i, lower_j, upper_i, upper_j;
} body_chunk;

int mm_threads_for(int64_t work, int64_t serial_below)
{
    return work < serial_below ? 1 : omp_get_max_threads();
}

void mm_entries_free(mm_entries *e)
{
    krill_free(e->row);
    krill_free(e->col);
    krill_free(e->val);
    e->row = e->col = NULL;
    e->val = NULL;
    e->count = 0;
}

/* What a data line holds, for messages: entry/entries (coordinate) or value/values. */
static const char *unit_name(int coordinate, int64_t count)
{
    if (coordinate) return count == 1 ? "entry" : "entries";
    return count == 1 ? "value" : "values";
}

static const char *after_line(const char *p, const char *end)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl + 1 : end;
}

static const char *skip_blanks(const char *p, const char *end)
{
    while (p < end && mm_is_blank(*p)) p++;
    return p;
}

#define COUNT_BLOCK 255      /* bytes per block: the 8-bit newline counter cannot wrap */

/* Over b[0..len) (b[len] readable): the newlines, and in *odd a nonzero value if a newline
 * is followed by anything but a digit, sign or point. Written with 8-bit lanes and no
 * branches so that the compiler vectorizes it (16 bytes a step at -O3). In `d = c - '+'`
 * the number characters + - . 0..9 are 0, 2, 3, 5..14; ',' is 1 and '/' is 4. */
static inline unsigned char scan_block(const unsigned char *b, int len, unsigned char *odd)
{
    unsigned char newlines = 0, other = 0;
    for (int i = 0; i < len; i++) {
        unsigned char d = (unsigned char)(b[i + 1] - (unsigned char)'+');
        unsigned char not_number = (unsigned char)((d > 14) | (d == 1) | (d == 4));
        unsigned char nl = (unsigned char)(b[i] == '\n');
        newlines += nl;
        other |= nl & not_number;
    }
    *odd |= other;
    return newlines;
}

/* Data lines of [p, end): neither blank nor a % comment. The common case - every line
 * starts with a number - is counted by the vectorized scan; any other line start (blank,
 * comment, leading blanks, garbage) sends the chunk to a line-by-line count. */
static int64_t count_data_lines(const char *p, const char *end)
{
    const unsigned char *b = (const unsigned char *)p;
    const size_t n = (size_t)(end - p);
    if (n == 0) return 0;
    unsigned char d0 = (unsigned char)(b[0] - (unsigned char)'+');
    unsigned char odd = (unsigned char)((d0 > 14) | (d0 == 1) | (d0 == 4));
    int64_t starts = 1;                      /* b[0], then the byte after each newline */
    size_t k = 0;
    for (; k + COUNT_BLOCK < n; k += COUNT_BLOCK) starts += scan_block(b + k, COUNT_BLOCK, &odd);
    starts += scan_block(b + k, (int)(n - 1 - k), &odd);  /* the last byte starts no line */
    if (!odd) return starts;
    int64_t lines = 0;
    while (p < end) {
        const char *q = skip_blanks(p, end);
        if (q < end && *q != '\n' && *q != '%') lines++;
        p = after_line(q, end);
    }
    return lines;
}

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static void fail(body_chunk *c, const char *text, const char *at, const char *fmt, ...)
{
    va_list ap;
    c->err_at = (size_t)(at - text);
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
}

/* Read the value at *q into *v; on failure record why and return 0. */
static int read_value(const body_job *job, body_chunk *c, const char **q, const char *end,
                      double *v)
{
    char tb[64];
    const char *tok = *q;
    int integer = job->h->info.field == KRILL_MM_INTEGER;
    mm_lex r = integer ? mm_lex_integer_value(q, end, job->decimal_point, v)
                       : mm_lex_real(q, end, job->decimal_point, v);
    if (r == MM_LEX_OK) return 1;
    mm_token_text(tok, end, tb, sizeof tb);
    if (r == MM_LEX_NONFINITE)
        fail(c, job->text, tok, "non-finite value '%s' (krill reads finite values only)", tb);
    else if (r == MM_LEX_RANGE)
        fail(c, job->text, tok, "value '%s' is out of the range of a double", tb);
    else if (r == MM_LEX_LONG)
        fail(c, job->text, tok, "value '%s' is longer than %d characters", tb, MM_LEX_MAX_TOKEN);
    else
        fail(c, job->text, tok, "bad %s '%s'", integer ? "integer value" : "value", tb);
    return 0;
}

/* Why the index token at tok (of `what`, 1..limit) was refused. Kept out of line: the
 * reading below is on the path of every entry, the message is not. */
#if defined(__GNUC__)
__attribute__((noinline, cold))
#endif
static void index_failed(const body_job *job, body_chunk *c, const char *line, const char *tok,
                         const char *end, const char *what, int64_t limit)
{
    char tb[64];
    int64_t v = 0;
    const char *q = tok;
    if (tok == end || *tok == '\n')
        fail(c, job->text, line, "missing %s index", what);
    else if (mm_lex_index(&q, end, &v) == MM_LEX_BAD)
        fail(c, job->text, tok, "bad %s index '%s'", what, mm_token_text(tok, end, tb, sizeof tb));
    else
        fail(c, job->text, tok, "%s index %s is outside 1..%lld", what,
             mm_token_text(tok, end, tb, sizeof tb), (long long)limit);
}

/* Read the 1-based index after the blanks at *q into *out; 0 on failure (recorded). */
static inline int read_index(const body_job *job, body_chunk *c, const char *line,
                             const char **q, const char *end, const char *what, int64_t limit,
                             int64_t *out)
{
    const char *tok = *q = skip_blanks(*q, end);
    if (tok < end && mm_lex_index(q, end, out) == MM_LEX_OK && *out >= 1 && *out <= limit)
        return 1;
    index_failed(job, c, line, tok, end, what, limit);
    return 0;
}

static void parse_chunk(const body_job *job, body_chunk *c)
{
    const mm_header *h = job->h;
    const char *text = job->text, *p = c->begin, *end = c->end;
    const int coordinate = !h->info.is_array, pattern = h->info.field == KRILL_MM_PATTERN;
    const int symmetric = h->info.symmetry != KRILL_MM_GENERAL;
    const int skew = h->info.symmetry == KRILL_MM_SKEW_SYMMETRIC;
    mm_entries *e = job->e;
    char tb[64];
    int64_t k = c->first;
    while (p < end) {
        const char *line = p, *q = skip_blanks(p, end);
        if (q == end) break;
        if (*q == '\n' || *q == '%') {          /* blank or comment: not an entry */
            p = after_line(q, end);
            continue;
        }
        if (k >= h->values) {
            fail(c, text, line, "more data lines than the %lld %s on the size line (line %lld)",
                 (long long)h->values, unit_name(coordinate, h->values),
                 (long long)h->size_line);
            return;
        }
        double v = 1.0;
        if (coordinate) {
            int64_t i, j;
            if (!read_index(job, c, line, &q, end, "row", h->info.rows, &i)) return;
            if (!read_index(job, c, line, &q, end, "column", h->info.cols, &j)) return;
            if (!pattern) {
                q = skip_blanks(q, end);
                if (q == end || *q == '\n') {
                    fail(c, text, line, "missing value after the indices");
                    return;
                }
                if (!read_value(job, c, &q, end, &v)) return;
            }
            if (skew && i == j) {
                fail(c, text, line, "diagonal entry (%lld, %lld) in a skew-symmetric matrix, "
                     "whose diagonal is zero and not stored", (long long)i, (long long)j);
                return;
            }
            if (symmetric && i > j && c->lower_at == NO_POS) {
                c->lower_at = (size_t)(line - text);
                c->lower_i = i;
                c->lower_j = j;
            } else if (symmetric && i < j && c->upper_at == NO_POS) {
                c->upper_at = (size_t)(line - text);
                c->upper_i = i;
                c->upper_j = j;
            }
            e->row[k] = (int32_t)(i - 1);
            e->col[k] = (int32_t)(j - 1);
        } else if (!read_value(job, c, &q, end, &v)) {
            return;
        }
        e->val[k] = v;
        q = skip_blanks(q, end);
        if (q < end && *q != '\n') {
            fail(c, text, q, "unexpected '%s' after the %s", mm_token_text(q, end, tb, sizeof tb),
                 coordinate ? "entry" : "value");
            return;
        }
        p = q < end ? q + 1 : end;
        k++;
    }
}

/* A symmetric file with entries on both sides of the diagonal: where and what, or NO_POS. */
static size_t mixed_triangles(const char *text, const mm_header *h,
                              const body_chunk *chunks, int n, char *msg, size_t size)
{
    const body_chunk *lo = NULL, *up = NULL;
    for (int c = 0; c < n; c++) {
        if (!lo && chunks[c].lower_at != NO_POS) lo = &chunks[c];
        if (!up && chunks[c].upper_at != NO_POS) up = &chunks[c];
    }
    if (!lo || !up) return NO_POS;
    const char *kind = h->info.symmetry == KRILL_MM_SKEW_SYMMETRIC ? "skew-symmetric" : "symmetric";
    int upper_last = up->upper_at > lo->lower_at;
    snprintf(msg, size, "entry (%lld, %lld) is %s the diagonal but line %lld has (%lld, %lld) "
             "%s it: a %s file stores one triangle only",
             (long long)(upper_last ? up->upper_i : lo->lower_i),
             (long long)(upper_last ? up->upper_j : lo->lower_j),
             upper_last ? "above" : "below",
             (long long)mm_line_of(text, upper_last ? lo->lower_at : up->upper_at),
             (long long)(upper_last ? lo->lower_i : up->upper_i),
             (long long)(upper_last ? lo->lower_j : up->upper_j), upper_last ? "below" : "above",
             kind);
    return upper_last ? up->upper_at : lo->lower_at;
}

int64_t mm_line_of_entry(const char *text, size_t len, const mm_header *h, int64_t k)
{
    const char *p = text + h->body, *end = text + len;
    for (;;) {
        const char *q = skip_blanks(p, end);
        if (q == end || (*q != '\n' && *q != '%' && k-- == 0)) break;
        p = after_line(q, end);
    }
    return mm_line_of(text, (size_t)(p - text));
}

krill_status mm_parse_body(const char *name, const char *text, size_t len, const mm_header *h,
                           mm_entries *e)
{
    krill_status st = KRILL_OK;
    body_chunk *chunks = NULL;
    const char *body = text + h->body, *end = text + len;
    const size_t body_len = len - h->body;
    const int threads = mm_threads_for((int64_t)body_len, PARALLEL_MIN_BYTES);
    const int n = threads == 1 ? 1 : threads * CHUNKS_PER_THREAD;
    memset(e, 0, sizeof *e);

    KRILL_CALLOC(chunks, n);
    for (int c = 0; c < n; c++) {
        const char *cut = body + body_len * (size_t)c / (size_t)n;
        chunks[c].begin = c == 0 ? body : (cut == body ? body : after_line(cut - 1, end));
        if (c > 0 && chunks[c].begin < chunks[c - 1].begin) chunks[c].begin = chunks[c - 1].begin;
        chunks[c].err_at = chunks[c].lower_at = chunks[c].upper_at = NO_POS;
    }
    for (int c = 0; c < n; c++) chunks[c].end = c + 1 < n ? chunks[c + 1].begin : end;

#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
    for (int c = 0; c < n; c++) chunks[c].lines = count_data_lines(chunks[c].begin, chunks[c].end);
    int64_t total = 0;
    for (int c = 0; c < n; c++) {
        chunks[c].first = total;
        total += chunks[c].lines;
    }

    /* Room for what the file holds, at most what it declares: a size line claiming 10^12
     * entries in a small file fails as truncated, not as an allocation. Extra lines stop
     * parsing with an error at the first one. */
    e->count = total < h->values ? total : h->values;
    KRILL_ALLOC(e->val, e->count);
    krill_advise_huge(e->val, (size_t)e->count * sizeof *e->val);
    if (!h->info.is_array) {
        KRILL_ALLOC(e->row, e->count);
        KRILL_ALLOC(e->col, e->count);
        krill_advise_huge(e->row, (size_t)e->count * sizeof *e->row);
        krill_advise_huge(e->col, (size_t)e->count * sizeof *e->col);
    }
    body_job job = {text, h, localeconv()->decimal_point[0], e};
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
    for (int c = 0; c < n; c++) parse_chunk(&job, &chunks[c]);

    char mixed[MSG_LEN];
    const body_chunk *bad = NULL;
    for (int c = 0; c < n && !bad; c++)
        if (chunks[c].err_at != NO_POS) bad = &chunks[c];
    size_t mixed_at = h->info.symmetry == KRILL_MM_GENERAL
                          ? NO_POS
                          : mixed_triangles(text, h, chunks, n, mixed, sizeof mixed);
    if (bad && bad->err_at < mixed_at) {
        st = krill_error(KRILL_ERR_PARSE, "%s:%lld: %s", name,
                         (long long)mm_line_of(text, bad->err_at), bad->err);
    } else if (mixed_at != NO_POS) {
        st = krill_error(KRILL_ERR_PARSE, "%s:%lld: %s", name,
                         (long long)mm_line_of(text, mixed_at), mixed);
    } else if (total < h->values) {
        int64_t last = mm_line_of(text, len) - (len > 0 && text[len - 1] == '\n');
        st = krill_error(KRILL_ERR_PARSE, "%s:%lld: the file ends after %lld of the %lld %s "
                         "on the size line (line %lld)", name, (long long)last,
                         (long long)total, (long long)h->values,
                         unit_name(!h->info.is_array, h->values), (long long)h->size_line);
    }
cleanup:
    krill_free(chunks);
    return st;
}
