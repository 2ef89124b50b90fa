/* bench/bench_gmres_formats.c - GMRES(m) with every format: the RBP paper's Figure 8.
 *
 *   bench_gmres_formats [--device cpu|gpu] [--threads N] [--formats LIST] [--restart M]
 *                       [--maxit N] [--rtol R] [--runs K] [--csv FILE] [--json FILE]
 *                       [MATRIX ...]
 *
 * MATRIX is a krill_gen SPEC or a .mtx file; default: elasticity3d:100,40,40 (492,000 rows),
 * poisson3d:128 and convdiff3d:128. The system: b = A*1 on the host, x0 = 0, no
 * preconditioner, GMRES(m) (default m = 30) to rtol (default 1e-8) or maxit (default 1000)
 * iterations, as the paper caps its runs at 1000.
 *
 * Per format, the whole time from a host CSR to the solution, split as Figure 8 splits it:
 *   build     krill_mat_create's wall time (context synchronized) minus the transfer:
 *             the host-side work of the format (RBP compression, ELL padding, analysis)
 *   transfer  host -> device copy of the format's stored bytes (krill_format_stats.bytes),
 *             measured by copying that many bytes from pageable host memory with the
 *             benchmark clock (CUDA events); 0 on the CPU
 *   spmv      the solver's SpMV time (krill_solve_info.times.spmv, device events)
 *   other     the rest of the solve (orthogonalization, updates, restarts)
 * and the minor page faults the process took during krill_mat_create (getrusage; in the
 * CSV and JSON rows: a build whose fresh host arrays are mapped anew pays one fault a page).
 * One untimed warm-up solve of one restart cycle runs first on a separate build. With
 * --runs K (default 1) each format is built and solved K times, in K rounds over the formats
 * (round r runs every format once, so that a drift in the machine's load falls on all of
 * them alike; even rounds in the order of --formats, odd rounds in the reverse order, so that
 * what the first build after a solve pays falls on each format alike), and its row is the run
 * with the median total (K odd; the lower middle one for K even). The JSON row also lists
 * every round's total (`round_totals`, round order), so that formats can be compared round
 * by round (bench/auto_default.py). `chosen` names the format krill_mat_create built (for
 * `auto`: its choice).
 * `auto` is built as `krill solve --format auto` builds it for one solve with these options:
 * auto:spmvs=N, N = krill_auto_solve_spmvs (the SpMVs of one restart cycle, at most maxit). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench/bench_common.h"
#include "core/core_impl.h"
#include "solver/solver_impl.h"     /* krill_auto_for_solves */
#include "krill/mat.h"
#include "krill/solver.h"

#define MAX_FORMATS 16
#define MAX_RUNS 15

typedef struct gf_opts {
    bench_run_opts run;               /* --device, --threads, --csv, --json */
    int restart, maxit, runs;
    double rtol;
    char formats[512];
} gf_opts;

typedef struct gf_result {
    char matrix[96], format[32], chosen[32], variant[32];
    int64_t n, nnz;
    size_t bytes;
    int iterations;
    krill_reason reason;
    double relres;
    double create_s, transfer_s, build_s, spmv_s, other_s, solve_s, total_s;
    long build_minflt;                /* minor page faults during krill_mat_create */
    double round_totals[MAX_RUNS];    /* every round's total_s (the median row only) */
    int n_rounds;
    int ok;
    char message[200];
} gf_result;

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_gmres_formats [--device cpu|gpu] [--threads N] [--formats LIST]\n"
               "                           [--restart M] [--maxit N] [--rtol R] [--csv FILE]\n"
               "                           [--json FILE] [MATRIX ...]\n");
}

/* Seconds to copy `bytes` from pageable host memory to the context (0 on the CPU). */
static krill_status transfer_seconds(krill_ctx *ctx, bench_clock *clock, size_t bytes,
                                     double *seconds)
{
    krill_status st = KRILL_OK;
    char *host = NULL;
    void *dev = NULL;
    *seconds = 0.0;
    if (krill_ctx_device(ctx) != KRILL_DEVICE_CUDA || bytes == 0) goto cleanup;
    KRILL_ALLOC(host, bytes);
    memset(host, 1, bytes);                    /* touch the pages, as a built format has */
    KRILL_TRY(krill_mem_alloc(ctx, &dev, bytes, "transfer buffer"));
    KRILL_TRY(bench_clock_start(clock));
    KRILL_TRY(krill_mem_upload(ctx, dev, host, bytes));
    KRILL_TRY(bench_clock_stop(clock, seconds));
cleanup:
    krill_mem_free(ctx, dev);
    krill_free(host);
    return st;
}

