#!/usr/bin/env bash
# Boot the x86-smp kernel under QEMU (TCG, 2 CPUs, an emulated igb NIC) from an initramfs holding busybox (BUSYBOX=,
# static; the root's by default), the
# project's modules and scripts/guest/init.sh running PLAN; write the serial console to LOG.
# In the plan, the modules are under /modules.
# usage: qemu-run.sh VERSION PLAN LOG [KERNEL_ARG...]
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

use_kernel "$1"
plan=$2 logfile=$3
shift 3
kbuild=$BUILD/x86-smp
[ -f "$kbuild/arch/x86/boot/bzImage" ] || die "no $KVER x86-smp kernel: run 'make kernel'"
run=run/initramfs-$KVER
stage=$CACHE_DIR/$run
rm -rf "$stage" && mkdir -p "$stage/modules"
cp "$PROJECT/scripts/guest/init.sh" "$stage/init"
cp "$plan" "$stage/plan.sh"
find "$kbuild/samples/rust" "$kbuild/drivers/net/fwdnic" -name '*.ko' -exec cp {} "$stage/modules/" \;
# The file list for the kernel's own gen_init_cpio: no device node is made on the host.
{
	echo "dir /dev 0755 0 0"
	echo "nod /dev/console 0600 0 0 c 5 1"
	for d in bin sbin proc sys tmp modules; do echo "dir /$d 0755 0 0"; done
	echo "file /init $G_CACHE/$run/init 0755 0 0"
	echo "file /plan.sh $G_CACHE/$run/plan.sh 0644 0 0"
	echo "file /bin/busybox ${BUSYBOX:-/bin/busybox} 0755 0 0"
	for a in sh mount insmod rmmod poweroff reboot sleep cat grep cut sed uname basename sync \
		echo dmesg; do
		echo "slink /bin/$a busybox 0777 0 0"
	done
	for m in "$stage"/modules/*.ko; do
		[ -e "$m" ] && echo "file /modules/$(basename "$m") $G_CACHE/$run/modules/$(basename "$m") 0644 0 0"
	done
} >"$stage.list"
krun sh -c "$G_BUILD/x86-smp/usr/gen_init_cpio $G_CACHE/$run.list >$G_CACHE/$run.cpio"
timeout "${QEMU_TIMEOUT:-1800}" bash -c '. "$1"; shift; krun "$@"' _ "$PROJECT/scripts/lib.sh" \
	qemu-system-x86_64 -accel tcg -smp 2 -m 1G -nographic -no-reboot -device igb \
	-kernel "$G_BUILD/x86-smp/arch/x86/boot/bzImage" -initrd "$G_CACHE/$run.cpio" \
	-append "console=ttyS0 panic=-1 rfl_plan=/plan.sh $*" </dev/null >"$logfile" 2>&1 || {
	rc=$?
	tail -20 "$logfile" >&2
	die "QEMU ($KVER) exited with $rc (log: $logfile)"
}
grep -q 'rfl_guest: plan done' "$logfile" || { tail -30 "$logfile" >&2; die "QEMU ($KVER) did not finish its plan (log: $logfile)"; }
