/* core/nccl.cu - a GPU rank's reductions on the device, through NCCL (doc/mpi.md, "GPU-side
 * reductions"): the sums never leave the GPU and the host never waits for them.
 *
 * Without NCCL a device reduction is a round trip (krill_ctx_allreduce_device in ctx.c):
 * wait for the stream, copy down, MPI_Allreduce on the host, copy up; the GPU idles for
 * tens of microseconds. Here it is one ncclAllReduce group queued on the context's stream,
 * in place on the device (8 bytes a double per rank, NCCL's tree or ring), after the kernels
 * that made the local sums and before the kernels that read the result.
 *
 * Failures. A rank whose local work failed cannot say so at once: the others do not wait.
 * Every group therefore also reduces a failure code, the maximum over the ranks of
 * (65536 - rank) * 64 + status on a rank that failed and 0 elsewhere: the lowest failing
 * rank and its status, on every rank, with no other collective. A one-thread kernel before
 * each group folds the last group's code into an accumulator and sets this rank's
 * contribution; the pair (code, accumulator) follows the group to page-locked memory. The
 * failing rank keeps its status and message, queues the group like the others and returns
 * KRILL_OK: it still makes every collective the others make. The code is looked at where
 * the host reads results: every download (krill_mem_download) and the solvers'
 * asynchronous reads (krill_nccl_mark / _check, which copy it with their data).
 * There a raised code makes the read fail on each rank by itself: the failing rank with its
 * own message, the others with its rank and status. So no rank acts on a failed sum, and a
 * read made by some ranks only cannot hang. Limit: a rank whose device keeps failing (a
 * sticky CUDA error) may leave by another path before that read, and the others then wait
 * in NCCL; the host path (the default) returns such a failure at the reduction itself.
 *
 * Used by default from four ranks on, the reductions always and each distributed matrix's
 * halo exchange where timing at its setup finds it faster (dist/mat.c; nccl_mode below says
 * what was measured), and as KRILL_NCCL says (1: reductions and every halo; reductions: the
 * halos stay on the host path; 0: never; auto: the default). NCCL needs one GPU per rank:
 * ranks that share a GPU (more ranks than GPUs) take the host path, as do builds without
 * NCCL. */
#include <cuda_runtime.h>
#include <math.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cuda_impl.h"
#include "kernels/kernels_impl.cuh"

struct krill_nccl {
    ncclComm_t comm;
    double *dev;             /* device, NCCL_DEV doubles: [0] the failure code of the last
                                group, [1] the largest code of the groups before it since
                                the last raise, [2..5] the norm's scratch */
    double *seen;            /* page-locked, NCCL_SEEN doubles: pairs dev[0..1], [0..1]
                                after the latest group, [2 + 2 s ..] at the asynchronous
                                read of slot s (0, 1) */
    int unsettled;           /* groups queued since the flag was last looked at */
    int halo;                /* the halo exchanges: KRILL_NCCL_HALO_* (KRILL_NCCL) */
    krill_status failed;     /* this rank's first failure before a reduction, KRILL_OK */
    char message[512];       /* its message */
};

#define NCCL_DEV 6
#define NCCL_SEEN 6
#define CODE_STATUSES 64     /* krill_status values < 64; ranks < 65536 */

