/* apps/cmd_apsp.c - `krill apsp`: all-pairs shortest paths of a graph file or a generated
 * graph; the summary or JSON (apsp_report.c), a path, D and P as .npy (or D as .mtx).
 *
 * Vertices are 0-based everywhere on the command line and in the output. `--path U V`
 * takes two values, which the strict option parser (one value per option) cannot: the two
 * arguments after --path are joined into "U,V" before parsing, so `--path U V`,
 * `--path U,V` and `--path=U,V` all work. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "cli_impl.h"

static const char *const device_names[] = { "auto", "cpu", "gpu", NULL };
static const krill_device device_types[] = { KRILL_DEVICE_AUTO, KRILL_DEVICE_CPU,
                                             KRILL_DEVICE_CUDA };
static const char *const weight_names[] = { "int32", "float", "double", NULL };
static const krill_apsp_weight weight_types[] = { KRILL_APSP_INT32, KRILL_APSP_FLOAT,
                                                  KRILL_APSP_DOUBLE };
/* in krill_graph_format order: the index is the enum value */
static const char *const format_names[] = { "auto", "dimacs", "metis", "edgelist", "mtx", NULL };
/* in krill_graph_ids order */
static const char *const ids_names[] = { "remap", "0", "1", NULL };

/* Largest n for --out D.mtx: n^2 lines of text (4 million at most, ~50 MB). */
#define MTX_MAX_N 2000
/* "auto" and the library's methods (krill_apsp_methods), NULL-terminated */
#define MAX_METHODS 16

enum { OUT_NPY, OUT_MTX, OUT_OTHER };

/* `text` at `indent` blanks, broken at blanks into lines of at most `width` columns (a
 * longer word gets a line of its own), later lines at `indent` + 2. */
static void print_wrapped(FILE *out, const char *text, int indent, int width)
{
    int col = 0, first = 1;
    while (*text) {
        int len = 0;
        while (*text == ' ') text++;
        while (text[len] && text[len] != ' ') len++;
        if (len == 0) break;
        if (col > 0 && col + 1 + len > width) {
            fputc('\n', out);
            col = 0;
        }
        if (col == 0) {
            col = fprintf(out, "%*s", first ? indent : indent + 2, "");
            first = 0;
        } else {
            col += fprintf(out, " ");
        }
        col += fprintf(out, "%.*s", len, text);
        text += len;
    }
    fputc('\n', out);
}

static void apsp_usage(FILE *out)
{
    fprintf(out,
            "usage: krill apsp GRAPH|--gen SPEC [options]\n"
            "\n"
            "All-pairs shortest paths: the n x n matrix D, D[u][v] = the length of a shortest\n"
            "path from u to v in a directed weighted graph, by blocked Floyd-Warshall (CPU or\n"
            "GPU) or Dijkstra from every vertex. Negative weights are allowed; a negative\n"
            "cycle is an error naming a vertex on it (exit 2).\n"
            "\n"
            "graph (exactly one of GRAPH and --gen)\n"
            "  GRAPH               a graph file, plain or .gz; its format from the name: .gr\n"
            "                      DIMACS, .graph METIS, .mtx Matrix Market, else an edge list\n"
            "  --gen SPEC          a generated graph (integer weights), one of:\n");
    for (const char *const *line = krill_graph_gen_help(); *line; line++)
        print_wrapped(out, *line, 22, 88);
    fprintf(out,
            "  --format auto|dimacs|metis|edgelist|mtx   the file's format (default auto)\n"
            "  --ids remap|0|1     edge lists: remap (default) numbers the ids that occur in\n"
            "                      increasing order; 0 / 1: the ids are vertex numbers from 0 / 1\n"
            "  --undirected        edge lists: each line is an edge, both directions\n"
            "solve\n"
            "  --weights int32|float|double\n"
            "                      default int32 when every weight is an integer (every\n"
            "                      generated graph), else double; int32 is exact and gives\n"
            "                      the same D on every method, device and thread count\n"
            "  --method auto|");
    for (const char *const *m = krill_apsp_methods(); *m; m++)
        fprintf(out, "%s%s", *m, m[1] ? "|" : "\n");
    fprintf(out,
            "                      default auto (the summary says which and why)\n"
            "  --device auto|cpu|gpu   default auto: the GPU when one is present\n"
            "  --threads N         OpenMP threads (default: OpenMP's)\n"
            "  --tile T            the blocked methods' tile (default: the method's own)\n"
            "  --device-memory B   device bytes the solve may take (suffix K, M, G); when D\n"
            "                      does not fit (in this or the device's free memory), the\n"
            "                      blocked methods run out of core: D in host memory, blocks\n"
            "                      streamed through the overlap scheduler (distances only)\n"
            "  --paths             also compute the predecessors P\n"
            "output\n"
            "  --path U V          print a shortest path U -> V and its length (also --path\n"
            "                      U,V; turns on --paths)\n"
            "  --out F             write D: F.npy (int32, float32 or float64; numpy.load reads\n"
            "                      it) or F.mtx (Matrix Market `array`, n <= %d: entry (u+1,\n"
            "                      v+1) = D[u][v]; unreachable is %d for int32, inf for\n"
            "                      float and double, which krill's own reader refuses)\n"
            "  --pred F            write P as F.npy (int32; P[u][v] = the vertex before v on a\n"
            "                      shortest path from u, %d for none; turns on --paths)\n"
            "  --json              one JSON object on stdout instead of the summary\n"
            "\n"
            "Vertices are numbered from 0 on the command line and in every output: vertex k\n"
            "of a 1-based file (DIMACS, METIS, Matrix Market, --ids 1) is k-1; with --ids remap\n"
            "vertex k is the (k+1)-th smallest id of the file.\n"
            "\n"
            "exit codes: 0 done, 2 bad usage or bad input (a malformed file, a negative cycle),\n"
            "            or an output could not be written, 3 krill or the device failed (e.g.\n"
            "            out of memory)\n",
            MTX_MAX_N, KRILL_APSP_INT32_INF, KRILL_APSP_NO_PRED);
}

