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
//! computed by the collector (the kernel formats no floating point). Before its first result line
//! a sample names its variants, sizes and runs ([`header`]); a run of a sample ends with
//! `rfl_bench: done bench=NAME`.
//!
//! # Module parameters
//!
//! The 6.12 `module!` macro has no parameters, and 7.x's (`rust/kernel/module_param.rs`) takes
//! integers and booleans only, not the lists (`bulk=1,8,16`) these samples take. The module
//! loader only needs a `struct kernel_param` in the module's `__param` section:
//! [`module_params!`] puts one there for each parameter, with the kernel's own `param_ops_uint`
//! and `param_ops_string`, so `insmod sample.ko objs=1000 bulk=1,8,16` works as for a C module.
//! The parameters have no sysfs file (permission 0): they are read once, at load time, by the
//! `Params::read` that [`module_params!`] also declares, which refuses a value out of its bounds.
//!
//! A sample's `bench::module_params!` block is the one statement of its parameters and their
//! bounds: `make bench` reads the same block (`scripts/bench-params.sh`) to refuse a bad
//! `*_ARGS` value before it builds or boots anything, in the words the module would use.

// Each sample uses a part of this file: what it leaves out is unused in that sample only.
#![allow(dead_code, unused_imports, unused_macros)]

use kernel::bindings;

