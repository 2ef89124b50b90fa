/* formats/auto.c - `auto`: choose a storage format for a matrix, build it, say why.
 *
 * "auto" estimates, for every registered format that has an implementation on the
 * context's device, the bytes it would store, the time of one SpMV and the time of its
 * build beyond csr's (formats/auto_model.c), and weighs the build against the SpMVs the
 * matrix is expected to serve: E, by default AUTO_DEFAULT_SPMVS (one GMRES(30) cycle: the
 * handle does not know the solve), or N with "auto:spmvs=N" (solver/solve.c's
 * krill_auto_for_solves makes it from a solve's options). Over E SpMVs format f costs
 *     C_f = build_f + E * t_f          (build_csr = 0: builds count beyond csr's)
 * and auto builds the f of least C_f among csr and the formats whose predicted saving over
 * csr is clear of the model's uncertainty: the gains (E (t_csr - t_f) and a cheaper build),
 * counted at AUTO_GAIN_SHARE, must still exceed the costs (a dearer build, a slower SpMV).
 * "auto:measure" builds every candidate the model puts within AUTO_MEASURE_FACTOR of the
 * fastest SpMV, times each with krill_mat_time_spmv, keeps the fastest and frees the rest
 * (it pays every candidate's build, so it does not weigh them). Either way
 * krill_mat_format() names the format built and krill_mat_choice() gives the reason, which
 * says when a faster SpMV was passed over because its build would not be repaid. The
 * constants and where they come from are in doc/auto.md.
 *
 * Rules on top of the model: a matrix with fewer than AUTO_TINY_NNZ entries (on the CPU
 * AUTO_CPU_SMALL_NNZ) gets csr; a padded (ELL-family) format is not considered when it
 * would store more than twice csr's bytes, or more entries than its build accepts; the
 * runs of consecutive columns (a pass over every column index) are counted only when an
 * RBP format's least possible build could be repaid by E SpMVs of no time at all and the
 * run statistics of a sample of rows give some RBP format a faster SpMV than csr's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/auto_model.h"

/* ---- rules ---------------------------------------------------------------------------- */

/* Below this many entries every format's SpMV is a few microseconds of launch or
 * fork/join latency and they differ by less than one cache's worth of bytes: csr, whose
 * build is a copy, is chosen whatever the estimates say. */
#define AUTO_TINY_NNZ 4096
/* On the CPU the same holds up to this many entries (about 12 MB of csr, inside the last-
 * level cache of the CPUs we time on): the SpMV is fork/join and scheduling, and csr's
 * static nnz-balanced blocks have the least of it. Measured on 16 threads of the H100
 * host: bcsstk13 (84k entries) csr 17 us, rbp-csr 29 us; bcsstk15 (118k) 21 vs 33 us. */
#define AUTO_CPU_SMALL_NNZ (1 << 20)
/* Estimated costs within this fraction of each other are a tie (the model is not finer
 * than that); the tie goes to the format storing fewer bytes. */
#define AUTO_TIE 0.02
/* auto:measure builds and times the candidates whose estimate is within this factor of
 * the best estimate: wide enough to cover the model's error, narrow enough not to build a
 * format the model is sure about. */
#define AUTO_MEASURE_FACTOR 2.0
/* auto:measure: untimed SpMVs per candidate (first touch, caches, clocks), then timed
 * ones, of which the median is kept. */
#define AUTO_MEASURE_WARMUP 2
#define AUTO_MEASURE_REPS 7

/* ---- the weighing --------------------------------------------------------------------- */

/* E when the caller says nothing: one GMRES(30) cycle, its 30 SpMVs and the initial and the
 * restart's true residual (what solver/solve.c's krill_auto_solve_spmvs gives for the
 * default options). Not maxit, which is a cap: on the benchmark set a GMRES(30) solve
 * either converged within 10-24 iterations (band1, band3, band101, rand100, band1x) or ran
 * to maxit (rand1, poisson3d, elasticity3d), and maxit cannot tell which. With E from
 * maxit = 1000 (1034 SpMVs) an H200 measured auto at up to 1.18x csr on the quick solves:
 * the runs become worth counting (3 ms of rand100's 16 ms solve) and ell's build is taken
 * on poisson3d:160 for a gain its SpMV does not have (1.04x). A build must pay back within
 * the window, so that a quickly converging solve loses at most the model's error; callers
 * who know the matrix serves more SpMVs (time stepping, many right-hand sides) say so with
 * auto:spmvs=N. */
