/* ozaki/ozaki_fast_loops.h - the CPU loops of the fast path, as a body included twice:
 * by ozaki_fast_host.c as is (TwoProduct by Dekker's product, or the FMA where the whole
 * build targets one), by ozaki_fast_fma.c compiled with -mfma (TwoProduct by the FMA
 * instruction; x86-64 hosts that have one take it at run time) and by ozaki_fast_avx2.c
 * compiled with -mavx2 -mfma (whose four-row loop runs four rows a vector). All give the
 * same state, bit for bit: TwoProduct's (p, e) is exact either way and every other operation is the
 * same. The includer defines KRILL_OZ_LOOP(name), the suffixed name of each function. */

/* f <- f + the n terms a[k] x[k], in order (one row of a reproducible SpMV) */
void KRILL_OZ_LOOP(krill_oz_fast_terms)(krill_oz_fast *f, const double *a, const double *x,
                                        int n)
{
    krill_oz_fast g = *f;                       /* a local copy: its fields in registers */
    for (int k = 0; k < n; k++) krill_oz_fast_add(&g, a[k], x[k]);
    *f = g;
}

/* f[l] <- f[l] + the n[l] terms a[l][k] x[l][k], in order, for l < 4: four rows of a
 * reproducible SpMV at once, up to the shortest row's length, then each row's rest alone.
 * The four states live side by side in arrays (one field of the four rows per array), so
 * that a build for AVX2 (ozaki_fast_avx2.c) runs each operation of a term on the four rows
 * in one instruction: the fast path is bound by its 24-39 operations a term, not by memory.
 * Each row's terms go into its own state in its own order with the same operations: the
 * states are krill_oz_fast_terms' bit for bit. */
void KRILL_OZ_LOOP(krill_oz_fast_terms4)(krill_oz_fast *f, const double *const *a,
                                         const double *const *x, const int *n)
{
    krill_oz_fast4 v;
    int common = n[0], k;
    for (int l = 1; l < 4; l++)
        if (n[l] < common) common = n[l];
    for (int l = 0; l < 4; l++) krill_oz_fast4_set(&v, l, &f[l]);
    for (k = 0; k < common; k++) {
#pragma GCC unroll 4
        for (int l = 0; l < 4; l++) {
            krill_oz_fast g = krill_oz_fast4_get(&v, l);
            krill_oz_fast_add(&g, a[l][k], x[l][k]);
            krill_oz_fast4_set(&v, l, &g);
        }
    }
    for (int l = 0; l < 4; l++) {   /* each row's rest: its state in registers */
        krill_oz_fast g = krill_oz_fast4_get(&v, l);
        for (int j = k; j < n[l]; j++) krill_oz_fast_add(&g, a[l][j], x[l][j]);
        f[l] = g;
    }
}

/* f <- f + the terms x_i y_i of rows [lo, hi): KRILL_OZ_FAST_LANES independent compensated
 * sums (lane l takes the rows lo + l + KRILL_OZ_FAST_LANES r), so that the additions of
 * different lanes overlap instead of waiting on one chain, then merged in lane order (the
 * bound holds for any merge tree). The lanes' states live side by side in arrays, so that
 * the AVX2 build runs the four lanes as one vector (contiguous loads: x[i .. i + 3]).
 * guarded: each term through krill_oz_fast_add (its guard's integer steps, about as many as
 * the sum's own operations on the host); else krill_oz_fast_sum and the count, the caller
 * having the guard from the vectors' ranges. A constant after inlining. */
static inline void krill_oz_rows_body(krill_oz_fast *f, const double *x, const double *y,
                                      int64_t lo, int64_t hi, const int guarded)
{
    krill_oz_fast4 v;
    krill_oz_fast g;
    int64_t i = lo;
    krill_oz_fast_init(&g);
    for (int l = 0; l < KRILL_OZ_FAST_LANES; l++) krill_oz_fast4_set(&v, l, &g);
    for (; i + KRILL_OZ_FAST_LANES <= hi; i += KRILL_OZ_FAST_LANES) {
#pragma GCC unroll 4
        for (int l = 0; l < KRILL_OZ_FAST_LANES; l++) {
            g = krill_oz_fast4_get(&v, l);
            if (guarded) {
                krill_oz_fast_add(&g, x[i + l], y[i + l]);
            } else {
                krill_oz_fast_sum(&g, x[i + l], y[i + l]);
                g.m += 2;
            }
            krill_oz_fast4_set(&v, l, &g);
        }
    }
    for (int l = 0; l < KRILL_OZ_FAST_LANES; l++) {
        g = krill_oz_fast4_get(&v, l);
        if (l == 0)
            for (; i < hi; i++) {
                if (guarded) {
                    krill_oz_fast_add(&g, x[i], y[i]);
                } else {
                    krill_oz_fast_sum(&g, x[i], y[i]);
                    g.m += 2;
                }
            }
        krill_oz_fast_merge(f, &g);
    }
}

#ifdef KRILL_OZ_GUARDED_ROWS   /* ozaki_fast_host.c: the guarded loop, test_ozaki_row's reference */
void KRILL_OZ_LOOP(krill_oz_fast_rows)(krill_oz_fast *f, const double *x, const double *y,
                                       int64_t lo, int64_t hi)
{
    krill_oz_rows_body(f, x, y, lo, hi, 1);
}
#endif

#ifndef KRILL_OZ_OWN_UNGUARDED   /* ozaki_fast_avx2.c writes its own with vector types */
void KRILL_OZ_LOOP(krill_oz_fast_rows_unguarded)(krill_oz_fast *f, const double *x,
                                                 const double *y, int64_t lo, int64_t hi)
{
    krill_oz_rows_body(f, x, y, lo, hi, 0);
}
#endif

/* r <- r merged with the range of x[lo .. hi): the largest key and the smallest key - 1
 * (krill_oz_range), 32-bit integer steps that vectorize */
void KRILL_OZ_LOOP(krill_oz_range_rows)(krill_oz_range *r, const double *x, int64_t lo,
                                        int64_t hi)
{
    uint32_t mx = r->max, mn = r->min1;
    for (int64_t i = lo; i < hi; i++) {
        uint64_t b;
        memcpy(&b, &x[i], sizeof b);
        const uint32_t key = ((uint32_t)(b >> 32) & 0x7fffffffu) | (uint32_t)((uint32_t)b != 0u);
        const uint32_t k1 = key - 1u;
        mx = key > mx ? key : mx;
        mn = k1 < mn ? k1 : mn;
    }
    r->max = mx;
    r->min1 = mn;
}
