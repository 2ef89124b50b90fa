/* formats/segscan.cu - the segmented-scan SpMV on the GPU (the SpMV paper, section 4): the
 * "segscan" table for CUDA contexts.
 *
 * Data: the stream that formats/segscan.c builds (values, columns, hint bytes with the
 * run index and the HEAD / TAIL / PAD flags), uploaded as it is; 13 bytes per element plus
 * 4 per warp tile, 12 per span and 16 per tile (formats/segscan.c has the formula).
 *
 * One SpMV is one kernel, plus a small second one only when some row crosses a tile:
 *
 * 1. segscan_kernel: a block of 8 warps per tile of 2048 elements; each warp takes a warp
 *    tile of 8 consecutive segments of 32 (one element per lane), and first issues all its
 *    loads (values, columns and hints streamed with an evict-first hint, so that x stays in
 *    the L2 cache; x gathered only where the element is not PAD), then per segment:
 *    - the paper's halving-threshold tree on the products p: for t = 16, 8, 4, 2, 1 the
 *      element with run index in [t, 2t) adds its value to the element t places before it.
 *      As a pull through __shfl_down_sync: every lane sends v (or 0 unless its index is in
 *      [t, 2t)) and adds what arrives from t lanes up: no branch, only selects. After the
 *      five steps the first element of each run holds the run's sum (a binary tree: the
 *      element of index i is added into i with its highest bit cleared);
 *    - the carry between segments: lane 0's run continues the row of the previous segment
 *      unless lane 0 is a HEAD; it adds the carry (the previous segment's last run sum,
 *      broadcast by a shuffle) first, carry + v, so a row is added left to right over
 *      segments. A run ends its row unless it is the segment's last and lane 31 is no TAIL;
 *      then its sum is the next carry;
 *    - each run that ends a row writes y_r = alpha * sum + beta * y_r (beta == 0: y_r not
 *      read); r = (row heads before the warp tile) + (heads up to the lane, by ballot and
 *      popc) - 1.
 *    The warp tile's first row, when it began before the tile, and its last row, when it
 *    goes on after it, leave partial sums in shared memory; after a barrier, lane w of warp
 *    0 finishes the first row of warp tile w by adding, left to right, the last partial of
 *    the nearest warp tile before it that has a HEAD and the first partials of the tiles in
 *    between. Rows that cross the tile's edge leave their partials in frag_first (the row
 *    the tile began inside; the whole tile when one row fills it) and frag_last (the row
 *    that goes on into the next tile).
 * 2. segscan_fixup_kernel (only when spans exist, S of them): one warp per span adds its
 *    partials (frag_last of its first tile, frag_first of each later one) in a fixed order
 *    and writes y_r. This replaces the paper's recursive scan of the carries: a row that
 *    fills whole tiles (band1x's first row: about 1000 of them) is one warp-wide sum.
 * Every sum is in an order fixed by the data, never by timing: the same bits on every run.
 * No atomics. The tree adds a row in another order than the CSR reference: agreement within
 * a few ulps times the row length.
 *
 * Cost per element: 13 bytes of matrix read once, 8 of x gathered (cached when columns
 * repeat), 5 shuffle-add steps of compute; per row one y write; per span 8 bytes per tile it
 * covers. Nothing depends on the row lengths, which is the paper's point: a matrix with one
 * row of N entries (band1x) costs what its nonzeros cost, not the time of one long row. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "formats/formats_impl.h"
#include "kernels/kernels_impl.cuh"
#include "ozaki/ozaki_row.cuh"

namespace {

static_assert(KRILL_SEGSCAN_SEG == 32, "a segment is one warp, one element per lane");
static_assert(KRILL_SEGSCAN_BLOCK_WARPS == KRILL_CUDA_WARPS,
              "a tile is one block of KRILL_CUDA_THREADS threads");
static_assert(KRILL_SEGSCAN_INDEX == KRILL_SEGSCAN_SEG - 1, "run indices are 0 .. 31");

constexpr unsigned FULL_WARP = 0xffffffffu;

/* Partial sums in flight per lane of the fix-up: a span of up to 32 x 8 = 256 tiles is
 * loaded in one round; band1x's first row (about 1000 tiles) in four. */
