/* core/mem.c - memory in a context's space: host for the CPU, device for CUDA; the solver
 * workspace kept between solves. */
#include <limits.h>
#include <stdatomic.h>
#include <string.h>

#include "core/core_impl.h"
#ifdef KRILL_HAVE_CUDA
#include "core/cuda_impl.h"
#define ON_GPU(ctx) krill_on_gpu(ctx)
#else
#define ON_GPU(ctx) 0
#endif

krill_status krill_mem_alloc(krill_ctx *ctx, void **p, size_t bytes, const char *what)
{
    krill_status st;
#ifdef KRILL_HAVE_CUDA
    if (ON_GPU(ctx)) return krill_cuda_alloc(ctx, p, bytes, what);   /* counts its own */
#endif
    st = krill_alloc(p, bytes, what);
    if (st == KRILL_OK) {   /* krill_ctx_alloc_stats_get */
        ctx->allocated.allocations++;
        ctx->allocated.bytes += (int64_t)bytes;
    }
    return st;
}

krill_status krill_mem_check_pointer(krill_ctx *ctx, const void *p, const char *what)
{
#ifdef KRILL_HAVE_CUDA
    if (ON_GPU(ctx)) return krill_cuda_check_pointer(ctx, p, what);
#endif
    (void)ctx;
    (void)p;
    (void)what;
    return KRILL_OK;
}

void krill_mem_free(krill_ctx *ctx, void *p)
{
    if (!p) return;
#ifdef KRILL_HAVE_CUDA
    if (ON_GPU(ctx)) {
        krill_cuda_free(ctx, p);
        return;
    }
#endif
    (void)ctx;
    krill_free(p);
}

/* kind as in krill_cuda_memcpy: 0 host->ctx, 1 ctx->host, 2 ctx->ctx */
static krill_status mem_move(krill_ctx *ctx, void *dst, const void *src, size_t bytes, int kind)
{
    if (bytes == 0) return KRILL_OK;
#ifdef KRILL_HAVE_CUDA
    if (ON_GPU(ctx)) return krill_cuda_memcpy(ctx, dst, src, bytes, kind);
#endif
    (void)ctx;
    (void)kind;
    memmove(dst, src, bytes);
    return KRILL_OK;
}

krill_status krill_mem_upload(krill_ctx *ctx, void *dst, const void *src, size_t bytes)
{
#ifdef KRILL_HAVE_CUDA
    if (ON_GPU(ctx) && bytes >= KRILL_STAGE_SLOTS * krill_cuda_stage_slot_bytes(0))
        return krill_cuda_upload_staged(ctx, dst, src, bytes);
#endif
    return mem_move(ctx, dst, src, bytes, 0);
}

void krill_host_copy(const krill_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    const size_t piece = (size_t)1 << 20;   /* below it, one thread */
    const int64_t pieces = (int64_t)((bytes + piece - 1) / piece);
    int threads = ctx->threads > 0 ? ctx->threads : 1;
    if (threads > pieces) threads = pieces > 0 ? (int)pieces : 1;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t p = 0; p < pieces; p++) {
        const size_t first = (size_t)p * piece;
        memcpy((char *)dst + first, (const char *)src + first,
               bytes - first < piece ? bytes - first : piece);
    }
}

/* On a GPU rank with device-side reductions, also the look at their failure flag
 * (krill_ctx_settle): what the host reads here was not made from a failed sum. */
krill_status krill_mem_download(krill_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    krill_status st = mem_move(ctx, dst, src, bytes, 1);
    const krill_status settled = krill_ctx_settle(ctx);
    return st != KRILL_OK ? st : settled;
}

krill_status krill_mem_copy(krill_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    return mem_move(ctx, dst, src, bytes, 2);
}

krill_status krill_mem_zero(krill_ctx *ctx, void *p, size_t bytes)
{
    if (bytes == 0) return KRILL_OK;
#ifdef KRILL_HAVE_CUDA
    if (ON_GPU(ctx)) return krill_cuda_memset0(ctx, p, bytes);
#endif
    (void)ctx;
    memset(p, 0, bytes);
    return KRILL_OK;
}

krill_status krill_scalars_read(krill_ctx *ctx, const double *src, double *host, int count)
{
    return krill_mem_download(ctx, host, src, (size_t)count * sizeof(double));
}

krill_status krill_scalars_write(krill_ctx *ctx, double *dst, const double *host, int count)
{
    return krill_mem_upload(ctx, dst, host, (size_t)count * sizeof(double));
}

/* ---- the solver workspace cache (core_impl.h) -------------------------------------------
 * Two small tables under a spin lock: the blocks taken (pointer and size, so that a block
 * given back is known) and the blocks kept (with the clock when given back). A block that
 * finds no room in either is allocated or freed as usual: the tables bound what is kept. */
#define WS_TAKEN 256
#define WS_KEPT 64

typedef struct ws_block {
    void *p;
    size_t bytes;
    unsigned long stamp;     /* kept: the clock when given back */
} ws_block;

