#!/usr/bin/env bash
# Times the quick start as a new user meets it (README.md's table): a copy of a fresh Debian 12
# chroot, a clean clone of this repository's branch in it, `time scripts/quickstart.sh` there.
#   sudo scripts/quickstart-trial.sh BASE [BRANCH]
# BASE: a chroot from `debootstrap --variant=minbase bookworm BASE http://deb.debian.org/debian`
# (never changed: the trial runs in a copy, BASE-trial-<time>). BRANCH: default the current one.
# Needs root (chroot, mount) and the network (apt). Writes <copy>.log (the quick start's output
# with its per-phase lines and `time`) and <copy>.load.log (the load average every 15 s: the
# figures mean little on a machine others are using).
set -euo pipefail
base=${1:?usage: quickstart-trial.sh BASE [BRANCH]}
repo=$(cd "$(dirname "$0")/.." && pwd)
branch=${2:-$(git -C "$repo" rev-parse --abbrev-ref HEAD)}
if [[ ! -x $base/bin/bash ]]; then
  echo "quickstart-trial: $base is not a chroot (no bin/bash in it)" >&2
  exit 2
fi
trial=$base-trial-$(date -u +%Y%m%dT%H%M%S)
cp -a "$base" "$trial"
cp /etc/resolv.conf "$trial/etc/resolv.conf"
git clone -q -b "$branch" "$repo" "$trial/root/speedlab"
mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount "${mounted[i]}" || true; done
  if [[ -n ${monitor:-} ]]; then kill "$monitor" 2>/dev/null || true; fi
}
trap cleanup EXIT
for m in proc dev sys; do
  mount --bind "/$m" "$trial/$m"
  mounted+=("$trial/$m")
done
(while true; do echo "$(date -u +%H:%M:%S) $(cat /proc/loadavg)"; sleep 15; done) >"$trial.load.log" &
monitor=$!
echo "quickstart-trial: $(git -C "$trial/root/speedlab" log --oneline -1) in $trial; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
chroot "$trial" /bin/bash -c 'cd /root/speedlab && time scripts/quickstart.sh' 2>&1 | tee "$trial.log"
echo "quickstart-trial: log $trial.log, load $trial.load.log; remove the copy with rm -rf $trial"
