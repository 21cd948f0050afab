#!/usr/bin/env bash
# Provision the Debian 13 toolchain root in $CACHE_DIR/root.
#
# Idempotent: a finished root carries .complete with the hash of the pinned
# package list and is left alone while that hash matches.  Interrupt-safe: the
# root is built in root.tmp and renamed only once verified, so a half-made
# root is never mistaken for a finished one and is simply redone.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

want=$(printf '%s\n' "$DEBIAN_SUITE" "${ROOT_PACKAGES[@]}" "${ROOT_TOOLS[@]}" | sha256sum | cut -c1-16)
if [ -f "$ROOT/.complete" ] && [ "$(cat "$ROOT/.complete")" = "$want" ]; then
	log "toolchain root up to date ($ROOT)"
	exit 0
fi

command -v debootstrap >/dev/null || {
	log "installing debootstrap on the host"
	apt-get install -y debootstrap >/dev/null
}

# Never rm -rf a directory with something mounted below it.
safe_rm() {
	[ -e "$1" ] || return 0
	if findmnt -rn -o TARGET | grep -q "^$(realpath "$1")"; then
		die "$1 has mounts below it; unmount them first (findmnt | grep $1)"
	fi
	rm -rf "$1"
}

tmp=$ROOT.tmp
mkdir -p "$CACHE_DIR"
safe_rm "$tmp"
log "debootstrap $DEBIAN_SUITE into $tmp"
debootstrap --variant=minbase "$DEBIAN_SUITE" "$tmp" "$DEBIAN_MIRROR" >"$CACHE_DIR/debootstrap.log" 2>&1 ||
	{ tail -20 "$CACHE_DIR/debootstrap.log"; die "debootstrap failed (log: $CACHE_DIR/debootstrap.log)"; }

log "installing ${#ROOT_PACKAGES[@]} pinned packages and ${#ROOT_TOOLS[@]} tools"
# Reuse in_root with the half-made root: mark it usable for the install only.
echo installing >"$tmp/.complete"
ROOT=$tmp in_root /bin/sh -c '
	echo "deb $1 trixie-backports main" >/etc/apt/sources.list.d/backports.list
	apt-get update -q >/dev/null
	# For each pin: "ok NAME VERSION" while the index has the version, else "gone NAME VERSION
	# FILENAME" with the pool file of the version the index has now.
	shift
	for p; do
		n=${p%%=*} v=${p#*=}
		if apt-cache madison "$n" | cut -d"|" -f2 | tr -d " " | grep -qxF "$v"; then
			echo "ok $n $v"
		else
			echo "gone $n $v $(apt-cache show --no-all-versions "$n" 2>/dev/null |
				sed -n "s/^Filename: //p" | head -1)"
		fi
	done' sh "$DEBIAN_MIRROR" "${ROOT_PACKAGES[@]}" >"$CACHE_DIR/pins.state" ||
	die "apt-get update failed in the new root (mirror: $DEBIAN_MIRROR)"

# A pinned version the index no longer lists: its .deb from the pool, installed by path.
install_args=()
mkdir -p "$tmp/var/cache/pinned"
while read -r state name ver file; do
	if [ "$state" = ok ]; then
		install_args+=("$name=$ver")
		continue
	fi
	[ -n "$file" ] || die "$name is not in $DEBIAN_MIRROR's trixie or trixie-backports index at all"
	# Pool file names carry the version without its epoch, then the architecture.
	deb=${name}_${ver#*:}_${file##*_}
	log "$name=$ver has left the index (it serves ${file##*/}): fetching $deb from the pool"
	curl -fsSL -o "$tmp/var/cache/pinned/$deb" "$DEBIAN_MIRROR/${file%/*}/$deb" ||
		die "$name=$ver is gone from $DEBIAN_MIRROR's pool too.
  The versions served now: apt-cache policy $name in the root, or packages.debian.org;
  set the new version in scripts/pins.sh"
	install_args+=("/var/cache/pinned/$deb")
done <"$CACHE_DIR/pins.state"

ROOT=$tmp in_root /bin/sh -c '
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q --no-install-recommends "$@" >/tmp/apt.log 2>&1 ||
		{ tail -30 /tmp/apt.log; exit 1; }
	apt-get clean
	rm -rf /var/cache/pinned
	dpkg-query -W -f "\${Package}=\${Version}\n" >/.packages
' sh "${install_args[@]}" "${ROOT_TOOLS[@]}" || die "package installation failed (above).
  A pinned package fetched from the pool may need a dependency version the index no longer has:
  the versions served now are in apt-cache policy <package> in the root, or packages.debian.org;
  set the new version in scripts/pins.sh"
log "installed: $(grep -cv '^$' "$tmp/.packages") packages, listed in $ROOT/.packages"

# scripts/rust_is_available.sh is what 'make rustavailable' runs; it needs only its own files.
for k in $ALL_KERNELS; do
	log "verifying: linux-source-$k and the kernel's own check (make rustavailable)"
	ls "$tmp/usr/src/linux-source-$k.tar.xz" >/dev/null || die "linux-source-$k tarball missing"
	ROOT=$tmp in_root sh -c '
		d=$(mktemp -d) s=linux-source-$1
		tar -xJf /usr/src/$s.tar.xz -C "$d" --strip-components=1 --wildcards \
			"$s/scripts/rust_is_available*" "$s/scripts/min-tool-version.sh" "$s/scripts/cc-version.sh"
		RUSTC=rustc BINDGEN=bindgen CC=clang sh "$d/scripts/rust_is_available.sh" && echo "Rust is available!"
		rc=$?
		rm -rf "$d"
		exit $rc' sh "$k" || die "the toolchain root fails linux-source-$k's rust_is_available.sh (see above)"
done

echo "$want" >"$tmp/.complete"
safe_rm "$ROOT"
mv "$tmp" "$ROOT"
log "toolchain root ready: $ROOT"
