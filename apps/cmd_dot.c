/* apps/cmd_dot.c - `krill dot`: one dot product of the Ozaki-scheme accuracy experiment,
 * in plain mode, in the reproducible mode asked for and in exact mode, side by side.
 *
 * The inputs are krill_gen_dot_vectors(n, phi, seed): x_i, y_i = (rand - 0.5) *
 * exp(phi * randn), the same bits on every machine. Exact mode (KRILL_REPRO_OZAKI with
 * slices = 0) returns the correctly rounded value of the exact dot product, so it is the
 * reference of the relative errors printed. Each mode is run once untimed, then `reps`
 * times timed with the host clock around krill_vec_dot (on a GPU that includes the wait for
 * the result and its copy to the host); the time printed is the median, and the repeated
 * results must have identical bits (a reproducible mode that is not run-to-run exact would
 * be a bug: the command then fails). */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "cli_impl.h"

static const char *const dot_device_names[] = { "auto", "cpu", "gpu", NULL };
static const krill_device dot_device_types[] = { KRILL_DEVICE_AUTO, KRILL_DEVICE_CPU,
                                                 KRILL_DEVICE_CUDA };

enum { DOT_MAX_SLICES = 64, DOT_DEFAULT_REPS = 5 };

static void dot_usage(FILE *out)
{
    fprintf(out,
            "usage: krill dot --n N --phi P [--slices S] [--fast] [options]\n"
            "\n"
            "One dot product x'y of the Ozaki-scheme accuracy experiment: x and y have the\n"
            "entries (rand - 0.5) * exp(P * randn) (rand uniform on (0,1), randn standard\n"
            "normal; the same vectors on every machine for the same N, P and seed). The dot\n"
            "is computed in plain mode (double reductions), in the reproducible mode asked\n"
            "for, and in exact mode (correctly rounded); each value is printed with its bits,\n"
            "its relative error against exact mode, and its time.\n"
            "\n"
            "  --n N               vector length, >= 1 (required)\n"
            "  --phi P             exponent spread, in [0, %g] (required)\n"
            "  --slices S          at most S slices per operand (1..%d); 0 or omitted: exact\n"
            "  --fast              the fast mode with S slices (needs --slices S >= 1)\n"
            "  --seed K            the vectors' seed (default 1)\n"
            "  --reps R            timed runs per mode, the median is printed (default %d)\n"
            "  --device auto|cpu|gpu   default auto: the GPU when one is present\n"
            "  --threads T         OpenMP threads (default: OpenMP's)\n"
            "\n"
            "exit codes: 0 done, 2 bad usage, 3 krill or the device failed\n",
            (double)KRILL_GEN_PHI_MAX, DOT_MAX_SLICES, DOT_DEFAULT_REPS);
}

typedef struct dot_args {
    int n;                       /* 0 until given */
    double phi;                  /* NaN until given */
    int slices;
    int slices_given;
    int fast;
    int seed;
    int reps;
    int device;                  /* index in dot_device_names */
    int threads;                 /* 0 = OpenMP's default */
} dot_args;

/* One row of the table: a mode, its value and its timing. */
typedef struct dot_row {
    char label[32];
    krill_repro_mode mode;
    int slices;
    double value;
    double seconds;              /* median of the timed runs */
} dot_row;

