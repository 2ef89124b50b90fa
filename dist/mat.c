/* dist/mat.c - the distributed matrix: per rank a diagonal block and an off-rank block
 * (PETSc's MPIAIJ, hypre's ParCSR), each an ordinary krill_mat, behind a format table of its
 * own, so that krill_mat_spmv, the preconditioners and every solver take it unchanged.
 *
 * With rank p owning global rows [s, e) and the ghosts g_0 < g_1 < ... (columns of its rows
 * outside [s, e)), rows i of A split as A_ij = D_{i, j - s} for s <= j < e and
 * A_{i, g_k} = B_{i, k}; so (A x)_i = (D x_own)_i + (B x_ghost)_i. SpMV: post the halo
 * exchange (halo.c: n_halo doubles in, the entries others need out), y = alpha D x_own +
 * beta y while it travels, wait, y += alpha B x_ghost. Per SpMV a rank moves 8 (n_halo +
 * sent) bytes in (recv_ranks + send_ranks) messages besides the two local SpMVs; on a GPU
 * rank also 8 sent bytes down and 8 n_halo up over PCIe (halo_gpu.h), beside D's product.
 *
 * The reproducible SpMV (a context in a reproducible mode) sums whole rows: repro.c. */
#include <stdio.h>
#include <string.h>

#include "dist/dist_impl.h"
#ifdef KRILL_HAVE_CUDA
#include "core/cuda_impl.h"
#endif

/* CPU: the exchange is in flight from its first message posted (t0) to the wait's end; the
 * diagonal product [t1, t2) hides it. When the messages have all arrived by t2 the exchange
 * was hidden whole: its flight is counted as t2 - t0 (an upper bound), all of it hidden. A
 * failed product still completes the exchange (the other ranks' messages, no request left
 * open); the failure comes out after it. */
static krill_status dist_spmv_cpu(krill_ctx *ctx, const krill_dist_mat *d, double alpha,
                                  const double *x, double beta, double *y)
{
    krill_status st = KRILL_OK, local = KRILL_OK;
    double t0 = krill_wtime(), t1, t2, t3;
    int arrived;
    KRILL_TRY(krill_halo_start(&d->halo, krill_dist_comm(ctx), x));
    t1 = krill_wtime();
    if (d->diag) local = krill_mat_spmv_raw(d->diag, alpha, x, beta, y);
    t2 = krill_wtime();
    arrived = krill_halo_test(&d->halo);
    KRILL_TRY(krill_halo_finish(&d->halo));
    KRILL_TRY(local);
    t3 = krill_wtime();
    krill_ctx_add_comm_time(ctx, (t3 - t0) - (t2 - t1));   /* the local work is not comm */
    if (d->halo.n_recv + d->halo.n_send > 0)   /* no messages: no exchange to count */
        krill_ctx_add_halo_time(ctx, arrived ? t2 - t0 : t3 - t0, arrived ? t2 - t0 : t2 - t1);
    if (d->off) KRILL_TRY(krill_mat_spmv_raw(d->off, alpha, d->halo.recv_buf, 1.0, y));
cleanup:
    return st;
}

#ifdef KRILL_HAVE_CUDA
/* The plain SpMV's local work: the diagonal block's product (none on a rank without rows) */
static krill_status gpu_diag_product(krill_ctx *ctx, const krill_dist_local_work *w)
{
    (void)ctx;
    return w->d->diag ? krill_mat_spmv_raw(w->d->diag, w->alpha, w->x, w->beta, w->y) : KRILL_OK;
}

/* One exchange (halo_gpu.h): the receives posted, the gather and its copy down queued on the
 * side stream, the local work queued on the context's stream and marked; the host sends once
 * the entries are packed, then polls MPI and the mark together, so it knows when the work
 * ended. In flight from t0 to the last message; hidden until the mark was seen (all of the
 * flight when it is still ahead at the end; the pack and work queued before it count as
 * hidden too). The host waits in MPI only. A local failure (a launch, a copy, the device)
 * still sends (whatever send_buf holds) and completes the exchange, so no rank waits for this
 * one's messages and no request stays open; the failure comes out after. *ghosts: their
 * device copy, which the context's stream waits for. */
