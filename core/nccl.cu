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
 * Every group therefore also reduces a failure flag (one device double, the maximum over
 * the ranks, sticky: 1 once any rank failed before any reduction), and a copy of it follows
 * each group to page-locked memory. The failing rank keeps its status and message, queues
 * the group like the others and returns KRILL_OK: it still makes every collective the
 * others make. The flag is looked at where the host reads results anyway, at the same point
 * of the stream on every rank: every download (krill_mem_download) and the solvers'
 * asynchronous reads (krill_ctx_reductions_mark / _check, which copy it with their data).
 * There a set flag sends every rank into krill_ctx_agree, which returns the failing rank's
 * status and message on all of them. So no rank acts on a failed sum: the host sees a
 * result only through a read that checks the flag first.
 *
 * Asked for by KRILL_NCCL=1 in the environment (KRILL_NCCL=reductions: the halo exchanges
 * stay on the host path, dist/mat.c); the default is the host round trip, which on two
 * H200s of one node was as fast (doc/mpi.md). NCCL needs one GPU per rank: ranks that
 * share a GPU (more ranks than GPUs) take the host path too, as do builds without NCCL. */
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
    double *dev;             /* device: [0] the failure flag, [1..4] the norm's scratch */
    double *seen;            /* page-locked: [0] the flag after the latest group, [1 + s] at
                                the asynchronous read of slot s (s = 0, 1) */
    int unsettled;           /* groups queued since the flag was last looked at */
    int halo;                /* the halo exchanges too (KRILL_NCCL) */
    krill_status failed;     /* this rank's first failure before a reduction, KRILL_OK */
    char message[512];       /* its message */
};

