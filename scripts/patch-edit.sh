#!/usr/bin/env bash
# Edit Kconfig.patch as files rather than as a diff.
#
#   scripts/patch-edit.sh open [FILE...]   pristine a/ and patched b/ copies of every file the
#                                          patch touches (plus FILEs) under $CACHE_DIR/patch-edit
#   scripts/patch-edit.sh save             regenerate Kconfig.patch from a/ and b/
. "$(dirname "$0")/lib.sh"

dir=$CACHE_DIR/patch-edit
tarball=$ROOT/usr/src/linux-source-6.12.tar.xz
case "${1:-}" in
open)
	shift
	rm -rf "$dir" && mkdir -p "$dir/a" "$dir/b"
	files=$( (grep -E '^\+\+\+ b/' "$PROJECT/Kconfig.patch" 2>/dev/null | sed 's|^+++ b/||; s|\t.*||'; printf '%s\n' "$@") | sort -u)
	for f in $files; do
		tar -xJf "$tarball" -C "$dir/a" --strip-components=1 "linux-source-6.12/$f" 2>/dev/null || true
	done
	cp -a "$dir/a/." "$dir/b/"
	[ -f "$PROJECT/Kconfig.patch" ] && patch -d "$dir/b" -p1 --batch -s <"$PROJECT/Kconfig.patch"
	find "$dir/b" -name '*.orig' -delete
	echo "edit files under $dir/b, then: $0 save"
	;;
save)
	# A plain unified diff (no "diff -ruN" lines, no time stamps), which patch(1) and
	# checkpatch.pl both read as a patch.
	(cd "$dir" && diff -ruN a b) | sed -E '/^diff -ruN /d; s/^(---|\+\+\+) ([ab]\/[^\t]*)\t.*/\1 \2/' \
		>"$PROJECT/Kconfig.patch" || true
	grep -c '^+++ ' "$PROJECT/Kconfig.patch" | xargs printf 'Kconfig.patch: %s files\n'
	;;
*) echo "usage: $0 open [FILE...] | save" >&2; exit 2 ;;
esac
