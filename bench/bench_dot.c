/* bench/bench_dot.c - the reproducible (Ozaki-scheme) dot product: its accuracy against MPFR
 * (Table 3 of the OzBLAS paper, for DOT) and its speed beside cuBLAS ddot.
 *
 *   bench_dot accuracy [--n N] [--trials T] [--phis LIST] [--slices LIST] [--threads T]
 *                      [--md FILE] [--csv FILE] [--write-gpu FILE | --read-gpu FILE]
 *   bench_dot gemv [--n N] [--k K] [--trials T] [--phis LIST] [--slices LIST] [--threads T]
 *                  [--md FILE] [--write-gpu FILE | --read-gpu FILE]
 *   bench_dot speed [--device gpu|cpu] [--threads T] [--sizes LIST] [--phi P] [--reps R]
 *                   [--warmup W] [--no-check] [--md FILE] [--csv FILE]
 *
 * Inputs (both parts): krill_gen_dot_vectors(n, phi, seed): x_i, y_i = (rand - 0.5) *
 * exp(phi * randn), the same bits on every machine; trial t uses seed t + 1, so trial 0 is
 * what `krill dot --n N --phi P` computes.
 *
 * accuracy: for every phi and T trials of length N (default 1000, the k of the paper's
 * 1000^3 GEMM; the paper takes the maximum over its 10^6 entries, that is 10^6 dot
 * products of length 1000), the maximum over the trials of |c - r| / |r|, where r is the
 * exact dot product computed with MPFR and rounded to nearest (mpfr_get_d, MPFR_RNDN), as
 * in the paper. Every krill column is the public call krill_vec_dot on a context in the
 * column's mode (krill_ctx_set_repro). Columns: plain double on the CPU (OpenMP, static
 * schedule), and when a GPU is present plain on the GPU (cuBLAS ddot and krill), then
 * KRILL_REPRO_OZAKI with S slices, KRILL_REPRO_OZAKI_FAST with S slices, and exact mode
 * (slices = 0), which must be 0. The reproducible modes are computed on the CPU context and,
 * with a GPU, again on the GPU, whose bits must be the CPU's.
 * MPFR's sum is exact: the accumulator has enough bits for every partial sum (from the
 * largest product's leading bit, plus log2 N carries, down to the smallest product's last
 * bit), and every mpfr_fma must report no rounding (its ternary value); the program checks
 * both. Without MPFR at build time the accuracy part says so and exits 77 (skipped).
 * The GPU machine may have no MPFR and the MPFR machine no GPU: --write-gpu FILE (GPU, no
 * MPFR needed) computes the plain GPU columns (cuBLAS ddot, krill) for every phi and trial
 * and writes them to FILE, one line "phi seed column n value" each (%a: exact; column 0
 * cuBLAS, 1 krill) after a "# GPU:" line naming the device; --read-gpu FILE (MPFR, no GPU
 * needed) takes those columns from FILE, which must hold every (phi, seed) of the run at
 * the run's n.
 *
 * gemv: the same table for GEMV-T, y = V'w with V an N x K matrix (default K 64, T 16
 * trials): column j of trial t is krill_gen_dot_vectors' x for seed 1000 (t + 1) + j, w its
 * y for seed t + 1; the maximum over all K entries and trials of the relative error against
 * MPFR. The reproducible modes compute y with krill_ozaki_mdot (the GEMM-ization: w split
 * once, its slices meeting every column's), plain with one OpenMP dot per column, on the CPU;
 * and cuBLAS dgemv (CUBLAS_OP_T) through a file as for DOT: --write-gpu on the GPU machine
 * (lines "phi seed column n value"), --read-gpu where MPFR is.
 *
 * speed: for each n = 2^L (L in LIST, default 20..26), the median time of one dot product:
 * cuBLAS ddot (GPU only, CUBLAS_POINTER_MODE_DEVICE as in the paper: the result stays in
 * device memory), krill's plain dot (krill_blas_dot: result in context memory, no wait),
 * the Ozaki dot (krill_ozaki_dot: a pass for the stats of x and y -- max |x_i| and the
 * lowest set bit -- then the dot pass, result in context memory, no wait) in exact mode and
 * with S = 2 and S = 3 slices, and exact mode given the stats (krill_ozaki_dot_stats: one
 * pass; the case where the kernel that wrote the vector also produced its stats; they are
 * computed once with krill_ozaki_stats before timing). Exact mode runs its fast path first
 * (ozaki/ozaki_impl.h: one pass of a compensated sum that decides well-conditioned dots; only
 * undecided ones take the stats and products passes): "Ozaki exact" and "exact, stats given"
 * are with it (the tuning's default), "exact, fast path off" is the stats and products
 * passes alone (the tuning's fast_path = 0); the check's note says what the fast path did.
 * Timing: W warm-up calls (timed together, to size the batches), then R batches of B calls,
 * B such that a batch takes about 10 ms (at least one call), each batch timed with
 * bench_clock (CUDA events on the context's stream / the host clock); the figure is the
 * median over batches of batch time / B. When a pair x, y is under 256 MiB, the program
 * keeps enough copies to pass 256 MiB (at most 64) and rotates through them, so each call
 * reads from memory and not from the L2 cache (50 MB on an H100).
 * Bytes moved = 16 n (x and y read once: what a dot needs); GB/s = bytes / time, so a
 * method that reads the vectors twice shows half the GB/s. `ratio` = time / the reference
 * time (cuBLAS ddot on the GPU, krill's plain dot on the CPU).
 * Check (unless --no-check): each reproducible result must have the bits of the same mode
 * computed by krill_ozaki_dot on a second context (the CPU for a GPU run; one thread for a
 * CPU run) without the fast path, and exact mode must equal krill_vec_dot's exact mode there; plain
 * results must lie within n eps sum |x_i y_i| of exact mode's. A failed check prints
 * "wrong result" and the program exits 1. */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#ifdef KRILL_HAVE_MPFR
#include <mpfr.h>
#endif
#ifdef KRILL_HAVE_CUDA
#include <cublas_v2.h>
#endif

#include "bench/bench_common.h"
#include "core/core_impl.h"
#include "krill/gen.h"
#include "ozaki/ozaki_impl.h"
#include "krill/vec.h"
#include "solver/solver_impl.h"

#define EXIT_SKIPPED 77
#define MAX_LIST 16
#define MAX_METHODS 24
#define CACHE_FLUSH_BYTES (256.0 * 1024 * 1024)   /* 5x an H100's L2 */
#define MAX_COPIES 64
#define BATCH_SECONDS 0.01      /* a timed batch lasts about this long */
#define MAX_BATCH 100000

/* ---- options ------------------------------------------------------------------------------ */

typedef struct dot_opts {
    int speed;                   /* 0: accuracy, 1: speed */
    krill_device device;         /* speed */
    int threads;                 /* 0 = OpenMP's default */
    int n, trials;               /* accuracy */
    int gemv, k;                 /* gemv: the accuracy table of V'w, K columns */
    double phis[MAX_LIST];
    int n_phis;
    int slices[MAX_LIST];
    int n_slices;
    int log2_sizes[MAX_LIST];    /* speed */
    int n_sizes;
    double phi;                  /* speed */
    int reps, warmup, check;
    const char *md_path, *csv_path;
    const char *write_gpu_path, *read_gpu_path;   /* accuracy: the GPU columns' values file */
} dot_opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_dot accuracy [--n N] [--trials T] [--phis LIST] [--slices LIST]\n"
            "                          [--threads T] [--md FILE] [--csv FILE]\n"
            "                          [--write-gpu FILE | --read-gpu FILE]\n"
            "       bench_dot gemv [--n N] [--k K] [--trials T] [--phis LIST] [--slices LIST]\n"
            "                      [--threads T] [--md FILE] [--write-gpu FILE | --read-gpu FILE]\n"
            "       bench_dot speed [--device gpu|cpu] [--threads T] [--sizes LIST] [--phi P]\n"
            "                       [--reps R] [--warmup W] [--no-check] [--md FILE] [--csv FILE]\n"
            "accuracy: max relative error against MPFR over T trials (default N 1000, T 1000,\n"
            "  phis 0,1,2,4,8, slices 2,3,4); speed: median time per dot, sizes are log2 n\n"
            "  (default 20,21,...,26), phi default 4 (the paper's), R 11 batches of about\n"
            "  10 ms, W 5 warm-up calls; --no-check skips the bitwise checks.\n");
}

