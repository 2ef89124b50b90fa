/* io/graph_text.c - the DIMACS shortest-path (.gr) and METIS (.graph) readers.
 *
 * DIMACS (9th challenge):
 *   c any comment                   comment lines, anywhere
 *   p sp N M                        once, before the first arc: N vertices, M arcs
 *   a U V W                         M arc lines: U -> V (1..N), integer weight W
 * Blank lines are skipped. Anything else - another line type, a second "p" line, an arc
 * before the "p" line, more or fewer than M arcs, a vertex outside 1..N, a weight that is
 * not an integer of magnitude < 2^53, something after the weight - is a parse error.
 *
 * METIS:
 *   % comment lines, anywhere
 *   n m [fmt [ncon]]                the header: n vertices, m undirected edges
 *   one line per vertex v = 1..n    [size] [w_1 .. w_ncon] then neighbour [edge weight] ...
 * fmt has up to three binary digits, read right to left: edge weights, vertex weights
 * (ncon of them, default 1), vertex sizes; a missing digit is 0. Sizes and vertex weights
 * are checked (non-negative integers) and ignored. An edge is listed from both ends and
 * both listings are kept as arcs (so asymmetric weights give asymmetric arcs); an edge
 * without weights has weight 1. A blank line is a vertex without neighbours, so the file
 * must hold n vertex lines; blank lines after them are allowed. The neighbour entries must
 * number 2m exactly. Edge weights are integers (of magnitude < 2^53). */
#include <locale.h>
#include <string.h>

#include "io/io_impl.h"

/* The number of the file's last line, for "the file ends" messages (1 for an empty file). */
static int64_t last_line(const char *text, size_t len)
{
    int64_t lines = graph_count_lines(text, len);
    return lines > 0 ? lines : 1;
}

/* ---- DIMACS ---------------------------------------------------------------------------- */

/* The rest of a "p" line after the "p": " sp N M". */
static krill_status dimacs_problem(const graph_src *s, const char *q, const char *le,
                                   int64_t *n, int64_t *m)
{
    krill_status st = KRILL_OK;
    char tb[64];
    const char *tok = graph_skip_blanks(q, le), *after = tok;
    while (after < le && !mm_is_blank(*after)) after++;
    if (after - tok != 2 || tok[0] != 's' || tok[1] != 'p') {
        st = krill_error(KRILL_ERR_PARSE, "%s:%lld: expected 'p sp N M', found problem type "
                         "'%s' (krill reads shortest-path files, 'sp')", s->name,
                         (long long)s->line, tok < le ? mm_token_text(tok, le, tb, sizeof tb) : "");
        goto cleanup;
    }
    KRILL_TRY(graph_read_index(s, &after, le, "vertex count N", 1, INT32_MAX, n));
    KRILL_TRY(graph_read_index(s, &after, le, "arc count M", 0, INT64_MAX, m));
    KRILL_TRY(graph_line_done(s, after, le, "'p sp N M'"));
cleanup:
    return st;
}

