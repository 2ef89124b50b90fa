/* overlap/model.c - the platform model: measured once per device and thread count, and
 * cached.
 *
 * The cache is one small text file per device and host thread count,
 * $XDG_CACHE_HOME/krill/overlap-<dev>.txt with <dev> gpu<ordinal>-t<threads> or
 * cpu<threads> (else $HOME/.cache/krill/...): "key value" lines, the first two the device name and
 * driver version. A file that names another device or driver, lacks a field or cannot be
 * parsed is ignored and rewritten (whole or not at all: io/outfile.c).
 *
 * On the CPU the "transfers" are the CPU executor's memcpy between its staging slots and
 * its arena, on one lane thread each: h2d and d2h are single-thread memcpy rates of a
 * 64 MiB copy (best of 3), the latency the time of a 256-byte copy (median of 101), the
 * host copy rate that of the staging pack with the context's threads. The lanes are
 * threads: they overlap the kernel (which takes the context's threads) only when two cores
 * are left for the copy lanes, and the model says so; launch latency is 0 (a lane thread
 * calls the kernel directly). GPU measurements are in gpu.cu. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <omp.h>
#include "io/io_impl.h"
#include "overlap/overlap_impl.h"

/* Best bytes/s of copying `bytes` (memcpy, or the staging pack with `threads` when > 0). */
static double copy_rate(char *dst, char *src, size_t bytes, int threads)
{
    double best = 0;
    krill_overlap_region r = {src, bytes, 1, bytes};
    memset(src, 1, bytes);
    memset(dst, 0, bytes);
    for (int rep = 0; rep < 3; rep++) {
        double t = krill_wtime(), rate;
        if (threads > 0) overlap_pack(&r, dst, 1, threads);
        else memcpy(dst, src, bytes);
        t = krill_wtime() - t;
        rate = t > 0 ? (double)bytes / t : 0;
        if (rate > best) best = rate;
    }
    return best;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double overlap_pack_latency(void *src, void *dst, double bandwidth, int threads)
{
    const size_t bytes = (size_t)1 << 20;
    const krill_overlap_region r = {src, bytes, 1, bytes};
    double t[21];
    for (int k = 0; k < 21; k++) {
        t[k] = krill_wtime();
        overlap_pack(&r, dst, 1, threads);
        t[k] = krill_wtime() - t[k];
    }
    qsort(t, 21, sizeof *t, compare_doubles);
    return t[10] > (double)bytes / bandwidth ? t[10] - (double)bytes / bandwidth : 0;
}

double overlap_pack_row_seconds(char *src, char *dst, double bandwidth, double latency,
                                int threads)
{
    const size_t row = 1024, rows = 1024, packs = 8;   /* 1 KiB of each 2 KiB, 1 MiB a pack */
    double best = 1e30, t, per_pack;
    for (int rep = 0; rep < 3; rep++) {
        t = krill_wtime();
        for (size_t k = 0; k < packs; k++) {
            const krill_overlap_region r = {src + k * 2 * row * rows, row, rows, 2 * row};
            overlap_pack(&r, dst + k * row * rows, 1, threads);
        }
        t = krill_wtime() - t;
        if (t < best) best = t;
    }
    per_pack = best / (double)packs - latency - (double)(row * rows) / bandwidth;
    return per_pack > 0 ? per_pack / (double)rows : 0;
}

static krill_status measure_cpu(krill_ctx *ctx, krill_overlap_model *m)
{
    krill_status st = KRILL_OK;
    const size_t bytes = (size_t)64 << 20;
    char *a = NULL, *b = NULL;
    double small[101];
    KRILL_TRY(krill_alloc((void **)&a, bytes, "calibration buffer"));
    KRILL_TRY(krill_alloc((void **)&b, bytes, "calibration buffer"));
    m->h2d_bandwidth = m->h2d_pageable_bandwidth = copy_rate(b, a, bytes, 0);
    m->d2h_bandwidth = m->d2h_pageable_bandwidth = copy_rate(a, b, bytes, 0);
    m->host_copy_bandwidth = copy_rate(b, a, bytes, ctx->threads);
    m->host_copy_latency = overlap_pack_latency(a, b, m->host_copy_bandwidth, ctx->threads);
    m->host_copy_row_seconds = overlap_pack_row_seconds(a, b, m->host_copy_bandwidth,
                                                        m->host_copy_latency, ctx->threads);
    for (int k = 0; k < 101; k++) {
        double t = krill_wtime();
        memcpy(b + (k % 7) * 4096, a + (k % 5) * 4096, 256);
        small[k] = krill_wtime() - t;
    }
    qsort(small, 101, sizeof *small, compare_doubles);
    m->h2d_latency = m->d2h_latency = small[50];
    /* the copy lanes run beside the kernel's threads only on cores the kernel leaves free */
    m->copies_overlap = m->copy_kernel_overlap = omp_get_num_procs() >= ctx->threads + 2;
    m->launch_latency = 0;
cleanup:
    krill_free(a);
    krill_free(b);
    return st;
}

/* The device's identity (model's device, name, driver). */
static krill_status identify(const krill_ctx *ctx, krill_overlap_model *m)
{
    memset(m, 0, sizeof *m);
    m->device = krill_on_gpu(ctx) ? ctx->device_id : -1;
    krill_status st = KRILL_OK;
    if (!krill_on_gpu(ctx))
        snprintf(m->device_name, sizeof m->device_name, "cpu, %d threads", ctx->threads);
#ifdef KRILL_HAVE_CUDA
    else
        st = overlap_gpu_identify(ctx, m);
#endif
    return st;
}

krill_status overlap_measure(krill_ctx *ctx, krill_overlap_model *model)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(identify(ctx, model));
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) {
        KRILL_TRY(overlap_gpu_calibrate(ctx, model));
        goto cleanup;
    }
