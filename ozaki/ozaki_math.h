/* ozaki/ozaki_math.h - the arithmetic of the reproducible reductions, shared by the host
 * (C11) and the device (CUDA): every function is a small static inline usable from both, so
 * the CPU and the GPU run the same integer and rounding steps. doc/reproducible.md proves
 * what is stated here.
 *
 * The scheme, for a dot product x'y of global length n (doc/reproducible.md, "Design"):
 *
 *   rho = ceil((53 + L) / 2), L = ceil(log2 n);  d = 53 - rho  (bits per slice)
 *   tau_x = ceil(log2 max|x_i|)                   (exponent arithmetic, never log2())
 *   k_p = rho + tau_x - p d,  p = 0, 1, ...       (sigma_p = 2^k_p: slice p of x)
 *
 * Slice p of x_i is ExtractScalar with sigma_p (Algorithm 1 of the paper, line 9-10, with
 * the maximum of the remainder bounded by 2^(k_p - 53) instead of recomputed): the digit
 *   m_p = fl(fl(sigma_p + r) - sigma_p) / 2^(k_p - 53),  r <- r - m_p 2^(k_p - 53)
 * is an integer with |m_p| <= 2^d. We compute it in the normalized frame R = r 2^(53 - k_p),
 * where sigma_p is 2^53 for every p and no step can overflow or underflow:
 *   t = fl(2^53 + R);  m = t - 2^53;  R <- (R - m) 2^d      (all exact but the first rounding)
 * Digit products m_p m'_q are integers below 2^(2d) <= 2^52 (exact doubles) with weight
 * 2^(e0 - (p + q) d), e0 = (k^x_0 - 53) + (k^y_0 - 53); a sum of n of them stays below 2^53
 * (the choice of rho), so per-(p, q) sums are exact in double in any order, and per-diagonal
 * (c = p + q) sums are exact in int64 (below 2^53 times min(s_x, s_y) <= 2^62). The result
 * is the one correctly rounded double of sum_c A_c 2^(e0 - c d) (krill_oz_round).
 *
 * Exact mode takes s = 1 + ceil((k_0 - lsb_min - 52) / d) slices (lsb_min: the exponent of
 * the lowest set bit over the nonzero elements): after that slice every remainder is 0.
 *
 * Statistics of a vector ("stats", two doubles in context memory; what a kernel that writes
 * a vector may also produce so that a later dot needs no pass of its own to find them):
 *   stats[0] = max_i |x_i| over all elements, NaN if any element is NaN, else +Inf if any is
 *              infinite (the maximum of the bit patterns of |x_i|: krill_oz_abs_bits);
 *   stats[1] = min over finite nonzero x_i of krill_oz_lsb(x_i), as a double; any lower
 *              value is allowed (more slices, same exact result); KRILL_OZ_LSB_NONE when
 *              there is no such element. */
#ifndef KRILL_OZAKI_MATH_H
#define KRILL_OZAKI_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define KRILL_OZ_HD static __host__ __device__ __forceinline__
#else
#define KRILL_OZ_HD static inline
#endif

/* Rounded double operations that no compiler may contract into a fused multiply-add: the
 * CUDA intrinsics on the device; plain operators on the host (compiled -ffp-contract=off). */
#ifdef __CUDA_ARCH__
#define KRILL_OZ_ADD(a, b) __dadd_rn((a), (b))
#define KRILL_OZ_SUB(a, b) __dsub_rn((a), (b))
#define KRILL_OZ_MUL(a, b) __dmul_rn((a), (b))
#else
#define KRILL_OZ_ADD(a, b) ((a) + (b))
#define KRILL_OZ_SUB(a, b) ((a) - (b))
#define KRILL_OZ_MUL(a, b) ((a) * (b))
#endif

