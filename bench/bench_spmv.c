/* bench/bench_spmv.c - SpMV time and bandwidth of krill's formats, cuSPARSE beside them.
 *
 *   bench_spmv [--device cpu|gpu] [--threads N] [--formats csr,cusparse,...]
 *              [--warmup W] [--reps R] [--batches K] [--min-time S] [--repro]
 *              [--csv FILE] [--json FILE] [MATRIX ...]
 *
 * MATRIX is a krill_gen SPEC (poisson3d:160, band101, ...) or a Matrix Market file (a name
 * with '/' or ending in .mtx / .mtx.gz). With none: the six matrices of the SpMV paper,
 * poisson3d:160 and elasticity3d:160,64,64 (2,028,000 rows).
 *
 * For each matrix and format, y = A*x (alpha = 1, beta = 0) is run W times to warm up, then
 * timed in K batches of equal size, at least R SpMVs and at least S seconds in all; the
 * figure is the median over batches of the batch time / batch size. A GPU batch is timed
 * with CUDA events on the context's stream; a CPU batch with the host clock.
 *
 * --repro: each format is timed a second time, the same way on the same copies, with the
 * context in reproducible exact mode (krill_ctx_set_repro(ctx, KRILL_REPRO_OZAKI, 0): every
 * row the correctly rounded exact sum, the format's spmv_repro), and reported beside the
 * plain time as repro_us and x_plain = repro time / plain time. The reproducible result is
 * checked like the plain one (against the same bound, which a correctly rounded row meets).
 *
 * Caches: when one matrix with its x and y is smaller than FLUSH_BYTES, the program builds
 * several copies (matrix, x and y each) and rotates through them, so that every SpMV reads
 * its data from memory, not from the cache the previous SpMV left behind.
 *
 * Traffic (the GB/s column): bytes of matrix data stored (krill_format_stats.bytes) + x read
 * once (8 n_cols: a lower bound; gathers may read parts of x more than once) + y written
 * (8 n_rows); beta = 0, so y is not read. GFLOP/s counts 2 nnz.
 *
 * Check: after timing, y is filled with NaN, one more SpMV runs, and every row is compared
 * with krill_csr_spmv_ref: |y_i - yref_i| <= 2 (K + 2) eps sum_j |a_ij x_j| (K = longest
 * row), the bound of two summation orders of the same K products. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_common.h"
#include "core/core_impl.h"
#include "krill/mat.h"

/* Working sets below this are replicated and rotated: 256 MiB is over twice the largest
 * last-level cache we time on (H100 L2 50 MB, H200 L2 60 MB, server CPU L3 <= 128 MB). */
#define FLUSH_BYTES (256.0 * 1024 * 1024)
#define MAX_COPIES 64
#define MAX_FORMATS 24

typedef struct spmv_opts {
    bench_run_opts run;      /* --device, --threads, --csv, --json */
    char formats[256];       /* comma-separated format names */
    int warmup, min_reps, batches;
    double min_time;
    int repro;               /* --repro: also time every format in reproducible exact mode */
} spmv_opts;

typedef struct spmv_result {
    char matrix[96];
    char format[32];
    char variant[32];
    int64_t rows, cols, nnz;
    int copies, reps, batches;
    double t_med, t_min, t_max;   /* seconds per SpMV (median, min, max over batches) */
    double bytes;                 /* bytes moved per SpMV, as counted above */
    double ratio;                 /* t_med / cuSPARSE's t_med on the same matrix, or NAN */
    double t_repro;               /* --repro: median seconds per reproducible SpMV, or NAN */
    double repro_ratio;           /* t_repro / t_med, or NAN */
    double repro_err;             /* the check of the reproducible result, or NAN */
    double err;                   /* max_i |y_i - yref_i| / sum_j |a_ij x_j| */
    double err_bound;             /* 2 (K + 2) eps */
    int ok;                       /* 1 when built, timed and checked within the bound */
    char message[200];            /* why not, when ok == 0 */
} spmv_result;

