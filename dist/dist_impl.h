/* dist/dist_impl.h - what dist/'s files share: the MPI communicator behind a krill_comm, the
 * halo plan, and the distributed matrix (PETSc's MPIAIJ layout).
 *
 * Arrows point down: dist/ calls core/ (the context, allocation, krill_ctx_agree) and
 * formats/ (the blocks are ordinary krill_mats; the distributed matrix is a krill_mat whose
 * format table is dist/'s), never the other way. core/ reaches MPI only through the
 * krill_comm_ops table that comm.c fills (doc/decisions.md). */
#ifndef KRILL_DIST_IMPL_H
#define KRILL_DIST_IMPL_H

#include <mpi.h>
#include <stdint.h>

#include "core/core_impl.h"
#include "dist/halo_gpu.h"
#include "formats/formats_impl.h"
#include "krill/mpi.h"

/* The MPI communicator of a context (its duplicate, made by krill_ctx_create). */
MPI_Comm krill_dist_comm(const krill_ctx *ctx);

/* ---- halo plan (halo.c) -----------------------------------------------------------------
 * Rank p needs x_g for every global column g of its rows outside its own range: the ghosts,
 * sorted, are the columns of its off-rank block (colmap). Ghosts are received into recv_buf
 * in colmap order, one message per owning rank (contiguous, since ownership is by row
 * ranges); this rank sends x[send_idx[k]] for the ranks that need its entries. Per SpMV a
 * rank receives n_halo doubles in n_recv messages and sends send_off[n_send] doubles in
 * n_send messages; nothing else moves. */
typedef struct krill_halo {
    int64_t n_halo;          /* ghosts = columns of the off-rank block */
    int32_t *colmap;         /* n_halo global columns, ascending */
    int n_recv, n_send;      /* neighbours that send to us / that we send to */
    int *recv_rank;          /* n_recv ranks, ascending */
    int64_t *recv_off;       /* n_recv + 1 offsets into recv_buf */
    int *send_rank;          /* n_send */
    int64_t *send_off;       /* n_send + 1 offsets into send_idx / send_buf */
    int32_t *send_idx;       /* local rows whose x entries go out */
    double *recv_buf;        /* n_halo doubles: the ghost values of x */
    double *send_buf;        /* send_off[n_send] doubles: the packed outgoing values */
    MPI_Request *req;        /* n_recv + n_send */
    krill_halo_gpu *gpu;     /* a CUDA context: the device side (halo_gpu.h); recv_buf and
                                send_buf are then page-locked, made by it */
} krill_halo;

/* Build the plan for this rank's rows (global columns) given every rank's row range
 * (offsets[size + 1]); collective. On failure (any rank) every rank fails. */
krill_status krill_halo_build(krill_ctx *ctx, const krill_csr *rows, const int64_t *offsets,
                              krill_halo *h);
void krill_halo_free(krill_halo *h);
/* Post the receives, pack x's outgoing entries (host) and send them (nonblocking). */
krill_status krill_halo_start(const krill_halo *h, MPI_Comm comm, const double *x);
/* The two halves of start around a packing done elsewhere (the GPU's, into send_buf). */
void krill_halo_post_recvs(const krill_halo *h, MPI_Comm comm);
void krill_halo_post_sends(const krill_halo *h, MPI_Comm comm);
/* 1 when every message of the exchange has completed (MPI_Testall), else 0 (nothing done) */
int krill_halo_test(const krill_halo *h);
/* Wait for every message: recv_buf then holds the ghosts. */
krill_status krill_halo_finish(const krill_halo *h);

/* ---- the distributed matrix (mat.c) ----------------------------------------------------- */
/* Some of a GPU rank's whole rows as CSR arrays in device memory (repro.c): offsets int64
 * when wide, else int32; row i's sum goes to y[out_rows[i]]. Empty: n_rows = 0, NULLs. */
typedef struct krill_dist_rows_dev {
    int64_t n_rows, nnz, max_row_nnz;
    int wide;
    void *row_ptr;
    int32_t *col;
    double *val;
    int32_t *out_rows;
} krill_dist_rows_dev;