/* Largest global length: rho <= 45, so d >= 8 bits per slice. */
#define KRILL_OZ_MAX_LOG2N 37
#define KRILL_OZ_MAX_N ((int64_t)1 << KRILL_OZ_MAX_LOG2N)
/* Most slices exact mode can need: 1 + ceil((rho + 1024 + 1074 - 52) / d) at rho = 45, d = 8
 * (the function grows with rho). */
#define KRILL_OZ_MAX_SLICES 263
#define KRILL_OZ_MAX_DIAG (2 * KRILL_OZ_MAX_SLICES - 1)
/* Most nonzero digits of one element: 1 + ceil(54 / d) at d = 8. */
#define KRILL_OZ_MAX_WINDOW 8
/* stats[1] when a vector has no finite nonzero element (above every real lsb, <= 971). */
#define KRILL_OZ_LSB_NONE 4096
/* Special-value flags of a dot product (OR-combined): a product x_i y_i was NaN / +Inf / -Inf. */
#define KRILL_OZ_NAN 1
#define KRILL_OZ_PINF 2
#define KRILL_OZ_NINF 4

/* ---- bits -------------------------------------------------------------------------------- */

KRILL_OZ_HD uint64_t krill_oz_bits(double v)
{
#ifdef __CUDA_ARCH__
    return (uint64_t)__double_as_longlong(v);
#else
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
#endif
}

KRILL_OZ_HD double krill_oz_from_bits(uint64_t b)
{
#ifdef __CUDA_ARCH__
    return __longlong_as_double((long long)b);
#else
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
#endif
}

/* number of significant bits of v (0 for 0) */
KRILL_OZ_HD int krill_oz_bitlen(uint64_t v)
{
#ifdef __CUDA_ARCH__
    return 64 - __clzll((long long)v);
#else
    return v ? 64 - __builtin_clzll(v) : 0;
#endif
}

/* index of the lowest set bit of v != 0 */
KRILL_OZ_HD int krill_oz_ctz(uint64_t v)
{
#ifdef __CUDA_ARCH__
    return __ffsll((long long)v) - 1;
#else
    return __builtin_ctzll(v);
#endif
}

#define KRILL_OZ_MANT_MASK ((((uint64_t)1) << 52) - 1)

/* The bit pattern of |v|: for |v| these order like the values, +Inf above every finite value
 * and NaN above +Inf, so their maximum is a NaN-propagating max|v|. */
KRILL_OZ_HD uint64_t krill_oz_abs_bits(double v)
{
    return krill_oz_bits(v) & ~((uint64_t)1 << 63);
}

/* e with 2^e <= |v| < 2^(e+1), for finite v != 0 (ilogb, subnormals included) */
KRILL_OZ_HD int krill_oz_exponent(double v)
{
    const uint64_t b = krill_oz_abs_bits(v);
    const int biased = (int)(b >> 52);
    if (biased != 0) return biased - 1023;
    return -1075 + krill_oz_bitlen(b & KRILL_OZ_MANT_MASK);
}

/* exponent of the lowest set bit of v: v is an odd multiple of 2^lsb (finite v != 0) */
KRILL_OZ_HD int krill_oz_lsb(double v)
{
    const uint64_t b = krill_oz_abs_bits(v);
    const int biased = (int)(b >> 52);
    uint64_t mant = b & KRILL_OZ_MANT_MASK;
    if (biased != 0) return krill_oz_ctz(mant | ((uint64_t)1 << 52)) + biased - 1075;
    return krill_oz_ctz(mant) - 1074;
}

/* ceil(log2 a) for finite a > 0: the smallest tau with a <= 2^tau */
KRILL_OZ_HD int krill_oz_tau(double a)
{
    const uint64_t b = krill_oz_abs_bits(a);
    const int e = krill_oz_exponent(a);
    const int biased = (int)(b >> 52);
    const uint64_t mant = b & KRILL_OZ_MANT_MASK;
    const int power_of_two = biased != 0 ? mant == 0 : (mant & (mant - 1)) == 0;
    return power_of_two ? e : e + 1;
}

