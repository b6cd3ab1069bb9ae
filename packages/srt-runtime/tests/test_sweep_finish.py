"""The end of a sweep: each job marks itself done; the one that finds every point done renders
the sweep report (srt-telemetry, as a process)."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

from srt_runtime.sweep_finish import finish_sweep_job, is_sweep_complete
from srt_schema.sweep_record import SweepPoint, SweepRecord, encode_sweep_record

LOG = logging.getLogger("test")


def _record(job_ids: list[str | None]) -> SweepRecord:
    return SweepRecord(
        name="qs-1",
        source="qs.yaml",
        created_at="1",
        points=tuple(
            SweepPoint(
                index=i,
                job_name=f"qs_{i}",
                params={"i": i},
                configuration="qs",
                recipe_sha256="0" * 64,
                job_id=job_id,
            )
            for i, job_id in enumerate(job_ids)
        ),
    )


def test_complete_only_when_every_point_has_a_finished_job() -> None:
    assert is_sweep_complete(_record(["a", "b"]), ["a", "b", "x"])
    assert not is_sweep_complete(_record(["a", "b"]), ["a"])
    assert not is_sweep_complete(_record(["a", None]), ["a"])
    assert not is_sweep_complete(_record([]), [])


def _job(base: Path, job_id: str) -> Path:
    logs = base / job_id / "logs"
    logs.mkdir(parents=True)
    rollup = {
        "benchmark_type": "sa-bench",
        "timestamp": "t",
        "config": {"model": "m", "isl": 1, "osl": 1},
        "runs": [{"concurrency": 4, "throughput_toks": 100.0, "tpot_median_ms": 2.0}],
    }
    (logs / "benchmark-rollup.json").write_text(json.dumps(rollup))
    return base / job_id


def test_the_last_job_to_finish_writes_the_report(tmp_path: Path) -> None:
    sweep = tmp_path / "sweeps" / "qs-1"
    sweep.mkdir(parents=True)
    (sweep / "sweep.json").write_bytes(encode_sweep_record(_record(["local-1", "local-2"])))
    first, second = _job(tmp_path, "local-1"), _job(tmp_path, "local-2")
    assert finish_sweep_job(first, python=sys.executable, log=LOG) is None
    assert (sweep / "done" / "local-1").is_file()
    assert not (sweep / "sweep-report.html").exists()
    report = finish_sweep_job(second, python=sys.executable, log=LOG)
    assert report == sweep / "sweep-report.html"
    assert "Pareto frontier" in report.read_text()


def test_a_job_of_no_sweep_does_nothing(tmp_path: Path) -> None:
    job = _job(tmp_path, "local-9")
    assert finish_sweep_job(job, python=sys.executable, log=LOG) is None
    assert not (tmp_path / "sweeps").exists()
