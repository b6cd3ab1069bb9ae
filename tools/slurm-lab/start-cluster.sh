#!/usr/bin/env bash
# start-cluster.sh [NODES] [GPUS_PER_NODE]
#
# Stands up a real, multi-node Slurm cluster on ONE Debian 12 machine (root),
# for srt's end-to-end tests: munged, slurmctld and NODES slurmd daemons from
# Debian's slurm-wlm + munge, waits until every node is idle and runs a smoke
# `srun`. Idempotent: an already running cluster of the same instance is
# stopped first, so the result is always a fresh cluster.
# The Debian packages must be installed: `bash .ci/install-system.sh` (root).
#
# Modes (SLURMLAB_MODE):
#   netns  every slurmd runs in its own network namespace (own IP on a private
#          bridge, veth pairs), UTS namespace (hostname = node name) and mount
#          namespace (a cluster /etc/hosts is bind-mounted, so node names
#          resolve inside jobs). Realistic: each node can bind the same port.
#   ports  all slurmd on 127.0.0.1, one port each (NodeName=nodeN Port=...);
#          needs no namespaces, but all "nodes" share hostname and IP.
#   auto   (default) netns if namespaces + veth + bridge work, else ports.
#
# Instances (SLURMLAB_INSTANCE=0..9, default 0): several clusters can run side
# by side (e.g. two pytest sessions); the instance picks the defaults of every
# name that must be unique on the machine: dir /tmp/slurmlab/cluster<I>,
# subnet 10.123.<I>, slurmctld port 6817+10*I, bridge slurmlab<I>, netns
# slurmlab<I>-node<N>, veth slurmlab<I>v<N>, cgroup slurmlab<I>.
#
# Every daemon (and so every slurmstepd and job task) is put in one cgroup,
# whose PIDs stop-cluster.sh ends one by one; PIDs are also kept in pid files.
#
# Environment knobs (defaults):
#   SLURMLAB_DIR=/tmp/slurmlab/cluster<I>  runtime dir (wiped at each start)
#   SLURMLAB_MODE=auto  SLURMLAB_CPUS=8 (per node)  SLURMLAB_MEM_MB=8192
#   SLURMLAB_GPU_TYPE=  (e.g. a100 -> Gres=gpu:a100:N)
#   SLURMLAB_SUBNET=10.123.<I> (/24 of the bridge: head .1, nodeN .(10+N))
#   SLURMLAB_PARTITION=debug  SLURMLAB_CTLD_PORT=6817+10*I  SLURMLAB_SLURMD_PORT=6818
#   SLURMLAB_PORT_BASE=17000+100*I (ports mode: nodeN listens on BASE+N)
#   SLURMLAB_LINK_ETC=0   1: symlink /etc/slurm/slurm.conf -> cluster conf
#   SLURMLAB_ETC_HOSTS=0  1: add node names to the host's /etc/hosts (netns)
#   SLURMLAB_SMOKE=1      0: skip the final `srun -N NODES hostname`
#   SLURMLAB_ACCOUNTING=0 1: also start MariaDB (127.0.0.1:SLURMLAB_DB_PORT=3307+I)
#                         + slurmdbd (SLURMLAB_DBD_PORT=6819+10*I), so sacct/sacctmgr/sstat
#                         work; needs `apt-get install slurmdbd mariadb-server`
#   SLURMLAB_PYXIS_STUB=0 1: build (cached in SLURMLAB_BUILD=/tmp/slurmlab/build) and load
#                         pyxis_stub.c, a SPANK plugin that accepts pyxis' --container-*
#                         options (no container is run; the step sees them as
#                         SLURMLAB_PYXIS_CONTAINER_IMAGE=... etc.); needs gcc + libslurm-dev
#   SLURMLAB_TIMEOUT=60   seconds to wait for the nodes to become idle
#   SLURMLAB_KEEP_ON_FAIL=0  1: on failure leave the half-started cluster running
# After it: `source $SLURMLAB_DIR/env.sh` (exports SLURM_CONF); $SLURMLAB_DIR/cluster.json
# describes the cluster (conf, nodes, addresses, GPUs) for programs.
set -euo pipefail