/* 2^e exactly, for -1074 <= e <= 1023 */
KRILL_OZ_HD double krill_oz_pow2(int e)
{
    if (e >= -1022) return krill_oz_from_bits((uint64_t)(e + 1023) << 52);
    return krill_oz_from_bits((uint64_t)1 << (e + 1074));
}

/* v 2^e, in steps of at most 2^1000 so that every factor is a normal number: exact whenever
 * v 2^e is representable and the steps do not pass through under- or overflow (scaling
 * towards the result); otherwise rounded once, in the last step. */
KRILL_OZ_HD double krill_oz_mul_pow2(double v, int e)
{
    while (e > 1000) {
        v = KRILL_OZ_MUL(v, krill_oz_pow2(1000));
        e -= 1000;
    }
    while (e < -1000) {
        v = KRILL_OZ_MUL(v, krill_oz_pow2(-1000));
        e += 1000;
    }
    return KRILL_OZ_MUL(v, krill_oz_pow2(e));
}

/* ---- parameters -------------------------------------------------------------------------- */

/* rho = ceil((53 + ceil(log2 n)) / 2) for 1 <= n <= KRILL_OZ_MAX_N: the smallest integer with
 * 2^(2 rho - 53) >= n, i.e. n 2^(2d) <= 2^53. */
KRILL_OZ_HD int krill_oz_rho(int64_t n)
{
    int l = 0;
    while (l < 62 && ((int64_t)1 << l) < n) l++;
    return (53 + l + 1) / 2;
}

/* The parameters of one dot product, a pure function of (n, the two vectors' stats, mode,
 * S): every device and thread count derives the same ones. */
typedef struct krill_oz_params {
    int state;      /* KRILL_OZ_RUN, or KRILL_OZ_ZERO (a vector is all zeros: the sum is an
                       exact 0) or KRILL_OZ_SPECIAL (a vector holds Inf or NaN: the result
                       comes from the special-value flags) */
    int rho, d;     /* rho and the bits per slice d = 53 - rho */
    int kx, ky;     /* k_0 of x and of y: sigma_p = 2^(k_0 - p d) */
    int sx, sy;     /* slices of x and y */
    int cut;        /* largest p + q (0-based) taken: sx + sy - 2, or S - 1 in fast mode */
    int ndiag;      /* diagonals c = p + q in the sum: cut + 1 */
    int e_last;     /* weight exponent of the last diagonal: e0 - (ndiag - 1) d */
    int window;     /* most nonzero digits of one element: 1 + ceil(54 / d) */
    double two_d;   /* 2^d */
    double scx1, scx2, scy1, scy2;   /* R_0 = (x_i scx1) scx2 = x_i 2^(53 - kx), same for y */
} krill_oz_params;

#define KRILL_OZ_RUN 0
#define KRILL_OZ_ZERO 1
#define KRILL_OZ_SPECIAL 2

/* slices of a vector with maximum exponent tau and lowest bit lsb in exact mode: the first
 * p with k_p <= lsb + 52 is the last slice (its remainder is 0) */
KRILL_OZ_HD int krill_oz_exact_slices(int k0, int lsb, int d)
{
    const int gap = k0 - lsb - 52;
    return gap <= 0 ? 1 : 1 + (gap + d - 1) / d;
}

/* the two factors of 2^e (e = 53 - k0 in [-1016, 1101]) for the start of the digit chain */
KRILL_OZ_HD void krill_oz_split_scale(int e, double *s1, double *s2)
{
    if (e > 1000) {
        *s1 = krill_oz_pow2(1000);
        *s2 = krill_oz_pow2(e - 1000);
    } else {
        *s1 = krill_oz_pow2(e);
        *s2 = 1.0;
    }
}

/* stats (two doubles, see the file comment) of x and y; fast != 0: fast mode; slices: S, or
 * 0 for exact (fast mode needs S >= 1). n >= 1. */
