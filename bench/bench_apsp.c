/* bench/bench_apsp.c - the APSP paper's experiments (Okuyama, Ino, Hagihara: blocked
 * Floyd-Warshall on the GPU) on our hardware, through the public API.
 *
 *   bench_apsp [--device cpu|gpu] [--threads N] [--sizes LIST] [--methods LIST]
 *              [--weights LIST] [--runs R] [--warmup W] [--paths] [--max-seconds S]
 *              [--peak-seconds S] [--write-graph DIR] [--write-dist DIR]
 *              [--csv FILE] [--json FILE]
 *
 * Graphs: krill_graph_gen("random:N"), the paper's random graphs: N vertices, 4N arcs
 * with distinct random ends, integer weights uniform in [0, N) (seed 1; the same graph on
 * every run and machine).
 *
 * For every n of the list (default CPU 256,512,1024,2048; GPU 512,...,16384), weight type
 * (default int32,float) and method (default every method the device has, of plain, fw-a,
 * fw-b, fw-rec, dijkstra): W warm-up solves (default 1), then R timed ones (default 3),
 * each a krill_apsp_solve (distances only), repeated through bench_repeat (bench_common).
 * Every reported time is the median over the R solves of the solve's own figure
 * (krill_apsp_info: CUDA events on the GPU, the host clock on the CPU), each column its
 * own median:
 *   Table 1  t_compute: the computation, from D built in device memory to D final (the
 *            paper's "compute time"), ms; also its min and max over the runs
 *   Table 3  efficiency = relaxations / t_compute / peak: relaxations as the solve counts
 *            them (n^3 for the FW methods, whatever the padding; n x arcs edge relaxations
 *            for dijkstra, whose figure is therefore not comparable), the peak from
 *            krill_apsp_peak for the same weight type on the same context (measured at
 *            the start and at the end, --peak-seconds each, default 0.5; the larger counts:
 *            on a shared machine another process may take a core during one of them; the
 *            printed table, written as it goes, uses the start's)
 *   Table 4  t_pivot, t_panels, t_rest: the blocked methods' three kinds of tiles over all
 *            rounds (0 for a method that is one `whole` computation)
 *   also     t_setup (D from the graph), t_upload (the graph to the GPU), t_download (D
 *            to the host), t_total (the whole call)
 * --paths: for int32 at the largest n each method ran, the same again with paths
 * (opts.paths = 1): t_compute with P and its ratio to the distances-only t_compute.
 * --max-seconds S (default 20): a method's next n is skipped when its predicted solve
 * time, the previous n's median t_total times (n / n_prev)^3 (dijkstra: ^2), passes S; an
 * n after a failure of the same method and weight is skipped too.
 *
 * Check: for each n and weight, the first method that ran is the reference; every other
 * method's D must equal it (int32: bit for bit; float and double: |difference| at most
 * n eps max|D| over the finite entries, the same entries unreachable; the paper's graphs
 * have integer weights and distances far below 2^24, so in practice they are equal too).
 * A mismatch prints "wrong result" and the program exits 1.
 * --write-graph DIR writes each graph as DIR/random_N.bin (bench_common's binary dump:
 * "KRILLCSR", the weights as float64), --write-dist DIR the reference D of each n and
 * weight as DIR/random_N.WEIGHT.npy (krill_npy_write; int32 unreachable =
 * KRILL_APSP_INT32_INF): bench/apsp_peers.py times SciPy and NetworkX on those graphs and
 * checks their distances against these. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/bench_common.h"
#include "core/core_impl.h"
#include "krill/apsp.h"
#include "krill/graph.h"
#include "krill/io.h"

#include "bench/bench_apsp.h"

/* One solve as bench_repeat's unit of work; keeps the last result for the checks. */
typedef struct solve_job {
    krill_ctx *ctx;
    const krill_csr *graph;
    krill_apsp_opts opts;
    krill_apsp *last;
    krill_apsp_info info;
} solve_job;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_apsp [--device cpu|gpu] [--threads N] [--sizes LIST] [--methods LIST]\n"
            "                  [--weights LIST] [--runs R] [--warmup W] [--paths] "
            "[--max-seconds S]\n"
            "                  [--peak-seconds S] [--write-graph DIR] [--write-dist DIR]\n"
            "                  [--csv FILE] [--json FILE]\n"
            "graphs random:N (N vertices, 4N arcs); defaults: the GPU when there is one, sizes\n"
            "256,512,1024,2048 (CPU) or 512,...,16384 (GPU), every method of the device, weights\n"
            "int32,float, R 3, W 1, S 20 s (a method's next n is skipped when its predicted "
            "solve\ntime passes S), peak 0.5 s per weight type\n");
}

