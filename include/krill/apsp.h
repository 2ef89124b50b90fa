/* krill/apsp.h - all-pairs shortest paths (doc/apsp.md).
 *
 * Given a directed weighted graph (a krill_csr adjacency, krill/graph.h), compute the n x n
 * distance matrix D, D[i][j] = the length of a shortest path i -> j, and on request the
 * predecessor matrix P, P[i][j] = the vertex before j on such a path. Negative weights are
 * allowed; a negative cycle is an error (KRILL_ERR_NUMERIC) naming a vertex on it.
 *
 * Methods ("auto" picks one and says why):
 *   plain     the triple loop of Floyd-Warshall (CPU: the test oracle; GPU: one kernel per
 *             k, the pre-blocking baseline)
 *   fw-a      iterative blocked FW; the non-pivot tiles as a register-blocked min-plus
 *             matrix product (the APSP paper's method A)
 *   fw-b      iterative blocked FW; the non-pivot tiles by two-level blocking with one
 *             operand from shared memory / the L1 cache (method B)
 *   fw-rec    recursive blocked FW (the paper's Fig. 6): min-plus products on quadrants
 *   dijkstra  Dijkstra from every source with a binary heap (CPU; weights >= 0)
 *
 * Weights: int32 (exact; an unreachable pair holds KRILL_APSP_INT32_INF), float and double
 * (IEEE +infinity for unreachable). int32 results are identical on every method and device;
 * float and double ones agree within the rounding of a path's sum (doc/apsp.md). */
#ifndef KRILL_APSP_H
#define KRILL_APSP_H

#include <stdint.h>
#include "krill/csr.h"
#include "krill/ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum krill_apsp_weight {
    KRILL_APSP_INT32 = 0,
    KRILL_APSP_FLOAT = 1,
    KRILL_APSP_DOUBLE = 2
} krill_apsp_weight;

/* int32 "unreachable": INT32_MAX / 2, so that INF + INF does not wrap. int32 solves need
 * every shortest-path length bounded below this (doc/apsp.md gives the exact rule, checked
 * before the solve: the sum over vertices of the largest |weight| leaving each). */
#define KRILL_APSP_INT32_INF 1073741823
/* P[i][j] where there is no predecessor (j == i, or j unreachable from i): SciPy's value. */
#define KRILL_APSP_NO_PRED (-9999)

/* Progress: fraction in [0, 1] of the work done; a non-zero return is ignored. */
typedef int (*krill_apsp_progress_fn)(double fraction, void *user);

typedef struct krill_apsp_opts {
    const char *method;          /* "auto" (or NULL), "plain", "fw-a", "fw-b", "fw-rec",
                                    "dijkstra" */
    krill_apsp_weight weight;    /* INT32 */
    int paths;                   /* 1: also compute P (else P is never allocated) */
    int tile;                    /* 0: the method's tile; else the blocked methods' t: on
                                    the CPU a multiple of 32 (fw-rec: its base size), on the
                                    GPU 128 only; plain and dijkstra refuse a tile */
    krill_apsp_progress_fn progress;   /* NULL: none */
    void *progress_user;
    double device_memory;        /* bytes the solve may take on the device; 0: what it has
                                    free. When D does not fit, a blocked method runs out of
                                    core (distances only): D stays in host memory and its
                                    blocks stream through the overlap scheduler
                                    (krill/overlap.h, doc/apsp.md) */
} krill_apsp_opts;

#define KRILL_APSP_OPTS_INIT { "auto", KRILL_APSP_INT32, 0, 0, NULL, NULL, 0 }

/* What a solve did and how long each part took (filled as far as it got, also on
 * failure). Times are seconds: device time (CUDA events) on the GPU, the host clock on
 * the CPU. */
