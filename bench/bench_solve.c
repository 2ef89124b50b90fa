/* bench/bench_solve.c - time krill_solve: iterations, time per iteration and its breakdown.
 *
 *   bench_solve [--device cpu|gpu] [--threads N] [--format NAME] [--precond LIST]
 *               [--rtol R] [--maxit N] [--restart M] [--ortho cgs2|mgs|dcgs2] [--sstep S]
 *               [--runs K]
 *               [--write-bin DIR] [--no-solve] [--repro S] [--csv FILE] [--json FILE]
 *               [SOLVER:MATRIX ...]
 *
 * SOLVER is cg, gmres, fgmres, bicgstab, minres or pipecg; MATRIX a krill_gen SPEC or a .mtx
 * file.
 * With none: cg:poisson3d:128 and gmres:convdiff3d:128. The system is the one the issue
 * fixes for every side of the comparison: b = A*1 (computed on the host by krill_csr_spmv_ref),
 * x0 = 0, rtol relative to ||b|| (default 1e-8), GMRES restart 30, orthogonalization DCGS2
 * (--ortho: GMRES and FGMRES; --sstep S: the GMRES problems as s-step GMRES, restart a
 * multiple of S).
 *
 * --precond LIST: comma-separated preconditioner names as krill_pc_create takes them
 * (default none; e.g. none,jacobi,bjacobi:3,ic0): every problem is solved with each, the
 * matrix loaded once. A name krill refuses (unknown, or a zero pivot it reports) makes that
 * row FAILED with krill's message; the other rows still run.
 *
 * --write-bin DIR writes DIR/NAME.A.bin and DIR/NAME.b.bin (bench_common.h's binary dump;
 * NAME from bench_safe_name) so that the peers (cupy_solve.py, bench_petsc) solve exactly
 * this system. --no-solve only writes them.
 *
 * --repro S: the reproducible mode (krill_ctx_set_repro with KRILL_REPRO_OZAKI and S slices,
 * 0 = exact) for every solve; bench/run_repro.sh sets it against plain runs.
 *
 * Timing: one warm-up (preconditioner build and a solve capped at one restart cycle:
 * module loading, handles and workspaces stay out of the numbers), then K runs from x0 = 0,
 * each timed as a whole with bench_clock (CUDA events on the GPU): the preconditioner's
 * build (krill_pc_create: factorization, level analysis, block inverses) and the solve.
 * Reported: the median build time (pc_setup_s), the median solve time, time per iteration =
 * that / iterations (the figure compared with the peers, whose totals also include their
 * own setup), time to solution = build + solve medians (t_total_s), and the breakdown
 * krill_solve measured in the median run. The matrix's own build (format) is not counted. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_common.h"
#include "core/core_impl.h"
#include "solver/solver_impl.h"     /* krill_auto_for_solves */
#include "krill/mat.h"
#include "krill/solver.h"

#define MAX_RUNS 32
#define MAX_PRECONDS 16

/* The solvers a SOLVER:MATRIX problem may name. */
typedef struct solver_name {
    const char *name;
    krill_solver_type type;
} solver_name;

/* --ortho's names (the `krill solve` ones) */
static const char *const ortho_names[] = {"cgs2", "mgs", "dcgs2", NULL};
static const krill_ortho ortho_types[] = {KRILL_ORTHO_CGS2, KRILL_ORTHO_MGS, KRILL_ORTHO_DCGS2};

static const solver_name solver_names[] = {
    {.name = "cg", .type = KRILL_SOLVER_CG},
    {.name = "gmres", .type = KRILL_SOLVER_GMRES},
    {.name = "fgmres", .type = KRILL_SOLVER_FGMRES},
    {.name = "bicgstab", .type = KRILL_SOLVER_BICGSTAB},
    {.name = "minres", .type = KRILL_SOLVER_MINRES},
    {.name = "pipecg", .type = KRILL_SOLVER_PIPECG},
};

typedef struct solve_opts {
    bench_run_opts run;               /* --device, --threads, --csv, --json */
    const char *format;
    const char *precond_list;         /* --precond (argv's), split in place at the commas */
    const char *preconds[MAX_PRECONDS];
    int n_preconds;
    double rtol;
    int maxit, restart, runs;
    int ortho;                        /* index in ortho_names */
    int sstep;                        /* s-step GMRES's block for the gmres problems (0: off) */
    const char *bin_dir;
    int no_solve;
    int repro;                        /* --repro S: S >= 0; -1 = plain (default) */
} solve_opts;

