/* apps/cmd_solve.c - `krill solve`: read or generate A, make b, solve, report.
 *
 * Without a matrix it solves the embedded default problem. With the default right-hand
 * side b = A*1 the exact solution x = 1 is known, and the report shows the error.
 *
 * Started by mpirun in a build with MPI (`mpirun -n P krill solve ...`; doc/mpi.md), it
 * solves distributed: rank 0 makes A and b as above and scatters their rows (balanced by
 * nonzeros), every rank solves its part, rank 0 gathers x and prints the one report, with
 * each rank's rows, nonzeros and halo. A krill binary file (krill convert, recognised by its
 * magic bytes) is read by each rank itself, its own rows only, partitioned alike; b = A*1 is
 * then made by each rank from its rows (the same bits as rank 0's), and the solver is chosen
 * from the writer's flags. The problem setup (A, the solver, b, the reordering) is
 * solve_problem.c's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli_impl.h"
#include "solver/solver_impl.h"     /* krill_auto_for_solves */
#include "solve_problem.h"

/* Largest S of --repro=S (more slices than a value needs change nothing: exact mode). */
#define REPRO_MAX_SLICES 64

static const char *const device_names[] = { "auto", "cpu", "gpu", NULL };
static const krill_device device_types[] = { KRILL_DEVICE_AUTO, KRILL_DEVICE_CPU,
                                             KRILL_DEVICE_CUDA };
static const char *const partition_names[] = { "rows", "metis", NULL };
enum { PARTITION_ROWS, PARTITION_METIS };  /* indices in partition_names */

