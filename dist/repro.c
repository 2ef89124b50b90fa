/* dist/repro.c - the reproducible SpMV of a distributed matrix (a context in a reproducible
 * mode). It cannot add two separately rounded halves, D x_own and B x_ghost: y_i is the
 * correctly rounded sum of all of row i's products (formats/spmv_repro.c), a function of
 * that multiset alone, which is what makes it equal to the serial SpMV's bits on any
 * partition. So each row is summed whole, both blocks' entries in one pass, from a cache
 * made once from the blocks at the first reproducible SpMV (plain solves never pay its
 * memory):
 *   CPU rank: one host CSR of the whole rows; the ghosts first, then every row.
 *   GPU rank: the interior rows (no ghost column) and the boundary rows as two sets of CSR
 *   arrays in device memory, each row's sum going to its row of y. The interior rows
 *   multiply x itself beside the halo exchange (mat.c's krill_dist_gpu_exchange), with x's
 *   copy into [x; ghosts]; after the ghosts' copy the boundary rows multiply [x; ghosts].
 *   Per SpMV besides the rows: 8 n_local bytes copied on the device when there are boundary
 *   rows, and 8 n_halo for the ghosts. Which set a row is in changes no bit of it. */
#include <string.h>

#include "dist/dist_impl.h"

/* Row i of the whole rows with x's own entries and the ghosts */
typedef struct whole_rows_view {
    const krill_csr *a;
    const double *ghost;
    int32_t n_own;
} whole_rows_view;

static void whole_row_terms(const void *impl, int64_t i, const double *x, krill_row_sink *sink)
{
    const whole_rows_view *v = impl;
    const krill_csr *a = v->a;
    for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++) {
        const int32_t c = a->col[p];
        krill_row_sink_term(sink, a->val[p], c < v->n_own ? x[c] : v->ghost[c - v->n_own]);
    }
}

/* The whole rows from the two blocks: row i's diagonal-block entries, then its off-rank
 * ones shifted by n_local. Local. */
static krill_status make_whole_rows(krill_dist_mat *d, krill_csr **out)
{
    krill_status st = KRILL_OK;
    krill_csr *dc = NULL, *oc = NULL, *w = NULL;
    const int32_t n = (int32_t)d->n_local;
    int64_t k = 0;
    if (d->diag) KRILL_TRY(krill_mat_to_csr(d->diag, &dc));
    if (d->off) KRILL_TRY(krill_mat_to_csr(d->off, &oc));
    KRILL_TRY(krill_csr_create(n, (int32_t)(n + d->halo.n_halo), d->nnz_diag + d->nnz_off, &w));
    for (int32_t i = 0; i < n; i++) {
        for (int64_t p = dc ? dc->row_ptr[i] : 0; dc && p < dc->row_ptr[i + 1]; p++, k++) {
            w->col[k] = dc->col[p];
            w->val[k] = dc->val[p];
        }
        for (int64_t p = oc ? oc->row_ptr[i] : 0; oc && p < oc->row_ptr[i + 1]; p++, k++) {
            w->col[k] = n + oc->col[p];
            w->val[k] = oc->val[p];
        }
        w->row_ptr[i + 1] = k;
    }
    *out = w;
    w = NULL;
cleanup:
    krill_csr_destroy(&dc);
    krill_csr_destroy(&oc);
    krill_csr_destroy(&w);
    return st;
}

#ifdef KRILL_HAVE_CUDA
static void rows_dev_free(krill_ctx *ctx, krill_dist_rows_dev *r)
{
    krill_mem_free(ctx, r->row_ptr);
    krill_mem_free(ctx, r->col);
    krill_mem_free(ctx, r->val);
    krill_mem_free(ctx, r->out_rows);
    memset(r, 0, sizeof *r);
}

/* The rows of w with (boundary) or without (interior) a ghost column, their entries in w's
 * order, as device arrays in r; a row too long for the GPU's exact row sum is refused here,
 * where the ranks agree (whole_make's caller), not at the SpMV, where only this rank would
 * know. Local. */