typedef struct solve_result {
    char problem[96];
    char solver[16];
    char precond[32];
    int64_t n, nnz;
    int runs;
    int iterations;
    krill_reason reason;
    double relres;
    double t_med, t_min, t_max;       /* whole solve, seconds, over the runs */
    double pc_setup;                  /* preconditioner build, median over the runs */
    krill_solve_times times;          /* krill's breakdown in the median run */
    double gen_s;                     /* matrix generation / reading */
    char built[32];                   /* the format built (what --format auto chose) */
    int ok;
    char message[200];
} solve_result;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_solve [--device cpu|gpu] [--threads N] [--format NAME]\n"
            "                   [--precond LIST] [--rtol R] [--maxit N] [--restart M]\n"
            "                   [--ortho cgs2|mgs|dcgs2] [--sstep S] [--runs K] [--write-bin DIR]\n"
            "                   [--no-solve] [--repro S] [--csv FILE] [--json FILE]\n"
            "                   [SOLVER:MATRIX ...]\n"
            "SOLVER: cg | gmres | fgmres | bicgstab | minres | pipecg; MATRIX: a krill_gen SPEC or\n"
            "a .mtx file\n"
            "LIST: comma-separated preconditioners, e.g. none,jacobi,bjacobi:3 (default none)\n"
            "default: cg:poisson3d:128 gmres:convdiff3d:128\n");
}

static krill_status write_bin(const char *dir, const char *matrix, const krill_csr *a,
                              const double *b)
{
    krill_status st = KRILL_OK;
    char name[128], path[1024];
    bench_safe_name(matrix, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s.A.bin", dir, name);
    KRILL_TRY(bench_dump_csr(path, a));
    printf("# wrote %s\n", path);
    snprintf(path, sizeof path, "%s/%s.b.bin", dir, name);
    KRILL_TRY(bench_dump_vec(path, b, a->n_rows));
    printf("# wrote %s\n", path);
cleanup:
    return st;
}

/* One solve from x0 = 0, timed by the clock. */
static krill_status timed_solve(const krill_mat *a, const krill_pc *pc, const krill_vec *b,
                                krill_vec *x, const krill_solver_opts *so, bench_clock *clock,
                                krill_solve_info *info, double *seconds)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(krill_vec_fill(x, 0.0));
    KRILL_TRY(bench_clock_start(clock));
    KRILL_TRY(krill_solve(a, pc, b, x, so, info));
    KRILL_TRY(bench_clock_stop(clock, seconds));
cleanup:
    return st;
}

/* The preconditioner `name` built from a, timed by the clock ("none": *pc = NULL, 0 s). */
static krill_status timed_pc_build(const krill_mat *a, const char *name, bench_clock *clock,
                                   krill_pc **pc, double *seconds)
{
    krill_status st = KRILL_OK;
    *seconds = 0.0;
    if (strcmp(name, "none") == 0) goto cleanup;
    KRILL_TRY(bench_clock_start(clock));
    KRILL_TRY(krill_pc_create(a, name, pc));
    KRILL_TRY(bench_clock_stop(clock, seconds));
cleanup:
    return st;
}