/* Print "krill dot: " and the message on stderr; return `exit_code`. */
static int dot_error(int exit_code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int dot_error(int exit_code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("krill dot: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return exit_code;
}

static int dot_parse(int argc, char **argv, dot_args *args, int *want_help)
{
    int n_positional = 0;
    int rc = CLI_EXIT_OK;
    const cli_option options[] = {
        { .name = "--help", .kind = CLI_FLAG, .flag = want_help },
        { .name = "-h", .kind = CLI_FLAG, .flag = want_help },
        { .name = "--n", .kind = CLI_INT, .integer = &args->n, .min = 1, .max = INT_MAX },
        { .name = "--phi", .kind = CLI_DOUBLE, .real = &args->phi, .min = 0,
          .max = KRILL_GEN_PHI_MAX },
        { .name = "--slices", .kind = CLI_INT, .integer = &args->slices, .min = 0,
          .max = DOT_MAX_SLICES },
        { .name = "--fast", .kind = CLI_FLAG, .flag = &args->fast },
        { .name = "--seed", .kind = CLI_INT, .integer = &args->seed, .min = 0, .max = INT_MAX },
        { .name = "--reps", .kind = CLI_INT, .integer = &args->reps, .min = 1, .max = 1000000 },
        { .name = "--device", .kind = CLI_CHOICE, .integer = &args->device,
          .choices = dot_device_names },
        { .name = "--threads", .kind = CLI_INT, .integer = &args->threads, .min = 1,
          .max = KRILL_MAX_THREADS },
    };
    args->slices = -1;
    rc = cli_parse(argc, argv, options, sizeof options / sizeof options[0], NULL, 0,
                   &n_positional);
    args->slices_given = args->slices >= 0;
    if (!args->slices_given) args->slices = 0;
    if (rc != CLI_EXIT_OK || *want_help) {
        /* done */
    } else if (args->n == 0) {
        rc = dot_error(CLI_EXIT_USAGE, "missing --n N (the vector length)");
    } else if (isnan(args->phi)) {
        rc = dot_error(CLI_EXIT_USAGE, "missing --phi P (the exponent spread)");
    } else if (args->fast && args->slices == 0) {
        rc = dot_error(CLI_EXIT_USAGE, "--fast needs --slices S >= 1 (got %s)",
                       args->slices_given ? "--slices 0" : "no --slices");
    }
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Run one mode: one untimed dot, then `reps` timed ones; their bits must not change. */
static int dot_measure(krill_ctx *ctx, const krill_vec *x, const krill_vec *y, int reps,
                       double *times, dot_row *row)
{
    int rc = CLI_EXIT_OK;
    double value = 0.0;
    CLI_TRY(krill_ctx_set_repro(ctx, row->mode, row->slices));
    CLI_TRY(krill_vec_dot(x, y, &row->value));
    for (int r = 0; r < reps; r++) {
        const double t0 = cli_seconds();
        CLI_TRY(krill_vec_dot(x, y, &value));
        times[r] = cli_seconds() - t0;
        if (memcmp(&value, &row->value, sizeof value) != 0) {
            rc = dot_error(CLI_EXIT_FAILURE, "%s gave %a, then %a on the same input",
                           row->label, row->value, value);
            goto cleanup;
        }
    }
    qsort(times, (size_t)reps, sizeof *times, cmp_double);
    row->seconds = reps % 2 ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]);
cleanup:
    return rc;
}

static uint64_t double_bits(double v)
{
    uint64_t bits = 0;
    memcpy(&bits, &v, sizeof bits);
    return bits;
}

static double max_abs(const double *v, int64_t n)
{
    double m = 0.0;
    for (int64_t i = 0; i < n; i++)
        m = fmax(m, fabs(v[i]));
    return m;
}

static void dot_print(const dot_args *args, krill_ctx *ctx, const double *hx,
                      const double *hy, const dot_row *rows, int n_rows)
{
    const double exact = rows[n_rows - 1].value;   /* the last row is exact mode */
    printf("krill dot: n = %d, phi = %g, seed = %d\n", args->n, args->phi, args->seed);
    printf("%-10s %s\n", "device", krill_ctx_describe(ctx));
    printf("%-10s (rand - 0.5) * exp(phi * randn); max |x_i| = %.3g, max |y_i| = %.3g\n",
           "inputs", max_abs(hx, args->n), max_abs(hy, args->n));
    printf("%-10s median of %d runs after one warm-up, host clock around krill_vec_dot\n",
           "time", args->reps);
    printf("\n%-16s %-24s  %-18s  %-9s  %s\n", "mode", "value", "bits", "rel_error", "time_s");
    for (int k = 0; k < n_rows; k++) {
        /* |value - exact| / |exact|; an exact zero is matched only by a zero */
        const double err = rows[k].value == exact ? 0.0
                           : exact != 0.0 ? fabs(rows[k].value - exact) / fabs(exact)
                                          : INFINITY;
        printf("%-16s %-24.17g  0x%016" PRIx64 "  %-9.3g  %.3g\n", rows[k].label,
               rows[k].value, double_bits(rows[k].value), err, rows[k].seconds);
    }
}

static int dot_run(int argc, char **argv)
{
    int want_help = 0;
    dot_args args = { .phi = NAN, .seed = 1, .reps = DOT_DEFAULT_REPS };
    krill_ctx_opts ctx_opts = KRILL_CTX_OPTS_INIT;
    krill_ctx *ctx = NULL;
    krill_vec *x = NULL, *y = NULL;
    double *hx = NULL, *hy = NULL, *times = NULL;
    dot_row rows[3];
    int n_rows = 0;
    int rc = dot_parse(argc, argv, &args, &want_help);
    if (rc != CLI_EXIT_OK) goto cleanup;
    if (want_help) {
        dot_usage(stdout);
        goto cleanup;
    }
    hx = malloc((size_t)args.n * sizeof *hx);
    hy = malloc((size_t)args.n * sizeof *hy);
    times = malloc((size_t)args.reps * sizeof *times);
    if (!hx || !hy || !times) {
        rc = dot_error(CLI_EXIT_FAILURE, "out of memory for two vectors of %d doubles",
                       args.n);
        goto cleanup;
    }
    CLI_TRY(krill_gen_dot_vectors(args.n, args.phi, (uint64_t)args.seed, hx, hy));
    ctx_opts.device = dot_device_types[args.device];
    ctx_opts.threads = args.threads;
    CLI_TRY(krill_ctx_create(&ctx_opts, &ctx));
    CLI_TRY(krill_vec_create(ctx, args.n, &x));
    CLI_TRY(krill_vec_create(ctx, args.n, &y));
    CLI_TRY(krill_vec_upload(x, hx));
    CLI_TRY(krill_vec_upload(y, hy));

    /* plain, the mode asked for (unless it is exact mode), exact: exact stays last */
    rows[n_rows++] = (dot_row){ .label = "plain", .mode = KRILL_REPRO_OFF, .slices = 0 };
    if (args.slices > 0) {
        dot_row asked = { .mode = args.fast ? KRILL_REPRO_OZAKI_FAST : KRILL_REPRO_OZAKI,
                          .slices = args.slices };
        snprintf(asked.label, sizeof asked.label, "%s S=%d", args.fast ? "ozaki-fast" : "ozaki",
                 args.slices);
        rows[n_rows++] = asked;
    }
    rows[n_rows++] = (dot_row){ .label = "exact", .mode = KRILL_REPRO_OZAKI, .slices = 0 };
    for (int k = 0; k < n_rows && rc == CLI_EXIT_OK; k++)
        rc = dot_measure(ctx, x, y, args.reps, times, &rows[k]);
    if (rc == CLI_EXIT_OK) dot_print(&args, ctx, hx, hy, rows, n_rows);
cleanup:
    krill_vec_destroy(&x);
    krill_vec_destroy(&y);
    krill_ctx_destroy(&ctx);
    free(hx);
    free(hy);
    free(times);
    return rc;
}

const cli_command cli_dot_command = {
    .name = "dot",
    .summary = "one dot product in plain, reproducible (Ozaki) and exact mode, with errors",
    .run = dot_run,
    .usage = dot_usage,
};
