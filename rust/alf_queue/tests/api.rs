// SPDX-License-Identifier: GPL-2.0

//! Single-threaded tests of every API path, against a `VecDeque` model where it helps, with
//! drop accounting and index wrap-around.
#![cfg(not(loom))]

use std::cell::RefCell;
use std::collections::VecDeque;
use std::mem::MaybeUninit;
use std::rc::Rc;

use alf_queue::{Batch, Consumer, Error, MpmcQueue, Producer, SpscQueue, StampQueue};

/// Drop accounting: every `Tracked` is created with a fresh id; dropping one records the id,
/// and dropping an id twice, or never, is an error found by `Ledger::check`.
#[derive(Default)]
struct Ledger {
    created: u64,
    dropped: Vec<u64>,
}

#[derive(Clone, Default)]
struct Books(Rc<RefCell<Ledger>>);

impl Books {
    fn make(&self) -> Tracked {
        let mut l = self.0.borrow_mut();
        let id = l.created;
        l.created += 1;
        Tracked {
            id,
            books: self.clone(),
        }
    }

    fn live(&self) -> u64 {
        let l = self.0.borrow();
        l.created - l.dropped.len() as u64
    }

    /// Asserts every item created so far was dropped exactly once.
    fn check_all_dropped(&self) {
        let l = self.0.borrow();
        let mut d = l.dropped.clone();
        d.sort_unstable();
        assert_eq!(d, (0..l.created).collect::<Vec<_>>(), "leak or double drop");
    }
}

#[derive(Debug)]
struct Tracked {
    id: u64,
    books: Books,
}

impl std::fmt::Debug for Books {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Books")
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        let mut l = self.books.0.borrow_mut();
        assert!(!l.dropped.contains(&self.id), "double drop of {}", self.id);
        l.dropped.push(self.id);
    }
}

fn fill<const K: usize>(b: &mut Batch<u32, K>, values: impl IntoIterator<Item = u32>) {
    for v in values {
        b.push(v).unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// Batch

#[test]
fn batch_basics() {
    let mut b = Batch::<u32, 4>::default();
    assert_eq!((b.len(), b.capacity(), b.remaining()), (0, 4, 4));
    assert!(b.is_empty() && !b.is_full());
    assert_eq!(b.pop(), None);
    fill(&mut b, 1..=4);
    assert!(b.is_full());
    assert_eq!(b.push(5), Err(5));
    assert_eq!(b.as_slice(), &[1, 2, 3, 4]);
    b.as_mut_slice()[0] = 10;
    assert_eq!(b.iter().copied().collect::<Vec<_>>(), [10, 2, 3, 4]);
    assert_eq!((&b).into_iter().count(), 4);
    assert_eq!(format!("{b:?}"), "[10, 2, 3, 4]");
    assert_eq!(b.pop(), Some(4));
    let d = b.drain();
    assert_eq!(d.len(), 3);
    assert_eq!(d.collect::<Vec<_>>(), [10, 2, 3]);
    assert!(b.is_empty());
    fill(&mut b, [7]);
    b.clear();
    assert!(b.is_empty());
}

#[test]
fn batch_fill_from() {
    let books = Books::default();
    {
        let mut b = Batch::<Tracked, 4>::new();
        b.push(books.make()).unwrap();
        let mut made = 0;
        {
            let mut source = std::iter::from_fn(|| {
                made += 1;
                Some(books.make())
            });
            assert_eq!(b.fill_from(&mut source), 3);
            assert!(b.is_full());
            assert_eq!(b.fill_from(&mut source), 0);
        }
        // Nothing was taken from the source that did not fit.
        assert_eq!(made, 3);
        assert_eq!(books.live(), 4);
        b.clear();
        // An iterator that panics half-way: what was appended stays owned by the batch.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut i = 0;
            b.fill_from(std::iter::from_fn(|| {
                i += 1;
                assert!(i < 3, "source failed");
                Some(books.make())
            }))
        }));
        assert!(r.is_err());
        assert_eq!(b.len(), 2);
        assert_eq!(books.live(), 2);
    }
    books.check_all_dropped();
}

#[test]
fn batch_zero_capacity() {
    let mut b = Batch::<u32, 0>::new();
    assert!(b.is_empty() && b.is_full());
    assert_eq!(b.push(1), Err(1));
    let q = MpmcQueue::<u32, 2>::new();
    assert_eq!(q.enqueue_bulk(&mut b), Ok(()));
    assert_eq!(q.dequeue_bulk(&mut b, 0), Ok(()));
    assert_eq!(q.dequeue_bulk(&mut b, 1), Err(Error::TooLarge));
}

#[test]
fn batch_drops() {
    let books = Books::default();
    {
        let mut b = Batch::<Tracked, 8>::new();
        for _ in 0..8 {
            b.push(books.make()).unwrap();
        }
        let extra = books.make();
        let back = b.push(extra).unwrap_err();
        drop(back);
        drop(b.pop());
        assert_eq!(books.live(), 7);
        // A partly consumed drain drops the rest.
        let mut d = b.drain();
        let first = d.next().unwrap();
        assert_eq!(first.id, 0);
        drop(d);
        assert_eq!(books.live(), 1);
        drop(first);
        for _ in 0..3 {
            b.push(books.make()).unwrap();
        }
        b.clear();
        assert_eq!(books.live(), 0);
        for _ in 0..2 {
            b.push(books.make()).unwrap();
        }
        // The batch drops the rest.
    }
    books.check_all_dropped();
}

