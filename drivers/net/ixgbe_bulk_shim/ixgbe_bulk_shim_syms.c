// SPDX-License-Identifier: GPL-2.0
/*
 * The C side of the shim (ixgbe_bulk_shim.rs): the exports of its entry
 * points, so that ixgbe and igb can use them when built as modules, and its
 * run-time switch.
 */

#include <linux/cache.h>
#include <linux/export.h>
#include <linux/moduleparam.h>
#include <net/ixgbe_bulk_shim.h>

/*
 * The entry points are defined in Rust (ixgbe_bulk_shim.rs), so no export
 * can follow its definition: each follows a note on what it exports.
 */

/* Starts a batch for a TX cleanup given a NAPI budget. */
EXPORT_SYMBOL_GPL(ixgbe_bulk_shim_init);
/*
 * Adds a completed skb to the batch, which frees it in bulk or at once: the
 * whole add, which the header's inline ixgbe_bulk_shim_add() calls for all
 * but its common case.
 */
EXPORT_SYMBOL_GPL(__ixgbe_bulk_shim_add);
/* Frees the skbs the batch holds. */
EXPORT_SYMBOL_GPL(ixgbe_bulk_shim_flush);

/*
 * Built in, this object's KBUILD_MODNAME is "ixgbe_bulk_shim_syms"; the
 * switch is named after the shim instead: ixgbe_bulk_shim.enable= on the
 * kernel command line, /sys/module/ixgbe_bulk_shim/parameters/enable at run
 * time.
 */
#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "ixgbe_bulk_shim."

/*
 * Y (the default): completed TX skbs are gathered and freed in bulk.  N: each
 * one is freed at once with napi_consume_skb() and the cleanup's budget, as
 * the drivers do without the shim.  ixgbe_bulk_shim_init() reads it once per
 * cleanup, with a relaxed atomic load (READ_ONCE()), so a cleanup never mixes
 * the two; a change applies from the next cleanup on.
 */
bool ixgbe_bulk_shim_enable __read_mostly = true;
module_param_named(enable, ixgbe_bulk_shim_enable, bool, 0644);
