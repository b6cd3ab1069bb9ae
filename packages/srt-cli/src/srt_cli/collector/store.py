"""The collector's SQLite store: one row per job, its ordered events, and its uploads' flags.

The schema is created when the file is opened (``PRAGMA user_version`` guards it), the journal
is WAL so readers never wait for a writer, and one connection is shared by the server's threads
behind a lock; every write is one ``BEGIN IMMEDIATE`` transaction, so two collectors on the same
file cannot interleave a read-modify-write either.

Rules (docs/telemetry-and-bench.md#status-api): a PUT for an unknown job creates it (named from
``metadata.job_name``, else shown as ``job-<id>``); a POST for a known job never changes its
status, it only fills identity (the earlier ``submitted_at`` wins, empty fields are filled,
metadata is merged without overwriting); an event is appended only when ``(status, stage,
message)`` differs from the job's last event; ``metadata`` and ``artifacts`` are merged (the
update wins), ``benchmark_results`` and ``report`` (the final event's job report) are replaced.
Jobs are listed newest first, by when the collector first heard of them; a list entry also
carries the report's ``verdict`` and the failed process (``diagnosis``).
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import msgspec

from srt_cli.collector.errors import CollectorStartError
from srt_cli.collector.protocol import CreateRequest, ListQuery, UpdateRequest
from srt_runtime.reporting.job_report import JobReport
from srt_schema.timestamps import iso_millis_z

__all__ = ["SCHEMA_VERSION", "StatusStore", "stamp"]

#: 2 added ``jobs.report`` (the final event's job report); a version-1 file is upgraded in place.
SCHEMA_VERSION: Final = 2
_SQLITE_MAX: Final = 2**63 - 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id TEXT NOT NULL UNIQUE,
    job_name TEXT,
    cluster TEXT,
    recipe TEXT,
    status TEXT NOT NULL,
    stage TEXT,
    message TEXT,
    submitted_at TEXT,
    started_at TEXT,
    completed_at TEXT,
    updated_at TEXT,
    exit_code INTEGER,
    logs_url TEXT,
    metadata TEXT NOT NULL DEFAULT '{}',
    artifacts TEXT NOT NULL DEFAULT '{}',
    benchmark_results TEXT,
    created_at TEXT NOT NULL,
    report TEXT
);
CREATE INDEX IF NOT EXISTS jobs_by_status ON jobs (status, seq);
CREATE INDEX IF NOT EXISTS jobs_by_cluster ON jobs (cluster, seq);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id TEXT NOT NULL,
    status TEXT NOT NULL,
    stage TEXT,
    message TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_job ON events (job_id, id);
CREATE TABLE IF NOT EXISTS uploads (
    job_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    file TEXT NOT NULL,
    final INTEGER NOT NULL DEFAULT 0,
    total INTEGER,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (job_id, kind, file)
);
"""

_SUMMARY = (
    "job_id",
    "job_name",
    "cluster",
    "status",
    "stage",
    "message",
    "submitted_at",
    "started_at",
    "completed_at",
    "updated_at",
    "exit_code",
    "logs_url",
    "created_at",
)
_DETAIL = (*_SUMMARY, "recipe", "metadata", "artifacts", "benchmark_results", "report")
_JSON_COLUMNS = ("metadata", "artifacts", "benchmark_results", "report")
_EVENT = ("id", "job_id", "status", "stage", "message", "created_at")


def stamp(seconds: float) -> str:
    """Epoch seconds as the collector's record time (milliseconds, ``Z``)."""
    return iso_millis_z(seconds)


def _merge(base: dict[str, Any], extra: dict[str, Any], *, extra_wins: bool) -> dict[str, Any]:
    """``base`` with ``extra`` merged in, recursively for nested objects."""
    merged = dict(base)
    for key, value in extra.items():
        old = merged.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            merged[key] = _merge(old, value, extra_wins=extra_wins)
        elif key not in merged or old is None or extra_wins:
            merged[key] = value
    return merged


def _earlier(first: str | None, second: str) -> str:
    if first is None:
        return second
    parse = dt.datetime.fromisoformat
    return second if parse(second) < parse(first) else first


def _placeholder_name(metadata: dict[str, Any] | None) -> str | None:
    name = (metadata or {}).get("job_name")
    return name if isinstance(name, str) and name else None