krill_status krill_dist_gpu_exchange(krill_ctx *ctx, const krill_dist_mat *d, const double *x,
                                     const krill_dist_local_work *work, const double **ghosts)
{
    krill_status st = KRILL_OK, local = KRILL_OK;
    const krill_halo *h = &d->halo;
    const MPI_Comm comm = krill_dist_comm(ctx);
    double t0, t_local = -1.0, t_end;
    int done = 0;
#ifdef KRILL_HAVE_NCCL
    if (d->halo_nccl) {   /* on the device, timed there: no host wait */
        local = krill_halo_gpu_nccl_start(ctx, h->gpu, krill_nccl_halo_comm(ctx), x, h->n_send,
                                          h->send_rank, h->send_off, h->n_recv, h->recv_rank,
                                          h->recv_off);
        if (local == KRILL_OK) local = work->run(ctx, work);
        st = krill_halo_gpu_land(ctx, h->gpu, ghosts);
        if (local != KRILL_OK) st = local;
        goto cleanup;
    }
#endif
    local = krill_halo_gpu_ready(h->gpu);   /* the last ghosts have left recv_buf */
    t0 = krill_wtime();
    krill_halo_post_recvs(h, comm);
    if (local == KRILL_OK) local = krill_halo_gpu_pack(ctx, h->gpu, x, h->send_buf);
    if (local == KRILL_OK) local = work->run(ctx, work);
    if (local == KRILL_OK) local = krill_halo_gpu_mark_local(ctx, h->gpu);
    if (local == KRILL_OK) local = krill_halo_gpu_wait_packed(h->gpu);
    krill_halo_post_sends(h, comm);
    while (!krill_halo_test(h)) {
        if (local == KRILL_OK && !done && (done = krill_halo_gpu_local_done(h->gpu)) != 0)
            t_local = krill_wtime();
    }
    t_end = krill_wtime();
    if (done < 0)
        local = krill_error(KRILL_ERR_DEVICE, "distributed SpMV: the local work beside the halo "
                            "exchange failed on the device (cudaEventQuery)");
    KRILL_TRY(local);
    if (t_local < 0.0) t_local = t_end;
    krill_ctx_add_comm_time(ctx, t_end - t_local);
    if (h->n_recv + h->n_send > 0) krill_ctx_add_halo_time(ctx, t_end - t0, t_local - t0);
    KRILL_TRY(krill_halo_gpu_unpack(ctx, h->gpu, h->recv_buf, ghosts));
cleanup:
    return st;
}

/* GPU: the diagonal block's product beside the exchange, then the off-rank block's. */
static krill_status dist_spmv_gpu(krill_ctx *ctx, const krill_dist_mat *d, double alpha,
                                  const double *x, double beta, double *y)
{
    krill_status st = KRILL_OK;
    const double *ghosts = NULL;
    const krill_dist_local_work work = {gpu_diag_product, d, alpha, beta, x, y};
    KRILL_TRY(krill_dist_gpu_exchange(ctx, d, x, &work, &ghosts));
    if (d->off) KRILL_TRY(krill_mat_spmv_raw(d->off, alpha, ghosts, 1.0, y));
cleanup:
    return st;
}
#endif

static krill_status dist_spmv(krill_ctx *ctx, const void *impl, double alpha, const double *x,
                              double beta, double *y)
{
    const krill_dist_mat *d = impl;
#ifdef KRILL_HAVE_CUDA
    if (d->halo.gpu) return dist_spmv_gpu(ctx, d, alpha, x, beta, y);
#endif
    return dist_spmv_cpu(ctx, d, alpha, x, beta, y);
}

/* New values in the order of the rows given: each block keeps its entries' relative order
 * (the column map is ascending), so the split is a walk with the is_off flags. Local. */
static krill_status dist_update_values(krill_ctx *ctx, void *impl, const double *values)
{
    krill_status st = KRILL_OK;
    krill_dist_mat *d = impl;
    double *dv = NULL, *ov = NULL;
    int64_t nd = 0, no = 0;
    (void)ctx;
    krill_dist_whole_drop(d);   /* remade from the new values when next needed */
    KRILL_ALLOC(dv, d->nnz_diag);
    KRILL_ALLOC(ov, d->nnz_off);
    for (int64_t k = 0; k < d->nnz_diag + d->nnz_off; k++) {
        if (d->is_off[k]) ov[no++] = values[k];
        else dv[nd++] = values[k];
    }
    if (d->diag) KRILL_TRY(krill_mat_update_values(d->diag, dv));
    if (d->off) KRILL_TRY(krill_mat_update_values(d->off, ov));
cleanup:
    krill_free(dv);
    krill_free(ov);
    return st;
}