/* Parse a comma-separated list of numbers into v (at most MAX_LIST); -1 on a bad list. */
static int parse_list(const char *text, double *v, int *count)
{
    const char *p = text;
    *count = 0;
    while (*p) {
        char *end = NULL;
        errno = 0;
        const double value = strtod(p, &end);
        if (end == p || errno == ERANGE || !isfinite(value) || *count >= MAX_LIST ||
            (*end != ',' && *end != '\0'))
            return -1;
        v[(*count)++] = value;
        p = *end == ',' ? end + 1 : end;
    }
    return *count > 0 ? 0 : -1;
}

static int parse_int_list(const char *text, int *v, int *count, int lo, int hi)
{
    double d[MAX_LIST];
    if (parse_list(text, d, count) != 0) return -1;
    for (int k = 0; k < *count; k++) {
        if (d[k] != floor(d[k]) || d[k] < lo || d[k] > hi) return -1;
        v[k] = (int)d[k];
    }
    return 0;
}

static int parse_int(const char *text, int *v, int lo, int hi)
{
    char *end = NULL;
    errno = 0;
    const long value = strtol(text, &end, 10);
    if (end == text || *end != '\0' || errno == ERANGE || value < lo || value > hi) return -1;
    *v = (int)value;
    return 0;
}

static int bad(const char *option, const char *value, const char *expected)
{
    fprintf(stderr, "bench_dot: %s expects %s, got '%s'\n", option, expected, value);
    return -1;
}

/* --threads and --k: an integer in [1, 4096] into the int *field. */
static int parse_1_4096(const char *name, const char *v, void *field)
{
    return parse_int(v, field, 1, 4096) ? bad(name, v, "an integer in [1, 4096]") : 0;
}

/* --n and --trials: an integer >= 1 into the int *field. */
static int parse_positive(const char *name, const char *v, void *field)
{
    return parse_int(v, field, 1, INT_MAX) ? bad(name, v, "an integer >= 1") : 0;
}

/* --reps: an integer in [1, 100000] into the int *field. */
static int parse_reps(const char *name, const char *v, void *field)
{
    return parse_int(v, field, 1, 100000) ? bad(name, v, "an integer >= 1") : 0;
}

/* --warmup: an integer in [0, 100000] into the int *field. */
static int parse_warmup(const char *name, const char *v, void *field)
{
    return parse_int(v, field, 0, 100000) ? bad(name, v, "an integer >= 0") : 0;
}

/* --phis: a list of phi in [0, 20] into the phis of the dot_opts *field. */
static int parse_phis(const char *name, const char *v, void *field)
{
    dot_opts *o = field;
    int rc = parse_list(v, o->phis, &o->n_phis) ? bad(name, v, "a list of numbers") : 0;
    for (int k = 0; k < o->n_phis && rc == 0; k++)
        if (!(o->phis[k] >= 0 && o->phis[k] <= KRILL_GEN_PHI_MAX))
            rc = bad(name, v, "values in [0, 20]");
    return rc;
}

/* --slices: a list of slice counts in [1, 64] into the slices of the dot_opts *field. */
static int parse_slices(const char *name, const char *v, void *field)
{
    dot_opts *o = field;
    return parse_int_list(v, o->slices, &o->n_slices, 1, 64)
               ? bad(name, v, "a list of integers in [1, 64]") : 0;
}

/* --sizes: a list of log2 n in [0, 30] into the log2_sizes of the dot_opts *field. */
static int parse_sizes(const char *name, const char *v, void *field)
{
    dot_opts *o = field;
    return parse_int_list(v, o->log2_sizes, &o->n_sizes, 0, 30)
               ? bad(name, v, "a list of log2 sizes in [0, 30]") : 0;
}

/* --phi: a number in [0, 20] into the double *field. */
static int parse_phi(const char *name, const char *v, void *field)
{
    double *phi = field;
    char *end = NULL;
    *phi = strtod(v, &end);
    return end == v || *end || !(*phi >= 0 && *phi <= KRILL_GEN_PHI_MAX)
               ? bad(name, v, "a number in [0, 20]") : 0;
}

/* The part (argv[1]: accuracy, gemv or speed), then its options into o
 * (bench_parse_options; there are no other positional arguments). */
static int parse_args(int argc, char **argv, dot_opts *o)
{
    int no_check = 0, rc = 0;    /* no_check: --no-check was given */
    const bench_opt opts[] = {
        {.name = "--device", .kind = BENCH_OPT_DEVICE, .field = &o->device},
        {.name = "--threads", .kind = BENCH_OPT_PARSE, .field = &o->threads,
         .parse = parse_1_4096},
        {.name = "--n", .kind = BENCH_OPT_PARSE, .field = &o->n, .parse = parse_positive},
        {.name = "--k", .kind = BENCH_OPT_PARSE, .field = &o->k, .parse = parse_1_4096},
        {.name = "--trials", .kind = BENCH_OPT_PARSE, .field = &o->trials,
         .parse = parse_positive},
        {.name = "--phis", .kind = BENCH_OPT_PARSE, .field = o, .parse = parse_phis},
        {.name = "--slices", .kind = BENCH_OPT_PARSE, .field = o, .parse = parse_slices},
        {.name = "--sizes", .kind = BENCH_OPT_PARSE, .field = o, .parse = parse_sizes},
        {.name = "--phi", .kind = BENCH_OPT_PARSE, .field = &o->phi, .parse = parse_phi},
        {.name = "--reps", .kind = BENCH_OPT_PARSE, .field = &o->reps, .parse = parse_reps},
        {.name = "--warmup", .kind = BENCH_OPT_PARSE, .field = &o->warmup,
         .parse = parse_warmup},
        {.name = "--no-check", .kind = BENCH_OPT_FLAG, .field = &no_check},
        {.name = "--md", .kind = BENCH_OPT_STRING, .field = &o->md_path},
        {.name = "--csv", .kind = BENCH_OPT_STRING, .field = &o->csv_path},
        {.name = "--write-gpu", .kind = BENCH_OPT_STRING, .field = &o->write_gpu_path},
        {.name = "--read-gpu", .kind = BENCH_OPT_STRING, .field = &o->read_gpu_path},
        {.name = NULL},
    };
    memset(o, 0, sizeof *o);
    o->device = KRILL_DEVICE_CUDA;
    o->n = 1000;
    o->trials = 1000;
    o->n_phis = 5;
    memcpy(o->phis, (double[]){ 0, 1, 2, 4, 8 }, 5 * sizeof(double));
    o->n_slices = 3;
    memcpy(o->slices, (int[]){ 2, 3, 4 }, 3 * sizeof(int));
    o->n_sizes = 7;
    for (int k = 0; k < 7; k++) o->log2_sizes[k] = 20 + k;
    o->phi = 4.0;
    o->reps = 11;
    o->warmup = 5;
    o->k = 64;
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        usage(stdout);
        exit(0);
    }
    if (argc < 2 || (strcmp(argv[1], "accuracy") != 0 && strcmp(argv[1], "speed") != 0 &&
                     strcmp(argv[1], "gemv") != 0)) {
        usage(stderr);
        rc = -1;
    } else {
        o->speed = strcmp(argv[1], "speed") == 0;
        o->gemv = strcmp(argv[1], "gemv") == 0;
        if (o->gemv) o->trials = 16;
        rc = bench_parse_options(argc - 1, argv + 1, "bench_dot", opts, NULL, usage, NULL);
    }
    o->check = !no_check;
    if (rc == 0 && o->write_gpu_path && o->read_gpu_path) {
        fprintf(stderr, "bench_dot: --write-gpu and --read-gpu exclude each other\n");
        rc = -1;
    }
    return rc;
}

/* ---- the dot products being compared ------------------------------------------------------ */

typedef enum dot_kind {
    DOT_CUBLAS,                  /* cublasDdot (GPU), result in device memory */
    DOT_VEC,                     /* krill_vec_dot (the public call) in the method's mode */
    DOT_BLAS,                    /* krill_blas_dot: plain, result in context memory */
    DOT_OZAKI,                   /* krill_ozaki_dot: stats pass + dot pass, context memory */
    DOT_OZAKI_STATS              /* krill_ozaki_dot_stats: the stats of x and y given */
} dot_kind;

typedef struct dot_method {
    char name[40];
    dot_kind kind;
    krill_repro_mode mode;
    int slices;
    int no_fast_path;            /* exact mode without its fast path (tuning fast_path = 0) */
} dot_method;

static int method_is_repro(const dot_method *m)
{
    return m->kind == DOT_OZAKI || m->kind == DOT_OZAKI_STATS ||
           (m->kind == DOT_VEC && m->mode != KRILL_REPRO_OFF);
}

