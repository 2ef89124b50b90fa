/* apsp/cpu_plain.c - Floyd-Warshall's triple loop on the CPU: the "plain" method and the
 * test oracle of every other method, kept simple on purpose (no blocking, no shared kernels).
 *
 * Reference: R. W. Floyd, "Algorithm 97: Shortest path", CACM 5(6), 1962; the FW procedure
 * of papers/004, section 3 (Fig. 1, lines 11-15, on the whole matrix).
 *
 *   for k = 0 .. npad-1:                         (in order: step k needs step k-1)
 *     for i != k, in parallel (one row per thread at a time):
 *       for j:  s = D[i][k] + D[k][j]  (int32: clamped, apsp_impl.h)
 *               if s < D[i][j]:  D[i][j] = s, P[i][j] = P[k][j]
 * Row k is left out of step k: it would change only through D[k][k] < 0, a negative cycle,
 * which then stays visible on the diagonal; so no thread writes a row that others read, and
 * results do not depend on the thread count. Row i is skipped when D[i][k] is INF: no sum
 * through it can be smaller (int32: INF + x >= clamp_hi for every stored x > -INF / 2).
 *
 * Memory traffic: per step k, every row i with D[i][k] finite reads row k and reads and
 * writes row i: up to 3 npad^2 elements (with P: 3 npad^2 more int32), n^3 relaxations at
 * about 12 bytes each for int32 once npad^2 outgrows the caches. */
#include <math.h>

#include "apsp/apsp_impl.h"

#define PLAIN_SUM_I32(a, b, hi) apsp_i32_clamp((a) + (b), (hi))
#define PLAIN_SUM_FP(a, b, hi) ((a) + (b))

/* plain_<name>(run): the loop above on D of element type T */
#define PLAIN_DEFINE(name, T, INF, SUM)                                                  \
    static void plain_##name(apsp_run *run)                                             \
    {                                                                                   \
        T *d = (T *)run->d;                                                             \
        int32_t *p = run->p;                                                            \
        const int64_t npad = run->npad;                                                 \
        const int32_t hi = run->clamp_hi;                                               \
        const int threads = krill_ctx_threads(run->ctx) > 0 ? krill_ctx_threads(run->ctx) : 1; \
        (void)hi;                                                                       \
        _Pragma("omp parallel num_threads(threads)")                                    \
        for (int64_t k = 0; k < npad; k++) {                                            \
            const T *dk = d + k * npad;                                                 \
            const int32_t *pk = p ? p + k * npad : NULL;                                \
            _Pragma("omp for schedule(static)")                                         \
            for (int64_t i = 0; i < npad; i++) {                                        \
                T *di = d + i * npad;                                                   \
                int32_t *pi = p ? p + i * npad : NULL;                                  \
                const T dik = di[k];                                                    \
                if (i == k || dik == (INF)) continue;                                   \
                for (int64_t j = 0; j < npad; j++) {                                    \
                    const T s = SUM(dik, dk[j], hi);                                    \
                    if (s < di[j]) {                                                    \
                        di[j] = s;                                                      \
                        if (pi) pi[j] = pk[j];                                          \
                    }                                                                   \
                }                                                                       \
            }                                                                           \
        }                                                                               \
    }

PLAIN_DEFINE(i32, int32_t, APSP_I32_INF, PLAIN_SUM_I32)
PLAIN_DEFINE(f32, float, (float)INFINITY, PLAIN_SUM_FP)
PLAIN_DEFINE(f64, double, (double)INFINITY, PLAIN_SUM_FP)

static krill_status plain_whole(apsp_run *run)
{
    if (run->weight == KRILL_APSP_INT32)
        plain_i32(run);
    else if (run->weight == KRILL_APSP_FLOAT)
        plain_f32(run);
    else
        plain_f64(run);
    return KRILL_OK;
}

const apsp_ops apsp_cpu_plain = {
    .tile = 1,
    .granule = 1,
    .whole = plain_whole,
};
