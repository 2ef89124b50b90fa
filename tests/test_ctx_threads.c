/* Thread counts of CPU contexts (issue 17): a count above KRILL_MAX_THREADS, asked for or
 * OpenMP's default, is KRILL_ERR_ARG naming the argument; the limit itself starts a real
 * OpenMP team; a count the system refuses to start is KRILL_ERR_ALLOC with a message, not
 * libgomp ending the process; a failing allocation leaves no context. */
#define _GNU_SOURCE   /* pthread_setattr_default_np (glibc) */
#include <omp.h>
#include <pthread.h>
#include <string.h>

#include "core/core_impl.h"
#include "testutil.h"

static krill_status cpu_ctx(int threads, krill_ctx **ctx)
{
    krill_ctx_opts o = KRILL_CTX_OPTS_INIT;
    o.device = KRILL_DEVICE_CPU;
    o.threads = threads;
    return krill_ctx_create(&o, ctx);
}

static void test_limit(void)
{
    krill_ctx *ctx = NULL;
    CHECK_STATUS(cpu_ctx(KRILL_MAX_THREADS + 1, &ctx), KRILL_ERR_ARG);
    CHECK(ctx == NULL);
    CHECK(strstr(krill_last_error(), "threads = 4097") != NULL);
    CHECK(strstr(krill_last_error(), "KRILL_MAX_THREADS") != NULL);
    CHECK_STATUS(cpu_ctx(2147483647, &ctx), KRILL_ERR_ARG);
    CHECK(ctx == NULL);

    omp_set_num_threads(KRILL_MAX_THREADS + 1);   /* as OMP_NUM_THREADS=4097 would */
    CHECK_STATUS(cpu_ctx(0, &ctx), KRILL_ERR_ARG);
    CHECK(ctx == NULL);
    CHECK(strstr(krill_last_error(), "OMP_NUM_THREADS") != NULL);
    omp_set_num_threads(2);
}

/* The limit starts: a team of KRILL_MAX_THREADS threads runs (unless this machine's
 * limits refuse that many, which the context then says). */
static void test_at_limit(void)
{
    krill_ctx *ctx = NULL;
    krill_status st = cpu_ctx(KRILL_MAX_THREADS, &ctx);
    CHECK(st == KRILL_OK || st == KRILL_ERR_ALLOC);
    if (st == KRILL_OK) {
        int team = 0;
#pragma omp parallel num_threads(krill_ctx_threads(ctx))
        {
#pragma omp single
            team = omp_get_num_threads();
        }
        CHECK(team == KRILL_MAX_THREADS);
    } else {
        printf("note: this machine does not start %d threads: %s\n", KRILL_MAX_THREADS,
               krill_last_error());
    }
    krill_ctx_destroy(&ctx);
}

/* With a default thread stack larger than the address space, the system refuses every
 * new thread: a context of 4 threads is refused with a message, one of 1 is made. */
static void test_refused(void)
{
#ifdef __GLIBC__
    krill_ctx *ctx = NULL;
    pthread_attr_t saved, huge;
    CHECK(pthread_getattr_default_np(&saved) == 0);
    CHECK(pthread_attr_init(&huge) == 0);
    CHECK(pthread_attr_setstacksize(&huge, (size_t)1 << 50) == 0);
    CHECK(pthread_setattr_default_np(&huge) == 0);
    CHECK_STATUS(cpu_ctx(4, &ctx), KRILL_ERR_ALLOC);
    CHECK(ctx == NULL);
    CHECK(strstr(krill_last_error(), "threads = 4: the system started only 1 of them") != NULL);
    CHECK_OK(cpu_ctx(1, &ctx));
    krill_ctx_destroy(&ctx);
    CHECK(pthread_setattr_default_np(&saved) == 0);
    pthread_attr_destroy(&huge);
    pthread_attr_destroy(&saved);
    CHECK_OK(cpu_ctx(4, &ctx));
    krill_ctx_destroy(&ctx);
#else
    printf("note: no glibc; the refused-start case is covered by tests/cli (ulimit -s)\n");
#endif
}

/* Each allocation of krill_ctx_create fails in turn: an error and no context. */
static void test_faults(void)
{
    krill_ctx *ctx = NULL;
    long before = krill_alloc_calls();
    CHECK_OK(cpu_ctx(3, &ctx));
    krill_ctx_destroy(&ctx);
    long count = krill_alloc_calls() - before;
    CHECK(count >= 2);
    for (long k = 1; k <= count; k++) {
        krill_fault_alloc_after(k);
        CHECK_STATUS(cpu_ctx(3, &ctx), KRILL_ERR_ALLOC);
        krill_fault_alloc_after(0);
        CHECK(ctx == NULL);
    }
}

int main(void)
{
    test_limit();
    test_at_limit();
    test_refused();
    test_faults();
    return tu_finish("test_ctx_threads");
}