static krill_status run_solves(krill_ctx *ctx, const krill_csr *csr, const double *bh,
                               const solve_opts *o, krill_solver_type type, const char *precond,
                               bench_clock *clock, solve_result *r)
{
    krill_status st = KRILL_OK;
    krill_mat *a = NULL;
    krill_pc *pc = NULL;
    krill_vec *b = NULL, *x = NULL;
    krill_solver_opts so;
    krill_solve_info info;
    krill_solve_times run_times[MAX_RUNS];
    double t[MAX_RUNS], t_pc[MAX_RUNS], warm_s = 0.0;
    int median_run = 0;
    char auto_format[48];
    memset(&info, 0, sizeof info);
    krill_solver_opts_default(&so);
    so.solver = type;
    so.rtol = o->rtol;
    so.restart = o->restart;
    so.ortho = ortho_types[o->ortho];
    so.sstep = type == KRILL_SOLVER_GMRES ? o->sstep : 0;
    so.maxit = o->maxit;
    /* --format auto: what `krill solve --format auto --runs K` builds (the warm-up and K) */
    KRILL_TRY(krill_mat_create(ctx, csr, krill_auto_for_solves(o->format, &so, 1 + o->runs,
                                                                auto_format, sizeof auto_format),
                               &a));
    snprintf(r->built, sizeof r->built, "%s", krill_mat_format(a));
    KRILL_TRY(krill_vec_create(ctx, csr->n_rows, &b));
    KRILL_TRY(krill_vec_create(ctx, csr->n_rows, &x));
    KRILL_TRY(krill_vec_upload(b, bh));
    so.maxit = o->restart < o->maxit ? o->restart : o->maxit;   /* warm-up: one cycle */
    KRILL_TRY(timed_pc_build(a, precond, clock, &pc, &warm_s));
    KRILL_TRY(timed_solve(a, pc, b, x, &so, clock, &info, &warm_s));
    krill_solve_info_free(&info);
    krill_pc_destroy(&pc);
    so.maxit = o->maxit;
    for (int k = 0; k < o->runs; k++) {
        KRILL_TRY(timed_pc_build(a, precond, clock, &pc, &t_pc[k]));
        KRILL_TRY(timed_solve(a, pc, b, x, &so, clock, &info, &t[k]));
        krill_pc_destroy(&pc);
        run_times[k] = info.times;
        r->iterations = info.iterations;
        r->reason = info.reason;
        r->relres = info.relres;
        krill_solve_info_free(&info);
    }
    r->t_med = bench_median(t, o->runs);
    r->t_min = bench_min(t, o->runs);
    r->t_max = bench_max(t, o->runs);
    r->pc_setup = bench_median(t_pc, o->runs);
    for (int k = 1; k < o->runs; k++)
        if (fabs(t[k] - r->t_med) < fabs(t[median_run] - r->t_med)) median_run = k;
    r->times = run_times[median_run];
    r->runs = o->runs;
cleanup:
    krill_solve_info_free(&info);
    krill_pc_destroy(&pc);
    krill_vec_destroy(&x);
    krill_vec_destroy(&b);
    krill_mat_destroy(&a);
    return st;
}

/* Parse "SOLVER:SPEC" with SOLVER from solver_names; the entry, or NULL. */
static const solver_name *parse_problem(const char *text, const char **matrix)
{
    const char *colon = strchr(text, ':');
    for (size_t i = 0; colon && i < sizeof solver_names / sizeof solver_names[0]; i++)
        if (strlen(solver_names[i].name) == (size_t)(colon - text) &&
            strncmp(text, solver_names[i].name, (size_t)(colon - text)) == 0) {
            *matrix = colon + 1;
            return &solver_names[i];
        }
    return NULL;
}

/* One problem with every preconditioner of the list: res[0 .. o->n_preconds - 1]. */
static void bench_problem(krill_ctx *ctx, const char *problem, const solve_opts *o,
                          bench_clock *clock, solve_result *res)
{
    const solver_name *solver = NULL;
    const char *matrix = NULL, *failed = NULL;
    krill_csr *a = NULL;
    double *b = NULL, gen_s = 0.0;
    char why[200] = "";
    solver = parse_problem(problem, &matrix);
    if (!solver) {
        snprintf(why, sizeof why, "'%s' is not SOLVER:MATRIX with SOLVER cg, gmres, fgmres, "
                 "bicgstab, minres or pipecg", problem);
        failed = why;
    } else if (bench_load_matrix(matrix, &a, &gen_s) != KRILL_OK ||
               bench_rhs_ones(a, &b) != KRILL_OK ||
               (o->bin_dir && write_bin(o->bin_dir, matrix, a, b) != KRILL_OK)) {
        failed = krill_last_error();
    }
    for (int p = 0; p < o->n_preconds; p++) {
        solve_result *r = &res[p];
        snprintf(r->problem, sizeof r->problem, "%s", problem);
        snprintf(r->precond, sizeof r->precond, "%s", o->preconds[p]);
        snprintf(r->solver, sizeof r->solver, "%s", solver ? solver->name : "?");
        r->gen_s = gen_s;
        if (a) {
            r->n = a->n_rows;
            r->nnz = a->nnz;
        }
        if (failed)
            snprintf(r->message, sizeof r->message, "%s", failed);
        else if (!o->no_solve &&
                 run_solves(ctx, a, b, o, solver->type, o->preconds[p], clock, r) != KRILL_OK)
            snprintf(r->message, sizeof r->message, "%s", krill_last_error());
        else
            r->ok = 1;
        printf("# %s, precond %s: %s\n", problem, o->preconds[p], r->ok ? "done" : r->message);
        fflush(stdout);
    }
    krill_free(b);
    krill_csr_destroy(&a);
}