#[test]
fn batch_raw_fill_and_take() {
    // "C" fills the array through the raw pointer, then takes part of it back.
    let mut b = Batch::<Box<u32>, 8>::new();
    b.push(Box::new(0)).unwrap();
    let p = b.as_mut_ptr();
    for i in 1..5 {
        // SAFETY: Entries 1..5 are inside the storage and unused.
        unsafe { p.add(i).write(Box::new(i as u32)) };
    }
    // SAFETY: Entries 0..5 now hold initialised items.
    unsafe { b.set_len(5) };
    assert_eq!(b.iter().map(|x| **x).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
    // A "C bulk free" takes the last two, then we shrink the length.
    // SAFETY: Entries 3 and 4 are initialised and we take them out exactly once.
    let taken: Vec<Box<u32>> = (3..5)
        .map(|i| unsafe { b.as_ptr().add(i).read() })
        .collect();
    // SAFETY: Entries 3..5 were moved out above.
    unsafe { b.set_len(3) };
    assert_eq!(taken.iter().map(|x| **x).collect::<Vec<_>>(), [3, 4]);
    // spare_capacity_mut is the same storage.
    let spare = b.spare_capacity_mut();
    assert_eq!(spare.len(), 5);
    spare[0].write(Box::new(9));
    // SAFETY: Entry 3 was just initialised.
    unsafe { b.set_len(4) };
    assert_eq!(*b.as_slice()[3], 9);
}

// ---------------------------------------------------------------------------------------------
// Single-item operations, full and empty

/// Defines the test `$name`: the queue of 8 `u32` slots that `$new` makes takes 8 items one at
/// a time and refuses a ninth, gives them back in order and then none, and its `Debug` output
/// contains `$debug`.
macro_rules! single_full_empty {
    ($name:ident, $new:expr, $debug:literal) => {
        #[test]
        fn $name() {
            let q = $new;
            assert_eq!((q.capacity(), q.len()), (8, 0));
            assert_eq!(q.dequeue(), None);
            for i in 0..8 {
                assert_eq!(q.enqueue(i), Ok(()));
                assert_eq!(q.len(), i as usize + 1);
            }
            assert_eq!(q.enqueue(8), Err(8));
            for i in 0..8 {
                assert_eq!(q.dequeue(), Some(i));
            }
            assert_eq!(q.dequeue(), None);
            assert!(q.is_empty());
            assert!(format!("{q:?}").contains($debug));
        }
    };
}

single_full_empty!(
    mpmc_single_full_empty,
    MpmcQueue::<u32, 8>::new(),
    "capacity: 8"
);
single_full_empty!(
    stamp_single_full_empty,
    StampQueue::<u32, 8>::default(),
    "StampQueue"
);

/// Against a `VecDeque` model: random enqueues and dequeues, from every start index around
/// the `u32` wrap, every fill level; what is left is dropped with the queue, once.
#[test]
fn stamp_model_wrap_and_drop() {
    let books = Books::default();
    let mut rng = fastrand::Rng::with_seed(44);
    for start in [0, u32::MAX - 9, u32::MAX, u32::MAX - 2, 1 << 31] {
        let q = StampQueue::<Tracked, 4>::with_start_index(start);
        let mut model = VecDeque::new();
        for _ in 0..200 {
            if rng.bool() {
                let it = books.make();
                let id = it.id;
                match q.enqueue(it) {
                    Ok(()) => model.push_back(id),
                    Err(back) => {
                        assert_eq!(model.len(), 4);
                        assert_eq!(back.id, id);
                    }
                }
            } else {
                assert_eq!(q.dequeue().map(|it| it.id), model.pop_front());
            }
            assert_eq!(q.len(), model.len());
        }
        assert_eq!(books.live(), model.len() as u64);
    }
    books.check_all_dropped();
}

#[test]
fn stamp_init_in_place() {
    let books = Books::default();
    let mut slot = Box::new(MaybeUninit::<StampQueue<Tracked, 256>>::uninit());
    // Whatever the memory held is overwritten: the stamps are written, the items' room not.
    // SAFETY: Any bytes are a valid `MaybeUninit`, and the box holds more than 1024 of them.
    unsafe { slot.as_mut_ptr().cast::<u8>().write_bytes(0xa5, 1024) };
    {
        let q = StampQueue::init_in_place_with_start_index(&mut slot, u32::MAX - 300);
        // Across the wrap of the indices: 500 in, 250 out.
        for _ in 0..250 {
            assert!(q.enqueue(books.make()).is_ok());
            assert!(q.enqueue(books.make()).is_ok());
            assert!(q.dequeue().is_some());
        }
        for _ in 250..256 {
            assert!(q.enqueue(books.make()).is_ok());
        }
        assert_eq!(q.len(), 256);
        assert!(q.enqueue(books.make()).is_err());
    }
    // SAFETY: Initialised by `init_in_place_with_start_index`.
    drop(unsafe { slot.assume_init() });
    books.check_all_dropped();
}

#[test]
fn spsc_handles_full_empty() {
    let mut q = SpscQueue::<u32, 4>::default();
    {
        let (mut tx, mut rx): (Producer<'_, u32, 4>, Consumer<'_, u32, 4>) = q.split();
        assert_eq!((tx.capacity(), rx.capacity()), (4, 4));
        assert!(tx.is_empty() && rx.is_empty());
        assert_eq!(rx.dequeue(), None);
        for i in 0..4 {
            tx.enqueue(i).unwrap();
        }
        assert_eq!(tx.enqueue(4), Err(4));
        assert_eq!((tx.len(), rx.len()), (4, 4));
        assert_eq!(rx.dequeue(), Some(0));
        assert!(format!("{tx:?} {rx:?}").contains("SpscQueue"));
    }
    assert_eq!(q.len(), 3);
    // SAFETY: Single-threaded: no concurrent consumer.
    assert_eq!(unsafe { q.dequeue() }, Some(1));
}

/// The handles keep their sides' positions in themselves, and have nothing to write back when
/// they go (they do not implement `Drop`, so forgetting one is dropping it): the queue is as
/// their last commit left it, for a new split and for the `&self` methods alike. A chunk that is
/// forgotten commits nothing.
#[test]
fn spsc_forgotten_handles_lose_nothing() {
    let books = Books::default();
    {
        let mut q = SpscQueue::<Tracked, 4>::with_start_index(u32::MAX - 1);
        let (mut tx, mut rx) = q.split();
        for _ in 0..3 {
            assert!(tx.enqueue(books.make()).is_ok());
        }
        assert_eq!(rx.dequeue().map(|t| t.id), Some(0));
        // A chunk forgotten before its commit moves nothing, on either side. (An item written
        // into the forgotten write chunk would leak with it, safely; none is, so that Miri's
        // leak check holds.)
        core::mem::forget(tx.write_chunk(2).unwrap());
        core::mem::forget(rx.read_chunk(2).unwrap());
        // The handles end here (their last use), leaving nothing to write back.
        assert_eq!(q.len(), 2);
        let (mut tx, mut rx) = q.split();
        assert!(tx.enqueue(books.make()).is_ok());
        assert_eq!(rx.dequeue().map(|t| t.id), Some(1));
        // SAFETY: This thread is the queue's only user.
        unsafe {
            assert!(q.enqueue(books.make()).is_ok());
            assert_eq!(q.dequeue().map(|t| t.id), Some(2));
            assert_eq!(q.dequeue().map(|t| t.id), Some(3));
        }
        let (mut tx, mut rx) = q.split();
        assert_eq!(rx.dequeue().map(|t| t.id), Some(4));
        assert!(tx.enqueue(books.make()).is_ok());
        assert_eq!(q.len(), 1);
    }
    books.check_all_dropped();
}

/// The handles read and store each side's copy of the other side's tail in the ring: the
/// `&self` methods after them find the copies the handles left, not the ones from before the
/// split, which a single side's count (without the multi side's test for an impossible count)
/// would take for items the consumer has taken and room the producer has filled.
#[test]
fn spsc_self_methods_after_handles_find_their_copies() {
    let mut q = SpscQueue::<u32, 4>::new();
    {
        let (mut tx, mut rx) = q.split();
        for i in 0..6 {
            tx.enqueue(i).unwrap();
            assert_eq!(rx.dequeue(), Some(i));
        }
    }
    // SAFETY: This thread is the queue's only user.
    unsafe {
        assert_eq!(q.dequeue(), None);
        for i in 0..4 {
            q.enqueue(i).unwrap();
        }
        assert_eq!(q.enqueue(4), Err(4));
    }
    assert_eq!(q.len(), 4);
}

/// `dequeue_trailing` keeps the copy of the producer's tail where `dequeue` keeps it, so the
/// two, the bursts, the chunks and the `&self` methods mix in any order, across the indices'
/// wrap, losing and repeating nothing.
#[test]
fn spsc_trailing_mixes_with_the_other_paths() {
    let books = Books::default();
    {
        let mut q = SpscQueue::<Tracked, 8>::with_start_index(u32::MAX - 5);
        let mut next = 0;
        for round in 0..6 {
            let (mut tx, mut rx) = q.split();
            assert_eq!(rx.dequeue_trailing().map(|t| t.id), None);
            for _ in 0..5 {
                assert!(tx.enqueue(books.make()).is_ok());
            }
            // Five items, more than `TRAIL` (four): no wait; then three, fewer: a wait.
            assert_eq!(rx.dequeue_trailing().map(|t| t.id), Some(next));
            assert_eq!(rx.dequeue().map(|t| t.id), Some(next + 1));
            let mut b = Batch::<Tracked, 8>::new();
            assert_eq!(rx.dequeue_burst(&mut b, 1), Ok(1));
            assert_eq!(b.pop().map(|t| t.id), Some(next + 2));
            assert_eq!(rx.dequeue_trailing().map(|t| t.id), Some(next + 3));
            if round % 2 == 0 {
                // The `&self` methods find the copy the handle left.
                // SAFETY: This thread is the queue's only user.
                assert_eq!(unsafe { q.dequeue() }.map(|t| t.id), Some(next + 4));
            } else {
                assert_eq!(rx.dequeue_trailing().map(|t| t.id), Some(next + 4));
                assert_eq!(rx.dequeue_trailing().map(|t| t.id), None);
            }
            next += 5;
            assert!(q.is_empty());
        }
    }
    books.check_all_dropped();
}

/// How far a trailing consumer keeps behind: 2 KiB of slots, at least one item, at most half
/// the ring.
#[test]
fn spsc_trail_distance() {
    assert_eq!(Consumer::<u64, 4096>::TRAIL, 256);
    assert_eq!(Consumer::<u8, 4096>::TRAIL, 2048);
    assert_eq!(Consumer::<u8, 1024>::TRAIL, 512);
    assert_eq!(Consumer::<[u8; 4096], 8>::TRAIL, 1);
    assert_eq!(Consumer::<(), 8>::TRAIL, 4);
    assert_eq!(Consumer::<u64, 2>::TRAIL, 1);
}

// ---------------------------------------------------------------------------------------------
// Bulk and burst semantics

#[test]
fn bulk_all_or_nothing() {
    let q = MpmcQueue::<u32, 8>::new();
    let mut b = Batch::<u32, 8>::new();
    fill(&mut b, 0..5);
    q.enqueue_bulk(&mut b).unwrap();
    assert!(b.is_empty());
    fill(&mut b, 5..9);
    // Room for 3, not 4: refused whole, batch untouched and in order.
    assert_eq!(q.enqueue_bulk(&mut b), Err(Error::Full));
    assert_eq!(b.as_slice(), &[5, 6, 7, 8]);
    assert_eq!(q.len(), 5);
    b.clear();
    // Exactly n out or nothing.
    assert_eq!(q.dequeue_bulk(&mut b, 6), Err(Error::Empty));
    assert!(b.is_empty());
    q.dequeue_bulk(&mut b, 5).unwrap();
    assert_eq!(b.as_slice(), &[0, 1, 2, 3, 4]);
    // Appends after what the batch holds.
    q.enqueue(9).unwrap();
    q.dequeue_bulk(&mut b, 1).unwrap();
    assert_eq!(b.as_slice(), &[0, 1, 2, 3, 4, 9]);
}

#[test]
fn burst_partial_keeps_order() {
    let q = MpmcQueue::<u32, 8>::new();
    let mut b = Batch::<u32, 8>::new();
    fill(&mut b, 0..6);
    q.enqueue_burst(&mut b).unwrap();
    fill(&mut b, 6..12);
    // Room for 2: the first two move, the other four stay in order at the front.
    assert_eq!(q.enqueue_burst(&mut b), Ok(2));
    assert_eq!(b.as_slice(), &[8, 9, 10, 11]);
    assert_eq!(q.enqueue_burst(&mut b), Ok(0));
    assert_eq!(b.len(), 4);
    let mut out = Batch::<u32, 16>::new();
    assert_eq!(q.dequeue_burst(&mut out, 3), Ok(3));
    assert_eq!(q.dequeue_burst(&mut out, 8), Ok(5));
    assert_eq!(q.dequeue_burst(&mut out, 8), Ok(0));
    assert_eq!(out.as_slice(), &[0, 1, 2, 3, 4, 5, 6, 7]);
}

#[test]
fn too_large_and_zero_length() {
    let q = MpmcQueue::<u32, 4>::new();
    let mut big = Batch::<u32, 8>::new();
    // Zero-length: Ok no-ops, even on a full or an empty queue.
    assert_eq!(q.enqueue_bulk(&mut big), Ok(()));
    assert_eq!(q.enqueue_burst(&mut big), Ok(0));
    assert_eq!(q.dequeue_bulk(&mut big, 0), Ok(()));
    assert_eq!(q.dequeue_burst(&mut big, 0), Ok(0));
    for i in 0..4 {
        q.enqueue(i).unwrap();
    }
    assert_eq!(q.enqueue_bulk(&mut big), Ok(()));
    // More than the capacity: an error, nothing moves.
    fill(&mut big, 0..5);
    assert_eq!(q.enqueue_bulk(&mut big), Err(Error::TooLarge));
    assert_eq!(q.enqueue_burst(&mut big), Err(Error::TooLarge));
    assert_eq!(big.len(), 5);
    big.clear();
    assert_eq!(q.dequeue_bulk(&mut big, 5), Err(Error::TooLarge));
    assert_eq!(q.dequeue_burst(&mut big, 5), Err(Error::TooLarge));
    // More than the batch's free space.
    let mut small = Batch::<u32, 4>::new();
    fill(&mut small, [9, 9]);
    assert_eq!(q.dequeue_bulk(&mut small, 3), Err(Error::TooLarge));
    assert_eq!(q.dequeue_burst(&mut small, 3), Err(Error::TooLarge));
    assert_eq!(q.len(), 4);
    assert_eq!(q.dequeue_bulk(&mut small, 2), Ok(()));
    assert_eq!(small.as_slice(), &[9, 9, 0, 1]);
    // The errors print.
    assert!(Error::TooLarge.to_string().contains("larger"));
    assert!(Error::Full.to_string().contains("free"));
    assert!(Error::Empty.to_string().contains("items"));
}

#[test]
fn spsc_all_paths() {
    let mut q = SpscQueue::<u32, 4>::new();
    let mut b = Batch::<u32, 8>::new();
    {
        let (mut tx, mut rx) = q.split();
        fill(&mut b, 0..3);
        tx.enqueue_bulk(&mut b).unwrap();
        fill(&mut b, 3..5);
        assert_eq!(tx.enqueue_bulk(&mut b), Err(Error::Full));
        assert_eq!(tx.enqueue_burst(&mut b), Ok(1));
        assert_eq!(b.as_slice(), &[4]);
        b.clear();
        fill(&mut b, 0..5);
        assert_eq!(tx.enqueue_bulk(&mut b), Err(Error::TooLarge));
        b.clear();
        assert_eq!(rx.dequeue_bulk(&mut b, 5), Err(Error::TooLarge));
        rx.dequeue_bulk(&mut b, 2).unwrap();
        assert_eq!(rx.dequeue_bulk(&mut b, 3), Err(Error::Empty));
        assert_eq!(rx.dequeue_burst(&mut b, 4), Ok(2));
        assert_eq!(rx.dequeue_burst(&mut b, 4), Ok(0));
        assert_eq!(b.as_slice(), &[0, 1, 2, 3]);
    }
    b.clear();
    fill(&mut b, 10..12);
    // SAFETY: Single-threaded: at most one producer-side and one consumer-side call at a time.
    unsafe {
        assert_eq!(q.enqueue_burst(&mut b), Ok(2));
        q.enqueue(12).unwrap();
        assert_eq!(q.dequeue_burst(&mut b, 8), Err(Error::TooLarge));
        assert_eq!(q.dequeue_burst(&mut b, 4), Ok(3));
        assert_eq!(q.dequeue_bulk(&mut b, 1), Err(Error::Empty));
    }
    assert_eq!(b.as_slice(), &[10, 11, 12]);
    assert!(format!("{q:?}").contains("len: 0"));
}

/// A single side's all-or-nothing requests find out that they are larger than the ring after
/// their reservation fails (`HeadTail::move_head` counts in `usize`), not before: a request of
/// more than `N` entries, even of more than `u32::MAX`, must still be refused whole, and leave
/// the queue as it was.
#[test]
fn spsc_all_or_nothing_larger_than_the_ring() {
    let mut q = SpscQueue::<u32, 4>::new();
    let (mut tx, mut rx) = q.split();
    tx.enqueue_bulk_from(&[1, 2]).unwrap();
    assert_eq!(tx.enqueue_bulk_from(&[0; 5]), Err(Error::TooLarge));
    assert_eq!(tx.enqueue_burst_from(&[0; 5]), Err(Error::TooLarge));
    assert_eq!(
        tx.enqueue_bulk_with(5, |_| unreachable!()),
        Err(Error::TooLarge)
    );
    assert_eq!(tx.write_chunk(5).err(), Some(Error::TooLarge));
    let mut out = [0; 5];
    assert_eq!(rx.dequeue_bulk_into(&mut out), Err(Error::TooLarge));
    assert_eq!(rx.dequeue_burst_into(&mut out), Err(Error::TooLarge));
    assert_eq!(
        rx.dequeue_bulk_with(5, |_| unreachable!()),
        Err(Error::TooLarge)
    );
    assert_eq!(rx.read_chunk(5).err(), Some(Error::TooLarge));
    assert_eq!(out, [0; 5]);
    assert_eq!(rx.dequeue(), Some(1));
    assert_eq!(rx.dequeue(), Some(2));
    assert_eq!(rx.dequeue(), None);

    // A length that a `u32` would wrap to 1 (zero-sized items take no memory).
    let mut q = SpscQueue::<(), 4>::new();
    let (mut tx, mut rx) = q.split();
    let mut huge = vec![(); u32::MAX as usize + 2];
    assert_eq!(tx.enqueue_bulk_from(&huge), Err(Error::TooLarge));
    assert_eq!(
        tx.enqueue_bulk_with(huge.len(), |_| ()),
        Err(Error::TooLarge)
    );
    tx.enqueue(()).unwrap();
    assert_eq!(rx.dequeue_bulk_into(&mut huge), Err(Error::TooLarge));
    assert_eq!(
        rx.dequeue_bulk_with(huge.len(), |_| ()),
        Err(Error::TooLarge)
    );
    assert_eq!(rx.dequeue(), Some(()));
    assert_eq!(rx.dequeue(), None);
}

// ---------------------------------------------------------------------------------------------
// Drop accounting

#[test]
fn queue_drops_leftovers_once() {
    let books = Books::default();
    for start in [0, u32::MAX - 2, u32::MAX - 6, 5] {
        {
            // The leftovers straddle the end of the slot array and, for some starts, the u32
            // wrap of the indices.
            let q = MpmcQueue::<Tracked, 8>::with_start_index(start);
            let mut b = Batch::<Tracked, 8>::new();
            for _ in 0..6 {
                b.push(books.make()).unwrap();
            }
            q.enqueue_bulk(&mut b).unwrap();
            q.dequeue_bulk(&mut b, 4).unwrap();
            b.clear();
            for _ in 0..6 {
                q.enqueue(books.make()).unwrap();
            }
            let back = q.enqueue(books.make()).unwrap_err();
            drop(back);
            drop(q.dequeue());
            assert_eq!(books.live(), 7);
        }
        assert_eq!(books.live(), 0);
        {
            let mut q = SpscQueue::<Tracked, 4>::with_start_index(start);
            let (mut tx, mut rx) = q.split();
            for _ in 0..3 {
                tx.enqueue(books.make()).unwrap();
            }
            drop(rx.dequeue());
        }
        assert_eq!(books.live(), 0);
    }
    books.check_all_dropped();
}

/// An item whose drop panics, for the unwinding paths.
struct PanicsOnDrop(#[expect(dead_code)] Tracked);

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        panic!("PanicsOnDrop");
    }
}

