/* core/alloc.c - host allocation through one place, with the fault hook. */
#define _DEFAULT_SOURCE            /* MADV_HUGEPAGE (Linux) in <sys/mman.h> */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/core_impl.h"
#include "krill/io.h"

static atomic_long alloc_calls;   /* allocations so far (host and device) */
static atomic_long fail_at;       /* fail the allocation whose number is this; 0 = never */
static atomic_size_t mem_limit;   /* krill_host_mem_limit's bytes; 0 = none */
static atomic_int last_injected;  /* the latest krill_fault_check said fail */

void krill_fault_alloc_after(long k)
{
    atomic_store(&fail_at, k > 0 ? atomic_load(&alloc_calls) + k : 0);
}

long krill_alloc_calls(void) { return atomic_load(&alloc_calls); }

int krill_fault_check(void)
{
    long call = atomic_fetch_add(&alloc_calls, 1) + 1;
    long target = atomic_load(&fail_at);
    int fail = target != 0 && call == target;
    atomic_store(&last_injected, fail);
    return fail;
}

int krill_fault_injected(void) { return atomic_load(&last_injected); }

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

size_t krill_host_mem_available(void)
{
    size_t avail = SIZE_MAX, limit = atomic_load(&mem_limit);
    int found = 0;
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        unsigned long long kb;
        while (!found && fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
                avail = kb > SIZE_MAX / 1024 ? SIZE_MAX : (size_t)kb * 1024;
                found = 1;
            }
        fclose(f);
    }
    if (!found) {
        long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
        if (pages > 0 && size > 0 && (size_t)pages <= SIZE_MAX / (size_t)size)
            avail = (size_t)pages * (size_t)size;
    }
    return limit != 0 && limit < avail ? limit : avail;
}

void krill_host_mem_limit(size_t bytes) { atomic_store(&mem_limit, bytes); }

/* Below this a check costs more (reading /proc/meminfo) than it can prevent. */
#define MEM_CHECK_MIN ((size_t)1 << 20)

krill_status krill_host_mem_check(size_t bytes, const char *what)
{
    size_t limit = atomic_load(&mem_limit);
    if (bytes < MEM_CHECK_MIN && (limit == 0 || bytes <= limit)) return KRILL_OK;
    size_t avail = krill_host_mem_available();
    if (bytes <= avail) return KRILL_OK;
    return krill_error(KRILL_ERR_ALLOC, "%s needs %zu bytes of host memory, %zu are available",
                       what, bytes, avail);
}