KRILL_OZ_HD void krill_oz_params_make(int64_t n, const double *xstats, const double *ystats,
                                      int fast, int slices, krill_oz_params *p)
{
    const double ax = xstats[0], ay = ystats[0];
    int lx, ly;
    p->rho = krill_oz_rho(n);
    p->d = 53 - p->rho;
    p->two_d = krill_oz_pow2(p->d);
    p->window = 1 + (54 + p->d - 1) / p->d;
    p->kx = p->ky = 0;
    p->sx = p->sy = 1;
    p->cut = 0;
    p->ndiag = 1;
    p->e_last = 0;
    p->scx1 = p->scx2 = p->scy1 = p->scy2 = 1.0;
    /* !(a <= DBL_MAX) is true for +Inf and NaN */
    if (!(ax <= 1.7976931348623157e308) || !(ay <= 1.7976931348623157e308)) {
        p->state = KRILL_OZ_SPECIAL;
        return;
    }
    if (ax == 0.0 || ay == 0.0) {
        p->state = KRILL_OZ_ZERO;
        return;
    }
    p->state = KRILL_OZ_RUN;
    lx = xstats[1] < -1074.0 ? -1074 : (int)xstats[1];   /* a lower bound is allowed */
    ly = ystats[1] < -1074.0 ? -1074 : (int)ystats[1];
    p->kx = p->rho + krill_oz_tau(ax);
    p->ky = p->rho + krill_oz_tau(ay);
    p->sx = krill_oz_exact_slices(p->kx, lx, p->d);
    p->sy = krill_oz_exact_slices(p->ky, ly, p->d);
    if (slices > 0) {
        if (p->sx > slices) p->sx = slices;
        if (p->sy > slices) p->sy = slices;
    }
    p->cut = p->sx + p->sy - 2;
    if (fast && slices - 1 < p->cut) p->cut = slices - 1;
    p->ndiag = p->cut + 1;
    p->e_last = (p->kx - 53) + (p->ky - 53) - p->cut * p->d;
    krill_oz_split_scale(53 - p->kx, &p->scx1, &p->scx2);
    krill_oz_split_scale(53 - p->ky, &p->scy1, &p->scy2);
}

/* ---- splitting --------------------------------------------------------------------------- */

/* One ExtractScalar step in the normalized frame: the digit m of R (an integer, |m| <= 2^d)
 * and R <- (R - m) 2^d. fl(2^53 + R) is the only rounding; R - m and the scaling are exact. */
KRILL_OZ_HD double krill_oz_digit(double *r, double two_d)
{
    const double two53 = 9007199254740992.0;
    const double t = KRILL_OZ_ADD(two53, *r);
    const double m = KRILL_OZ_SUB(t, two53);
    *r = KRILL_OZ_MUL(KRILL_OZ_SUB(*r, m), two_d);
    return m;
}

/* The digits of v at slices p0, p0 + 1, ..., p0 + window - 1 into dig[] (zero at slices >= s;
 * every digit outside the window is 0). Returns p0, or -1 when v has no digit below slice s
 * (v == 0, or v too small). Valid for any finite v with |v| <= 2^(k0 - rho); R starts exact:
 * |v 2^(53 - k_p0)| lies in [1/2, 2^d]. */
KRILL_OZ_HD int krill_oz_window(double v, int k0, int d, int s, int window, double two_d,
                                double *dig)
{
    int p0 = 0, e;
    double r;
    if (v == 0.0) return -1;
    e = krill_oz_exponent(v);
    if (k0 > e + 54) p0 = (k0 - e - 54 + d - 1) / d;   /* first p with k_p <= e + 54 */
    if (p0 >= s) return -1;
    r = krill_oz_mul_pow2(v, 53 - (k0 - p0 * d));
    for (int j = 0; j < window; j++) dig[j] = p0 + j < s ? krill_oz_digit(&r, two_d) : 0.0;
    return p0;
}

