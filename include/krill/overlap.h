/* krill/overlap.h - overlap of host-device transfers with kernels (the overlap scheduler).
 *
 * A computation too large for the device, or one whose transfers would otherwise wait for
 * its kernels, is described as blocks: each block reads some host regions (sent to the
 * device), runs a kernel, and writes some regions (received back to the host). Three parts:
 *
 *   model     krill_overlap_calibrate: the platform's transfer rates and latencies, whether
 *             copies overlap each other and kernels, the launch cost; measured once per
 *             device and thread count and cached under $XDG_CACHE_HOME/krill.
 *   planner   krill_overlap_plan_create: the order of the blocks (the next data sent is the
 *             one that makes the most blocks runnable per byte), where each region lives on
 *             the device within a memory budget, the predicted time, the lower bound, and
 *             the choice between overlapped and sequential execution.
 *   executor  krill_overlap_execute: runs a plan on three lanes (host->device copies,
 *             kernels, device->host copies: CUDA streams on a GPU context, threads on a CPU
 *             context) through pinned staging buffers, and records a timeline.
 *
 * doc/overlap.md has the model, the planner's rule and the measurements. */
#ifndef KRILL_OVERLAP_H
#define KRILL_OVERLAP_H

#include <stddef.h>
#include <stdint.h>
#include "krill/ctx.h"
#include "krill/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the platform model ---------------------------------------------------------------- */
typedef struct krill_overlap_model {
    int device;                  /* CUDA device ordinal; -1 for the CPU executor */
    char device_name[96];        /* "NVIDIA H100 80GB HBM3", or "cpu" */
    int driver_version;          /* CUDA driver version (cudaDriverGetVersion); 0 on the CPU */
    double h2d_bandwidth;        /* host->device from pinned memory, bytes/s */
    double h2d_latency;          /*   seconds per copy (fixed cost) */
    double d2h_bandwidth;        /* device->host into pinned memory, bytes/s */
    double d2h_latency;          /*   seconds per copy */
    double h2d_pageable_bandwidth;  /* the same from/to pageable memory, bytes/s (for the */
    double d2h_pageable_bandwidth;  /*   record: the executor never copies pageable memory) */
    double host_copy_bandwidth;  /* host memcpy between user memory and pinned staging, bytes/s
                                    (the staging pack of one contiguous run) */
    double host_copy_latency;    /*   seconds per pack or unpack beyond bytes / bandwidth (the
                                      call and its threads' start, measured on 1 MiB) */
    double host_copy_row_seconds;   /* a pack of pitched rows: seconds per row beyond that */
    int copies_overlap;          /* 1: a host->device and a device->host copy run together */
    int copy_kernel_overlap;     /* 1: copies run while a kernel runs */
    double launch_latency;       /* seconds to launch and finish an empty kernel */
    double issue_seconds;        /* the host's time to queue one step (a copy with its events;
                                    a kernel is counted the same): the executor's own cost per
                                    step, which many small blocks pay many times; 0 on the CPU */
    double h2d_row_seconds;      /* a pitched copy straight from page-locked rows (direct
                                    plans): seconds per row beyond the contiguous copy's */
    double d2h_row_seconds;      /*   the same device->host; 0 on the CPU */
} krill_overlap_model;

/* The model of ctx's device (CPU or CUDA): read from the cache when it holds one for this
 * device, driver and thread count (ctx's threads do the host's packing), else measured
 * (about a second) and written to the cache. recompute: measure even if cached. A cache that cannot be read or written is not an error (the model
 * is measured, and used without caching). */
krill_status krill_overlap_calibrate(krill_ctx *ctx, int recompute, krill_overlap_model *model);

/* The cache file krill_overlap_calibrate uses for ctx's device, into path[size]. */
krill_status krill_overlap_cache_path(const krill_ctx *ctx, char *path, size_t size);

/* ---- the work description ---------------------------------------------------------------
 * A region is a rows x row_bytes rectangle of host memory whose rows start `pitch` bytes
 * apart; on the device it is stored packed (rows x row_bytes, no padding). */
typedef struct krill_overlap_region {
    void *host;                  /* first byte of the first row */
    size_t row_bytes;            /* bytes in a row */
    size_t rows;                 /* rows (>= 1) */
    size_t pitch;                /* bytes between row starts in host memory (>= row_bytes) */
} krill_overlap_region;

/* A block: one kernel launch and the regions it reads and writes. A region it both reads
 * and writes is updated in place. `after` lists the blocks that must run before it; it
 * must name every earlier writer of a region the block reads or writes, and every earlier
 * reader of a region it writes (the planner orders blocks by `after` alone).
 * The kernel must write every byte of a region it only writes (the device copy starts
 * undefined, and is received whole). Regions must not overlap in host memory. */
