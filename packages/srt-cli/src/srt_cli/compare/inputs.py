"""The runs `srtctl compare` reads: job folders, sweep folders and rollup files (the only I/O).

- a job folder `<output>/<job_id>/`: `logs/benchmark-rollup.json`, the result JSONs under
  `logs/sa-bench_*/`, `config.yaml`, `logs/fingerprint_*.json`, the srtctl version in
  `recipe.lock.yaml`;
- a sweep folder `<output>/sweeps/<name>/` (its `sweep.json`): every point's job folder, in sweep
  order; a point without results is listed as missing, not an error;
- a folder of job folders (an output folder): every job folder below it with a rollup;
- a `benchmark-rollup.json`: that file alone (its folder's result JSONs and, when it is a job's
  `logs/`, the job's recipe, if they are there).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from srt_cli.compare.records import Window, build_window, decode_result, find_result_files
from srt_cli.errors import CliUsageError
from srt_schema.rollup import ROLLUP_FILE, Rollup, decode_rollup
from srt_schema.sweep_record import SWEEP_FILE, decode_sweep_record

__all__ = ["Missing", "RunData", "read_inputs"]

_FIX = (
    "pass job folders (<output>/<job_id>), sweep folders (<output>/sweeps/<name>) or "
    "benchmark-rollup.json files"
)


@dataclass
class RunData:
    label: str
    path: Path
    rollup: Rollup
    windows: dict[int, Window] = field(default_factory=dict)
    gpus: dict[int, int] = field(default_factory=dict)
    #: The resolved recipe (config.yaml); None when there is none beside the rollup.
    recipe: dict[str, Any] | None = None
    fingerprints: dict[str, Any] = field(default_factory=dict)
    srtctl_version: str | None = None


@dataclass(frozen=True)
class Missing:
    label: str
    path: Path
    why: str


def _read_rollup(path: Path) -> Rollup:
    try:
        return decode_rollup(path.read_bytes())
    except OSError as exc:
        raise CliUsageError(f"{path}: cannot read ({exc.strerror}); {_FIX}") from exc
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise CliUsageError(
            f"{path}: not a benchmark rollup ({exc}); pass the benchmark-rollup.json srt-bench "
            "wrote, or the job folder"
        ) from exc


def _read_yaml(path: Path) -> dict[str, Any] | None:
    import yaml

    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CliUsageError(f"{path}: cannot read ({exc.strerror})") from exc
    loader = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader
    try:
        doc = yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        raise CliUsageError(f"{path}: not YAML ({exc}); restore the job's config.yaml") from exc
    return doc if isinstance(doc, dict) else None


def _read_fingerprints(log_dir: Path) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for path in sorted(log_dir.glob("fingerprint_*.json")):
        try:
            found[path.stem.removeprefix("fingerprint_")] = msgspec.json.decode(path.read_bytes())
        except (OSError, msgspec.DecodeError):
            found[path.stem.removeprefix("fingerprint_")] = {"unreadable": True}
    return found


def _read_run(label: str, rollup_path: Path, job_dir: Path | None, *, records: bool) -> RunData:
    rollup = _read_rollup(rollup_path)
    log_dir = rollup_path.parent
    run = RunData(label=label, path=job_dir or rollup_path, rollup=rollup)
    for concurrency, (path, gpus) in find_result_files(log_dir).items():
        run.gpus[concurrency] = gpus
        if not records:
            continue
        try:
            doc = decode_result(path.read_bytes())
        except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise CliUsageError(
                f"{path}: not an sa-bench result ({exc}); remove it or pass --no-records"
            ) from exc
        run.windows[concurrency] = build_window(doc, concurrency=concurrency, gpus=gpus)
    if job_dir is not None:
        run.recipe = _read_yaml(job_dir / "config.yaml")
        run.fingerprints = _read_fingerprints(job_dir / "logs")
        run.srtctl_version = _srtctl_version(job_dir / "recipe.lock.yaml")
    return run


def _srtctl_version(path: Path) -> str | None:
    """`lock.slurm.srtctl_version` of `recipe.lock.yaml`, with the lock's one decoder."""
    from srt_schema.job_files import decode_lock

    doc = _read_yaml(path)
    if doc is None or "lock" not in doc:
        return None
    try:
        lock = decode_lock(doc["lock"])
    except msgspec.ValidationError as exc:
        raise CliUsageError(f"{path}: not a recipe lock ({exc}); restore the job's file") from exc
    return lock.slurm.srtctl_version if lock.slurm is not None else None


