/* bench/bench_ortho.c - the orthogonalization passes of GMRES, one pass at a time, against
 * the memory's copy rate: the "orthogonalization kernels moving their bytes at
 * >= 80% of the card's measured device-to-device copy bandwidth".
 *
 *   bench_ortho [--device cpu|gpu] [--threads N] [--n N] [--cols LIST] [--runs R]
 *               [--repro] [--csv FILE] [--json FILE]
 *
 * V is n x (kmax + 2) doubles in context memory (default n = 2,097,152 = convdiff3d:128's
 * rows), random entries in [-1, 1]. For each k of --cols (default 0,1,2,4,8,15,16,24,29,32:
 * the columns of a GMRES(30) step, the instances' bounds of kernels/dcgs2.cu and their
 * edges), Q = V[:, 0..k-1], u = V[:, k], w = V[:, k+1]:
 *   copy          8 vectors copied, 16 counted (read + written): the ceiling. GPU: a
 *                 device-to-device copy (krill_mem_copy); CPU: the context's threaded copy
 *                 (krill_host_copy), as the passes run on its threads
 *   dcgs2-sweep   [Q u w]'[u w] (krill_fused_dcgs2_dots)                  k + 2 vectors
 *   sweep-cublas  the same sums by one cuBLAS DGEMM (GPU: the peer)      k + 2
 *   dcgs2-update  u, w <- the update pass (krill_fused_dcgs2_update)      k + 4
 *   cgs2-pass     w -= Q h, then Q'w, w'w (krill_fused_cgs_pass, CGS2's middle pass)
 *                                                                         k + 2
 *   cgs1-cublas   CuPy's GMRES step: h = Q'w, w -= Q h by two cuBLAS DGEMVs (GPU: the
 *                 peer; it orthogonalizes once where DCGS2 does twice)   2k + 3
 *   dcgs2-step    sweep, read of the 2k + 4 sums to the host, update with the 2k + 3
 *                 coefficients from the host: a whole DCGS2 step of GMRES, host round trip
 *                 included (the time the solver's breakdown counts as orthogonalization)
 *                                                                         2k + 6
 * --repro: krill's passes in the reproducible mode (exact: every sum correctly rounded,
 * solver_impl.h), the copy and the cuBLAS peers as they are; the sweep then runs for every
 * k (the plain GPU sweep hands k > KRILL_DCGS2_MAX_COLS to the DGEMM, the reproducible one
 * is krill_ozaki_mdot2 for any k).
 * Vectors are counted as n * 8 bytes each, every read and write once (the floor: the
 * kernels read each once). Time: per run, a batch of calls timed with bench_clock (CUDA
 * events on the context's stream; the host clock on the CPU and for dcgs2-step, which
 * waits on the host anyway), sized to last about 20 ms; one warm-up batch, then the median
 * over --runs (default 9) batches. Columns: seconds per call, GB/s, and the fraction of the
 * copy rate measured in the same run.
 *
 * The update's coefficients are all 1 / (kmax + 3), so u and w stay bounded over the
 * repetitions (the CGS pass drifts w by the same amount each call: harmless for timing). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_common.h"
#include "core/core_impl.h"
#include "solver/solver_impl.h"

#define MAX_COLS 64
#define COPY_VECTORS 16
#define BATCH_SECONDS 0.02
#define COEF (2 * MAX_COLS + 4)   /* where the coefficients start in dev and host */

typedef struct ortho_opts {
    bench_run_opts run;
    int n_cols, cols[MAX_COLS];
    int n, runs, repro;
    char *cols_text;
} ortho_opts;

/* What one timed call needs: the context, the vectors and the workspace. */
typedef struct ortho_data {
    krill_ctx *ctx;
    bench_clock *clock;
    krill_reduce_ws red;
    int64_t n;
    int k;
    double *v;       /* n x (kmax + 2), context memory */
    double *copy;    /* COPY_VECTORS x n, context memory */
    double *dev;     /* 2 COEF doubles of context memory: sums, then coefficients */
    double host[2 * COEF];
} ortho_data;

typedef krill_status (*ortho_fn)(ortho_data *d);

