#!/usr/bin/env bash
# Boot a UML kernel of the project with scripts/guest/init.sh running PLAN, and write the
# console output to LOG.  The root file system is the toolchain root over hostfs, where the
# checkout is /project and the cache /cache (with KDIR=, the host's / and their real paths).
# usage: uml-run.sh VERSION KIND PLAN LOG [KERNEL_ARG...]     (KIND: um-test or um-bench)
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

use_kernel "$1"
kind=$2 plan=$3 logfile=$4
shift 4
linux=$BUILD/$kind/linux
[ -x "$linux" ] || die "no UML kernel at $linux: run 'make kernel'"
mkdir -p "$CACHE_DIR/run"
cp "$plan" "$CACHE_DIR/run/plan-$KVER-$kind.sh"
# UML keeps its memory in a file under TMPDIR (the root's /dev/shm tmpfs).
timeout "${UML_TIMEOUT:-1800}" bash -c '. "$1"; shift; krun "$@"' _ "$PROJECT/scripts/lib.sh" \
	"$G_BUILD/$kind/linux" mem=1G root=/dev/root rootfstype=hostfs rootflags=/ rw \
	"init=$G_PROJECT/scripts/guest/init.sh" "rfl_plan=$G_CACHE/run/plan-$KVER-$kind.sh" \
	con=null con0=fd:0,fd:1 "$@" </dev/null >"$logfile" 2>&1 || {
	rc=$?
	tail -20 "$logfile" >&2
	die "UML ($KVER $kind) exited with $rc (log: $logfile)"
}
grep -q 'rfl_guest: plan done' "$logfile" || { tail -30 "$logfile" >&2; die "UML ($KVER $kind) did not finish its plan (log: $logfile)"; }