typedef struct krill_overlap_block {
    const int32_t *in;           /* regions the kernel reads, n_in of them */
    const int32_t *out;          /* regions it writes, received to the host after it */
    const int32_t *after;        /* blocks that must have run before it */
    int32_t n_in, n_out, n_after;
    double seconds;              /* predicted kernel time (the client measures it) */
} krill_overlap_block;

/* The kernel of block `block`: launch it on `stream` (a cudaStream_t on a GPU context; NULL
 * on the CPU, where it runs to completion) reading in[0..n_in-1] and writing
 * out[0..n_out-1], device pointers to the packed regions in the block's order. */
typedef krill_status (*krill_overlap_kernel)(void *user, int32_t block, void *stream,
                                             void *const *in, void *const *out);

typedef struct krill_overlap_problem {
    const krill_overlap_region *regions;
    const krill_overlap_block *blocks;
    int32_t n_regions, n_blocks;
    krill_overlap_kernel kernel;
    void *user;                  /* passed to kernel */
} krill_overlap_problem;

/* ---- the planner -------------------------------------------------------------------------- */
typedef enum krill_overlap_mode {
    KRILL_OVERLAP_AUTO = 0,      /* overlapped unless the prediction says sequential is faster */
    KRILL_OVERLAP_PIPELINED,     /* always overlapped */
    KRILL_OVERLAP_SEQUENTIAL     /* every transfer and kernel after the previous one ends */
} krill_overlap_mode;

typedef struct krill_overlap_plan_opts {
    double memory;               /* device bytes the plan's regions may take (> 0; the clients
                                    read 0 as krill_overlap_default_memory's) */
    int send_slots;              /* pinned staging buffers for sends (0 = 3) */
    int recv_slots;              /* and for receives (0 = 3) */
    int64_t chunk_bytes;         /* a staging buffer's size (0 = 8 MiB; at least 256): a region
                                    larger moves through the buffers in chunks of this size,
                                    packed by the host while the previous chunk's DMA runs */
    krill_overlap_mode mode;
    int host_page_locked;        /* 1: every region's host memory is page-locked (cudaMallocHost,
                                    cudaHostRegister): on a GPU the copies go straight between
                                    it and the device, without staging or packing (pageable
                                    memory would still work, slowly); krill_overlap_dgemm
                                    finds it out by itself. Ignored by the CPU executor */
} krill_overlap_plan_opts;

/* Defaults: memory 0, 3 slots of 8 MiB each way, AUTO (the environment variable KRILL_OVERLAP_MODE =
 * pipelined | sequential overrides the mode: for tests and experiments). */
void krill_overlap_plan_opts_default(krill_overlap_plan_opts *opts);

/* Device bytes a plan may use on ctx by default: on a GPU, the free memory less 5% and
 * 256 MiB; on the CPU, a quarter of the available memory. */
krill_status krill_overlap_default_memory(krill_ctx *ctx, double *bytes);

typedef struct krill_overlap_plan krill_overlap_plan;

/* What a plan will do and what it predicts (seconds and bytes). */
typedef struct krill_overlap_plan_info {
    int32_t n_blocks;
    int sequential;              /* 1: runs without overlap (the mode, or AUTO's choice) */
    double sends, recvs;         /* number of copies each way (a resident region is not resent) */
    double send_bytes, recv_bytes;
    double send_seconds;         /* model time of all sends, all kernels, all receives */
    double kernel_seconds;
    double recv_seconds;
    double predicted;            /* the schedule's predicted time (as it will run) */
    double predicted_pipelined;  /* the overlapped schedule's prediction */
    double predicted_sequential; /* the same blocks run one step at a time */
    double bound;                /* the lower bound (doc/overlap.md) on the model's times */
    double device_bytes;         /* peak device memory the regions take */
    double pinned_bytes;         /* pinned staging the executor will allocate */
    int direct;                  /* 1: copies straight from and to page-locked regions (a GPU
                                    plan with host_page_locked): no staging, no packing */
} krill_overlap_plan_info;

/* Plan `problem` (its arrays are copied: the caller may free them) for a platform. Fails
 * with KRILL_ERR_ARG on a malformed problem (a region or block index out of range, a cycle
 * in `after`, more than 262144 blocks: the order's search is quadratic in them) and KRILL_ERR_DEVICE_ALLOC when even one block's regions exceed the memory,
 * naming the block and the bytes. */
krill_status krill_overlap_plan_create(const krill_overlap_model *model,
                                       const krill_overlap_problem *problem,
                                       const krill_overlap_plan_opts *opts,
                                       krill_overlap_plan **plan);
void krill_overlap_plan_destroy(krill_overlap_plan **plan);   /* NULL-safe */
void krill_overlap_plan_info_get(const krill_overlap_plan *plan, krill_overlap_plan_info *info);
/* The blocks in the order the plan runs them: order[0..n_blocks-1]. */
const int32_t *krill_overlap_plan_order(const krill_overlap_plan *plan);

