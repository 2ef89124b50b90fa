/* order/order_impl.h - what the files of order/ share: the structural check of a square
 * CSR that the renumbering functions run before they index anything with its columns. */
#ifndef KRILL_ORDER_IMPL_H
#define KRILL_ORDER_IMPL_H

#include "krill/csr.h"

/* A non-NULL, square CSR whose offsets run from 0 to nnz without decreasing and whose rows
 * hold column indices in [0, n), strictly increasing: what RCM's list merge and the
 * permutation rely on. Values are not looked at (renumbering does not need them finite).
 * `fn` names the caller in the message. */
krill_status krill_order_check_square(const krill_csr *a, const char *fn);

#endif