/* ---- output -------------------------------------------------------------------------- */

static void print_header(void)
{
    printf("%-26s %-10s %9s %10s %6s %-18s %9s %9s %10s %10s %7s %9s %9s %9s %9s %9s %s\n",
           "problem", "precond", "n", "nnz", "iters", "reason", "relres", "pc_setup", "solve_s",
           "ms/iter", "spread", "spmv_s", "precond_s", "ortho_s", "other_s", "setup_s", "format");
}

static void print_row(const solve_result *r, int no_solve)
{
    if (!r->ok) {
        printf("%-26s %-10s FAILED: %s\n", r->problem, r->precond, r->message);
        return;
    }
    if (no_solve) {
        printf("%-26s %-10s %9lld %10lld (written, not solved)\n", r->problem, "-",
               (long long)r->n, (long long)r->nnz);
        return;
    }
    printf("%-26s %-10s %9lld %10lld %6d %-18s %9.2e %9.4f %10.4f %10.4f %6.1f%% %9.4f %9.4f "
           "%9.4f %9.4f %9.4f %s\n",
           r->problem, r->precond, (long long)r->n, (long long)r->nnz, r->iterations,
           krill_reason_string(r->reason), r->relres, r->pc_setup, r->t_med,
           r->iterations > 0 ? 1e3 * r->t_med / r->iterations : 0.0,
           r->t_med > 0 ? 100.0 * (r->t_max - r->t_min) / r->t_med : 0.0, r->times.spmv,
           r->times.precond, r->times.ortho, r->times.other, r->times.setup, r->built);
}

static double per_iter(const solve_result *r)
{
    return r->iterations > 0 ? r->t_med / r->iterations : NAN;
}

static int write_csv(const char *path, const solve_result *res, int n, const char *device,
                     int threads, const char *format)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "problem,solver,precond,n,nnz,device,threads,format,runs,iterations,reason,"
               "relres,pc_setup_s,t_median_s,t_min_s,t_max_s,t_per_iter_s,t_total_s,setup_s,"
               "spmv_s,precond_s,ortho_s,other_s,krill_total_s,ok,message,format_built\n");
    for (int i = 0; i < n; i++) {
        const solve_result *r = &res[i];
        fprintf(f, "\"%s\",%s,\"%s\",%lld,%lld,%s,%d,%s,%d,%d,\"%s\",%.3e,%.6e,%.6e,%.6e,"
                   "%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%d,\"%s\",%s\n",
                r->problem, r->solver, r->precond, (long long)r->n, (long long)r->nnz, device,
                threads, format, r->runs, r->iterations, krill_reason_string(r->reason),
                r->relres, r->pc_setup, r->t_med, r->t_min, r->t_max, per_iter(r),
                r->pc_setup + r->t_med, r->times.setup, r->times.spmv, r->times.precond,
                r->times.ortho, r->times.other, r->times.total, r->ok, r->message, r->built);
    }
    return fclose(f) == 0 ? 0 : -1;
}