NODES=${1:-${SLURMLAB_NODES:-3}}
GPUS=${2:-${SLURMLAB_GPUS:-0}}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
INST=${SLURMLAB_INSTANCE:-0}
[[ $INST =~ ^[0-9]$ ]] || { echo "[slurmlab] ERROR: SLURMLAB_INSTANCE must be 0..9 (got '$INST')" >&2; exit 1; }
D=${SLURMLAB_DIR:-/tmp/slurmlab/cluster$INST}
MODE=${SLURMLAB_MODE:-auto}
CPUS=${SLURMLAB_CPUS:-8}
MEM=${SLURMLAB_MEM_MB:-8192}
GPU_TYPE=${SLURMLAB_GPU_TYPE:-}
SUBNET=${SLURMLAB_SUBNET:-10.123.$INST}
PART=${SLURMLAB_PARTITION:-debug}
CTLD_PORT=${SLURMLAB_CTLD_PORT:-$((6817 + 10 * INST))}
SLURMD_PORT=${SLURMLAB_SLURMD_PORT:-6818}
PORT_BASE=${SLURMLAB_PORT_BASE:-$((17000 + 100 * INST))}
LINK_ETC=${SLURMLAB_LINK_ETC:-0}
ETC_HOSTS=${SLURMLAB_ETC_HOSTS:-0}
SMOKE=${SLURMLAB_SMOKE:-1}
TIMEOUT=${SLURMLAB_TIMEOUT:-60}
ACCT=${SLURMLAB_ACCOUNTING:-0}
DB_PORT=${SLURMLAB_DB_PORT:-$((3307 + INST))}
DBD_PORT=${SLURMLAB_DBD_PORT:-$((6819 + 10 * INST))}
PYXIS_STUB=${SLURMLAB_PYXIS_STUB:-0}
BUILD=${SLURMLAB_BUILD:-/tmp/slurmlab/build}
BR=slurmlab$INST        # bridge name (netns mode); interface names must stay <= 15 chars
NSPFX=slurmlab$INST-node  # netns names: slurmlab0-node1 ...
VPFX=slurmlab${INST}v   # host side veth: slurmlab0v1 ...
CGNAME=slurmlab$INST

T0=$EPOCHREALTIME
el() { awk -v a="$T0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.2f", b-a}'; }
LOG=/dev/null
say() { local m="[slurmlab +$(el)s] $*"; echo "$m" >&2; echo "$m" >>"$LOG"; }
die() { say "ERROR: $*"; exit 1; }
on_exit() {
  local rc=$?
  if (( rc != 0 )) && [[ ${SLURMLAB_KEEP_ON_FAIL:-0} != 1 && ${STARTED:-0} == 1 ]]; then
    echo "[slurmlab] start failed (rc=$rc): tearing down; logs kept in $D/log" >&2
    SLURMLAB_DIR="$D" SLURMLAB_INSTANCE="$INST" SLURMLAB_QUIET=1 bash "$HERE/stop-cluster.sh" || true
  fi
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
alive() { local s; s=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1); [[ -n $s && $s != Z && $s != X ]]; }

[[ $NODES =~ ^[0-9]+$ ]] && (( NODES >= 1 && NODES <= 240 )) || die "NODES must be 1..240 (got '$NODES')"
[[ $GPUS =~ ^[0-9]+$ ]] && (( GPUS <= 64 )) || die "GPUS_PER_NODE must be 0..64 (got '$GPUS')"
[[ $(id -u) == 0 ]] || die "must run as root"
case "$D" in /|/tmp|/usr*|/etc*|/var|/root|/home) die "refusing SLURMLAB_DIR=$D";; esac

# ---------------------------------------------------------------- 1. requirements
# (no apt here: the project installs its system packages with .ci/install-system.sh)
need=()
for f in /usr/sbin/slurmctld /usr/sbin/slurmd /usr/bin/sinfo /usr/bin/srun /usr/bin/scontrol /usr/sbin/munged \
         /usr/bin/munge /usr/sbin/ip /usr/bin/nsenter /usr/bin/unshare; do
  [[ -e $f ]] || need+=("$f")
