/* apps/apsp_report.c - what `krill apsp` prints: the human summary, the JSON object, and
 * the progress line shown while a long solve runs. */
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include "cli_impl.h"

/* The progress line appears once a solve has run this long ... */
#define PROGRESS_DELAY_S 1.0
/* ... and is updated at most every PROGRESS_INTERVAL_S (~10 times a second). */
#define PROGRESS_INTERVAL_S 0.1
/* Width the line is padded to, so that clearing it blanks it all. */
#define PROGRESS_WIDTH 16

int cli_apsp_progress_show(double fraction, void *data)
{
    cli_apsp_progress *progress = data;
    const double now = cli_seconds();
    if (now - progress->start >= PROGRESS_DELAY_S &&
        now - progress->last_print >= PROGRESS_INTERVAL_S) {
        fprintf(stderr, "\r  apsp %3.0f%%", 100.0 * fmin(fmax(fraction, 0.0), 1.0));
        fflush(stderr);
        progress->last_print = now;
        progress->printed = 1;
    }
    return 0;
}

void cli_apsp_progress_clear(cli_apsp_progress *progress)
{
    if (progress->printed) {
        fprintf(stderr, "\r%-*s\r", PROGRESS_WIDTH, "");
        fflush(stderr);
        progress->printed = 0;
    }
}

void cli_apsp_format_dist(char *buf, size_t len, krill_apsp_weight weight, double value)
{
    if (isinf(value))
        snprintf(buf, len, "%sinf", value < 0 ? "-" : "");
    else if (weight == KRILL_APSP_INT32)
        snprintf(buf, len, "%.0f", value);
    else if (weight == KRILL_APSP_FLOAT)
        snprintf(buf, len, "%.9g", value);
    else
        snprintf(buf, len, "%.17g", value);
}

/* A blocked method that timed its tile kinds (the APSP paper's Table 4 split). */
static int has_tile_times(const krill_apsp_info *info)
{
    return info->tile > 0 && info->t_pivot + info->t_panels + info->t_rest > 0.0;
}

static double relax_rate(const krill_apsp_info *info)
{
    return info->t_compute > 0.0 ? info->relaxations / info->t_compute : NAN;
}

static void print_graph(FILE *out, const cli_apsp_report *r)
{
    const krill_graph_info *g = &r->graph;
    if (r->generated)
        fprintf(out, "graph     %s (generated)\n", r->source);
    else
        fprintf(out, "graph     %s (%s file)\n", r->source, krill_graph_format_name(g->format));
    fprintf(out, "          n %" PRId32 ", arcs %" PRId64, g->n, g->arcs);
    if (g->arcs_read != g->arcs)
        fprintf(out, " (%" PRId64 " read; parallel arcs reduced to the lightest)", g->arcs_read);
    fprintf(out, "\n          self loops %" PRId64 ", negative arcs %" PRId64, g->self_loops,
            g->negative);
    if (g->arcs == 0)
        fprintf(out, ", no arcs\n");
    else if (g->integer_weights)
        fprintf(out, ", weights in [%.0f, %.0f], all integers\n", g->min_weight, g->max_weight);
    else
        fprintf(out, ", weights in [%g, %g]\n", g->min_weight, g->max_weight);
}

static void print_times(FILE *out, const cli_apsp_report *r)
{
    const krill_apsp_info *t = &r->info;
    fprintf(out, "time      %s %.3f ms, solve:\n", r->generated ? "generate" : "read",
            1e3 * r->load_seconds);
    cli_print_time(out, 10, "setup", t->t_setup, t->t_total);
    cli_print_time(out, 10, "transfer", t->t_upload + t->t_download, t->t_total);
    fprintf(out, "            upload %.3f ms, download %.3f ms\n", 1e3 * t->t_upload,
            1e3 * t->t_download);
    cli_print_time(out, 10, "compute", t->t_compute, t->t_total);
    if (has_tile_times(t)) {
        cli_print_time(out, 10, "  pivot", t->t_pivot, t->t_total);
        cli_print_time(out, 10, "  panels", t->t_panels, t->t_total);
        cli_print_time(out, 10, "  rest", t->t_rest, t->t_total);
    }
    cli_print_time(out, 10, "total", t->t_total, 0.0);
}

