"""Files a job downloads at run time: a Mooncake trace, a trace given as an http(s) URL.

The planner decides what is fetched, from where and into which cache file (``DatasetFetch``,
carried by ``bench.json``); the benchmark step downloads it before its client starts and records
what it got (``FetchRecord``, ``logs/datasets_fetched.json``), which the end of the run copies
into ``recipe.lock.yaml`` as ``lock.datasets``
(docs/telemetry-and-bench.md#datasets-fetched-in-the-job).

A URL may pin its content: ``https://host/trace.jsonl#sha256=<64 hex digits>`` (the lock's
``pinned_url``); the fragment is never sent, and a download or cached copy with another
checksum fails the job.
"""

from __future__ import annotations

import re
from typing import Literal

import msgspec

__all__ = [
    "FETCH_RECORD",
    "MOONCAKE_TRACE_BASE",
    "DatasetFetch",
    "FetchRecord",
    "FetchedDataset",
    "default_mooncake_trace_url",
    "is_url",
    "split_pin",
]

#: The record of the benchmark step's downloads, in the job's log directory.
FETCH_RECORD = "datasets_fetched.json"
#: Where the Mooncake project publishes its FAST'25 traces (what the reference downloads).
MOONCAKE_TRACE_BASE = "https://raw.githubusercontent.com/kvcache-ai/Mooncake/main/FAST25-release"

_PIN = re.compile(r"#sha256=(?P<digest>[^#&]*)$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def default_mooncake_trace_url(workload: str) -> str:
    """The published trace of a ``benchmark.mooncake_workload``."""
    if workload == "mooncake":
        return f"{MOONCAKE_TRACE_BASE}/arxiv-trace/mooncake_trace.jsonl"
    return f"{MOONCAKE_TRACE_BASE}/traces/{workload}_trace.jsonl"


def is_url(value: str | None) -> bool:
    """An ``http://`` or ``https://`` address (what a job downloads) rather than a file path."""
    return value is not None and value.lower().startswith(("http://", "https://"))


def split_pin(url: str) -> tuple[str, str | None]:
    """``(url without the pin, pinned sha256)``; raises ValueError for a malformed pin."""
    match = _PIN.search(url)
    if match is None:
        return url, None
    digest = match.group("digest").lower()
    if not _HEX64.match(digest):
        raise ValueError(
            f"#sha256={match.group('digest')} is not a sha256 checksum (64 hex digits)"
        )
    return url[: match.start()], digest


class DatasetFetch(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One download of the benchmark step (``bench.json`` ``fetch``)."""

    #: The ``benchmark`` field the downloaded file stands for (``dataset_path``, ``trace_file``).
    field: Literal["dataset_path", "trace_file"]
    #: What the file is, for messages (``the mooncake-router trace``).
    what: str
    #: Where it comes from (the pin fragment removed).
    url: str
    #: The file in the shared cache folder; reused by later jobs.
    cache_file: str
    #: The content's expected sha256 (the URL's ``#sha256=`` pin); None: whatever is published.
    sha256: str | None = None
    #: How the URL was chosen, for the diagnosis (``benchmark.dataset_path``,
    #: ``$SRT_MOONCAKE_TRACE_URL``, ``the published trace``).
    source: str = ""


class FetchedDataset(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What one download (or cache hit) gave."""

    field: str
    #: Where it came from; None for a local file (an accuracy eval's `dataset_path` or offline
    #: folder).
    url: str | None
    path: str
    sha256: str
    size_bytes: int
    #: ``downloaded`` in this job, found in the cache (``cache``), or a ``local`` file.
    origin: Literal["downloaded", "cache", "local"]
    #: ``url#sha256=...``: paste it where the URL was to pin the content (None: no URL).
    pinned_url: str | None
    #: The benchmark type that read it, when the file is an accuracy eval's dataset.
    eval: str | None = None


class FetchRecord(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``logs/datasets_fetched.json``."""

    datasets: tuple[FetchedDataset, ...] = ()