static krill_status dist_diagonal(krill_ctx *ctx, const void *impl, double *diag)
{
    const krill_dist_mat *d = impl;
    (void)ctx;
    return d->diag ? krill_mat_diagonal_raw(d->diag, diag) : KRILL_OK;
}

/* The rank's diagonal block: what rank-local preconditioners (ILU(0), IC(0), bjacobi)
 * factor, as PETSc's bjacobi does with one block per rank. */
static krill_status dist_to_csr(krill_ctx *ctx, const void *impl, krill_csr **csr)
{
    const krill_dist_mat *d = impl;
    (void)ctx;
    return d->diag ? krill_mat_to_csr(d->diag, csr) : krill_csr_create(0, 0, 0, csr);
}

static krill_status dist_diagonal_blocks(krill_ctx *ctx, const void *impl, int b,
                                         double *blocks)
{
    const krill_dist_mat *d = impl;
    (void)ctx;
    return d->diag ? krill_mat_diagonal_blocks_raw(d->diag, b, blocks) : KRILL_OK;
}

/* The two blocks together: bytes and entries add up, rows are the rank's. */
static void dist_stats(const void *impl, krill_format_stats *s)
{
    const krill_dist_mat *d = impl;
    krill_format_stats part;
    if (d->diag) krill_mat_stats(d->diag, s);
    if (d->off) {
        krill_mat_stats(d->off, &part);
        s->bytes += part.bytes;
        s->nnz += part.nnz;
        if (part.max_row_nnz > s->max_row_nnz) s->max_row_nnz = part.max_row_nnz;
    }
    s->n_rows = s->n_cols = d->n_local;
    s->mean_row_nnz = d->n_local ? (double)s->nnz / (double)d->n_local : 0.0;
    snprintf(s->variant, sizeof s->variant, "diag+off, halo %lld%s", (long long)d->halo.n_halo,
             d->halo_nccl ? ", NCCL" : "");
}

static void dist_destroy(krill_ctx *ctx, void *impl)
{
    krill_dist_mat *d = impl;
    (void)ctx;
    krill_mat_destroy(&d->diag);
    krill_mat_destroy(&d->off);
    krill_dist_whole_drop(d);
    krill_halo_free(&d->halo);
    krill_free(d->offsets);
    krill_free(d->is_off);
    krill_free(d->perm);
    krill_free(d);
}

/* Not in the registry: made only by krill_dist_mat_create. No fused SpMV-dot (krill_mat's
 * fallback is the SpMV and a global dot). */
static const krill_format_ops dist_ops = {
    .name = "dist",
    .spmv = dist_spmv,
    .spmv_repro = krill_dist_spmv_repro,
    .update_values = dist_update_values,
    .diagonal = dist_diagonal,
    .to_csr = dist_to_csr,
    .stats = dist_stats,
    .destroy = dist_destroy,
    .diagonal_blocks = dist_diagonal_blocks,
};

krill_dist_mat *krill_dist_of(const krill_mat *a, const char *fn)
{
    if (a && a->ops == &dist_ops) return a->impl;
    krill_error(KRILL_ERR_ARG, "%s: the matrix was not made by krill_dist_mat_create or "
                "krill_dist_mat_scatter", fn);
    return NULL;
}

/* The two blocks' CSRs from the rank's rows: D's columns shifted by -row_start, B's
 * compressed to their place in the (ascending) column map. */
