"""The benchmark step's downloads (`bench.json` `fetch`, planned by srt_planner.datasets).

Each file is fetched once into the shared cache and reused by later jobs:

- a lock file beside it (`<file>.lock`, `flock`) lets one node or job download while the others
  wait, then find the file;
- the download streams into a temporary file in the same folder, hashing as it goes, and is
  renamed into place only when complete (and, with a `#sha256=` pin, only when it matches), so a
  partial or wrong file is never used; its sha256 is written beside it (`<file>.sha256`);
- a cached file is checked against that recorded sha256 (and the pin) before it is used.

Any failure (unreachable host, an HTTP status other than 200, a checksum mismatch) raises a
BenchDatasetError whose message is the one-screen diagnosis: what, which URL, what happened,
what to do. What was fetched is written to `<out_dir>/datasets_fetched.json` (srt_schema.fetch),
which the end of the run copies into recipe.lock.yaml.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

import httpx
import msgspec

from srt_bench.config import BenchRunConfig
from srt_bench.errors import BenchDatasetError
from srt_schema.fetch import FETCH_RECORD, DatasetFetch, FetchedDataset, FetchRecord

__all__ = ["fetch_datasets", "fetch_one", "local_file", "record_fetched"]

Log = Callable[[str], None]
Origin = Literal["downloaded", "cache", "local"]
CONNECT_TIMEOUT_SECONDS = 30.0
#: Seconds without a byte before a download counts as stalled.
READ_TIMEOUT_SECONDS = 120.0
#: Without a Content-Length, progress is logged every this many bytes.
PROGRESS_BYTES = 64 << 20
#: With a Content-Length at least this large, progress is logged at every tenth.
PROGRESS_MIN_TOTAL = 8 << 20
_CHUNK = 1 << 20


def _diagnosis(spec: DatasetFetch, result: str, *, cache: str, hint: str = "") -> str:
    field = f"benchmark.{spec.field}"
    lines = [
        f"cannot fetch {spec.what} ($.{field}, from {spec.source or 'the plan'})",
        f"  url:    {spec.url}",
        f"  result: {result}",
        f"  cache:  {cache}",
    ]
    if hint:
        lines.append(f"  {hint}")
    lines.append(
        "what to do: make the URL reachable from the benchmark node (an air-gapped cluster "
        "points $SRT_DATASETS_MIRROR, or for a Mooncake trace $SRT_MOONCAKE_TRACE_URL, at its "
        f"own copy), or download the file yourself and set {field} to its path inside the "
        "container (mount it with container_mounts): a local path is read as it is, nothing is "
        "downloaded"
    )
    return "\n".join(lines)


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


@contextlib.contextmanager
def _locked(path: Path, log: Log) -> Iterator[None]:
    """Hold `<path>.lock` (one download per file across nodes and jobs)."""
    lock = path.with_name(path.name + ".lock")
    with lock.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log(f"fetch: waiting for another job's download of {path} ({lock})")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _pinned(url: str, sha256: str) -> str:
    return f"{url}#sha256={sha256}"


def _from_cache(spec: DatasetFetch, dest: Path, log: Log) -> FetchedDataset:
    digest = _sha256_file(dest)
    sidecar = _sidecar(dest)
    recorded = sidecar.read_text().strip() if sidecar.is_file() else None
    if recorded is not None and recorded != digest:
        raise BenchDatasetError(
            _diagnosis(
                spec,
                f"the cached copy's sha256 is {digest}, but {recorded} was recorded when it "
                "was downloaded (the file changed since)",
                cache=str(dest),
                hint=f"delete {dest} and {sidecar} to download it again",
            )
        )
    if spec.sha256 is not None and digest != spec.sha256:
        raise BenchDatasetError(
            _diagnosis(
                spec,
                f"checksum mismatch: the cached copy's sha256 is {digest}, the URL pins "
                f"{spec.sha256}",
                cache=str(dest),
                hint=f"delete {dest} to download it again, or correct the #sha256= pin",
            )
        )
    size = dest.stat().st_size
    log(f"fetch: {spec.what}: {dest} from the cache ({size} bytes, sha256 {digest})")
    return FetchedDataset(
        field=spec.field,
        url=spec.url,
        path=str(dest),
        sha256=digest,
        size_bytes=size,
        origin="cache",
        pinned_url=_pinned(spec.url, digest),
    )


def _progress(log: Log, what: str, done: int, total: int | None, last: int) -> int:
    """Log a progress line when a tenth (or PROGRESS_BYTES) has passed; returns the new mark."""
    if total is not None and total >= PROGRESS_MIN_TOTAL:
        tenth = done * 10 // total
        if tenth > last:
            log(f"fetch: {what}: {done} of {total} bytes ({tenth * 10}%)")
            return tenth
        return last
    if total is None and done // PROGRESS_BYTES > last:
        log(f"fetch: {what}: {done} bytes so far")
        return done // PROGRESS_BYTES
    return last


def _download(spec: DatasetFetch, dest: Path, log: Log) -> FetchedDataset:
    log(f"fetch: {spec.what}: downloading {spec.url} into {dest}")
    digest = hashlib.sha256()
    size = 0
    fd, name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    tmp = Path(name)
    timeout = httpx.Timeout(READ_TIMEOUT_SECONDS, connect=CONNECT_TIMEOUT_SECONDS)
    try:
        with (
            os.fdopen(fd, "wb") as out,
            httpx.stream("GET", spec.url, timeout=timeout, follow_redirects=True) as resp,
        ):
            if resp.status_code != 200:
                raise BenchDatasetError(
                    _diagnosis(
                        spec,
                        f"HTTP {resp.status_code} {resp.reason_phrase}".rstrip(),
                        cache=f"{dest} (nothing written)",
                    )
                )
            length = resp.headers.get("content-length")
            total = int(length) if length and length.isdigit() else None
            mark = 0
            for chunk in resp.iter_bytes(_CHUNK):
                out.write(chunk)
                digest.update(chunk)
                size += len(chunk)
                mark = _progress(log, spec.what, size, total, mark)
        sha = digest.hexdigest()
        if spec.sha256 is not None and sha != spec.sha256:
            raise BenchDatasetError(
                _diagnosis(
                    spec,
                    f"checksum mismatch: the download's sha256 is {sha}, the URL pins "
                    f"{spec.sha256}",
                    cache=f"{dest} (the download was discarded)",
                    hint="the published file changed, or the pin is wrong: check both",
                )
            )
        _sidecar(dest).write_text(sha + "\n")
        tmp.replace(dest)
    except httpx.HTTPError as exc:
        raise BenchDatasetError(
            _diagnosis(
                spec,
                f"unreachable: {type(exc).__name__}: {exc}",
                cache=f"{dest} (nothing written)",
            )
        ) from exc
    finally:
        tmp.unlink(missing_ok=True)
    log(f"fetch: {spec.what}: downloaded {size} bytes, sha256 {sha}")
    return FetchedDataset(
        field=spec.field,
        url=spec.url,
        path=str(dest),
        sha256=sha,
        size_bytes=size,
        origin="downloaded",
        pinned_url=_pinned(spec.url, sha),
    )


def fetch_one(spec: DatasetFetch, log: Log) -> FetchedDataset:
    """The cached file, else a download into the cache (see the module docstring)."""
    dest = Path(spec.cache_file).expanduser()
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        with _locked(dest, log):
            if dest.is_file():
                return _from_cache(spec, dest, log)
            return _download(spec, dest, log)
    except OSError as exc:
        raise BenchDatasetError(
            _diagnosis(
                spec,
                f"the cache folder is not usable: {exc}",
                cache=str(dest),
                hint="set $SRT_DATASETS_CACHE to a writable folder on shared storage",
            )
        ) from exc


def record_fetched(out_dir: Path, fetched: tuple[FetchedDataset, ...]) -> Path:
    """Add `fetched` to `out_dir/datasets_fetched.json` (written whole, renamed into place)."""
    record = out_dir / FETCH_RECORD
    try:
        before = msgspec.json.decode(record.read_bytes(), type=FetchRecord).datasets
    except (OSError, msgspec.DecodeError):
        before = ()
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = record.with_name(f".{record.name}.tmp")
    data = FetchRecord(datasets=before + fetched)
    tmp.write_bytes(msgspec.json.format(msgspec.json.encode(data)))
    tmp.replace(record)
    return record


def local_file(
    path: Path, *, field: str, eval_name: str | None = None, origin: Origin = "local"
) -> FetchedDataset:
    """The record of a file read where it is (nothing downloaded)."""
    return FetchedDataset(
        field=field,
        url=None,
        path=str(path),
        sha256=_sha256_file(path),
        size_bytes=path.stat().st_size,
        origin=origin,
        pinned_url=None,
        eval=eval_name,
    )


def fetch_datasets(config: BenchRunConfig, out_dir: Path, log: Log) -> BenchRunConfig:
    """Fetch every planned file, record them in `out_dir/datasets_fetched.json`, and return the
    config whose `benchmark` fields name the local files."""
    if not config.fetch:
        return config
    fetched = tuple(fetch_one(spec, log) for spec in config.fetch)
    record_fetched(out_dir, fetched)
    changes = {f.field: f.path for f in fetched}
    return msgspec.structs.replace(
        config, benchmark=msgspec.structs.replace(config.benchmark, **changes)
    )
