/* ozaki/ozaki_fast_avx2.c - the CPU loops of the fast path compiled with -mavx2 -mfma
 * (x86-64): krill_oz_fast_terms4 runs the four rows' states as 4-wide vectors. Called only
 * where the CPU has both (ozaki_fast_host.c). */
#include "ozaki/ozaki_fast_host.h"

#if !defined(__AVX2__) || !defined(__FMA__)
#error "ozaki_fast_avx2.c must be compiled with -mavx2 -mfma"
#endif

#define KRILL_OZ_LOOP(name) name##_avx2
#include "ozaki/ozaki_fast_loops.h"