static krill_status split_blocks(const krill_csr *rows, krill_dist_mat *d, krill_csr **dcsr,
                                 krill_csr **ocsr)
{
    krill_status st = KRILL_OK;
    const int64_t lo = d->row_start, hi = d->row_start + d->n_local;
    const krill_halo *h = &d->halo;
    int64_t nd = 0, no = 0;
    KRILL_ALLOC(d->is_off, rows->nnz);
    for (int64_t k = 0; k < rows->nnz; k++) {
        d->is_off[k] = rows->col[k] < lo || rows->col[k] >= hi;
        no += d->is_off[k];
    }
    d->nnz_off = no;
    d->nnz_diag = rows->nnz - no;
    KRILL_TRY(krill_csr_create((int32_t)d->n_local, (int32_t)d->n_local, d->nnz_diag, dcsr));
    KRILL_TRY(krill_csr_create((int32_t)d->n_local, (int32_t)h->n_halo, d->nnz_off, ocsr));
    nd = no = 0;
    for (int32_t i = 0; i < rows->n_rows; i++) {
        for (int64_t k = rows->row_ptr[i]; k < rows->row_ptr[i + 1]; k++) {
            int32_t c = rows->col[k];
            if (!d->is_off[k]) {
                (*dcsr)->col[nd] = (int32_t)(c - lo);
                (*dcsr)->val[nd++] = rows->val[k];
                continue;
            }
            int64_t a = 0, b = h->n_halo - 1;   /* c is in the map: binary search */
            while (a < b) {
                int64_t m = (a + b) / 2;
                if (h->colmap[m] < c) a = m + 1;
                else b = m;
            }
            (*ocsr)->col[no] = (int32_t)a;
            (*ocsr)->val[no++] = rows->val[k];
        }
        (*dcsr)->row_ptr[i + 1] = nd;
        (*ocsr)->row_ptr[i + 1] = no;
    }
cleanup:
    return st;
}

#if defined(KRILL_HAVE_CUDA) && defined(KRILL_HAVE_NCCL)
#define HALO_TIMED_SPMVS 5
/* A block's plain product, whatever the context's mode: the timing below must not reach the
 * reproducible SpMV (its workspace, its collectives) on some ranks only */
static krill_status block_product(const krill_mat *b, double alpha, const double *x,
                                  double beta, double *y)
{
    return b ? b->ops->spmv(b->ctx, b->impl, alpha, x, beta, y) : KRILL_OK;
}

static krill_status plain_diag_product(krill_ctx *ctx, const krill_dist_local_work *w)
{
    (void)ctx;
    return block_product(w->d->diag, w->alpha, w->x, w->beta, w->y);
}

/* The seconds of HALO_TIMED_SPMVS plain products y = A x through the present path, after one
 * not timed, on this rank (x = 0: the time does not depend on the values). Every rank makes
 * every exchange whatever failed on it (an exchange completes after a local failure), so
 * the ranks stay in step; the first failure is agreed on at the end. Collective. */
static krill_status time_products(krill_ctx *ctx, const krill_dist_mat *d, const double *x,
                                  double *y, double *seconds)
{
    krill_status st = KRILL_OK, local = KRILL_OK, one;
    const krill_dist_local_work work = {plain_diag_product, d, 1.0, 0.0, x, y};
    const double *ghosts = NULL;
    double t0 = 0.0;
    for (int k = 0; k <= HALO_TIMED_SPMVS; k++) {
        if (k == 1) {   /* the first one warms up */
            if (local == KRILL_OK) local = krill_cuda_sync(ctx);
            t0 = krill_wtime();
        }
        one = krill_dist_gpu_exchange(ctx, d, x, &work, &ghosts);
        if (one == KRILL_OK) one = block_product(d->off, 1.0, ghosts, 1.0, y);
        if (local == KRILL_OK) local = one;
    }
    if (local == KRILL_OK) local = krill_cuda_sync(ctx);
    *seconds = krill_wtime() - t0;
    KRILL_TRY(krill_ctx_agree(ctx, local));
cleanup:
    return st;
}

/* GPU ranks with NCCL: the path of the halo exchanges. KRILL_NCCL=1: NCCL. By default (from
 * four ranks on, core/nccl.cu) each path's products are timed (the slowest rank's) and NCCL
 * is kept only where its products take at most HALO_NCCL_MARGIN of the host path's: inside
 * a solve its halo costs more than in products alone. On four H200s (doc/mpi.md) NCCL's
 * products took 0.30-0.45x the host's on poisson3d (a small halo beside a short product),
 * and its iterations were 1.3-1.4x faster; on elasticity3d (a halo 6x larger, a product 10x
 * longer) its products took 0.98-1.03x, yet GMRES's iterations were 1.13-1.27x slower.
 * About 2 (HALO_TIMED_SPMVS + 1) products and two allreduces; none of the products where
 * no rank exchanges anything. Collective. */
