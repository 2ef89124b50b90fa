/* core/core_impl.h - what every krill module may use from core/: errors, allocation
 * (host and context memory, with the fault hook), the context's internals, memory moves,
 * BLAS-1 on raw pointers in context memory, and timing. */
#ifndef KRILL_CORE_IMPL_H
#define KRILL_CORE_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include "krill/csr.h"
#include "krill/ctx.h"
#include "krill/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors ---------------------------------------------------------------------------
 * krill_error sets this thread's message (printf-style) and returns `status`, so a
 * failure site reads:  st = krill_error(KRILL_ERR_ARG, "n = %lld < 0", (long long)n);
 * Functions keep one exit path: a local `krill_status st = KRILL_OK;` and a `cleanup:`
 * label; KRILL_TRY only jumps there. */
krill_status krill_error(krill_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#define KRILL_TRY(expr)                                                                  \
    do {                                                                                 \
        st = (expr);                                                                     \
        if (st != KRILL_OK) goto cleanup;                                                \
    } while (0)

/* Fail with KRILL_ERR_ARG (message formatted from the rest) unless cond holds. */
#define KRILL_REQUIRE(cond, ...)                                                         \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            st = krill_error(KRILL_ERR_ARG, __VA_ARGS__);                                \
            goto cleanup;                                                                \
        }                                                                                \
    } while (0)

/* ---- host allocation -----------------------------------------------------------------
 * All of krill's memory, host and device, is taken through these, so that tests can make
 * the k-th allocation fail. krill_alloc sets an error naming `what` and the bytes. */
krill_status krill_alloc(void **p, size_t bytes, const char *what);
krill_status krill_calloc(void **p, size_t bytes, const char *what);   /* zeroed */
/* count * size bytes, failing cleanly (KRILL_ERR_ALLOC) when the product overflows. */
krill_status krill_alloc_n(void **p, size_t count, size_t size, int zero, const char *what);
void krill_free(void *p);                                              /* NULL-safe */
/* Ask the kernel to back a large buffer with transparent huge pages (fewer page faults on
 * first touch: 512 instead of 262144 for 1 GiB); a hint, a no-op where unsupported. */
void krill_advise_huge(void *p, size_t bytes);

/* ---- host memory available ------------------------------------------------------------
 * Readers size their output from a file's header, which may claim far more than the file
 * holds; before allocating for it they check the bytes against what the host can give
 * without swapping or invoking the out-of-memory killer. */
/* MemAvailable of /proc/meminfo in bytes, else the free pages sysconf reports, else
 * SIZE_MAX (unknown); never more than the limit set with krill_host_mem_limit. */
size_t krill_host_mem_available(void);
/* Pretend at most `bytes` are available (0 = no limit): tests and fuzzers use it so that a
 * header claiming gigabytes fails at once, whatever the machine has. */
void krill_host_mem_limit(size_t bytes);
/* KRILL_OK when `bytes` fit in krill_host_mem_available(); else KRILL_ERR_ALLOC with
 * "WHAT needs N bytes of host memory, M are available". Below a megabyte only the limit
 * of krill_host_mem_limit is compared (no /proc read). */
krill_status krill_host_mem_check(size_t bytes, const char *what);