static krill_status rows_dev_make(krill_ctx *ctx, const krill_csr *w, int boundary,
                                  krill_dist_rows_dev *r)
{
    krill_status st = KRILL_OK;
    const int32_t n = w->n_rows;
    int64_t *rp = NULL;
    int32_t *rp32 = NULL, *col = NULL, *out = NULL;
    double *val = NULL;
    int64_t m = 0, k = 0;
    memset(r, 0, sizeof *r);
    for (int32_t i = 0; i < n; i++) {   /* a row's ghost entries come last (make_whole_rows) */
        const int64_t e = w->row_ptr[i + 1];
        if ((e > w->row_ptr[i] && w->col[e - 1] >= n) == boundary) {
            m++;
            k += e - w->row_ptr[i];
        }
    }
    if (m == 0) goto cleanup;
    KRILL_ALLOC(rp, m + 1);
    KRILL_ALLOC(out, m);
    KRILL_ALLOC(col, k > 0 ? k : 1);
    KRILL_ALLOC(val, k > 0 ? k : 1);
    rp[0] = 0;
    m = k = 0;
    for (int32_t i = 0; i < n; i++) {
        const int64_t b = w->row_ptr[i], e = w->row_ptr[i + 1];
        if ((e > b && w->col[e - 1] >= n) != boundary) continue;
        memcpy(col + k, w->col + b, (size_t)(e - b) * sizeof *col);
        memcpy(val + k, w->val + b, (size_t)(e - b) * sizeof *val);
        k += e - b;
        if (e - b > r->max_row_nnz) r->max_row_nnz = e - b;
        out[m++] = i;
        rp[m] = k;
    }
    r->n_rows = m;
    r->nnz = k;
    r->wide = k > INT32_MAX;
    KRILL_TRY(krill_oz_spmv_fits("distributed matrix", r->max_row_nnz));   /* here, agreed */
    if (!r->wide) {   /* 32-bit offsets, as the csr format keeps them */
        KRILL_ALLOC(rp32, m + 1);
        for (int64_t i = 0; i <= m; i++) rp32[i] = (int32_t)rp[i];
    }
    KRILL_TRY(krill_mem_alloc(ctx, &r->row_ptr, (size_t)(m + 1) * (r->wide ? 8 : 4),
                              "the reproducible SpMV's whole rows"));
    KRILL_TRY(krill_mem_alloc(ctx, (void **)&r->col, (size_t)(k > 0 ? k : 1) * sizeof *col,
                              "the reproducible SpMV's whole rows"));
    KRILL_TRY(krill_mem_alloc(ctx, (void **)&r->val, (size_t)(k > 0 ? k : 1) * sizeof *val,
                              "the reproducible SpMV's whole rows"));
    KRILL_TRY(krill_mem_alloc(ctx, (void **)&r->out_rows, (size_t)m * sizeof *out,
                              "the reproducible SpMV's whole rows"));
    KRILL_TRY(krill_mem_upload(ctx, r->row_ptr, r->wide ? (void *)rp : (void *)rp32,
                               (size_t)(m + 1) * (r->wide ? 8 : 4)));
    if (k > 0) {
        KRILL_TRY(krill_mem_upload(ctx, r->col, col, (size_t)k * sizeof *col));
        KRILL_TRY(krill_mem_upload(ctx, r->val, val, (size_t)k * sizeof *val));
    }
    KRILL_TRY(krill_mem_upload(ctx, r->out_rows, out, (size_t)m * sizeof *out));
cleanup:
    if (st != KRILL_OK) rows_dev_free(ctx, r);
    krill_free(rp);
    krill_free(rp32);
    krill_free(col);
    krill_free(val);
    krill_free(out);
    return st;
}

/* y's rows of r: y = alpha A_r v + beta y, every row correctly rounded */
static krill_status rows_dev_spmv(krill_ctx *ctx, const krill_dist_rows_dev *r, double alpha,
                                  const double *v, double beta, double *y)
{
    if (r->n_rows == 0) return KRILL_OK;
    return krill_csr_cuda_spmv_repro(ctx, "dist", r->n_rows, r->max_row_nnz,
                                     (double)r->nnz / (double)r->n_rows, r->row_ptr, r->wide,
                                     r->col, 0, r->val, r->out_rows, alpha, v, beta, y);
}

/* Beside the exchange: the interior rows from x, then x into [x; ghosts] for the boundary
 * rows (when there are any) */