static void solve_usage(FILE *out)
{
    const char *const *pc_names = krill_pc_names();
    fprintf(out,
            "usage: krill solve [A.mtx|A.krill] [options]\n"
            "\n"
            "Solve A x = b. A is a Matrix Market file (.mtx or .mtx.gz), a krill binary file\n"
            "(krill convert A.mtx A.krill; recognised by its magic bytes, whatever its name),\n"
            "a generated matrix (--gen), or, with neither, the default problem %s\n"
            "(the elasticity cantilever). The initial guess is x = 0. Under mpirun each rank\n"
            "reads its own rows of a binary file (with --reorder rcm rank 0 reads it all).\n"
            "\n"
            "problem\n"
            "  --gen SPEC          generate A (see krill gen --list)\n"
            "  --rhs ones|random|FILE\n"
            "                      b = A*1 (default: the exact solution x = 1 is known and the\n"
            "                      error is reported), deterministic random b in [-1, 1), or b\n"
            "                      read from a Matrix Market vector file\n"
            "solver\n"
            "  --solver gmres|fgmres|cg|bicgstab|minres|pipecg\n"
            "                      default: cg for the default problem and when A is symmetric\n"
            "                      with a diagonal of one sign (positive or negative), minres\n"
            "                      when A is symmetric with diagonal entries of both signs or\n"
            "                      zero, gmres otherwise. fgmres: flexible GMRES (keeps\n"
            "                      M^-1 v_j); bicgstab: 2 SpMVs per iteration; minres:\n"
            "                      symmetric indefinite A (saddle points), M definite;\n"
            "                      pipecg: CG with its reduction hidden behind M and the\n"
            "                      SpMV (for many MPI ranks; more vector traffic)\n"
            "  --restart M         GMRES / FGMRES restart length (default 30)\n"
            "  --ortho dcgs2|cgs2|mgs\n"
            "                      GMRES / FGMRES orthogonalization (default dcgs2): cgs2\n"
            "                      classical Gram-Schmidt twice, mgs modified, dcgs2 CGS2\n"
            "                      with the second pass delayed (one reduction per step)\n"
            "  --sstep S           GMRES: s-step (communication-avoiding) GMRES, the basis\n"
            "                      built S vectors at a time (Newton basis, block CGS2 +\n"
            "                      Cholesky-QR; --ortho is not used); --restart must be a\n"
            "                      multiple of S, 2 <= S <= 32; without --solver it picks\n"
            "                      gmres. 0 or 1 (default 0): GMRES\n"
            "  --precond NAME[:PARAM]\n"
            "                      preconditioner (default none), one of:",
            DEFAULT_PROBLEM);
    for (int k = 0; pc_names[k]; k++) fprintf(out, "%s %s", k ? "," : "", pc_names[k]);
    fprintf(out,
            "\n"
            "                      e.g. bjacobi:3 (3 x 3 blocks)\n"
            "  --rtol X            stop when ||b - Ax|| <= X ||b|| (default 1e-8)\n"
            "  --atol X            or when ||b - Ax|| <= X (default 0)\n"
            "  --maxit N           at most N iterations (default 10000)\n"
            "where\n"
            "  --format NAME       storage format (default csr; krill info lists them);\n"
            "                      auto weighs each format's build against the SpMVs of one\n"
            "                      restart cycle (--restart iterations; 30 for the other\n"
            "                      solvers) of each solve, at most --maxit (auto:spmvs=N:\n"
            "                      N SpMVs)\n"
            "  --reorder none|rcm  renumber the unknowns by Reverse Cuthill-McKee before the\n"
            "                      solve (default none); x is written in A's own numbering\n"
            "  --partition rows|metis  under mpirun: row blocks balanced by nonzeros (default),\n"
            "                      or METIS's parts of the graph of A + A^T, rows renumbered\n"
            "                      (x and b stay in A's numbering; rank 0 reads A; needs a\n"
            "                      build with METIS; one process: nothing to partition)\n"
            "  --device auto|cpu|gpu   default auto: the GPU when one is present (under\n"
            "                      mpirun the CPU; gpu: rank r of a node takes its GPU\n"
            "                      r mod the node's GPU count)\n"
            "  --threads N         OpenMP threads (default: OpenMP's)\n"
            "  --repro[=S]         reproducible mode: every reduction by the Ozaki scheme, so\n"
            "                      the same input gives the same bits on any thread count,\n"
            "                      device and format; S = 0 (default) exact, S >= 1 at most S\n"
            "                      slices per operand (S <= 64: faster, less accurate, still\n"
            "                      reproducible). Compare runs by the printed solution hash\n"
            "output\n"
            "  --out FILE          write x as a Matrix Market array\n"
            "  --history FILE      write the residual history as CSV\n"
            "  --json              print one JSON object on stdout instead of the summary\n"
            "  --monitor           print one line per iteration on stderr\n"
            "  --quiet             no summary and no progress line (the exit code tells)\n"
            "  --runs N            N more solves from x = 0 after the reported one (its\n"
            "                      warm-up): the report adds their median time per\n"
            "                      iteration (benchmarks; the reported x is the first's)\n"
            "\n"
            "exit codes: 0 converged, 1 not converged, 2 bad usage or bad input, or an output\n"
            "            could not be written, 3 krill or the device failed\n");
}