done
[[ $PYXIS_STUB != 1 ]] || for f in /usr/bin/gcc /usr/include/slurm/spank.h; do [[ -e $f ]] || need+=("$f"); done
(( ${#need[@]} == 0 )) || die "missing ${need[*]}; install the packages with: bash $(cd "$HERE/../.." && pwd)/.ci/install-system.sh"
if [[ $ACCT == 1 ]]; then
  for f in /usr/sbin/slurmdbd /usr/sbin/mariadbd /usr/bin/mariadb-install-db; do
    [[ -e $f ]] || die "SLURMLAB_ACCOUNTING=1 needs $f: apt-get install slurmdbd mariadb-server"
  done
fi

# ---------------------------------------------------------------- 1b. stop old
SLURMLAB_DIR="$D" SLURMLAB_INSTANCE="$INST" SLURMLAB_QUIET=1 bash "$HERE/stop-cluster.sh" || die "stop-cluster.sh failed"
mkdir -p "$D"
SLURM_VERSION=$(/usr/sbin/slurmctld -V | awk '{print $2}')

# ---------------------------------------------------------------- 2. mode
netns_ok() {
  local p=slurmlab-probe$$ ok=0   # interface names must stay <= 15 chars
  ip netns add "$p" 2>/dev/null || return 1
  if ip link add slpv$$ type veth peer name eth0 netns "$p" 2>/dev/null; then
    ip link del slpv$$ 2>/dev/null || true
    ip link add slpb$$ type bridge 2>/dev/null && { ip link del slpb$$; ok=1; }
  fi
  ip netns del "$p" 2>/dev/null || true
  (( ok )) && unshare --uts --mount --propagation private true 2>/dev/null
}
case "$MODE" in
  auto) if netns_ok; then MODE=netns; else MODE=ports; echo "[slurmlab] netns/veth/bridge unusable here -> ports mode" >&2; fi ;;
  netns) netns_ok || die "netns mode not possible here (ip netns/veth/bridge/unshare failed)";;
  ports) ;;
  *) die "SLURMLAB_MODE must be auto, netns or ports";;
esac

# ---------------------------------------------------------------- 3. dirs
STARTED=1
mkdir -p "$D"
rm -rf "$D/etc" "$D/state" "$D/run" "$D/munge" "$D/dev" "$D/mysql" "$D/lib" "$D/testjobs" "$D/log.prev"
[[ -d $D/log ]] && mv "$D/log" "$D/log.prev"
mkdir -p "$D/etc" "$D/state/ctld" "$D/run" "$D/log" "$D/munge" "$D/dev"
chmod 755 "$D" "$D/munge"
LOG=$D/log/start.log
say "slurm $SLURM_VERSION, mode=$MODE nodes=$NODES gpus/node=$GPUS cpus/node=$CPUS dir=$D"

# one cgroup (v2, or the v1 pids hierarchy) that holds every process of the cluster
CG=""
if [[ $(stat -fc %T /sys/fs/cgroup 2>/dev/null) == cgroup2fs ]]; then CG=/sys/fs/cgroup/$CGNAME
elif [[ -f /sys/fs/cgroup/unified/cgroup.procs ]]; then CG=/sys/fs/cgroup/unified/$CGNAME
elif [[ -f /sys/fs/cgroup/pids/cgroup.procs ]]; then CG=/sys/fs/cgroup/pids/$CGNAME
fi
if [[ -n $CG ]] && ! mkdir -p "$CG" 2>/dev/null; then CG=""; fi
[[ -n $CG ]] || say "WARNING: no writable cgroup; stop-cluster.sh will rely on pid files/netns only"
# run "$@" inside the cluster cgroup (exec keeps the PID; children inherit it)
in_cg() {
  if [[ -n $CG ]]; then
    sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$@"
  else
    "$@"
  fi
}

# state for stop-cluster.sh (written early so that a failed start can be cleaned up)
cat >"$D/run/cluster.env" <<EOF
INST=$INST
MODE=$MODE
NODES=$NODES
CGNAME=$CGNAME
CG=$CG
BR=$BR
NSPFX=$NSPFX
VPFX=$VPFX
LINK_ETC=$LINK_ETC
ETC_HOSTS=$ETC_HOSTS
EOF

# ---------------------------------------------------------------- 4. configs
HOST=$(hostname -s)
if [[ $MODE == netns ]]; then CTLD_ADDR=$SUBNET.1; else CTLD_ADDR=127.0.0.1; fi
node_addr() { if [[ $MODE == netns ]]; then echo "$SUBNET.$((10 + $1))"; else echo 127.0.0.1; fi; }

gres=""
if (( GPUS > 0 )); then
  gres=" Gres=gpu:${GPU_TYPE:+$GPU_TYPE:}$GPUS"
  for ((g = 0; g < GPUS; g++)); do mknod "$D/dev/nvidia$g" c 1 3; done   # fake GPUs (= /dev/null)
  if (( GPUS == 1 )); then files="$D/dev/nvidia0"; else files="$D/dev/nvidia[0-$((GPUS - 1))]"; fi
  cat >"$D/etc/gres.conf" <<EOF
AutoDetect=off
NodeName=node[1-$NODES] Name=gpu${GPU_TYPE:+ Type=$GPU_TYPE} File=$files
EOF
fi

