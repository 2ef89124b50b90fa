/* The CUDA context and device memory: creation and description, bad device ids, injected
 * allocation faults at every step of context creation, device out-of-memory messages
 * (bytes asked and free), the context staying usable after them, copies in every
 * direction, the reduction workspace's counter left at zero, and the table of resident
 * blocks per kernel that sizes the grids. Needs a GPU (else 77). */
#include <stdlib.h>
#include <string.h>

#include "core/core_impl.h"
#ifdef KRILL_HAVE_CUDA
#include "core/cuda_impl.h"
#endif
#include "testutil.h"

/* Context creation with the k-th allocation failing, for every k until it succeeds: each
 * failure is a clean ALLOC or DEVICE_ALLOC with a message and no context. */
static void fault_during_creation(void)
{
    krill_ctx_opts o = KRILL_CTX_OPTS_INIT;
    o.device = KRILL_DEVICE_CUDA;
    int failures = 0;
    for (long k = 1; k <= 50; k++) {
        krill_ctx *ctx = NULL;
        krill_clear_error();
        krill_fault_alloc_after(k);
        krill_status st = krill_ctx_create(&o, &ctx);
        krill_fault_alloc_after(0);
        if (st == KRILL_OK) {
            CHECK(ctx != NULL);
            krill_ctx_destroy(&ctx);
            break;
        }
        failures++;
        CHECK(st == KRILL_ERR_ALLOC || st == KRILL_ERR_DEVICE_ALLOC);
        CHECK(ctx == NULL);
        CHECK(strstr(krill_last_error(), "injected") != NULL);
    }
    /* the host context, the CUDA part, the device workspace, the pinned buffer */
    CHECK(failures >= 4);
}

static void round_trips(krill_ctx *ctx)
{
    enum { N = 1000 };
    double *host = malloc(N * sizeof *host), *back = malloc(N * sizeof *back);
    double *a = NULL, *b = NULL;
    tu_random(host, N, 5);
    CHECK_OK(krill_mem_alloc(ctx, (void **)&a, N * sizeof *a, "a"));
    CHECK_OK(krill_mem_alloc(ctx, (void **)&b, N * sizeof *b, "b"));
    if (a && b) {
        CHECK_OK(krill_mem_upload(ctx, a, host, N * sizeof *a));
        memset(back, 0, N * sizeof *back);
        CHECK_OK(krill_mem_download(ctx, back, a, N * sizeof *a));
        CHECK(memcmp(back, host, N * sizeof *back) == 0);

        CHECK_OK(krill_mem_copy(ctx, b, a, N * sizeof *a));   /* device -> device */
        memset(back, 0, N * sizeof *back);
        CHECK_OK(krill_mem_download(ctx, back, b, N * sizeof *b));
        CHECK(memcmp(back, host, N * sizeof *back) == 0);

        CHECK_OK(krill_mem_zero(ctx, b + 10, 20 * sizeof *b));  /* only [10, 30) */
        CHECK_OK(krill_mem_download(ctx, back, b, N * sizeof *b));
        int ok = 1;
        for (int i = 0; i < N; i++) ok &= (i >= 10 && i < 30) ? back[i] == 0.0 : back[i] == host[i];
        CHECK(ok);

        CHECK_OK(krill_mem_upload(ctx, a, host, 0));            /* empty copies are fine */
        CHECK_OK(krill_mem_download(ctx, back, a, 0));
    }
    krill_mem_free(ctx, a);
    krill_mem_free(ctx, b);
    free(host);
    free(back);
}

static void out_of_memory(krill_ctx *ctx)
{
    void *p = (void *)&p;
    char msg[1024];

    /* injected: the next allocation fails like a real OOM, the one after works */
    krill_fault_alloc_after(1);
    CHECK_STATUS(krill_mem_alloc(ctx, &p, 4096, "test buffer"), KRILL_ERR_DEVICE_ALLOC);
    CHECK(p == NULL);
    snprintf(msg, sizeof msg, "%s", krill_last_error());
    printf("injected: %s\n", msg);
    CHECK(strstr(msg, "4096") != NULL && strstr(msg, "test buffer") != NULL);
    CHECK(strstr(msg, "free") != NULL && strstr(msg, "injected") != NULL);
    CHECK_OK(krill_mem_alloc(ctx, &p, 4096, "test buffer"));
    CHECK(p != NULL);
    krill_mem_free(ctx, p);

    /* real: 1 PiB is more than any GPU has */
    p = (void *)&p;
    CHECK_STATUS(krill_mem_alloc(ctx, &p, (size_t)1 << 50, "an absurd buffer"),
                 KRILL_ERR_DEVICE_ALLOC);
    CHECK(p == NULL);
    snprintf(msg, sizeof msg, "%s", krill_last_error());
    printf("real: %s\n", msg);
    CHECK(strstr(msg, "1125899906842624") != NULL && strstr(msg, "free") != NULL);
    CHECK(strstr(msg, "an absurd buffer") != NULL && strstr(msg, "injected") == NULL);

    /* the failure left no sticky state: the context still computes and copies */
    CHECK_OK(krill_ctx_sync(ctx));
    round_trips(ctx);

    /* zero bytes still give a pointer that can be freed */
    p = NULL;
    CHECK_OK(krill_mem_alloc(ctx, &p, 0, "empty"));
    CHECK(p != NULL);
    krill_mem_free(ctx, p);
    krill_mem_free(ctx, NULL);
}

