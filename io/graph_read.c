/* io/graph_read.c - the public graph readers (krill_graph_read, krill_graph_read_buffer):
 * the choice of format, Matrix Market files as weighted adjacencies, the adjacency builder
 * every format (and gen/graph_gen.c's random graphs) ends in, and the token helpers of the
 * text formats (io_impl.h). DIMACS and METIS are parsed in graph_text.c, edge lists in
 * graph_edgelist.c.
 *
 * Matrix Market: the header and the data lines are parsed by mm_header.c / mm_body.c (so a
 * .mtx graph is refused exactly where krill_mm_read would refuse the matrix); entry (i, j)
 * is then the arc i -> j. Symmetric storage gives both arcs; skew-symmetric storage gives
 * i -> j with the value and j -> i with its negation (the matrix's own entries). Parallel
 * arcs keep their smallest weight, not the sum krill_mm_read takes. Array files have no
 * duplicates: every stored value is an arc, zeros included (the dense matrix). */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io/io_impl.h"

/* ---- arcs and the builder ------------------------------------------------------------ */
krill_status graph_arcs_alloc(graph_arcs *a, int64_t cap)
{
    krill_status st = KRILL_OK;
    memset(a, 0, sizeof *a);
    KRILL_ALLOC(a->src, cap);
    KRILL_ALLOC(a->dst, cap);
    KRILL_ALLOC(a->w, cap);
    a->cap = cap;
cleanup:
    return st;
}

void graph_arcs_free(graph_arcs *a)
{
    krill_free(a->src);
    krill_free(a->dst);
    krill_free(a->w);
    memset(a, 0, sizeof *a);
}

void krill_graph_describe(const krill_csr *g, krill_graph_info *info)
{
    int64_t loops = 0, negative = 0;
    int integer = 1;
    double lo = 0.0, hi = 0.0;
    for (int32_t u = 0; u < g->n_rows; u++) {
        for (int64_t p = g->row_ptr[u]; p < g->row_ptr[u + 1]; p++) {
            double w = g->val[p];
            loops += g->col[p] == u;
            negative += w < 0.0;
            integer &= floor(w) == w;
            if (p == 0 || w < lo) lo = w;
            if (p == 0 || w > hi) hi = w;
        }
    }
    info->n = g->n_rows;
    info->arcs = g->nnz;
    info->self_loops = loops;
    info->negative = negative;
    info->integer_weights = integer;
    info->min_weight = lo;
    info->max_weight = hi;
}

krill_status graph_build(int32_t n, const graph_arcs *a, krill_csr **graph,
                         krill_graph_info *info)
{
    krill_status st = KRILL_OK;
    krill_csr *g = NULL, *exact = NULL;
    int32_t *tc = NULL;
    double *tv = NULL;
    const int64_t count = a->count;
    int64_t longest = 0, kept = 0;
    *graph = NULL;

    /* counting sort by tail, stable: row_ptr[u + 1] counts, then row_ptr[u] is the next
     * free slot of row u; after the scatter it is row u's end, shifted back below */
    KRILL_TRY(krill_csr_create(n, n, count, &g));
    for (int64_t k = 0; k < count; k++) g->row_ptr[a->src[k] + 1]++;
    for (int32_t u = 0; u < n; u++) g->row_ptr[u + 1] += g->row_ptr[u];
    for (int64_t k = 0; k < count; k++) {
        int64_t p = g->row_ptr[a->src[k]]++;
        g->col[p] = a->dst[k];
        g->val[p] = a->w[k];
    }
    for (int32_t u = n; u > 0; u--) g->row_ptr[u] = g->row_ptr[u - 1];
    g->row_ptr[0] = 0;

    /* rows in head order (a stable sort: equal heads stay in file order) */
    for (int32_t u = 0; u < n; u++) {
        int64_t lo = g->row_ptr[u], hi = g->row_ptr[u + 1], p = lo + 1;
        while (p < hi && g->col[p] >= g->col[p - 1]) p++;
        if (p < hi && hi - lo > longest) longest = hi - lo;
    }
    if (longest > 0) {
        KRILL_ALLOC(tc, longest);
        KRILL_ALLOC(tv, longest);
        for (int32_t u = 0; u < n; u++) {
            int64_t lo = g->row_ptr[u], hi = g->row_ptr[u + 1], p = lo + 1;
            while (p < hi && g->col[p] >= g->col[p - 1]) p++;
            if (p < hi) krill_sort_pairs(g->col + lo, g->val + lo, tc, tv, hi - lo);
        }
    }

    /* parallel arcs to their smallest weight, compacting in place */
    int64_t from = 0;
    for (int32_t u = 0; u < n; u++) {
        const int64_t hi = g->row_ptr[u + 1], start = kept;
        for (int64_t p = from; p < hi; p++) {
            if (kept > start && g->col[kept - 1] == g->col[p]) {
                if (g->val[p] < g->val[kept - 1]) g->val[kept - 1] = g->val[p];
            } else {
                g->col[kept] = g->col[p];
                g->val[kept] = g->val[p];
                kept++;
            }
        }
        from = hi;
        g->row_ptr[u + 1] = kept;
    }
    if (kept < count) {          /* parallel arcs: the graph in arrays of its size */
        KRILL_TRY(krill_csr_create(n, n, kept, &exact));
        memcpy(exact->row_ptr, g->row_ptr, ((size_t)n + 1) * sizeof *g->row_ptr);
        memcpy(exact->col, g->col, (size_t)kept * sizeof *g->col);
        memcpy(exact->val, g->val, (size_t)kept * sizeof *g->val);
        krill_csr_destroy(&g);
        g = exact;
        exact = NULL;
    }
    if (info) krill_graph_describe(g, info);
    *graph = g;
    g = NULL;
cleanup:
    krill_free(tc);
    krill_free(tv);
    krill_csr_destroy(&g);
    krill_csr_destroy(&exact);
    return st;
}

