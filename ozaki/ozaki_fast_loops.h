/* ozaki/ozaki_fast_loops.h - the two CPU loops of the fast path, as a body included twice:
 * by ozaki_fast_host.c as is (TwoProduct by Dekker's product, or the FMA where the whole
 * build targets one) and by ozaki_fast_fma.c compiled with -mfma (TwoProduct by the FMA
 * instruction; x86-64 hosts that have one take it at run time). Both give the same state,
 * bit for bit: TwoProduct's (p, e) is exact either way and every other operation is the
 * same. The includer defines KRILL_OZ_LOOP(name), the suffixed name of each function. */

/* f <- f + the n terms a[k] x[k], in order (one row of a reproducible SpMV) */
void KRILL_OZ_LOOP(krill_oz_fast_terms)(krill_oz_fast *f, const double *a, const double *x,
                                        int n)
{
    krill_oz_fast g = *f;                       /* a local copy: its fields in registers */
    for (int k = 0; k < n; k++) krill_oz_fast_add(&g, a[k], x[k]);
    *f = g;
}

/* f <- f + the terms x_i y_i of rows [lo, hi): KRILL_OZ_FAST_LANES independent compensated
 * sums (lane l takes the rows lo + l + KRILL_OZ_FAST_LANES r), so that the additions of
 * different lanes overlap instead of waiting on one chain, then merged (the bound holds for
 * any merge tree) */
void KRILL_OZ_LOOP(krill_oz_fast_rows)(krill_oz_fast *f, const double *x, const double *y,
                                       int64_t lo, int64_t hi)
{
    krill_oz_fast lane[KRILL_OZ_FAST_LANES];
    int64_t i = lo;
    for (int l = 0; l < KRILL_OZ_FAST_LANES; l++) krill_oz_fast_init(&lane[l]);
    for (; i + KRILL_OZ_FAST_LANES <= hi; i += KRILL_OZ_FAST_LANES)
        for (int l = 0; l < KRILL_OZ_FAST_LANES; l++)
            krill_oz_fast_add(&lane[l], x[i + l], y[i + l]);
    for (; i < hi; i++) krill_oz_fast_add(&lane[0], x[i], y[i]);
    for (int l = 0; l < KRILL_OZ_FAST_LANES; l++) krill_oz_fast_merge(f, &lane[l]);
}
