/* apps/cmd_overlap.c - `krill overlap`: the overlap scheduler's platform model and its
 * out-of-core DGEMM.
 *
 *   krill overlap calibrate   measures (or reads from the cache) and prints the model
 *   krill overlap gemm H M W  C = A B with A (H x M) and B (M x W) random in host memory,
 *                             in blocks through the scheduler; prints the plan, the
 *                             measured lanes, the bound and the efficiency; --check
 *                             compares 1000 sampled entries of C with a host dot product. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli_impl.h"

static const char *const ov_device_names[] = {"auto", "cpu", "gpu", NULL};
static const krill_device ov_device_types[] = {KRILL_DEVICE_AUTO, KRILL_DEVICE_CPU,
                                               KRILL_DEVICE_CUDA};
static const char *const ov_mode_names[] = {"auto", "pipelined", "sequential", NULL};

static void overlap_usage(FILE *out)
{
    fprintf(out,
            "usage: krill overlap calibrate [--recompute] [options]\n"
            "       krill overlap gemm H M W [--memory BYTES] [--block S] [options]\n"
            "\n"
            "The overlap scheduler: transfers between host and device pipelined with kernels.\n"
            "`calibrate` prints the platform model (transfer rates and latencies, whether\n"
            "copies overlap each other and kernels, launch cost), measured once per device,\n"
            "driver and thread count and cached under $XDG_CACHE_HOME/krill. `gemm`\n"
            "computes C = A B with A (H x M) and B (M x W) random in host memory, in blocks\n"
            "of C sent through the scheduler (out of core when the operands exceed --memory\n"
            "or the device).\n"
            "\n"
            "  --recompute          measure even if the cache has the model\n"
            "  --memory BYTES       device memory the plan may use (suffix K, M or G: powers\n"
            "                       of 1024); default: the device's free memory less a margin\n"
            "  --block S            the side of C's blocks; default: the planner's choice\n"
            "  --mode auto|pipelined|sequential   default auto: sequential only when the\n"
            "                       model predicts it faster\n"
            "  --timeline FILE.svg  draw the run's three lanes (H2D, compute, D2H)\n"
            "  --check              compare 1000 sampled entries of C with a host dot product\n"
            "  --seed K             the operands' seed (default 1)\n"
            "  --json               one JSON object on standard output instead of the text\n"
            "  --device auto|cpu|gpu   default auto: the GPU when one is present (the CPU\n"
            "                       executor runs the same plans with threads as lanes)\n"
            "  --threads T          OpenMP threads (default: OpenMP's)\n"
            "\n"
            "exit codes: 0 done, 2 bad usage, 3 krill or the device failed (or too little memory\n"
            "            for one block)\n");
}

typedef struct overlap_args {
    const char *positional[4];
    int n_positional;
    const char *memory;
    int block, mode, device, threads, seed;
    int recompute, check, json;
    const char *timeline;
} overlap_args;

static int parse_dim(const char *s, const char *name, int64_t *v)
{
    char *end = NULL;
    long long x = strtoll(s, &end, 10);
    if (end == s || *end || x < 1 || x > (1LL << 31))
        return cli_error(CLI_EXIT_USAGE, "overlap gemm: %s = '%s' must be an integer in "
                         "[1, 2^31]", name, s);
    *v = x;
    return CLI_EXIT_OK;
}

static void print_model(const krill_overlap_model *m, FILE *out)
{
    fprintf(out, "device       %s%s (driver %d)\n", m->device_name,
            m->device < 0 ? " [CPU executor: memcpy lanes]" : "", m->driver_version);
    fprintf(out, "H2D pinned   %8.2f GB/s, latency %.2f us\n", 1e-9 * m->h2d_bandwidth,
            1e6 * m->h2d_latency);
    fprintf(out, "D2H pinned   %8.2f GB/s, latency %.2f us\n", 1e-9 * m->d2h_bandwidth,
            1e6 * m->d2h_latency);
    fprintf(out, "pageable     %8.2f GB/s H2D, %.2f GB/s D2H\n",
            1e-9 * m->h2d_pageable_bandwidth, 1e-9 * m->d2h_pageable_bandwidth);
    fprintf(out, "host copy    %8.2f GB/s (staging pack/unpack), +%.2f us a pack, +%.1f ns a "
            "pitched row\n", 1e-9 * m->host_copy_bandwidth, 1e6 * m->host_copy_latency,
            1e9 * m->host_copy_row_seconds);
    fprintf(out, "overlap      H2D with D2H: %s; copies with kernels: %s\n",
            m->copies_overlap ? "yes" : "no", m->copy_kernel_overlap ? "yes" : "no");
    fprintf(out, "launch       %.2f us; queuing a step %.2f us (host)\n", 1e6 * m->launch_latency,
            1e6 * m->issue_seconds);
    fprintf(out, "pitched      +%.1f ns a row H2D, +%.1f ns D2H (direct copies of page-locked rows)\n",
            1e9 * m->h2d_row_seconds, 1e9 * m->d2h_row_seconds);
}

static void json_model(cli_json *j, const krill_overlap_model *m)
{
    cli_json_object(j, "model");
    cli_json_string(j, "device", m->device_name);
    cli_json_int(j, "driver_version", m->driver_version);
    cli_json_number(j, "h2d_bandwidth", m->h2d_bandwidth);
    cli_json_number(j, "h2d_latency", m->h2d_latency);
    cli_json_number(j, "d2h_bandwidth", m->d2h_bandwidth);
    cli_json_number(j, "d2h_latency", m->d2h_latency);
    cli_json_number(j, "h2d_pageable_bandwidth", m->h2d_pageable_bandwidth);
    cli_json_number(j, "d2h_pageable_bandwidth", m->d2h_pageable_bandwidth);
    cli_json_number(j, "host_copy_bandwidth", m->host_copy_bandwidth);
    cli_json_number(j, "host_copy_latency", m->host_copy_latency);
    cli_json_number(j, "host_copy_row_seconds", m->host_copy_row_seconds);
    cli_json_bool(j, "copies_overlap", m->copies_overlap);
    cli_json_bool(j, "copy_kernel_overlap", m->copy_kernel_overlap);
    cli_json_number(j, "launch_latency", m->launch_latency);
    cli_json_number(j, "issue_seconds", m->issue_seconds);
    cli_json_number(j, "h2d_row_seconds", m->h2d_row_seconds);
    cli_json_number(j, "d2h_row_seconds", m->d2h_row_seconds);
    cli_json_close(j);
}

static int run_calibrate(krill_ctx *ctx, const overlap_args *args)
{
    int rc = CLI_EXIT_OK;
    krill_overlap_model m;
    char path[4096];
    CLI_TRY(krill_overlap_calibrate(ctx, args->recompute, &m));
    CLI_TRY(krill_overlap_cache_path(ctx, path, sizeof path));
    if (args->json) {
        cli_json j;
        cli_json_begin(&j, stdout);
        json_model(&j, &m);
        cli_json_string(&j, "cache", path);
        cli_json_end(&j);
    } else {
        print_model(&m, stdout);
        printf("cache        %s\n", path);
    }
cleanup:
    return rc;
}

/* Largest |C - A B| / (sum_k |a_ik b_kj|) over 1000 sampled entries (0 when exact). */
static double sampled_error(int64_t h, int64_t m, int64_t w, const double *a, const double *b,
                            const double *c)
{
    double worst = 0;
    uint64_t s = 12345;
    for (int t = 0; t < 1000; t++) {
        int64_t i, j;
        double sum = 0, mag = 0;
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        i = (int64_t)((s >> 33) % (uint64_t)h);
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        j = (int64_t)((s >> 33) % (uint64_t)w);
        for (int64_t k = 0; k < m; k++) {
            sum += a[i * m + k] * b[k * w + j];
            mag += fabs(a[i * m + k] * b[k * w + j]);
        }
        if (mag > 0) worst = fmax(worst, fabs(c[i * w + j] - sum) / mag);
    }
    return worst;
}

