/* bench/bench_overlap.c - the overlap scheduler's DGEMM experiment (Tables 2 and 3 of
 * Homma & Suda) and its out-of-core shapes, with cuBLASXt run beside it on the GPU.
 *
 *   bench_overlap [--device cpu|gpu] [--shapes paper|large|H:M:W[@MEM],...] [--runs R]
 *                 [--host pinned|pageable] [--xt-blocks 1024,2048,...] [--json FILE]
 *                 [--timelines DIR]   DIR/H-M-W-sequential.svg and -scheduled.svg: each
 *                                     shape's last run of both, drawn as the three lanes
 *   bench_overlap --plan-only N,...   the planner's own time on GEMM-shaped problems of
 *                 N x N blocks (1 MiB panels, 64 KiB C blocks, 40 MB of memory, a model of
 *                 20 GB/s each way): krill_overlap_plan_create, median of 3
 *
 * Per shape (A is H x M, B is M x W, double, row-major in host memory: page-locked with
 * --host pinned, the GPU's default, where the scheduler copies straight from and to it, or
 * pageable, where it packs through its pinned staging ring; @MEM caps the device memory the
 * plan may use, forcing the out-of-core path):
 *   sequential  the unsplit run (send A and B, one DGEMM, receive C), or when it does not
 *               fit, the planner's blocks run one step at a time; its lanes' busy times are
 *               the table's SEND, KERNEL and RECV
 *   scheduled   the planner's choice (block side, pipelined or sequential)
 *   bound       max(SEND + kmin, fill + KERNEL + drain, fill + k0 + RECV) on the scheduled
 *               run's measured steps; efficiency = bound / scheduled
 *   cuBLASXt    cublasXtDgemm on the same host arrays, the best of its block sizes (tuned as
 *               its users would), host clock around the call
 * Times are medians of R runs (R <= 64) after one warm-up each, the sequential and the
 * scheduled run alternating: the scheduler's from CUDA events (first step start to last
 * step end) and its wall time (staging allocation and host packing included, which is what
 * cuBLASXt's host-clock time includes too); s/seq is the median over the R pairs of
 * scheduled / sequential. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_common.h"
#ifdef KRILL_HAVE_CUDA
#include "bench/bench_cuda.h"
#endif
#include "core/core_impl.h"
#include "krill/overlap.h"

#define MAX_SHAPES 32
#define MAX_RUNS 64
#define MAX_XT 8

static const char *const paper_shapes =
    "512:512:16384,16384:512:512,8192:8192:256,256:256:8192,256:16384:256,512:16384:512,"
    "2048:2048:2048,4192:4192:4192,16384:4096:32,16384:8192:32,8192:32:8192,16384:32:16384";
/* in core, then out of core by a cap, then larger than an 80 GB device */
static const char *const large_shapes =
    "16384:16384:16384,32768:32768:32768@8G,57344:57344:57344";

typedef struct shape {
    int64_t h, m, w;
    double memory;               /* 0: the device's */
} shape;

typedef struct dgemm_job {
    krill_ctx *ctx;
    shape s;
    const double *a, *b;
    double *c;
    int64_t block;
    krill_overlap_mode mode;
    krill_overlap_gemm_report rep;
    int xt_dim;
    char svg[4096];              /* "": no timeline; else each run's is drawn here */
    char title[96];              /* the drawing's title */
} dgemm_job;

/* figures: 0 events, 1 wall, 2-4 lanes' busy, 5 bound, 6 efficiency */
enum { F_EVENTS, F_WALL, F_SEND, F_KERNEL, F_RECV, F_BOUND, F_EFF, N_FIGURES };

static krill_status run_dgemm(void *user, double *f)
{
    krill_status st = KRILL_OK;
    dgemm_job *j = (dgemm_job *)user;
    krill_overlap_gemm_opts o;
    krill_overlap_timeline tl;
    memset(&tl, 0, sizeof tl);
    krill_overlap_gemm_opts_default(&o);
    o.block = j->block;
    o.plan.mode = j->mode;
    o.plan.memory = j->s.memory;
    o.timeline = &tl;
    st = krill_overlap_dgemm(j->ctx, j->s.h, j->s.m, j->s.w, j->a, j->s.m, j->b, j->s.w, j->c,
                             j->s.w, &o, &j->rep);
    if (st == KRILL_OK) {
        f[F_EVENTS] = tl.elapsed;
        f[F_WALL] = j->rep.seconds;
        f[F_SEND] = tl.busy[KRILL_OVERLAP_LANE_H2D];
        f[F_KERNEL] = tl.busy[KRILL_OVERLAP_LANE_KERNEL];
        f[F_RECV] = tl.busy[KRILL_OVERLAP_LANE_D2H];
        f[F_BOUND] = tl.bound;
        f[F_EFF] = tl.efficiency;
        if (j->svg[0]) st = krill_overlap_timeline_svg(&tl, j->title, j->svg);
    }
    krill_overlap_timeline_free(&tl);
    return st;
}

