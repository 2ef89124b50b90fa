/* apsp/peak.c - krill_apsp_peak: the device's measured min-plus peak, the relaxations
 * min(a + b, c) per second that register-resident chains reach when no memory is involved.
 * The blocked methods' efficiency (bench_apsp, the APSP paper's Table 3) is their
 * relaxations per second over this figure.
 *
 * The chains. Each is x = min(x + b, c), with b = 1 and c = 64 read from volatile
 * variables, so the compiler sees neither (b > 0: x settles at c, no value drifts, no
 * overflow, no denormal). A chain depends only on itself; enough of them run side by side
 * to cover the add-min latency. They touch no memory; the minimum over all chains and
 * threads is stored once per run into a volatile variable, so no step can be dropped.
 *   CPU: one OpenMP team of krill_ctx_threads(ctx) threads, each running VECS independent
 *        vectors of chains of the widest instruction set the CPU has: AVX-512F (16
 *        vectors of 64 bytes), AVX2 (12 of 32 bytes), SSE4.1 / SSE2 (12 of 16 bytes), or
 *        off x86-64 plain C (8 vectors of 16 bytes, the minimum a compare and select, left
 *        to the compiler). On x86-64 one step of a vector is one add and one min
 *        instruction (int32 vpaddd + vpminsd, float vaddps + vminps, double vaddpd +
 *        vminpd) on registers only. KRILL_APSP_CPU_ISA = avx2 | generic caps the choice
 *        as it caps the blocked methods' kernels. Timed with the host clock around the
 *        team.
 *   GPU: apsp/peak.cu, one launch per run (every SM full, 16 chains a thread, int32
 *        through the DPX instruction on sm_90), timed with CUDA events.
 * The run: a warm-up run, then runs of growing length until one takes a quarter of the
 * share of `seconds` a run gets (on the CPU these run on the calling thread alone: every
 * thread of the team does the same steps on a core of its own); that length is scaled to
 * the share, and PEAK_RUNS runs of it are timed, on every thread / SM. The figure is relaxations / median time, the relaxations counted exactly
 * (threads x chains x lanes x steps). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "apsp/apsp_impl.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PEAK_X86 1
#include <immintrin.h>
#else
#define PEAK_X86 0
#endif

#define PEAK_RUNS 7                 /* timed runs; the figure is their median */
#define PEAK_DEFAULT_SECONDS 0.1
#define PEAK_MAX_STEPS 1e12         /* longest run, in steps: a guard against a 0 s clock */
#define PEAK_MAX_GROWTH 64.0        /* calibration: a run at most this many times longer */

/* One CPU kernel: `steps` steps of its chains, returning their minimum. */
typedef struct peak_cpu_kernel {
    double (*run)(int64_t steps, double b, double c, double start);
    int per_step;                   /* relaxations per step: vectors x lanes */
} peak_cpu_kernel;

/* ---- the chain kernels ------------------------------------------------------------------
 * PEAK_KERNEL(NAME, ATTR, VEC, ELEM, MIN, VECS): the chains of one weight type in VECS
 * vectors of type VEC (a GCC vector of ELEM: `+` is the vector add) with MIN(a, b) the
 * vector minimum. The vector loop is unrolled, so x[] lives in registers (checked in the
 * disassembly: the loop is VECS adds, VECS mins, the counter and the branch). Every lane
 * starts at its own value, so no two lanes are the same computation. */
