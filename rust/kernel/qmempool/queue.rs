// SPDX-License-Identifier: GPL-2.0

//! What the pool's queues hold, named once for the pool, its objects and its hooks.

use crate::alf_queue::SpscQueue;
use core::mem::MaybeUninit;
use core::ptr::NonNull;

/// A free object of the pool's cache, as the queues hold it: uninitialised memory.
pub(super) type Raw<T> = NonNull<MaybeUninit<T>>;

/// The local queue of one CPU.
pub(super) type Local<T, const L: usize> = SpscQueue<Raw<T>, L>;
