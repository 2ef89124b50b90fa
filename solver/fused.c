/* solver/fused.c - the solvers' fused vector operations for GMRES (CGS passes, MGS steps,
 * DCGS2's sweep; CG's are in fused_cg.c): OpenMP loops on the CPU, dispatch to the launchers
 * of kernels/krylov.cu and kernels/dcgs2.cu on the GPU. Contracts and per-call traffic are
 * in solver_impl.h.
 *
 * CPU loops split [0, n) into one contiguous chunk per thread (static), and reductions
 * leave one partial per thread that the calling thread adds in thread order: the same
 * thread count always gives the same bits. Inside a thread, `omp simd reduction` lets the
 * compiler keep several partial sums in vector lanes (a plain scalar sum is bound by the
 * latency of one add per element); their order is fixed by the compiled code, so runs stay
 * bit-identical.
 *
 * Reproducible mode (ctx->repro set; solver_impl.h): the reducing operations branch off at
 * the top into a variant that only updates, then asks ozaki/ for the sums. The element-wise
 * loops here are already the reproducible arithmetic (-ffp-contract=off: every product and
 * sum rounded where written, columns added in index order), so the CPU's updates are the
 * same code in both modes; the GPU has explicit kernels for them (kernels/krylov.cu).
 *
 * On a context with a communicator (dist/, doc/mpi.md) every reducing CPU operation ends
 * with one krill_ctx_allreduce of all its sums (k + 1 for a CGS pass, 2k + 4 for DCGS2's
 * sweep, 2 for CG's residual step), before anything reads them: one message per
 * reduction point, as on one rank. */
#include <omp.h>
#include <string.h>

#include "ozaki/ozaki_impl.h"
#include "solver/solver_impl.h"
#ifdef KRILL_HAVE_CUDA
#include "core/cuda_impl.h"   /* krill_cuda_dot: a local sum, summed over the ranks here */
#endif

/* GEMV row block: 2048 rows of w (16 KiB) stay in L1 while the columns of V stream past,
 * so V is read once from memory and w once per pass; columns go four at a time (four
 * streams and one load of w per four products: measured 1.4x faster than one at a time). */
#define GEMV_ROW_BLOCK 2048
#define GEMV_COLUMNS 4
/* DCGS2's row block: 32768 rows of u and w (256 KiB each: in L2 where it holds 512 KiB, as
 * the 1 MiB per core of the development VM does) while four columns of V stream past; long
 * streams keep the hardware prefetchers ahead. Measured on the development
 * VM (one thread, GMRES(30) on convdiff3d:64 and poisson3d:64, medians of 5 interleaved
 * solves): orthogonalization 0.88 s per 300 iterations against 1.15 s with 2048-row blocks
 * (65536: 0.86-0.87 s, within the noise). The CGS passes keep GEMV_ROW_BLOCK: there the
 * block of V itself is read twice (subtraction, then dots) and must stay in cache. */
#define DCGS2_ROW_BLOCK 32768

static int repro(const krill_ctx *ctx) { return ctx->repro != KRILL_REPRO_OFF; }

/* ---- reduction workspace ------------------------------------------------------------------ */

krill_status krill_reduce_ws_create(krill_ctx *ctx, int width, krill_reduce_ws *ws)
{
    krill_status st = KRILL_OK;
    memset(ws, 0, sizeof *ws);
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) {   /* the context's workspace, plus the CGS partials for GMRES:
                                  its narrowest is m + 1 = 2 columns (restart 1) */
        if (width >= 2)
            KRILL_WS_ALLOC(ctx, ws->partial, krill_cuda_cgs_partials(ctx));
        goto cleanup;
    }
#endif
    ws->slots = krill_fused_threads(ctx);
    ws->stride = (width + KRILL_REDUCE_PAD - 1) / KRILL_REDUCE_PAD * KRILL_REDUCE_PAD;
    KRILL_WS_ALLOC(ctx, ws->partial, (size_t)ws->slots * (size_t)ws->stride);
cleanup:
    return st;
}

void krill_reduce_ws_destroy(krill_ctx *ctx, krill_reduce_ws *ws)
{
    krill_ws_free(ctx, ws->partial);
    memset(ws, 0, sizeof *ws);
}

