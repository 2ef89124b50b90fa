/* apsp/apsp_impl.h - internals of the all-pairs shortest-path module.
 *
 * Layers, arrows pointing down:
 *   apsp.c       the public API: options, the method choice, memory checks, the driver
 *                (the blocked rounds, timing per tile kind), negative cycles, paths
 *   methods.c    the method table: one apsp_method per method, with a CPU and a GPU
 *                apsp_ops (NULL where a device lacks the method)
 *   cpu_*.c      the CPU kernels (OpenMP); gpu_kernels.cuh (tiles, plain) and gpu_minplus.cuh
 *                (products) the GPU kernels (CUDA), gpu_methods.cu their launches,
 *                gpu_device.cu the GPU device layer
 *
 * The state of one solve is an apsp_run. D lives in the context's memory as an npad x npad
 * row-major matrix of the weight type, npad = n rounded up to the method's tile; padded
 * vertices are isolated (INF off the diagonal, 0 on it), so they never shorten a real
 * path. A blocked method is three functions the driver calls for every round k (pivot
 * tile, then the pivot row and column tiles, then the rest); each touches D only through
 * the tile rows/columns of its round, so that a later out-of-core driver can serve those
 * from host memory (issue 16). The other methods are one `whole` function.
 *
 * int32 arithmetic (doc/apsp.md): INF = KRILL_APSP_INT32_INF = 2^30 - 1 and every stored
 * value lies in [-INF, INF], so a + b never wraps. A sum >= clamp_hi (INF when no weight is
 * negative, INF / 2 otherwise) involves an INF operand or is longer than any simple path:
 * it is stored as INF. A value below -INF (only a negative cycle makes one) is stored as
 * -INF. Kernels whose updates feed later steps of the same launch (pivot, panels, plain)
 * apply the rule to every sum; the independent min-plus products apply it when they write
 * a value back. Predecessors: when a sum a + b = D[i][k] + D[k][j] is strictly smaller
 * than D[i][j], P[i][j] = P[k][j]; a value clamped to INF gets P = KRILL_APSP_NO_PRED. */
#ifndef KRILL_APSP_IMPL_H
#define KRILL_APSP_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include "core/core_impl.h"
#include "krill/apsp.h"
#include "krill/overlap.h"

