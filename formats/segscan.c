/* formats/segscan.c - the segmented-scan format ("segscan", the SpMV paper's section 4): the
 * host build that both devices share, and the CPU SpMV.
 *
 * Storage (krill_segscan_host, formats_impl.h). CSR's row offsets are replaced by a stream
 * of L = nnz + (empty rows), rounded up to a warp tile of 256, elements: value (8 bytes),
 * column (4) and a hint byte (1) each, the paper's row-head flags and per-element index
 * computed once here. Besides: 4 bytes per warp tile (the row heads before it, from which an
 * element's row follows), 12 bytes per span (a row with elements in two or more tiles of
 * 2048: its row and first and last tile) and 16 bytes per tile of partial sums that every
 * SpMV rewrites. Bytes stored: 13 L + 4 L / 256 + 12 S + 16 T for S spans and T tiles.
 *
 * The SpMV, y = alpha*A*x + beta*y, works tile by tile; on the CPU each thread takes tiles
 * (static schedule) and sums every row in stream order from 0 at its HEAD, so a row inside
 * one tile has the bits of krill_csr_spmv_ref. A row that a tile boundary cuts leaves one
 * partial sum per tile (frag_last of the tile where it starts, frag_first of each later
 * tile), and a second parallel loop adds them in tile order: y_r = alpha * sum + beta * y_r
 * (beta == 0: y_r is not read). Tiles are fixed, so the bits do not depend on the thread
 * count. The GPU (segscan.cu) uses the same stream with the paper's tree inside segments.
 *
 * Traffic per SpMV: 13 bytes per stream element, x gathered once per entry, y written once
 * per row (and read when beta != 0), 8 bytes per span-cut tile boundary. */
#include <stdio.h>
#include <omp.h>
#include <string.h>

#include "formats/formats_impl.h"

typedef struct segscan_cpu {
    krill_segscan_host h;
    double *frag_first;      /* n_tiles: partial sum of the tile's first row, when it began in
                                an earlier tile (the whole tile when one row fills it) */
    double *frag_last;       /* n_tiles: partial sum of the tile's last row, when it goes on
                                into the next tile and began in this one */
    int threads;
} segscan_cpu;

void krill_segscan_host_free(krill_segscan_host *h)
{
    krill_free(h->val);
    krill_free(h->col);
    krill_free(h->hint);
    krill_free(h->warp_heads);
    krill_free(h->span);
    krill_free(h->empty_pos);
    memset(h, 0, sizeof *h);
}

/* The spans, in row order: a tile boundary at stream position p that is not a row's HEAD
 * cuts the row holding p - 1 (start[r] <= p - 1 < start[r + 1], start[n_rows] = len: the last
 * row owns the padding), whose first and last tiles are recorded once. n_tiles - 1 binary
 * searches: cheap beside the stream. */
static void find_spans(krill_segscan_host *h, const int64_t *start)
{
    int64_t last_row = -1;
    for (int64_t t = 1; t < h->n_tiles; t++) {
        const int64_t p = t * KRILL_SEGSCAN_TILE;
        int64_t lo = 0, hi = h->n_rows;   /* start[lo] <= p - 1 < start[hi] */
        if (h->hint[p] & KRILL_SEGSCAN_HEAD) continue;
        while (hi - lo > 1) {
            const int64_t mid = lo + (hi - lo) / 2;
            if (start[mid] <= p - 1) lo = mid;
            else hi = mid;
        }
        if (lo == last_row) continue;
        last_row = lo;
        h->span[3 * h->n_span] = (int32_t)lo;
        h->span[3 * h->n_span + 1] = (int32_t)(start[lo] / KRILL_SEGSCAN_TILE);
        h->span[3 * h->n_span + 2] = (int32_t)((start[lo + 1] - 1) / KRILL_SEGSCAN_TILE);
        h->n_span++;
    }
}

/* Run indices (distance to the run's first element: the row's HEAD or the segment's start;
 * segments are independent, so they run in parallel) and the row heads before each warp
 * tile (each tile's heads counted in parallel, then their prefix sums). */