/* ---- GMRES ---------------------------------------------------------------------------------- */

/* acc[c] += V[lo:hi, c]' w[lo:hi] for c < k: each column's sum in index order. */
static void gemv_t_rows(int64_t lo, int64_t hi, int k, const double *v, int64_t ldv,
                        const double *w, double *acc)
{
    int c = 0;
    for (; c + GEMV_COLUMNS <= k; c += GEMV_COLUMNS) {
        const double *v0 = v + (size_t)c * (size_t)ldv, *v1 = v0 + ldv, *v2 = v1 + ldv,
                     *v3 = v2 + ldv;
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
        for (int64_t i = lo; i < hi; i++) {
            double wi = w[i];
            s0 += v0[i] * wi;
            s1 += v1[i] * wi;
            s2 += v2[i] * wi;
            s3 += v3[i] * wi;
        }
        acc[c] += s0;
        acc[c + 1] += s1;
        acc[c + 2] += s2;
        acc[c + 3] += s3;
    }
    for (; c < k; c++) {
        const double *vc = v + (size_t)c * (size_t)ldv;
        double s = 0.0;
#pragma omp simd reduction(+ : s)
        for (int64_t i = lo; i < hi; i++) s += vc[i] * w[i];
        acc[c] += s;
    }
}

/* w[lo:hi] += sum_c coef[c] V[lo:hi, c], adding the columns in order c = 0, 1, ... */
static void gemv_n_rows(int64_t lo, int64_t hi, int k, const double *v, int64_t ldv,
                        const double *coef, double *w)
{
    int c = 0;
    for (; c + GEMV_COLUMNS <= k; c += GEMV_COLUMNS) {
        const double *v0 = v + (size_t)c * (size_t)ldv, *v1 = v0 + ldv, *v2 = v1 + ldv,
                     *v3 = v2 + ldv;
        const double c0 = coef[c], c1 = coef[c + 1], c2 = coef[c + 2], c3 = coef[c + 3];
#pragma omp simd
        for (int64_t i = lo; i < hi; i++) {
            double wi = w[i];
            wi += c0 * v0[i];
            wi += c1 * v1[i];
            wi += c2 * v2[i];
            wi += c3 * v3[i];
            w[i] = wi;
        }
    }
    for (; c < k; c++) {
        const double *vc = v + (size_t)c * (size_t)ldv;
        const double cc = coef[c];
#pragma omp simd
        for (int64_t i = lo; i < hi; i++) w[i] += cc * vc[i];
    }
}

krill_status krill_fused_gemv_n(krill_ctx *ctx, int64_t n, int k, double alpha,
                                const double *v, int64_t ldv, const double *h, double beta,
                                double *w)
{
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx))
        return repro(ctx) ? krill_cuda_gemv_n_repro(ctx, n, k, alpha, v, ldv, h, beta, w)
                          : krill_cuda_gemv_n(ctx, n, k, alpha, v, ldv, h, beta, w);
#endif
#pragma omp parallel num_threads(krill_fused_threads(ctx)) if (n >= KRILL_FUSED_PARALLEL_MIN)
    {
        int64_t lo, hi;
        double coef[GEMV_COLUMNS];
        krill_fused_chunk(n, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
        for (int64_t b = lo; b < hi; b += GEMV_ROW_BLOCK) {
            int64_t e = b + GEMV_ROW_BLOCK < hi ? b + GEMV_ROW_BLOCK : hi;
            if (beta == 0.0) {
                for (int64_t i = b; i < e; i++) w[i] = 0.0;
            } else if (beta != 1.0) {
                for (int64_t i = b; i < e; i++) w[i] *= beta;
            }
            for (int c = 0; c < k; c += GEMV_COLUMNS) {
                int m = k - c < GEMV_COLUMNS ? k - c : GEMV_COLUMNS;
                for (int j = 0; j < m; j++) coef[j] = alpha * h[c + j];
                gemv_n_rows(b, e, m, v + (size_t)c * (size_t)ldv, ldv, coef, w);
            }
        }
    }
    return KRILL_OK;
}

