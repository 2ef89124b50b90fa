/* core/alloc.c - host allocation through one place, with the fault hook. */
#define _DEFAULT_SOURCE            /* MADV_HUGEPAGE (Linux) in <sys/mman.h> */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "core/core_impl.h"
#include "krill/io.h"

static atomic_long alloc_calls;   /* allocations so far (host and device) */
static atomic_long fail_at;       /* fail the allocation whose number is this; 0 = never */

void krill_fault_alloc_after(long k)
{
    atomic_store(&fail_at, k > 0 ? atomic_load(&alloc_calls) + k : 0);
}

long krill_alloc_calls(void) { return atomic_load(&alloc_calls); }

int krill_fault_check(void)
{
    long call = atomic_fetch_add(&alloc_calls, 1) + 1;
    long target = atomic_load(&fail_at);
    return target != 0 && call == target;
}

static krill_status host_alloc(void **p, size_t bytes, const char *what, int zero)
{
    *p = NULL;
    if (krill_fault_check())
        return krill_error(KRILL_ERR_ALLOC, "out of host memory allocating %zu bytes for %s "
                           "(injected fault)", bytes, what);
    if (bytes == 0) bytes = 1;    /* a valid pointer for empty arrays */
    *p = zero ? calloc(1, bytes) : malloc(bytes);
    if (!*p)
        return krill_error(KRILL_ERR_ALLOC, "out of host memory allocating %zu bytes for %s",
                           bytes, what);
    return KRILL_OK;
}

krill_status krill_alloc(void **p, size_t bytes, const char *what)
{
    return host_alloc(p, bytes, what, 0);
}

krill_status krill_calloc(void **p, size_t bytes, const char *what)
{
    return host_alloc(p, bytes, what, 1);
}

void krill_free(void *p) { free(p); }

void krill_host_free(void *p) { free(p); }

krill_status krill_alloc_n(void **p, size_t count, size_t size, int zero, const char *what)
{
    if (size != 0 && count > SIZE_MAX / size) {
        *p = NULL;
        return krill_error(KRILL_ERR_ALLOC, "allocation of %zu x %zu bytes for %s overflows",
                           count, size, what);
    }
    return host_alloc(p, count * size, what, zero);
}

#define KRILL_HUGE_PAGE ((size_t)2 << 20)     /* x86-64 and AArch64 transparent huge pages */

void krill_advise_huge(void *p, size_t bytes)
{
#if defined(MADV_HUGEPAGE)
    /* a hint for the page-aligned inside of [p, p + bytes); ignored where unsupported */
    uintptr_t lo = ((uintptr_t)p + KRILL_HUGE_PAGE - 1) & ~(uintptr_t)(KRILL_HUGE_PAGE - 1);
    uintptr_t hi = ((uintptr_t)p + bytes) & ~(uintptr_t)(KRILL_HUGE_PAGE - 1);
    if (p && bytes >= 2 * KRILL_HUGE_PAGE && hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}
