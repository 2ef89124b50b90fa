/* core/ctx.c - execution contexts: CPU (OpenMP) or one CUDA device. */
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/core_impl.h"
#ifdef KRILL_HAVE_CUDA
#include "core/cuda_impl.h"
#endif

int krill_cuda_device_count(void)
{
#ifdef KRILL_HAVE_CUDA
    return krill_cuda_count();
#else
    return 0;
#endif
}

int krill_have_cuda(void)
{
#ifdef KRILL_HAVE_CUDA
    return 1;
#else
    return 0;
#endif
}

int krill_have_zlib(void)
{
#ifdef KRILL_HAVE_ZLIB
    return 1;
#else
    return 0;
#endif
}

int krill_have_mpi(void)
{
#ifdef KRILL_HAVE_MPI
    return 1;
#else
    return 0;
#endif
}

const char *krill_version(void) { return KRILL_VERSION_STRING; }

static krill_status init_cuda(krill_ctx *ctx, int device_id)
{
    krill_status st = KRILL_OK;
#ifdef KRILL_HAVE_CUDA
    int count = krill_cuda_count();
    if (count == 0) {
        st = krill_error(KRILL_ERR_NO_DEVICE, "a GPU was asked for, but no CUDA device was "
                         "found (no driver or no GPU on this machine)");
        goto cleanup;
    }
    if (device_id < 0 || device_id >= count) {
        st = krill_error(KRILL_ERR_NO_DEVICE, "CUDA device %d asked for; devices are 0..%d",
                         device_id, count - 1);
        goto cleanup;
    }
    ctx->device = KRILL_DEVICE_CUDA;
    ctx->device_id = device_id;
    KRILL_TRY(krill_cuda_ctx_init(ctx));
#else
    (void)ctx;
    (void)device_id;
    st = krill_error(KRILL_ERR_NO_DEVICE, "a GPU was asked for, but this krill was built "
                     "without CUDA (configure with -DKRILL_WITH_CUDA=ON)");
    goto cleanup;
#endif
cleanup:
    return st;
}

/* A probe thread waits at the gate (a mutex its starter holds) until every probe thread
 * has started, so that they all exist at once, as an OpenMP team's threads do. */
static void *probe_wait(void *gate)
{
    pthread_mutex_lock(gate);
    pthread_mutex_unlock(gate);
    return NULL;
}

/* Start the threads - 1 threads that a team of `threads` adds to the caller, with default
 * attributes as libgomp does, then join them. libgomp ends the process (exit status 1,
 * "Thread creation failed") when the system refuses a team's thread; this finds a refused
 * count first and reports how many threads did start. Threads that libgomp already keeps
 * from earlier teams count against the limits too, so the check errs on the safe side. */
static krill_status probe_threads(int threads)
{
    krill_status st = KRILL_OK;
    pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
    pthread_t *ids = NULL;
    int started = 0, err = 0;
    KRILL_ALLOC(ids, threads);
    pthread_mutex_lock(&gate);
    while (started < threads - 1 && err == 0) {
        err = pthread_create(&ids[started], NULL, probe_wait, &gate);
        if (err == 0) started++;
    }
    pthread_mutex_unlock(&gate);
    for (int k = 0; k < started; k++) pthread_join(ids[k], NULL);
    if (err != 0)
        st = krill_error(KRILL_ERR_ALLOC, "krill_ctx_create: threads = %d: the system started "
                         "only %d of them (pthread_create: %s); ask for fewer threads, or raise "
                         "the limits on processes and memory (ulimit -u, -s, -v)", threads,
                         started + 1, strerror(err));
cleanup:
    krill_free(ids);
    return st;
}

/* The GPU of a rank: device_id as given, or KRILL_DEVICE_ID_LOCAL_RANK: the rank's number
 * on its node modulo the node's GPUs (one GPU per rank when there are as many). */
static int rank_device(const krill_ctx_opts *o, int local_rank)
{
    int count = krill_cuda_device_count();
    if (o->device_id != KRILL_DEVICE_ID_LOCAL_RANK) return o->device_id;
    return count > 0 ? local_rank % count : 0;
}

/* Everything a context needs that is local to this process (local_rank: the rank's number
 * on its node, 0 without a communicator). */