static krill_status do_copy(ortho_data *d)
{
    const size_t half = (size_t)COPY_VECTORS / 2 * (size_t)d->n * sizeof(double);
    if (krill_on_gpu(d->ctx)) return krill_mem_copy(d->ctx, d->copy, (char *)d->copy + half, half);
    krill_host_copy(d->ctx, d->copy, (char *)d->copy + half, half);
    return KRILL_OK;
}

static krill_status do_sweep(ortho_data *d)
{
    return krill_fused_dcgs2_dots(d->ctx, &d->red, d->n, d->k, d->v, d->n, d->dev);
}

#ifdef KRILL_HAVE_CUDA
static krill_status do_sweep_cublas(ortho_data *d)
{
    return krill_cuda_dcgs2_gemm(d->ctx, d->n, d->k, d->v, d->n, d->dev);
}

static krill_status do_cgs1_cublas(ortho_data *d)
{
    krill_status st = KRILL_OK;
    const double *q = d->v;
    double *w = d->v + (size_t)(d->k + 1) * (size_t)d->n;
    KRILL_TRY(krill_cuda_gemv_t(d->ctx, d->n, d->k, q, d->n, w, d->dev));
    KRILL_TRY(krill_cuda_gemv_n(d->ctx, d->n, d->k, -1e-6, q, d->n, d->dev, 1.0, w));
cleanup:
    return st;
}
#endif

static krill_status do_update(ortho_data *d)
{
    return krill_fused_dcgs2_update(d->ctx, d->n, d->k, d->v, d->n, d->host + COEF,
                                    d->dev + COEF);
}

static krill_status do_cgs_pass(ortho_data *d)
{
    double *w = d->v + (size_t)(d->k + 1) * (size_t)d->n;
    return krill_fused_cgs_pass(d->ctx, &d->red, d->n, d->k, d->v, d->n,
                                d->dev + COEF, w, d->dev, d->dev + MAX_COLS);
}

static krill_status do_step(ortho_data *d)
{
    krill_status st = KRILL_OK;
    double *coef = d->dev + COEF;
    KRILL_TRY(do_sweep(d));
    KRILL_TRY(krill_scalars_read(d->ctx, d->dev, d->host, 2 * d->k + 4));
    KRILL_TRY(krill_fused_dcgs2_update(d->ctx, d->n, d->k, d->v, d->n, d->host + COEF,
                                       coef));
cleanup:
    return st;
}

typedef struct ortho_method {
    const char *name;
    ortho_fn run;
    int gpu_only, host_clock;
    int vec_per_col, vec_fixed;   /* vectors moved: vec_per_col k + vec_fixed */
    int min_k;                    /* no work below this many columns */
} ortho_method;

static const ortho_method methods[] = {
    {"copy", do_copy, 0, 0, 0, COPY_VECTORS, 0},
    {"dcgs2-sweep", do_sweep, 0, 0, 1, 2, 0},
#ifdef KRILL_HAVE_CUDA
    {"sweep-cublas", do_sweep_cublas, 1, 0, 1, 2, 0},
#endif
    {"dcgs2-update", do_update, 0, 0, 1, 4, 0},
    {"cgs2-pass", do_cgs_pass, 0, 0, 1, 2, 1},
#ifdef KRILL_HAVE_CUDA
    {"cgs1-cublas", do_cgs1_cublas, 1, 0, 2, 3, 1},
#endif
    {"dcgs2-step", do_step, 0, 1, 2, 6, 0},
};
#define N_METHODS ((int)(sizeof methods / sizeof methods[0]))

/* One batch of `batch` calls; *seconds per call. */
static krill_status time_batch(ortho_data *d, const ortho_method *m, int batch,
                               double *seconds)
{
    krill_status st = KRILL_OK;
    double t0 = 0.0, total = 0.0;
    if (m->host_clock) {
        KRILL_TRY(krill_ctx_sync(d->ctx));
        t0 = krill_wtime();
    } else {
        KRILL_TRY(bench_clock_start(d->clock));
    }
    for (int b = 0; b < batch; b++) KRILL_TRY(m->run(d));
    if (m->host_clock) {
        KRILL_TRY(krill_ctx_sync(d->ctx));
        total = krill_wtime() - t0;
    } else {
        KRILL_TRY(bench_clock_stop(d->clock, &total));
    }
    *seconds = total / batch;
cleanup:
    return st;
}