static dot_method make_method(const char *name, dot_kind kind, krill_repro_mode mode,
                              int slices)
{
    dot_method m = { .kind = kind, .mode = mode, .slices = slices };
    const size_t len = strlen(name) < sizeof m.name ? strlen(name) : sizeof m.name - 1;
    memcpy(m.name, name, len);   /* the rest is zero */
    return m;
}

/* One dot of x and y (n entries in ctx's memory), the result written to `result` in ctx's
 * memory. Except for DOT_VEC (which returns the value to the host: on a GPU it waits) nothing
 * waits: the result is read later with krill_scalars_read. stats: for DOT_OZAKI_STATS, the
 * stats of x then of y (4 doubles in ctx's memory, krill_ozaki_stats). */
static krill_status run_dot(krill_ctx *ctx, const dot_method *m, int64_t n, krill_vec *x,
                            krill_vec *y, const double *stats, double *result)
{
    krill_status st = KRILL_OK;
    double value = 0.0;
    switch (m->kind) {
    case DOT_CUBLAS:
#ifdef KRILL_HAVE_CUDA
        {
            cublasHandle_t handle = (cublasHandle_t)ctx->cuda->cublas;
            cublasStatus_t cs = cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_DEVICE);
            if (cs == CUBLAS_STATUS_SUCCESS)
                cs = cublasDdot(handle, (int)n, krill_vec_data(x), 1, krill_vec_data(y), 1,
                                result);
            /* krill's own cuBLAS calls pass host scalars */
            const cublasStatus_t reset = cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST);
            if (cs == CUBLAS_STATUS_SUCCESS) cs = reset;
            if (cs != CUBLAS_STATUS_SUCCESS)
                st = krill_error(KRILL_ERR_DEVICE, "cublasDdot failed: %s",
                                 cublasGetStatusString(cs));
        }
#else
        st = krill_error(KRILL_ERR_UNSUPPORTED, "cuBLAS: built without CUDA");
#endif
        break;
    case DOT_VEC:
        KRILL_TRY(krill_vec_dot(x, y, &value));
        KRILL_TRY(krill_scalars_write(ctx, result, &value, 1));
        break;
    case DOT_BLAS:
        st = krill_blas_dot(ctx, n, krill_vec_data(x), krill_vec_data(y), result);
        break;
    case DOT_OZAKI:
        st = krill_ozaki_dot(ctx, n, krill_vec_data(x), krill_vec_data(y), result);
        break;
    case DOT_OZAKI_STATS:
        st = krill_ozaki_dot_stats(ctx, n, krill_vec_data(x), stats, krill_vec_data(y),
                                   stats + 2, result);
        break;
    }
cleanup:
    return st;
}

/* Put ctx in the mode `m` runs in (and exact mode's fast path on or off, process-wide). */
static krill_status set_mode(krill_ctx *ctx, const dot_method *m)
{
    krill_ozaki_tuning t;
    krill_ozaki_tuning_get(&t);
    t.fast_path = !m->no_fast_path;
    krill_ozaki_tuning_set(&t);
    return method_is_repro(m) ? krill_ctx_set_repro(ctx, m->mode, m->slices)
                              : krill_ctx_set_repro(ctx, KRILL_REPRO_OFF, 0);
}

/* Run `m` once and read its result to the host. */
static krill_status dot_value(krill_ctx *ctx, const dot_method *m, int64_t n, krill_vec *x,
                              krill_vec *y, const double *stats, double *slot, double *value)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(set_mode(ctx, m));
    KRILL_TRY(run_dot(ctx, m, n, x, y, stats, slot));
    KRILL_TRY(krill_scalars_read(ctx, slot, value, 1));
cleanup:
    return st;
}

static double rel_error(double value, double ref)
{
    if (value == ref) return 0.0;
    return ref != 0.0 ? fabs(value - ref) / fabs(ref) : INFINITY;
}

/* ---- accuracy ------------------------------------------------------------------------------ */

#ifdef KRILL_HAVE_MPFR
/* The exact x'y rounded to nearest (ties to even), through MPFR. Returns 0, or -1 if an
 * operation rounded (it cannot with the precision below; checked anyway). */
static int reference_dot(int64_t n, const double *x, const double *y, double *out)
{
    int e_hi = INT_MIN, e_lo = INT_MAX, inexact = 0;
    for (int64_t i = 0; i < n; i++) {
        int ex = 0, ey = 0;
        if (x[i] == 0.0 || y[i] == 0.0) continue;
        frexp(x[i], &ex);
        frexp(y[i], &ey);
        /* |x_i y_i| < 2^(ex + ey); its last bit is worth at least 2^(ex + ey - 106) */
        if (ex + ey > e_hi) e_hi = ex + ey;
        if (ex + ey < e_lo) e_lo = ex + ey;
    }
    if (e_hi == INT_MIN) {   /* every product is zero */
        *out = 0.0;
        return 0;
    }
    int carries = 1;
    while (carries < 63 && ((int64_t)1 << carries) < n) carries++;
    const mpfr_prec_t prec = (mpfr_prec_t)(e_hi - (e_lo - 106) + carries + 1);
    mpfr_t acc, a, b;
    mpfr_init2(acc, prec);
    mpfr_init2(a, 53);
    mpfr_init2(b, 53);
    mpfr_set_zero(acc, 1);
    for (int64_t i = 0; i < n; i++) {
        mpfr_set_d(a, x[i], MPFR_RNDN);
        mpfr_set_d(b, y[i], MPFR_RNDN);
        inexact |= mpfr_fma(acc, a, b, acc, MPFR_RNDN) != 0;
    }
    *out = mpfr_get_d(acc, MPFR_RNDN);
    mpfr_clear(acc);
    mpfr_clear(a);
    mpfr_clear(b);
    return inexact ? -1 : 0;
}
#endif

/* ---- the plain GPU columns computed on one machine, read on another ----------------------- */

/* The two plain GPU methods, in the file's column order. */
static void gpu_value_methods(dot_method *m)
{
    m[0] = make_method("plain GPU (cuBLAS ddot)", DOT_CUBLAS, KRILL_REPRO_OFF, 0);
    m[1] = make_method("plain GPU (krill)", DOT_VEC, KRILL_REPRO_OFF, 0);
}

/* --write-gpu: every (phi, seed) of the run, both plain GPU methods, into o->write_gpu_path */
static int run_write_gpu(const dot_opts *o)
{
    krill_status st = KRILL_OK;
    krill_ctx *gpu = NULL;
    krill_vec *xg = NULL, *yg = NULL;
    double *x = NULL, *y = NULL, *slot = NULL;
    dot_method m[2];
    FILE *f = NULL;
    const int64_t n = o->n;
    if (krill_cuda_device_count() < 1) {
        printf("bench_dot accuracy --write-gpu: skipped: no GPU\n");
        return EXIT_SKIPPED;
    }
    gpu_value_methods(m);
    KRILL_TRY(bench_ctx_create(KRILL_DEVICE_CUDA, 0, &gpu));
    KRILL_ALLOC(x, n);
    KRILL_ALLOC(y, n);
    KRILL_TRY(krill_vec_create(gpu, n, &xg));
    KRILL_TRY(krill_vec_create(gpu, n, &yg));
    KRILL_MEM_ALLOC(gpu, slot, 1);
    f = fopen(o->write_gpu_path, "w");
    if (!f) {
        st = krill_error(KRILL_ERR_IO, "cannot write %s", o->write_gpu_path);
        goto cleanup;
    }
    fprintf(f, "# GPU: %s\n# phi seed column n value (column 0: cuBLAS ddot, 1: krill)\n",
            krill_ctx_describe(gpu));
    for (int p = 0; p < o->n_phis; p++)
        for (int t = 0; t < o->trials; t++) {
            double v[2];
            KRILL_TRY(krill_gen_dot_vectors(n, o->phis[p], (uint64_t)t + 1, x, y));
            KRILL_TRY(krill_vec_upload(xg, x));
            KRILL_TRY(krill_vec_upload(yg, y));
            for (int c = 0; c < 2; c++) {
                KRILL_TRY(dot_value(gpu, &m[c], n, xg, yg, NULL, slot, &v[c]));
                fprintf(f, "%a %d %d %lld %a\n", o->phis[p], t + 1, c, (long long)n, v[c]);
            }
        }
    if (fclose(f) != 0) st = krill_error(KRILL_ERR_IO, "cannot write %s", o->write_gpu_path);
    f = NULL;
    if (st == KRILL_OK)
        printf("wrote %s: %d phis x %d trials, n = %lld, on %s\n", o->write_gpu_path, o->n_phis,
               o->trials, (long long)n, krill_ctx_describe(gpu));
cleanup:
    if (st != KRILL_OK) fprintf(stderr, "bench_dot: %s\n", krill_last_error());
    if (f) fclose(f);
    krill_vec_destroy(&xg);
    krill_vec_destroy(&yg);
    krill_mem_free(gpu, slot);
    krill_ctx_destroy(&gpu);
    krill_free(x);
    krill_free(y);
    return st == KRILL_OK ? 0 : 1;
}