static krill_status ctx_create_local(const krill_ctx_opts *o, int local_rank, krill_ctx **out)
{
    krill_status st = KRILL_OK;
    krill_ctx *ctx = NULL;
    int threads = 0;

    KRILL_REQUIRE(o->device == KRILL_DEVICE_AUTO || o->device == KRILL_DEVICE_CPU ||
                  o->device == KRILL_DEVICE_CUDA, "krill_ctx_create: unknown device %d",
                  (int)o->device);
    KRILL_REQUIRE(o->device == KRILL_DEVICE_CPU || o->device_id >= 0 ||
                      (o->device_id == KRILL_DEVICE_ID_LOCAL_RANK && o->comm),
                  "krill_ctx_create: device_id = %d (a device ordinal >= 0, or "
                  "KRILL_DEVICE_ID_LOCAL_RANK on a communicator)", o->device_id);
    KRILL_REQUIRE(o->threads >= 0 && o->threads <= KRILL_MAX_THREADS,
                  "krill_ctx_create: threads = %d must be in 0..%d (KRILL_MAX_THREADS; 0 = "
                  "OpenMP's default)", o->threads, KRILL_MAX_THREADS);
    threads = o->threads > 0 ? o->threads : omp_get_max_threads();
    KRILL_REQUIRE(threads <= KRILL_MAX_THREADS, "krill_ctx_create: threads = 0 means OpenMP's "
                  "default, here %d, more than KRILL_MAX_THREADS = %d (lower OMP_NUM_THREADS "
                  "or ask for a count)", threads, KRILL_MAX_THREADS);
    KRILL_TRY(probe_threads(threads));
    KRILL_CALLOC(ctx, 1);
    KRILL_TRY(krill_ws_cache_create(ctx));
    ctx->threads = threads;
    ctx->device = KRILL_DEVICE_CPU;
    if (o->device == KRILL_DEVICE_CUDA ||
        (o->device == KRILL_DEVICE_AUTO && !o->comm && krill_cuda_device_count() > 0)) {
        KRILL_TRY(init_cuda(ctx, rank_device(o, local_rank)));
        if (o->comm) {
            size_t len = strlen(ctx->describe);
            snprintf(ctx->describe + len, sizeof ctx->describe - len, ", MPI rank %d of %d",
                     o->comm->rank, o->comm->size);
        }
    } else if (o->comm)
        snprintf(ctx->describe, sizeof ctx->describe, "cpu: %d OpenMP thread%s, MPI rank %d of "
                 "%d", ctx->threads, ctx->threads == 1 ? "" : "s", o->comm->rank, o->comm->size);
    else
        snprintf(ctx->describe, sizeof ctx->describe, "cpu: %d OpenMP thread%s", ctx->threads,
                 ctx->threads == 1 ? "" : "s");
    *out = ctx;
    ctx = NULL;
cleanup:
    krill_ctx_destroy(&ctx);
    return st;
}

/* Every rank's device, as one int64 allreduce of (gpu, -gpu) by MAX: the ranks run on one
 * kind of device. A mix is refused rather than half supported: the distributed matrix, its
 * halo buffers and the reductions take one path on every rank (host or device memory). */
static krill_status agree_device(const krill_comm *c, const krill_ctx *ctx)
{
    krill_status st = KRILL_OK;
    int64_t v[2];
    v[0] = krill_on_gpu(ctx);
    v[1] = -v[0];
    KRILL_TRY(c->ops->allreduce_i64(c, v, 2, KRILL_REDUCE_MAX));
    if (v[0] != -v[1])
        st = krill_error(KRILL_ERR_ARG, "krill_ctx_create: the ranks asked for different devices "
                         "(some CPU, some CUDA): every rank of a communicator must use the same");
cleanup:
    return st;
}

/* With a communicator the ranks first find their number on their node (collective), agree
 * on the local part (a rank that failed must not leave the others waiting in
 * MPI_Comm_dup) and on the kind of device, then duplicate it together. */