#define AUTO_DEFAULT_SPMVS 32
/* The largest N of auto:spmvs=N: large enough that no build matters (the SpMV-only
 * choice, but for ties: a format must clear the margin, which csr's SpMV-only rule did not
 * ask), small enough that E is exact in a double (below 2^53). */
#define AUTO_MAX_SPMVS 1000000000000000LL
/* The share of a predicted gain that must still cover the costs before auto leaves csr.
 * The build model is within 10% of the measured extras above 50 ms and up to 2x off on
 * smaller ones (formats/auto_model.c); the SpMV model's time ratios on the H200 were up
 * to 16% too hopeful (band3's ell: modelled 0.93 of csr's time, measured 1.08) and up to
 * 1.6x too gloomy (rand100's ell: 1.00, measured 0.61). Counting gains at half keeps a
 * choice whose build is twice the model's from costing more than csr. */
#define AUTO_GAIN_SHARE 0.5

/* What "auto:PARAM" asks for. */
typedef struct auto_options {
    int measure;             /* auto:measure */
    int64_t spmvs;           /* E */
    int spmvs_given;         /* E came from auto:spmvs=N */
} auto_options;

/* param: NULL, "measure" or "spmvs=N" with N a whole number in 1 .. AUTO_MAX_SPMVS. */
static krill_status parse_options(const char *param, auto_options *o)
{
    krill_status st = KRILL_OK;
    const char *digits = param && strncmp(param, "spmvs=", 6) == 0 ? param + 6 : NULL;
    const size_t n = digits ? strlen(digits) : 0;
    long long value;
    memset(o, 0, sizeof *o);
    o->spmvs = AUTO_DEFAULT_SPMVS;
    if (!param) goto cleanup;
    o->measure = strcmp(param, "measure") == 0;
    KRILL_REQUIRE(o->measure || digits, "format 'auto:%s': unknown option '%s' (auto takes "
                  "none, 'measure' or 'spmvs=N')", param, param);
    if (!digits) goto cleanup;
    /* at most 16 digits: no overflow, and AUTO_MAX_SPMVS has 16 */
    value = n > 0 && n <= 16 && strspn(digits, "0123456789") == n ? strtoll(digits, NULL, 10) : 0;
    KRILL_REQUIRE(value >= 1 && value <= AUTO_MAX_SPMVS, "format 'auto:%s': spmvs must be a "
                  "whole number of SpMVs from 1 to %lld, not '%s'", param, AUTO_MAX_SPMVS,
                  digits);
    o->spmvs = value;
    o->spmvs_given = 1;
cleanup:
    return st;
}

/* The fastest candidate by SpMV time alone; ties (AUTO_TIE) go to fewer stored bytes. */
static int best_spmv(const auto_estimate *est, int n)
{
    int best = -1;
    for (int f = 0; f < n; f++) {
        if (est[f].skip) continue;
        if (best < 0 || est[f].seconds < est[best].seconds * (1.0 - AUTO_TIE)) {
            best = f;
        } else if (est[f].seconds <= est[best].seconds * (1.0 + AUTO_TIE) &&
                   est[f].stored < est[best].stored) {
            best = f;
        }
    }
    return best;
}

/* C_f = build_f + E t_f */
static double expected_cost(const auto_estimate *e, double spmvs)
{
    return e->build + spmvs * e->seconds;
}

/* 1 when f's predicted saving over csr is clear of the model's uncertainty: its gains
 * counted at AUTO_GAIN_SHARE still exceed its costs. */
static int clears_margin(const auto_estimate *csr, const auto_estimate *f, double spmvs)
{
    const double spmv_gain = spmvs * (csr->seconds - f->seconds);
    const double gains = fmax(spmv_gain, 0.0) + fmax(-f->build, 0.0);
    const double costs = fmax(-spmv_gain, 0.0) + fmax(f->build, 0.0);
    return AUTO_GAIN_SHARE * gains > costs;
}

/* The least C_f among csr (est[0], always a candidate) and the candidates that clear the
 * margin; costs within AUTO_TIE of csr's (always positive: a C_f below csr's build may be
 * negative) are a tie, won by fewer stored bytes. */
