/* solver/sstep_host.c - the host-side small dense linear algebra of s-step GMRES (sstep.c):
 * the Ritz values of a Hessenberg matrix (Francis double-shift QR), their modified Leja
 * ordering, the Cholesky factorization of a block's Gram matrix with its conditioning
 * test, the Hessenberg columns of a block from the change-of-basis matrix, and the cycle's
 * Givens rotations (gmres.c's). Everything
 * here works on a few hundred doubles at most and runs on the host, identically on every
 * thread count and device (host code is compiled with -ffp-contract=off): the reproducible
 * mode of sstep.c relies on that.
 *
 * Eigenvalues: the implicit double-shift QR iteration on an upper Hessenberg matrix
 * (Francis 1961; the EISPACK routine hqr's structure: deflation where a subdiagonal entry
 * is negligible against its diagonal neighbours, Wilkinson's exceptional shifts at
 * iterations 10 and 20, at most 30 iterations per eigenvalue).
 *
 * Leja ordering (Reichel 1990; the real-arithmetic modification of Bai, Hu and Reichel
 * 1994, as used by Hoemmen's thesis, 2010, section 7.3): the first point has the largest
 * modulus, each next one maximizes the product of its distances to the points taken (summed
 * logarithms: no overflow); a complex point is taken with positive imaginary part and its
 * conjugate follows it at once, so that the Newton basis stays real. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "solver/solver_impl.h"

/* ---- eigenvalues of an upper Hessenberg matrix -------------------------------------------- */

#define A1(i, j) h[((i) - 1) + (size_t)((j) - 1) * (size_t)ld]   /* 1-based, column-major */

static double sign_of(double a, double b) { return b >= 0.0 ? fabs(a) : -fabs(a); }

int krill_hessenberg_eig(int n, double *h, int ld, double *wr, double *wi)
{
    int nn, l = 1, its, m, mmin;
    double anorm = 0.0, t = 0.0, p = 0.0, q = 0.0, r = 0.0, s, w, x, y, z, u, v;
    for (int i = 1; i <= n; i++)
        for (int j = i > 1 ? i - 1 : 1; j <= n; j++) anorm += fabs(A1(i, j));
    if (!krill_is_finite(anorm)) return -1;
    nn = n;
    while (nn >= 1) {
        its = 0;
        do {
            for (l = nn; l >= 2; l--) {    /* a negligible subdiagonal entry splits H */
                s = fabs(A1(l - 1, l - 1)) + fabs(A1(l, l));
                if (s == 0.0) s = anorm;
                if (fabs(A1(l, l - 1)) + s == s) {
                    A1(l, l - 1) = 0.0;
                    break;
                }
            }
            x = A1(nn, nn);
            if (l == nn) {                  /* one root */
                wr[nn - 1] = x + t;
                wi[nn - 1] = 0.0;
                nn--;
            } else {
                y = A1(nn - 1, nn - 1);
                w = A1(nn, nn - 1) * A1(nn - 1, nn);
                if (l == nn - 1) {          /* two roots */
                    p = 0.5 * (y - x);
                    q = p * p + w;
                    z = sqrt(fabs(q));
                    x += t;
                    if (q >= 0.0) {         /* a real pair */
                        z = p + sign_of(z, p);
                        wr[nn - 2] = wr[nn - 1] = x + z;
                        if (z != 0.0) wr[nn - 1] = x - w / z;
                        wi[nn - 2] = wi[nn - 1] = 0.0;
                    } else {                /* a complex pair */
                        wr[nn - 2] = wr[nn - 1] = x + p;
                        wi[nn - 2] = z;
                        wi[nn - 1] = -z;
                    }
                    nn -= 2;
                } else {                    /* no root yet: a double-shift QR step */
                    if (its == 30) return -1;
                    if (its == 10 || its == 20) {   /* exceptional shift */
                        t += x;
                        for (int i = 1; i <= nn; i++) A1(i, i) -= x;
                        s = fabs(A1(nn, nn - 1)) + fabs(A1(nn - 1, nn - 2));
                        y = x = 0.75 * s;
                        w = -0.4375 * s * s;
                    }
                    its++;
                    for (m = nn - 2; m >= l; m--) {   /* two small subdiagonals in a row */
                        z = A1(m, m);
                        r = x - z;
                        s = y - z;
                        p = (r * s - w) / A1(m + 1, m) + A1(m, m + 1);
                        q = A1(m + 1, m + 1) - z - r - s;
                        r = A1(m + 2, m + 1);
                        s = fabs(p) + fabs(q) + fabs(r);
                        p /= s;
                        q /= s;
                        r /= s;
                        if (m == l) break;
                        u = fabs(A1(m, m - 1)) * (fabs(q) + fabs(r));
                        v = fabs(p) * (fabs(A1(m - 1, m - 1)) + fabs(z) + fabs(A1(m + 1, m + 1)));
                        if (u + v == v) break;
                    }
                    for (int i = m + 2; i <= nn; i++) {
                        A1(i, i - 2) = 0.0;
                        if (i != m + 2) A1(i, i - 3) = 0.0;
                    }
                    for (int k = m; k <= nn - 1; k++) {   /* chase the bulge */
                        if (k != m) {
                            p = A1(k, k - 1);
                            q = A1(k + 1, k - 1);
                            r = k != nn - 1 ? A1(k + 2, k - 1) : 0.0;
                            x = fabs(p) + fabs(q) + fabs(r);
                            if (x != 0.0) {
                                p /= x;
                                q /= x;
                                r /= x;
                            }
                        }
                        s = sign_of(sqrt(p * p + q * q + r * r), p);
                        if (s == 0.0) continue;
                        if (k == m) {
                            if (l != m) A1(k, k - 1) = -A1(k, k - 1);
                        } else {
                            A1(k, k - 1) = -s * x;
                        }
                        p += s;
                        x = p / s;
                        y = q / s;
                        z = r / s;
                        q /= p;
                        r /= p;
                        for (int j = k; j <= nn; j++) {      /* rows k .. k+2 */
                            p = A1(k, j) + q * A1(k + 1, j);
                            if (k != nn - 1) {
                                p += r * A1(k + 2, j);
                                A1(k + 2, j) -= p * z;
                            }
                            A1(k + 1, j) -= p * y;
                            A1(k, j) -= p * x;
                        }
                        mmin = nn < k + 3 ? nn : k + 3;
                        for (int i = l; i <= mmin; i++) {    /* columns k .. k+2 */
                            p = x * A1(i, k) + y * A1(i, k + 1);
                            if (k != nn - 1) {
                                p += z * A1(i, k + 2);
                                A1(i, k + 2) -= p * r;
                            }
                            A1(i, k + 1) -= p * q;
                            A1(i, k) -= p;
                        }
                    }
                }
            }
        } while (l < nn - 1);
    }
    for (int i = 0; i < n; i++)
        if (!krill_is_finite(wr[i]) || !krill_is_finite(wi[i])) return -1;
    return 0;
}