#define HALO_NCCL_MARGIN 0.8
static krill_status choose_halo_path(krill_ctx *ctx, krill_dist_mat *d)
{
    krill_status st = KRILL_OK, local = KRILL_OK;
    const size_t bytes = (size_t)(d->n_local > 0 ? d->n_local : 1) * sizeof(double);
    double *x = NULL, *y = NULL, t[2] = {0.0, 0.0};
    int64_t messages = d->halo.n_send + d->halo.n_recv;
    const int mode = krill_nccl_halo_mode(ctx);
    d->halo_nccl = mode == KRILL_NCCL_HALO_ALWAYS;
    if (mode != KRILL_NCCL_HALO_TIMED) goto cleanup;
    KRILL_TRY(krill_ctx_allreduce_i64(ctx, &messages, 1, KRILL_REDUCE_MAX));
    if (messages == 0) goto cleanup;   /* no rank exchanges anything: nothing to time */
    local = krill_mem_alloc(ctx, (void **)&x, bytes, "halo timing: x");
    if (local == KRILL_OK) local = krill_mem_alloc(ctx, (void **)&y, bytes, "halo timing: y");
    if (local == KRILL_OK) local = krill_mem_zero(ctx, x, bytes);
    KRILL_TRY(krill_ctx_agree(ctx, local));
    for (int path = 0; path < 2; path++) {
        d->halo_nccl = path;
        KRILL_TRY(time_products(ctx, d, x, y, &t[path]));
    }
    KRILL_TRY(krill_ctx_allreduce(ctx, t, 2, KRILL_REDUCE_MAX));
    d->halo_nccl = t[1] <= HALO_NCCL_MARGIN * t[0];
    d->halo_ms[0] = 1e3 * t[0] / HALO_TIMED_SPMVS;
    d->halo_ms[1] = 1e3 * t[1] / HALO_TIMED_SPMVS;
cleanup:
    krill_halo_gpu_nccl_forget(d->halo.gpu);   /* no timed exchange in a solve's times */
    krill_mem_free(ctx, x);
    krill_mem_free(ctx, y);
    return st;
}
#endif

/* Local part of the build: the checked rows, the plan is already made. */
static krill_status build_blocks(krill_ctx *ctx, const krill_csr *rows, const char *format,
                                 krill_dist_mat *d)
{
    krill_status st = KRILL_OK;
    krill_csr *dcsr = NULL, *ocsr = NULL;
    KRILL_TRY(split_blocks(rows, d, &dcsr, &ocsr));
    if (d->n_local > 0) KRILL_TRY(krill_mat_create(ctx, dcsr, format, &d->diag));
    if (d->halo.n_halo > 0) KRILL_TRY(krill_mat_create(ctx, ocsr, format, &d->off));
cleanup:
    krill_csr_destroy(&dcsr);
    krill_csr_destroy(&ocsr);
    return st;
}

krill_status krill_dist_mat_build(krill_ctx *ctx, const krill_csr *rows, const int64_t *offsets,
                                  const char *format, krill_mat **out)
{
    krill_status st = KRILL_OK, local = KRILL_OK;
    krill_dist_mat *d = NULL;
    krill_mat *a = NULL;
    int size = krill_ctx_size(ctx), rank = krill_ctx_rank(ctx);

    if (!format || !format[0]) format = "csr";
    local = krill_calloc((void **)&d, sizeof *d, "distributed matrix");
    if (local == KRILL_OK)
        local = krill_alloc_n((void **)&d->offsets, (size_t)size + 1, sizeof(int64_t), 0,
                              "row offsets");
    KRILL_TRY(krill_ctx_agree(ctx, local));
    memcpy(d->offsets, offsets, ((size_t)size + 1) * sizeof(int64_t));
    d->ctx = ctx;
    d->rank = rank;
    d->size = size;
    d->n_global = offsets[size];
    d->row_start = offsets[rank];
    d->n_local = offsets[rank + 1] - offsets[rank];
    KRILL_TRY(krill_halo_build(ctx, rows, offsets, &d->halo));
    local = build_blocks(ctx, rows, format, d);
    if (local == KRILL_OK) local = krill_calloc((void **)&a, sizeof *a, "distributed matrix");
    KRILL_TRY(krill_ctx_agree(ctx, local));
#if defined(KRILL_HAVE_CUDA) && defined(KRILL_HAVE_NCCL)
    if (d->halo.gpu) KRILL_TRY(choose_halo_path(ctx, d));
#endif
    a->ctx = ctx;
    a->ops = &dist_ops;
    a->impl = d;
    d = NULL;
    a->n_rows = a->n_cols = ((krill_dist_mat *)a->impl)->n_local;
    a->nnz = rows->nnz;
    snprintf(a->name, sizeof a->name, "dist:%s", format);
    *out = a;
    a = NULL;
cleanup:
    if (d) dist_destroy(ctx, d);
    krill_mat_destroy(&a);
    return st;
}

