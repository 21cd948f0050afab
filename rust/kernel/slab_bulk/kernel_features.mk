# SPDX-License-Identifier: GPL-2.0
#
# The kernel features that kernel::slab_bulk, kernel::qmempool and their samples tell apart,
# as rustc cfgs, so that one source builds on every kernel from 6.12 on.  Each cfg is named for
# its feature and given from the first release that has it; rust/Makefile and
# samples/rust/Makefile include this file and add $(rfl_feature_cfgs) to their rustflags.
# A release with a new difference gets a line here and the cfg in the code; nothing else
# names a version.

rfl_kver := $(shell echo $$(($(VERSION) * 1000 + $(PATCHLEVEL))))
# rfl_since VERSION,PATCHLEVEL,CFG: --cfg CFG when the tree is that release or later.
rfl_since = $(if $(shell [ $(rfl_kver) -ge $$(($(1) * 1000 + $(2))) ] && echo y),--cfg $(3))

rfl_feature_cfgs :=
# #[kunit_tests(suite)] builds a KUnit suite from a module of test functions.
rfl_feature_cfgs += $(call rfl_since,6,15,kunit_tests_attr)
# module! takes `authors: [...]` (6.17 drops `author:`).
rfl_feature_cfgs += $(call rfl_since,6,15,module_authors)
# Allocator::realloc() takes the NUMA node to allocate on.
rfl_feature_cfgs += $(call rfl_since,6,18,alloc_numa_node)
# Allocator::MIN_ALIGN, the alignment every allocation of the allocator has.
rfl_feature_cfgs += $(call rfl_since,6,18,alloc_min_align)
# Per-CPU sheaves on request (kmem_cache_args.sheaf_capacity) and the prefilled-sheaf API.
rfl_feature_cfgs += $(call rfl_since,6,18,slab_sheaf_api)
# NAPI's per-CPU skb cache holds 128 heads (64 before).
rfl_feature_cfgs += $(call rfl_since,6,19,napi_skb_cache_128)
# Per-CPU sheaves on every cache: SLUB's fast path.
rfl_feature_cfgs += $(call rfl_since,7,0,slab_sheaves_everywhere)
# kunit_assert!() takes its file name as a C string literal.
rfl_feature_cfgs += $(call rfl_since,7,0,kunit_assert_c_file)
# kmem_cache_alloc_bulk() returns whether it allocated (bool), not a count.
rfl_feature_cfgs += $(call rfl_since,7,2,slab_bulk_alloc_bool)