/// A queue dropped while it holds a panicking item drops every other item, in both runs of a
/// ring that wraps (a drop that stops at the end of the slot array leaks the run after it).
#[test]
fn queue_drop_unwinds_through_both_runs() {
    let mut leaks = Vec::new();
    for panicking in 0..6 {
        let books = Books::default();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // Six items from index 5 of an 8-slot ring: slots 5, 6, 7, then 0, 1, 2.
            let q = MpmcQueue::<Result<Tracked, PanicsOnDrop>, 8>::with_start_index(5);
            for i in 0..6 {
                let item = if i == panicking {
                    Err(PanicsOnDrop(books.make()))
                } else {
                    Ok(books.make())
                };
                assert!(q.enqueue(item).is_ok());
            }
        }));
        assert!(result.is_err());
        // `PanicsOnDrop`'s own field is dropped while unwinding out of its `drop`.
        if books.live() != 0 {
            leaks.push((panicking, books.live()));
        } else {
            books.check_all_dropped();
        }
    }
    assert!(
        leaks.is_empty(),
        "(panicking item, items leaked): {leaks:?}"
    );
}

#[test]
fn error_paths_keep_ownership() {
    let books = Books::default();
    {
        let q = MpmcQueue::<Tracked, 4>::new();
        let mut b = Batch::<Tracked, 8>::new();
        for _ in 0..5 {
            b.push(books.make()).unwrap();
        }
        assert_eq!(q.enqueue_bulk(&mut b).unwrap_err(), Error::TooLarge);
        assert_eq!(b.len(), 5);
        drop(b.pop());
        q.enqueue(books.make()).unwrap();
        assert_eq!(q.enqueue_bulk(&mut b).unwrap_err(), Error::Full);
        assert_eq!(q.enqueue_burst(&mut b), Ok(3));
        assert_eq!(b.len(), 1);
        assert_eq!(b.as_slice()[0].id, 3);
        assert_eq!(books.live(), 5);
    }
    books.check_all_dropped();
}

