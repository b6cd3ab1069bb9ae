"""`sweep.json`: the job list of one sweep, written by `srtctl apply` (docs/compare.md).

A sweep's jobs each keep their own folder `<output>/<job_id>/` (the reference's layout). What ties
them together is the sweep folder `<output>/sweeps/<name>-<UTC stamp>/`, which holds this file
and, once the last job has finished, `sweep-report.html`:

- `srtctl apply` writes the file before it starts the first job, with every point listed and
  `job_id` null, and fills each point's `job_id` as soon as the job has one (before a local job
  runs; right after `sbatch` returns for a Slurm job).
- At the end of each job, the runtime's post-run step finds the sweep whose points list its job id,
  creates `done/<job_id>` in the sweep folder, and renders the report when every point has a job id
  and a `done/` marker (`srt_runtime.sweep_finish`). Creating the marker before looking at the
  others means two jobs that end at the same moment cannot both miss the report (at worst both
  render the same bytes).

Readers: the runtime (here), `srtctl compare` / `srtctl report` (srt-cli), and srt-telemetry's
sweep report, which keeps its own view of these fields (`srt_telemetry.sweep_view`, checked by
`tests/test_contract_sweep.py`). Readers ignore unknown fields.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = [
    "DONE_DIR",
    "REPORT_FILE",
    "SWEEPS_DIR",
    "SWEEP_FILE",
    "SWEEP_RECORD_VERSION",
    "SweepPoint",
    "SweepRecord",
    "decode_sweep_record",
    "encode_sweep_record",
]

#: The folder under the output base that holds one folder per sweep.
SWEEPS_DIR = "sweeps"
SWEEP_FILE = "sweep.json"
#: `done/<job_id>`: one empty file per job that has finished its post-run step.
DONE_DIR = "done"
REPORT_FILE = "sweep-report.html"
SWEEP_RECORD_VERSION = 1


class SweepPoint(msgspec.Struct, frozen=True, kw_only=True):
    """One point of the sweep (one job)."""

    #: Position in the expansion (0-based), for display only: a point is identified by `params`.
    index: int
    job_name: str
    #: The point's sweep parameters (sweep order), as in the job's `config.yaml`.
    params: dict[str, Any]
    #: Points that differ only in what they benchmark (benchmark.concurrencies) share one
    #: configuration: the report draws one throughput-latency curve per configuration.
    configuration: str
    #: SHA-256 of the point's `config.yaml` (the lock's `recipe_sha256`).
    recipe_sha256: str
    #: The job that ran this point (its folder is `<output>/<job_id>/`); null until it has one.
    job_id: str | None = None


class SweepRecord(msgspec.Struct, frozen=True, kw_only=True):
    version: int = SWEEP_RECORD_VERSION
    #: The sweep folder's name (`<recipe name>-<UTC stamp>`).
    name: str
    #: The recipe as `srtctl apply -f` named it.
    source: str
    created_at: str
    #: Relative path from the sweep folder to the output base holding the job folders.
    jobs_base: str = "../.."
    points: tuple[SweepPoint, ...] = ()


def encode_sweep_record(record: SweepRecord) -> bytes:
    return msgspec.json.format(msgspec.json.encode(record), indent=2) + b"\n"


def decode_sweep_record(data: bytes) -> SweepRecord:
    """Raises `msgspec.DecodeError` / `msgspec.ValidationError` naming the bad `$.path`."""
    return msgspec.json.decode(data, type=SweepRecord)
