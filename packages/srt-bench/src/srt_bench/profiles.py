"""`srt-bench profiles`: what profiling produced, once the profiled workers stopped (a finalize
step of the plan, docs/telemetry-and-bench.md#profiling).

Lists every file under `<log_dir>/profiles/<phase>/` (the control record and dot-files aside),
checks the profiles the plan expects (an Nsight report per wrapped worker: `<output>.nsys-rep`;
at least one trace per phase that was sent a start request), writes `profiles/index.json` and
adds `ProfilesSummary` to `benchmark-rollup.json` when there is one. A missing profile is
reported (why it is missing is in the worker's log and `profiles/control.jsonl`), never fatal:
the benchmark's numbers stand.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import msgspec

from srt_bench.errors import BenchRollupFileError
from srt_bench.rollup_file import read_rollup, write_atomic, write_rollup
from srt_schema.rollup import (
    ROLLUP_FILE,
    ProfileFile,
    ProfilesSummary,
)

__all__ = ["NSYS_SUFFIXES", "apply_profiles", "collect_profiles"]

#: Report files Nsight Systems writes (`.qdrep` before 2021.4).
NSYS_SUFFIXES = (".nsys-rep", ".qdrep")
INDEX_FILE = "index.json"


def collect_profiles(
    log_dir: Path, *, expect_nsys: Sequence[str] = (), expect_dirs: Sequence[str] = ()
) -> ProfilesSummary:
    """The files under `profiles/` and the missing expected ones (paths relative to `log_dir`)."""
    root = log_dir / "profiles"
    files: list[ProfileFile] = []
    if root.is_dir():
        for phase_dir in sorted(p for p in root.iterdir() if p.is_dir()):
            if phase_dir.name.startswith("."):
                continue
            for path in sorted(phase_dir.rglob("*")):
                if path.is_file() and not path.name.startswith("."):
                    files.append(
                        ProfileFile(
                            phase=phase_dir.name,
                            path=path.relative_to(log_dir).as_posix(),
                            bytes=path.stat().st_size,
                        )
                    )
    paths = {f.path for f in files}
    missing: list[str] = []
    for output in expect_nsys:
        if not any(f"{output}{suffix}" in paths for suffix in NSYS_SUFFIXES):
            missing.append(
                f"{output}.nsys-rep: no Nsight report (nsys did not finish it before the worker "
                "was stopped; see the worker's log and observability.nsys.report_timeout_secs)"
            )
    for phase in expect_dirs:
        if not any(f.phase == phase for f in files):
            missing.append(
                f"profiles/{phase}/: no trace (see profiles/control.jsonl for the start and stop "
                "requests and their answers)"
            )
    return ProfilesSummary(files=tuple(files), missing=tuple(missing))


def apply_profiles(log_dir: Path, summary: ProfilesSummary) -> bool:
    """Write `profiles/index.json`; add the summary to the rollup. True when a rollup got it."""
    root = log_dir / "profiles"
    root.mkdir(parents=True, exist_ok=True)
    write_atomic(root / INDEX_FILE, msgspec.json.format(msgspec.json.encode(summary)) + b"\n")
    path = log_dir / ROLLUP_FILE
    read = read_rollup(path, BenchRollupFileError)
    if read is None:
        return False
    data, _, document = read
    document["profiles"] = msgspec.to_builtins(summary)
    write_rollup(path, document, data)
    return True