krill_status graph_check_memory(const char *name, int64_t line, int64_t n, int64_t arcs)
{
    char what[256];
    snprintf(what, sizeof what, "%s:%lld: a graph of %lld vertices and %lld arcs", name,
             (long long)line, (long long)n, (long long)arcs);
    return krill_host_mem_check(((size_t)n + 1) * sizeof(int64_t) +
                                (size_t)arcs * (sizeof(int32_t) + sizeof(double)), what);
}

/* ---- token helpers ------------------------------------------------------------------- */
int64_t graph_count_lines(const char *text, size_t len)
{
    int64_t lines = 0;
    const char *p = text, *end = text + len;
    while (p < end && (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        lines++;
        p++;
    }
    return lines + (len > 0 && text[len - 1] != '\n');
}

krill_status graph_index_error(const graph_src *s, const char *tok, const char *le,
                               const char *what, int64_t lo, int64_t hi)
{
    krill_status st = KRILL_OK;
    char tb[64];
    int64_t v = 0;
    const char *q = tok;
    const long long line = (long long)s->line;
    if (tok >= le) {
        st = krill_error(KRILL_ERR_PARSE, "%s:%lld: missing %s", s->name, line, what);
        goto cleanup;
    }
    mm_token_text(tok, le, tb, sizeof tb);
    mm_lex r = mm_lex_index(&q, le, &v);
    if (r == MM_LEX_BAD)
        st = krill_error(KRILL_ERR_PARSE, "%s:%lld: bad %s '%s' (expected an integer in "
                         "%lld..%lld)", s->name, line, what, tb, (long long)lo, (long long)hi);
    else if (r == MM_LEX_RANGE)
        st = krill_error(KRILL_ERR_PARSE, "%s:%lld: %s '%s' is too large (at most %lld)",
                         s->name, line, what, tb, (long long)hi);
    else
        st = krill_error(KRILL_ERR_PARSE, "%s:%lld: %s %s is outside %lld..%lld%s", s->name,
                         line, what, tb, (long long)lo, (long long)hi,
                         hi == INT32_MAX && v > hi ? " (krill's vertices are 32-bit)" : "");
cleanup:
    return st;
}

krill_status graph_read_weight(const graph_src *s, const char **p, const char *le, int integer,
                               const char *what, double *w)
{
    krill_status st = KRILL_OK;
    char tb[64];
    const char *tok = graph_skip_blanks(*p, le), *q = tok;
    const long long line = (long long)s->line;
    if (tok >= le) {
        st = krill_error(KRILL_ERR_PARSE, "%s:%lld: missing %s", s->name, line, what);
        goto cleanup;
    }
    mm_lex r = integer ? mm_lex_integer_value(&q, le, s->decimal_point, w)
                       : mm_lex_real(&q, le, s->decimal_point, w);
    if (r == MM_LEX_OK && integer && fabs(*w) > GRAPH_MAX_INTEGER_WEIGHT) r = MM_LEX_RANGE;
    if (r == MM_LEX_BAD && integer) {             /* say so when it is nan or inf */
        const char *again = tok;
        double ignored;
        if (mm_lex_real(&again, le, s->decimal_point, &ignored) == MM_LEX_NONFINITE)
            r = MM_LEX_NONFINITE;
    }
    if (r != MM_LEX_OK) {
        mm_token_text(tok, le, tb, sizeof tb);
        if (r == MM_LEX_NONFINITE)
            st = krill_error(KRILL_ERR_PARSE, "%s:%lld: non-finite %s '%s' (weights must be "
                             "finite)", s->name, line, what, tb);
        else if (r == MM_LEX_RANGE && integer)
            st = krill_error(KRILL_ERR_PARSE, "%s:%lld: %s '%s' is out of range (integer "
                             "weights are below 2^53 in magnitude)", s->name, line, what, tb);
        else if (r == MM_LEX_RANGE)
            st = krill_error(KRILL_ERR_PARSE, "%s:%lld: %s '%s' is out of the range of a "
                             "double", s->name, line, what, tb);
        else if (r == MM_LEX_LONG)
            st = krill_error(KRILL_ERR_PARSE, "%s:%lld: %s '%s' is longer than %d characters",
                             s->name, line, what, tb, MM_LEX_MAX_TOKEN);
        else
            st = krill_error(KRILL_ERR_PARSE, "%s:%lld: bad %s '%s' (expected %s)", s->name,
                             line, what, tb, integer ? "an integer" : "a number");
        goto cleanup;
    }
    *p = q;
cleanup:
    return st;
}

krill_status graph_line_done(const graph_src *s, const char *p, const char *le,
                             const char *after)
{
    krill_status st = KRILL_OK;
    char tb[64];
    p = graph_skip_blanks(p, le);
    if (p < le)
        st = krill_error(KRILL_ERR_PARSE, "%s:%lld: unexpected '%s' after %s", s->name,
                         (long long)s->line, mm_token_text(p, le, tb, sizeof tb), after);
    return st;
}

/* ---- Matrix Market ------------------------------------------------------------------- */
static krill_status read_mtx(const char *name, const char *text, size_t len, krill_csr **graph,
                             krill_graph_info *info)
{
    krill_status st = KRILL_OK;
    mm_header h;
    mm_entries e = {0, NULL, NULL, NULL};
    graph_arcs arcs = {0, 0, NULL, NULL, NULL};
    krill_csr *dense = NULL;
    memset(&h, 0, sizeof h);
    st = mm_parse_header(name, text, len, &h);
    if (st == KRILL_ERR_UNSUPPORTED && h.info.field != KRILL_MM_COMPLEX) {
        /* the one other refusal: a size over int32, malformed for a graph like elsewhere */
        st = krill_error(KRILL_ERR_PARSE, "%s:%lld: %lld x %lld matrix: a graph has at most "
                         "%d vertices", name, (long long)h.size_line, (long long)h.info.rows,
                         (long long)h.info.cols, INT32_MAX);
    }
    KRILL_TRY(st);
    if (h.info.rows != h.info.cols) {
        st = krill_error(KRILL_ERR_UNSUPPORTED, "%s:%lld: a graph's matrix must be square, the "
                         "size line says %lld x %lld", name, (long long)h.size_line,
                         (long long)h.info.rows, (long long)h.info.cols);
        goto cleanup;
    }
    if (h.info.rows == 0) {
        st = krill_error(KRILL_ERR_PARSE, "%s:%lld: a graph needs at least one vertex, the "
                         "size line says 0 x 0", name, (long long)h.size_line);
        goto cleanup;
    }
    const int32_t n = (int32_t)h.info.rows;
    info->n = n;
    KRILL_TRY(graph_check_memory(name, h.size_line, n, 0));
    KRILL_TRY(mm_parse_body(name, text, len, &h, &e));
    if (h.info.is_array) {
        KRILL_TRY(mm_build_csr(name, &h, &e, &dense));
        info->arcs_read = dense->nnz;
        krill_graph_describe(dense, info);
        *graph = dense;
        dense = NULL;
        goto cleanup;
    }
    const int mirror = h.info.symmetry != KRILL_MM_GENERAL;
    const double sign = h.info.symmetry == KRILL_MM_SKEW_SYMMETRIC ? -1.0 : 1.0;
    int64_t count = e.count;
    for (int64_t k = 0; k < e.count && mirror; k++) count += e.row[k] != e.col[k];
    KRILL_TRY(graph_arcs_alloc(&arcs, count));
    for (int64_t k = 0; k < e.count; k++) {
        int64_t c = arcs.count++;
        arcs.src[c] = e.row[k];
        arcs.dst[c] = e.col[k];
        arcs.w[c] = e.val[k];
        if (mirror && e.row[k] != e.col[k]) {
            c = arcs.count++;
            arcs.src[c] = e.col[k];
            arcs.dst[c] = e.row[k];
            arcs.w[c] = sign * e.val[k];
        }
    }
    info->arcs_read = arcs.count;
    mm_entries_free(&e);           /* lower the peak: the arcs hold everything now */
    KRILL_TRY(graph_check_memory(name, h.size_line, n, arcs.count));
    KRILL_TRY(graph_build(n, &arcs, graph, info));
cleanup:
    mm_entries_free(&e);
    graph_arcs_free(&arcs);
    krill_csr_destroy(&dense);
    return st;
}

/* ---- the public functions ------------------------------------------------------------ */
const char *krill_graph_format_name(krill_graph_format format)
{
    switch (format) {
    case KRILL_GRAPH_AUTO: return "auto";
    case KRILL_GRAPH_DIMACS: return "dimacs";
    case KRILL_GRAPH_METIS: return "metis";
    case KRILL_GRAPH_EDGELIST: return "edgelist";
    case KRILL_GRAPH_MTX: return "mtx";
    }
    return "unknown";
}

/* 1 if name[0..len) ends with `suffix`, in any case. */
static int ends_with(const char *name, size_t len, const char *suffix)
{
    size_t n = strlen(suffix);
    if (len < n) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[len - n + i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != suffix[i]) return 0;
    }
    return 1;
}

