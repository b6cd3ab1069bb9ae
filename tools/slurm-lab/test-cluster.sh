#!/usr/bin/env bash
# test-cluster.sh: end-to-end checks against a cluster made by start-cluster.sh
# (expects >= 3 nodes; GPU checks run when the nodes have gpu GRES).
set -uo pipefail
D=${SLURMLAB_DIR:-/tmp/slurmlab/cluster${SLURMLAB_INSTANCE:-0}}
source "$D/env.sh"
W=$D/testjobs; rm -rf "$W"; mkdir -p "$W"
pass=0 fail=0
TT=$EPOCHREALTIME
ts()  { awk -v a="$TT" -v b="$EPOCHREALTIME" 'BEGIN{printf "%6.2f", b-a}'; }
ok()  { echo "ok   [$(ts)s] - $*"; pass=$((pass + 1)); }
bad() { echo "FAIL [$(ts)s] - $*"; fail=$((fail + 1)); }
now() { echo "$EPOCHREALTIME"; }
dt()  { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.2f", b-a}'; }
waitjob() { # jobid [timeout_s] -> prints state
  local j=$1 t=${2:-60} k st
  [[ $j =~ ^[0-9]+$ ]] || { echo NOJOB; return 0; }
  for ((k = 0; k < t * 10; k++)); do
    st=$(scontrol show job "$j" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -1)
    case "$st" in PENDING|RUNNING|CONFIGURING|COMPLETING|"") sleep 0.1;; *) echo "$st"; return 0;; esac
  done
  echo TIMEOUT
}
NODES=$(sinfo -h -N -o %N | sort -u | wc -l)
GPUS=$(sinfo -h -N -o %G | head -1 | sed -n 's/.*gpu:\([a-z0-9_]*:\)\{0,1\}\([0-9]*\).*/\2/p')
GPUS=${GPUS:-0}
echo "# cluster: $NODES nodes, $GPUS gpus/node"

# 1. basic client commands
sinfo >/dev/null && ok "sinfo" || bad "sinfo"
o=$(srun hostname 2>&1) && ok "srun hostname -> $o" || bad "srun hostname: $o"
j=$(sbatch --parsable -o "$W/wrap-%j.out" --wrap 'echo wrapped on $(hostname)')
st=$(waitjob "$j"); [[ $st == COMPLETED ]] && grep -q wrapped "$W/wrap-$j.out" && ok "sbatch --wrap ($(cat "$W/wrap-$j.out"))" || bad "sbatch --wrap: $st"
j=$(sbatch --parsable -o /dev/null --wrap 'sleep 300'); sleep 0.5
squeue -h -j "$j" | grep -q . && ok "squeue shows job $j" || bad "squeue"
scancel "$j"; st=$(waitjob "$j"); [[ $st == CANCELLED ]] && ok "scancel -> $st" || bad "scancel -> $st"
if grep -q '^AccountingStorageType=accounting_storage/slurmdbd' "$SLURM_CONF"; then
  o=""; for ((k = 0; k < 50; k++)); do o=$(sacct -X -n -P -j "$j" -o State 2>&1); [[ $o == CANCELLED* ]] && break; sleep 0.2; done
  [[ $o == CANCELLED* ]] && ok "sacct -j $j -> $o" || bad "sacct: $o"
  j2=$(sbatch --parsable -N2 -o "$W/sacct-%j.out" --wrap 'srun -N1 -n1 sacct -X -n -P -j $SLURM_JOB_ID -o State')
  st=$(waitjob "$j2"); [[ $st == COMPLETED ]] && grep -qE '^(PENDING|RUNNING)$' "$W/sacct-$j2.out" && ok "sacct from inside a job step on a node -> $(cat "$W/sacct-$j2.out") (DB record lags a little)" || bad "sacct in job: $st $(cat "$W/sacct-$j2.out")"