constexpr int FIXUP_BATCH = 8;

/* What a warp tile leaves for the tile's finishing step (bits of warp_kind). */
constexpr unsigned OPEN_IN = 1u;    /* its first element is not a HEAD: the row began before */
constexpr unsigned HAS_HEAD = 2u;   /* some row begins in it */
constexpr unsigned OPEN_OUT = 4u;   /* its last element is not a TAIL: the row goes on */

struct segscan_gpu {
    krill_segscan_host host;  /* sizes, stats and empty_pos (the stream arrays are released
                                 after the upload) */
    double *val;              /* device, len */
    int32_t *col;             /* device, len */
    uint8_t *hint;            /* device, len */
    int32_t *warp_heads;      /* device, len / KRILL_SEGSCAN_WARP_TILE */
    int32_t *span;            /* device, 3 n_span */
    double *frag_first;       /* device, n_tiles: rewritten by every SpMV */
    double *frag_last;        /* device, n_tiles */
};

__device__ __forceinline__ double y_new(double alpha, double s, double beta, const double *y)
{
    return beta == 0.0 ? __dmul_rn(alpha, s) : __dadd_rn(__dmul_rn(alpha, s), __dmul_rn(beta, *y));
}

/* Sum, left to right, the partial sums of the row that ends in warp tile `last_w` (or goes on
 * past it) from the nearest warp tile at or before `from` that has a HEAD; *began_here = 0
 * when no warp tile of this tile has one (the row began in an earlier tile). */
__device__ double chain_sum(int from, int last_w, const unsigned *kind, const double *first_part,
                            const double *last_part, bool *began_here)
{
    int a = from;
    while (a >= 0 && !(kind[a] & HAS_HEAD)) a--;
    *began_here = a >= 0;
    double s = a >= 0 ? last_part[a] : first_part[0];
    for (int k = a >= 0 ? a + 1 : 1; k <= last_w; k++) s = __dadd_rn(s, first_part[k]);
    return s;
}