/* The host side of one matrix: the CSR, x, the reference y and |A||x|. */
typedef struct host_problem {
    krill_csr *a;
    double *x, *yref, *yabs, *y;
    int64_t max_row;
} host_problem;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_spmv [--device cpu|gpu] [--threads N] [--formats LIST]\n"
            "                  [--warmup W] [--reps R] [--batches K] [--min-time S] [--repro]\n"
            "                  [--csv FILE] [--json FILE] [MATRIX ...]\n"
            "MATRIX: a krill_gen SPEC or a .mtx file; default: band1 band3 band101 rand1\n"
            "rand100 band1x poisson3d:160 elasticity3d:160,64,64\n"
            "LIST: comma-separated formats (default csr on cpu, csr,cusparse on gpu)\n"
            "--repro: also time each format in reproducible exact mode (x_plain: the ratio)\n");
}

static void host_problem_free(host_problem *p)
{
    krill_csr_destroy(&p->a);
    krill_free(p->x);
    krill_free(p->yref);
    krill_free(p->yabs);
    krill_free(p->y);
    memset(p, 0, sizeof *p);
}

/* x_i = 1 + (i mod 17)/16: varied, positive, never zero (zeros can hide wrong indexing). */
static krill_status host_problem_init(host_problem *p)
{
    krill_status st = KRILL_OK;
    const krill_csr *a = p->a;
    KRILL_ALLOC(p->x, a->n_cols);
    KRILL_ALLOC(p->yref, a->n_rows);
    KRILL_ALLOC(p->yabs, a->n_rows);
    KRILL_ALLOC(p->y, a->n_rows);
    for (int64_t j = 0; j < a->n_cols; j++) p->x[j] = 1.0 + (double)(j % 17) / 16.0;
    krill_csr_spmv_ref(a, 1.0, p->x, 0.0, p->yref);
    p->max_row = 0;
    for (int64_t i = 0; i < a->n_rows; i++) {
        double s = 0.0;
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++)
            s += fabs(a->val[k]) * fabs(p->x[a->col[k]]);
        p->yabs[i] = s;
        if (a->row_ptr[i + 1] - a->row_ptr[i] > p->max_row)
            p->max_row = a->row_ptr[i + 1] - a->row_ptr[i];
    }
cleanup:
    return st;
}

/* Normalized error of p->y against the reference (INFINITY for a non-finite entry). */
static double check_error(const host_problem *p)
{
    double worst = 0.0;
    for (int64_t i = 0; i < p->a->n_rows; i++) {
        double d = fabs(p->y[i] - p->yref[i]);
        double e;
        if (!isfinite(p->y[i])) return INFINITY;
        if (p->yabs[i] > 0.0)
            e = d / p->yabs[i];
        else
            e = d > 0.0 ? INFINITY : 0.0;
        if (e > worst) worst = e;
    }
    return worst;
}

/* Matrices, x and y copies of one format on the context, rotated through while timing. */
typedef struct spmv_set {
    int copies;
    krill_mat *mat[MAX_COPIES];
    krill_vec *x[MAX_COPIES], *y[MAX_COPIES];
} spmv_set;

static void spmv_set_free(spmv_set *s)
{
    for (int c = 0; c < MAX_COPIES; c++) {
        krill_mat_destroy(&s->mat[c]);
        krill_vec_destroy(&s->x[c]);
        krill_vec_destroy(&s->y[c]);
    }
    s->copies = 0;
}

static krill_status spmv_set_build(krill_ctx *ctx, const host_problem *p, const char *format,
                                   spmv_set *s, krill_format_stats *stats)
{
    krill_status st = KRILL_OK;
    double working;
    KRILL_TRY(krill_mat_create(ctx, p->a, format, &s->mat[0]));
    krill_mat_stats(s->mat[0], stats);
    format = krill_mat_format(s->mat[0]);      /* for "auto": the copies skip the choice */
    working = (double)stats->bytes + 8.0 * (double)(p->a->n_cols + p->a->n_rows);
    s->copies = working >= FLUSH_BYTES ? 1 : (int)ceil(FLUSH_BYTES / working);
    if (s->copies > MAX_COPIES) s->copies = MAX_COPIES;
    for (int c = 0; c < s->copies; c++) {
        if (c > 0) KRILL_TRY(krill_mat_create(ctx, p->a, format, &s->mat[c]));
        KRILL_TRY(krill_vec_create(ctx, p->a->n_cols, &s->x[c]));
        KRILL_TRY(krill_vec_create(ctx, p->a->n_rows, &s->y[c]));
        KRILL_TRY(krill_vec_upload(s->x[c], p->x));
    }
cleanup:
    return st;
}