krill_status graph_read_dimacs(const char *name, const char *text, size_t len,
                               krill_csr **graph, krill_graph_info *info)
{
    krill_status st = KRILL_OK;
    char tb[64];
    graph_arcs arcs = {0, 0, NULL, NULL, NULL};
    graph_src s = {name, 0, localeconv()->decimal_point[0]};
    const char *p = text, *end = text + len;
    const int64_t lines = graph_count_lines(text, len);
    int64_t n = 0, m = 0, p_line = 0;
    while (p < end) {
        const char *le = graph_line_end(p, end), *q = graph_skip_blanks(p, le);
        s.line++;
        p = le < end ? le + 1 : end;
        if (q == le) continue;                       /* blank line */
        const char kind = *q;
        const int alone = q + 1 == le || mm_is_blank(q[1]);
        if (kind == 'c' && alone) continue;
        if (kind == 'a' && alone) {
            int64_t u = 0, v = 0;
            double w;
            if (p_line == 0) {
                st = krill_error(KRILL_ERR_PARSE, "%s:%lld: arc line before the 'p sp N M' "
                                 "line", name, (long long)s.line);
                goto cleanup;
            }
            if (arcs.count == m) {
                st = krill_error(KRILL_ERR_PARSE, "%s:%lld: more arc lines than the M = %lld of "
                                 "the 'p' line (line %lld)", name, (long long)s.line,
                                 (long long)m, (long long)p_line);
                goto cleanup;
            }
            q++;
            KRILL_TRY(graph_read_index(&s, &q, le, "tail vertex", 1, n, &u));
            KRILL_TRY(graph_read_index(&s, &q, le, "head vertex", 1, n, &v));
            KRILL_TRY(graph_read_weight(&s, &q, le, 1, "weight", &w));
            KRILL_TRY(graph_line_done(&s, q, le, "the arc's weight"));
            arcs.src[arcs.count] = (int32_t)(u - 1);
            arcs.dst[arcs.count] = (int32_t)(v - 1);
            arcs.w[arcs.count] = w;
            info->arcs_read = ++arcs.count;
        } else if (kind == 'p' && alone) {
            if (p_line != 0) {
                st = krill_error(KRILL_ERR_PARSE, "%s:%lld: a second 'p' line (the first is "
                                 "line %lld)", name, (long long)s.line, (long long)p_line);
                goto cleanup;
            }
            KRILL_TRY(dimacs_problem(&s, q + 1, le, &n, &m));
            p_line = s.line;
            info->n = (int32_t)n;
            /* room for what the file can hold, at most M: a 'p' line claiming 10^15 arcs
             * in a small file fails as truncated, not as an allocation */
            KRILL_TRY(graph_arcs_alloc(&arcs, m < lines - s.line ? m : lines - s.line));
        } else {
            st = krill_error(KRILL_ERR_PARSE, "%s:%lld: unknown line type '%s' (expected 'c', "
                             "'p' or 'a')", name, (long long)s.line,
                             mm_token_text(q, le, tb, sizeof tb));
            goto cleanup;
        }
    }
    if (p_line == 0) {
        st = krill_error(KRILL_ERR_PARSE, "%s:%lld: %s", name, (long long)last_line(text, len),
                         len == 0 ? "empty file: expected a 'p sp N M' line"
                                  : "missing 'p sp N M' line");
        goto cleanup;
    }
    if (arcs.count < m) {
        st = krill_error(KRILL_ERR_PARSE, "%s:%lld: the file ends after %lld of the %lld arcs "
                         "of the 'p' line (line %lld)", name, (long long)last_line(text, len),
                         (long long)arcs.count, (long long)m, (long long)p_line);
        goto cleanup;
    }
    KRILL_TRY(graph_check_memory(name, p_line, n, arcs.count));
    KRILL_TRY(graph_build((int32_t)n, &arcs, graph, info));
cleanup:
    graph_arcs_free(&arcs);
    return st;
}

/* ---- METIS ----------------------------------------------------------------------------- */

typedef struct metis_header {
    int64_t n, m, line;
    int sizes, vertex_weights, edge_weights;   /* fmt's digits */
    int64_t ncon;
} metis_header;

/* The fmt token [tok, le): up to three digits 0/1. */
static krill_status metis_fmt(const graph_src *s, const char **p, const char *le,
                              metis_header *h)
{
    krill_status st = KRILL_OK;
    char tb[64];
    const char *tok = graph_skip_blanks(*p, le), *q = tok;
    int digits[3] = {0, 0, 0}, count = 0, ok = 1;
    while (q < le && !mm_is_blank(*q)) {
        ok &= count < 3 && (*q == '0' || *q == '1');
        if (count < 3) digits[count] = *q == '1';
        count++;
        q++;
    }
    if (!ok) {
        st = krill_error(KRILL_ERR_PARSE, "%s:%lld: bad fmt '%s' on the header (expected up "
                         "to three digits 0 or 1, e.g. 1, 10, 11, 011)", s->name,
                         (long long)s->line, mm_token_text(tok, le, tb, sizeof tb));
        goto cleanup;
    }
    /* right-aligned: the last digit is edge weights, the one before vertex weights */
    h->edge_weights = digits[count - 1];
    h->vertex_weights = count >= 2 ? digits[count - 2] : 0;
    h->sizes = count == 3 ? digits[0] : 0;
    *p = q;
cleanup:
    return st;
}

/* The header line [q, le): "n m [fmt [ncon]]". */
static krill_status metis_header_line(const graph_src *s, const char *q, const char *le,
                                      metis_header *h)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(graph_read_index(s, &q, le, "vertex count n", 1,
                               INT32_MAX, &h->n));
    KRILL_TRY(graph_read_index(s, &q, le, "edge count m", 0,
                               INT64_MAX / 2, &h->m));
    h->ncon = 0;
    q = graph_skip_blanks(q, le);
    if (q < le) {
        KRILL_TRY(metis_fmt(s, &q, le, h));
        q = graph_skip_blanks(q, le);
        if (q < le) {
            KRILL_TRY(graph_read_index(s, &q, le, "ncon", 1, INT32_MAX, &h->ncon));
            if (!h->vertex_weights) {
                st = krill_error(KRILL_ERR_PARSE, "%s:%lld: ncon = %lld but fmt gives no "
                                 "vertex weights", s->name, (long long)s->line,
                                 (long long)h->ncon);
                goto cleanup;
            }
        }
    }
    if (h->vertex_weights && h->ncon == 0) h->ncon = 1;
    KRILL_TRY(graph_line_done(s, q, le, "the header 'n m [fmt [ncon]]'"));
    h->line = s->line;
