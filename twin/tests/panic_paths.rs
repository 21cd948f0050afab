// SPDX-License-Identifier: GPL-2.0

//! Panic paths of `kernel::slab_bulk`, which only userspace reaches: the kernel builds with
//! `panic=abort`, the twin and every userspace user of the same sources unwind.
//!
//! A `T::drop` or an init closure that panics must leave the cache consistent: every `T` that
//! was made is dropped exactly once, and every object goes back to its cache exactly once. The
//! userspace slab panics on a double free itself; the tests also count drops per value and the
//! cache's live objects. Under Miri (`scripts/miri.sh`) a second drop of a `Box` field is a use
//! of freed memory.

use core::mem::MaybeUninit;
use kernel::alloc::flags::GFP_KERNEL;
use kernel::slab_bulk::{Cache, CacheFlags, FreeBatch, ObjArray, OwnedCache};
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The objects of `cache` allocated right now (the twin's count, not a `slab_bulk` API).
fn in_use<T>(cache: &Cache<T>) -> usize {
    // SAFETY: `cache` is a live cache of the userspace slab.
    unsafe { kernel::bindings::kmem_cache_objects_in_use(cache.as_raw()) as usize }
}

/// Counts the drops of every value and panics in the drop of the values it is told to.
#[derive(Default)]
struct Ledger {
    drops: RefCell<Vec<usize>>,
    /// The value whose next drop panics.
    panic_on: Cell<Option<usize>>,
}

impl Ledger {
    fn new(values: usize) -> Self {
        Self {
            drops: RefCell::new(vec![0; values]),
            panic_on: Cell::new(None),
        }
    }

    fn value(&self, id: usize) -> Tracked<'_> {
        Tracked {
            id,
            ledger: self,
            _heap: Box::new(id),
        }
    }

    fn drops(&self) -> Vec<usize> {
        self.drops.borrow().clone()
    }
}

/// A value with a heap field, so that a second drop is also a double free of the `Box`.
struct Tracked<'a> {
    id: usize,
    ledger: &'a Ledger,
    _heap: Box<usize>,
}

impl Drop for Tracked<'_> {
    fn drop(&mut self) {
        self.ledger.drops.borrow_mut()[self.id] += 1;
        if self.ledger.panic_on.get() == Some(self.id) {
            self.ledger.panic_on.set(None);
            panic!("drop of value {} panics", self.id);
        }
    }
}

/// Runs `f`, which must panic.
fn panics(f: impl FnOnce()) {
    assert!(
        catch_unwind(AssertUnwindSafe(f)).is_err(),
        "expected a panic"
    );
}

fn cache<'a>(name: &core::ffi::CStr) -> OwnedCache<Tracked<'a>> {
    OwnedCache::new(name, CacheFlags::NO_MERGE).expect("cache")
}

/// `ObjArray::free` with a panicking `T::drop`: the batch is empty afterwards, every value was
/// dropped once (the others' drops still run), every object freed once.
#[test]
fn batch_free_drop_panics() {
    let ledger = Ledger::new(8);
    let cache = cache(c"panic_free");
    let mut batch = ObjArray::<'_, Tracked<'_>, 8>::new(&cache);
    batch
        .alloc_with(8, GFP_KERNEL, |i| ledger.value(i))
        .expect("alloc");
    ledger.panic_on.set(Some(2));
    panics(|| batch.free());
    assert!(batch.is_empty());
    assert_eq!(ledger.drops(), vec![1; 8]);
    assert_eq!(in_use(&cache), 0);
    drop(batch);
    assert_eq!(ledger.drops(), vec![1; 8]);
    assert_eq!(in_use(&cache), 0);
}

/// The same through the batch's own drop, the path a `?` or an unwinding caller takes.
#[test]
fn batch_drop_panics() {
    let ledger = Ledger::new(8);
    let cache = cache(c"panic_batch_drop");
    let mut batch = ObjArray::<'_, Tracked<'_>, 8>::new(&cache);
    batch
        .alloc_with(8, GFP_KERNEL, |i| ledger.value(i))
        .expect("alloc");
    ledger.panic_on.set(Some(7));
    panics(move || drop(batch));
    assert_eq!(ledger.drops(), vec![1; 8]);
    assert_eq!(in_use(&cache), 0);
}