/* bench_parse_options' usage: the help alone (on stdout), as main prints the usage after
 * every error. */
static void help(FILE *f)
{
    if (f == stdout) usage(f);
}

/* The message for a value an option refuses; returns -1. */
static int bad_value(const char *name, const char *v)
{
    fprintf(stderr, "bench_apsp: bad value for %s: '%s'\n", name, v);
    return -1;
}

/* One integer in [lo, hi] into *out; -1 after bad_value. */
static int parse_one(const char *name, const char *v, int *out, int lo, int hi)
{
    int one[1], count = 0;
    const int rc = bench_parse_ints(v, one, 1, &count, lo, hi) == 0 ? 0 : bad_value(name, v);
    if (rc == 0) *out = one[0];
    return rc;
}

/* --threads (0..4096), --runs (1..1000), --warmup (0..1000) into the int *field. */
static int parse_threads(const char *name, const char *v, void *field)
{
    return parse_one(name, v, field, 0, 4096);
}

static int parse_runs(const char *name, const char *v, void *field)
{
    return parse_one(name, v, field, 1, 1000);
}

static int parse_warmup(const char *name, const char *v, void *field)
{
    return parse_one(name, v, field, 0, 1000);
}

/* --sizes: a list of n in 1..2^20 into the sizes of the apsp_opts_b *field. */
static int parse_sizes(const char *name, const char *v, void *field)
{
    apsp_opts_b *o = field;
    return bench_parse_ints(v, o->sizes, MAX_SIZES, &o->n_sizes, 1, 1 << 20) == 0
               ? 0 : bad_value(name, v);
}

/* --methods: a list of names into the methods of the apsp_opts_b *field (an empty list
 * leaves none, which parse_args refuses). */
static int parse_methods(const char *name, const char *v, void *field)
{
    apsp_opts_b *o = field;
    const char *p = v;
    int rc = 0;
    o->n_methods = 0;
    while (rc == 0 && *p)
        rc = o->n_methods < MAX_METHODS
                 ? bench_list_next(&p, o->methods[o->n_methods++], sizeof o->methods[0])
                 : -1;
    return rc == 0 ? 0 : bad_value(name, v);
}

/* --weights: a list of int32, float, double into the weights of the apsp_opts_b *field (an
 * empty list leaves none, which parse_args refuses). */
static int parse_weights(const char *name, const char *v, void *field)
{
    apsp_opts_b *o = field;
    const char *p = v;
    char item[16];
    int rc = 0;
    o->n_weights = 0;
    while (rc == 0 && *p)
        rc = o->n_weights < MAX_WEIGHTS && bench_list_next(&p, item, sizeof item) == 0
                 ? (krill_apsp_weight_parse(item, &o->weights[o->n_weights++]) == KRILL_OK
                        ? 0 : -1)
                 : -1;
    return rc == 0 ? 0 : bad_value(name, v);
}

/* --max-seconds, --peak-seconds: seconds in [0, 1e6] into the double *field. */
static int parse_seconds(const char *name, const char *v, void *field)
{
    double *out = field;
    char *end = NULL;
    int rc = 0;
    *out = strtod(v, &end);
    if (end == v || *end != '\0' || !(*out >= 0.0 && *out <= 1e6)) {
        fprintf(stderr, "bench_apsp: %s expects seconds >= 0, got '%s'\n", name, v);
        rc = bad_value(name, v);
    }
    return rc;
}

