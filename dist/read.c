/* dist/read.c - a distributed matrix from a file (doc/mpi.md, "Input"): each rank reads its
 * own rows of a krill binary file (doc/binary-format.md) with positioned reads, so a large
 * matrix loads in parallel and no rank holds more than its rows; a Matrix Market file is
 * read by rank 0 and scattered (krill_dist_mat_scatter).
 *
 * The binary read, collective:
 *   1. every rank opens the file and checks its header (io/bin_read.c); rank 0's sizes are
 *      broadcast (48 bytes) and every rank compares them with its own (a rank that sees
 *      another file, or none, fails);
 *   2. the partition: the caller's row offsets (rank 0), broadcast; or balanced by nonzeros
 *      as krill_dist_mat_scatter balances them: rank q reads row_ptr[i] for its even share
 *      q (n + 1) / P <= i < (q + 1) (n + 1) / P (8 (n + 1) / P bytes), finds in it the first
 *      row whose offset reaches each target r nnz / P, and one MPI_Allreduce (MIN, 8 (P - 1)
 *      bytes) gives every rank the offsets;
 *   3. rank r reads rows [offsets[r], offsets[r + 1]): its slice of row_ptr, then its
 *      entries' col and val.
 * Every step that can fail on one rank (the file, a chunk's checksum, a malformed slice, an
 * allocation) ends with krill_ctx_agree, so every rank returns the lowest failing rank's
 * status and message. Each rank verifies the checksums of the chunks it reads; together the
 * ranks read every chunk of the file, so a corrupt chunk anywhere fails the read on every
 * rank. */
#include <string.h>

#include "dist/dist_impl.h"
#include "io/io_impl.h"

#define HEADER_FIELDS 6      /* n_rows, n_cols, nnz, chunk bytes, file bytes, swapped */

/* Step 1: the file opened on every rank, with the same header as rank 0's. */
static krill_status open_everywhere(krill_ctx *ctx, const char *path, krill_bin_file *f)
{
    krill_status st = KRILL_OK, local = KRILL_OK;
    int64_t mine[HEADER_FIELDS], root[HEADER_FIELDS];
    KRILL_TRY(krill_ctx_agree(ctx, krill_bin_open(path, f)));
    mine[0] = f->info.n_rows;
    mine[1] = f->info.n_cols;
    mine[2] = f->info.nnz;
    mine[3] = f->info.chunk_bytes;
    mine[4] = f->info.file_bytes;
    mine[5] = f->info.swapped;
    memcpy(root, mine, sizeof root);
    MPI_Bcast(root, HEADER_FIELDS, MPI_INT64_T, 0, krill_dist_comm(ctx));
    if (memcmp(root, mine, sizeof root) != 0)
        local = krill_error(KRILL_ERR_IO, "%s: this rank sees another file than rank 0 (%lld x "
                            "%lld, %lld entries, %lld bytes against %lld x %lld, %lld, %lld)",
                            path, (long long)mine[0], (long long)mine[1], (long long)mine[2],
                            (long long)mine[4], (long long)root[0], (long long)root[1],
                            (long long)root[2], (long long)root[4]);
    else if (f->info.n_rows != f->info.n_cols)
        local = krill_error(KRILL_ERR_UNSUPPORTED, "%s: the matrix is %d x %d: distributed "
                            "matrices are square", path, f->info.n_rows, f->info.n_cols);
    KRILL_TRY(krill_ctx_agree(ctx, local));
cleanup:
    return st;
}

/* Rank 0's row offsets, checked as krill_dist_mat_scatter checks them. */
static krill_status check_given(const char *path, const int64_t *given, int size, int64_t n)
{
    krill_status st = KRILL_OK;
    KRILL_REQUIRE(given[0] == 0 && given[size] == n, "krill_dist_mat_read: %s: row_offsets "
                  "must run from 0 to %lld (got %lld to %lld)", path, (long long)n,
                  (long long)given[0], (long long)given[size]);
    for (int r = 0; r < size; r++)
        KRILL_REQUIRE(given[r] <= given[r + 1], "krill_dist_mat_read: %s: row_offsets "
                      "decrease at rank %d (%lld > %lld)", path, r, (long long)given[r],
                      (long long)given[r + 1]);
cleanup:
    return st;
}

/* This rank's candidates for the balanced offsets: cand[r - 1] = the first row i of its even
 * share of row_ptr with row_ptr[i] >= r nnz / size (as balance_by_nnz in scatter.c
 * computes the target), INT64_MAX where the share has none. Local. */
static krill_status balance_candidates(krill_bin_file *f, int rank, int size, int64_t *cand)
{
    krill_status st = KRILL_OK;
    const int64_t entries = (int64_t)f->info.n_rows + 1, nnz = f->info.nnz;
    const int64_t a = entries * rank / size, b = entries * (rank + 1) / size;
    int64_t *ptr = NULL;
    KRILL_ALLOC(ptr, b - a > 0 ? b - a : 1);
    KRILL_TRY(krill_bin_read_ptr(f, a, b - a, ptr));
    for (int64_t i = a; i < b; i++)
        if (ptr[i - a] < 0 || ptr[i - a] > nnz || (i > a && ptr[i - a] < ptr[i - a - 1])) {
            st = krill_error(KRILL_ERR_PARSE, "%s: row_ptr[%lld] = %lld: row offsets must rise "
                             "from 0 to nnz = %lld: the file is malformed", f->name,
                             (long long)i, (long long)ptr[i - a], (long long)nnz);
            goto cleanup;
        }
    for (int r = 1; r < size; r++) {
        const int64_t target = (int64_t)((double)nnz * r / size);
        int64_t lo = a, hi = b;                /* first i in [a, b) with ptr >= target */
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            if (ptr[mid - a] < target) lo = mid + 1;
            else hi = mid;
        }
        cand[r - 1] = lo < b ? lo : INT64_MAX;
    }
