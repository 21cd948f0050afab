// SPDX-License-Identifier: GPL-2.0

//! Copies of a benchmark's timed loops, each at its own address.
//!
//! Mounted by the benchmark samples whose loops exist in several copies
//! (`#[path = "bench_placement.rs"] mod placement;`) and by the userspace harness in
//! `rust/alf_queue/micro`. It uses nothing from the kernel crate.
//!
//! A timed loop's function is generic over `P`, its copy, starts with [`placed`]`::<P>()` and is
//! `#[inline(never)]`, so that each of the [`CODE_PLACEMENTS`] copies is a function of its own;
//! [`in_copy`] calls the copy a repetition uses. The benchmark runs its repetitions on the
//! copies in turn and takes its medians over all of them, so that no single address decides a
//! figure.

/// How many copies of each timed loop there are: the `P` of the variants' functions is below
/// this, and [`in_copy`] dispatches to every one of them.
pub(crate) const CODE_PLACEMENTS: usize = 4;

/// Calls copy `p` of a variant's function (`f::<p>`), for `p` below [`CODE_PLACEMENTS`].
macro_rules! in_copy {
    ($p:expr, $f:ident($($arg:expr),* $(,)?)) => {
        match $p {
            0 => $f::<0>($($arg),*),
            1 => $f::<1>($($arg),*),
            2 => $f::<2>($($arg),*),
            _ => $f::<3>($($arg),*),
        }
    };
}
pub(crate) use in_copy;

/// Starts copy `P` of a timed loop with `16 * P` bytes of NOPs, run once per call.
///
/// A loop's cost on the benchmark's CPU can move with where its code sits: the same machine code
/// can cost markedly more at one address than at another (the placement table of the results
/// says how much, per variant). Every copy of a function is a function of its own, at
/// another address, and this padding also moves the loops of copy `P` by `16 * P` bytes within
/// their 64-byte lines. The alf_queue benchmark's C loops get the same treatment
/// (`bench_in_copy()` in `rust_alf_queue_ref.h`).
#[inline(always)]
pub(crate) fn placed<const P: usize>() {
    // One literal template per copy: `P` is known when each copy is compiled, so only its arm
    // is left. (An `asm!` `const` operand would need rustc 1.82; 6.12 supports 1.78.)
    #[cfg(target_arch = "x86_64")]
    match P {
        // SAFETY: Each statement is 16, 32 or 48 one-byte NOPs: it touches no register,
        // memory, stack or flag, and falls through.
        1 => unsafe {
            core::arch::asm!(".skip 16, 0x90", options(nomem, nostack, preserves_flags))
        },
        // SAFETY: As above.
        2 => unsafe {
            core::arch::asm!(".skip 32, 0x90", options(nomem, nostack, preserves_flags))
        },
        // SAFETY: As above.
        3 => unsafe {
            core::arch::asm!(".skip 48, 0x90", options(nomem, nostack, preserves_flags))
        },
        _ => {}
    }
}

/// Calls `f` from a frame `16 * S` bytes deeper in the stack than `deeper::<0>` does, so that
/// the frames of everything `f` calls start at another offset in their page.
///
/// Code called from a timed loop keeps state on the stack (SLUB's bulk calls: the detached
/// freelist, spilled registers) while it loads and stores data whose addresses each boot
/// decides, and on x86 a load that matches an earlier store in bits 0-11 of its address waits
/// on it (4K aliasing): one stack offset can collide with a boot's addresses where the next
/// does not. A benchmark that runs its repetitions at several depths, as it runs them in
/// several copies of its code, takes the offset out of its medians.
// Not every sample that mounts this file runs at several depths.
#[allow(dead_code)]
#[inline(never)]
pub(crate) fn deeper<const S: usize, R>(f: impl FnOnce() -> R) -> R {
    let pad = core::mem::MaybeUninit::<[[u8; 16]; S]>::uninit();
    // The pad stays in the frame: the compiler cannot see what `black_box` does with it.
    core::hint::black_box(&pad);
    f()
}

/// Calls `f` from `levels` frames of this function deeper in the stack than `descend(0, f)`
/// does.
///
/// One level is one frame of this function, whose size is the compiler's choice (32 bytes on
/// x86_64 with frame pointers); a caller that needs to know where `f` runs takes the address of
/// a local in `f`. With [`at_depth!`] around it, whose depths are 16 bytes apart, it reaches
/// every 16-byte offset of a page as long as a level is at most 64 bytes.
// Not every sample that mounts this file sweeps the stack.
#[allow(dead_code)]
#[inline(never)]
pub(crate) fn descend<R>(levels: usize, f: &mut dyn FnMut() -> R) -> R {
    if levels == 0 {
        return f();
    }
    let r = descend(levels - 1, f);
    // Not a tail call: this frame stays below its caller's while `f` runs.
    core::hint::black_box(r)
}

/// Evaluates `$body` from the frame of `deeper::<s>` (see [`deeper`]), for `s` below 4.
#[allow(unused_macros)]
macro_rules! at_depth {
    ($s:expr, $body:expr) => {
        match $s {
            0 => deeper::<0, _>(|| $body),
            1 => deeper::<1, _>(|| $body),
            2 => deeper::<2, _>(|| $body),
            _ => deeper::<3, _>(|| $body),
        }
    };
}
#[allow(unused_imports)]
pub(crate) use at_depth;