typedef struct krill_apsp_info {
    char method[16];             /* the method run */
    char why[192];               /* auto: why this method; else "asked for" */
    int tile;                    /* blocked methods: t; else 0 */
    int32_t n, n_padded;         /* vertices; D's side with padding to the tile */
    int64_t arcs;                /* arcs of the graph */
    double relaxations;          /* min(a + b, c) updates the method performs */
    double bytes_needed;         /* memory D (and P) take on the device that runs */
    double t_setup;              /* building D (and P) from the graph, in device memory */
    double t_upload;             /* host -> device: the graph (GPU only) */
    double t_pivot;              /* blocked methods: the pivot tiles, all rounds */
    double t_panels;             /* the pivot row and column tiles */
    double t_rest;               /* the remaining tiles */
    double t_compute;            /* the whole computation (all kinds, or an unblocked method);
                                    on the GPU fw-a computes the next round's pivot and panels
                                    beside the rest (doc/apsp.md), so there t_pivot + t_panels +
                                    t_rest exceeds t_compute */
    double t_download;           /* device -> host: D (and P) */
    double t_total;              /* the whole call */
    int32_t negative_cycle;      /* a vertex on a negative cycle, or -1 */
    int32_t out_of_core;         /* 0: in core; else the side of the blocks D was streamed in */
    double ooc_bytes_moved;      /* out of core: bytes sent and received */
} krill_apsp_info;

typedef struct krill_apsp krill_apsp;

/* Solve APSP for `graph` on ctx's device. opts == NULL means KRILL_APSP_OPTS_INIT; info
 * may be NULL. The result holds D (and P) in host memory. Errors: KRILL_ERR_ARG (bad
 * options, a method the device lacks, dijkstra with a negative weight, a non-integer
 * weight for int32), KRILL_ERR_UNSUPPORTED (int32 distances could overflow),
 * KRILL_ERR_NUMERIC (a negative cycle: the message names a vertex on it and, with paths,
 * the cycle), KRILL_ERR_ALLOC / KRILL_ERR_DEVICE_ALLOC (the bytes needed and free, checked
 * before allocating). */
krill_status krill_apsp_solve(krill_ctx *ctx, const krill_csr *graph, const krill_apsp_opts *opts,
                              krill_apsp **result, krill_apsp_info *info);
void krill_apsp_destroy(krill_apsp **result);        /* NULL-safe; sets *result = NULL */

int32_t krill_apsp_n(const krill_apsp *result);
krill_apsp_weight krill_apsp_weight_type(const krill_apsp *result);
/* D: n * n elements of the weight type (int32_t, float or double), row-major. */
const void *krill_apsp_dist(const krill_apsp *result);
/* P: n * n int32_t, row-major, or NULL when paths were not asked for. */
const int32_t *krill_apsp_pred(const krill_apsp *result);
/* D[i][j] as a double (+infinity when unreachable); NaN for i or j out of range. */
double krill_apsp_dist_at(const krill_apsp *result, int32_t i, int32_t j);

/* The vertices of a shortest path i -> j, i first and j last, into path[0..*len-1] (room
 * for n). *len = 0 when j is unreachable from i; i == j gives the path (i). Needs P
 * (KRILL_ERR_ARG without it). */
krill_status krill_apsp_path(const krill_apsp *result, int32_t i, int32_t j, int32_t *path,
                             int32_t *len);

/* Figures of D: unreachable pairs (i != j), the largest finite distance (over i != j; 0
 * when none), and a checksum: FNV-1a 64 of D's bytes. */
void krill_apsp_summary(const krill_apsp *result, int64_t *unreachable, double *max_finite,
                        uint64_t *checksum);

/* The device's measured min-plus peak: relaxations min(a + b, c) per second of the weight
 * type, from register-resident chains that need no memory (on the GPU: every SM, int32
 * through the DPX instruction where the device has it; on the CPU: every thread of ctx,
 * vectorized). Takes about `seconds` (0: a default of ~0.1 s). */
krill_status krill_apsp_peak(krill_ctx *ctx, krill_apsp_weight weight, double seconds,
                             double *relax_per_second);

const char *krill_apsp_weight_name(krill_apsp_weight weight);   /* "int32", "float", "double" */
/* The inverse: KRILL_ERR_ARG (naming the text) for anything but those three names. */
krill_status krill_apsp_weight_parse(const char *name, krill_apsp_weight *weight);

/* NULL-terminated method names, in the order of the list above ("auto" not included). */
const char *const *krill_apsp_methods(void);
/* 1 if the method exists on the device (CPU or CUDA). */
int krill_apsp_method_on(const char *method, krill_device device);

#ifdef __cplusplus
}
#endif
#endif