#ifdef KRILL_HAVE_MPFR
/* --read-gpu: values[(p trials + t) per + c] for the run's phi p, seed t + 1 and column
 * c < per (have[] marks the ones found), from lines "phi seed column n value" (DOT: per 2,
 * cuBLAS and krill; GEMV: per k, the entries of V'w), and the file's "# GPU:" line into
 * device (size cap). Lines of other phis, seeds or columns are skipped; another n, or a
 * line that does not parse, is an error naming the file and line. */
static krill_status gpu_values_read(const dot_opts *o, int per, double *values,
                                    unsigned char *have, char *device, size_t cap)
{
    krill_status st = KRILL_OK;
    char line[512];
    long line_no = 0;
    FILE *f = fopen(o->read_gpu_path, "r");
    if (!f) return krill_error(KRILL_ERR_IO, "cannot read %s", o->read_gpu_path);
    snprintf(device, cap, "(not named in the file)");
    while (fgets(line, sizeof line, f)) {
        double phi, v;
        int seed, c, p = 0;
        long long n;
        line_no++;
        if (!strncmp(line, "# GPU: ", 7)) {
            snprintf(device, cap, "%.*s", (int)strcspn(line + 7, "\n"), line + 7);
            continue;
        }
        if (line[0] == '#') continue;
        if (sscanf(line, "%la %d %d %lld %la", &phi, &seed, &c, &n, &v) != 5) {
            st = krill_error(KRILL_ERR_PARSE, "%s:%ld: expected \"phi seed column n value\"",
                             o->read_gpu_path, line_no);
            goto cleanup;
        }
        if (n != o->n) {
            st = krill_error(KRILL_ERR_ARG, "%s:%ld: n = %lld, this run's is %d",
                             o->read_gpu_path, line_no, n, o->n);
            goto cleanup;
        }
        while (p < o->n_phis && o->phis[p] != phi) p++;
        if (p == o->n_phis || seed < 1 || seed > o->trials || c < 0 || c >= per) continue;
        values[((size_t)p * o->trials + seed - 1) * per + c] = v;
        have[((size_t)p * o->trials + seed - 1) * per + c] = 1;
    }
    if (ferror(f)) st = krill_error(KRILL_ERR_IO, "cannot read %s", o->read_gpu_path);
cleanup:
    fclose(f);
    return st;
}
#endif

/* Columns of the accuracy table: where each runs. */
typedef struct acc_column {
    dot_method method;
    int on_gpu_only;             /* cuBLAS, krill plain on the GPU */
    int file_column;             /* on_gpu_only: its column in --read-gpu's file */
    double max_err[MAX_LIST];    /* per phi */
    long gpu_differs[MAX_LIST];  /* reproducible modes: GPU bits != CPU bits */
    long not_exact[MAX_LIST];    /* exact mode: trials whose value != MPFR's */
} acc_column;

static int acc_columns(const dot_opts *o, int have_gpu, acc_column *cols)
{
    int n = 0;
    char name[40];
    cols[n++] = (acc_column){ .method = make_method("plain CPU (OpenMP)", DOT_VEC,
                                                    KRILL_REPRO_OFF, 0) };
    if (have_gpu) {
        dot_method m[2];
        gpu_value_methods(m);
        for (int c = 0; c < 2; c++)
            cols[n++] = (acc_column){ .method = m[c], .on_gpu_only = 1, .file_column = c };
    }
    for (int k = 0; k < o->n_slices; k++) {
        snprintf(name, sizeof name, "Ozaki S=%d", o->slices[k]);
        cols[n++] = (acc_column){ .method = make_method(name, DOT_VEC, KRILL_REPRO_OZAKI,
                                                        o->slices[k]) };
    }
    for (int k = 0; k < o->n_slices; k++) {
        snprintf(name, sizeof name, "fast S=%d", o->slices[k]);
        cols[n++] = (acc_column){ .method = make_method(name, DOT_VEC, KRILL_REPRO_OZAKI_FAST,
                                                        o->slices[k]) };
    }
    cols[n++] = (acc_column){ .method = make_method("exact", DOT_VEC, KRILL_REPRO_OZAKI, 0) };
    return n;
}

static void acc_write_table(FILE *f, const dot_opts *o, const acc_column *cols, int n_cols,
                            int markdown)
{
    if (markdown) {
        fprintf(f, "| phi |");
        for (int c = 0; c < n_cols; c++) fprintf(f, " %s |", cols[c].method.name);
        fprintf(f, "\n|---:|");
        for (int c = 0; c < n_cols; c++) fprintf(f, "---:|");
        fprintf(f, "\n");
    } else {
        fprintf(f, "%-5s", "phi");
        for (int c = 0; c < n_cols; c++) fprintf(f, " %24s", cols[c].method.name);
        fprintf(f, "\n");
    }
    for (int p = 0; p < o->n_phis; p++) {
        fprintf(f, markdown ? "| %g |" : "%-5g", o->phis[p]);
        for (int c = 0; c < n_cols; c++) {
            char cell[48];
            if (cols[c].max_err[p] == 0.0)
                snprintf(cell, sizeof cell, "0");
            else
                snprintf(cell, sizeof cell, "%.2e", cols[c].max_err[p]);
            fprintf(f, markdown ? " %s |" : " %24s", cell);
        }
        fprintf(f, "\n");
    }
}