/* minor page faults of this process so far */
static long minor_faults(void)
{
    struct rusage u;
    return getrusage(RUSAGE_SELF, &u) == 0 ? u.ru_minflt : 0;
}

static krill_status solve_once(krill_ctx *ctx, const krill_csr *csr, const double *bh,
                               const char *format, const krill_solver_opts *so,
                               bench_clock *clock, gf_result *r)
{
    krill_status st = KRILL_OK;
    krill_mat *a = NULL;
    krill_vec *b = NULL, *x = NULL;
    krill_solve_info info;
    krill_format_stats stats;
    char auto_format[48];
    double t0;
    long faults;
    memset(&info, 0, sizeof info);
    /* auto: what `krill solve --format auto` builds for this one solve */
    format = krill_auto_for_solves(format, so, 1, auto_format, sizeof auto_format);
    KRILL_TRY(krill_ctx_sync(ctx));
    faults = minor_faults();
    t0 = krill_wtime();
    KRILL_TRY(krill_mat_create(ctx, csr, format, &a));
    KRILL_TRY(krill_ctx_sync(ctx));
    r->create_s = krill_wtime() - t0;
    r->build_minflt = minor_faults() - faults;
    krill_mat_stats(a, &stats);
    r->bytes = stats.bytes;
    snprintf(r->variant, sizeof r->variant, "%s", stats.variant);
    snprintf(r->chosen, sizeof r->chosen, "%s", krill_mat_format(a));
    KRILL_TRY(transfer_seconds(ctx, clock, stats.bytes, &r->transfer_s));
    r->build_s = r->create_s > r->transfer_s ? r->create_s - r->transfer_s : 0.0;
    KRILL_TRY(krill_vec_create(ctx, csr->n_rows, &b));
    KRILL_TRY(krill_vec_create(ctx, csr->n_rows, &x));
    KRILL_TRY(krill_vec_upload(b, bh));
    KRILL_TRY(bench_clock_start(clock));
    KRILL_TRY(krill_solve(a, NULL, b, x, so, &info));
    KRILL_TRY(bench_clock_stop(clock, &r->solve_s));
    r->iterations = info.iterations;
    r->reason = info.reason;
    r->relres = info.relres;
    r->spmv_s = info.times.spmv;
    r->other_s = r->solve_s > r->spmv_s ? r->solve_s - r->spmv_s : 0.0;
    r->total_s = r->build_s + r->transfer_s + r->solve_s;
    r->ok = 1;
cleanup:
    krill_solve_info_free(&info);
    krill_vec_destroy(&x);
    krill_vec_destroy(&b);
    krill_mat_destroy(&a);
    return st;
}

/* A warm-up: one restart cycle with csr, so that module loading and handle creation stay out
 * of the first format's numbers. */
static krill_status warm_up(krill_ctx *ctx, const krill_csr *csr, const double *bh,
                            const krill_solver_opts *so, bench_clock *clock)
{
    krill_solver_opts w = *so;
    gf_result scratch;
    memset(&scratch, 0, sizeof scratch);
    w.maxit = so->restart;
    return solve_once(ctx, csr, bh, "csr", &w, clock, &scratch);
}

/* The run with the median total of k runs of one format (a failed run, if any: it is
 * reported). */
static gf_result median_run(const gf_result *runs, int k)
{
    int order[MAX_RUNS], n = 0;
    for (int i = 0; i < k; i++) {
        if (!runs[i].ok) return runs[i];
        int j = n++;
        while (j > 0 && runs[order[j - 1]].total_s > runs[i].total_s) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    return runs[order[(n - 1) / 2]];
}

static void print_row(const gf_result *r)
{
    char label[72];   /* the format asked for, and what it built when that differs (auto) */
    if (strcmp(r->format, r->chosen) != 0 && r->chosen[0])
        snprintf(label, sizeof label, "%s>%s", r->format, r->chosen);
    else
        snprintf(label, sizeof label, "%s", r->format);
    if (!r->ok) {
        printf("%-24s %-16s FAILED: %s\n", r->matrix, r->format, r->message);
        return;
    }
    printf("%-24s %-16s %10.1f %6d %9.2e %9.4f %9.4f %9.4f %9.4f %9.4f\n", r->matrix, label,
           r->bytes / 1e6, r->iterations, r->relres, r->build_s, r->transfer_s, r->spmv_s,
           r->other_s, r->total_s);
}

static int write_csv(const char *path, const gf_result *res, int n)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "matrix,format,chosen,variant,n,nnz,bytes,iterations,reason,relres,build_s,"
               "transfer_s,spmv_s,other_s,total_s,build_minflt,ok,message\n");
    for (int i = 0; i < n; i++) {
        const gf_result *r = &res[i];
        fprintf(f, "\"%s\",%s,%s,%s,%lld,%lld,%zu,%d,\"%s\",%.3e,%.6e,%.6e,%.6e,%.6e,%.6e,%ld,"
                   "%d,\"%s\"\n",
                r->matrix, r->format, r->chosen, r->variant, (long long)r->n, (long long)r->nnz,
                r->bytes, r->iterations, krill_reason_string(r->reason), r->relres, r->build_s,
                r->transfer_s, r->spmv_s, r->other_s, r->total_s, r->build_minflt, r->ok,
                r->message);
    }
    return fclose(f) == 0 ? 0 : -1;
}

