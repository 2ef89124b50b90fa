/* bench/bench_common.h - what the benchmark programs share: a clock that times work queued
 * on a context (CUDA events on the GPU, the host clock on the CPU), medians, a loop that
 * repeats a unit of work and takes the medians of its figures, the command-line loop and
 * list parsing, loading a matrix by SPEC or file, and the binary dump that the peer scripts
 * read.
 *
 * The binary dump (all little-endian, no padding):
 *   matrix: "KRILLCSR" (8 bytes), int64 n_rows, int64 n_cols, int64 nnz,
 *           int64 row_ptr[n_rows + 1], int32 col[nnz], float64 val[nnz]
 *   vector: "KRILLVEC" (8 bytes), int64 n, float64 x[n]
 * It exists because a 2-million-row Matrix Market file is ~300 MB of text that takes the
 * peers (scipy.io.mmread) minutes to parse; numpy.fromfile reads the dump in a second. */
#ifndef KRILL_BENCH_COMMON_H
#define KRILL_BENCH_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include "krill/csr.h"
#include "krill/ctx.h"

/* Median of n values (n >= 1); v is left unchanged. */
double bench_median(const double *v, int n);
double bench_min(const double *v, int n);
double bench_max(const double *v, int n);

/* A clock for work queued on ctx. On a CUDA context it records events on the context's
 * stream, so it measures device time between start and stop without host gaps; on the CPU
 * it reads krill_wtime. stop waits for the queued work and returns the seconds elapsed. */
typedef struct bench_clock bench_clock;
krill_status bench_clock_create(krill_ctx *ctx, bench_clock **clock);
krill_status bench_clock_start(bench_clock *clock);
krill_status bench_clock_stop(bench_clock *clock, double *seconds);
void bench_clock_destroy(bench_clock **clock);
const char *bench_clock_kind(const bench_clock *clock);   /* "cuda-events" or "host" */

/* Repeat one unit of work and take medians (the timing loop that bench_apsp and later
 * programs share). `work` does the unit once and fills `count` figures of it (seconds,
 * usually: the unit's own timings, or what bench_clock measured around it). It runs
 * `warmup` times with its figures dropped, then `runs` times; medians[k] = the median of
 * figure k over the runs (each figure its own median). samples (may be NULL): room for
 * runs x count, one row per run. Stops at the first failing call and returns its status;
 * medians are then left at 0. */
typedef krill_status (*bench_work_fn)(void *user, double *figures);
krill_status bench_repeat(bench_work_fn work, void *user, int warmup, int runs, int count,
                          double *samples, double *medians);

/* A comma-separated list of integers in [lo, hi] into v (at most max); 0 on success, -1 on
 * an empty or bad list (a non-number, a value out of range, too many). */
int bench_parse_ints(const char *text, int *v, int max, int *count, int lo, int hi);

/* The next item of a comma-separated list: copies it into item (size bytes) and advances
 * *p past it and its comma. Returns 0, or -1 at the end of the list or on an empty or
 * too long item. */
int bench_list_next(const char **p, char *item, size_t size);

/* A matrix by name: a path to an existing file is read as Matrix Market, anything else
 * is a krill_gen SPEC. *seconds receives the load time. */
krill_status bench_load_matrix(const char *name, krill_csr **csr, double *seconds);

/* b = A * 1 on the host (krill_csr_spmv_ref): the right-hand side every solve benchmark
 * uses, so that the peers solve the same system. *b is allocated with krill_alloc. */
krill_status bench_rhs_ones(const krill_csr *a, double **b);

/* "cpu" / "gpu" (also "cuda") -> device; returns 0 on success, -1 for an unknown name. */
int bench_parse_device(const char *text, krill_device *device);

/* The kind of value a command-line option takes (bench_opt.kind), and what it sets. */
typedef enum bench_opt_kind {
    BENCH_OPT_FLAG,      /* no value: the int field is set to 1 */
    BENCH_OPT_INT,       /* int field, by atoi */
    BENCH_OPT_DOUBLE,    /* double field, by atof */
    BENCH_OPT_STRING,    /* const char * field: the argument itself (argv's, writable) */
    BENCH_OPT_DEVICE,    /* krill_device field, by bench_parse_device */
    BENCH_OPT_CHOICE,    /* int field: the index of the value in choices */
    BENCH_OPT_PARSE      /* any field, by the entry's parse function */
} bench_opt_kind;

/* The parser of a BENCH_OPT_PARSE value: sets *field from value and returns 0, or returns
 * -1 after printing on stderr why value is refused. name is the option's ("--threads"). */
typedef int (*bench_opt_parse_fn)(const char *name, const char *value, void *field);

/* One option of a benchmark's command line: its name ("--threads"), the kind of its value,
 * the field it sets, for BENCH_OPT_CHOICE the names allowed (NULL-terminated) and for
 * BENCH_OPT_PARSE the function that reads the value. A table of them ends with an entry
 * whose name is NULL. */
typedef struct bench_opt {
    const char *name;
    bench_opt_kind kind;
    void *field;
    const char *const *choices;
    bench_opt_parse_fn parse;
} bench_opt;

/* The options the device benchmarks share (bench_parse_options reads them when given one):
 * --device (default: the GPU when there is one), --threads (0 = OpenMP's default), --csv and
 * --json (NULL: not written). */
typedef struct bench_run_opts {
    krill_device device;
    int threads;
    const char *csv_path, *json_path;
} bench_run_opts;

/* The command-line loop of the benchmarks. Options may come anywhere; the positional
 * arguments are moved, in order, to argv[1..] and counted in *n_positional; with
 * n_positional NULL there are none: every argument is read as an option. -h / --help
 * prints usage to stdout and exits 0. An option of opts, or of run (may be NULL: then they
 * are unknown), sets its field: run is filled with its defaults first; opts' fields keep
 * theirs when absent; the last one given wins. Returns 0, or -1 after printing on stderr
 * "PROG: OPT needs a value", "PROG: unknown option OPT" and the usage, or
 * "PROG: OPT: 'VALUE' is not cpu or gpu" (a device) / "... is not a, b or c" (a choice),
 * or after the parse function of a BENCH_OPT_PARSE option refused its value. */
int bench_parse_options(int argc, char **argv, const char *prog, const bench_opt *opts,
                        bench_run_opts *run, void (*usage)(FILE *f), int *n_positional);

/* The names a benchmark runs: the n positional arguments at argv[1..] (as
 * bench_parse_options leaves them), or with none the NULL-terminated defaults. Points
 * *names at them and returns their count. */
int bench_names(char **argv, int n, const char *const *defaults, const char *const **names);

/* A file-name-safe form of a SPEC or path: "poisson3d:128" -> "poisson3d_128". */
void bench_safe_name(const char *name, char *out, size_t size);

/* The binary dump described above. */
krill_status bench_dump_csr(const char *path, const krill_csr *a);
krill_status bench_dump_vec(const char *path, const double *x, int64_t n);

/* Write s as a JSON string literal (quoted, escaped). */
void bench_json_string(FILE *f, const char *s);
/* Write "key": v (%.6e; null when v is NaN or infinite), then ", " unless last. */
void bench_json_number(FILE *f, const char *key, double v, int last);
/* Write , "key": v (as bench_json_number): a field after others. */
void bench_json_next_number(FILE *f, const char *key, double v);

/* A context for the device asked for (threads: 0 = OpenMP's default). Prints what failed. */
krill_status bench_ctx_create(krill_device device, int threads, krill_ctx **ctx);

#endif
