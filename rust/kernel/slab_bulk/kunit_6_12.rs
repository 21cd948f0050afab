// SPDX-License-Identifier: GPL-2.0

//! [`kunit_suite!`] on 6.12: registers the tests of a `selftests!` list (`slab_bulk`'s and
//! `qmempool`'s `selftest.rs`) with KUnit by hand, as a suite of the list's name. Used as in
//! `kunit.rs`, the 7.x form.
//!
//! 6.12 has no Rust macro for KUnit suites (`kunit_unsafe_test_suite!` arrived in 6.15); this
//! does what it does: a `kunit_case` array and a `kunit_suite` in writable statics, and a
//! pointer to the suite in the `.kunit_test_suites` section, which KUnit runs at boot.

use crate::bindings::{kunit, kunit_case};
use crate::ffi::c_char;
use core::ffi::CStr;

/// A `kunit_case` running `run`, named `name`.
pub(crate) const fn case(name: &'static CStr, run: unsafe extern "C" fn(*mut kunit)) -> kunit_case {
    kunit_case {
        run_case: Some(run),
        name: name.as_ptr().cast(),
        // SAFETY: All other fields of `kunit_case` are integers, pointers and optional function
        // pointers, for which all-zero is valid (and is what C's designated initialisers give).
        ..unsafe { core::mem::zeroed() }
    }
}

/// The all-zero `kunit_case` that ends the array.
// SAFETY: As in `case`.
pub(crate) const END: kunit_case = unsafe { core::mem::zeroed() };

/// The suite name as KUnit stores it: a NUL-padded `char[256]`.
pub(crate) const fn suite_name(name: &str) -> [c_char; 256] {
    let mut out = [0; 256];
    let bytes = name.as_bytes();
    let mut i = 0;
    while i < bytes.len() && i < 255 {
        out[i] = bytes[i] as c_char;
        i += 1;
    }
    out
}

/// The suite `$suite` of the tests `$name`, each calling `selftest::$name()` of the module that
/// invokes `selftests!`.
macro_rules! kunit_suite {
    ($suite:ident; $($(#[$attr:meta])* $name:ident),* $(,)?) => {
        use $crate::bindings::{kunit, kunit_case};
        use $crate::slab_bulk::kunit::{case, suite_name, END};
        use core::ffi::CStr;
        use core::ptr::addr_of_mut;

        $(
            $(#[$attr])*
            extern "C" fn $name(_test: *mut kunit) {
                super::selftest::$name();
            }
        )*

        const CASES: usize = [$($(#[$attr])* stringify!($name),)*].len() + 1;

        static mut TEST_CASES: [kunit_case; CASES] = {
            let mut cases = [END; CASES];
            let mut i = 0;
            $(
                $(#[$attr])*
                {
                    let name = concat!(stringify!($name), "\0").as_bytes();
                    cases[i] = match CStr::from_bytes_with_nul(name) {
                        Ok(name) => case(name, $name),
                        Err(_) => END,
                    };
                    i += 1;
                }
            )*
            let _ = i;
            cases
        };

        static mut SUITE: $crate::bindings::kunit_suite = $crate::bindings::kunit_suite {
            name: suite_name(stringify!($suite)),
            test_cases: addr_of_mut!(TEST_CASES).cast::<kunit_case>(),
            // SAFETY: As in `case`: all-zero is valid for the remaining fields.
            ..unsafe { core::mem::zeroed() }
        };

        /// The entry that makes KUnit find the suite.
        #[used]
        #[link_section = ".kunit_test_suites"]
        static mut SUITE_ENTRY: *mut $crate::bindings::kunit_suite = addr_of_mut!(SUITE);
    };
}
pub(crate) use kunit_suite;