static int write_json(const char *path, const solve_result *res, int n, krill_ctx *ctx,
                      const solve_opts *o, const char *clock_kind)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "{\"benchmark\": \"solve\", \"library\": \"krill\", \"device\": ");
    bench_json_string(f, krill_ctx_describe(ctx));
    fprintf(f, ", \"threads\": %d, \"clock\": \"%s\", \"format\": ", krill_ctx_threads(ctx),
            clock_kind);
    bench_json_string(f, o->format);
    fprintf(f, ", \"rtol\": %.3e, \"restart\": %d, \"ortho\": \"%s\", \"sstep\": %d, "
               "\"maxit\": %d, \"results\": [\n", o->rtol, o->restart, ortho_names[o->ortho],
            o->sstep, o->maxit);
    for (int i = 0; i < n; i++) {
        const solve_result *r = &res[i];
        fprintf(f, "  {\"problem\": ");
        bench_json_string(f, r->problem);
        fprintf(f, ", \"solver\": \"%s\", \"precond\": ", r->solver);
        bench_json_string(f, r->precond);
        fprintf(f, ", \"n\": %lld, \"nnz\": %lld, \"runs\": %d, \"iterations\": %d, "
                   "\"reason\": ",
                (long long)r->n, (long long)r->nnz, r->runs, r->iterations);
        bench_json_string(f, krill_reason_string(r->reason));
        fprintf(f, ", \"converged\": %s", r->reason > 0 ? "true" : "false");
        bench_json_next_number(f, "relres", r->relres);
        bench_json_next_number(f, "pc_setup_s", r->pc_setup);
        bench_json_next_number(f, "t_median_s", r->t_med);
        bench_json_next_number(f, "t_min_s", r->t_min);
        bench_json_next_number(f, "t_max_s", r->t_max);
        bench_json_next_number(f, "t_per_iter_s", per_iter(r));
        bench_json_next_number(f, "t_total_s", r->pc_setup + r->t_med);
        bench_json_next_number(f, "setup_s", r->times.setup);
        bench_json_next_number(f, "spmv_s", r->times.spmv);
        bench_json_next_number(f, "precond_s", r->times.precond);
        bench_json_next_number(f, "ortho_s", r->times.ortho);
        bench_json_next_number(f, "other_s", r->times.other);
        bench_json_next_number(f, "krill_total_s", r->times.total);
        bench_json_next_number(f, "gen_s", r->gen_s);
        fprintf(f, ", \"format_built\": ");
        bench_json_string(f, r->built);
        fprintf(f, ", \"ok\": %s, \"message\": ", r->ok ? "true" : "false");
        bench_json_string(f, r->message);
        fprintf(f, "}%s\n", i + 1 < n ? "," : "");
    }
    fprintf(f, "]}\n");
    return fclose(f) == 0 ? 0 : -1;
}

/* ---- main ---------------------------------------------------------------------------- */

/* The options into o, the positional arguments to argv[1..] (bench_parse_options). */
static int parse_args(int argc, char **argv, solve_opts *o, int *n_positional)
{
    const bench_opt opts[] = {
        {.name = "--format", .kind = BENCH_OPT_STRING, .field = &o->format},
        {.name = "--precond", .kind = BENCH_OPT_STRING, .field = &o->precond_list},
        {.name = "--rtol", .kind = BENCH_OPT_DOUBLE, .field = &o->rtol},
        {.name = "--maxit", .kind = BENCH_OPT_INT, .field = &o->maxit},
        {.name = "--restart", .kind = BENCH_OPT_INT, .field = &o->restart},
        {.name = "--ortho", .kind = BENCH_OPT_CHOICE, .field = &o->ortho, .choices = ortho_names},
        {.name = "--sstep", .kind = BENCH_OPT_INT, .field = &o->sstep},
        {.name = "--runs", .kind = BENCH_OPT_INT, .field = &o->runs},
        {.name = "--write-bin", .kind = BENCH_OPT_STRING, .field = &o->bin_dir},
        {.name = "--no-solve", .kind = BENCH_OPT_FLAG, .field = &o->no_solve},
        {.name = "--repro", .kind = BENCH_OPT_INT, .field = &o->repro},
        {.name = NULL},
    };
    memset(o, 0, sizeof *o);
    o->format = "csr";      /* krill solve's default; the format built is reported */
    o->rtol = 1e-8;
    o->maxit = 10000;
    o->restart = 30;
    o->ortho = KRILL_ORTHO_DCGS2;   /* krill_solve's default; ortho_names is in enum order */
    o->runs = 3;
    o->repro = -1;
    if (bench_parse_options(argc, argv, "bench_solve", opts, &o->run, usage, n_positional) != 0)
        return -1;
    if (o->run.threads < 0 || o->repro < -1 || !(o->rtol > 0.0) || o->maxit < 1 || o->restart < 1 || o->runs < 1 ||
        o->runs > MAX_RUNS || o->sstep < 0 || o->sstep > KRILL_SSTEP_MAX) {
        fprintf(stderr, "bench_solve: need --threads >= 0, --repro >= 0, --rtol > 0, --maxit >= 1, "
                        "--restart >= 1, 1 <= --runs <= %d, 0 <= --sstep <= %d\n", MAX_RUNS,
                KRILL_SSTEP_MAX);
        return -1;
    }
    o->n_preconds = 0;
    if (!o->precond_list) o->preconds[o->n_preconds++] = "none";
    /* the list is argv's string (writable): split in place */
    for (char *save = NULL,
              *tok = o->precond_list ? strtok_r((char *)o->precond_list, ",", &save) : NULL;
         tok; tok = strtok_r(NULL, ",", &save)) {
        if (o->n_preconds == MAX_PRECONDS) {
            fprintf(stderr, "bench_solve: --precond: at most %d names\n", MAX_PRECONDS);
            return -1;
        }
        o->preconds[o->n_preconds++] = tok;
    }
    if (o->n_preconds == 0) {
        fprintf(stderr, "bench_solve: --precond: no name given\n");
        return -1;
    }
    return 0;
}

