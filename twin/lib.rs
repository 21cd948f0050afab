// SPDX-License-Identifier: GPL-2.0

//! Userspace twin of the kernel's `kernel` crate.
//!
//! It mounts the very same source files as the kernel build (`rust/kernel/slab_bulk/`,
//! `rust/kernel/qmempool/`, and `rust/alf_queue/` through its crate) and supplies userspace
//! stand-ins for exactly the `kernel` items they use: [`alloc`] (GFP flags, `KBox`), [`error`],
//! [`types::Opaque`], [`prelude`], a [`cpu`] module (the current CPU, bottom halves, softirq and
//! hard-IRQ context, per-CPU memory: what `qmempool` runs on), and a [`bindings`] module whose
//! slab functions are a real userspace slab allocator with the kernel's bulk semantics.
//! Doctests written as `use kernel::slab_bulk::...` or `use kernel::qmempool::...` therefore
//! run both as KUnit tests in the kernel and as `cargo test` doctests here.

pub mod alloc;
pub mod bindings;
pub mod cpu;
pub mod error;
pub mod prelude;
pub mod types;

#[path = "../rust/kernel/slab_bulk/mod.rs"]
pub mod slab_bulk;

#[path = "../rust/kernel/qmempool/mod.rs"]
pub mod qmempool;

pub use alf_queue;

#[cfg(doctest)]
pub mod compile_fail;

/// `kernel::pr_warn!`: to standard error here.
#[macro_export]
macro_rules! pr_warn {
    ($($arg:tt)*) => {
        ::std::eprint!($($arg)*)
    };
}

/// `kernel::kunit_assert!`: the assertion the shared tests use; `assert!` here.
#[macro_export]
macro_rules! kunit_assert {
    ($name:literal, $file:literal, $diff:expr, $cond:expr $(,)?) => {
        assert!(
            $cond,
            "{}: {}: assertion failed: {}",
            $name,
            $file,
            stringify!($cond)
        )
    };
}

/// The shared tests of `slab_bulk`, run by `cargo test` over the userspace slab.
#[cfg(test)]
mod slab_bulk_selftest {
    macro_rules! tests {
        ($suite:ident; $($(#[$attr:meta])* $name:ident),* $(,)?) => {
            $(
                $(#[$attr])*
                #[test]
                fn $name() {
                    crate::bindings::setup_for_test(stringify!($name));
                    crate::slab_bulk::selftest::$name();
                }
            )*
        };
    }

    crate::slab_bulk::selftest::selftests!(tests);
}

/// The shared tests of `qmempool`, run by `cargo test` over the userspace slab and CPUs.
#[cfg(test)]
mod qmempool_selftest {
    macro_rules! tests {
        ($suite:ident; $($(#[$attr:meta])* $name:ident),* $(,)?) => {
            $(
                $(#[$attr])*
                #[test]
                fn $name() {
                    // One machine: the tests share the twin's CPUs, so they run one at a time.
                    let _machine = crate::cpu::MACHINE.lock().unwrap_or_else(|e| e.into_inner());
                    crate::bindings::setup_for_test(stringify!($name));
                    crate::qmempool::selftest::$name();
                }
            )*
        };
    }

    crate::qmempool::selftest::selftests!(tests);
}
