"""The test harness: a JobPlan factory around scripted processes and an in-process runner."""

from __future__ import annotations

import json
import logging
import socket
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from rt_fakes import HookSink

from srt_planner.plan import GeneratedFile, HealthGate, JobPlan, NodeRoles, ProcessSpec, StartPhase
from srt_runtime.clock import SystemClock
from srt_runtime.launch import LocalLauncher
from srt_runtime.run import run_job
from srt_runtime.status import (
    EventLog,
    FileStatusSink,
    ProcessEvent,
    RunEvent,
    StatusEvent,
    decode_event_lines,
)
from srt_runtime.supervisor import Supervisor

FAKES = Path(__file__).resolve().parent


def awaits(path: Path, text: str, count: int = 1) -> tuple[object, ...]:
    """The ``proc.py`` step that waits until ``path`` holds ``text`` ``count`` times."""
    return ("await", path, text.encode().hex(), count)


def sweep_log(job_dir: Path) -> Path:
    return job_dir / "logs" / "sweep_4242.log"


def read_trace(path: Path) -> list[str]:
    return path.read_text().splitlines()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def fake(*steps: object) -> tuple[str, ...]:
    """argv of the scripted process ``tests/fakes/proc.py``."""
    return ("python", str(FAKES / "proc.py"), *(str(s) for s in steps))


def write_routes(path: Path, routes: dict[str, Any]) -> Path:
    path.write_text(json.dumps(routes))
    return path


def spec(
    name: str,
    argv: tuple[str, ...],
    *,
    kind: str = "worker",
    phase: StartPhase = "workers",
    role: str | None = None,
    node: str = "node-01",
    **fields: Any,
) -> ProcessSpec:
    """A ProcessSpec with test defaults (log ``<name>.out``, short stop grace)."""
    env = {"SRT_FAKE_NAME": name, **fields.pop("env", {})}
    fields.setdefault("stop_grace_seconds", 5.0)
    return ProcessSpec(
        name=name,
        kind=kind,  # type: ignore[arg-type]
        role=role or name,
        nodes=(node,),
        env=env,
        argv=argv,
        log_file=fields.pop("log_file", f"{name}.out"),
        phase=phase,
        **fields,
    )


def plan(
    *processes: ProcessSpec,
    health: HealthGate | None = None,
    serve_only: bool = False,
    teardown: tuple[ProcessSpec, ...] = (),
    files: tuple[GeneratedFile, ...] = (),
    **fields: Any,
) -> JobPlan:
    """A local JobPlan around ``processes`` (``fields``: further JobPlan fields)."""
    fields.setdefault("frontend_url", "http://127.0.0.1:1")
    return JobPlan(
        job_id="4242",
        job_name="test-job",
        nodes=("node-01", "node-02"),
        node_roles=NodeRoles(head="node-01", infra="node-01", bench="node-01"),
        container_runtime="none",
        launcher="local",
        processes=processes,
        files=files,
        health=health or HealthGate(family="none", url=""),
        served_model_name="test-model",
        serve_only=serve_only,
        teardown=teardown,
        **fields,
    )


@dataclass
class Run:
    """What a finished run left behind."""

    exit_code: int
    diagnosis: str
    job_dir: Path
    events: list[dict[str, Any]] = field(default_factory=list)
    #: Every line of status_events.jsonl, decoded with the runtime's structs.
    records: list[RunEvent] = field(default_factory=list)

    def processes(self) -> list[tuple[str, str]]:
        """(what, launch name) of every process event, in order."""
        return [(e.what, e.name) for e in self.records if isinstance(e, ProcessEvent)]

    @property
    def stages(self) -> list[tuple[str, str]]:
        return [(e["stage"], e["status"]) for e in self.events]

    def log(self, name: str) -> str:
        return (self.job_dir / "logs" / name).read_text(errors="replace")


def read_records(job_dir: Path) -> list[RunEvent]:
    return decode_event_lines((job_dir / "status_events.jsonl").read_bytes())


def read_events(job_dir: Path) -> list[dict[str, Any]]:
    """The stage changes (StatusEvent lines) as plain dicts."""
    return [msgspec.to_builtins(e) for e in read_records(job_dir) if isinstance(e, StatusEvent)]


def execute(
    job_plan: JobPlan,
    job_dir: Path,
    *,
    clock: Any = None,
    on_status: Any = None,
    before_final: Any = None,
) -> Run:
    """Run ``job_plan`` in this process with the LocalLauncher; ``on_status(sup, stage, status)``
    is called on every status event (tests use it to request a stop at a given stage)."""
    clock = clock or SystemClock()
    log_dir = job_dir / "logs"
    launcher = LocalLauncher(log_dir)
    # The supervisor's log goes to the sweep log (as under `python -m srt_runtime`), so scripted
    # processes can `await` a decision the supervisor logged before they go on.
    logger = logging.getLogger(f"srt_runtime.test.{uuid.uuid4().hex}")
    logger.setLevel(logging.INFO)
    handler = logging.FileHandler(sweep_log(job_dir))
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    logger.addHandler(handler)
    events = EventLog(job_dir, job_plan.job_id, clock)
    sup = Supervisor(job_plan, launcher, log_dir=log_dir, clock=clock, logger=logger, events=events)
    sink = FileStatusSink(job_dir, job_plan.job_id, clock, log=events)
    hooked = HookSink(sink, lambda stage, status: on_status and on_status(sup, stage, status))
    try:
        result = run_job(
            job_plan,
            launcher,
            hooked,
            job_dir=job_dir,
            clock=clock,
            supervisor=sup,
            before_final=before_final,
        )
    finally:
        logger.removeHandler(handler)
        handler.close()
    return Run(
        exit_code=result.exit_code,
        diagnosis=result.diagnosis,
        job_dir=job_dir,
        events=read_events(job_dir),
        records=read_records(job_dir),
    )


def wait_for_text(path: Path, text: str, timeout: float = 60.0) -> None:
    """Block until ``path`` contains ``text`` (a scripted process reached a step)."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        time.sleep(0.01)
    raise AssertionError(f"{path} never contained {text!r}")
