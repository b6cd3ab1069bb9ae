#!/usr/bin/env bash
# Installs the Debian packages the end-to-end tier needs (real Slurm + munge for the slurm-lab
# cluster, the pyxis stub's build deps, and the services the scenarios start: etcd, NATS, nginx,
# node exporter) and the browser tier's headless Chromium; first, the runner tests' benchmark
# clients from PyPI (.ci/install-bench-clients.sh). Idempotent: when every binary is
# present it exits at once without touching apt.
# Needs root (CI and the dev machines are root). Package daemons are NOT started by the install
# (a temporary policy-rc.d refuses it): the tests start their own instances on their own ports.
#
#   bash .ci/install-system.sh          # install what is missing
#   bash .ci/install-system.sh --check  # only report what is missing (exit 1 if anything is)
set -euo pipefail

# package -> files it must provide (all must exist, or the package is (re)installed)
declare -A FILES=(
  [slurm-wlm]="/usr/sbin/slurmctld /usr/sbin/slurmd /usr/bin/srun /usr/bin/sbatch /usr/bin/sinfo /usr/bin/squeue /usr/bin/scancel /usr/bin/scontrol"
  [munge]="/usr/sbin/munged /usr/bin/munge /usr/bin/unmunge"
  [libslurm-dev]="/usr/include/slurm/spank.h"
  [etcd-server]="/usr/bin/etcd"
  [nats-server]="/usr/sbin/nats-server"
  [nginx]="/usr/sbin/nginx"
  [prometheus-node-exporter]="/usr/bin/prometheus-node-exporter"
  [iproute2]="/usr/sbin/ip /usr/bin/ss"
  [util-linux]="/usr/bin/nsenter /usr/bin/unshare /usr/bin/flock"
  [procps]="/usr/bin/ps"
  [gcc]="/usr/bin/gcc"
  [libc6-dev]="/usr/include/stdio.h"
  [zstd]="/usr/bin/zstd"
  [libpmix-dev]="/usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix.so"
  # the browser tier: pages rendered headless (tests/browser.py), fonts for their screenshots
  [chromium]="/usr/bin/chromium"
  [fonts-dejavu-core]="/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
)
ORDER=(slurm-wlm munge libslurm-dev etcd-server nats-server nginx prometheus-node-exporter
  iproute2 util-linux procps gcc libc6-dev zstd libpmix-dev chromium fonts-dejavu-core)

say() { echo "[install-system] $*" >&2; }

# the runner tests' benchmark clients (aiperf, lm-eval, SGLang's bench_serving), from PyPI
bash "$(dirname "$0")/install-bench-clients.sh" ${1:+"$1"}

missing=()
for pkg in "${ORDER[@]}"; do
  for f in ${FILES[$pkg]}; do
    if [[ ! -e $f ]]; then
      missing+=("$pkg")
      break
    fi
  done
done

if (( ${#missing[@]} == 0 )); then
  say "all ${#ORDER[@]} packages present, nothing to do"
  exit 0
fi
if [[ ${1:-} == --check ]]; then
  say "missing: ${missing[*]} (install: bash .ci/install-system.sh)"
  exit 1
fi
[[ $(id -u) == 0 ]] || { say "must run as root to apt-get install: ${missing[*]}"; exit 1; }

export DEBIAN_FRONTEND=noninteractive
say "apt-get update"
apt-get update -qq

# every name must exist in this Debian's package lists before we try to install it
unknown=()
for pkg in "${missing[@]}"; do
  cand=$(apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: *//p')
  if [[ -z $cand || $cand == "(none)" ]]; then
    unknown+=("$pkg")
  fi
done
if (( ${#unknown[@]} )); then
  say "no installable candidate on this Debian ($(cat /etc/debian_version 2>/dev/null || echo '?')) for: ${unknown[*]}"
  exit 1
fi

# keep the packages' init scripts from starting their daemons (nginx on :80, etcd, munge, ...)
made_policy=0
if [[ ! -e /usr/sbin/policy-rc.d ]]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
  chmod 755 /usr/sbin/policy-rc.d
  made_policy=1
fi
cleanup() { if (( made_policy )); then rm -f /usr/sbin/policy-rc.d; fi; }
trap cleanup EXIT

say "apt-get install ${missing[*]}"
apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=300 "${missing[@]}" >/dev/null

still=()
for pkg in "${missing[@]}"; do
  for f in ${FILES[$pkg]}; do
    [[ -e $f ]] || still+=("$pkg:$f")
  done
done
if (( ${#still[@]} )); then
  say "installed, but these files are still missing: ${still[*]}"
  exit 1
fi
say "installed: ${missing[*]}"