_Static_assert(KRILL_SEGSCAN_WARP_TILE % KRILL_SEGSCAN_SEG == 0,
               "a warp tile starts a segment: index_runs restarts the run index there");

static void index_runs(krill_segscan_host *h, int threads, int par)
{
    const int64_t n_warps = h->len / KRILL_SEGSCAN_WARP_TILE;
#pragma omp parallel for schedule(static) num_threads(threads) if (par)
    for (int64_t w = 0; w < n_warps; w++) {
        int32_t heads = 0;
        for (int64_t k = w * KRILL_SEGSCAN_WARP_TILE, start = k;
             k < (w + 1) * KRILL_SEGSCAN_WARP_TILE; k++) {
            if (k % KRILL_SEGSCAN_SEG == 0 || (h->hint[k] & KRILL_SEGSCAN_HEAD)) start = k;
            h->hint[k] |= (uint8_t)(k - start);
            heads += (h->hint[k] & KRILL_SEGSCAN_HEAD) != 0;
        }
        h->warp_heads[w] = heads;   /* this tile's heads, for now */
    }
    for (int64_t w = 0, before = 0; w < n_warps; w++) {
        const int32_t own = h->warp_heads[w];
        h->warp_heads[w] = (int32_t)before;
        before += own;
    }
}

/* Row i's stream positions start at start[i] = row_ptr[i] + (empty rows before i): a serial
 * prefix over the rows (8 bytes a row), then the rows' copies and hints in parallel, the
 * run indices as above and the spans from the tile boundaries. The arrays do not depend on
 * the thread count. */
krill_status krill_segscan_host_build(const krill_csr *a, int threads, krill_segscan_host *h)
{
    krill_status st = KRILL_OK;
    int64_t used, *start = NULL;
    const int par = a->nnz >= KRILL_BUILD_PARALLEL_MIN;
    memset(h, 0, sizeof *h);
    if (threads <= 0) threads = omp_get_max_threads();
    h->n_rows = a->n_rows;
    h->n_cols = a->n_cols;
    h->nnz = a->nnz;
    for (int32_t i = 0; i < a->n_rows; i++) h->n_empty += a->row_ptr[i + 1] == a->row_ptr[i];
    used = a->nnz + h->n_empty;
    h->len = (used + KRILL_SEGSCAN_WARP_TILE - 1) / KRILL_SEGSCAN_WARP_TILE *
             KRILL_SEGSCAN_WARP_TILE;
    h->n_tiles = (h->len + KRILL_SEGSCAN_TILE - 1) / KRILL_SEGSCAN_TILE;
    if (h->n_tiles > INT32_MAX) {
        st = krill_error(KRILL_ERR_UNSUPPORTED, "segscan: %lld stream elements make %lld tiles "
                         "of %d, more than %d", (long long)h->len, (long long)h->n_tiles,
                         KRILL_SEGSCAN_TILE, INT32_MAX);
        goto cleanup;
    }
    KRILL_ALLOC(h->val, h->len);
    KRILL_ALLOC(h->col, h->len);
    KRILL_ALLOC(h->hint, h->len);
    KRILL_ALLOC(h->warp_heads, h->len / KRILL_SEGSCAN_WARP_TILE);
    KRILL_ALLOC(h->span, 3 * h->n_tiles);   /* a tile boundary cuts at most one row */
    KRILL_ALLOC(h->empty_pos, h->n_empty);
    KRILL_ALLOC(start, (size_t)a->n_rows + 1);
    for (int32_t i = 0, e = 0; i < a->n_rows; i++) {
        start[i] = a->row_ptr[i] + e;
        if (a->row_ptr[i + 1] == a->row_ptr[i]) h->empty_pos[e++] = start[i];
    }
    start[a->n_rows] = h->len;   /* the last row owns the padding */

#pragma omp parallel for schedule(static) num_threads(threads) if (par)
    for (int32_t i = 0; i < a->n_rows; i++) {
        const int64_t lo = a->row_ptr[i], count = a->row_ptr[i + 1] - lo, pos = start[i];
        if (count == 0) {
            h->val[pos] = 0.0;
            h->col[pos] = 0;
            h->hint[pos] = KRILL_SEGSCAN_HEAD | KRILL_SEGSCAN_TAIL | KRILL_SEGSCAN_PAD;
        } else {
            memcpy(h->val + pos, a->val + lo, (size_t)count * sizeof *h->val);
            memcpy(h->col + pos, a->col + lo, (size_t)count * sizeof *h->col);
            memset(h->hint + pos, 0, (size_t)count);
            h->hint[pos] |= KRILL_SEGSCAN_HEAD;
            h->hint[pos + count - 1] |= KRILL_SEGSCAN_TAIL;
        }
    }
    for (int64_t pos = used; pos < h->len; pos++) {   /* zeros up to a whole warp tile */
        h->val[pos] = 0.0;
        h->col[pos] = 0;
        h->hint[pos] = KRILL_SEGSCAN_PAD;
    }
    if (h->len > used) {   /* the last row's TAIL moves to the stream's end */
        h->hint[used - 1] &= (uint8_t)~KRILL_SEGSCAN_TAIL;
        h->hint[h->len - 1] |= KRILL_SEGSCAN_TAIL;
    }
    index_runs(h, threads, par);
    find_spans(h, start);

    krill_csr_row_stats(a, &h->stats);
    h->stats.bytes = (size_t)h->len * (sizeof(double) + sizeof(int32_t) + 1) +
                     (size_t)(h->len / KRILL_SEGSCAN_WARP_TILE) * sizeof(int32_t) +
                     (size_t)h->n_span * 3 * sizeof(int32_t) +
                     (size_t)h->n_tiles * 2 * sizeof(double);
cleanup:
    krill_free(start);
    if (st != KRILL_OK) krill_segscan_host_free(h);
    return st;
}

