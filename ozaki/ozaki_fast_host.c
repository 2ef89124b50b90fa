/* ozaki/ozaki_fast_host.c - the CPU loops of the fast path and the choice of variant
 * (ozaki_fast_host.h). */
#include "ozaki/ozaki_fast_host.h"

#define KRILL_OZ_LOOP(name) name##_generic
#define KRILL_OZ_GUARDED_ROWS
#include "ozaki/ozaki_fast_loops.h"

#ifdef KRILL_HAVE_FMA_VARIANT
/* libgcc's CPU model is filled in before main: a load and a bit test, no cached state to
 * race on between threads */
int krill_oz_fast_host_fma(void) { return __builtin_cpu_supports("fma") ? 1 : 0; }

void krill_oz_fast_terms(krill_oz_fast *f, const double *a, const double *x, int n)
{
    if (krill_oz_fast_host_fma()) krill_oz_fast_terms_fma(f, a, x, n);
    else krill_oz_fast_terms_generic(f, a, x, n);
}

#ifdef KRILL_HAVE_AVX2_VARIANT
int krill_oz_fast_host_avx2(void)
{
    return krill_oz_fast_host_fma() && __builtin_cpu_supports("avx2") ? 1 : 0;
}
#else
int krill_oz_fast_host_avx2(void) { return 0; }
#endif

/* Four rows a vector where the CPU has AVX2; else one row after the other (as scalar code,
 * the four rows' interleaved chains ran slower than one row at a time: registers spill) */
void krill_oz_fast_terms4(krill_oz_fast *f, const double *const *a, const double *const *x,
                          const int *n)
{
#ifdef KRILL_HAVE_AVX2_VARIANT
    if (krill_oz_fast_host_avx2()) krill_oz_fast_terms4_avx2(f, a, x, n);
    else
#endif
        for (int l = 0; l < 4; l++) krill_oz_fast_terms(&f[l], a[l], x[l], n[l]);
}

void krill_oz_fast_rows_unguarded(krill_oz_fast *f, const double *x, const double *y,
                                  int64_t lo, int64_t hi)
{
#ifdef KRILL_HAVE_AVX2_VARIANT
    if (krill_oz_fast_host_avx2()) krill_oz_fast_rows_unguarded_avx2(f, x, y, lo, hi);
    else
#endif
    if (krill_oz_fast_host_fma()) krill_oz_fast_rows_unguarded_fma(f, x, y, lo, hi);
    else krill_oz_fast_rows_unguarded_generic(f, x, y, lo, hi);
}

void krill_oz_range_rows(krill_oz_range *r, const double *x, int64_t lo, int64_t hi)
{
#ifdef KRILL_HAVE_AVX2_VARIANT
    if (krill_oz_fast_host_avx2()) krill_oz_range_rows_avx2(r, x, lo, hi);
    else
#endif
        krill_oz_range_rows_generic(r, x, lo, hi);
}
#else
int krill_oz_fast_host_fma(void) { return 0; }

void krill_oz_fast_terms(krill_oz_fast *f, const double *a, const double *x, int n)
{
    krill_oz_fast_terms_generic(f, a, x, n);
}

int krill_oz_fast_host_avx2(void) { return 0; }

void krill_oz_fast_terms4(krill_oz_fast *f, const double *const *a, const double *const *x,
                          const int *n)
{
    for (int l = 0; l < 4; l++) krill_oz_fast_terms_generic(&f[l], a[l], x[l], n[l]);
}

void krill_oz_fast_rows_unguarded(krill_oz_fast *f, const double *x, const double *y,
                                  int64_t lo, int64_t hi)
{
    krill_oz_fast_rows_unguarded_generic(f, x, y, lo, hi);
}

void krill_oz_range_rows(krill_oz_range *r, const double *x, int64_t lo, int64_t hi)
{
    krill_oz_range_rows_generic(r, x, lo, hi);
}
#endif