static int run_accuracy(const dot_opts *o)
{
    int rc = 1;
#ifndef KRILL_HAVE_MPFR
    (void)o;
    (void)acc_columns;
    (void)acc_write_table;
    (void)dot_value;
    (void)rel_error;
    printf("bench_dot accuracy: skipped: built without MPFR (install libmpfr-dev and "
           "reconfigure); the reference is MPFR's exact dot product\n");
    rc = EXIT_SKIPPED;
#else
    krill_status st = KRILL_OK;
    krill_ctx *cpu = NULL, *gpu = NULL;
    krill_vec *xc = NULL, *yc = NULL, *xg = NULL, *yg = NULL;
    double *x = NULL, *y = NULL, *slot_cpu = NULL, *slot_gpu = NULL;
    acc_column cols[MAX_METHODS];
    long failures = 0;
    const int from_file = o->read_gpu_path != NULL;
    const int have_gpu = !from_file && krill_cuda_device_count() > 0;
    const int64_t n = o->n;
    const int n_cols = acc_columns(o, have_gpu || from_file, cols);
    double *file_values = NULL;
    unsigned char *file_have = NULL;
    char file_device[256] = "";
    FILE *csv = NULL;

    KRILL_TRY(bench_ctx_create(KRILL_DEVICE_CPU, o->threads, &cpu));
    KRILL_ALLOC(x, n);
    KRILL_ALLOC(y, n);
    KRILL_TRY(krill_vec_wrap(cpu, n, x, &xc));
    KRILL_TRY(krill_vec_wrap(cpu, n, y, &yc));
    KRILL_MEM_ALLOC(cpu, slot_cpu, 1);
    if (from_file) {
        file_values = calloc((size_t)o->n_phis * o->trials * 2, sizeof *file_values);
        file_have = calloc((size_t)o->n_phis * o->trials * 2, 1);
        if (!file_values || !file_have) {
            st = krill_error(KRILL_ERR_ALLOC, "GPU values of %d x %d trials", o->n_phis,
                             o->trials);
            goto cleanup;
        }
        KRILL_TRY(gpu_values_read(o, 2, file_values, file_have, file_device,
                                  sizeof file_device));
    }
    if (have_gpu) {
        KRILL_TRY(bench_ctx_create(KRILL_DEVICE_CUDA, 0, &gpu));
        KRILL_TRY(krill_vec_create(gpu, n, &xg));
        KRILL_TRY(krill_vec_create(gpu, n, &yg));
        KRILL_MEM_ALLOC(gpu, slot_gpu, 1);
    }
    printf("accuracy: n = %lld, %d trials per phi (seeds 1..%d), CPU: %s%s%s\n",
           (long long)n, o->trials, o->trials, krill_ctx_describe(cpu), gpu ? ", GPU: " : "",
           gpu ? krill_ctx_describe(gpu)
               : from_file ? " (plain GPU columns from --read-gpu's file)"
                           : " (no GPU: GPU columns left out)");
    for (int p = 0; p < o->n_phis; p++) {
        for (int c = 0; c < n_cols; c++) cols[c].max_err[p] = 0.0;
        for (int t = 0; t < o->trials; t++) {
            double ref = 0.0;
            KRILL_TRY(krill_gen_dot_vectors(n, o->phis[p], (uint64_t)t + 1, x, y));
            if (reference_dot(n, x, y, &ref) != 0) {
                fprintf(stderr, "bench_dot: MPFR's sum rounded (phi %g, seed %d)\n", o->phis[p],
                        t + 1);
                failures++;
            }
            if (gpu) {
                KRILL_TRY(krill_vec_upload(xg, x));
                KRILL_TRY(krill_vec_upload(yg, y));
            }
            for (int c = 0; c < n_cols; c++) {
                acc_column *col = &cols[c];
                double value = 0.0, value_gpu = 0.0;
                if (col->on_gpu_only && from_file) {
                    const size_t at = ((size_t)p * o->trials + t) * 2 + col->file_column;
                    if (!file_have[at]) {
                        st = krill_error(KRILL_ERR_ARG, "%s: no value for phi %g, seed %d, "
                                         "column %d", o->read_gpu_path, o->phis[p], t + 1,
                                         col->file_column);
                        goto cleanup;
                    }
                    value = file_values[at];
                } else if (col->on_gpu_only) {
                    KRILL_TRY(dot_value(gpu, &col->method, n, xg, yg, NULL, slot_gpu, &value));
                } else {
                    KRILL_TRY(dot_value(cpu, &col->method, n, xc, yc, NULL, slot_cpu, &value));
                    if (gpu && method_is_repro(&col->method)) {
                        KRILL_TRY(dot_value(gpu, &col->method, n, xg, yg, NULL, slot_gpu,
                                            &value_gpu));
                        if (memcmp(&value, &value_gpu, sizeof value) != 0) {
                            if (col->gpu_differs[p]++ == 0)
                                fprintf(stderr, "bench_dot: %s, phi %g, seed %d: CPU %a, "
                                        "GPU %a\n", col->method.name, o->phis[p], t + 1, value,
                                        value_gpu);
                            failures++;
                        }
                    }
                }
                const double err = rel_error(value, ref);
                if (err > col->max_err[p]) col->max_err[p] = err;
                if (col->method.mode == KRILL_REPRO_OZAKI &&
                    col->method.slices == 0 && err != 0.0) {
                    if (col->not_exact[p]++ == 0)
                        fprintf(stderr, "bench_dot: exact mode, phi %g, seed %d: %a, MPFR "
                                "%a\n", o->phis[p], t + 1, value, ref);
                    failures++;
                }
            }
        }
        printf("phi %g done\n", o->phis[p]);
        fflush(stdout);
    }
    printf("\nmax relative error against MPFR (rounded to nearest), n = %lld, %d trials:\n",
           (long long)n, o->trials);
    acc_write_table(stdout, o, cols, n_cols, 0);
    if (o->md_path) {
        FILE *md = fopen(o->md_path, "w");
        if (!md) {
            st = krill_error(KRILL_ERR_IO, "cannot write %s", o->md_path);
            goto cleanup;
        }
        fprintf(md, "### DOT accuracy: max relative error against MPFR (n = %lld, %d trials "
                    "per phi)\n\nInputs (rand - 0.5) * exp(phi * randn) (krill_gen_dot_vectors,"
                    " seeds 1..%d). CPU: %s%s%s. Reproducible modes computed on the CPU%s. "
                    "0 = correctly rounded in every trial.\n\n",
                (long long)n, o->trials, o->trials, krill_ctx_describe(cpu),
                gpu ? "; GPU: " : from_file ? "; plain GPU columns from " : "",
                gpu ? krill_ctx_describe(gpu) : from_file ? o->read_gpu_path : "",
                gpu ? " and on the GPU (identical bits required)" : " (no GPU in this run)");
        if (from_file)
            fprintf(md, "The plain GPU columns were computed on %s by `bench_dot accuracy "
                        "--write-gpu` with the same n, phis and seeds.\n\n", file_device);
        acc_write_table(md, o, cols, n_cols, 1);
        fprintf(md, "\nChecks: %ld failure(s) (exact mode != MPFR, GPU bits != CPU bits, or "
                    "MPFR rounding).\n", failures);
        fclose(md);
    }
    if (o->csv_path) {
        csv = fopen(o->csv_path, "w");
        if (!csv) {
            st = krill_error(KRILL_ERR_IO, "cannot write %s", o->csv_path);
            goto cleanup;
        }
        fprintf(csv, "n,trials,phi,method,mode,slices,max_rel_error,gpu_differs,not_exact\n");
        for (int p = 0; p < o->n_phis; p++)
            for (int c = 0; c < n_cols; c++)
                fprintf(csv, "%lld,%d,%g,\"%s\",%d,%d,%.6e,%ld,%ld\n", (long long)n, o->trials,
                        o->phis[p], cols[c].method.name, (int)cols[c].method.mode,
                        cols[c].method.slices, cols[c].max_err[p], cols[c].gpu_differs[p],
                        cols[c].not_exact[p]);
    }
    if (failures) printf("wrong result: %ld check(s) failed (see stderr)\n", failures);
    rc = failures ? 1 : 0;
cleanup:
    if (st != KRILL_OK) fprintf(stderr, "bench_dot: %s\n", krill_last_error());
    if (csv) fclose(csv);
    free(file_values);
    free(file_have);
    krill_vec_destroy(&xc);
    krill_vec_destroy(&yc);
    krill_vec_destroy(&xg);
    krill_vec_destroy(&yg);
    krill_mem_free(cpu, slot_cpu);
    krill_mem_free(gpu, slot_gpu);
    krill_ctx_destroy(&cpu);
    krill_ctx_destroy(&gpu);
    krill_free(x);
    krill_free(y);
#endif
    return rc;
}

/* ---- GEMV accuracy ------------------------------------------------------------------------ */

/* y = V'w (k results in ctx's memory, the host on the CPU) in the column's mode. */
static krill_status gemv_values(krill_ctx *ctx, const dot_method *m, int64_t n, int k,
                                const double *v, const double *w, double *y)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(set_mode(ctx, m));
    if (method_is_repro(m)) {
        KRILL_TRY(krill_ozaki_mdot(ctx, n, k, v, n, w, y));
    } else {
        for (int j = 0; j < k; j++) KRILL_TRY(krill_blas_dot(ctx, n, v + (int64_t)j * n, w, y + j));
    }
cleanup:
    return st;
}

/* Trial t's V (n x k, column j: krill_gen_dot_vectors' x for seed 1000 (t + 1) + j) and w
 * (its y for seed t + 1) for phi; tmp: n doubles of scratch. */
static krill_status gemv_inputs(int64_t n, int k, double phi, int t, double *v, double *w,
                                double *tmp)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(krill_gen_dot_vectors(n, phi, (uint64_t)t + 1, tmp, w));
    for (int j = 0; j < k; j++)
        KRILL_TRY(krill_gen_dot_vectors(n, phi, 1000 * ((uint64_t)t + 1) + j,
                                        v + (int64_t)j * n, tmp));
cleanup:
    return st;
}

/* gemv --write-gpu: V'w by cuBLAS dgemv (krill_cuda_gemv_t) for every (phi, seed) of the
 * run, one line "phi seed column n value" per entry of V'w (%a), after a "# GPU:" line */
