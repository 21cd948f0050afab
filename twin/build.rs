// SPDX-License-Identifier: GPL-2.0

//! The kernel configuration the twin emulates, as the kernel build passes it to rustc
//! (`include/generated/rustc_cfg`): the userspace slab keeps object counts
//! (`CONFIG_SLUB_DEBUG`) and injects faults through `fail_nth` (`CONFIG_FAULT_INJECTION`).

fn main() {
    for cfg in [
        "CONFIG_SLUB_DEBUG",
        "CONFIG_FAULT_INJECTION",
        "CONFIG_FAILSLAB",
        "CONFIG_FAIL_PAGE_ALLOC",
    ] {
        println!("cargo:rustc-cfg={cfg}");
    }
}
