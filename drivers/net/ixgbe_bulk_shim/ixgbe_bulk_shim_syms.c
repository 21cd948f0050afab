// SPDX-License-Identifier: GPL-2.0
/*
 * Exports of the shim's Rust entry points (ixgbe_bulk_shim.rs), so that
 * ixgbe and igb can use them when built as modules.
 */

#include <linux/export.h>
#include <net/ixgbe_bulk_shim.h>

EXPORT_SYMBOL_GPL(ixgbe_bulk_shim_init);
EXPORT_SYMBOL_GPL(ixgbe_bulk_shim_add);
EXPORT_SYMBOL_GPL(ixgbe_bulk_shim_flush);