static const char *const default_problems[] = {"cg:poisson3d:128", "gmres:convdiff3d:128",
                                               NULL};

int main(int argc, char **argv)
{
    solve_opts o;
    krill_ctx *ctx = NULL;
    bench_clock *clock = NULL;
    solve_result *res = NULL;
    const char *const *problems;
    int n_problems = 0, n_results = 0, failures = 0, rc = 2;

    if (parse_args(argc, argv, &o, &n_problems) != 0) goto cleanup;
    n_problems = bench_names(argv, n_problems, default_problems, &problems);
    n_results = n_problems * o.n_preconds;
    if (bench_ctx_create(o.run.device, o.run.threads, &ctx) != KRILL_OK) goto cleanup;
    if (o.repro >= 0 && krill_ctx_set_repro(ctx, KRILL_REPRO_OZAKI, o.repro) != KRILL_OK) {
        fprintf(stderr, "bench_solve: --repro %d: %s\n", o.repro, krill_last_error());
        goto cleanup;
    }
    if (bench_clock_create(ctx, &clock) != KRILL_OK ||
        krill_calloc((void **)&res, sizeof *res * (size_t)n_results, "results") != KRILL_OK) {
        fprintf(stderr, "bench_solve: %s\n", krill_last_error());
        goto cleanup;
    }
    printf("# bench_solve on %s; clock: %s; format %s, rtol %.1e, restart %d, ortho %s, "
           "sstep %d, maxit %d, %d timed runs; repro %s (S = %d)\n",
           krill_ctx_describe(ctx), bench_clock_kind(clock), o.format, o.rtol, o.restart,
           ortho_names[o.ortho], o.sstep, o.maxit, o.runs, o.repro >= 0 ? "ozaki" : "off",
           o.repro);
    for (int p = 0; p < n_problems; p++)
        bench_problem(ctx, problems[p], &o, clock, &res[p * o.n_preconds]);
    for (int i = 0; i < n_results; i++)
        if (!res[i].ok) failures++;
    print_header();
    for (int i = 0; i < n_results; i++) print_row(&res[i], o.no_solve);
    printf("# pc_setup: median preconditioner build; solve_s: median whole-solve time over the "
           "runs; ms/iter = solve / iterations; spread = (max - min) / median; the breakdown "
           "columns are krill's own timers\n");
    if (o.run.csv_path && write_csv(o.run.csv_path, res, n_results,
                                o.run.device == KRILL_DEVICE_CUDA ? "gpu" : "cpu",
                                krill_ctx_threads(ctx), o.format) != 0) {
        fprintf(stderr, "bench_solve: cannot write %s\n", o.run.csv_path);
        failures++;
    }
    if (o.run.json_path &&
        write_json(o.run.json_path, res, n_results, ctx, &o, bench_clock_kind(clock)) != 0) {
        fprintf(stderr, "bench_solve: cannot write %s\n", o.run.json_path);
        failures++;
    }
    rc = failures ? 1 : 0;
cleanup:
    krill_free(res);
    bench_clock_destroy(&clock);
    krill_ctx_destroy(&ctx);
    return rc;
}
