/* krill/mpi.h - distributed solves over MPI, for callers that have MPI (doc/mpi.md).
 *
 * Present only in a build with MPI (krill_have_mpi() == 1); krill.h does not include it and
 * never includes mpi.h. A context on a communicator (krill_mpi_ctx_create, or
 * krill_ctx_opts.comm) sums every reduction over its ranks, so krill_solve runs unchanged on
 * a distributed matrix: each rank passes its part of b and x (its rows, in global order) and
 * gets its part of the solution. Every function here, krill_ctx_create with a communicator,
 * krill_pc_create and krill_solve on such a context are collective: call them on every rank,
 * in the same order. A failure on any rank is returned on every rank, with the lowest
 * failing rank's message ("rank R: ..."), never a hang.
 *
 * CPU contexts, or one GPU per rank (krill_ctx_opts.device = KRILL_DEVICE_CUDA with
 * device_id = KRILL_DEVICE_ID_LOCAL_RANK); preconditioners act on each rank's diagonal
 * block (block Jacobi across ranks: "jacobi" is exact Jacobi, "ilu0"/"ic0"/"bjacobi" are the
 * ILU(0)/IC(0)/point-block inverse of the diagonal block). krill_ctx_set_repro on such a
 * context (collective) makes every reduction and SpMV row sum exact over all ranks: a solve
 * then gives the bits of the same solve on one process, on any rank count, partition and
 * thread count, CPU or GPU ranks, with no preconditioner or "jacobi" (the block
 * preconditioners depend on the partition by definition). */
#ifndef KRILL_MPI_H
#define KRILL_MPI_H

#include <mpi.h>
#include <stdint.h>
#include "krill.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A handle on comm for krill_ctx_opts.comm (comm is not duplicated here, and must outlive
 * the handle; the context made from it keeps its own duplicate). */
krill_status krill_comm_create(MPI_Comm comm, krill_comm **handle);
void krill_comm_destroy(krill_comm **handle);            /* NULL-safe; sets *handle = NULL */

/* krill_ctx_create on comm (opts NULL: defaults); the handle is made and dropped inside. */
krill_status krill_mpi_ctx_create(MPI_Comm comm, const krill_ctx_opts *opts, krill_ctx **ctx);

/* A distributed n x n matrix from each rank's rows: rank r passes its consecutive rows, in
 * rank order, as a host CSR with global column indices (rows->n_cols = n on every rank,
 * rows->n_rows >= 0, the sum of the n_rows = n). Stored per rank as the diagonal block (its
 * rows and columns) and the off-rank block (its rows, the other columns compressed to the
 * ones that occur, with a column map), each a krill_mat in `format` (NULL: "csr"), and the
 * halo plan. The result is a krill_mat of n_local x n_local on ctx: krill_mat_spmv,
 * krill_pc_create and krill_solve take it with vectors of the rank's n_local entries.
 * krill_mat_update_values takes the rank's values in the order of `rows`; krill_mat_to_csr
 * and krill_mat_diagonal give the rank's diagonal block and its diagonal. */
krill_status krill_dist_mat_create(krill_ctx *ctx, const krill_csr *rows, const char *format,
                                   krill_mat **mat);

/* The same from a whole matrix on rank `root` = 0 (other ranks pass NULL): row_offsets
 * (size + 1 entries on rank 0, ascending from 0 to n; NULL elsewhere or for the default)
 * gives rank r rows [row_offsets[r], row_offsets[r+1]); the default balances nonzeros: rank
 * r starts at the first row whose first entry is at or after r * nnz / size. */
krill_status krill_dist_mat_scatter(krill_ctx *ctx, const krill_csr *global,
                                    const int64_t *row_offsets, const char *format,
                                    krill_mat **mat);