/* Reproducible CGS pass: w -= V h_sub in krill_fused_gemv_n's element order (alpha = -1
 * gives the coefficients -h_j exactly), then h_out = V^T w in one pass over w
 * (krill_ozaki_mdot; groups of KRILL_OZ_KMAX columns beyond that) and ss_out = w'w.
 * Traffic: k+1 reads and 1 write (h_sub), 2 (k+1) reads (h_out: statistics, then the
 * products), 4 reads (ss_out: the same for w against itself). On the GPU in exact mode
 * (krill_ozaki_cgs_fused) all of it is one kernel, krill_ozaki_cgs_pass, with the same bits:
 * k+1 reads and 1 write when the fast path decides every sum. */
static krill_status cgs_pass_repro(krill_ctx *ctx, int64_t n, int k, const double *v,
                                   int64_t ldv, const double *h_sub, double *w, double *h_out,
                                   double *ss_out)
{
    krill_status st = KRILL_OK;
    if (krill_ozaki_cgs_fused(ctx, n, k))
        return krill_ozaki_cgs_pass(ctx, n, k, v, ldv, h_sub, w, h_out, ss_out);
    if (h_sub) KRILL_TRY(krill_fused_gemv_n(ctx, n, k, -1.0, v, ldv, h_sub, 1.0, w));
    if (h_out) KRILL_TRY(krill_ozaki_mdot(ctx, n, k, v, ldv, w, h_out));
    if (ss_out) KRILL_TRY(krill_ozaki_dot(ctx, n, w, w, ss_out));
cleanup:
    return st;
}

/* CPU: per thread and per block of GEMV_ROW_BLOCK rows, the subtraction (w's block stays in
 * L1) and then the dot products over the same rows (V's block, just read, comes from L2). */
krill_status krill_fused_cgs_pass(krill_ctx *ctx, const krill_reduce_ws *ws, int64_t n, int k,
                                  const double *v, int64_t ldv, const double *h_sub, double *w,
                                  double *h_out, double *ss_out)
{
    int used = 1;
    if (repro(ctx)) return cgs_pass_repro(ctx, n, k, v, ldv, h_sub, w, h_out, ss_out);
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) {   /* results in device memory, summed there over the ranks */
        krill_status st = KRILL_OK;
        if (k <= KRILL_CGS_MAX_COLS) {
            st = krill_cuda_cgs_pass(ctx, ws->partial, n, k, v, ldv, h_sub, w, h_out, ss_out);
            st = krill_ctx_allreduce_device(ctx, st, h_out, h_out ? k : 0, ss_out, ss_out ? 1 : 0);
            goto cleanup;
        }
        if (h_sub) st = krill_cuda_gemv_n(ctx, n, k, -1.0, v, ldv, h_sub, 1.0, w);
        if (h_out && st == KRILL_OK) st = krill_cuda_gemv_t(ctx, n, k, v, ldv, w, h_out);
        if (ss_out && st == KRILL_OK) st = krill_cuda_dot(ctx, n, w, w, ss_out);
        KRILL_TRY(krill_ctx_allreduce_device(ctx, st, h_out, h_out ? k : 0, ss_out,
                                             ss_out ? 1 : 0));
    cleanup:
        return st;
    }
#endif
    if (k + 1 > ws->stride)
        return krill_error(KRILL_ERR_INTERNAL, "cgs_pass: %d columns but room for %d", k,
                           ws->stride - 1);
