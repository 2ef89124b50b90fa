/* io/mm_header.c - the banner and the size line of a Matrix Market file.
 *
 *   %%MatrixMarket matrix FORMAT FIELD SYMMETRY      (line 1; words in any case)
 *   % comments and blank lines
 *   ROWS COLS ENTRIES                                (coordinate)
 *   ROWS COLS                                        (array)
 *
 * FORMAT coordinate|array, FIELD real|integer|pattern|complex, SYMMETRY general|symmetric|
 * skew-symmetric|hermitian. Combinations the format does not define are parse errors:
 * array with pattern, pattern with skew-symmetric, hermitian without complex. */
#include <string.h>

#include "io/io_impl.h"

#define BANNER_WORDS 5

typedef struct mm_word {
    const char *word;
    int value;
} mm_word;

static const mm_word formats[] = {{"coordinate", 0}, {"array", 1}, {NULL, 0}};
static const mm_word fields[] = {{"real", KRILL_MM_REAL},       {"integer", KRILL_MM_INTEGER},
                                 {"pattern", KRILL_MM_PATTERN}, {"complex", KRILL_MM_COMPLEX},
                                 {NULL, 0}};
static const mm_word symmetries[] = {{"general", KRILL_MM_GENERAL},
                                     {"symmetric", KRILL_MM_SYMMETRIC},
                                     {"skew-symmetric", KRILL_MM_SKEW_SYMMETRIC},
                                     {"hermitian", KRILL_MM_HERMITIAN},
                                     {NULL, 0}};

typedef struct mm_token {
    const char *p;
    size_t n;
} mm_token;

int64_t mm_line_of(const char *text, size_t pos)
{
    int64_t line = 1;
    const char *p = text, *end = text + pos;
    while (p < end && (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        line++;
        p++;
    }
    return line;
}

static const char *line_end(const char *p, const char *end)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl : end;
}

/* The next blank-separated token of [*p, le), or n = 0 at the end of the line. */
static mm_token next_token(const char **p, const char *le)
{
    mm_token t = {NULL, 0};
    const char *q = *p;
    while (q < le && mm_is_blank(*q)) q++;
    t.p = q;
    while (q < le && !mm_is_blank(*q)) q++;
    t.n = (size_t)(q - t.p);
    *p = q;
    return t;
}

static int same_word(mm_token t, const char *word)
{
    size_t n = strlen(word);
    if (t.n != n) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = t.p[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != word[i]) return 0;
    }
    return 1;
}

/* Index of t in the NULL-terminated table, or -1. */
static int lookup(const mm_word *table, mm_token t)
{
    for (int i = 0; table[i].word; i++)
        if (same_word(t, table[i].word)) return i;
    return -1;
}

/* The token as a printable, bounded string for messages. */
static const char *shown(mm_token t, const char *end, char *buf, size_t size)
{
    return mm_token_text(t.p, end, buf, size);
}

static krill_status parse_banner(const char *name, const char *text, const char *le,
                                 mm_header *h)
{
    krill_status st = KRILL_OK;
    char tb[64];
    mm_token w[BANNER_WORDS + 1];
    const char *p = text;
    int n = 0;
    while (n < BANNER_WORDS + 1 && (w[n] = next_token(&p, le)).n > 0) n++;
    if (n == 0 || !same_word(w[0], "%%matrixmarket")) {
        st = krill_error(KRILL_ERR_PARSE, "%s:1: missing banner: the first line must be "
                         "'%%%%MatrixMarket matrix FORMAT FIELD SYMMETRY'", name);
        goto cleanup;
    }
    if (n < BANNER_WORDS) {
        st = krill_error(KRILL_ERR_PARSE, "%s:1: incomplete banner: expected '%%%%MatrixMarket "
                         "matrix FORMAT FIELD SYMMETRY', found %d words", name, n);
        goto cleanup;
    }
    if (n > BANNER_WORDS) {
        st = krill_error(KRILL_ERR_PARSE, "%s:1: unexpected '%s' after the banner's five words",
                         name, shown(w[BANNER_WORDS], le, tb, sizeof tb));
        goto cleanup;
    }
    if (!same_word(w[1], "matrix")) {
        st = krill_error(KRILL_ERR_PARSE, "%s:1: unknown object '%s' (krill reads 'matrix')",
                         name, shown(w[1], le, tb, sizeof tb));
        goto cleanup;
    }
    int format = lookup(formats, w[2]), field = lookup(fields, w[3]);
    int symmetry = lookup(symmetries, w[4]);
    if (format < 0) {
        st = krill_error(KRILL_ERR_PARSE, "%s:1: unknown format '%s' (expected coordinate or "
                         "array)", name, shown(w[2], le, tb, sizeof tb));
        goto cleanup;
    }
    if (field < 0) {
        st = krill_error(KRILL_ERR_PARSE, "%s:1: unknown field '%s' (expected real, integer, "
                         "pattern or complex)", name, shown(w[3], le, tb, sizeof tb));
        goto cleanup;
    }
    if (symmetry < 0) {
        st = krill_error(KRILL_ERR_PARSE, "%s:1: unknown symmetry '%s' (expected general, "
                         "symmetric, skew-symmetric or hermitian)", name,
                         shown(w[4], le, tb, sizeof tb));
        goto cleanup;
    }
    h->info.is_array = formats[format].value;
    h->info.field = (krill_mm_field)fields[field].value;
    h->info.symmetry = (krill_mm_symmetry)symmetries[symmetry].value;
    const char *bad = NULL;
    if (h->info.is_array && h->info.field == KRILL_MM_PATTERN)
        bad = "the pattern field needs the coordinate format";
    else if (h->info.field == KRILL_MM_PATTERN && h->info.symmetry == KRILL_MM_SKEW_SYMMETRIC)
        bad = "a pattern matrix cannot be skew-symmetric";
    else if (h->info.symmetry == KRILL_MM_HERMITIAN && h->info.field != KRILL_MM_COMPLEX)
        bad = "hermitian symmetry needs the complex field";
    if (bad) st = krill_error(KRILL_ERR_PARSE, "%s:1: %s", name, bad);
cleanup:
    return st;
}