// ---------------------------------------------------------------------------------------------
// In-place initialisation

#[test]
fn init_in_place_large() {
    // 2^16 slots of 8 bytes: 512 KiB, built on the heap without touching the slots.
    let mut slot: Box<MaybeUninit<MpmcQueue<u64, 65536>>> = Box::new_uninit();
    let q = MpmcQueue::init_in_place(&mut slot);
    let mut b = Batch::<u64, 64>::new();
    for round in 0..1000u64 {
        for i in 0..64 {
            b.push(round * 64 + i).unwrap();
        }
        q.enqueue_bulk(&mut b).unwrap();
    }
    assert_eq!(q.len(), 1000 * 64);
    q.dequeue_bulk(&mut b, 64).unwrap();
    assert_eq!(b.as_slice()[63], 63);
    // SAFETY: `init_in_place` initialised it.
    let q = unsafe { slot.assume_init() };
    assert_eq!(q.len(), 999 * 64);

    let mut slot: Box<MaybeUninit<SpscQueue<u64, 1024>>> = Box::new_uninit();
    let q = SpscQueue::init_in_place_with_start_index(&mut slot, u32::MAX);
    let (mut tx, mut rx) = q.split();
    tx.enqueue(1).unwrap();
    tx.enqueue(2).unwrap();
    assert_eq!(rx.dequeue(), Some(1));
    let mut slot = MaybeUninit::<SpscQueue<u8, 2>>::uninit();
    assert!(SpscQueue::init_in_place(&mut slot).is_empty());
    let mut slot = MaybeUninit::<MpmcQueue<u8, 2>>::uninit();
    assert!(MpmcQueue::init_in_place_with_start_index(&mut slot, 7).is_empty());
}

