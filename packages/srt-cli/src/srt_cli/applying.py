"""The apply flow for one source: plan every job first, preflight, pin sources, then start each
job (sbatch, or the runtime here) and write its folder. Nothing is submitted for a source whose
jobs do not all load and plan. About 500 lines: the steps of one flow share the `Applier`'s state
(session, sweep record, resumer, stop signal); what builds a job's files is in `jobfiles`.
"""

from __future__ import annotations

import datetime as dt
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from srt_cli.errors import CliUsageError, SlurmError, translated
from srt_cli.inputs import Source
from srt_cli.safepaths import check_inside, writing
from srt_schema.timestamps import iso_seconds_z

if TYPE_CHECKING:
    from srt_cli.pinning import Pin
    from srt_cli.planning import PlannedJob
    from srt_cli.resuming import Resumer
    from srt_cli.session import Session
    from srt_cli.sweep_record import SweepWriter
    from srt_runtime.reporting.reproduce import ReproductionReference
    from srt_schema.job_files import JobRecord
    from srt_schema.load import LoadedJob

__all__ = ["Applier"]

LOCAL_ADDRESS = "127.0.0.1"


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _job_folder(base: Path, job_id: str) -> Path:
    return check_inside(
        base / job_id,
        base,
        what="the job folder",
        fix="a job id is digits (Slurm) or local-<time>; report this as a bug",
    )