static int best_weighed(const auto_estimate *est, int n, double spmvs)
{
    const double tie = AUTO_TIE * expected_cost(&est[0], spmvs);
    int best = 0;
    for (int f = 1; f < n; f++) {
        const double cost = expected_cost(&est[f], spmvs);
        const double best_cost = expected_cost(&est[best], spmvs);
        if (est[f].skip || !clears_margin(&est[0], &est[f], spmvs)) continue;
        if (cost < best_cost - tie ||
            (cost <= best_cost + tie && est[f].stored < est[best].stored))
            best = f;
    }
    return best;
}

/* The least saving against csr's SpMV time that an RBP format's estimate from a sample's
 * run statistics must show for the whole matrix's runs to be counted. Without runs the RBP
 * formats store about what csr does (rand100: rbp-csr estimated at 1.00 of csr's time), and
 * an estimate that close must not pass for a saving. */
#define AUTO_SAMPLE_MIN_GAIN 0.05

/* What a sample of rows (p->sample) says of the RBP formats, from their estimates with the
 * sampled run statistics: SAMPLE_COUNT when some format's SpMV beats csr's by
 * AUTO_SAMPLE_MIN_GAIN and E SpMVs at that saving, counted whole (the choice itself counts
 * AUTO_GAIN_SHARE of it: clears_margin), would repay the lesser of its two build estimates;
 * SAMPLE_BUILD when some beats csr so but none repays (band101 with E = 13 on the GPU: the
 * column pass cost 1.6 ms of a 13 ms solve, to find what the sample said); else
 * SAMPLE_FEW. The sampled maxima (kv, kc) are at most the matrix's, which only makes the
 * padded RBP formats look better: the test errs towards counting. Without a sample (small
 * matrices), SAMPLE_COUNT. */
enum { SAMPLE_FEW, SAMPLE_BUILD, SAMPLE_COUNT };

static int sample_verdict(const auto_estimate *est, int n, double spmvs, const auto_profile *p,
                          const auto_device *d)
{
    auto_profile q;
    auto_estimate with[AUTO_N_KNOWN];
    int verdict = p->sampled ? SAMPLE_FEW : SAMPLE_COUNT;
    if (verdict == SAMPLE_COUNT) goto done;
    q = *p;
    q.s.n_val = p->sample.n_val, q.s.n_col = p->sample.n_col, q.s.n_non = p->sample.n_non;
    q.s.kv = p->sample.kv, q.s.kc = p->sample.kc;
    q.runs = 1;
    auto_estimate_all(&q, d, with);
    for (int f = 0; f < n && verdict != SAMPLE_COUNT; f++) {
        const double saving = with[0].seconds - with[f].seconds;
        if (est[f].skip != AUTO_SKIP_UNCOUNTED || with[f].skip ||
            !(with[f].seconds < with[0].seconds * (1.0 - AUTO_SAMPLE_MIN_GAIN)))
            continue;
        verdict = spmvs * saving > fmin(est[f].build, with[f].build) ? SAMPLE_COUNT
                                                                     : SAMPLE_BUILD;
    }
done:
    return verdict;
}

/* Before the runs are counted (est from a profile without them): 1 when some RBP format's
 * least build could be repaid by E SpMVs that took no time at all (a saving of at most
 * t_csr each, counted at AUTO_GAIN_SHARE) and then, only then sampled, a sample of rows
 * shows runs that save enough SpMV time to repay a build (sample_verdict). Otherwise the
 * pass over every column index is not made (on two threads it took 10 ms of rand100's
 * 0.27 s solve, whose random columns make no runs), and the RBP formats' skip becomes
 * "build" or "few runs". */
static int runs_may_repay(const krill_csr *csr, auto_estimate *est, int n, double spmvs,
                          auto_profile *p, const auto_device *d)
{
    int may = 0, few = 0;
    for (int f = 0; f < n; f++)
        if (est[f].skip == AUTO_SKIP_UNCOUNTED)
            may |= AUTO_GAIN_SHARE * spmvs * est[0].seconds > est[f].build;
    if (may) {
        int verdict;
        auto_profile_run_sample(csr, p);
        verdict = sample_verdict(est, n, spmvs, p, d);
        few = verdict == SAMPLE_FEW;
        may = verdict == SAMPLE_COUNT;
    }
    for (int f = 0; !may && f < n; f++)
        if (est[f].skip == AUTO_SKIP_UNCOUNTED) est[f].skip = few ? "few runs" : "build";
    return may;
}