else
  o=$(sacct -j "$j" 2>&1); rc=$?
  (( rc != 0 )) && ok "sacct fails as expected without slurmdbd (rc=$rc: $o)" || bad "sacct unexpectedly works: $o"
fi

# 2. multi-node: 3 nodes, 4 concurrent long-running steps, one per worker, --overlap
cat >"$W/steps.sbatch" <<'EOF'
#!/bin/bash
#SBATCH -N 3 --ntasks-per-node=1 -t 5
nodes=($(scontrol show hostnames "$SLURM_JOB_NODELIST"))
for n in "${nodes[@]}" "${nodes[0]}"; do
  srun --nodes=1 --ntasks=1 -w "$n" --overlap bash -c 'echo "step $SLURM_STEP_ID on $SLURMD_NODENAME host $(hostname) start $(date +%s.%N)"; sleep 3; echo "step $SLURM_STEP_ID end $(date +%s.%N)"' &
done
wait
echo ALLDONE
EOF
t=$(now); j=$(sbatch --parsable -o "$W/steps-%j.out" "$W/steps.sbatch"); st=$(waitjob "$j")
STEPS_TIME=$(dt "$t")
n=$(grep -c '^step .* start' "$W/steps-$j.out"); hn=$(grep '^step .* start' "$W/steps-$j.out" | awk '{print $4}' | sort -u | wc -l)
hh=$(grep '^step .* start' "$W/steps-$j.out" | awk '{print $6}' | sort -u | wc -l)
[[ $st == COMPLETED && $n == 4 && $hn == 3 ]] && grep -q ALLDONE "$W/steps-$j.out" \
  && ok "sbatch -N3 with 4 concurrent srun --overlap steps (sleep 3): ${STEPS_TIME}s, $hn nodes, $hh distinct hostnames" \
  || bad "4-step job: $st n=$n hosts=$hn $(cat "$W/steps-$j.out")"

# 3. srun --nodelist on each node
for n in $(sinfo -h -N -o %N | sort -u | head -3); do
  o=$(srun -N1 -w "$n" sh -c 'echo $SLURMD_NODENAME' 2>&1); [[ $o == "$n" ]] && ok "srun -w $n" || bad "srun -w $n: $o"
done

# 4. heterogeneous job
cat >"$W/het.sbatch" <<'EOF'
#!/bin/bash
#SBATCH -N 1 --ntasks=1
#SBATCH hetjob
#SBATCH -N 2 --ntasks-per-node=1
srun --het-group=0 sh -c 'echo g0 $SLURMD_NODENAME' &
srun --het-group=1 sh -c 'echo g1 $SLURMD_NODENAME' &
wait
EOF
j=$(sbatch --parsable -o "$W/het-%j.out" "$W/het.sbatch"); st=$(waitjob "$j")
[[ $st == COMPLETED && $(grep -c '^g[01]' "$W/het-$j.out") == 3 ]] && ok "hetjob: $(tr '\n' ' ' <"$W/het-$j.out")" || bad "hetjob $st: $(cat "$W/het-$j.out")"

# 5. GPUs
if (( GPUS > 0 )); then
  o=$(srun -N2 --gpus-per-node="$GPUS" sh -c 'echo $SLURMD_NODENAME:$CUDA_VISIBLE_DEVICES' 2>&1 | sort | tr '\n' ' ')
  [[ $o == *:0* ]] && ok "--gpus-per-node=$GPUS -> $o" || bad "gpus: $o"
  o=$(srun -N1 --gres=gpu:1 sh -c 'echo $CUDA_VISIBLE_DEVICES' 2>&1); [[ $o == 0 ]] && ok "--gres=gpu:1 -> CUDA_VISIBLE_DEVICES=$o" || bad "gres=gpu:1: $o"
  o=$(timeout 10 srun -N1 --gpus-per-node=$((GPUS + 1)) true 2>&1); (( $? != 0 )) && ok "--gpus-per-node=$((GPUS + 1)) rejected: $o" || bad "too many gpus accepted"