@dataclass
class Applier:
    session: Session
    sbatch: str
    local: bool
    tags: list[str]
    serve_only: bool
    preflight: bool
    emit: Callable[[dict[str, Any]], None]
    say: Callable[[str], None]
    #: Records emitted so far (one per started job).
    records: int = 0
    local_failures: int = 0
    _used_ids: set[str] = field(default_factory=set)
    #: The sweep folder of the source being applied (srt_cli.sweep_record), if it is a sweep.
    _sweep: SweepWriter | None = None
    #: Point identities and ``--resume`` (srt_cli.resuming); None: neither.
    resumer: Resumer | None = None
    #: A stop signal (SIGINT/SIGTERM/SIGHUP) reached srtctl while a local job ran: the job
    #: stopped, and the source's remaining jobs are not started.
    stopped_by: int | None = None

    # ------------------------------------------------------------------ one source

    def apply_source(self, source: Source, *, force_sweep: bool) -> int:
        """Start every job of ``source``; returns how many were started."""
        planned = self.session.plan_source(
            source, serve_only=self.serve_only, force_sweep=force_sweep
        )
        if self.serve_only:
            if any(p.job.sweep_params for p in planned):
                raise CliUsageError(f"{source.label}: --serve-only does not support sweep configs")
            if len(planned) != 1:
                raise CliUsageError(
                    f"{source.label}: --serve-only requires an override selector that resolves "
                    f"to exactly one job (got {len(planned)})"
                )
        if self.local:
            # before anything is written (stand-in model, sweep record, job folder)
            for item in planned:
                self._check_ports(item)
        if self.session.stand_in is not None:
            self._write_stand_in_model(self.session.stand_in.model)
        checking = self.preflight and self.session.effective.preflight
        if checking and not self.local:
            self._preflight(planned)
        jobs = [p.job for p in planned]
        resumer = self.resumer
        continued = resumer.continued_sweep(jobs) if resumer is not None else None
        self._sweep = continued or self._start_sweep(source, jobs)
        if resumer is not None:
            planned = resumer.select(source, planned, self._sweep)
        started = 0
        for item in planned:
            if self.stopped_by is not None:
                self._say_stopped(source, len(planned) - started, len(planned))
                break
            job, pins = self._pin(item.job)
            if self.local:
                local = self._plan_local(job)
                if checking:
                    self._preflight([local])
                self._run_local(local, pins)
            else:
                self._submit(job, pins)
            started += 1
        return started

    def _say_stopped(self, source: Source, left: int, total: int) -> None:
        again = f"--resume {self._sweep.folder}" if self._sweep is not None else "--resume"
        self.say(
            f"stopped by signal {self.stopped_by}: {left} of {total} jobs of {source.label} not "
            f"started; srtctl apply {again} runs what is missing"
        )

    def _start_sweep(self, source: Source, jobs: list[LoadedJob]) -> SweepWriter | None:
        """`<output>/sweeps/<name>-<stamp>/sweep.json` for a sweep (docs/compare.md)."""
        if not any(job.sweep_params for job in jobs):
            return None
        from srt_cli.sweep_record import SweepWriter

        stamp = _now().strftime("%Y%m%dT%H%M%SZ")
        writer = SweepWriter.start(
            Path(self.session.output_base), jobs, source=source.label, stamp=stamp
        )
        self.say(f"sweep of {len(jobs)} jobs: {writer.folder}")
        return writer

    def _write_stand_in_model(self, folder: str) -> None:
        """The stand-in model (a tokenizer folder, srt_planner.stand_in) where every job of the
        stand-in mode reads it; rewritten only when its content differs."""
        from srt_planner.stand_in import stand_in_model_files

        target = Path(folder)
        with writing(target, what="the stand-in model folder"):
            target.mkdir(parents=True, exist_ok=True)
            for name, content in stand_in_model_files().items():
                path = target / name
                if not path.is_file() or path.read_text() != content:
                    path.write_text(content)

    def _preflight(self, planned: list[PlannedJob]) -> None:
        from srt_cli.preflight import check_job, preflight_path

        search_path = preflight_path(self.session.edge, self.session.python)
        problems: list[str] = []
        for item in planned:
            findings = check_job(
                item,
                self.session.cluster.config,
                search_path=search_path,
                python=self.session.python,
            )
            for f in findings:
                line = f"  {item.job.label}: {f.field}: {f.message}"
                if f.fatal:
                    problems.append(line)
                else:
                    self.say(f"warning:{line[1:]} (not critical; the job runs without it)")
        if problems:
            raise SlurmError(
                "preflight failed (nothing was submitted; --no-preflight skips it):\n"
                + "\n".join(problems)
            )

    def _pin(self, job: LoadedJob) -> tuple[LoadedJob, list[Pin]]:
        from srt_cli.pinning import find_unpinned, pin_document, resolve_rev

        if not any(True for _ in find_unpinned(job.document)):
            return job, []
        environ = self.session.edge.environ

        def resolve(git: str, rev: str) -> str:
            return resolve_rev(git, rev, environ=environ)

        def warn(message: str) -> None:
            self.say(f"warning: {message}")

        document, pins = pin_document(job.document, resolve=resolve, warn=warn)
        if not pins:
            return job, []
        from srt_schema.load import load_recipe_document

        with translated():
            (reloaded,) = load_recipe_document(
                document, file=job.label, cluster=self.session.cluster.config
            )
        for pin in pins:
            self.say(f"pinned source: {pin.render()}")
        import msgspec

        return (
            msgspec.structs.replace(job, recipe=reloaded.recipe, document=reloaded.document),
            pins,
        )

    # ------------------------------------------------------------------ files

    def _metadata(self, planned: PlannedJob, job_id: str, now: dt.datetime) -> JobRecord:
        from srt_cli.jobfiles import build_metadata

        point = self.resumer.job_record(planned.job.name) if self.resumer is not None else None
        return build_metadata(
            planned,
            job_id=job_id,
            generated_at=now.strftime("%Y-%m-%d %H:%M:%S"),
            tags=self.tags,
            serve_only=self.serve_only,
            sweep_point=point,  # the point's identity (srt_cli.resume)
        )

    def _files(
        self,
        planned: PlannedJob,
        *,
        job_id: str,
        pins: list[Pin],
        plan_json: bool,
        meta: JobRecord,
        now: dt.datetime,
    ) -> dict[str, tuple[str, int]]:
        import msgspec

        from srt_cli.jobfiles import build_lock, config_text
        from srt_cli.version import package_version
        from srt_schema.job_files import encode_job_record

        config = config_text(planned.job)
        lock = build_lock(
            planned.job,
            config=config,
            job_id=job_id,
            job_name=planned.request.job_name,
            generated_at=iso_seconds_z(now),
            cluster=self.session.cluster.config,
            cluster_path=str(self.session.cluster.path) if self.session.cluster.path else None,
            pins=[p.render() for p in pins],
            srtctl_version=package_version(),
            log_dir=self._log_dir(planned, job_id),
        )
        files = {
            "config.yaml": (config, 0o644),
            "sbatch_script.sh": (planned.script, 0o755),
            f"{job_id}.json": (encode_job_record(meta), 0o644),
            "recipe.lock.yaml": (lock, 0o644),
        }
        if plan_json:
            text = msgspec.json.format(msgspec.json.encode(planned.plan)).decode() + "\n"
            files["plan.json"] = (text, 0o644)
        reference = self._reference(planned.job)
        if reference is not None:
            from srt_runtime.reporting.reproduce import REFERENCE_FILE

            text = msgspec.json.format(msgspec.json.encode(reference)).decode() + "\n"
            files[REFERENCE_FILE] = (text, 0o644)
        return files

    def _reference(self, job: LoadedJob) -> ReproductionReference | None:
        """Re-running a lockfile: its fingerprints, for the run's reproduction report."""
        import msgspec

        from srt_runtime.reporting.lock_sections import build_integrity
        from srt_runtime.reporting.reproduce import ReproductionReference
        from srt_schema.job_files import decode_lock

        lock = job.lock
        if lock is None or not isinstance(lock.get("fingerprints"), dict):
            return None
        try:
            decoded = decode_lock(lock)
        except msgspec.ValidationError as exc:
            raise CliUsageError(
                f"{job.label}: the lock section is not a recipe lock ({exc}); restore the file "
                "or remove its lock: block to run the recipe without a reproduction report"
            ) from exc
        integrity_ok = decoded.integrity == build_integrity(lock)
        if integrity_ok:
            self.say(
                f"{job.label}: lock integrity verified; the run's fingerprints will be compared "
                "with it (logs/reproduction-report.txt)"
            )
        else:
            self.say(
                f"warning: {job.label}: lock integrity check FAILED (the lock section may have "
                "been edited); the run is still compared with it"
            )
        job_id = decoded.job_id or (decoded.slurm.job_id if decoded.slurm is not None else None)
        return ReproductionReference(
            source=job.label,
            integrity_ok=integrity_ok,
            job_id=str(job_id) if job_id else None,
            fingerprints=lock["fingerprints"],
        )

    def _announce(
        self, planned: PlannedJob, job_id: str, meta: JobRecord, now: dt.datetime
    ) -> None:
        """``POST /api/jobs`` to the status collectors, if the recipe names any
        (docs/telemetry-and-bench.md#status-api).

        Bounded (2 attempts x 5 s per endpoint) and never fatal: a collector that is down only
        costs a warning; the run still appears there when it starts.
        """
        import logging

        import msgspec

        from srt_runtime.reporting.status import JobCreate, announce_job

        recipe = planned.job.recipe
        status = recipe.reporting.status if recipe.reporting is not None else None
        payload = JobCreate(
            job_id=job_id,
            job_name=planned.request.job_name,
            submitted_at=iso_seconds_z(now),
            cluster=self.session.effective.cluster,
            recipe=planned.job.label,
            metadata=msgspec.to_builtins(meta),
        )

        def log(level: int, message: str) -> None:
            if level >= logging.WARNING:
                self.say(f"warning: {message}")

        announce_job(status, payload, self.session.edge.environ, log=log)

    def _record(
        self, planned: PlannedJob, job_id: str, job_dir: Path, pins: list[Pin]
    ) -> dict[str, Any]:
        record: dict[str, Any] = {
            "job_name": planned.request.job_name,
            "output_dir": str(job_dir),
            "metadata_path": str(job_dir / f"{job_id}.json"),
            "config_path": str(job_dir / "config.yaml"),
            "tags": self.tags or None,
        }
        if self.session.overrides:
            record["applied_overrides"] = [o.render() for o in self.session.overrides]
        if pins:
            record["pinned_sources"] = [p.render() for p in pins]
        return record

    # ------------------------------------------------------------------ Slurm

    def _log_dir(self, planned: PlannedJob, job_id: str) -> str:
        from srt_cli.planning import job_log_dir

        session = self.session
        return job_log_dir(
            planned.job, output_base=session.output_base, job_id=job_id, edge=session.edge
        )

    def _submit(self, job: LoadedJob, pins: list[Pin]) -> None:
        from srt_cli.jobfiles import config_text, write_job_files
        from srt_cli.planning import plan_one, staged_output
        from srt_cli.submit import submit_sbatch

        session = self.session
        planned = plan_one(
            job,
            session.effective,
            output_base=session.output_base,
            python=session.python,
            config_text=config_text(job),
            runner_name=session.edge.runner_name,
            serve_only=self.serve_only,
            environment=session.script_environment(),
            eval_request=session.eval_request(),
            edge=session.edge,
            stand_in=session.stand_in,
        )
        base = Path(session.output_base)
        staging = check_inside(Path(planned.staging), base / ".staging", what="the staging folder")
        with writing(staging, what="the staging folder"):
            write_job_files(
                staging,
                {
                    "config.yaml": (config_text(job), 0o644),
                    "sbatch_script.sh": (planned.script, 0o755),
                },
                logs=False,
            )
        self.say(f"submitting {planned.request.job_name} ({job.label})")
        job_id = submit_sbatch(
            staging / "sbatch_script.sh",
            sbatch=self.sbatch,
            cwd=session.edge.cwd,
            # the secrets the script and config.yaml hold redacted: sbatch exports them
            environ={**session.edge.environ, **planned.secret_env},
            # the job may start before the job folder below exists (see runtime_command)
            output=staged_output(str(staging)),
            # a credential in an sbatch directive: the file holds it redacted
            text=planned.submit_script,
        )
        job_dir = _job_folder(base, job_id)
        if self._sweep is not None:
            self._sweep.record_job(job, job_id)
        now = _now()
        meta = self._metadata(planned, job_id, now)
        files = self._files(planned, job_id=job_id, pins=pins, plan_json=False, meta=meta, now=now)
        with writing(job_dir, what=f"the folder of submitted job {job_id}"):
            write_job_files(job_dir, files, logs_at=self._log_dir(planned, job_id))
            (job_dir / "logs" / f"sweep_{job_id}.log").touch()
        self._announce(planned, job_id, meta, now)
        self.say(f"job {job_id} submitted: {job_dir}")
        self.say(f"  logs:  tail -f {job_dir / 'logs' / f'sweep_{job_id}.log'}")
        self.say(f"  queue: squeue --job {job_id}")
        self.records += 1
        self.emit(
            {
                "status": "submitted",
                "slurm_job_id": job_id,
                **self._record(planned, job_id, job_dir, pins),
            }
        )

    # ------------------------------------------------------------------ local

    def _local_id(self) -> str:
        base = f"local-{_now().strftime('%Y%m%dT%H%M%SZ')}"
        candidate, n = base, 1
        root = Path(self.session.output_base)
        while candidate in self._used_ids or (root / candidate).exists():
            n += 1
            candidate = f"{base}-{n}"
        self._used_ids.add(candidate)
        return candidate

    def _plan_local(self, job: LoadedJob) -> PlannedJob:
        """The job planned for this machine: local launcher, no containers, 127.0.0.1."""
        import msgspec

        from srt_cli.jobfiles import config_text
        from srt_cli.planning import plan_one, simulated_nodes

        session = self.session
        cluster = msgspec.structs.replace(
            session.effective,
            launcher="local",
            container_runtime="none",
            runtime_python=session.python,
        )
        job_id = self._local_id()
        first = plan_one(
            job,
            cluster,
            output_base=session.output_base,
            python=session.python,
            config_text=config_text(job),
            serve_only=self.serve_only,
            edge=session.edge,
            stand_in=session.stand_in,
        )
        nodes = simulated_nodes(first.request.nodes)
        return plan_one(
            job,
            cluster,
            output_base=session.output_base,
            python=session.python,
            config_text=config_text(job),
            runner_name=session.edge.runner_name,
            job_id=job_id,
            nodes=nodes,
            addresses=dict.fromkeys(nodes, LOCAL_ADDRESS),
            serve_only=self.serve_only,
            eval_request=session.eval_request(),
            edge=session.edge,
            stand_in=session.stand_in,
        )

    def _stop_received(self, signum: int) -> None:
        self.stopped_by = signum

    def _check_ports(self, planned: PlannedJob) -> None:
        """A local job binds its plan's ports on this host: each must be free now, or apply
        stops before anything is created, naming the port, its process and the holder."""
        from srt_runtime.errors import LaunchError
        from srt_runtime.ports import check_ports_free

        try:
            check_ports_free(planned.plan.processes)
        except LaunchError as exc:
            raise SlurmError(f"{planned.job.label}: {exc}") from exc

    def _run_local(self, planned: PlannedJob, pins: list[Pin]) -> None:
        from srt_cli.jobfiles import write_job_files
        from srt_cli.preflight import preflight_path
        from srt_cli.submit import run_local

        self._check_ports(planned)  # again: a port may have been taken since
        session = self.session
        job_id = planned.plan.job_id
        # The runtime and its programs (srt-telemetry, srt-bench) live next to the interpreter.
        environ = {
            **session.edge.environ,
            **planned.secret_env,  # redacted in every file; the runtime puts them back
            "PATH": preflight_path(session.edge, session.python),
        }
        job_dir = _job_folder(Path(session.output_base), job_id)
        now = _now()
        meta = self._metadata(planned, job_id, now)
        files = self._files(planned, job_id=job_id, pins=pins, plan_json=True, meta=meta, now=now)
        with writing(job_dir, what="the job folder"):
            write_job_files(job_dir, files, logs_at=self._log_dir(planned, job_id))
        self._announce(planned, job_id, meta, now)
        if self._sweep is not None:
            self._sweep.record_job(planned.job, job_id)
        self.say(f"running {planned.request.job_name} here as {job_id}: {job_dir}")
        command = shlex.join([session.python, "-m", "srt_runtime", "run", "--job-dir", "..."])
        self.say(f"  {command}")
        code = run_local(
            job_dir,
            python=session.python,
            environ=environ,
            show=self.say,
            on_stop=self._stop_received,
        )
        status = "finished" if code == 0 else "failed"
        self.say(f"job {job_id} {status} with exit code {code}: {job_dir}")
        if code != 0:
            self.local_failures += 1
        self.records += 1
        self.emit(
            {
                "status": status,
                "job_id": job_id,
                "exit_code": code,
                **self._record(planned, job_id, job_dir, pins),
            }
        )
