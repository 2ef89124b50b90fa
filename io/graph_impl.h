/* io/graph_impl.h - internals of the graph readers (include/krill/graph.h), shared by
 * io/graph_read.c (the public functions, the adjacency builder, Matrix Market), io/graph_text.c
 * (DIMACS .gr and METIS .graph) and io/graph_edgelist.c (SNAP-style edge lists), and by
 * gen/graph_gen.c (the random generator builds through graph_build).
 *
 * A read is: load the whole file (krill_io_load: gunzipped by magic bytes) -> one serial
 * pass over the lines, checking each token with the lexers of io_impl.h and appending the
 * arcs in file order -> graph_build: a counting sort by tail, each row sorted by head,
 * parallel arcs reduced to their smallest weight. Parsing stops at the first problem, so
 * errors come in file order, as "NAME:LINE: what". */
#ifndef KRILL_GRAPH_IMPL_H
#define KRILL_GRAPH_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "io/io_impl.h"
#include "krill/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Arcs in file order: tail src[k] -> head dst[k], weight w[k] (zero-based vertices). */
typedef struct graph_arcs {
    int64_t count, cap;
    int32_t *src, *dst;
    double *w;
} graph_arcs;

/* Room for cap arcs (count = 0). Release with graph_arcs_free, also after a failure. */
krill_status graph_arcs_alloc(graph_arcs *a, int64_t cap);
void graph_arcs_free(graph_arcs *a);

/* The n x n adjacency of the arcs (all < n): rows sorted, parallel arcs reduced to the
 * smallest weight (the first of equal ones), self loops kept. Fills info's n, arcs,
 * self_loops, negative, integer_weights, min_weight and max_weight (info may be NULL). */
krill_status graph_build(int32_t n, const graph_arcs *a, krill_csr **graph,
                         krill_graph_info *info);

/* ---- the line scanner of the text formats ------------------------------------------ */
typedef struct graph_src {
    const char *name;        /* the file name in messages */
    int64_t line;            /* the line being parsed (1-based) */
    char decimal_point;      /* the C library's, for mm_lex_real's slow path */
} graph_src;

static inline const char *graph_skip_blanks(const char *p, const char *end)
{
    while (p < end && mm_is_blank(*p)) p++;
    return p;
}

/* The '\n' that ends the line at p, or end. */
static inline const char *graph_line_end(const char *p, const char *end)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl : end;
}

/* Lines of text[0..len): a last line without '\n' counts; an empty text has none. */
int64_t graph_count_lines(const char *text, size_t len);

/* The reason an index token at tok (of the line ending at le) was refused, as
 * KRILL_ERR_PARSE "NAME:LINE: ..." naming `what` and the range [lo, hi]. */
krill_status graph_index_error(const graph_src *s, const char *tok, const char *le,
                               const char *what, int64_t lo, int64_t hi);

/* The unsigned decimal integer after the blanks at *p, in [lo, hi] (the line ends at le);
 * moves *p past it. The fast path is inline: it runs for every vertex of every arc. */
static inline krill_status graph_read_index(const graph_src *s, const char **p, const char *le,
                                            const char *what, int64_t lo, int64_t hi,
                                            int64_t *v)
{
    const char *tok = graph_skip_blanks(*p, le), *q = tok;
    if (tok < le && mm_lex_index(&q, le, v) == MM_LEX_OK && *v >= lo && *v <= hi) {
        *p = q;
        return KRILL_OK;
    }
    return graph_index_error(s, tok, le, what, lo, hi);
}

/* Largest magnitude of an integer weight: 2^53 - 1, so that every integer accepted is the
 * double read (2^53 + 1 would round to 2^53 and pass a test against 2^53). */
#define GRAPH_MAX_INTEGER_WEIGHT 9007199254740991.0

/* The weight after the blanks at *p into *w: a finite real, or with `integer` an integer
 * of magnitude < 2^53. `what` names it in messages ("weight", "edge weight"). */
krill_status graph_read_weight(const graph_src *s, const char **p, const char *le, int integer,
                               const char *what, double *w);

/* Nothing but blanks may follow on the line: else "unexpected 'TOKEN' after `after`". */
krill_status graph_line_done(const graph_src *s, const char *p, const char *le,
                             const char *after);

/* ---- the formats: parse text[0..len) and build the graph; info is never NULL and was
 * cleared with its format set by the caller; each parser fills it as far as it gets ---- */
krill_status graph_read_dimacs(const char *name, const char *text, size_t len,
                               krill_csr **graph, krill_graph_info *info);
krill_status graph_read_metis(const char *name, const char *text, size_t len,
                              krill_csr **graph, krill_graph_info *info);
krill_status graph_read_edgelist(const char *name, const char *text, size_t len,
                                 krill_graph_ids ids, int undirected, krill_csr **graph,
                                 krill_graph_info *info);

#ifdef __cplusplus
}
#endif
#endif