krill_status krill_ctx_create(const krill_ctx_opts *opts, krill_ctx **out)
{
    krill_status st = KRILL_OK;
    krill_ctx_opts o = KRILL_CTX_OPTS_INIT;
    krill_ctx *ctx = NULL;
    int local_rank = 0;

    KRILL_REQUIRE(out != NULL, "krill_ctx_create: ctx must not be NULL");
    *out = NULL;
    if (opts) o = *opts;
    if (o.comm) KRILL_TRY(o.comm->ops->local_rank(o.comm, &local_rank));
    st = ctx_create_local(&o, local_rank, &ctx);
    if (o.comm) {
        KRILL_TRY(o.comm->ops->agree(o.comm, st));
        KRILL_TRY(agree_device(o.comm, ctx));
        KRILL_TRY(o.comm->ops->agree(o.comm, o.comm->ops->dup(o.comm, &ctx->comm)));
#ifdef KRILL_HAVE_NCCL
        if (krill_on_gpu(ctx) && ctx->comm->size > 1) KRILL_TRY(krill_nccl_create(ctx));
#endif
    }
    KRILL_TRY(st);
    *out = ctx;
    ctx = NULL;
cleanup:
    krill_ctx_destroy(&ctx);
    return st;
}

void krill_ctx_destroy(krill_ctx **pctx)
{
    if (!pctx || !*pctx) return;
    /* before the device goes: ozaki/'s workspace may be there */
    if ((*pctx)->repro_ops) (*pctx)->repro_ops->fini(*pctx);
#ifdef KRILL_HAVE_NCCL
    krill_nccl_destroy(*pctx);
#endif
    if ((*pctx)->comm) (*pctx)->comm->ops->destroy((*pctx)->comm);
    krill_ws_cache_destroy(*pctx);            /* before the device goes: GPU blocks */
#ifdef KRILL_HAVE_CUDA
    if ((*pctx)->cuda) krill_cuda_ctx_fini(*pctx);
#endif
    krill_free(*pctx);
    *pctx = NULL;
}

krill_device krill_ctx_device(const krill_ctx *ctx) { return ctx->device; }
int krill_ctx_threads(const krill_ctx *ctx) { return ctx->threads; }
int krill_ctx_rank(const krill_ctx *ctx) { return ctx->comm ? ctx->comm->rank : 0; }
int krill_ctx_size(const krill_ctx *ctx) { return ctx->comm ? ctx->comm->size : 1; }

/* Each communicator call adds its wall time to ctx->comm_seconds, each collective started
 * one to ctx->comm_calls. */
krill_status krill_ctx_allreduce(krill_ctx *ctx, double *buf, int count, krill_reduce_op op)
{
    krill_status st = KRILL_OK;
    if (ctx->comm) {
        const double t0 = krill_wtime();
        st = ctx->comm->ops->allreduce(ctx->comm, buf, count, op);
        ctx->comm_calls++;
        ctx->comm_seconds += krill_wtime() - t0;
    }
    return st;
}

krill_status krill_ctx_iallreduce_start(krill_ctx *ctx, double *buf, int count,
                                        krill_reduce_op op)
{
    krill_status st = KRILL_OK;
    if (ctx->comm) {
        const double t0 = krill_wtime();
        st = ctx->comm->ops->iallreduce_start(ctx->comm, buf, count, op);
        ctx->comm_calls++;
        ctx->comm_seconds += krill_wtime() - t0;
    }
    return st;
}

krill_status krill_ctx_iallreduce_wait(krill_ctx *ctx)
{
    krill_status st = KRILL_OK;
    if (ctx->comm) {
        const double t0 = krill_wtime();
        st = ctx->comm->ops->iallreduce_wait(ctx->comm);
        ctx->comm_seconds += krill_wtime() - t0;
    }
    return st;
}

void krill_ctx_add_comm_time(krill_ctx *ctx, double seconds) { ctx->comm_seconds += seconds; }

void krill_ctx_add_halo_time(krill_ctx *ctx, double flight, double hidden)
{
    ctx->halo_seconds += flight;
    ctx->halo_hidden_seconds += hidden;
}

#ifdef KRILL_HAVE_CUDA
/* Host room for n doubles of a device reduction: the context's pinned buffer below the
 * solvers' asynchronous reads (a copy back from it is queued, and the next use waits for
 * the stream first, so it is free again), or, for a rare long run, an allocation. */
#define ALLREDUCE_PINNED (KRILL_CUDA_PINNED_DOUBLES - 64)

