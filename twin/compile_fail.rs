// SPDX-License-Identifier: GPL-2.0

//! Misuse of `kernel::slab_bulk` that must not compile.
//!
//! Each example is a `compile_fail` doctest pinned to the error code it must fail with, so that
//! an example failing for an unrelated reason (a typo, an API change) does not pass silently.
//! The kernel's rustdoc never sees this module: it is the twin's.
//!
//! Using an object after it was freed (freeing consumes it):
//!
//! ```compile_fail,E0382
//! use kernel::alloc::flags::GFP_KERNEL;
//! use kernel::slab_bulk::{CacheFlags, OwnedCache};
//! let cache = OwnedCache::<u64>::new(c"cf", CacheFlags::NONE).unwrap();
//! let obj = cache.alloc(1, GFP_KERNEL).unwrap();
//! drop(obj);
//! let _read = *obj;
//! ```
//!
//! Destroying a cache while one of its objects is alive:
//!
//! ```compile_fail,E0505
//! use kernel::alloc::flags::GFP_KERNEL;
//! use kernel::slab_bulk::{CacheFlags, OwnedCache};
//! let cache = OwnedCache::<u64>::new(c"cf", CacheFlags::NONE).unwrap();
//! let obj = cache.alloc(1, GFP_KERNEL).unwrap();
//! drop(cache);
//! drop(obj);
//! ```
//!
//! ... or while a batch of its objects is alive:
//!
//! ```compile_fail,E0505
//! use kernel::alloc::flags::GFP_KERNEL;
//! use kernel::slab_bulk::{CacheFlags, OwnedCache};
//! let cache = OwnedCache::<u64>::new(c"cf", CacheFlags::NONE).unwrap();
//! let batch = cache.alloc_bulk::<8>(GFP_KERNEL).unwrap();
//! drop(cache);
//! drop(batch);
//! ```
//!
//! Letting an object outlive its cache:
//!
//! ```compile_fail,E0515
//! use kernel::alloc::flags::GFP_KERNEL;
//! use kernel::slab_bulk::{CacheFlags, OwnedCache, Obj};
//! fn escape() -> Obj<'static, u64> {
//!     let cache = OwnedCache::<u64>::new(c"cf", CacheFlags::NONE).unwrap();
//!     cache.alloc(1, GFP_KERNEL).unwrap()
//! }
//! ```
//!
//! Putting an object into a batch of another cache's type (objects of another cache of the
//! same type are handed back at run time: `ObjArray::push` returns them):
//!
//! ```compile_fail,E0308
//! use kernel::alloc::flags::GFP_KERNEL;
//! use kernel::slab_bulk::{CacheFlags, OwnedCache, ObjArray};
//! let a = OwnedCache::<u64>::new(c"cf_a", CacheFlags::NONE).unwrap();
//! let b = OwnedCache::<u32>::new(c"cf_b", CacheFlags::NONE).unwrap();
//! let mut batch = ObjArray::<'_, u64, 4>::new(&a);
//! let _ = batch.push(b.alloc(1, GFP_KERNEL).unwrap());
//! ```
//!
//! Touching the array lent to a bulk allocation while its objects are alive (the `SlotObjs`
//! borrows it until it is dropped):
//!
//! ```compile_fail,E0506
//! use core::mem::MaybeUninit;
//! use kernel::alloc::flags::GFP_KERNEL;
//! use kernel::slab_bulk::{CacheFlags, OwnedCache};
//! let cache = OwnedCache::<u64>::new(c"cf", CacheFlags::NONE).unwrap();
//! let mut slots = [MaybeUninit::uninit(); 4];
//! let objs = cache.alloc_bulk_in(&mut slots, GFP_KERNEL).unwrap();
//! slots[0] = MaybeUninit::uninit();
//! drop(objs);
//! ```
//!
//! ... or destroying their cache:
//!
//! ```compile_fail,E0505
//! use core::mem::MaybeUninit;
//! use kernel::alloc::flags::GFP_KERNEL;
//! use kernel::slab_bulk::{CacheFlags, OwnedCache};
//! let cache = OwnedCache::<u64>::new(c"cf", CacheFlags::NONE).unwrap();
//! let mut slots = [MaybeUninit::uninit(); 4];
//! let objs = cache.alloc_bulk_in(&mut slots, GFP_KERNEL).unwrap();
//! drop(cache);
//! drop(objs);
//! ```
//!
//! Freeing a raw object into a cache of one's choosing needs `unsafe`:
//!
//! ```compile_fail,E0133
//! use core::ptr::NonNull;
//! use kernel::alloc::flags::GFP_KERNEL;
//! use kernel::slab_bulk::{CacheFlags, OwnedCache, Obj};
//! let a = OwnedCache::<u64>::new(c"cf_a", CacheFlags::NONE).unwrap();
//! let b = OwnedCache::<u64>::new(c"cf_b", CacheFlags::NONE).unwrap();
//! let raw: NonNull<u64> = a.alloc(1, GFP_KERNEL).unwrap().into_raw();
//! drop(Obj::from_raw(&b, raw));
//! ```
//!
//! Reading an uninitialised object:
//!
//! ```compile_fail,E0308
//! use kernel::alloc::flags::GFP_KERNEL;
//! use kernel::slab_bulk::{CacheFlags, OwnedCache};
//! let cache = OwnedCache::<u64>::new(c"cf", CacheFlags::NONE).unwrap();
//! let obj = cache.alloc_uninit(GFP_KERNEL).unwrap();
//! let _read: u64 = *obj;
//! ```
//!
//! ... or declaring it initialised without `unsafe`:
//!
//! ```compile_fail,E0133
//! use kernel::alloc::flags::GFP_KERNEL;
//! use kernel::slab_bulk::{CacheFlags, OwnedCache};
//! let cache = OwnedCache::<u64>::new(c"cf", CacheFlags::NONE).unwrap();
//! let obj = cache.alloc_uninit(GFP_KERNEL).unwrap().assume_init();
//! ```
//!
//! ... or reading the objects of an uninitialised batch:
//!
//! ```compile_fail,E0308
//! use kernel::alloc::flags::GFP_KERNEL;
//! use kernel::slab_bulk::{CacheFlags, OwnedCache};
//! let cache = OwnedCache::<u64>::new(c"cf", CacheFlags::NONE).unwrap();
//! let batch = cache.alloc_bulk::<4>(GFP_KERNEL).unwrap();
//! let _first: u64 = *batch.get(0).unwrap();
//! ```
//!
//! A bulk allocation of zero objects:
//!
//! ```compile_fail,E0080
//! use kernel::alloc::flags::GFP_KERNEL;
//! use kernel::slab_bulk::{CacheFlags, OwnedCache};
//! let cache = OwnedCache::<u64>::new(c"cf", CacheFlags::NONE).unwrap();
//! let _batch = cache.alloc_bulk::<0>(GFP_KERNEL);
//! ```
//!
//! A free batch with no room:
//!
//! ```compile_fail,E0080
//! use kernel::slab_bulk::{CacheFlags, FreeBatch, OwnedCache};
//! let cache = OwnedCache::<u64>::new(c"cf", CacheFlags::NONE).unwrap();
//! let _done = FreeBatch::<'_, u64, 0>::new(&cache);
//! ```
//!
//! Sending an object whose contents may not cross threads:
//!
//! ```compile_fail,E0277
//! use kernel::alloc::flags::GFP_KERNEL;
//! use kernel::slab_bulk::{CacheFlags, OwnedCache};
//! let cache = OwnedCache::<std::rc::Rc<u8>>::new(c"cf", CacheFlags::NONE).unwrap();
//! let obj = cache.alloc(std::rc::Rc::new(1), GFP_KERNEL).unwrap();
//! std::thread::scope(|s| {
//!     s.spawn(move || drop(obj));
//! });
//! ```
//!
//! Keeping an object as a box of a static cache without its registration, here from a cache of
//! the same type:
//!
//! ```compile_fail,E0308
//! use kernel::alloc::{flags::GFP_KERNEL, Box};
//! use kernel::slab_bulk::{CacheFlags, CacheRegistration, OwnedCache};
//! kernel::static_cache! { struct Vals(u64) = c"cf_vals", CacheFlags::NONE; }
//! let cache = OwnedCache::<u64>::new(c"cf", CacheFlags::NONE).unwrap();
//! let obj = cache.alloc(1, GFP_KERNEL).unwrap();
//! let _kept: Box<u64, Vals> = CacheRegistration::<Vals>::keep(&cache, obj).unwrap();
//! ```
//!
//! Giving a box of one static cache back to the registration of another cache type:
//!
//! ```compile_fail,E0308
//! use kernel::alloc::{flags::GFP_KERNEL, Box};
//! use kernel::slab_bulk::{CacheFlags, StaticCache};
//! kernel::static_cache! { struct A(u64) = c"cf_a", CacheFlags::NONE; }
//! kernel::static_cache! { struct B(u64) = c"cf_b", CacheFlags::NONE; }
//! let (a, b) = (A::register().unwrap(), B::register().unwrap());
//! let kept = Box::<u64, A>::new(1, GFP_KERNEL).unwrap();
//! let _obj = b.to_obj(kept);
//! ```
//!
//! Sending a box of a static cache whose contents may not cross threads:
//!
//! ```compile_fail,E0277
//! use kernel::alloc::{flags::GFP_KERNEL, Box};
//! use kernel::slab_bulk::{CacheFlags, StaticCache};
//! kernel::static_cache! { struct Rcs(std::rc::Rc<u8>) = c"cf_rc", CacheFlags::NONE; }
//! let reg = Rcs::register().unwrap();
//! let kept = Box::<_, Rcs>::new(std::rc::Rc::new(1), GFP_KERNEL).unwrap();
//! std::thread::scope(|s| {
//!     s.spawn(move || drop(kept));
//! });
//! ```
//!
//! Dropping a registration while a batch of its cache is alive:
//!
//! ```compile_fail,E0505
//! use kernel::alloc::flags::GFP_KERNEL;
//! use kernel::slab_bulk::{CacheFlags, StaticCache};
//! kernel::static_cache! { struct Vals(u64) = c"cf_vals", CacheFlags::NONE; }
//! let reg = Vals::register().unwrap();
//! let batch = reg.alloc_bulk::<8>(GFP_KERNEL).unwrap();
//! drop(reg);
//! drop(batch);
//! ```
//!
//! The same code with its misuse removed compiles and runs, which shows that each example
//! above fails for its misuse and nothing else:
//!
//! ```
//! use kernel::alloc::flags::GFP_KERNEL;
//! use kernel::slab_bulk::{CacheFlags, FreeBatch, OwnedCache, ObjArray};
//! let a = OwnedCache::<u64>::new(c"cf_a", CacheFlags::NONE).unwrap();
//! let obj = a.alloc(1, GFP_KERNEL).unwrap();
//! let _read = *obj;
//! let mut batch = ObjArray::<'_, u64, 4>::new(&a);
//! assert!(batch.push(obj).is_ok());
//! let uninit = a.alloc_uninit(GFP_KERNEL).unwrap();
//! let init = uninit.write(7);
//! assert_eq!(*init, 7);
//! let bulk = a.alloc_bulk::<4>(GFP_KERNEL).unwrap().init_with(|i| i as u64);
//! assert_eq!(*bulk.get(3).unwrap(), 3);
//! let mut done = FreeBatch::<'_, u64, 1>::new(&a);
//! done.add(init);
//! let mut slots = [core::mem::MaybeUninit::uninit(); 4];
//! let objs = a.alloc_bulk_in(&mut slots, GFP_KERNEL).unwrap();
//! drop(objs);
//! slots[0] = core::mem::MaybeUninit::uninit();
//! std::thread::scope(|s| {
//!     s.spawn(move || drop(bulk));
//! });
//! drop((batch, done));
//! drop(a);
//! ```
//!
//! ... and the module-lifetime caches' examples likewise:
//!
//! ```
//! use kernel::alloc::{flags::GFP_KERNEL, Box};
//! use kernel::slab_bulk::{CacheFlags, StaticCache};
//! kernel::static_cache! { struct A(u64) = c"cf_a", CacheFlags::NONE; }
//! kernel::static_cache! { struct Arcs(std::sync::Arc<u8>) = c"cf_arc", CacheFlags::NONE; }
//! let a = A::register().unwrap();
//! let obj = a.alloc(1, GFP_KERNEL).unwrap();
//! let kept: Box<u64, A> = a.keep(obj).unwrap();
//! let obj = a.to_obj(kept);
//! assert_eq!(*obj, 1);
//! drop(obj);
//! let arcs = Arcs::register().unwrap();
//! let kept = Box::<_, Arcs>::new(std::sync::Arc::new(1), GFP_KERNEL).unwrap();
//! std::thread::scope(|s| {
//!     s.spawn(move || drop(kept));
//! });
//! let batch = a.alloc_bulk::<8>(GFP_KERNEL).unwrap();
//! drop(batch);
//! drop(a);
//! ```
