/* krill.h - the whole public API of krill, a Krylov solver library (C11 + CUDA). */
#ifndef KRILL_H
#define KRILL_H

#include "krill/status.h"
#include "krill/ctx.h"
#include "krill/csr.h"
#include "krill/io.h"
#include "krill/gen.h"
#include "krill/vec.h"
#include "krill/mat.h"
#include "krill/precond.h"
#include "krill/solver.h"
#include "krill/order.h"
#include "krill/graph.h"
#include "krill/apsp.h"
#include "krill/overlap.h"

#endif