#define NCCL_TRY(call)                                                                       \
    do {                                                                                     \
        ncclResult_t r_ = (call);                                                            \
        if (r_ != ncclSuccess) {                                                             \
            st = krill_error(KRILL_ERR_DEVICE, "%s failed: %s", #call, ncclGetErrorString(r_)); \
            goto cleanup;                                                                    \
        }                                                                                    \
    } while (0)

/* abort: ncclCommAbort, which does not wait for the other ranks (a failed init, or a
 * failure not yet raised); else ncclCommDestroy, which the ranks reach together. */
static void nccl_free(krill_nccl *g, int abort)
{
    if (!g) return;
    if (g->comm) (void)(abort ? ncclCommAbort(g->comm) : ncclCommDestroy(g->comm));
    if (g->dev) (void)cudaFree(g->dev);
    if (g->seen) (void)cudaFreeHost(g->seen);
    (void)cudaGetLastError();
    krill_free(g);
}

/* KRILL_NCCL in the environment: 1 (on, yes) NCCL for the reductions and every halo;
 * "reductions" NCCL for the reductions, the halos through the host; 0 (off, no) neither;
 * unset, "auto" or anything else: from NCCL_AUTO_RANKS ranks on the reductions through NCCL
 * and each distributed matrix's halo by the path its setup timed (dist/mat.c),
 * below that neither. On four H200s NCCL's halos made poisson3d's iterations 1.35-1.41x
 * faster and elasticity3d's (a halo 6x larger, an SpMV 10x longer) up to 1.27x slower; on two
 * NCCL was slower for CG: doc/mpi.md. Returns a nccl_mode value. */
#define NCCL_AUTO_RANKS 4
enum { MODE_HOST, MODE_REDUCTIONS, MODE_HALOS, MODE_AUTO };   /* ordered: the ranks take the least */
static int nccl_mode(int size)
{
    const char *e = getenv("KRILL_NCCL");
    if (e && (!strcmp(e, "1") || !strcmp(e, "on") || !strcmp(e, "yes"))) return MODE_HALOS;
    if (e && !strcmp(e, "reductions")) return MODE_REDUCTIONS;
    if (e && (!strcmp(e, "0") || !strcmp(e, "off") || !strcmp(e, "no"))) return MODE_HOST;
    return size >= NCCL_AUTO_RANKS ? MODE_AUTO : MODE_HOST;
}

/* This rank's part before the collective init: the flag and scratch (zeroed), the
 * page-locked copies, the GPU's UUID. */
static krill_status nccl_prepare(krill_ctx *ctx, krill_nccl **out, cudaUUID_t *uuid)
{
    krill_status st = KRILL_OK;
    krill_nccl *g = NULL;
    cudaDeviceProp prop;
    KRILL_CALLOC(g, 1);
    KRILL_CUDA_TRY(cudaSetDevice(ctx->device_id));
    KRILL_CUDA_TRY(cudaGetDeviceProperties(&prop, ctx->device_id));
    *uuid = prop.uuid;
    KRILL_TRY(krill_cuda_alloc(ctx, (void **)&g->dev, NCCL_DEV * sizeof(double), "NCCL flag"));
    KRILL_CUDA_TRY(cudaMemsetAsync(g->dev, 0, NCCL_DEV * sizeof(double), krill_cuda_stream(ctx)));
    KRILL_CUDA_TRY(cudaMallocHost((void **)&g->seen, NCCL_SEEN * sizeof(double)));
    memset(g->seen, 0, NCCL_SEEN * sizeof(double));
    KRILL_TRY(krill_cuda_sync(ctx));
    *out = g;
    g = NULL;
cleanup:
    nccl_free(g, 1);
    return st;
}

/* Collective over ctx->comm (size > 1, a GPU context): every rank gets an NCCL communicator,
 * or none does (ctx->nccl stays NULL: ranks sharing a GPU, fewer than 4 ranks without
 * KRILL_NCCL=1 or "reductions" on every rank, KRILL_NCCL=0, a failed init; reported in
 * ctx->describe's "reductions" but no error). An error only when a
 * collective step of krill's own failed. */
extern "C" krill_status krill_nccl_create(krill_ctx *ctx)
{
    krill_status st = KRILL_OK, local = KRILL_OK;
    krill_nccl *g = NULL;
    const int size = ctx->comm->size, rank = ctx->comm->rank;
    cudaUUID_t uuid;
    unsigned char *uuids = NULL, *ids = NULL;
    ncclUniqueId id;
    const char *why = NULL;
    int shared = 0, version = 0, mode;
    size_t len = strlen(ctx->describe);
    int64_t modes[2];
    memset(&uuid, 0, sizeof uuid);
    memset(&id, 0, sizeof id);
    /* the mode every rank asked for (the smallest: no rank does what another does not) */
    modes[0] = nccl_mode(size);
    modes[1] = -modes[0];
    KRILL_TRY(krill_ctx_allreduce_i64(ctx, modes, 2, KRILL_REDUCE_MAX));
    mode = (int)-modes[1];
    if (mode == MODE_HOST) {
        why = modes[0] ? "KRILL_NCCL differs between the ranks"
                       : (size < NCCL_AUTO_RANKS ? "fewer than 4 ranks; KRILL_NCCL=1 asks for it"
                                                 : "KRILL_NCCL=0");
        goto cleanup;
    }
    local = nccl_prepare(ctx, &g, &uuid);
    if (local == KRILL_OK)
        g->halo = mode == MODE_HALOS  ? KRILL_NCCL_HALO_ALWAYS
                : mode == MODE_AUTO   ? KRILL_NCCL_HALO_TIMED
                                      : KRILL_NCCL_HALO_NEVER;
    if (local == KRILL_OK)
        local = krill_alloc_n((void **)&uuids, (size_t)size, sizeof uuid, 0, "GPU UUIDs");
    if (local == KRILL_OK)
        local = krill_alloc_n((void **)&ids, (size_t)size, sizeof id, 0, "NCCL ids");
    KRILL_TRY(krill_ctx_agree(ctx, local));
    KRILL_TRY(krill_ctx_allgather(ctx, &uuid, sizeof uuid, uuids));
    for (int r = 0; r < size && !shared; r++)
        for (int q = r + 1; q < size && !shared; q++)
            shared = !memcmp(uuids + r * sizeof uuid, uuids + q * sizeof uuid, sizeof uuid);
    if (shared) {   /* NCCL refuses two ranks on one GPU */
        why = "ranks share a GPU";
        goto cleanup;
    }
    if (rank == 0) {
        ncclResult_t r = ncclGetUniqueId(&id);
        if (r != ncclSuccess)
            local = krill_error(KRILL_ERR_DEVICE, "ncclGetUniqueId: %s", ncclGetErrorString(r));
    }
    KRILL_TRY(krill_ctx_agree(ctx, local));
    KRILL_TRY(krill_ctx_allgather(ctx, &id, sizeof id, ids));   /* rank 0's id to all */
    memcpy(&id, ids, sizeof id);
    {
        ncclResult_t r = ncclCommInitRank(&g->comm, size, id, rank);
        local = KRILL_OK;
        if (r != ncclSuccess) {
            g->comm = NULL;
            local = krill_error(KRILL_ERR_DEVICE, "ncclCommInitRank: %s", ncclGetErrorString(r));
        }
        if (krill_ctx_agree(ctx, local) != KRILL_OK) {   /* not fatal: the host path */
            why = "NCCL's init failed";
            goto cleanup;
        }
        /* NCCL connects the ranks at a communicator's first collective (hundreds of ms on
         * four H200s): one all-reduce of the zeroed scratch here, so that the context's
         * creation pays it and not the first solve's first reduction */
        r = ncclAllReduce(g->dev + 2, g->dev + 2, 4, ncclDouble, ncclSum, g->comm,
                          krill_cuda_stream(ctx));
        local = r == ncclSuccess ? krill_cuda_sync(ctx)
                                 : krill_error(KRILL_ERR_DEVICE, "ncclAllReduce (the first): %s",
                                               ncclGetErrorString(r));
        if (krill_ctx_agree(ctx, local) != KRILL_OK) {
            why = "NCCL's first all-reduce failed";
            goto cleanup;
        }
    }
    ctx->nccl = g;
    g = NULL;
cleanup:
    (void)ncclGetVersion(&version);
    if (st == KRILL_OK && ctx->nccl)
        snprintf(ctx->describe + len, sizeof ctx->describe - len, ", reductions%s: NCCL %d.%d.%d%s",
                 ctx->nccl->halo == KRILL_NCCL_HALO_ALWAYS ? " and halos" : "",
                 version / 10000, version / 100 % 100, version % 100,
                 ctx->nccl->halo == KRILL_NCCL_HALO_TIMED ? " (halos: timed at setup)"
                                                          : "");
    else if (st == KRILL_OK && why)
        snprintf(ctx->describe + len, sizeof ctx->describe - len, ", reductions: host (%s)", why);
    krill_free(uuids);
    krill_free(ids);
    nccl_free(g, 1);
    return st;
}

extern "C" void krill_nccl_destroy(krill_ctx *ctx)
{
    if (!ctx->nccl) return;
    (void)cudaStreamSynchronize(krill_cuda_stream(ctx));
    nccl_free(ctx->nccl, ctx->nccl->failed != KRILL_OK);
    ctx->nccl = NULL;
}

extern "C" void *krill_nccl_halo_comm(const krill_ctx *ctx)
{
    return ctx->nccl && ctx->nccl->halo != KRILL_NCCL_HALO_NEVER ? ctx->nccl->comm : NULL;
}

extern "C" int krill_nccl_halo_mode(const krill_ctx *ctx)
{
    return ctx->nccl ? ctx->nccl->halo : KRILL_NCCL_HALO_NEVER;
}

/* d[1] = max(d[1], d[0]) (the last group's code kept), d[0] = this rank's code */
__global__ void flag_prep_kernel(double *d, double code)
{
    d[1] = fmax(d[1], d[0]);
    d[0] = code;
}

/* Before a group: a rank whose local work failed keeps its status and message (the first),
 * and contributes its code to every group until the code is raised. */
static void flag_local(krill_ctx *ctx, krill_status local)
{
    krill_nccl *g = ctx->nccl;
    double code = 0.0;
    if (local != KRILL_OK && g->failed == KRILL_OK) {
        g->failed = local;
        snprintf(g->message, sizeof g->message, "%s", krill_last_error());
    }
    if (g->failed != KRILL_OK)
        code = (65536.0 - ctx->comm->rank) * CODE_STATUSES + (double)g->failed;
    flag_prep_kernel<<<1, 1, 0, krill_cuda_stream(ctx)>>>(g->dev, code);
    (void)cudaGetLastError();  /* the device may be what failed: NCCL still runs or not */
}

/* The pair (code, accumulator) as the stream has it now to seen[2 where ..]: after a group
 * where = 0 (the next download looks there), at an asynchronous read of slot s 1 + s. */
static krill_status flag_copy(krill_ctx *ctx, int where)
{
    krill_status st = KRILL_OK;
    krill_nccl *g = ctx->nccl;
    KRILL_CUDA_TRY(cudaMemcpyAsync(g->seen + 2 * where, g->dev, 2 * sizeof(double),
                                   cudaMemcpyDeviceToHost, krill_cuda_stream(ctx)));
    if (where == 0) g->unsettled = 1;
cleanup:
    return st;
}

/* One in-place allreduce of count doubles into the open group (count = 0: none). */
static krill_status group_add(krill_ctx *ctx, double *buf, int count, ncclRedOp_t op)
{
    krill_status st = KRILL_OK;
    if (count > 0)
        NCCL_TRY(ncclAllReduce(buf, buf, (size_t)count, ncclDouble, op, ctx->nccl->comm,
                               krill_cuda_stream(ctx)));
cleanup:
    return st;
}

/* A group: the sums (up to two runs) and the flag; the group is closed whatever failed. */
static krill_status group_run(krill_ctx *ctx, krill_status local, double *a, int na,
                              ncclRedOp_t opa, double *b, int nb, ncclRedOp_t opb)
{
    krill_status st = KRILL_OK, sb, sf;
    flag_local(ctx, local);
    NCCL_TRY(ncclGroupStart());
    /* every rank's group holds the same operations: each is added whatever failed before */
    st = group_add(ctx, a, na, opa);
    sb = group_add(ctx, b, nb, opb);
    sf = group_add(ctx, ctx->nccl->dev, 1, ncclMax);
    if (st == KRILL_OK) st = sb != KRILL_OK ? sb : sf;
    NCCL_TRY(ncclGroupEnd());
cleanup:
    return st;
}

extern "C" krill_status krill_nccl_allreduce(krill_ctx *ctx, krill_status local, double *dev,
                                             int count, double *dev2, int count2)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(group_run(ctx, local, dev, count, ncclSum, dev2, count2, ncclSum));
    KRILL_TRY(flag_copy(ctx, 0));
cleanup:
    return st;
}

