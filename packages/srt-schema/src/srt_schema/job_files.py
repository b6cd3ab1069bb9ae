"""The job record `<job_id>.json` and the `lock:` section of `recipe.lock.yaml`: the one
definition `srtctl apply` writes and srt-cli and srt-runtime decode (docs/recipes.md#job-record,
docs/recipes.md#lockfile).

They live here, next to the result file (`srt_schema.bench_result`) and the rollup, because the
CLI writes them and the runtime completes the lock at the end of a run: neither may depend on the
other for the file's shape. Readers are tolerant of unknown keys (a newer writer's fields).

The lock's end-of-run sections (`verification`, `fingerprints`, `resource_snapshot`,
`worker_restarts`, `results`, `dynamo_install`, `hf_model`, ...) are written by the runtime from
their own structs; `RecipeLock` types the submit-time block and the run's status, the fields
every reader reads, and the runtime checks the block it merges into against it.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

__all__ = [
    "JobBenchmark",
    "JobModel",
    "JobRecord",
    "JobResources",
    "JobRole",
    "LockResolved",
    "LockSlurm",
    "LockSubmit",
    "RecipeLock",
    "SweepPointRef",
    "decode_job_record",
    "decode_lock",
    "encode_job_record",
]


class JobModel(msgspec.Struct, frozen=True, kw_only=True):
    path: str
    container: str | None = None
    precision: str | None = None


class JobRole(msgspec.Struct, frozen=True, kw_only=True):
    """A role as the recipe gave it (`nodes: colocate` shares another role's nodes)."""

    nodes: int | Literal["colocate"] | None
    workers: int | None
    gpus: int | None


class JobResources(msgspec.Struct, frozen=True, kw_only=True):
    gpu_type: str | None = None
    gpus_per_node: int | None = None
    nodes: int
    roles: dict[str, JobRole] = {}


class JobBenchmark(msgspec.Struct, frozen=True, kw_only=True):
    type: str
    isl: int | None = None
    osl: int | None = None


class SweepPointRef(msgspec.Struct, frozen=True, kw_only=True):
    """A sweep point's identity (srt_cli.resume)."""

    id: str
    params: dict[str, Any] = {}


class JobRecord(msgspec.Struct, frozen=True, kw_only=True):
    """`<job_id>.json`, written by `srtctl apply` beside `config.yaml`; `serve_only`, `tags` and
    `sweep_point` are written only when set. Only `job_id` and `job_name` are required to read
    one (a record written by another tool)."""

    version: str = "2.0"
    orchestrator: bool = True
    job_id: str
    job_name: str
    generated_at: str | None = None
    model: JobModel | None = None
    resources: JobResources | None = None
    frontend_type: str | None = None
    benchmark: JobBenchmark | None = None
    serve_only: bool = False
    tags: tuple[str, ...] = ()
    sweep_point: SweepPointRef | None = None


_JOB_RECORD = msgspec.json.Decoder(JobRecord)


def decode_job_record(data: bytes) -> JobRecord:
    """The one decoder of `<job_id>.json` (raises msgspec.DecodeError / ValidationError)."""
    return _JOB_RECORD.decode(data)


def encode_job_record(record: JobRecord) -> str:
    """The file's text: indented JSON and a newline (the key order of the struct)."""
    doc = msgspec.to_builtins(record)
    for key, unset in (("serve_only", False), ("tags", []), ("sweep_point", None)):
        if doc[key] == unset:
            del doc[key]
    return msgspec.json.format(msgspec.json.encode(doc), indent=2).decode() + "\n"


class LockSlurm(msgspec.Struct, frozen=True, kw_only=True):
    job_id: str
    job_name: str | None = None
    srtctl_version: str | None = None


class LockResolved(msgspec.Struct, frozen=True, kw_only=True):
    model_path: str | None = None
    container_path: str | None = None
    log_dir: str | None = None
    aliases: dict[str, str] = {}


class LockSubmit(msgspec.Struct, frozen=True, kw_only=True):
    """The `lock:` mapping as `srtctl apply` writes it (every field written; `integrity` is
    added over them)."""

    version: int = 2
    generated_at: str | None = None
    slurm: LockSlurm | None = None
    resolved: LockResolved | None = None
    cluster_config: str | None = None
    recipe_sha256: str | None = None
    pinned_sources: tuple[str, ...] = ()


class RecipeLock(LockSubmit, frozen=True, kw_only=True):
    """The `lock:` mapping as readers decode it: the submit block, then the run's status."""

    job_id: str | None = None
    status: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    exit_code: int | None = None
    integrity: str | None = None


def decode_lock(lock: object) -> RecipeLock:
    """The one decoder of the `lock:` mapping (already parsed from YAML); raises
    msgspec.ValidationError naming the field."""
    return msgspec.convert(lock, RecipeLock)