#[test]
fn const_construction() {
    static Q: MpmcQueue<u32, 16> = MpmcQueue::new();
    Q.enqueue(5).unwrap();
    assert_eq!(Q.dequeue(), Some(5));
    static S: SpscQueue<u32, 2> = SpscQueue::with_start_index(3);
    assert_eq!(S.capacity(), 2);
    const B: Batch<u8, 3> = Batch::new();
    assert!(B.is_empty());
}

#[test]
fn zero_sized_and_large_items() {
    let q = MpmcQueue::<(), 4>::new();
    let mut b = Batch::<(), 8>::new();
    for _ in 0..4 {
        b.push(()).unwrap();
    }
    q.enqueue_bulk(&mut b).unwrap();
    assert_eq!(q.enqueue(()), Err(()));
    assert_eq!(q.dequeue_burst(&mut b, 4), Ok(4));
    assert_eq!(q.len(), 0);

    let q = MpmcQueue::<[u64; 9], 4>::with_start_index(u32::MAX - 1);
    let mut b = Batch::<[u64; 9], 4>::new();
    for round in 0..5u64 {
        for i in 0..3 {
            b.push([round * 10 + i; 9]).unwrap();
        }
        q.enqueue_bulk(&mut b).unwrap();
        q.dequeue_bulk(&mut b, 3).unwrap();
        assert_eq!(
            b.drain().map(|a| a[8]).collect::<Vec<_>>(),
            [round * 10, round * 10 + 1, round * 10 + 2]
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Model-based random test, across the u32 wrap

/// Drives a queue and a `VecDeque` model with random single, bulk and burst operations and
/// compares every result.
fn model_run<Q: TestQueue>(q: &Q, seed: u64, ops: usize) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let n = q.cap();
    let mut model = VecDeque::new();
    let mut next = 0u32;
    let mut b = Batch::<u32, 40>::new();
    for _ in 0..ops {
        match rng.u8(0..8) {
            0 => {
                let r = q.enq(next);
                if model.len() < n {
                    assert_eq!(r, Ok(()));
                    model.push_back(next);
                    next += 1;
                } else {
                    assert_eq!(r, Err(next));
                }
            }
            1 => assert_eq!(q.deq(), model.pop_front()),
            2 | 3 => {
                b.clear();
                let k = rng.usize(0..=b.capacity());
                let first = next;
                for _ in 0..k {
                    b.push(next).unwrap();
                    next += 1;
                }
                let burst = rng.bool();
                let r = q.enq_batch(&mut b, burst);
                let free = n - model.len();
                let moved = match (k > n, burst, k <= free) {
                    (true, _, _) => {
                        assert_eq!(r, Err(Error::TooLarge));
                        0
                    }
                    (false, false, true) => {
                        assert_eq!(r, Ok(k));
                        k
                    }
                    (false, false, false) => {
                        assert_eq!(r, Err(Error::Full));
                        0
                    }
                    (false, true, _) => {
                        assert_eq!(r, Ok(k.min(free)));
                        k.min(free)
                    }
                };
                model.extend(first..first + moved as u32);
                let rest: Vec<u32> = (first + moved as u32..first + k as u32).collect();
                assert_eq!(b.as_slice(), &rest[..]);
                // The rest is handed back: forget about it.
                next = first + moved as u32;
            }
            6 => {
                let k = rng.usize(0..=40);
                let items: Vec<u32> = (next..next + k as u32).collect();
                let burst = rng.bool();
                let r = q.enq_slice(&items, burst);
                assert_eq!(r, expected(k, n, n - model.len(), burst, Error::Full));
                let moved = r.unwrap_or(0);
                model.extend(next..next + moved as u32);
                next += moved as u32;
            }
            7 => {
                let k = rng.usize(0..=40);
                // Two guard entries after the `k` asked for: nothing may be written there.
                let mut out = vec![u32::MAX; k + 2];
                let burst = rng.bool();
                let r = q.deq_slice(&mut out[..k], burst);
                assert_eq!(r, expected(k, n, model.len(), burst, Error::Empty));
                let got = r.unwrap_or(0);
                let want: Vec<u32> = model.drain(..got).collect();
                assert_eq!(&out[..got], &want[..]);
                assert!(out[got..].iter().all(|&v| v == u32::MAX));
            }
            _ => {
                b.clear();
                let pre = rng.usize(0..=4);
                for _ in 0..pre {
                    b.push(u32::MAX).unwrap();
                }
                let k = rng.usize(0..=b.capacity());
                let burst = rng.bool();
                let r = q.deq_batch(&mut b, k, burst);
                let got = b.len() - pre;
                if k > n || k > b.capacity() - pre {
                    assert_eq!(r, Err(Error::TooLarge));
                } else if !burst && k > model.len() {
                    assert_eq!(r, Err(Error::Empty));
                } else {
                    assert_eq!(r, Ok(k.min(model.len())));
                }
                let expected: Vec<u32> = model.drain(..got).collect();
                assert_eq!(&b.as_slice()[pre..], &expected[..]);
            }
        }
        assert_eq!(q.length(), model.len());
    }
}

trait TestQueue {
    fn at(start: u32) -> Self;
    fn cap(&self) -> usize;
    fn length(&self) -> usize;
    fn enq(&self, v: u32) -> Result<(), u32>;
    fn deq(&self) -> Option<u32>;
    fn enq_batch(&self, b: &mut Batch<u32, 40>, burst: bool) -> Result<usize, Error>;
    fn deq_batch(&self, b: &mut Batch<u32, 40>, n: usize, burst: bool) -> Result<usize, Error>;
    fn enq_slice(&self, items: &[u32], burst: bool) -> Result<usize, Error>;
    fn deq_slice(&self, out: &mut [u32], burst: bool) -> Result<usize, Error>;
}

/// Implements [`TestQueue`] for `$Queue`; `unsafe` for SPSC, whose methods are: the model test
/// is single-threaded, which is all the single-producer single-consumer contract asks.
macro_rules! test_queue {
    ($Queue:ident $(, $unsafe:tt)?) => {
        impl<const N: usize> TestQueue for $Queue<u32, N> {
            fn at(start: u32) -> Self {
                Self::with_start_index(start)
            }
            fn cap(&self) -> usize {
                self.capacity()
            }
            fn length(&self) -> usize {
                self.len()
            }
            fn enq(&self, v: u32) -> Result<(), u32> {
                // SAFETY: Single-threaded.
                $($unsafe)? { self.enqueue(v) }
            }
            fn deq(&self) -> Option<u32> {
                // SAFETY: Single-threaded.
                $($unsafe)? { self.dequeue() }
            }
            fn enq_batch(&self, b: &mut Batch<u32, 40>, burst: bool) -> Result<usize, Error> {
                let k = b.len();
                // SAFETY: Single-threaded.
                $($unsafe)? {
                    if burst {
                        self.enqueue_burst(b)
                    } else {
                        self.enqueue_bulk(b).map(|()| k)
                    }
                }
            }
            fn deq_batch(
                &self,
                b: &mut Batch<u32, 40>,
                n: usize,
                burst: bool,
            ) -> Result<usize, Error> {
                // SAFETY: Single-threaded.
                $($unsafe)? {
                    if burst {
                        self.dequeue_burst(b, n)
                    } else {
                        self.dequeue_bulk(b, n).map(|()| n)
                    }
                }
            }
            fn enq_slice(&self, items: &[u32], burst: bool) -> Result<usize, Error> {
                // SAFETY: Single-threaded.
                $($unsafe)? {
                    if burst {
                        self.enqueue_burst_from(items)
                    } else {
                        self.enqueue_bulk_from(items).map(|()| items.len())
                    }
                }
            }
            fn deq_slice(&self, out: &mut [u32], burst: bool) -> Result<usize, Error> {
                // SAFETY: Single-threaded.
                $($unsafe)? {
                    if burst {
                        self.dequeue_burst_into(out)
                    } else {
                        self.dequeue_bulk_into(out).map(|()| out.len())
                    }
                }
            }
        }
    };
}

test_queue!(MpmcQueue);
test_queue!(SpscQueue, unsafe);

/// Operations per model run: small enough for an unoptimised `cargo test`.
const MODEL_OPS: usize = if cfg!(miri) { 200 } else { 20_000 };

/// The start indices of the model runs: at 0, across the `u32` wrap at once and after a few
/// or many cycles of a ring, and half way.
const MODEL_STARTS: [u32; 5] = [0, u32::MAX, u32::MAX - 17, u32::MAX - 1000, 1 << 31];

/// What a request for `k` entries of a ring of `cap` slots that has `avail` of them (free
/// slots or items) must give: `TooLarge` above `cap`; a burst as many as there are; a bulk
/// all `k`, or `short` (`Full` or `Empty`) when fewer are there.
fn expected(k: usize, cap: usize, avail: usize, burst: bool, short: Error) -> Result<usize, Error> {
    if k > cap {
        Err(Error::TooLarge)
    } else if burst {
        Ok(k.min(avail))
    } else if k <= avail {
        Ok(k)
    } else {
        Err(short)
    }
}

/// Runs a model test from every start of [`MODEL_STARTS`]: `big` (on a ring of 32 slots) with
/// [`MODEL_OPS`] operations and seeds from `seeds.0`, `small` (on a smaller ring) with a quarter
/// of them and seeds from `seeds.1`.
fn model_starts(seeds: (u64, u64), big: fn(u32, u64, usize), small: fn(u32, u64, usize)) {
    for (i, start) in MODEL_STARTS.into_iter().enumerate() {
        big(start, seeds.0 + i as u64, MODEL_OPS);
        small(start, seeds.1 + i as u64, MODEL_OPS / 4);
    }
}

/// [`model_run`] on a new `Q` whose indices start at `start`.
fn model_queue<Q: TestQueue>(start: u32, seed: u64, ops: usize) {
    model_run(&Q::at(start), seed, ops);
}

#[test]
fn model_mpmc_wraps() {
    model_starts(
        (0, 100),
        model_queue::<MpmcQueue<u32, 32>>,
        model_queue::<MpmcQueue<u32, 2>>,
    );
}

#[test]
fn model_spsc_wraps() {
    model_starts(
        (200, 300),
        model_queue::<SpscQueue<u32, 32>>,
        model_queue::<SpscQueue<u32, 4>>,
    );
}

/// A model test of the handles of an SPSC queue of `N` slots whose indices start at `start`:
/// `ops` calls of `step`, each with the handles, the model of what the queue holds (oldest
/// first), the value of the next item to make, and a random request of `k` entries
/// (`0 ..= N + 2`), bulk or `burst`; after each, the queue holds as many items as the model.
fn model_spsc_handles<const N: usize>(
    start: u32,
    seed: u64,
    ops: usize,
    mut step: impl FnMut(
        &mut fastrand::Rng,
        &mut Producer<'_, u32, N>,
        &mut Consumer<'_, u32, N>,
        &mut VecDeque<u32>,
        &mut u32,
        usize,
        bool,
    ),
) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut q = SpscQueue::<u32, N>::with_start_index(start);
    let (mut tx, mut rx) = q.split();
    let mut model = VecDeque::new();
    let mut next = 0u32;
    for _ in 0..ops {
        let k = rng.usize(0..=N + 2);
        let burst = rng.bool();
        step(&mut rng, &mut tx, &mut rx, &mut model, &mut next, k, burst);
        assert_eq!(rx.len(), model.len());
    }
}

/// The in-place forms of the SPSC handles (`*_with`, the trailing burst among them) against a
/// `VecDeque` model, mixed with the single-item ones, across the end of the slot array and the
/// u32 wrap of the indices.
fn model_in_place<const N: usize>(start: u32, seed: u64, ops: usize) {
    model_spsc_handles::<N>(
        start,
        seed,
        ops,
        |rng, tx, rx, model, next, k, burst| match rng.u8(0..5) {
            0 => assert_eq!(rx.dequeue(), model.pop_front()),
            1 | 2 => {
                let free = N - model.len();
                let mut calls = Vec::new();
                let make = |i: usize| {
                    calls.push(i);
                    *next + i as u32
                };
                let r = if burst {
                    tx.enqueue_burst_with(k, make)
                } else {
                    tx.enqueue_bulk_with(k, make).map(|()| k)
                };
                let want = expected(k, N, free, burst, Error::Full);
                assert_eq!(r, want);
                let moved = want.unwrap_or(0);
                assert_eq!(calls, (0..moved).collect::<Vec<_>>(), "make(i) calls");
                model.extend(*next..*next + moved as u32);
                *next += moved as u32;
            }
            _ => {
                let mut got = Vec::new();
                let take = |x| got.push(x);
                // A trailing burst is a burst on one thread: its wait only delays it.
                let r = if burst && rng.u8(0..2) == 0 {
                    rx.dequeue_burst_trailing_with(k, take)
                } else if burst {
                    rx.dequeue_burst_with(k, take)
                } else {
                    rx.dequeue_bulk_with(k, take).map(|()| k)
                };
                let want = expected(k, N, model.len(), burst, Error::Empty);
                assert_eq!(r, want);
                let moved = want.unwrap_or(0);
                assert_eq!(got, model.drain(..moved).collect::<Vec<_>>());
            }
        },
    );
}

#[test]
fn model_spsc_in_place_wraps() {
    model_starts((400, 500), model_in_place::<32>, model_in_place::<4>);
}

/// A panic in the caller's `make` or `take` leaves the queue consistent: the items made (or
/// taken) before it are committed, none is lost or dropped twice, and both sides go on.
#[test]
fn in_place_panics_commit_what_was_done() {
    for start in [0, 6, u32::MAX - 1] {
        for fail_at in 0..4 {
            let books = Books::default();
            {
                // An 8-slot ring from index 6: a bulk of 4 runs through slots 6, 7, 0, 1.
                let mut q = SpscQueue::<Tracked, 8>::with_start_index(start);
                let (mut tx, mut rx) = q.split();
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    tx.enqueue_bulk_with(4, |i| {
                        assert!(i != fail_at, "make panics");
                        books.make()
                    })
                }));
                assert!(r.is_err());
                assert_eq!(rx.len(), fail_at);
                assert_eq!(books.live(), fail_at as u64);
                // The producer side goes on where the committed items end.
                assert_eq!(tx.enqueue_bulk_with(2, |_| books.make()), Ok(()));
                let mut ids = Vec::new();
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let take = |t: Tracked| {
                        ids.push(t.id);
                        assert!(ids.len() != fail_at + 1, "take panics");
                    };
                    // The trailing burst takes its items the same way.
                    if fail_at % 2 == 0 {
                        rx.dequeue_burst_with(8, take)
                    } else {
                        rx.dequeue_burst_trailing_with(8, take)
                    }
                }));
                // `take` panics on its (fail_at + 1)-th of the fail_at + 2 items: the items it
                // was given are gone (dropped by `take`), the last is still queued.
                assert!(r.is_err());
                let (total, taken) = (fail_at + 2, fail_at + 1);
                assert_eq!(ids, (0..taken as u64).collect::<Vec<_>>());
                assert_eq!(rx.len(), total - taken);
                assert_eq!(books.live(), (total - taken) as u64);
                let mut rest = Vec::new();
                assert_eq!(
                    rx.dequeue_burst_with(8, |t| rest.push(t.id)),
                    Ok(total - taken)
                );
                assert_eq!(rest, (taken as u64..total as u64).collect::<Vec<_>>());
                // Leave items behind for the queue's own drop.
                assert_eq!(tx.enqueue_burst_with(3, |_| books.make()), Ok(3));
            }
            books.check_all_dropped();
        }
    }
}

