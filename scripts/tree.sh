#!/usr/bin/env bash
# Make $CACHE_DIR/linux: linux-source-6.12 + Kconfig.patch + the project's
# directories copied in.  Nothing of the project is edited in the tree by
# hand; the tree is thrown away and re-extracted whenever Kconfig.patch
# changes.  Overlay files are copied only when their content differs,
# so an unchanged file keeps its mtime and the kernel build stays incremental.
. "$(dirname "$0")/lib.sh"

# The directories that belong at the same paths in the kernel tree.
OVERLAY_DIRS=(rust/kernel/slab_bulk rust/alf_queue drivers/net/ixgbe_bulk_shim samples/rust)

mkdir -p "$CACHE_DIR"
exec 9>"$CACHE_DIR/.tree.lock"
flock 9

patch_file=$PROJECT/Kconfig.patch
if [ -n "${KDIR:-}" ]; then
	# The user's tree: apply Kconfig.patch once (it is applied when it reverses cleanly).
	if patch -d "$KDIR" -p1 -R --dry-run --batch -s <"$patch_file" >/dev/null 2>&1; then
		:
	elif out=$(patch -d "$KDIR" -p1 --forward --batch <"$patch_file" 2>&1); then
		log "applied Kconfig.patch to $KDIR"
	else
		printf '%s\n' "$out" >&2
		die "Kconfig.patch does not apply to $KDIR (a 6.12 tree is expected); fix the hunks above"
	fi
else
	tarball=$ROOT/usr/src/linux-source-6.12.tar.xz
	[ -f "$tarball" ] || die "no linux-source-6.12 in the toolchain root: run 'make toolchain'"
	want=$( (sha256sum <"$tarball" | cut -c1-16; cat "$patch_file" 2>/dev/null || true) | sha256sum | cut -c1-16)
	if [ "$(cat "$TREE/.project-stamp" 2>/dev/null)" != "$want" ]; then
		log "extracting linux-source-6.12 into $TREE"
		rm -rf "$TREE" "$TREE.tmp"
		mkdir -p "$TREE.tmp"
		tar -xJf "$tarball" -C "$TREE.tmp" --strip-components=1
		log "applying Kconfig.patch"
		if ! out=$(patch -d "$TREE.tmp" -p1 --forward --batch <"$patch_file" 2>&1); then
			printf '%s\n' "$out" >&2
			die "Kconfig.patch does not apply to linux-source-6.12; fix the hunk(s) above (the tree was left unchanged)"
		fi
		find "$TREE.tmp" -name '*.orig' -delete
		echo "$want" >"$TREE.tmp/.project-stamp"
		mv "$TREE.tmp" "$TREE"
	fi
fi

# Copy the overlay in (only files whose content changed, so the others keep
# their mtimes), and remove what an earlier overlay put there but the project
# no longer has.
manifest=$TREE/.project-files
new_manifest=$(mktemp)
for d in "${OVERLAY_DIRS[@]}"; do
	[ -d "$PROJECT/$d" ] || continue
	(cd "$PROJECT" && find "$d" -type f ! -path '*/target/*' ! -name Cargo.lock) >>"$new_manifest"
done
while read -r f; do
	if ! cmp -s "$PROJECT/$f" "$TREE/$f"; then
		mkdir -p "$(dirname "$TREE/$f")"
		cp "$PROJECT/$f" "$TREE/$f"
	fi
done <"$new_manifest"
if [ -f "$manifest" ]; then
	comm -23 <(sort "$manifest") <(sort "$new_manifest") | while read -r f; do
		log "overlay: removing $f"
		rm -f "$TREE/$f"
	done
fi
mv "$new_manifest" "$manifest"