/* ---- the reason ----------------------------------------------------------------------- */

/* Append text to the string in buf (size bytes), cutting it if it does not fit. */
static void append(char *buf, size_t size, const char *text)
{
    const size_t used = strlen(buf);
    if (used + 1 < size) strncat(buf, text, size - used - 1);
}

/* "+0.64 s", "-3.1 ms", "+45 us" */
static void duration(char *buf, size_t len, double seconds)
{
    const double a = fabs(seconds);
    if (a >= 0.1)
        snprintf(buf, len, "%+.2f s", seconds);
    else if (a >= 1e-3)
        snprintf(buf, len, "%+.1f ms", seconds * 1e3);
    else
        snprintf(buf, len, "%+.0f us", seconds * 1e6);
}

/* "expected 32 SpMVs (default)" */
static void describe_expected(const auto_options *o, char *buf, size_t len)
{
    snprintf(buf, len, "expected %lld SpMV%s%s", (long long)o->spmvs, o->spmvs > 1 ? "s" : "",
             o->spmvs_given ? "" : " (default)");
}

/* Why format e, faster than csr per SpMV or cheaper to build, was not built:
 * "rbp-ell's SpMV would take 0.67x csr's time (gpu model), but its build +0.64 s needs
 * 3000 SpMVs to repay (6000 to clear the model's margin)". */
static void describe_passed_over(const auto_estimate *csr, const auto_estimate *e,
                                 const char *model, char *buf, size_t len)
{
    const double gain = csr->seconds - e->seconds;
    char build[32];
    duration(build, sizeof build, e->build);
    if (e->build > 0.0 && gain > 0.0)
        snprintf(buf, len, "%s's SpMV would take %.2fx csr's time (%s model), but its build %s "
                 "needs %.0f SpMVs to repay (%.0f to clear the model's margin)", e->name,
                 e->seconds / csr->seconds, model, build, ceil(e->build / gain),
                 floor(e->build / (AUTO_GAIN_SHARE * gain)) + 1);   /* E > this: cleared */
    else
        snprintf(buf, len, "%s's SpMV would take %.2fx csr's time (%s model) and its build %s: "
                 "not clear of the model's margin", e->name, e->seconds / csr->seconds,
                 model, build);
}

/* "rows 27 +- 3, longest 81" */
static void describe_rows(const auto_profile *p, char *buf, size_t len)
{
    snprintf(buf, len, "rows %.3g +- %.3g, longest %lld", p->s.mean_row_nnz, p->row_sd,
             (long long)p->s.max_row_nnz);
}

/* "; left out: ell (padding), rbp-csr (build)" */
static void describe_left_out(const auto_estimate *est, int n, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int f = 0; f < n; f++) {
        if (!est[f].skip || est[f].skip == AUTO_SKIP_ABSENT) continue;
        append(buf, len, buf[0] ? ", " : "; left out: ");
        append(buf, len, est[f].name);
        append(buf, len, " (");
        append(buf, len, est[f].skip);
        append(buf, len, ")");
    }
}

/* "its build +1.6 ms against csr's (repaid in 4 SpMVs), " */
static void describe_build(const auto_estimate *csr, const auto_estimate *c, char *buf,
                           size_t len)
{
    const double gain = csr->seconds - c->seconds;
    char build[32], repaid[48] = "";
    duration(build, sizeof build, c->build);
    if (c->build > 0.0 && gain > 0.0)
        snprintf(repaid, sizeof repaid, " (repaid in %.0f SpMVs)", ceil(c->build / gain));
    snprintf(buf, len, "its build %s against csr's%s, ", build, repaid);
}

/* "; next ell at 1.05x": the next fastest SpMV among the other candidates, if any */
static void describe_next(const auto_estimate *est, int n, int chosen, char *buf, size_t len)
{
    int next = -1;
    buf[0] = '\0';
    for (int f = 0; f < n; f++)
        if (f != chosen && !est[f].skip && (next < 0 || est[f].seconds < est[next].seconds))
            next = f;
    if (next >= 0)
        snprintf(buf, len, "; next %s at %.2fx", est[next].name,
                 est[next].seconds / est[chosen].seconds);
}

/* The reason for building est[chosen] when est[fastest] has the fastest SpMV, into buf
 * (without the rows and the formats left out). */