/* Allocate `count` elements for pointer lvalue `ptr`; on failure jump to cleanup. */
#define KRILL_ALLOC(ptr, count)                                                          \
    KRILL_TRY(krill_alloc_n((void **)&(ptr), (size_t)(count), sizeof *(ptr), 0, #ptr))
#define KRILL_CALLOC(ptr, count)                                                         \
    KRILL_TRY(krill_alloc_n((void **)&(ptr), (size_t)(count), sizeof *(ptr), 1, #ptr))

/* Fault hook: the k-th allocation from now (1 = the next one), host or device, fails;
 * k <= 0 turns it off. krill_alloc_calls counts allocations since the process started. */
void krill_fault_alloc_after(long k);
long krill_alloc_calls(void);
int krill_fault_check(void);          /* 1 if this allocation must fail (used by allocators) */
int krill_fault_injected(void);       /* 1 if the latest krill_fault_check failed it */

/* ---- context --------------------------------------------------------------------------
 * CUDA objects are kept as void * so that C files need no CUDA headers. */
#define KRILL_CUDA_RESIDENT_SLOTS 256   /* more than the kernels one context launches */
typedef struct krill_cuda {
    void *stream;            /* cudaStream_t */
    void *cublas;            /* cublasHandle_t */
    void *cusparse;          /* cusparseHandle_t, created on first use */
    double *work;            /* device workspace, KRILL_CUDA_WORK_DOUBLES doubles: the first
                                KRILL_CUDA_PARTIALS are kernels' block partial sums (any
                                kernel may overwrite them), the KRILL_CUDA_SLOTS after them
                                are result slots for callers (never touched by kernels) */
    void *stage;             /* the staged uploads' slots, copy stream and events, made on
                                first use (core/cuda_stage.cu) */
    double *pinned;          /* pinned host buffer, KRILL_CUDA_PINNED_DOUBLES doubles; its last
                                KRILL_ASYNC_READ_DOUBLES (solver_impl.h) are the solvers'
                                asynchronous reads, nothing else may use them; its first
                                KRILL_CUDA_BOUNCE_BYTES carry small synchronous reads */
    int sm_count;
    int max_threads_per_sm;
    size_t mem_total;
    int cc_major, cc_minor;
    struct {                 /* blocks of KRILL_CUDA_THREADS each kernel keeps resident on a
                                multiprocessor, by kernel address (krill_cuda_resident_blocks) */
        const void *kernel;
        int blocks;
    } resident[KRILL_CUDA_RESIDENT_SLOTS];
} krill_cuda;

#define KRILL_CUDA_WORK_DOUBLES 4096
#define KRILL_CUDA_SLOTS 64
#define KRILL_CUDA_PARTIALS (KRILL_CUDA_WORK_DOUBLES - KRILL_CUDA_SLOTS)
/* Result slot k (0 <= k < KRILL_CUDA_SLOTS) of a CUDA context's workspace: a call's
 * device-side scalars between its kernels and its one download; no value lives in them
 * across calls (krill_vec_dot, krill_csr_cuda_check and the tests use them so). */
#define KRILL_CUDA_SLOT(ctx, k) ((ctx)->cuda->work + KRILL_CUDA_PARTIALS + (k))
#define KRILL_CUDA_PINNED_DOUBLES 4096
/* Device-to-host copies of at most this many bytes go through the start of `pinned`
 * (krill_cuda_memcpy; synchronous, so they never meet another user of it). */
#define KRILL_CUDA_BOUNCE_BYTES 8192

/* ---- communicator ----------------------------------------------------------------------
 * What a context on several processes needs from MPI, as a table that dist/ fills
 * (dist/comm.c): core calls down through it and never includes mpi.h, so a build without
 * MPI is today's build (doc/decisions.md, "Distributed reductions through the context").
 * Every entry is collective over the communicator. */
typedef enum krill_reduce_op { KRILL_REDUCE_SUM = 0, KRILL_REDUCE_MAX = 1 } krill_reduce_op;

typedef struct krill_comm_ops {
    /* a new handle on a duplicate of c's communicator (MPI_Comm_dup) */
    krill_status (*dup)(const krill_comm *c, krill_comm **copy);
    void (*destroy)(krill_comm *c);      /* frees what dup made */
    /* buf[0..count) (host) = the sum or maximum of every rank's buf, on every rank */
    krill_status (*allreduce)(const krill_comm *c, double *buf, int count, krill_reduce_op op);
    /* the same in int64: exact, so the result is the same whatever order MPI adds in */
    krill_status (*allreduce_i64)(const krill_comm *c, int64_t *buf, int count,
                                  krill_reduce_op op);
    /* The nonblocking form of allreduce (MPI_Iallreduce in place): start returns at once,
     * buf must not be touched until wait returns, and then holds the result. One is in
     * flight per communicator (the request lives in the handle): a start while one is
     * completes that one first (nested solves), and its wait then returns at once. */
    krill_status (*iallreduce_start)(krill_comm *c, double *buf, int count, krill_reduce_op op);
    krill_status (*iallreduce_wait)(krill_comm *c);
    /* all[r * bytes ..] = rank r's `bytes` bytes at mine, in rank order, on every rank */
    krill_status (*allgather)(const krill_comm *c, const void *mine, size_t bytes, void *all);
    /* Every rank passes its status; every rank gets KRILL_OK when all were OK, else the
     * status of the lowest failing rank with its message ("rank R: ...") */
    krill_status (*agree)(const krill_comm *c, krill_status st);
    /* this rank's number among the ranks of its node (MPI_COMM_TYPE_SHARED), 0-based */
    krill_status (*local_rank)(const krill_comm *c, int *local);
} krill_comm_ops;

struct krill_comm {
    const krill_comm_ops *ops;
    int rank, size;
    void *impl;              /* dist/: the MPI_Comm */
};

/* ---- reproducible reductions -----------------------------------------------------------
 * What core needs from ozaki/ for a context in a reproducible mode, as a table that ozaki/
 * sets when it makes its workspace (krill_ozaki_ctx_init; krill_ctx_set_repro lives in
 * ozaki/): core calls down through it and never includes ozaki/. */
typedef struct krill_repro_ops {
    void (*fini)(krill_ctx *ctx);   /* frees ozaki/'s workspace (ctx->ozaki) */
    krill_status (*dot)(krill_ctx *ctx, int64_t n, const double *x, const double *y,
                        double *result);
    krill_status (*nrm2)(krill_ctx *ctx, int64_t n, const double *x, double *result);
} krill_repro_ops;

typedef struct krill_nccl krill_nccl;

struct krill_ctx {
    krill_device device;     /* CPU or CUDA */
    int threads;             /* OpenMP threads for CPU work (also the host side of CUDA) */
    int device_id;
    char describe[192];
    krill_cuda *cuda;        /* NULL on the CPU */
    krill_repro_mode repro;  /* reproducible reductions (ozaki/): OFF, OZAKI or OZAKI_FAST */
    int repro_slices;        /* 0 = exact, S >= 1 = at most S slices per operand */
    void *ozaki;             /* ozaki/'s workspace (ozaki_impl.h); NULL until first needed */
    const krill_repro_ops *repro_ops;   /* set by ozaki/ with its workspace; NULL before */
    krill_comm *comm;        /* NULL, or the context's own duplicate of the caller's */
    krill_nccl *nccl;        /* a GPU rank's device-side reductions (core/nccl.cu), or NULL */
    double comm_seconds;     /* wall time inside the communicator's calls so far (the
                                solvers report the difference: krill_solve_times.comm) */
    int64_t comm_calls;      /* collectives started so far (the ctx.c wrappers; the tests
                                count a call's rounds with it) */
    double halo_seconds;     /* dist/'s halo exchanges: seconds in flight, and of those the */
    double halo_hidden_seconds;  /* seconds the local block's product ran (krill_solve_times) */
    krill_ctx_alloc_stats allocated;   /* krill_mem_alloc's successful calls and bytes */
    struct krill_ws_cache *ws_cache;   /* solver workspace kept between solves (mem.c) */
};

/* The reductions of a context on a communicator: buf (host, count doubles) summed (or
 * maximized) over the ranks; KRILL_OK at once without a communicator. Every reduction point
 * of krill (krill_blas_dot / nrm2, the solvers' fused sums, the fused SpMV-dot) calls it
 * after its local sum and before anything that reads the result. */
krill_status krill_ctx_allreduce(krill_ctx *ctx, double *buf, int count, krill_reduce_op op);
/* The nonblocking allreduce: start, work that does not read buf, then wait; buf (host) holds
 * the result after wait. One in flight per context (a nested start completes the one in
 * flight: comm_ops above). Without a communicator both return
 * KRILL_OK at once (buf is already the result). The time inside both calls counts as
 * communication; what the work in between hid does not. */
krill_status krill_ctx_iallreduce_start(krill_ctx *ctx, double *buf, int count,
                                        krill_reduce_op op);
krill_status krill_ctx_iallreduce_wait(krill_ctx *ctx);
/* The same in int64, and the allgather of the table (without a communicator: all = mine). */
krill_status krill_ctx_allreduce_i64(krill_ctx *ctx, int64_t *buf, int count,
                                     krill_reduce_op op);
krill_status krill_ctx_allgather(krill_ctx *ctx, const void *mine, size_t bytes, void *all);
/* Time spent in communication outside these calls (dist/'s halo exchange) is added here. */
void krill_ctx_add_comm_time(krill_ctx *ctx, double seconds);
/* A halo exchange: `flight` seconds from its first message posted to its last ghost
 * received, `hidden` of them while the local product ran. */
void krill_ctx_add_halo_time(krill_ctx *ctx, double flight, double hidden);
/* The reductions of a CUDA context on a communicator, whose results live in device memory
 * (every GPU reduction writes there, so the solvers read them without a host round trip):
 * the local sums at dev (count doubles; a second run dev2/count2 may be given, else NULL/0)
 * go to pinned host memory (the stream is waited for), are summed over the ranks and are
 * written back on the context's stream. `local` is the status of the caller's local work
 * (its kernels): a failure there or in the copy down travels as a flag inside the sum, so
 * every rank returns it (through krill_ctx_agree, a second collective made only then) and
 * none waits in MPI for a rank that left: one collective when all went well. Without a
 * communicator, on one rank or on the CPU it returns `local` at once. Traffic: 8 (count +
 * count2) bytes each way per rank, and a wait for the stream: the GPU idles for the round
 * trip (the Open MPI wheel here is not CUDA-aware). With NCCL (below) no wait and no copy:
 * the group is queued on the stream and `local` is deferred to the next read. */
krill_status krill_ctx_allreduce_device(krill_ctx *ctx, krill_status local, double *dev,
                                        int count, double *dev2, int count2);
/* GPU-side reductions (core/nccl.cu; doc/mpi.md): a CUDA context on a communicator of one
 * GPU per rank, in a build with NCCL, reduces on its stream (krill_ctx_allreduce_device and
 * the norm queue an ncclAllReduce group and return). A rank's local failure before such a
 * reduction is not returned by it but travels in a flag the host looks at where it reads
 * results: krill_mem_download calls krill_ctx_settle, and the solvers' asynchronous reads
 * call krill_nccl_mark (slot 0 or 1) when they queue their copy and krill_nccl_check after
 * waiting for it. A raised flag (it carries the lowest failing rank and its status) fails
 * the read on each rank by itself, with no collective, so a read made by some ranks only
 * is safe. krill_ctx_settle is KRILL_OK at once on any other context. */
krill_status krill_ctx_settle(krill_ctx *ctx);
#ifdef KRILL_HAVE_NCCL
krill_status krill_nccl_create(krill_ctx *ctx);   /* collective; ctx->nccl or NULL */
void krill_nccl_destroy(krill_ctx *ctx);
/* the ncclComm_t the halos may use, or NULL; whether they do: */
void *krill_nccl_halo_comm(const krill_ctx *ctx);
enum { KRILL_NCCL_HALO_NEVER, KRILL_NCCL_HALO_ALWAYS, KRILL_NCCL_HALO_TIMED };
int krill_nccl_halo_mode(const krill_ctx *ctx);   /* TIMED: each matrix the faster (dist/) */
krill_status krill_nccl_allreduce(krill_ctx *ctx, krill_status local, double *dev, int count,
                                  double *dev2, int count2);
krill_status krill_nccl_nrm2(krill_ctx *ctx, krill_status local, double *dev);
krill_status krill_nccl_settle(krill_ctx *ctx);
krill_status krill_nccl_mark(krill_ctx *ctx, int slot);
krill_status krill_nccl_check(krill_ctx *ctx, int slot);
#endif
/* The same for a 2-norm: *dev holds this rank's ||x_local||; it becomes ||x|| over the
 * ranks, without overflow (scaled by the largest local norm when the sum of squares leaves
 * the range, as krill_blas_nrm2 does on the CPU). */
krill_status krill_ctx_nrm2_allreduce_device(krill_ctx *ctx, krill_status local, double *dev);
/* Collective steps that can fail on one rank (allocation, a bad local argument) end with
 * this: st where every rank agrees, so no rank goes on into a collective the others left.
 * Without a communicator it returns st. */
krill_status krill_ctx_agree(krill_ctx *ctx, krill_status st);

static inline int krill_on_gpu(const krill_ctx *ctx) { return ctx->device == KRILL_DEVICE_CUDA; }

/* ---- context memory ------------------------------------------------------------------
 * Memory in the context's space: host (CPU) or device (CUDA). On CUDA, an out-of-memory
 * failure reports the bytes asked for and the bytes free. */
krill_status krill_mem_alloc(krill_ctx *ctx, void **p, size_t bytes, const char *what);
void krill_mem_free(krill_ctx *ctx, void *p);                           /* NULL-safe */
/* A caller's pointer that is to be used as context memory (krill_vec_wrap,
 * krill_mat_create_device_csr): on CUDA it must be device (or managed) memory that the
 * context's GPU can address, else KRILL_ERR_ARG naming `what` and what the pointer is (host
 * memory, another GPU's). Always KRILL_OK on the CPU and for NULL. */
krill_status krill_mem_check_pointer(krill_ctx *ctx, const void *p, const char *what);
/* Host to context memory. On a GPU, a copy of all the staging slots' bytes or more (32 MiB
 * by default) goes through the context's page-locked staging (krill_cuda_upload_staged,
 * core/cuda_stage.cu); either way host_src may be reused when the call returns, and the
 * context's later work sees dst. */
krill_status krill_mem_upload(krill_ctx *ctx, void *dst, const void *host_src, size_t bytes);
/* Host passes of a build (the check, a copy, auto's profile) below this many entries run on
 * one thread: a parallel region's fork and join (microseconds) would cost more than the pass. */
#define KRILL_BUILD_PARALLEL_MIN (1 << 15)
/* krill_csr_check with `threads` OpenMP threads (0: OpenMP's default); the same message for
 * every count (the first unsound row in row order). */
krill_status krill_csr_check_threads(const krill_csr *a, const char *what, int threads);
/* memcpy by the context's threads (one below 1 MiB): the staging slots' pack */
void krill_host_copy(const krill_ctx *ctx, void *dst, const void *src, size_t bytes);
krill_status krill_mem_download(krill_ctx *ctx, void *host_dst, const void *src, size_t bytes);
krill_status krill_mem_copy(krill_ctx *ctx, void *dst, const void *src, size_t bytes);
krill_status krill_mem_zero(krill_ctx *ctx, void *p, size_t bytes);

/* An allocation of `count` elements of *ptr by fn (krill_mem_alloc, krill_ws_alloc), the byte
 * count checked for wrap-around, named after the pointer; on failure to cleanup. */
#define KRILL_CTX_ALLOC_WITH(fn, ctx, ptr, count)                                        \
    do {                                                                                 \
        if ((size_t)(count) > SIZE_MAX / sizeof *(ptr)) {  /* the byte count would wrap */ \
            st = krill_error(KRILL_ERR_ALLOC, "allocation of %zu x %zu bytes for %s "     \
                             "overflows", (size_t)(count), sizeof *(ptr), #ptr);         \
            goto cleanup;                                                                \
        }                                                                                \
        KRILL_TRY(fn((ctx), (void **)&(ptr), (size_t)(count) * sizeof *(ptr), #ptr));     \
    } while (0)
#define KRILL_MEM_ALLOC(ctx, ptr, count) KRILL_CTX_ALLOC_WITH(krill_mem_alloc, ctx, ptr, count)

/* ---- solver workspace, kept between solves ---------------------------------------------
 * The solvers take their workspace (context memory) with krill_ws_alloc and give it back with
 * krill_ws_free. A block given back is kept on the context, and a later krill_ws_alloc of at
 * most its size and more than half of it takes it instead of allocating: a solve repeated
 * on the same context (time steps, Newton steps) pays no cudaMalloc, no cudaFree (which
 * waits for the device) and no fresh pages. The same stream orders every use of a block, so
 * it may be taken while the device still works on its previous use. krill_solve marks its
 * start (krill_ws_epoch) and at its end frees the kept blocks that no allocation since the
 * mark took (krill_ws_trim): the context keeps at most the last solve's workspace (a nested
 * solve's too). krill_ctx_release_cache frees everything kept; krill_ctx_destroy does.
 * A taken block counts as an allocation for the fault hook (krill_fault_check), not for
 * krill_ctx_alloc_stats (it allocated nothing). Thread-safe (a spin lock). */
krill_status krill_ws_alloc(krill_ctx *ctx, void **p, size_t bytes, const char *what);
void krill_ws_free(krill_ctx *ctx, void *p);                              /* NULL-safe */
unsigned long krill_ws_epoch(krill_ctx *ctx);
void krill_ws_trim(krill_ctx *ctx, unsigned long epoch);
krill_status krill_ws_cache_create(krill_ctx *ctx);                       /* ctx.c */
void krill_ws_cache_destroy(krill_ctx *ctx);                              /* frees the kept */

#define KRILL_WS_ALLOC(ctx, ptr, count) KRILL_CTX_ALLOC_WITH(krill_ws_alloc, ctx, ptr, count)

/* ---- BLAS-1 on raw pointers in context memory ----------------------------------------
 * Asynchronous on CUDA (queued on the context's stream). Reductions write their result to
 * `result`, a pointer in context memory (device memory on CUDA), so solvers can chain them
 * without a host round trip; krill_scalars_read waits and copies them to the host.
 * CPU reductions use a static schedule, so a given thread count always gives the same bits;
 * the CUDA reductions use a fixed grid and a fixed tree, so they too are run-to-run exact. */
krill_status krill_blas_fill(krill_ctx *ctx, int64_t n, double value, double *x);
krill_status krill_blas_copy(krill_ctx *ctx, int64_t n, const double *x, double *y);
krill_status krill_blas_scal(krill_ctx *ctx, int64_t n, double alpha, double *x);
krill_status krill_blas_axpy(krill_ctx *ctx, int64_t n, double alpha, const double *x, double *y);
krill_status krill_blas_axpby(krill_ctx *ctx, int64_t n, double alpha, const double *x,
                              double beta, double *y);
krill_status krill_blas_dot(krill_ctx *ctx, int64_t n, const double *x, const double *y,
                            double *result);
krill_status krill_blas_nrm2(krill_ctx *ctx, int64_t n, const double *x, double *result);
/* z = x .* y (elementwise; Jacobi's apply with y = 1/diag) */
krill_status krill_blas_xmy(krill_ctx *ctx, int64_t n, const double *x, const double *y, double *z);

/* Copy `count` doubles from context memory to the host, waiting for queued work. */
krill_status krill_scalars_read(krill_ctx *ctx, const double *src, double *host, int count);
/* Copy `count` host doubles into context memory (queued on CUDA). */
krill_status krill_scalars_write(krill_ctx *ctx, double *dst, const double *host, int count);

/* ---- sorting ----------------------------------------------------------------------------
 * Stable merge sort of n (col, val) pairs by col (insertion sort below 16), so duplicates
 * keep their input order and their sum has the same bits every time. tc/tv: scratch of n. */
void krill_sort_pairs(int32_t *c, double *v, int32_t *tc, double *tv, int64_t n);

/* ---- time ---------------------------------------------------------------------------- */
double krill_wtime(void);             /* seconds, monotonic */

#ifdef __cplusplus
}
#endif
#endif