/* The size line [p, le) at line `line`: ROWS COLS [ENTRIES]. */
static krill_status parse_size_line(const char *name, const char *p, const char *le,
                                    int64_t line, mm_header *h)
{
    krill_status st = KRILL_OK;
    char tb[64];
    const int want = h->info.is_array ? 2 : 3;
    const char *what = h->info.is_array ? "ROWS COLS" : "ROWS COLS ENTRIES";
    int64_t v[3] = {0, 0, 0};
    for (int k = 0; k < want; k++) {
        mm_token t = next_token(&p, le);
        const char *q = t.p;
        if (t.n == 0) {
            st = krill_error(KRILL_ERR_PARSE, "%s:%lld: the size line must be '%s', found %d "
                             "number%s", name, (long long)line, what, k, k == 1 ? "" : "s");
            goto cleanup;
        }
        const char *digits = t.p + 1;
        if (t.n > 1 && t.p[0] == '-' && mm_lex_index(&digits, le, &v[k]) == MM_LEX_OK) {
            st = krill_error(KRILL_ERR_PARSE, "%s:%lld: negative size '%s' on the size line",
                             name, (long long)line, shown(t, le, tb, sizeof tb));
            goto cleanup;
        }
        mm_lex r = mm_lex_index(&q, le, &v[k]);
        if (r != MM_LEX_OK) {
            st = krill_error(KRILL_ERR_PARSE, "%s:%lld: %s '%s' on the size line '%s'", name,
                             (long long)line, r == MM_LEX_RANGE ? "too large a size" : "bad size",
                             shown(t, le, tb, sizeof tb), what);
            goto cleanup;
        }
    }
    mm_token extra = next_token(&p, le);
    if (extra.n > 0) {
        st = krill_error(KRILL_ERR_PARSE, "%s:%lld: unexpected '%s' after the size line '%s'",
                         name, (long long)line, shown(extra, le, tb, sizeof tb), what);
        goto cleanup;
    }
    h->info.rows = v[0];
    h->info.cols = v[1];
    h->info.entries = v[2];
cleanup:
    return st;
}

krill_status mm_parse_header(const char *name, const char *text, size_t len, mm_header *h)
{
    krill_status st = KRILL_OK;
    const char *end = text + len, *le = line_end(text, end);
    memset(h, 0, sizeof *h);
    KRILL_TRY(parse_banner(name, text, le, h));

    /* comment and blank lines up to the size line */
    int64_t line = 1;
    const char *p = le;
    for (;;) {
        if (p == end) {            /* report the file's last line */
            st = krill_error(KRILL_ERR_PARSE, "%s:%lld: missing size line: the file ends after "
                             "the header", name, (long long)(line - (end[-1] == '\n')));
            goto cleanup;
        }
        p++;                       /* past the '\n' */
        line++;
        le = line_end(p, end);
        const char *q = p;
        while (q < le && mm_is_blank(*q)) q++;
        if (q < le && *q != '%') break;
        p = le;
    }
    KRILL_TRY(parse_size_line(name, p, le, line, h));
    h->size_line = line;
    h->body = (size_t)(le - text) + (le < end);

    int64_t rows = h->info.rows, cols = h->info.cols;
    if (h->info.field == KRILL_MM_COMPLEX) {
        st = krill_error(KRILL_ERR_UNSUPPORTED, "%s:1: complex matrices are not supported: krill "
                         "solves real systems", name);
        goto cleanup;
    }
    if (rows > INT32_MAX || cols > INT32_MAX) {
        st = krill_error(KRILL_ERR_UNSUPPORTED, "%s:%lld: %lld x %lld matrix: krill's indices "
                         "are 32-bit, at most %d rows and columns", name, (long long)line,
                         (long long)rows, (long long)cols, INT32_MAX);
        goto cleanup;
    }
    if (h->info.symmetry != KRILL_MM_GENERAL && rows != cols) {
        st = krill_error(KRILL_ERR_PARSE, "%s:%lld: a %s matrix must be square, the size line "
                         "says %lld x %lld", name, (long long)line,
                         h->info.symmetry == KRILL_MM_SYMMETRIC ? "symmetric" : "skew-symmetric",
                         (long long)rows, (long long)cols);
        goto cleanup;
    }
    if (!h->info.is_array) {
        h->values = h->info.entries;
    } else if (h->info.symmetry == KRILL_MM_SYMMETRIC) {
        h->values = rows * (rows + 1) / 2;               /* the lower triangle */
    } else if (h->info.symmetry == KRILL_MM_SKEW_SYMMETRIC) {
        h->values = rows * (rows - 1) / 2;               /* strictly below the diagonal */
    } else {
        h->values = rows * cols;
    }
    h->info.entries = h->values;
cleanup:
    return st;
}