#ifdef __cplusplus
extern "C" {
#endif

#define APSP_I32_INF KRILL_APSP_INT32_INF

typedef struct apsp_run {
    krill_ctx *ctx;
    const krill_csr *graph;      /* host adjacency (the input) */
    krill_apsp_weight weight;
    size_t elem;                 /* bytes of one element: 4 or 8 */
    int32_t n;                   /* vertices */
    int32_t npad;                /* D's side and leading dimension: n rounded up to tile */
    int tile;                    /* t of the blocked methods (1 for the others) */
    void *d;                     /* npad x npad distances, row-major, context memory */
    int32_t *p;                  /* npad x npad predecessors, or NULL (no paths) */
    int32_t clamp_hi;            /* int32: a sum >= clamp_hi is stored as INF */
    int has_negative;            /* some arc weight is negative */
    void *state;                 /* a method's scratch (its begin allocates, its end frees) */
    double t_hidden_pivot;       /* seconds of pivot and panel work that ran beside the rest */
    double t_hidden_panels;      /*   (GPU fw-a's lookahead): added to those kinds' times */
    void *device_state;          /* the device layer's own (apsp_device) */
} apsp_run;

/* One method on one device. A blocked method fills pivot, panels and rest (round k works
 * on tile row and column k, 0 <= k < npad / tile); another fills whole. */
typedef struct apsp_ops {
    int tile;                                        /* default t (blocked); 1 otherwise */
    int granule;                                     /* t must be a multiple of this; 0: t is
                                                        fixed at `tile` (kernels built for it) */
    krill_status (*begin)(apsp_run *run);            /* NULL: nothing to prepare */
    krill_status (*pivot)(apsp_run *run, int32_t k);
    krill_status (*panels)(apsp_run *run, int32_t k);
    krill_status (*rest)(apsp_run *run, int32_t k);
    krill_status (*whole)(apsp_run *run);
    void (*end)(apsp_run *run);                      /* NULL-safe state release */
    /* bytes `begin` will take beside D (and P), for the memory check before anything is
       allocated; NULL: none */
    double (*extra_bytes)(const apsp_run *run, int paths);
} apsp_ops;

typedef struct apsp_method {
    const char *name;                /* "fw-a" */
    const char *summary;             /* one line */
    int needs_nonnegative;           /* dijkstra: refuses negative weights */
    int fills_d;                     /* 1: `whole` writes all of D (and P) itself, so the
                                        device layer skips building D from the graph */
    const apsp_ops *cpu;             /* NULL: not on the CPU */
    const apsp_ops *gpu;             /* NULL: not on the GPU */
} apsp_method;

/* methods.c: the table, in krill_apsp_methods() order; lookup by name (NULL if unknown). */
extern const apsp_method *const apsp_method_table[];
const apsp_method *apsp_method_find(const char *name);

/* The device layer: where D lives and how it is built, timed and fetched. */
typedef struct apsp_device {
    const char *name;                /* "cpu" or "gpu" */
    /* free bytes of the memory D would take (host: MemAvailable; GPU: cudaMemGetInfo) */
    krill_status (*free_bytes)(apsp_run *run, double *bytes);
    /* allocate d (and p when `paths`) and the timer for `stamps` time stamps */
    krill_status (*alloc)(apsp_run *run, int paths, int stamps);
    /* D (and P) from run->graph: INF everywhere, the diagonal min(0, self loop), each arc's
       weight (P[u][v] = u for an arc, NO_PRED elsewhere). *upload: seconds moving the graph */
    krill_status (*init)(apsp_run *run, double *upload);
    krill_status (*stamp)(apsp_run *run, int index);          /* time stamp `index` */
    /* seconds between stamps: out[i] = stamp[i + 1] - stamp[i], i < count - 1 (waits) */
    krill_status (*elapsed)(apsp_run *run, int count, double *out);
    /* the n x n corner of D (and of P when pred != NULL) into host arrays */
    krill_status (*fetch)(apsp_run *run, void *dist, int32_t *pred);
    krill_status (*sync)(apsp_run *run);
    void (*release)(apsp_run *run);
} apsp_device;

extern const apsp_device apsp_cpu_device;     /* cpu_device.c */
#ifdef KRILL_HAVE_CUDA
extern const apsp_device apsp_gpu_device;     /* gpu_device.cu */
#endif

/* The methods' implementations (cpu_*.c, gpu_methods.cu). */
extern const apsp_ops apsp_cpu_plain, apsp_cpu_fw_a, apsp_cpu_fw_b, apsp_cpu_fw_rec,
    apsp_cpu_dijkstra;
#ifdef KRILL_HAVE_CUDA
extern const apsp_ops apsp_gpu_plain, apsp_gpu_fw_a, apsp_gpu_fw_b, apsp_gpu_fw_rec;
#endif

#ifdef KRILL_HAVE_CUDA
/* peak.cu: one launch of the min-plus peak kernel (krill_apsp_peak; apsp/peak.c drives
 * it): every SM full, 256 threads a block, each thread `rounds` rounds of its register
 * chains min(a + b, c) of the weight type; timed with a CUDA event pair on the context's
 * stream. *relaxations = threads x chains x steps (exact), *seconds = the device time. */
krill_status apsp_gpu_peak_launch(krill_ctx *ctx, krill_apsp_weight weight, int64_t rounds,
                                  double *relaxations, double *seconds);
#endif

/* The CPU kernels' instruction set (cpu_blocked.c): the widest this CPU has of AVX-512
 * (F, VL, BW, DQ) and AVX2, capped by $KRILL_APSP_CPU_ISA = avx2 | generic. The peak
 * (peak.c) takes the same, so efficiency compares like with like. Values index tables. */
enum { APSP_ISA_GENERIC = 0, APSP_ISA_AVX2 = 1, APSP_ISA_AVX512 = 2 };
int apsp_cpu_isa(void);

/* ---- out of core (ooc.c) ----------------------------------------------------------------
 * Blocked FW with D in host memory and side x side blocks streamed through the overlap
 * scheduler. A device provides the kernels on packed blocks (row-major, leading dimension
 * side) in its memory, queued on the lane's stream (NULL on the CPU). */
typedef struct apsp_ooc_kernels {
    int granule;                                     /* side must be a multiple of this */
    /* scratch for blocks of `side` (the state the other calls get) */
    krill_status (*begin)(apsp_run *run, int32_t side, void **state);
    /* FW closure of block d in place */
    krill_status (*close)(apsp_run *run, void *state, void *stream, void *d, int32_t side);
    /* c = min(c, a (x) b); c may be the same block as a or b (the panels): the product then
       reads the old c, as the in-core panels do */
    krill_status (*minplus)(apsp_run *run, void *state, void *stream, void *c, const void *a,
                            const void *b, int32_t side);
    /* seconds of one minplus of `side`, measured on the state's scratch */
    krill_status (*time_minplus)(apsp_run *run, void *state, int32_t side, double *seconds);
    /* device bytes begin takes (counted against the memory the solve may use) */
    double (*scratch_bytes)(const apsp_run *run, int32_t side);
    void (*end)(apsp_run *run, void *state);         /* NULL-safe state release */
    /* 1 if begin page-locked D in host memory (the scheduler then copies the blocks
       directly, without staging); NULL: never */
    int (*host_page_locked)(const void *state);
} apsp_ooc_kernels;

extern const apsp_ooc_kernels apsp_cpu_ooc_kernels;  /* cpu_ooc.c */
#ifdef KRILL_HAVE_CUDA
extern const apsp_ooc_kernels apsp_gpu_ooc_kernels;  /* gpu_ooc.cu */
#endif

/* Solve `run` (its graph, weight, n and clamp set; nothing allocated) out of core within
 * `memory` device bytes, D's n x n corner into `dist`; fills inf's times, out_of_core and
 * ooc_bytes_moved. */
krill_status apsp_ooc_run(apsp_run *run, double memory, void *dist, krill_apsp_info *inf);

/* The blocks of the nb rounds over nb x nb tiles (ooc.c's opening comment): block
 * (K nb + I) nb + J updates tile I nb + J in round K; its in, out and after lists go to
 * lists (APSP_OOC_LIST_INTS(nb) ints a block), its time estimate is kernel_seconds; blocks
 * holds nb^3, and nb^3 APSP_OOC_LIST_INTS(nb) must fit an int32_t (ooc.c checks it before
 * its call). Also what the planner's test plans, without a device. */
#define APSP_OOC_LIST_INTS(nb) (3 + 1 + 3 + 2 * (nb))
void apsp_ooc_blocks(int32_t nb, double kernel_seconds, int32_t *lists,
                     krill_overlap_block *blocks);

/* The int32 rule above for one sum (host and device code). */
static inline int32_t apsp_i32_clamp(int32_t s, int32_t clamp_hi)
{
    return s >= clamp_hi ? APSP_I32_INF : (s < -APSP_I32_INF ? -APSP_I32_INF : s);
}

#ifdef __cplusplus
}
#endif
#endif
