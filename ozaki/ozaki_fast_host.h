/* ozaki/ozaki_fast_host.h - the CPU loops of the fast path (ozaki_row.h's compensated sum),
 * with a variant compiled for the FMA instruction that x86-64 hosts which have one run
 * (chosen at each call from the CPU model libgcc records at start-up). TwoProduct is then
 * 2 operations instead of Dekker's 17,
 * of a term's 24 to 39; the results are the same bits. Host only. */
#ifndef KRILL_OZAKI_FAST_HOST_H
#define KRILL_OZAKI_FAST_HOST_H

#include "ozaki/ozaki_row.h"

/* independent compensated sums per thread in krill_oz_fast_rows (a krill_oz_fast4) */
#define KRILL_OZ_FAST_LANES 4

/* Four compensated sums side by side, one array per field: the loops' working state, which
 * an AVX2 build keeps as one 4-wide vector per field. */
typedef struct krill_oz_fast4 {
    double hi[4], mid[4], lo[4], t[4];
    int64_t m[4];
    int ok[4];
} krill_oz_fast4;
_Static_assert(KRILL_OZ_FAST_LANES == 4, "krill_oz_fast_rows keeps its lanes in a krill_oz_fast4");

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

/* f <- f + sum_k a[k] x[k], k < n, in order */
void krill_oz_fast_terms(krill_oz_fast *f, const double *a, const double *x, int n);
/* f[l] <- f[l] + sum_k a[l][k] x[l][k], k < n[l], in order, l < 4: four rows at once (a
 * vector of four on hosts with AVX2), the same states as four krill_oz_fast_terms */
void krill_oz_fast_terms4(krill_oz_fast *f, const double *const *a, const double *const *x,
                          const int *n);
/* f <- f + sum_i x_i y_i, lo <= i < hi */
void krill_oz_fast_rows(krill_oz_fast *f, const double *x, const double *y, int64_t lo,
                        int64_t hi);

/* The loops without the FMA variant (tests compare the two), and whether the FMA variant
 * runs on this host. */
void krill_oz_fast_terms_generic(krill_oz_fast *f, const double *a, const double *x, int n);
void krill_oz_fast_terms4_generic(krill_oz_fast *f, const double *const *a,
                                  const double *const *x, const int *n);
void krill_oz_fast_rows_generic(krill_oz_fast *f, const double *x, const double *y,
                                int64_t lo, int64_t hi);
int krill_oz_fast_host_fma(void);

/* The variants' loops, defined only in the builds that have them (ozaki_fast_fma.c: -mfma;
 * ozaki_fast_avx2.c: -mavx2 -mfma) and called only where the host runs them. */
void krill_oz_fast_terms_fma(krill_oz_fast *f, const double *a, const double *x, int n);
void krill_oz_fast_terms4_fma(krill_oz_fast *f, const double *const *a,
                              const double *const *x, const int *n);
void krill_oz_fast_rows_fma(krill_oz_fast *f, const double *x, const double *y, int64_t lo,
                            int64_t hi);
void krill_oz_fast_terms_avx2(krill_oz_fast *f, const double *a, const double *x, int n);
void krill_oz_fast_terms4_avx2(krill_oz_fast *f, const double *const *a,
                               const double *const *x, const int *n);
void krill_oz_fast_rows_avx2(krill_oz_fast *f, const double *x, const double *y, int64_t lo,
                             int64_t hi);
/* whether krill_oz_fast_terms4 runs its AVX2 build (four rows a vector) on this host */
int krill_oz_fast_host_avx2(void);

#endif
