// SPDX-License-Identifier: GPL-2.0
/*
 * The C side of the shim (ixgbe_bulk_shim.rs): the exports of its entry
 * points, so that ixgbe and igb can use them when built as modules, its
 * run-time switch, and its counts of bulk frees.
 */

#include <linux/cache.h>
#include <linux/cpumask.h>
#include <linux/export.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/sysfs.h>
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

/*
 * What the bulk frees did, per CPU: how many napi_consume_skb_bulk() calls
 * the shim made and how many skbs they freed (not those freed one at a time,
 * with a budget of 0 or the shim switched off).  Counted once per call, from
 * ixgbe_bulk_shim_flush() (ixgbe_bulk_shim_count_batch()), in the NAPI poll;
 * read as "calls=N skbs=M" from
 * /sys/module/ixgbe_bulk_shim/parameters/batches, so that a test can tell
 * that the shim batches, and by how much.
 */
struct ixgbe_bulk_shim_batches {
	u64 calls;
	u64 skbs;
};

static DEFINE_PER_CPU(struct ixgbe_bulk_shim_batches, ixgbe_bulk_shim_batches);

/*
 * Counts one bulk free of @skbs skbs, from the NAPI poll only (softirq, BHs
 * off, so this CPU's counters have no other writer while it runs): the
 * __this_cpu operations, which need no protection against interrupts.  The
 * this_cpu ones would be wrong nowhere but dearer where the architecture has
 * no single-instruction per-CPU add: the generic ones disable interrupts
 * around the add, and SMP UML, whose figures the project takes, disables
 * them with a sigprocmask() system call each time.
 */
void ixgbe_bulk_shim_count_batch(unsigned int skbs)
{
	__this_cpu_inc(ixgbe_bulk_shim_batches.calls);
	__this_cpu_add(ixgbe_bulk_shim_batches.skbs, skbs);
}

static int ixgbe_bulk_shim_batches_get(char *buf, const struct kernel_param *kp)
{
	u64 calls = 0, skbs = 0;
	int cpu;

	/* A sum of counters each CPU updates: a snapshot, exact once traffic stops. */
	for_each_possible_cpu(cpu) {
		calls += READ_ONCE(per_cpu(ixgbe_bulk_shim_batches, cpu).calls);
		skbs += READ_ONCE(per_cpu(ixgbe_bulk_shim_batches, cpu).skbs);
	}
	return sysfs_emit(buf, "calls=%llu skbs=%llu\n", calls, skbs);
}

static const struct kernel_param_ops ixgbe_bulk_shim_batches_ops = {
	.get = ixgbe_bulk_shim_batches_get,
};

module_param_cb(batches, &ixgbe_bulk_shim_batches_ops, NULL, 0444);
MODULE_PARM_DESC(batches, "Bulk frees made and skbs they freed (read only)");