cat >"$D/etc/slurm.conf" <<EOF
# generated by start-cluster.sh ($MODE mode)
ClusterName=slurmlab
SlurmctldHost=$HOST($CTLD_ADDR)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$D/munge/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$D/state/ctld
SlurmdSpoolDir=$D/state/%n
SlurmctldPidFile=$D/run/slurmctld.pid
SlurmdPidFile=$D/run/slurmd-%n.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
# start batch jobs at once (default delay 3 s); backfill (which alone starts
# heterogeneous jobs) every 1 s instead of 30 s
SchedulerParameters=batch_sched_delay=0,bf_interval=1
GresTypes=gpu
$(if [[ $ACCT == 1 ]]; then
  echo "AccountingStorageType=accounting_storage/slurmdbd"
  echo "AccountingStorageHost=$CTLD_ADDR"
  echo "AccountingStoragePort=$DBD_PORT"
  echo "AccountingStoragePass=$D/munge/munge.socket"
  echo "AccountingStorageTRES=gres/gpu"
  echo "JobAcctGatherType=jobacct_gather/linux"
else
  echo "AccountingStorageType=accounting_storage/none"
  echo "JobAcctGatherType=jobacct_gather/none"
fi)
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SlurmdParameters=config_overrides
SlurmdTimeout=60
KillWait=5
MinJobAge=3600
EOF
if [[ $PYXIS_STUB == 1 ]]; then
  # built once per source version and Slurm version, then reused (a build takes ~0.3 s)
  mkdir -p "$BUILD" "$D/lib"
  so=$BUILD/pyxis_stub-$(cat "$HERE/pyxis_stub.c" /usr/include/slurm/spank.h | cksum | cut -d' ' -f1).so
  if [[ ! -f $so ]]; then
    gcc -O2 -Wall -Werror -shared -fPIC -o "$so.tmp$$" "$HERE/pyxis_stub.c" >"$D/log/pyxis_stub.build.log" 2>&1 \
      || { cat "$D/log/pyxis_stub.build.log" >&2; die "building pyxis_stub.so failed"; }
    mv -f "$so.tmp$$" "$so"
  fi
  cp "$so" "$D/lib/pyxis_stub.so"
  echo "required $D/lib/pyxis_stub.so" >"$D/etc/plugstack.conf"
  echo "PlugStackConfig=$D/etc/plugstack.conf" >>"$D/etc/slurm.conf"
fi
for ((i = 1; i <= NODES; i++)); do
  if [[ $MODE == netns ]]; then
    echo "NodeName=node$i NodeAddr=$(node_addr $i) CPUs=$CPUS RealMemory=$MEM$gres State=UNKNOWN"
  else
    echo "NodeName=node$i NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((PORT_BASE + i)) CPUs=$CPUS RealMemory=$MEM$gres State=UNKNOWN"
  fi
done >>"$D/etc/slurm.conf"
echo "PartitionName=$PART Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >>"$D/etc/slurm.conf"

{
  echo "127.0.0.1 localhost"
  echo "::1 localhost ip6-localhost ip6-loopback"
  echo "$CTLD_ADDR $HOST slurmlab-head"
  if [[ $MODE == netns ]]; then for ((i = 1; i <= NODES; i++)); do echo "$(node_addr $i) node$i"; done; fi
} >"$D/etc/hosts"
export SLURM_CONF=$D/etc/slurm.conf
cat >"$D/env.sh" <<EOF
export SLURM_CONF=$D/etc/slurm.conf
EOF
{
  printf '{"instance": %d, "mode": "%s", "slurm_conf": "%s", "slurm_version": "%s",\n' "$INST" "$MODE" "$SLURM_CONF" "$SLURM_VERSION"
  printf ' "partition": "%s", "head_address": "%s", "controller_port": %d, "gpus_per_node": %d,\n' "$PART" "$CTLD_ADDR" "$CTLD_PORT" "$GPUS"
  printf ' "cpus_per_node": %d, "pyxis_stub": %s, "nodes": [' "$CPUS" "$([[ $PYXIS_STUB == 1 ]] && echo true || echo false)"
  for ((i = 1; i <= NODES; i++)); do
    printf '%s{"name": "node%d", "address": "%s"}' "$([[ $i == 1 ]] || echo ', ')" "$i" "$(node_addr $i)"
  done
  printf ']}\n'
} >"$D/cluster.json"