void cli_apsp_human(FILE *out, const cli_apsp_report *r)
{
    const krill_apsp_info *info = &r->info;
    const char *weight = krill_apsp_weight_name(r->weight);
    const double rate = relax_rate(info);
    char bytes[32], dist[40];
    print_graph(out, r);
    fprintf(out, "method    %s (%s)\n", info->method, info->why);
    cli_format_bytes(bytes, sizeof bytes, info->bytes_needed);
    if (info->tile > 0)
        fprintf(out, "          tile %d: D is %" PRId32 " x %" PRId32 " with padding, %s\n",
                info->tile, info->n_padded, info->n_padded, bytes);
    else
        fprintf(out, "          D is %" PRId32 " x %" PRId32 ", %s\n", info->n, info->n, bytes);
    if (info->out_of_core > 0) {
        cli_format_bytes(bytes, sizeof bytes, info->ooc_bytes_moved);
        fprintf(out, "          out of core: D in host memory, blocks of %d streamed through "
                "the overlap scheduler, %s moved\n", info->out_of_core, bytes);
    }
    fprintf(out, "device    %s\n", r->device);
    fprintf(out, "weights   %s (%s)\n", weight, r->weight_why);
    print_times(out, r);
    fprintf(out, "rate      %.4g relaxations min(a + b, c), %.4g per second\n", info->relaxations,
            rate);
    if (r->peak_ok && r->peak > 0.0)
        fprintf(out, "          %.1f%% of the device's measured min-plus peak (%.4g per "
                "second, %s)\n", 100.0 * rate / r->peak, r->peak, weight);
    else
        fprintf(out, "          the device's min-plus peak could not be measured\n");
    if (!strcmp(info->method, "dijkstra"))
        fprintf(out, "          (Dijkstra: arc relaxations and heap work, not min-plus "
                "products)\n");
    cli_apsp_format_dist(dist, sizeof dist, r->weight, r->max_finite);
    fprintf(out, "result    unreachable pairs %" PRId64 ", largest finite distance %s\n",
            r->unreachable, dist);
    fprintf(out, "          checksum %016" PRIx64 " (FNV-1a of D's bytes%s)\n", r->checksum,
            r->weight == KRILL_APSP_INT32 ? "; int32: the same on every method and device" : "");
    if (r->path_asked && r->path_len == 0) {
        fprintf(out, "path      %" PRId32 " -> %" PRId32 ": unreachable (no path)\n",
                r->path_from, r->path_to);
    } else if (r->path_asked) {
        cli_apsp_format_dist(dist, sizeof dist, r->weight,
                             krill_apsp_dist_at(r->result, r->path_from, r->path_to));
        fprintf(out, "path      %" PRId32 " -> %" PRId32 ": length %s, %" PRId32 " vertices:",
                r->path_from, r->path_to, dist, r->path_len);
        for (int32_t k = 0; k < r->path_len; k++) fprintf(out, " %" PRId32, r->path[k]);
        fprintf(out, "\n");
    }
    if (r->out_path)
        fprintf(out, "output    D -> %s (%s, %" PRId32 " x %" PRId32 ")\n", r->out_path, weight,
                info->n, info->n);
    if (r->pred_path)
        fprintf(out, "%s P -> %s (int32, %d = no predecessor)\n",
                r->out_path ? "         " : "output   ", r->pred_path, KRILL_APSP_NO_PRED);
}

/* "key": [v0, v1, ...] as the next member of the innermost object, laid out as json.c
 * lays out its members (the key is a plain identifier: nothing to escape). */
static void json_int_array(cli_json *json, const char *key, const int32_t *v, int32_t n)
{
    fputs(json->members[json->depth - 1]++ ? ",\n" : "\n", json->out);
    fprintf(json->out, "%*s\"%s\": [", 2 * json->depth, "", key);
    for (int32_t k = 0; k < n; k++) fprintf(json->out, "%s%" PRId32, k ? ", " : "", v[k]);
    fputc(']', json->out);
}