#pragma omp parallel num_threads(krill_fused_threads(ctx)) if (n >= KRILL_FUSED_PARALLEL_MIN)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        int64_t lo, hi;
        double *acc = ws->partial + (size_t)t * ws->stride, coef[GEMV_COLUMNS];
        if (t == 0) used = nt;
        krill_fused_chunk(n, t, nt, &lo, &hi);
        for (int c = 0; c <= k; c++) acc[c] = 0.0;
        for (int64_t b = lo; b < hi; b += GEMV_ROW_BLOCK) {
            int64_t e = b + GEMV_ROW_BLOCK < hi ? b + GEMV_ROW_BLOCK : hi;
            for (int c = 0; h_sub && c < k; c += GEMV_COLUMNS) {
                int m = k - c < GEMV_COLUMNS ? k - c : GEMV_COLUMNS;
                for (int j = 0; j < m; j++) coef[j] = -h_sub[c + j];
                gemv_n_rows(b, e, m, v + (size_t)c * (size_t)ldv, ldv, coef, w);
            }
            if (h_out) gemv_t_rows(b, e, k, v, ldv, w, acc);
            double ss = 0.0;
#pragma omp simd reduction(+ : ss)
            for (int64_t i = b; i < e; i++) ss += w[i] * w[i];
            acc[k] += ss;
        }
    }
    /* the sums into slot 0 (column c of slot 0 is read only for sum c), then one allreduce
     * of the k + 1 (or only w'w) over the context's ranks */
    for (int c = 0; c <= k; c++) ws->partial[c] = krill_reduce_ws_sum(ws, used, c);
    {
        int first = h_out ? 0 : k;
        krill_status st = krill_ctx_allreduce(ctx, ws->partial + first, k + 1 - first,
                                              KRILL_REDUCE_SUM);
        if (st != KRILL_OK) return st;
    }
    for (int c = 0; h_out && c < k; c++) h_out[c] = ws->partial[c];
    if (ss_out) *ss_out = ws->partial[k];
    return KRILL_OK;
}

/* Reproducible MGS step: w -= coeff[0] v as krill_fused_gemv_n with one column (w_i +
 * (-coeff[0]) v_i: the bits of w_i - coeff[0] v_i, the coefficient read where it lies),
 * then result = u'w (w'w) by krill_ozaki_dot. Traffic: 2 reads and 1 write, then 4 reads. */
static krill_status axpy_dot_repro(krill_ctx *ctx, int64_t n, const double *coeff,
                                   const double *v, double *w, const double *u, double *result)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(krill_fused_gemv_n(ctx, n, 1, -1.0, v, n, coeff, 1.0, w));
    KRILL_TRY(krill_ozaki_dot(ctx, n, u ? u : w, w, result));
cleanup:
    return st;
}

krill_status krill_fused_axpy_dot(krill_ctx *ctx, const krill_reduce_ws *ws, int64_t n,
                                  const double *coeff, const double *v, double *w,
                                  const double *u, double *result)
{
    int used = 1;
    if (repro(ctx)) return axpy_dot_repro(ctx, n, coeff, v, w, u, result);
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) {
        return krill_ctx_allreduce_device(ctx, krill_cuda_axpy_dot(ctx, n, coeff, v, w, u, result),
                                          result, 1, NULL, 0);
    }
#endif
    const double c = coeff[0];   /* host memory: this is the CPU path */
#pragma omp parallel num_threads(krill_fused_threads(ctx)) if (n >= KRILL_FUSED_PARALLEL_MIN)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        int64_t lo, hi;
        double s = 0.0;
        if (t == 0) used = nt;
        krill_fused_chunk(n, t, nt, &lo, &hi);
        if (u) {
#pragma omp simd reduction(+ : s)
            for (int64_t i = lo; i < hi; i++) {
                double wi = w[i] - c * v[i];
                w[i] = wi;
                s += u[i] * wi;
            }
        } else {
#pragma omp simd reduction(+ : s)
            for (int64_t i = lo; i < hi; i++) {
                double wi = w[i] - c * v[i];
                w[i] = wi;
                s += wi * wi;
            }
        }
        ws->partial[(size_t)t * ws->stride] = s;
    }
    result[0] = krill_reduce_ws_sum(ws, used, 0);
    return krill_ctx_allreduce(ctx, result, 1, KRILL_REDUCE_SUM);
}

/* ---- GMRES: DCGS2 --------------------------------------------------------------------------- */

/* acc[c] += V[lo:hi, c]'u and acc[k + c] += V[lo:hi, c]'w for c < k, each sum in index order;
 * four columns at a time: eight independent sums per load of u and w (with two columns the
 * four accumulator chains' add latency, not memory, bounded the loop: it read V at half the
 * rate of the CGS passes). */
