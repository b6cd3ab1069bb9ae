"""Where an accuracy eval's questions come from, and fetching them in a job.

Each eval has one published source file (the files SGLang's `run_eval` reads, LongBench v2 from
the Hugging Face hub). A job looks for it, in order:

1. `benchmark.dataset_path` (that file only: nothing else is tried, nothing downloaded);
2. the offline folder `$SRT_DATASETS_DIR` (and the run config's `datasets_dir`):
   `<name>.jsonl` in our JSON Lines form, or the source's own file name;
3. the cache folder: `$HF_DATASETS_CACHE`, else `$HF_HOME/datasets`, else
   `~/.cache/huggingface/datasets`, under `srt-evals/<name>/<file>`; for a hub file also the
   hub's own cache layout (`$HF_HUB_CACHE`, else `$HF_HOME/hub`:
   `datasets--<org>--<repo>/snapshots/<revision>/<file>`);
4. unless offline (`HF_DATASETS_OFFLINE` or `HF_HUB_OFFLINE` is 1/true/yes/on), a download of
   the source URL over HTTP into the cache folder with srt_bench.fetch (under a lock, atomically:
   a partial file is never used; its sha256 recorded beside it and checked when it is reused).
   `$SRT_DATASETS_MIRROR` (`http://mirror:8080`) fetches `<mirror>/<host>/<path>` instead.

`plan_lookup` is pure (the environment is a parameter); `find_or_fetch` does the I/O and
returns what was used, with its sha256, for the job's `datasets_fetched.json` and lock.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

import msgspec

from srt_bench.errors import BenchDatasetError
from srt_bench.fetch import Log, Origin, fetch_one, local_file
from srt_bench.plans import EvalName
from srt_schema.fetch import DatasetFetch, FetchedDataset

__all__ = [
    "EVAL_SOURCES",
    "DatasetLookup",
    "EvalSource",
    "find_or_fetch",
    "is_offline",
    "plan_lookup",
]

#: Environment variables that switch a job offline (Hugging Face's own).
OFFLINE_VARIABLES = ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE")
_TRUE = frozenset({"1", "true", "yes", "on"})


class EvalSource(msgspec.Struct, frozen=True, kw_only=True):
    url: str
    #: The file's own name (what the offline folder and the cache hold).
    file: str
    #: `org/repo` of a Hugging Face dataset repository the file lives in (None: not on the hub).
    hub_repo: str | None = None


EVAL_SOURCES: dict[EvalName, EvalSource] = {
    "gsm8k": EvalSource(
        url="https://raw.githubusercontent.com/openai/grade-school-math/master/"
        "grade_school_math/data/test.jsonl",
        file="test.jsonl",
    ),
    "mmlu": EvalSource(
        url="https://openaipublic.blob.core.windows.net/simple-evals/mmlu.csv", file="mmlu.csv"
    ),
    "gpqa": EvalSource(
        url="https://openaipublic.blob.core.windows.net/simple-evals/gpqa_diamond.csv",
        file="gpqa_diamond.csv",
    ),
    "longbenchv2": EvalSource(
        url="https://huggingface.co/datasets/THUDM/LongBench-v2/resolve/main/data.json",
        file="data.json",
        hub_repo="THUDM/LongBench-v2",
    ),
}


class DatasetLookup(msgspec.Struct, frozen=True, kw_only=True):
    """The files tried in order, and the download (None when offline or a path was given)."""

    name: EvalName
    candidates: tuple[str, ...]
    #: Hub snapshot folders whose `<file>` is tried after the candidates (any revision).
    hub_snapshots: str | None = None
    download_url: str | None = None
    #: Where a download is written (the cache folder's file).
    cache_file: str
    offline_by: str | None = None


def is_offline(environ: Mapping[str, str]) -> str | None:
    """The variable that switches the job offline (`HF_DATASETS_OFFLINE=1`), or None."""
    for key in OFFLINE_VARIABLES:
        if environ.get(key, "").strip().lower() in _TRUE:
            return f"{key}={environ[key]}"
    return None


def _home(environ: Mapping[str, str]) -> Path:
    if environ.get("HF_HOME"):
        return Path(environ["HF_HOME"])
    return Path(environ.get("HOME", "/root")) / ".cache" / "huggingface"


def cache_folder(environ: Mapping[str, str]) -> Path:
    if environ.get("HF_DATASETS_CACHE"):
        return Path(environ["HF_DATASETS_CACHE"])
    return _home(environ) / "datasets"


def _mirrored(url: str, mirror: str) -> str:
    parts = urlsplit(url)
    return f"{mirror.rstrip('/')}/{parts.netloc}{parts.path}"


def plan_lookup(
    name: EvalName,
    *,
    dataset_path: str | None,
    datasets_dir: str | None,
    environ: Mapping[str, str],
) -> DatasetLookup:
    source = EVAL_SOURCES[name]
    cache_file = cache_folder(environ) / "srt-evals" / name / source.file
    offline = is_offline(environ)
    if dataset_path:
        return DatasetLookup(
            name=name, candidates=(dataset_path,), cache_file=str(cache_file), offline_by=offline
        )
    candidates: list[str] = []
    for folder in (environ.get("SRT_DATASETS_DIR"), datasets_dir):
        if folder:
            candidates += [str(Path(folder) / f"{name}.jsonl"), str(Path(folder) / source.file)]
    candidates.append(str(cache_file))
    snapshots = None
    if source.hub_repo is not None:
        hub = (
            Path(environ["HF_HUB_CACHE"]) if environ.get("HF_HUB_CACHE") else _home(environ) / "hub"
        )
        snapshots = str(hub / f"datasets--{source.hub_repo.replace('/', '--')}" / "snapshots")
    url = None
    if offline is None:
        mirror = environ.get("SRT_DATASETS_MIRROR", "")
        url = _mirrored(source.url, mirror) if mirror else source.url
    return DatasetLookup(
        name=name,
        candidates=tuple(dict.fromkeys(candidates)),
        hub_snapshots=snapshots,
        download_url=url,
        cache_file=str(cache_file),
        offline_by=offline,
    )


def _where(lookup: DatasetLookup) -> str:
    places = list(lookup.candidates)
    if lookup.hub_snapshots is not None:
        places.append(f"{lookup.hub_snapshots}/*/{EVAL_SOURCES[lookup.name].file}")
    return ", ".join(places)


def find_or_fetch(lookup: DatasetLookup, log: Log = lambda _line: None) -> FetchedDataset:
    """The first file of the lookup that exists, else the download (srt_bench.fetch: under a
    lock, atomically, sha256 recorded); errors name every place looked and how to fix it."""
    source = EVAL_SOURCES[lookup.name]
    for candidate in lookup.candidates:
        if Path(candidate).is_file():
            if candidate == lookup.cache_file and lookup.download_url is not None:
                return msgspec.structs.replace(
                    fetch_one(_spec(lookup, lookup.download_url), log), eval=lookup.name
                )
            origin: Origin = "cache" if candidate == lookup.cache_file else "local"
            return local_file(
                Path(candidate), field="dataset_path", eval_name=lookup.name, origin=origin
            )
    if lookup.hub_snapshots is not None:
        found = sorted(Path(lookup.hub_snapshots).glob(f"*/{source.file}"))
        if found:
            return local_file(
                found[-1], field="dataset_path", eval_name=lookup.name, origin="cache"
            )
    if len(lookup.candidates) == 1 and lookup.candidates[0] != lookup.cache_file:
        raise BenchDatasetError(
            f"$.benchmark.dataset_path: the {lookup.name} dataset {lookup.candidates[0]} does "
            "not exist; mount it into the benchmark's container or unset dataset_path to fetch "
            "the published file"
        )
    if lookup.download_url is None:
        raise BenchDatasetError(
            f"{lookup.name}: the dataset is not on this node and {lookup.offline_by} forbids a "
            f"download; looked in: {_where(lookup)}; put {source.file} (or "
            f"{lookup.name}.jsonl) in $SRT_DATASETS_DIR or the cache folder, or set "
            "benchmark.dataset_path"
        )
    try:
        fetched = fetch_one(_spec(lookup, lookup.download_url), log)
    except BenchDatasetError as exc:
        raise BenchDatasetError(
            f"{exc}\n  looked in: {_where(lookup)}; on a node without internet access put "
            f"{source.file} (or {lookup.name}.jsonl) in $SRT_DATASETS_DIR instead"
        ) from exc
    return msgspec.structs.replace(fetched, eval=lookup.name)


def _spec(lookup: DatasetLookup, url: str) -> DatasetFetch:
    published = EVAL_SOURCES[lookup.name].url
    return DatasetFetch(
        field="dataset_path",
        what=f"the {lookup.name} dataset",
        url=url,
        cache_file=lookup.cache_file,
        source=f"the published {lookup.name} file" if url == published else "$SRT_DATASETS_MIRROR",
    )