/* ---- the executor ------------------------------------------------------------------------- */
typedef enum krill_overlap_lane {
    KRILL_OVERLAP_LANE_H2D = 0,  /* host -> device copies */
    KRILL_OVERLAP_LANE_KERNEL,   /* kernels */
    KRILL_OVERLAP_LANE_D2H,      /* device -> host copies */
    KRILL_OVERLAP_LANES
} krill_overlap_lane;

typedef struct krill_overlap_event {
    krill_overlap_lane lane;
    int32_t block;               /* the block the step belongs to */
    int32_t region;              /* the region copied; -1 for a kernel */
    double start, end;           /* seconds since the execution began */
    double bytes;                /* bytes copied; 0 for a kernel */
} krill_overlap_event;

typedef struct krill_overlap_timeline {
    krill_overlap_event *events; /* every copy and kernel, in issue order */
    int64_t n_events;
    double elapsed;              /* seconds from the first step's start to the last's end */
    double busy[KRILL_OVERLAP_LANES];  /* seconds each lane was busy (sum of its steps) */
    double bound;                /* the lower bound on the measured step times */
    double efficiency;           /* bound / elapsed */
    int sequential;              /* the plan ran without overlap */
} krill_overlap_timeline;

/* Run `plan` on ctx (the plan's kernels must be for ctx's device). timeline may be NULL.
 * On failure (a kernel that fails, a pinned or device allocation that fails) the steps
 * already issued drain, everything is freed and the message names the block and why; the
 * host copies of the written regions are then partly updated. */
krill_status krill_overlap_execute(krill_ctx *ctx, const krill_overlap_plan *plan,
                                   krill_overlap_timeline *timeline);
void krill_overlap_timeline_free(krill_overlap_timeline *timeline);   /* NULL-safe */

/* The GPU executor keeps the pinned staging slots of finished executions (up to 1 GiB) for
 * the next one of the same slot size; this frees them (page-locked memory is a scarce
 * system resource). Thread-safe; nothing to do on the CPU. */
void krill_overlap_release_staging(void);

/* The timeline as an SVG picture with three lanes (like Figure 7 of the paper). */
krill_status krill_overlap_timeline_svg(const krill_overlap_timeline *timeline,
                                        const char *title, const char *path);

/* Check a timeline: steps on one lane do not overlap; with its plan, no step starts before
 * the steps it waits for ended, and, derived from the regions alone, no kernel or receive
 * starts before the data it reads was on the device (sent, or written by the last kernel
 * that wrote it) and no send before the region's last receive ended; without (plan NULL),
 * no block's kernel starts before its sends ended and no receive before its kernel ended.
 * (Reuse of device bytes is checked only through the plan's waits.) KRILL_ERR_INTERNAL
 * naming the offending step otherwise. */
krill_status krill_overlap_timeline_check(const krill_overlap_plan *plan,
                                          const krill_overlap_timeline *timeline);

/* ---- client: out-of-core matrix multiply -------------------------------------------------
 * C = A B with A (h x m), B (m x w), C (h x w) row-major in host memory (leading dimensions
 * lda, ldb, ldc >= the column counts), computed on ctx in blocks of C: block (i, j) reads
 * A's row panel i and B's column panel j (each sent once while it stays resident) and
 * writes C's block. On a GPU the block kernel is cuBLAS DGEMM; on the CPU, krill's blocked
 * DGEMM (every C element sums its m products in order, so the result does not depend on
 * the block size). */
typedef struct krill_overlap_gemm_opts {
    krill_overlap_plan_opts plan;  /* memory budget, slots, mode */
    int64_t block;               /* the side of C's blocks; 0: the planner picks */
    krill_overlap_timeline *timeline;  /* if not NULL: receives the run's timeline */
} krill_overlap_gemm_opts;

typedef struct krill_overlap_gemm_report {
    int64_t block;               /* the rows of C's blocks used (the whole C: max(h, w)) */
    int64_t block_cols;          /* their columns: block (square), or w (full-width strips) */
    krill_overlap_plan_info plan;
    double seconds;              /* wall time of the execution: staging allocation, packing
                                    and timeline recording included (the timeline's
                                    elapsed, first step to last, excludes them) */
    double efficiency;           /* the timeline's: bound / elapsed */
} krill_overlap_gemm_report;

void krill_overlap_gemm_opts_default(krill_overlap_gemm_opts *opts);
krill_status krill_overlap_dgemm(krill_ctx *ctx, int64_t h, int64_t m, int64_t w,
                                 const double *a, int64_t lda, const double *b, int64_t ldb,
                                 double *c, int64_t ldc, const krill_overlap_gemm_opts *opts,
                                 krill_overlap_gemm_report *report);

#ifdef __cplusplus
}
#endif
#endif