#undef A1

/* ---- modified Leja ordering ------------------------------------------------------------------ */

/* log of the product of |z - theta_l| over the points taken; -inf when z repeats one */
static double leja_score(double zr, double zi, int taken, const double *re, const double *im)
{
    double sum = 0.0;
    for (int l = 0; l < taken; l++) {
        double d = hypot(zr - re[l], zi - im[l]);
        if (d == 0.0) return -INFINITY;
        sum += log(d);
    }
    return sum;
}

int krill_leja_order(int k, const double *wr, const double *wi, int want, int *used,
                     double *re, double *im)
{
    int taken = 0;
    for (int i = 0; i < k; i++) used[i] = wi[i] < 0.0;   /* conjugates come with their pair */
    while (taken < want) {
        int best = -1;
        double best_score = -INFINITY, best_mod = -1.0;
        for (int i = 0; i < k; i++) {
            double score, mod;
            if (used[i]) continue;
            score = taken == 0 ? 0.0 : leja_score(wr[i], wi[i], taken, re, im);
            mod = hypot(wr[i], wi[i]);
            /* the first point: the largest modulus; later ones: the largest score (ties,
               and repeated points of score -inf, by modulus, then by index) */
            if (best < 0 || (taken == 0 ? mod > best_mod
                                        : score > best_score ||
                                              (score == best_score && mod > best_mod))) {
                best = i;
                best_score = score;
                best_mod = mod;
            }
        }
        if (best < 0) break;
        used[best] = 1;
        re[taken] = wr[best];
        im[taken] = wi[best] > 0.0 ? wi[best] : 0.0;
        taken++;
        if (wi[best] > 0.0 && taken < want) {   /* the conjugate follows */
            re[taken] = wr[best];
            im[taken] = -wi[best];
            taken++;
        }
    }
    return taken;
}

/* ---- Cholesky of a Gram matrix ----------------------------------------------------------- */