/* The options into o (bench_parse_options; there are no positional arguments), then the
 * defaults of those not given and the check that the device has the methods. */
static int parse_args(int argc, char **argv, apsp_opts_b *o)
{
    const bench_opt opts[] = {
        {.name = "--device", .kind = BENCH_OPT_DEVICE, .field = &o->device},
        {.name = "--threads", .kind = BENCH_OPT_PARSE, .field = &o->threads,
         .parse = parse_threads},
        {.name = "--sizes", .kind = BENCH_OPT_PARSE, .field = o, .parse = parse_sizes},
        {.name = "--runs", .kind = BENCH_OPT_PARSE, .field = &o->runs, .parse = parse_runs},
        {.name = "--warmup", .kind = BENCH_OPT_PARSE, .field = &o->warmup,
         .parse = parse_warmup},
        {.name = "--methods", .kind = BENCH_OPT_PARSE, .field = o, .parse = parse_methods},
        {.name = "--weights", .kind = BENCH_OPT_PARSE, .field = o, .parse = parse_weights},
        {.name = "--paths", .kind = BENCH_OPT_FLAG, .field = &o->paths},
        {.name = "--max-seconds", .kind = BENCH_OPT_PARSE, .field = &o->max_seconds,
         .parse = parse_seconds},
        {.name = "--peak-seconds", .kind = BENCH_OPT_PARSE, .field = &o->peak_seconds,
         .parse = parse_seconds},
        {.name = "--write-graph", .kind = BENCH_OPT_STRING, .field = &o->graph_dir},
        {.name = "--write-dist", .kind = BENCH_OPT_STRING, .field = &o->dist_dir},
        {.name = "--csv", .kind = BENCH_OPT_STRING, .field = &o->csv_path},
        {.name = "--json", .kind = BENCH_OPT_STRING, .field = &o->json_path},
        {.name = NULL},
    };
    int rc;
    memset(o, 0, sizeof *o);
    o->device = krill_cuda_device_count() > 0 ? KRILL_DEVICE_CUDA : KRILL_DEVICE_CPU;
    o->n_methods = -1;           /* until --methods: every method of the device */
    o->n_weights = 2;
    o->weights[0] = KRILL_APSP_INT32;
    o->weights[1] = KRILL_APSP_FLOAT;
    o->runs = 3;
    o->warmup = 1;
    o->max_seconds = 20.0;
    o->peak_seconds = 0.5;
    rc = bench_parse_options(argc, argv, "bench_apsp", opts, NULL, help, NULL);
    if (rc == 0 && (o->n_methods == 0 || o->n_weights == 0)) rc = -1;   /* an empty list */
    if (rc == 0 && o->n_sizes == 0) {   /* no --sizes (a list given has one at least) */
        static const int cpu[] = {256, 512, 1024, 2048}, gpu[] = {512, 1024, 2048, 4096, 8192,
                                                                   16384};
        const int on_gpu = o->device == KRILL_DEVICE_CUDA;
        o->n_sizes = on_gpu ? 6 : 4;
        memcpy(o->sizes, on_gpu ? gpu : cpu, (size_t)o->n_sizes * sizeof(int));
    }
    if (rc == 0 && o->n_methods < 0) {
        const char *const *names = krill_apsp_methods();
        o->n_methods = 0;
        for (int k = 0; names[k] && o->n_methods < MAX_METHODS; k++)
            if (krill_apsp_method_on(names[k], o->device))
                snprintf(o->methods[o->n_methods++], sizeof o->methods[0], "%s", names[k]);
    }
    for (int k = 0; rc == 0 && k < o->n_methods; k++)
        if (!krill_apsp_method_on(o->methods[k], o->device)) {
            fprintf(stderr, "bench_apsp: method '%s' is not on the %s (krill_apsp_method_on)\n",
                    o->methods[k], o->device == KRILL_DEVICE_CUDA ? "GPU" : "CPU");
            rc = -1;
        }
    return rc;
}

