/* overlap/overlap_impl.h - internals of the overlap scheduler (include/krill/overlap.h).
 *
 * Layers, arrows pointing down:
 *   gemm.c        a client (out-of-core DGEMM): describes blocks, never touches lanes
 *   exec.c        the executor: walks a plan's steps, packs and unpacks the pinned staging
 *                 ring, issues each step on its lane through an overlap_backend
 *   exec_cpu.c    the CPU backend: one thread per lane, memcpy for copies
 *   gpu.cu        the GPU backend (one CUDA stream per lane, events for order and times),
 *                 the GPU measurements of the model, the DGEMM client's cuBLAS kernel
 *   timeline.c    the timeline's checks and its SVG picture
 *   plan.c        the planner: the problem checked and copied, the block order, the plan
 *   steps.c       the planner's placement in device memory and the steps with their waits
 *   predict.c     the planner's prediction (a simulation on the model) and the bound
 *   model.c       the platform model: calibration on the CPU, the cache file
 *
 * A plan is a list of steps in issue order. A step is a send (one region host -> device),
 * a kernel (one block), or a receive (one region device -> host). Every step names the
 * earlier steps it must wait for: a kernel its sends; a receive its kernel; a send, or a
 * kernel writing a region placed anew, the last users of the device bytes it overwrites.
 * Steps on one lane also run in issue order. The executor therefore needs nothing but the
 * steps: the planner has resolved every dependency into waits. */
#ifndef KRILL_OVERLAP_IMPL_H
#define KRILL_OVERLAP_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include "core/core_impl.h"
#include "krill/overlap.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OVERLAP_ALIGN 256           /* device placement granule, bytes */
/* The default staging chunk: an 8 MiB DMA copy runs at 97% of the copy engine's rate (4-5 us
   of latency against 150 us at 55 GB/s), and 3 + 3 of them are 48 MiB of pinned memory
   whatever the regions' sizes */
#define OVERLAP_CHUNK_BYTES ((int64_t)8 << 20)
/* The most blocks a plan may have: the order's search is O(blocks^2) steps (doc/overlap.md
   gives its measured times) */
#define OVERLAP_MAX_BLOCKS 262144

typedef enum overlap_step_kind { OVERLAP_SEND = 0, OVERLAP_KERNEL = 1, OVERLAP_RECV = 2 } overlap_step_kind;

typedef struct overlap_step {
    int32_t kind;                /* overlap_step_kind; its lane is the same number */
    int32_t block;               /* the block it belongs to */
    int32_t region;              /* send/receive: the region; kernel: -1 */
    int64_t offset;              /* send/receive: the region's device offset */
    int64_t wait_first;          /* waits[wait_first .. wait_first + n_wait - 1]: steps that */
    int32_t n_wait;              /*   must end before this one starts */
    int64_t host_after;          /* send: a receive of the same region that must have reached
                                    host memory before the region is packed; -1: none */
    int64_t args_first;          /* kernel: args[args_first ..]: the device offsets of the
                                    block's in regions, then its out regions */
    double seconds;              /* the model's time of the step */
} overlap_step;

struct krill_overlap_plan {
    krill_overlap_model model;
    krill_overlap_plan_opts opts;
    /* the problem, copied */
    int32_t n_regions, n_blocks;
    krill_overlap_region *regions;
    int32_t *blk_in_first, *blk_out_first;   /* CSR of each block's in and out regions */
    int32_t *blk_in, *blk_out;
    double *blk_seconds;
    krill_overlap_kernel kernel;
    void *user;
    /* the plan */
    int32_t *order;              /* blocks in run order */
    overlap_step *steps;
    int64_t n_steps;
    int64_t *waits;
    int64_t *args;
    int64_t arena_bytes;         /* device bytes the executor allocates */
    int64_t chunk_bytes;         /* a staged copy moves in chunks of this many bytes */
    int64_t slot_bytes;          /* bytes of one staging slot: min(chunk_bytes, the largest
                                    region) */
    krill_overlap_plan_info info;
};

/* The bytes of a region (rows x row_bytes: its packed size on the device). */
static inline int64_t overlap_region_bytes(const krill_overlap_region *r)
{
    return (int64_t)(r->rows * r->row_bytes);
}