__global__ void __launch_bounds__(KRILL_CUDA_THREADS)
segscan_kernel(int64_t len, const double *__restrict__ val, const int32_t *__restrict__ col,
               const uint8_t *__restrict__ hint, const int32_t *__restrict__ warp_heads,
               double alpha, const double *__restrict__ x, double beta, double *__restrict__ y,
               double *__restrict__ frag_first, double *__restrict__ frag_last)
{
    constexpr int SEG = KRILL_SEGSCAN_SEG, SEGS = KRILL_SEGSCAN_WARP_SEGS;
    constexpr int WARPS = KRILL_SEGSCAN_BLOCK_WARPS;
    __shared__ unsigned warp_kind[WARPS];
    __shared__ double first_part[WARPS];   /* the first row's partial (OPEN_IN) */
    __shared__ double last_part[WARPS];    /* the last row's partial (HAS_HEAD and OPEN_OUT) */
    __shared__ int32_t first_row[WARPS];   /* the row the warp tile began inside (OPEN_IN) */

    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int64_t tile_base = (int64_t)blockIdx.x * KRILL_SEGSCAN_TILE;
    const int64_t warp_tiles_left = (len - tile_base) / KRILL_SEGSCAN_WARP_TILE;
    const int n_warps = warp_tiles_left < WARPS ? (int)warp_tiles_left : WARPS;

    if (w < n_warps) {   /* uniform over the warp */
        const int64_t base = tile_base + (int64_t)w * KRILL_SEGSCAN_WARP_TILE;
        double p[SEGS];
        unsigned h[SEGS];
        int32_t c[SEGS];
#pragma unroll
        for (int s = 0; s < SEGS; s++) {
            const int64_t k = base + s * SEG + lane;
            h[s] = __ldcs(hint + k);
            c[s] = __ldcs(col + k);
            p[s] = __ldcs(val + k);
        }
#pragma unroll
        for (int s = 0; s < SEGS; s++) {
            const double xv = (h[s] & KRILL_SEGSCAN_PAD) ? 0.0 : __ldg(x + c[s]);
            p[s] = __dmul_rn(p[s], xv);
        }

        const unsigned upto_lane = (2u << lane) - 1u;   /* lanes 0 .. lane (all for lane 31) */
        int32_t heads_before = warp_heads[base / KRILL_SEGSCAN_WARP_TILE];
        const int32_t row_in = heads_before - 1;        /* the row of element 0 if OPEN_IN */
        const bool open_in = !(__shfl_sync(FULL_WARP, h[0], 0) & KRILL_SEGSCAN_HEAD);
        bool first_open = open_in;   /* the warp tile's first row has not ended yet */
        bool ends = false;           /* the last segment's lane 31 is a TAIL */
        unsigned any_head = 0u;
        double carry = 0.0, first_sum = 0.0;
#pragma unroll
        for (int s = 0; s < SEGS; s++) {
            const unsigned idx = h[s] & KRILL_SEGSCAN_INDEX;
            double v = p[s];
#pragma unroll
            for (int t = SEG / 2; t > 0; t >>= 1) {
                const double send = (idx & ~(t - 1u)) == (unsigned)t ? v : 0.0;   /* [t, 2t) */
                const double got = __shfl_down_sync(FULL_WARP, send, t);
                v = __dadd_rn(v, lane + t < SEG ? got : 0.0);
            }
            const unsigned heads = __ballot_sync(FULL_WARP, h[s] & KRILL_SEGSCAN_HEAD);
            const unsigned starts = heads | 1u;               /* first lanes of the runs */
            const int last = 31 - __clz(starts);               /* the last run's first lane */
            ends = (__ballot_sync(FULL_WARP, h[s] & KRILL_SEGSCAN_TAIL) >> 31) != 0u;
            const bool cont = !(heads & 1u);                   /* lane 0's run continues a row */
            if (lane == 0 && cont) v = __dadd_rn(carry, v);
            const bool defer = first_open && cont;             /* ... the tile's first row */
            const bool run_ends_row = lane != last || ends;
            if (((starts >> lane) & 1u) && run_ends_row && !(lane == 0 && defer)) {
                const int32_t r = heads_before + __popc(heads & upto_lane) - 1;
                y[r] = y_new(alpha, v, beta, y + r);
            }
            if (defer) {   /* uniform branches: the shuffles only where their value is used */
                const double run0 = __shfl_sync(FULL_WARP, v, 0);
                if (last != 0 || ends) {
                    first_sum = run0;
                    first_open = false;
                }
            }
            if (!ends) carry = __shfl_sync(FULL_WARP, v, last);
            heads_before += __popc(heads);
            any_head |= heads;
        }
        if (lane == 0) {
            warp_kind[w] = (open_in ? OPEN_IN : 0u) | (any_head ? HAS_HEAD : 0u) |
                           (ends ? 0u : OPEN_OUT);
            first_part[w] = first_open ? carry : first_sum;   /* one row fills it: the total */
            last_part[w] = carry;
            first_row[w] = row_in;
        }
    }
    __syncthreads();

    if (threadIdx.x < (unsigned)n_warps) {   /* warp 0, one lane per warp tile */
        const int t = threadIdx.x;
        const unsigned kind = warp_kind[t];
        bool began_here;
        if ((kind & OPEN_IN) && ((kind & HAS_HEAD) || !(kind & OPEN_OUT))) {
            /* warp tile t's first row began before it and ends in it */
            const double s = chain_sum(t - 1, t, warp_kind, first_part, last_part, &began_here);
            if (began_here) y[first_row[t]] = y_new(alpha, s, beta, y + first_row[t]);
            else frag_first[blockIdx.x] = s;
        }
        if (t == n_warps - 1 && (kind & OPEN_OUT)) {
            /* the tile's last row goes on into the next tile */
            const double s = chain_sum(t, t, warp_kind, first_part, last_part, &began_here);
            if (began_here) frag_last[blockIdx.x] = s;
            else frag_first[blockIdx.x] = s;   /* no HEAD in the whole tile */
        }
    }
}

