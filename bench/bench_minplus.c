/* bench/bench_minplus.c - the min-plus peak of a device: relaxations min(a + b, c) per
 * second of register-resident chains (krill_apsp_peak, apsp/peak.c), the figure that
 * bench_apsp divides the blocked methods' rate by (the APSP paper's Table 3).
 *
 *   bench_minplus [--device cpu|gpu] [--threads N] [--weights int32,float,double]
 *                 [--seconds S] [--csv FILE] [--json FILE]
 *
 * For each weight type one call of krill_apsp_peak (about S seconds, default 0.5: a
 * warm-up run, runs of growing length to size the timed ones, then the median of 7 timed
 * runs). Printed: relaxations per second; on the GPU also the relaxations per SM per clock
 * cycle at the device's nominal clock (cudaDevAttrClockRate; a GPU that runs below it
 * shows less), whose ceiling is the SM's add-min issue rate (sm_90: int32 through the DPX
 * instruction VIADDMNMX, one instruction a relaxation; float FADD + FMNMX; double DADD +
 * DSETP + 2 FSEL, as no double minimum instruction exists); on the CPU the relaxations per
 * second of one thread. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef KRILL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "bench/bench_common.h"
#include "core/core_impl.h"
#include "krill/apsp.h"

#define MAX_WEIGHTS 3

typedef struct minplus_opts {
    krill_device device;
    int threads;                 /* 0 = OpenMP's default */
    krill_apsp_weight weights[MAX_WEIGHTS];
    int n_weights;
    double seconds;
    const char *csv_path, *json_path;
} minplus_opts;

typedef struct minplus_result {
    krill_apsp_weight weight;
    double rate;                 /* relaxations per second */
    double per_sm_clock;         /* GPU: per SM per cycle at the nominal clock; else NaN */
    double per_thread;           /* CPU: per thread per second; else NaN */
    int ok;
    char message[240];
} minplus_result;

/* What the device is: SMs and clock (GPU) or threads (CPU). */
typedef struct minplus_device {
    char describe[192];
    int threads;
    int sm_count;
    double clock_hz;             /* 0 when unknown */
} minplus_device;

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_minplus [--device cpu|gpu] [--threads N] [--weights "
               "int32,float,double]\n                     [--seconds S] [--csv FILE] "
               "[--json FILE]\n"
               "the min-plus peak (krill_apsp_peak) per weight type; default: the GPU when "
               "there is one,\nweights int32,float,double, S = 0.5 s per weight type\n");
}

/* --threads: 0..4096 into the int *field. */
static int parse_threads(const char *name, const char *v, void *field)
{
    int t[1], count = 0, rc = 0;
    if (bench_parse_ints(v, t, 1, &count, 0, 4096) != 0) {
        fprintf(stderr, "bench_minplus: %s expects 0..4096, got '%s'\n", name, v);
        rc = -1;
    } else {
        *(int *)field = t[0];
    }
    return rc;
}

/* --weights: a list of int32, float, double into the weights of the minplus_opts *field. */
static int parse_weights(const char *name, const char *v, void *field)
{
    minplus_opts *o = field;
    const char *p = v;
    char item[16];
    int rc = 0;
    o->n_weights = 0;
    while (rc == 0 && *p) {
        if (o->n_weights >= MAX_WEIGHTS || bench_list_next(&p, item, sizeof item) != 0 ||
            krill_apsp_weight_parse(item, &o->weights[o->n_weights]) != 0) {
            fprintf(stderr, "bench_minplus: %s: a list of int32, float, double; got '%s'\n",
                    name, v);
            rc = -1;
        } else {
            o->n_weights++;
        }
    }
    if (rc == 0 && o->n_weights == 0) {
        fprintf(stderr, "bench_minplus: %s: empty\n", name);
        rc = -1;
    }
    return rc;
}

