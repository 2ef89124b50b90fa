/* apsp/cpu_device.c - the device layer of APSP on the CPU: D (and P) in host memory,
 * built from the graph in parallel, time stamps from the host clock, and the n x n corner
 * copied out. Building D writes npad^2 elements once and scatters the m arcs. */
#include <math.h>
#include <string.h>

#include "apsp/apsp_impl.h"

typedef struct cpu_state {
    double *stamps;
    int n_stamps;
} cpu_state;

/* The host memory available (core's MemAvailable), in bytes. */
static krill_status cpu_free_bytes(apsp_run *run, double *bytes)
{
    (void)run;
    *bytes = (double)krill_host_mem_available();
    return KRILL_OK;
}

static krill_status cpu_alloc(apsp_run *run, int paths, int stamps)
{
    krill_status st = KRILL_OK;
    cpu_state *s = NULL;
    size_t cells = (size_t)run->npad * (size_t)run->npad;
    KRILL_CALLOC(s, 1);
    run->device_state = s;
    KRILL_TRY(krill_alloc_n(&run->d, cells, run->elem, 0, "APSP distance matrix D"));
    krill_advise_huge(run->d, cells * run->elem);
    if (paths) KRILL_TRY(krill_alloc_n((void **)&run->p, cells, sizeof(int32_t), 0,
                                       "APSP predecessor matrix P"));
    krill_advise_huge(run->p, cells * sizeof(int32_t));
    KRILL_ALLOC(s->stamps, stamps > 0 ? stamps : 1);
    s->n_stamps = stamps;
cleanup:
    return st;
}

/* D and P from the graph. Row u: INF (NO_PRED) everywhere, 0 on the diagonal, then u's
 * arcs; a self loop only lowers the diagonal. Rows are independent: one thread each. */
#define CPU_INIT_ROWS(T, INF, CONVERT)                                                   \
    do {                                                                                 \
        T *d = (T *)run->d;                                                              \
        _Pragma("omp parallel for schedule(static) num_threads(threads)")                \
        for (int64_t u = 0; u < npad; u++) {                                             \
            T *row = d + u * npad;                                                       \
            int32_t *prow = run->p ? run->p + u * npad : NULL;                           \
            for (int64_t v = 0; v < npad; v++) row[v] = (INF);                          \
            row[u] = 0;                                                                  \
            if (prow)                                                                    \
                for (int64_t v = 0; v < npad; v++) prow[v] = KRILL_APSP_NO_PRED;         \
            if (u >= n) continue;                                                        \
            for (int64_t e = g->row_ptr[u]; e < g->row_ptr[u + 1]; e++) {                \
                int32_t v = g->col[e];                                                   \
                T w = CONVERT(g->val[e]);                                                \
                if (v == u) {                                                            \
                    if (w < 0) row[u] = w;                                               \
                } else {                                                                 \
                    row[v] = w;                                                          \
                    if (prow) prow[v] = (int32_t)u;                                      \
                }                                                                        \
            }                                                                            \
        }                                                                                \
    } while (0)

#define CONVERT_I32(x) ((int32_t)(x))
#define CONVERT_F32(x) ((float)(x))
#define CONVERT_F64(x) (x)

static krill_status cpu_init(apsp_run *run, double *upload)
{
    const krill_csr *g = run->graph;
    const int64_t npad = run->npad, n = run->n;
    const int threads = krill_ctx_threads(run->ctx);
    *upload = 0.0;
    if (run->weight == KRILL_APSP_INT32)
        CPU_INIT_ROWS(int32_t, APSP_I32_INF, CONVERT_I32);
    else if (run->weight == KRILL_APSP_FLOAT)
        CPU_INIT_ROWS(float, INFINITY, CONVERT_F32);
    else
        CPU_INIT_ROWS(double, INFINITY, CONVERT_F64);
    return KRILL_OK;
}

static krill_status cpu_stamp(apsp_run *run, int index)
{
    cpu_state *s = (cpu_state *)run->device_state;
    krill_status st = KRILL_OK;
    if (index < 0 || index >= s->n_stamps)
        st = krill_error(KRILL_ERR_INTERNAL, "apsp: time stamp %d of %d", index, s->n_stamps);
    else
        s->stamps[index] = krill_wtime();
    return st;
}

static krill_status cpu_elapsed(apsp_run *run, int count, double *out)
{
    const cpu_state *s = (const cpu_state *)run->device_state;
    for (int i = 0; i + 1 < count && i + 1 < s->n_stamps; i++)
        out[i] = s->stamps[i + 1] - s->stamps[i];
    return KRILL_OK;
}

static krill_status cpu_fetch(apsp_run *run, void *dist, int32_t *pred)
{
    const int64_t n = run->n, npad = run->npad;
    const size_t row_bytes = (size_t)n * run->elem;
    const int threads = krill_ctx_threads(run->ctx);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t i = 0; i < n; i++) {
        memcpy((char *)dist + (size_t)i * row_bytes,
               (const char *)run->d + (size_t)(i * npad) * run->elem, row_bytes);
        if (pred && run->p)
            memcpy(pred + i * n, run->p + i * npad, (size_t)n * sizeof(int32_t));
    }
    return KRILL_OK;
}

static krill_status cpu_sync(apsp_run *run)
{
    (void)run;
    return KRILL_OK;
}

static void cpu_release(apsp_run *run)
{
    cpu_state *s = (cpu_state *)run->device_state;
    krill_free(run->d);
    krill_free(run->p);
    run->d = NULL;
    run->p = NULL;
    if (s) krill_free(s->stamps);
    krill_free(s);
    run->device_state = NULL;
}

const apsp_device apsp_cpu_device = {
    .name = "cpu",
    .free_bytes = cpu_free_bytes,
    .alloc = cpu_alloc,
    .init = cpu_init,
    .stamp = cpu_stamp,
    .elapsed = cpu_elapsed,
    .fetch = cpu_fetch,
    .sync = cpu_sync,
    .release = cpu_release,
};