static krill_status device_sums_down(krill_ctx *ctx, double *host, double *dev, int count,
                                     double *dev2, int count2)
{
    krill_status st = KRILL_OK;
    if (count) KRILL_TRY(krill_cuda_memcpy(ctx, host, dev, (size_t)count * 8, 1));
    if (count2) KRILL_TRY(krill_cuda_memcpy(ctx, host + count, dev2, (size_t)count2 * 8, 1));
cleanup:
    return st;
}

static krill_status device_sums_up(krill_ctx *ctx, double *dev, int count, double *dev2,
                                   int count2, const double *host)
{
    krill_status st = KRILL_OK;
    if (count) KRILL_TRY(krill_cuda_memcpy(ctx, dev, host, (size_t)count * 8, 0));
    if (count2) KRILL_TRY(krill_cuda_memcpy(ctx, dev2, host + count, (size_t)count2 * 8, 0));
cleanup:
    return st;
}
#endif

#ifdef KRILL_HAVE_CUDA
/* A rank's failure travels inside the sum: one more double, 1 on a rank whose local work
 * failed, 0 elsewhere. A positive total (every rank sees the same) sends every rank into
 * krill_ctx_agree, which names the failing rank and its message; when all went well that
 * second collective is not made. A failed rank's sums are whatever its buffer held: no rank
 * uses them, as all of them return the error. host: count + 1 doubles. */
static krill_status sum_with_status(krill_ctx *ctx, krill_status local, double *host, int count)
{
    krill_status st;
    host[count] = local != KRILL_OK ? 1.0 : 0.0;
    st = krill_ctx_allreduce(ctx, host, count + 1, KRILL_REDUCE_SUM);
    if (st == KRILL_OK && host[count] != 0.0) {
        st = krill_ctx_agree(ctx, local);
        if (st == KRILL_OK)   /* not reached: some rank sent 1, so agree fails */
            st = krill_error(KRILL_ERR_INTERNAL, "a rank failed in a reduction");
    }
    return st;
}
#endif

krill_status krill_ctx_allreduce_device(krill_ctx *ctx, krill_status local, double *dev,
                                        int count, double *dev2, int count2)
{
    krill_status st = local;
#ifdef KRILL_HAVE_CUDA
    double *host = NULL, *owned = NULL;
    /* one rank: its sums are the sums (no host round trip, no wait for the stream) */
    if (!ctx->comm || ctx->comm->size == 1 || !krill_on_gpu(ctx) || count + count2 == 0)
        goto cleanup;
#ifdef KRILL_HAVE_NCCL
    if (ctx->nccl) {   /* on the stream; `local` deferred to the next read (core/nccl.cu) */
        const double t0 = krill_wtime();
        st = krill_nccl_allreduce(ctx, local, dev, count, dev2, count2);
        ctx->comm_calls++;
        ctx->comm_seconds += krill_wtime() - t0;
        goto cleanup;
    }
#endif
    host = ctx->cuda->pinned;
    if (count + count2 + 1 <= ALLREDUCE_PINNED) {   /* the rule: one collective */
        if (local == KRILL_OK) local = device_sums_down(ctx, host, dev, count, dev2, count2);
        KRILL_TRY(sum_with_status(ctx, local, host, count + count2));
    } else {   /* a rare long run (every rank alike): agree first, as the buffer may fail */
        if (local == KRILL_OK)
            local = krill_alloc_n((void **)&owned, (size_t)(count + count2), sizeof *owned, 0,
                                  "reduction results (host)");
        host = owned;
        if (local == KRILL_OK) local = device_sums_down(ctx, host, dev, count, dev2, count2);
        KRILL_TRY(krill_ctx_agree(ctx, local));
        KRILL_TRY(krill_ctx_allreduce(ctx, host, count + count2, KRILL_REDUCE_SUM));
    }
    KRILL_TRY(device_sums_up(ctx, dev, count, dev2, count2, host));
    if (owned) KRILL_TRY(krill_cuda_sync(ctx));   /* the copy has read it before it goes */
cleanup:
    krill_free(owned);
#else
    (void)ctx; (void)dev; (void)count; (void)dev2; (void)count2;   /* st = local */
#endif
    return st;
}

/* ||x|| from the ranks' ||x_r||: sqrt(sum ||x_r||^2), one allreduce; only when that sum
 * leaves the range (some ||x_r|| beyond ~1e154, or all below ~1e-145) two more: the largest
 * ||x_r|| = m and m sqrt(sum (||x_r|| / m)^2). */
