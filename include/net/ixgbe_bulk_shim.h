/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Bulk free of completed TX skbs for NIC drivers.
 *
 * A TX cleanup gathers the skbs the hardware has sent into a batch on its
 * stack and frees them in bulk with napi_consume_skb_bulk(): when
 * IXGBE_BULK_SHIM_SIZE are gathered and when the cleanup loop ends.  With a
 * NAPI budget of 0 (netpoll) each skb is freed at once.  The batch is Rust
 * code, in drivers/net/ixgbe_bulk_shim/, but for the common case of
 * ixgbe_bulk_shim_add(), storing an skb in a free slot, which is inline below
 * so that a cleanup pays no call per skb.  Without CONFIG_IXGBE_BULK_SHIM the
 * functions below free each skb at once with napi_consume_skb().
 *
 * Usage, in a NAPI TX cleanup given @budget:
 *
 *	struct ixgbe_bulk_shim done __uninitialized;
 *
 *	ixgbe_bulk_shim_init(&done, budget);
 *	while (...)
 *		ixgbe_bulk_shim_add(&done, skb);
 *	ixgbe_bulk_shim_flush(&done);
 *
 * The batch must be flushed before the cleanup returns.  It may be left
 * uninitialized (__uninitialized, so that CONFIG_INIT_STACK_ALL_ZERO does not
 * clear its 264 bytes on every cleanup): ixgbe_bulk_shim_init() writes the
 * count and the budget, and no slot is read before it is written.
 */
#ifndef _NET_IXGBE_BULK_SHIM_H
#define _NET_IXGBE_BULK_SHIM_H

#include <linux/skbuff.h>

#define IXGBE_BULK_SHIM_SIZE	32

#if IS_ENABLED(CONFIG_IXGBE_BULK_SHIM)

/**
 * struct ixgbe_bulk_shim - completed TX skbs waiting to be freed in bulk
 * @count: number of skbs in @skbs, below IXGBE_BULK_SHIM_SIZE between calls;
 *	UINT_MAX if the batch frees each skb as it is added (a budget of 0, or
 *	the shim switched off)
 * @budget: NAPI budget of the cleanup
 * @skbs: the skbs, owned by the batch until it frees them
 *
 * Private to drivers/net/ixgbe_bulk_shim/, whose Rust type checks at build
 * time that it has this layout, and to ixgbe_bulk_shim_add() below.
 */
struct ixgbe_bulk_shim {
	unsigned int count;
	int budget;
	struct sk_buff *skbs[IXGBE_BULK_SHIM_SIZE];
};

void ixgbe_bulk_shim_init(struct ixgbe_bulk_shim *b, int budget);
void __ixgbe_bulk_shim_add(struct ixgbe_bulk_shim *b, struct sk_buff *skb);
void ixgbe_bulk_shim_flush(struct ixgbe_bulk_shim *b);
/* The shim's count of its bulk frees (ixgbe_bulk_shim_syms.c). */
void ixgbe_bulk_shim_count_batch(unsigned int skbs);

/*
 * Adds @skb, whose reference the caller gives up, to @b.  Inline: storing it
 * in a free slot other than the last.  __ixgbe_bulk_shim_add() does all the
 * rest: it fills the last slot and frees the batch, frees @skb at once when
 * the batch frees each skb as it is added, and ignores a NULL @skb.
 */
static inline void ixgbe_bulk_shim_add(struct ixgbe_bulk_shim *b,
				       struct sk_buff *skb)
{
	if (likely(skb && b->count < IXGBE_BULK_SHIM_SIZE - 1)) {
		b->skbs[b->count++] = skb;
		return;
	}
	__ixgbe_bulk_shim_add(b, skb);
}

#else /* CONFIG_IXGBE_BULK_SHIM */

struct ixgbe_bulk_shim {
	int budget;
};

static inline void ixgbe_bulk_shim_init(struct ixgbe_bulk_shim *b, int budget)
{
	b->budget = budget;
}

static inline void ixgbe_bulk_shim_add(struct ixgbe_bulk_shim *b,
				       struct sk_buff *skb)
{
	napi_consume_skb(skb, b->budget);
}

static inline void ixgbe_bulk_shim_flush(struct ixgbe_bulk_shim *b)
{
}

#endif /* CONFIG_IXGBE_BULK_SHIM */

#endif /* _NET_IXGBE_BULK_SHIM_H */
