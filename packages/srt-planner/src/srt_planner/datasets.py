"""What the benchmark step downloads before its client starts (``bench.json`` ``fetch``):
the Mooncake trace of ``mooncake-router`` when ``benchmark.dataset_path`` is unset, and a
``dataset_path``/``trace_file`` given as an http(s) URL
(docs/telemetry-and-bench.md#datasets-fetched-in-the-job).

Where from and where to are decided here, once, so the job reads nothing but its plan. The
settings come from the job's environment (:func:`build_dataset_settings`, a pure function of the
mapping it is given); the recipe's ``environment`` wins over it:

- ``$SRT_MOONCAKE_TRACE_URL``: the trace URL, ``{workload}`` replaced by the workload (an
  air-gapped cluster's copy); else ``$SRT_DATASETS_MIRROR`` + ``/<host>/<path>`` of the published
  trace (the mirror layout the accuracy evals use); else the published trace;
- the cache folder: ``$SRT_DATASETS_CACHE``, else ``$HF_DATASETS_CACHE``, else
  ``$HF_HOME/datasets``, else ``$HOME/.cache/huggingface/datasets`` (``~`` when unknown); the
  file is ``<folder>/srt-downloads/<first 16 hex digits of sha256(url)>/<file name>``. It must be
  on storage every node sees, at the same path inside the benchmark's container.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Literal

import msgspec

from srt_planner.errors import PlanningError
from srt_schema.fetch import DatasetFetch, default_mooncake_trace_url, is_url, split_pin
from srt_schema.recipe import Recipe

__all__ = [
    "DATASET_VARIABLES",
    "DatasetSettings",
    "build_dataset_settings",
    "cache_folder",
    "plan_fetches",
]

#: The job-environment variables the plan reads (the recipe's ``environment`` wins).
DATASET_VARIABLES = (
    "SRT_MOONCAKE_TRACE_URL",
    "SRT_DATASETS_MIRROR",
    "SRT_DATASETS_CACHE",
    "HF_DATASETS_CACHE",
    "HF_HOME",
    "HOME",
)
DOWNLOADS = "srt-downloads"


class DatasetSettings(msgspec.Struct, frozen=True, kw_only=True):
    """The job environment's say in downloads (only :data:`DATASET_VARIABLES`)."""

    environ: dict[str, str] = {}


def build_dataset_settings(environ: Mapping[str, str]) -> DatasetSettings:
    return DatasetSettings(environ={k: environ[k] for k in DATASET_VARIABLES if environ.get(k)})


def cache_folder(env: Mapping[str, str]) -> str:
    """The shared cache folder (see the module docstring)."""
    for key in ("SRT_DATASETS_CACHE", "HF_DATASETS_CACHE"):
        if env.get(key):
            return env[key].rstrip("/")
    if env.get("HF_HOME"):
        return f"{env['HF_HOME'].rstrip('/')}/datasets"
    return f"{env.get('HOME', '~').rstrip('/')}/.cache/huggingface/datasets"


def _host_path(url: str) -> tuple[str, str]:
    """``("host:port", "/path")`` of an http(s) URL (no urllib: the planner does no I/O)."""
    rest = url.split("://", 1)[-1].split("#", 1)[0].split("?", 1)[0]
    host, _, path = rest.partition("/")
    return host, f"/{path}"


def _cache_file(env: Mapping[str, str], url: str) -> str:
    name = PurePosixPath(_host_path(url)[1]).name or "download"
    digest = hashlib.sha256(url.encode()).hexdigest()[:16]
    return f"{cache_folder(env)}/{DOWNLOADS}/{digest}/{name}"


def _mirrored(url: str, mirror: str) -> str:
    host, path = _host_path(url)
    return f"{mirror.rstrip('/')}/{host}{path}"


def _trace_source(recipe: Recipe, env: Mapping[str, str]) -> tuple[str, str] | None:
    """``(url, how it was chosen)`` of the mooncake-router trace, or None (a local file)."""
    bench = recipe.benchmark
    if bench.dataset_path:
        return (
            (bench.dataset_path, "benchmark.dataset_path") if is_url(bench.dataset_path) else None
        )
    workload = bench.mooncake_workload or "conversation"
    if env.get("SRT_MOONCAKE_TRACE_URL"):
        template = env["SRT_MOONCAKE_TRACE_URL"]
        return template.replace("{workload}", workload), "$SRT_MOONCAKE_TRACE_URL"
    published = default_mooncake_trace_url(workload)
    if env.get("SRT_DATASETS_MIRROR"):
        return _mirrored(published, env["SRT_DATASETS_MIRROR"]), "$SRT_DATASETS_MIRROR"
    return published, f"the published {workload} trace"


def plan_fetches(recipe: Recipe, settings: DatasetSettings) -> tuple[DatasetFetch, ...]:
    """The downloads of the benchmark step (none for a type that reads only local files)."""
    bench = recipe.benchmark
    env = {**settings.environ, **recipe.environment}
    field: Literal["dataset_path", "trace_file"]
    if bench.type == "mooncake-router":
        chosen = _trace_source(recipe, env)
        field, what = "dataset_path", "the mooncake-router trace"
    elif bench.type == "trace-replay" and is_url(bench.trace_file):
        assert bench.trace_file is not None
        chosen = (bench.trace_file, "benchmark.trace_file")
        field, what = "trace_file", "the trace-replay trace"
    else:
        return ()
    if chosen is None:
        return ()
    address, source = chosen
    try:
        url, pin = split_pin(address)
    except ValueError as exc:
        raise PlanningError(f"{source}: {address!r}: {exc}") from exc
    return (
        DatasetFetch(
            field=field,
            what=what,
            url=url,
            cache_file=_cache_file(env, url),
            sha256=pin,
            source=source,
        ),
    )
