/* ozaki/ozaki_row.h - correctly rounded short sums of products, s = sum_k a_k x_k, computed
 * by one thread (or by lanes that merge their parts): each row of a reproducible SpMV and
 * of a reproducible preconditioner apply. Host and device, like ozaki_math.h.
 *
 * A row sum is always exact mode, whatever the context's slice count: the result is the
 * double nearest the exact sum (ties to even; an exact zero is +0; Inf/NaN as IEEE says for
 * the products and their sum). It is therefore a function of the multiset of products
 * alone: the order of the terms, how lanes share them, padding zeros, the format that
 * stores the row and the device cannot change a bit. A constant term c is the product 1 c;
 * a difference b - sum l_k x_k is the sum with the terms (1, b) and (-l_k, x_k).
 *
 * One pass over the terms decides almost every row; a row it cannot decide takes two more:
 *   pass 1, the fast path (below):
 *     krill_oz_fast f; krill_oz_fast_init(&f); for each k: krill_oz_fast_add(&f, a_k, x_k);
 *     if (krill_oz_fast_end(&f, &s)) s is the sum: done.
 *   else the exact path, pass 2 (statistics) and pass 3 (the exact digit products):
 *     krill_oz_row r; krill_oz_row_init(&r); for each k: krill_oz_row_stats(&r, a_k, x_k);
 *     if (krill_oz_row_begin(&r, acc)) for each k: krill_oz_row_add(&r, a_k, x_k, acc);
 *     s = krill_oz_row_end(&r, acc);
 * (krill_oz_row_gather is the three passes over a gathered row.) Lanes that split a row
 * merge their fast-path states (krill_oz_fast_merge) before krill_oz_fast_end; on the exact
 * path they merge their statistics (krill_oz_row_merge) and each begins from the merged
 * state, and after pass 3 they add their acc[] element-wise (int64: exact in any order)
 * into the lane that ends. The exact path's parameters come from the row's own term count
 * n (rho = ceil((53 + log2 n) / 2)): any n at least the true count gives the same result
 * (padding may be counted).
 *
 * Scratch: nd <= KRILL_OZ_ROW_MAX_DIAG int64 when n <= KRILL_OZ_ROW_MAX_N (a GPU thread's
 * local array); a longer row needs up to KRILL_OZ_MAX_DIAG. Only the exact path uses it.
 *
 * Both paths give the correctly rounded sum, so which one decided a row never shows in the
 * bits. */
#ifndef KRILL_OZAKI_ROW_H
#define KRILL_OZAKI_ROW_H

#include "ozaki/ozaki_math.h"