static int write_json(const char *path, const gf_result *res, int n, krill_ctx *ctx,
                      const gf_opts *o)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "{\"benchmark\": \"gmres_formats\", \"device\": ");
    bench_json_string(f, krill_ctx_describe(ctx));
    fprintf(f, ", \"restart\": %d, \"maxit\": %d, \"rtol\": %.3e, \"runs\": %d, \"results\": [\n",
            o->restart, o->maxit, o->rtol, o->runs);
    for (int i = 0; i < n; i++) {
        const gf_result *r = &res[i];
        fprintf(f, "  {\"matrix\": ");
        bench_json_string(f, r->matrix);
        fprintf(f, ", \"format\": ");
        bench_json_string(f, r->format);
        fprintf(f, ", \"chosen\": ");
        bench_json_string(f, r->chosen);
        fprintf(f, ", \"variant\": ");
        bench_json_string(f, r->variant);
        fprintf(f, ", \"n\": %lld, \"nnz\": %lld, \"bytes\": %zu, \"iterations\": %d",
                (long long)r->n, (long long)r->nnz, r->bytes, r->iterations);
        bench_json_next_number(f, "relres", r->relres);
        bench_json_next_number(f, "build_s", r->build_s);
        bench_json_next_number(f, "transfer_s", r->transfer_s);
        bench_json_next_number(f, "spmv_s", r->spmv_s);
        bench_json_next_number(f, "other_s", r->other_s);
        bench_json_next_number(f, "total_s", r->total_s);
        fprintf(f, ", \"build_minflt\": %ld", r->build_minflt);
        fprintf(f, ", \"round_totals\": [");
        for (int k = 0; k < r->n_rounds; k++)
            fprintf(f, "%s%.6e", k ? ", " : "", r->round_totals[k]);
        fprintf(f, "]");
        fprintf(f, ", \"ok\": %s, \"message\": ", r->ok ? "true" : "false");
        bench_json_string(f, r->message);
        fprintf(f, "}%s\n", i + 1 < n ? "," : "");
    }
    fprintf(f, "]}\n");
    return fclose(f) == 0 ? 0 : -1;
}

/* The options into o, the positional arguments to argv[1..] (bench_parse_options). */
static int parse_args(int argc, char **argv, gf_opts *o, int *n_positional)
{
    const char *formats = "csr,ell,ellr,rbp-csr,rbp-ell,rbp-ellr,segscan";
    const bench_opt opts[] = {
        {.name = "--formats", .kind = BENCH_OPT_STRING, .field = &formats},
        {.name = "--restart", .kind = BENCH_OPT_INT, .field = &o->restart},
        {.name = "--maxit", .kind = BENCH_OPT_INT, .field = &o->maxit},
        {.name = "--rtol", .kind = BENCH_OPT_DOUBLE, .field = &o->rtol},
        {.name = "--runs", .kind = BENCH_OPT_INT, .field = &o->runs},
        {.name = NULL},
    };
    int rc;
    memset(o, 0, sizeof *o);
    o->restart = 30;
    o->maxit = 1000;
    o->rtol = 1e-8;
    o->runs = 1;
    rc = bench_parse_options(argc, argv, "bench_gmres_formats", opts, &o->run, usage,
                             n_positional);
    if (rc == 0 && (o->run.threads < 0 || o->restart < 1 || o->maxit < 1 || !(o->rtol > 0.0) ||
                    o->runs < 1 || o->runs > MAX_RUNS)) {
        fprintf(stderr, "bench_gmres_formats: need --threads >= 0, --restart >= 1, "
                        "--maxit >= 1, --rtol > 0, --runs in 1..%d\n", MAX_RUNS);
        rc = -1;
    }
    snprintf(o->formats, sizeof o->formats, "%s", formats);
    return rc;
}

static const char *const default_matrices[] = {"elasticity3d:100,40,40", "poisson3d:128",
                                               "convdiff3d:128", NULL};

