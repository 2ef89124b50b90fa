/* fuzz/fuzz_graph.c - libFuzzer harness of the graph readers (krill/graph.h), built once
 * per format: FUZZ_GRAPH_FORMAT is KRILL_GRAPH_DIMACS, _METIS, _EDGELIST or _MTX. For edge
 * lists the input's first byte chooses the options (ids: remap, base 0, base 1; directed or
 * undirected) and the rest is the file.
 *
 * The file is written to a scratch file and read with krill_graph_read and
 * krill_graph_read_buffer under the same name. Properties: both end alike (status, message,
 * info, graph bit for bit); a graph read without error passes krill_csr_check, is square
 * with at least one vertex, has the arc count info reports, and written with
 * krill_mm_write then read as a Matrix Market graph is the same bit for bit. */
#include <string.h>

#include "fuzz_util.h"
#include "krill/graph.h"
#include "krill/io.h"

#ifndef FUZZ_GRAPH_FORMAT
#error "FUZZ_GRAPH_FORMAT must name a krill_graph_format"
#endif

static void same_info(const krill_graph_info *a, const krill_graph_info *b)
{
    if (a->format != b->format || a->n != b->n || a->arcs_read != b->arcs_read ||
        a->arcs != b->arcs || a->self_loops != b->self_loops || a->negative != b->negative ||
        a->integer_weights != b->integer_weights ||
        memcmp(&a->min_weight, &b->min_weight, sizeof a->min_weight) != 0 ||
        memcmp(&a->max_weight, &b->max_weight, sizeof a->max_weight) != 0 ||
        a->max_id != b->max_id)
        fuzz_fail("file and buffer reads report different graph info");
}

/* The properties of a graph read without error. */
static void check_graph(const krill_csr *g, const krill_graph_info *info)
{
    krill_csr *again = NULL;
    krill_graph_opts mtx = KRILL_GRAPH_OPTS_INIT;
    const char *path = fuzz_path("graph.mtx");
    if (krill_csr_check(g, "graph") != KRILL_OK)
        fuzz_fail("a graph read without error fails krill_csr_check: %s", krill_last_error());
    if (g->n_rows != g->n_cols || g->n_rows < 1 || info->n != g->n_rows || info->arcs != g->nnz)
        fuzz_fail("graph %d x %d with %lld arcs, info says n %d, %lld arcs", g->n_rows,
                  g->n_cols, (long long)g->nnz, info->n, (long long)info->arcs);
    mtx.format = KRILL_GRAPH_MTX;
    if (krill_mm_write(path, g) != KRILL_OK) fuzz_fail("krill_mm_write: %s", krill_last_error());
    if (krill_graph_read(path, &mtx, &again, NULL) != KRILL_OK)
        fuzz_fail("reading back the graph krill_mm_write wrote: %s", krill_last_error());
    fuzz_same_csr(g, again, "graph write-then-read round trip");
    krill_csr_destroy(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    krill_csr *from_file = NULL, *from_buffer = NULL;
    krill_graph_info file_info, buffer_info;
    krill_graph_opts opts = KRILL_GRAPH_OPTS_INIT;
    fuzz_outcome file_read, buffer_read;
    const char *path = fuzz_path("input.graph");
    opts.format = FUZZ_GRAPH_FORMAT;
    if (opts.format == KRILL_GRAPH_EDGELIST) {
        if (size == 0) return 0;
        opts.ids = (krill_graph_ids)(data[0] % 3);
        opts.undirected = (data[0] >> 2) & 1;
        data++;
        size--;
    }
    fuzz_write(path, data, size);
    fuzz_record(&file_read, krill_graph_read(path, &opts, &from_file, &file_info));
    fuzz_record(&buffer_read, krill_graph_read_buffer(path, (const char *)data, size, &opts,
                                                      &from_buffer, &buffer_info));
    if (!(size >= 2 && data[0] == 0x1f && data[1] == 0x8b)) {   /* the buffer is not inflated */
        fuzz_same_outcome(&file_read, &buffer_read, "file and buffer reads");
        same_info(&file_info, &buffer_info);
        fuzz_same_csr(from_file, from_buffer, "file and buffer reads");
    }
    if ((file_read.st == KRILL_OK) != (from_file != NULL))
        fuzz_fail("status %d with%s a graph", (int)file_read.st, from_file ? "" : "out");
    if (from_file) check_graph(from_file, &file_info);
    krill_csr_destroy(&from_file);
    krill_csr_destroy(&from_buffer);
    return 0;
}