/* The chunks of a staged copy of region r (at least 1); chunk c covers the packed bytes
 * [c chunk_bytes, min((c + 1) chunk_bytes, bytes)). */
static inline int64_t overlap_chunks(const krill_overlap_plan *p, int32_t r)
{
    const int64_t bytes = overlap_region_bytes(&p->regions[r]);
    return bytes <= p->chunk_bytes ? 1 : (bytes + p->chunk_bytes - 1) / p->chunk_bytes;
}

/* 1 if the plan's copies go straight between the regions' page-locked host memory and a
 * GPU (no staging slots, no packing): the option, on a GPU model. */
static inline int overlap_direct(const krill_overlap_plan *p)
{
    return p->opts.host_page_locked && p->model.device >= 0;
}

/* Block b's regions, its inputs then its outputs (a region updated in place twice):
 * overlap_blk_region(p, b, k) for 0 <= k < overlap_blk_count(p, b). */
static inline int32_t overlap_blk_count(const krill_overlap_plan *p, int32_t b)
{
    return p->blk_in_first[b + 1] - p->blk_in_first[b] + p->blk_out_first[b + 1] -
           p->blk_out_first[b];
}

static inline int32_t overlap_blk_region(const krill_overlap_plan *p, int32_t b, int32_t k)
{
    const int32_t n_in = p->blk_in_first[b + 1] - p->blk_in_first[b];
    return k < n_in ? p->blk_in[p->blk_in_first[b] + k] : p->blk_out[p->blk_out_first[b] + k - n_in];
}

/* 1 if block b reads or writes region r */
static inline int overlap_blk_uses(const krill_overlap_plan *p, int32_t b, int32_t r)
{
    int used = 0;
    for (int32_t k = 0; k < overlap_blk_count(p, b) && !used; k++) used = overlap_blk_region(p, b, k) == r;
    return used;
}

/* steps.c: placement and steps for the plan's order (plan.c's parts 2 and 3). */
krill_status overlap_build_steps(krill_overlap_plan *p);

/* predict.c: the makespan of the steps as they would run on the plan's model (sequential:
 * one at a time); step_end (NULL, or n_steps entries): each step's end on the device. Used
 * for the prediction and by the tests. */
krill_status overlap_plan_simulate(const krill_overlap_plan *plan, int sequential,
                                   double *elapsed, double *step_end);

/* predict.c: the lower bound on given step times (the model's, or measured ones):
 * max(S + kmin, F + K + D, F + k0 + R) with S, K, R the lanes' totals, F the first block's
 * sends, k0 its kernel, D the last block's receives, kmin the shortest kernel. */
double overlap_bound(const krill_overlap_plan *plan, const double *step_seconds);

/* ---- the executor's backend ------------------------------------------------------------
 * One instance per execution. A backend queues steps on lanes and reports their times; the
 * waits of a step are steps already queued (the executor guarantees it). */
typedef struct overlap_exec overlap_exec;

typedef struct overlap_backend {
    const char *name;
    /* lanes, per-step completion records, the device arena (arena_bytes), and the staging
       slots (n_send + n_recv of slot_bytes, pinned on a GPU) */
    krill_status (*open)(overlap_exec *x);
    /* queue step `s` whole on its lane after its waits: a kernel (the problem's, with its
       arguments), or a direct plan's copy (between the region itself and the device) */
    krill_status (*issue)(overlap_exec *x, int64_t s, void *const *in, void *const *out);
    /* queue one chunk of staged copy step s: between staging slot `slot` of its direction
       and the device bytes [offset + at, offset + at + bytes); `first`: after the step's
       waits, its start; `last`: its end */
    krill_status (*copy)(overlap_exec *x, int64_t s, int slot, int64_t at, int64_t bytes,
                         int first, int last);
    int (*slot_done)(overlap_exec *x, int kind, int slot);   /* 1 once its last copy ended */
    krill_status (*slot_wait)(overlap_exec *x, int kind, int slot);
    int (*done)(overlap_exec *x, int64_t s);                 /* 1 once step s has ended */
    krill_status (*wait)(overlap_exec *x, int64_t s);        /* until step s has ended */
    /* after drain: step s's start and end in seconds since the first step's start */
    krill_status (*times)(overlap_exec *x, int64_t s, double *start, double *end);
    krill_status (*drain)(overlap_exec *x);                  /* wait for every queued step */
    void (*close)(overlap_exec *x);                          /* free all (after drain) */
} overlap_backend;