static void gemv_t2_rows(int64_t lo, int64_t hi, int k, const double *v, int64_t ldv,
                         const double *u, const double *w, double *acc)
{
    int c = 0;
    for (; c + 4 <= k; c += 4) {
        const double *v0 = v + (size_t)c * (size_t)ldv, *v1 = v0 + ldv, *v2 = v1 + ldv,
                     *v3 = v2 + ldv;
        double u0 = 0.0, u1 = 0.0, u2 = 0.0, u3 = 0.0, w0 = 0.0, w1 = 0.0, w2 = 0.0, w3 = 0.0;
#pragma omp simd reduction(+ : u0, u1, u2, u3, w0, w1, w2, w3)
        for (int64_t i = lo; i < hi; i++) {
            const double ui = u[i], wi = w[i];
            u0 += v0[i] * ui;
            u1 += v1[i] * ui;
            u2 += v2[i] * ui;
            u3 += v3[i] * ui;
            w0 += v0[i] * wi;
            w1 += v1[i] * wi;
            w2 += v2[i] * wi;
            w3 += v3[i] * wi;
        }
        acc[c] += u0;
        acc[c + 1] += u1;
        acc[c + 2] += u2;
        acc[c + 3] += u3;
        acc[k + c] += w0;
        acc[k + c + 1] += w1;
        acc[k + c + 2] += w2;
        acc[k + c + 3] += w3;
    }
    for (; c < k; c++) {
        const double *vc = v + (size_t)c * (size_t)ldv;
        double su = 0.0, sw = 0.0;
#pragma omp simd reduction(+ : su, sw)
        for (int64_t i = lo; i < hi; i++) {
            su += vc[i] * u[i];
            sw += vc[i] * w[i];
        }
        acc[c] += su;
        acc[k + c] += sw;
    }
}

/* CPU: per thread and block of DCGS2_ROW_BLOCK rows, Q'u and Q'w (gemv_t2_rows), then u'u,
 * u'w, w'w over the block (u and w in L2). Partials per thread: [0, k) Q'u, [k, 2k) Q'w,
 * 2k u'u, 2k+1 u'w, 2k+2 w'w. Reproducible mode: [Q u w]'u and [Q u w]'w by
 * krill_ozaki_mdot2 (on a lone GPU one fast pass, k + 2 reads; dcgs2.c). */
krill_status krill_fused_dcgs2_dots(krill_ctx *ctx, const krill_reduce_ws *ws, int64_t n, int k,
                                    const double *v, int64_t ldv, double *out)
{
    krill_status st = KRILL_OK;
    const double *u = v + (size_t)k * (size_t)ldv, *w = u + ldv;
    int used = 1;
    if (repro(ctx)) {
        KRILL_TRY(krill_ozaki_mdot2(ctx, n, k + 2, v, ldv, u, w, out));
        goto cleanup;
    }
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) {   /* the 2k + 4 sums in device memory, then over the ranks */
        st = k <= KRILL_DCGS2_MAX_COLS ? krill_cuda_dcgs2_dots(ctx, ws->partial, n, k, v, ldv, out)
                                       : krill_cuda_dcgs2_gemm(ctx, n, k, v, ldv, out);
        st = krill_ctx_allreduce_device(ctx, st, out, 2 * k + 4, NULL, 0);
        goto cleanup;
    }
#endif
    if (2 * k + 3 > ws->stride)
        return krill_error(KRILL_ERR_INTERNAL, "dcgs2_dots: %d columns but room for %d", k,
                           (ws->stride - 3) / 2);