static int parse_solve_args(int argc, char **argv, solve_args *args)
{
    const double int_max = 2147483647.0;
    int n_positional = 0;
    memset(args, 0, sizeof *args);
    args->rhs = "ones";
    args->solver = -1;
    krill_solver_opts_default(&args->opts);
    args->ortho = (int)args->opts.ortho;   /* cli_ortho_names lists krill_ortho in enum order */
    const cli_option options[] = {
        { .name = "--help", .kind = CLI_FLAG, .flag = &args->help },
        { .name = "-h", .kind = CLI_FLAG, .flag = &args->help },
        { .name = "--gen", .kind = CLI_STRING, .string = &args->gen_spec },
        { .name = "--format", .kind = CLI_STRING, .string = &args->format },
        { .name = "--rhs", .kind = CLI_STRING, .string = &args->rhs },
        { .name = "--out", .kind = CLI_STRING, .string = &args->out_path },
        { .name = "--history", .kind = CLI_STRING, .string = &args->history_path },
        { .name = "--solver", .kind = CLI_CHOICE, .integer = &args->solver,
          .choices = cli_solver_names },
        { .name = "--ortho", .kind = CLI_CHOICE, .integer = &args->ortho,
          .choices = cli_ortho_names },
        { .name = "--device", .kind = CLI_CHOICE, .integer = &args->device,
          .choices = device_names },
        { .name = "--precond", .kind = CLI_STRING, .string = &args->precond },
        { .name = "--reorder", .kind = CLI_CHOICE, .integer = &args->reorder,
          .choices = cli_reorder_names },
        { .name = "--partition", .kind = CLI_CHOICE, .integer = &args->partition,
          .choices = partition_names },
        { .name = "--restart", .kind = CLI_INT, .integer = &args->opts.restart, .min = 1,
          .max = int_max },
        { .name = "--sstep", .kind = CLI_INT, .integer = &args->opts.sstep, .min = 0,
          .max = KRILL_SSTEP_MAX },
        { .name = "--maxit", .kind = CLI_INT, .integer = &args->opts.maxit, .min = 1,
          .max = int_max },
        { .name = "--repro", .kind = CLI_FLAG_INT, .flag = &args->repro,
          .integer = &args->repro_slices, .min = 0, .max = REPRO_MAX_SLICES },
        { .name = "--threads", .kind = CLI_INT, .integer = &args->threads, .min = 1,
          .max = KRILL_MAX_THREADS },
        { .name = "--runs", .kind = CLI_INT, .integer = &args->runs, .min = 1,
          .max = CLI_MAX_RUNS },
        { .name = "--rtol", .kind = CLI_DOUBLE, .real = &args->opts.rtol, .min = 0,
          .max = INFINITY },
        { .name = "--atol", .kind = CLI_DOUBLE, .real = &args->opts.atol, .min = 0,
          .max = INFINITY },
        { .name = "--json", .kind = CLI_FLAG, .flag = &args->json },
        { .name = "--monitor", .kind = CLI_FLAG, .flag = &args->monitor },
        { .name = "--quiet", .kind = CLI_FLAG, .flag = &args->quiet },
    };
    int rc = cli_parse(argc, argv, options, sizeof options / sizeof options[0],
                       &args->matrix_path, 1, &n_positional);
    if (rc == CLI_EXIT_OK && args->matrix_path && args->gen_spec) {
        fprintf(stderr, "krill solve: give either a matrix file or --gen, not both\n");
        rc = CLI_EXIT_USAGE;
    }
    return rc;
}

/* FNV-1a (64 bits) of the n doubles' bytes as they lie in memory (IEEE binary64,
 * little-endian on every platform krill builds for): two runs printed the same hash iff,
 * barring a collision, their solutions are the same bits. */
static uint64_t hash_doubles(const double *x, int64_t n)
{
    const unsigned char *bytes = (const unsigned char *)x;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t k = 0; k < (size_t)n * sizeof *x; k++) {
        h ^= bytes[k];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* Max-norm and relative 2-norm of x - 1 (NaN propagates into both). */
static void error_vs_ones(const double *x, int64_t n, cli_solve_report *report)
{
    double max_abs = 0.0, sum_sq = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs(x[i] - 1.0);
        max_abs = (e > max_abs || isnan(e)) ? e : max_abs;
        sum_sq += e * e;
    }
    report->error_inf = max_abs;
    report->error_rel = n > 0 ? sqrt(sum_sq / (double)n) : 0.0;
}

/* CSV: one header line, then one line per history entry ([0] = the initial residual). */
static int write_history(const char *path, const krill_solve_info *info)
{
    krill_outfile out;
    int rc = cli_output_open(&out, "--history", path);
    if (rc == CLI_EXIT_OK) {
        double bnorm = info->bnorm > 0.0 ? info->bnorm : 1.0;
        fprintf(out.f, "iteration,residual_norm,relative_residual\n");
        for (int k = 0; k < info->history_len; k++)
            fprintf(out.f, "%d,%.17g,%.17g\n", k, info->history[k], info->history[k] / bnorm);
        rc = cli_output_close(&out, "--history", 1);
    }
    return rc;
}

