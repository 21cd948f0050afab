// SPDX-License-Identifier: GPL-2.0

#include <linux/bottom_half.h>
#include <linux/cpumask.h>
#include <linux/hardirq.h>
#include <linux/interrupt.h>
#include <linux/irqflags.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/workqueue.h>

/*
 * The pool's context guard (kernel::qmempool::BhGuard), one call each way.
 * Enter: -1 with IRQs disabled (no guard: the pool uses the slab directly), 0
 * while serving a softirq (bottom halves are disabled already), 1 once
 * local_bh_disable() disabled them.
 */
__rust_helper int rust_helper_qmempool_bh_enter(void)
{
	if (irqs_disabled())
		return -1;
	if (in_serving_softirq())
		return 0;
	local_bh_disable();
	return 1;
}

/*
 * Exit, for a guard that disabled bottom halves: local_bh_enable(), and true.
 * A guard may end inside a section that disabled IRQs after it began, where
 * local_bh_enable() must not run softirqs: then false, and the caller goes on
 * with rust_helper_qmempool_bh_exit_irqs_off() from built-in code.  With
 * CONFIG_RUST_INLINE_HELPERS a helper is inlined into the module that calls
 * it, and what that one calls (irq_stat on UML, raise_softirq_irqoff()) is not
 * exported to modules.
 */
__rust_helper bool rust_helper_qmempool_bh_exit(void)
{
	if (unlikely(irqs_disabled()))
		return false;
	local_bh_enable();
	return true;
}

/*
 * _local_bh_enable() re-enables bottom halves without running softirqs.  What
 * was raised meanwhile is then handed to ksoftirqd, as raise_softirq_irqoff()
 * does outside interrupt context, rather than left for the next interrupt's
 * exit, which on an idle CPU may be far off.  IRQs disabled.
 */
__rust_helper void rust_helper_qmempool_bh_exit_irqs_off(void)
{
	u32 pending;

	_local_bh_enable();
	pending = local_softirq_pending();
	if (pending)
		raise_softirq_irqoff(__ffs(pending));
}

/*
 * The module whose code @code is in, NULL for built-in code.  A pool's
 * callbacks are the code of the crate that names its type; a pool that such
 * a module leaked is unregistered when the module goes, before its code is
 * freed (kernel::qmempool, hooks.rs).  The pointer is only compared.
 */
__rust_helper struct module *rust_helper_qmempool_code_module(const void *code)
{
	struct module *mod;

	preempt_disable();
	rcu_read_lock();
	mod = __module_text_address((unsigned long)code);
	rcu_read_unlock();
	preempt_enable();
	return mod;
}

/* for_each_possible_cpu(): the possible CPU after @cpu (-1: the first), or -1. */
__rust_helper int rust_helper_next_possible_cpu(int cpu)
{
	unsigned int next = cpumask_next(cpu, cpu_possible_mask);

	return next < nr_cpu_ids ? next : -1;
}

__rust_helper void *rust_helper_per_cpu_ptr(void __percpu *ptr, unsigned int cpu)
{
	return per_cpu_ptr(ptr, cpu);
}

__rust_helper void *rust_helper_this_cpu_ptr(void __percpu *ptr)
{
	return this_cpu_ptr(ptr);
}

#ifdef CONFIG_RUST_QMEMPOOL_KUNIT_TEST
/* The KUnit suite runs steps on a given CPU and with IRQs disabled. */
__rust_helper long rust_helper_work_on_cpu(int cpu, long (*fn)(void *), void *arg)
{
	return work_on_cpu(cpu, fn, arg);
}

__rust_helper void rust_helper_local_irq_disable(void)
{
	local_irq_disable();
}

__rust_helper void rust_helper_local_irq_enable(void)
{
	local_irq_enable();
}

/*
 * A guard dropped with IRQs disabled: a softirq with nothing to do (no
 * tasklet is scheduled by the suite), raised while the guard holds bottom
 * halves disabled, and whether what is pending then will run without waiting
 * for an interrupt (ksoftirqd is awake).  IRQs disabled.
 */
__rust_helper void rust_helper_qmempool_test_raise_softirq(void)
{
	raise_softirq_irqoff(TASKLET_SOFTIRQ);
}

__rust_helper bool rust_helper_qmempool_test_softirqs_handed_over(void)
{
	struct task_struct *tsk = this_cpu_ksoftirqd();

	return !local_softirq_pending() || (tsk && task_is_running(tsk));
}
#endif
