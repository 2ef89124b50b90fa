/* dist/halo.c - the halo plan and the exchange of one SpMV.
 *
 * Build (once per matrix, collective): the ghosts of this rank's rows (global columns outside
 * its range, sorted and unique) are grouped by owner (rank ranges are contiguous, so the
 * sorted ghosts of one owner are consecutive); one MPI_Alltoall tells every owner how many
 * entries each rank wants (4 bytes per pair of ranks) and one MPI_Alltoallv which ones (4
 * bytes per ghost). Exchange (per SpMV): nonblocking receives straight into recv_buf at each
 * owner's offset, then packing and nonblocking sends; the caller runs its diagonal block
 * between start and finish, so the messages travel while it computes. */
#include <stdlib.h>
#include <string.h>

#include "dist/dist_impl.h"

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The sorted unique columns of `rows` outside [lo, hi) into h->colmap / h->n_halo. */
static krill_status collect_ghosts(const krill_csr *rows, int64_t lo, int64_t hi, krill_halo *h)
{
    krill_status st = KRILL_OK;
    int64_t n = 0, u = 0;
    for (int64_t k = 0; k < rows->nnz; k++)
        if (rows->col[k] < lo || rows->col[k] >= hi) n++;
    KRILL_ALLOC(h->colmap, n);
    for (int64_t k = 0; k < rows->nnz; k++)
        if (rows->col[k] < lo || rows->col[k] >= hi) h->colmap[u++] = rows->col[k];
    qsort(h->colmap, (size_t)n, sizeof *h->colmap, cmp_i32);
    u = 0;
    for (int64_t k = 0; k < n; k++)
        if (k == 0 || h->colmap[k] != h->colmap[k - 1]) h->colmap[u++] = h->colmap[k];
    h->n_halo = u;
cleanup:
    return st;
}

/* Neighbour lists (ranks with a nonzero count, ascending) and offsets from per-rank counts. */
static krill_status neighbours(const int *count, int size, int *n_out, int **rank_out,
                               int64_t **off_out)
{
    krill_status st = KRILL_OK;
    int n = 0;
    for (int r = 0; r < size; r++) n += count[r] > 0;
    KRILL_ALLOC(*rank_out, n);
    KRILL_ALLOC(*off_out, n + 1);
    (*off_out)[0] = 0;
    n = 0;
    for (int r = 0; r < size; r++)
        if (count[r] > 0) {
            (*rank_out)[n] = r;
            (*off_out)[n + 1] = (*off_out)[n] + count[r];
            n++;
        }
    *n_out = n;
cleanup:
    return st;
}

krill_status krill_halo_build(krill_ctx *ctx, const krill_csr *rows, const int64_t *offsets,
                              krill_halo *h)
{
    krill_status st = KRILL_OK;
    MPI_Comm comm = krill_dist_comm(ctx);
    int rank = krill_ctx_rank(ctx), size = krill_ctx_size(ctx);
    int *want = NULL, *give = NULL, *want_off = NULL, *give_off = NULL;
    int32_t *asked = NULL;
    int64_t lo = offsets[rank], hi = offsets[rank + 1], n_give = 0;

    memset(h, 0, sizeof *h);
    /* local: ghosts, and how many each owner holds */
    {
        krill_status local = collect_ghosts(rows, lo, hi, h);
        if (local == KRILL_OK) local = krill_calloc((void **)&want, (size_t)size * 4 * sizeof(int),
                                                    "halo counts");
        KRILL_TRY(krill_ctx_agree(ctx, local));
    }
    give = want + size;
    want_off = give + size;
    give_off = want_off + size;
    for (int64_t k = 0, r = 0; k < h->n_halo; k++) {
        while (h->colmap[k] >= offsets[r + 1]) r++;   /* offsets ascend; the last ends at n */
        want[r]++;
    }
    MPI_Alltoall(want, 1, MPI_INT, give, 1, MPI_INT, comm);
    for (int r = 0; r < size; r++) {
        want_off[r] = r ? want_off[r - 1] + want[r - 1] : 0;
        give_off[r] = r ? give_off[r - 1] + give[r - 1] : 0;
        n_give += give[r];
    }
    {
        krill_status local = neighbours(want, size, &h->n_recv, &h->recv_rank, &h->recv_off);
        if (local == KRILL_OK)
            local = neighbours(give, size, &h->n_send, &h->send_rank, &h->send_off);
        if (local == KRILL_OK)
            local = krill_alloc_n((void **)&asked, (size_t)n_give, sizeof *asked, 0, "asked");
        if (local == KRILL_OK && !krill_on_gpu(ctx))   /* GPU: page-locked, below */
            local = krill_alloc_n((void **)&h->recv_buf, (size_t)h->n_halo, sizeof(double), 0,
                                  "halo receive buffer");
        if (local == KRILL_OK && !krill_on_gpu(ctx))
            local = krill_alloc_n((void **)&h->send_buf, (size_t)n_give, sizeof(double), 0,
                                  "halo send buffer");
        if (local == KRILL_OK)
            local = krill_alloc_n((void **)&h->req, (size_t)(h->n_recv + h->n_send),
                                  sizeof(MPI_Request), 0, "halo requests");
        KRILL_TRY(krill_ctx_agree(ctx, local));
    }
    /* the ghosts are grouped by owner in rank order, so colmap is the send buffer as is */
    MPI_Alltoallv(h->colmap, want, want_off, MPI_INT32_T, asked, give, give_off, MPI_INT32_T,
                  comm);
    for (int64_t k = 0; k < n_give; k++) asked[k] -= (int32_t)lo;   /* local rows */
    h->send_idx = asked;
    asked = NULL;
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx))
        KRILL_TRY(krill_ctx_agree(ctx, krill_halo_gpu_create(ctx, h->send_idx, n_give, h->n_halo,
                                                             &h->send_buf, &h->recv_buf,
                                                             &h->gpu)));