static void print_gemm(const overlap_args *args, krill_ctx *ctx, int64_t h, int64_t m, int64_t w,
                       const krill_overlap_gemm_report *r, const krill_overlap_timeline *tl,
                       double error)
{
    const krill_overlap_plan_info *p = &r->plan;
    const double flops = 2.0 * (double)h * (double)m * (double)w;
    char staging[64];
    if (p->direct) snprintf(staging, sizeof staging, "direct copies (page-locked operands)");
    else snprintf(staging, sizeof staging, "pinned staging %.1f MB", 1e-6 * p->pinned_bytes);
    if (args->json) {
        cli_json j;
        cli_json_begin(&j, stdout);
        cli_json_int(&j, "h", h);
        cli_json_int(&j, "m", m);
        cli_json_int(&j, "w", w);
        cli_json_string(&j, "device", krill_ctx_describe(ctx));
        cli_json_int(&j, "block", r->block);
        cli_json_int(&j, "block_cols", r->block_cols);
        cli_json_int(&j, "blocks", p->n_blocks);
        cli_json_bool(&j, "sequential", p->sequential);
        cli_json_number(&j, "send_bytes", p->send_bytes);
        cli_json_number(&j, "recv_bytes", p->recv_bytes);
        cli_json_number(&j, "device_bytes", p->device_bytes);
        cli_json_number(&j, "pinned_bytes", p->pinned_bytes);
        cli_json_bool(&j, "direct", p->direct);
        cli_json_number(&j, "predicted", p->predicted);
        cli_json_number(&j, "predicted_sequential", p->predicted_sequential);
        cli_json_number(&j, "send_seconds", tl->busy[KRILL_OVERLAP_LANE_H2D]);
        cli_json_number(&j, "kernel_seconds", tl->busy[KRILL_OVERLAP_LANE_KERNEL]);
        cli_json_number(&j, "recv_seconds", tl->busy[KRILL_OVERLAP_LANE_D2H]);
        cli_json_number(&j, "seconds", tl->elapsed);
        cli_json_number(&j, "wall_seconds", r->seconds);
        cli_json_number(&j, "bound", tl->bound);
        cli_json_number(&j, "efficiency", tl->efficiency);
        cli_json_number(&j, "gflops", 1e-9 * flops / tl->elapsed);
        if (args->check) cli_json_number(&j, "sampled_error", error);
        cli_json_end(&j);
        return;
    }
    printf("krill overlap gemm: C (%lld x %lld) = A (%lld x %lld) B (%lld x %lld), double\n",
           (long long)h, (long long)w, (long long)h, (long long)m, (long long)m, (long long)w);
    printf("device       %s\n", krill_ctx_describe(ctx));
    printf("plan         blocks of %lld x %lld (%d blocks), %s; device memory %.1f MB, %s\n",
           (long long)(r->block < h ? r->block : h), (long long)r->block_cols, p->n_blocks,
           p->sequential ? "sequential" : "pipelined", 1e-6 * p->device_bytes, staging);
    printf("traffic      sent %.1f MB (%.0f copies), received %.1f MB (%.0f copies)\n",
           1e-6 * p->send_bytes, p->sends, 1e-6 * p->recv_bytes, p->recvs);
    printf("predicted    %.3f ms (sequential %.3f ms)\n", 1e3 * p->predicted,
           1e3 * p->predicted_sequential);
    printf("measured     SEND %.3f ms, KERNEL %.3f ms, RECV %.3f ms (lane busy times)\n",
           1e3 * tl->busy[KRILL_OVERLAP_LANE_H2D], 1e3 * tl->busy[KRILL_OVERLAP_LANE_KERNEL],
           1e3 * tl->busy[KRILL_OVERLAP_LANE_D2H]);
    printf("time         %.3f ms first step to last (%.3f ms with setup), bound %.3f ms, "
           "efficiency %.2f\n", 1e3 * tl->elapsed, 1e3 * r->seconds, 1e3 * tl->bound,
           tl->efficiency);
    printf("rate         %.2f GFLOP/s\n", 1e-9 * flops / tl->elapsed);
    if (args->check) printf("check        largest sampled error %.2e (relative to sum |a b|)\n", error);
}