#endif
    KRILL_TRY(measure_cpu(ctx, model));
cleanup:
    return st;
}

krill_status krill_overlap_cache_path(const krill_ctx *ctx, char *path, size_t size)
{
    krill_status st = KRILL_OK;
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char dev[32];
    int n;
    KRILL_REQUIRE(ctx && path && size > 0, "krill_overlap_cache_path: NULL argument");
    /* the GPU model's host half (the staging pack, the cost to queue a step) is measured
       with the context's threads: a model a 2-thread test wrote must not plan a 16-thread
       run (it predicted an H200's pageable DGEMMs 3-4x slow and chose its blocks by that) */
    if (krill_on_gpu(ctx)) snprintf(dev, sizeof dev, "gpu%d-t%d", ctx->device_id, ctx->threads);
    else snprintf(dev, sizeof dev, "cpu%d", ctx->threads);
    if (xdg && xdg[0] == '/') n = snprintf(path, size, "%s/krill/overlap-%s.txt", xdg, dev);
    else if (home && home[0]) n = snprintf(path, size, "%s/.cache/krill/overlap-%s.txt", home, dev);
    else n = snprintf(path, size, "/tmp/krill-overlap-%s.txt", dev);
    if (n < 0 || (size_t)n >= size)
        st = krill_error(KRILL_ERR_ARG, "krill_overlap_cache_path: the path needs %d bytes", n);
cleanup:
    return st;
}

/* The fields of the cache file, by name. */
#define MODEL_FIELDS(X)                                                                    \
    X(h2d_bandwidth) X(h2d_latency) X(d2h_bandwidth) X(d2h_latency) X(h2d_pageable_bandwidth) \
    X(d2h_pageable_bandwidth) X(host_copy_bandwidth) X(host_copy_latency) X(launch_latency) \
    X(h2d_row_seconds)                                                                         \
    X(d2h_row_seconds) X(host_copy_row_seconds) X(issue_seconds)
#define COUNT_FIELD(name) +1

