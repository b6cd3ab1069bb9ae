"""The Launcher protocol and the local launcher (plain subprocesses on this machine).

A launcher starts one :class:`~srt_planner.plan.ProcessSpec` and hands back a :class:`Handle`.
The supervisor never touches ``subprocess`` or signals directly; it goes through these.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Protocol

from srt_planner.plan import ProcessSpec
from srt_runtime.errors import LaunchError
from srt_runtime.ports import check_ports_free
from srt_runtime.watchdog import MARKER_VARIABLE, RECORD_NAME, record_process

__all__ = [
    "Handle",
    "Launcher",
    "LocalHandle",
    "LocalLauncher",
    "build_env",
    "build_local_argv",
    "resolve_log_path",
]


class Handle(Protocol):
    """A started process (a subprocess, or the ``srun`` client of a step)."""

    @property
    def pid(self) -> int: ...

    def poll(self) -> int | None:
        """The exit code if the process has exited (negative = killed by that signal)."""
        ...

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait for the exit; the exit code, or None if ``timeout`` passed first."""
        ...

    def signal(self, sig: int) -> None:
        """Deliver ``sig`` to the whole process (its process group or its Slurm step)."""
        ...

    def kill(self) -> None:
        """Stop it for sure (the escalation after a graceful signal)."""
        ...

    def release(self) -> None:
        """After the exit: make sure nothing the process started is left behind."""
        ...


class Launcher(Protocol):
    """Starts processes of a JobPlan (the plan, not the launcher, says which nodes exist)."""

    def start(self, spec: ProcessSpec) -> Handle: ...


def resolve_log_path(log_dir: Path, log_file: str) -> Path:
    """Where a process's log goes: ``log_file`` is relative to the log directory unless absolute."""
    path = Path(log_file)
    return path if path.is_absolute() else log_dir / path


def build_local_argv(
    argv: tuple[str, ...], python: str, preamble: tuple[str, ...] = ()
) -> list[str]:
    """Container runtime ``none``: a leading ``python``/``python3`` runs with ``python``; a
    step with a ``preamble`` runs it first (``bash -c "<preamble> && exec <argv>"``)."""
    program = [python, *argv[1:]] if argv and argv[0] in ("python", "python3") else list(argv)
    if not preamble:
        return program
    return ["bash", "-c", " && ".join([*preamble, "exec " + shlex.join(program)])]


def build_env(
    base: Mapping[str, str], spec_env: Mapping[str, str], python: str | None
) -> dict[str, str]:
    """The launcher's environment, ``python``'s ``bin/`` first on PATH, then the plan's env."""
    env = dict(base)
    if python is not None:
        # Console scripts of the chosen interpreter's environment (dynamo, srt-bench...) first.
        bin_dir = str(Path(python).parent)
        path = env.get("PATH", "")
        env["PATH"] = bin_dir if not path else f"{bin_dir}{os.pathsep}{path}"
    env.update(spec_env)
    return env


class PopenHandle:
    """What every handle over one ``subprocess.Popen`` shares: pid, poll and wait."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen

    @property
    def pid(self) -> int:
        return self._popen.pid

    def poll(self) -> int | None:
        # Only the waiting thread reaps; readers see the recorded code.
        return self._popen.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        try:
            return self._popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None


class LocalHandle(PopenHandle):
    """A subprocess in its own process group (signalled as a group)."""

    def signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._popen.pid, sig)

    def kill(self) -> None:
        self.signal(signal.SIGKILL)

    def release(self) -> None:
        # The group id stays valid while any member lives, so this only reaches our orphans.
        self.signal(signal.SIGKILL)


class LocalLauncher:
    """Runs every process of the plan as a subprocess of this machine.

    Every node of the plan maps to this host; the plan keeps ports distinct. ``python`` is the
    interpreter of container runtime ``none`` (default: the one running this code).

    Nothing outlives the job (``srt_runtime.watchdog``): every process leads its own group, is
    appended to :attr:`record` (``<log_dir>/local_processes.jsonl``) as it starts, and carries
    ``SRT_LOCAL_JOB=<token>``; the supervisor's watchdog kills them all if it dies. ``claims``
    (the plan's processes) are checked before the first start: every port they bind must be free
    on this host, else the start raises LaunchError naming the port and its holder.
    """

    def __init__(
        self,
        log_dir: Path,
        *,
        python: str = sys.executable,
        base_env: Mapping[str, str] | None = None,
        claims: Iterable[ProcessSpec] = (),
    ) -> None:
        self._log_dir = log_dir
        self._python = python
        self._base_env = dict(os.environ if base_env is None else base_env)
        self._claims: tuple[ProcessSpec, ...] | None = tuple(claims)
        #: The job marker every started process (and its descendants) carries.
        self.token = secrets.token_hex(16)
        #: The process record the watchdog reads (one JSON line per started process).
        self.record = log_dir / RECORD_NAME

    def start(self, spec: ProcessSpec) -> LocalHandle:
        if self._claims is not None:
            claims, self._claims = self._claims, None
            check_ports_free(claims)
        log_path = resolve_log_path(self._log_dir, spec.log_file)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        argv = build_local_argv(spec.argv, self._python, spec.preamble)
        env = build_env(self._base_env, spec.env, self._python)
        env[MARKER_VARIABLE] = self.token
        try:
            with log_path.open("ab") as log:
                popen = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=env,
                    cwd=self._log_dir,
                    start_new_session=True,
                )
        except OSError as exc:
            raise LaunchError(
                f"cannot start process {spec.name!r} on {spec.nodes[0]}: {argv[0]!r}: "
                f"{exc.strerror}; check the program exists in the environment of {self._python}"
            ) from exc
        self.record.parent.mkdir(parents=True, exist_ok=True)
        record_process(self.record, spec.name, popen.pid)
        return LocalHandle(popen)
