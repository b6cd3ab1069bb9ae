#!/usr/bin/env bash
# Installs each of the packages meant to stand alone (srt-schema, srt-telemetry) into a fresh
# virtual environment with nothing else from the workspace, and runs that package's own tests there.
set -euo pipefail
cd "$(dirname "$0")/.."
# package -> what its tests need besides itself (extras and test-only tools)
declare -A extra=(
  [srt-schema]="./packages/srt-schema[migrate] jsonschema"
  [srt-telemetry]="./packages/srt-telemetry prometheus-client"
)
for pkg in srt-schema srt-telemetry; do
  venv="$(mktemp -d)/venv"
  uv venv --quiet "$venv"
  # shellcheck disable=SC2086  # word splitting of the extras list is intended
  uv pip install --quiet --python "$venv/bin/python" ${extra[$pkg]} pytest hypothesis
  mod="${pkg//-/_}"
  others=$("$venv/bin/python" -c "import importlib.util as u; print(','.join(m for m in ['srt_schema','srt_planner','srt_runtime','srt_telemetry','srt_bench','srt_cli'] if m != '$mod' and u.find_spec(m)))")
  if [ -n "$others" ]; then echo "$pkg alone: other workspace packages are installed: $others"; exit 1; fi
  echo "--- $pkg alone"
  (cd "packages/$pkg" && SRT_ALONE=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider tests)
done