/* ---- one point ------------------------------------------------------------------------ */

static krill_status solve_once(void *user, double *fig)
{
    solve_job *job = user;
    krill_status st = KRILL_OK;
    krill_apsp_destroy(&job->last);   /* one result at a time: D of n = 32768 is 4 GiB */
    KRILL_TRY(krill_apsp_solve(job->ctx, job->graph, &job->opts, &job->last, &job->info));
    fig[F_COMPUTE] = job->info.t_compute;
    fig[F_PIVOT] = job->info.t_pivot;
    fig[F_PANELS] = job->info.t_panels;
    fig[F_REST] = job->info.t_rest;
    fig[F_SETUP] = job->info.t_setup;
    fig[F_UPLOAD] = job->info.t_upload;
    fig[F_DOWNLOAD] = job->info.t_download;
    fig[F_TOTAL] = job->info.t_total;
cleanup:
    return st;
}

/* Warm-up and runs of one (graph, method, weight, paths): medians into t (FIGURES), min and
 * max of t_compute; *result keeps the last solve's result (the caller destroys it). */
static krill_status measure(krill_ctx *ctx, const krill_csr *g, const char *method,
                            krill_apsp_weight weight, int paths, const apsp_opts_b *o, double *t,
                            double *t_min, double *t_max, krill_apsp_info *info,
                            krill_apsp **result)
{
    krill_status st = KRILL_OK;
    solve_job job;
    krill_apsp_opts init = KRILL_APSP_OPTS_INIT;
    double *samples = NULL, *col = NULL;
    memset(&job, 0, sizeof job);
    job.ctx = ctx;
    job.graph = g;
    job.opts = init;
    job.opts.method = method;
    job.opts.weight = weight;
    job.opts.paths = paths;
    KRILL_ALLOC(samples, (size_t)o->runs * FIGURES);
    KRILL_ALLOC(col, o->runs);
    KRILL_TRY(bench_repeat(solve_once, &job, o->warmup, o->runs, FIGURES, samples, t));
    for (int r = 0; r < o->runs; r++) col[r] = samples[(size_t)r * FIGURES + F_COMPUTE];
    *t_min = bench_min(col, o->runs);
    *t_max = bench_max(col, o->runs);
    *info = job.info;
    *result = job.last;
    job.last = NULL;
cleanup:
    krill_apsp_destroy(&job.last);
    krill_free(samples);
    krill_free(col);
    return st;
}

/* |a - b| over D's entries (INFINITY when unreachability differs), and the largest finite
 * |entry| of a. */
static void compare_dist(const krill_apsp *a, const krill_apsp *b, double *diff, double *scale)
{
    const int64_t n = krill_apsp_n(a), nn = n * n;
    const krill_apsp_weight w = krill_apsp_weight_type(a);
    const void *da = krill_apsp_dist(a), *db = krill_apsp_dist(b);
    double worst = 0.0, big = 0.0;
    for (int64_t k = 0; k < nn && !isinf(worst); k++) {
        double x, y;
        if (w == KRILL_APSP_INT32) {
            const int32_t xi = ((const int32_t *)da)[k], yi = ((const int32_t *)db)[k];
            x = xi >= KRILL_APSP_INT32_INF ? INFINITY : (double)xi;
            y = yi >= KRILL_APSP_INT32_INF ? INFINITY : (double)yi;
        } else if (w == KRILL_APSP_FLOAT) {
            x = ((const float *)da)[k];
            y = ((const float *)db)[k];
        } else {
            x = ((const double *)da)[k];
            y = ((const double *)db)[k];
        }
        if (isinf(x) != isinf(y) || isnan(x) || isnan(y))
            worst = INFINITY;
        else if (!isinf(x) && fabs(x - y) > worst)
            worst = fabs(x - y);
        if (!isinf(x) && fabs(x) > big) big = fabs(x);
    }
    *diff = worst;
    *scale = big;
}

