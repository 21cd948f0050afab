#!/usr/bin/env bash
# Make the tree of one kernel: linux-source-<version> + the patch series patches/<version>/
# (applied in order) + the project's directories copied in.  Nothing of the project is edited
# in the tree by hand.  When a patch's diff changes (a reworded commit message alone changes
# nothing), a fresh tree is made from the tarball and the series, and only the files that the
# old or the new series touches are brought over from it into the existing tree, where they
# differ; the same holds for overlay files.  Every other file keeps its mtime, so the kernel
# builds stay incremental: kbuild recompiles what depends on the files that changed.
# usage: tree.sh VERSION      (6.12 or 7.3)
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
use_kernel "${1:?usage: tree.sh VERSION}"

series=("$PROJECT/patches/$KVER"/*.patch)

mkdir -p "$CACHE_DIR"
exec 9>"$CACHE_DIR/.tree-$KVER.lock"
flock 9

# update_file SRC DST: DST becomes a copy of SRC if their contents differ (an unchanged file
# keeps its mtime, so kbuild does not rebuild what depends on it); fails if nothing changed.
update_file() {
	cmp -s "$1" "$2" && return 1
	mkdir -p "$(dirname "$2")"
	cp "$1" "$2"
}

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
	source_stamp=$(sha256sum <"$tarball" | cut -c1-16)
	want=$( (echo "$source_stamp"; series_diffs "${series[@]}") | sha256sum | cut -c1-16)
	if [ "$(cat "$TREE/.project-stamp" 2>/dev/null)" != "$want" ]; then
		log "extracting linux-source-$KVER"
		rm -rf "$TREE.tmp"
		mkdir -p "$TREE.tmp"
		tar -xJf "$tarball" -C "$TREE.tmp" --strip-components=1
		log "applying patches/$KVER (${#series[@]} patches)"
		apply_series "$TREE.tmp"
		find "$TREE.tmp" -name '*.orig' -delete
		series_paths "${series[@]}" >"$TREE.tmp/.project-patched"
		echo "$source_stamp" >"$TREE.tmp/.project-source"
		echo "$want" >"$TREE.tmp/.project-stamp"
		if [ -f "$TREE/.project-patched" ] &&
			[ "$(cat "$TREE/.project-source" 2>/dev/null)" = "$source_stamp" ]; then
			# Same source, another series: only the files either series touches can differ.
			sort -u "$TREE/.project-patched" "$TREE.tmp/.project-patched" >"$TREE.tmp/.project-union"
			cp "$TREE.tmp/.project-union" "$TREE/.project-patched"
			n=0
			while read -r f; do
				if [ ! -e "$TREE.tmp/$f" ]; then
					[ ! -e "$TREE/$f" ] || { rm -f "$TREE/$f"; n=$((n + 1)); }
				elif update_file "$TREE.tmp/$f" "$TREE/$f"; then
					n=$((n + 1))
				fi
			done <"$TREE.tmp/.project-union"
			log "patches/$KVER changed: $n file(s) of $TREE updated, the rest kept"
			cp "$TREE.tmp/.project-patched" "$TREE.tmp/.project-source" "$TREE/"
			cp "$TREE.tmp/.project-stamp" "$TREE/"
			rm -rf "$TREE.tmp"
		else
			rm -rf "$TREE"
			mv "$TREE.tmp" "$TREE"
		fi
	fi
fi

# Copy the overlay in (only files whose content changed, so the others keep
# their mtimes), and remove what an earlier overlay put there but the project
# no longer has.
manifest=$TREE/.project-files
new_manifest=$(mktemp)
overlay_files >"$new_manifest"
while read -r f; do
	update_file "$PROJECT/$f" "$TREE/$f" || true
done <"$new_manifest"
if [ -f "$manifest" ]; then
	comm -23 <(sort "$manifest") <(sort "$new_manifest") | while read -r f; do
		log "overlay: removing $f"
		rm -f "$TREE/$f"
	done
fi
mv "$new_manifest" "$manifest"
