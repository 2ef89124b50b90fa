/* ozaki/ozaki_fast_fma.c - the CPU loops of the fast path compiled with -mfma (x86-64):
 * TwoProduct by the FMA instruction (ozaki_row.h's __FMA__ branch). Called only where the
 * CPU has it (ozaki_fast_host.c). */
#include "ozaki/ozaki_fast_host.h"

#ifndef __FMA__
#error "ozaki_fast_fma.c must be compiled with -mfma"
#endif

void krill_oz_fast_terms_fma(krill_oz_fast *f, const double *a, const double *x, int n);
void krill_oz_fast_terms4_fma(krill_oz_fast *f, const double *const *a,
                              const double *const *x, const int *n);
void krill_oz_fast_rows_fma(krill_oz_fast *f, const double *x, const double *y, int64_t lo,
                            int64_t hi);

#define KRILL_OZ_LOOP(name) name##_fma
#include "ozaki/ozaki_fast_loops.h"