/* Run `count` SpMVs starting at rotation index *next and return their time. */
static krill_status run_batch(const spmv_set *s, bench_clock *clock, int count, int *next,
                              double *seconds)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(bench_clock_start(clock));
    for (int r = 0; r < count; r++) {
        int c = *next;
        KRILL_TRY(krill_mat_spmv(s->mat[c], 1.0, s->x[c], 0.0, s->y[c]));
        *next = (c + 1) % s->copies;
    }
    KRILL_TRY(bench_clock_stop(clock, seconds));
cleanup:
    return st;
}

static krill_status time_spmv(const spmv_set *s, bench_clock *clock, const spmv_opts *o,
                              spmv_result *r)
{
    krill_status st = KRILL_OK;
    double warm_time = 0.0, *per = NULL;
    int next = 0, per_batch, total;
    int warm = o->warmup > s->copies ? o->warmup : s->copies;   /* touch every copy */
    KRILL_TRY(run_batch(s, clock, warm, &next, &warm_time));
    total = o->min_reps;
    if (warm_time > 0.0 && o->min_time * warm / warm_time > total)
        total = (int)ceil(o->min_time * warm / warm_time);
    per_batch = (total + o->batches - 1) / o->batches;
    KRILL_ALLOC(per, o->batches);
    for (int k = 0; k < o->batches; k++) {
        double t = 0.0;
        KRILL_TRY(run_batch(s, clock, per_batch, &next, &t));
        per[k] = t / per_batch;
    }
    r->t_med = bench_median(per, o->batches);
    r->t_min = bench_min(per, o->batches);
    r->t_max = bench_max(per, o->batches);
    r->reps = per_batch * o->batches;
    r->batches = o->batches;
cleanup:
    krill_free(per);
    return st;
}

/* Poison y, run one SpMV on copy 0, compare with the reference: *err. */
static krill_status check_spmv(const spmv_set *s, host_problem *p, double *err)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(krill_vec_fill(s->y[0], NAN));
    KRILL_TRY(krill_mat_spmv(s->mat[0], 1.0, s->x[0], 0.0, s->y[0]));
    KRILL_TRY(krill_vec_download(s->y[0], p->y));
    *err = check_error(p);
cleanup:
    return st;
}

/* --repro: time and check the set again with the context in reproducible exact mode (its
 * mode is back to plain on return, also on failure). */
static krill_status time_spmv_repro(krill_ctx *ctx, const spmv_set *s, host_problem *p,
                                    bench_clock *clock, const spmv_opts *o, spmv_result *r)
{
    krill_status st = KRILL_OK;
    spmv_result t;
    memset(&t, 0, sizeof t);
    KRILL_TRY(krill_ctx_set_repro(ctx, KRILL_REPRO_OZAKI, 0));
    KRILL_TRY(time_spmv(s, clock, o, &t));
    KRILL_TRY(check_spmv(s, p, &r->repro_err));
    r->t_repro = t.t_med;
    r->repro_ratio = t.t_med / r->t_med;
cleanup:
    (void)krill_ctx_set_repro(ctx, KRILL_REPRO_OFF, 0);
    return st;
}

static void bench_format(krill_ctx *ctx, host_problem *p, const char *format, bench_clock *clock,
                         const spmv_opts *o, spmv_result *r)
{
    spmv_set set;
    krill_format_stats stats;
    krill_status st;
    memset(&set, 0, sizeof set);
    memset(&stats, 0, sizeof stats);
    snprintf(r->format, sizeof r->format, "%s", format);
    r->rows = p->a->n_rows;
    r->cols = p->a->n_cols;
    r->nnz = p->a->nnz;
    r->ratio = NAN;
    r->err = NAN;
    r->t_repro = r->repro_ratio = r->repro_err = NAN;
    r->err_bound = 2.0 * (double)(p->max_row + 2) * DBL_EPSILON;
    st = spmv_set_build(ctx, p, format, &set, &stats);
    if (st == KRILL_OK) st = time_spmv(&set, clock, o, r);
    if (st == KRILL_OK) st = check_spmv(&set, p, &r->err);
    if (st == KRILL_OK && o->repro) st = time_spmv_repro(ctx, &set, p, clock, o, r);
    if (st != KRILL_OK) {
        snprintf(r->message, sizeof r->message, "%s", krill_last_error());
    } else if (!(r->err <= r->err_bound)) {
        snprintf(r->message, sizeof r->message, "wrong result: error %.3g > bound %.3g",
                 r->err, r->err_bound);
    } else if (o->repro && !(r->repro_err <= r->err_bound)) {
        snprintf(r->message, sizeof r->message,
                 "wrong reproducible result: error %.3g > bound %.3g", r->repro_err,
                 r->err_bound);
    } else {
        r->ok = 1;
    }
    if (set.mat[0] && krill_mat_choice(set.mat[0]))   /* auto: the variant is the choice */
        snprintf(r->variant, sizeof r->variant, "%s", krill_mat_format(set.mat[0]));
    else
        snprintf(r->variant, sizeof r->variant, "%s", stats.variant[0] ? stats.variant : "-");
    r->copies = set.copies;
    r->bytes = (double)stats.bytes + 8.0 * (double)(r->cols + r->rows);
    spmv_set_free(&set);
}

