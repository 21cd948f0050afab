// SPDX-License-Identifier: GPL-2.0

//! The KUnit suite `rust_qmempool`: the tests of [`super::selftest`], registered with KUnit
//! through `#[kunit_tests]`. (6.12, which has no such macro, uses `kunit_6_12.rs`.)

use super::selftest::selftests;

macro_rules! suite {
    ($($(#[$attr:meta])* $name:ident),* $(,)?) => {
        #[macros::kunit_tests(rust_qmempool)]
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