static int solve_run(int argc, char **argv)
{
    solve_args args;
    cli_solve_report report;
    cli_progress progress = { 0 };
    cli_ranks ranks;
    krill_ctx_opts ctx_opts = KRILL_CTX_OPTS_INIT;
    krill_csr *csr = NULL;
    krill_ctx *ctx = NULL;
    krill_mat *mat = NULL;
    krill_pc *pc = NULL;
    krill_vec *b = NULL, *x = NULL;
    double *host_b = NULL, *host_x = NULL;
    double *local_b = NULL;      /* each rank read its rows, b = A*1: this rank's part */
    int32_t *perm = NULL;        /* --reorder rcm: perm[new] = old */
    cli_rank_load *load = NULL;  /* distributed: every rank's, on rank 0 */
    double t0 = 0.0, bnorm_sq = 0.0;
    int64_t rows = 0;            /* this process's rows (all of them without MPI) */
    char auto_format[48];        /* --format auto: "auto:spmvs=N" */
    const char *format;
    krill_status solve_status = KRILL_OK;
    memset(&report, 0, sizeof report);
    cli_ranks_start(&ranks);
    int rc = parse_solve_args(argc, argv, &args);
    if (rc != CLI_EXIT_OK || args.help) {
        if (rc == CLI_EXIT_OK && ranks.rank == 0) solve_usage(stdout);
        goto cleanup;
    }
    report.opts = args.opts;
    report.precond = args.precond ? args.precond : "none";
    report.ranks = ranks.size;
    report.partition = partition_names[args.partition];

    if (ranks.rank == 0 && args.partition == PARTITION_METIS && !cli_ranks_have_metis())
        rc = cli_error(CLI_EXIT_USAGE, "--partition metis: this krill was built without METIS "
                       "(KRILL_WITH_MPI and KRILL_WITH_METIS; Debian: libmetis-dev)");
    if (rc == CLI_EXIT_OK && ranks.rank == 0) {   /* every rank reads its rows of a binary A,
                                                     unless reordered or partitioned by METIS */
        report.per_rank_read = ranks.on && args.matrix_path && args.reorder == REORDER_NONE &&
                               args.partition == PARTITION_ROWS &&
                               krill_bin_detect(args.matrix_path);
        rc = report.per_rank_read
                 ? cli_solve_make_problem_header(&args, &report, &host_b, &host_x)
                 : cli_solve_make_problem(&args, &report, &csr, &host_b, &host_x, &perm);
    }
    if (rc == CLI_EXIT_OK && ranks.on && ranks.rank == 0 &&
        !(load = calloc((size_t)ranks.size, sizeof *load)))
        rc = cli_error(CLI_EXIT_FAILURE, "out of memory for %d ranks' loads", ranks.size);
    rc = cli_ranks_share(&ranks, rc, &report);
    if (rc != CLI_EXIT_OK) goto cleanup;

    ctx_opts.device = device_types[args.device];
    ctx_opts.threads = args.threads;
    if (ranks.on) ctx_opts.device_id = KRILL_DEVICE_ID_LOCAL_RANK;   /* one GPU per rank */
    CLI_TRY(cli_ranks_ctx(&ranks, &ctx_opts, &ctx));
    report.device = krill_ctx_describe(ctx);
    if (args.repro) CLI_TRY(krill_ctx_set_repro(ctx, KRILL_REPRO_OZAKI, args.repro_slices));
    report.repro = args.repro;
    report.repro_slices = args.repro_slices;
    t0 = cli_seconds();
    if (report.per_rank_read) {   /* csr: this rank's rows; a failure is every rank's */
        krill_status read_st = cli_ranks_read(&ranks, ctx, args.matrix_path,
                                              !strcmp(args.rhs, "ones"), &csr, &local_b,
                                              &report.bandwidth_before);
        if (read_st != KRILL_OK) {   /* one message: rank 0's */
            rc = ranks.rank == 0 ? cli_fail(read_st) : cli_exit_code(read_st);
            goto cleanup;
        }
        report.bandwidth_after = report.bandwidth_before;
        report.load_seconds += cli_seconds() - t0;
        t0 = cli_seconds();
    }
    /* --format auto: auto weighs each format's build against the SpMVs of these solves */
    format = krill_auto_for_solves(args.format, &report.opts, 1 + args.runs, auto_format,
                                   sizeof auto_format);
    CLI_TRY(cli_ranks_mat(&ranks, ctx, csr, report.per_rank_read,
                          args.partition == PARTITION_METIS, format, &mat, &rows));
    krill_csr_destroy(&csr);       /* the matrix holds its own copy: free the host one early */
    /* every name but a plain "none" is built: krill_pc_create checks the name (the
     * message lists the known ones) and its parameter */
    if (strcmp(report.precond, "none") != 0) {
        CLI_TRY(krill_pc_create(mat, report.precond, &pc));
        report.precond_built = krill_pc_describe(pc);
    }
    report.build_seconds = cli_seconds() - t0;
    krill_mat_stats(mat, &report.stats);
    report.format = krill_mat_format(mat);
    report.format_choice = krill_mat_choice(mat);
    cli_ranks_load(&ranks, mat, load);
    report.load = load;
    CLI_TRY(krill_vec_create(ctx, rows, &b));
    CLI_TRY(krill_vec_create(ctx, rows, &x));
    if (local_b) {               /* b from the rows: gathered for rank 0's norm */
        CLI_TRY(krill_vec_upload(b, local_b));
        CLI_TRY(cli_ranks_vec(&ranks, mat, host_b, b, 1));
    } else {
        CLI_TRY(cli_ranks_vec(&ranks, mat, host_b, b, 0));
    }

    for (int64_t i = 0; ranks.rank == 0 && i < report.n; i++) bnorm_sq += host_b[i] * host_b[i];
    progress.bnorm = sqrt(bnorm_sq);
    progress.every_iteration = args.monitor && ranks.rank == 0;
    progress.live = !args.quiet && !args.monitor && ranks.rank == 0 && isatty(fileno(stderr));
    if (progress.every_iteration || progress.live) {   /* a monitor costs the GPU CG its */
        report.opts.monitor = cli_progress_monitor;    /* run-ahead: only when shown       */
        report.opts.monitor_data = &progress;
    }
    solve_status = krill_solve(mat, pc, b, x, &report.opts, &report.info);
    cli_progress_clear(&progress);
    CLI_TRY(solve_status);

    CLI_TRY(cli_ranks_vec(&ranks, mat, host_x, x, 1));
    if (args.runs > 0) {
        CLI_TRY(cli_solve_repeat(mat, pc, b, x, &report.opts, args.runs, &report.median_total));
        report.runs = args.runs;
    }
    rc = report.info.reason > 0 ? CLI_EXIT_OK : CLI_EXIT_NOT_CONVERGED;
    if (ranks.rank != 0) goto cleanup;   /* the rest is rank 0's: output and the report */
    if (perm) {                  /* y in the RCM numbering; x = P^T y (host_b is free now) */
        memcpy(host_b, host_x, (size_t)report.n * sizeof *host_b);
        krill_vec_unpermute_host((int32_t)report.n, perm, host_b, host_x);
    }
    if (report.exact_known) error_vs_ones(host_x, report.n, &report);
    report.x_hash = hash_doubles(host_x, report.n);
    if (args.out_path) CLI_TRY(krill_mm_write_vector(args.out_path, host_x, report.n));
    if (args.history_path) {
        int hrc = write_history(args.history_path, &report.info);
        if (hrc != CLI_EXIT_OK) {
            rc = hrc;
            goto cleanup;
        }
    }
    if (args.json)
        cli_report_json(stdout, &report);
    else if (!args.quiet)
        cli_report_human(stdout, &report);
cleanup:
    krill_solve_info_free(&report.info);
    krill_vec_destroy(&x);
    krill_vec_destroy(&b);
    krill_pc_destroy(&pc);
    krill_mat_destroy(&mat);
    krill_ctx_destroy(&ctx);
    krill_csr_destroy(&csr);
    free(host_b);
    free(host_x);
    free(local_b);
    free(perm);
    free(load);
    cli_ranks_end(&ranks);
    return rc;
}

const cli_command cli_solve_command = {
    .name = "solve",
    .summary = "solve A x = b (a .mtx or .krill file, a generated matrix, or the default "
               "problem)",
    .run = solve_run,
    .usage = solve_usage,
};