/* ---- output -------------------------------------------------------------------------- */

static double gbs(const spmv_result *r) { return r->bytes / r->t_med * 1e-9; }
static double gflops(const spmv_result *r) { return 2.0 * (double)r->nnz / r->t_med * 1e-9; }

static void print_header(int repro)
{
    printf("%-24s %9s %10s %-12s %-16s %4s %6s %11s %7s %8s %8s %8s ", "matrix", "rows",
           "nnz", "format", "variant", "cp", "reps", "median_us", "spread", "GB/s", "GFLOP/s",
           "vs_cusp");
    if (repro) printf("%11s %8s ", "repro_us", "x_plain");
    printf("%s\n", "check");
}

static void print_row(const spmv_result *r, int repro)
{
    if (!r->ok && !(r->t_med > 0.0)) {
        printf("%-24s %9lld %10lld %-12s FAILED: %s\n", r->matrix, (long long)r->rows,
               (long long)r->nnz, r->format, r->message);
        return;
    }
    printf("%-24s %9lld %10lld %-12s %-16s %4d %6d %11.2f %6.1f%% %8.1f %8.2f ", r->matrix,
           (long long)r->rows, (long long)r->nnz, r->format, r->variant, r->copies, r->reps,
           r->t_med * 1e6, 100.0 * (r->t_max - r->t_min) / r->t_med, gbs(r), gflops(r));
    if (isnan(r->ratio))
        printf("%8s ", "-");
    else
        printf("%8.3f ", r->ratio);
    if (repro && isnan(r->t_repro))
        printf("%11s %8s ", "-", "-");
    else if (repro)
        printf("%11.2f %8.2f ", r->t_repro * 1e6, r->repro_ratio);
    printf("%s\n", r->ok ? "ok" : r->message);
}

static int write_csv(const char *path, const spmv_result *res, int n, const char *device,
                     int threads)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "matrix,rows,cols,nnz,format,variant,device,threads,copies,reps,batches,"
               "t_median_s,t_min_s,t_max_s,bytes,gb_per_s,gflop_per_s,time_vs_cusparse,"
               "check_error,check_bound,ok,message,t_repro_median_s,repro_vs_plain,"
               "repro_check_error\n");
    for (int i = 0; i < n; i++) {
        const spmv_result *r = &res[i];
        fprintf(f, "\"%s\",%lld,%lld,%lld,%s,%s,%s,%d,%d,%d,%d,%.6e,%.6e,%.6e,%.0f,%.3f,%.3f,",
                r->matrix, (long long)r->rows, (long long)r->cols, (long long)r->nnz, r->format,
                r->variant, device, threads, r->copies, r->reps, r->batches, r->t_med, r->t_min,
                r->t_max, r->bytes, r->ok ? gbs(r) : 0.0, r->ok ? gflops(r) : 0.0);
        if (isnan(r->ratio))
            fprintf(f, ",");
        else
            fprintf(f, "%.4f,", r->ratio);
        fprintf(f, "%.3e,%.3e,%d,\"%s\",", r->err, r->err_bound, r->ok, r->message);
        if (isnan(r->t_repro))
            fprintf(f, ",,\n");
        else
            fprintf(f, "%.6e,%.4f,%.3e\n", r->t_repro, r->repro_ratio, r->repro_err);
    }
    return fclose(f) == 0 ? 0 : -1;
}