#ifdef KRILL_HAVE_NCCL
    if (krill_on_gpu(ctx) && krill_nccl_halo_comm(ctx))
        KRILL_TRY(krill_ctx_agree(ctx, krill_halo_gpu_nccl_connect(
                                           h->gpu, krill_nccl_halo_comm(ctx), h->n_send,
                                           h->send_rank, h->send_off, h->n_recv, h->recv_rank,
                                           h->recv_off)));
#endif
#endif
cleanup:
    krill_free(asked);
    krill_free(want);
    if (st != KRILL_OK) krill_halo_free(h);
    return st;
}

void krill_halo_free(krill_halo *h)
{
    krill_free(h->colmap);
    krill_free(h->recv_rank);
    krill_free(h->recv_off);
    krill_free(h->send_rank);
    krill_free(h->send_off);
    krill_free(h->send_idx);
#ifdef KRILL_HAVE_CUDA
    if (h->gpu) {   /* its page-locked buffers too */
        krill_halo_gpu_free(h->gpu, h->send_buf, h->recv_buf);
        h->send_buf = h->recv_buf = NULL;
    }
#endif
    krill_free(h->recv_buf);
    krill_free(h->send_buf);
    krill_free(h->req);
    memset(h, 0, sizeof *h);
}

/* Tag of krill's halo messages (the context's own communicator carries nothing else
 * point-to-point). */
#define HALO_TAG 19

void krill_halo_post_recvs(const krill_halo *h, MPI_Comm comm)
{
    for (int k = 0; k < h->n_recv; k++)
        MPI_Irecv(h->recv_buf + h->recv_off[k], (int)(h->recv_off[k + 1] - h->recv_off[k]),
                  MPI_DOUBLE, h->recv_rank[k], HALO_TAG, comm, &h->req[k]);
}

void krill_halo_post_sends(const krill_halo *h, MPI_Comm comm)
{
    for (int k = 0; k < h->n_send; k++)
        MPI_Isend(h->send_buf + h->send_off[k], (int)(h->send_off[k + 1] - h->send_off[k]),
                  MPI_DOUBLE, h->send_rank[k], HALO_TAG, comm, &h->req[h->n_recv + k]);
}

krill_status krill_halo_start(const krill_halo *h, MPI_Comm comm, const double *x)
{
    const int64_t n_sent = h->send_off[h->n_send];
    krill_halo_post_recvs(h, comm);
    for (int64_t i = 0; i < n_sent; i++) h->send_buf[i] = x[h->send_idx[i]];
    krill_halo_post_sends(h, comm);
    return KRILL_OK;
}

int krill_halo_test(const krill_halo *h)
{
    int done = 0;
    MPI_Testall(h->n_recv + h->n_send, h->req, &done, MPI_STATUSES_IGNORE);
    return done;
}

krill_status krill_halo_finish(const krill_halo *h)
{
    MPI_Waitall(h->n_recv + h->n_send, h->req, MPI_STATUSES_IGNORE);
    return KRILL_OK;
}
