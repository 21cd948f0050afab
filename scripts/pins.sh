# The toolchain root's packages (Debian 13, trixie; linux-source-7.3 comes from trixie-backports,
# which the root also lists).  Changing a line here re-provisions the root on the next
# 'make toolchain'.
# shellcheck shell=bash disable=SC2034 # its lists are for the scripts that source it

# Pinned to the version: what builds, runs and measures the kernels.  When Debian's index has
# moved on from a pinned version (a point release, a new backport), scripts/toolchain.sh fetches
# that version's .deb from the mirror's pool, where superseded versions stay for a while.
ROOT_PACKAGES=(
	rustc=1.85.1+dfsg1-1+deb13u1 rust-src=1.85.1+dfsg1-1+deb13u1
	rustfmt=1.85.1+dfsg1-1+deb13u1 rust-clippy=1.85.1+dfsg1-1+deb13u1
	bindgen=0.71.1-6
	clang=1:19.0-63 lld=1:19.0-63 llvm=1:19.0-63 libclang-dev=1:19.0-63
	# The kernels: each linux-source pinned here is one the project builds (scripts/lib.sh).
	linux-source-6.12=6.12.107-1
	linux-source-7.3=7.3.4-1~bpo13+1
	qemu-system-x86=1:10.0.13+ds-0+deb13u1
	busybox-static=1:1.37.0-6+b9
)

# The suite's current versions: host tools of the kernel build and the scripts.  They must match
# the base system debootstrap installs from the same index (libc6-dev is tied to libc6's exact
# version), so they follow trixie's point releases; the versions installed are listed in the
# root's /.packages.
ROOT_TOOLS=(
	make gcc libc6-dev bc flex bison libelf-dev libssl-dev python3 perl xz-utils cpio kmod rsync
	python3-matplotlib
)