/* ---- the norm: sqrt of the sum of the squares, scaled when that leaves the range --------
 * scratch d[2] = mine^2 (summed), d[3] = mine (maximum), d[4] = (mine / max)^2 (summed),
 * d[5] = mine; the same result as the host path (ctx.c): sqrt(sum) when the sum is NaN or a
 * finite number above 1e-290, else max * sqrt(sum (mine / max)^2), or max itself when it is
 * 0, infinite or NaN. Two groups always (the device decides which result it keeps). */
__global__ void nrm2_square_kernel(const double *x, double *d)
{
    d[2] = x[0] * x[0];
    d[3] = x[0];
    d[5] = x[0];
}

__global__ void nrm2_scale_kernel(double *d)
{
    const double m = d[3];
    d[4] = (m > 0.0 && isfinite(m)) ? (d[5] / m) * (d[5] / m) : 0.0;
}

__global__ void nrm2_finish_kernel(double *x, const double *d)
{
    const double sum = d[2], m = d[3];
    if (isnan(sum) || (isfinite(sum) && sum > 1e-290))
        x[0] = sqrt(sum);
    else
        x[0] = (m > 0.0 && isfinite(m)) ? m * sqrt(d[4]) : m;
}

extern "C" krill_status krill_nccl_nrm2(krill_ctx *ctx, krill_status local, double *dev)
{
    krill_status st = KRILL_OK;
    double *d = ctx->nccl->dev;
    cudaStream_t s = krill_cuda_stream(ctx);
    nrm2_square_kernel<<<1, 1, 0, s>>>(dev, d);
    if (local == KRILL_OK) local = krill_cuda_check_launch("nrm2_square_kernel");
    KRILL_TRY(group_run(ctx, local, d + 2, 1, ncclSum, d + 3, 1, ncclMax));
    nrm2_scale_kernel<<<1, 1, 0, s>>>(d);
    KRILL_TRY(group_run(ctx, krill_cuda_check_launch("nrm2_scale_kernel"), d + 4, 1, ncclSum,
                        NULL, 0, ncclSum));
    nrm2_finish_kernel<<<1, 1, 0, s>>>(dev, d);
    KRILL_TRY(krill_cuda_check_launch("nrm2_finish_kernel"));
    KRILL_TRY(flag_copy(ctx, 0));
cleanup:
    return st;
}

