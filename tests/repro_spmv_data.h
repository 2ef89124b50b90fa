/* tests/repro_spmv_data.h - inputs and references shared by the reproducible-SpMV tests
 * (test_repro_spmv.c on the CPU, test_gpu_repro_spmv.c on the GPU). */
#ifndef KRILL_TESTS_REPRO_SPMV_DATA_H
#define KRILL_TESTS_REPRO_SPMV_DATA_H

#include <stdint.h>

#include "krill.h"

/* The kinds of rows rs_hard_rows makes. */
enum {
    RS_FIXED,       /* hand-picked: 1e300 + 1e-300 - 1e300, DBL_MAX products, zeros, ties */
    RS_CANCEL,      /* terms and their negations (some rescaled), plus a few small terms */
    RS_RANGE,       /* magnitudes from 2^-1000 to 2^1000, products down past the subnormals */
    RS_SUBNORMAL,   /* subnormal and near-subnormal values */
    RS_ZEROS,       /* many exact zeros in a or in x */
    RS_TIES,        /* an exact tie between two doubles, sometimes broken by a tiny term */
    RS_SPECIAL,     /* Inf and NaN in x (and 0 * Inf): the result is IEEE's */
    RS_WILD,        /* (rand - 0.5) 2^(4 randn)-like: ordinary rows */
    RS_EMPTY,       /* no entries */
    RS_KINDS
};
extern const char *const rs_kind_names[RS_KINDS];

/* A matrix of n_rows hard rows of 1 to 200 entries (RS_EMPTY: none), each row over its own
 * columns with gaps (so the RBP formats see runs and isolated entries), and its x: x_j is
 * NaN where no row has column j (a format that reads a wrong column turns a row into NaN).
 * kind[i] says what row i is (NULL: not wanted). Values are finite (x holds the Inf/NaN). */
krill_status rs_hard_rows(int32_t n_rows, uint64_t seed, krill_csr **a, double **x, int **kind);

/* y_i = alpha s_i + beta y0_i (beta == 0: alpha s_i), s_i = the correctly rounded exact sum
 * of row i's products by krill_oz_row_gather (ozaki/ozaki_row.h) on the CSR, each product
 * and the sum rounded separately: the reference of every format's spmv_repro. */
void rs_reference(const krill_csr *a, const double *x, double alpha, double beta,
                  const double *y0, double *y);

/* s_i alone (the reference for alpha = 1, beta = 0). */
double rs_row_sum(const krill_csr *a, int32_t i, const double *x);

/* The (alpha, beta) pairs every test runs: (1, 0), (-1, 1), (2, -0.5). */
#define RS_NAB 3
extern const double rs_alpha[RS_NAB], rs_beta[RS_NAB];

/* the same bits, or both NaN (a GPU's arithmetic NaN is canonical, the CPU's keeps the
 * operand's payload) */
int rs_same(double a, double b);

/* A CSR with rows of `full` entries: n_rows rows, n_cols = full columns, row `which` full
 * (columns 0 .. full - 1), the others one entry on column i; values (rand - 0.5). */
krill_status rs_long_row(int32_t n_rows, int32_t full, int32_t which, krill_csr **a);

/* 1 for the formats of the ELL family (their padding caps the sizes the tests give them) */
int rs_ell_type(const char *format);

/* the most entries of any row of a */
int64_t rs_longest_row(const krill_csr *a);

/* "    what value (0xbits)" on stderr: a mismatch's two sides */
void rs_print_bits(const char *what, double v);

/* check(a, name, x, y0) with x, y0 = (rand - 0.5) exp(4 randn) (krill_gen_dot_vectors, seeds
 * 11 and 12): the inputs every matrix of the tests gets */
void rs_with_inputs(const krill_csr *a, const char *name,
                    void (*check)(const krill_csr *a, const char *name, const double *x,
                                  const double *y0));

/* spec's matrix with every `every`-th row emptied (every = 0: as generated) */
krill_status rs_gen(const char *spec, int every, krill_csr **a);

#endif