static int run_gemv_write_gpu(const dot_opts *o)
{
    int rc = 1;
#ifndef KRILL_HAVE_CUDA
    (void)o;
    (void)gemv_inputs;
    printf("bench_dot gemv --write-gpu: skipped: built without CUDA\n");
    rc = EXIT_SKIPPED;
#else
    krill_status st = KRILL_OK;
    krill_ctx *gpu = NULL;
    double *v = NULL, *w = NULL, *tmp = NULL, *y = NULL, *dv = NULL, *dw = NULL, *dy = NULL;
    FILE *f = NULL;
    const int64_t n = o->n;
    const int k = o->k;
    if (krill_cuda_device_count() < 1) {
        printf("bench_dot gemv --write-gpu: skipped: no GPU\n");
        return EXIT_SKIPPED;
    }
    KRILL_TRY(bench_ctx_create(KRILL_DEVICE_CUDA, 0, &gpu));
    KRILL_ALLOC(v, n * k);
    KRILL_ALLOC(w, n);
    KRILL_ALLOC(tmp, n);
    KRILL_ALLOC(y, k);
    KRILL_MEM_ALLOC(gpu, dv, n * k);
    KRILL_MEM_ALLOC(gpu, dw, n);
    KRILL_MEM_ALLOC(gpu, dy, k);
    f = fopen(o->write_gpu_path, "w");
    if (!f) {
        st = krill_error(KRILL_ERR_IO, "cannot write %s", o->write_gpu_path);
        goto cleanup;
    }
    fprintf(f, "# GPU: %s\n# phi seed column n cublas_dgemv\n", krill_ctx_describe(gpu));
    for (int p = 0; p < o->n_phis; p++)
        for (int t = 0; t < o->trials; t++) {
            KRILL_TRY(gemv_inputs(n, k, o->phis[p], t, v, w, tmp));
            KRILL_TRY(krill_mem_upload(gpu, dv, v, (size_t)(n * k) * sizeof *v));
            KRILL_TRY(krill_mem_upload(gpu, dw, w, (size_t)n * sizeof *w));
            KRILL_TRY(krill_cuda_gemv_t(gpu, n, k, dv, n, dw, dy));
            KRILL_TRY(krill_mem_download(gpu, y, dy, (size_t)k * sizeof *y));
            for (int j = 0; j < k; j++)
                fprintf(f, "%a %d %d %lld %a\n", o->phis[p], t + 1, j, (long long)n, y[j]);
        }
    if (fclose(f) != 0) st = krill_error(KRILL_ERR_IO, "cannot write %s", o->write_gpu_path);
    f = NULL;
    if (st == KRILL_OK)
        printf("wrote %s: %d phis x %d trials x %d columns, n = %lld, on %s\n",
               o->write_gpu_path, o->n_phis, o->trials, k, (long long)n,
               krill_ctx_describe(gpu));
cleanup:
    if (st != KRILL_OK) fprintf(stderr, "bench_dot: %s\n", krill_last_error());
    if (f) fclose(f);
    krill_mem_free(gpu, dv);
    krill_mem_free(gpu, dw);
    krill_mem_free(gpu, dy);
    krill_ctx_destroy(&gpu);
    krill_free(v);
    krill_free(w);
    krill_free(tmp);
    krill_free(y);
    rc = st == KRILL_OK ? 0 : 1;
#endif
    return rc;
}

static int run_gemv_accuracy(const dot_opts *o)
{
    int rc = 1;
#ifndef KRILL_HAVE_MPFR
    (void)o;
    (void)gemv_values;
    printf("bench_dot gemv: skipped: built without MPFR (the GPU column: --write-gpu)\n");
    rc = EXIT_SKIPPED;
#else
    krill_status st = KRILL_OK;
    krill_ctx *cpu = NULL;
    double *v = NULL, *w = NULL, *tmp = NULL, *y = NULL, *ref = NULL;
    acc_column cols[MAX_METHODS];
    long failures = 0;
    const int64_t n = o->n;
    const int k = o->k, from_file = o->read_gpu_path != NULL;
    int n_cols = acc_columns(o, 0, cols);
    double *file_values = NULL;
    unsigned char *file_have = NULL;
    char file_device[256] = "";
    KRILL_TRY(bench_ctx_create(KRILL_DEVICE_CPU, o->threads, &cpu));
    if (from_file) {   /* cuBLAS dgemv's column, after plain CPU */
        const size_t count = (size_t)o->n_phis * o->trials * k;
        memmove(&cols[2], &cols[1], (size_t)(n_cols - 1) * sizeof *cols);
        cols[1] = (acc_column){ .method = make_method("plain GPU (cuBLAS dgemv)", DOT_CUBLAS,
                                                      KRILL_REPRO_OFF, 0), .on_gpu_only = 1 };
        n_cols++;
        file_values = calloc(count, sizeof *file_values);
        file_have = calloc(count, 1);
        if (!file_values || !file_have) {
            st = krill_error(KRILL_ERR_ALLOC, "GPU values of %zu entries", count);
            goto cleanup;
        }
        KRILL_TRY(gpu_values_read(o, k, file_values, file_have, file_device,
                                  sizeof file_device));
    }
    KRILL_ALLOC(v, n * k);
    KRILL_ALLOC(w, n);
    KRILL_ALLOC(tmp, n);
    KRILL_ALLOC(y, k);
    KRILL_ALLOC(ref, k);
    printf("gemv accuracy: V'w, V %lld x %d, %d trials per phi, CPU: %s\n", (long long)n, k,
           o->trials, krill_ctx_describe(cpu));
    for (int p = 0; p < o->n_phis; p++) {
        for (int c = 0; c < n_cols; c++) cols[c].max_err[p] = 0.0;
        for (int t = 0; t < o->trials; t++) {
            KRILL_TRY(gemv_inputs(n, k, o->phis[p], t, v, w, tmp));
            for (int j = 0; j < k; j++)
                if (reference_dot(n, v + (int64_t)j * n, w, &ref[j]) != 0) failures++;
            for (int c = 0; c < n_cols; c++) {
                acc_column *col = &cols[c];
                if (col->on_gpu_only) {
                    const size_t at = ((size_t)p * o->trials + t) * k;
                    for (int j = 0; j < k; j++) {
                        if (!file_have[at + j]) {
                            st = krill_error(KRILL_ERR_ARG, "%s: no value for phi %g, seed %d, "
                                             "column %d", o->read_gpu_path, o->phis[p], t + 1, j);
                            goto cleanup;
                        }
                        y[j] = file_values[at + j];
                    }
                } else {
                    KRILL_TRY(gemv_values(cpu, &col->method, n, k, v, w, y));
                }
                for (int j = 0; j < k; j++) {
                    const double err = rel_error(y[j], ref[j]);
                    if (err > col->max_err[p]) col->max_err[p] = err;
                    if (col->method.mode == KRILL_REPRO_OZAKI && col->method.slices == 0 &&
                        err != 0.0 && col->not_exact[p]++ == 0) {
                        fprintf(stderr, "bench_dot gemv: exact mode, phi %g, trial %d, column "
                                "%d: %a, MPFR %a\n", o->phis[p], t + 1, j, y[j], ref[j]);
                        failures++;
                    }
                }
            }
        }
        printf("phi %g done\n", o->phis[p]);
        fflush(stdout);
    }
    printf("\nmax relative error against MPFR (rounded to nearest), V'w, V %lld x %d, "
           "%d trials:\n", (long long)n, k, o->trials);
    acc_write_table(stdout, o, cols, n_cols, 0);
    if (o->md_path) {
        FILE *md = fopen(o->md_path, "w");
        if (!md) {
            st = krill_error(KRILL_ERR_IO, "cannot write %s", o->md_path);
            goto cleanup;
        }
        fprintf(md, "### GEMV accuracy: max relative error of V'w against MPFR (V %lld x %d, "
                    "%d trials per phi)\n\nCPU: %s. Reproducible modes through "
                    "krill_ozaki_mdot. 0 = correctly rounded in every entry.\n\n",
                (long long)n, k, o->trials, krill_ctx_describe(cpu));
        if (from_file)
            fprintf(md, "The cuBLAS column was computed on %s by `bench_dot gemv --write-gpu` "
                        "with the same n, k, phis and seeds (%s).\n\n", file_device,
                    o->read_gpu_path);
        acc_write_table(md, o, cols, n_cols, 1);
        fprintf(md, "\nChecks: %ld failure(s).\n", failures);
        fclose(md);
    }
    if (failures) printf("wrong result: %ld check(s) failed (see stderr)\n", failures);
    rc = failures ? 1 : 0;
cleanup:
    if (st != KRILL_OK) fprintf(stderr, "bench_dot: %s\n", krill_last_error());
    free(file_values);
    free(file_have);
    krill_ctx_destroy(&cpu);
    krill_free(v);
    krill_free(w);
    krill_free(tmp);
    krill_free(y);
    krill_free(ref);
#endif
    return rc;
}

/* ---- speed --------------------------------------------------------------------------------- */

typedef struct speed_cell {
    double seconds;              /* median per call; 0 = not measured */
    int batch;                   /* calls per timed batch */
    char note[96];               /* why not measured, or the check's verdict */
    int check_ok;
} speed_cell;

typedef struct speed_row {
    int64_t n;
    int copies;
    speed_cell cell[MAX_METHODS];
} speed_row;

static int speed_methods(krill_device device, dot_method *m)
{
    int n = 0;
    if (device == KRILL_DEVICE_CUDA)
        m[n++] = make_method("cuBLAS ddot", DOT_CUBLAS, KRILL_REPRO_OFF, 0);
    m[n++] = make_method("krill plain", DOT_BLAS, KRILL_REPRO_OFF, 0);
    m[n++] = make_method("Ozaki exact", DOT_OZAKI, KRILL_REPRO_OZAKI, 0);
    m[n] = make_method("exact, fast path off", DOT_OZAKI, KRILL_REPRO_OZAKI, 0);
    m[n++].no_fast_path = 1;
    m[n++] = make_method("Ozaki S=2", DOT_OZAKI, KRILL_REPRO_OZAKI, 2);
    m[n++] = make_method("Ozaki S=3", DOT_OZAKI, KRILL_REPRO_OZAKI, 3);
    m[n++] = make_method("exact, stats given", DOT_OZAKI_STATS, KRILL_REPRO_OZAKI, 0);
    return n;
}

