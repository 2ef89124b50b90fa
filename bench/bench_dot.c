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
#ifdef KRILL_HAVE_CUDA
#include <cublas_v2.h>
#endif

#include "bench/bench_dot.h"

/* ---- options ------------------------------------------------------------------------------ */



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

int dot_method_is_repro(const dot_method *m)
{
    return m->kind == DOT_OZAKI || m->kind == DOT_OZAKI_STATS ||
           (m->kind == DOT_VEC && m->mode != KRILL_REPRO_OFF);
}

dot_method dot_make_method(const char *name, dot_kind kind, krill_repro_mode mode,
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
krill_status dot_run(krill_ctx *ctx, const dot_method *m, int64_t n, krill_vec *x,
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
krill_status dot_set_mode(krill_ctx *ctx, const dot_method *m)
{
    krill_ozaki_tuning t;
    krill_ozaki_tuning_get(&t);
    t.fast_path = !m->no_fast_path;
    krill_ozaki_tuning_set(&t);
    return dot_method_is_repro(m) ? krill_ctx_set_repro(ctx, m->mode, m->slices)
                              : krill_ctx_set_repro(ctx, KRILL_REPRO_OFF, 0);
}

/* Run `m` once and read its result to the host. */
krill_status dot_value(krill_ctx *ctx, const dot_method *m, int64_t n, krill_vec *x,
                              krill_vec *y, const double *stats, double *slot, double *value)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(dot_set_mode(ctx, m));
    KRILL_TRY(dot_run(ctx, m, n, x, y, stats, slot));
    KRILL_TRY(krill_scalars_read(ctx, slot, value, 1));
cleanup:
    return st;
}

double dot_rel_error(double value, double ref)
{
    if (value == ref) return 0.0;
    return ref != 0.0 ? fabs(value - ref) / fabs(ref) : INFINITY;
}

int main(int argc, char **argv)
{
    dot_opts o;
    if (parse_args(argc, argv, &o) != 0) return 2;
    if (o.gemv) return o.write_gpu_path ? run_gemv_write_gpu(&o) : run_gemv_accuracy(&o);
    if (o.write_gpu_path) return run_write_gpu(&o);
    return o.speed ? run_speed(&o) : run_accuracy(&o);
}
