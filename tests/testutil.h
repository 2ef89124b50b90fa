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

double tu_now(void);   /* seconds, monotonic */

/* Shards (KRILL_TEST_SHARD="i/N", 0 <= i < N): .ci/gpu-sanitize splits a test that runs
 * too long under compute-sanitizer over N processes. A test marks its units of work (a
 * TU_STEP, or one case of a loop: `if (!tu_shard_mine()) continue;`); the units are numbered
 * in the order the test reaches them, and process i runs those whose number is i mod N, so
 * the N processes together run every unit once. Only units reached outside a running unit
 * are numbered: inside a TU_STEP that runs, tu_shard_mine() is 1. Without the variable every
 * unit runs. A malformed value stops the test (exit 1). */
int tu_shard_mine(void);
int tu_sharded(void);        /* 1 when KRILL_TEST_SHARD splits the test (N > 1) */
void tu_shard_enter(void);   /* TU_STEP's bracket around a unit that runs */
void tu_shard_leave(void);

/* Run `call` as one unit of work (skipped when it is another shard's) and print its wall
 * time to stderr ("  test_x(a, b)  1.23 s"), so a test that runs long shows where. */
#define TU_STEP(call)                                                                    \
    do {                                                                                 \
        if (tu_shard_mine()) {                                                           \
            double tu_t0_ = tu_now();                                                    \
            tu_shard_enter();                                                            \
            call;                                                                        \
            tu_shard_leave();                                                            \
            fprintf(stderr, "  %-40s %8.2f s\n", #call, tu_now() - tu_t0_);           \
        }                                                                                \
    } while (0)

/* Run `call`, whose units of work are marked inside it (it is not one unit itself), and
 * print its wall time as TU_STEP does. */
#define TU_SPLIT(call)                                                                   \
    do {                                                                                 \
        double tu_t0_ = tu_now();                                                        \
        call;                                                                            \
        fprintf(stderr, "  %-40s %8.2f s\n", #call, tu_now() - tu_t0_);               \
    } while (0)

/* Exit 77 (ctest: skipped) with a message. */
void tu_skip(const char *why);

/* Quick mode (KRILL_TEST_QUICK set and not "0"): .ci/gpu-sanitize sets it, because under
 * compute-sanitizer every kernel launch costs milliseconds and a GPU test that takes 20 s
 * runs for an hour. Tests then walk fewer generated sizes and matrices, and the shared
 * testdata set is left out (the local one stays): every kernel and every code path still
 * runs, on fewer inputs; bounds on measured times (a launch below a millisecond) are not
 * checked. The ordinary runs (ctest) walk everything. Returns the level: 0 off, 2 for
 * KRILL_TEST_QUICK=2 (racecheck, which instruments every shared-memory access: tests whose
 * kernels live in shared memory shrink their sizes further), else 1. */
int tu_quick(void);

/* Test data lives in two folders (doc/testdata.md): the full shared set
 * ($KRILL_TESTDATA, CMake's KRILL_TESTDATA_DIR, ../shared/testdata by default), which may be
 * absent, and the small curated set committed with the project ($KRILL_TESTDATA_LOCAL,
 * KRILL_TESTDATA_LOCAL_DIR, testdata/ of the source tree). Each has mtx/, graphs/ and
 * MANIFEST.tsv; a file present in both is the same file, and the shared copy is used. */

/* The shared folder, or else the local one, or NULL when neither exists. A given file may
 * still be absent from it (the local set is small): look files up with tu_testdata_path. */
const char *tu_testdata(void);
/* Each folder alone, or NULL when its variable is unset or it does not exist. */
const char *tu_testdata_shared(void);
const char *tu_testdata_local(void);
/* Path of testdata file (or folder) `rel`: the shared folder's when it exists there, else
 * the local folder's when it exists there, else NULL. In a static buffer (the next call
 * overwrites it). A folder such as "mtx" is thus one folder, not the union: use the
 * iterators below for the union. */
const char *tu_testdata_path(const char *rel);
/* 1 when tu_testdata_path(rel) finds it, else 0. */
int tu_testdata_has(const char *rel);
/* A floor for a count of testdata files a test walked: `full` when the shared (full) set is
 * there, `local` when only the small local set is (CHECK(tested > tu_testdata_expect(50,
 * 10))): the check still catches a walk that silently read nothing. */
int tu_testdata_expect(int full, int local);

/* Call fn(a, file name, user) for every square matrix that krill reads in the union of the
 * two folders' mtx/ (each file name once, the shared copy first; by name). Those it refuses
 * are the io tests' business. Returns how many, or -1 after printing "testdata absent" when
 * neither folder has mtx/. */
int tu_for_each_square_mtx(void (*fn)(const krill_csr *a, const char *name, void *user),
                           void *user);

/* Call fn(path, file name, user) for every file of the union of the two folders' graphs/
 * (each name once, the shared copy first; sorted by name): DIMACS *.gr, METIS *.graph, SNAP
 * *.txt edge lists, any of them gzip-compressed (*.gz). Returns how many, or -1 after
 * printing "testdata absent" when neither folder has graphs/. */
int tu_for_each_graph(void (*fn)(const char *path, const char *name, void *user), void *user);

/* max_i |x_i - y_i| / max(max_i |y_i|, tiny) */
double tu_max_rel_diff(const double *x, const double *y, int64_t n);

/* A host CSR of the nonzeros of the row-major n x n matrix `dense` (n <= 8); NULL (and a
 * failed check) on error. */
krill_csr *tu_csr_from_dense(int32_t n, const double *dense);

/* Deterministic pseudo-random doubles in [-1, 1) (xorshift; the same seed, the same data). */
void tu_random(double *x, int64_t n, uint64_t seed);

/* Symmetric, diagonally dominant, n x n: tridiagonal (4 on the diagonal, -1 beside it) plus
 * a full last row and column (entries (-1)^j / (1 + j)) with a_nn = n. Row n - 1 has n - 1
 * lower entries: a triangular solve's longest row (n terms with the right-hand side). Exits
 * on allocation failure. */
krill_csr *tu_arrow(int32_t n);

/* ---- allocation faults ------------------------------------------------------------------
 * The walk: run(user) with the k-th of its allocations failing (krill_fault_alloc_after),
 * k = 1, 2, ... until it succeeds. Each failure must return KRILL_ERR_ALLOC or
 * KRILL_ERR_DEVICE_ALLOC with a message, and intact(user) must then hold (the outputs NULL
 * or unchanged; intact NULL: nothing to check). After the success undo(user) releases what
 * the call made (NULL: nothing). What a failure leaks, ASan reports. Returns the failures
 * walked, that is the allocations the call makes, and checks there was at least one.
 * A call that survives some failures by design (auto:measure leaves out a candidate format
 * that does not fit) sets `survives`: then a clean run counts its allocations first, and
 * every k up to that count is walked, each a clean failure or a success (undone). */
typedef struct tu_fault_call {
    const char *what;                  /* names the call in failure messages */
    krill_status (*run)(void *user);
    int (*intact)(void *user);
    void (*undo)(void *user);
    void *user;
    int survives;
} tu_fault_call;

long tu_alloc_fault_walk(const tu_fault_call *call);

/* A GPU context, or exit 77 with a message when there is no usable GPU. */
krill_ctx *tu_gpu_ctx_or_skip(void);
krill_ctx *tu_cpu_ctx(int threads);

#endif
