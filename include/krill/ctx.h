/* krill/ctx.h - execution context: where work runs.
 *
 * A context is either the CPU (OpenMP, a thread count) or one CUDA device (with its own
 * stream, cuBLAS handle and a workspace allocated once). Every matrix, vector and
 * preconditioner is created on a context and lives in its memory space: host memory for
 * the CPU, device memory for CUDA. */
#ifndef KRILL_CTX_H
#define KRILL_CTX_H

#include <stddef.h>
#include <stdint.h>
#include "krill/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum krill_device {
    KRILL_DEVICE_AUTO = 0,   /* the GPU when one is present, else the CPU */
    KRILL_DEVICE_CPU = 1,
    KRILL_DEVICE_CUDA = 2
} krill_device;

/* A communicator: an opaque handle made from an MPI communicator by krill_comm_create
 * (krill/mpi.h, in a build with MPI; doc/mpi.md). krill.h never includes mpi.h. */
typedef struct krill_comm krill_comm;

typedef struct krill_ctx_opts {
    krill_device device;     /* AUTO, CPU or CUDA */
    int threads;             /* CPU: OpenMP threads, 1..KRILL_MAX_THREADS; 0 = OpenMP's default
                                (the host-side loops of a CUDA context use them too) */
    int device_id;           /* CUDA: device ordinal; on a communicator also
                                KRILL_DEVICE_ID_LOCAL_RANK */
    const krill_comm *comm;  /* NULL: this process alone. Else the ranks of the communicator
                                solve together: every reduction of the context (dot products,
                                norms, the solvers' fused sums) is summed over them, and
                                krill_ctx_create is collective. The context keeps its own
                                duplicate (MPI_Comm_dup), so krill's messages never mix with
                                the caller's. CPU or CUDA (one GPU per rank; every rank the
                                same kind, else KRILL_ERR_ARG on all); AUTO means the CPU
                                there (a GPU must be asked for) */
} krill_ctx_opts;

/* device_id on a communicator: the rank's number among the ranks of its node
 * (MPI_COMM_TYPE_SHARED) modulo the node's GPU count, so that ranks started one per GPU
 * take one GPU each (`mpirun -n 4` on a four-GPU node). */
#define KRILL_DEVICE_ID_LOCAL_RANK (-1)

/* The most OpenMP threads a context may have (doc/decisions.md, "Core"): more than any
 * shared-memory machine has, and far below the count at which starting the team overflows
 * the calling thread's stack (libgomp keeps about 120 bytes a thread there). */
#define KRILL_MAX_THREADS 4096

/* Defaults: AUTO device, OpenMP's thread count, CUDA device 0, no communicator. */
#define KRILL_CTX_OPTS_INIT { KRILL_DEVICE_AUTO, 0, 0, NULL }

typedef struct krill_ctx krill_ctx;

/* Create a context; opts == NULL means KRILL_CTX_OPTS_INIT. Asking for CUDA where there
 * is no usable GPU (or a build without CUDA) fails with KRILL_ERR_NO_DEVICE. A thread count
 * (asked for, or OpenMP's default) above KRILL_MAX_THREADS is KRILL_ERR_ARG. The threads
 * are started once, as a check, before the context is made: a count the system cannot
 * start (a limit on processes or memory) is KRILL_ERR_ALLOC with the count it could,
 * where OpenMP would end the process. */
krill_status krill_ctx_create(const krill_ctx_opts *opts, krill_ctx **ctx);
void krill_ctx_destroy(krill_ctx **ctx);            /* NULL-safe; sets *ctx = NULL */

krill_device krill_ctx_device(const krill_ctx *ctx); /* CPU or CUDA, never AUTO */
int krill_ctx_threads(const krill_ctx *ctx);         /* OpenMP threads used (CPU) */
/* This process's rank in the context's communicator and the number of ranks (0 and 1 for a
 * context without one). */
int krill_ctx_rank(const krill_ctx *ctx);
int krill_ctx_size(const krill_ctx *ctx);
/* One line naming what was chosen, e.g. "cpu: 16 OpenMP threads" or
 * "cuda:0 NVIDIA H100 80GB HBM3 (sm_90, 79.1 GiB)". */
const char *krill_ctx_describe(const krill_ctx *ctx);
/* Wait until all work queued on the context is done (no-op on the CPU). */
krill_status krill_ctx_sync(krill_ctx *ctx);

/* What krill allocated in the context's memory since the context was created: the number of
 * allocations and the bytes asked for, both cumulative (frees are not subtracted; failed
 * allocations are not counted). On CUDA every device allocation of the context (its own
 * workspace included); on the CPU the context-memory allocations (vectors, solver
 * workspaces), not the host copies a format or preconditioner keeps. Two readings around a
 * call say what it allocated: none for krill_vec_wrap, none for the arrays of
 * krill_mat_create_device_csr. */
typedef struct krill_ctx_alloc_stats {
    int64_t allocations;
    int64_t bytes;
} krill_ctx_alloc_stats;
void krill_ctx_alloc_stats_get(const krill_ctx *ctx, krill_ctx_alloc_stats *stats);

/* krill_solve keeps its workspace (the Krylov vectors, in the context's memory) on the
 * context when it returns, and the next solve takes it back instead of allocating: a solve
 * repeated on one context (time steps, Newton steps) allocates nothing on the device after
 * the first. At most the last solve's workspace is kept (a solve frees what the one before
 * kept and it did not take). This frees it now, e.g. before other work needs the GPU's
 * memory; krill_ctx_destroy does too. Not while a solve runs on the context. NULL-safe. */
void krill_ctx_release_cache(krill_ctx *ctx);

/* Reproducible reductions (doc/reproducible.md). In a reproducible mode every dot product
 * and norm of the context (krill_vec_dot, krill_vec_nrm2 and every solver's reductions) is
 * computed with the Ozaki scheme: the values are split into slices whose products and sums
 * are exact, so the result does not depend on the order of the additions. On a context with
 * a communicator (CPU or GPU ranks) the same bits as one process holding all the rows
 * (krill/mpi.h, doc/mpi.md). */
typedef enum krill_repro_mode {
    KRILL_REPRO_OFF = 0,        /* plain double reductions (fastest; bits depend on threads/device) */
    KRILL_REPRO_OZAKI = 1,      /* Ozaki scheme: identical bits on any thread count, device, format */
    KRILL_REPRO_OZAKI_FAST = 2  /* Ozaki with a fixed slice count and the paper's fast mode
                                   (slice products with p + q > max(s_x, s_y) + 1 skipped) */
} krill_repro_mode;
/* slices: 0 = exact (split until nothing is left: every reduction is the correctly rounded
 * value of the exact result; OZAKI only), S >= 1 = at most S slices per operand (less
 * accurate, still identical everywhere). Bad combinations are KRILL_ERR_ARG naming the value. */
krill_status krill_ctx_set_repro(krill_ctx *ctx, krill_repro_mode mode, int slices);
krill_repro_mode krill_ctx_repro(const krill_ctx *ctx, int *slices);  /* slices may be NULL */

/* Number of usable CUDA devices (0 in a build without CUDA or without a driver). */
int krill_cuda_device_count(void);

/* Build features, for `krill info`. */
int krill_have_cuda(void);
int krill_have_zlib(void);
int krill_have_mpi(void);     /* 1 in a build with MPI (krill/mpi.h's functions exist) */
const char *krill_version(void);

#ifdef __cplusplus
}
#endif
#endif
