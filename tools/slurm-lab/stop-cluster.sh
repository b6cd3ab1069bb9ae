#!/usr/bin/env bash
# stop-cluster.sh: tears down the cluster made by start-cluster.sh.
# Ends, by PID, exactly the processes of that cluster: the daemons named in its
# pid files (checked by name), every process in its cgroup (slurmstepd, job
# tasks...), every process inside its node network namespaces, and their
# descendants; SIGTERM, then SIGKILL after SLURMLAB_STOP_GRACE seconds (3).
# Running jobs are first scancel'ed (up to SLURMLAB_CANCEL_WAIT=3 s) so that
# their tasks get Slurm's normal SIGTERM.
# Then deletes its veths, namespaces, bridge and cgroup, and undoes the
# optional /etc/hosts block and /etc/slurm/slurm.conf link. Logs are kept.
# Safe to run when nothing is running (idempotent).
# Exit status 1 when a process of the cluster survived SIGKILL or its cgroup stayed.
set -uo pipefail
INST=${SLURMLAB_INSTANCE:-0}
[[ $INST =~ ^[0-9]$ ]] || { echo "[slurmlab-stop] ERROR: SLURMLAB_INSTANCE must be 0..9 (got '$INST')" >&2; exit 2; }
D=${SLURMLAB_DIR:-/tmp/slurmlab/cluster$INST}
QUIET=${SLURMLAB_QUIET:-0}
GRACE=${SLURMLAB_STOP_GRACE:-3}
CANCEL_WAIT=${SLURMLAB_CANCEL_WAIT:-3}
T0=$EPOCHREALTIME
say() { [[ $QUIET == 1 ]] || echo "[slurmlab-stop +$(awk -v a="$T0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.2f", b-a}')s] $*" >&2; }

MODE="" NODES=0 CG="" CGNAME=slurmlab$INST BR=slurmlab$INST NSPFX=slurmlab$INST-node VPFX=slurmlab${INST}v
LINK_ETC=0 ETC_HOSTS=0
[[ -f $D/run/cluster.env ]] && . "$D/run/cluster.env"
FAILED=0
# a cgroup left by an earlier run whose cluster.env is gone
if [[ -z $CG ]]; then
  for c in /sys/fs/cgroup/$CGNAME /sys/fs/cgroup/unified/$CGNAME /sys/fs/cgroup/pids/$CGNAME; do
    [[ -d $c ]] && CG=$c && break
  done
fi

pstate() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1; }
alive() { local s; s=$(pstate "$1"); [[ -n $s && $s != Z && $s != X ]]; }

# 0. cancel running jobs while slurmctld is still up
cpid=""; [[ -f $D/run/slurmctld.pid ]] && cpid=$(tr -dc 0-9 <"$D/run/slurmctld.pid")
if [[ -n $cpid && -f $D/etc/slurm.conf ]] && alive "$cpid" && [[ $(cat /proc/$cpid/comm 2>/dev/null) == slurmctld ]]; then
  export SLURM_CONF=$D/etc/slurm.conf
  jobs=$(timeout 5 squeue -h -o %A 2>/dev/null | sort -u)
  if [[ -n $jobs ]]; then
    say "scancel $(echo $jobs | wc -w) jobs"
    timeout 5 scancel $jobs 2>/dev/null
    for ((k = 0; k < CANCEL_WAIT * 10; k++)); do
      [[ -z $(timeout 5 squeue -h -o %A 2>/dev/null) ]] && break
      sleep 0.1
    done
  fi
fi

# never signal this script or its ancestors
declare -A SELF=() P=()
p=$$
while [[ $p =~ ^[0-9]+$ ]] && (( p > 1 )); do
  SELF[$p]=1
  p=$(sed 's/^.*) //' /proc/$p/stat 2>/dev/null | cut -d' ' -f2)
done
add() { local q; for q in "$@"; do [[ $q =~ ^[0-9]+$ ]] && (( q > 1 )) && [[ -z ${SELF[$q]:-} ]] && P[$q]=1; done; return 0; }