/* The median seconds per call of m over `runs` batches, after one warm-up batch that also
 * sizes them. */
static krill_status time_method(ortho_data *d, const ortho_method *m, int runs,
                                double *median)
{
    krill_status st = KRILL_OK;
    double per_call = 0.0, times[64];
    int batch = 1;
    KRILL_TRY(time_batch(d, m, 3, &per_call));
    batch = per_call > 0.0 ? (int)ceil(BATCH_SECONDS / per_call) : 1000;
    if (batch < 1) batch = 1;
    if (batch > 10000) batch = 10000;
    for (int r = 0; r < runs; r++) KRILL_TRY(time_batch(d, m, batch, &times[r]));
    *median = bench_median(times, runs);
cleanup:
    return st;
}

static krill_status fill(ortho_data *d, int kmax)
{
    krill_status st = KRILL_OK;
    const size_t count = (size_t)d->n * (size_t)(kmax + 2);
    double *h = NULL;
    unsigned long long s = 0x9e3779b97f4a7c15ULL;
    KRILL_ALLOC(h, count);
    for (size_t i = 0; i < count; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        h[i] = (double)(s >> 11) * 0x1.0p-52 - 1.0;
    }
    KRILL_TRY(krill_mem_upload(d->ctx, d->v, h, count * sizeof(double)));
    KRILL_TRY(krill_mem_zero(d->ctx, d->copy,
                             (size_t)COPY_VECTORS * (size_t)d->n * sizeof(double)));
    /* the coefficients (host and device): all 1 / (kmax + 3), so that each row of u and w
       stays bounded by 1 over any number of updates */
    for (int i = 0; i < COEF; i++) d->host[COEF + i] = 1.0 / (kmax + 3);
    KRILL_TRY(krill_scalars_write(d->ctx, d->dev + COEF, d->host + COEF, COEF));
cleanup:
    krill_free(h);
    return st;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_ortho [--device cpu|gpu] [--threads N] [--n N] [--cols LIST] "
               "[--runs R] [--repro] [--csv FILE] [--json FILE]\n");
}