/* The format AUTO stands for, from the file name (a trailing .gz aside). */
static krill_graph_format format_of(const char *name)
{
    size_t len = strlen(name);
    if (ends_with(name, len, ".gz")) len -= 3;
    if (ends_with(name, len, ".gr")) return KRILL_GRAPH_DIMACS;
    if (ends_with(name, len, ".graph")) return KRILL_GRAPH_METIS;
    if (ends_with(name, len, ".mtx")) return KRILL_GRAPH_MTX;
    return KRILL_GRAPH_EDGELIST;
}

/* Check the options and parse text[0..len) in the format they (or the name) choose. */
static krill_status read_text(const char *name, const char *text, size_t len,
                              const krill_graph_opts *opts, krill_csr **graph,
                              krill_graph_info *info)
{
    krill_status st = KRILL_OK;
    const krill_graph_opts defaults = KRILL_GRAPH_OPTS_INIT;
    if (!opts) opts = &defaults;
    KRILL_REQUIRE(opts->format >= KRILL_GRAPH_AUTO && opts->format <= KRILL_GRAPH_MTX,
                  "krill_graph_read: unknown format %d", (int)opts->format);
    KRILL_REQUIRE(opts->ids >= KRILL_GRAPH_IDS_REMAP && opts->ids <= KRILL_GRAPH_IDS_BASE1,
                  "krill_graph_read: unknown ids %d", (int)opts->ids);
    info->format = opts->format == KRILL_GRAPH_AUTO ? format_of(name) : opts->format;
    switch (info->format) {
    case KRILL_GRAPH_DIMACS: st = graph_read_dimacs(name, text, len, graph, info); break;
    case KRILL_GRAPH_METIS: st = graph_read_metis(name, text, len, graph, info); break;
    case KRILL_GRAPH_MTX: st = read_mtx(name, text, len, graph, info); break;
    default:
        st = graph_read_edgelist(name, text, len, opts->ids, opts->undirected != 0, graph, info);
        break;
    }
cleanup:
    return st;
}