/* The sequential run then the scheduled one: figures 0..N-1 and N..2N-1. */
static krill_status run_pair(void *user, double *f)
{
    dgemm_job *const *jobs = (dgemm_job *const *)user;
    krill_status st = run_dgemm(jobs[0], f);
    return st == KRILL_OK ? run_dgemm(jobs[1], f + N_FIGURES) : st;
}

/* job->svg: DIR/H-M-W[-capNMiB]-WHAT.svg (each run overwrites it: the last run's stays), or
 * "" without DIR; job->title "H:M:W[@NMiB] WHAT". */
static void timeline_path(dgemm_job *j, const char *dir, const char *what)
{
    char cap[32] = "", at[32] = "";
    if (j->s.memory > 0) {
        snprintf(cap, sizeof cap, "-cap%.0fMiB", j->s.memory / 1048576.0);
        snprintf(at, sizeof at, "@%.0fMiB", j->s.memory / 1048576.0);
    }
    j->svg[0] = 0;
    if (dir) snprintf(j->svg, sizeof j->svg, "%s/%lld-%lld-%lld%s-%s.svg", dir,
                      (long long)j->s.h, (long long)j->s.m, (long long)j->s.w, cap, what);
    snprintf(j->title, sizeof j->title, "%lld:%lld:%lld%s %s", (long long)j->s.h,
             (long long)j->s.m, (long long)j->s.w, at, what);
}

#ifdef KRILL_HAVE_CUDA
static krill_status run_xt(void *user, double *f)
{
    dgemm_job *j = (dgemm_job *)user;
    return bench_cuda_xt_dgemm(0, j->s.h, j->s.m, j->s.w, j->a, j->b, j->c, j->xt_dim, f);
}
#endif

/* --plan-only: time the planner on an n x n GEMM-shaped problem (nothing runs). */
static krill_status no_kernel(void *user, int32_t block, void *stream, void *const *in,
                              void *const *out)
{
    (void)user, (void)block, (void)stream, (void)in, (void)out;
    return KRILL_OK;
}

static int plan_only(const char *list)
{
    int sizes[16], n_sizes = 0, rc = 0;
    static char dummy;
    if (bench_parse_ints(list, sizes, 16, &n_sizes, 1, 512) != 0) return 2;
    printf("%8s %10s %12s %10s\n", "blocks", "plan_ms", "sends", "predicted");
    for (int q = 0; q < n_sizes && rc == 0; q++) {
        const int nb = sizes[q], nr = 2 * nb + nb * nb;
        krill_overlap_region *r = calloc((size_t)nr, sizeof *r);
        krill_overlap_block *b = calloc((size_t)nb * nb, sizeof *b);
        int32_t *l = calloc((size_t)3 * nb * nb, sizeof *l);
        krill_overlap_model m;
        krill_overlap_plan_opts o;
        krill_overlap_plan_info info;
        double t[3];
        memset(&m, 0, sizeof m);
        m.h2d_bandwidth = m.d2h_bandwidth = 2e10;
        m.copies_overlap = m.copy_kernel_overlap = 1;
        krill_overlap_plan_opts_default(&o);
        o.memory = 4e7;
        for (int i = 0; i < nr && r && b && l; i++) {
            size_t bytes = i < 2 * nb ? (size_t)1 << 20 : (size_t)1 << 16;
            r[i] = (krill_overlap_region){&dummy, bytes, 1, bytes};
        }
        for (int k = 0; k < nb * nb && r && b && l; k++) {
            l[3 * k] = k / nb;
            l[3 * k + 1] = nb + k % nb;
            l[3 * k + 2] = 2 * nb + k;
            b[k] = (krill_overlap_block){l + 3 * k, l + 3 * k + 2, NULL, 2, 1, 0, 1e-4};
        }
        for (int rep = 0; rep < 3 && rc == 0 && r && b && l; rep++) {
            krill_overlap_problem pb = {r, b, nr, nb * nb, no_kernel, NULL};
            krill_overlap_plan *plan = NULL;
            double t0 = krill_wtime();
            if (krill_overlap_plan_create(&m, &pb, &o, &plan) != KRILL_OK) rc = 3;
            t[rep] = krill_wtime() - t0;
            if (plan) krill_overlap_plan_info_get(plan, &info);
            krill_overlap_plan_destroy(&plan);
        }
        if (!r || !b || !l) rc = 3;
        if (rc == 0)
            printf("%8d %10.2f %12.0f %10.4f\n", nb * nb, 1e3 * bench_median(t, 3), info.sends,
                   info.predicted);
        else
            fprintf(stderr, "bench_overlap: plan of %d blocks: %s\n", nb * nb, krill_last_error());
        free(r);
        free(b);
        free(l);
    }
    return rc;
}