/* Median seconds per call of `m` over R batches, rotating through the copies. The W
 * warm-up calls are timed together to size the batches: as many calls as make BATCH_SECONDS
 * (at least one), so that the clock's resolution and a GPU's launch gaps do not count. */
static krill_status time_method(krill_ctx *ctx, bench_clock *clock, const dot_method *m,
                                int64_t n, int copies, krill_vec **xs, krill_vec **ys,
                                const double *stats, double *slots, const dot_opts *o,
                                double *times, double *median, int *batch)
{
    krill_status st = KRILL_OK;
    const int warmup = o->warmup > 0 ? o->warmup : 1;
    double seconds = 0.0;
    int call = 0;                /* the copy the next call reads */
    KRILL_TRY(set_mode(ctx, m));
    KRILL_TRY(bench_clock_start(clock));
    for (int w = 0; w < warmup; w++, call = (call + 1) % copies)
        KRILL_TRY(run_dot(ctx, m, n, xs[call], ys[call], stats + 4 * call, &slots[call]));
    KRILL_TRY(bench_clock_stop(clock, &seconds));
    {
        const double per_call = seconds / warmup;
        const double wanted = per_call > 0.0 ? ceil(BATCH_SECONDS / per_call) : MAX_BATCH;
        *batch = wanted < 1.0 ? 1 : wanted > MAX_BATCH ? MAX_BATCH : (int)wanted;
    }
    for (int r = 0; r < o->reps; r++) {
        KRILL_TRY(bench_clock_start(clock));
        for (int b = 0; b < *batch; b++, call = (call + 1) % copies)
            KRILL_TRY(run_dot(ctx, m, n, xs[call], ys[call], stats + 4 * call, &slots[call]));
        KRILL_TRY(bench_clock_stop(clock, &seconds));
        times[r] = seconds / *batch;
    }
    *median = bench_median(times, o->reps);
cleanup:
    return st;
}

/* Check the value `m` left in slots[0] (copy 0 holds x, y): reproducible modes against the
 * same mode on `ref` (another device or thread count); plain ones against the error bound
 * n eps sum |x_i y_i| around exact mode. */
static krill_status check_method(krill_ctx *ctx, krill_ctx *ref, const dot_method *m,
                                 int64_t n, krill_vec *x, krill_vec *y, krill_vec *xr,
                                 krill_vec *yr, const double *stats, double *slot,
                                 double *slot_ref, double exact, double abs_sum,
                                 speed_cell *cell)
{
    krill_status st = KRILL_OK;
    double value = 0.0, expected = 0.0;
    int verdict = -1;
    KRILL_TRY(dot_value(ctx, m, n, x, y, stats, slot, &value));
    KRILL_TRY(krill_ozaki_fast_verdicts(ctx, 1, &verdict));
    if (method_is_repro(m)) {
        const char *other = krill_on_gpu(ctx) ? "the CPU" : "1 thread";
        /* the reference computes its own stats (the given ones must not change the bits) and
         * runs the exact path alone */
        dot_method plain_call = make_method(m->name, m->kind == DOT_OZAKI_STATS ? DOT_OZAKI
                                            : m->kind, m->mode, m->slices);
        plain_call.no_fast_path = 1;
        KRILL_TRY(dot_value(ref, &plain_call, n, xr, yr, NULL, slot_ref, &expected));
        cell->check_ok = memcmp(&value, &expected, sizeof value) == 0;
        if (cell->check_ok)
            snprintf(cell->note, sizeof cell->note, "bits = %s's%s", other,
                     verdict == 1 ? "; fast path decided"
                     : verdict == 0 ? "; fast path declined (exact path ran)" : "");
        else
            snprintf(cell->note, sizeof cell->note, "wrong result: %a, %s gives %a", value,
                     other, expected);
    } else {
        const double bound = (double)n * DBL_EPSILON * abs_sum;
        const double err = fabs(value - exact);
        cell->check_ok = err <= bound;
        snprintf(cell->note, sizeof cell->note, "%s|err| = %.2g of the bound n eps sum|x y|",
                 cell->check_ok ? "" : "wrong result: ", bound > 0 ? err / bound : err);
    }
cleanup:
    return st;
}

static void speed_write(FILE *f, const dot_opts *o, krill_ctx *ctx, const dot_method *m,
                        int n_methods, const speed_row *rows, int n_rows, int markdown)
{
    const int ref = 0;   /* the first method is the reference of the ratios */
    if (markdown) {
        fprintf(f, "### DOT speed on %s\n\nphi = %g; per call: median over %d batches of "
                   "batch time / calls (a batch is about %g ms of calls, at least one; %d "
                   "warm-up calls first; %s); `copies` pairs x, y rotated so that the data "
                   "pass 256 MiB; bytes = 16 n; first table: microseconds per dot (time / %s "
                   "time), second: effective GB/s = 16 n / time.\n\n",
                krill_ctx_describe(ctx), o->phi, o->reps, 1e3 * BATCH_SECONDS, o->warmup,
                krill_on_gpu(ctx) ? "CUDA events" : "host clock", m[ref].name);
        fprintf(f, "| n | copies |");
        for (int k = 0; k < n_methods; k++) fprintf(f, " %s us (ratio) |", m[k].name);
        fprintf(f, "\n|---:|---:|");
        for (int k = 0; k < n_methods; k++) fprintf(f, "---:|");
        fprintf(f, "\n");
    } else {
        fprintf(f, "%-10s %3s", "n", "cp");
        for (int k = 0; k < n_methods; k++) fprintf(f, " %22s", m[k].name);
        fprintf(f, "\n");
    }
    for (int r = 0; r < n_rows; r++) {
        fprintf(f, markdown ? "| 2^%d | %d |" : "2^%-8d %3d", (int)log2((double)rows[r].n),
                rows[r].copies);
        for (int k = 0; k < n_methods; k++) {
            const speed_cell *c = &rows[r].cell[k];
            const double t_ref = rows[r].cell[ref].seconds;
            char text[64];
            if (c->seconds > 0 && t_ref > 0)
                snprintf(text, sizeof text, "%.1f (%.2f)", c->seconds * 1e6, c->seconds / t_ref);
            else if (c->seconds > 0)
                snprintf(text, sizeof text, "%.1f", c->seconds * 1e6);
            else
                snprintf(text, sizeof text, "n/a");
            fprintf(f, markdown ? " %s |" : " %22s", text);
        }
        fprintf(f, "\n");
    }
    if (markdown) {
        fprintf(f, "\n| n |");
        for (int k = 0; k < n_methods; k++) fprintf(f, " %s GB/s |", m[k].name);
        fprintf(f, "\n|---:|");
        for (int k = 0; k < n_methods; k++) fprintf(f, "---:|");
        fprintf(f, "\n");
        for (int r = 0; r < n_rows; r++) {
            fprintf(f, "| 2^%d |", (int)log2((double)rows[r].n));
            for (int k = 0; k < n_methods; k++) {
                const speed_cell *c = &rows[r].cell[k];
                if (c->seconds > 0)
                    fprintf(f, " %.3g |", 16.0 * (double)rows[r].n / c->seconds * 1e-9);
                else
                    fprintf(f, " n/a |");
            }
            fprintf(f, "\n");
        }
        int checked = 0, problems = 0;
        for (int r = 0; r < n_rows; r++)
            for (int k = 0; k < n_methods; k++) {
                const speed_cell *c = &rows[r].cell[k];
                checked += c->seconds > 0 && c->note[0];
                problems += c->seconds <= 0 || !c->check_ok;
            }
        fprintf(f, "\nChecks (reproducible modes: the bits of %s; plain: within n eps "
                   "sum|x_i y_i| of exact mode): %d run, %d not measured or failed%s\n",
                krill_on_gpu(ctx) ? "the CPU" : "one thread", o->check ? checked : 0,
                problems, problems ? ":\n" : ".");
        for (int r = 0; r < n_rows; r++)
            for (int k = 0; k < n_methods; k++)
                if (rows[r].cell[k].seconds <= 0 || !rows[r].cell[k].check_ok)
                    fprintf(f, "- 2^%d, %s: %s\n", (int)log2((double)rows[r].n), m[k].name,
                            rows[r].cell[k].note[0] ? rows[r].cell[k].note : "check off");
    }
}