/* After reductions the grid-sum counter (the workspace's last slot, see
 * kernels/kernels_impl.cuh) is back to 0, or the next reduction would be wrong. */
static void workspace_counter(krill_ctx *ctx)
{
    enum { N = 100000 };
    double *host = malloc(N * sizeof *host), *x = NULL, *r = NULL, counter = -1.0;
    tu_random(host, N, 9);
    CHECK_OK(krill_mem_alloc(ctx, (void **)&x, N * sizeof *x, "x"));
    CHECK_OK(krill_mem_alloc(ctx, (void **)&r, 2 * sizeof *r, "r"));
    if (x && r) {
        CHECK_OK(krill_mem_upload(ctx, x, host, N * sizeof *x));
        CHECK_OK(krill_blas_dot(ctx, N, x, x, r));
        CHECK_OK(krill_blas_nrm2(ctx, N, x, r + 1));
        CHECK_OK(krill_blas_dot(ctx, 0, x, x, r));
        CHECK_OK(krill_scalars_read(ctx, ctx->cuda->work + KRILL_CUDA_WORK_DOUBLES - 1, &counter,
                                    1));
        uint64_t bits;
        memcpy(&bits, &counter, sizeof bits);
        CHECK(bits == 0);
    }
    krill_mem_free(ctx, x);
    krill_mem_free(ctx, r);
    free(host);
}

/* After the dot and norm kernels ran (workspace_counter): each kernel is in the table once,
 * with 1 to max_threads_per_sm / KRILL_CUDA_THREADS blocks; a lookup returns the stored
 * count; an address that is no kernel gets the thread limit's count and leaves no error. */
static void resident_blocks(krill_ctx *ctx)
{
#ifdef KRILL_HAVE_CUDA
    const int most = ctx->cuda->max_threads_per_sm / KRILL_CUDA_THREADS;
    int entries = 0;
    for (int i = 0; i < KRILL_CUDA_RESIDENT_SLOTS; i++) {
        const void *k = ctx->cuda->resident[i].kernel;
        if (!k) continue;
        entries++;
        CHECK(ctx->cuda->resident[i].blocks >= 1 && ctx->cuda->resident[i].blocks <= most);
        CHECK(krill_cuda_resident_blocks(ctx->cuda, k) == ctx->cuda->resident[i].blocks);
        for (int j = i + 1; j < KRILL_CUDA_RESIDENT_SLOTS; j++)
            CHECK(ctx->cuda->resident[j].kernel != k);
    }
    CHECK(entries >= 2);   /* dot and nrm2 at least */
    static const int not_a_kernel = 0;
    CHECK(krill_cuda_resident_blocks(ctx->cuda, &not_a_kernel) == most);
    CHECK_OK(krill_cuda_check_launch("after the occupancy query of a non-kernel"));
    CHECK_OK(krill_ctx_sync(ctx));
#else
    (void)ctx;   /* no GPU context without CUDA: main skips before this */
#endif
}

int main(void)
{
    krill_ctx *ctx = tu_gpu_ctx_or_skip();
    const char *d = krill_ctx_describe(ctx);
    printf("%s\n", d);
    CHECK(krill_ctx_device(ctx) == KRILL_DEVICE_CUDA);
    CHECK(strncmp(d, "cuda:0 ", 7) == 0);
    CHECK(strstr(d, "(sm_") != NULL && strstr(d, " GiB)") != NULL);
    CHECK(ctx->cuda != NULL);
    if (ctx->cuda) {
        CHECK(ctx->cuda->sm_count > 0 && ctx->cuda->max_threads_per_sm >= 1024);
        CHECK(ctx->cuda->cc_major >= 7 && ctx->cuda->mem_total > 0);
        CHECK(ctx->cuda->stream && ctx->cuda->cublas && ctx->cuda->work && ctx->cuda->pinned);
        CHECK(ctx->cuda->cusparse == NULL);   /* made on first use only */
    }

    /* a device that does not exist */
    krill_ctx_opts o = KRILL_CTX_OPTS_INIT;
    krill_ctx *bad = (krill_ctx *)&o;
    o.device = KRILL_DEVICE_CUDA;
    o.device_id = 4096;
    CHECK_STATUS(krill_ctx_create(&o, &bad), KRILL_ERR_NO_DEVICE);
    CHECK(bad == NULL);
    CHECK(strstr(krill_last_error(), "4096") != NULL);

    /* two contexts on one device at once */
    krill_ctx *second = NULL;
    o.device_id = 0;
    CHECK_OK(krill_ctx_create(&o, &second));
    if (second) round_trips(second);
    krill_ctx_destroy(&second);
    CHECK(second == NULL);

    round_trips(ctx);
    out_of_memory(ctx);
    workspace_counter(ctx);
    resident_blocks(ctx);
    fault_during_creation();

    krill_ctx_destroy(&ctx);
    CHECK(ctx == NULL);
    krill_ctx_destroy(&ctx);   /* NULL-safe */
    return tu_finish("test_gpu_ctx");
}