int main(int argc, char **argv)
{
    gf_opts o;
    krill_ctx *ctx = NULL;
    bench_clock *clock = NULL;
    gf_result *res = NULL, *runs = NULL;
    char *formats[MAX_FORMATS], *save = NULL;
    const char *const *matrices;
    krill_solver_opts so;
    int n_matrices = 0, n_formats = 0, n_res = 0, failures = 0, rc = 2;

    if (parse_args(argc, argv, &o, &n_matrices) != 0) goto cleanup;
    n_matrices = bench_names(argv, n_matrices, default_matrices, &matrices);
    for (char *t = strtok_r(o.formats, ",", &save); t && n_formats < MAX_FORMATS;
         t = strtok_r(NULL, ",", &save))
        formats[n_formats++] = t;
    if (bench_ctx_create(o.run.device, o.run.threads, &ctx) != KRILL_OK) goto cleanup;
    if (bench_clock_create(ctx, &clock) != KRILL_OK ||
        krill_calloc((void **)&res, sizeof *res * (size_t)n_matrices * (size_t)n_formats,
                     "results") != KRILL_OK ||
        krill_calloc((void **)&runs, sizeof *runs * (size_t)n_formats * (size_t)o.runs,
                     "runs") != KRILL_OK) {
        fprintf(stderr, "bench_gmres_formats: %s\n", krill_last_error());
        goto cleanup;
    }
    krill_solver_opts_default(&so);
    so.solver = KRILL_SOLVER_GMRES;
    so.restart = o.restart;
    so.maxit = o.maxit;
    so.rtol = o.rtol;
    printf("# bench_gmres_formats on %s: GMRES(%d), rtol %.1e, at most %d iterations, "
           "b = A*1, x0 = 0\n", krill_ctx_describe(ctx), o.restart, o.rtol, o.maxit);
    printf("%-24s %-16s %10s %6s %9s %9s %9s %9s %9s %9s\n", "matrix", "format", "MB", "iters",
           "relres", "build_s", "xfer_s", "spmv_s", "other_s", "total_s");
    for (int m = 0; m < n_matrices; m++) {
        krill_csr *a = NULL;
        double *b = NULL, load_s = 0.0;
        if (bench_load_matrix(matrices[m], &a, &load_s) != KRILL_OK ||
            bench_rhs_ones(a, &b) != KRILL_OK || warm_up(ctx, a, b, &so, clock) != KRILL_OK) {
            printf("%-24s FAILED: %s\n", matrices[m], krill_last_error());
            failures++;
            krill_free(b);
            krill_csr_destroy(&a);
            continue;
        }
        for (int f = 0; f < n_formats; f++) {      /* rounds: every format once per round */
            for (int k = 0; k < o.runs; k++) {
                gf_result *r = &runs[f * o.runs + k];
                memset(r, 0, sizeof *r);
                snprintf(r->matrix, sizeof r->matrix, "%s", matrices[m]);
                snprintf(r->format, sizeof r->format, "%s", formats[f]);
                r->n = a->n_rows;
                r->nnz = a->nnz;
            }
        }
        for (int k = 0; k < o.runs; k++)
            for (int i = 0; i < n_formats; i++) {  /* odd rounds in the reverse order */
                int f = k % 2 ? n_formats - 1 - i : i;
                gf_result *r = &runs[f * o.runs + k];
                if (solve_once(ctx, a, b, formats[f], &so, clock, r) != KRILL_OK) {
                    r->ok = 0;
                    snprintf(r->message, sizeof r->message, "%s", krill_last_error());
                }
            }
        for (int f = 0; f < n_formats; f++) {
            gf_result *r = &res[n_res++];
            *r = median_run(&runs[f * o.runs], o.runs);
            r->n_rounds = o.runs;
            for (int k = 0; k < o.runs; k++) r->round_totals[k] = runs[f * o.runs + k].total_s;
            if (!r->ok) failures++;
            print_row(r);
            fflush(stdout);
        }
        krill_free(b);
        krill_csr_destroy(&a);
    }
    printf("# build = krill_mat_create wall time - transfer; transfer = stored bytes copied "
           "host -> device (events); spmv = the solver's SpMV time; other = solve - spmv\n");
    if (o.run.csv_path && write_csv(o.run.csv_path, res, n_res) != 0) {
        fprintf(stderr, "bench_gmres_formats: cannot write %s\n", o.run.csv_path);
        failures++;
    }
    if (o.run.json_path && write_json(o.run.json_path, res, n_res, ctx, &o) != 0) {
        fprintf(stderr, "bench_gmres_formats: cannot write %s\n", o.run.json_path);
        failures++;
    }
    rc = failures ? 1 : 0;
cleanup:
    krill_free(runs);
    krill_free(res);
    bench_clock_destroy(&clock);
    krill_ctx_destroy(&ctx);
    return rc;
}
