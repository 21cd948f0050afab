// SPDX-License-Identifier: GPL-2.0

//! What every benchmark sample shares: the clock, the result line, and module parameters.
//!
//! Each sample mounts this file (`#[path = "bench_common.rs"] mod bench;`), like
//! prototype-kernel's `time_bench` helper that its benchmark modules link with.
//!
//! # The result line
//!
//! One line per timed run, parsed by the project's collector (`scripts/collect.py`):
//!
//! ```text
//! rfl_bench: bench=slab_bulk variant=raw_bulk bulk=16 run=3 objs=1048576 tsc=11534336 ns=4442112
//! ```
//!
//! `objs` is the number of objects (or queue elements) handled in the run, `tsc` the TSC cycles
//! and `ns` the `ktime_get()` nanoseconds it took; per-object figures, medians and spreads are
//! computed by the collector (the kernel formats no floating point). A run of a sample ends with
//! `rfl_bench: done bench=NAME`.
//!
//! # Module parameters
//!
//! The 6.12 `module!` macro has no parameters, and 7.x's (`rust/kernel/module_param.rs`) takes
//! integers and booleans only, not the lists (`bulk=1,8,16`) these samples take. The module
//! loader only needs a
//! `struct kernel_param` in the module's `__param` section: [`module_param_uint!`] and
//! [`module_param_string!`] put one there, with the kernel's own `param_ops_uint` and
//! `param_ops_string`, so `insmod sample.ko loops=1000 bulk=1,8,16` works as for a C module.
//! The parameters have no sysfs file (permission 0): they are read once, at load time.

// Each sample uses a part of this file: what it leaves out is unused in that sample only.
#![allow(dead_code, unused_imports, unused_macros)]

use kernel::bindings;

/// `module!` for the project's samples: its author field is `author: "..."` in 6.12 and
/// `authors: ["..."]` from 6.13 on.
macro_rules! sample_module {
    (type: $type:tt, name: $name:tt, description: $description:tt $(,)?) => {
        #[cfg(not(kernel_ge_7_0))]
        ::kernel::prelude::module! {
            type: $type,
            name: $name,
            author: "rfl-bulk developers",
            description: $description,
            license: "GPL",
        }
        #[cfg(kernel_ge_7_0)]
        ::kernel::prelude::module! {
            type: $type,
            name: $name,
            authors: ["rfl-bulk developers"],
            description: $description,
            license: "GPL",
        }
    };
}
pub(crate) use sample_module;

/// Reads the TSC, ordered after earlier loads (`lfence; rdtsc`), like `rdtsc_ordered()`.
#[inline(always)]
pub(crate) fn tsc() -> u64 {
    // SAFETY: `lfence` and `rdtsc` have no preconditions on x86_64 (UML runs as a host process,
    // where `rdtsc` is allowed).
    unsafe {
        core::arch::x86_64::_mm_lfence();
        core::arch::x86_64::_rdtsc()
    }
}

/// Reads the monotonic clock in nanoseconds.
#[inline(always)]
pub(crate) fn now_ns() -> u64 {
    // SAFETY: `ktime_get` may be called from any context once timekeeping is up.
    unsafe { bindings::ktime_get() as u64 }
}

/// The cost of one timed run.
pub(crate) struct Run {
    pub(crate) objs: u64,
    pub(crate) tsc: u64,
    pub(crate) ns: u64,
}

/// Times `body`, which handles `objs` objects in all.
#[inline(always)]
pub(crate) fn time(objs: u64, body: impl FnOnce()) -> Run {
    let (t0, n0) = (tsc(), now_ns());
    body();
    let (t1, n1) = (tsc(), now_ns());
    Run {
        objs,
        tsc: t1 - t0,
        ns: n1 - n0,
    }
}

/// Prints the result line of one run.
pub(crate) fn report(bench: &str, variant: &str, bulk: usize, run: u32, r: &Run) {
    kernel::pr_info!(
        "rfl_bench: bench={} variant={} bulk={} run={} objs={} tsc={} ns={}\n",
        bench,
        variant,
        bulk,
        run,
        r.objs,
        r.tsc,
        r.ns
    );
}

