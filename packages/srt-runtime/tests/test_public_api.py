"""The public names of srt_runtime, and that importing it prints nothing and starts nothing."""

from __future__ import annotations

import subprocess
import sys

import srt_runtime


def test_every_public_name_resolves() -> None:
    assert sorted(srt_runtime.__all__) == srt_runtime.__all__
    for name in srt_runtime.__all__:
        assert getattr(srt_runtime, name) is not None


def test_importing_is_silent_and_never_loads_the_cli_or_consumers() -> None:
    code = (
        "import sys, threading, srt_runtime; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'srt_cli', 'srt_bench', 'srt_telemetry'}), threading.active_count())"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert (done.stdout, done.stderr) == ("[] 1\n", "")