/* The special-value flags of x y (0 when both are finite). */
KRILL_OZ_HD int krill_oz_special(double x, double y)
{
    double prod;
    if (krill_oz_abs_bits(x) < ((uint64_t)0x7ff << 52) &&
        krill_oz_abs_bits(y) < ((uint64_t)0x7ff << 52))
        return 0;
    prod = KRILL_OZ_MUL(x, y);
    if (prod != prod) return KRILL_OZ_NAN;
    return prod > 0.0 ? KRILL_OZ_PINF : KRILL_OZ_NINF;
}

/* acc[c] += the digit products of x y on diagonal c (< p->ndiag), for finite x and y: the
 * general (windowed) form, valid for every slice count; acc is in units of 2^e_last... per
 * diagonal (see krill_oz_round). The building block of a sequential reproducible sum, e.g.
 * one row of an SpMV. */
KRILL_OZ_HD void krill_oz_accumulate(const krill_oz_params *p, double x, double y, int64_t *acc)
{
    double dx[KRILL_OZ_MAX_WINDOW], dy[KRILL_OZ_MAX_WINDOW];
    const int px = krill_oz_window(x, p->kx, p->d, p->sx, p->window, p->two_d, dx);
    const int py = px < 0 ? -1 : krill_oz_window(y, p->ky, p->d, p->sy, p->window, p->two_d, dy);
    if (py < 0) return;
    for (int a = 0; a < p->window; a++) {
        if (dx[a] == 0.0) continue;
        for (int b = 0; b < p->window && px + a + py + b <= p->cut; b++)
            acc[px + a + py + b] += (int64_t)KRILL_OZ_MUL(dx[a], dy[b]);
    }
}

/* ---- the one rounding -------------------------------------------------------------------- */

/* The double q 2^lsbpos with the sign neg: q < 2^53; lsbpos >= -1074; q < 2^52 only when
 * lsbpos == -1074 (a subnormal). Exponents past the range give an infinity. */
KRILL_OZ_HD double krill_oz_make_double(uint64_t q, int lsbpos, int neg)
{
    const uint64_t sign = neg ? (uint64_t)1 << 63 : 0;
    if (q >= ((uint64_t)1 << 52)) {
        const int biased = lsbpos + 1075;
        if (biased >= 2047) return krill_oz_from_bits(sign | ((uint64_t)0x7ff << 52));
        return krill_oz_from_bits(sign | ((uint64_t)biased << 52) | (q & KRILL_OZ_MANT_MASK));
    }
    return krill_oz_from_bits(sign | q);
}

/* Round M 2^eM (+ a tail below 2^eM that is nonzero iff sticky) to nearest, ties to even.
 * M != 0 has 64 bits whenever sticky is set (then at least 2 bits fall below the result's
 * last place, so the round bit and the sticky bit are known). */
KRILL_OZ_HD double krill_oz_round_bits(uint64_t m, int em, int sticky, int neg)
{
    const int len = krill_oz_bitlen(m);
    const int top = em + len - 1;   /* 2^top <= M 2^eM < 2^(top + 1) */
    int lsbpos = top - 52, sh;
    uint64_t q;
    if (top > 1023) return krill_oz_make_double((uint64_t)1 << 52, 1024, neg);   /* infinity */
    if (lsbpos < -1074) lsbpos = -1074;
    sh = lsbpos - em;               /* bits of M below the result's last place */
    if (sh <= 0) {
        q = m << -sh;               /* exact (sticky is 0 here) */
    } else if (sh > 64) {
        q = 0;                      /* below half the smallest subnormal */
    } else {
        const uint64_t rem = sh == 64 ? m : m & (((uint64_t)1 << sh) - 1);
        const uint64_t half = (uint64_t)1 << (sh - 1);
        q = sh == 64 ? 0 : m >> sh;
        if (rem > half || (rem == half && (sticky || (q & 1)))) q++;
    }
    if (q == ((uint64_t)1 << 53)) {
        q >>= 1;
        lsbpos++;
    }
    return krill_oz_make_double(q, lsbpos, neg);
}

