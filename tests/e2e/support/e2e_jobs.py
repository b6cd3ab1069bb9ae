"""Drive ``srtctl apply`` against the session's slurm-lab cluster and read what a job left behind.

``SrtOnSlurm`` owns one generated ``srtslurm.yaml`` (container runtime ``none``, the workspace
interpreter, the cluster's partition) and one output folder on the shared filesystem. Tests submit
with ``apply`` (the real CLI, the real ``sbatch``), wait with ``wait`` (``status.json`` plus
``squeue``, bounded) and, when an assertion fails, ``diagnose`` prints the job's diagnosis and the
tail of every log of the job (the conftest attaches it to the failure report).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
MODEL = REPO / "examples" / "models" / "tiny-word"
RECIPES = Path(__file__).resolve().parents[1] / "recipes"
FINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
LOG_TAIL_LINES = 25
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # Dynamo colours its logs
GONE_GRACE_S = 5.0  # a job out of squeue has this long to show its final status.json


class E2EJobError(Exception):
    """A job of the e2e tier could not be submitted or did not end as expected."""


@dataclass(frozen=True, kw_only=True)
class Submission:
    """One job ``srtctl apply --json`` reported as submitted."""

    job_id: str
    job_name: str
    job_dir: Path


@dataclass
class SrtOnSlurm:
    """srtctl pointed at one slurm-lab cluster through a generated srtslurm.yaml."""

    slurm_conf: Path
    config_path: Path
    output_dir: Path
    pmix_dir: Path
    nodes: tuple[str, ...]
    submitted: list[Submission] = field(default_factory=list)

    @classmethod
    def create(
        cls,
        *,
        slurm_conf: Path,
        partition: str,
        nodes: Sequence[str],
        gpus_per_node: int,
        workdir: Path,
    ) -> SrtOnSlurm:
        output_dir = workdir / "outputs"
        output_dir.mkdir(parents=True, exist_ok=True)
        # Slurm's PMIx plugin puts a per-step folder under this base; every "node" shares this
        # machine's /tmp, so a per-cluster base keeps two sessions' steps from colliding.
        pmix_dir = workdir / "pmix"
        pmix_dir.mkdir(parents=True, exist_ok=True)
        config = workdir / "srtslurm.yaml"
        lines = {
            "container_runtime": "none",
            "runtime_python": sys.executable,
            "gpus_per_node": gpus_per_node,
            "default_partition": partition,
            "default_account": "e2e",
            "output_dir": str(output_dir),
            # Slurm 22.05 has no --segment; the lab is one flat partition.
            "use_segment_sbatch_directive": False,
            "default_time_limit": "00:10:00",
            "preflight": True,
        }
        _write_config(config, lines)
        return cls(
            slurm_conf=slurm_conf,
            config_path=config,
            output_dir=output_dir,
            pmix_dir=pmix_dir,
            nodes=tuple(nodes),
        )

    def config_variant(self, name: str, **changes: object) -> Path:
        """A copy of the session's srtslurm.yaml with ``changes`` (pass it as SRTSLURM_CONFIG)."""
        import yaml

        lines = yaml.safe_load(self.config_path.read_text())
        lines.update(changes)
        path = self.config_path.with_name(f"srtslurm-{name}.yaml")
        _write_config(path, lines)
        return path

    def wait_for_stage(self, job: Submission, stage: str, *, timeout: float = 60.0) -> None:
        """Wait until ``status.json`` says the job is running ``stage``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status = self.status(job) or {}
            if status.get("stage") == stage and status.get("status") == "running":
                return
            if status.get("status") in FINAL_STATUSES:
                break
            time.sleep(0.2)
        raise E2EJobError(f"job {job.job_id} did not reach stage {stage!r}: {self.status(job)}")

    def task_environ(self, job: Submission, step_name: str) -> dict[str, str]:
        """The environment of the task of srun step ``step_name`` of the job."""
        pid = self.find_step_task(job, step_name)
        for found, _, env in self._job_processes(job.job_id):
            if found == pid:
                return env
        raise E2EJobError(f"job {job.job_id}: step {step_name!r} ended while being read")

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        prefixes = ("SLURM_", "SBATCH_", "SRUN_", "SALLOC_", "SLURMLAB_", "SRTCTL_", "SRTSLURM_")
        env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
        env["SLURM_CONF"] = str(self.slurm_conf)
        env["SLURM_PMIX_TMPDIR"] = str(self.pmix_dir)
        env["SRTSLURM_CONFIG"] = str(self.config_path)
        env.pop("RUNNER_NAME", None)
        env.update(extra or {})
        return env

    def run(
        self, args: Sequence[str], *, timeout: float = 60.0
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(args),
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def apply(
        self, recipe: Path, *args: str, env: Mapping[str, str] | None = None
    ) -> list[Submission]:
        """``srtctl apply -y --json -f recipe args...`` with the tiny-word model (recipes in the
        repository cannot hold its absolute path); every job it reports as submitted."""
        srtctl = Path(sys.executable).parent / "srtctl"
        model = f"model.path={MODEL}"
        cmd = [str(srtctl), "apply", "-y", "--json", "-f", str(recipe), "--set", model, *args]
        proc = subprocess.run(
            cmd, env=self.env(env), capture_output=True, text=True, timeout=120, check=False
        )
        rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        jobs = [
            Submission(
                job_id=str(r["slurm_job_id"]),
                job_name=str(r["job_name"]),
                job_dir=Path(r["output_dir"]),
            )
            for r in rows
            if r.get("status") == "submitted"
        ]
        self.submitted.extend(jobs)
        if proc.returncode != 0 or not jobs or len(jobs) != len(rows):
            raise E2EJobError(
                f"{' '.join(cmd)} exited {proc.returncode} with {len(jobs)} submission(s):\n"
                f"stdout: {proc.stdout}\nstderr: {proc.stderr}"
            )
        return jobs

    def apply_one(
        self, recipe: Path, *args: str, env: Mapping[str, str] | None = None
    ) -> Submission:
        jobs = self.apply(recipe, *args, env=env)
        if len(jobs) != 1:
            raise E2EJobError(f"{recipe} submitted {len(jobs)} jobs, expected one")
        return jobs[0]

    def in_queue(self, job_id: str) -> bool:
        proc = self.run(["squeue", "-h", "-j", job_id, "-o", "%i %T"])
        # squeue exits non-zero ("Invalid job id") once the controller has forgotten the job
        return proc.returncode == 0 and any(
            line.split()[0] == job_id for line in proc.stdout.splitlines() if line.strip()
        )

    def status(self, job: Submission) -> dict[str, Any] | None:
        try:
            value = json.loads((job.job_dir / "status.json").read_text())
        except (OSError, ValueError):
            return None
        return value if isinstance(value, dict) else None

    def wait(self, job: Submission, *, timeout: float = 90.0) -> dict[str, Any]:
        """Poll until the job left the queue and ``status.json`` holds a final status."""
        deadline = time.monotonic() + timeout
        left_queue: float | None = None
        while True:
            status = self.status(job)
            final = status is not None and status.get("status") in FINAL_STATUSES
            queued = self.in_queue(job.job_id)
            if final and not queued:
                assert status is not None
                return status
            if not queued:
                left_queue = left_queue or time.monotonic()
                if time.monotonic() - left_queue > GONE_GRACE_S:
                    raise E2EJobError(
                        f"job {job.job_id} left the queue without a final status.json: {status}"
                    )
            if time.monotonic() > deadline:
                raise E2EJobError(
                    f"job {job.job_id} not over after {timeout:.0f} s "
                    f"(status.json: {status}, in squeue: {self.in_queue(job.job_id)})"
                )
            time.sleep(0.25)

    def wait_for_line(self, path: Path, needle: str, *, timeout: float = 60.0) -> str:
        """Wait until ``path`` has a line containing ``needle``; return that line."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                for line in path.read_text(errors="replace").splitlines():
                    if needle in line:
                        return line
            except OSError:
                pass
            time.sleep(0.1)
        raise E2EJobError(f"{path} has no line with {needle!r} after {timeout:.0f} s")

    def events(self, job: Submission) -> list[dict[str, Any]]:
        """The stage changes (``event: status`` lines; process, health and progress events
        share the file)."""
        path = job.job_dir / "status_events.jsonl"
        lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        return [e for e in lines if e.get("event", "status") == "status"]

    def sweep_log(self, job: Submission) -> str:
        return (job.job_dir / "logs" / f"sweep_{job.job_id}.log").read_text(errors="replace")

    def processes(self, job: Submission) -> list[tuple[int, str]]:
        """Live processes of this job on any node (all nodes share this machine's PIDs): those
        whose environment has this job's ``SLURM_JOB_ID`` and this cluster's ``SLURM_CONF``."""
        return [(pid, cmd) for pid, cmd, _ in self._job_processes(job.job_id)]

    def find_process(self, job: Submission, needle: str, *, node: str | None = None) -> int:
        """The PID of the job's process whose command line contains ``needle``."""
        found = [
            pid
            for pid, cmd, env in self._job_processes(job.job_id)
            if needle in cmd
            and "srun" not in cmd.split(" ", 1)[0]
            and (node is None or env.get("SLURMD_NODENAME") == node)
        ]
        if len(found) != 1:
            raise E2EJobError(f"job {job.job_id}: {len(found)} processes match {needle!r}")
        return found[0]

    def find_step_task(self, job: Submission, step_name: str) -> int:
        """The PID of the task that srun step ``step_name`` of the job runs (Slurm sets the
        step's name as ``SLURM_JOB_NAME`` in its tasks; the task's parent is slurmstepd)."""
        found = [
            pid
            for pid, _, env in self._job_processes(job.job_id)
            if env.get("SLURM_JOB_NAME") == step_name and _parent_name(pid) == "slurmstepd"
        ]
        if len(found) != 1:
            raise E2EJobError(f"job {job.job_id}: {len(found)} tasks of step {step_name!r}")
        return found[0]

    def kill(self, pid: int) -> None:
        os.kill(pid, signal.SIGKILL)

    def _job_processes(self, job_id: str) -> list[tuple[int, str, dict[str, str]]]:
        me = os.getpid()
        found = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit() or int(proc.name) == me:
                continue
            try:
                raw_env = (proc / "environ").read_bytes().split(b"\0")
                argv = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
                state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state in ("Z", "X"):
                continue
            env = dict(
                item.decode(errors="replace").split("=", 1) for item in raw_env if b"=" in item
            )
            if env.get("SLURM_JOB_ID") == job_id and env.get("SLURM_CONF") == str(self.slurm_conf):
                found.append((int(proc.name), " ".join(a for a in argv if a), env))
        return found

    def diagnose(self, job: Submission) -> str:
        """The job's status, its diagnosis and the tail of every log it wrote."""
        out = [f"=== job {job.job_id} ({job.job_name}) in {job.job_dir}"]
        out.append(f"in squeue: {self.in_queue(job.job_id)}")
        out.append(f"status.json: {self.status(job)}")
        logs = job.job_dir / "logs"
        sweep = logs / f"sweep_{job.job_id}.log"
        text = sweep.read_text(errors="replace") if sweep.exists() else ""
        start = text.rfind("RUN FAILED")
        out.append("diagnosis:\n" + (text[start:] if start >= 0 else "(none in the sweep log)"))
        files = sorted(p for p in logs.rglob("*") if p.is_file()) if logs.is_dir() else []
        for path in files:
            if path.suffix in (".parquet", ".html", ".arrow", ".csv") or path.name.endswith(
                ".json"
            ):
                continue
            lines = ANSI.sub("", path.read_text(errors="replace")).splitlines()
            tail = "\n".join(f"  | {line}" for line in lines[-LOG_TAIL_LINES:])
            out.append(f"--- {path.relative_to(job.job_dir)} (last {LOG_TAIL_LINES} lines)\n{tail}")
        return "\n".join(out)


def _write_config(path: Path, lines: Mapping[str, object]) -> None:
    path.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in lines.items()))


def _parent_name(pid: int) -> str:
    try:
        ppid = int((Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[1])
        return (Path("/proc") / str(ppid) / "comm").read_text().strip()
    except (OSError, IndexError, ValueError):
        return ""