#define NCCL_TRY(call)                                                                       \
    do {                                                                                     \
        ncclResult_t r_ = (call);                                                            \
        if (r_ != ncclSuccess) {                                                             \
            st = krill_error(KRILL_ERR_DEVICE, "%s failed: %s", #call, ncclGetErrorString(r_)); \
            goto cleanup;                                                                    \
        }                                                                                    \
    } while (0)

static cudaStream_t stream_of(const krill_ctx *ctx) { return krill_cuda_stream(ctx); }

static void nccl_free(krill_nccl *g)
{
    if (!g) return;
    if (g->comm) (void)ncclCommDestroy(g->comm);
    if (g->dev) (void)cudaFree(g->dev);
    if (g->seen) (void)cudaFreeHost(g->seen);
    (void)cudaGetLastError();
    krill_free(g);
}

/* KRILL_NCCL in the environment: 1 (on, yes) NCCL for the reductions and the halos;
 * "reductions" NCCL for the reductions, the halos through the host; unset or anything
 * else, neither (the default: on two H200s of one node NCCL was not faster, doc/mpi.md).
 * Returns 0, 1 (reductions) or 2 (both). */
static int nccl_mode(void)
{
    const char *e = getenv("KRILL_NCCL");
    if (e && (!strcmp(e, "1") || !strcmp(e, "on") || !strcmp(e, "yes"))) return 2;
    if (e && !strcmp(e, "reductions")) return 1;
    return 0;
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
    KRILL_TRY(krill_cuda_alloc(ctx, (void **)&g->dev, 8 * sizeof(double), "NCCL flag"));
    KRILL_CUDA_TRY(cudaMemsetAsync(g->dev, 0, 8 * sizeof(double), stream_of(ctx)));
    KRILL_CUDA_TRY(cudaMallocHost((void **)&g->seen, 4 * sizeof(double)));
    memset(g->seen, 0, 4 * sizeof(double));
    KRILL_TRY(krill_cuda_sync(ctx));
    *out = g;
    g = NULL;
cleanup:
    nccl_free(g);
    return st;
}

/* Collective over ctx->comm (size > 1, a GPU context): every rank gets an NCCL communicator,
 * or none does (ctx->nccl stays NULL: ranks sharing a GPU, KRILL_NCCL=0, a failed init,
 * which is reported in ctx->describe's "reductions" but is no error). An error only when a
 * collective step of krill's own failed. */
extern "C" krill_status krill_nccl_create(krill_ctx *ctx)
{
    krill_status st = KRILL_OK, local;
    krill_nccl *g = NULL;
    const int size = ctx->comm->size, rank = ctx->comm->rank;
    cudaUUID_t uuid;
    unsigned char *uuids = NULL;
    ncclUniqueId id;
    const char *why = NULL;
    int shared = 0, version = 0;
    size_t len = strlen(ctx->describe);
    memset(&uuid, 0, sizeof uuid);
    memset(&id, 0, sizeof id);
    local = nccl_mode() ? nccl_prepare(ctx, &g, &uuid) : KRILL_OK;
    if (g) g->halo = nccl_mode() == 2;
    if (local == KRILL_OK)
        local = krill_alloc_n((void **)&uuids, (size_t)size, sizeof uuid, 0, "GPU UUIDs");
    if (local == KRILL_OK && rank == 0 && g) {
        ncclResult_t r = ncclGetUniqueId(&id);
        if (r != ncclSuccess)
            local = krill_error(KRILL_ERR_DEVICE, "ncclGetUniqueId: %s", ncclGetErrorString(r));
    }
    KRILL_TRY(krill_ctx_agree(ctx, local));
    {   /* every rank wants it (KRILL_NCCL agrees), each on a GPU of its own */
        int64_t want[1] = {g ? 1 : 0};
        KRILL_TRY(krill_ctx_allreduce_i64(ctx, want, 1, KRILL_REDUCE_SUM));
        if (want[0] != size) {
            why = "KRILL_NCCL not set";
            goto cleanup;
        }
    }
    KRILL_TRY(krill_ctx_allgather(ctx, &uuid, sizeof uuid, uuids));
    for (int r = 0; r < size && !shared; r++)
        for (int q = r + 1; q < size && !shared; q++)
            shared = !memcmp(uuids + r * sizeof uuid, uuids + q * sizeof uuid, sizeof uuid);
    if (shared) {
        why = "ranks share a GPU";
        goto cleanup;
    }
    /* rank 0's id to all: an allgather of 128 bytes, rank 0's kept */
    {
        unsigned char *ids = NULL;
        local = krill_alloc_n((void **)&ids, (size_t)size, sizeof id, 0, "NCCL ids");
        KRILL_TRY(krill_ctx_agree(ctx, local));
        st = krill_ctx_allgather(ctx, &id, sizeof id, ids);
        if (st == KRILL_OK) memcpy(&id, ids, sizeof id);
        krill_free(ids);
        KRILL_TRY(st);
    }
    {
        ncclResult_t r = ncclCommInitRank(&g->comm, size, id, rank);
        local = KRILL_OK;
        if (r != ncclSuccess) {
            g->comm = NULL;
            local = krill_error(KRILL_ERR_DEVICE, "ncclCommInitRank: %s", ncclGetErrorString(r));
        }
        if (krill_ctx_agree(ctx, local) != KRILL_OK) {   /* not fatal: the host path */
            why = "NCCL's init failed";
            st = KRILL_OK;
            goto cleanup;
        }
    }
    ctx->nccl = g;
    g = NULL;
cleanup:
    (void)ncclGetVersion(&version);
    if (st == KRILL_OK && ctx->nccl)
        snprintf(ctx->describe + len, sizeof ctx->describe - len, ", reductions%s: NCCL %d.%d.%d",
                 ctx->nccl->halo ? " and halos" : "", version / 10000, version / 100 % 100,
                 version % 100);
    else if (st == KRILL_OK && why)
        snprintf(ctx->describe + len, sizeof ctx->describe - len, ", reductions: host (%s)", why);
    krill_free(uuids);
    nccl_free(g);
    return st;
}

extern "C" void krill_nccl_destroy(krill_ctx *ctx)
{
    if (!ctx->nccl) return;
    (void)cudaStreamSynchronize(stream_of(ctx));
    nccl_free(ctx->nccl);
    ctx->nccl = NULL;
}

extern "C" void *krill_nccl_halo_comm(const krill_ctx *ctx)
{
    return ctx->nccl && ctx->nccl->halo ? ctx->nccl->comm : NULL;
}

/* Before a group: a rank whose local work failed keeps its status and message and sets its
 * flag to a positive double (a memset of 0x3f bytes); the group then takes the maximum. */
static void flag_local(krill_ctx *ctx, krill_status local)
{
    krill_nccl *g = ctx->nccl;
    if (local != KRILL_OK && g->failed == KRILL_OK) {
        g->failed = local;
        snprintf(g->message, sizeof g->message, "%s", krill_last_error());
    }
    if (g->failed != KRILL_OK) {
        (void)cudaMemsetAsync(g->dev, 0x3f, sizeof(double), stream_of(ctx));
        (void)cudaGetLastError();  /* the device may be what failed: NCCL still runs or not */
    }
}

/* The flag as the stream has it now to seen[where]: after a group to seen[0] (the next
 * download looks there), at an asynchronous read to its slot's. */
static krill_status flag_copy(krill_ctx *ctx, int where)
{
    krill_status st = KRILL_OK;
    krill_nccl *g = ctx->nccl;
    KRILL_CUDA_TRY(cudaMemcpyAsync(g->seen + where, g->dev, sizeof(double),
                                   cudaMemcpyDeviceToHost, stream_of(ctx)));
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
                               stream_of(ctx)));
cleanup:
    return st;
}