/// `FreeBatch::add` that fills the batch, and `FreeBatch::flush`, with a panicking `T::drop`.
#[test]
fn free_batch_add_and_flush_panic() {
    let ledger = Ledger::new(12);
    let cache = cache(c"panic_free_batch");
    let mut done = FreeBatch::<'_, Tracked<'_>, 4>::new(&cache);
    ledger.panic_on.set(Some(1));
    for i in 0..3 {
        done.add(cache.alloc(ledger.value(i), GFP_KERNEL).expect("alloc"));
    }
    let last = cache.alloc(ledger.value(3), GFP_KERNEL).expect("alloc");
    panics(|| done.add(last)); // The fourth fills the batch: bulk free, drop of 1 panics.
    assert!(done.is_empty());
    assert_eq!(&ledger.drops()[..4], &[1; 4]);
    assert_eq!(in_use(&cache), 0);

    for i in 4..7 {
        done.add(cache.alloc(ledger.value(i), GFP_KERNEL).expect("alloc"));
    }
    ledger.panic_on.set(Some(6));
    panics(|| done.flush());
    assert!(done.is_empty());
    assert_eq!(&ledger.drops()[..7], &[1; 7]);
    assert_eq!(in_use(&cache), 0);

    for i in 7..12 {
        done.add(cache.alloc(ledger.value(i), GFP_KERNEL).expect("alloc"));
    }
    ledger.panic_on.set(Some(11));
    panics(move || drop(done));
    assert_eq!(ledger.drops(), vec![1; 12]);
    assert_eq!(in_use(&cache), 0);
}

/// An `Obj` whose `T::drop` panics is still freed, and so is one emptied by `drop_contents`.
#[test]
fn obj_drop_panics() {
    let ledger = Ledger::new(2);
    let cache = cache(c"panic_obj");
    let obj = cache.alloc(ledger.value(0), GFP_KERNEL).expect("alloc");
    ledger.panic_on.set(Some(0));
    panics(move || drop(obj));
    assert_eq!(ledger.drops(), vec![1, 0]);
    assert_eq!(in_use(&cache), 0);

    let obj = cache.alloc(ledger.value(1), GFP_KERNEL).expect("alloc");
    ledger.panic_on.set(Some(1));
    panics(move || drop(obj.drop_contents()));
    assert_eq!(ledger.drops(), vec![1, 1]);
    assert_eq!(in_use(&cache), 0);
}

/// `ObjArray::alloc_with` whose init closure panics: the batch is unchanged, the values made
/// before the panic are dropped, the new objects freed.
#[test]
fn alloc_with_init_panics() {
    let ledger = Ledger::new(16);
    let cache = cache(c"panic_alloc_with");
    let mut batch = ObjArray::<'_, Tracked<'_>, 16>::new(&cache);
    batch
        .alloc_with(4, GFP_KERNEL, |i| ledger.value(i))
        .expect("alloc");
    panics(|| {
        let _ = batch.alloc_with(8, GFP_KERNEL, |i| {
            assert!(i != 5, "init of value {} panics", 4 + i);
            ledger.value(4 + i)
        });
    });
    assert_eq!(batch.len(), 4);
    assert_eq!(&ledger.drops()[..9], &[0, 0, 0, 0, 1, 1, 1, 1, 1]);
    assert_eq!(in_use(&cache), 4);
    drop(batch);
    assert_eq!(in_use(&cache), 0);
}