#pragma omp parallel num_threads(krill_fused_threads(ctx)) if (n >= KRILL_FUSED_PARALLEL_MIN)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        int64_t lo, hi;
        double *acc = ws->partial + (size_t)t * ws->stride;
        if (t == 0) used = nt;
        krill_fused_chunk(n, t, nt, &lo, &hi);
        for (int c = 0; c < 2 * k + 3; c++) acc[c] = 0.0;
        for (int64_t b = lo; b < hi; b += DCGS2_ROW_BLOCK) {
            int64_t e = b + DCGS2_ROW_BLOCK < hi ? b + DCGS2_ROW_BLOCK : hi;
            double uu = 0.0, uw = 0.0, ww = 0.0;
            gemv_t2_rows(b, e, k, v, ldv, u, w, acc);
#pragma omp simd reduction(+ : uu, uw, ww)
            for (int64_t i = b; i < e; i++) {
                uu += u[i] * u[i];
                uw += u[i] * w[i];
                ww += w[i] * w[i];
            }
            acc[2 * k] += uu;
            acc[2 * k + 1] += uw;
            acc[2 * k + 2] += ww;
        }
    }
    for (int c = 0; c < k; c++) {
        out[c] = krill_reduce_ws_sum(ws, used, c);
        out[k + 2 + c] = krill_reduce_ws_sum(ws, used, k + c);
    }
    out[k] = krill_reduce_ws_sum(ws, used, 2 * k);
    out[k + 1] = out[2 * k + 2] = krill_reduce_ws_sum(ws, used, 2 * k + 1);
    out[2 * k + 3] = krill_reduce_ws_sum(ws, used, 2 * k + 2);
    KRILL_TRY(krill_ctx_allreduce(ctx, out, 2 * k + 4, KRILL_REDUCE_SUM));  /* one message */
cleanup:
    return st;
}

/* u[lo:hi] += sum_j cu[j] V[lo:hi, j] and w[lo:hi] += sum_j cw[j] V[lo:hi, j], adding the
 * columns in order j = 0, 1, ...: four columns per sweep of the block (one load and store
 * of u and w per four columns, against one per column: the stores bounded the loop). */
static void update2_rows(int64_t lo, int64_t hi, int k, const double *v, int64_t ldv,
                         const double *cu, const double *cw, double *u, double *w)
{
    int j = 0;
    for (; j + 4 <= k; j += 4) {
        const double *v0 = v + (size_t)j * (size_t)ldv, *v1 = v0 + ldv, *v2 = v1 + ldv,
                     *v3 = v2 + ldv;
        const double a0 = cu[j], a1 = cu[j + 1], a2 = cu[j + 2], a3 = cu[j + 3];
        const double b0 = cw[j], b1 = cw[j + 1], b2 = cw[j + 2], b3 = cw[j + 3];
#pragma omp simd
        for (int64_t i = lo; i < hi; i++) {
            double ui = u[i], wi = w[i];
            ui += a0 * v0[i];
            wi += b0 * v0[i];
            ui += a1 * v1[i];
            wi += b1 * v1[i];
            ui += a2 * v2[i];
            wi += b2 * v2[i];
            ui += a3 * v3[i];
            wi += b3 * v3[i];
            u[i] = ui;
            w[i] = wi;
        }
    }
    for (; j < k; j++) {
        const double *vj = v + (size_t)j * (size_t)ldv;
        const double a = cu[j], b = cw[j];
#pragma omp simd
        for (int64_t i = lo; i < hi; i++) {
            u[i] += a * vj[i];
            w[i] += b * vj[i];
        }
    }
}

/* CPU: the element order of the contract in both modes (-ffp-contract=off: grouping the
 * columns by four keeps each element's sequence of roundings); per block of rows, u's block
 * is finished before w's reads it. */
krill_status krill_fused_dcgs2_update(krill_ctx *ctx, int64_t n, int k, double *v, int64_t ldv,
                                      const double *c, double *c_dev)
{
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) return krill_cuda_dcgs2_update(ctx, n, k, v, ldv, c, c_dev);
#endif
    (void)c_dev;
    double *u = v + (size_t)k * (size_t)ldv, *w = u + ldv;
#pragma omp parallel num_threads(krill_fused_threads(ctx)) if (n >= KRILL_FUSED_PARALLEL_MIN)
    {
        int64_t lo, hi;
        krill_fused_chunk(n, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
        for (int64_t b = lo; b < hi; b += DCGS2_ROW_BLOCK) {
            int64_t e = b + DCGS2_ROW_BLOCK < hi ? b + DCGS2_ROW_BLOCK : hi;
            const double cu = c[k], cw = c[2 * k + 2], cq = c[2 * k + 1];
#pragma omp simd
            for (int64_t i = b; i < e; i++) {
                u[i] *= cu;
                w[i] *= cw;
            }
            update2_rows(b, e, k, v, ldv, c, c + k + 1, u, w);
#pragma omp simd
            for (int64_t i = b; i < e; i++) w[i] += cq * u[i];
        }
    }
    return KRILL_OK;
}