#define PEAK_PRAGMA(x) _Pragma(#x)
#define PEAK_LANES(VEC, ELEM) ((int)(sizeof(VEC) / sizeof(ELEM)))
#define PEAK_KERNEL(NAME, ATTR, VEC, ELEM, MIN, VECS)                                    \
    enum { NAME##_per_step = (VECS) * PEAK_LANES(VEC, ELEM) };                           \
    ATTR static double NAME(int64_t steps, double b, double c, double start)             \
    {                                                                                    \
        const VEC zero = {0}, vb = zero + (ELEM)b, vc = zero + (ELEM)c;                  \
        VEC x[VECS];                                                                     \
        double m;                                                                        \
        for (int l = 0; l < PEAK_LANES(VEC, ELEM); l++) {                                \
            for (int j = 0; j < (VECS); j++)                                             \
                x[j][l] = (ELEM)(start + (double)(j + (VECS) * l) / (VECS * 16));        \
        }                                                                                \
        for (int64_t i = 0; i < steps; i++) {                                            \
            PEAK_PRAGMA(GCC unroll 16)                                                   \
            for (int j = 0; j < (VECS); j++) x[j] = MIN(x[j] + vb, vc);                  \
        }                                                                                \
        m = (double)x[0][0];                                                             \
        for (int j = 0; j < (VECS); j++)                                                 \
            for (int l = 0; l < PEAK_LANES(VEC, ELEM); l++)                              \
                if ((double)x[j][l] < m) m = (double)x[j][l];                            \
        return m;                                                                        \
    }

#define PEAK_ENTRY(NAME) { NAME, NAME##_per_step }

/* plain C: 16-byte GCC vectors and a compare-and-select minimum (IV: the integer vector
 * of the same lane width), for any target */
typedef int32_t peak_c_i32v __attribute__((vector_size(16)));
typedef float peak_c_f32v __attribute__((vector_size(16)));
typedef double peak_c_f64v __attribute__((vector_size(16)));
typedef int64_t peak_c_i64v __attribute__((vector_size(16)));
#define PEAK_SELECT_MIN(IV, VEC, a, b)                                                   \
    ((VEC)(((IV)((a) < (b)) & (IV)(a)) | (~(IV)((a) < (b)) & (IV)(b))))
#define PEAK_C_MIN_I32(a, b) PEAK_SELECT_MIN(peak_c_i32v, peak_c_i32v, a, b)
#define PEAK_C_MIN_F32(a, b) PEAK_SELECT_MIN(peak_c_i32v, peak_c_f32v, a, b)
#define PEAK_C_MIN_F64(a, b) PEAK_SELECT_MIN(peak_c_i64v, peak_c_f64v, a, b)
PEAK_KERNEL(peak_c_i32, __attribute__((noinline)), peak_c_i32v, int32_t, PEAK_C_MIN_I32, 8)
PEAK_KERNEL(peak_c_f32, __attribute__((noinline)), peak_c_f32v, float, PEAK_C_MIN_F32, 8)
PEAK_KERNEL(peak_c_f64, __attribute__((noinline)), peak_c_f64v, double, PEAK_C_MIN_F64, 8)

#if PEAK_X86
/* x86-64: the vector minimum instructions through their intrinsics, one function per
 * instruction set (target attributes: the rest of krill is built for the baseline ISA) */
typedef int32_t peak_v16i __attribute__((vector_size(64)));
typedef int32_t peak_v8i __attribute__((vector_size(32)));
#define PEAK_AVX512 __attribute__((target("avx512f"), noinline))
#define PEAK_AVX2 __attribute__((target("avx2"), noinline))
#define PEAK_SSE41 __attribute__((target("sse4.1"), noinline))
#define PEAK_SSE2 __attribute__((noinline))
#define PEAK_MIN_512I(a, b) ((peak_v16i)_mm512_min_epi32((__m512i)(a), (__m512i)(b)))
#define PEAK_MIN_256I(a, b) ((peak_v8i)_mm256_min_epi32((__m256i)(a), (__m256i)(b)))
#define PEAK_MIN_128I(a, b) ((peak_c_i32v)_mm_min_epi32((__m128i)(a), (__m128i)(b)))

PEAK_KERNEL(peak_avx512_i32, PEAK_AVX512, peak_v16i, int32_t, PEAK_MIN_512I, 16)
PEAK_KERNEL(peak_avx512_f32, PEAK_AVX512, __m512, float, _mm512_min_ps, 16)
PEAK_KERNEL(peak_avx512_f64, PEAK_AVX512, __m512d, double, _mm512_min_pd, 16)
PEAK_KERNEL(peak_avx2_i32, PEAK_AVX2, peak_v8i, int32_t, PEAK_MIN_256I, 12)
PEAK_KERNEL(peak_avx2_f32, PEAK_AVX2, __m256, float, _mm256_min_ps, 12)
PEAK_KERNEL(peak_avx2_f64, PEAK_AVX2, __m256d, double, _mm256_min_pd, 12)
PEAK_KERNEL(peak_sse41_i32, PEAK_SSE41, peak_c_i32v, int32_t, PEAK_MIN_128I, 12)
PEAK_KERNEL(peak_sse2_f32, PEAK_SSE2, __m128, float, _mm_min_ps, 12)
PEAK_KERNEL(peak_sse2_f64, PEAK_SSE2, __m128d, double, _mm_min_pd, 12)
#endif

/* The kernel for `weight` in the widest instruction set this CPU has, capped as the
 * blocked methods' kernels are (apsp/cpu_blocked.c) by KRILL_APSP_CPU_ISA = avx2 | generic
 * (generic: x86-64's baseline, SSE2, where the int32 minimum is a compare and select). */
static peak_cpu_kernel cpu_kernel(krill_apsp_weight weight)
{
    static const peak_cpu_kernel generic[3] = {PEAK_ENTRY(peak_c_i32),
                                               PEAK_ENTRY(peak_c_f32),
                                               PEAK_ENTRY(peak_c_f64)};
    peak_cpu_kernel k = generic[weight];
#if PEAK_X86
    static const peak_cpu_kernel avx512[3] = {PEAK_ENTRY(peak_avx512_i32),
                                              PEAK_ENTRY(peak_avx512_f32),
                                              PEAK_ENTRY(peak_avx512_f64)};
    static const peak_cpu_kernel avx2[3] = {PEAK_ENTRY(peak_avx2_i32),
                                            PEAK_ENTRY(peak_avx2_f32),
                                            PEAK_ENTRY(peak_avx2_f64)};
    static const peak_cpu_kernel sse[3] = {PEAK_ENTRY(peak_sse41_i32),
                                           PEAK_ENTRY(peak_sse2_f32),
                                           PEAK_ENTRY(peak_sse2_f64)};
    const char *cap = getenv("KRILL_APSP_CPU_ISA");
    const int generic_only = cap && strcmp(cap, "generic") == 0;
    const int isa = apsp_cpu_isa();            /* the blocked kernels' choice */
    __builtin_cpu_init();
    if (isa == APSP_ISA_AVX512)
        k = avx512[weight];
    else if (isa == APSP_ISA_AVX2)
        k = avx2[weight];
    else if (weight != KRILL_APSP_INT32 ||
             (!generic_only && __builtin_cpu_supports("sse4.1")))
        k = sse[weight];
#endif
    return k;
}

/* ---- the runs ------------------------------------------------------------------------- */

/* The chains' minimum of every run lands here, so that no run can be left out. */
static volatile double peak_sink;
/* b and c of the chains, read at run time */
static volatile double peak_b = 1.0, peak_c = 64.0;

typedef struct peak_job {
    krill_ctx *ctx;
    krill_apsp_weight weight;
    peak_cpu_kernel cpu;
} peak_job;

/* One run of `steps` steps (GPU: rounds) on every thread / SM: relaxations and seconds.
 * solo (CPU): on the calling thread alone, without the team's fork and join (calibration:
 * the time of a short run is then the chains', not the scheduler's). */
static krill_status peak_run(const peak_job *job, int64_t steps, int solo, double *relax,
                             double *seconds)
{
    krill_status st = KRILL_OK;
    *relax = 0.0;
    *seconds = 0.0;
    if (krill_on_gpu(job->ctx)) {
#ifdef KRILL_HAVE_CUDA
        st = apsp_gpu_peak_launch(job->ctx, job->weight, steps, relax, seconds);
#else
        st = krill_error(KRILL_ERR_UNSUPPORTED, "krill_apsp_peak: this krill has no CUDA");
#endif
    } else if (solo) {
        const double b = peak_b, c = peak_c, t0 = krill_wtime();
        peak_sink = job->cpu.run(steps, b, c, 0.0);
        *seconds = krill_wtime() - t0;
        *relax = (double)steps * (double)job->cpu.per_step;
    } else {
        const double b = peak_b, c = peak_c;
        const peak_cpu_kernel k = job->cpu;
        double m = INFINITY, t0;
        int team = 1;
        t0 = krill_wtime();
#pragma omp parallel num_threads(krill_ctx_threads(job->ctx)) reduction(min : m)
        {
            const double r = k.run(steps, b, c, (double)omp_get_thread_num());
            if (r < m) m = r;
            if (omp_get_thread_num() == 0) team = omp_get_num_threads();
        }
        *seconds = krill_wtime() - t0;
        *relax = (double)team * (double)steps * (double)k.per_step;
        peak_sink = m;
    }
    return st;
}

static void sort_small(double *v, int n)
{
    for (int i = 1; i < n; i++) {
        const double x = v[i];
        int j = i;
        for (; j > 0 && v[j - 1] > x; j--) v[j] = v[j - 1];
        v[j] = x;
    }
}

krill_status krill_apsp_peak(krill_ctx *ctx, krill_apsp_weight weight, double seconds,
                             double *relax_per_second)
{
    krill_status st = KRILL_OK;
    peak_job job;
    double t[PEAK_RUNS], relax = 0.0, t_run = 0.0, share, steps_d;
    int64_t steps = 1;
    KRILL_REQUIRE(ctx != NULL && relax_per_second != NULL,
                  "krill_apsp_peak: ctx and relax_per_second must not be NULL");
    *relax_per_second = 0.0;
    KRILL_REQUIRE(weight == KRILL_APSP_INT32 || weight == KRILL_APSP_FLOAT ||
                  weight == KRILL_APSP_DOUBLE,
                  "krill_apsp_peak: unknown weight type %d (int32 0, float 1, double 2)",
                  (int)weight);
    KRILL_REQUIRE(seconds >= 0.0 && seconds <= 3600.0,
                  "krill_apsp_peak: seconds = %g is not in [0, 3600] (0: the default %g s)",
                  seconds, PEAK_DEFAULT_SECONDS);
    job.ctx = ctx;
    job.weight = weight;
    job.cpu = cpu_kernel(weight);
    share = (seconds > 0.0 ? seconds : PEAK_DEFAULT_SECONDS) / (PEAK_RUNS + 1);

    KRILL_TRY(peak_run(&job, steps, 1, &relax, &t_run));   /* warm-up */
    for (;;) {
        double grow;
        KRILL_TRY(peak_run(&job, steps, 1, &relax, &t_run));
        if (t_run >= 0.25 * share || (double)steps >= PEAK_MAX_STEPS) break;
        grow = t_run > 0.0 ? 0.5 * share / t_run : PEAK_MAX_GROWTH;
        if (grow > PEAK_MAX_GROWTH) grow = PEAK_MAX_GROWTH;
        if (grow < 2.0) grow = 2.0;
        steps = (int64_t)fmin(PEAK_MAX_STEPS, ceil((double)steps * grow));
    }
    steps_d = t_run > 0.0 ? ceil((double)steps * share / t_run) : (double)steps;
    steps = (int64_t)fmax(1.0, fmin(PEAK_MAX_STEPS, steps_d));
    for (int k = 0; k < PEAK_RUNS; k++) KRILL_TRY(peak_run(&job, steps, 0, &relax, &t[k]));
    sort_small(t, PEAK_RUNS);
    if (!(t[PEAK_RUNS / 2] > 0.0)) {
        st = krill_error(KRILL_ERR_INTERNAL, "krill_apsp_peak: a run of %.0f relaxations took "
                         "no measurable time", relax);
        goto cleanup;
    }
    *relax_per_second = relax / t[PEAK_RUNS / 2];
cleanup:
    return st;
}