cleanup:
    krill_free(ptr);
    return st;
}

/* Step 2: offsets[0..size] on every rank. */
static krill_status partition(krill_ctx *ctx, krill_bin_file *f, const int64_t *given,
                              int64_t *offsets)
{
    krill_status st = KRILL_OK, local = KRILL_OK;
    const int size = krill_ctx_size(ctx), rank = krill_ctx_rank(ctx);
    const int64_t n = f->info.n_rows;
    int64_t *cand = NULL;
    MPI_Comm comm = krill_dist_comm(ctx);
    int has_given = given != NULL;             /* rank 0's say: the others pass NULL */
    MPI_Bcast(&has_given, 1, MPI_INT, 0, comm);
    if (has_given) {                           /* rank 0's, checked there, broadcast */
        if (rank == 0) local = check_given(f->name, given, size, n);
        if (rank == 0 && local == KRILL_OK)
            memcpy(offsets, given, ((size_t)size + 1) * sizeof *offsets);
        KRILL_TRY(krill_ctx_agree(ctx, local));
        MPI_Bcast(offsets, size + 1, MPI_INT64_T, 0, comm);
        goto cleanup;
    }
    local = krill_alloc_n((void **)&cand, (size_t)size, sizeof *cand, 0, "offset candidates");
    if (local == KRILL_OK) local = balance_candidates(f, rank, size, cand);
    KRILL_TRY(krill_ctx_agree(ctx, local));
    offsets[0] = 0;
    offsets[size] = n;
    if (size > 1)
        MPI_Allreduce(cand, offsets + 1, size - 1, MPI_INT64_T, MPI_MIN, comm);
    for (int r = 1; r < size; r++)     /* only a file whose offsets fall can leave these */
        if (offsets[r] > n) offsets[r] = n;
    for (int r = 1; r < size; r++)
        if (offsets[r] < offsets[r - 1]) offsets[r] = offsets[r - 1];
cleanup:
    krill_free(cand);
    return st;
}

krill_status krill_dist_read_rows(krill_ctx *ctx, const char *path, const int64_t *row_offsets,
                                  krill_csr **rows)
{
    krill_status st = KRILL_OK;
    krill_bin_file f = { .fd = -1 };
    int64_t *offsets = NULL;
    krill_csr *mine = NULL;
    int rank = 0, size = 1;
    KRILL_REQUIRE(rows != NULL, "krill_dist_read_rows: rows is NULL");
    *rows = NULL;
    KRILL_REQUIRE(ctx != NULL && ctx->comm != NULL, "krill_dist_read_rows: the context has no "
                  "communicator (make it with krill_mpi_ctx_create)");
    KRILL_REQUIRE(path != NULL, "krill_dist_read_rows: path is NULL");
    rank = krill_ctx_rank(ctx);
    size = krill_ctx_size(ctx);
    KRILL_TRY(open_everywhere(ctx, path, &f));
    KRILL_TRY(krill_ctx_agree(ctx, krill_alloc_n((void **)&offsets, (size_t)size + 1,
                                                 sizeof *offsets, 0, "row offsets")));
    KRILL_TRY(partition(ctx, &f, rank == 0 ? row_offsets : NULL, offsets));
    KRILL_TRY(krill_ctx_agree(ctx, krill_bin_read_slice(&f, offsets[rank], offsets[rank + 1],
                                                        &mine)));
    *rows = mine;
    mine = NULL;
cleanup:
    krill_bin_close(&f);
    krill_free(offsets);
    krill_csr_destroy(&mine);   /* read here, but another rank failed */
    return st;
}

krill_status krill_dist_mat_read(krill_ctx *ctx, const char *path, const int64_t *row_offsets,
                                 const char *format, krill_mat **mat)
{
    krill_status st = KRILL_OK;
    krill_csr *a = NULL;
    int binary = 0;
    KRILL_REQUIRE(mat != NULL, "krill_dist_mat_read: mat is NULL");
    *mat = NULL;
    KRILL_REQUIRE(ctx != NULL && ctx->comm != NULL, "krill_dist_mat_read: the context has no "
                  "communicator (make it with krill_mpi_ctx_create)");
    /* rank 0 decides by the magic bytes, so every rank takes the same path */
    if (krill_ctx_rank(ctx) == 0) binary = krill_bin_detect(path);
    MPI_Bcast(&binary, 1, MPI_INT, 0, krill_dist_comm(ctx));
    if (binary) {
        KRILL_TRY(krill_dist_read_rows(ctx, path, row_offsets, &a));
        KRILL_TRY(krill_dist_mat_create(ctx, a, format, mat));
    } else {
        krill_mm_opts square = KRILL_MM_OPTS_INIT;
        square.square = 1;
        if (krill_ctx_rank(ctx) == 0)
            st = path ? krill_mm_read_opts(path, &square, &a, NULL)
                      : krill_error(KRILL_ERR_ARG, "krill_dist_mat_read: path is NULL");
        KRILL_TRY(krill_ctx_agree(ctx, st));
        KRILL_TRY(krill_dist_mat_scatter(ctx, a, row_offsets, format, mat));
    }
cleanup:
    krill_csr_destroy(&a);
    return st;
}
