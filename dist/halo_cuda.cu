/* dist/halo_cuda.cu - the CUDA half of the halo exchange (halo_gpu.h says the order of
 * events). The side stream lets the gather and the two copies run beside the diagonal
 * block's product on the context's stream; events, not host waits, order the streams, and
 * the host waits only for the packed entries (before MPI may send them). */
#include <cuda_runtime.h>
#ifdef KRILL_HAVE_NCCL
#include <nccl.h>
#endif

#include "dist/halo_gpu.h"
#include "kernels/kernels_impl.cuh"

/* The NCCL exchange's clock (timing events, two sets used in turn): t[0] the side stream
 * starts (gather, messages), t[1] the ghosts are in, t[2] and t[3] the local work's start
 * and end on the context's stream. A set is read when it comes round again, two exchanges
 * later (long complete): the last two exchanges of a run are not counted. */
typedef struct halo_clock {
    cudaEvent_t t[4];
    int recorded;            /* t[0..3] all recorded by one exchange */
} halo_clock;

struct krill_halo_gpu {
    cudaStream_t side;
    cudaEvent_t x_ready, packed, local_done, ghosts_in;
    halo_clock clock[2];
    int turn;
    int32_t *send_idx;       /* device, n_sent */
    double *send_dev;        /* device, n_sent: the gathered entries */
    double *recv_dev;        /* device, n_halo: the ghosts */
    int64_t n_sent, n_halo;
};

/* send[k] = x[idx[k]]: 12 bytes read (the index and a scattered x entry) and 8 written per
 * entry. */
__global__ void halo_gather_kernel(int64_t n, const int32_t *__restrict__ idx,
                                   const double *__restrict__ x, double *__restrict__ send)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += stride)
        send[k] = x[idx[k]];
}

static krill_status host_pinned(double **p, int64_t count, const char *what)
{
    const size_t bytes = (size_t)(count > 0 ? count : 1) * sizeof(double);
    cudaError_t err;
    *p = NULL;
    if (krill_fault_check())
        return krill_error(KRILL_ERR_ALLOC, "out of page-locked host memory allocating %zu bytes "
                           "for %s (injected fault)", bytes, what);
    err = cudaMallocHost((void **)p, bytes);
    if (err == cudaSuccess) return KRILL_OK;
    *p = NULL;
    (void)cudaGetLastError();
    return krill_error(KRILL_ERR_ALLOC, "out of page-locked host memory allocating %zu bytes for "
                       "%s: %s", bytes, what, cudaGetErrorString(err));
}

/* The side stream is drained first: its copies may still read or write the page-locked
 * buffers and the device ones. */
extern "C" void krill_halo_gpu_free(krill_halo_gpu *g, double *send_host, double *recv_host)
{
    if (g && g->side) (void)cudaStreamSynchronize(g->side);
    if (send_host) (void)cudaFreeHost(send_host);
    if (recv_host) (void)cudaFreeHost(recv_host);
    if (g) {
        if (g->x_ready) (void)cudaEventDestroy(g->x_ready);
        if (g->packed) (void)cudaEventDestroy(g->packed);
        if (g->local_done) (void)cudaEventDestroy(g->local_done);
        if (g->ghosts_in) (void)cudaEventDestroy(g->ghosts_in);
        for (int c = 0; c < 2; c++)
            for (int e = 0; e < 4; e++)
                if (g->clock[c].t[e]) (void)cudaEventDestroy(g->clock[c].t[e]);
        if (g->side) (void)cudaStreamDestroy(g->side);
        (void)cudaFree(g->send_idx);
        (void)cudaFree(g->send_dev);
        (void)cudaFree(g->recv_dev);
    }
    krill_free(g);
}