/// Prints the line that ends a sample's output.
pub(crate) fn done(bench: &str) {
    kernel::pr_info!("rfl_bench: done bench={}\n", bench);
}

/// Lets other tasks run between timed runs (no soft-lockup reports in long sweeps).
pub(crate) fn pause() {
    // SAFETY: Called from process context (module init), where scheduling is allowed.
    unsafe { bindings::schedule() };
}

/// Parses a comma-separated list of unsigned integers; an entry that does not parse is skipped.
pub(crate) fn parse_list(s: &[u8]) -> impl Iterator<Item = usize> + '_ {
    s.split(|b| *b == b',').filter_map(|part| {
        // Spaces around an entry are allowed (`trim_ascii` is newer than the kernel's MSRV).
        let start = part.iter().position(|b| !b.is_ascii_whitespace())?;
        let end = part.iter().rposition(|b| !b.is_ascii_whitespace())? + 1;
        let part = &part[start..end];
        if !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        part.iter().try_fold(0usize, |n, d| {
            n.checked_mul(10)?.checked_add((d - b'0') as usize)
        })
    })
}

/// Returns the bytes of a NUL-terminated buffer up to the NUL.
pub(crate) fn c_buf(buf: &[core::ffi::c_char]) -> &[u8] {
    // SAFETY: `c_char` and `u8` have the same layout.
    let bytes = unsafe { core::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), buf.len()) };
    let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
    &bytes[..end]
}

/// Declares `static mut $var: c_uint = $default` and a module parameter `$name` that sets it.
macro_rules! module_param_uint {
    ($var:ident, $name:literal, $default:expr) => {
        static mut $var: core::ffi::c_uint = $default;

        const _: () = {
            #[used]
            #[link_section = "__param"]
            static mut PARAM: kernel::bindings::kernel_param = kernel::bindings::kernel_param {
                name: concat!($name, "\0").as_ptr().cast(),
                mod_: core::ptr::null_mut(),
                ops: core::ptr::addr_of!(kernel::bindings::param_ops_uint),
                perm: 0,
                level: -1,
                flags: 0,
                __bindgen_anon_1: kernel::bindings::kernel_param__bindgen_ty_1 {
                    arg: core::ptr::addr_of_mut!($var).cast(),
                },
            };
        };
    };
}
pub(crate) use module_param_uint;

/// Declares a buffer `static mut $var: [c_char; $len]` holding `$default`, and a module
/// parameter `$name` that copies its value into it (`param_ops_string`, at most `$len - 1`
/// bytes; a longer value makes `insmod` fail with `ENOSPC`).
macro_rules! module_param_string {
    ($var:ident, $name:literal, $len:expr, $default:literal) => {
        static mut $var: [core::ffi::c_char; $len] = {
            let src = $default.as_bytes();
            let mut buf = [0; $len];
            let mut i = 0;
            while i < src.len() && i < $len - 1 {
                buf[i] = src[i] as core::ffi::c_char;
                i += 1;
            }
            buf
        };

        const _: () = {
            static mut STRING: kernel::bindings::kparam_string = kernel::bindings::kparam_string {
                maxlen: $len,
                string: core::ptr::addr_of_mut!($var).cast(),
            };

            #[used]
            #[link_section = "__param"]
            static mut PARAM: kernel::bindings::kernel_param = kernel::bindings::kernel_param {
                name: concat!($name, "\0").as_ptr().cast(),
                mod_: core::ptr::null_mut(),
                ops: core::ptr::addr_of!(kernel::bindings::param_ops_string),
                perm: 0,
                level: -1,
                flags: 0,
                __bindgen_anon_1: kernel::bindings::kernel_param__bindgen_ty_1 {
                    str_: core::ptr::addr_of!(STRING),
                },
            };
        };
    };
}
pub(crate) use module_param_string;