static double weight_eps(krill_apsp_weight w)
{
    return w == KRILL_APSP_INT32 ? 0.0 : w == KRILL_APSP_FLOAT ? FLT_EPSILON : DBL_EPSILON;
}

static const char *npy_dtype(krill_apsp_weight w)
{
    return w == KRILL_APSP_INT32 ? "<i4" : w == KRILL_APSP_FLOAT ? "<f4" : "<f8";
}

static double scaling_exponent(const char *method)
{
    return strcmp(method, "dijkstra") == 0 ? 2.0 : 3.0;
}

/* ---- the sweep ------------------------------------------------------------------------ */

static krill_status make_dir(const char *dir)
{
    krill_status st = KRILL_OK;
    struct stat sb;
    if (mkdir(dir, 0777) != 0 && !(stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode)))
        st = krill_error(KRILL_ERR_IO, "%s: cannot create the directory", dir);
    return st;
}

/* The graph random:n, written to --write-graph's directory when asked. */
static krill_status load_graph(int n, const apsp_opts_b *o, krill_csr **g)
{
    krill_status st = KRILL_OK;
    char spec[64], path[4096];
    snprintf(spec, sizeof spec, "random:%d", n);
    KRILL_TRY(krill_graph_gen(spec, g));
    if (o->graph_dir) {
        snprintf(path, sizeof path, "%s/random_%d.bin", o->graph_dir, n);
        KRILL_TRY(bench_dump_csr(path, *g));
    }
cleanup:
    return st;
}

/* Measure one point; the reference result of its (n, weight) is *ref, computed by
 * ref_method (NULL: this one becomes it, and ref_method gets its name). */
static void run_point(krill_ctx *ctx, const krill_csr *g, const apsp_opts_b *o,
                      const double *peak, apsp_point *p, krill_apsp **ref, char *ref_method)
{
    krill_apsp *res = NULL;
    krill_apsp_info info;
    double scale = 0.0;
    int64_t unreach = 0;
    double max_finite = 0.0;
    memset(&info, 0, sizeof info);
    if (measure(ctx, g, p->method, p->weight, 0, o, p->t, &p->t_min, &p->t_max, &info, &res) !=
        KRILL_OK) {
        p->status = P_FAILED;
        snprintf(p->message, sizeof p->message, "%s", krill_last_error());
        goto done;
    }
    p->tile = info.tile;
    p->n_padded = info.n_padded;
    p->relaxations = info.relaxations;
    p->efficiency = p->t[F_COMPUTE] > 0.0 && peak[p->weight] > 0.0
                        ? info.relaxations / p->t[F_COMPUTE] / peak[p->weight]
                        : 0.0;
    krill_apsp_summary(res, &unreach, &max_finite, &p->checksum);
    p->status = P_OK;
    if (!*ref) {
        *ref = res;
        res = NULL;
        snprintf(ref_method, 16, "%s", p->method);
        if (o->dist_dir) {
            char path[4096];
            snprintf(path, sizeof path, "%s/random_%d.%s.npy", o->dist_dir, p->n,
                     krill_apsp_weight_name(p->weight));
            if (krill_npy_write(path, npy_dtype(p->weight), p->n, p->n, krill_apsp_dist(*ref)) !=
                KRILL_OK) {
                p->status = P_FAILED;
                snprintf(p->message, sizeof p->message, "%s", krill_last_error());
            }
        }
        goto done;
    }
    compare_dist(*ref, res, &p->max_diff, &scale);
    if (!(p->max_diff <= (double)p->n * weight_eps(p->weight) * scale)) {
        p->status = P_WRONG;
        snprintf(p->message, sizeof p->message, "wrong result: max |D - D_ref| = %g against "
                 "%s's D (bound n eps max|D| = %g)", p->max_diff, ref_method,
                 (double)p->n * weight_eps(p->weight) * scale);
    }
done:
    krill_apsp_destroy(&res);
}