/* The same with a METIS partition (doc/mpi.md, "METIS"): rank 0 splits the graph of A + A^T
 * (no self loops, vertices weighted by their rows' entries) into `size` parts by
 * METIS_PartGraphKway, renumbers the rows so that each part's rows are consecutive (in
 * their original order), and scatters P A P^T with the parts as row blocks. The matrix
 * keeps P: krill_dist_vec_scatter and _gather take and give global vectors in the user's
 * order, so the permutation is never seen there (layout.permuted = 1; row_start and the
 * local rows, krill_mat_update_values' order included, are the permuted ones). With one
 * rank, fewer rows than ranks or no off-diagonal entry there is nothing to cut: the
 * default row blocks, not permuted. KRILL_ERR_UNSUPPORTED on every rank in a build without
 * METIS (krill_dist_have_metis() == 0). */
krill_status krill_dist_mat_scatter_metis(krill_ctx *ctx, const krill_csr *global,
                                          const char *format, krill_mat **mat);
int krill_dist_have_metis(void);

/* A distributed matrix from a file (doc/mpi.md, "Input"). A krill binary file (`krill
 * convert`; doc/binary-format.md; recognised by its magic bytes): every rank opens it and
 * reads only its own rows, verifying the checksums of the chunks it reads. Anything else is
 * read as Matrix Market by rank 0 and scattered (krill_dist_mat_scatter). row_offsets (rank
 * 0's, size + 1 entries from 0 to n; NULL elsewhere or for the default) as for
 * krill_dist_mat_scatter; the default balances nonzeros the same way, so both give the same
 * partition. A corrupt or malformed file fails on every rank with the message of the lowest
 * rank that found it. */
krill_status krill_dist_mat_read(krill_ctx *ctx, const char *path, const int64_t *row_offsets,
                                 const char *format, krill_mat **mat);

/* The binary read's first part: this rank's rows of the krill binary file at path, as a new
 * host CSR with global columns (what krill_dist_mat_create takes), partitioned as above.
 * For callers that need the rows themselves (the `krill` command makes b = A*1 from them). */
krill_status krill_dist_read_rows(krill_ctx *ctx, const char *path, const int64_t *row_offsets,
                                  krill_csr **rows);

/* What a rank holds and sends (for reports and tests). */
typedef struct krill_dist_layout {
    int64_t n_global;        /* rows (= columns) of the whole matrix */
    int64_t row_start;       /* first global row of this rank */
    int64_t n_local;         /* rows of this rank */
    int64_t nnz_diag;        /* entries of the diagonal block */
    int64_t nnz_off;         /* entries of the off-rank block */
    int64_t halo;            /* x entries received per SpMV (off-rank block columns) */
    int64_t sent;            /* x entries sent per SpMV */
    int recv_ranks;          /* ranks received from per SpMV */
    int send_ranks;          /* ranks sent to per SpMV */
    int permuted;            /* 1: rows renumbered by krill_dist_mat_scatter_metis */
    int halo_path;           /* 0: MPI on the host (GPU ranks: through page-locked buffers),
                                1: NCCL, device to device (GPU ranks, doc/mpi.md) */
    double halo_timed_ms[2]; /* where the path was chosen by timing at setup (the default on
                                4+ GPU ranks with NCCL): ms per SpMV through the host [0] and
                                NCCL [1], the slowest rank's; else 0 */
} krill_dist_layout;

/* KRILL_ERR_ARG for a matrix not made by krill_dist_mat_create / _scatter. Local. */
krill_status krill_dist_mat_layout(const krill_mat *mat, krill_dist_layout *layout);

/* A global vector of n doubles on rank 0 (ignored elsewhere) to every rank's part (`local`:
 * n_local entries on the matrix's context), and back. Collective. */
krill_status krill_dist_vec_scatter(const krill_mat *mat, const double *global, krill_vec *local);
krill_status krill_dist_vec_gather(const krill_mat *mat, const krill_vec *local, double *global);

#ifdef __cplusplus
}
#endif
#endif
