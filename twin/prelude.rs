// SPDX-License-Identifier: GPL-2.0

//! Stand-in for `kernel::prelude`, the part the shared code and doctests use.

pub use crate::alloc::{flags::*, Box, KBox, KVec};
pub use crate::error::{code::*, Error, Result};