/* y_r for each span (row, first tile a, last tile b): the partials frag_last[a],
 * frag_first[a + 1], ..., frag_first[b], lane-strided then a warp tree; one warp per span. */
__global__ void __launch_bounds__(KRILL_CUDA_THREADS)
segscan_fixup_kernel(int64_t n_span, const int32_t *__restrict__ span,
                     const double *__restrict__ frag_first, const double *__restrict__ frag_last,
                     double alpha, double beta, double *__restrict__ y)
{
    const int lane = threadIdx.x & 31;
    const int64_t warp = ((int64_t)blockIdx.x * KRILL_CUDA_THREADS + threadIdx.x) / 32;
    const int64_t warps = (int64_t)gridDim.x * KRILL_CUDA_WARPS;
    for (int64_t i = warp; i < n_span; i += warps) {   /* uniform over the warp */
        const int32_t r = span[3 * i], a = span[3 * i + 1], b = span[3 * i + 2];
        const int64_t count = (int64_t)b - a + 1;   /* partial q: frag_last[a] for q = 0 */
        double s = 0.0;
        for (int64_t q0 = 0; q0 < count; q0 += 32 * FIXUP_BATCH) {
            double part[FIXUP_BATCH];
#pragma unroll
            for (int j = 0; j < FIXUP_BATCH; j++) {
                const int64_t q = q0 + j * 32 + lane;
                part[j] = q >= count ? 0.0 : q == 0 ? frag_last[a] : frag_first[a + q];
            }
#pragma unroll
            for (int j = 0; j < FIXUP_BATCH; j++) s = __dadd_rn(s, part[j]);
        }
        s = krill_warp_sum(s);
        if (lane == 0) y[r] = y_new(alpha, s, beta, y + r);
    }
}

/* The range visitor of reproducible SpMV (ozaki/ozaki_row.cuh): row i is the stream from
 * its HEAD to the next row's HEAD (the stream's end for the last row), PAD zeros skipped.
 * A warp locates its count <= 32 consecutive rows first .. first + count - 1 together: a
 * binary search (warp-uniform: every lane reads the same warp_heads entries) finds the warp
 * tile w0 that holds row first's HEAD (the last w with warp_heads[w] <= first, at least
 * first / 256: every row has an element, so rows before `first` fill at least `first`
 * positions), then the warp reads the warp tiles from w0 on, 256 hint bytes a step (8 a
 * lane, one aligned 64-bit load: a warp tile starts a multiple of 256 bytes into the hint
 * array, which cudaMalloc aligns to 256), numbers the HEADs in them with a popcount and a
 * warp prefix sum (tile w's first HEAD is row warp_heads[w]), and records the positions of
 * the HEADs of its rows and of the row after them in shared memory, until that last HEAD
 * is found. Cost: the tiles the rows touch, plus one, read coalesced. */
