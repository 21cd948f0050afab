// SPDX-License-Identifier: GPL-2.0

//! [`kunit_suite!`]: registers the tests of a `selftests!` list (`slab_bulk`'s and `qmempool`'s
//! `selftest.rs`) with KUnit through `#[kunit_tests]`, as a suite of the list's name. 6.12,
//! which has no such macro, uses `kunit_6_12.rs`.
//!
//! Used as `use crate::slab_bulk::kunit::kunit_suite; super::selftest::selftests!(kunit_suite);`
//! in a module of its own beside `selftest`, whose tests it calls.

/// The suite `$suite` of the tests `$name`, each calling `selftest::$name()` of the module that
/// invokes `selftests!`.
macro_rules! kunit_suite {
    ($suite:ident; $($(#[$attr:meta])* $name:ident),* $(,)?) => {
        #[macros::kunit_tests($suite)]
        mod tests {
            $(
                $(#[$attr])*
                #[test]
                fn $name() {
                    super::super::selftest::$name();
                }
            )*
        }
    };
}
pub(crate) use kunit_suite;