/* A group: the sums (up to two runs) and the flag; the group is closed whatever failed. */
static krill_status group_run(krill_ctx *ctx, krill_status local, double *a, int na,
                              ncclRedOp_t opa, double *b, int nb, ncclRedOp_t opb)
{
    krill_status st = KRILL_OK;
    flag_local(ctx, local);
    NCCL_TRY(ncclGroupStart());
    st = group_add(ctx, a, na, opa);
    if (st == KRILL_OK) st = group_add(ctx, b, nb, opb);
    if (st == KRILL_OK) st = group_add(ctx, ctx->nccl->dev, 1, ncclMax);
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
 * scratch d[1] = mine^2 (summed), d[2] = mine (maximum), d[3] = (mine / max)^2 (summed),
 * d[4] = mine; the same result as the host path (ctx.c): sqrt(sum) when the sum is NaN or a
 * finite number above 1e-290, else max * sqrt(sum (mine / max)^2), or max itself when it is
 * 0, infinite or NaN. Two groups always (the device decides which result it keeps). */
__global__ void nrm2_square_kernel(const double *x, double *d)
{
    d[1] = x[0] * x[0];
    d[2] = x[0];
    d[4] = x[0];
}

__global__ void nrm2_scale_kernel(double *d)
{
    const double m = d[2];
    d[3] = (m > 0.0 && isfinite(m)) ? (d[4] / m) * (d[4] / m) : 0.0;
}

__global__ void nrm2_finish_kernel(double *x, const double *d)
{
    const double sum = d[1], m = d[2];
    if (isnan(sum) || (isfinite(sum) && sum > 1e-290))
        x[0] = sqrt(sum);
    else
        x[0] = (m > 0.0 && isfinite(m)) ? m * sqrt(d[3]) : m;
}

extern "C" krill_status krill_nccl_nrm2(krill_ctx *ctx, krill_status local, double *dev)
{
    krill_status st = KRILL_OK;
    double *d = ctx->nccl->dev;
    cudaStream_t s = stream_of(ctx);
    nrm2_square_kernel<<<1, 1, 0, s>>>(dev, d);
    if (local == KRILL_OK) local = krill_cuda_check_launch("nrm2_square_kernel");
    KRILL_TRY(group_run(ctx, local, d + 1, 1, ncclSum, d + 2, 1, ncclMax));
    nrm2_scale_kernel<<<1, 1, 0, s>>>(d);
    KRILL_TRY(group_run(ctx, krill_cuda_check_launch("nrm2_scale_kernel"), d + 3, 1, ncclSum,
                        NULL, 0, ncclSum));
    nrm2_finish_kernel<<<1, 1, 0, s>>>(dev, d);
    KRILL_TRY(krill_cuda_check_launch("nrm2_finish_kernel"));
    KRILL_TRY(flag_copy(ctx, 0));
cleanup:
    return st;
}

/* ---- where the host looks at the flag ------------------------------------------------- */

/* A set flag, seen by every rank at the same point: all agree on the failing rank's status;
 * then the stream is drained (every rank queued the same groups, so they all complete) and
 * the flag cleared for the context's next solve. */
static krill_status flag_raised(krill_ctx *ctx)
{
    krill_status st, mine = KRILL_OK;
    krill_nccl *g = ctx->nccl;
    if (g->failed != KRILL_OK) mine = krill_error(g->failed, "%s", g->message);
    st = krill_ctx_agree(ctx, mine);
    if (st == KRILL_OK)   /* not reached: some rank raised it, so agree fails */
        st = krill_error(KRILL_ERR_INTERNAL, "a rank failed before a device reduction");
    (void)cudaStreamSynchronize(stream_of(ctx));
    (void)cudaMemsetAsync(g->dev, 0, sizeof(double), stream_of(ctx));
    (void)cudaStreamSynchronize(stream_of(ctx));
    (void)cudaGetLastError();
    memset(g->seen, 0, 3 * sizeof(double));
    g->failed = KRILL_OK;
    g->unsettled = 0;
    return st;
}

extern "C" krill_status krill_nccl_settle(krill_ctx *ctx)
{
    krill_status st = KRILL_OK;
    krill_nccl *g = ctx->nccl;
    if (!g->unsettled) goto cleanup;
    /* the copy to seen[0] is on the stream: a download has waited for it, unless it moved
     * nothing (then this wait is the download's; on an idle stream a few microseconds) */
    KRILL_CUDA_TRY(cudaStreamSynchronize(stream_of(ctx)));
    g->unsettled = 0;
    if (g->seen[0] != 0.0) st = flag_raised(ctx);
cleanup:
    return st;
}

extern "C" krill_status krill_nccl_mark(krill_ctx *ctx, int slot)
{
    return flag_copy(ctx, 1 + slot);
}

extern "C" krill_status krill_nccl_check(krill_ctx *ctx, int slot)
{
    return ctx->nccl->seen[1 + slot] != 0.0 ? flag_raised(ctx) : KRILL_OK;
}