struct segscan_row_visitor {
    int64_t n_rows, len, n_warp_tiles;
    const double *__restrict__ val;
    const int32_t *__restrict__ col;
    const uint8_t *__restrict__ hint;
    const int32_t *__restrict__ warp_heads;
    __device__ int64_t out_row(int64_t i) const { return i; }
    __device__ void locate_rows(int64_t first, int count, int sub, int64_t *begin,
                                int64_t *end) const
    {
        constexpr uint64_t HEAD_BYTES = 0x0101010101010101ull * KRILL_SEGSCAN_HEAD;
        __shared__ int64_t heads[KRILL_CUDA_WARPS][33];   /* HEADs of rows first .. + 32 */
        const int lane = threadIdx.x & 31, wib = threadIdx.x / 32;
        /* the last row whose HEAD is needed: the row after the warp's, if there is one */
        const int64_t need = first + count < n_rows ? first + count : n_rows - 1;
        int64_t lo = first / KRILL_SEGSCAN_WARP_TILE, hi = n_warp_tiles - 1;
        while (lo < hi) {                                 /* warp_heads[lo] <= first */
            const int64_t mid = (lo + hi + 1) / 2;
            if (warp_heads[mid] <= first) lo = mid;
            else hi = mid - 1;
        }
        for (int64_t w = lo;; w++) {
            const int64_t at = w * KRILL_SEGSCAN_WARP_TILE + 8 * lane;
            uint64_t m = *reinterpret_cast<const uint64_t *>(hint + at) & HEAD_BYTES;
            const int mine = __popcll(m);
            int before = mine;                            /* inclusive prefix sum of mine */
#pragma unroll
            for (int offset = 1; offset < 32; offset <<= 1) {
                const int t = __shfl_up_sync(0xffffffffu, before, offset);
                if (lane >= offset) before += t;
            }
            for (int64_t row = warp_heads[w] + before - mine; m != 0; row++, m &= m - 1)
                if (row >= first && row <= need)
                    heads[wib][row - first] = at + (__ffsll((long long)m) - 1) / 8;
            if (w + 1 >= n_warp_tiles || warp_heads[w + 1] > need) break;
        }
        __syncwarp();
        if (sub < count) {
            *begin = heads[wib][sub];
            *end = first + sub + 1 < n_rows ? heads[wib][sub + 1] : len;
        }
        __syncwarp();                                     /* heads is rewritten next call */
    }
    __device__ bool term(int64_t k, const double *__restrict__ x, double *a, double *xv) const
    {
        if (hint[k] & KRILL_SEGSCAN_PAD) return false;
        *a = val[k];
        *xv = __ldg(&x[col[k]]);
        return true;
    }
};

/* d_r = a_rr for the rows that store it (d zeroed before): one warp per warp tile. */
__global__ void __launch_bounds__(KRILL_CUDA_THREADS)
segscan_diagonal_kernel(int64_t n_warp_tiles, const double *__restrict__ val,
                        const int32_t *__restrict__ col, const uint8_t *__restrict__ hint,
                        const int32_t *__restrict__ warp_heads, double *__restrict__ d)
{
    const int lane = threadIdx.x & 31;
    const unsigned upto_lane = (2u << lane) - 1u;
    const int64_t warp = ((int64_t)blockIdx.x * KRILL_CUDA_THREADS + threadIdx.x) / 32;
    const int64_t warps = (int64_t)gridDim.x * KRILL_CUDA_WARPS;
    for (int64_t wt = warp; wt < n_warp_tiles; wt += warps) {   /* uniform over the warp */
        int32_t heads_before = warp_heads[wt];
        for (int s = 0; s < KRILL_SEGSCAN_WARP_SEGS; s++) {
            const int64_t k = wt * KRILL_SEGSCAN_WARP_TILE + s * KRILL_SEGSCAN_SEG + lane;
            const unsigned h = hint[k];
            const unsigned heads = __ballot_sync(FULL_WARP, h & KRILL_SEGSCAN_HEAD);
            const int32_t r = heads_before + __popc(heads & upto_lane) - 1;
            if (!(h & KRILL_SEGSCAN_PAD) && col[k] == r) d[r] = val[k];
            heads_before += __popc(heads);
        }
    }
}

void segscan_cuda_destroy(krill_ctx *ctx, void *impl)
{
    segscan_gpu *m = static_cast<segscan_gpu *>(impl);
    if (!m) return;
    krill_mem_free(ctx, m->val);
    krill_mem_free(ctx, m->col);
    krill_mem_free(ctx, m->hint);
    krill_mem_free(ctx, m->warp_heads);
    krill_mem_free(ctx, m->span);
    krill_mem_free(ctx, m->frag_first);
    krill_mem_free(ctx, m->frag_last);
    krill_segscan_host_free(&m->host);
    krill_free(m);
}