/* ---- the fast path ------------------------------------------------------------------------
 * A twice-compensated sum (the K = 3 member of Ogita, Rump and Oishi's DotK family: the
 * first-level errors are summed error-free once more) with a rigorous bound decides most rows
 * in one pass. Per term a x:
 *   (p, e)    = TwoProduct(a, x)     p + e = a x exactly (krill_oz_two_prod)
 *   (hi, t)  <- TwoSum(hi, p)        hi_old + p = hi + t
 *   (r, q0)   = TwoSum(t, e)         t + e = r + q0
 *   (mid, q1) <- TwoSum(mid, r)      mid_old + r = mid + q1
 *   lo <- fl(lo + fl(q0 + q1)),  T <- fl(T + fl(|q0| + |q1|)),  m <- m + 2.
 * So the exact sum is X = hi + mid + Q with Q the exact sum of the m second-level errors q,
 * and lo is Q summed in floating point by a tree of height <= m, whence
 *   |lo - Q| <= gamma_m sum |q| <= m u T (1 + 2^-17) <= (2 m + 4) u fl(T) =: E   (u = 2^-53),
 * for m <= 2^32 (gamma_m = m u / (1 - m u); T's own rounding is inside the margin, which is
 * a factor of about 2). That holds when no product or error term underflows and nothing
 * overflows, which the guard (krill_oz_fast_guard) ensures: every |a|, |x| is 0 or in
 * [2^-1022, 2^401) and every product of nonzero operands has |fl(a x)| >= 2^-800 (products
 * in [2^-800, 2^802), their errors exact multiples of 2^-906, hence so are all the sums and
 * errors below, and T is 0 or at least 2^-906; TwoSum is exact whenever nothing overflows).
 * Tiny operands are fine where their products are not: the entries of a Krylov vector that
 * decay to 1e-200 away from the right-hand side's support meet matrix entries near 1.
 * Dot2's bound (one level: lo summing t + e) is about u^2 times the sum of the |products|;
 * this one is about u^3 times it, and exactly 0 when the second-level sums were exact. So rows with heavy cancellation (A p on a smooth p inside CG; the projections of
 * Gram-Schmidt's second pass, at rounding level) and exact zeros whose products have
 * rounding errors are decided here instead of taking the exact path. The two TwoSums that
 * feed mid do not wait for hi's, so a term's critical path stays one TwoSum long.
 * At the end, when T = 0 every q was 0, so X = hi + mid exactly and RN(X) = fl(hi + mid):
 * decided, ties included (sums of a few doubles of one binade land on a midpoint often:
 * 13% of the rows of A p in CG on poisson3d:40 were exact ties). Otherwise
 * (s1, c1) = TwoSum(hi, mid) exactly, w = fl(c1 + lo) = c1 + lo + d with
 * |d| <= u |w|, and (s, c) = TwoSum(s1, w) exactly; so X lies in [s + c - E', s + c + E']
 * with E' = E + u |w|, and e2 = fl(fl(2 E) + |w| 2^-51) >= 2 E' (|w| 2^-51 = 4 u |w| is exact:
 * w is 0 or at least 2^-906, like every quantity here, for a floating-point sum of multiples
 * of 2^-906 is one; the last rounding is covered by the slack of both terms). If the
 * interval lies strictly between the midpoints around s, RN(X) = s: tested as
 * fl(h_up - c') > e2 and fl(h_dn + c') > e2, where h_up and h_dn are half the gaps from |s|
 * to its neighbors and c' is c with the sign of s (a positive fl(D) > 2 E' means D > E': a
 * subtraction rounds by at most u relatively and is exact when it underflows). Otherwise (a
 * term the guard refuses, X within E' of a midpoint, |s| below 2^-1000 or above 2^900, or
 * s = 0 with T > 0: an error left around zero) krill_oz_fast_end says so and the exact path
 * decides. The result being the correctly
 * rounded sum either way, the fast path's own order of operations, lane split and way of
 * forming e cannot change a bit. */

typedef struct krill_oz_fast {
    double hi, mid, lo;      /* the sum is hi + mid + lo, up to lo's rounding errors */
    double t;                /* sum of the magnitudes of the error terms added into lo */
    int64_t m;               /* error terms added into lo */
    int ok;                  /* every term so far passed the guard */
} krill_oz_fast;

KRILL_OZ_HD void krill_oz_fast_init(krill_oz_fast *f)
{
    f->hi = f->mid = f->lo = f->t = 0.0;
    f->m = 0;
    f->ok = 1;
}

/* TwoSum: s = fl(a + b) and the exact error a + b - s */
KRILL_OZ_HD double krill_oz_two_sum(double a, double b, double *err)
{
    const double s = KRILL_OZ_ADD(a, b);
    const double bb = KRILL_OZ_SUB(s, a);
    *err = KRILL_OZ_ADD(KRILL_OZ_SUB(a, KRILL_OZ_SUB(s, bb)), KRILL_OZ_SUB(b, bb));
    return s;
}