static int run_gemm(krill_ctx *ctx, const overlap_args *args)
{
    int rc = CLI_EXIT_OK;
    int64_t h = 0, m = 0, w = 0;
    double *a = NULL, *b = NULL, *c = NULL, error = 0;
    krill_overlap_gemm_opts o;
    krill_overlap_gemm_report rep;
    krill_overlap_timeline tl;
    memset(&tl, 0, sizeof tl);
    if (args->n_positional != 4) {
        rc = cli_error(CLI_EXIT_USAGE, "overlap gemm: needs H M W (got %d numbers)",
                       args->n_positional - 1);
        goto cleanup;
    }
    if ((rc = parse_dim(args->positional[1], "H", &h)) != CLI_EXIT_OK) goto cleanup;
    if ((rc = parse_dim(args->positional[2], "M", &m)) != CLI_EXIT_OK) goto cleanup;
    if ((rc = parse_dim(args->positional[3], "W", &w)) != CLI_EXIT_OK) goto cleanup;
    krill_overlap_gemm_opts_default(&o);
    o.block = args->block;
    o.plan.mode = (krill_overlap_mode)args->mode;
    o.timeline = &tl;
    if (args->memory && (o.plan.memory = cli_parse_bytes(args->memory)) <= 0) {
        rc = cli_error(CLI_EXIT_USAGE, "overlap gemm: --memory '%s' is not a positive byte "
                       "count (e.g. 512M, 2G)", args->memory);
        goto cleanup;
    }
    CLI_TRY(krill_host_mem_check(8.0 * ((double)h * m + (double)m * w + (double)h * w) <
                                     (double)SIZE_MAX / 2
                                     ? 8 * ((size_t)(h * m) + (size_t)(m * w) + (size_t)(h * w))
                                     : SIZE_MAX, "overlap gemm (operands A, B and C)"));
    a = malloc(sizeof *a * (size_t)(h * m));
    b = malloc(sizeof *b * (size_t)(m * w));
    c = malloc(sizeof *c * (size_t)(h * w));
    if (!a || !b || !c) {
        rc = cli_error(CLI_EXIT_FAILURE, "overlap gemm: out of host memory for the operands "
                       "(%.1f GB)", 8e-9 * (double)(h * m + m * w + h * w));
        goto cleanup;
    }
    {
        uint64_t s = (uint64_t)args->seed * 2654435761ULL + 1;  /* entries in [-1, 1) */
        for (int64_t k = 0; k < h * m; k++)
            a[k] = (double)((s = s * 6364136223846793005ULL + 1442695040888963407ULL) >> 11) * 0x1p-52 - 1;
        for (int64_t k = 0; k < m * w; k++)
            b[k] = (double)((s = s * 6364136223846793005ULL + 1442695040888963407ULL) >> 11) * 0x1p-52 - 1;
    }
    CLI_TRY(krill_overlap_dgemm(ctx, h, m, w, a, m, b, w, c, w, &o, &rep));
    if (args->check) error = sampled_error(h, m, w, a, b, c);
    if (args->timeline) {
        char title[160];
        snprintf(title, sizeof title, "gemm %lld x %lld x %lld, blocks of %lld x %lld", (long long)h,
                 (long long)m, (long long)w, (long long)(rep.block < h ? rep.block : h),
                 (long long)rep.block_cols);
        CLI_TRY(krill_overlap_timeline_svg(&tl, title, args->timeline));
    }
    print_gemm(args, ctx, h, m, w, &rep, &tl, error);
    if (args->check && !(error <= 4.0 * (double)m * 0x1p-53)) {
        rc = cli_error(CLI_EXIT_FAILURE, "overlap gemm: sampled error %.3g exceeds the bound "
                       "%.3g", error, 4.0 * (double)m * 0x1p-53);
    }
cleanup:
    krill_overlap_timeline_free(&tl);
    free(a);
    free(b);
    free(c);
    return rc;
}

