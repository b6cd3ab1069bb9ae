#!/usr/bin/env bash
# Installs the external benchmark clients the runner tests start against the Dynamo frontend +
# mocker (tests/test_runners_local.py), each in its own virtual environment, versions pinned,
# never into the workspace lock (they pin torch, transformers, ... that srt must not depend on):
#
#   $SRT_BENCH_CLIENTS/lm-eval  lm-eval[api] (local-completions) + transformers (its tokenizer)
#   $SRT_BENCH_CLIENTS/sglang   sglang (python -m sglang.bench_serving; it imports the SGLang
#                               runtime, hence PyPI's torch with its CUDA libraries: ~9 GB, no GPU
#                               needed)
#   aiperf                      `uvx --from aiperf==0.13.0 aiperf` (the runners' own
#                               benchmark.aiperf_package path), warmed in uv's cache here
#
# SRT_BENCH_CLIENTS defaults to /opt/srt-bench-clients. Idempotent: an environment whose
# .srt-spec file holds the same pins is kept.
#
#   bash .ci/install-bench-clients.sh          # install what is missing
#   bash .ci/install-bench-clients.sh --check  # only report what is missing (exit 1 if any)
set -euo pipefail

ROOT=${SRT_BENCH_CLIENTS:-/opt/srt-bench-clients}
AIPERF_SPEC="aiperf==0.13.0"
declare -A SPECS=(
  [lm-eval]="lm-eval[api]==0.4.13 transformers==5.24.0"
  [sglang]="sglang==0.5.23"
)

say() { echo "[install-bench-clients] $*" >&2; }

missing=()
for name in "${!SPECS[@]}"; do
  if [[ "$(cat "$ROOT/$name/.srt-spec" 2>/dev/null)" != "${SPECS[$name]}" ]]; then
    missing+=("$name")
  fi
done
if [[ ${1:-} == --check ]]; then
  if (( ${#missing[@]} )); then
    say "missing under $ROOT: ${missing[*]} (install: bash .ci/install-bench-clients.sh)"
    exit 1
  fi
  exit 0
fi
command -v uv >/dev/null || { say "uv is not on PATH"; exit 1; }
python=$(command -v python3)
for name in "${missing[@]}"; do
  start=$SECONDS
  rm -rf "$ROOT/$name"
  mkdir -p "$ROOT"
  uv venv -q --python "$python" "$ROOT/$name"
  # shellcheck disable=SC2086  # the spec is a list of requirements
  uv pip install -q --python "$ROOT/$name/bin/python" ${SPECS[$name]}
  echo "${SPECS[$name]}" >"$ROOT/$name/.srt-spec"
  say "$name: ${SPECS[$name]} in $ROOT/$name ($((SECONDS - start)) s)"
done
start=$SECONDS
uvx --from "$AIPERF_SPEC" aiperf --version >/dev/null
say "aiperf: $AIPERF_SPEC in uv's cache ($((SECONDS - start)) s)"
