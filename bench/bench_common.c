/* bench/bench_common.c - clock, medians, repeated work, command line, lists, matrix loading
 * and the binary dump of the benchmark programs (see bench_common.h). */
#include "bench/bench_common.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_impl.h"
#include "krill/gen.h"
#include "krill/io.h"
#ifdef KRILL_HAVE_CUDA
#include "bench/bench_cuda.h"
#endif

/* ---- statistics ---------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(const double *v, int n)
{
    double *s = NULL, med = 0.0;
    if (n <= 0 || krill_alloc((void **)&s, (size_t)n * sizeof *s, "median scratch") != KRILL_OK)
        return 0.0;
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    med = (n % 2) ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    krill_free(s);
    return med;
}

double bench_min(const double *v, int n)
{
    double m = n > 0 ? v[0] : 0.0;
    for (int i = 1; i < n; i++)
        if (v[i] < m) m = v[i];
    return m;
}

double bench_max(const double *v, int n)
{
    double m = n > 0 ? v[0] : 0.0;
    for (int i = 1; i < n; i++)
        if (v[i] > m) m = v[i];
    return m;
}

/* ---- clock --------------------------------------------------------------------------- */

struct bench_clock {
    krill_ctx *ctx;
    void *ev_start, *ev_stop;    /* CUDA events (GPU context), else NULL */
    double host_start;           /* krill_wtime at start (CPU context) */
};

krill_status bench_clock_create(krill_ctx *ctx, bench_clock **clock)
{
    krill_status st = KRILL_OK;
    bench_clock *c = NULL;
    KRILL_CALLOC(c, 1);
    c->ctx = ctx;
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) KRILL_TRY(bench_cuda_events_create(&c->ev_start, &c->ev_stop));
#endif
    *clock = c;
    c = NULL;
cleanup:
    bench_clock_destroy(&c);
    return st;
}

krill_status bench_clock_start(bench_clock *c)
{
#ifdef KRILL_HAVE_CUDA
    if (c->ev_start) return bench_cuda_event_record(c->ev_start, c->ctx->cuda->stream);
#endif
    c->host_start = krill_wtime();
    return KRILL_OK;
}

krill_status bench_clock_stop(bench_clock *c, double *seconds)
{
#ifdef KRILL_HAVE_CUDA
    if (c->ev_stop) {
        krill_status st = bench_cuda_event_record(c->ev_stop, c->ctx->cuda->stream);
        if (st != KRILL_OK) return st;
        return bench_cuda_event_elapsed(c->ev_start, c->ev_stop, seconds);
    }
#endif
    *seconds = krill_wtime() - c->host_start;
    return KRILL_OK;
}

void bench_clock_destroy(bench_clock **clock)
{
    if (!clock || !*clock) return;
#ifdef KRILL_HAVE_CUDA
    bench_cuda_events_destroy((*clock)->ev_start, (*clock)->ev_stop);
#endif
    krill_free(*clock);
    *clock = NULL;
}

const char *bench_clock_kind(const bench_clock *clock)
{
    return clock->ev_start ? "cuda-events" : "host";
}

/* ---- repeated work ------------------------------------------------------------------- */

krill_status bench_repeat(bench_work_fn work, void *user, int warmup, int runs, int count,
                          double *samples, double *medians)
{
    krill_status st = KRILL_OK;
    double *all = NULL, *column = NULL, *figures = NULL;
    for (int k = 0; k < count; k++) medians[k] = 0.0;
    KRILL_REQUIRE(runs >= 1 && warmup >= 0 && count >= 1,
                  "bench_repeat: runs = %d (>= 1), warmup = %d (>= 0), count = %d (>= 1)",
                  runs, warmup, count);
    KRILL_ALLOC(all, (size_t)runs * (size_t)count);
    KRILL_ALLOC(column, runs);
    KRILL_ALLOC(figures, count);
    for (int w = 0; w < warmup; w++) KRILL_TRY(work(user, figures));
    for (int r = 0; r < runs; r++) {
        KRILL_TRY(work(user, figures));
        memcpy(all + (size_t)r * count, figures, (size_t)count * sizeof *figures);
    }
    for (int k = 0; k < count; k++) {
        for (int r = 0; r < runs; r++) column[r] = all[(size_t)r * count + k];
        medians[k] = bench_median(column, runs);
    }
    if (samples) memcpy(samples, all, (size_t)runs * (size_t)count * sizeof *all);
cleanup:
    krill_free(all);
    krill_free(column);
    krill_free(figures);
    return st;
}

/* ---- lists --------------------------------------------------------------------------- */

int bench_list_next(const char **p, char *item, size_t size)
{
    const size_t len = strcspn(*p, ",");
    int rc = -1;
    if (**p != '\0' && len > 0 && len < size) {
        memcpy(item, *p, len);
        item[len] = '\0';
        *p += len + ((*p)[len] == ',');
        rc = 0;
    }
    return rc;
}