/// Starts the indices just below `u32::MAX` and runs many full cycles with mixed bulk sizes,
/// so the wrap is crossed at every offset within the ring.
#[test]
fn wrap_full_cycles_mixed_bulk() {
    const N: usize = 16;
    for offset in 0..2 * N as u32 {
        let q = MpmcQueue::<u32, N>::with_start_index(u32::MAX - offset);
        let mut tx = Batch::<u32, N>::new();
        let mut rx = Batch::<u32, N>::new();
        let (mut next_in, mut next_out) = (0u32, 0u32);
        let sizes = [1usize, 3, 16, 5, 7, 2, 16, 4];
        for cycle in 0..8 {
            // Fill completely.
            let mut i = cycle;
            while q.len() < N {
                let k = sizes[i % sizes.len()].min(N - q.len());
                i += 1;
                for _ in 0..k {
                    tx.push(next_in).unwrap();
                    next_in += 1;
                }
                q.enqueue_bulk(&mut tx).unwrap();
            }
            assert_eq!(q.enqueue(0), Err(0));
            // Empty completely.
            while !q.is_empty() {
                let k = sizes[i % sizes.len()].min(q.len());
                i += 1;
                q.dequeue_bulk(&mut rx, k).unwrap();
                for v in rx.drain() {
                    assert_eq!(v, next_out);
                    next_out += 1;
                }
            }
            assert_eq!(q.dequeue(), None);
        }
        assert_eq!(next_out, 8 * N as u32);
    }
}

