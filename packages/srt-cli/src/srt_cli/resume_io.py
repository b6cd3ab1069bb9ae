"""What ``srtctl apply --resume`` reads and writes (the decision itself is srt_cli.resume, pure).

- :func:`read_point_jobs`: every job folder under the output base, grouped by point identity
  (``<job_id>.json`` ``sweep_point.id``, else the SHA-256 of its ``config.yaml``), each read into
  :class:`srt_cli.resume.JobFacts` (status.json, the rollup's verdict, whether it still runs).
- ``sweep-source.json`` in the sweep folder (``<output>/sweeps/<name>/``, srt_schema.sweep_record):
  the recipe text, selector and ``--set``/``--unset`` values the sweep was applied with, so
  ``srtctl apply --resume SWEEP_DIR`` re-expands the same sweep without ``-f``. When the recipe or
  a ``--set`` holds a credential (srt_schema.secrets) the text is not stored; the resume then
  reads the recipe file again, or asks for ``-f``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from srt_cli.errors import CliUsageError, SlurmError
from srt_cli.inputs import Source
from srt_cli.resume import JobFacts, Point, RollupVerdict, build_rollup_verdict
from srt_schema.job_files import JobRecord, decode_job_record

__all__ = [
    "SOURCE_FILE",
    "SweepSource",
    "find_sweep_folder",
    "read_point_jobs",
    "read_sweep_source",
    "source_from",
    "write_sweep_source",
]

SOURCE_FILE = "sweep-source.json"


class SweepSource(msgspec.Struct, frozen=True, kw_only=True):
    """``sweep-source.json``: how the sweep was applied."""

    version: int = 1
    #: The recipe as ``-f`` named it, and its absolute path (None for stdin).
    source: str
    path: str | None
    selector: str | None = None
    #: The recipe text, and the ``--set`` values; None when they hold a credential (a value
    #: srt_schema.secrets redacts), which srtctl never writes to a file.
    text: str | None
    sets: tuple[str, ...] | None = ()
    unsets: tuple[str, ...] = ()
    force_sweep: bool = False
    stand_in: bool = False


def _holds_credentials(doc: Any) -> bool:
    """Whether ``doc`` holds a value srt_schema.secrets redacts."""
    from srt_schema.secrets import redact_document

    return bool(redact_document(doc) != doc)


def _text_holds_credentials(text: str) -> bool:
    from srt_schema.yamlio import parse_yaml

    return _holds_credentials(parse_yaml(text, file="<sweep>"))  # it loaded a moment ago


def _sets_hold_credentials(sets: Sequence[str]) -> bool:
    from srt_cli.options import parse_overrides
    from srt_schema.setpaths import apply_overrides

    return bool(sets) and _holds_credentials(apply_overrides({}, parse_overrides(tuple(sets), ())))


def write_sweep_source(
    folder: Path,
    source: Source,
    *,
    sets: Sequence[str],
    unsets: Sequence[str],
    force_sweep: bool,
    stand_in: bool,
) -> None:
    from srt_cli.jobfiles import write_atomic

    record = SweepSource(
        source=source.label,
        path=str(source.path.resolve()) if source.path is not None else None,
        selector=source.selector,
        text=None if _text_holds_credentials(source.text) else source.text,
        sets=None if _sets_hold_credentials(sets) else tuple(sets),
        unsets=tuple(unsets),
        force_sweep=force_sweep,
        stand_in=stand_in,
    )
    text = msgspec.json.format(msgspec.json.encode(record), indent=2).decode() + "\n"
    write_atomic(folder / SOURCE_FILE, text)


def find_sweep_folder(given: Path) -> tuple[Path, Path]:
    """``SWEEP_DIR`` -> (the sweep folder, the output base holding its job folders)."""
    from srt_schema.sweep_record import SWEEP_FILE, SWEEPS_DIR, decode_sweep_record

    path = given / SWEEP_FILE
    try:
        record = decode_sweep_record(path.read_bytes())
    except FileNotFoundError:
        raise CliUsageError(
            f"--resume {given}: no {SWEEP_FILE} there; name a sweep folder "
            f"(srtctl apply prints it: <output>/{SWEEPS_DIR}/<name>-<time>/)"
        ) from None
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise SlurmError(f"{path}: cannot be read: {exc}") from exc
    return given, (given / record.jobs_base).resolve()


def read_sweep_source(folder: Path) -> SweepSource:
    path = folder / SOURCE_FILE
    try:
        return msgspec.json.decode(path.read_bytes(), type=SweepSource)
    except FileNotFoundError:
        raise CliUsageError(
            f"--resume {folder}: the sweep's recipe is not recorded there ({SOURCE_FILE}); "
            f"pass it again: srtctl apply -f RECIPE.yaml --resume {folder}"
        ) from None
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise SlurmError(f"{path}: cannot be read: {exc}") from exc


def source_from(recorded: SweepSource, folder: Path) -> Source:
    """The recipe to re-expand: the recorded text, else the recipe file read again."""
    from srt_cli.inputs import read_file

    path = Path(recorded.path) if recorded.path is not None else None
    if recorded.sets is None:
        raise CliUsageError(
            f"--resume {folder}: a --set value of the sweep holds credentials, which srtctl does "
            f"not store; pass the recipe and the --set values again: srtctl apply -f "
            f"{recorded.source} --set ... --resume {folder}"
        )
    if recorded.text is not None:
        return Source(
            label=recorded.source, text=recorded.text, selector=recorded.selector, path=path
        )
    if path is None or not path.is_file():
        raise CliUsageError(
            f"--resume {folder}: the sweep's recipe holds credentials, which srtctl does not "
            f"store, and {recorded.path or '<stdin>'} is not there any more; pass it: "
            f"srtctl apply -f RECIPE.yaml --resume {folder}"
        )
    return Source(
        label=recorded.source, text=read_file(path), selector=recorded.selector, path=path
    )


# -- earlier jobs ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Folder:
    job_id: str
    path: Path
    record: JobRecord | None


def _read_record(job_dir: Path) -> JobRecord | None:
    """``<job_id>.json`` with its one decoder (None: missing, unreadable or not a job record:
    the folder is still a job's)."""
    try:
        return decode_job_record((job_dir / f"{job_dir.name}.json").read_bytes())
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None


def _folder_point_id(job_dir: Path, record: JobRecord | None) -> str | None:
    if record is not None and record.sweep_point is not None:
        return record.sweep_point.id
    try:
        return hashlib.sha256((job_dir / "config.yaml").read_bytes()).hexdigest()
    except OSError:
        return None


def _read_verdict(job_dir: Path) -> RollupVerdict | None:
    """The verdict of the job's ``benchmark-rollup.json`` (None: the job wrote none)."""
    from srt_schema.rollup import ROLLUP_FILE

    for path in (job_dir / "logs" / ROLLUP_FILE, job_dir / ROLLUP_FILE):
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            continue
        except OSError as exc:
            return RollupVerdict(valid=False, reasons=(f"unreadable rollup ({exc})",))
        return build_rollup_verdict(data)
    return None


def _facts(folder: _Folder, base: Path, alive: Callable[[str, Path], bool]) -> JobFacts:
    from srt_cli.jobs import is_final, read_status

    try:
        status = read_status(folder.path)
    except SlurmError:
        status = None
    final = is_final(status)
    generated = folder.record.generated_at if folder.record is not None else None
    return JobFacts(
        job_id=folder.job_id,
        folder=os.path.relpath(folder.path, base),
        generated_at=generated if isinstance(generated, str) else "",
        status=status.status if status is not None else None,
        exit_code=status.exit_code if status is not None else None,
        message=status.message if status is not None else "",
        final=final,
        alive=not final and alive(folder.job_id, folder.path),
        stage=status.stage if status is not None else None,
        rollup=_read_verdict(folder.path),
    )


def _liveness(environ: Mapping[str, str]) -> Callable[[str, Path], bool]:
    """Whether a job that has no final status still runs: a local job while its supervisor runs
    here, a Slurm job while ``squeue --me`` lists it (asked once, only when needed)."""
    from srt_cli.jobs import find_supervisors, parse_job_id, query_mine

    queued: set[str] | None = None

    def alive(job_id: str, job_dir: Path) -> bool:
        nonlocal queued
        if parse_job_id(job_id).kind == "local":
            return bool(find_supervisors(job_dir))
        if queued is None:
            queued = {row.base_id for row in query_mine(environ).rows}
        return job_id in queued

    return alive


def read_point_jobs(
    base: Path, points: Sequence[Point], environ: Mapping[str, str]
) -> dict[str, list[JobFacts]]:
    """Every earlier job of each point (by point id), from the job folders under ``base``."""
    from srt_cli.jobs import find_job_folders

    wanted = {p.point_id for p in points}
    found: dict[str, list[JobFacts]] = {p.point_id: [] for p in points}
    alive = _liveness(environ)
    for job_dir in find_job_folders(base):
        record = _read_record(job_dir)
        point_id = _folder_point_id(job_dir, record)
        if point_id in wanted:
            assert point_id is not None
            folder = _Folder(job_id=job_dir.name, path=job_dir, record=record)
            found[point_id].append(_facts(folder, base, alive))
    return found