/* A, B and C of na, nb and nc doubles, page-locked or pageable (NULL where that failed). */
static void host_arrays(int pinned, size_t na, size_t nb, size_t nc, double **a, double **b,
                        double **c)
{
    double **arr[3] = {a, b, c};
    const size_t n[3] = {na, nb, nc};
    (void)pinned;
    for (int k = 0; k < 3; k++) {
        *arr[k] = NULL;
#ifdef KRILL_HAVE_CUDA
        if (pinned) {
            if (bench_cuda_host_alloc((void **)arr[k], n[k] * 8) != KRILL_OK) krill_clear_error();
            continue;
        }
#endif
        *arr[k] = malloc(n[k] * 8);
    }
}

static void host_arrays_free(int pinned, double *a, double *b, double *c)
{
    double *arr[3] = {a, b, c};
    (void)pinned;
    for (int k = 0; k < 3; k++) {
#ifdef KRILL_HAVE_CUDA
        if (pinned) {
            bench_cuda_host_free(arr[k]);
            continue;
        }
#endif
        free(arr[k]);
    }
}

static int parse_shapes(const char *text, shape *out, int *n)
{
    const char *p = !strcmp(text, "paper") ? paper_shapes : !strcmp(text, "large") ? large_shapes : text;
    char item[96];
    *n = 0;
    while (bench_list_next(&p, item, sizeof item) == 0) {
        long long h, m, w;
        char mem[32] = "", *end = NULL;
        shape s = {0, 0, 0, 0};
        int k = sscanf(item, "%lld:%lld:%lld@%31s", &h, &m, &w, mem);
        if (k < 3 || h < 1 || m < 1 || w < 1 || *n == MAX_SHAPES) return -1;
        s.h = h, s.m = m, s.w = w;
        if (k == 4) {
            s.memory = strtod(mem, &end);
            if (*end == 'G') s.memory *= 1073741824.0;
            else if (*end == 'M') s.memory *= 1048576.0;
            else if (*end) return -1;
        }
        out[(*n)++] = s;
    }
    return *n > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    krill_device device = KRILL_DEVICE_CPU;
    const char *shapes_text = "paper", *json_path = NULL, *xt_text = "1024,2048,4096,8192";
    const char *host = NULL, *timelines = NULL;
    int runs = 3, xt_dims[MAX_XT], n_xt = 0, n_shapes = 0, rc = 0, pinned;
    shape shapes[MAX_SHAPES];
    krill_ctx *ctx = NULL;
    FILE *json = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--device") && v && bench_parse_device(v, &device) == 0) i++;
        else if (!strcmp(argv[i], "--shapes") && v) shapes_text = v, i++;
        else if (!strcmp(argv[i], "--runs") && v && (runs = atoi(v)) >= 1 && runs <= MAX_RUNS)
            i++;
        else if (!strcmp(argv[i], "--xt-blocks") && v) xt_text = v, i++;
        else if (!strcmp(argv[i], "--json") && v) json_path = v, i++;
        else if (!strcmp(argv[i], "--timelines") && v) timelines = v, i++;
        else if (!strcmp(argv[i], "--host") && v && (!strcmp(v, "pinned") || !strcmp(v, "pageable")))
            host = v, i++;
        else if (!strcmp(argv[i], "--plan-only") && v) return plan_only(v);
        else {
            fprintf(stderr, "usage: bench_overlap [--device cpu|gpu] [--shapes paper|large|"
                            "H:M:W[@MEM],...] [--runs R] [--host pinned|pageable]\n"
                            "                     [--xt-blocks LIST] [--json FILE] [--timelines DIR]\n"
                            "       bench_overlap --plan-only N,...\n");
            return 2;
        }
    }
    if (parse_shapes(shapes_text, shapes, &n_shapes) != 0 ||
        bench_parse_ints(xt_text, xt_dims, MAX_XT, &n_xt, 64, 65536) != 0) {
        fprintf(stderr, "bench_overlap: bad --shapes or --xt-blocks\n");
        return 2;
    }
    pinned = host ? !strcmp(host, "pinned") : device == KRILL_DEVICE_CUDA;