int krill_sstep_cholesky(int s, const double *g, int ldg, double *r, int ldr, double *inv,
                         double pivot_min, double kappa_max, double *kappa)
{
    double fro_r = 0.0, fro_inv = 0.0;   /* squared Frobenius norms of R D^-1/2 and its inverse */
    *kappa = 1.0;
    for (int j = 0; j < s; j++) {
        const double gjj = g[j + (size_t)j * ldg];
        double d = gjj, scale, col = 0.0;
        if (!(gjj > 0.0) || !krill_is_finite(gjj)) return j;
        for (int i = 0; i < j; i++) {
            double sum = g[i + (size_t)j * ldg];
            for (int l = 0; l < i; l++) sum -= r[l + (size_t)i * ldr] * r[l + (size_t)j * ldr];
            r[i + (size_t)j * ldr] = sum / r[i + (size_t)i * ldr];
            d -= r[i + (size_t)j * ldr] * r[i + (size_t)j * ldr];
        }
        /* the pivot is what is left of the column after the projection on the earlier ones;
           relative to the column's norm it bounds 1/kappa from above */
        if (!(d > pivot_min * gjj) || !krill_is_finite(d)) return j;
        r[j + (size_t)j * ldr] = sqrt(d);
        /* the inverse of the column-scaled factor R' = R D^-1/2 (D = diag(g)), column j:
           R'^-1 = D^1/2 R^-1, and R^-1's column j from its columns < j */
        scale = sqrt(gjj);
        for (int i = 0; i < j; i++) {
            double sum = 0.0;
            for (int l = i; l < j; l++) sum += inv[i + (size_t)l * s] * r[l + (size_t)j * ldr];
            inv[i + (size_t)j * s] = -sum / r[j + (size_t)j * ldr];
        }
        inv[j + (size_t)j * s] = 1.0 / r[j + (size_t)j * ldr];
        for (int i = 0; i <= j; i++) {
            double x = inv[i + (size_t)j * s] * sqrt(g[i + (size_t)i * ldg]);
            fro_inv += x * x;
            col += r[i + (size_t)j * ldr] * r[i + (size_t)j * ldr];
        }
        fro_r += col / (scale * scale);
        if (!(sqrt(fro_r * fro_inv) <= kappa_max)) return j;
        *kappa = sqrt(fro_r * fro_inv);
    }
    return s;
}

/* ---- the Hessenberg columns of a block ------------------------------------------------------ */

void krill_sstep_hessenberg(const krill_sstep_block *b, double *hraw, int ldh, double *rr,
                            double *c)
{
    const int k0 = b->k0, a = b->a, rows = k0 + a + 1;   /* rows of the new columns */
    const int ldr = rows;
    /* RR = [e_k0, (Ra; Rb)]: the coordinates of W = [q_k0, v_1 .. v_a] in Q_{k0+a+1} */
    memset(rr, 0, (size_t)ldr * (size_t)(a + 1) * sizeof *rr);
    rr[k0] = 1.0;
    for (int i = 1; i <= a; i++) {
        double *col = rr + (size_t)i * ldr;
        for (int l = 0; l <= k0; l++) col[l] = b->ra[l + (size_t)(i - 1) * b->ldra];
        for (int l = 0; l < i; l++) col[k0 + 1 + l] = b->rb[l + (size_t)(i - 1) * b->ldrb];
    }
    /* C = RR B - [H_old U; 0], U = RR's rows 0..k0-1 of columns 0..a-1 */
    for (int i = 0; i < a; i++) {
        double *ci = c + (size_t)i * rows;
        const double *r0 = rr + (size_t)i * ldr, *r1 = r0 + ldr;
        for (int l = 0; l < rows; l++) {
            double v = b->theta[i] * r0[l] + b->sigma[i] * r1[l];
            if (i > 0 && b->gamma[i] != 0.0) v += b->gamma[i] * r0[l - ldr];
            ci[l] = v;
        }
        for (int col = 0; col < k0; col++) {
            const double u = r0[col];
            const double *hc = hraw + (size_t)col * ldh;
            if (u == 0.0) continue;
            for (int l = 0; l <= col + 1; l++) ci[l] -= hc[l] * u;
        }
    }
    /* H_new = C T^-1, T = RR's rows k0..k0+a-1 of columns 0..a-1 (upper triangular) */
    for (int i = 0; i < a; i++) {
        double *ci = c + (size_t)i * rows;
        const double tii = rr[k0 + i + (size_t)i * ldr];
        for (int l = 0; l < i; l++) {
            const double t = rr[k0 + l + (size_t)i * ldr];
            const double *cl = c + (size_t)l * rows;   /* X's column l */
            if (t == 0.0) continue;
            for (int q = 0; q <= k0 + l + 1; q++) ci[q] -= cl[q] * t;
        }
        for (int q = 0; q < rows; q++) {   /* X's column i, kept in c for the later ones */
            double *hcol = hraw + (size_t)(k0 + i) * ldh;
            ci[q] = q <= k0 + i + 1 ? ci[q] / tii : 0.0;
            hcol[q] = ci[q];
        }
    }
}

/* ---- the cycle's host steps ---------------------------------------------------------------- */

int krill_sstep_shifts(int k, const double *hraw, int ldh, int s, double *eig_h, double *wr,
                       double *wi, int *used, double *re, double *im, double *scale)
{
    double biggest = 0.0;
    if (k < s) return 0;
    for (int j = 0; j < k; j++)
        for (int i = 0; i < k; i++) eig_h[i + (size_t)j * k] = hraw[i + (size_t)j * ldh];
    if (krill_hessenberg_eig(k, eig_h, k, wr, wi) != 0) return -1;
    if (krill_leja_order(k, wr, wi, s, used, re, im) < s) return 0;
    for (int i = 0; i < s; i++)
        if (hypot(re[i], im[i]) > biggest) biggest = hypot(re[i], im[i]);
    if (!(biggest > 0.0) || !krill_is_finite(biggest)) return 0;
    *scale = biggest;
    return 1;
}