int bench_parse_ints(const char *text, int *v, int max, int *count, int lo, int hi)
{
    const char *p = text;
    char item[32];
    int rc = 0;
    *count = 0;
    while (rc == 0 && *p) {
        char *end = NULL;
        long value;
        if (bench_list_next(&p, item, sizeof item) != 0 || *count >= max) {
            rc = -1;
            break;
        }
        errno = 0;
        value = strtol(item, &end, 10);
        if (end == item || *end != '\0' || errno == ERANGE || value < lo || value > hi)
            rc = -1;
        else
            v[(*count)++] = (int)value;
    }
    return rc == 0 && *count > 0 ? 0 : -1;
}

/* ---- inputs -------------------------------------------------------------------------- */

static int ends_with(const char *s, const char *suffix)
{
    size_t ls = strlen(s), lx = strlen(suffix);
    return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

/* A name is a file when it contains '/' or ends in .mtx or .mtx.gz; otherwise a SPEC. */
krill_status bench_load_matrix(const char *name, krill_csr **csr, double *seconds)
{
    double t0 = krill_wtime();
    krill_status st;
    if (strchr(name, '/') || ends_with(name, ".mtx") || ends_with(name, ".mtx.gz"))
        st = krill_mm_read(name, csr, NULL);
    else
        st = krill_gen(name, csr);
    *seconds = krill_wtime() - t0;
    return st;
}

int bench_parse_device(const char *text, krill_device *device)
{
    if (strcmp(text, "cpu") == 0) {
        *device = KRILL_DEVICE_CPU;
        return 0;
    }
    if (strcmp(text, "gpu") == 0 || strcmp(text, "cuda") == 0) {
        *device = KRILL_DEVICE_CUDA;
        return 0;
    }
    return -1;
}

/* ---- command line -------------------------------------------------------------------- */

/* The entry of opts named name, or NULL. */
static const bench_opt *find_opt(const bench_opt *opts, const char *name)
{
    while (opts->name && strcmp(opts->name, name) != 0) opts++;
    return opts->name ? opts : NULL;
}

/* "a, b or c": the names of a choice, for its error message. */
static void print_choices(FILE *f, const char *const *choices)
{
    for (int k = 0; choices[k]; k++)
        fprintf(f, "%s%s", k == 0 ? "" : choices[k + 1] ? ", " : " or ", choices[k]);
}

/* Set opt's field from value (NULL for a flag); 0, or -1 after printing why value is
 * refused. */
static int set_opt(const char *prog, const bench_opt *opt, const char *value)
{
    int k = 0, rc = 0;
    switch (opt->kind) {
    case BENCH_OPT_FLAG:
        *(int *)opt->field = 1;
        break;
    case BENCH_OPT_INT:
        *(int *)opt->field = atoi(value);
        break;
    case BENCH_OPT_DOUBLE:
        *(double *)opt->field = atof(value);
        break;
    case BENCH_OPT_STRING:
        *(const char **)opt->field = value;
        break;
    case BENCH_OPT_DEVICE:
        if (bench_parse_device(value, opt->field) != 0) {
            fprintf(stderr, "%s: %s: '%s' is not cpu or gpu\n", prog, opt->name, value);
            rc = -1;
        }
        break;
    case BENCH_OPT_CHOICE:
        while (opt->choices[k] && strcmp(value, opt->choices[k]) != 0) k++;
        if (opt->choices[k]) {
            *(int *)opt->field = k;
        } else {
            fprintf(stderr, "%s: %s: '%s' is not ", prog, opt->name, value);
            print_choices(stderr, opt->choices);
            fputc('\n', stderr);
            rc = -1;
        }
        break;
    case BENCH_OPT_PARSE:
        rc = opt->parse(opt->name, value, opt->field);
        break;
    }
    return rc;
}

/* The entry named name of opts, or else of run's options (none when run is NULL), into
 * *opt; returns 1 when there is one, else 0. */
static int lookup(const bench_opt *opts, bench_run_opts *run, const char *name, bench_opt *opt)
{
    const bench_opt *found = find_opt(opts, name);
    if (found) {
        *opt = *found;
    } else if (run) {
        const bench_opt run_opts[] = {
            {.name = "--device", .kind = BENCH_OPT_DEVICE, .field = &run->device},
            {.name = "--threads", .kind = BENCH_OPT_INT, .field = &run->threads},
            {.name = "--csv", .kind = BENCH_OPT_STRING, .field = &run->csv_path},
            {.name = "--json", .kind = BENCH_OPT_STRING, .field = &run->json_path},
            {.name = NULL},
        };
        found = find_opt(run_opts, name);
        if (found) *opt = *found;
    }
    return found != NULL;
}

int bench_parse_options(int argc, char **argv, const char *prog, const bench_opt *opts,
                        bench_run_opts *run, void (*usage)(FILE *f), int *n_positional)
{
    int n_pos = 1, rc = 0;
    if (run) {
        memset(run, 0, sizeof *run);
        run->device = krill_cuda_device_count() > 0 ? KRILL_DEVICE_CUDA : KRILL_DEVICE_CPU;
    }
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bench_opt opt;
        const int known = lookup(opts, run, a, &opt);
        if (n_positional && (a[0] != '-' || a[1] == '\0')) {   /* positional: keep, in order */
            argv[n_pos++] = argv[i];
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        } else if (known && opt.kind == BENCH_OPT_FLAG) {
            rc = set_opt(prog, &opt, NULL);
        } else if (!v) {
            fprintf(stderr, "%s: %s needs a value\n", prog, a);
            rc = -1;
        } else if (!known) {
            fprintf(stderr, "%s: unknown option %s\n", prog, a);
            usage(stderr);
            rc = -1;
        } else {
            rc = set_opt(prog, &opt, v);
            i++;
        }
    }
    if (n_positional) *n_positional = n_pos - 1;
    return rc;
}
int bench_names(char **argv, int n, const char *const *defaults, const char *const **names)
{
    *names = n > 0 ? (const char *const *)&argv[1] : defaults;
    if (n == 0)
        while (defaults[n]) n++;
    return n;
}