#ifndef KRILL_HAVE_CUDA
    if (pinned) {
        fprintf(stderr, "bench_overlap: --host pinned needs a CUDA build\n");
        return 2;
    }
#endif
    if (bench_ctx_create(device, 0, &ctx) != KRILL_OK) return 3;
    if (json_path && !(json = fopen(json_path, "w"))) {
        fprintf(stderr, "bench_overlap: cannot write %s\n", json_path);
        krill_ctx_destroy(&ctx);
        return 2;
    }
    printf("bench_overlap on %s; %s host arrays; medians of %d runs after a warm-up; ms\n",
           krill_ctx_describe(ctx), pinned ? "page-locked" : "pageable", runs);
    printf("%-20s %9s %9s %9s %10s %10s %10s %9s %5s %11s %6s %10s %6s\n", "H:M:W[@mem]", "SEND",
           "KERNEL", "RECV", "sequential", "scheduled", "sched_wall", "bound", "eff", "block",
           "s/seq", "cuBLASXt", "xt/s");
    if (json) fprintf(json, "[\n");
    for (int k = 0; k < n_shapes && rc == 0; k++) {
        shape s = shapes[k];
        const size_t na = (size_t)(s.h * s.m), nb = (size_t)(s.m * s.w), nc = (size_t)(s.h * s.w);
        double *a = NULL, *b = NULL, *c = NULL;
        double both[2 * N_FIGURES] = {0}, *seq = both, *sch = both + N_FIGURES;
        double xt = NAN, xt_best_dim = 0, first[N_FIGURES];
        dgemm_job job = {ctx, s, a, b, c, 0, KRILL_OVERLAP_SEQUENTIAL, {0}, 0, "", ""}, seq_job;
        double pairs[MAX_RUNS * 2 * N_FIGURES], ratio[MAX_RUNS], paired = NAN;
        dgemm_job *pair[2] = {&seq_job, &job};
        krill_status st;
        host_arrays(pinned, na, nb, nc, &a, &b, &c);
        job.a = a, job.b = b, job.c = c;
        if (!a || !b || !c) {
            fprintf(stderr, "bench_overlap: no host memory for %lld:%lld:%lld\n",
                    (long long)s.h, (long long)s.m, (long long)s.w);
            rc = 3;
        }
        for (size_t i = 0; rc == 0 && i < na; i++) a[i] = (double)((i * 7919) % 1000) / 500.0 - 1;
        for (size_t i = 0; rc == 0 && i < nb; i++) b[i] = (double)((i * 104729) % 1000) / 500.0 - 1;
        /* sequential: unsplit when it fits, else the planner's blocks one step at a time (this
           first run is its warm-up; the scheduled run's follows) */
        seq_job = job;
        seq_job.block = s.h > s.w ? s.h : s.w;
        st = rc ? KRILL_ERR_ALLOC : run_dgemm(&seq_job, first);
        if (st == KRILL_ERR_DEVICE_ALLOC) {
            seq_job.block = 0;
            st = run_dgemm(&seq_job, first);
        }
        timeline_path(&seq_job, timelines, "sequential");
        job.mode = KRILL_OVERLAP_AUTO;
        timeline_path(&job, timelines, "scheduled");
        if (st == KRILL_OK) st = run_dgemm(&job, first);
        /* the two alternate, run by run: the pageable copies' rate varies up to 2x from run
           to run on the H200 hosts (sequential 8192:32:8192: 12.6, 16.9 and 23.8 ms in three
           processes, 2026-11-28), which two batches of runs would read as a gap; s/seq is
           the median over the pairs of scheduled / sequential */
        if (st == KRILL_OK)
            st = bench_repeat(run_pair, pair, 0, runs, 2 * N_FIGURES, pairs, both);
        for (int r = 0; st == KRILL_OK && r < runs; r++)
            ratio[r] = pairs[(size_t)r * 2 * N_FIGURES + N_FIGURES + F_EVENTS] /
                       pairs[(size_t)r * 2 * N_FIGURES + F_EVENTS];
        if (st == KRILL_OK) paired = bench_median(ratio, runs);
#ifdef KRILL_HAVE_CUDA
        for (int q = 0; st == KRILL_OK && device == KRILL_DEVICE_CUDA && q < n_xt; q++) {
            double t = 0;
            job.xt_dim = xt_dims[q];
            st = bench_repeat(run_xt, &job, 1, runs, 1, NULL, &t);
            if (st == KRILL_OK && (isnan(xt) || t < xt)) xt = t, xt_best_dim = xt_dims[q];
        }
#endif
        if (st != KRILL_OK) {
            fprintf(stderr, "bench_overlap: %lld:%lld:%lld: %s\n", (long long)s.h,
                    (long long)s.m, (long long)s.w, krill_last_error());
            rc = 3;
        } else {
            char label[48], blocks[48];
            snprintf(blocks, sizeof blocks, "%lldx%lld",
                     (long long)(job.rep.block < s.h ? job.rep.block : s.h),
                     (long long)job.rep.block_cols);
            snprintf(label, sizeof label, "%lld:%lld:%lld%s", (long long)s.h, (long long)s.m,
                     (long long)s.w, s.memory > 0 ? "@cap" : "");
            printf("%-20s %9.3f %9.3f %9.3f %10.3f %10.3f %10.3f %9.3f %5.2f %11s %6.3f %10.3f %6.2f\n",
                   label, 1e3 * seq[F_SEND], 1e3 * seq[F_KERNEL], 1e3 * seq[F_RECV],
                   1e3 * seq[F_EVENTS], 1e3 * sch[F_EVENTS], 1e3 * sch[F_WALL],
                   1e3 * sch[F_BOUND], sch[F_EFF], blocks,
                   paired, 1e3 * xt, xt / sch[F_WALL]);
            if (json) {
                fprintf(json, "%s{\"h\": %lld, \"m\": %lld, \"w\": %lld, \"memory\": %.0f, ",
                        k ? ",\n" : "", (long long)s.h, (long long)s.m, (long long)s.w, s.memory);
                fprintf(json, "\"device\": ");
                bench_json_string(json, krill_ctx_describe(ctx));
                fprintf(json, ", \"host\": \"%s\", \"sequential_block\": %lld, \"block\": %lld, "
                        "\"block_cols\": %lld, \"sequential_mode\": %d, ", pinned ? "pinned" : "pageable",
                        (long long)seq_job.rep.block, (long long)job.rep.block, (long long)job.rep.block_cols,
                        job.rep.plan.sequential);
                bench_json_number(json, "send", seq[F_SEND], 0);
                bench_json_number(json, "kernel", seq[F_KERNEL], 0);
                bench_json_number(json, "recv", seq[F_RECV], 0);
                bench_json_number(json, "sequential", seq[F_EVENTS], 0);
                bench_json_number(json, "sequential_wall", seq[F_WALL], 0);
                bench_json_number(json, "scheduled", sch[F_EVENTS], 0);
                bench_json_number(json, "scheduled_per_sequential", paired, 0);
                bench_json_number(json, "scheduled_wall", sch[F_WALL], 0);
                bench_json_number(json, "scheduled_kernel", sch[F_KERNEL], 0);
                bench_json_number(json, "bound", sch[F_BOUND], 0);
                bench_json_number(json, "efficiency", sch[F_EFF], 0);
                bench_json_number(json, "predicted", job.rep.plan.predicted, 0);
                bench_json_number(json, "cublasxt", xt, 0);
                bench_json_number(json, "cublasxt_block", xt_best_dim, 0);
                bench_json_number(json, "gflops", 2e-9 * (double)s.h * (double)s.m * (double)s.w /
                                                      sch[F_EVENTS], 1);
                fprintf(json, "}");
            }
        }
        host_arrays_free(pinned, a, b, c);
    }
    if (json) {
        fprintf(json, "\n]\n");
        if (fclose(json) != 0) rc = rc ? rc : 3;
    }
    krill_ctx_destroy(&ctx);
    return rc;
}