static void describe_choice(const auto_estimate *est, int n, int chosen, int fastest,
                            const auto_options *o, const char *model, char *buf, size_t len)
{
    const auto_estimate *c = &est[chosen];
    char expected[48], passed[224] = "", text[96] = "";
    describe_expected(o, expected, sizeof expected);
    if (fastest != chosen && fastest != 0)
        describe_passed_over(&est[0], &est[fastest], model, passed, sizeof passed);
    if (chosen == 0 && passed[0]) {          /* csr because the faster SpMV's build costs */
        snprintf(buf, len, "csr: %s, %s", passed, expected);
    } else {
        snprintf(buf, len, "%s: estimated %.2f of csr's bytes and %.2f of its SpMV time "
                 "(%s model); ", c->name, c->stored / est[0].stored,
                 c->seconds / est[0].seconds, model);
        if (chosen != 0) describe_build(&est[0], c, text, sizeof text);
        append(buf, len, text);
        append(buf, len, expected);
        if (passed[0]) {
            append(buf, len, "; passed over: ");
            append(buf, len, passed);
        } else {
            describe_next(est, n, chosen, text, sizeof text);
            append(buf, len, text);
        }
    }
}

/* ---- the two modes -------------------------------------------------------------------- */

/* The rule before the model: few entries get csr (AUTO_TINY_NNZ, AUTO_CPU_SMALL_NNZ). */
static int small_matrix(const krill_ctx *ctx, const krill_csr *csr)
{
    return csr->nnz < (krill_on_gpu(ctx) ? AUTO_TINY_NNZ : AUTO_CPU_SMALL_NNZ);
}

/* Build csr for a small matrix (the rule first) and say why. */
static krill_status choose_small(krill_ctx *ctx, const krill_csr *csr, const auto_profile *p,
                                 krill_mat **out)
{
    krill_status st = KRILL_OK;
    char rows[96];
    describe_rows(p, rows, sizeof rows);
    KRILL_TRY(krill_mat_build(ctx, csr, "csr", out));
    snprintf((*out)->choice, sizeof (*out)->choice, "csr: small matrix (%lld entries, under "
             "%d): every format costs about one %s; %s", (long long)p->s.nnz,
             krill_on_gpu(ctx) ? AUTO_TINY_NNZ : AUTO_CPU_SMALL_NNZ,
             krill_on_gpu(ctx) ? "launch" : "parallel region", rows);
cleanup:
    return st;
}

/* Build the format of least expected cost (best_weighed) of est[0..n-1] and say why. */
static krill_status choose_by_model(krill_ctx *ctx, const krill_csr *csr, const auto_profile *p,
                                    const auto_estimate *est, int n, const auto_options *o,
                                    krill_mat **out)
{
    krill_status st = KRILL_OK;
    const int chosen = best_weighed(est, n, (double)o->spmvs);
    char rows[96], left_out[160];
    describe_rows(p, rows, sizeof rows);
    describe_left_out(est, n, left_out, sizeof left_out);
    KRILL_TRY(krill_mat_build(ctx, csr, est[chosen].name, out));
    describe_choice(est, n, chosen, best_spmv(est, n), o, krill_on_gpu(ctx) ? "gpu" : "cpu",
                    (*out)->choice, sizeof (*out)->choice);
    append((*out)->choice, sizeof (*out)->choice, "; ");
    append((*out)->choice, sizeof (*out)->choice, rows);
    append((*out)->choice, sizeof (*out)->choice, left_out);
cleanup:
    return st;
}

/* A build that fails for want of memory or support leaves the candidate out of the
 * measurement; any other failure is an error. */
static int build_may_fail(krill_status st)
{
    return st == KRILL_ERR_ALLOC || st == KRILL_ERR_DEVICE_ALLOC || st == KRILL_ERR_UNSUPPORTED;
}

/* Build and time every candidate within AUTO_MEASURE_FACTOR of the best estimate; keep the
 * fastest. The reason lists each median ("csr 1.234e-05 s"), in the order timed. */