void bench_safe_name(const char *name, char *out, size_t size)
{
    const char *base = strrchr(name, '/');
    size_t k = 0;
    base = base ? base + 1 : name;
    for (; *base && k + 1 < size; base++) {
        char c = *base;
        int keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   c == '-' || c == '.';
        out[k++] = keep ? c : '_';
    }
    out[k] = '\0';
}

krill_status bench_ctx_create(krill_device device, int threads, krill_ctx **ctx)
{
    krill_ctx_opts opts = KRILL_CTX_OPTS_INIT;
    krill_status st;
    opts.device = device;
    opts.threads = threads;
    st = krill_ctx_create(&opts, ctx);
    if (st != KRILL_OK)
        fprintf(stderr, "error: cannot create the %s context: %s\n",
                device == KRILL_DEVICE_CUDA ? "gpu" : "cpu", krill_last_error());
    return st;
}

/* ---- binary dump --------------------------------------------------------------------- */

static int host_is_little_endian(void)
{
    const uint16_t probe = 1;
    unsigned char first;
    memcpy(&first, &probe, 1);
    return first == 1;
}

/* Write `count` items of `size` bytes; 0 on success. */
static int write_all(FILE *f, const void *p, size_t size, size_t count)
{
    return count == 0 || fwrite(p, size, count, f) == count ? 0 : -1;
}

static krill_status dump_open(const char *path, FILE **f)
{
    *f = NULL;
    if (!host_is_little_endian())
        return krill_error(KRILL_ERR_UNSUPPORTED, "%s: the binary dump is little-endian and "
                           "this host is not", path);
    *f = fopen(path, "wb");
    if (!*f) return krill_error(KRILL_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    return KRILL_OK;
}

static krill_status dump_close(const char *path, FILE *f, int write_failed)
{
    int close_failed = fclose(f) != 0;
    if (write_failed || close_failed)
        return krill_error(KRILL_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    return KRILL_OK;
}

krill_status bench_dump_csr(const char *path, const krill_csr *a)
{
    FILE *f = NULL;
    krill_status st = dump_open(path, &f);
    int64_t header[3] = {a->n_rows, a->n_cols, a->nnz};
    int bad = 0;
    if (st != KRILL_OK) return st;
    bad |= write_all(f, "KRILLCSR", 1, 8);
    bad |= write_all(f, header, sizeof header[0], 3);
    bad |= write_all(f, a->row_ptr, sizeof a->row_ptr[0], (size_t)a->n_rows + 1);
    bad |= write_all(f, a->col, sizeof a->col[0], (size_t)a->nnz);
    bad |= write_all(f, a->val, sizeof a->val[0], (size_t)a->nnz);
    return dump_close(path, f, bad);
}

krill_status bench_dump_vec(const char *path, const double *x, int64_t n)
{
    FILE *f = NULL;
    krill_status st = dump_open(path, &f);
    int bad = 0;
    if (st != KRILL_OK) return st;
    bad |= write_all(f, "KRILLVEC", 1, 8);
    bad |= write_all(f, &n, sizeof n, 1);
    bad |= write_all(f, x, sizeof x[0], (size_t)n);
    return dump_close(path, f, bad);
}

/* ---- output -------------------------------------------------------------------------- */

void bench_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

void bench_json_number(FILE *f, const char *key, double v, int last)
{
    bench_json_string(f, key);
    if (isfinite(v))
        fprintf(f, ": %.6e%s", v, last ? "" : ", ");
    else
        fprintf(f, ": null%s", last ? "" : ", ");
}

void bench_json_next_number(FILE *f, const char *key, double v)
{
    fputs(", ", f);
    bench_json_number(f, key, v, 1);
}

krill_status bench_rhs_ones(const krill_csr *a, double **b)
{
    krill_status st = KRILL_OK;
    double *ones = NULL;
    *b = NULL;
    KRILL_ALLOC(ones, a->n_cols);
    KRILL_ALLOC(*b, a->n_rows);
    for (int64_t j = 0; j < a->n_cols; j++) ones[j] = 1.0;
    krill_csr_spmv_ref(a, 1.0, ones, 0.0, *b);
cleanup:
    krill_free(ones);
    return st;
}
