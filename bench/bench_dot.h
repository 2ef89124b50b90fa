/* bench/bench_dot.h - what the parts of bench_dot share (bench/bench_dot.c: options, the
 * dot products compared, main; bench_dot_accuracy.c: the DOT and GEMV accuracy tables against
 * MPFR; bench_dot_speed.c: the speed table). What the program measures and how: the opening
 * comment of bench_dot.c. */
#ifndef KRILL_BENCH_DOT_H
#define KRILL_BENCH_DOT_H

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_common.h"
#include "core/core_impl.h"
#include "krill/gen.h"
#include "krill/vec.h"
#include "ozaki/ozaki_impl.h"
#include "solver/solver_impl.h"

#define EXIT_SKIPPED 77
#define MAX_LIST 16
#define MAX_METHODS 24

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

/* A reproducible mode (Ozaki or krill_vec_dot in a repro mode). */
int dot_method_is_repro(const dot_method *m);
dot_method dot_make_method(const char *name, dot_kind kind, krill_repro_mode mode, int slices);
/* One dot of x and y into `result` (ctx's memory); see bench_dot.c. */
krill_status dot_run(krill_ctx *ctx, const dot_method *m, int64_t n, krill_vec *x, krill_vec *y,
                     const double *stats, double *result);
/* ctx in m's mode (and exact mode's fast path on or off, process-wide). */
krill_status dot_set_mode(krill_ctx *ctx, const dot_method *m);
/* m run once, its result read to the host. */
krill_status dot_value(krill_ctx *ctx, const dot_method *m, int64_t n, krill_vec *x,
                       krill_vec *y, const double *stats, double *slot, double *value);
double dot_rel_error(double value, double ref);

/* The program's parts (main picks one): exit codes 0, 1 (a wrong result), 2, 77 (skipped). */
int run_accuracy(const dot_opts *o);
int run_write_gpu(const dot_opts *o);
int run_gemv_accuracy(const dot_opts *o);
int run_gemv_write_gpu(const dot_opts *o);
int run_speed(const dot_opts *o);

#endif