/* --paths: int32 with P at the largest n each method ran. */
static int run_paths(krill_ctx *ctx, const apsp_opts_b *o, apsp_point *pts, int n_pts)
{
    int failures = 0;
    for (int s = o->n_sizes - 1; s >= 0; s--) {
        krill_csr *g = NULL;
        for (int i = 0; i < n_pts; i++) {
            apsp_point *p = &pts[i];
            krill_apsp *res = NULL;
            krill_apsp_info info;
            double t[FIGURES], lo, hi;
            int largest = 1;
            if (p->n != o->sizes[s] || p->weight != KRILL_APSP_INT32 || p->status != P_OK)
                continue;
            for (int j = 0; j < n_pts; j++)
                if (pts[j].status == P_OK && pts[j].weight == KRILL_APSP_INT32 &&
                    strcmp(pts[j].method, p->method) == 0 && pts[j].n > p->n)
                    largest = 0;
            if (!largest) continue;
            if (!g && load_graph(p->n, o, &g) != KRILL_OK) {
                printf("paths: random:%d: %s\n", p->n, krill_last_error());
                failures++;
                break;
            }
            if (measure(ctx, g, p->method, KRILL_APSP_INT32, 1, o, t, &lo, &hi, &info, &res) !=
                KRILL_OK) {
                printf("paths: n = %d %s: FAILED: %s\n", p->n, p->method, krill_last_error());
                snprintf(p->message, sizeof p->message, "paths failed: %s", krill_last_error());
                failures++;
            } else {
                p->t_paths = t[F_COMPUTE];
                p->paths_ratio = p->t[F_COMPUTE] > 0.0 ? t[F_COMPUTE] / p->t[F_COMPUTE] : 0.0;
                printf("paths: n = %d %-8s int32 compute %.3f ms with P, %.3f ms without: "
                       "%.2fx\n", p->n, p->method, t[F_COMPUTE] * 1e3, p->t[F_COMPUTE] * 1e3,
                       p->paths_ratio);
            }
            fflush(stdout);
            krill_apsp_destroy(&res);
        }
        krill_csr_destroy(&g);
    }
    return failures;
}

/* The min-plus peak of each weight type; peak[w] keeps the larger of what it held and
 * this measurement (the peak is measured at the start and at the end of the sweep: on a
 * shared machine, another process can take a core during one of them). Returns failures. */
static int measure_peaks(krill_ctx *ctx, const apsp_opts_b *o, const char *when, double *peak)
{
    int failures = 0;
    for (int w = 0; w < o->n_weights; w++) {
        const krill_apsp_weight wt = o->weights[w];
        double rate = 0.0;
        if (krill_apsp_peak(ctx, wt, o->peak_seconds, &rate) != KRILL_OK) {
            fprintf(stderr, "bench_apsp: the %s peak: %s\n", krill_apsp_weight_name(wt),
                    krill_last_error());
            failures++;
        }
        printf("# min-plus peak (krill_apsp_peak) at the %s, %s: %.4g Grelax/s\n", when,
               krill_apsp_weight_name(wt), rate * 1e-9);
        if (rate > peak[wt]) peak[wt] = rate;
    }
    return failures;
}

