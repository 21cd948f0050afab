#!/usr/bin/env bash
# Make the tree of one kernel: linux-source-<version> + the patch series patches/<version>/
# (applied in order) + the project's directories copied in.  Nothing of the project is edited
# in the tree by hand; the tree is thrown away and re-extracted whenever a patch's diff changes
# (a reworded commit message alone leaves the tree as it is).
# Overlay files are copied only when their content differs, so an unchanged file keeps its
# mtime and the kernel build stays incremental.
# usage: tree.sh VERSION      (6.12 or 7.3)
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
use_kernel "${1:?usage: tree.sh VERSION}"

series=("$PROJECT/patches/$KVER"/*.patch)

mkdir -p "$CACHE_DIR"
exec 9>"$CACHE_DIR/.tree-$KVER.lock"
flock 9

# apply_series DIR: apply the series to DIR, every patch or none reported as applied.
apply_series() {
	local p out
	for p in "${series[@]}"; do
		if ! out=$(patch -d "$1" -p1 --forward --batch <"$p" 2>&1); then
			printf '%s\n' "$out" >&2
			die "patches/$KVER/${p##*/} does not apply to $1; fix the hunk(s) above"
		fi
	done
}

if [ -n "${KDIR:-}" ]; then
	# The user's tree: apply the series once (it is applied when the last patch reverses).
	if ! patch -d "$KDIR" -p1 -R --dry-run --batch -s <"${series[-1]}" >/dev/null 2>&1; then
		apply_series "$KDIR"
		log "applied patches/$KVER to $KDIR"
	fi
else
	tarball=$ROOT/usr/src/linux-source-$KVER.tar.xz
	[ -f "$tarball" ] || die "no linux-source-$KVER in the toolchain root: run 'make toolchain'"
	want=$( (sha256sum <"$tarball" | cut -c1-16; series_diffs "${series[@]}") | sha256sum | cut -c1-16)
	if [ "$(cat "$TREE/.project-stamp" 2>/dev/null)" != "$want" ]; then
		log "extracting linux-source-$KVER into $TREE"
		rm -rf "$TREE" "$TREE.tmp"
		mkdir -p "$TREE.tmp"
		tar -xJf "$tarball" -C "$TREE.tmp" --strip-components=1
		log "applying patches/$KVER (${#series[@]} patches)"
		apply_series "$TREE.tmp"
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
overlay_files >"$new_manifest"
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