/* TwoProduct: p = fl(a x) and *err = a x - p, exact for terms that pass the fast path's guard
 * (krill_oz_fast_guard). The device's fused multiply-add __fma_rn; on the host
 * the hardware FMA where the compiler targets one (__FMA__: fma() is then one instruction),
 * else Dekker's product over Veltkamp's split (no libm call: fma() without -mfma is a
 * function call, and a slow one where the CPU has no FMA). Veltkamp: c = (2^27 + 1) v,
 * v_hi = c - (c - v), v_lo = v - v_hi splits v into two halves of at most 26 significant
 * bits each, v = v_hi + v_lo exactly, so every partial product below is exact and the
 * error comes out exact (Dekker 1971) unless something overflows or underflows. Neither
 * can happen for guarded terms: |c| < 2^429; the partial products lie below 2^804; and a
 * sufficient condition for an exact error, e_a + e_x >= e_min + 52 = -970 with e_a, e_x the
 * exponents of the operands' last places and e_min = -1022 (Boldo 2006, "Pitfalls of a full
 * floating-point proof: example on the formal proof of the Veltkamp/Dekker algorithms"),
 * holds with room to spare: normal a in [2^Ea, 2^(Ea + 1)) and x likewise with
 * |fl(a x)| >= 2^-800 have Ea + Ex >= -802, so e_a + e_x = Ea + Ex - 104 >= -906 (a zero
 * operand gives p = 0 and an error of exactly 0). With the FMA, a x - p is a multiple of
 * 2^(e_a + e_x) >= 2^-906 below half an ulp of p: representable. The three ways give the
 * same (p, err): all are exact. */
KRILL_OZ_HD double krill_oz_two_prod(double a, double x, double *err)
{
    const double p = KRILL_OZ_MUL(a, x);
#if defined(__CUDA_ARCH__)
    *err = __fma_rn(a, x, -p);
#elif defined(__FMA__)
    *err = fma(a, x, -p);
#else
    const double split = 134217729.0;            /* 2^27 + 1 */
    const double ca = split * a, cx = split * x;
    const double ah = ca - (ca - a), al = a - ah;
    const double xh = cx - (cx - x), xl = x - xh;
    *err = al * xl - (((p - ah * xh) - al * xh) - ah * xl);
#endif
    return p;
}

/* The fast path's guard on a term a x with p = fl(a x): |a| and |x| are 0 or in
 * [2^-1022, 2^401), that is exponents -1022 to 400 (false for subnormals, Inf and NaN), and
 * |p| >= 2^-800 unless a or x is 0. From the bit patterns of the magnitudes (which order
 * like the values): integer steps only, no branches, and no floating-point compares, which
 * on the GPU would share the FP64 pipe with the sum itself. */
KRILL_OZ_HD int krill_oz_fast_guard(double a, double x, double p)
{
#if defined(__CUDA_ARCH__)
    /* the same tests on the high 32 bits (and the low ones for zero: the bounds are whole
     * exponents), in half the integer steps: a GPU does 64-bit integer arithmetic as pairs of
     * 32-bit steps, and the integer pipe was the fast mdot kernel's busiest under ncu
     * (GMRES(30)'s orthogonalization on poisson3d:128, H100: 0.129 -> 0.122 s a 200
     * iterations) */
    const unsigned ha = (unsigned)__double2hiint(a) & 0x7fffffffu;
    const unsigned hx = (unsigned)__double2hiint(x) & 0x7fffffffu;
    const unsigned hp = (unsigned)__double2hiint(p) & 0x7fffffffu;
    const unsigned lo = 1u << 20, hi = (1023u + 401u) << 20, plo = (1023u - 800u) << 20;
    const int za = (ha | (unsigned)__double2loint(a)) == 0;
    const int zx = (hx | (unsigned)__double2loint(x)) == 0;
    return (za | (ha - lo < hi - lo)) & (zx | (hx - lo < hi - lo)) & (za | zx | (hp >= plo));
#else
    const uint64_t ba = krill_oz_abs_bits(a), bx = krill_oz_abs_bits(x);
    const uint64_t lo = (uint64_t)1 << 52, hi = (uint64_t)(1023 + 401) << 52;
    const uint64_t plo = (uint64_t)(1023 - 800) << 52;
    const int za = ba == 0, zx = bx == 0;
    /* unsigned: b < lo wraps above hi - lo */
    return (za | (ba - lo < hi - lo)) & (zx | (bx - lo < hi - lo)) &
           (za | zx | (krill_oz_abs_bits(p) >= plo));
#endif
}

/* the sum's part of one term a x (hi, mid, lo, t), without the guard and the count: for
 * callers that establish the guard's conditions for all their terms at once (and add 2 to m
 * per term) */