static int write_json(const char *path, const spmv_result *res, int n, krill_ctx *ctx,
                      const char *clock_kind)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "{\"benchmark\": \"spmv\", \"device\": ");
    bench_json_string(f, krill_ctx_describe(ctx));
    fprintf(f, ", \"threads\": %d, \"clock\": \"%s\", \"flush_bytes\": %.0f, \"results\": [\n",
            krill_ctx_threads(ctx), clock_kind, FLUSH_BYTES);
    for (int i = 0; i < n; i++) {
        const spmv_result *r = &res[i];
        fprintf(f, "  {\"matrix\": ");
        bench_json_string(f, r->matrix);
        fprintf(f, ", \"format\": \"%s\", \"variant\": \"%s\", \"rows\": %lld, \"cols\": %lld, "
                   "\"nnz\": %lld, \"copies\": %d, \"reps\": %d, \"batches\": %d, ",
                r->format, r->variant, (long long)r->rows, (long long)r->cols,
                (long long)r->nnz, r->copies, r->reps, r->batches);
        bench_json_number(f, "t_median_s", r->ok ? r->t_med : NAN, 0);
        bench_json_number(f, "t_min_s", r->ok ? r->t_min : NAN, 0);
        bench_json_number(f, "t_max_s", r->ok ? r->t_max : NAN, 0);
        bench_json_number(f, "bytes", r->bytes, 0);
        bench_json_number(f, "gb_per_s", r->ok ? gbs(r) : NAN, 0);
        bench_json_number(f, "gflop_per_s", r->ok ? gflops(r) : NAN, 0);
        bench_json_number(f, "time_vs_cusparse", r->ratio, 0);
        bench_json_number(f, "check_error", r->err, 0);
        bench_json_number(f, "check_bound", r->err_bound, 0);
        bench_json_number(f, "t_repro_median_s", r->t_repro, 0);
        bench_json_number(f, "repro_vs_plain", r->repro_ratio, 0);
        bench_json_number(f, "repro_check_error", r->repro_err, 0);
        fprintf(f, "\"ok\": %s, \"message\": ", r->ok ? "true" : "false");
        bench_json_string(f, r->message);
        fprintf(f, "}%s\n", i + 1 < n ? "," : "");
    }
    fprintf(f, "]}\n");
    return fclose(f) == 0 ? 0 : -1;
}

/* ---- main ---------------------------------------------------------------------------- */

/* The options into o, the positional arguments to argv[1..] (bench_parse_options). */
static int parse_args(int argc, char **argv, spmv_opts *o, int *n_positional)
{
    const char *formats = "";
    const bench_opt opts[] = {
        {.name = "--formats", .kind = BENCH_OPT_STRING, .field = &formats},
        {.name = "--warmup", .kind = BENCH_OPT_INT, .field = &o->warmup},
        {.name = "--reps", .kind = BENCH_OPT_INT, .field = &o->min_reps},
        {.name = "--batches", .kind = BENCH_OPT_INT, .field = &o->batches},
        {.name = "--min-time", .kind = BENCH_OPT_DOUBLE, .field = &o->min_time},
        {.name = "--repro", .kind = BENCH_OPT_FLAG, .field = &o->repro},
        {.name = NULL},
    };
    int rc;
    memset(o, 0, sizeof *o);
    o->warmup = 10;
    o->min_reps = 50;
    o->batches = 10;
    o->min_time = 0.2;
    rc = bench_parse_options(argc, argv, "bench_spmv", opts, &o->run, usage, n_positional);
    if (rc == 0 && (o->run.threads < 0 || o->warmup < 0 || o->min_reps < 1 || o->batches < 1 ||
                    !(o->min_time >= 0.0))) {
        fprintf(stderr, "bench_spmv: --threads, --warmup >= 0; --reps, --batches >= 1; "
                        "--min-time >= 0\n");
        rc = -1;
    }
    if (rc == 0)
        snprintf(o->formats, sizeof o->formats, "%s",
                 formats[0] ? formats : o->run.device == KRILL_DEVICE_CUDA ? "csr,cusparse" : "csr");
    return rc;
}

