"""The benchmark side of profiling (docs/telemetry-and-bench.md#profiling): the start and stop
requests of each profiled worker, and the measured-workload markers of automatic Nsight capture.

The planner decides everything (``BenchRunConfig.profiling``: which worker, which URL, the exact
start body); this module only sends and records. Explicit profiling starts before the benchmark
drives any traffic (the recipe's step windows count from there, warmup included) and stops after
it, also when it failed. Each request and its answer is appended to ``record`` (JSON lines), so a
missing profile can be traced to the request that did not get through. A worker that refuses or
cannot be reached costs its own profile, never the benchmark.

Automatic Nsight capture (``observability.nsys``, ``capture_window: measured_workload``) watches
``marker_dir``: the benchmark writes ``measured_workload.start`` when its first measured request
is about to go out and ``measured_workload.stop`` after its last one (:func:`mark`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import httpx
import msgspec

__all__ = [
    "MARKER_START",
    "MARKER_STOP",
    "ProfileTarget",
    "ProfilingControl",
    "mark",
    "start_profiles",
    "stop_profiles",
]

Log = Callable[[str], None]
MARKER_START = "measured_workload.start"
MARKER_STOP = "measured_workload.stop"
_TIMEOUT_SECONDS = 30.0


class ProfileTarget(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One profiled worker's control endpoint."""

    #: prefill, decode or agg.
    role: str
    #: The worker's process name in the plan.
    worker: str
    #: ``http://host:port`` of the worker's control server.
    url: str
    #: ``/engine/start_profile`` (a Dynamo worker) or ``/start_profile`` (native SGLang, vLLM).
    start_path: str
    stop_path: str
    #: The start request's JSON body, as the engine family expects it.
    start_body: dict[str, object]


class ProfilingControl(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    targets: tuple[ProfileTarget, ...] = ()
    #: Automatic Nsight capture: where the measured-workload markers go (None: no markers).
    marker_dir: str | None = None
    #: JSON lines of every request sent and its answer.
    record: str
    #: ``profiling.type: nsys-time``: the benchmark's traffic lasts at least this many seconds
    #: from its first request (``profiling.benchmark_duration_secs``; `srt_bench.profile_traffic`).
    traffic_seconds: float | None = None
    #: Where the summary of the extra traffic goes (JSON).
    traffic_record: str | None = None


def _append(path: Path, entry: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as fh:
        fh.write(msgspec.json.encode(entry) + b"\n")


def _send(
    client: httpx.Client,
    control: ProfilingControl,
    target: ProfileTarget,
    which: Literal["start", "stop"],
    log: Log,
) -> bool:
    path = target.start_path if which == "start" else target.stop_path
    body: dict[str, object] = target.start_body if which == "start" else {}
    url = target.url.rstrip("/") + path
    entry: dict[str, object] = {
        "time": time.time(),
        "action": which,
        "role": target.role,
        "worker": target.worker,
        "url": url,
        "body": body,
    }
    try:
        answer = client.post(url, json=body)
    except httpx.HTTPError as exc:
        entry["error"] = f"{type(exc).__name__}: {exc}"
        log(f"profiling: {which} {target.worker} ({url}) failed: {entry['error']}")
        _append(Path(control.record), entry)
        return False
    entry["status"] = answer.status_code
    entry["answer"] = answer.text[:2000]
    _append(Path(control.record), entry)
    if answer.status_code >= 400:
        log(
            f"profiling: {which} {target.worker} ({url}) answered {answer.status_code}: "
            f"{answer.text[:200]}"
        )
        return False
    log(f"profiling: {which} {target.worker} ({url}) ok")
    return True


def _each(control: ProfilingControl, which: Literal["start", "stop"], log: Log) -> int:
    if not control.targets:
        return 0
    with httpx.Client(timeout=_TIMEOUT_SECONDS, trust_env=False) as client:
        return sum(_send(client, control, t, which, log) for t in control.targets)


def start_profiles(control: ProfilingControl, log: Log) -> int:
    """POST every target's start request; how many were accepted."""
    return _each(control, "start", log)


def stop_profiles(control: ProfilingControl, log: Log) -> int:
    """POST every target's stop request; how many were accepted (a capture that ended on its
    own, after ``num_steps``, is refused by the engine: that is not an error)."""
    return _each(control, "stop", log)


def mark(control: ProfilingControl | None, which: Literal["start", "stop"], log: Log) -> None:
    """Write the measured-workload marker (atomically; never fails the benchmark)."""
    if control is None or control.marker_dir is None:
        return
    folder = Path(control.marker_dir)
    name = MARKER_START if which == "start" else MARKER_STOP
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{name}.tmp"
        tmp.write_text(f"{time.time()}\n")
        tmp.replace(folder / name)
    except OSError as exc:
        log(f"profiling: cannot write the {name} marker in {folder}: {exc}")
        return
    log(f"profiling: measured workload {which} ({folder / name})")
