/* formats/measure.cu - CUDA events for krill_mat_time_spmv (formats/measure.c): an event
 * pair recorded on the context's stream around one SpMV measures the device time of the
 * work queued between the two records, without the host's launch overhead. */
#include "formats/formats_impl.h"
#include "kernels/kernels_impl.cuh"

namespace {

struct cuda_stopwatch {
    cudaEvent_t start;
    cudaEvent_t stop;
};

} /* namespace */

extern "C" krill_status krill_cuda_stopwatch_create(krill_ctx *ctx, void **watch)
{
    krill_status st = KRILL_OK;
    cuda_stopwatch *w = NULL;
    *watch = NULL;
    KRILL_CALLOC(w, 1);
    /* events belong to the current device, which must be the context's */
    KRILL_CUDA_TRY(cudaSetDevice(ctx->device_id));
    KRILL_CUDA_TRY(cudaEventCreate(&w->start));
    KRILL_CUDA_TRY(cudaEventCreate(&w->stop));
    *watch = w;
    w = NULL;
cleanup:
    krill_cuda_stopwatch_destroy(w);
    return st;
}

extern "C" krill_status krill_cuda_stopwatch_start(krill_ctx *ctx, void *watch)
{
    krill_status st = KRILL_OK;
    cuda_stopwatch *w = static_cast<cuda_stopwatch *>(watch);
    KRILL_CUDA_TRY(cudaEventRecord(w->start, krill_cuda_stream(ctx)));
cleanup:
    return st;
}

extern "C" krill_status krill_cuda_stopwatch_stop(krill_ctx *ctx, void *watch, double *seconds)
{
    krill_status st = KRILL_OK;
    cuda_stopwatch *w = static_cast<cuda_stopwatch *>(watch);
    float ms = 0.0f;
    *seconds = 0.0;
    KRILL_CUDA_TRY(cudaEventRecord(w->stop, krill_cuda_stream(ctx)));
    KRILL_CUDA_TRY(cudaEventSynchronize(w->stop));
    KRILL_CUDA_TRY(cudaEventElapsedTime(&ms, w->start, w->stop));
    *seconds = 1e-3 * (double)ms;
cleanup:
    return st;
}

extern "C" void krill_cuda_stopwatch_destroy(void *watch)
{
    cuda_stopwatch *w = static_cast<cuda_stopwatch *>(watch);
    if (!w) return;
    /* a failed destroy leaves nothing to do but clear the error it left behind */
    if (w->start && cudaEventDestroy(w->start) != cudaSuccess) (void)cudaGetLastError();
    if (w->stop && cudaEventDestroy(w->stop) != cudaSuccess) (void)cudaGetLastError();
    krill_free(w);
}