void krill_segscan_host_scatter(const krill_segscan_host *h, const double *values, double *val)
{
    int64_t pos = 0, src = 0;
    for (int64_t e = 0; e <= h->n_empty; e++) {
        const int64_t stop = e < h->n_empty ? h->empty_pos[e] : h->nnz + h->n_empty;
        if (stop > pos) memcpy(val + pos, values + src, (size_t)(stop - pos) * sizeof *val);
        src += stop - pos;
        pos = stop;
        if (e < h->n_empty) val[pos++] = 0.0;
    }
    for (; pos < h->len; pos++) val[pos] = 0.0;
}

/* The stream back to CSR: a HEAD starts the next row, every element that is not PAD is an
 * entry of the current row, in stream order (the CSR order of the build). Rows and entries
 * are counted against n_rows and nnz as they come, so a stream that does not match its
 * sizes is an internal error, never a write past the arrays. */
krill_status krill_segscan_host_to_csr(const krill_segscan_host *h, krill_csr **csr)
{
    krill_status st = KRILL_OK;
    krill_csr *a = NULL;
    int64_t row = -1, p = 0, k = 0;
    *csr = NULL;
    KRILL_TRY(krill_csr_create((int32_t)h->n_rows, (int32_t)h->n_cols, h->nnz, &a));
    for (; k < h->len; k++) {
        const unsigned hk = h->hint[k];
        if (hk & KRILL_SEGSCAN_HEAD) {
            if (row + 1 == h->n_rows) break;   /* one row too many */
            a->row_ptr[++row] = p;
        }
        if (hk & KRILL_SEGSCAN_PAD) continue;
        if (row < 0 || p == h->nnz) break;     /* an entry before the first row, or too many */
        a->col[p] = h->col[k];
        a->val[p++] = h->val[k];
    }
    if (k != h->len || row + 1 != h->n_rows || p != h->nnz) {
        st = krill_error(KRILL_ERR_INTERNAL, "segscan: the stream gave %lld rows and %lld "
                         "entries up to position %lld of %lld, the matrix has %lld and %lld",
                         (long long)(row + 1), (long long)p, (long long)k, (long long)h->len,
                         (long long)h->n_rows, (long long)h->nnz);
        goto cleanup;
    }
    a->row_ptr[h->n_rows] = p;
    *csr = a;
    a = NULL;
cleanup:
    krill_csr_destroy(&a);
    return st;
}

