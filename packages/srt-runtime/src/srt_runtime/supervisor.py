"""The supervisor core: the process table, the event pump, failure and restart decisions.

Threads only produce events (a child exited, a fatal line appeared); every decision is taken on
the main thread inside :meth:`Supervisor.wait_for`, which every stage uses to wait. A critical
failure or a stop request makes the next wait raise :class:`~srt_runtime.errors.AbortError`.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Callable
from pathlib import Path
from typing import assert_never

import msgspec

from srt_planner.plan import JobPlan, ProcessSpec
from srt_runtime.clock import Clock
from srt_runtime.diagnosis import Failure
from srt_runtime.errors import AbortError, LaunchError
from srt_runtime.events import EventQueue, FatalLine, ProcessExited, watch_exit
from srt_runtime.launch import Launcher, resolve_log_path
from srt_runtime.logscan import LogScanner, LogTailer
from srt_runtime.ports import check_port_owner
from srt_runtime.probe_check import check_probe
from srt_runtime.process import Endpoint, Proc, is_oneshot
from srt_runtime.restart import RestartBook, RestartEvent, backoff_for, decide
from srt_runtime.status import EventLog, ProcessWhat
from srt_schema.timestamps import iso_millis_offset

__all__ = ["Supervisor"]

#: How often a wait wakes up to notice a stop request from a signal handler.
_WAKE_SECONDS = 0.1


def restart_unit(spec: ProcessSpec) -> str:
    """The key a process restarts under: (role, index, engine), so a vLLM shadow engine restarts
    on its own, never together with its serving engine (docs/planner.md#failure-and-restart)."""
    base = f"{spec.role}_{spec.index}"
    return f"{base}_e{spec.engine}" if spec.engine else base


class Supervisor:
    """Owns every process of one run and decides what their exits mean."""

    def __init__(
        self,
        plan: JobPlan,
        launcher: Launcher,
        *,
        log_dir: Path,
        clock: Clock,
        logger: logging.Logger | None = None,
        tail_interval: float = 0.1,
        events: EventLog | None = None,
    ) -> None:
        self.plan = plan
        self.launcher = launcher
        self.log_dir = log_dir
        self.clock = clock
        self.log = logger or logging.getLogger("srt_runtime")
        #: Where process started / ready / exited / restarted go (``status_events.jsonl``).
        self.events = events
        self.procs: list[Proc] = []
        self.failure: Failure | None = None
        self.stop_reason: str | None = None
        #: The run reached the plan's time limit (a local run; Slurm enforces it on a cluster).
        self.timed_out = False
        limit = plan.time_limit_seconds
        self._limit_at = None if limit is None else clock.monotonic() + limit
        self.cleaning = False
        self._stop_logged = False
        self.restarts = RestartBook(log_dir / "worker_restarts.json")
        self._by_name: dict[str, Proc] = {}
        self._queue = EventQueue()
        self._endpoints: dict[str, Endpoint] = {}
        self._tailer = LogTailer(self._on_match, interval=tail_interval)
        self._tailer.start()
        for spec in plan.processes:
            if spec.restart.policy != "never" and not is_oneshot(spec):
                key = restart_unit(spec)
                self._endpoints.setdefault(key, Endpoint(key=key, specs=[])).specs.append(spec)
                self.restarts.track(key, spec.restart)

    # -- starting --------------------------------------------------------------------------

    def start(self, spec: ProcessSpec, *, base: ProcessSpec | None = None) -> Proc:
        """Launch ``spec``, register it and watch its exit and (if it has patterns) its log."""
        log_path = resolve_log_path(self.log_dir, spec.log_file)
        self.log.info(
            "Starting %s on %s: %s (log %s)",
            spec.name,
            spec.nodes[0],
            " ".join(spec.argv),
            log_path,
        )
        handle = self.launcher.start(spec)
        proc = Proc(
            spec=spec, base=base or spec, handle=handle, log_path=log_path, seq=len(self.procs)
        )
        self.procs.append(proc)
        self._by_name[spec.name] = proc
        self.record("started", proc)

        def _exited() -> None:
            proc.exit_code = handle.poll()
            # On the waiting thread, so exits during cleanup are recorded too (EventLog locks).
            self.record("exited", proc, -1 if proc.exit_code is None else proc.exit_code)
            proc.done.set()

        watch_exit(spec.name, handle, self._queue, self.clock, on_exit=_exited)
        if spec.fatal_log_patterns:
            self._tailer.watch(spec.name, LogScanner(log_path, spec.fatal_log_patterns))
        return proc

    def record(self, what: ProcessWhat, proc: Proc, exit_code: int | None = None) -> None:
        """Append a process event (if this run keeps an event log)."""
        self._record(what, proc.spec, proc.base, exit_code)

    def _record(
        self, what: ProcessWhat, spec: ProcessSpec, base: ProcessSpec, exit_code: int | None = None
    ) -> None:
        if self.events is not None:
            self.events.process(
                what,
                name=spec.name,
                process=base.name,
                kind=spec.kind,
                node=spec.nodes[0],
                exit_code=exit_code,
            )

    def _on_match(self, name: str, line: str) -> None:
        self._queue.put(FatalLine(name=name, line=line, at=self.clock.monotonic()))

    # -- waiting ---------------------------------------------------------------------------

    def request_stop(self, reason: str) -> None:
        """Ask the run to stop (safe to call from a signal handler: one attribute store)."""
        if self.stop_reason is None:
            self.stop_reason = reason

    def _check_time_limit(self, now: float) -> None:
        if self._limit_at is None or now < self._limit_at or self.stop_reason is not None:
            return
        self.timed_out = True
        self.request_stop(f"time limit {self.plan.time_limit} reached")

    def check(self) -> None:
        """Raise AbortError if a failure was detected or a stop was requested (the time limit
        is one)."""
        if not self.cleaning:
            self._check_time_limit(self.clock.monotonic())
        if self.failure is not None:
            raise AbortError(self.failure.reason)
        if self.stop_reason is not None:
            if not self._stop_logged:
                self._stop_logged = True
                reason = self.stop_reason
                self.log.warning("%s, initiating cleanup...", reason[:1].upper() + reason[1:])
            raise AbortError(self.stop_reason)

    def wait_for(self, until: Callable[[], bool], timeout: float | None) -> bool:
        """Handle events until ``until()`` holds (True) or ``timeout`` seconds passed (False)."""
        deadline = None if timeout is None else self.clock.monotonic() + timeout
        while True:
            self.check()
            if until():
                return True
            now = self.clock.monotonic()
            self._relaunch_due(now)
            self._check_relaunched(now)
            if deadline is not None and now >= deadline:
                return False
            slice_ = _WAKE_SECONDS if deadline is None else min(_WAKE_SECONDS, deadline - now)
            if self._limit_at is not None:
                slice_ = max(0.0, min(slice_, self._limit_at - now))
            due = [e.due for e in self._endpoints.values() if e.due is not None]
            if due:
                slice_ = max(0.0, min(slice_, min(due) - now))
            self.clock.wait(self._queue.ready, slice_)
            self.process_events()

    def sleep(self, seconds: float) -> None:
        self.wait_for(lambda: False, seconds)

    def process_events(self) -> None:
        for event in self._queue.drain():
            proc = self._by_name.get(event.name)
            if proc is None:
                continue
            match event:
                case ProcessExited():
                    self._on_exit(proc, event)
                case FatalLine():
                    self._on_fatal(proc, event)

    # -- decisions -------------------------------------------------------------------------

    def fail(self, failure: Failure) -> None:
        """Record the run's first failure (later ones are consequences and only logged)."""
        if self.failure is None:
            self.failure = failure
            self.log.error("Run failed: %s", failure.reason)
        else:
            self.log.warning("Further failure (after the first): %s", failure.reason)

    def _proc_failure(self, proc: Proc, *, code: int | None, line: str | None, at: float) -> None:
        why = f"exited with code {code}" if line is None else f"printed a fatal line: {line}"
        reason = f"{proc.spec.name} ({proc.spec.kind} {proc.spec.role}) on {proc.node} {why}"
        if self.failure is None:
            self.log.error("Critical process failure detected!")
        self.fail(
            Failure(
                what=proc.spec.name,
                node=proc.node,
                exit_code=code,
                log_line=line,
                log_path=str(proc.log_path),
                reason=reason,
                seen_at=at,
                detected_at=self.clock.monotonic(),
            )
        )

    def _on_exit(self, proc: Proc, event: ProcessExited) -> None:
        self._tailer.unwatch(proc.spec.name)
        if proc.stopping or self.cleaning or is_oneshot(proc.spec):
            return
        endpoint = self._endpoint_of(proc)
        if endpoint is not None:
            if endpoint.due is not None:
                return
            if self._maybe_restart(endpoint, proc, event.code, None, event.at):
                return
        if proc.spec.terminal:
            self.log.info("Terminal %s exited with code %d", proc.spec.name, event.code)
        elif event.code != 0 and proc.spec.critical:
            self._proc_failure(proc, code=event.code, line=None, at=event.at)
        elif event.code != 0:
            self.log.warning(
                "Non-critical %s on %s exited with code %d; see %s",
                proc.spec.name,
                proc.node,
                event.code,
                proc.log_path,
            )
        else:
            self.log.info("%s on %s exited with code 0", proc.spec.name, proc.node)

    def _on_fatal(self, proc: Proc, event: FatalLine) -> None:
        if proc.done.is_set() or proc.stopping or self.cleaning or proc.fatal_line is not None:
            return
        proc.fatal_line = event.line
        endpoint = self._endpoint_of(proc)
        if (
            endpoint is not None
            and endpoint.due is None
            and self._maybe_restart(endpoint, proc, 1, event.line, event.at)
        ):
            return
        if proc.spec.critical:
            self._proc_failure(proc, code=None, line=event.line, at=event.at)
        else:
            self.log.warning(
                "Non-critical %s on %s printed a fatal line: %s",
                proc.spec.name,
                proc.node,
                event.line,
            )

    def _endpoint_of(self, proc: Proc) -> Endpoint | None:
        return (
            self._endpoints.get(restart_unit(proc.base))
            if (proc.base.restart.policy != "never" and not is_oneshot(proc.base))
            else None
        )

    def _maybe_restart(
        self, ep: Endpoint, proc: Proc, code: int, line: str | None, at: float
    ) -> bool:
        spec = proc.base.restart
        decision = decide(spec, ep.restarts, code)
        event = RestartEvent(
            worker=proc.spec.name,
            mode=proc.base.role,
            index=proc.base.index,
            node=proc.node,
            attempt=ep.restarts + 1,
            exit_code=code,
            exited_at=iso_millis_offset(self.clock.wall() - (self.clock.monotonic() - at)),
            outcome="scheduled",
            crash_log=str(proc.log_path),
            reason=line,
            engine=str(proc.base.engine) if proc.base.engine else None,
        )
        if decision == "release":
            return False
        if decision == "exhausted":
            event.outcome = "exhausted"
            self.restarts.add(event)
            self.log.warning(
                "%s: restart budget spent (%d of %d)", ep.key, ep.restarts, spec.max_restarts
            )
            return False
        event.backoff_seconds = backoff_for(spec, ep.restarts)
        ep.pending = self.restarts.add(event)
        ep.due = at + event.backoff_seconds
        self.log.warning(
            "%s: %s; relaunch %d of %d in %.1f s",
            ep.key,
            f"exit code {code}" if line is None else f"fatal line {line!r}",
            ep.restarts + 1,
            spec.max_restarts,
            event.backoff_seconds,
        )
        for sibling in self._current(ep):
            if not sibling.done.is_set():
                sibling.stopping = True
                sibling.handle.signal(signal.SIGTERM)
        return True

    def _current(self, ep: Endpoint) -> list[Proc]:
        names = {self._launch_name(s, ep.restarts) for s in ep.specs}
        return [self._by_name[n] for n in names if n in self._by_name]

    @staticmethod
    def _launch_name(spec: ProcessSpec, restarts: int) -> str:
        return spec.name if restarts == 0 else f"{spec.name}_r{restarts}"

    def _relaunch_due(self, now: float) -> None:
        for ep in self._endpoints.values():
            if ep.due is None or now < ep.due or self.cleaning:
                continue
            old = self._current(ep)
            for proc in old:
                if not proc.done.is_set():
                    proc.handle.kill()
                    proc.done.wait(5.0)
            ep.restarts += 1
            ep.due = None
            for proc in old:
                self._by_name.pop(proc.spec.name, None)
                proc.handle.release()
                if proc.log_path.exists():
                    proc.log_path.rename(
                        proc.log_path.with_name(f"{proc.log_path.name}.{ep.restarts}")
                    )
            try:
                for spec in ep.specs:
                    renamed = msgspec.structs.replace(
                        spec, name=self._launch_name(spec, ep.restarts)
                    )
                    self._record("restarted", renamed, spec)
                    self.start(renamed, base=spec)
            except LaunchError as exc:
                self.log.error("%s: relaunch failed: %s", ep.key, exc)
                if ep.pending is not None:
                    ep.pending.outcome = "launch_failed"
                    self.restarts.write()
                if ep.specs[0].critical:
                    self.fail(
                        Failure(
                            what=ep.specs[0].name,
                            node=ep.specs[0].nodes[0],
                            reason=f"relaunch of {ep.key} failed: {exc}",
                            detected_at=now,
                        )
                    )
                continue
            if ep.pending is not None:
                self.restarts.relaunched(ep.pending, iso_millis_offset(self.clock.wall()))
            probe = ep.specs[0].readiness
            if probe is not None:
                ep.relaunched_at = now
                ep.next_probe = now
                ep.ready_deadline = now + probe.timeout_seconds
            self.log.info(
                "%s: relaunched as %s", ep.key, self._launch_name(ep.specs[0], ep.restarts)
            )

    def _check_relaunched(self, now: float) -> None:
        """Poll a relaunched endpoint's leader probe (at its interval) and record readiness."""
        for ep in self._endpoints.values():
            probe = ep.specs[0].readiness
            if ep.ready_deadline is None or probe is None or now < ep.next_probe:
                continue
            leader = self._by_name.get(self._launch_name(ep.specs[0], ep.restarts))
            if leader is None or leader.done.is_set():
                ep.ready_deadline = None
            elif check_probe(probe, leader.log_path):
                ep.ready_deadline = None
                self.record("ready", leader)
                if ep.pending is not None:
                    ep.pending.ready_at = iso_millis_offset(self.clock.wall())
                    ep.pending.ready_seconds = round(now - ep.relaunched_at, 3)
                    self.restarts.write()
                self.log.info(
                    "%s: %s ready after %.1f s", ep.key, leader.spec.name, now - ep.relaunched_at
                )
            elif now >= ep.ready_deadline:
                ep.ready_deadline = None
                self.log.warning(
                    "%s: %s not ready %g s after its relaunch (left running)",
                    ep.key,
                    leader.spec.name,
                    probe.timeout_seconds,
                )
            else:
                ep.next_probe = now + probe.interval_seconds

    def check_gate_owner(self) -> None:
        """After the health gate: it talked to this job (HealthGateError if not).

        Local launcher: the gate's port must be held by one of this job's live process groups
        (each local process leads its group). Slurm: the port is on a node of this job's own
        allocation, so there is nothing to check from here.
        """
        match self.plan.launcher:
            case "slurm":
                return
            case "local":
                groups = {p.handle.pid for p in self.procs if not p.done.is_set()}
                check_port_owner(self.plan.health.url, groups)
            case _:
                assert_never(self.plan.launcher)

    def latest(self, base_name: str) -> Proc:
        """The most recent launch of the planned process ``base_name``."""
        return next(p for p in reversed(self.procs) if p.base.name == base_name)

    def restart_pending(self, proc: Proc) -> bool:
        """Whether ``proc``'s endpoint is waiting to relaunch it."""
        endpoint = self._endpoint_of(proc)
        return endpoint is not None and endpoint.due is not None

    def close(self) -> None:
        self._tailer.stop()

    def running(self) -> list[Proc]:
        return [p for p in self.procs if not p.done.is_set()]