static int overlap_run(int argc, char **argv)
{
    int want_help = 0;
    overlap_args args;
    krill_ctx_opts ctx_opts = KRILL_CTX_OPTS_INIT;
    krill_ctx *ctx = NULL;
    int rc;
    memset(&args, 0, sizeof args);
    args.seed = 1;
    {
        const cli_option options[] = {
            {.name = "--help", .kind = CLI_FLAG, .flag = &want_help},
            {.name = "-h", .kind = CLI_FLAG, .flag = &want_help},
            {.name = "--recompute", .kind = CLI_FLAG, .flag = &args.recompute},
            {.name = "--memory", .kind = CLI_STRING, .string = &args.memory},
            {.name = "--block", .kind = CLI_INT, .integer = &args.block, .min = 1, .max = INT_MAX},
            {.name = "--mode", .kind = CLI_CHOICE, .integer = &args.mode, .choices = ov_mode_names},
            {.name = "--timeline", .kind = CLI_STRING, .string = &args.timeline},
            {.name = "--check", .kind = CLI_FLAG, .flag = &args.check},
            {.name = "--seed", .kind = CLI_INT, .integer = &args.seed, .min = 0, .max = INT_MAX},
            {.name = "--json", .kind = CLI_FLAG, .flag = &args.json},
            {.name = "--device", .kind = CLI_CHOICE, .integer = &args.device,
             .choices = ov_device_names},
            {.name = "--threads", .kind = CLI_INT, .integer = &args.threads, .min = 1,
             .max = KRILL_MAX_THREADS},
        };
        rc = cli_parse(argc, argv, options, sizeof options / sizeof options[0], args.positional,
                       4, &args.n_positional);
    }
    if (rc != CLI_EXIT_OK) goto cleanup;
    if (want_help) {
        overlap_usage(stdout);
        goto cleanup;
    }
    if (args.n_positional == 0 ||
        (strcmp(args.positional[0], "calibrate") && strcmp(args.positional[0], "gemm"))) {
        rc = cli_error(CLI_EXIT_USAGE, "overlap: expected `calibrate` or `gemm H M W` (see "
                       "krill help overlap)");
        goto cleanup;
    }
    ctx_opts.device = ov_device_types[args.device];
    ctx_opts.threads = args.threads;
    CLI_TRY(krill_ctx_create(&ctx_opts, &ctx));
    if (!strcmp(args.positional[0], "calibrate")) {
        if (args.n_positional > 1) {
            rc = cli_error(CLI_EXIT_USAGE, "overlap calibrate: unexpected argument '%s'",
                           args.positional[1]);
            goto cleanup;
        }
        rc = run_calibrate(ctx, &args);
    } else {
        rc = run_gemm(ctx, &args);
    }
cleanup:
    krill_ctx_destroy(&ctx);
    return rc;
}

const cli_command cli_overlap_command = {
    .name = "overlap",
    .summary = "the transfer/kernel overlap scheduler: platform model, out-of-core DGEMM",
    .run = overlap_run,
    .usage = overlap_usage,
};