cleanup:
    return st;
}

krill_status graph_read_metis(const char *name, const char *text, size_t len,
                              krill_csr **graph, krill_graph_info *info)
{
    krill_status st = KRILL_OK;
    graph_arcs arcs = {0, 0, NULL, NULL, NULL};
    graph_src s = {name, 0, localeconv()->decimal_point[0]};
    metis_header h;
    const char *p = text, *end = text + len;
    int64_t v = 0;                   /* vertex lines read */
    memset(&h, 0, sizeof h);

    /* the header: the first line that is neither blank nor a comment */
    while (p < end && h.line == 0) {
        const char *le = graph_line_end(p, end), *q = graph_skip_blanks(p, le);
        s.line++;
        p = le < end ? le + 1 : end;
        if (q < le && *q != '%') KRILL_TRY(metis_header_line(&s, q, le, &h));
    }
    if (h.line == 0) {
        st = krill_error(KRILL_ERR_PARSE, "%s:%lld: %s", name, (long long)last_line(text, len),
                         len == 0 ? "empty file: expected the header 'n m [fmt [ncon]]'"
                                  : "missing header 'n m [fmt [ncon]]'");
        goto cleanup;
    }
    info->n = (int32_t)h.n;
    const int64_t entries = 2 * h.m;
    /* a neighbour takes at least two bytes (digit, separator): room for what the rest of
     * the file can hold, at most 2m */
    const int64_t room = (int64_t)(end - p) / 2 + 1;
    KRILL_TRY(graph_arcs_alloc(&arcs, entries < room ? entries : room));

    while (p < end) {
        const char *le = graph_line_end(p, end), *q = graph_skip_blanks(p, le);
        s.line++;
        p = le < end ? le + 1 : end;
        if (q < le && *q == '%') continue;           /* comment */
        if (v == h.n) {
            if (q == le) continue;                   /* blank lines after the last vertex */
            st = krill_error(KRILL_ERR_PARSE, "%s:%lld: more vertex lines than the n = %lld of "
                             "the header (line %lld)", name, (long long)s.line, (long long)h.n,
                             (long long)h.line);
            goto cleanup;
        }
        v++;
        int64_t ignored = 0, u = 0;
        if (h.sizes) KRILL_TRY(graph_read_index(&s, &q, le, "vertex size", 0, INT64_MAX, &ignored));
        for (int64_t c = 0; c < h.ncon; c++)
            KRILL_TRY(graph_read_index(&s, &q, le, "vertex weight", 0, INT64_MAX, &ignored));
        for (q = graph_skip_blanks(q, le); q < le; q = graph_skip_blanks(q, le)) {
            double w = 1.0;
            KRILL_TRY(graph_read_index(&s, &q, le, "neighbour", 1, h.n, &u));
            if (h.edge_weights) KRILL_TRY(graph_read_weight(&s, &q, le, 1, "edge weight", &w));
            if (arcs.count == entries) {
                st = krill_error(KRILL_ERR_PARSE, "%s:%lld: more neighbour entries than the 2m "
                                 "= %lld of the header's m = %lld (line %lld)", name,
                                 (long long)s.line, (long long)entries, (long long)h.m,
                                 (long long)h.line);
                goto cleanup;
            }
            if (arcs.count == arcs.cap) {            /* cannot happen: see `room` */
                st = krill_error(KRILL_ERR_INTERNAL, "%s:%lld: METIS arc buffer full", name,
                                 (long long)s.line);
                goto cleanup;
            }
            arcs.src[arcs.count] = (int32_t)(v - 1);
            arcs.dst[arcs.count] = (int32_t)(u - 1);
            arcs.w[arcs.count] = w;
            info->arcs_read = ++arcs.count;
        }
    }
    if (v < h.n) {
        st = krill_error(KRILL_ERR_PARSE, "%s:%lld: the file ends after %lld of the %lld vertex "
                         "lines of the header (line %lld)", name,
                         (long long)last_line(text, len), (long long)v, (long long)h.n,
                         (long long)h.line);
        goto cleanup;
    }
    if (arcs.count != entries) {
        st = krill_error(KRILL_ERR_PARSE, "%s:%lld: %lld neighbour entries, but the header's "
                         "m = %lld edges need 2m = %lld (line %lld)", name,
                         (long long)last_line(text, len), (long long)arcs.count, (long long)h.m,
                         (long long)entries, (long long)h.line);
        goto cleanup;
    }
    KRILL_TRY(graph_check_memory(name, h.line, h.n, arcs.count));
    KRILL_TRY(graph_build((int32_t)h.n, &arcs, graph, info));
cleanup:
    graph_arcs_free(&arcs);
    return st;
}
