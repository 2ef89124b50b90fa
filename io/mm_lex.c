/* io/mm_lex.c - the real-number lexer of the Matrix Market reader: correctly rounded,
 * without strtod on the common paths.
 *
 * A token is read as  value = (-1)^s * w * 10^q  with w the first 19 significant digits
 * (w < 10^19 < 2^64) and q the decimal exponent; digits after the 19th are dropped, and
 * remembered (`truncated`) when one of them is not zero. Trailing zeros of an exact w are
 * moved into q (1.0000000000000000e+00 is 1e0). Then, by cost:
 *
 *  1. Clinger's fast path: w <= 2^53 and |q| <= 22. w and 10^|q| are exact doubles, so one
 *     IEEE multiply or divide is the correctly rounded result. Needs FLT_EVAL_METHOD == 0.
 *  2. A 192-bit product with a truncated power of five, for -342 <= q <= 308. With
 *     5^q = (P + d) 2^b (P the first 128 bits, 0 <= d < 1; mm_pow5.c) and w normalized to
 *     w' = w 2^z in [2^63, 2^64):
 *         value = N 2^(b + q - z),   N = w' (P + d) = X + w' d,   X = w' P  (exact, 192 bits)
 *     so N lies in [X, X + 2^64). Shift X so that its top bit is bit 191; its top 53 bits
 *     are the mantissa, the next 11 bits and the low 128 bits decide the rounding. The
 *     unknown w' d (< 2^65 after the shift) adds at most 2 to the third word, so the
 *     decision is certain unless the 11 bits are 0x3ff or 0x7ff and that word is within 2
 *     of overflowing - then strtod decides (random digits land there about once in 2^62;
 *     long exact decimal forms of binary fractions, such as 2^-30 in 21 digits, more
 *     often). Where P is exact (d = 0) exact ties round to even; elsewhere d > 0, so a
 *     product that looks like an exact tie lies above it. Results that would be
 *     subnormal go to strtod, so that no value is rounded twice; results past DBL_MAX are
 *     out of range.
 *     With truncated digits the value lies strictly between w 10^q and (w + 1) 10^q; when
 *     both round to the same double, so does the value (rounding is monotone), else strtod.
 *  3. strtod, on a copy of the token with '.' changed to the locale's decimal point
 *     (glibc's strtod is correctly rounded). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_impl.h"

#define MAX_DIGITS 19              /* significant digits kept in w: 10^19 < 2^64 */
#define CLINGER_MAX_Q 22           /* 10^22 is the largest power of ten exact in a double */
#define TWO_POW_53 9007199254740992ull
#define EXP_CLAMP 100000           /* |q| beyond this over/underflows all the same */
#define MANTISSA_BITS 53
#define DROPPED_BITS 11            /* 64 - 53: bits of the top word below the mantissa */
#define HALF 0x400u                /* 1 << (DROPPED_BITS - 1) */
#define MIN_NORMAL_E2 (-1074)      /* m 2^e2 with m in [2^52, 2^53) is normal iff e2 >= this */
#define MAX_E2 971                 /* and finite iff e2 <= this (2^53 * 2^971 = 2^1024) */

static const double exact_pow10[CLINGER_MAX_Q + 1] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static const uint64_t pow10_u64[9] = {1ull,      10ull,      100ull,      1000ull,     10000ull,
                                      100000ull, 1000000ull, 10000000ull, 100000000ull};

static inline int is_digit(char c) { return (unsigned)(c - '0') < 10u; }

