/* apps/cli_impl.h - what the files of the `krill` command share: the subcommand table,
 * exit codes, the strict option parser, the JSON writer, the solve and APSP reports. */
#ifndef KRILL_CLI_IMPL_H
#define KRILL_CLI_IMPL_H

#include <stdint.h>
#include <stdio.h>
#include "krill.h"
#include "io/io_impl.h"   /* krill_outfile */

/* ---- exit codes ------------------------------------------------------------------------ */
enum {
    CLI_EXIT_OK = 0,             /* done; for `solve`: converged */
    CLI_EXIT_NOT_CONVERGED = 1,  /* `solve` ran but the method did not converge */
    CLI_EXIT_USAGE = 2,          /* bad usage or bad input (message on stderr) */
    CLI_EXIT_FAILURE = 3         /* krill or the device failed (out of memory, CUDA error) */
};

/* Print "krill: <krill_last_error()>" on stderr and return the exit code for `st`:
 * CLI_EXIT_USAGE for errors in the input, CLI_EXIT_FAILURE for the others. */
int cli_fail(krill_status st);
/* cli_fail's exit code for `st`, printing nothing (the ranks other than 0 of a failure that
 * every rank returns: rank 0 alone prints it). */
int cli_exit_code(krill_status st);

/* Print "krill: " and the formatted message on stderr; return `exit_code`. */
int cli_error(int exit_code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Run a krill call; on failure set `rc` from cli_fail and jump to `cleanup`. */
#define CLI_TRY(call)                                                                    \
    do {                                                                                 \
        krill_status cli_st_ = (call);                                                   \
        if (cli_st_ != KRILL_OK) {                                                       \
            rc = cli_fail(cli_st_);                                                      \
            goto cleanup;                                                                \
        }                                                                                \
    } while (0)

/* ---- outputs (output.c) ----------------------------------------------------------------
 * A file named by an option is written whole or not at all (io/outfile.c): a temporary file
 * in its folder is renamed over it once every write has succeeded, so a failure (a full
 * disk, an I/O error) leaves no partial file and an older file of that name as it was.
 * Failures print "krill: OPTION PATH: cannot create|write failed: REASON" and return
 * CLI_EXIT_USAGE, as cli_fail does for KRILL_ERR_IO (doc/decisions.md). */
int cli_output_open(krill_outfile *out, const char *option, const char *path);
/* commit = 1: check, flush and put the file in place; 0: discard it (the caller failed). */
int cli_output_close(krill_outfile *out, const char *option, int commit);
/* Standard output as an output (`--json -`): closing it flushes and checks it. */
void cli_output_stdout(krill_outfile *out);

/* A standard stream that is closed when krill starts (`krill ... >&-`) is opened read-only
 * on /dev/null, so that writes to it fail and are reported, and an output file cannot take
 * its descriptor. */
void cli_guard_std_streams(void);
/* Flush and close standard output after the command ran with exit code `rc`: a failed
 * write (a full disk, a closed pipe with SIGPIPE ignored) turns an exit code 0 or 1 into
 * CLI_EXIT_USAGE with "krill: standard output: write failed: REASON" (codes 2 and 3 stay:
 * their message is out already). */
int cli_close_stdout(int rc);

/* ---- subcommands ----------------------------------------------------------------------- */
typedef struct cli_command {
    const char *name;                  /* "solve" */
    const char *summary;               /* one line for `krill help` */
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand name; returns the exit code */
    void (*usage)(FILE *out);          /* the full usage text */
} cli_command;

extern const cli_command cli_solve_command;
extern const cli_command cli_gen_command;
extern const cli_command cli_convert_command;
extern const cli_command cli_info_command;
extern const cli_command cli_formats_command;
extern const cli_command cli_dot_command;
extern const cli_command cli_apsp_command;
extern const cli_command cli_overlap_command;

/* ---- option parsing --------------------------------------------------------------------
 * Options are written "--name VALUE" or "--name=VALUE"; "--" ends the options. Every
 * unknown option, missing or extra value, unparsable or out-of-range number and unknown
 * choice is an error that names the option. */
typedef enum cli_kind {
    CLI_FLAG,        /* no value: *flag = 1 */
    CLI_STRING,      /* *string = the value */
    CLI_INT,         /* *integer = the value, in [min, max] */
    CLI_DOUBLE,      /* *real = the value, finite, in [min, max] */
    CLI_CHOICE,      /* *integer = index of the value in `choices` (NULL-terminated) */
    CLI_FLAG_INT     /* "--name": *flag = 1; "--name=V": also *integer = V in [min, max]
                        (never takes the next argument as its value) */
} cli_kind;

typedef struct cli_option {
    const char *name;                /* "--rtol" or "-o" */
    cli_kind kind;
    int *flag;                       /* CLI_FLAG, CLI_FLAG_INT */
    const char **string;             /* CLI_STRING */
    int *integer;                    /* CLI_INT, CLI_CHOICE, CLI_FLAG_INT */
    double *real;                    /* CLI_DOUBLE */
    double min, max;                 /* CLI_INT, CLI_FLAG_INT, CLI_DOUBLE: allowed range */
    const char *const *choices;      /* CLI_CHOICE */
} cli_option;

/* Parse argv[1..argc-1] of subcommand argv[0]. Arguments that are not options go to
 * positional[0..max_positional-1] (*n_positional counts them). Returns CLI_EXIT_OK, or
 * CLI_EXIT_USAGE after printing "krill CMD: what was wrong" on stderr. */
int cli_parse(int argc, char **argv, const cli_option *options, int n_options,
              const char **positional, int max_positional, int *n_positional);

/* A byte count: "123", "1.5G", "512M", "64K" (K, M, G: powers of 1024); -1 if malformed. */
double cli_parse_bytes(const char *text);

/* ---- JSON writer ------------------------------------------------------------------------
 * Writes one object, members indented by nesting depth. Strings are escaped, numbers are
 * written with %.17g (they read back to the same double), non-finite numbers as null. */
#define CLI_JSON_MAX_DEPTH 8

typedef struct cli_json {
    FILE *out;
    int depth;                             /* open objects */
    int members[CLI_JSON_MAX_DEPTH];       /* members written so far at each depth */
} cli_json;

void cli_json_begin(cli_json *json, FILE *out);            /* opens the top-level object */
void cli_json_end(cli_json *json);                         /* closes it, then a newline */
void cli_json_object(cli_json *json, const char *key);     /* opens a nested object */
void cli_json_close(cli_json *json);                       /* closes the nested object */
void cli_json_string(cli_json *json, const char *key, const char *value); /* NULL: null */
void cli_json_number(cli_json *json, const char *key, double value);
void cli_json_int(cli_json *json, const char *key, int64_t value);
void cli_json_bool(cli_json *json, const char *key, int value);
void cli_json_null(cli_json *json, const char *key);

/* ---- small pieces of the human reports (json.c) ---------------------------------------- */
void cli_format_bytes(char *buf, size_t len, double bytes);       /* "12.3 MiB" */
/* "          LABEL   12.345 ms  12.3%" with the label padded to `width` (no share when
 * total <= 0) */
void cli_print_time(FILE *out, int width, const char *label, double seconds, double total);

/* ---- the solve report (cmd_solve.c and solve_problem.c fill it, solve_report.c prints it) */
typedef struct cli_solve_report {
    const char *source;          /* file name or generator spec */
    const char *source_note;     /* "default problem", "generated" or "Matrix Market file" */
    int64_t n, nnz;
    krill_format_stats stats;
    const char *format;
    const char *format_choice;   /* why auto built it (krill_mat_choice); NULL if not auto */
    const char *device;          /* krill_ctx_describe */
    const char *solver;          /* "gmres", "cg", "fgmres" or "bicgstab" */
    const char *solver_why;      /* why that solver was chosen */
    const char *precond;         /* as asked (--precond), "none" by default */
    const char *precond_built;   /* krill_pc_describe of the one built; NULL for none */
    const char *ortho;           /* GMRES and FGMRES only, else NULL */
    const char *rhs;             /* how b was made */
    krill_solver_opts opts;
    krill_solve_info info;
    int exact_known;             /* b = A*1: the error against x = 1 is known */
    double error_inf;            /* max_i |x_i - 1| */
    double error_rel;            /* ||x - 1||_2 / ||1||_2 */
    double load_seconds;         /* reading or generating the matrix */
    double build_seconds;        /* building the matrix and preconditioner on the device */
    const char *reorder;         /* "none" or "rcm" (--reorder) */
    int32_t bandwidth_before;    /* half bandwidth max |i - j| of A as given */
    int32_t bandwidth_after;     /* the same of the matrix solved (P A P^T with rcm) */
    double reorder_seconds;      /* RCM and P A P^T, P b (0 without reordering) */
    int repro, repro_slices;     /* --repro[=S]: reproducible mode and its slice count */
    uint64_t x_hash;             /* FNV-1a 64 of the solution's bytes (A's numbering) */
    int ranks;                   /* MPI ranks of a distributed solve (mpirun), else 1 */
    int runs;                    /* --runs N: timed solves after the reported one, else 0 */
    double median_total;         /* their median krill_solve_times.total (seconds) */
    int per_rank_read;           /* distributed, A a binary file: each rank read its rows */
    const char *partition;       /* --partition: "rows" or "metis" (as asked) */
    const struct cli_rank_load *load;   /* ranks entries on rank 0 when ranks > 1, else NULL */
} cli_solve_report;

/* What one rank of a distributed solve holds and sends (krill_dist_layout). */
typedef struct cli_rank_load {
    int64_t rows, nnz_diag, nnz_off;
    int64_t halo;                /* x entries received per SpMV */
    int64_t sent;                /* x entries sent per SpMV */
    int recv_ranks, send_ranks;
    int permuted;                /* the rows are METIS's (krill_dist_layout.permuted) */
    int halo_path;               /* krill_dist_layout's: 0 host, 1 NCCL */
    double halo_timed_ms[2];     /* and its timing at setup (0: not timed) */
} cli_rank_load;

/* One process, or the ranks of MPI_COMM_WORLD when mpirun started `krill solve` in a build
 * with MPI (solve_ranks.c; Open MPI, MPICH's Hydra and PMIx launchers set the variables it
 * looks for). Without MPI each step is the local call. The krill calls are collective and
 * agree on failures, so every rank takes the same path; rank 0's own steps (making the
 * problem) are shared by one broadcast (cli_ranks_share). */
typedef struct cli_ranks {
    int on, rank, size;
} cli_ranks;

void cli_ranks_start(cli_ranks *m);             /* MPI_Init when started by mpirun */
void cli_ranks_end(const cli_ranks *m);         /* MPI_Finalize */
/* Rank 0's exit code, the problem's size and its solver, to every rank. */
int cli_ranks_share(const cli_ranks *m, int rc, cli_solve_report *r);
krill_status cli_ranks_ctx(const cli_ranks *m, const krill_ctx_opts *o, krill_ctx **ctx);
/* The matrix (distributed: rank 0's csr scattered, balanced by nonzeros or with metis by
 * METIS's parts, or with own_rows every rank's csr, its own rows, assembled); *rows: this
 * process's rows. One process: metis is a no-op. */
krill_status cli_ranks_mat(const cli_ranks *m, krill_ctx *ctx, const krill_csr *csr,
                           int own_rows, int metis, const char *format, krill_mat **mat,
                           int64_t *rows);
/* Whether krill_dist_mat_scatter_metis works in this build (MPI and METIS). */
int cli_ranks_have_metis(void);
/* Distributed, A a krill binary file: every rank reads its own rows (*csr, global columns;
 * krill_dist_read_rows), with make_b also its part of b = A*1 (*b, malloc'ed, the bits
 * krill_csr_spmv_ref gives), and rank 0 gets the half bandwidth max |i - j| of A. */
krill_status cli_ranks_read(const cli_ranks *m, krill_ctx *ctx, const char *path, int make_b,
                            krill_csr **csr, double **b, int32_t *bandwidth);
/* host (rank 0's whole vector) -> v, or with gather v -> host */
krill_status cli_ranks_vec(const cli_ranks *m, const krill_mat *mat, double *host,
                           krill_vec *v, int gather);
/* Every rank's load into `load` (size entries, rank 0; NULL elsewhere). */
void cli_ranks_load(const cli_ranks *m, const krill_mat *mat, cli_rank_load *load);

void cli_report_human(FILE *out, const cli_solve_report *report);
#define CLI_MAX_RUNS 1000

/* --runs N: N more solves of A x = b from x = 0 after the reported one (which is their
 * warm-up), without a monitor; *median = the median of their times.total. Collective under
 * MPI (every rank runs them). x holds the last solve's result. */
krill_status cli_solve_repeat(const krill_mat *a, const krill_pc *pc, const krill_vec *b,
                              krill_vec *x, const krill_solver_opts *opts, int runs,
                              double *median);
void cli_report_json(FILE *out, const cli_solve_report *report);

/* The live progress / per-iteration monitor installed as the solver's callback. */
typedef struct cli_progress {
    int live;                    /* "\r  iter N  relres R" on stderr, at most ~10 per second */
    int every_iteration;         /* one line per iteration on stderr (--monitor) */
    double bnorm;                /* to print relative residuals */
    double last_print;           /* monotonic seconds of the last live update */
    int printed;                 /* a live line is on screen and must be cleared */
} cli_progress;

int cli_progress_monitor(int iteration, double residual_norm, void *progress);
void cli_progress_clear(cli_progress *progress);

/* ---- the format comparison (cmd_formats.c measures; formats_report.c prints the table,
 * JSON and CSV; svg.c draws the chart) ----------------------------------------------- */
typedef struct cli_format_row {
    char name[64];               /* as asked: "csr", "csr:vector", "auto" */
    int measured;                /* 0: not built or SpMV failed, `error` says why */
    int spmv_failed;             /* built, but an SpMV or its timing failed */
    char error[256];
    char chosen[64];             /* auto: the format it built; "" otherwise */
    char choice[640];            /* auto: why (krill_mat_choice); "" otherwise */
    krill_format_stats stats;    /* krill_mat_stats of the built matrix */
    double build_seconds;        /* krill_mat_create, host-to-device copy included */
    double spmv_seconds;         /* median of the timed SpMVs */
    double max_rel_diff;         /* max_i |y_i - yref_i| / (|A| |x|)_i against the reference */
} cli_format_row;

typedef struct cli_formats_report {
    const char *source;          /* file name or generator spec */
    const char *source_note;     /* "generated" or "Matrix Market file" */
    const char *device;          /* krill_ctx_describe */
    int on_gpu;
    const char *clock;           /* how SpMVs were timed */
    krill_format_stats matrix;   /* the CSR's row and run statistics (the paper's N, N_z, ...) */
    int reordered;               /* --reorder rcm */
    int32_t bandwidth_before, bandwidth_after;   /* half bandwidth max |i - j| */
    int warmup, reps;
    double diff_bound;           /* 2 gamma_K: the largest max_rel_diff rounding explains */
    cli_format_row *rows;
    int n_rows;
    int csr_row, cusparse_row, fastest_row;      /* indices into rows, -1 = none */
} cli_formats_report;

/* Derived figures of a measured row: bytes moved by one SpMV (matrix + x read once + y
 * written once), GB/s, GFLOP/s (2 nnz flops), and ratios to the csr and cusparse rows
 * (NaN where the reference row is missing or not measured). */
double cli_format_bytes_moved(const cli_format_row *row);
double cli_format_gbps(const cli_format_row *row);
double cli_format_gflops(const cli_format_row *row);
double cli_format_bytes_vs_csr(const cli_formats_report *report, const cli_format_row *row);
double cli_format_speedup_vs_cusparse(const cli_formats_report *report,
                                      const cli_format_row *row);

void cli_formats_table(FILE *out, const cli_formats_report *report);
void cli_formats_json(FILE *out, const cli_formats_report *report);
void cli_formats_csv(FILE *out, const cli_formats_report *report);
/* The two-panel horizontal bar chart (memory in MB; SpMV time in microseconds) as SVG. */
void cli_formats_svg(FILE *out, const cli_formats_report *report);

/* ---- the APSP report (cmd_apsp.c loads and solves; apsp_report.c prints the summary and
 * the JSON, and shows the progress line) -------------------------------------------- */
typedef struct cli_apsp_report {
    const char *source;          /* file name or generator spec */
    int generated;               /* --gen: graph.format is AUTO */
    krill_graph_info graph;      /* from the reader, or counted from a generated graph */
    double load_seconds;         /* reading or generating the graph */
    krill_apsp_weight weight;
    const char *weight_why;      /* why this weight type */
    const char *device;          /* krill_ctx_describe */
    int threads;                 /* OpenMP threads of a CPU context, else 0 */
    krill_apsp_info info;        /* from krill_apsp_solve */
    const krill_apsp *result;    /* NULL when the solve failed (a negative cycle) */
    int64_t unreachable;         /* krill_apsp_summary */
    double max_finite;
    uint64_t checksum;
    int peak_ok;                 /* krill_apsp_peak succeeded */
    double peak;                 /* its relaxations per second */
    int path_asked;              /* --path U V */
    int32_t path_from, path_to;
    const int32_t *path;         /* its vertices, path_len of them (0: unreachable) */
    int32_t path_len;
    const char *out_path;        /* --out, or NULL */
    const char *pred_path;       /* --pred, or NULL */
} cli_apsp_report;

void cli_apsp_human(FILE *out, const cli_apsp_report *report);
void cli_apsp_json(FILE *out, const cli_apsp_report *report);
/* "%.0f" for int32, "%.9g" for float, "%.17g" for double, "inf" for +infinity */
void cli_apsp_format_dist(char *buf, size_t len, krill_apsp_weight weight, double value);

/* The live progress line "\r  apsp  37%" on stderr (a krill_apsp_progress_fn): shown once
 * the solve has run for a second, updated at most ~10 times a second. */
typedef struct cli_apsp_progress {
    double start;                /* cli_seconds() when the solve began */
    double last_print;
    int printed;                 /* a line is on screen and must be cleared */
} cli_apsp_progress;

int cli_apsp_progress_show(double fraction, void *progress);
void cli_apsp_progress_clear(cli_apsp_progress *progress);

double cli_seconds(void);        /* monotonic wall clock */

#endif
