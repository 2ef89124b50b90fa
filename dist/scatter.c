/* dist/scatter.c - a whole matrix or vector on rank 0 sent out by rows, and vectors gathered
 * back (the command's --out, tests). Rank 0 holds the whole problem once: for matrices that
 * fit one node's memory; each rank's own assembly (krill_dist_mat_create) is the way past. */
#include <limits.h>
#include <string.h>

#include "dist/dist_impl.h"
#include "krill/order.h"

/* Rank r starts at the first row whose first entry is at or after r * nnz / size: ranks get
 * nnz / size entries each, give or take a row. */
static void balance_by_nnz(const krill_csr *a, int size, int64_t *offsets)
{
    int64_t i = 0;
    offsets[0] = 0;
    for (int r = 1; r < size; r++) {
        int64_t target = (int64_t)((double)a->nnz * r / size);
        while (i < a->n_rows && a->row_ptr[i] < target) i++;
        offsets[r] = i;
    }
    offsets[size] = a->n_rows;
}

/* Rank 0's checks of what it was given; offsets filled (given or balanced). */
static krill_status root_prepare(const krill_csr *a, const int64_t *given, int size,
                                 int64_t *offsets)
{
    krill_status st = KRILL_OK;
    KRILL_REQUIRE(a != NULL, "krill_dist_mat_scatter: the matrix is NULL on rank 0");
    KRILL_TRY(krill_csr_check(a, "krill_dist_mat_scatter: matrix"));
    if (a->n_rows != a->n_cols) {
        st = krill_error(KRILL_ERR_UNSUPPORTED, "krill_dist_mat_scatter: the matrix is %d x %d: "
                         "distributed matrices are square", a->n_rows, a->n_cols);
        goto cleanup;
    }
    if (given) {
        KRILL_REQUIRE(given[0] == 0 && given[size] == a->n_rows, "krill_dist_mat_scatter: "
                      "row_offsets must run from 0 to %d (got %lld to %lld)", a->n_rows,
                      (long long)given[0], (long long)given[size]);
        for (int r = 0; r < size; r++)
            KRILL_REQUIRE(given[r] <= given[r + 1], "krill_dist_mat_scatter: row_offsets "
                          "decrease at rank %d (%lld > %lld)", r, (long long)given[r],
                          (long long)given[r + 1]);
        memcpy(offsets, given, ((size_t)size + 1) * sizeof *offsets);
    } else {
        balance_by_nnz(a, size, offsets);
    }
    for (int r = 0; r < size; r++) {
        int64_t nnz = a->row_ptr[offsets[r + 1]] - a->row_ptr[offsets[r]];
        if (nnz > INT_MAX) {
            st = krill_error(KRILL_ERR_UNSUPPORTED, "krill_dist_mat_scatter: rank %d's rows hold "
                             "%lld entries, more than one MPI message carries (%d): use more "
                             "ranks or krill_dist_mat_create", r, (long long)nnz, INT_MAX);
            goto cleanup;
        }
    }
cleanup:
    return st;
}

/* Rank 0 sends rank r its rows (the slice of row_ptr as it is, then columns and values:
 * 12 bytes an entry and 8 a row; the receiver rebases the offsets) and copies its own. */
static void send_rows(const krill_csr *a, const int64_t *offsets, int size, krill_csr *mine,
                      MPI_Comm comm)
{
    for (int r = 0; r < size; r++) {
        int64_t first = offsets[r], rows = offsets[r + 1] - offsets[r];
        int64_t base = a->row_ptr[first], nnz = a->row_ptr[first + rows] - base;
        if (r == 0) {
            for (int64_t i = 0; i <= rows; i++) mine->row_ptr[i] = a->row_ptr[first + i] - base;
            memcpy(mine->col, a->col + base, (size_t)nnz * sizeof *a->col);
            memcpy(mine->val, a->val + base, (size_t)nnz * sizeof *a->val);
            continue;
        }
        MPI_Send(a->row_ptr + first, (int)(rows + 1), MPI_INT64_T, r, 0, comm);
        MPI_Send(a->col + base, (int)nnz, MPI_INT32_T, r, 1, comm);
        MPI_Send(a->val + base, (int)nnz, MPI_DOUBLE, r, 2, comm);
    }
}

static void recv_rows(krill_csr *mine, MPI_Comm comm)
{
    int64_t base;
    MPI_Recv(mine->row_ptr, mine->n_rows + 1, MPI_INT64_T, 0, 0, comm, MPI_STATUS_IGNORE);
    MPI_Recv(mine->col, (int)mine->nnz, MPI_INT32_T, 0, 1, comm, MPI_STATUS_IGNORE);
    MPI_Recv(mine->val, (int)mine->nnz, MPI_DOUBLE, 0, 2, comm, MPI_STATUS_IGNORE);
    base = mine->row_ptr[0];
    for (int32_t i = 0; i <= mine->n_rows; i++) mine->row_ptr[i] -= base;
}