extern "C" krill_status krill_halo_gpu_create(krill_ctx *ctx, const int32_t *send_idx,
                                              int64_t n_sent, int64_t n_halo, double **send_host,
                                              double **recv_host, krill_halo_gpu **out)
{
    krill_status st = KRILL_OK;
    krill_halo_gpu *g = NULL;
    double *sh = NULL, *rh = NULL;
    const unsigned flags = cudaEventDisableTiming;
    *out = NULL;
    KRILL_CUDA_TRY(cudaSetDevice(ctx->device_id));   /* the stream and events are the device's */
    KRILL_TRY(krill_calloc((void **)&g, sizeof *g, "halo exchange (GPU)"));
    g->n_sent = n_sent;
    g->n_halo = n_halo;
    KRILL_CUDA_TRY(cudaStreamCreateWithFlags(&g->side, cudaStreamNonBlocking));
    KRILL_CUDA_TRY(cudaEventCreateWithFlags(&g->x_ready, flags));
    KRILL_CUDA_TRY(cudaEventCreateWithFlags(&g->packed, flags));
    KRILL_CUDA_TRY(cudaEventCreateWithFlags(&g->local_done, flags));
    KRILL_CUDA_TRY(cudaEventCreateWithFlags(&g->ghosts_in, flags));
#ifdef KRILL_HAVE_NCCL
    for (int c = 0; c < 2; c++)   /* the NCCL exchange's clock */
        for (int e = 0; e < 4; e++) KRILL_CUDA_TRY(cudaEventCreate(&g->clock[c].t[e]));
#endif
    KRILL_TRY(krill_cuda_alloc(ctx, (void **)&g->send_idx, (size_t)(n_sent ? n_sent : 1) * 4,
                               "halo send indices"));
    KRILL_TRY(krill_cuda_alloc(ctx, (void **)&g->send_dev, (size_t)(n_sent ? n_sent : 1) * 8,
                               "halo send buffer (device)"));
    KRILL_TRY(krill_cuda_alloc(ctx, (void **)&g->recv_dev, (size_t)(n_halo ? n_halo : 1) * 8,
                               "halo ghosts (device)"));
    if (n_sent)
        KRILL_TRY(krill_cuda_memcpy(ctx, g->send_idx, send_idx, (size_t)n_sent * 4, 0));
    KRILL_TRY(host_pinned(&sh, n_sent, "halo send buffer (page-locked)"));
    KRILL_TRY(host_pinned(&rh, n_halo, "halo receive buffer (page-locked)"));
    KRILL_TRY(krill_cuda_sync(ctx));   /* the indices are on the device before send_idx may go */
    *send_host = sh;
    *recv_host = rh;
    *out = g;
    g = NULL;
    sh = rh = NULL;
cleanup:
    krill_halo_gpu_free(g, sh, rh);
    return st;
}

extern "C" krill_status krill_halo_gpu_ready(krill_halo_gpu *g)
{
    krill_status st = KRILL_OK;
    KRILL_CUDA_TRY(cudaEventSynchronize(g->ghosts_in));   /* never recorded: returns at once */
cleanup:
    return st;
}

extern "C" krill_status krill_halo_gpu_pack(krill_ctx *ctx, krill_halo_gpu *g, const double *x,
                                            double *send_host)
{
    krill_status st = KRILL_OK;
    /* also with nothing to send: the ghosts' copy up, next on the side stream, must wait for
     * the work already queued (the last SpMV's off-rank product reads recv_dev) */
    KRILL_CUDA_TRY(cudaEventRecord(g->x_ready, krill_cuda_stream(ctx)));
    KRILL_CUDA_TRY(cudaStreamWaitEvent(g->side, g->x_ready, 0));
    if (g->n_sent == 0) goto cleanup;
    krill_cuda_launch(ctx, halo_gather_kernel, g->n_sent, g->side, g->n_sent, g->send_idx, x,
                      g->send_dev);
    KRILL_TRY(krill_cuda_check_launch("halo_gather_kernel"));
    KRILL_CUDA_TRY(cudaMemcpyAsync(send_host, g->send_dev, (size_t)g->n_sent * 8,
                                   cudaMemcpyDeviceToHost, g->side));
    KRILL_CUDA_TRY(cudaEventRecord(g->packed, g->side));
cleanup:
    return st;
}

extern "C" krill_status krill_halo_gpu_wait_packed(krill_halo_gpu *g)
{
    krill_status st = KRILL_OK;
    if (g->n_sent == 0) goto cleanup;
    KRILL_CUDA_TRY(cudaEventSynchronize(g->packed));
cleanup:
    return st;
}

