#!/usr/bin/env bash
# Edit a kernel's patch series (patches/<version>/) as git commits.
#
#   scripts/patch-edit.sh open VERSION   a git repository of pristine linux-source-<version>
#                                        with the series applied as commits (git am), under
#                                        $CACHE_DIR/patch-edit-<version>: amend, rebase, add
#                                        commits there (git commit -s)
#   scripts/patch-edit.sh save VERSION   write the commits back to patches/<version>/
#                                        (git format-patch) and run checkpatch.pl --strict
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

cmd=${1:-} ver=${2:-}
[ -n "$ver" ] || { echo "usage: $0 open|save VERSION" >&2; exit 2; }
use_kernel "$ver"
dir=$CACHE_DIR/patch-edit-$KVER
git_() { git -C "$dir" -c core.excludesFile=/dev/null "$@"; }
case $cmd in
open)
	tarball=$ROOT/usr/src/linux-source-$KVER.tar.xz
	[ -f "$tarball" ] || die "no linux-source-$KVER in the toolchain root: run 'make toolchain'"
	rm -rf "$dir" && mkdir -p "$dir"
	log "extracting linux-source-$KVER into $dir"
	tar -xJf "$tarball" -C "$dir" --strip-components=1
	# Debian's source package ignores everything at the top level in its .gitignore.
	git_ init -q && git_ config gc.auto 0
	git_ add -A -f && git_ commit -q -m "linux-source-$KVER (pristine)"
	git_ tag pristine
	git_ am -q "$PROJECT/patches/$KVER"/*.patch
	git_ log --oneline pristine..
	echo "edit and commit under $dir, then: $0 save $KVER"
	;;
save)
	[ -d "$dir/.git" ] || die "nothing open: $0 open $KVER"
	rm -f "$PROJECT/patches/$KVER"/*.patch
	git_ format-patch -q --no-signature -o "$PROJECT/patches/$KVER" pristine..
	ls "$PROJECT/patches/$KVER"
	perl "$dir/scripts/checkpatch.pl" --strict --no-tree "$PROJECT/patches/$KVER"/*.patch |
		grep -E '^(total|ERROR|WARNING|CHECK)'
	;;
*) echo "usage: $0 open|save VERSION" >&2; exit 2 ;;
esac
