// SPDX-License-Identifier: GPL-2.0
//! Builds the C reference of the kernel bench (all but its ptr_ring part)
//! with gcc -O2, the kernel primitives mapped to GCC builtins.
use std::process::Command;
fn main() {
    let out = std::env::var("OUT_DIR").unwrap();
    let src = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../samples/rust/rust_alf_queue_bench_ptr_ring.c"
    );
    let text = std::fs::read_to_string(src).unwrap();
    // From the macros that make the copies of the timed loops to the ptr_ring part, which
    // needs the kernel's headers.
    let start = text.find("/* A timed loop: @loops round trips").unwrap();
    let end = text
        .find("/* Returns an empty ring of @size entries")
        .unwrap();
    let prelude = r#"
#include <stdlib.h>
#include <stdbool.h>
typedef unsigned int u32;
#define ____cacheline_aligned __attribute__((aligned(64)))
#define READ_ONCE(x) (*(volatile typeof(x) *)&(x))
#define smp_load_acquire(p) __atomic_load_n(p, __ATOMIC_ACQUIRE)
#define smp_store_release(p, v) __atomic_store_n(p, v, __ATOMIC_RELEASE)
#define cmpxchg(p, o, n) __sync_val_compare_and_swap(p, o, n)
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define cpu_relax() __builtin_ia32_pause()
#define fallthrough __attribute__((fallthrough))
#define min(a, b) ((a) < (b) ? (a) : (b))
#define __always_inline inline __attribute__((always_inline))
#define GFP_KERNEL 0
#define kzalloc(sz, f) aligned_alloc(64, ((sz) + 63) & ~63UL)
#define kfree free
#define struct_size(q, f, n) (sizeof(*(q)) + (n) * sizeof(void *))
#define is_power_of_2(n) ((n) && !((n) & ((n) - 1)))
"#;
    let c = format!("{prelude}\n{}", &text[start..end]);
    let cfile = format!("{out}/cq.c");
    std::fs::write(&cfile, c).unwrap();
    let st = Command::new("gcc")
        .args([
            "-O2",
            "-fno-strict-aliasing",
            "-c",
            &cfile,
            "-o",
            &format!("{out}/cq.o"),
        ])
        .status()
        .unwrap();
    assert!(st.success());
    let st = Command::new("ar")
        .args(["rcs", &format!("{out}/libcq.a"), &format!("{out}/cq.o")])
        .status()
        .unwrap();
    assert!(st.success());
    println!("cargo:rustc-link-search=native={out}");
    println!("cargo:rustc-link-lib=static=cq");
    println!("cargo:rerun-if-changed={src}");
}