/* The exact value V = sum_{c < nd} acc[c] 2^(e_last + (nd - 1 - c) d) (acc[0] the most
 * significant diagonal; |acc[c]| < 2^62), rounded once:
 *   sqrt_mode == 0: the double nearest V (ties to even); an exact 0 is +0;
 *   sqrt_mode == 1: V >= 0 is a sum of squares; sqrt(fl(V 2^-2t)) 2^t with 2^2t near V, which
 *                   is sqrt(fl(V)) whenever fl(V) is a normal number and stays finite
 *                   beyond (no overflow or underflow of V itself).
 * Integer steps only: carries in base 2^d from the last diagonal up (exact in int64), the
 * sign from the top carry (two's complement over the digits when negative), the leading 64
 * bits and a sticky bit, one rounding. acc is overwritten (with the base-2^d digits). */
KRILL_OZ_HD double krill_oz_round(int64_t *acc, int nd, int d, int e_last, int sqrt_mode)
{
    const int64_t mask = ((int64_t)1 << d) - 1;
    int64_t carry = 0;
    uint64_t m;
    int em, next, sticky = 0, neg;
    for (int c = nd - 1; c >= 0; c--) {
        const int64_t t = acc[c] + carry;                 /* |t| < 2^62 + 2^55 */
        const int64_t digit = (int64_t)((uint64_t)t & (uint64_t)mask);
        carry = (t - digit) / ((int64_t)1 << d);          /* exact: t - digit is a multiple */
        acc[c] = digit;
    }
    /* V = carry 2^(nd d) + sum digits, 0 <= sum digits < 2^(nd d): V < 0 iff carry < 0 */
    neg = carry < 0;
    if (neg) {   /* -V = (-carry - 1) 2^(nd d) + (complemented digits + 1) */
        int64_t up = 1;
        for (int c = nd - 1; c >= 0; c--) {
            const int64_t digit = mask - acc[c] + up;
            up = digit > mask;
            acc[c] = up ? 0 : digit;
        }
        carry = -carry - 1 + up;
    }
    if (carry > 0) {
        m = (uint64_t)carry;
        em = e_last + nd * d;
        next = 0;
    } else {
        next = 0;
        while (next < nd && acc[next] == 0) next++;
        if (next == nd) return 0.0;                       /* exactly zero: +0 */
        m = (uint64_t)acc[next];
        em = e_last + (nd - 1 - next) * d;
        next++;
    }
    for (; next < nd; next++) {                           /* append digits while 64 bits last */
        const int len = krill_oz_bitlen(m);
        const uint64_t digit = (uint64_t)acc[next];
        if (len + d <= 64) {
            m = (m << d) | digit;
            em -= d;
        } else {
            const int take = 64 - len;                    /* < d leading bits of this digit */
            if (take > 0) {
                m = (m << take) | (digit >> (d - take));
                em -= take;
            }
            sticky = (digit & ((((uint64_t)1) << (d - take)) - 1)) != 0;
            for (next++; next < nd; next++) sticky |= acc[next] != 0;
            break;
        }
    }
    if (sqrt_mode) {
        const int top = em + krill_oz_bitlen(m) - 1;
        const int t = top >= 0 ? top / 2 : -((1 - top) / 2);   /* floor(top / 2) */
        const double v = krill_oz_round_bits(m, em - 2 * t, sticky, 0);   /* in [1, 4] */
        return krill_oz_mul_pow2(sqrt(v), t);
    }
    return krill_oz_round_bits(m, em, sticky, neg);
}

/* The result of a dot product from its parameters, diagonal sums and flags: NaN when a
 * product was NaN or both infinities occurred (or when the stats said Inf/NaN but no element
 * was), the infinity that occurred, +0 when a vector was all zeros, else krill_oz_round. */
