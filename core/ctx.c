/* core/ctx.c - execution contexts: CPU (OpenMP) or one CUDA device. */
#include <omp.h>
#include <stdio.h>

#include "core/core_impl.h"
#include "ozaki/ozaki_impl.h"
#ifdef KRILL_HAVE_CUDA
#include "core/cuda_impl.h"
#endif

int krill_cuda_device_count(void)
{
#ifdef KRILL_HAVE_CUDA
    return krill_cuda_count();
#else
    return 0;
#endif
}

int krill_have_cuda(void)
{
#ifdef KRILL_HAVE_CUDA
    return 1;
#else
    return 0;
#endif
}

int krill_have_zlib(void)
{
#ifdef KRILL_HAVE_ZLIB
    return 1;
#else
    return 0;
#endif
}

const char *krill_version(void) { return KRILL_VERSION_STRING; }

static krill_status init_cuda(krill_ctx *ctx, int device_id)
{
    krill_status st = KRILL_OK;
#ifdef KRILL_HAVE_CUDA
    int count = krill_cuda_count();
    if (count == 0) {
        st = krill_error(KRILL_ERR_NO_DEVICE, "a GPU was asked for, but no CUDA device was "
                         "found (no driver or no GPU on this machine)");
        goto cleanup;
    }
    if (device_id < 0 || device_id >= count) {
        st = krill_error(KRILL_ERR_NO_DEVICE, "CUDA device %d asked for; devices are 0..%d",
                         device_id, count - 1);
        goto cleanup;
    }
    ctx->device = KRILL_DEVICE_CUDA;
    ctx->device_id = device_id;
    KRILL_TRY(krill_cuda_ctx_init(ctx));
#else
    (void)ctx;
    (void)device_id;
    st = krill_error(KRILL_ERR_NO_DEVICE, "a GPU was asked for, but this krill was built "
                     "without CUDA (configure with -DKRILL_WITH_CUDA=ON)");
    goto cleanup;
#endif
cleanup:
    return st;
}

krill_status krill_ctx_create(const krill_ctx_opts *opts, krill_ctx **out)
{
    krill_status st = KRILL_OK;
    krill_ctx_opts o = KRILL_CTX_OPTS_INIT;
    krill_ctx *ctx = NULL;

    KRILL_REQUIRE(out != NULL, "krill_ctx_create: ctx must not be NULL");
    *out = NULL;
    if (opts) o = *opts;
    KRILL_REQUIRE(o.device == KRILL_DEVICE_AUTO || o.device == KRILL_DEVICE_CPU ||
                  o.device == KRILL_DEVICE_CUDA, "krill_ctx_create: unknown device %d",
                  (int)o.device);
    KRILL_REQUIRE(o.threads >= 0, "krill_ctx_create: threads = %d must be >= 0 (0 = default)",
                  o.threads);
    KRILL_CALLOC(ctx, 1);
    ctx->threads = o.threads > 0 ? o.threads : omp_get_max_threads();
    ctx->device = KRILL_DEVICE_CPU;
    if (o.device == KRILL_DEVICE_CUDA ||
        (o.device == KRILL_DEVICE_AUTO && krill_cuda_device_count() > 0))
        KRILL_TRY(init_cuda(ctx, o.device_id));
    else
        snprintf(ctx->describe, sizeof ctx->describe, "cpu: %d OpenMP thread%s", ctx->threads,
                 ctx->threads == 1 ? "" : "s");
    *out = ctx;
    ctx = NULL;
cleanup:
    krill_ctx_destroy(&ctx);
    return st;
}

void krill_ctx_destroy(krill_ctx **pctx)
{
    if (!pctx || !*pctx) return;
    krill_ozaki_ctx_fini(*pctx);   /* before the device goes: its workspace may be there */
#ifdef KRILL_HAVE_CUDA
    if ((*pctx)->cuda) krill_cuda_ctx_fini(*pctx);
#endif
    krill_free(*pctx);
    *pctx = NULL;
}

krill_device krill_ctx_device(const krill_ctx *ctx) { return ctx->device; }
int krill_ctx_threads(const krill_ctx *ctx) { return ctx->threads; }
const char *krill_ctx_describe(const krill_ctx *ctx) { return ctx->describe; }

krill_status krill_ctx_sync(krill_ctx *ctx)
{
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) return krill_cuda_sync(ctx);
#endif
    (void)ctx;
    return KRILL_OK;
}

/* The mode is checked, then ozaki/'s workspace is made (a reproducible mode allocates
 * everything it needs here, not in the first reduction); on failure the mode is unchanged. */
krill_status krill_ctx_set_repro(krill_ctx *ctx, krill_repro_mode mode, int slices)
{
    krill_status st = KRILL_OK;
    KRILL_REQUIRE(ctx != NULL, "krill_ctx_set_repro: ctx is NULL");
    KRILL_REQUIRE(mode == KRILL_REPRO_OFF || mode == KRILL_REPRO_OZAKI ||
                  mode == KRILL_REPRO_OZAKI_FAST,
                  "krill_ctx_set_repro: mode = %d is not KRILL_REPRO_OFF (0), KRILL_REPRO_OZAKI "
                  "(1) or KRILL_REPRO_OZAKI_FAST (2)", (int)mode);
    KRILL_REQUIRE(slices >= 0, "krill_ctx_set_repro: slices = %d < 0 (0 = exact, S >= 1 = at "
                  "most S slices)", slices);
    KRILL_REQUIRE(mode != KRILL_REPRO_OFF || slices == 0,
                  "krill_ctx_set_repro: slices = %d given with KRILL_REPRO_OFF (plain reductions "
                  "have no slices; use 0)", slices);
    KRILL_REQUIRE(mode != KRILL_REPRO_OZAKI_FAST || slices >= 1,
                  "krill_ctx_set_repro: slices = %d with KRILL_REPRO_OZAKI_FAST: fast mode needs "
                  "a fixed slice count S >= 1 (exact mode is KRILL_REPRO_OZAKI with 0)", slices);
    if (mode != KRILL_REPRO_OFF) KRILL_TRY(krill_ozaki_ctx_init(ctx));
    ctx->repro = mode;
    ctx->repro_slices = slices;
cleanup:
    return st;
}

krill_repro_mode krill_ctx_repro(const krill_ctx *ctx, int *slices)
{
    if (slices) *slices = ctx ? ctx->repro_slices : 0;
    return ctx ? ctx->repro : KRILL_REPRO_OFF;
}

double krill_wtime(void) { return omp_get_wtime(); }
