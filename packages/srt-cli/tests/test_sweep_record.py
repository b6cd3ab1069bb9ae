"""The sweep folder srtctl apply writes: one point per job, configurations, job ids."""

from __future__ import annotations

from pathlib import Path

from srt_cli.sweep_record import SweepWriter, build_configurations
from srt_schema.load import load_recipe_text
from srt_schema.sweep_record import SWEEP_FILE, decode_sweep_record

RECIPE = """\
schema: 2
name: qs
sweep:
  ratio: [5, 20]
  concurrency: [4, 16]
model: {path: /models/tiny, container: none, precision: bf16}
resources: {gpus_per_node: 2}
engine: {type: mocker, speedup_ratio: "{ratio}"}
roles: {agg: {nodes: 1, workers: 2}}
frontend: {type: dynamo, enable_multiple_frontends: false}
benchmark: {type: sa-bench, isl: 128, osl: 64, concurrencies: ["{concurrency}"]}
"""


def _jobs():  # type: ignore[no-untyped-def]
    return load_recipe_text(RECIPE, file="qs.yaml")


def test_points_that_differ_only_in_concurrency_share_a_configuration() -> None:
    jobs = _jobs()
    assert [j.sweep_params for j in jobs] == [
        {"ratio": 5, "concurrency": 4},
        {"ratio": 5, "concurrency": 16},
        {"ratio": 20, "concurrency": 4},
        {"ratio": 20, "concurrency": 16},
    ]
    assert build_configurations(jobs) == ["ratio=5", "ratio=5", "ratio=20", "ratio=20"]


def test_the_writer_lists_every_point_then_fills_job_ids(tmp_path: Path) -> None:
    jobs = _jobs()
    writer = SweepWriter.start(tmp_path, jobs, source="qs.yaml", stamp="20261202T000000Z")
    assert writer.folder == tmp_path / "sweeps" / "qs-20261202T000000Z"
    record = decode_sweep_record((writer.folder / SWEEP_FILE).read_bytes())
    assert [p.job_id for p in record.points] == [None] * 4
    writer.record_job(jobs[2], "local-3")
    record = decode_sweep_record((writer.folder / SWEEP_FILE).read_bytes())
    assert [p.job_id for p in record.points] == [None, None, "local-3", None]
    assert record.points[2].params == {"ratio": 20, "concurrency": 4}
    again = SweepWriter.start(tmp_path, jobs, source="qs.yaml", stamp="20261202T000000Z")
    assert again.folder.name == "qs-20261202T000000Z-2"  # never overwrites another sweep