extern "C" krill_status krill_halo_gpu_mark_local(krill_ctx *ctx, krill_halo_gpu *g)
{
    krill_status st = KRILL_OK;
    KRILL_CUDA_TRY(cudaEventRecord(g->local_done, krill_cuda_stream(ctx)));
cleanup:
    return st;
}

extern "C" int krill_halo_gpu_local_done(krill_halo_gpu *g)
{
    cudaError_t err = cudaEventQuery(g->local_done);
    if (err == cudaSuccess) return 1;
    if (err == cudaErrorNotReady) {
        (void)cudaGetLastError();
        return 0;
    }
    (void)cudaGetLastError();
    return -1;
}

extern "C" krill_status krill_halo_gpu_unpack(krill_ctx *ctx, krill_halo_gpu *g,
                                              const double *recv_host, const double **ghosts)
{
    krill_status st = KRILL_OK;
    *ghosts = g->recv_dev;
    if (g->n_halo)
        KRILL_CUDA_TRY(cudaMemcpyAsync(g->recv_dev, recv_host, (size_t)g->n_halo * 8,
                                       cudaMemcpyHostToDevice, g->side));
    /* also with no ghosts: what follows on the context's stream may overwrite x, which the
     * gather on the side stream reads */
    KRILL_CUDA_TRY(cudaEventRecord(g->ghosts_in, g->side));
    KRILL_CUDA_TRY(cudaStreamWaitEvent(krill_cuda_stream(ctx), g->ghosts_in, 0));
cleanup:
    return st;
}

#ifdef KRILL_HAVE_NCCL
/* The set's times once it is complete: flight = t1 - t0, hidden = its overlap with the
 * local work [t2, t3]; zero (the exchange not counted) when it was not recorded whole or
 * is not complete yet (no host wait). */
static void clock_read(halo_clock *c, double *flight, double *hidden)
{
    float f = 0.0f, a = 0.0f, b = 0.0f, d = 0.0f;
    *flight = *hidden = 0.0;
    if (c->recorded != 1 || cudaEventQuery(c->t[3]) != cudaSuccess ||
        cudaEventQuery(c->t[1]) != cudaSuccess ||
        cudaEventElapsedTime(&f, c->t[0], c->t[1]) != cudaSuccess ||
        cudaEventElapsedTime(&a, c->t[0], c->t[2]) != cudaSuccess ||
        cudaEventElapsedTime(&b, c->t[0], c->t[3]) != cudaSuccess) {
        (void)cudaGetLastError();
        c->recorded = 0;
        return;
    }
    c->recorded = 0;
    /* in ms from t0: flight [0, f], local work [a, b] */
    d = (b < f ? b : f) - (a > 0.0f ? a : 0.0f);
    *flight = 1e-3 * f;
    *hidden = d > 0.0f ? 1e-3 * d : 0.0;
}

/* One group: n_recv receives into the ghosts at recv_off, n_send sends from the gathered
 * entries at send_off, on the side stream. Every message is posted whatever failed before
 * (no peer waits for a message never posted); the first failure is returned. */
static ncclResult_t post_messages(const krill_halo_gpu *g, ncclComm_t c, int n_send,
                                  const int *send_rank, const int64_t *send_off, int n_recv,
                                  const int *recv_rank, const int64_t *recv_off)
{
    ncclResult_t r = ncclGroupStart(), q;
    for (int k = 0; k < n_recv; k++) {
        q = ncclRecv(g->recv_dev + recv_off[k], (size_t)(recv_off[k + 1] - recv_off[k]),
                     ncclDouble, recv_rank[k], c, g->side);
        if (r == ncclSuccess) r = q;
    }
    for (int k = 0; k < n_send; k++) {
        q = ncclSend(g->send_dev + send_off[k], (size_t)(send_off[k + 1] - send_off[k]),
                     ncclDouble, send_rank[k], c, g->side);
        if (r == ncclSuccess) r = q;
    }
    q = ncclGroupEnd();
    return r == ncclSuccess ? q : r;
}