static void segscan_destroy(krill_ctx *ctx, void *impl)
{
    segscan_cpu *m = impl;
    (void)ctx;
    if (!m) return;
    krill_segscan_host_free(&m->h);
    krill_free(m->frag_first);
    krill_free(m->frag_last);
    krill_free(m);
}

static krill_status segscan_build(krill_ctx *ctx, const krill_csr *csr, const char *param,
                                  void **impl)
{
    krill_status st = KRILL_OK;
    segscan_cpu *m = NULL;
    KRILL_REQUIRE(param == NULL, "format 'segscan:%s': the format takes no parameter", param);
    KRILL_CALLOC(m, 1);
    m->threads = ctx->threads > 0 ? ctx->threads : 1;
    KRILL_TRY(krill_segscan_host_build(csr, ctx->threads, &m->h));
    KRILL_ALLOC(m->frag_first, m->h.n_tiles);
    KRILL_ALLOC(m->frag_last, m->h.n_tiles);
    *impl = m;
    m = NULL;
cleanup:
    segscan_destroy(ctx, m);
    return st;
}

static double y_new(double alpha, double s, double beta, double y)
{
    return beta == 0.0 ? alpha * s : alpha * s + beta * y;
}

/* Tile t of the stream: rows that end in it get y; a row begun in an earlier tile leaves
 * its partial sum in frag_first[t], one going on into the next tile in frag_last[t]. The
 * PAD zeros are skipped, never multiplied (0 * Inf would be NaN). */
static void tile_spmv(const segscan_cpu *m, int64_t t, double alpha, const double *x,
                      double beta, double *y)
{
    const krill_segscan_host *h = &m->h;
    const uint8_t *hint = h->hint;
    const int32_t *col = h->col;
    const double *val = h->val;
    const int64_t lo = t * KRILL_SEGSCAN_TILE;
    const int64_t hi = lo + KRILL_SEGSCAN_TILE < h->len ? lo + KRILL_SEGSCAN_TILE : h->len;
    int32_t row = h->warp_heads[lo / KRILL_SEGSCAN_WARP_TILE] - 1;   /* before the first HEAD */
    int open = !(hint[lo] & KRILL_SEGSCAN_HEAD);
    double s = 0.0;
    for (int64_t k = lo; k < hi; k++) {
        const unsigned hk = hint[k];
        if (hk & KRILL_SEGSCAN_HEAD) {
            row++;
            s = 0.0;
        }
        if (!(hk & KRILL_SEGSCAN_PAD)) s += val[k] * x[col[k]];
        if (hk & KRILL_SEGSCAN_TAIL) {
            if (open) m->frag_first[t] = s;
            else y[row] = y_new(alpha, s, beta, y[row]);
            open = 0;
        }
    }
    if (!(hint[hi - 1] & KRILL_SEGSCAN_TAIL)) {
        if (open) m->frag_first[t] = s;
        else m->frag_last[t] = s;
    }
}

static krill_status segscan_spmv(krill_ctx *ctx, const void *impl, double alpha,
                                 const double *x, double beta, double *y)
{
    const segscan_cpu *m = impl;
    const krill_segscan_host *h = &m->h;
    (void)ctx;
#pragma omp parallel num_threads(m->threads)
    {
#pragma omp for schedule(static)
        for (int64_t t = 0; t < h->n_tiles; t++) tile_spmv(m, t, alpha, x, beta, y);
        /* the implied barrier: every tile's partial sums are written */
#pragma omp for schedule(static)
        for (int64_t i = 0; i < h->n_span; i++) {
            const int32_t row = h->span[3 * i], a = h->span[3 * i + 1], b = h->span[3 * i + 2];
            double s = m->frag_last[a];
            for (int32_t t = a + 1; t <= b; t++) s += m->frag_first[t];
            y[row] = y_new(alpha, s, beta, y[row]);
        }
    }
    return KRILL_OK;
}

