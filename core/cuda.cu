/* core/cuda.cu - the CUDA half of core/ (core/cuda_impl.h): devices, the context's stream,
 * cuBLAS and cuSPARSE handles and workspace, device memory and copies, launch checks.
 *
 * Contract with core/ctx.c: ctx->device_id is set before krill_cuda_ctx_init, which
 * allocates ctx->cuda itself (and releases everything it made when it fails); fini releases
 * it all and sets ctx->cuda = NULL. The device is made current at init and before every
 * allocation (cudaMalloc allocates on the current device); kernels are queued on the
 * context's stream, which belongs to its device.
 *
 * The cuBLAS handle is bound to the stream and left in its default modes (host pointer
 * mode, default math: cuBLAS then uses no atomics, so its results are run-to-run exact);
 * a caller that needs device pointer mode sets it around its own call. */
#include <cublas_v2.h>
#include <cusparse.h>
#include <stdio.h>
#include <string.h>

#include "kernels/kernels_impl.cuh"

namespace {

krill_status cublas_call(cublasStatus_t status, const char *call)
{
    if (status == CUBLAS_STATUS_SUCCESS) return KRILL_OK;
    return krill_error(KRILL_ERR_DEVICE, "%s failed: %s", call, cublasGetStatusString(status));
}

krill_status cusparse_call(cusparseStatus_t status, const char *call)
{
    if (status == CUSPARSE_STATUS_SUCCESS) return KRILL_OK;
    return krill_error(KRILL_ERR_DEVICE, "%s failed: %s", call, cusparseGetErrorString(status));
}

/* The out-of-memory message: what was asked for, and what the device has free. */
krill_status out_of_memory(const krill_ctx *ctx, size_t bytes, const char *what, const char *why)
{
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) (void)cudaGetLastError();
    return krill_error(KRILL_ERR_DEVICE_ALLOC,
                       "out of GPU memory on cuda:%d allocating %zu bytes for %s: %zu bytes "
                       "free of %zu%s",
                       ctx->device_id, bytes, what, free_bytes, total_bytes, why);
}

/* Page-locked host memory, through the fault hook like every allocation. */
krill_status pinned_alloc(double **p, size_t count, const char *what)
{
    const size_t bytes = count * sizeof(double);
    *p = NULL;
    if (krill_fault_check())
        return krill_error(KRILL_ERR_ALLOC, "out of page-locked host memory allocating %zu bytes "
                           "for %s (injected fault)", bytes, what);
    cudaError_t err = cudaMallocHost((void **)p, bytes);
    if (err != cudaSuccess) {
        *p = NULL;
        (void)cudaGetLastError();
        return krill_error(KRILL_ERR_ALLOC, "out of page-locked host memory allocating %zu bytes "
                           "for %s: %s", bytes, what, cudaGetErrorString(err));
    }
    return KRILL_OK;
}

} /* namespace */

/* Usable devices; 0 (and no error left behind) without a driver or a GPU. */
extern "C" int krill_cuda_count(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return count;
}