// ---------------------------------------------------------------------------------------------
// Marker traits

#[test]
fn send_sync() {
    fn send<T: Send>() {}
    fn sync<T: Sync>() {}
    send::<MpmcQueue<Box<u8>, 4>>();
    sync::<MpmcQueue<Box<u8>, 4>>();
    send::<SpscQueue<Box<u8>, 4>>();
    sync::<SpscQueue<Box<u8>, 4>>();
    send::<Producer<'static, Box<u8>, 4>>();
    send::<Consumer<'static, Box<u8>, 4>>();
    send::<Batch<Box<u8>, 4>>();
    sync::<Batch<Box<u8>, 4>>();

    // Producer and Consumer are not Sync: this resolves only if the blanket impl for
    // `Sync` types does not apply (the trick of `static_assertions::assert_not_impl_any`).
    trait AmbiguousIfSync<A> {
        fn check() {}
    }
    impl<T: ?Sized> AmbiguousIfSync<()> for T {}
    impl<T: ?Sized + Sync> AmbiguousIfSync<u8> for T {}
    <Producer<'static, Box<u8>, 4> as AmbiguousIfSync<_>>::check();
    <Consumer<'static, Box<u8>, 4> as AmbiguousIfSync<_>>::check();
}

/// The chunk forms of the SPSC handles against a `VecDeque`, across the `u32` wrap of the
/// indices and the end of the slot array: reservations of every size, full and partial
/// commits, `fill_from_iter` with short and long iterators, bulk and burst.
fn model_chunks<const N: usize>(start: u32, seed: u64, ops: usize) {
    model_spsc_handles::<N>(start, seed, ops, |rng, tx, rx, model, next, k, burst| {
        if rng.bool() {
            let free = N - model.len();
            let r = if burst {
                tx.write_chunk_burst(k)
            } else {
                tx.write_chunk(k)
            };
            let want = expected(k, N, free, burst, Error::Full);
            assert_eq!(r.as_ref().map(|w| w.len()).map_err(|e| *e), want);
            let (Ok(mut w), Ok(reserved)) = (r, want) else {
                return;
            };
            let how = rng.u8(0..3);
            let committed = if how == 0 {
                let mut calls = Vec::new();
                w.fill_with(|i| {
                    calls.push(i);
                    *next + i as u32
                });
                assert_eq!(calls, (0..reserved).collect::<Vec<_>>(), "make(i) calls");
                reserved
            } else if how == 1 {
                // Some of the slots, or all, or none, written through the slices.
                let c = rng.usize(0..=reserved);
                let (first, second) = w.as_mut_slices();
                assert_eq!(first.len() + second.len(), reserved);
                for (i, slot) in first
                    .iter_mut()
                    .chain(second.iter_mut())
                    .take(c)
                    .enumerate()
                {
                    slot.write(*next + i as u32);
                }
                // SAFETY: The first `c` slots were written just above.
                unsafe { w.commit(c) };
                c
            } else {
                // An iterator that may run out before the chunk does.
                let supply = rng.usize(0..=N);
                let c = w.fill_from_iter(*next..*next + supply as u32);
                assert_eq!(c, supply.min(reserved));
                c
            };
            model.extend(*next..*next + committed as u32);
            *next += committed as u32;
        } else {
            let r = if burst {
                rx.read_chunk_burst(k)
            } else {
                rx.read_chunk(k)
            };
            let want = expected(k, N, model.len(), burst, Error::Empty);
            assert_eq!(r.as_ref().map(|c| c.len()).map_err(|e| *e), want);
            if let Ok(chunk) = r {
                let (first, second) = chunk.as_slices();
                let items: Vec<u32> = first.iter().chain(second).copied().collect();
                let expect: Vec<u32> = model.iter().take(k).copied().collect();
                assert_eq!(items, expect);
            }
            model.drain(..want.unwrap_or(0));
        }
        assert_eq!(rx.dequeue_burst_with(0, |_| ()), Ok(0));
    });
}

