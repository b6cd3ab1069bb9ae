"""The resume part of one ``srtctl apply`` (docs/recipes.md#resuming-a-sweep).

For every source, :meth:`Resumer.select` gives each job its point identity (srt_cli.resume,
recorded in the job record as ``sweep_point``) and stores how a sweep was applied in its sweep
folder (``sweep-source.json``, srt_cli.resume_io). With ``--resume`` it then reads every earlier
job of each point under the output base, prints the table of what is reused, waited for and run
again and why, and returns only the jobs to run; reused jobs are entered in the sweep folder.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from srt_cli.resume import Decision, Point, build_point_id, count_actions, render_resume_table

if TYPE_CHECKING:
    from srt_cli.inputs import Source
    from srt_cli.planning import PlannedJob
    from srt_cli.session import Session
    from srt_cli.sweep_record import SweepWriter
    from srt_schema.job_files import SweepPointRef
    from srt_schema.load import LoadedJob

__all__ = ["Resumer"]


@dataclass
class Resumer:
    session: Session
    say: Callable[[str], None]
    emit: Callable[[dict[str, Any]], None]
    #: ``--resume`` was given (with or without a sweep folder).
    resume: bool
    #: ``--resume SWEEP_DIR``: the sweep folder to continue.
    sweep_dir: Path | None
    #: As given on the command line (stored for ``--resume SWEEP_DIR`` without ``-f``).
    sets: tuple[str, ...]
    unsets: tuple[str, ...]
    force_sweep: bool
    #: Job name -> its point, for the job record (computed before source pinning).
    points: dict[str, Point] = field(default_factory=dict)

    def point_of(self, job: LoadedJob) -> Point:
        from srt_cli.jobfiles import config_text

        return Point(
            point_id=build_point_id(config_text(job), stand_in=self.session.stand_in is not None),
            job_name=job.name,
            params=dict(job.sweep_params),
        )

    def job_record(self, job_name: str) -> SweepPointRef | None:
        """``sweep_point`` of the job record ``<job_id>.json``."""
        point = self.points.get(job_name)
        if point is None:
            return None
        from srt_schema.job_files import SweepPointRef

        return SweepPointRef(id=point.point_id, params=dict(point.params))

    def continued_sweep(self, jobs: Sequence[LoadedJob]) -> SweepWriter | None:
        """``--resume SWEEP_DIR``: that sweep folder, when its points are this source's jobs
        (same names and parameters); None: a new sweep folder is started."""
        if self.sweep_dir is None or not any(job.sweep_params for job in jobs):
            return None
        import msgspec

        from srt_cli.sweep_record import SweepWriter
        from srt_schema.sweep_record import SWEEP_FILE, decode_sweep_record

        try:
            record = decode_sweep_record((self.sweep_dir / SWEEP_FILE).read_bytes())
        except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
            self.say(f"warning: {self.sweep_dir}: not continued ({exc}); a new sweep folder")
            return None
        recorded = sorted((p.job_name, repr(p.params)) for p in record.points)
        now = sorted((job.name, repr(job.sweep_params)) for job in jobs)
        if recorded != now:
            self.say(
                f"the sweep in {self.sweep_dir} has other points than this recipe yields; "
                "its jobs are still reused, in a new sweep folder"
            )
            return None
        self.say(f"continuing the sweep folder {self.sweep_dir}")
        return SweepWriter(folder=self.sweep_dir, record=record)

    def select(
        self, source: Source, planned: list[PlannedJob], sweep: SweepWriter | None
    ) -> list[PlannedJob]:
        """The jobs of ``source`` to start (all of them unless resuming)."""
        from srt_cli.resume_io import write_sweep_source

        points = [self.point_of(item.job) for item in planned]
        self.points.update({p.job_name: p for p in points})
        if sweep is not None:
            write_sweep_source(
                sweep.folder,
                source,
                sets=self.sets,
                unsets=self.unsets,
                force_sweep=self.force_sweep,
                stand_in=self.session.stand_in is not None,
            )
        if not self.resume:
            return planned
        decisions = self._decide(points)
        self.say(render_resume_table(decisions, source=source.label))
        base = Path(self.session.output_base)
        for item, decision in zip(planned, decisions, strict=True):
            if decision.action == "run" or decision.job is None:
                continue
            if sweep is not None:
                _enter_finished(sweep, item.job, decision)
            self.emit(
                {
                    "status": "reused" if decision.action == "reuse" else "running",
                    "job_id": decision.job.job_id,
                    "job_name": decision.point.job_name,
                    "output_dir": str(base / decision.job.job_id),
                    "point_id": decision.point.point_id,
                    "reason": decision.reason,
                }
            )
        if count_actions(decisions)["run"] == 0:
            self.say(f"resume {source.label}: nothing to run")
        return [
            item
            for item, decision in zip(planned, decisions, strict=True)
            if decision.action == "run"
        ]

    def _decide(self, points: Sequence[Point]) -> list[Decision]:
        from srt_cli.resume import decide_point
        from srt_cli.resume_io import read_point_jobs

        jobs = read_point_jobs(Path(self.session.output_base), points, self.session.edge.environ)
        return [decide_point(p, jobs[p.point_id]) for p in points]


def _enter_finished(sweep: SweepWriter, job: LoadedJob, decision: Decision) -> None:
    """A reused (or still running) job is the point's job in the sweep folder; a reused one has
    finished, so it is marked done there too (srt_runtime.sweep_finish)."""
    from srt_schema.sweep_record import DONE_DIR

    assert decision.job is not None
    sweep.record_job(job, decision.job.job_id)
    if decision.action == "reuse":
        done = sweep.folder / DONE_DIR
        done.mkdir(exist_ok=True)
        (done / decision.job.job_id).touch()