extern "C" krill_status krill_cuda_ctx_init(krill_ctx *ctx)
{
    krill_status st = KRILL_OK;
    krill_cuda *cu = NULL;
    cudaDeviceProp prop;
    cudaStream_t stream = NULL;
    cublasHandle_t cublas = NULL;
    const int count = krill_cuda_count();

    if (count == 0) {
        st = krill_error(KRILL_ERR_NO_DEVICE, "no usable CUDA device: no GPU or no driver found");
        goto cleanup;
    }
    if (ctx->device_id < 0 || ctx->device_id >= count) {
        st = krill_error(KRILL_ERR_NO_DEVICE, "CUDA device %d asked for, but the devices are "
                         "0..%d", ctx->device_id, count - 1);
        goto cleanup;
    }
    KRILL_CALLOC(ctx->cuda, 1);
    cu = ctx->cuda;
    KRILL_CUDA_TRY(cudaSetDevice(ctx->device_id));
    KRILL_CUDA_TRY(cudaGetDeviceProperties(&prop, ctx->device_id));
    cu->sm_count = prop.multiProcessorCount;
    cu->max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
    cu->mem_total = prop.totalGlobalMem;
    cu->cc_major = prop.major;
    cu->cc_minor = prop.minor;

    /* non-blocking: no implicit synchronization with the legacy default stream */
    KRILL_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cu->stream = stream;
    KRILL_TRY(cublas_call(cublasCreate(&cublas), "cublasCreate"));
    cu->cublas = cublas;
    KRILL_TRY(cublas_call(cublasSetStream(cublas, stream), "cublasSetStream"));

    KRILL_TRY(krill_cuda_alloc(ctx, (void **)&cu->work, KRILL_CUDA_WORK_DOUBLES * sizeof(double),
                               "the context's reduction workspace"));
    /* zero: the grid sums' finished-block counter lives in it (kernels_impl.cuh) */
    KRILL_TRY(krill_cuda_memset0(ctx, cu->work, KRILL_CUDA_WORK_DOUBLES * sizeof(double)));
    KRILL_TRY(pinned_alloc(&cu->pinned, KRILL_CUDA_PINNED_DOUBLES, "the context's scalar buffer"));
    KRILL_CUDA_TRY(cudaStreamSynchronize(stream));

    snprintf(ctx->describe, sizeof ctx->describe, "cuda:%d %.120s (sm_%d%d, %.1f GiB)",
             ctx->device_id, prop.name, prop.major, prop.minor,
             (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
cleanup:
    if (st != KRILL_OK) krill_cuda_ctx_fini(ctx);
    return st;
}

/* Waits for queued work, then releases everything init made (whatever part of it exists). */
extern "C" void krill_cuda_ctx_fini(krill_ctx *ctx)
{
    krill_cuda *cu = ctx ? ctx->cuda : NULL;
    if (!cu) return;
    (void)cudaSetDevice(ctx->device_id);
    if (cu->stream) (void)cudaStreamSynchronize((cudaStream_t)cu->stream);
    krill_cuda_stage_release(ctx);
    if (cu->work) (void)cudaFree(cu->work);
    if (cu->pinned) (void)cudaFreeHost(cu->pinned);
    if (cu->cusparse) (void)cusparseDestroy((cusparseHandle_t)cu->cusparse);
    if (cu->cublas) (void)cublasDestroy((cublasHandle_t)cu->cublas);
    if (cu->stream) (void)cudaStreamDestroy((cudaStream_t)cu->stream);
    (void)cudaGetLastError();   /* leave no stale error for the next check */
    krill_free(cu);
    ctx->cuda = NULL;
}

extern "C" krill_status krill_cuda_sync(krill_ctx *ctx)
{
    return krill_cuda_call(cudaStreamSynchronize(krill_cuda_stream(ctx)),
                           "cudaStreamSynchronize (waiting for the context's queued GPU work)");
}

/* The context's cuSPARSE handle, made on first use and bound to the context's stream. */
extern "C" krill_status krill_cuda_cusparse(krill_ctx *ctx, void **handle)
{
    krill_status st = KRILL_OK;
    cusparseHandle_t h = NULL;
    *handle = NULL;
    if (!ctx->cuda->cusparse) {
        KRILL_TRY(cusparse_call(cusparseCreate(&h), "cusparseCreate"));
        KRILL_TRY(cusparse_call(cusparseSetStream(h, krill_cuda_stream(ctx)), "cusparseSetStream"));
        ctx->cuda->cusparse = h;
        h = NULL;
    }
    *handle = ctx->cuda->cusparse;
cleanup:
    if (h) (void)cusparseDestroy(h);
    return st;
}

/* Device memory (bytes == 0 still gives a valid pointer). Out of memory, injected or real,
 * is KRILL_ERR_DEVICE_ALLOC with the bytes asked for and free; CUDA's error state is cleared
 * so that the context stays usable. */
extern "C" krill_status krill_cuda_alloc(krill_ctx *ctx, void **p, size_t bytes, const char *what)
{
    krill_status st = KRILL_OK;
    cudaError_t err;
    *p = NULL;
    if (krill_fault_check()) {
        st = out_of_memory(ctx, bytes, what, " (injected fault)");
        goto cleanup;
    }
    KRILL_CUDA_TRY(cudaSetDevice(ctx->device_id));
    err = cudaMalloc(p, bytes > 0 ? bytes : 1);
    if (err == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        *p = NULL;
        st = out_of_memory(ctx, bytes, what, "");
    } else if (err != cudaSuccess) {
        *p = NULL;
        (void)cudaGetLastError();
        st = krill_error(KRILL_ERR_DEVICE, "cudaMalloc of %zu bytes for %s failed: %s (%s)", bytes,
                         what, cudaGetErrorName(err), cudaGetErrorString(err));
    } else {   /* krill_ctx_alloc_stats_get: every device allocation of the context */
        ctx->allocated.allocations++;
        ctx->allocated.bytes += (int64_t)bytes;
    }
cleanup:
    return st;
}

/* cudaPointerGetAttributes: memory the context's kernels read at address p. Device memory
 * of ctx's GPU and managed memory; page-locked host memory mapped at the same address
 * (unified addressing: cudaHostAlloc, cudaHostRegister), read across the bus by choice.
 * Pageable host memory is refused even where the GPU could reach it (HMM, Grace Hopper's
 * ATS): there it is almost always a host array passed by mistake, which every SpMV would
 * then page across the bus. Another GPU's memory is refused. */
extern "C" krill_status krill_cuda_check_pointer(krill_ctx *ctx, const void *p, const char *what)
{
    krill_status st = KRILL_OK;
    cudaPointerAttributes attr;
    if (!p) goto cleanup;
    KRILL_CUDA_TRY(cudaPointerGetAttributes(&attr, p));
    if (attr.type == cudaMemoryTypeManaged) goto cleanup;
    if (attr.type == cudaMemoryTypeHost && attr.devicePointer == p) goto cleanup;
    if (attr.type != cudaMemoryTypeDevice) {
        st = krill_error(KRILL_ERR_ARG, "%s is %s memory, not device memory of the context's "
                         "GPU (cuda:%d): copy it to the device first (or use the host "
                         "functions)", what, attr.type == cudaMemoryTypeHost ? "page-locked host"
                         : "host", ctx->device_id);
    } else if (attr.device != ctx->device_id) {
        st = krill_error(KRILL_ERR_ARG, "%s is device memory of cuda:%d, not of the context's "
                         "GPU cuda:%d", what, attr.device, ctx->device_id);
    }
cleanup:
    return st;
}

extern "C" void krill_cuda_free(krill_ctx *ctx, void *p)
{
    (void)ctx;
    if (p) (void)cudaFree(p);
}

/* Whether [p, p + bytes) overlaps the context's page-locked buffer. */
static bool pinned_holds(const krill_ctx *ctx, const void *p, size_t bytes)
{
    const char *a = (const char *)ctx->cuda->pinned, *b = (const char *)p;
    return b < a + KRILL_CUDA_PINNED_DOUBLES * sizeof(double) && a < b + bytes;
}

/* the bounce region stays clear of the solvers' asynchronous reads at the buffer's end */
static_assert(KRILL_CUDA_BOUNCE_BYTES <= (KRILL_CUDA_PINNED_DOUBLES - 64) * sizeof(double),
              "small reads bounce through the start of the pinned buffer only");

/* kind 0: host -> device, 1: device -> host (waits for it), 2: device -> device. All are
 * queued on the context's stream behind the work already there. A host -> device copy from
 * pageable memory has read the source when it returns; from page-locked memory the source
 * must stay unchanged until the stream reaches the copy (krill_cuda_sync). */

extern "C" krill_status krill_cuda_memcpy(krill_ctx *ctx, void *dst, const void *src, size_t bytes,
                                          int kind)
{
    static const cudaMemcpyKind kinds[3] = {cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost,
                                            cudaMemcpyDeviceToDevice};
    static const char *const names[3] = {"host to device", "device to host", "device to device"};
    krill_status st = KRILL_OK;
    cudaError_t err;
    if (kind < 0 || kind > 2) {
        st = krill_error(KRILL_ERR_INTERNAL, "krill_cuda_memcpy: copy kind %d is not 0, 1 or 2",
                         kind);
        goto cleanup;
    }
    if (bytes == 0) goto cleanup;
    if (kind == 1 && bytes <= KRILL_CUDA_BOUNCE_BYTES && ctx->cuda->pinned &&
        !pinned_holds(ctx, dst, bytes)) {
        /* a small read (the solvers' sums): through the context's page-locked buffer, which
           the copy engine writes directly; a pageable destination would add the driver's
           own staging to every iteration's round trip */
        err = cudaMemcpyAsync(ctx->cuda->pinned, src, bytes, kinds[kind], krill_cuda_stream(ctx));
        if (err == cudaSuccess) err = cudaStreamSynchronize(krill_cuda_stream(ctx));
        if (err == cudaSuccess) memcpy(dst, ctx->cuda->pinned, bytes);
    } else {
        err = cudaMemcpyAsync(dst, src, bytes, kinds[kind], krill_cuda_stream(ctx));
        if (err == cudaSuccess && kind == 1) err = cudaStreamSynchronize(krill_cuda_stream(ctx));
    }
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        st = krill_error(KRILL_ERR_DEVICE, "copying %zu bytes %s failed: %s (%s)", bytes,
                         names[kind], cudaGetErrorName(err), cudaGetErrorString(err));
    }
cleanup:
    return st;
}

extern "C" krill_status krill_cuda_memset0(krill_ctx *ctx, void *p, size_t bytes)
{
    if (bytes == 0) return KRILL_OK;
    return krill_cuda_call(cudaMemsetAsync(p, 0, bytes, krill_cuda_stream(ctx)), "cudaMemsetAsync");
}

/* Open addressing on the kernel's address; a full table (more kernels than slots) asks the
 * calculator each time. The calculator's failure (none expected for a kernel of this
 * library) falls back to the thread limit alone, the rule before the calculator, and
 * clears the error it left. */
extern "C" int krill_cuda_resident_blocks(krill_cuda *cu, const void *kernel)
{
    const size_t slots = KRILL_CUDA_RESIDENT_SLOTS;
    size_t i = ((uintptr_t)kernel >> 4) % slots;
    int blocks = 0;
    for (size_t probe = 0; probe < slots; probe++, i = (i + 1) % slots) {
        if (cu->resident[i].kernel == kernel) return cu->resident[i].blocks;
        if (!cu->resident[i].kernel) break;
    }
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, KRILL_CUDA_THREADS, 0) !=
        cudaSuccess) {
        (void)cudaGetLastError();
        blocks = cu->max_threads_per_sm / KRILL_CUDA_THREADS;
    }
    if (blocks < 1) blocks = 1;
    if (!cu->resident[i].kernel) {
        cu->resident[i].kernel = kernel;
        cu->resident[i].blocks = blocks;
    }
    return blocks;
}

/* A launch with a bad configuration fails at once; a kernel that faults while running shows
 * up at the next synchronizing call (krill_cuda_sync, a device -> host copy). */
extern "C" krill_status krill_cuda_check_launch(const char *where)
{
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess) return KRILL_OK;
    return krill_error(KRILL_ERR_DEVICE, "%s: kernel launch failed: %s (%s)", where,
                       cudaGetErrorName(err), cudaGetErrorString(err));
}
