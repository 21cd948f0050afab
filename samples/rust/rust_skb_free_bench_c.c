// SPDX-License-Identifier: GPL-2.0
/*
 * The C side of rust_skb_free_bench: the shim's way, written as a C driver's
 * TX cleanup (ixgbe_clean_tx_irq(), igb_clean_tx_irq()) uses the shim, so
 * that ixgbe_bulk_shim_add() is the header's inline here as it is there.
 */

#include <net/ixgbe_bulk_shim.h>
#include "rust_skb_free_bench_c.h"

/*
 * Gives up the caller's reference on each of the @n skbs of @skbs through a
 * batch on this stack, with the NAPI budget @budget: a non-zero @budget
 * needs bottom halves disabled, as in a NAPI poll.
 */
void rust_skb_free_bench_shim(struct sk_buff *const *skbs, unsigned int n,
			      int budget)
{
	struct ixgbe_bulk_shim done __uninitialized;
	unsigned int i;

	ixgbe_bulk_shim_init(&done, budget);
	for (i = 0; i < n; i++)
		ixgbe_bulk_shim_add(&done, skbs[i]);
	ixgbe_bulk_shim_flush(&done);
}