/// `module!` for the project's samples: its author field is `author: "..."` in 6.12 and
/// `authors: ["..."]` from 6.15 on (`module_authors`).
macro_rules! sample_module {
    (type: $type:tt, name: $name:tt, description: $description:tt $(,)?) => {
        #[cfg(not(module_authors))]
        ::kernel::prelude::module! {
            type: $type,
            name: $name,
            author: "rfl-bulk developers",
            description: $description,
            license: "GPL",
        }
        #[cfg(module_authors)]
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

/// Prints the line that names a sample's variants, bulk sizes and repetitions, before its first
/// result line: `scripts/collect.py` takes the variants (and the order of the table's columns)
/// from it, and `scripts/test.sh` the result lines to expect (one per variant, size and run):
///
/// ```text
/// rfl_bench: variants bench=slab_bulk names=raw_single,raw_bulk bulk=1,16,64 runs=2
/// ```
///
/// `names` is the variants' [`variants!`] list (`Variant::NAMES`), `bulk` the list of sizes
/// the sample sweeps (for `rust_qmempool_bench`, its `outstanding`).
///
/// Inlined into `init`, after the Rust timed loops in the module, which keep their code and place
/// (out of line, even cold, it lands before them and moves them); `init`, which inlines the code
/// around some timed calls, and the C object linked after it do change with what it prints.
#[inline(always)]
pub(crate) fn header(bench: &str, names: &str, bulk: &List, runs: u32) {
    kernel::pr_info!(
        "rfl_bench: variants bench={} names={} bulk={} runs={}\n",
        bench,
        names,
        bulk.as_str(),
        runs
    );
}

/// Times every variant at each size `n` of `sizes`, `runs` times after one untimed warm-up, and
/// reports each timed run:
///
/// ```ignore
/// bench::sweep!("skb_free", p.bulk, p.objs, p.runs, |variant, n, rounds| {
///     measure(&mut round, &p, variant, n, rounds)
/// });
/// ```
///
/// The closure-like body is an expression giving the [`Run`] of `loops` rounds of `n` objects
/// the way `variant` says (a `Variant` of the sample's [`variants!`]), `loops` being `objs / n`
/// (at least 1); `?` in it leaves the caller. Each repetition starts one variant further on in
/// `Variant::ALL`, so that a variant's place in the sequence (after another one filled a cache)
/// cannot pass for its cost.
///
/// A macro, not a function taking a closure: it expands, inside `init`, to the loops a sample
/// would write, so that `init`, which inlines the code around some timed calls, and the code
/// placed after it (the C object) stay as they are.
macro_rules! sweep {
    (
        $bench:literal, $sizes:expr, $objs:expr, $runs:expr,
        |$variant:ident, $n:ident, $loops:ident| $measure:expr $(,)?
    ) => {
        for $n in $sizes.iter() {
            let $loops = ($objs as usize / $n).max(1);
            for run in 0..=$runs {
                for i in 0..Variant::ALL.len() {
                    let $variant = Variant::ALL[(i + run as usize) % Variant::ALL.len()];
                    let r = $measure;
                    // Run 0 warms the caches up and is not reported.
                    if run > 0 {
                        crate::bench::report($bench, $variant.name(), $n, run, &r);
                    }
                }
            }
        }
    };
}
pub(crate) use sweep;

/// Declares a sample's variants, once: the enum, every variant in the order a repetition
/// starts from, and the name in the result lines.
///
/// ```ignore
/// bench::variants! {
///     /// The ways to allocate and free.
///     enum Variant {
///         RawSingle => "raw_single",
///         #[cfg(slab_sheaf_api)]
///         SheafSingle => "sheaf_single",
///     }
/// }
/// ```
///
/// gives `enum Variant`, `Variant::ALL` (an array of every variant of this build, in the list's
/// order), `Variant::name()` and `Variant::NAMES` (the names joined by commas, for
/// [`header`]). A variant may carry one `#[cfg(...)]`, which leaves it out of all of them.
/// The sample's dispatch (`match variant { Variant::RawSingle => raw_single(...), ... }`) names
/// each variant's timed loop; it has no wildcard arm, so a variant added here and not there does
/// not compile.
macro_rules! variants {
    (
        $(#[$meta:meta])*
        enum $ty:ident {
            $($(#[cfg($cfg:meta)])? $variant:ident => $name:literal,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq)]
        enum $ty {
            $($(#[cfg($cfg)])? $variant,)*
        }

        impl $ty {
            /// How many variants this build has.
            const COUNT: usize = {
                let mut n = 0;
                $($(#[cfg($cfg)])? { n += 1; })*
                n
            };

            /// Every variant, in the order of the declaration.
            const ALL: [Self; Self::COUNT] = [$($(#[cfg($cfg)])? Self::$variant,)*];

            /// The name in the result lines.
            const fn name(self) -> &'static str {
                match self {
                    $($(#[cfg($cfg)])? Self::$variant => $name,)*
                }
            }

            /// The names of [`Self::ALL`], joined by commas, for [`header`] (made at compile
            /// time).
            const NAMES: &'static str = {
                const LEN: usize = {
                    let (mut len, mut i) = (0, 0);
                    while i < $ty::COUNT {
                        len += $ty::ALL[i].name().len() + if i > 0 { 1 } else { 0 };
                        i += 1;
                    }
                    len
                };
                const BYTES: [u8; LEN] = {
                    let mut out = [0u8; LEN];
                    let (mut at, mut i) = (0, 0);
                    while i < $ty::COUNT {
                        if i > 0 {
                            out[at] = b',';
                            at += 1;
                        }
                        let name = $ty::ALL[i].name().as_bytes();
                        let mut j = 0;
                        while j < name.len() {
                            out[at] = name[j];
                            at += 1;
                            j += 1;
                        }
                        i += 1;
                    }
                    out
                };
                match core::str::from_utf8(&BYTES) {
                    Ok(names) => names,
                    Err(_) => panic!("a variant's name is not UTF-8"),
                }
            };
        }
    };
}
pub(crate) use variants;

/// Prints the line that ends a sample's output.
pub(crate) fn done(bench: &str) {
    kernel::pr_info!("rfl_bench: done bench={}\n", bench);
}

/// Lets other tasks run between timed runs (no soft-lockup reports in long sweeps).
pub(crate) fn pause() {
    // SAFETY: Called from process context (module init), where scheduling is allowed.
    unsafe { bindings::schedule() };
}

/// The buffer of a list parameter, in bytes: a value takes at most `LIST_LEN - 1` characters
/// (`param_ops_string` fails `insmod` with `ENOSPC` for a longer one).
///
/// A plain literal: `scripts/bench-params.sh` reads it.
pub(crate) const LIST_LEN: usize = 256;

/// The most repetitions a sample's `runs` takes.
pub(crate) const MAX_RUNS: usize = 999;

/// The most objects (elements, skbs) a timed run of a sample handles: 2^30.
pub(crate) const MAX_OBJS: usize = 1_073_741_824;

/// The value of a list parameter, checked: comma-separated decimal integers, each in the
/// parameter's bounds.
pub(crate) struct List(&'static [u8]);

impl List {
    /// The list as the parameter gave it.
    pub(crate) fn as_str(&self) -> &'static str {
        // SAFETY: `read_list` makes a `List` only of what `list_ok` accepts: ASCII digits and
        // commas, valid UTF-8.
        unsafe { core::str::from_utf8_unchecked(self.0) }
    }

    /// The integers of the list, in its order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.split(|b| *b == b',').map(|part| {
            part.iter().fold(0usize, |n, d| {
                n.wrapping_mul(10).wrapping_add((d - b'0') as usize)
            })
        })
    }
}

/// Whether `s` is a list of comma-separated decimal integers, each from `lo` to `hi`.
///
/// A `const fn`, so that [`module_params!`] checks a list's default with it at compile time.
pub(crate) const fn list_ok(s: &[u8], lo: usize, hi: usize) -> bool {
    let mut i = 0;
    loop {
        // One entry: digits up to a comma or the end, at least one.
        let (start, mut n) = (i, 0usize);
        while i < s.len() && s[i] != b',' {
            if !s[i].is_ascii_digit() {
                return false;
            }
            n = match n.checked_mul(10) {
                Some(tens) if tens <= usize::MAX - 9 => tens + (s[i] - b'0') as usize,
                _ => return false,
            };
            i += 1;
        }
        if i == start || n < lo || n > hi {
            return false;
        }
        if i == s.len() {
            return true;
        }
        // The comma; another entry must follow.
        i += 1;
    }
}

/// Reads the value of list parameter `name` from its buffer, and refuses it (prints why and
/// returns `None`) unless it is a list of integers from `lo` to `hi`.
///
/// The refusal (after the module's name, which `pr_err!` puts first) is worded as
/// `scripts/bench-params.sh` words it when `make bench` refuses the value before booting.
pub(crate) fn read_list(
    name: &str,
    buf: &'static [core::ffi::c_char],
    lo: usize,
    hi: usize,
) -> Option<List> {
    let s = c_buf(buf);
    if list_ok(s, lo, hi) {
        return Some(List(s));
    }
    kernel::pr_err!(
        "{}={} refused: a comma-separated list of integers from {} to {} ({} characters at most)\n",
        name,
        core::str::from_utf8(s).unwrap_or("(not UTF-8)"),
        lo,
        hi,
        LIST_LEN - 1
    );
    None
}

/// Refuses the value `v` of integer parameter `name` (prints why and returns `None`) unless it
/// is from `lo` to `hi`; the words are also `scripts/bench-params.sh`'s.
pub(crate) fn read_uint(name: &str, v: core::ffi::c_uint, lo: usize, hi: usize) -> Option<u32> {
    if (lo..=hi).contains(&(v as usize)) {
        return Some(v);
    }
    kernel::pr_err!("{}={} refused: an integer from {} to {}\n", name, v, lo, hi);
    None
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
    ($vis:vis $var:ident, $name:expr, $default:expr) => {
        $vis static mut $var: core::ffi::c_uint = $default;

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
    ($vis:vis $var:ident, $name:expr, $len:expr, $default:expr) => {
        $vis static mut $var: [core::ffi::c_char; $len] = {
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
                maxlen: {
                    const LEN: usize = $len;
                    LEN as core::ffi::c_uint
                },
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

/// Declares a sample's module parameters, with their bounds, and `Params`, which reads them.
///
/// One parameter a line, `name: kind lo..=hi = default;` (doc comments above it allowed):
/// `kind` is `uint`, an integer from `lo` to `hi` (`param_ops_uint`; a `u32` field of
/// `Params`), or `list`, comma-separated integers each from `lo` to `hi` (`param_ops_string`
/// into [`LIST_LEN`] bytes; a [`List`] field); `lo` and `hi` are each an integer literal or the
/// name of a `const` set to one in the sample or in this file. A default out of its bounds does
/// not compile. `Params::read` reads every parameter, prints a refusal for each value out of its
/// bounds and then fails with `EINVAL`, so that the load fails and says why.
///
/// Why the block is the one source of the bounds, and in this shape: the bounds belong to the
/// module (`MAX_BULK` also sizes its arrays) and the block is the module's own declaration of
/// its parameters, without which the loader does not know them, so no parameter can exist
/// outside it and no bound can change without it. `make bench` must check values before it has
/// a toolchain, so it cannot ask the compiled module: `scripts/bench-params.sh` reads this block
/// as text. The matcher takes each bound as one token, a literal or a name, which is exactly
/// what the script resolves, and the script fails on a line of the block it cannot read; a
/// `const` a bound names must be a plain literal (no `1 << 30`) for the same reason.
macro_rules! module_params {
    ($($(#[$doc:meta])* $name:ident: $kind:ident $lo:tt..=$hi:tt = $default:expr;)*) => {
        /// What the module loader writes each parameter into (the `__param` entries).
        #[allow(non_upper_case_globals)]
        mod param_storage {
            #[allow(unused_imports)]
            use super::*;
            $(crate::bench::module_params!(@storage $kind $name $lo $hi $default);)*
        }

        /// The module's parameters, read and checked once, at load time.
        struct Params {
            $($(#[$doc])* $name: crate::bench::module_params!(@type $kind),)*
        }

        impl Params {
            /// Reads the parameters; prints a refusal for each value out of its bounds and
            /// fails with `EINVAL` if there was one.
            fn read() -> kernel::error::Result<Self> {
                $(let $name = crate::bench::module_params!(@read $kind $name $lo $hi);)*
                match ($($name,)*) {
                    ($(Some($name),)*) => Ok(Self { $($name,)* }),
                    _ => Err(kernel::error::code::EINVAL),
                }
            }
        }
    };
    (@storage uint $name:ident $lo:tt $hi:tt $default:expr) => {
        crate::bench::module_param_uint!(pub(crate) $name, stringify!($name), $default);
        const _: () = assert!(
            ($lo as u64) <= ($default) as u64 && ($default) as u64 <= ($hi as u64),
            concat!("the default of `", stringify!($name), "` is out of its bounds")
        );
    };
    (@storage list $name:ident $lo:tt $hi:tt $default:expr) => {
        const _: () = assert!(
            crate::bench::list_ok($default.as_bytes(), $lo as usize, $hi as usize)
                && $default.len() < crate::bench::LIST_LEN,
            concat!("the default of `", stringify!($name), "` is out of its bounds")
        );
        crate::bench::module_param_string!(
            pub(crate) $name,
            stringify!($name),
            crate::bench::LIST_LEN,
            $default
        );
    };
    (@type uint) => { u32 };
    (@type list) => { crate::bench::List };
    (@read uint $name:ident $lo:tt $hi:tt) => {{
        // SAFETY: The loader writes the parameters before `init` runs, and nothing writes them
        // after (they have no sysfs file).
        let v = unsafe { *core::ptr::addr_of!(param_storage::$name) };
        crate::bench::read_uint(stringify!($name), v, $lo as usize, $hi as usize)
    }};
    (@read list $name:ident $lo:tt $hi:tt) => {{
        // SAFETY: As for `uint`.
        let buf = unsafe { &*core::ptr::addr_of!(param_storage::$name) };
        crate::bench::read_list(stringify!($name), buf, $lo as usize, $hi as usize)
    }};
}
pub(crate) use module_params;
