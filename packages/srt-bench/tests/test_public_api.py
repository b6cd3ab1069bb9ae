from __future__ import annotations

import subprocess
import sys

import srt_bench


def test_public_names_resolve() -> None:
    for name in srt_bench.__all__:
        assert getattr(srt_bench, name) is not None, name
    assert issubclass(srt_bench.BenchConfigError, srt_bench.BenchError)


def test_importing_loads_no_other_workspace_package_but_the_schema() -> None:
    code = (
        "import sys, srt_bench; "
        "print(sorted(m for m in sys.modules if m.startswith('srt_') and '.' not in m))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['srt_bench', 'srt_schema']"