static krill_status gpu_interior(krill_ctx *ctx, const krill_dist_local_work *w)
{
    krill_status st = KRILL_OK;
    const krill_dist_mat *d = w->d;
    KRILL_TRY(rows_dev_spmv(ctx, &d->whole_in, w->alpha, w->x, w->beta, w->y));
    if (d->whole_bd.n_rows > 0)
        KRILL_TRY(krill_mem_copy(ctx, d->whole_x, w->x, (size_t)d->n_local * sizeof *w->x));
cleanup:
    return st;
}
#endif

/* The cache, made on every rank or on none (agreed, so it stays in step) */
static int whole_ready(const krill_dist_mat *d)
{
    return d->halo.gpu ? d->whole_x != NULL : d->whole_rows != NULL;
}

void krill_dist_whole_drop(krill_dist_mat *d)
{
    krill_csr_destroy(&d->whole_rows);
#ifdef KRILL_HAVE_CUDA
    rows_dev_free(d->ctx, &d->whole_in);
    rows_dev_free(d->ctx, &d->whole_bd);
#endif
    krill_mem_free(d->ctx, d->whole_x);
    d->whole_x = NULL;
}

static krill_status whole_make(krill_ctx *ctx, krill_dist_mat *d)
{
    krill_status st = make_whole_rows(d, &d->whole_rows);
#ifdef KRILL_HAVE_CUDA
    if (st == KRILL_OK && d->halo.gpu) {
        st = rows_dev_make(ctx, d->whole_rows, 0, &d->whole_in);
        if (st == KRILL_OK) st = rows_dev_make(ctx, d->whole_rows, 1, &d->whole_bd);
        if (st == KRILL_OK) {   /* [x; ghosts] for the boundary rows; one entry (the cache's
                                   mark, whole_ready) on a rank without them */
            const int64_t n_x = d->whole_bd.n_rows > 0 ? d->n_local + d->halo.n_halo : 1;
            st = krill_mem_alloc(ctx, (void **)&d->whole_x, (size_t)n_x * sizeof *d->whole_x,
                                 "the reproducible SpMV's vector [x; ghosts]");
        }
        krill_csr_destroy(&d->whole_rows);   /* on the device now */
    }
#else
    (void)ctx;
#endif
    return st;
}

/* y = alpha A x + beta y, every row correctly rounded (the file comment) */
krill_status krill_dist_spmv_repro(krill_ctx *ctx, const void *impl, double alpha,
                                   const double *x, double beta, double *y)
{
    krill_status st = KRILL_OK;
    krill_dist_mat *d = (krill_dist_mat *)impl;   /* the whole rows are a cache */
    whole_rows_view v;
    double t0;
    if (!whole_ready(d)) {
        st = krill_ctx_agree(ctx, whole_make(ctx, d));
        if (st != KRILL_OK) {
            krill_dist_whole_drop(d);
            goto cleanup;
        }
    }
#ifdef KRILL_HAVE_CUDA
    if (d->halo.gpu) {
        const krill_dist_local_work work = {gpu_interior, d, alpha, beta, x, y};
        const double *ghosts = NULL;
        KRILL_TRY(krill_dist_gpu_exchange(ctx, d, x, &work, &ghosts));
        if (d->halo.n_halo > 0 && d->whole_bd.n_rows > 0)
            KRILL_TRY(krill_mem_copy(ctx, d->whole_x + d->n_local, ghosts,
                                     (size_t)d->halo.n_halo * sizeof *ghosts));
        KRILL_TRY(rows_dev_spmv(ctx, &d->whole_bd, alpha, d->whole_x, beta, y));
        goto cleanup;
    }
#endif
    t0 = krill_wtime();
    KRILL_TRY(krill_halo_start(&d->halo, krill_dist_comm(ctx), x));
    KRILL_TRY(krill_halo_finish(&d->halo));
    krill_ctx_add_comm_time(ctx, krill_wtime() - t0);
    v.a = d->whole_rows;
    v.ghost = d->halo.recv_buf;
    v.n_own = (int32_t)d->n_local;
    krill_spmv_repro_rows(whole_row_terms, &v, d->n_local, krill_ctx_threads(ctx), alpha, x,
                          beta, y);
cleanup:
    return st;
}