typedef struct apsp_args {
    const char *graph_path;      /* positional GRAPH, or NULL */
    const char *gen_spec;        /* --gen, or NULL */
    const char *path_arg;        /* --path "U,V", or NULL */
    const char *out_path;        /* --out */
    const char *pred_path;       /* --pred */
    int weights;                 /* index in weight_names, -1 = from the graph */
    int method;                  /* index in the method choices, 0 = auto */
    int device;                  /* index in device_names */
    int format;                  /* index in format_names */
    int ids, ids_given;          /* index in ids_names */
    int undirected;
    int paths, json, help;
    int threads;                 /* 0 = OpenMP's default */
    int tile;                    /* 0 = the method's */
    const char *device_memory;   /* --device-memory text, or NULL */
    long long path_u, path_v;    /* from path_arg */
} apsp_args;

/* Print "krill apsp: " and the message on stderr; return `exit_code`. */
static int apsp_error(int exit_code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int apsp_error(int exit_code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("krill apsp: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return exit_code;
}

static int is_integer_text(const char *s)
{
    if (*s == '+' || *s == '-') s++;
    if (!*s) return 0;
    while (*s >= '0' && *s <= '9') s++;
    return *s == '\0';
}

/* argv with every "--path U V" (before "--") joined into "--path" "U,V": a new array
 * (*joined_argc entries) and the joined strings, both malloc'ed, in *joined and *strings
 * (freed by the caller). Returns 0 when out of memory. */
static int join_path_values(int argc, char **argv, int *joined_argc, char ***joined,
                            char ***strings)
{
    int ok = 1, n = 0, n_strings = 0;
    *joined = malloc((size_t)(argc + 1) * sizeof **joined);
    *strings = calloc((size_t)argc + 1, sizeof **strings);
    ok = *joined && *strings;
    for (int i = 0; i < argc && ok; i++) {
        const int joinable = !strcmp(argv[i], "--path") && i + 2 < argc &&
                             is_integer_text(argv[i + 1]) && is_integer_text(argv[i + 2]);
        if (!strcmp(argv[i], "--")) {
            while (i < argc) (*joined)[n++] = argv[i++];
        } else if (joinable) {
            const size_t len = strlen(argv[i + 1]) + strlen(argv[i + 2]) + 2;
            char *s = malloc(len);
            ok = s != NULL;
            if (ok) {
                snprintf(s, len, "%s,%s", argv[i + 1], argv[i + 2]);
                (*strings)[n_strings++] = s;
                (*joined)[n++] = argv[i];
                (*joined)[n++] = s;
                i += 2;
            }
        } else {
            (*joined)[n++] = argv[i];
        }
    }
    if (ok) (*joined)[n] = NULL;
    *joined_argc = n;
    return ok;
}

/* "U,V" -> two integers (range checked against the graph later). */
static int parse_path_arg(apsp_args *args)
{
    int rc = CLI_EXIT_OK;
    const char *comma = strchr(args->path_arg, ',');
    char *end = NULL;
    errno = 0;
    if (comma) args->path_u = strtoll(args->path_arg, &end, 10);
    if (!comma || end != comma || comma == args->path_arg || errno == ERANGE) {
        rc = apsp_error(CLI_EXIT_USAGE, "--path expects two vertices, --path U V or --path "
                        "U,V; got '%s'", args->path_arg);
    } else {
        args->path_v = strtoll(comma + 1, &end, 10);
        if (end == comma + 1 || *end != '\0' || errno == ERANGE)
            rc = apsp_error(CLI_EXIT_USAGE, "--path expects two vertices, --path U V or "
                            "--path U,V; got '%s'", args->path_arg);
    }
    return rc;
}

static int ends_with(const char *s, const char *suffix)   /* ".npy" matches "D.NPY" too */
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

static int out_kind(const char *path)
{
    return ends_with(path, ".npy") ? OUT_NPY : ends_with(path, ".mtx") ? OUT_MTX : OUT_OTHER;
}

static int parse_apsp_args(int argc, char **argv, apsp_args *args, const char **method_names)
{
    int n_positional = 0;
    int rc = CLI_EXIT_OK;
    memset(args, 0, sizeof *args);
    args->weights = -1;
    args->ids = -1;
    const cli_option options[] = {
        { .name = "--help", .kind = CLI_FLAG, .flag = &args->help },
        { .name = "-h", .kind = CLI_FLAG, .flag = &args->help },
        { .name = "--gen", .kind = CLI_STRING, .string = &args->gen_spec },
        { .name = "--weights", .kind = CLI_CHOICE, .integer = &args->weights,
          .choices = weight_names },
        { .name = "--method", .kind = CLI_CHOICE, .integer = &args->method,
          .choices = method_names },
        { .name = "--device", .kind = CLI_CHOICE, .integer = &args->device,
          .choices = device_names },
        { .name = "--paths", .kind = CLI_FLAG, .flag = &args->paths },
        { .name = "--path", .kind = CLI_STRING, .string = &args->path_arg },
        { .name = "--out", .kind = CLI_STRING, .string = &args->out_path },
        { .name = "--pred", .kind = CLI_STRING, .string = &args->pred_path },
        { .name = "--json", .kind = CLI_FLAG, .flag = &args->json },
        { .name = "--threads", .kind = CLI_INT, .integer = &args->threads, .min = 1,
          .max = KRILL_MAX_THREADS },
        { .name = "--format", .kind = CLI_CHOICE, .integer = &args->format,
          .choices = format_names },
        { .name = "--ids", .kind = CLI_CHOICE, .integer = &args->ids, .choices = ids_names },
        { .name = "--undirected", .kind = CLI_FLAG, .flag = &args->undirected },
        { .name = "--tile", .kind = CLI_INT, .integer = &args->tile, .min = 1,
          .max = 1 << 16 },
        { .name = "--device-memory", .kind = CLI_STRING, .string = &args->device_memory },
    };
    rc = cli_parse(argc, argv, options, sizeof options / sizeof options[0], &args->graph_path,
                   1, &n_positional);
    args->ids_given = args->ids >= 0;
    if (!args->ids_given) args->ids = KRILL_GRAPH_IDS_REMAP;
    if (rc != CLI_EXIT_OK || args->help) {
        /* done */
    } else if (args->path_arg && (rc = parse_path_arg(args)) != CLI_EXIT_OK) {
        /* parse_path_arg said why (first: a stray second value would read as a file) */
    } else if (args->graph_path && args->gen_spec) {
        rc = apsp_error(CLI_EXIT_USAGE, "give either a graph file or --gen SPEC, not both");
    } else if (!args->graph_path && !args->gen_spec) {
        rc = apsp_error(CLI_EXIT_USAGE, "missing the graph: a file or --gen SPEC (see krill "
                        "apsp --help)");
    } else if (args->gen_spec && (args->format || args->ids_given || args->undirected)) {
        rc = apsp_error(CLI_EXIT_USAGE, "%s applies to graph files, not to --gen",
                        args->format ? "--format" : args->ids_given ? "--ids" : "--undirected");
    } else if (args->out_path && out_kind(args->out_path) == OUT_OTHER) {
        rc = apsp_error(CLI_EXIT_USAGE, "--out %s: unknown extension (use .npy or .mtx)",
                        args->out_path);
    } else if (args->pred_path && out_kind(args->pred_path) != OUT_NPY) {
        rc = apsp_error(CLI_EXIT_USAGE, "--pred %s: P is written as .npy only", args->pred_path);
    }
    if (args->path_arg || args->pred_path) args->paths = 1;
    return rc;
}

static int load_graph(const apsp_args *args, cli_apsp_report *report, krill_csr **graph)
{
    int rc = CLI_EXIT_OK;
    const double t0 = cli_seconds();
    if (args->graph_path) {
        krill_graph_opts opts = KRILL_GRAPH_OPTS_INIT;
        opts.format = (krill_graph_format)args->format;
        opts.ids = (krill_graph_ids)args->ids;
        opts.undirected = args->undirected;
        report->source = args->graph_path;
        CLI_TRY(krill_graph_read(args->graph_path, &opts, graph, &report->graph));
        if (report->graph.format != KRILL_GRAPH_EDGELIST &&
            (args->ids_given || args->undirected)) {
            rc = apsp_error(CLI_EXIT_USAGE, "%s applies to edge lists; %s is a %s file",
                            args->ids_given ? "--ids" : "--undirected", args->graph_path,
                            krill_graph_format_name(report->graph.format));
            goto cleanup;
        }
    } else {
        report->source = args->gen_spec;
        CLI_TRY(krill_graph_gen(args->gen_spec, graph));
        memset(&report->graph, 0, sizeof report->graph);
        report->graph.format = KRILL_GRAPH_AUTO;
        report->graph.arcs_read = (*graph)->nnz;
        krill_graph_describe(*graph, &report->graph);
    }
    report->load_seconds = cli_seconds() - t0;
cleanup:
    if (rc != CLI_EXIT_OK) krill_csr_destroy(graph);
    return rc;
}

/* The checks that need n: the --path vertices, the size of a .mtx D. */
static int check_against_graph(const apsp_args *args, int32_t n)
{
    int rc = CLI_EXIT_OK;
    if (args->path_arg && (args->path_u < 0 || args->path_u >= n || args->path_v < 0 ||
                           args->path_v >= n)) {
        rc = apsp_error(CLI_EXIT_USAGE, "--path %lld %lld: vertex %lld is out of range (the "
                        "graph has %" PRId32 " vertices, numbered from 0)", args->path_u,
                        args->path_v,
                        args->path_u < 0 || args->path_u >= n ? args->path_u : args->path_v, n);
    } else if (args->out_path && out_kind(args->out_path) == OUT_MTX && n > MTX_MAX_N) {
        rc = apsp_error(CLI_EXIT_USAGE, "--out %s: n = %" PRId32 " is too large for a Matrix "
                        "Market text file (at most %d): use .npy", args->out_path, n,
                        MTX_MAX_N);
    }
    return rc;
}

/* D as Matrix Market `array` (column-major: the file lists column v from row 0 down, so
 * that a reader gets D[u][v] at row u+1, column v+1), written whole or not at all. */
static int write_dist_mtx(const char *path, const krill_apsp *result)
{
    const int32_t n = krill_apsp_n(result);
    const krill_apsp_weight weight = krill_apsp_weight_type(result);
    const void *d = krill_apsp_dist(result);
    char value[40];
    krill_outfile out;
    int rc = cli_output_open(&out, "--out", path);
    if (rc != CLI_EXIT_OK) goto cleanup;
    fprintf(out.f, "%%%%MatrixMarket matrix array %s general\n"
            "%% krill apsp: entry (u+1, v+1) = the length of a shortest path u -> v "
            "(krill's vertices are 0-based)\n"
            "%% unreachable: %s\n%" PRId32 " %" PRId32 "\n",
            weight == KRILL_APSP_INT32 ? "integer" : "real",
            weight == KRILL_APSP_INT32 ? "1073741823 (KRILL_APSP_INT32_INF)" : "inf", n, n);
    for (int64_t v = 0; v < n && !ferror(out.f); v++)
        for (int64_t u = 0; u < n; u++) {
            const int64_t k = u * n + v;
            if (weight == KRILL_APSP_INT32) {
                fprintf(out.f, "%" PRId32 "\n", ((const int32_t *)d)[k]);
            } else {
                cli_apsp_format_dist(value, sizeof value, weight,
                                     weight == KRILL_APSP_FLOAT ? (double)((const float *)d)[k]
                                                                : ((const double *)d)[k]);
                fprintf(out.f, "%s\n", value);
            }
        }
    rc = cli_output_close(&out, "--out", 1);
cleanup:
    return rc;
}

/* --out and --pred. */
static int write_outputs(const apsp_args *args, const krill_apsp *result)
{
    static const char *const dtypes[] = { "<i4", "<f4", "<f8" };
    int rc = CLI_EXIT_OK;
    const int32_t n = krill_apsp_n(result);
    if (args->out_path && out_kind(args->out_path) == OUT_NPY)
        CLI_TRY(krill_npy_write(args->out_path, dtypes[krill_apsp_weight_type(result)], n, n,
                                krill_apsp_dist(result)));
    else if (args->out_path)
        rc = write_dist_mtx(args->out_path, result);
    if (rc != CLI_EXIT_OK) goto cleanup;
    if (args->pred_path)
        CLI_TRY(krill_npy_write(args->pred_path, "<i4", n, n, krill_apsp_pred(result)));
cleanup:
    return rc;
}

/* Solve with the weight type asked for, or the one the graph suggests: int32 for integer
 * weights (falling back to double when int32 distances could overflow), else double.
 * Returns krill_apsp_solve's status (its message in krill_last_error()). */
static krill_status solve(krill_ctx *ctx, const krill_csr *graph, const apsp_args *args,
                          krill_apsp_opts *opts, cli_apsp_report *report, krill_apsp **result,
                          char *why, size_t why_len)
{
    krill_status st = KRILL_OK;
    cli_apsp_progress progress = { .start = cli_seconds() };
    if (args->weights >= 0) {
        opts->weight = weight_types[args->weights];
        report->weight_why = "as asked";
    } else if (report->graph.integer_weights) {
        opts->weight = KRILL_APSP_INT32;
        report->weight_why = args->gen_spec ? "generated graphs have integer weights"
                                            : "every weight is an integer";
    } else {
        opts->weight = KRILL_APSP_DOUBLE;
        report->weight_why = "some weights are not integers";
    }
    if (isatty(fileno(stderr))) {
        opts->progress = cli_apsp_progress_show;
        opts->progress_user = &progress;
    }
    st = krill_apsp_solve(ctx, graph, opts, result, &report->info);
    if (st == KRILL_ERR_UNSUPPORTED && args->weights < 0 && opts->weight == KRILL_APSP_INT32) {
        snprintf(why, why_len, "the weights are integers, but int32 distances could "
                 "overflow (%s)", krill_last_error());
        report->weight_why = why;
        opts->weight = KRILL_APSP_DOUBLE;
        memset(&report->info, 0, sizeof report->info);
        st = krill_apsp_solve(ctx, graph, opts, result, &report->info);
    }
    cli_apsp_progress_clear(&progress);
    report->weight = opts->weight;
    return st;
}

static int apsp_run(int argc, char **argv)
{
    apsp_args args;
    cli_apsp_report report;
    const char *method_names[MAX_METHODS + 1] = { "auto" };
    char **joined = NULL, **strings = NULL;
    int joined_argc = 0;
    krill_ctx_opts ctx_opts = KRILL_CTX_OPTS_INIT;
    krill_apsp_opts opts = KRILL_APSP_OPTS_INIT;
    krill_ctx *ctx = NULL;
    krill_csr *graph = NULL;
    krill_apsp *result = NULL;
    int32_t *path = NULL;
    krill_status solve_status = KRILL_OK;
    char why[512];
    int rc = CLI_EXIT_OK;
    memset(&report, 0, sizeof report);
    for (int k = 0; k < MAX_METHODS && krill_apsp_methods()[k]; k++)
        method_names[k + 1] = krill_apsp_methods()[k];
    if (!join_path_values(argc, argv, &joined_argc, &joined, &strings)) {
        rc = apsp_error(CLI_EXIT_FAILURE, "out of memory for the arguments");
        goto cleanup;
    }
    rc = parse_apsp_args(joined_argc, joined, &args, method_names);
    if (rc != CLI_EXIT_OK || args.help) {
        if (rc == CLI_EXIT_OK) apsp_usage(stdout);
        goto cleanup;
    }
    rc = load_graph(&args, &report, &graph);
    if (rc != CLI_EXIT_OK) goto cleanup;
    report.generated = args.gen_spec != NULL;
    rc = check_against_graph(&args, graph->n_rows);
    if (rc != CLI_EXIT_OK) goto cleanup;

    ctx_opts.device = device_types[args.device];
    ctx_opts.threads = args.threads;
    CLI_TRY(krill_ctx_create(&ctx_opts, &ctx));
    report.device = krill_ctx_describe(ctx);
    report.threads = krill_ctx_device(ctx) == KRILL_DEVICE_CPU ? krill_ctx_threads(ctx) : 0;
    opts.method = method_names[args.method];
    opts.paths = args.paths;
    opts.tile = args.tile;
    if (args.device_memory && (opts.device_memory = cli_parse_bytes(args.device_memory)) <= 0) {
        rc = apsp_error(CLI_EXIT_USAGE, "--device-memory '%s' is not a positive byte count "
                        "(e.g. 512M, 2G)", args.device_memory);
        goto cleanup;
    }
    solve_status = solve(ctx, graph, &args, &opts, &report, &result, why, sizeof why);
    krill_csr_destroy(&graph);
    if (solve_status == KRILL_ERR_NUMERIC && report.info.negative_cycle >= 0 && args.json) {
        const char *message = krill_last_error();   /* before the JSON, which calls none */
        cli_apsp_json(stdout, &report);
        rc = cli_error(CLI_EXIT_USAGE, "%s", message);
        goto cleanup;
    }
    if (solve_status == KRILL_ERR_ARG && args.tile > 0 && strstr(krill_last_error(), "tile")) {
        rc = apsp_error(CLI_EXIT_USAGE, "--tile %d: %s", args.tile, krill_last_error());
        goto cleanup;
    }
    CLI_TRY(solve_status);
    report.result = result;
    krill_apsp_summary(result, &report.unreachable, &report.max_finite, &report.checksum);
    report.peak_ok = krill_apsp_peak(ctx, report.weight, 0.05, &report.peak) == KRILL_OK;
    if (!report.peak_ok) krill_clear_error();
    if (args.path_arg) {
        path = malloc((size_t)krill_apsp_n(result) * sizeof *path);
        if (!path) {
            rc = apsp_error(CLI_EXIT_FAILURE, "out of memory for a path of %" PRId32 " vertices",
                            krill_apsp_n(result));
            goto cleanup;
        }
        report.path_asked = 1;
        report.path_from = (int32_t)args.path_u;
        report.path_to = (int32_t)args.path_v;
        CLI_TRY(krill_apsp_path(result, report.path_from, report.path_to, path,
                                &report.path_len));
        report.path = path;
    }
    rc = write_outputs(&args, result);
    if (rc != CLI_EXIT_OK) goto cleanup;
    report.out_path = args.out_path;
    report.pred_path = args.pred_path;
    if (args.json)
        cli_apsp_json(stdout, &report);
    else
        cli_apsp_human(stdout, &report);
cleanup:
    krill_apsp_destroy(&result);
    krill_ctx_destroy(&ctx);
    krill_csr_destroy(&graph);
    free(path);
    for (int k = 0; strings && strings[k]; k++) free(strings[k]);
    free(strings);
    free(joined);
    return rc;
}

const cli_command cli_apsp_command = {
    .name = "apsp",
    .summary = "all-pairs shortest paths of a graph (DIMACS, METIS, edge list, .mtx, --gen)",
    .run = apsp_run,
    .usage = apsp_usage,
};
