/* ozaki/ozaki_fast_fma.c - the CPU loops of the fast path compiled with -mfma (x86-64):
 * TwoProduct by the FMA instruction (ozaki_row.h's __FMA__ branch). Called only where the
 * CPU has it (ozaki_fast_host.c). */
#include "ozaki/ozaki_fast_host.h"

#ifndef __FMA__
#error "ozaki_fast_fma.c must be compiled with -mfma"
#endif

#define KRILL_OZ_LOOP(name) name##_fma
#include "ozaki/ozaki_fast_loops.h"