/* --seconds: a time in (0, 600] into the double *field. */
static int parse_seconds(const char *name, const char *v, void *field)
{
    double *seconds = field;
    char *end = NULL;
    int rc = 0;
    *seconds = strtod(v, &end);
    if (end == v || *end != '\0' || !(*seconds > 0.0 && *seconds <= 600.0)) {
        fprintf(stderr, "bench_minplus: %s expects a time in (0, 600], got '%s'\n", name, v);
        rc = -1;
    }
    return rc;
}

/* The options into o (bench_parse_options); there are no positional arguments. */
static int parse_args(int argc, char **argv, minplus_opts *o)
{
    const bench_opt opts[] = {
        {.name = "--device", .kind = BENCH_OPT_DEVICE, .field = &o->device},
        {.name = "--threads", .kind = BENCH_OPT_PARSE, .field = &o->threads,
         .parse = parse_threads},
        {.name = "--weights", .kind = BENCH_OPT_PARSE, .field = o, .parse = parse_weights},
        {.name = "--seconds", .kind = BENCH_OPT_PARSE, .field = &o->seconds,
         .parse = parse_seconds},
        {.name = "--csv", .kind = BENCH_OPT_STRING, .field = &o->csv_path},
        {.name = "--json", .kind = BENCH_OPT_STRING, .field = &o->json_path},
        {.name = NULL},
    };
    memset(o, 0, sizeof *o);
    o->device = krill_cuda_device_count() > 0 ? KRILL_DEVICE_CUDA : KRILL_DEVICE_CPU;
    o->n_weights = 3;
    o->weights[0] = KRILL_APSP_INT32;
    o->weights[1] = KRILL_APSP_FLOAT;
    o->weights[2] = KRILL_APSP_DOUBLE;
    o->seconds = 0.5;
    return bench_parse_options(argc, argv, "bench_minplus", opts, NULL, usage, NULL);
}

/* SMs and the nominal SM clock of a GPU context; threads of a CPU one. */
static krill_status describe_device(krill_ctx *ctx, minplus_device *d)
{
    krill_status st = KRILL_OK;
    memset(d, 0, sizeof *d);
    snprintf(d->describe, sizeof d->describe, "%s", krill_ctx_describe(ctx));
    d->threads = krill_ctx_threads(ctx);
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) {
        int khz = 0;
        const cudaError_t err = cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, ctx->device_id);
        d->sm_count = ctx->cuda->sm_count;
        if (err == cudaSuccess && khz > 0) {
            d->clock_hz = 1e3 * (double)khz;
        } else {
            (void)cudaGetLastError();
            fprintf(stderr, "bench_minplus: the SM clock is unknown (%s): no per-clock figure\n",
                    err == cudaSuccess ? "the attribute is 0" : cudaGetErrorString(err));
        }
    }
#endif
    return st;
}

static int write_csv(const char *path, const minplus_result *res, int n, const minplus_device *d,
                     int gpu)
{
    FILE *f = fopen(path, "w");
    int rc = -1;
    if (!f) goto done;
    fprintf(f, "device,weight,relax_per_s,threads,sm_count,clock_hz,relax_per_sm_per_clock,"
               "relax_per_thread_per_s,ok,message\n");
    for (int i = 0; i < n; i++) {
        const minplus_result *r = &res[i];
        fprintf(f, "%s,%s,%.6e,%d,%d,%.6e,%.6e,%.6e,%d,\"%s\"\n", gpu ? "gpu" : "cpu",
                krill_apsp_weight_name(r->weight), r->rate, d->threads, d->sm_count, d->clock_hz,
                r->per_sm_clock, r->per_thread, r->ok, r->message);
    }
    rc = fclose(f) == 0 ? 0 : -1;
done:
    return rc;
}