KRILL_OZ_HD void krill_oz_fast_sum(krill_oz_fast *f, double a, double x)
{
    double p, e, t, r, q0, q1;
    p = krill_oz_two_prod(a, x, &e);
    f->hi = krill_oz_two_sum(f->hi, p, &t);
    r = krill_oz_two_sum(t, e, &q0);
    f->mid = krill_oz_two_sum(f->mid, r, &q1);
    f->lo = KRILL_OZ_ADD(f->lo, KRILL_OZ_ADD(q0, q1));
    f->t = KRILL_OZ_ADD(f->t, KRILL_OZ_ADD(fabs(q0), fabs(q1)));
}

/* one term a x (a term the guard refuses clears ok: what the other fields then hold does
 * not matter, krill_oz_fast_end declines) */
KRILL_OZ_HD void krill_oz_fast_add(krill_oz_fast *f, double a, double x)
{
    f->ok &= krill_oz_fast_guard(a, x, KRILL_OZ_MUL(a, x));
    krill_oz_fast_sum(f, a, x);
    f->m += 2;
}

/* f <- the sum of f's terms and g's (lanes that split a row): (hi, t) = TwoSum(f.hi, g.hi),
 * (r, q0) = TwoSum(f.mid, g.mid), (mid, q1) = TwoSum(r, t); q0 and q1 join lo as above. */
KRILL_OZ_HD void krill_oz_fast_merge(krill_oz_fast *f, const krill_oz_fast *g)
{
    double t, r, q0, q1;
    f->hi = krill_oz_two_sum(f->hi, g->hi, &t);
    r = krill_oz_two_sum(f->mid, g->mid, &q0);
    f->mid = krill_oz_two_sum(r, t, &q1);
    f->lo = KRILL_OZ_ADD(KRILL_OZ_ADD(f->lo, g->lo), KRILL_OZ_ADD(q0, q1));
    f->t = KRILL_OZ_ADD(KRILL_OZ_ADD(f->t, g->t), KRILL_OZ_ADD(fabs(q0), fabs(q1)));
    f->m += g->m + 2;
    f->ok = f->ok && g->ok;
}

/* 1 with *sum the correctly rounded sum of the terms when the bound decides it; else 0 (use
 * the exact path). */
KRILL_OZ_HD int krill_oz_fast_end(const krill_oz_fast *f, double *sum)
{
    double s1, c1, w, aw, s, c, e2, as, cs, up, dn;
    uint64_t bits;
    if (!f->ok || f->m > ((int64_t)1 << 32)) return 0;
    if (f->t == 0.0) {                 /* X = hi + mid exactly: one IEEE addition rounds it */
        s = KRILL_OZ_ADD(f->hi, f->mid);
        *sum = s == 0.0 ? 0.0 : s;                        /* an exact zero: +0 */
        return 1;
    }
    s1 = krill_oz_two_sum(f->hi, f->mid, &c1);
    w = KRILL_OZ_ADD(c1, f->lo);
    aw = fabs(w);
    s = krill_oz_two_sum(s1, w, &c);
    e2 = KRILL_OZ_ADD(KRILL_OZ_MUL(f->t, (double)(2 * f->m + 4) * 0x1p-52),     /* 2 E' */
                      KRILL_OZ_MUL(aw, 0x1p-51));
    if (s == 0.0) return 0;            /* T > 0: an error left around zero */
    as = fabs(s);
    if (as < 0x1p-1000 || as > 0x1p900) return 0;
    cs = s > 0.0 ? c : -c;
    bits = krill_oz_abs_bits(s);
    up = KRILL_OZ_MUL(KRILL_OZ_SUB(krill_oz_from_bits(bits + 1), as), 0.5);
    dn = KRILL_OZ_MUL(KRILL_OZ_SUB(as, krill_oz_from_bits(bits - 1)), 0.5);
    if (!(KRILL_OZ_SUB(up, cs) > e2) || !(KRILL_OZ_ADD(dn, cs) > e2)) return 0;
    *sum = s;
    return 1;
}

