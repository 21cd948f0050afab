// SPDX-License-Identifier: GPL-2.0

//! The kernel configuration the twin emulates, as the kernel build passes it to rustc
//! (`include/generated/rustc_cfg`): the userspace slab keeps object counts
//! (`CONFIG_SLUB_DEBUG`), injects faults through `fail_nth` (`CONFIG_FAULT_INJECTION`), and has
//! several CPUs (`CONFIG_SMP`: per-CPU data goes through `this_cpu_ptr()`).

fn main() {
    for cfg in [
        "CONFIG_SLUB_DEBUG",
        "CONFIG_FAULT_INJECTION",
        "CONFIG_FAILSLAB",
        "CONFIG_FAIL_PAGE_ALLOC",
        "CONFIG_SMP",
    ] {
        println!("cargo:rustc-cfg={cfg}");
    }
}
