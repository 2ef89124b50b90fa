/* ozaki/ozaki_fast_avx2.c - the CPU loops of the fast path compiled with -mavx2 -mfma
 * (x86-64): krill_oz_fast_terms4 runs the four rows' states as 4-wide vectors. Called only
 * where the CPU has both (ozaki_fast_host.c). */
#include "ozaki/ozaki_fast_host.h"

#if !defined(__AVX2__) || !defined(__FMA__)
#error "ozaki_fast_avx2.c must be compiled with -mavx2 -mfma"
#endif

#include <immintrin.h>

#define KRILL_OZ_LOOP(name) name##_avx2
#define KRILL_OZ_OWN_UNGUARDED
#include "ozaki/ozaki_fast_loops.h"

/* TwoSum of four lanes: s = a + b, *err = (a - (s - bb)) + (b - bb), bb = s - a */
static inline __m256d two_sum4(__m256d a, __m256d b, __m256d *err)
{
    const __m256d s = _mm256_add_pd(a, b), bb = _mm256_sub_pd(s, a);
    *err = _mm256_add_pd(_mm256_sub_pd(a, _mm256_sub_pd(s, bb)), _mm256_sub_pd(b, bb));
    return s;
}

/* krill_oz_fast_rows_unguarded with the four lanes as one vector, written out: gcc does not
 * vectorize the loop of ozaki_fast_loops.h without the guard's steps (scalar code, slower
 * than the guarded loop). The operations of krill_oz_fast_sum in its order on each lane,
 * TwoProduct by the FMA (a x - p rounded once: fma(a, x, -p)), the rest to lane 0, the
 * lanes merged in order: the state of the generic loop, bit for bit (test_ozaki_row). */
void krill_oz_fast_rows_unguarded_avx2(krill_oz_fast *f, const double *x, const double *y,
                                       int64_t lo, int64_t hi)
{
    const __m256d abs_mask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
    __m256d vh = _mm256_setzero_pd(), vm = vh, vl = vh, vt = vh;
    double hv[4], mv[4], lv[4], tv[4];
    int64_t i = lo, groups = 0;
    for (; i + 4 <= hi; i += 4, groups++) {
        const __m256d a = _mm256_loadu_pd(x + i), b = _mm256_loadu_pd(y + i);
        const __m256d p = _mm256_mul_pd(a, b), e = _mm256_fmsub_pd(a, b, p);
        __m256d t, q0, q1;
        vh = two_sum4(vh, p, &t);
        const __m256d r = two_sum4(t, e, &q0);
        vm = two_sum4(vm, r, &q1);
        vl = _mm256_add_pd(vl, _mm256_add_pd(q0, q1));
        vt = _mm256_add_pd(vt, _mm256_add_pd(_mm256_and_pd(q0, abs_mask),
                                             _mm256_and_pd(q1, abs_mask)));
    }
    _mm256_storeu_pd(hv, vh);
    _mm256_storeu_pd(mv, vm);
    _mm256_storeu_pd(lv, vl);
    _mm256_storeu_pd(tv, vt);
    for (int l = 0; l < 4; l++) {
        krill_oz_fast g = {.hi = hv[l], .mid = mv[l], .lo = lv[l], .t = tv[l], .m = 2 * groups,
                           .ok = 1};
        if (l == 0)
            for (; i < hi; i++) {
                krill_oz_fast_sum(&g, x[i], y[i]);
                g.m += 2;
            }
        krill_oz_fast_merge(f, &g);
    }
}