# 1. daemons from pid files, only if the PID still is that daemon
for f in "$D"/run/*.pid; do
  [[ -f $f ]] || continue
  q=$(tr -dc 0-9 <"$f")
  [[ -n $q ]] || continue
  case "$(cat /proc/$q/comm 2>/dev/null)" in slurmctld|slurmd|slurmdbd|munged|mariadbd) add "$q";; esac
done
# 2. everything in the cluster cgroup
[[ -n $CG && -f $CG/cgroup.procs ]] && add $(cat "$CG/cgroup.procs")
# 3. everything inside our node network namespaces
NSLIST=$(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${NSPFX}[0-9]+$" || true)
for ns in $NSLIST; do add $(ip netns pids "$ns" 2>/dev/null); done
# 4. descendants of all of those
if (( ${#P[@]} )); then
  while :; do
    n=${#P[@]}
    while read -r c pp; do [[ -n ${P[$pp]:-} ]] && add "$c"; done < <(ps -eo pid=,ppid=)
    (( ${#P[@]} == n )) && break
  done
fi

PIDS=()
for q in "${!P[@]}"; do alive "$q" && PIDS+=("$q"); done
if (( ${#PIDS[@]} )); then
  say "SIGTERM to ${#PIDS[@]} processes: ${PIDS[*]}"
  kill -TERM "${PIDS[@]}" 2>/dev/null
  for ((k = 0; k < GRACE * 10; k++)); do
    left=(); for q in "${PIDS[@]}"; do alive "$q" && left+=("$q"); done
    (( ${#left[@]} == 0 )) && break
    sleep 0.1
  done
  left=(); for q in "${PIDS[@]}"; do alive "$q" && left+=("$q"); done
  if (( ${#left[@]} )); then
    say "SIGKILL to ${#left[@]} processes: ${left[*]}"
    kill -KILL "${left[@]}" 2>/dev/null
    for ((k = 0; k < 50; k++)); do
      left2=(); for q in "${left[@]}"; do alive "$q" && left2+=("$q"); done
      (( ${#left2[@]} == 0 )) && break
      sleep 0.1
    done
    if (( ${#left2[@]} )); then
      echo "[slurmlab-stop] ERROR: still alive after SIGKILL: ${left2[*]}" >&2
      FAILED=1
    fi
  fi
fi

# network: veths (deleting one end removes both), namespaces, bridge
for ns in $NSLIST; do
  i=${ns#"$NSPFX"}
  ip link del "$VPFX$i" 2>/dev/null
  ip netns del "$ns" 2>/dev/null
done
ip link show "$BR" >/dev/null 2>&1 && ip link del "$BR"

# cgroup (empty once its processes have exited)
if [[ -n $CG && -d $CG ]]; then
  for ((k = 0; k < 50; k++)); do rmdir "$CG" 2>/dev/null && break; sleep 0.1; done
  if [[ -d $CG ]]; then
    echo "[slurmlab-stop] ERROR: could not remove $CG, it still holds: $(tr '\n' ' ' <"$CG/cgroup.procs" 2>/dev/null)" >&2
    FAILED=1
  fi
fi

# optional host-level edits
if grep -qx "# BEGIN $CGNAME" /etc/hosts 2>/dev/null; then
  mkdir -p "$D/run"
  sed "/# BEGIN $CGNAME\$/,/# END $CGNAME\$/d" /etc/hosts >"$D/run/hosts.tmp" && cat "$D/run/hosts.tmp" >/etc/hosts
  rm -f "$D/run/hosts.tmp"
fi
if [[ -L /etc/slurm/slurm.conf && $(readlink /etc/slurm/slurm.conf) == "$D"/* ]]; then rm -f /etc/slurm/slurm.conf; fi

rm -f "$D"/run/*.pid "$D/run/cluster.env"
say "stopped (${#PIDS[@]} processes ended)"
exit "$FAILED"
