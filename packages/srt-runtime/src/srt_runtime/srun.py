"""The Slurm launcher: one named ``srun --overlap`` step per process, signalled through its step.

The planner renders ``ProcessSpec.srun_argv``; when it is empty (hand-written plans) a bare step
is built here. A graceful stop goes through ``scancel --signal=TERM --full <job>.<step>`` so
engines can deregister; the escalation is SIGTERM to the ``srun`` client (Slurm aborts the step)
and then SIGKILL. Short Slurm commands run through an injectable :data:`CommandRunner`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from srt_planner.plan import ProcessSpec
from srt_runtime.errors import LaunchError
from srt_runtime.launch import PopenHandle, build_env, resolve_log_path

__all__ = [
    "CommandRunner",
    "SrunHandle",
    "SrunLauncher",
    "build_scancel_argv",
    "build_srun_argv",
    "parse_steps",
    "run_command",
]

#: Runs a short command and returns (exit code, stdout).
CommandRunner = Callable[[Sequence[str]], tuple[int, str]]

_ESCALATION_SECONDS = 5.0


def run_command(argv: Sequence[str]) -> tuple[int, str]:
    """The real :data:`CommandRunner` (30 s limit; a missing program is exit code 127)."""
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=30, check=False)
    except FileNotFoundError:
        return 127, ""
    except subprocess.TimeoutExpired:
        return 124, ""
    return done.returncode, done.stdout


def build_srun_argv(spec: ProcessSpec, *, job_id: str, log_path: Path) -> tuple[str, ...]:
    """The step's command line: the plan's ``srun_argv``, else a bare named overlap step."""
    if spec.srun_argv:
        return spec.srun_argv
    argv = ["srun", "--jobid", job_id, "--overlap"]
    argv += ["--nodes", str(len(spec.nodes)), "--ntasks", str(len(spec.nodes))]
    argv += ["--nodelist", ",".join(spec.nodes)]
    if spec.het_group is not None:
        argv.append(f"--het-group={spec.het_group}")
    argv += ["--output", str(log_path)]
    if spec.container is not None:
        argv += ["--container-image", spec.container.image]
        argv += ["--no-container-entrypoint", "--no-container-mount-home"]
        if spec.container.mounts:
            mounts = ",".join(
                f"{m.host}:{m.container}" + (":ro" if m.readonly else "")
                for m in spec.container.mounts
            )
            argv += ["--container-mounts", mounts]
        if spec.container.remap_root:
            argv.append("--container-remap-root")
    argv.append(f"--job-name={spec.name}")
    return (*argv, *spec.argv)


def parse_steps(squeue_output: str) -> dict[str, str]:
    """``squeue --steps --noheader --format='%i %j'`` output -> {step name: step id}."""
    steps: dict[str, str] = {}
    for line in squeue_output.splitlines():
        parts = line.split()
        if len(parts) == 2:
            steps.setdefault(parts[1], parts[0])
    return steps


def build_scancel_argv(step_id: str, sig: int) -> tuple[str, ...]:
    """Signal every task of one step (``--full`` also reaches the batch shell's children)."""
    name = signal.Signals(sig).name.removeprefix("SIG")
    return ("scancel", f"--signal={name}", "--full", step_id)


class SrunHandle(PopenHandle):
    """The ``srun`` client of one named step."""

    def __init__(
        self, popen: subprocess.Popen[bytes], *, job_id: str, step: str, runner: CommandRunner
    ) -> None:
        super().__init__(popen)
        self._job_id = job_id
        self._step = step
        self._runner = runner

    def _signal_client(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self._popen.pid, sig)

    def signal(self, sig: int) -> None:
        code, out = self._runner(
            ("squeue", "--steps", f"--jobs={self._job_id}", "--noheader", "--format=%i %j")
        )
        step_id = parse_steps(out).get(self._step) if code == 0 else None
        # Once scancel ran, its exit code is not trusted: in a multi-node job Slurm 22.05 asks
        # every node of the job and fails ("Invalid job id specified") on those without the step,
        # although the step got the signal. Signalling the srun client instead would abort the
        # step at once (SIGKILL to its tasks), so a failed scancel is left to the stop grace
        # and the kill() escalation.
        if step_id is not None and self._runner(build_scancel_argv(step_id, sig))[0] != 127:
            return
        # No scancel (or the step is not listed yet): signal the srun client directly.
        self._signal_client(sig)

    def kill(self) -> None:
        self._signal_client(signal.SIGTERM)
        if self.wait(_ESCALATION_SECONDS) is None:
            self._signal_client(signal.SIGKILL)

    def release(self) -> None:
        """Slurm kills what is left of a step when the job ends."""


class SrunLauncher:
    """Starts each process as an ``srun`` step of the current job.

    ``python``: with container runtime ``none``, the interpreter whose ``bin/`` leads the steps'
    ``PATH`` (the node sees the same path on the shared filesystem).
    """

    def __init__(
        self,
        log_dir: Path,
        *,
        job_id: str,
        srun: str = "srun",
        runner: CommandRunner = run_command,
        base_env: Mapping[str, str] | None = None,
        python: str | None = None,
    ) -> None:
        self._log_dir = log_dir
        self._python = python
        self._job_id = job_id
        self._srun = srun
        self._runner = runner
        self._base_env = dict(os.environ if base_env is None else base_env)

    def start(self, spec: ProcessSpec) -> SrunHandle:
        log_path = resolve_log_path(self._log_dir, spec.log_file)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        argv = list(build_srun_argv(spec, job_id=self._job_id, log_path=log_path))
        if argv and argv[0] == "srun":
            argv[0] = self._srun
        # The step inherits the srun client's environment (srun's default --export=ALL); with
        # container runtime `none` the interpreter's bin/ leads PATH (python3, console scripts).
        env = build_env(self._base_env, spec.env, self._python)
        try:
            with log_path.open("ab") as log:
                popen = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=env,
                    start_new_session=True,
                )
        except OSError as exc:
            raise LaunchError(
                f"cannot start step {spec.name!r} on {','.join(spec.nodes)}: {argv[0]!r}: "
                f"{exc.strerror}; is Slurm's srun on PATH inside the allocation?"
            ) from exc
        return SrunHandle(popen, job_id=self._job_id, step=spec.name, runner=self._runner)
