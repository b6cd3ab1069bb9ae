"""The stand-in's profiler: what a GPU engine does with ``/start_profile`` and ``/stop_profile``
(SGLang's native routes and the ``/engine/...`` routes of a Dynamo worker), as a test double.

A real engine profiles ``num_steps`` forward passes from ``start_step`` and writes a trace into
``output_dir``. The stand-in counts one step per finished generation request and writes one JSON
"trace" per capture: the request body exactly as received, when the capture started and ended,
what ended it (``num_steps`` reached or ``/stop_profile``) and which steps it saw. A test reads
these files to check what the benchmark side asked for and when.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import msgspec

__all__ = ["Profiler", "ProfilerAnswer"]


class _Capture(msgspec.Struct, kw_only=True):
    request: dict[str, object]
    output_dir: str
    start_step: int
    num_steps: int | None
    started_at: float
    #: Steps (finished generations) seen before the capture started.
    base: int
    steps: list[int] = msgspec.field(default_factory=list)


class ProfilerAnswer(msgspec.Struct, frozen=True):
    status: int
    body: dict[str, object]


class Profiler:
    """At most one capture at a time, like SGLang ("profiling already in progress")."""

    def __init__(self, *, role: str, port: int) -> None:
        self._role = role
        self._port = port
        self._steps = 0
        self._count = 0
        self._active: _Capture | None = None

    def start(self, body: bytes) -> ProfilerAnswer:
        try:
            request = msgspec.json.decode(body) if body else {}
        except msgspec.DecodeError:
            return ProfilerAnswer(400, {"error": "start_profile: the body is not JSON"})
        if not isinstance(request, dict):
            return ProfilerAnswer(400, {"error": "start_profile: the body is not an object"})
        if self._active is not None:
            return ProfilerAnswer(400, {"error": "profiling is already in progress"})
        output_dir = request.get("output_dir") or os.environ.get("SGLANG_TORCH_PROFILER_DIR")
        if not isinstance(output_dir, str) or not output_dir:
            return ProfilerAnswer(400, {"error": "start_profile: no output_dir"})
        start_step = request.get("start_step") or 0
        num_steps = request.get("num_steps")
        if not isinstance(start_step, int) or not (num_steps is None or isinstance(num_steps, int)):
            return ProfilerAnswer(400, {"error": "start_step and num_steps must be integers"})
        self._active = _Capture(
            request=request,
            output_dir=output_dir,
            start_step=start_step,
            num_steps=num_steps,
            started_at=time.time(),
            base=self._steps,
        )
        return ProfilerAnswer(200, {"message": "Start profiling."})

    def stop(self) -> ProfilerAnswer:
        if self._active is None:
            return ProfilerAnswer(400, {"error": "profiling is not in progress"})
        path = self._finish("stop_profile")
        return ProfilerAnswer(200, {"message": "Stop profiling.", "trace": path})

    def step(self) -> None:
        """One finished generation."""
        self._steps += 1
        capture = self._active
        if capture is None:
            return
        relative = self._steps - capture.base - 1
        if relative >= capture.start_step:
            capture.steps.append(relative)
        if capture.num_steps is not None and len(capture.steps) >= capture.num_steps:
            self._finish("num_steps")

    def _finish(self, ended_by: str) -> str:
        capture = self._active
        assert capture is not None
        self._active = None
        self._count += 1
        folder = Path(capture.output_dir)
        folder.mkdir(parents=True, exist_ok=True)
        # unique per server: workers on other nodes may share the port and the folder
        node = os.environ.get("SLURMD_NODENAME") or socket.gethostname()
        path = folder / f"standin-{self._role}-{node}-{self._port}-{self._count}.trace.json"
        record = {
            "stand_in": True,
            "role": self._role,
            "node": node,
            "port": self._port,
            "request": capture.request,
            "started_at": capture.started_at,
            "ended_at": time.time(),
            "ended_by": ended_by,
            "captured_steps": capture.steps,
        }
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_bytes(msgspec.json.format(msgspec.json.encode(record), indent=2) + b"\n")
        tmp.replace(path)
        return str(path)