# free ports?
if command -v ss >/dev/null; then
  ports=($CTLD_PORT); [[ $ACCT == 1 ]] && ports+=($DB_PORT $DBD_PORT)
  if [[ $MODE == ports ]]; then for ((i = 1; i <= NODES; i++)); do ports+=($((PORT_BASE + i))); done; fi
  for port in "${ports[@]}"; do
    busy=$(ss -Hltn "( sport = :$port )" 2>/dev/null || true)
    [[ -z $busy ]] || die "port $port already in use: $busy"
  done
fi

# ---------------------------------------------------------------- 5. munge
dd if=/dev/urandom of="$D/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$D/munge/munge.key"
in_cg /usr/sbin/munged --force --socket="$D/munge/munge.socket" --key-file="$D/munge/munge.key" \
  --log-file="$D/log/munged.log" --pid-file="$D/run/munged.pid" --seed-file="$D/munge/munged.seed"
for ((k = 0; k < 100; k++)); do [[ -S $D/munge/munge.socket ]] && break; sleep 0.05; done
munge -S "$D/munge/munge.socket" -n </dev/null | unmunge -S "$D/munge/munge.socket" >/dev/null || die "munge does not work"
say "munged up (pid $(cat "$D/run/munged.pid"))"

# ---------------------------------------------------------------- 6. network
setv6() { [[ -e /proc/sys/net/ipv6/conf/$1/disable_ipv6 ]] && echo 1 >"/proc/sys/net/ipv6/conf/$1/disable_ipv6" || true; }
if [[ $MODE == netns ]]; then
  if ip -4 route show | grep -q "^$SUBNET\.0/" || ip -4 -o addr show | grep -q "inet $SUBNET\."; then
    die "subnet $SUBNET.0/24 already in use here; set SLURMLAB_SUBNET"
  fi
  ip link add "$BR" type bridge
  setv6 "$BR"
  ip addr add "$SUBNET.1/24" dev "$BR"
  ip link set "$BR" up
  for ((i = 1; i <= NODES; i++)); do
    ns=$NSPFX$i
    ip netns add "$ns"
    nsenter --net="/run/netns/$ns" sh -c 'for f in /proc/sys/net/ipv6/conf/all/disable_ipv6 /proc/sys/net/ipv6/conf/default/disable_ipv6; do [ -e $f ] && echo 1 >$f; done; true'
    ip link add "$VPFX$i" type veth peer name eth0 netns "$ns"
    setv6 "$VPFX$i"
    ip link set "$VPFX$i" master "$BR" up
    ip -n "$ns" addr add "$(node_addr $i)/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
  done
  say "network: bridge $BR $SUBNET.1/24, $NODES netns (${NSPFX}1..${NODES})"
fi

# ---------------------------------------------------------------- 6b. accounting
if [[ $ACCT == 1 ]]; then
  mkdir -p "$D/mysql"
  mariadb-install-db --no-defaults --user=root --datadir="$D/mysql/data" --auth-root-authentication-method=socket \
    --skip-test-db >"$D/log/mariadb-install.log" 2>&1 || die "mariadb-install-db failed, see $D/log/mariadb-install.log"
  printf '%s\n' "CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurmlab';" \
    "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';" >"$D/mysql/init.sql"
  in_cg setsid /usr/sbin/mariadbd --no-defaults --user=root --datadir="$D/mysql/data" --socket="$D/mysql/mysqld.sock" \
    --port="$DB_PORT" --bind-address=127.0.0.1 --skip-name-resolve --pid-file="$D/run/mariadbd.pid" \
    --log-error="$D/log/mariadb.log" --innodb-buffer-pool-size=64M --init-file="$D/mysql/init.sql" \
    </dev/null >/dev/null 2>&1 &
  for ((k = 0; ; k++)); do
    mariadb-admin --no-defaults -S "$D/mysql/mysqld.sock" -u root ping >/dev/null 2>&1 && break
    (( k < 300 )) || { tail -20 "$D/log/mariadb.log" >&2; die "mariadbd did not come up"; }
    sleep 0.1
  done
  say "mariadbd up (pid $(cat "$D/run/mariadbd.pid"), 127.0.0.1:$DB_PORT)"
  {
    echo "AuthType=auth/munge"
    echo "AuthInfo=socket=$D/munge/munge.socket"
    echo "DbdHost=$HOST"
    echo "DbdAddr=$CTLD_ADDR"
    echo "DbdPort=$DBD_PORT"
    echo "SlurmUser=root"
    echo "StorageType=accounting_storage/mysql"
    echo "StorageHost=127.0.0.1"
    echo "StoragePort=$DB_PORT"
    echo "StorageUser=slurm"
    echo "StoragePass=slurmlab"
    echo "StorageLoc=slurm_acct_db"
    echo "PidFile=$D/run/slurmdbd.pid"
    echo "LogFile=$D/log/slurmdbd.log"
  } >"$D/etc/slurmdbd.conf"
  chmod 600 "$D/etc/slurmdbd.conf"
  in_cg /usr/sbin/slurmdbd
  for ((k = 0; ; k++)); do
    sacctmgr -n list cluster >/dev/null 2>&1 && break
    (( k < 300 )) || { tail -20 "$D/log/slurmdbd.log" >&2; die "slurmdbd did not come up"; }
    sleep 0.1
  done
  if ! sacctmgr -n -P list cluster format=cluster | grep -qx slurmlab; then
    out=$(sacctmgr -i add cluster slurmlab 2>&1) || die "sacctmgr add cluster failed: $out"
  fi
  say "slurmdbd up (pid $(cat "$D/run/slurmdbd.pid"), port $DBD_PORT), cluster registered"