/* Rows of at most 2^14 terms: rho <= 34, d >= 19, at most 1 + ceil((34 + 1024 + 1074 - 52)
 * / 19) = 111 slices per operand, 221 diagonals (1768 bytes of scratch). */
#define KRILL_OZ_ROW_MAX_N ((int64_t)1 << 14)
#define KRILL_OZ_ROW_MAX_DIAG 221

/* ---- the exact path ------------------------------------------------------------------------
 * Rows the fast path declines: the Ozaki split of ozaki_math.h in exact mode with the row's
 * own statistics and term count, digit products summed per diagonal in int64, one rounding
 * (krill_oz_finish). */
typedef struct krill_oz_row {
    uint64_t amax, xmax;     /* max |a_k| and max |x_k| as bit patterns (NaN-propagating) */
    int alsb, xlsb;          /* lowest set bit over the finite nonzero a_k, and over the x_k */
    int flags;               /* KRILL_OZ_NAN / _PINF / _NINF of the products a_k x_k */
    int64_t n;               /* terms seen */
    krill_oz_params p;       /* krill_oz_row_begin: the parameters of the sum */
} krill_oz_row;

KRILL_OZ_HD void krill_oz_row_init(krill_oz_row *r)
{
    r->amax = r->xmax = 0;
    r->alsb = r->xlsb = KRILL_OZ_LSB_NONE;
    r->flags = 0;
    r->n = 0;
}

/* pass 2: one term's statistics */
KRILL_OZ_HD void krill_oz_row_stats(krill_oz_row *r, double a, double x)
{
    krill_oz_stats_add(a, &r->amax, &r->alsb);
    krill_oz_stats_add(x, &r->xmax, &r->xlsb);
    r->flags |= krill_oz_special(a, x);
    r->n++;
}

/* r <- the statistics of r's terms and o's terms */
KRILL_OZ_HD void krill_oz_row_merge(krill_oz_row *r, const krill_oz_row *o)
{
    if (o->amax > r->amax) r->amax = o->amax;
    if (o->xmax > r->xmax) r->xmax = o->xmax;
    if (o->alsb < r->alsb) r->alsb = o->alsb;
    if (o->xlsb < r->xlsb) r->xlsb = o->xlsb;
    r->flags |= o->flags;
    r->n += o->n;
}

/* A sum the bounds of krill_oz_fast_end left undecided (X within E' of a midpoint: mostly
 * exact ties), decided exactly from the statistics of its terms, which the exact path gathers
 * first (pass 2), instead of by the digit products (pass 3). Every product a x is a multiple
 * of 2^L, L = alsb + xlsb (the lowest set bits over the nonzero a and x), so is every sum
 * and every TwoSum / TwoProduct error of them (an exact result is a multiple of 2^L; a
 * rounded one has an ulp of at least 2^L). If t < 2^(L+52), the true sum of the |q| is below
 * t (1 + 2 m u) < 2^(L+53) (m <= 2^32), so every partial sum of the q's, in whatever order
 * the lanes added them, is a multiple of 2^L below 2^(L+53) in magnitude: representable,
 * and lo is their exact sum; X = hi + mid + lo. (s1, c1) = TwoSum(hi, mid) exactly, and if
 * fl(|c1| + |lo|) < 2^(L+52), w = c1 + lo is exact too (the same argument), so X = s1 + w and
 * RN(X) = fl(s1 + w), one IEEE addition, ties and underflow included (an exact zero: +0).
 * 1 with *sum = RN(X), or 0 (a refused term, Inf/NaN, no nonzero term, or a third level too
 * wide for the test: the digit products decide). With full-precision operands the test
 * holds when the terms span less than about 2^50; it decides the exact ties that CG's
 * first products A p leave on elasticity3d (12% of the rows). */