/* A distance as a JSON number, null when unreachable. */
static void json_dist(cli_json *json, const char *key, double value)
{
    if (isfinite(value))
        cli_json_number(json, key, value);
    else
        cli_json_null(json, key);
}

void cli_apsp_json(FILE *out, const cli_apsp_report *r)
{
    const krill_apsp_info *t = &r->info;
    const double rate = relax_rate(t);
    char checksum[17];
    cli_json json;
    cli_json_begin(&json, out);
    cli_json_string(&json, "graph", r->source);
    cli_json_string(&json, "format", r->generated ? "generated"
                                                  : krill_graph_format_name(r->graph.format));
    cli_json_int(&json, "n", r->graph.n);
    cli_json_int(&json, "m", r->graph.arcs);
    cli_json_int(&json, "self_loops", r->graph.self_loops);
    cli_json_int(&json, "negative_arcs", r->graph.negative);
    cli_json_string(&json, "weights", krill_apsp_weight_name(r->weight));
    cli_json_string(&json, "weights_why", r->weight_why);
    cli_json_string(&json, "method", t->method);
    cli_json_string(&json, "why", t->why);
    cli_json_string(&json, "device", r->device);
    if (r->threads > 0)
        cli_json_int(&json, "threads", r->threads);
    else
        cli_json_null(&json, "threads");
    cli_json_int(&json, "tile", t->tile);
    cli_json_int(&json, "n_padded", t->n_padded);
    cli_json_number(&json, "bytes_needed", t->bytes_needed);
    cli_json_int(&json, "out_of_core", t->out_of_core);
    cli_json_number(&json, "ooc_bytes_moved", t->ooc_bytes_moved);
    cli_json_object(&json, "times");
    cli_json_number(&json, "load", r->load_seconds);
    cli_json_number(&json, "setup", t->t_setup);
    cli_json_number(&json, "upload", t->t_upload);
    cli_json_number(&json, "pivot", t->t_pivot);
    cli_json_number(&json, "panels", t->t_panels);
    cli_json_number(&json, "rest", t->t_rest);
    cli_json_number(&json, "compute", t->t_compute);
    cli_json_number(&json, "download", t->t_download);
    cli_json_number(&json, "total", t->t_total);
    cli_json_close(&json);
    cli_json_number(&json, "relaxations", t->relaxations);
    cli_json_number(&json, "relax_per_second", rate);
    if (r->peak_ok && r->peak > 0.0) {
        cli_json_number(&json, "peak_relax_per_second", r->peak);
        cli_json_number(&json, "peak_fraction", rate / r->peak);
    } else {
        cli_json_null(&json, "peak_relax_per_second");
        cli_json_null(&json, "peak_fraction");
    }
    if (r->result) {
        snprintf(checksum, sizeof checksum, "%016" PRIx64, r->checksum);
        cli_json_int(&json, "unreachable", r->unreachable);
        cli_json_number(&json, "max_finite", r->max_finite);
        cli_json_string(&json, "checksum", checksum);
    } else {                     /* a negative cycle: no D */
        cli_json_null(&json, "unreachable");
        cli_json_null(&json, "max_finite");
        cli_json_null(&json, "checksum");
    }
    if (t->negative_cycle >= 0)
        cli_json_int(&json, "negative_cycle", t->negative_cycle);
    else
        cli_json_null(&json, "negative_cycle");
    if (r->path_asked) {
        cli_json_object(&json, "path");
        cli_json_int(&json, "from", r->path_from);
        cli_json_int(&json, "to", r->path_to);
        json_dist(&json, "length", krill_apsp_dist_at(r->result, r->path_from, r->path_to));
        json_int_array(&json, "vertices", r->path, r->path_len);
        cli_json_close(&json);
    }
    cli_json_string(&json, "out", r->out_path);
    cli_json_string(&json, "pred", r->pred_path);
    cli_json_end(&json);
}