/* Split the comma list in place; returns the count. */
static int split_formats(char *list, char **names)
{
    int n = 0;
    for (char *tok = strtok(list, ","); tok && n < MAX_FORMATS; tok = strtok(NULL, ","))
        names[n++] = tok;
    return n;
}

static const char *const default_matrices[] = {
    "band1", "band3", "band101", "rand1", "rand100", "band1x", "poisson3d:160",
    "elasticity3d:160,64,64", NULL};

int main(int argc, char **argv)
{
    spmv_opts o;
    krill_ctx *ctx = NULL;
    bench_clock *clock = NULL;
    spmv_result *res = NULL;
    char *formats[MAX_FORMATS];
    const char *const *matrices;
    int n_formats, n_matrices = 0, n_res = 0, failures = 0, rc = 2, header = 0;

    if (parse_args(argc, argv, &o, &n_matrices) != 0) goto cleanup;
    n_matrices = bench_names(argv, n_matrices, default_matrices, &matrices);
    n_formats = split_formats(o.formats, formats);
    if (bench_ctx_create(o.run.device, o.run.threads, &ctx) != KRILL_OK) goto cleanup;
    if (bench_clock_create(ctx, &clock) != KRILL_OK ||
        krill_alloc((void **)&res, sizeof *res * (size_t)(n_matrices * n_formats + 1),
                    "results") != KRILL_OK) {
        fprintf(stderr, "bench_spmv: %s\n", krill_last_error());
        goto cleanup;
    }
    memset(res, 0, sizeof *res * (size_t)(n_matrices * n_formats + 1));
    printf("# bench_spmv on %s; clock: %s; batches %d, >= %d SpMVs and >= %.2f s each\n",
           krill_ctx_describe(ctx), bench_clock_kind(clock), o.batches, o.min_reps, o.min_time);

    for (int m = 0; m < n_matrices; m++) {
        host_problem p;
        double load_s = 0.0;
        int first_res = n_res, cusp = -1;
        memset(&p, 0, sizeof p);
        if (bench_load_matrix(matrices[m], &p.a, &load_s) != KRILL_OK ||
            host_problem_init(&p) != KRILL_OK) {
            printf("%-24s FAILED to load: %s\n", matrices[m], krill_last_error());
            failures++;
            host_problem_free(&p);
            continue;
        }
        printf("# %s: %d x %d, nnz %lld, longest row %lld, loaded in %.1f s\n", matrices[m],
               p.a->n_rows, p.a->n_cols, (long long)p.a->nnz, (long long)p.max_row, load_s);
        if (!header) print_header(o.repro);
        header = 1;
        for (int f = 0; f < n_formats; f++) {
            spmv_result *r = &res[n_res++];
            snprintf(r->matrix, sizeof r->matrix, "%s", matrices[m]);
            bench_format(ctx, &p, formats[f], clock, &o, r);
            if (!r->ok) failures++;
            if (r->ok && strcmp(formats[f], "cusparse") == 0) cusp = n_res - 1;
        }
        for (int k = first_res; k < n_res; k++) {
            if (cusp >= 0 && res[k].ok) res[k].ratio = res[k].t_med / res[cusp].t_med;
            print_row(&res[k], o.repro);
        }
        fflush(stdout);
        host_problem_free(&p);
    }
    if (o.run.csv_path && write_csv(o.run.csv_path, res, n_res,
                                o.run.device == KRILL_DEVICE_CUDA ? "gpu" : "cpu",
                                krill_ctx_threads(ctx)) != 0) {
        fprintf(stderr, "bench_spmv: cannot write %s\n", o.run.csv_path);
        failures++;
    }
    if (o.run.json_path && write_json(o.run.json_path, res, n_res, ctx, bench_clock_kind(clock)) != 0) {
        fprintf(stderr, "bench_spmv: cannot write %s\n", o.run.json_path);
        failures++;
    }
    printf("# vs_cusp = time / cuSPARSE time on the same matrix (below 1: faster than "
           "cuSPARSE); spread = (max - min) / median over batches\n");
    if (o.repro)
        printf("# repro_us: median time of the reproducible exact-mode SpMV (every row "
               "correctly rounded); x_plain = repro_us / median_us\n");
    rc = failures ? 1 : 0;
cleanup:
    krill_free(res);
    bench_clock_destroy(&clock);
    krill_ctx_destroy(&ctx);
    return rc;
}
