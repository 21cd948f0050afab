// SPDX-License-Identifier: GPL-2.0
//! Builds `cq.c`, the C reference queue of the kernel bench (the header
//! `samples/rust/rust_alf_queue_ref.h` with the kernel primitives mapped to GCC
//! builtins), with gcc -O2 as the kernel builds C.
use std::process::Command;
fn main() {
    let out = std::env::var("OUT_DIR").unwrap();
    let dir = env!("CARGO_MANIFEST_DIR");
    let src = format!("{dir}/cq.c");
    let header = format!("{dir}/../../../samples/rust/rust_alf_queue_ref.h");
    let st = Command::new("gcc")
        .args([
            "-O2",
            "-fno-strict-aliasing",
            "-c",
            &src,
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
    println!("cargo:rerun-if-changed={header}");
}
