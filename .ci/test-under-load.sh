#!/usr/bin/env bash
# The unit, integration and corpus tiers beside CPU hogs (docs/testing.md#running-the-tests-under-load):
# a test that passes here does not time the machine. Installs Debian's stress-ng if it is
# missing (as root, with apt-get), starts `stress-ng --cpu $HOGS` (2 by default), runs pytest, and
# stops the hogs when pytest ends, however it ends. Exits with pytest's code.
#
#   bash .ci/test-under-load.sh                          # pytest -m "not e2e"
#   bash .ci/test-under-load.sh packages/srt-bench/tests -k workload   # ... plus these arguments
#   HOGS=4 bash .ci/test-under-load.sh
set -euo pipefail

HOGS="${HOGS:-2}"
UV="${UV:-uv}"
cd "$(dirname "$0")/.."

if ! command -v stress-ng >/dev/null; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "test-under-load: stress-ng is missing and cannot be installed here (needs root and" \
      "apt-get): install Debian's stress-ng" >&2
    exit 2
  fi
  echo "test-under-load: installing stress-ng (apt-get)"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stress-ng >/dev/null
fi

# A safety net: the hogs end by themselves after 3 hours even if this script is killed -9.
stress-ng --cpu "$HOGS" --timeout 10800 --quiet &
HOG_PID=$!

stop_hogs() {
  # stress-ng's parent forwards SIGTERM to its workers; wait reaps it
  kill -TERM "$HOG_PID" 2>/dev/null || true
  wait "$HOG_PID" 2>/dev/null || true
}
PYTEST_PID=""
on_signal() {
  # pytest runs in the background so that `wait` returns at once on a signal: stop it, then exit
  # (the EXIT trap stops the hogs)
  [ -n "$PYTEST_PID" ] && kill -TERM "$PYTEST_PID" 2>/dev/null || true
  exit "$1"
}
trap stop_hogs EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM

echo "test-under-load: $HOGS CPU hog(s) running (stress-ng pid $HOG_PID)"
"$UV" run --frozen pytest -m "not e2e" "$@" &
PYTEST_PID=$!
status=0
wait "$PYTEST_PID" || status=$?
echo "test-under-load: pytest exited $status; stopping the hogs"
exit "$status"