def _job_missing(job_dir: Path) -> str:
    from srt_cli.errors import SlurmError
    from srt_cli.jobs import read_status

    try:
        status = read_status(job_dir)
    except SlurmError as exc:
        return f"no {ROLLUP_FILE}; {exc}"
    if status is None:
        return f"no {ROLLUP_FILE} and no status.json (not started, or another -o)"
    return f"no {ROLLUP_FILE} (job {status.status}, exit code {status.exit_code})"


def _expand(path: Path) -> list[tuple[str, Path, Path | None]] | str:
    """(label, rollup, job folder) per run below `path`, or why there is none (one run)."""
    if path.is_file():
        if path.name == SWEEP_FILE:
            return _expand(path.parent)
        parent = path.parent
        job = (
            parent.parent
            if parent.name == "logs" and (parent.parent / "config.yaml").is_file()
            else None
        )
        return [(job.name if job else str(path), path, job)]
    if not path.is_dir():
        raise CliUsageError(f"{path}: no such file or folder; {_FIX}")
    if (path / SWEEP_FILE).is_file():
        try:
            record = decode_sweep_record((path / SWEEP_FILE).read_bytes())
        except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise CliUsageError(f"{path / SWEEP_FILE}: not a sweep record ({exc})") from exc
        base = (path / record.jobs_base).resolve()
        out: list[tuple[str, Path, Path | None]] = []
        for point in sorted(record.points, key=lambda p: p.index):
            if point.job_id is None:
                out.append((point.job_name, Path("-"), None))
            else:
                job = base / point.job_id
                out.append((point.job_id, job / "logs" / ROLLUP_FILE, job))
        return out
    if (path / "logs" / ROLLUP_FILE).is_file():
        return [(path.name, path / "logs" / ROLLUP_FILE, path)]
    if (path / ROLLUP_FILE).is_file():
        return _expand(path / ROLLUP_FILE)
    if (path / "status.json").is_file() or (path / "config.yaml").is_file():
        return _job_missing(path)
    jobs = sorted(p for p in path.iterdir() if (p / "logs" / ROLLUP_FILE).is_file())
    if not jobs:
        raise CliUsageError(f"{path}: no {ROLLUP_FILE}, {SWEEP_FILE} or job folder in it; {_FIX}")
    return [(p.name, p / "logs" / ROLLUP_FILE, p) for p in jobs]


def read_inputs(paths: list[Path], *, records: bool = True) -> tuple[list[RunData], list[Missing]]:
    runs: list[RunData] = []
    missing: list[Missing] = []
    seen: dict[str, int] = {}
    every = [(path, _expand(path)) for path in paths]  # a wrong path fails before any read
    for path, expanded in every:
        if isinstance(expanded, str):
            missing.append(Missing(path.name, path, expanded))
            continue
        for given, rollup, job in expanded:
            seen[given] = seen.get(given, 0) + 1
            label = given if seen[given] == 1 else f"{given}#{seen[given]}"
            if job is None and str(rollup) == "-":
                missing.append(Missing(label, path, "not started (no job id in sweep.json)"))
            elif not rollup.is_file():
                missing.append(Missing(label, job or rollup, _job_missing(job or rollup)))
            else:
                runs.append(_read_run(label, rollup, job, records=records))
    return runs, missing