static int write_json(const char *path, const minplus_result *res, int n,
                      const minplus_device *d, int gpu, double seconds)
{
    FILE *f = fopen(path, "w");
    int rc = -1;
    if (!f) goto done;
    fprintf(f, "{\"device\": \"%s\", \"describe\": ", gpu ? "gpu" : "cpu");
    bench_json_string(f, d->describe);
    fprintf(f, ", \"threads\": %d, \"sm_count\": %d, ", d->threads, d->sm_count);
    bench_json_number(f, "clock_hz", d->clock_hz > 0.0 ? d->clock_hz : NAN, 0);
    bench_json_number(f, "seconds", seconds, 0);
    fprintf(f, "\"results\": [\n");
    for (int i = 0; i < n; i++) {
        const minplus_result *r = &res[i];
        fprintf(f, "  {\"weight\": \"%s\", ", krill_apsp_weight_name(r->weight));
        bench_json_number(f, "relax_per_s", r->ok ? r->rate : NAN, 0);
        bench_json_number(f, "relax_per_sm_per_clock", r->per_sm_clock, 0);
        bench_json_number(f, "relax_per_thread_per_s", r->per_thread, 0);
        fprintf(f, "\"ok\": %s, \"message\": ", r->ok ? "true" : "false");
        bench_json_string(f, r->message);
        fprintf(f, "}%s\n", i + 1 < n ? "," : "");
    }
    fprintf(f, "]}\n");
    rc = fclose(f) == 0 ? 0 : -1;
done:
    return rc;
}

int main(int argc, char **argv)
{
    minplus_opts o;
    minplus_device dev;
    minplus_result res[MAX_WEIGHTS];
    krill_ctx *ctx = NULL;
    int rc = 2, failures = 0, gpu;
    memset(res, 0, sizeof res);
    if (parse_args(argc, argv, &o) != 0) goto cleanup;
    if (bench_ctx_create(o.device, o.threads, &ctx) != KRILL_OK) goto cleanup;
    gpu = krill_ctx_device(ctx) == KRILL_DEVICE_CUDA;
    if (describe_device(ctx, &dev) != KRILL_OK) {
        fprintf(stderr, "bench_minplus: %s\n", krill_last_error());
        goto cleanup;
    }
    printf("# bench_minplus on %s; krill_apsp_peak, about %.2g s per weight type\n",
           dev.describe, o.seconds);
    if (gpu)
        printf("# %d SMs, nominal SM clock %.0f MHz\n%-7s %14s %16s\n", dev.sm_count,
               dev.clock_hz * 1e-6, "weight", "Grelax/s", "per SM per clock");
    else
        printf("# %d threads\n%-7s %14s %16s\n", dev.threads, "weight", "Grelax/s",
               "Grelax/s/thread");
    for (int i = 0; i < o.n_weights; i++) {
        minplus_result *r = &res[i];
        r->weight = o.weights[i];
        r->per_sm_clock = NAN;
        r->per_thread = NAN;
        if (krill_apsp_peak(ctx, r->weight, o.seconds, &r->rate) != KRILL_OK) {
            snprintf(r->message, sizeof r->message, "%s", krill_last_error());
            printf("%-7s FAILED: %s\n", krill_apsp_weight_name(r->weight), r->message);
            failures++;
            continue;
        }
        r->ok = 1;
        if (gpu && dev.sm_count > 0 && dev.clock_hz > 0.0)
            r->per_sm_clock = r->rate / ((double)dev.sm_count * dev.clock_hz);
        if (!gpu && dev.threads > 0) r->per_thread = r->rate / dev.threads;
        printf("%-7s %14.2f %16.2f\n", krill_apsp_weight_name(r->weight), r->rate * 1e-9,
               gpu ? r->per_sm_clock : r->per_thread * 1e-9);
        fflush(stdout);
    }
    if (o.csv_path && write_csv(o.csv_path, res, o.n_weights, &dev, gpu) != 0) {
        fprintf(stderr, "bench_minplus: cannot write %s\n", o.csv_path);
        failures++;
    }
    if (o.json_path && write_json(o.json_path, res, o.n_weights, &dev, gpu, o.seconds) != 0) {
        fprintf(stderr, "bench_minplus: cannot write %s\n", o.json_path);
        failures++;
    }
    rc = failures ? 1 : 0;
cleanup:
    krill_ctx_destroy(&ctx);
    return rc;
}