class StatusStore:
    """Jobs, events and upload flags in one SQLite file; safe to share between threads."""

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time) -> None:
        """Open (and create) the database; :class:`CollectorStartError` when it cannot be used."""
        self.path = path
        self._clock = clock
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                path, check_same_thread=False, isolation_level=None, timeout=10.0
            )
        except (OSError, sqlite3.Error) as exc:
            raise CollectorStartError(
                f"--db {path}: cannot open the status database: {exc}; pass --db with a "
                "writable path"
            ) from exc
        try:
            self._prepare()
        except sqlite3.Error as exc:
            self._db.close()
            raise CollectorStartError(
                f"--db {path}: not a usable status database: {exc}; pass --db with another path"
            ) from exc

    def _prepare(self) -> None:
        db = self._db
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version not in (0, 1, SCHEMA_VERSION):
            raise sqlite3.DatabaseError(
                f"schema version {version}, this srtctl knows version {SCHEMA_VERSION}"
            )
        upgrade = "ALTER TABLE jobs ADD COLUMN report TEXT;" if version == 1 else ""
        db.executescript(f"BEGIN;{_SCHEMA}{upgrade}PRAGMA user_version={SCHEMA_VERSION};COMMIT;")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            yield self._db

    def _now(self) -> str:
        return stamp(self._clock())

    # -- writes ---------------------------------------------------------------------------------

    def create(self, request: CreateRequest) -> tuple[bool, str]:
        """Record a submit; ``(created, status)``. A known job keeps its status."""
        with self._write() as db:
            row = db.execute("SELECT * FROM jobs WHERE job_id = ?", (request.job_id,)).fetchone()
            if row is None:
                now = self._now()
                db.execute(
                    "INSERT INTO jobs (job_id, job_name, cluster, recipe, status, submitted_at, "
                    "metadata, created_at) VALUES (?, ?, ?, ?, 'submitted', ?, ?, ?)",
                    (
                        request.job_id,
                        request.job_name,
                        request.cluster,
                        request.recipe,
                        request.submitted_at,
                        json.dumps(request.metadata or {}),
                        now,
                    ),
                )
                self._append_event(db, request.job_id, "submitted", None, None)
                return True, "submitted"
            metadata = _merge(json.loads(row["metadata"]), request.metadata or {}, extra_wins=False)
            db.execute(
                "UPDATE jobs SET job_name = COALESCE(job_name, ?), cluster = COALESCE(cluster, ?), "
                "recipe = COALESCE(recipe, ?), submitted_at = ?, metadata = ? WHERE job_id = ?",
                (
                    request.job_name,
                    request.cluster,
                    request.recipe,
                    _earlier(row["submitted_at"], request.submitted_at),
                    json.dumps(metadata),
                    request.job_id,
                ),
            )
            return False, str(row["status"])

    def update(self, job_id: str, request: UpdateRequest) -> str:
        """Apply one lifecycle event (creating the job if it is unknown); the new status."""
        with self._write() as db:
            row = db.execute("SELECT * FROM jobs WHERE job_id = ?", (job_id,)).fetchone()
            if row is None:
                db.execute(
                    "INSERT INTO jobs (job_id, status, created_at) VALUES (?, ?, ?)",
                    (job_id, request.status, self._now()),
                )
                metadata: dict[str, Any] = {}
                artifacts: dict[str, Any] = {}
            else:
                metadata = json.loads(row["metadata"])
                artifacts = json.loads(row["artifacts"])
            metadata = _merge(metadata, request.metadata or {}, extra_wins=True)
            artifacts = _merge(artifacts, request.artifacts or {}, extra_wins=True)
            cluster = (request.metadata or {}).get("cluster")
            results = request.benchmark_results
            report = None if request.report is None else msgspec.json.encode(request.report)
            db.execute(
                "UPDATE jobs SET status = ?, stage = COALESCE(?, stage), "
                "message = COALESCE(?, message), started_at = COALESCE(?, started_at), "
                "completed_at = COALESCE(?, completed_at), updated_at = ?, "
                "exit_code = COALESCE(?, exit_code), logs_url = COALESCE(?, logs_url), "
                "job_name = COALESCE(job_name, ?), cluster = COALESCE(cluster, ?), "
                "metadata = ?, artifacts = ?, "
                "benchmark_results = COALESCE(?, benchmark_results), "
                "report = COALESCE(?, report) WHERE job_id = ?",
                (
                    request.status,
                    request.stage,
                    request.message,
                    request.started_at,
                    request.completed_at,
                    request.updated_at,
                    request.exit_code,
                    request.logs_url,
                    _placeholder_name(request.metadata),
                    cluster if isinstance(cluster, str) else None,
                    json.dumps(metadata),
                    json.dumps(artifacts),
                    None if results is None else json.dumps(results),
                    None if report is None else report.decode(),
                    job_id,
                ),
            )
            last = db.execute(
                "SELECT status, stage, message FROM events WHERE job_id = ? "
                "ORDER BY id DESC LIMIT 1",
                (job_id,),
            ).fetchone()
            event = (request.status, request.stage, request.message)
            if last is None or tuple(last) != event:
                self._append_event(db, job_id, *event)
            return request.status

    def _append_event(
        self,
        db: sqlite3.Connection,
        job_id: str,
        status: str,
        stage: str | None,
        message: str | None,
    ) -> None:
        db.execute(
            "INSERT INTO events (job_id, status, stage, message, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (job_id, status, stage, message, self._now()),
        )

    def delete(self, job_id: str) -> bool:
        """Forget a job, its events and its upload flags; False when it was not known."""
        with self._write() as db:
            gone = db.execute("DELETE FROM jobs WHERE job_id = ?", (job_id,)).rowcount
            db.execute("DELETE FROM events WHERE job_id = ?", (job_id,))
            db.execute("DELETE FROM uploads WHERE job_id = ?", (job_id,))
            return gone > 0

    def record_upload(
        self, job_id: str, kind: str, file: str, *, final: bool, total: int | None
    ) -> None:
        """Remember that ``file`` (kind ``logs`` or ``captures``) was uploaded; final is sticky."""
        with self._write() as db:
            db.execute(
                "INSERT INTO uploads (job_id, kind, file, final, total, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (job_id, kind, file) DO UPDATE SET "
                "final = MAX(final, excluded.final), total = COALESCE(excluded.total, total), "
                "updated_at = excluded.updated_at",
                (job_id, kind, file, int(final), total, self._now()),
            )

    # -- reads ----------------------------------------------------------------------------------

    def job(self, job_id: str) -> dict[str, Any] | None:
        """The full record with ``events`` in order, or None."""
        with self._read() as db:
            row = db.execute("SELECT * FROM jobs WHERE job_id = ?", (job_id,)).fetchone()
            if row is None:
                return None
            events = db.execute(
                "SELECT * FROM events WHERE job_id = ? ORDER BY id", (job_id,)
            ).fetchall()
        record = _record(row, _DETAIL)
        for column in _JSON_COLUMNS:
            raw = row[column]
            record[column] = None if raw is None else json.loads(raw)
        record["events"] = [_record(event, _EVENT) for event in events]
        return record

    def uploads(self, job_id: str) -> list[dict[str, Any]]:
        """``{kind, file, final, total}`` of every upload of the job, by kind and file."""
        with self._read() as db:
            rows = db.execute(
                "SELECT kind, file, final, total FROM uploads WHERE job_id = ? ORDER BY kind, file",
                (job_id,),
            ).fetchall()
        return [
            {"kind": r["kind"], "file": r["file"], "final": bool(r["final"]), "total": r["total"]}
            for r in rows
        ]

    def jobs(self, query: ListQuery) -> tuple[list[dict[str, Any]], int]:
        """One page of job summaries, newest first, and the number of matching jobs."""
        where, args = [], []
        if query.status is not None:
            where.append("status = ?")
            args.append(query.status)
        if query.cluster is not None:
            where.append("cluster = ?")
            args.append(query.cluster)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        # A page far past the end is empty; SQLite's OFFSET cannot hold more than 2**63 - 1.
        offset = min((query.page - 1) * query.per_page, _SQLITE_MAX)
        with self._read() as db:
            total = db.execute(f"SELECT COUNT(*) FROM jobs{clause}", args).fetchone()[0]
            rows = db.execute(
                f"SELECT * FROM jobs{clause} ORDER BY seq DESC LIMIT ? OFFSET ?",
                [*args, query.per_page, offset],
            ).fetchall()
        return [_summary(row) for row in rows], int(total)

    def exists(self, job_id: str) -> bool:
        with self._read() as db:
            found = db.execute("SELECT 1 FROM jobs WHERE job_id = ?", (job_id,)).fetchone()
        return found is not None

    def events(self, job_id: str | None, *, after: int, limit: int) -> list[dict[str, Any]]:
        """Events with ``id > after`` (of one job, or of every job), oldest first."""
        sql = "SELECT * FROM events WHERE id > ?"
        args: list[Any] = [after]
        if job_id is not None:
            sql += " AND job_id = ?"
            args.append(job_id)
        with self._read() as db:
            rows = db.execute(f"{sql} ORDER BY id LIMIT ?", [*args, limit]).fetchall()
        return [_record(row, _EVENT) for row in rows]


def _summary(row: sqlite3.Row) -> dict[str, Any]:
    """A list entry: the summary columns and the run's verdict (null without one)."""
    record = _record(row, _SUMMARY)
    report = _stored_report(row["report"])
    results = report.results if report is not None else None
    validity = results.validity if results is not None else None
    record["verdict"] = validity.verdict if validity is not None else None
    diagnosis = report.diagnosis if report is not None else None
    record["diagnosis"] = diagnosis.what if diagnosis is not None else None
    return record


def _stored_report(text: str | None) -> JobReport | None:
    """The stored ``report`` column with the runtime's own struct (None: none, or a report this
    version cannot decode; the job page says why when it is opened)."""
    if not text:
        return None
    try:
        return msgspec.json.decode(text, type=JobReport)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def _record(row: sqlite3.Row, columns: tuple[str, ...]) -> dict[str, Any]:
    record = {name: row[name] for name in columns if name not in _JSON_COLUMNS}
    if "job_name" in record and record["job_name"] is None:
        record["job_name"] = f"job-{row['job_id']}"
    return record
