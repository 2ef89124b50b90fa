/* apsp/peak.cu - the GPU half of krill_apsp_peak (apsp/peak.c): one timed launch of
 * register-resident min-plus chains, the figure the blocked methods' efficiency is measured
 * against (doc/apsp.md, "Benchmarks").
 *
 * Every thread runs PEAK_CHAINS independent chains x = min(x + b, c), b and c kernel
 * arguments the compiler cannot see (b > 0, so x settles at c and no value drifts), for
 * PEAK_UNROLL * rounds steps each. The chains touch no memory; their minimum is stored
 * once, and only when it equals a sentinel that it never equals, so the compiler must keep
 * every step but no store happens. One relaxation = one min(a + b, c):
 *   int32   __viaddmin_s32 (the DPX instruction VIADDMNMX on sm_90; IADD3 + IMNMX before)
 *   float   __fadd_rn then fminf (FADD + FMNMX)
 *   double  __dadd_rn then a compare and select (DADD + DSETP.GEU + 2 FSEL): neither
 *           sm_80 nor sm_90 has a double minimum instruction, and fmin(double) compiles
 *           to DSETP.MIN + FSEL + SEL + a NaN fix-up with predicate spills
 * (checked with cuobjdump -sass for sm_80 and sm_90: the loop body is exactly these
 * instructions and the loop counter, no FFMA, no local memory, no fused or dropped
 * steps).
 * The grid is one full wave: 256 threads a block, as many blocks per SM as the occupancy
 * calculator admits, on every SM. Timed with a CUDA event pair on the context's stream. */
#include <math.h>

#include "apsp/apsp_impl.h"
#include "kernels/kernels_impl.cuh"

namespace {

constexpr int PEAK_THREADS = 256;
constexpr int PEAK_CHAINS = 16;   /* independent chains per thread: hide the add-min latency */
constexpr int PEAK_UNROLL = 8;    /* steps of every chain per round of the loop */

template <typename T> struct minplus;

template <> struct minplus<int32_t> {
    static __device__ __forceinline__ int32_t relax(int32_t a, int32_t b, int32_t c)
    {
        return __viaddmin_s32(a, b, c);
    }
    static __device__ __forceinline__ int32_t min2(int32_t a, int32_t b) { return min(a, b); }
};

template <> struct minplus<float> {
    static __device__ __forceinline__ float relax(float a, float b, float c)
    {
        return fminf(__fadd_rn(a, b), c);
    }
    static __device__ __forceinline__ float min2(float a, float b) { return fminf(a, b); }
};

template <> struct minplus<double> {
    static __device__ __forceinline__ double relax(double a, double b, double c)
    {
        const double s = __dadd_rn(a, b);
        return s < c ? s : c;
    }
    static __device__ __forceinline__ double min2(double a, double b) { return fmin(a, b); }
};

/* rounds * PEAK_UNROLL * PEAK_CHAINS relaxations per thread; *sink is written only if the
 * chains' minimum equals `sentinel` (never: the caller passes one below every chain). */
template <typename T>
__global__ void __launch_bounds__(PEAK_THREADS)
peak_kernel(long long rounds, T b, T c, T sentinel, T *sink)
{
    T x[PEAK_CHAINS];
    const T start = (T)(threadIdx.x & 7);
#pragma unroll
    for (int j = 0; j < PEAK_CHAINS; j++) x[j] = start + (T)j;
    for (long long r = 0; r < rounds; r++) {
#pragma unroll
        for (int u = 0; u < PEAK_UNROLL; u++) {
#pragma unroll
            for (int j = 0; j < PEAK_CHAINS; j++) x[j] = minplus<T>::relax(x[j], b, c);
        }
    }
    T m = x[0];
#pragma unroll
    for (int j = 1; j < PEAK_CHAINS; j++) m = minplus<T>::min2(m, x[j]);
    if (m == sentinel) *sink = m;
}

/* Launch with a full wave and time it: *threads_out the threads launched. */
template <typename T>
krill_status launch(krill_ctx *ctx, long long rounds, T b, T c, T sentinel, double *threads_out,
                    double *seconds)
{
    krill_status st = KRILL_OK;
    cudaEvent_t ev0 = nullptr, ev1 = nullptr;
    const cudaStream_t stream = krill_cuda_stream(ctx);
    int per_sm = 0;
    float ms = 0.0f;
    long long blocks;
    /* the workspace's partial sums may be overwritten by any kernel (core_impl.h); element
       0 is the never-written sink */
    T *sink = reinterpret_cast<T *>(ctx->cuda->work);
    KRILL_CUDA_TRY(cudaSetDevice(ctx->device_id));
    KRILL_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, peak_kernel<T>,
                                                                 PEAK_THREADS, 0));
    if (per_sm < 1) {
        st = krill_error(KRILL_ERR_DEVICE, "krill_apsp_peak: the occupancy calculator admits no "
                         "block of %d threads of the peak kernel on cuda:%d", PEAK_THREADS,
                         ctx->device_id);
        goto cleanup;
    }
    blocks = (long long)per_sm * ctx->cuda->sm_count;
    KRILL_CUDA_TRY(cudaEventCreate(&ev0));
    KRILL_CUDA_TRY(cudaEventCreate(&ev1));
    KRILL_CUDA_TRY(cudaEventRecord(ev0, stream));
    peak_kernel<T><<<(unsigned)blocks, PEAK_THREADS, 0, stream>>>(rounds, b, c, sentinel, sink);
    KRILL_TRY(krill_cuda_check_launch("krill_apsp_peak (peak_kernel)"));
    KRILL_CUDA_TRY(cudaEventRecord(ev1, stream));
    KRILL_CUDA_TRY(cudaEventSynchronize(ev1));
    KRILL_CUDA_TRY(cudaEventElapsedTime(&ms, ev0, ev1));
    *threads_out = (double)blocks * PEAK_THREADS;
    *seconds = 1e-3 * (double)ms;
cleanup:
    if (ev0) (void)cudaEventDestroy(ev0);
    if (ev1) (void)cudaEventDestroy(ev1);
    return st;
}

} /* namespace */

extern "C" krill_status apsp_gpu_peak_launch(krill_ctx *ctx, krill_apsp_weight weight,
                                             int64_t rounds, double *relaxations,
                                             double *seconds)
{
    krill_status st = KRILL_OK;
    double threads = 0.0;
    *relaxations = 0.0;
    *seconds = 0.0;
    switch (weight) {
    case KRILL_APSP_INT32:
        st = launch<int32_t>(ctx, (long long)rounds, 1, 64, INT32_MIN, &threads, seconds);
        break;
    case KRILL_APSP_FLOAT:
        st = launch<float>(ctx, (long long)rounds, 1.0f, 64.0f, -1.0f, &threads, seconds);
        break;
    case KRILL_APSP_DOUBLE:
        st = launch<double>(ctx, (long long)rounds, 1.0, 64.0, -1.0, &threads, seconds);
        break;
    default:
        st = krill_error(KRILL_ERR_ARG, "krill_apsp_peak: unknown weight type %d", (int)weight);
        break;
    }
    if (st == KRILL_OK)
        *relaxations = threads * (double)PEAK_CHAINS * PEAK_UNROLL * (double)rounds;
    return st;
}