/* 1 if the file holds a complete model for `want`'s device and driver (into *m). */
static int cache_read(const char *path, const krill_overlap_model *want, krill_overlap_model *m)
{
    FILE *f = fopen(path, "r");
    char line[256];
    int fields = 0, ok = 0;
    const int expected = (0 MODEL_FIELDS(COUNT_FIELD)) + 2 + 2;   /* two flags, name, driver */
    *m = *want;
    while (f && fgets(line, sizeof line, f)) {
        char key[64];
        double v;
        size_t len = strlen(line);
        if (len && line[len - 1] == '\n') line[--len] = 0;
        if (!strncmp(line, "device_name ", 12)) {
            fields += !strcmp(line + 12, want->device_name);
            continue;
        }
        if (sscanf(line, "%63s %lf", key, &v) != 2) break;
#define READ_FIELD(name) if (!strcmp(key, #name) && v >= 0 && v < 1e300) m->name = v, fields++;
        MODEL_FIELDS(READ_FIELD)
#undef READ_FIELD
        if (!strcmp(key, "driver_version")) fields += (int)v == want->driver_version;
        if (!strcmp(key, "copies_overlap")) m->copies_overlap = v != 0, fields++;
        if (!strcmp(key, "copy_kernel_overlap")) m->copy_kernel_overlap = v != 0, fields++;
    }
    ok = fields == expected && m->h2d_bandwidth > 0 && m->d2h_bandwidth > 0;
    if (f) fclose(f);
    return ok;
}

/* mkdir -p of the folder of `path`; 0 on success. */
static int make_folder(const char *path)
{
    char dir[4096];
    int ok = 1;
    snprintf(dir, sizeof dir, "%s", path);
    for (char *c = dir + 1; *c && ok; c++)
        if (*c == '/') {
            *c = 0;
            ok = mkdir(dir, 0755) == 0 || errno == EEXIST;
            *c = '/';
        }
    return ok ? 0 : -1;
}

/* Write the model (best effort: a failure only means no cache, and is forgotten). */
static void cache_write(const char *path, const krill_overlap_model *m)
{
    krill_outfile out;
    if (make_folder(path) == 0 && krill_outfile_open(&out, path) == KRILL_OK) {
        fprintf(out.f, "device_name %s\ndriver_version %d\n", m->device_name, m->driver_version);
#define WRITE_FIELD(name) fprintf(out.f, #name " %.17g\n", m->name);
        MODEL_FIELDS(WRITE_FIELD)
#undef WRITE_FIELD
        fprintf(out.f, "copies_overlap %d\ncopy_kernel_overlap %d\n", m->copies_overlap,
                m->copy_kernel_overlap);
        (void)krill_outfile_close(&out, 1);
    }
    krill_clear_error();
}

krill_status krill_overlap_calibrate(krill_ctx *ctx, int recompute, krill_overlap_model *model)
{
    krill_status st = KRILL_OK;
    krill_overlap_model id;
    char path[4096];
    KRILL_REQUIRE(ctx && model, "krill_overlap_calibrate: NULL argument");
    KRILL_TRY(identify(ctx, &id));
    KRILL_TRY(krill_overlap_cache_path(ctx, path, sizeof path));
    if (!recompute && cache_read(path, &id, model)) goto cleanup;
    KRILL_TRY(overlap_measure(ctx, model));
    cache_write(path, model);
cleanup:
    return st;
}

krill_status krill_overlap_default_memory(krill_ctx *ctx, double *bytes)
{
    krill_status st = KRILL_OK;
    KRILL_REQUIRE(ctx && bytes, "krill_overlap_default_memory: NULL argument");
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) {
        double free_bytes = 0;
        KRILL_TRY(overlap_gpu_free_memory(ctx, &free_bytes));
        *bytes = free_bytes - 0.05 * (double)ctx->cuda->mem_total - 256.0 * 1048576.0;
        KRILL_REQUIRE(*bytes > 0, "overlap: the GPU has only %.0f bytes free", free_bytes);
        goto cleanup;
    }
#endif
    *bytes = (double)krill_host_mem_available() / 4;
    if (*bytes > 1e18) *bytes = 1e18;            /* unknown: no limit worth the name */
cleanup:
    return st;
}
