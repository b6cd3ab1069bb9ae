"""The sweep folder `srtctl apply` keeps for a sweep (srt_schema.sweep_record, docs/compare.md).

`build_sweep_record` is pure; `SweepWriter` writes `<output>/sweeps/<name>-<stamp>/sweep.json`
before the first job and rewrites it (atomically) each time a point gets its job id.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from srt_cli.safepaths import writing
from srt_schema.sweep_record import (
    SWEEP_FILE,
    SWEEPS_DIR,
    SweepPoint,
    SweepRecord,
    encode_sweep_record,
)

if TYPE_CHECKING:
    from srt_schema.load import LoadedJob

__all__ = ["SweepWriter", "build_configurations", "build_sweep_record", "recipe_sha256"]


def recipe_sha256(job: LoadedJob) -> str:
    """SHA-256 of the job's `config.yaml` as `srtctl apply` writes it (the lock's value)."""
    from srt_cli.jobfiles import config_text

    return hashlib.sha256(config_text(job).encode()).hexdigest()


def _setting_key(document: dict[str, Any]) -> str:
    """The document without what only names or loads the job (`name`,
    `benchmark.concurrencies`): equal keys mean one configuration."""
    doc = {k: v for k, v in document.items() if k != "name"}
    bench = doc.get("benchmark")
    if isinstance(bench, dict):
        doc["benchmark"] = {k: v for k, v in bench.items() if k != "concurrencies"}
    return json.dumps(doc, sort_keys=True, default=str)


def _render_params(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def build_configurations(jobs: Sequence[LoadedJob]) -> list[str]:
    """One configuration label per job: jobs whose documents differ only in `name` and
    `benchmark.concurrencies` share one. The label is the sweep parameters that are the same
    within the configuration and differ between configurations (the first job's name when
    there is only one configuration)."""
    keys = [_setting_key(job.document) for job in jobs]
    groups: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    if len(groups) == 1:
        return [_base_name(jobs[0]) if jobs else ""] * len(jobs)
    labels = [""] * len(jobs)
    names = list(dict.fromkeys(k for job in jobs for k in job.sweep_params))
    for members in groups.values():
        shared = {
            k: jobs[members[0]].sweep_params.get(k)
            for k in names
            if len({json.dumps(jobs[m].sweep_params.get(k), default=str) for m in members}) == 1
        }
        varying = {
            k: v
            for k, v in shared.items()
            if len({json.dumps(job.sweep_params.get(k), default=str) for job in jobs}) > 1
        }
        label = _render_params(varying) or jobs[members[0]].name
        for m in members:
            labels[m] = label
    return labels


def _base_name(job: LoadedJob) -> str:
    """The recipe's own name: the job name without the sweep suffix (`_<key><value>...`)."""
    first = next(iter(job.sweep_params), None)
    cut = job.name.find(f"_{first}") if first is not None else -1
    return job.name[:cut] if cut > 0 else job.name


def build_sweep_record(
    jobs: Sequence[LoadedJob], *, name: str, source: str, created_at: str
) -> SweepRecord:
    configurations = build_configurations(jobs)
    points = tuple(
        SweepPoint(
            index=i,
            job_name=job.name,
            params=dict(job.sweep_params),
            configuration=configurations[i],
            recipe_sha256=recipe_sha256(job),
        )
        for i, job in enumerate(jobs)
    )
    return SweepRecord(name=name, source=source, created_at=created_at, points=points)


@dataclass
class SweepWriter:
    """Keeps one sweep's `sweep.json` current while `srtctl apply` starts its jobs."""

    folder: Path
    record: SweepRecord

    @classmethod
    def start(
        cls, output_base: Path, jobs: Sequence[LoadedJob], *, source: str, stamp: str
    ) -> SweepWriter:
        base_name = _base_name(jobs[0]) if jobs else "sweep"
        folder = output_base / SWEEPS_DIR / f"{base_name}-{stamp}"
        n = 1
        while folder.exists():
            n += 1
            folder = output_base / SWEEPS_DIR / f"{base_name}-{stamp}-{n}"
        record = build_sweep_record(jobs, name=folder.name, source=source, created_at=stamp)
        writer = cls(folder=folder, record=record)
        writer._write()
        return writer

    def record_job(self, job: LoadedJob, job_id: str) -> None:
        """The point whose sweep parameters are `job.sweep_params` ran as `job_id`."""
        points = list(self.record.points)
        for i, point in enumerate(points):
            if point.params == job.sweep_params and point.job_name == job.name:
                points[i] = msgspec.structs.replace(
                    point, job_id=job_id, recipe_sha256=recipe_sha256(job)
                )
                break
        else:
            return  # not a point of this sweep (cannot happen: the jobs came from it)
        self.record = msgspec.structs.replace(self.record, points=tuple(points))
        self._write()

    def _write(self) -> None:
        from srt_cli.jobfiles import write_atomic

        with writing(self.folder, what="the sweep folder"):
            self.folder.mkdir(parents=True, exist_ok=True)
            write_atomic(self.folder / SWEEP_FILE, encode_sweep_record(self.record).decode())