KRILL_OZ_HD double krill_oz_finish(const krill_oz_params *p, int64_t *acc, int flags,
                                   int sqrt_mode)
{
    const double inf = krill_oz_from_bits((uint64_t)0x7ff << 52);
    if ((flags & KRILL_OZ_NAN) || (flags & (KRILL_OZ_PINF | KRILL_OZ_NINF)) ==
                                      (KRILL_OZ_PINF | KRILL_OZ_NINF))
        return krill_oz_from_bits((uint64_t)0x7ff8 << 48);
    if (flags & KRILL_OZ_PINF) return inf;
    if (flags & KRILL_OZ_NINF) return -inf;
    if (p->state == KRILL_OZ_SPECIAL) return krill_oz_from_bits((uint64_t)0x7ff8 << 48);
    if (p->state == KRILL_OZ_ZERO) return 0.0;
    return krill_oz_round(acc, p->ndiag, p->d, p->e_last, sqrt_mode);
}

/* ---- statistics -------------------------------------------------------------------------- */

/* Fold v into (max bits of |v|, min lsb): see the file comment for stats[]. Branch-free:
 * zeros and non-finite values give KRILL_OZ_LSB_NONE. */
KRILL_OZ_HD void krill_oz_stats_add(double v, uint64_t *amax_bits, int *lsb_min)
{
    const uint64_t b = krill_oz_abs_bits(v);
    const int biased = (int)(b >> 52);
    const uint64_t mant = (b & KRILL_OZ_MANT_MASK) | (biased ? (uint64_t)1 << 52 : 0);
    const int lsb = krill_oz_ctz(mant | ((uint64_t)1 << 63)) + (biased ? biased : 1) - 1075;
    const int valid = b != 0 && biased != 0x7ff;
    const int l = valid ? lsb : KRILL_OZ_LSB_NONE;
    if (b > *amax_bits) *amax_bits = b;
    if (l < *lsb_min) *lsb_min = l;
}

/* ---- a whole small dot product, sequentially ---------------------------------------------- */

/* x'y over n <= KRILL_OZ_MAX_N elements (x[i * incx], y[i * incy]) in one thread, the same
 * bits as every parallel form: stats, then the windowed digits. acc: KRILL_OZ_MAX_DIAG int64
 * of scratch. fast/slices as in krill_oz_params_make. */
KRILL_OZ_HD double krill_oz_dot_seq(int64_t n, const double *x, int64_t incx, const double *y,
                                    int64_t incy, int fast, int slices, int64_t *acc)
{
    uint64_t ax = 0, ay = 0;
    int lx = KRILL_OZ_LSB_NONE, ly = KRILL_OZ_LSB_NONE, flags = 0;
    double xs[2], ys[2];
    krill_oz_params p;
    if (n <= 0) return 0.0;
    for (int64_t i = 0; i < n; i++) {
        krill_oz_stats_add(x[i * incx], &ax, &lx);
        krill_oz_stats_add(y[i * incy], &ay, &ly);
    }
    xs[0] = krill_oz_from_bits(ax);
    xs[1] = lx;
    ys[0] = krill_oz_from_bits(ay);
    ys[1] = ly;
    krill_oz_params_make(n, xs, ys, fast, slices, &p);
    if (p.state == KRILL_OZ_SPECIAL) {
        for (int64_t i = 0; i < n; i++) flags |= krill_oz_special(x[i * incx], y[i * incy]);
    } else if (p.state == KRILL_OZ_RUN) {
        for (int c = 0; c < p.ndiag; c++) acc[c] = 0;
        for (int64_t i = 0; i < n; i++) krill_oz_accumulate(&p, x[i * incx], y[i * incy], acc);
    }
    return krill_oz_finish(&p, acc, flags, 0);
}

#endif
