// SPDX-License-Identifier: GPL-2.0

//! A KUnit suite made of the tests of [`super::selftest`], registered with KUnit through
//! `#[kunit_tests]`, named by the `selftests!` list itself (`rust_slab_bulk`, `rust_qmempool`:
//! `slab_bulk` and `qmempool` both mount this file). 6.12, which has no such macro, uses
//! `kunit_6_12.rs`.

use super::selftest::selftests;

macro_rules! suite {
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

selftests!(suite);