struct overlap_exec {
    krill_ctx *ctx;
    const krill_overlap_plan *plan;
    const overlap_backend *backend;
    char *arena;                 /* device memory: arena_bytes */
    void **send_slot, **recv_slot;   /* staging buffers */
    int n_send, n_recv;          /* 0 and 0 when direct */
    int direct;                  /* overlap_direct: copies from and to the regions themselves */
    int32_t max_args;            /* the most regions of one block */
    void *state;                 /* the backend's own */
};

extern const overlap_backend overlap_cpu_backend;      /* exec_cpu.c */
#ifdef KRILL_HAVE_CUDA
extern const overlap_backend overlap_gpu_backend;      /* gpu.cu */
/* gpu.cu: the driver version of ctx's GPU into model->driver_version */
krill_status overlap_gpu_identify(const krill_ctx *ctx, krill_overlap_model *model);
/* gpu.cu: measure ctx's GPU into model (its identity already filled) */
krill_status overlap_gpu_calibrate(krill_ctx *ctx, krill_overlap_model *model);
/* gpu.cu: 1 if [p, p + bytes) is page-locked host memory the CUDA runtime knows (its first
 * and its last byte are) */
int overlap_gpu_page_locked(const void *p, size_t bytes);
/* gpu.cu: free device memory of ctx's GPU */
krill_status overlap_gpu_free_memory(krill_ctx *ctx, double *bytes);
/* gpu.cu: the cuBLAS block kernel and its timing on zeroed scratch */
krill_status overlap_gpu_dgemm_block(krill_ctx *ctx, void *stream, int64_t bh, int64_t m,
                                     int64_t bw, const double *a, const double *b, double *c);
krill_status overlap_gpu_time_dgemm(krill_ctx *ctx, int64_t bh, int64_t m, int64_t bw,
                                    double *seconds);
#endif

/* model.c: the median seconds of packing 1 MiB from src into dst (each of 1 MiB at least)
 * beyond 1 MiB / bandwidth: the model's host_copy_latency */
double overlap_pack_latency(void *src, void *dst, double bandwidth, int threads);

/* model.c: the model's host_copy_row_seconds: packs of 1024 rows of 1 KiB at a 2 KiB pitch
 * (src: 16 MiB, dst: 8 MiB at least), their time beyond latency + bytes / bandwidth, per row */
double overlap_pack_row_seconds(char *src, char *dst, double bandwidth, double latency,
                                int threads);

/* model.c: the model of ctx's device, no cache (calibrate's measurement) */
krill_status overlap_measure(krill_ctx *ctx, krill_overlap_model *model);

/* exec.c: the device pointers of kernel step s's regions: in[] its inputs, out[] its
 * outputs (room for max_args each). */
void overlap_kernel_args(const overlap_exec *x, int64_t s, void **in, void **out);
/* exec.c: run kernel step s (the problem's kernel on `stream`); a failure's message names
 * the block. */
krill_status overlap_run_kernel(const overlap_exec *x, int64_t s, void *stream,
                                void *const *in, void *const *out);

/* exec.c: copy the packed bytes [lo, hi) of a region between host memory (pitched) and a
 * buffer holding them from its start, with the context's threads when they are many.
 * to_packed: host -> buffer. */
void overlap_pack_range(const krill_overlap_region *r, void *packed, size_t lo, size_t hi,
                        int to_packed, int threads);

/* The whole region. */
static inline void overlap_pack(const krill_overlap_region *r, void *packed, int to_packed,
                                int threads)
{
    overlap_pack_range(r, packed, 0, r->rows * r->row_bytes, to_packed, threads);
}

#ifdef __cplusplus
}
#endif
#endif