#[test]
fn model_spsc_chunks_wrap() {
    model_starts((600, 700), model_chunks::<32>, model_chunks::<4>);
}

/// A panic in `fill_with` or `fill_from_iter` publishes nothing of the chunk; the queue goes
/// on as before.
#[test]
fn chunk_fill_panics_publish_nothing() {
    let mut q = SpscQueue::<u32, 8>::with_start_index(6);
    let (mut tx, mut rx) = q.split();
    assert_eq!(tx.write_chunk(2).unwrap().fill_from_iter([1, 2]), 2);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        tx.write_chunk(4).unwrap().fill_with(|i| {
            assert!(i != 2, "make panics");
            10 + i as u32
        })
    }));
    assert!(r.is_err());
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let items = (0..4).map(|i| {
            assert!(i != 3, "next panics");
            20 + i
        });
        tx.write_chunk(4).unwrap().fill_from_iter(items)
    }));
    assert!(r.is_err());
    assert_eq!(rx.len(), 2);
    tx.write_chunk(6).unwrap().fill_with(|i| 30 + i as u32);
    let chunk = rx.read_chunk(8).unwrap();
    let (first, second) = chunk.as_slices();
    assert_eq!(
        first.iter().chain(second).copied().collect::<Vec<_>>(),
        [1, 2, 30, 31, 32, 33, 34, 35]
    );
}

/// A read chunk drops its items once each when it is dropped, in both runs of a wrapping
/// reservation, also when one of them panics in its `drop`; the slots go back to the producer
/// either way, and a write chunk dropped without a commit publishes nothing.
#[test]
fn chunks_drop_items_once() {
    for panicking in [None, Some(0), Some(2), Some(4)] {
        let books = Books::default();
        {
            // Five items from index 6 of an 8-slot ring: slots 6, 7, then 0, 1, 2.
            let mut q = SpscQueue::<Result<Tracked, PanicsOnDrop>, 8>::with_start_index(6);
            let (mut tx, mut rx) = q.split();
            drop(tx.write_chunk(3).unwrap());
            assert!(rx.is_empty());
            let w = tx.write_chunk(5).unwrap();
            let made = w.fill_from_iter((0..5).map(|i| {
                if Some(i) == panicking {
                    Err(PanicsOnDrop(books.make()))
                } else {
                    Ok(books.make())
                }
            }));
            assert_eq!(made, 5);
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let chunk = rx.read_chunk(5).unwrap();
                let (first, second) = chunk.as_slices();
                assert_eq!((first.len(), second.len()), (2, 3));
            }));
            assert_eq!(r.is_err(), panicking.is_some());
            assert_eq!(books.live(), 0);
            assert!(rx.is_empty());
            // Both sides go on: the eight slots are free again.
            assert_eq!(
                tx.write_chunk(8)
                    .unwrap()
                    .fill_from_iter((0..8).map(|_| Ok(books.make()))),
                8
            );
            assert_eq!(rx.read_chunk(3).unwrap().len(), 3);
            // Five left for the queue's own drop.
        }
        books.check_all_dropped();
    }
}