static int run_speed(const dot_opts *o)
{
    int rc = 1;
    krill_status st = KRILL_OK;
    krill_ctx *ctx = NULL, *ref = NULL;
    bench_clock *clock = NULL;
    krill_vec *xs[MAX_COPIES] = { NULL }, *ys[MAX_COPIES] = { NULL };
    krill_vec *xr = NULL, *yr = NULL;
    double *x = NULL, *y = NULL, *slots = NULL, *slot_ref = NULL;
    double *stats = NULL;        /* ctx memory: x's then y's stats, 4 doubles per copy */
    double *rep_times = NULL;
    dot_method m[MAX_METHODS];
    speed_row rows[MAX_LIST];
    int n_rows = 0, copies = 0;
    long failures = 0;
    FILE *csv = NULL;

    const int n_methods = speed_methods(o->device, m);
    if (o->device == KRILL_DEVICE_CUDA && krill_cuda_device_count() <= 0) {
        printf("bench_dot speed: skipped: no CUDA device here (use --device cpu for the CPU "
               "table)\n");
        rc = EXIT_SKIPPED;
        goto cleanup;
    }
    KRILL_TRY(bench_ctx_create(o->device, o->threads, &ctx));
    /* the check's second context: the CPU for a GPU run, one thread for a CPU run */
    if (o->check) KRILL_TRY(bench_ctx_create(KRILL_DEVICE_CPU, krill_on_gpu(ctx) ? 0 : 1, &ref));
    KRILL_TRY(bench_clock_create(ctx, &clock));
    KRILL_ALLOC(rep_times, o->reps);
    KRILL_MEM_ALLOC(ctx, slots, MAX_COPIES);
    KRILL_MEM_ALLOC(ctx, stats, 4 * MAX_COPIES);
    if (ref) KRILL_MEM_ALLOC(ref, slot_ref, 1);
    printf("speed: %s; phi = %g; clock %s%s%s\n", krill_ctx_describe(ctx), o->phi,
           bench_clock_kind(clock), ref ? "; check against " : "",
           ref ? krill_ctx_describe(ref) : "");
    for (int s = 0; s < o->n_sizes; s++) {
        const int64_t n = (int64_t)1 << o->log2_sizes[s];
        speed_row *row = &rows[n_rows++];
        double exact = 0.0, abs_sum = 0.0;
        memset(row, 0, sizeof *row);
        row->n = n;
        copies = (int)ceil(CACHE_FLUSH_BYTES / (16.0 * (double)n));
        copies = copies < 1 ? 1 : copies > MAX_COPIES ? MAX_COPIES : copies;
        row->copies = copies;
        KRILL_ALLOC(x, n);
        KRILL_ALLOC(y, n);
        KRILL_TRY(krill_gen_dot_vectors(n, o->phi, 1, x, y));
        for (int c = 0; c < copies; c++) {
            KRILL_TRY(krill_vec_create(ctx, n, &xs[c]));
            KRILL_TRY(krill_vec_create(ctx, n, &ys[c]));
            KRILL_TRY(krill_vec_upload(xs[c], x));
            KRILL_TRY(krill_vec_upload(ys[c], y));
            KRILL_TRY(krill_ozaki_stats(ctx, n, krill_vec_data(xs[c]), stats + 4 * c));
            KRILL_TRY(krill_ozaki_stats(ctx, n, krill_vec_data(ys[c]), stats + 4 * c + 2));
        }
        if (ref) {
            const dot_method exact_mode = make_method("exact", DOT_VEC, KRILL_REPRO_OZAKI, 0);
            KRILL_TRY(krill_vec_wrap(ref, n, x, &xr));
            KRILL_TRY(krill_vec_wrap(ref, n, y, &yr));
            if (dot_value(ref, &exact_mode, n, xr, yr, NULL, slot_ref, &exact) != KRILL_OK) {
                fprintf(stderr, "bench_dot: exact reference failed: %s\n", krill_last_error());
                exact = NAN;
            }
            for (int64_t i = 0; i < n; i++) abs_sum += fabs(x[i] * y[i]);
        }
        for (int k = 0; k < n_methods; k++) {
            speed_cell *cell = &row->cell[k];
            double median = 0.0;
            if (time_method(ctx, clock, &m[k], n, copies, xs, ys, stats, slots, o, rep_times,
                            &median, &cell->batch) != KRILL_OK) {
                snprintf(cell->note, sizeof cell->note, "%s", krill_last_error());
                continue;
            }
            cell->seconds = median;
            if (ref) {
                if (check_method(ctx, ref, &m[k], n, xs[0], ys[0], xr, yr, stats, slots,
                                 slot_ref, exact, abs_sum, cell) != KRILL_OK) {
                    snprintf(cell->note, sizeof cell->note, "check failed: %s",
                             krill_last_error());
                    cell->check_ok = 0;
                }
                if (!cell->check_ok) failures++;
            } else {
                cell->check_ok = 1;
            }
        }
        printf("n = 2^%d done (%d copies)\n", o->log2_sizes[s], copies);
        fflush(stdout);
        for (int c = 0; c < copies; c++) {
            krill_vec_destroy(&xs[c]);
            krill_vec_destroy(&ys[c]);
        }
        krill_vec_destroy(&xr);
        krill_vec_destroy(&yr);
        krill_free(x);
        krill_free(y);
        x = y = NULL;
    }
    (void)krill_ctx_set_repro(ctx, KRILL_REPRO_OFF, 0);
    printf("\n");
    speed_write(stdout, o, ctx, m, n_methods, rows, n_rows, 0);
    for (int r = 0; r < n_rows; r++)
        for (int k = 0; k < n_methods; k++)
            if (rows[r].cell[k].note[0])
                printf("  2^%d %s: %s\n", (int)log2((double)rows[r].n), m[k].name,
                       rows[r].cell[k].note);
    if (o->md_path) {
        FILE *md = fopen(o->md_path, "w");
        if (!md) {
            st = krill_error(KRILL_ERR_IO, "cannot write %s", o->md_path);
            goto cleanup;
        }
        speed_write(md, o, ctx, m, n_methods, rows, n_rows, 1);
        fclose(md);
    }
    if (o->csv_path) {
        csv = fopen(o->csv_path, "w");
        if (!csv) {
            st = krill_error(KRILL_ERR_IO, "cannot write %s", o->csv_path);
            goto cleanup;
        }
        fprintf(csv, "device,phi,n,copies,method,median_s,batch,bytes,gb_per_s,ratio,check_ok,"
                     "note\n");
        for (int r = 0; r < n_rows; r++)
            for (int k = 0; k < n_methods; k++) {
                const speed_cell *c = &rows[r].cell[k];
                const double bytes = 16.0 * (double)rows[r].n;
                const double t_ref = rows[r].cell[0].seconds;
                fprintf(csv, "%s,%g,%lld,%d,\"%s\",%.6e,%d,%.0f,%.3f,%.4f,%d,\"%s\"\n",
                        krill_on_gpu(ctx) ? "gpu" : "cpu", o->phi, (long long)rows[r].n,
                        rows[r].copies, m[k].name, c->seconds, c->batch, bytes,
                        c->seconds > 0 ? bytes / c->seconds * 1e-9 : 0.0,
                        c->seconds > 0 && t_ref > 0 ? c->seconds / t_ref : 0.0, c->check_ok,
                        c->note);
            }
    }
    if (failures) printf("wrong result: %ld check(s) failed\n", failures);
    rc = failures ? 1 : 0;
cleanup:
    if (st != KRILL_OK) fprintf(stderr, "bench_dot: %s\n", krill_last_error());
    if (csv) fclose(csv);
    for (int c = 0; c < MAX_COPIES; c++) {
        krill_vec_destroy(&xs[c]);
        krill_vec_destroy(&ys[c]);
    }
    krill_vec_destroy(&xr);
    krill_vec_destroy(&yr);
    krill_free(x);
    krill_free(y);
    krill_free(rep_times);
    if (ctx) krill_mem_free(ctx, slots);
    if (ctx) krill_mem_free(ctx, stats);
    if (ref) krill_mem_free(ref, slot_ref);
    bench_clock_destroy(&clock);
    krill_ctx_destroy(&ctx);
    krill_ctx_destroy(&ref);
    return rc;
}

int main(int argc, char **argv)
{
    dot_opts o;
    if (parse_args(argc, argv, &o) != 0) return 2;
    if (o.gemv) return o.write_gpu_path ? run_gemv_write_gpu(&o) : run_gemv_accuracy(&o);
    if (o.write_gpu_path) return run_write_gpu(&o);
    return o.speed ? run_speed(&o) : run_accuracy(&o);
}
