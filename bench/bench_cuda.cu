/* bench/bench_cuda.cu - CUDA events for bench_clock (bench_common.c): an event pair recorded
 * on the context's stream measures the device time of the work queued between them; and
 * the cuBLASXt peer of bench_overlap. */
#include <cublasXt.h>
#include <cuda_runtime.h>

#include "bench/bench_cuda.h"

static krill_status check(cudaError_t err, const char *what)
{
    if (err == cudaSuccess) return KRILL_OK;
    return krill_error(KRILL_ERR_DEVICE, "%s failed: %s", what, cudaGetErrorString(err));
}

extern "C" krill_status bench_cuda_events_create(void **start, void **stop)
{
    krill_status st = KRILL_OK;
    cudaEvent_t a = nullptr, b = nullptr;
    *start = nullptr;
    *stop = nullptr;
    KRILL_TRY(check(cudaEventCreate(&a), "cudaEventCreate (start)"));
    KRILL_TRY(check(cudaEventCreate(&b), "cudaEventCreate (stop)"));
    *start = a;
    *stop = b;
    a = nullptr;
    b = nullptr;
cleanup:
    if (a) cudaEventDestroy(a);
    if (b) cudaEventDestroy(b);
    return st;
}

extern "C" krill_status bench_cuda_event_record(void *event, void *stream)
{
    return check(cudaEventRecord(static_cast<cudaEvent_t>(event),
                                 static_cast<cudaStream_t>(stream)),
                 "cudaEventRecord");
}

extern "C" krill_status bench_cuda_event_elapsed(void *start, void *stop, double *seconds)
{
    krill_status st = KRILL_OK;
    float ms = 0.0f;
    *seconds = 0.0;
    KRILL_TRY(check(cudaEventSynchronize(static_cast<cudaEvent_t>(stop)),
                    "cudaEventSynchronize"));
    KRILL_TRY(check(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start),
                                         static_cast<cudaEvent_t>(stop)),
                    "cudaEventElapsedTime"));
    *seconds = 1e-3 * (double)ms;
cleanup:
    return st;
}

extern "C" void bench_cuda_events_destroy(void *start, void *stop)
{
    if (start) cudaEventDestroy(static_cast<cudaEvent_t>(start));
    if (stop) cudaEventDestroy(static_cast<cudaEvent_t>(stop));
}

/* Row-major C = A B is column-major C^T = B^T A^T: cublasXtDgemm with the operands swapped
 * (host pointers; cuBLASXt tiles, pins and streams them itself). */
extern "C" krill_status bench_cuda_xt_dgemm(int device, int64_t h, int64_t m, int64_t w,
                                            const double *a, const double *b, double *c,
                                            int block_dim, double *seconds)
{
    krill_status st = KRILL_OK;
    cublasXtHandle_t xt = nullptr;
    int devices[1] = {device};
    const double one = 1.0, zero = 0.0;
    double t0;
    cublasStatus_t cs = cublasXtCreate(&xt);
    if (cs == CUBLAS_STATUS_SUCCESS) cs = cublasXtDeviceSelect(xt, 1, devices);
    if (cs == CUBLAS_STATUS_SUCCESS) cs = cublasXtSetBlockDim(xt, block_dim);
    if (cs != CUBLAS_STATUS_SUCCESS) {
        st = krill_error(KRILL_ERR_DEVICE, "cublasXt setup: %s", cublasGetStatusString(cs));
        goto cleanup;
    }
    t0 = krill_wtime();
    cs = cublasXtDgemm(xt, CUBLAS_OP_N, CUBLAS_OP_N, (size_t)w, (size_t)h, (size_t)m, &one, b,
                       (size_t)w, a, (size_t)m, &zero, c, (size_t)w);
    if (cs == CUBLAS_STATUS_SUCCESS) KRILL_TRY(check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"));
    *seconds = krill_wtime() - t0;
    if (cs != CUBLAS_STATUS_SUCCESS)
        st = krill_error(KRILL_ERR_DEVICE, "cublasXtDgemm: %s", cublasGetStatusString(cs));
cleanup:
    if (xt) cublasXtDestroy(xt);
    return st;
}

extern "C" krill_status bench_cuda_host_alloc(void **p, size_t bytes)
{
    cudaError_t e = cudaMallocHost(p, bytes);
    if (e != cudaSuccess) *p = nullptr;
    return e == cudaSuccess ? KRILL_OK
                            : krill_error(KRILL_ERR_ALLOC, "cudaMallocHost of %zu bytes: %s", bytes,
                                          cudaGetErrorString(e));
}

extern "C" void bench_cuda_host_free(void *p)
{
    if (p) (void)cudaFreeHost(p);
}