static krill_status choose_by_measure(krill_ctx *ctx, const krill_csr *csr,
                                      auto_estimate *est, int n, krill_mat **out)
{
    krill_status st = KRILL_OK;
    krill_mat *m = NULL, *fastest = NULL;
    int best = best_spmv(est, n), winner = -1, timed = 0, not_built = 0;
    char times[224] = "", skipped[96] = "";
    for (int f = 0; f < n; f++) {
        size_t used;
        if (est[f].skip || est[f].seconds > AUTO_MEASURE_FACTOR * est[best].seconds) continue;
        st = krill_mat_build(ctx, csr, est[f].name, &m);
        if (st != KRILL_OK && build_may_fail(st)) {
            used = strlen(skipped);
            snprintf(skipped + used, sizeof skipped - used, "%s%s", not_built ? ", " : "",
                     est[f].name);
            not_built++;
            st = KRILL_OK;
            continue;
        }
        KRILL_TRY(st);
        KRILL_TRY(krill_mat_time_spmv(m, AUTO_MEASURE_WARMUP, AUTO_MEASURE_REPS,
                                      &est[f].measured));
        used = strlen(times);
        snprintf(times + used, sizeof times - used, "%s%s %.3e s", timed ? ", " : "",
                 est[f].name, est[f].measured);
        timed++;
        if (winner < 0 || est[f].measured < est[winner].measured) {
            winner = f;
            krill_mat_destroy(&fastest);
            fastest = m;
        } else {
            krill_mat_destroy(&m);
        }
        m = NULL;
    }
    if (winner < 0) {
        st = krill_error(KRILL_ERR_UNSUPPORTED, "auto:measure: none of the candidate formats "
                         "could be built (%s); use csr", skipped);
        goto cleanup;
    }
    snprintf(fastest->choice, sizeof fastest->choice, "%s: fastest of %d measured on the %s "
             "(median of %d): ", est[winner].name, timed, krill_on_gpu(ctx) ? "gpu" : "cpu",
             AUTO_MEASURE_REPS);
    append(fastest->choice, sizeof fastest->choice, times);
    if (not_built) {
        append(fastest->choice, sizeof fastest->choice, "; not built: ");
        append(fastest->choice, sizeof fastest->choice, skipped);
    }
    *out = fastest;
    fastest = NULL;
cleanup:
    krill_mat_destroy(&m);
    krill_mat_destroy(&fastest);
    return st;
}

krill_status krill_auto_estimate(krill_ctx *ctx, const krill_csr *csr, const char *format,
                                 double *stored_bytes, double *seconds)
{
    krill_status st = KRILL_OK;
    auto_device d;
    auto_profile p;
    auto_estimate est[AUTO_N_KNOWN];
    const int f = auto_known_index(format);
    KRILL_REQUIRE(f >= 0, "krill_auto_estimate: auto does not estimate format '%s'", format);
    auto_device_model(ctx, &d);
    auto_profile_rows(csr, &d, ctx->threads, 1, &p);
    auto_profile_runs(csr, ctx->threads, &p);
    auto_estimate_all(&p, &d, est);
    *stored_bytes = est[f].stored;
    *seconds = est[f].seconds;
cleanup:
    return st;
}

krill_status krill_auto_create(krill_ctx *ctx, const krill_csr *csr, const char *param,
                               krill_mat **out)
{
    krill_status st = KRILL_OK;
    auto_options o;
    auto_device d;
    auto_profile p;
    auto_estimate est[AUTO_N_KNOWN];
    int n;
    *out = NULL;
    KRILL_TRY(parse_options(param, &o));
    auto_device_model(ctx, &d);
    /* a small matrix gets csr by the rule: its reason needs the row statistics alone */
    if (!o.measure && small_matrix(ctx, csr)) {
        auto_profile_rows(csr, &d, ctx->threads, 0, &p);
        st = choose_small(ctx, csr, &p, out);
        goto cleanup;
    }
    auto_profile_rows(csr, &d, ctx->threads, 1, &p);
    n = auto_estimate_all(&p, &d, est);
    if (o.measure || runs_may_repay(csr, est, n, (double)o.spmvs, &p, &d)) {
        auto_profile_runs(csr, ctx->threads, &p);
        n = auto_estimate_all(&p, &d, est);
    }
    if (best_spmv(est, n) < 0) {
        st = krill_error(KRILL_ERR_INTERNAL, "auto: no candidate format on this device");
        goto cleanup;
    }
    if (o.measure)
        st = choose_by_measure(ctx, csr, est, n, out);
    else
        st = choose_by_model(ctx, csr, &p, est, n, &o, out);
cleanup:
    return st;
}