fi

# 6. same TCP port on every node + cross-node connect (netns mode only)
if grep -q '^MODE=netns' "$D/run/cluster.env" 2>/dev/null && command -v python3 >/dev/null; then
  cat >"$W/tcp.sbatch" <<'EOF'
#!/bin/bash
#SBATCH -N 3 --ntasks-per-node=1 -t 2
srun --overlap -N3 -n3 python3 -c '
import socket,os
s=socket.socket(); s.bind(("0.0.0.0",29500)); s.listen(8); s.settimeout(20)
c,a=s.accept(); print(os.environ["SLURMD_NODENAME"],"got",c.recv(64).decode(),"from",a[0],flush=True)' &
sleep 2
for n in $(scontrol show hostnames $SLURM_JOB_NODELIST); do
  srun --overlap -N1 -n1 -w $(scontrol show hostnames $SLURM_JOB_NODELIST | tail -1) python3 -c "
import socket,os; socket.create_connection(('$n',29500),timeout=5).sendall(os.environ['SLURMD_NODENAME'].encode())"
done
wait
EOF
  j=$(sbatch --parsable -o "$W/tcp-%j.out" "$W/tcp.sbatch"); st=$(waitjob "$j")
  [[ $st == COMPLETED && $(grep -c got "$W/tcp-$j.out") == 3 ]] && ok "port 29500 on all nodes, cross-node TCP: $(tr '\n' ';' <"$W/tcp-$j.out")" || bad "tcp $st: $(cat "$W/tcp-$j.out")"
fi

# 7. cancel a running 3-node job with steps: no task may survive
j=$(sbatch --parsable -N3 -o /dev/null --wrap 'for n in $(scontrol show hostnames $SLURM_JOB_NODELIST); do srun --overlap -N1 -n1 -w $n sleep 987 & done; wait')
sleep 2
scancel "$j"; st=$(waitjob "$j"); sleep 1; after=$(ps -eo args | grep -c '^sleep 987$')
[[ $st == CANCELLED && $after == 0 ]] && ok "scancel of running 3-node job: tasks cleaned" || bad "cancel cleanup: $st, left=$after"

# 8. salloc + srun, and a non-root user
o=$(timeout 60 salloc -N2 srun sh -c 'echo $SLURMD_NODENAME' 2>/dev/null | sort | tr '\n' ' ')
[[ $o == "node1 node2 " ]] && ok "salloc -N2 srun -> $o" || bad "salloc: $o"
if id nobody >/dev/null 2>&1; then
  o=$(cd / && timeout 60 runuser -u nobody -- srun -N2 sh -c 'echo $(id -un)@$SLURMD_NODENAME' 2>&1 | sort | tr '\n' ' ')
  [[ $o == "nobody@node1 nobody@node2 " ]] && ok "srun as user nobody -> $o" || bad "srun as nobody: $o"
fi

# 9. pyxis stub (SLURMLAB_PYXIS_STUB=1)
if grep -q '^PlugStackConfig=' "$SLURM_CONF"; then
  o=$(srun -N2 --container-image=nvcr.io#nvidia/pytorch:24.01-py3 --container-mounts=/data:/data --no-container-mount-home \
      sh -c 'echo $SLURMLAB_PYXIS_CONTAINER_IMAGE,$SLURMLAB_PYXIS_CONTAINER_MOUNTS,$SLURMLAB_PYXIS_NO_CONTAINER_MOUNT_HOME' 2>&1 | sort -u)
  [[ $o == "nvcr.io#nvidia/pytorch:24.01-py3,/data:/data,1" ]] && ok "pyxis stub: srun --container-* accepted, seen as env: $o" || bad "pyxis stub: $o"
fi

echo "# $pass passed, $fail failed"
echo "$pass passed, $fail failed"
(( fail == 0 ))