krill_status segscan_cuda_build(krill_ctx *ctx, const krill_csr *csr, const char *param,
                                void **impl)
{
    krill_status st = KRILL_OK;
    segscan_gpu *m = NULL;
    krill_segscan_host *h;
    int64_t warp_tiles;
    *impl = NULL;
    KRILL_REQUIRE(param == NULL, "format 'segscan:%s': the format takes no parameter", param);
    KRILL_CALLOC(m, 1);
    h = &m->host;
    KRILL_TRY(krill_segscan_host_build(csr, ctx->threads, h));
    warp_tiles = h->len / KRILL_SEGSCAN_WARP_TILE;
    KRILL_MEM_ALLOC(ctx, m->val, h->len);
    KRILL_MEM_ALLOC(ctx, m->col, h->len);
    KRILL_MEM_ALLOC(ctx, m->hint, h->len);
    KRILL_MEM_ALLOC(ctx, m->warp_heads, warp_tiles);
    KRILL_MEM_ALLOC(ctx, m->span, 3 * h->n_span);
    KRILL_MEM_ALLOC(ctx, m->frag_first, h->n_tiles);
    KRILL_MEM_ALLOC(ctx, m->frag_last, h->n_tiles);
    KRILL_TRY(krill_mem_upload(ctx, m->val, h->val, (size_t)h->len * sizeof *h->val));
    KRILL_TRY(krill_mem_upload(ctx, m->col, h->col, (size_t)h->len * sizeof *h->col));
    KRILL_TRY(krill_mem_upload(ctx, m->hint, h->hint, (size_t)h->len));
    KRILL_TRY(krill_mem_upload(ctx, m->warp_heads, h->warp_heads,
                               (size_t)warp_tiles * sizeof *h->warp_heads));
    KRILL_TRY(krill_mem_upload(ctx, m->span, h->span, (size_t)(3 * h->n_span) * sizeof *h->span));
    KRILL_TRY(krill_cuda_sync(ctx));   /* the host stream may go now */
    krill_free(h->val);
    krill_free(h->col);
    krill_free(h->hint);
    krill_free(h->warp_heads);
    krill_free(h->span);
    h->val = NULL;
    h->col = NULL;
    h->hint = NULL;
    h->warp_heads = NULL;
    h->span = NULL;
    *impl = m;
    m = NULL;
cleanup:
    segscan_cuda_destroy(ctx, m);
    return st;
}

krill_status segscan_cuda_spmv(krill_ctx *ctx, const void *impl, double alpha, const double *x,
                               double beta, double *y)
{
    krill_status st = KRILL_OK;
    const segscan_gpu *m = static_cast<const segscan_gpu *>(impl);
    const krill_segscan_host *h = &m->host;
    cudaStream_t s = krill_cuda_stream(ctx);
    if (h->n_rows == 0) goto cleanup;
    if (alpha == 0.0) {   /* x unread */
        st = krill_cuda_axpby(ctx, h->n_rows, 0.0, NULL, beta, y);
        goto cleanup;
    }
    segscan_kernel<<<(unsigned)h->n_tiles, KRILL_CUDA_THREADS, 0, s>>>(
        h->len, m->val, m->col, m->hint, m->warp_heads, alpha, x, beta, y, m->frag_first,
        m->frag_last);
    KRILL_TRY(krill_cuda_check_launch("segscan_kernel"));
    if (h->n_span > 0) {
        krill_cuda_launch(ctx, segscan_fixup_kernel, h->n_span * 32, s, h->n_span, m->span,
                          m->frag_first, m->frag_last, alpha, beta, y);
        KRILL_TRY(krill_cuda_check_launch("segscan_fixup_kernel"));
    }
cleanup:
    return st;
}

/* Every row's exact sum, L lanes a row (krill_oz_row_lanes of the mean row length; not the
 * segmented scan: a row is one sub-warp's). */
krill_status segscan_cuda_spmv_repro(krill_ctx *ctx, const void *impl, double alpha,
                                     const double *x, double beta, double *y)
{
    const segscan_gpu *m = static_cast<const segscan_gpu *>(impl);
    const krill_segscan_host *h = &m->host;
    const segscan_row_visitor v{h->n_rows, h->len, h->len / KRILL_SEGSCAN_WARP_TILE, m->val,
                                m->col, m->hint, m->warp_heads};
    return krill_oz_spmv_range_launch(ctx, "segscan", v, h->n_rows, h->stats.max_row_nnz,
                                      krill_oz_row_lanes(h->stats.mean_row_nnz, h->n_rows),
                                      alpha, x, beta, y);
}