int main(int argc, char **argv)
{
    static const char default_cols[] = "0,1,2,4,8,15,16,24,29,32";
    ortho_opts o = {.n = 2097152, .runs = 9};
    ortho_data d;
    double copy_rate = 0.0;
    FILE *csv = NULL, *json = NULL;
    int rc = 2, kmax = 0, first = 1;
    const bench_opt opts[] = {{"--n", BENCH_OPT_INT, &o.n, NULL, NULL},
                              {"--cols", BENCH_OPT_STRING, &o.cols_text, NULL, NULL},
                              {"--runs", BENCH_OPT_INT, &o.runs, NULL, NULL},
                              {"--repro", BENCH_OPT_FLAG, &o.repro, NULL, NULL},
                              {NULL, 0, NULL, NULL, NULL}};
    memset(&d, 0, sizeof d);
    if (bench_parse_options(argc, argv, "bench_ortho", opts, &o.run, usage, NULL) != 0)
        return 2;
    if (bench_parse_ints(o.cols_text ? o.cols_text : default_cols, o.cols, MAX_COLS,
                         &o.n_cols, 0, MAX_COLS) != 0 ||
        o.n < 1 || o.runs < 1 || o.runs > 64) {
        fprintf(stderr, "bench_ortho: --n N >= 1, --runs 1..64, --cols a list of 0..%d\n",
                MAX_COLS);
        return 2;
    }
    for (int c = 0; c < o.n_cols; c++) kmax = o.cols[c] > kmax ? o.cols[c] : kmax;
    d.n = o.n;
    if (bench_ctx_create(o.run.device, o.run.threads, &d.ctx) != KRILL_OK) return 2;
    if ((o.repro && krill_ctx_set_repro(d.ctx, KRILL_REPRO_OZAKI, 0) != KRILL_OK) ||
        bench_clock_create(d.ctx, &d.clock) != KRILL_OK ||
        krill_reduce_ws_create(d.ctx, 2 * MAX_COLS + 4, &d.red) != KRILL_OK ||
        krill_mem_alloc(d.ctx, (void **)&d.v, (size_t)d.n * (size_t)(kmax + 2) * sizeof(double),
                        "V") != KRILL_OK ||
        krill_mem_alloc(d.ctx, (void **)&d.copy,
                        (size_t)COPY_VECTORS * (size_t)d.n * sizeof(double), "copy") != KRILL_OK ||
        krill_mem_alloc(d.ctx, (void **)&d.dev, 2 * COEF * sizeof(double), "sums") !=
            KRILL_OK ||
        fill(&d, kmax) != KRILL_OK) {
        fprintf(stderr, "bench_ortho: %s\n", krill_last_error());
        goto cleanup;
    }
    if (o.run.csv_path && !(csv = fopen(o.run.csv_path, "w"))) goto cleanup;
    if (o.run.json_path && !(json = fopen(o.run.json_path, "w"))) goto cleanup;
    {
        double s = 0.0;
        if (time_method(&d, &methods[0], o.runs, &s) != KRILL_OK) goto failed;
        copy_rate = (double)COPY_VECTORS * (double)d.n * 8.0 / s;
    }
    printf("# bench_ortho on %s%s: n = %d, medians of %d batches; copy (%d vectors read + "
           "written): %.1f GB/s\n", krill_ctx_describe(d.ctx), o.repro ? ", reproducible" : "",
           o.n, o.runs, COPY_VECTORS, copy_rate * 1e-9);
    printf("%-14s %4s %12s %10s %10s %8s\n", "pass", "k", "seconds", "MB", "GB/s", "of_copy");
    if (csv) fprintf(csv, "pass,k,n,seconds,bytes,gb_per_s,fraction_of_copy\n");
    if (json)
        fprintf(json, "{\"device\": \"%s\", \"repro\": %d, \"n\": %d, \"runs\": %d, "
                      "\"copy_gb_per_s\": %.3f, \"rows\": [",
                krill_ctx_describe(d.ctx), o.repro, o.n, o.runs, copy_rate * 1e-9);
    for (int c = 0; c < o.n_cols; c++) {
        d.k = o.cols[c];
        for (int m = 1; m < N_METHODS; m++) {
            const ortho_method *me = &methods[m];
            double s = 0.0, bytes, rate;
            if ((me->gpu_only && !krill_on_gpu(d.ctx)) || d.k < me->min_k) continue;
            if (me->run == do_sweep && d.k > KRILL_DCGS2_MAX_COLS && krill_on_gpu(d.ctx) &&
                !o.repro)
                continue;   /* the DGEMM takes over there: the sweep-cublas row is that */
            if (time_method(&d, me, o.runs, &s) != KRILL_OK) goto failed;
            bytes = (double)(me->vec_per_col * d.k + me->vec_fixed) * (double)d.n * 8.0;
            rate = bytes / s;
            printf("%-14s %4d %12.4e %10.1f %10.1f %8.3f\n", me->name, d.k, s, bytes * 1e-6,
                   rate * 1e-9, rate / copy_rate);
            if (csv)
                fprintf(csv, "%s,%d,%d,%.6e,%.0f,%.3f,%.4f\n", me->name, d.k, o.n, s, bytes,
                        rate * 1e-9, rate / copy_rate);
            if (json) {
                fprintf(json, "%s{\"pass\": \"%s\", \"k\": %d, ", first ? "" : ", ", me->name,
                        d.k);
                bench_json_number(json, "seconds", s, 0);
                bench_json_number(json, "bytes", bytes, 0);
                bench_json_number(json, "gb_per_s", rate * 1e-9, 0);
                bench_json_number(json, "fraction_of_copy", rate / copy_rate, 1);
                fprintf(json, "}");
                first = 0;
            }
        }
    }
    if (json) fprintf(json, "]}\n");
    rc = 0;
    goto cleanup;
failed:
    fprintf(stderr, "bench_ortho: %s\n", krill_last_error());
cleanup:
    if (csv) fclose(csv);
    if (json) fclose(json);
    krill_mem_free(d.ctx, d.v);
    krill_mem_free(d.ctx, d.copy);
    krill_mem_free(d.ctx, d.dev);
    krill_reduce_ws_destroy(d.ctx, &d.red);
    bench_clock_destroy(&d.clock);
    krill_ctx_destroy(&d.ctx);
    return rc;
}
