/* krill/graph.h - directed weighted graphs: file readers and generators.
 *
 * A graph is a host krill_csr used as an adjacency: n_rows = n_cols = n vertices, row u
 * lists the arcs u -> v (col = v, zero-based, sorted, unique) and val = their weights.
 * Parallel arcs are reduced to the smallest weight (the one a shortest path would take);
 * self loops are kept as the entry (u, u); isolated vertices are empty rows. Every reader
 * refuses a malformed file with KRILL_ERR_PARSE and "FILE:LINE: what" in
 * krill_last_error() (a bad header, counts that disagree, a vertex out of range, a
 * non-numeric, NaN or infinite weight, a truncated file), and returns no graph. */
#ifndef KRILL_GRAPH_H
#define KRILL_GRAPH_H

#include <stdint.h>
#include "krill/csr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum krill_graph_format {
    KRILL_GRAPH_AUTO = 0,    /* from the file name, after a trailing ".gz": ".gr" DIMACS,
                                ".graph" METIS, ".mtx" Matrix Market, anything else an
                                edge list */
    KRILL_GRAPH_DIMACS,      /* 9th DIMACS challenge: "c" comments, "p sp N M", M lines
                                "a U V W" (vertices 1..N, integer W, |W| < 2^53) */
    KRILL_GRAPH_METIS,       /* METIS: header "n m [fmt [ncon]]", then line v lists v's
                                neighbours (1-based); fmt 0/1/001/011/10/100/...: edge
                                weights follow each neighbour when fmt's last digit is 1,
                                vertex sizes/weights (ignored) precede the list. Undirected:
                                each edge is listed from both ends (both arcs kept) */
    KRILL_GRAPH_EDGELIST,    /* SNAP-style: "#" or "%" comments, lines "U V [W]" (W = 1 when
                                absent); blanks or tabs, CRLF accepted */
    KRILL_GRAPH_MTX          /* Matrix Market, square: entry (i, j) = weight of arc i -> j;
                                `pattern` = weight 1; `symmetric` = both directions;
                                `skew-symmetric` = i -> j with the value, j -> i with its
                                negation (the matrix's entries); `array` = every value an
                                arc, zeros included; duplicates keep the smallest weight.
                                Rectangular and complex files: KRILL_ERR_UNSUPPORTED */
} krill_graph_format;

/* How an edge list numbers its vertices. */
typedef enum krill_graph_ids {
    KRILL_GRAPH_IDS_REMAP = 0,   /* any non-negative ids: vertex v is the v-th smallest id
                                    that occurs (ids need not be contiguous) */
    KRILL_GRAPH_IDS_BASE0,       /* ids are vertex numbers 0..n-1 (n = largest id + 1) */
    KRILL_GRAPH_IDS_BASE1        /* ids are vertex numbers 1..n (n = largest id) */
} krill_graph_ids;

typedef struct krill_graph_opts {
    krill_graph_format format;   /* AUTO */
    krill_graph_ids ids;         /* edge lists only; REMAP */
    int undirected;              /* edge lists only: 1 = each line is an edge, both arcs */
} krill_graph_opts;

#define KRILL_GRAPH_OPTS_INIT { KRILL_GRAPH_AUTO, KRILL_GRAPH_IDS_REMAP, 0 }

/* What a reader saw (filled as far as it got, also on failure). */
typedef struct krill_graph_info {
    krill_graph_format format;   /* the format read (never AUTO) */
    int32_t n;                   /* vertices */
    int64_t arcs_read;           /* arcs in the file (an undirected edge counts twice) */
    int64_t arcs;                /* arcs kept: arcs_read less the parallel ones */
    int64_t self_loops;          /* arcs u -> u kept */
    int64_t negative;            /* arcs of negative weight kept */
    int integer_weights;         /* 1 if every weight kept is an integer */
    double min_weight, max_weight;   /* over the arcs kept (0 and 0 when there are none) */
    int64_t max_id;              /* edge lists: the largest id in the file */
} krill_graph_info;

/* Read a graph file (plain or gzip-compressed) into a new adjacency. opts and info may be
 * NULL (defaults; no info). */
krill_status krill_graph_read(const char *path, const krill_graph_opts *opts, krill_csr **graph,
                              krill_graph_info *info);

/* The same from memory; `name` stands for the file name in messages and, with
 * KRILL_GRAPH_AUTO, chooses the format. */
krill_status krill_graph_read_buffer(const char *name, const char *text, size_t len,
                                     const krill_graph_opts *opts, krill_csr **graph,
                                     krill_graph_info *info);

/* Fill info's n, arcs, self_loops, negative, integer_weights, min_weight and max_weight
 * from an adjacency (a generated graph, say); the other fields are left as they are. */
void krill_graph_describe(const krill_csr *graph, krill_graph_info *info);

/* "dimacs", "metis", "edgelist", "mtx" ("auto" for AUTO). */
const char *krill_graph_format_name(krill_graph_format format);

/* Generated graphs, SPEC strings (the same SPEC gives the same graph, bit for bit):
 *   random:N[,DEG[,SEED]]  the APSP paper's random graphs (DIMACS "Random4-n" style): N
 *                          vertices, DEG*N arcs (default 4) with distinct random ends (no
 *                          self loops), integer weights uniform in [0, N), seed default 1;
 *                          parallel arcs reduced to their minimum
 *   grid2d:R,C             a road-like R x C grid: arcs both ways between 4-neighbours,
 *                          integer weights in [1, 100] from the positions
 *   complete:N             every arc u -> v, u != v, weight 1 + (u * 7 + v * 13) mod 97
 * At most INT32_MAX vertices and INT32_MAX arcs (complete: N <= 46341). Bad specs fail
 * with KRILL_ERR_ARG naming the part. */
krill_status krill_graph_gen(const char *spec, krill_csr **graph);

/* One line per graph generator, NULL-terminated. */
const char *const *krill_graph_gen_help(void);

#ifdef __cplusplus
}
#endif
#endif