/* Collective steps: rank 0 checks and partitions (agree), the row ranges and each rank's
 * entry count go out (a broadcast of 8 (size + 2) bytes and a scatter of 8 a rank), every
 * rank allocates its rows (agree), rank 0 sends them, and the matrix is built from them. */
krill_status krill_dist_mat_scatter(krill_ctx *ctx, const krill_csr *global,
                                    const int64_t *row_offsets, const char *format,
                                    krill_mat **out)
{
    krill_status st = KRILL_OK, local = KRILL_OK;
    int64_t *offsets = NULL, *counts = NULL, my_nnz = 0;
    krill_csr *mine = NULL;
    int size = 1, rank = 0;
    MPI_Comm comm;

    KRILL_REQUIRE(out != NULL, "krill_dist_mat_scatter: mat is NULL");
    *out = NULL;
    KRILL_REQUIRE(ctx != NULL && ctx->comm != NULL, "krill_dist_mat_scatter: the context has "
                  "no communicator (make it with krill_mpi_ctx_create)");
    size = krill_ctx_size(ctx);
    rank = krill_ctx_rank(ctx);
    comm = krill_dist_comm(ctx);
    local = krill_alloc_n((void **)&offsets, (size_t)size + 2, sizeof *offsets, 0, "row offsets");
    if (local == KRILL_OK && rank == 0)
        local = krill_alloc_n((void **)&counts, (size_t)size, sizeof *counts, 0, "entry counts");
    if (local == KRILL_OK && rank == 0) local = root_prepare(global, row_offsets, size, offsets);
    KRILL_TRY(krill_ctx_agree(ctx, local));
    if (rank == 0) {
        offsets[size + 1] = global->n_cols;
        for (int r = 0; r < size; r++)
            counts[r] = global->row_ptr[offsets[r + 1]] - global->row_ptr[offsets[r]];
    }
    MPI_Bcast(offsets, size + 2, MPI_INT64_T, 0, comm);
    MPI_Scatter(counts, 1, MPI_INT64_T, &my_nnz, 1, MPI_INT64_T, 0, comm);
    KRILL_TRY(krill_ctx_agree(ctx, krill_csr_create((int32_t)(offsets[rank + 1] - offsets[rank]),
                                                    (int32_t)offsets[size + 1], my_nnz, &mine)));
    if (rank == 0) send_rows(global, offsets, size, mine, comm);
    else recv_rows(mine, comm);
    st = krill_dist_mat_build(ctx, mine, offsets, format, out);
cleanup:
    krill_csr_destroy(&mine);
    krill_free(offsets);
    krill_free(counts);
    return st;
}

/* METIS (partition.c) on rank 0, then the scatter of B = P A P^T with the parts as offsets
 * (a permutation of n int32 kept on rank 0, and B: A's size again, both freed or kept on
 * rank 0 only; time: the graph and METIS, O(nnz log d), and the permutation, O(nnz log d)
 * for sorting each row's columns). Every rank learns from one broadcast whether B was
 * permuted. A failure on rank 0 (METIS, allocation, A itself) is every rank's. */
krill_status krill_dist_mat_scatter_metis(krill_ctx *ctx, const krill_csr *global,
                                          const char *format, krill_mat **out)
{
    krill_status st = KRILL_OK, local = KRILL_OK;
    int64_t *offsets = NULL;
    int32_t *perm = NULL;
    krill_csr *permuted = NULL;
    int size = 1, rank = 0, used = 0;

    KRILL_REQUIRE(out != NULL, "krill_dist_mat_scatter_metis: mat is NULL");
    *out = NULL;
    KRILL_REQUIRE(ctx != NULL && ctx->comm != NULL, "krill_dist_mat_scatter_metis: the context "
                  "has no communicator (make it with krill_mpi_ctx_create)");
    if (!krill_dist_have_metis()) {   /* every rank knows it: no collective needed */
        st = krill_dist_metis_order(NULL, 0, NULL, NULL, &used);
        goto cleanup;
    }
    size = krill_ctx_size(ctx);
    rank = krill_ctx_rank(ctx);
    if (rank == 0) {
        local = krill_alloc_n((void **)&offsets, (size_t)size + 1, sizeof *offsets, 0,
                              "row offsets");
        if (local == KRILL_OK) local = root_prepare(global, NULL, size, offsets);
        if (local == KRILL_OK)
            local = krill_alloc_n((void **)&perm, (size_t)(global->n_rows > 0 ?
                                  global->n_rows : 1), sizeof *perm, 0, "METIS permutation");
        if (local == KRILL_OK) local = krill_dist_metis_order(global, size, perm, offsets, &used);
        if (local == KRILL_OK && used) local = krill_csr_permute(global, perm, &permuted);
    }
    KRILL_TRY(krill_ctx_agree(ctx, local));
    MPI_Bcast(&used, 1, MPI_INT, 0, krill_dist_comm(ctx));
    KRILL_TRY(krill_dist_mat_scatter(ctx, rank != 0 ? NULL : used ? permuted : global,
                                     rank == 0 && used ? offsets : NULL, format, out));
    if (used) {
        krill_dist_mat *d = (*out)->impl;
        d->permuted = 1;
        d->perm = perm;   /* rank 0's; NULL elsewhere */
        perm = NULL;
    }
cleanup:
    krill_csr_destroy(&permuted);
    krill_free(perm);
    krill_free(offsets);
    return st;
}