fi

# ---------------------------------------------------------------- 7. slurmctld
in_cg /usr/sbin/slurmctld -i -f "$SLURM_CONF"
for ((k = 0; ; k++)); do
  scontrol ping 2>/dev/null | grep -q 'is UP' && break
  cpid=$(cat "$D/run/slurmctld.pid" 2>/dev/null || true)
  if (( k >= 300 )) || { (( k > 5 )) && ! alive "${cpid:-0}"; }; then
    tail -20 "$D/log/slurmctld.log" >&2; die "slurmctld did not come up"
  fi
  sleep 0.1
done
say "slurmctld up (pid $(cat "$D/run/slurmctld.pid"))"

# ---------------------------------------------------------------- 8. slurmd
for ((i = 1; i <= NODES; i++)); do
  mkdir -p "$D/state/node$i"
  if [[ $MODE == netns ]]; then
    in_cg nsenter --net="/run/netns/$NSPFX$i" unshare --uts --mount --propagation private \
      sh -c 'mount --bind "$1" /etc/hosts && hostname "$2" && exec /usr/sbin/slurmd -f "$3" -N "$2"' \
      sh "$D/etc/hosts" "node$i" "$SLURM_CONF"
  else
    in_cg /usr/sbin/slurmd -f "$SLURM_CONF" -N "node$i"
  fi
done
for ((k = 0; ; k++)); do
  idle=$(sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2=="idle"' | sort -u | wc -l)
  (( idle == NODES )) && break
  if (( k > TIMEOUT * 10 )); then
    sinfo -N -l >&2 || true
    die "only $idle/$NODES nodes idle after ${TIMEOUT}s (logs: $D/log)"
  fi
  sleep 0.1
done
say "all $NODES nodes idle"

# ---------------------------------------------------------------- 9. extras
if [[ $LINK_ETC == 1 ]]; then
  mkdir -p /etc/slurm
  if [[ -e /etc/slurm/slurm.conf && ! -L /etc/slurm/slurm.conf ]]; then
    say "WARNING: /etc/slurm/slurm.conf exists and is not a link; not replaced"
  else
    ln -sfn "$SLURM_CONF" /etc/slurm/slurm.conf
  fi
fi
if [[ $ETC_HOSTS == 1 && $MODE == netns ]]; then
  { sed "/# BEGIN $CGNAME\$/,/# END $CGNAME\$/d" /etc/hosts; echo "# BEGIN $CGNAME"
    for ((i = 1; i <= NODES; i++)); do echo "$(node_addr $i) node$i"; done; echo "# END $CGNAME"; } >"$D/run/hosts.new"
  cat "$D/run/hosts.new" >/etc/hosts   # in place: /etc/hosts may be a bind mount
fi

if [[ $SMOKE == 1 ]]; then
  out=$(timeout 60 srun -N "$NODES" -n "$NODES" --ntasks-per-node=1 -t 1 sh -c 'echo $SLURMD_NODENAME' 2>&1 | sort -V | tr '\n' ' ') \
    || die "smoke srun failed: $out"
  say "smoke srun ok: $out"
fi

mem=$(ps -o rss= -p "$(cat "$D"/run/*.pid | tr '\n' ',' | sed 's/,$//')" | awk '{s+=$1} END {printf "%.1f", s/1024}')
say "READY in $(el)s: $NODES nodes ($MODE), daemons RSS ${mem} MiB. Use: source $D/env.sh"