krill_status krill_dist_mat_create(krill_ctx *ctx, const krill_csr *rows, const char *format,
                                   krill_mat **out)
{
    krill_status st = KRILL_OK, local = KRILL_OK;
    int64_t *offsets = NULL, mine[2] = {0, 0}, *pairs = NULL;
    int size = 1;

    KRILL_REQUIRE(out != NULL, "krill_dist_mat_create: mat is NULL");
    *out = NULL;
    KRILL_REQUIRE(ctx != NULL && ctx->comm != NULL, "krill_dist_mat_create: the context has no "
                  "communicator (make it with krill_mpi_ctx_create)");
    size = krill_ctx_size(ctx);
    if (!rows) local = krill_error(KRILL_ERR_ARG, "krill_dist_mat_create: rows is NULL");
    if (local == KRILL_OK) local = krill_csr_check(rows, "krill_dist_mat_create: rows");
    if (local == KRILL_OK)
        local = krill_alloc_n((void **)&pairs, 2 * (size_t)size, sizeof *pairs, 0, "row counts");
    if (local == KRILL_OK)
        local = krill_alloc_n((void **)&offsets, (size_t)size + 1, sizeof *offsets, 0,
                              "row offsets");
    KRILL_TRY(krill_ctx_agree(ctx, local));
    /* every rank's (rows, columns): 16 bytes from each */
    mine[0] = rows->n_rows;
    mine[1] = rows->n_cols;
    MPI_Allgather(mine, 2, MPI_INT64_T, pairs, 2, MPI_INT64_T, krill_dist_comm(ctx));
    offsets[0] = 0;
    for (int r = 0; r < size; r++) offsets[r + 1] = offsets[r] + pairs[2 * r];
    for (int r = 0; r < size; r++)
        KRILL_REQUIRE(pairs[2 * r + 1] == offsets[size], "krill_dist_mat_create: the ranks' rows "
                      "add up to %lld, but rank %d gives %lld columns (the matrix must be "
                      "square, columns in global numbering)", (long long)offsets[size], r,
                      (long long)pairs[2 * r + 1]);
    st = krill_dist_mat_build(ctx, rows, offsets, format, out);
cleanup:
    krill_free(pairs);
    krill_free(offsets);
    return st;
}

krill_status krill_dist_mat_layout(const krill_mat *a, krill_dist_layout *l)
{
    krill_status st = KRILL_OK;
    const krill_dist_mat *d = krill_dist_of(a, "krill_dist_mat_layout");
    KRILL_REQUIRE(l != NULL, "krill_dist_mat_layout: layout is NULL");
    if (!d) {
        st = KRILL_ERR_ARG;
        goto cleanup;
    }
    memset(l, 0, sizeof *l);
    l->n_global = d->n_global;
    l->row_start = d->row_start;
    l->n_local = d->n_local;
    l->nnz_diag = d->nnz_diag;
    l->nnz_off = d->nnz_off;
    l->halo = d->halo.n_halo;
    l->sent = d->halo.send_off[d->halo.n_send];
    l->recv_ranks = d->halo.n_recv;
    l->send_ranks = d->halo.n_send;
    l->permuted = d->permuted;
    l->halo_path = d->halo_nccl;
    l->halo_timed_ms[0] = d->halo_ms[0];
    l->halo_timed_ms[1] = d->halo_ms[1];
cleanup:
    return st;
}