const char *mm_token_text(const char *p, const char *end, char *buf, size_t size)
{
    const size_t shown = 40;
    size_t n = 0;
    for (; p < end && !mm_is_sep(*p) && n + 1 < size; p++) {
        if (n == shown && n + 4 < size) {
            memcpy(buf + n, "...", 3);
            n += 3;
            break;
        }
        unsigned char c = (unsigned char)*p;
        buf[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    buf[n] = '\0';
    return buf;
}

/* inf / infinity / nan (after an optional sign, any case) at p, ending at a separator. */
static int spells_nonfinite(const char *p, const char *end)
{
    size_t n = 0;
    char w[9];
    while (p < end && !mm_is_sep(*p) && n < sizeof w - 1) {
        char c = *p++;
        w[n++] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    w[n] = '\0';
    if (p < end && !mm_is_sep(*p)) return 0;
    return strcmp(w, "inf") == 0 || strcmp(w, "infinity") == 0 || strcmp(w, "nan") == 0;
}

/* The digits at p: the first ones while fewer than MAX_DIGITS are kept go into *w, the
 * others are counted in *dropped (and *truncated notes a nonzero one). Returns the end. */
static inline const char *take_digits(const char *p, const char *end, uint64_t *w, int *kept,
                                      int64_t *dropped, int *truncated)
{
#if MM_SWAR
    while (*kept + 8 <= MAX_DIGITS && end - p >= 8) {
        uint64_t v = mm_load8(p);
        int n = mm_leading_digits(v);
        if (n == 0) return p;
        *w = *w * pow10_u64[n] + mm_digits_value(v, n);
        *kept += n;
        p += n;
        if (n < 8) return p;
    }
#endif
    for (; p < end && is_digit(*p); p++) {
        if (*kept < MAX_DIGITS) {
            *w = *w * 10 + (uint64_t)(*p - '0');
            ++*kept;
        } else {
            ++*dropped;
            *truncated |= *p != '0';
        }
    }
    return p;
}

/* hi:lo = a * b */
static inline void mul_64(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
#if defined(__SIZEOF_INT128__)
    unsigned __int128 p = (unsigned __int128)a * b;
    *hi = (uint64_t)(p >> 64);
    *lo = (uint64_t)p;
#else
    uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    *lo = (mid << 32) | (p00 & 0xffffffffu);
    *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
#endif
}

static inline int leading_zeros(uint64_t x)
{
#if defined(__GNUC__)
    return __builtin_clzll(x);
#else
    int n = 0;
    for (; !(x >> 63); x <<= 1) n++;
    return n;
#endif
}

typedef enum scaled { SCALED_OK, SCALED_UNDECIDED, SCALED_OVERFLOW } scaled;

/* w * 10^q, correctly rounded (path 2 above); 1 <= w < 2^64, q in the table's range. */
static inline scaled scale_pow10(uint64_t w, int q, double *out)
{
    const mm_pow5 *pw = &mm_pow5_table[q - MM_POW5_MIN_Q];
    int z = leading_zeros(w);
    w <<= z;
    uint64_t a_hi, a_lo, b_hi, b_lo;          /* X = w P = (a_hi:a_lo) 2^64 + (b_hi:b_lo) */
    mul_64(w, pw->hi, &a_hi, &a_lo);
    mul_64(w, pw->lo, &b_hi, &b_lo);
    uint64_t x0 = b_lo, x1 = a_lo + b_hi;
    uint64_t x2 = a_hi + (x1 < a_lo);         /* no overflow: X < 2^192 */
    int shift = !(x2 >> 63);                  /* X >= 2^190: at most one bit to normalize */
    if (shift) {
        x2 = x2 << 1 | x1 >> 63;
        x1 = x1 << 1 | x0 >> 63;
        x0 <<= 1;
    }
    const int exact = q >= 0 && q <= MM_POW5_EXACT_MAX_Q;
    uint64_t mant = x2 >> DROPPED_BITS, rest = x2 & ((1u << DROPPED_BITS) - 1);
    if (!exact && (rest == HALF - 1 || rest == 2 * HALF - 1) && x1 >= UINT64_MAX - 1)
        return SCALED_UNDECIDED;              /* w' d could carry into `rest` */
    int e2 = 128 + DROPPED_BITS - shift + pw->b + q - z;   /* value ~ mant 2^e2 */
    if (e2 < MIN_NORMAL_E2) return SCALED_UNDECIDED;        /* subnormal: strtod rounds it */
    int up = rest > HALF ||
             (rest == HALF && (!exact || (x1 | x0) != 0 || (mant & 1)));
    if (up && ++mant >> MANTISSA_BITS) {      /* carried into a new bit */
        mant >>= 1;
        e2++;
    }
    if (e2 > MAX_E2) return SCALED_OVERFLOW;
    /* the double's fields directly: biased exponent of mant 2^e2 is e2 + 52 + 1023 */
    uint64_t bits = (uint64_t)(e2 + 52 + 1023) << 52 | (mant & ((1ull << 52) - 1));
    memcpy(out, &bits, sizeof bits);
    return SCALED_OK;
}

/* The slow path: strtod on a NUL-terminated copy of [start, stop). */
static mm_lex slow_real(const char *start, const char *stop, char decimal_point, double *out)
{
    char buf[MM_LEX_MAX_TOKEN + 1];
    size_t n = (size_t)(stop - start);
    if (n > MM_LEX_MAX_TOKEN) return MM_LEX_LONG;
    memcpy(buf, start, n);
    buf[n] = '\0';
    if (decimal_point != '.') {
        char *dot = memchr(buf, '.', n);
        if (dot) *dot = decimal_point;
    }
    char *endp = NULL;
    double v = strtod(buf, &endp);
    if (endp != buf + n) return MM_LEX_BAD;       /* cannot happen after our syntax check */
    if (isinf(v)) return MM_LEX_RANGE;
    *out = v;
    return MM_LEX_OK;
}

mm_lex mm_lex_real(const char **pp, const char *end, char decimal_point, double *out)
{
    const char *p = *pp, *start = p;
    int neg = 0;
    if (p < end && (*p == '+' || *p == '-')) neg = *p++ == '-';
    if (p < end && (*p == 'i' || *p == 'I' || *p == 'n' || *p == 'N'))
        return spells_nonfinite(p, end) ? MM_LEX_NONFINITE : MM_LEX_BAD;

    uint64_t w = 0;
    int kept = 0, truncated = 0;
    int64_t q = 0, dropped = 0;           /* |q| <= the token's length: no overflow */
    const char *digits = p;
    while (p < end && *p == '0') p++;         /* leading zeros carry no information */
    p = take_digits(p, end, &w, &kept, &dropped, &truncated);
    q += dropped;                             /* integer digits beyond the 19th */
    int any_digit = p > digits;
    if (p < end && *p == '.') {
        const char *frac = ++p;
        if (kept == 0)
            while (p < end && *p == '0') p++; /* 0.000123: zeros only move the point */
        const char *sig = p;
        dropped = 0;
        p = take_digits(p, end, &w, &kept, &dropped, &truncated);
        q -= (int64_t)(sig - frac) + (int64_t)(p - sig) - dropped;
        any_digit |= p > frac;
    }
    if (!any_digit) return MM_LEX_BAD;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = 0;
        int64_t ev = 0;
        /* the exponent is exact up to |q| + EXP_CLAMP, and stops growing past it: the
         * mantissa's own q (its leading zeros, its digits) may need all of that to be
         * compensated, and beyond it q + exponent is out of range either way */
        const int64_t ev_max = (q < 0 ? -q : q) + EXP_CLAMP;
        if (p < end && (*p == '+' || *p == '-')) eneg = *p++ == '-';
        if (p == end || !is_digit(*p)) return MM_LEX_BAD;
        for (; p < end && is_digit(*p); p++)
            if (ev <= ev_max) ev = ev * 10 + (*p - '0');
        q += eneg ? -ev : ev;
    }
    if (p < end && !mm_is_sep(*p)) return MM_LEX_BAD;
    *pp = p;

    /* 1.0000000000000000e+00 is 1e0: without trailing zeros more values take path 1, and
     * exact binary fractions do not look like ties to path 2 */
    if (w != 0 && !truncated && (w > TWO_POW_53 || q < -CLINGER_MAX_Q || q > CLINGER_MAX_Q))
        while (w % 10 == 0) {
            w /= 10;
            q++;
        }
    double v = 0.0;                           /* w == 0: zero, whatever the exponent */
    scaled r = SCALED_OK;
    if (w == 0) {
        v = 0.0;
    } else if (!truncated && FLT_EVAL_METHOD == 0 && w <= TWO_POW_53 && q >= -CLINGER_MAX_Q &&
               q <= CLINGER_MAX_Q) {
        v = q >= 0 ? (double)w * exact_pow10[q] : (double)w / exact_pow10[-q];
    } else if (q < MM_POW5_MIN_Q) {
        v = 0.0;                              /* below 10^19 10^-343 < 2^-1075: rounds to 0 */
    } else if (q > MM_POW5_MAX_Q) {
        r = SCALED_OVERFLOW;                  /* at least 10^309 */
    } else {
        r = scale_pow10(w, (int)q, &v);
        double v1 = 0.0;
        if (r == SCALED_OK && truncated &&
            (scale_pow10(w + 1, (int)q, &v1) != SCALED_OK || v1 != v))
            r = SCALED_UNDECIDED;
    }
    if (r == SCALED_UNDECIDED) return slow_real(start, p, decimal_point, out);
    if (r == SCALED_OVERFLOW) return MM_LEX_RANGE;
    *out = neg ? -v : v;
    return MM_LEX_OK;
}

mm_lex mm_lex_integer_value(const char **pp, const char *end, char decimal_point, double *out)
{
    const char *p = *pp;
    if (p < end && (*p == '+' || *p == '-')) p++;
    const char *digits = p;
    while (p < end && is_digit(*p)) p++;
    if (p == digits || (p < end && !mm_is_sep(*p))) return MM_LEX_BAD;
    return mm_lex_real(pp, end, decimal_point, out);
}
