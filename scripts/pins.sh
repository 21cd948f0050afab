# Pinned package set of the toolchain root (Debian 13, trixie; linux-source-7.3 comes from
# trixie-backports, which the root also lists).  Changing a
# line here re-provisions the root on the next 'make toolchain'.
# shellcheck shell=bash
ROOT_PACKAGES=(
	rustc=1.85.1+dfsg1-1+deb13u1 rust-src=1.85.1+dfsg1-1+deb13u1
	rustfmt=1.85.1+dfsg1-1+deb13u1 rust-clippy=1.85.1+dfsg1-1+deb13u1
	bindgen=0.71.1-6
	clang=1:19.0-63 lld=1:19.0-63 llvm=1:19.0-63 libclang-dev=1:19.0-63
	linux-source-6.12=6.12.107-1
	linux-source-7.3=7.3.4-1~bpo13+1
	qemu-system-x86=1:10.0.13+ds-0+deb13u1
	busybox-static=1:1.37.0-6+b9
	make=4.4.1-2 gcc=4:14.2.0-1 libc6-dev=2.41-12+deb13u4 bc=1.07.1-4
	flex=2.6.4-8.2+b4 bison=2:3.8.2+dfsg-1+b2 libelf-dev=0.192-4
	libssl-dev=3.5.7-1~deb13u2 python3=3.13.5-1 perl=5.40.1-6+deb13u1
	xz-utils=5.8.1-1+deb13u1 cpio=2.15+dfsg-2 kmod=34.2-2
	rsync=3.4.1+ds1-5+deb13u4 python3-matplotlib=3.10.1+dfsg1-4
)