/* Counts and displacements of rank r's rows, for Scatterv / Gatherv (n < 2^31: int32 CSR). */
static krill_status vec_counts(const krill_dist_mat *d, int **counts, int **displs)
{
    krill_status st = KRILL_OK;
    KRILL_ALLOC(*counts, d->size);
    KRILL_ALLOC(*displs, d->size);
    for (int r = 0; r < d->size; r++) {
        (*counts)[r] = (int)(d->offsets[r + 1] - d->offsets[r]);
        (*displs)[r] = (int)d->offsets[r];
    }
cleanup:
    return st;
}

/* One MPI_Scatterv (or Gatherv) of n doubles over the ranks (a GPU rank's part goes through
 * host memory: one copy of 8 n_local bytes). vec functions: the vector's
 * length is checked on each rank, then the ranks agree before moving data. A METIS matrix
 * (d->perm on rank 0) moves the vector through a copy in its numbering there: y[new] =
 * x[perm[new]] before the scatter, x[perm[new]] = y[new] after the gather (8 n bytes and
 * one pass on rank 0). */
static krill_status vec_move(const krill_mat *a, krill_vec *v, double *global, int gather,
                             const char *fn)
{
    krill_status st = KRILL_OK, local = KRILL_OK;
    const krill_dist_mat *d = krill_dist_of(a, fn);
    int *counts = NULL, *displs = NULL;
    double *moved = NULL;        /* rank 0 of a permuted matrix: the vector in its numbering */
    double *stage = NULL;        /* a GPU rank: its part in host memory, for MPI */
    double *part = NULL;         /* where MPI reads or writes the rank's part */
    if (!d) return KRILL_ERR_ARG;
    if (!v || krill_vec_ctx(v) != d->ctx || krill_vec_size(v) != d->n_local)
        local = krill_error(KRILL_ERR_ARG, "%s: the local vector must have the rank's %lld rows "
                            "on the matrix's context", fn, (long long)d->n_local);
    else if (d->rank == 0 && !global && d->n_global > 0)
        local = krill_error(KRILL_ERR_ARG, "%s: the global vector is NULL on rank 0", fn);
    if (local == KRILL_OK) local = vec_counts(d, &counts, &displs);
    if (local == KRILL_OK && d->perm)
        local = krill_alloc_n((void **)&moved, (size_t)(d->n_global > 0 ? d->n_global : 1),
                              sizeof *moved, 0, "permuted global vector");
    if (local == KRILL_OK && krill_on_gpu(d->ctx))
        local = krill_alloc_n((void **)&stage, (size_t)(d->n_local > 0 ? d->n_local : 1),
                              sizeof *stage, 0, "the rank's part in host memory");
    if (local == KRILL_OK && stage && gather) local = krill_vec_download(v, stage);
    KRILL_TRY(krill_ctx_agree(d->ctx, local));
    part = stage ? stage : krill_vec_data(v);
    if (moved && !gather) krill_vec_permute_host((int32_t)d->n_global, d->perm, global, moved);
    if (gather)
        MPI_Gatherv(part, (int)d->n_local, MPI_DOUBLE, moved ? moved : global, counts, displs,
                    MPI_DOUBLE, 0, krill_dist_comm(d->ctx));
    else
        MPI_Scatterv(moved ? moved : global, counts, displs, MPI_DOUBLE, part, (int)d->n_local,
                     MPI_DOUBLE, 0, krill_dist_comm(d->ctx));
    if (moved && gather) krill_vec_unpermute_host((int32_t)d->n_global, d->perm, moved, global);
    if (stage && !gather) KRILL_TRY(krill_ctx_agree(d->ctx, krill_vec_upload(v, stage)));
cleanup:
    krill_free(stage);
    krill_free(moved);
    krill_free(counts);
    krill_free(displs);
    return st;
}

krill_status krill_dist_vec_scatter(const krill_mat *a, const double *global, krill_vec *local)
{
    return vec_move(a, local, (double *)global, 0, "krill_dist_vec_scatter");
}

krill_status krill_dist_vec_gather(const krill_mat *a, const krill_vec *local, double *global)
{
    return vec_move(a, (krill_vec *)local, global, 1, "krill_dist_vec_gather");
}