/* ---- where the host looks at the flag ------------------------------------------------- */

/* The code seen at seen[2 where ..], raised or 0. A raised code: the stream is drained
 * (the groups queued after the read complete on every rank, which queued them too), the
 * code and accumulator cleared, and this rank's failure forgotten; the read fails with the
 * failing rank's status: its own message there, its rank and status elsewhere. */
static krill_status flag_look(krill_ctx *ctx, int where)
{
    krill_status st = KRILL_OK;
    krill_nccl *g = ctx->nccl;
    const double code = fmax(g->seen[2 * where], g->seen[2 * where + 1]);
    int rank;
    krill_status status;
    if (code == 0.0) goto cleanup;
    rank = 65536 - (int)(code / CODE_STATUSES);
    status = (krill_status)((int64_t)code % CODE_STATUSES);
    if (rank == ctx->comm->rank && g->failed != KRILL_OK)
        st = krill_error(g->failed, "%s", g->message);
    else
        st = krill_error(status, "rank %d of %d: %s before a device reduction (NCCL; its "
                         "message is in that rank's output)", rank, ctx->comm->size,
                         krill_status_string(status));
    (void)cudaStreamSynchronize(krill_cuda_stream(ctx));
    (void)cudaMemsetAsync(g->dev, 0, 2 * sizeof(double), krill_cuda_stream(ctx));
    (void)cudaStreamSynchronize(krill_cuda_stream(ctx));
    (void)cudaGetLastError();
    memset(g->seen, 0, NCCL_SEEN * sizeof(double));
    g->failed = KRILL_OK;
    g->unsettled = 0;
cleanup:
    return st;
}

extern "C" krill_status krill_nccl_settle(krill_ctx *ctx)
{
    krill_status st = KRILL_OK;
    krill_nccl *g = ctx->nccl;
    if (!g->unsettled) goto cleanup;
    /* the copy to seen[0..1] is on the stream: a download has waited for it, unless it moved
     * nothing (then this wait is the download's; on an idle stream a few microseconds) */
    KRILL_CUDA_TRY(cudaStreamSynchronize(krill_cuda_stream(ctx)));
    g->unsettled = 0;
    st = flag_look(ctx, 0);
cleanup:
    return st;
}

extern "C" krill_status krill_nccl_mark(krill_ctx *ctx, int slot)
{
    return flag_copy(ctx, 1 + slot);
}

extern "C" krill_status krill_nccl_check(krill_ctx *ctx, int slot)
{
    return flag_look(ctx, 1 + slot);
}