struct krill_ws_cache {
    atomic_flag lock;
    unsigned long clock;     /* advanced by krill_ws_epoch */
    int n_taken, n_kept;
    ws_block taken[WS_TAKEN];
    ws_block kept[WS_KEPT];
};

static void ws_lock(struct krill_ws_cache *c)
{
    while (atomic_flag_test_and_set_explicit(&c->lock, memory_order_acquire)) {
    }
}

static void ws_unlock(struct krill_ws_cache *c)
{
    atomic_flag_clear_explicit(&c->lock, memory_order_release);
}

krill_status krill_ws_cache_create(krill_ctx *ctx)
{
    krill_status st = KRILL_OK;
    KRILL_CALLOC(ctx->ws_cache, 1);
    atomic_flag_clear(&ctx->ws_cache->lock);
cleanup:
    return st;
}

krill_status krill_ws_alloc(krill_ctx *ctx, void **p, size_t bytes, const char *what)
{
    krill_status st = KRILL_OK;
    struct krill_ws_cache *c = ctx->ws_cache;
    int best = -1;
    size_t size = bytes;
    *p = NULL;
    if (!c) return krill_mem_alloc(ctx, p, bytes, what);
    ws_lock(c);
    for (int k = 0; k < c->n_kept; k++)      /* the smallest kept block that fits */
        if (c->kept[k].bytes >= bytes && c->kept[k].bytes / 2 < (bytes > 0 ? bytes : 1) &&
            (best < 0 || c->kept[k].bytes < c->kept[best].bytes))
            best = k;
    if (best >= 0 && !krill_fault_check()) {
        *p = c->kept[best].p;
        size = c->kept[best].bytes;
        c->kept[best] = c->kept[--c->n_kept];
    }
    ws_unlock(c);
    if (best >= 0 && !*p)
        return krill_error(ON_GPU(ctx) ? KRILL_ERR_DEVICE_ALLOC : KRILL_ERR_ALLOC,
                           "out of memory allocating %zu bytes for %s (injected fault)", bytes,
                           what);
    if (!*p) {
        st = krill_mem_alloc(ctx, p, bytes, what);
        /* a real out-of-memory while blocks are kept: give them back, try once more */
        if ((st == KRILL_ERR_ALLOC || st == KRILL_ERR_DEVICE_ALLOC) && !krill_fault_injected() &&
            c->n_kept > 0) {
            krill_ws_trim(ctx, ULONG_MAX);
            krill_clear_error();
            st = krill_mem_alloc(ctx, p, bytes, what);
        }
        KRILL_TRY(st);
    }
    ws_lock(c);
    if (c->n_taken < WS_TAKEN) c->taken[c->n_taken++] = (ws_block){*p, size, 0};
    ws_unlock(c);
cleanup:
    return st;
}

void krill_ws_free(krill_ctx *ctx, void *p)
{
    struct krill_ws_cache *c = ctx->ws_cache;
    int kept = 0;
    if (!p) return;
    if (c) {
        ws_lock(c);
        for (int k = 0; k < c->n_taken; k++)
            if (c->taken[k].p == p) {
                ws_block b = c->taken[k];
                c->taken[k] = c->taken[--c->n_taken];
                if (c->n_kept < WS_KEPT) {
                    b.stamp = c->clock;
                    c->kept[c->n_kept++] = b;
                    kept = 1;
                }
                break;
            }
        ws_unlock(c);
    }
    if (!kept) krill_mem_free(ctx, p);
}

unsigned long krill_ws_epoch(krill_ctx *ctx)
{
    struct krill_ws_cache *c = ctx->ws_cache;
    unsigned long e = 0;
    if (c) {
        ws_lock(c);
        e = ++c->clock;
        ws_unlock(c);
    }
    return e;
}

/* Frees the kept blocks given back before `epoch` (all of them for ULONG_MAX). */
void krill_ws_trim(krill_ctx *ctx, unsigned long epoch)
{
    struct krill_ws_cache *c = ctx->ws_cache;
    void *drop[WS_KEPT];
    int n_drop = 0;
    if (!c) return;
    ws_lock(c);
    for (int k = 0; k < c->n_kept;)
        if (c->kept[k].stamp < epoch) {
            drop[n_drop++] = c->kept[k].p;
            c->kept[k] = c->kept[--c->n_kept];
        } else {
            k++;
        }
    ws_unlock(c);
    for (int k = 0; k < n_drop; k++) krill_mem_free(ctx, drop[k]);
}

void krill_ws_cache_destroy(krill_ctx *ctx)
{
    if (!ctx->ws_cache) return;
    krill_ws_trim(ctx, ULONG_MAX);
    krill_free(ctx->ws_cache);
    ctx->ws_cache = NULL;
}

void krill_ctx_release_cache(krill_ctx *ctx)
{
    if (ctx) krill_ws_trim(ctx, ULONG_MAX);
}
