"""The Tachometer metrics scraper as a plan process (``srt-telemetry scrape``).

Collects on every run unless ``observability.tachometer.enabled: false``. Endpoints: every worker
process's metrics (Dynamo: the system port; native servers: their HTTP port), every frontend,
and each service's declared ``metrics``, each with its kind's filter (``backend``, ``frontend``,
``dcgm`` with the GPU owners as ``gpu_metadata``, ``node_exporter``, else ``passthrough``) and its
metadata columns (``hostname``, ``worker_role``/``worker_index``/``worker_process``,
``frontend_index``, ``service``). The config file matches srt-telemetry's ``ScrapeConfig``.
The scraper runs on the bench node's bare host (srt-telemetry is installed on compute nodes).

Window sampling: unless the job sets ``collect_interval_ms`` itself
(``ctx.scrape_interval_given``), the scraper watches the folder where sa-bench stamps its
measurement windows (``scrape_window_dir``: power's ``windows/`` when power telemetry is on,
else ``telemetry/windows/`` in the log folder) and scrapes each endpoint at least
``WINDOW_SAMPLES`` times inside every window (srt-telemetry ``scrape_windows``); a window of a
few hundred milliseconds (the quickstart's) otherwise got 0-2 scrapes at the 1 s default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from srt_planner.context import PlanContext
from srt_planner.plan import GeneratedFile, ProcessSpec
from srt_planner.power import gpu_assignments
from srt_planner.services import effective_services
from srt_planner.srun import SrunStep, render_srun
from srt_schema.recipe import ServiceConfig, ServiceMetricsConfig

__all__ = [
    "TACHOMETER_CONFIG",
    "TACHOMETER_INTERVAL",
    "WINDOW_SAMPLES",
    "build_telemetry",
    "scrape_window_dir",
]

TACHOMETER_CONFIG = "tachometer_config.json"
#: The recipe key whose presence means "this interval exactly" (``LoadedJob.sets``).
TACHOMETER_INTERVAL = ("observability", "tachometer", "collect_interval_ms")
#: Scrapes of each endpoint wanted inside every measurement window.
WINDOW_SAMPLES = 10


#: The scrape filter of each exporter kind (srt-telemetry's README, "Filters").
_SERVICE_FILTERS = {"dcgm-exporter": "dcgm", "node-exporter": "node_exporter"}


def _endpoint(
    name: str,
    url: str,
    interval: int,
    metadata: Mapping[str, str],
    extra: Mapping[str, str],
    *,
    filter: str,
    gpu_metadata: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, Any]:
    """One scrape endpoint; ``extra`` (``tachometer.extra_metadata``) becomes constant columns
    of every row it yields, next to ``metadata`` (which srt sets and a recipe key cannot
    replace)."""
    endpoint: dict[str, Any] = {
        "name": name,
        "url": url,
        "collect_interval_ms": interval,
        "filter": filter,
        "node_metadata": {**extra, **metadata},
    }
    if gpu_metadata:
        endpoint["gpu_metadata"] = {gpu: dict(meta) for gpu, meta in gpu_metadata.items()}
    return endpoint


def _service_metrics(
    spec: ProcessSpec, ctx: PlanContext, by_name: dict[str, ServiceConfig]
) -> list[tuple[str, str, str]]:
    """(endpoint name, URL, service type) of each metrics listener of a service process."""
    service = by_name.get(spec.role)
    if service is None:
        return []
    metrics = service.metrics
    entries: tuple[ServiceMetricsConfig, ...] = (
        (metrics,) if isinstance(metrics, ServiceMetricsConfig) else metrics
    )
    out = []
    for entry in entries:
        if entry.nodes == "first" and spec.index > 0:
            continue
        label = entry.name or service.name
        node = spec.nodes[0]
        url = f"http://{ctx.address(node)}:{entry.port}{entry.path}"
        out.append((f"{label}_{node}", url, service.type))
    return out


def _gpu_owners(processes: Sequence[ProcessSpec]) -> dict[str, dict[str, dict[str, str]]]:
    """node -> GPU number -> the worker process that uses it (DCGM rows' columns)."""
    owners: dict[str, dict[str, dict[str, str]]] = {}
    for (node, gpu), assignments in gpu_assignments(processes).items():
        owners.setdefault(node, {})[str(gpu)] = {k: str(v) for k, v in assignments[0].items()}
    return owners


def scrape_window_dir(ctx: PlanContext) -> tuple[str, str] | None:
    """(host path, the benchmark's path) of the window folder the scraper samples densely, or
    None: no Tachometer, an explicit ``collect_interval_ms``, or a benchmark that stamps no
    windows (only sa-bench does). Power telemetry's folder when power is on (one folder, both
    readers)."""
    tachometer = ctx.recipe.observability.tachometer
    if tachometer.enabled is False or ctx.scrape_interval_given:
        return None
    if ctx.recipe.benchmark.type != "sa-bench":
        return None
    power = ctx.recipe.telemetry
    # Not below the scraper's storage (the benchmark may create it first, and the scraper
    # refuses a storage folder that exists), nor one level below the log folder, where readers
    # take `*/results_concurrency_*.json` for result files (a window is named like its result).
    sub = f"{power.storage_subdir}/windows" if power.enabled else "telemetry/windows"
    return f"{ctx.log_dir}/{sub}", f"{ctx.in_log_dir}/{sub}"


def build_telemetry(
    ctx: PlanContext, processes: Sequence[ProcessSpec]
) -> tuple[list[ProcessSpec], list[GeneratedFile]]:
    tachometer = ctx.recipe.observability.tachometer
    if tachometer.enabled is False:
        return [], []
    interval = tachometer.collect_interval_ms
    extra = tachometer.extra_metadata
    endpoints: list[dict[str, Any]] = []
    services = {s.name: s for s, _ in effective_services(ctx)}
    owners = _gpu_owners(processes)
    process_rank: dict[tuple[str, int], int] = {}
    frontends = 0
    for spec in processes:
        node = spec.nodes[0] if spec.nodes else ""
        match spec.kind:
            case "worker":
                key = (spec.role, spec.index)
                rank = process_rank.get(key, 0)
                process_rank[key] = rank + 1
                port = spec.ports.get("sys") if ctx.dynamo_workers else spec.ports.get("http")
                if port:
                    url = f"http://{ctx.address(node)}:{port}/metrics"
                    metadata = {
                        "hostname": node,
                        "worker_role": spec.role,
                        "worker_index": str(spec.index),
                        "worker_process": str(rank),
                    }
                    endpoints.append(
                        _endpoint(spec.name, url, interval, metadata, extra, filter="backend")
                    )
            case "frontend":
                port = spec.ports.get("http")
                if port:
                    url = f"http://{ctx.address(node)}:{port}/metrics"
                    metadata = {"hostname": node, "frontend_index": str(frontends)}
                    endpoints.append(
                        _endpoint(spec.name, url, interval, metadata, extra, filter="frontend")
                    )
                frontends += 1
            case "service":
                for name, url, kind in _service_metrics(spec, ctx, services):
                    metadata = {
                        "hostname": node,
                        "job_id": ctx.job_id,
                        "run_name": f"{ctx.recipe.name}_{ctx.job_id}",
                        "service": spec.role,
                    }
                    scrape_filter = _SERVICE_FILTERS.get(kind, "passthrough")
                    gpus = owners.get(node) if scrape_filter == "dcgm" else None
                    endpoints.append(
                        _endpoint(
                            name,
                            url,
                            interval,
                            metadata,
                            extra,
                            filter=scrape_filter,
                            gpu_metadata=gpus,
                        )
                    )
            case _:
                pass
    if not endpoints:
        return [], []
    config = {
        "storage": f"{ctx.in_log_dir}/{tachometer.storage_subdir}",
        "local_dir": f"{ctx.scratch_dir}/{tachometer.storage_subdir}",
        "endpoints": endpoints,
        "sync_interval_secs": float(tachometer.sync_interval_secs),
        "shutdown_grace_secs": tachometer.shutdown_grace_secs,
    }
    windows = scrape_window_dir(ctx)
    if windows is not None:
        config["window_dir"] = windows[0]
        config["window_samples"] = WINDOW_SAMPLES
    content = msgspec.json.encode(config).decode() + "\n"
    node = ctx.carving.bench
    argv = ("srt-telemetry", "scrape", "--config", f"{ctx.log_dir}/{TACHOMETER_CONFIG}")
    step = SrunStep(
        step_name="tachometer",
        nodes=(node,),
        log_path=ctx.log_path("tachometer.out"),
        options=dict(ctx.recipe.srun_options),
        het_group=ctx.het_group(node),
    )
    spec = ProcessSpec(
        name="tachometer",
        kind="telemetry",
        role="tachometer",
        nodes=(node,),
        env={"POLARS_MAX_THREADS": str(tachometer.compaction_threads)},
        argv=argv,
        srun_argv=() if ctx.local else render_srun(step, argv, job_id=ctx.job_id),
        log_file="tachometer.out",
        phase="telemetry",
        critical=False,
        stop_grace_seconds=tachometer.shutdown_grace_secs,
        stop_tier=0,
        het_group=step.het_group,
    )
    return [spec], [GeneratedFile(path=TACHOMETER_CONFIG, content=content)]
