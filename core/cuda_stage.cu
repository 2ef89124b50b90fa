/* core/cuda_stage.cu - uploads through page-locked staging: the pipelined matrix setup's
 * engine (issue 16, client 3; doc/overlap.md, "Pipelined matrix setup").
 *
 * A copy from pageable host memory runs at a fraction of the bus (the driver stages it
 * through its own small pinned buffers, one at a time: 5.7 GB/s on the H200 host against
 * 54.7 GB/s from page-locked memory, doc/overlap.md). Here the data goes in chunks through
 * KRILL_STAGE_SLOTS page-locked slots that the context keeps: the host packs chunk k into
 * slot k mod S (the context's threads, krill_host_copy) while the copy engine moves the
 * chunks before it, on a copy stream of its own. Either a chunk goes straight to its place
 * in device memory (`target`), or it lands in a device buffer of the same size and `land`
 * queues the kernels that consume it on the context's stream (a format's build kernels),
 * which then run beside the next chunks' copies. Events order it all:
 *   copied[s]   on the copy stream after slot s's copy: the host refills slot s after it;
 *               the consuming kernels wait for it;
 *   consumed[s] on the context's stream after those kernels: buffer s is free again.
 * The copies start after the context's queued work and the context's stream waits for the
 * last of them, so callers keep stream order. Traffic: the bytes once over the bus, and
 * once more through host memory (the pack); the time is about max(pack, bus) + one chunk. */
#include <atomic>
#include <stdint.h>
#include <stdio.h>

#include "kernels/kernels_impl.cuh"

namespace {

std::atomic<size_t> slot_bytes_setting{(size_t)8 << 20};   /* krill_cuda_stage_slot_bytes */
const size_t slot_bytes_max = (size_t)1 << 30;

struct stage {
    size_t slot_bytes;
    void *slot[KRILL_STAGE_SLOTS];        /* page-locked host memory */
    cudaStream_t copy;
    cudaEvent_t copied[KRILL_STAGE_SLOTS], consumed[KRILL_STAGE_SLOTS], order;
};

void stage_free(stage *sg)
{
    if (!sg) return;
    if (sg->copy) (void)cudaStreamSynchronize(sg->copy);
    for (int s = 0; s < KRILL_STAGE_SLOTS; s++) {
        if (sg->slot[s]) (void)cudaFreeHost(sg->slot[s]);
        if (sg->copied[s]) (void)cudaEventDestroy(sg->copied[s]);
        if (sg->consumed[s]) (void)cudaEventDestroy(sg->consumed[s]);
    }
    if (sg->order) (void)cudaEventDestroy(sg->order);
    if (sg->copy) (void)cudaStreamDestroy(sg->copy);
    (void)cudaGetLastError();
    krill_free(sg);
}

/* The context's staging, made on first use: S slots of the current slot size, or of `need`
 * bytes if that is more; kept while its slots hold `need` (a pack never writes more). */
krill_status stage_get(krill_ctx *ctx, size_t need, stage **out)
{
    krill_status st = KRILL_OK;
    stage *sg = static_cast<stage *>(ctx->cuda->stage);
    const size_t setting = slot_bytes_setting.load();
    if (sg && sg->slot_bytes >= need) goto cleanup;
    krill_cuda_stage_release(ctx);
    sg = NULL;
    KRILL_CALLOC(sg, 1);
    sg->slot_bytes = need > setting ? need : setting;
    KRILL_CUDA_TRY(cudaSetDevice(ctx->device_id));
    for (int s = 0; s < KRILL_STAGE_SLOTS; s++) {
        cudaError_t err;
        if (krill_fault_check()) {
            st = krill_error(KRILL_ERR_ALLOC, "out of page-locked host memory allocating %zu "
                             "bytes for an upload's staging slot (injected fault)",
                             sg->slot_bytes);
            goto cleanup;
        }
        err = cudaMallocHost(&sg->slot[s], sg->slot_bytes);
        if (err != cudaSuccess) {
            sg->slot[s] = NULL;
            (void)cudaGetLastError();
            st = krill_error(KRILL_ERR_ALLOC, "out of page-locked host memory allocating %zu "
                             "bytes for an upload's staging slot: %s", sg->slot_bytes,
                             cudaGetErrorString(err));
            goto cleanup;
        }
        KRILL_CUDA_TRY(cudaEventCreateWithFlags(&sg->copied[s], cudaEventDisableTiming));
        KRILL_CUDA_TRY(cudaEventCreateWithFlags(&sg->consumed[s], cudaEventDisableTiming));
    }
    KRILL_CUDA_TRY(cudaEventCreateWithFlags(&sg->order, cudaEventDisableTiming));
    KRILL_CUDA_TRY(cudaStreamCreateWithFlags(&sg->copy, cudaStreamNonBlocking));
    ctx->cuda->stage = sg;
cleanup:
    if (st != KRILL_OK) {
        stage_free(sg);
        sg = NULL;
    }
    *out = sg;
    return st;
}

/* the plain upload's chunks: bytes [k c, (k + 1) c) of src to the same place of dst */
struct plain_upload {
    krill_ctx *ctx;
    char *dst;
    const char *src;
    size_t bytes, chunk;
};

size_t plain_pack(void *user, int64_t k, void *slot, size_t slot_bytes)
{
    const plain_upload *u = static_cast<const plain_upload *>(user);
    const size_t first = (size_t)k * u->chunk;
    const size_t n = u->bytes - first < u->chunk ? u->bytes - first : u->chunk;
    (void)slot_bytes;   /* >= u->chunk: krill_cuda_pipe_run checked it */
    krill_host_copy(u->ctx, slot, u->src + first, n);
    return n;
}

void *plain_target(void *user, int64_t k)
{
    const plain_upload *u = static_cast<const plain_upload *>(user);
    return u->dst + (size_t)k * u->chunk;
}

} /* namespace */