int main(int argc, char **argv)
{
    apsp_opts_b o;
    krill_ctx *ctx = NULL;
    apsp_point *pts = NULL;
    double peak[MAX_WEIGHTS] = {0.0, 0.0, 0.0};
    int n_pts = 0, failures = 0, rc = 2;

    if (parse_args(argc, argv, &o) != 0) {
        usage(stderr);
        goto cleanup;
    }
    if (bench_ctx_create(o.device, o.threads, &ctx) != KRILL_OK) goto cleanup;
    if ((o.graph_dir && make_dir(o.graph_dir) != KRILL_OK) ||
        (o.dist_dir && make_dir(o.dist_dir) != KRILL_OK) ||
        krill_calloc((void **)&pts, sizeof *pts * (size_t)(o.n_sizes * o.n_methods * o.n_weights),
                     "points") != KRILL_OK) {
        fprintf(stderr, "bench_apsp: %s\n", krill_last_error());
        goto cleanup;
    }
    printf("# bench_apsp on %s; graphs random:N (N vertices, 4N arcs); median of %d solves "
           "after %d warm-up; max %.3g s a solve\n", krill_ctx_describe(ctx), o.runs, o.warmup,
           o.max_seconds);
    failures += measure_peaks(ctx, &o, "start", peak);
    apsp_print_header();
    for (int s = 0; s < o.n_sizes; s++) {
        const int n = o.sizes[s];
        krill_csr *g = NULL;
        if (load_graph(n, &o, &g) != KRILL_OK) {
            printf("%6d FAILED to generate or write the graph: %s\n", n, krill_last_error());
            failures++;
            continue;
        }
        for (int w = 0; w < o.n_weights; w++) {
            krill_apsp *ref = NULL;
            char ref_method[16] = "";
            for (int m = 0; m < o.n_methods; m++) {
                apsp_point *p = &pts[n_pts++];
                const apsp_point *prev = NULL;
                p->n = n;
                p->arcs = g->nnz;
                p->weight = o.weights[w];
                snprintf(p->method, sizeof p->method, "%s", o.methods[m]);
                for (int j = 0; j < n_pts - 1; j++)
                    if (pts[j].weight == p->weight && strcmp(pts[j].method, p->method) == 0 &&
                        pts[j].n < n && (!prev || pts[j].n > prev->n))
                        prev = &pts[j];
                if (prev && prev->status != P_OK) {
                    p->status = P_SKIPPED;
                    snprintf(p->message, sizeof p->message, "after the %s at n = %d",
                             prev->status == P_SKIPPED ? "skip" : "failure", prev->n);
                } else if (prev && o.max_seconds > 0.0) {
                    const double predicted = prev->t[F_TOTAL] *
                        pow((double)n / prev->n, scaling_exponent(p->method));
                    if (predicted > o.max_seconds) {
                        p->status = P_SKIPPED;
                        snprintf(p->message, sizeof p->message, "predicted %.3g s a solve "
                                 "(%.3g s at n = %d) > --max-seconds %.3g", predicted,
                                 prev->t[F_TOTAL], prev->n, o.max_seconds);
                    }
                }
                if (p->status != P_SKIPPED) run_point(ctx, g, &o, peak, p, &ref, ref_method);
                if (p->status == P_FAILED || p->status == P_WRONG) failures++;
                apsp_print_point(p);
                fflush(stdout);
            }
            krill_apsp_destroy(&ref);
        }
        krill_csr_destroy(&g);
    }
    if (o.paths) failures += run_paths(ctx, &o, pts, n_pts);
    failures += measure_peaks(ctx, &o, "end", peak);
    for (int i = 0; i < n_pts; i++) {   /* efficiency against the larger of the two peaks */
        apsp_point *p = &pts[i];
        if (p->status == P_OK || p->status == P_WRONG)
            p->efficiency = p->t[F_COMPUTE] > 0.0 && peak[p->weight] > 0.0
                                ? p->relaxations / p->t[F_COMPUTE] / peak[p->weight]
                                : 0.0;
    }
    if (o.csv_path && apsp_write_csv(o.csv_path, pts, n_pts) != 0) {
        fprintf(stderr, "bench_apsp: cannot write %s\n", o.csv_path);
        failures++;
    }
    if (o.json_path && apsp_write_json(o.json_path, pts, n_pts, &o, ctx, peak) != 0) {
        fprintf(stderr, "bench_apsp: cannot write %s\n", o.json_path);
        failures++;
    }
    printf("# compute = t_compute (device time from D built to D final), median; eff = "
           "relaxations / compute / the start's peak of the same weight type (the CSV and "
           "JSON: against the larger of the start's and the end's)\n");
    rc = failures ? 1 : 0;
cleanup:
    krill_free(pts);
    krill_ctx_destroy(&ctx);
    return rc;
}