KRILL_OZ_HD int krill_oz_fast_exact(const krill_oz_fast *f, const krill_oz_row *r, double *sum)
{
    double s1, c1, w, s, lim;
    int l;
    if (!f->ok || f->m > ((int64_t)1 << 32) || r->flags != 0 || r->alsb == KRILL_OZ_LSB_NONE ||
        r->xlsb == KRILL_OZ_LSB_NONE)
        return 0;
    l = r->alsb + r->xlsb + 52;
    if (l < -1022 || l > 1023) return 0;
    lim = krill_oz_from_bits((uint64_t)(l + 1023) << 52);                /* 2^(L+52) */
    if (!(f->t < lim)) return 0;
    s1 = krill_oz_two_sum(f->hi, f->mid, &c1);
    if (!(KRILL_OZ_ADD(fabs(c1), fabs(f->lo)) < lim)) return 0;
    w = KRILL_OZ_ADD(c1, f->lo);
    s = KRILL_OZ_ADD(s1, w);
    *sum = s == 0.0 ? 0.0 : s;
    return 1;
}

/* The parameters of the row's exact sum; clears acc[0 .. nd) and returns nd, the diagonals
 * pass 3 accumulates into: 0 when no term needs accumulating (no terms, a zero operand
 * everywhere, or an Inf/NaN: then the result comes from the flags) and pass 3 is skipped. */
KRILL_OZ_HD int krill_oz_row_begin(krill_oz_row *r, int64_t *acc)
{
    double as[2], xs[2];
    as[0] = krill_oz_from_bits(r->amax);
    as[1] = r->alsb;
    xs[0] = krill_oz_from_bits(r->xmax);
    xs[1] = r->xlsb;
    krill_oz_params_make(r->n > 0 ? r->n : 1, as, xs, 0, 0, &r->p);
    if (r->p.state != KRILL_OZ_RUN) return 0;
    for (int c = 0; c < r->p.ndiag; c++) acc[c] = 0;
    return r->p.ndiag;
}

/* pass 3: one term (called only when begin returned nd > 0: every term is finite then) */
KRILL_OZ_HD void krill_oz_row_add(const krill_oz_row *r, double a, double x, int64_t *acc)
{
    krill_oz_accumulate(&r->p, a, x, acc);
}

/* the row's correctly rounded sum (acc is overwritten) */
KRILL_OZ_HD double krill_oz_row_end(const krill_oz_row *r, int64_t *acc)
{
    return krill_oz_finish(&r->p, acc, r->flags, 0);
}

/* The three passes over a gathered row: sum_k a[k * inca] x[col[k * inca]] for k < len,
 * columns < 0 skipped (ELL padding). acc: KRILL_OZ_ROW_MAX_DIAG int64 when
 * len <= KRILL_OZ_ROW_MAX_N, else KRILL_OZ_MAX_DIAG. */
KRILL_OZ_HD double krill_oz_row_gather(int64_t len, const double *a, const int32_t *col,
                                       int64_t inca, const double *x, int64_t *acc)
{
    krill_oz_fast f;
    krill_oz_row r;
    double s;
    krill_oz_fast_init(&f);
    for (int64_t k = 0; k < len; k++)
        if (col[k * inca] >= 0) krill_oz_fast_add(&f, a[k * inca], x[col[k * inca]]);
    if (krill_oz_fast_end(&f, &s)) return s;
    krill_oz_row_init(&r);
    for (int64_t k = 0; k < len; k++)
        if (col[k * inca] >= 0) krill_oz_row_stats(&r, a[k * inca], x[col[k * inca]]);
    if (krill_oz_row_begin(&r, acc) > 0)
        for (int64_t k = 0; k < len; k++)
            if (col[k * inca] >= 0) krill_oz_row_add(&r, a[k * inca], x[col[k * inca]], acc);
    return krill_oz_row_end(&r, acc);
}

/* y <- alpha s + beta y after a row sum s, as separately rounded products and one sum (no
 * FMA on either device); beta == 0 does not read y. */
KRILL_OZ_HD double krill_oz_axpby(double alpha, double s, double beta, double y)
{
    if (beta == 0.0) return alpha == 1.0 ? s : KRILL_OZ_MUL(alpha, s);
    return KRILL_OZ_ADD(KRILL_OZ_MUL(alpha, s), KRILL_OZ_MUL(beta, y));
}

#endif