extern "C" void krill_cuda_stage_release(krill_ctx *ctx)
{
    if (!ctx || !ctx->cuda || !ctx->cuda->stage) return;
    (void)cudaSetDevice(ctx->device_id);
    stage_free(static_cast<stage *>(ctx->cuda->stage));
    ctx->cuda->stage = NULL;
}

extern "C" size_t krill_cuda_stage_slot_bytes(size_t bytes)
{
    if (bytes < 64) return slot_bytes_setting.load();
    if (bytes > slot_bytes_max) bytes = slot_bytes_max;
    return slot_bytes_setting.exchange(bytes & ~(size_t)63);
}

extern "C" krill_status krill_cuda_pipe_run(krill_ctx *ctx, const krill_cuda_pipe *p)
{
    krill_status st = KRILL_OK;
    stage *sg = NULL;
    void *buffer[KRILL_STAGE_SLOTS] = {NULL};
    const cudaStream_t ctx_stream = krill_cuda_stream(ctx);
    bool queued = false;
    if (p->n_chunks <= 0) goto cleanup;
    if (p->chunk_bytes == 0 || p->chunk_bytes > slot_bytes_max) {
        st = krill_error(KRILL_ERR_INTERNAL, "krill_cuda_pipe_run: chunks of %zu bytes (1 .. %zu)",
                         p->chunk_bytes, slot_bytes_max);
        goto cleanup;
    }
    KRILL_TRY(stage_get(ctx, p->chunk_bytes, &sg));
    for (int s = 0; !p->target && s < KRILL_STAGE_SLOTS && s < p->n_chunks; s++)
        KRILL_TRY(krill_cuda_alloc(ctx, &buffer[s], p->chunk_bytes, "an upload's device buffer"));
    KRILL_CUDA_TRY(cudaEventRecord(sg->order, ctx_stream));   /* after the context's queued work */
    KRILL_CUDA_TRY(cudaStreamWaitEvent(sg->copy, sg->order, 0));
    queued = true;
    for (int64_t k = 0; k < p->n_chunks; k++) {
        const int s = (int)(k % KRILL_STAGE_SLOTS);
        size_t bytes;
        KRILL_CUDA_TRY(cudaEventSynchronize(sg->copied[s]));   /* slot s's last copy is done */
        bytes = p->pack(p->user, k, sg->slot[s], p->chunk_bytes);
        if (bytes > p->chunk_bytes) {   /* a pack broke its promise: too late to be safe */
            st = krill_error(KRILL_ERR_INTERNAL, "krill_cuda_pipe_run: chunk %lld packed %zu "
                             "bytes, more than the %zu promised", (long long)k, bytes,
                             p->chunk_bytes);
            goto cleanup;
        }
        if (p->target) {
            KRILL_CUDA_TRY(cudaMemcpyAsync(p->target(p->user, k), sg->slot[s], bytes,
                                           cudaMemcpyHostToDevice, sg->copy));
            KRILL_CUDA_TRY(cudaEventRecord(sg->copied[s], sg->copy));
            continue;
        }
        KRILL_CUDA_TRY(cudaStreamWaitEvent(sg->copy, sg->consumed[s], 0));   /* buffer s free */
        KRILL_CUDA_TRY(cudaMemcpyAsync(buffer[s], sg->slot[s], bytes, cudaMemcpyHostToDevice,
                                       sg->copy));
        KRILL_CUDA_TRY(cudaEventRecord(sg->copied[s], sg->copy));
        KRILL_CUDA_TRY(cudaStreamWaitEvent(ctx_stream, sg->copied[s], 0));
        KRILL_TRY(p->land(ctx, p->user, k, buffer[s], bytes));
        KRILL_CUDA_TRY(cudaEventRecord(sg->consumed[s], ctx_stream));
    }
    KRILL_CUDA_TRY(cudaEventRecord(sg->order, sg->copy));   /* the context's stream after */
    KRILL_CUDA_TRY(cudaStreamWaitEvent(ctx_stream, sg->order, 0));  /* the last copy */
cleanup:
    /* drain before the buffers go, and on failure before the caller frees the targets */
    if (queued && (st != KRILL_OK || buffer[0])) {
        const krill_status drained = krill_cuda_call(cudaStreamSynchronize(sg->copy),
                                                     "cudaStreamSynchronize (an upload's copies)");
        const krill_status synced = krill_cuda_sync(ctx);
        if (st == KRILL_OK) st = drained != KRILL_OK ? drained : synced;
    }
    for (int s = 0; s < KRILL_STAGE_SLOTS; s++) krill_cuda_free(ctx, buffer[s]);
    return st;
}

extern "C" krill_status krill_cuda_upload_staged(krill_ctx *ctx, void *dst, const void *src,
                                                 size_t bytes)
{
    plain_upload u = {ctx, static_cast<char *>(dst), static_cast<const char *>(src), bytes,
                      slot_bytes_setting.load()};
    krill_cuda_pipe p = {(int64_t)((bytes + u.chunk - 1) / u.chunk), u.chunk, plain_pack,
                         plain_target, NULL, &u};
    return krill_cuda_pipe_run(ctx, &p);
}