/// `Cache::alloc_bulk_with` (`init_with`) whose init closure panics: the values made before the
/// panic are dropped, every object freed.
#[test]
fn alloc_bulk_with_init_panics() {
    let ledger = Ledger::new(8);
    let cache = cache(c"panic_bulk_with");
    panics(|| {
        let _ = cache.alloc_bulk_with::<8>(GFP_KERNEL, |i| {
            assert!(i != 3, "init of value {i} panics");
            ledger.value(i)
        });
    });
    assert_eq!(ledger.drops(), vec![1, 1, 1, 0, 0, 0, 0, 0]);
    assert_eq!(in_use(&cache), 0);
}

/// `Cache::alloc_bulk_in` then `SlotObjs::init_with` whose init closure panics: the values made
/// before the panic are dropped, every object freed, and the lent array is free again.
#[test]
fn slice_init_panics() {
    let ledger = Ledger::new(8);
    let cache = cache(c"panic_slice_init");
    let mut slots = [MaybeUninit::uninit(); 8];
    panics(|| {
        let objs = cache.alloc_bulk_in(&mut slots, GFP_KERNEL).expect("alloc");
        let _ = objs.init_with(|i| {
            assert!(i != 5, "init of value {i} panics");
            ledger.value(i)
        });
    });
    assert_eq!(ledger.drops(), vec![1, 1, 1, 1, 1, 0, 0, 0]);
    assert_eq!(in_use(&cache), 0);
    let objs = cache
        .alloc_bulk_in(&mut slots[..2], GFP_KERNEL)
        .expect("alloc");
    assert_eq!(in_use(&cache), 2);
    drop(objs);
    assert_eq!(in_use(&cache), 0);
}

/// A `SlotObjs` dropped with a panicking `T::drop`: every value dropped once (the others'
/// drops still run), every object freed once.
#[test]
fn slice_drop_panics() {
    let ledger = Ledger::new(8);
    let cache = cache(c"panic_slice_drop");
    let mut slots = [MaybeUninit::uninit(); 8];
    let objs = cache
        .alloc_bulk_in(&mut slots, GFP_KERNEL)
        .expect("alloc")
        .init_with(|i| ledger.value(i));
    ledger.panic_on.set(Some(3));
    panics(move || drop(objs));
    assert_eq!(ledger.drops(), vec![1; 8]);
    assert_eq!(in_use(&cache), 0);
}

/// Boxes of a static cache whose value's drop panics, on the way back into a bulk free
/// (`to_obj` and an `ObjArray`): every object is freed. (A panic in the drop of the box itself
/// leaves its memory allocated, as the kernel's `Box` does; it stays counted, so the
/// registration would keep the cache: a leak, never a use after free.)
#[test]
fn static_box_drop_panics() {
    use kernel::alloc::Box;
    use kernel::slab_bulk::StaticCache;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static DROPS: AtomicUsize = AtomicUsize::new(0);

    /// Panics in its drop when `panics` is set.
    struct Fragile {
        panics: bool,
    }

    impl Drop for Fragile {
        fn drop(&mut self) {
            DROPS.fetch_add(1, Ordering::Relaxed);
            assert!(!self.panics, "drop of a Fragile panics");
        }
    }

    kernel::static_cache! {
        struct FragileCache(Fragile) = c"panic_static", CacheFlags::NO_MERGE;
    }

    let reg = FragileCache::register().expect("register");
    let obj: Box<Fragile, FragileCache> =
        Box::new(Fragile { panics: true }, GFP_KERNEL).expect("alloc");
    assert_eq!(in_use(&reg), 1);
    let r = &reg;
    panics(move || drop(r.to_obj(obj)));
    assert_eq!(DROPS.load(Ordering::Relaxed), 1);
    assert_eq!(in_use(&reg), 0);

    let mut batch = ObjArray::<'_, Fragile, 4>::new(&reg);
    for panics in [false, true, false] {
        let kept = Box::new(Fragile { panics }, GFP_KERNEL).expect("alloc");
        assert!(batch.push(reg.to_obj(kept)).is_ok());
    }
    panics(|| batch.free());
    assert_eq!(DROPS.load(Ordering::Relaxed), 4);
    assert_eq!(in_use(&reg), 0);
    drop(batch);
    drop(reg);
    assert!(FragileCache::cell().is_retired());
}
