/* ozaki/ozaki_fast_host.h - the CPU loops of the fast path (ozaki_row.h's compensated sum),
 * with a variant compiled for the FMA instruction that x86-64 hosts which have one run
 * (chosen at each call from the CPU model libgcc records at start-up). TwoProduct is then
 * 2 operations instead of Dekker's 17,
 * of a term's 24 to 39; the results are the same bits. Host only. */
#ifndef KRILL_OZAKI_FAST_HOST_H
#define KRILL_OZAKI_FAST_HOST_H

#include "ozaki/ozaki_row.h"

/* independent compensated sums per thread in krill_oz_fast_rows_unguarded (a krill_oz_fast4) */
#define KRILL_OZ_FAST_LANES 4

/* Four compensated sums side by side, one array per field: the loops' working state, which
 * an AVX2 build keeps as one 4-wide vector per field. */
typedef struct krill_oz_fast4 {
    double hi[4], mid[4], lo[4], t[4];
    int64_t m[4];
    int ok[4];
} krill_oz_fast4;
_Static_assert(KRILL_OZ_FAST_LANES == 4, "the rows loops keep their lanes in a krill_oz_fast4");

static inline krill_oz_fast krill_oz_fast4_get(const krill_oz_fast4 *v, int l)
{
    const krill_oz_fast g = {.hi = v->hi[l], .mid = v->mid[l], .lo = v->lo[l], .t = v->t[l],
                             .m = v->m[l], .ok = v->ok[l]};
    return g;
}

static inline void krill_oz_fast4_set(krill_oz_fast4 *v, int l, const krill_oz_fast *g)
{
    v->hi[l] = g->hi;
    v->mid[l] = g->mid;
    v->lo[l] = g->lo;
    v->t[l] = g->t;
    v->m[l] = g->m;
    v->ok[l] = g->ok;
}

/* The range of a vector's elements, as the GPU's fast kernels keep it (ozaki_dev.cuh's
 * oz_range, whose rules these are): key(v) = the high 32 bits of |v|, with bit 0 set when
 * the low 32 bits are not zero (key 0 iff v = 0; the exponent field is key >> 20); max the
 * largest key, min1 the smallest key - 1 (a zero wraps to 0xffffffff: it counts only when
 * every element is zero). */
typedef struct krill_oz_range {
    uint32_t max, min1;
} krill_oz_range;

static inline void krill_oz_range_init(krill_oz_range *r)
{
    r->max = 0u;
    r->min1 = 0xffffffffu;
}

static inline void krill_oz_range_merge(krill_oz_range *r, const krill_oz_range *g)
{
    if (g->max > r->max) r->max = g->max;
    if (g->min1 < r->min1) r->min1 = g->min1;
}

/* The fast path's guard (krill_oz_fast_guard) for every term x_i y_i at once from the ranges
 * of x and y: every nonzero element normal with exponent at most 400, and, when both have
 * nonzeros, the least exponents Ex + Ey >= -800 (every product of nonzero elements is then
 * at least 2^-800). Stricter than the guard term by term (the least elements need not meet),
 * never looser: a sum it refuses takes the exact path, which gives the same bits. */
static inline int krill_oz_range_ok(const krill_oz_range *x, const krill_oz_range *y)
{
    const uint32_t lo = 1u << 20, hi = (1023u + 401u) << 20;
    const int xz = x->max == 0u, yz = y->max == 0u;
    const int xin = xz || (x->max < hi && x->min1 + 1u >= lo);
    const int yin = yz || (y->max < hi && y->min1 + 1u >= lo);
    const int e = (int)((x->min1 + 1u) >> 20) + (int)((y->min1 + 1u) >> 20) - 2 * 1023;
    return xin && yin && (xz || yz || e >= -800);
}

/* f <- f + sum_k a[k] x[k], k < n, in order */
void krill_oz_fast_terms(krill_oz_fast *f, const double *a, const double *x, int n);
/* f[l] <- f[l] + sum_k a[l][k] x[l][k], k < n[l], in order, l < 4: four rows at once (a
 * vector of four on hosts with AVX2), the same states as four krill_oz_fast_terms */
void krill_oz_fast_terms4(krill_oz_fast *f, const double *const *a, const double *const *x,
                          const int *n);
/* f <- f + sum_i x_i y_i, lo <= i < hi, without the guard term by term: the caller
 * establishes it for all the terms from the ranges (krill_oz_range_ok) and clears f->ok
 * where it fails (krill_ozaki_cpu_fast) */
void krill_oz_fast_rows_unguarded(krill_oz_fast *f, const double *x, const double *y,
                                  int64_t lo, int64_t hi);
/* r <- r merged with the range of x[lo .. hi) */
void krill_oz_range_rows(krill_oz_range *r, const double *x, int64_t lo, int64_t hi);

/* The loops without the FMA variant (tests compare the two), and whether the FMA variant
 * runs on this host. */
void krill_oz_fast_terms_generic(krill_oz_fast *f, const double *a, const double *x, int n);
void krill_oz_fast_terms4_generic(krill_oz_fast *f, const double *const *a,
                                  const double *const *x, const int *n);
/* the same with the guard term by term, lanes as the unguarded loop's (generic build only:
 * test_ozaki_row's reference) */
void krill_oz_fast_rows_generic(krill_oz_fast *f, const double *x, const double *y,
                                int64_t lo, int64_t hi);
void krill_oz_fast_rows_unguarded_generic(krill_oz_fast *f, const double *x, const double *y,
                                          int64_t lo, int64_t hi);
void krill_oz_range_rows_generic(krill_oz_range *r, const double *x, int64_t lo, int64_t hi);
int krill_oz_fast_host_fma(void);

/* The variants' loops, defined only in the builds that have them (ozaki_fast_fma.c: -mfma;
 * ozaki_fast_avx2.c: -mavx2 -mfma) and called only where the host runs them. */
void krill_oz_fast_terms_fma(krill_oz_fast *f, const double *a, const double *x, int n);
void krill_oz_fast_terms4_fma(krill_oz_fast *f, const double *const *a,
                              const double *const *x, const int *n);
void krill_oz_fast_rows_unguarded_fma(krill_oz_fast *f, const double *x, const double *y,
                                      int64_t lo, int64_t hi);
void krill_oz_range_rows_fma(krill_oz_range *r, const double *x, int64_t lo, int64_t hi);
void krill_oz_fast_terms_avx2(krill_oz_fast *f, const double *a, const double *x, int n);
void krill_oz_fast_terms4_avx2(krill_oz_fast *f, const double *const *a,
                               const double *const *x, const int *n);
void krill_oz_fast_rows_unguarded_avx2(krill_oz_fast *f, const double *x, const double *y,
                                       int64_t lo, int64_t hi);
void krill_oz_range_rows_avx2(krill_oz_range *r, const double *x, int64_t lo, int64_t hi);
/* whether krill_oz_fast_terms4 runs its AVX2 build (four rows a vector) on this host */
int krill_oz_fast_host_avx2(void);

#endif