krill_status krill_ctx_nrm2_allreduce_device(krill_ctx *ctx, krill_status local, double *dev)
{
    krill_status st = local;
#ifdef KRILL_HAVE_CUDA
    double *h = NULL, mine, m;
    if (!ctx->comm || ctx->comm->size == 1 || !krill_on_gpu(ctx)) goto cleanup;
#ifdef KRILL_HAVE_NCCL
    if (ctx->nccl) {
        const double t0 = krill_wtime();
        st = krill_nccl_nrm2(ctx, local, dev);
        ctx->comm_calls += 2;
        ctx->comm_seconds += krill_wtime() - t0;
        goto cleanup;
    }
#endif
    h = ctx->cuda->pinned;
    if (local == KRILL_OK) local = krill_cuda_memcpy(ctx, h, dev, 8, 1);
    mine = h[0];
    h[0] = mine * mine;
    KRILL_TRY(sum_with_status(ctx, local, h, 1));   /* as in krill_ctx_allreduce_device */
    if (isnan(h[0]) || (isfinite(h[0]) && h[0] > 1e-290)) {
        h[0] = sqrt(h[0]);
    } else {
        h[0] = mine;
        KRILL_TRY(krill_ctx_allreduce(ctx, h, 1, KRILL_REDUCE_MAX));
        m = h[0];
        if (m > 0.0 && isfinite(m)) {
            h[0] = (mine / m) * (mine / m);
            KRILL_TRY(krill_ctx_allreduce(ctx, h, 1, KRILL_REDUCE_SUM));
            h[0] = m * sqrt(h[0]);
        }
    }
    KRILL_TRY(krill_cuda_memcpy(ctx, dev, h, 8, 0));
cleanup:
#else
    (void)ctx; (void)dev;   /* st = local */
#endif
    return st;
}

krill_status krill_ctx_allreduce_i64(krill_ctx *ctx, int64_t *buf, int count,
                                     krill_reduce_op op)
{
    krill_status st = KRILL_OK;
    if (ctx->comm) {
        const double t0 = krill_wtime();
        st = ctx->comm->ops->allreduce_i64(ctx->comm, buf, count, op);
        ctx->comm_calls++;
        ctx->comm_seconds += krill_wtime() - t0;
    }
    return st;
}

krill_status krill_ctx_allgather(krill_ctx *ctx, const void *mine, size_t bytes, void *all)
{
    krill_status st = KRILL_OK;
    if (ctx->comm) {
        const double t0 = krill_wtime();
        st = ctx->comm->ops->allgather(ctx->comm, mine, bytes, all);
        ctx->comm_calls++;
        ctx->comm_seconds += krill_wtime() - t0;
    } else if (bytes && all != mine) {
        memmove(all, mine, bytes);
    }
    return st;
}

krill_status krill_ctx_agree(krill_ctx *ctx, krill_status st)
{
    if (ctx && ctx->comm) {
        const double t0 = krill_wtime();
        st = ctx->comm->ops->agree(ctx->comm, st);
        ctx->comm_calls++;
        ctx->comm_seconds += krill_wtime() - t0;
    }
    return st;
}
krill_status krill_ctx_settle(krill_ctx *ctx)
{
    krill_status st = KRILL_OK;
#ifdef KRILL_HAVE_NCCL
    if (ctx && ctx->nccl) st = krill_nccl_settle(ctx);
#endif
    (void)ctx;
    return st;
}

const char *krill_ctx_describe(const krill_ctx *ctx) { return ctx->describe; }

krill_status krill_ctx_sync(krill_ctx *ctx)
{
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) return krill_cuda_sync(ctx);
#endif
    (void)ctx;
    return KRILL_OK;
}

void krill_ctx_alloc_stats_get(const krill_ctx *ctx, krill_ctx_alloc_stats *stats)
{
    if (!stats) return;
    if (ctx) *stats = ctx->allocated;
    else memset(stats, 0, sizeof *stats);
}

krill_repro_mode krill_ctx_repro(const krill_ctx *ctx, int *slices)
{
    if (slices) *slices = ctx ? ctx->repro_slices : 0;
    return ctx ? ctx->repro : KRILL_REPRO_OFF;
}

double krill_wtime(void) { return omp_get_wtime(); }
