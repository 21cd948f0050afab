// SPDX-License-Identifier: GPL-2.0

//! Stand-in for `kernel::error`.

use crate::alloc::AllocError;
use core::fmt;

/// A kernel error code (a negative errno in the kernel).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Error(i32);

/// The error codes the shared code uses.
pub mod code {
    use super::Error;

    /// Invalid argument.
    pub const EINVAL: Error = Error(-22);
    /// Out of memory.
    pub const ENOMEM: Error = Error(-12);
    /// Device or resource busy.
    pub const EBUSY: Error = Error(-16);
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            code::EINVAL => f.write_str("EINVAL"),
            code::ENOMEM => f.write_str("ENOMEM"),
            code::EBUSY => f.write_str("EBUSY"),
            Error(e) => write!(f, "Error({e})"),
        }
    }
}

impl From<AllocError> for Error {
    fn from(_: AllocError) -> Self {
        code::ENOMEM
    }
}

/// The kernel's `Result`.
pub type Result<T = (), E = Error> = core::result::Result<T, E>;
