/* tests/testutil.h - a minimal test harness: checks that count failures and keep going,
 * a summary line, skips (exit 77), the testdata folder, and comparisons. */
#ifndef KRILL_TESTUTIL_H
#define KRILL_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>
#include "krill.h"

extern int tu_failures;
extern int tu_checks;

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        tu_checks++;                                                                     \
        if (!(cond)) {                                                                   \
            tu_failures++;                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);     \
        }                                                                                \
    } while (0)

/* A krill call that must return `expected`; prints krill_last_error() when it does not. */
#define CHECK_STATUS(call, expected)                                                     \
    do {                                                                                 \
        krill_status tu_st_ = (call);                                                    \
        tu_checks++;                                                                     \
        if (tu_st_ != (expected)) {                                                      \
            tu_failures++;                                                               \
            fprintf(stderr, "%s:%d: %s returned %s (expected %s): %s\n", __FILE__,       \
                    __LINE__, #call, krill_status_string(tu_st_),                        \
                    krill_status_string(expected), krill_last_error());                  \
        }                                                                                \
    } while (0)
#define CHECK_OK(call) CHECK_STATUS(call, KRILL_OK)

/* |a - b| <= tol * max(1, |b|) */
#define CHECK_CLOSE(a, b, tol)                                                           \
    do {                                                                                 \
        double tu_a_ = (a), tu_b_ = (b);                                                 \
        tu_checks++;                                                                     \
        if (!tu_close(tu_a_, tu_b_, (tol))) {                                            \
            tu_failures++;                                                               \
            fprintf(stderr, "%s:%d: %s = %.17g, expected %.17g (tol %g)\n", __FILE__,    \
                    __LINE__, #a, tu_a_, tu_b_, (double)(tol));                          \
        }                                                                                \
    } while (0)

int tu_close(double a, double b, double tol);

/* Print "N passed, N failed" and return the exit code (0 if no check failed). */
int tu_finish(const char *name);

/* Exit 77 (ctest: skipped) with a message. */
void tu_skip(const char *why);

/* The testdata folder ($KRILL_TESTDATA), or NULL if absent. */
const char *tu_testdata(void);
/* Path of testdata file `rel` in a static buffer, or NULL if the folder is absent. */
const char *tu_testdata_path(const char *rel);

/* Call fn(a, file name, user) for every square matrix of testdata's mtx/ that krill reads
 * (the ones it refuses are the io tests' business). Returns how many, or -1 after printing
 * a message when the folder is absent. */
int tu_for_each_square_mtx(void (*fn)(const krill_csr *a, const char *name, void *user),
                           void *user);

/* max_i |x_i - y_i| / max(max_i |y_i|, tiny) */
double tu_max_rel_diff(const double *x, const double *y, int64_t n);

/* Deterministic pseudo-random doubles in [-1, 1) (xorshift; the same seed, the same data). */
void tu_random(double *x, int64_t n, uint64_t seed);

/* Symmetric, diagonally dominant, n x n: tridiagonal (4 on the diagonal, -1 beside it) plus
 * a full last row and column (entries (-1)^j / (1 + j)) with a_nn = n. Row n - 1 has n - 1
 * lower entries: a triangular solve's longest row (n terms with the right-hand side). Exits
 * on allocation failure. */
krill_csr *tu_arrow(int32_t n);

/* A GPU context, or exit 77 with a message when there is no usable GPU. */
krill_ctx *tu_gpu_ctx_or_skip(void);
krill_ctx *tu_cpu_ctx(int threads);

#endif