krill_status krill_graph_read_buffer(const char *name, const char *text, size_t len,
                                     const krill_graph_opts *opts, krill_csr **graph,
                                     krill_graph_info *info)
{
    krill_status st = KRILL_OK;
    krill_graph_info seen;
    memset(&seen, 0, sizeof seen);
    KRILL_REQUIRE(graph != NULL, "krill_graph_read_buffer: graph is NULL");
    *graph = NULL;
    KRILL_REQUIRE(text != NULL || len == 0, "krill_graph_read_buffer: text is NULL");
    if (!name) name = "<buffer>";
    if (!text) text = "";
    KRILL_TRY(read_text(name, text, len, opts, graph, &seen));
cleanup:
    if (st != KRILL_OK && graph) krill_csr_destroy(graph);
    if (info) *info = seen;
    return st;
}

krill_status krill_graph_read(const char *path, const krill_graph_opts *opts, krill_csr **graph,
                              krill_graph_info *info)
{
    krill_status st = KRILL_OK;
    char *text = NULL;
    size_t len = 0;
    krill_graph_info seen;
    memset(&seen, 0, sizeof seen);
    KRILL_REQUIRE(graph != NULL, "krill_graph_read: graph is NULL");
    *graph = NULL;
    KRILL_REQUIRE(path != NULL, "krill_graph_read: path is NULL");
    KRILL_TRY(krill_io_load(path, &text, &len));
    KRILL_TRY(read_text(path, text, len, opts, graph, &seen));
cleanup:
    if (st != KRILL_OK && graph) krill_csr_destroy(graph);
    if (info) *info = seen;
    krill_free(text);
    return st;
}