/* New values: scattered around the empty rows' zeros on the host, then uploaded (straight
 * into place when there are no empty rows: the zeros after the last row stay). */
krill_status segscan_cuda_update_values(krill_ctx *ctx, void *impl, const double *values)
{
    krill_status st = KRILL_OK;
    segscan_gpu *m = static_cast<segscan_gpu *>(impl);
    double *stream = NULL;
    if (m->host.n_empty == 0) {
        st = krill_cuda_upload_values(ctx, m->val, values, m->host.nnz);
        goto cleanup;
    }
    KRILL_ALLOC(stream, m->host.len);
    krill_segscan_host_scatter(&m->host, values, stream);
    KRILL_TRY(krill_cuda_upload_values(ctx, m->val, stream, m->host.len));
cleanup:
    krill_free(stream);
    return st;
}

krill_status segscan_cuda_diagonal(krill_ctx *ctx, const void *impl, double *d)
{
    krill_status st = KRILL_OK;
    const segscan_gpu *m = static_cast<const segscan_gpu *>(impl);
    const int64_t warp_tiles = m->host.len / KRILL_SEGSCAN_WARP_TILE;
    if (m->host.n_rows == 0) goto cleanup;
    KRILL_TRY(krill_cuda_memset0(ctx, d, (size_t)m->host.n_rows * sizeof *d));
    krill_cuda_launch(ctx, segscan_diagonal_kernel, warp_tiles * 32, krill_cuda_stream(ctx),
                      warp_tiles, m->val, m->col, m->hint, m->warp_heads, d);
    KRILL_TRY(krill_cuda_check_launch("segscan_diagonal_kernel"));
cleanup:
    return st;
}

/* The stream (values, columns, hints) downloaded into a copy of the host struct, then the
 * shared host walk (formats/segscan.c). */
krill_status segscan_cuda_to_csr(krill_ctx *ctx, const void *impl, krill_csr **csr)
{
    krill_status st = KRILL_OK;
    const segscan_gpu *m = static_cast<const segscan_gpu *>(impl);
    krill_segscan_host stage = m->host;
    *csr = NULL;
    stage.val = NULL;
    stage.col = NULL;
    stage.hint = NULL;
    KRILL_ALLOC(stage.val, stage.len);
    KRILL_ALLOC(stage.col, stage.len);
    KRILL_ALLOC(stage.hint, stage.len);
    KRILL_TRY(krill_mem_download(ctx, stage.val, m->val, (size_t)stage.len * sizeof *stage.val));
    KRILL_TRY(krill_mem_download(ctx, stage.col, m->col, (size_t)stage.len * sizeof *stage.col));
    KRILL_TRY(krill_mem_download(ctx, stage.hint, m->hint, (size_t)stage.len));
    KRILL_TRY(krill_segscan_host_to_csr(&stage, csr));
cleanup:
    krill_free(stage.val);
    krill_free(stage.col);
    krill_free(stage.hint);
    return st;
}

void segscan_cuda_stats(const void *impl, krill_format_stats *s)
{
    const segscan_gpu *m = static_cast<const segscan_gpu *>(impl);
    *s = m->host.stats;
    snprintf(s->variant, sizeof s->variant, "tree:%d%s", KRILL_SEGSCAN_SEG,
             m->host.n_span > 0 ? "+spans" : "");
}

} /* namespace */

extern "C" const krill_format_ops krill_segscan_cuda_ops = {
    "segscan",                  /* name */
    segscan_cuda_build,         /* build */
    segscan_cuda_spmv,          /* spmv */
    segscan_cuda_spmv_repro,    /* spmv_repro */
    NULL,                       /* spmv_dot: spmv, then a dot */
    segscan_cuda_update_values, /* update_values */
    segscan_cuda_diagonal,      /* diagonal */
    segscan_cuda_to_csr,        /* to_csr */
    segscan_cuda_stats,         /* stats */
    segscan_cuda_destroy,       /* destroy */
    NULL,                       /* diagonal_blocks: none (bjacobi goes through to_csr) */
};