/* the row visitor of spmv_repro, keyed by the stream position of the row's HEAD: its
 * elements up to its TAIL, the PAD zeros skipped */
static void segscan_row_terms(const void *impl, int64_t head, const double *x,
                              krill_row_sink *sink)
{
    const krill_segscan_host *h = &((const segscan_cpu *)impl)->h;
    unsigned hk;
    int64_t k = head;
    do {
        hk = h->hint[k];
        if (!(hk & KRILL_SEGSCAN_PAD)) krill_row_sink_term(sink, h->val[k], x[h->col[k]]);
        k++;
    } while (!(hk & KRILL_SEGSCAN_TAIL));
}

/* Each row by the warp tile that holds its HEAD (every row has one; warp tile w's first is
 * row warp_heads[w]), warp tiles handed out dynamically, 8 (2048 elements) at a time. */
static krill_status segscan_spmv_repro(krill_ctx *ctx, const void *impl, double alpha,
                                       const double *x, double beta, double *y)
{
    const segscan_cpu *m = impl;
    const krill_segscan_host *h = &m->h;
    const int64_t n_warp_tiles = h->len / KRILL_SEGSCAN_WARP_TILE;
    (void)ctx;
#pragma omp parallel for schedule(dynamic, 8) num_threads(m->threads)
    for (int64_t w = 0; w < n_warp_tiles; w++) {
        int64_t acc[KRILL_OZ_MAX_DIAG];
        int64_t row = h->warp_heads[w];
        for (int64_t k = w * KRILL_SEGSCAN_WARP_TILE; k < (w + 1) * KRILL_SEGSCAN_WARP_TILE; k++) {
            if (!(h->hint[k] & KRILL_SEGSCAN_HEAD)) continue;
            const double s = krill_row_sum_repro(segscan_row_terms, m, k, x, acc);
            y[row] = beta == 0.0 ? krill_oz_axpby(alpha, s, 0.0, 0.0)
                                 : krill_oz_axpby(alpha, s, beta, y[row]);
            row++;
        }
    }
    return KRILL_OK;
}

static krill_status segscan_update_values(krill_ctx *ctx, void *impl, const double *values)
{
    segscan_cpu *m = impl;
    (void)ctx;
    krill_segscan_host_scatter(&m->h, values, m->h.val);
    return KRILL_OK;
}

static krill_status segscan_diagonal(krill_ctx *ctx, const void *impl, double *d)
{
    const krill_segscan_host *h = &((const segscan_cpu *)impl)->h;
    (void)ctx;
    int32_t row = -1;
    for (int64_t k = 0; k < h->len; k++) {
        if (h->hint[k] & KRILL_SEGSCAN_HEAD) d[++row] = 0.0;
        if (!(h->hint[k] & KRILL_SEGSCAN_PAD) && h->col[k] == row) d[row] = h->val[k];
    }
    return KRILL_OK;
}

static krill_status segscan_to_csr(krill_ctx *ctx, const void *impl, krill_csr **csr)
{
    (void)ctx;
    return krill_segscan_host_to_csr(&((const segscan_cpu *)impl)->h, csr);
}

static void segscan_stats(const void *impl, krill_format_stats *s)
{
    const segscan_cpu *m = impl;
    *s = m->h.stats;
    snprintf(s->variant, sizeof s->variant, "tiles:%d%s", KRILL_SEGSCAN_TILE,
             m->h.n_span > 0 ? "+spans" : "");
}

const krill_format_ops krill_segscan_cpu_ops = {
    .name = "segscan",
    .build = segscan_build,
    .spmv = segscan_spmv,
    .spmv_repro = segscan_spmv_repro,
    .update_values = segscan_update_values,
    .diagonal = segscan_diagonal,
    .to_csr = segscan_to_csr,
    .stats = segscan_stats,
    .destroy = segscan_destroy,
};