extern "C" krill_status krill_halo_gpu_nccl_start(krill_ctx *ctx, krill_halo_gpu *g, void *comm,
                                                  const double *x, int n_send,
                                                  const int *send_rank, const int64_t *send_off,
                                                  int n_recv, const int *recv_rank,
                                                  const int64_t *recv_off)
{
    /* a local failure (the event, the gather) still makes the group, so that no rank waits
     * for this one's messages; it is returned after */
    krill_status st = krill_cuda_call(cudaEventRecord(g->x_ready, krill_cuda_stream(ctx)),
                                      "cudaEventRecord");
    ncclResult_t r = ncclSuccess;
    const ncclComm_t c = (ncclComm_t)comm;
    halo_clock *clock = &g->clock[g->turn];
    double flight, hidden;
    clock_read(clock, &flight, &hidden);   /* two exchanges ago */
    krill_ctx_add_halo_time(ctx, flight, hidden);
    krill_ctx_add_comm_time(ctx, flight - hidden);
    g->turn ^= 1;
    if (st == KRILL_OK)
        st = krill_cuda_call(cudaStreamWaitEvent(g->side, g->x_ready, 0), "cudaStreamWaitEvent");
    const int timed = st == KRILL_OK && n_send + n_recv > 0 &&
                      cudaEventRecord(clock->t[0], g->side) == cudaSuccess &&
                      cudaEventRecord(clock->t[2], krill_cuda_stream(ctx)) == cudaSuccess;
    if (st == KRILL_OK && g->n_sent > 0) {
        krill_cuda_launch(ctx, halo_gather_kernel, g->n_sent, g->side, g->n_sent, g->send_idx, x,
                          g->send_dev);
        st = krill_cuda_check_launch("halo_gather_kernel");
    }
    if (n_send + n_recv > 0) {
        r = post_messages(g, c, n_send, send_rank, send_off, n_recv, recv_rank, recv_off);
    }
    if (r != ncclSuccess && st == KRILL_OK)
        st = krill_error(KRILL_ERR_DEVICE, "halo exchange through NCCL: %s", ncclGetErrorString(r));
    KRILL_TRY(st);
    KRILL_CUDA_TRY(cudaEventRecord(g->ghosts_in, g->side));
    if (timed) KRILL_CUDA_TRY(cudaEventRecord(clock->t[1], g->side));
    clock->recorded = timed ? 2 : 0;   /* 2: t[3] still to come (land) */
cleanup:
    return st;
}

extern "C" krill_status krill_halo_gpu_nccl_connect(krill_halo_gpu *g, void *comm, int n_send,
                                                    const int *send_rank, const int64_t *send_off,
                                                    int n_recv, const int *recv_rank,
                                                    const int64_t *recv_off)
{
    krill_status st = KRILL_OK;
    ncclResult_t r = ncclSuccess;
    const ncclComm_t c = (ncclComm_t)comm;
    if (n_send + n_recv == 0) goto cleanup;
    if (g->n_sent > 0)   /* defined bytes on the wire */
        st = krill_cuda_call(cudaMemsetAsync(g->send_dev, 0, (size_t)g->n_sent * 8, g->side),
                             "cudaMemsetAsync");
    r = post_messages(g, c, n_send, send_rank, send_off, n_recv, recv_rank, recv_off);
    if (r != ncclSuccess && st == KRILL_OK)
        st = krill_error(KRILL_ERR_DEVICE, "halo exchange through NCCL (the first): %s",
                         ncclGetErrorString(r));
    KRILL_TRY(st);
    KRILL_CUDA_TRY(cudaStreamSynchronize(g->side));
cleanup:
    return st;
}

extern "C" void krill_halo_gpu_nccl_forget(krill_halo_gpu *g)
{
    if (g) g->clock[0].recorded = g->clock[1].recorded = 0;
}

extern "C" krill_status krill_halo_gpu_land(krill_ctx *ctx, krill_halo_gpu *g,
                                            const double **ghosts)
{
    krill_status st = KRILL_OK;
    halo_clock *clock = &g->clock[g->turn ^ 1];   /* this exchange's */
    *ghosts = g->recv_dev;
    if (clock->recorded == 2) {
        KRILL_CUDA_TRY(cudaEventRecord(clock->t[3], krill_cuda_stream(ctx)));
        clock->recorded = 1;
    }
    KRILL_CUDA_TRY(cudaStreamWaitEvent(krill_cuda_stream(ctx), g->ghosts_in, 0));
cleanup:
    return st;
}
#endif