typedef struct krill_dist_mat {
    krill_ctx *ctx;
    int rank, size;
    int64_t n_global;
    int64_t *offsets;        /* size + 1: rank r owns global rows [offsets[r], offsets[r+1]) */
    int64_t row_start, n_local;
    krill_mat *diag;         /* n_local x n_local, columns - row_start; NULL when n_local = 0 */
    krill_mat *off;          /* n_local x n_halo, columns compressed; NULL when n_halo = 0 */
    int64_t nnz_diag, nnz_off;
    uint8_t *is_off;         /* per local entry (the CSR order given): 1 = off-rank block */
    krill_halo halo;
    /* GPU ranks: the exchange goes through NCCL (1) or the host (0), the same on every rank:
     * KRILL_NCCL's choice, or by default the faster of the two in SpMVs timed at the build
     * (halo_ms: each path's, the slowest rank's, 0 when not timed). mat.c. */
    int halo_nccl;
    double halo_ms[2];
    /* The reproducible SpMV's rows: both blocks' entries of each local row in one host CSR,
     * columns [0, n_local) own and n_local + k ghost k. Made from the blocks at the first
     * reproducible SpMV (a cache: plain solves never pay its memory); NULL before. */
    krill_csr *whole_rows;
    /* The same on a GPU rank, in device memory: the interior rows (no ghost column: they
     * multiply x itself, while the exchange is in flight) and the boundary rows, which
     * multiply the vector [x; ghosts] (n_local + n_halo doubles); whole_rows is then NULL. */
    krill_dist_rows_dev whole_in, whole_bd;
    double *whole_x;
    /* krill_dist_mat_scatter_metis: the rows are the user's permuted, P A P^T, and global
     * vectors are permuted on rank 0 on their way out and back (scatter.c). perm[new] = the
     * user's index (n_global entries on rank 0; NULL elsewhere and without a permutation). */
    int permuted;
    int32_t *perm;
} krill_dist_mat;

#ifdef KRILL_HAVE_CUDA
/* Work a GPU rank queues on the context's stream while its halo exchange is in flight: run
 * queues it (the diagonal block's product; the reproducible SpMV's interior rows). */
typedef struct krill_dist_local_work krill_dist_local_work;
struct krill_dist_local_work {
    krill_status (*run)(krill_ctx *ctx, const krill_dist_local_work *w);
    const krill_dist_mat *d;
    double alpha, beta;
    const double *x;
    double *y;
};
/* One halo exchange of x (device memory) with work beside it (mat.c): collective; *ghosts
 * their device copy, which the context's stream waits for. */
krill_status krill_dist_gpu_exchange(krill_ctx *ctx, const krill_dist_mat *d, const double *x,
                                     const krill_dist_local_work *work, const double **ghosts);
#endif

/* The reproducible SpMV of the distributed matrix (repro.c; the format's spmv_repro), and
 * the drop of its cache (new values, destroy). */
krill_status krill_dist_spmv_repro(krill_ctx *ctx, const void *impl, double alpha,
                                   const double *x, double beta, double *y);
void krill_dist_whole_drop(krill_dist_mat *d);

/* The impl of a matrix made by krill_dist_mat_create, or NULL (with an error) for any other. */
krill_dist_mat *krill_dist_of(const krill_mat *a, const char *fn);
/* krill_dist_mat_create with the row ranges already agreed (offsets: size + 1, the same on
 * every rank; rows->n_rows = offsets[rank + 1] - offsets[rank]). */
krill_status krill_dist_mat_build(krill_ctx *ctx, const krill_csr *rows, const int64_t *offsets,
                                  const char *format, krill_mat **mat);

/* ---- METIS (partition.c; rank 0, local) --------------------------------------------------
 * Parts of the graph of A + A^T (no self loops) by METIS_PartGraphKway, vertices weighted
 * by their rows' entry counts: perm (n entries, perm[new] = old) groups each part's rows in
 * their original order, offsets (parts + 1) bound the parts. *used = 0 (perm and offsets
 * untouched) when there is nothing to partition: parts < 2, fewer rows than parts, or no
 * off-diagonal entry. KRILL_ERR_UNSUPPORTED in a build without METIS. */
krill_status krill_dist_metis_order(const krill_csr *a, int parts, int32_t *perm,
                                    int64_t *offsets, int *used);

#endif
