"""Fields the schema accepts but srt does not execute yet: refused at validate, never ignored.

A field that validates and then has no effect makes a user believe it took effect. Until the
feature lands, each of these fields is refused when it is set to a value that would have an effect
(its default, ``false`` or an empty list is fine, so public recipes that merely spell a default
still load). ``docs/schema-ledger.md`` lists every schema field; its ``refused`` rows are these.

Two tables: ``RECIPE_UNSUPPORTED`` (checked as a cross-field rule of every recipe) and
``CLUSTER_UNSUPPORTED`` (checked when ``srtslurm.yaml`` is parsed). Each row is a path, a
predicate naming the concrete ``$.paths`` set to a value with an effect, and the message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import msgspec

from srt_schema.cluster import ClusterConfig
from srt_schema.errors import Issue
from srt_schema.recipe import (
    MockerBackend,
    Recipe,
    TRTLLMBackend,
)
from srt_schema.roles import engine_of
from srt_schema.validate.context import Context

__all__ = [
    "CLUSTER_UNSUPPORTED",
    "RECIPE_UNSUPPORTED",
    "RULES",
    "Unsupported",
    "cluster_issues",
]

T = TypeVar("T")


@dataclass(frozen=True)
class Unsupported(Generic[T]):
    """One field srt refuses: where, when it would have an effect, and what to do instead."""

    #: The dotted path a user writes (the ledger's row name).
    path: str
    #: The concrete ``$.paths`` of ``T`` that are set to a value that would have an effect.
    effective: Callable[[T], Iterator[str]]
    #: What is not supported and what to do instead.
    message: str


def _changed(value: Any, default: Any, prefix: str) -> Iterator[str]:
    """Every leaf ``$.path`` under ``prefix`` where ``value`` differs from ``default``."""
    if isinstance(value, dict) and isinstance(default, dict):
        for key in value:
            if key not in default:
                yield f"{prefix}.{key}"
            else:
                yield from _changed(value[key], default[key], f"{prefix}.{key}")
        return
    if isinstance(value, dict) and default is None:
        for key in value:
            yield from _changed(value[key], None, f"{prefix}.{key}")
        return
    if value != default:
        yield prefix


def _when(condition: Callable[[Recipe], bool], path: str) -> Callable[[Recipe], Iterator[str]]:
    def effective(recipe: Recipe) -> Iterator[str]:
        if condition(recipe):
            yield path

    return effective


def _sidecar_on(recipe: Recipe) -> bool:
    return recipe.dynamo.sidecar or any(c.sidecar for c in recipe.roles.values())


def _sidecar_context_length(recipe: Recipe) -> Iterator[str]:
    # Only the TRT-LLM sidecar takes --context-length (the SGLang and vLLM sidecars read the
    # context length from their engine's gRPC API); without sidecars nothing reads it.
    if recipe.dynamo.sidecar_context_length is None:
        return
    trtllm = all(isinstance(engine_of(recipe, name), TRTLLMBackend) for name in recipe.roles)
    if not (_sidecar_on(recipe) and trtllm):
        yield "$.dynamo.sidecar_context_length"


def _trtllm_disaggregated_sidecar(recipe: Recipe) -> Iterator[str]:
    # The TRT-LLM sidecar pair (native gRPC server + sidecar on MPI rank 0) is laid out for
    # aggregated workers only (docs/planner.md#trt-llm).
    if not _sidecar_on(recipe):
        return
    for name, config in recipe.roles.items():
        if name != "agg" and isinstance(engine_of(recipe, name), TRTLLMBackend):
            yield f"$.roles.{name}.sidecar" if config.sidecar else "$.dynamo.sidecar"


def _trtllm_sidecar_publish(recipe: Recipe) -> Iterator[str]:
    # The publish flags are dynamo.trtllm flags; the sidecar mode runs the native server.
    engine = engine_of(recipe, "agg") if "agg" in recipe.roles else None
    if not (_sidecar_on(recipe) and isinstance(engine, TRTLLMBackend)):
        return
    if not engine.publish_metrics:
        yield "$.engine.publish_metrics"
    if engine.publish_events_and_metrics:
        yield "$.engine.publish_events_and_metrics"


def _role_mocker_settings(recipe: Recipe) -> Iterator[str]:
    # A role-specific mocker never plans: the mocker needs the Dynamo frontend, which
    # role-specific engines do not support (roles_rules), and no router accepts it. Its settings
    # are named here so the refusal points at them, not only at the frontend.
    default = msgspec.to_builtins(MockerBackend())
    for name, config in recipe.roles.items():
        if isinstance(config.engine, MockerBackend):
            yield from _changed(
                msgspec.to_builtins(config.engine), default, f"$.roles.{name}.engine"
            )


def _role_trtllm_publish(recipe: Recipe) -> Iterator[str]:
    # A role-specific TRT-LLM engine runs only under frontend.type trtllm_serve (roles_rules
    # refuses the Dynamo frontend for role engines); the publish flags are dynamo.trtllm flags.
    for name, config in recipe.roles.items():
        if isinstance(config.engine, TRTLLMBackend):
            if not config.engine.publish_metrics:
                yield f"$.roles.{name}.engine.publish_metrics"
            if config.engine.publish_events_and_metrics:
                yield f"$.roles.{name}.engine.publish_events_and_metrics"


def _process_exporter_image(recipe: Recipe) -> Iterator[str]:
    exporter = recipe.observability.tachometer.process_exporter
    if exporter is not None and exporter.container_image:
        yield "$.observability.tachometer.process_exporter.container_image"


def _benchmark_sweep(recipe: Recipe) -> Iterator[str]:
    sweep = recipe.benchmark.sweep
    if sweep is None:
        return
    if sweep.mode != "zip":
        yield "$.benchmark.sweep.mode"
    if sweep.parameters:
        yield "$.benchmark.sweep.parameters"


def _agentperf(recipe: Recipe) -> Iterator[str]:
    if recipe.benchmark.type != "agentperf":
        return
    b = recipe.benchmark
    set_paths = [
        f"$.benchmark.{name}"
        for name, value in (
            ("agentperf_client_dir", b.agentperf_client_dir),
            ("agentperf_config", b.agentperf_config),
        )
        if value is not None
    ]
    yield from set_paths or ["$.benchmark.type"]


#: Recipe fields refused when set to a value with an effect (checked by ``RULES``).
RECIPE_UNSUPPORTED: tuple[Unsupported[Recipe], ...] = (
    Unsupported(
        "dynamo.sidecar_context_length",
        _sidecar_context_length,
        "sidecar_context_length is passed only to the TRT-LLM sidecar (--context-length); the "
        "sglang and vllm sidecars read the context length from their engine and without the "
        "sidecar mode nothing reads it; remove sidecar_context_length, or use it with engine "
        "trtllm and roles.agg.sidecar: true",
    ),
    Unsupported(
        "roles.*.sidecar (trtllm prefill / decode)",
        _trtllm_disaggregated_sidecar,
        "the TRT-LLM Dynamo sidecar mode runs aggregated workers only (a disaggregated native "
        "gRPC server + sidecar is not laid out by srt); use roles.agg with sidecar: true, or "
        "remove sidecar: true to run dynamo.trtllm disaggregated",
    ),
    Unsupported(
        "engine.publish_metrics, engine.publish_events_and_metrics (trtllm sidecar)",
        _trtllm_sidecar_publish,
        "the TRT-LLM sidecar mode runs the native gRPC server, which takes no publish flags "
        "(they are dynamo.trtllm flags); remove publish_metrics and publish_events_and_metrics, "
        "or remove sidecar: true",
    ),
    Unsupported(
        "observability.tachometer.binary_path",
        _when(
            lambda r: r.observability.tachometer.binary_path != "tachometer-scraper",
            "$.observability.tachometer.binary_path",
        ),
        "srt scrapes with its own srt-telemetry collector and runs no tachometer binary; remove "
        "binary_path",
    ),
    Unsupported(
        # Staging is planned (srt_planner.staging) for model folders only.
        "model.stage_dir",
        _when(
            lambda r: r.model.stage_dir is not None and r.model.path.startswith("hf:"),
            "$.model.stage_dir",
        ),
        "an hf: model has no folder to stage (the workers download it by id); remove "
        "stage_dir, or point model.path at a downloaded model folder",
    ),
    Unsupported(
        "enable_config_dump",
        _when(lambda r: not r.enable_config_dump, "$.enable_config_dump"),
        "turning the engine config dump off is not applied by srt yet (Dynamo workers always "
        "write <node>_config.json); remove enable_config_dump",
    ),
    Unsupported(
        "roles.*.engine (mocker settings)",
        _role_mocker_settings,
        "a role-specific mocker engine is not supported (the mocker needs the Dynamo frontend, "
        "which role-specific engines do not support), so its settings would never run; use one "
        "top-level engine: {type: mocker, ...} for every role",
    ),
    Unsupported(
        "roles.*.engine.publish_metrics, roles.*.engine.publish_events_and_metrics",
        _role_trtllm_publish,
        "a role-specific trtllm engine runs under frontend.type trtllm_serve, which takes no "
        "publish flags (they are Dynamo worker flags); remove publish_metrics and "
        "publish_events_and_metrics, or use one top-level trtllm engine with the Dynamo frontend",
    ),
    Unsupported(
        "benchmark.sweep.mode, benchmark.sweep.parameters",
        _benchmark_sweep,
        "benchmark.sweep is read by no runner (the reference ignores it too); remove it and put "
        "the values in the top-level sweep: block (one job per combination, {name} placeholders "
        "in the recipe)",
    ),
    Unsupported(
        "benchmark.agentperf_client_dir, benchmark.agentperf_config (type agentperf)",
        _agentperf,
        "benchmark.type 'agentperf' runs the agentperf client checkout (agentperf/run.py), "
        "which is not published (the PyPI package of that name is another program), so srt "
        "has never run it and cannot tell what it does with these settings; use your checkout "
        "with benchmark.type: custom, command: 'uv run --project /mnt/agentperf-client python "
        "/mnt/agentperf-client/agentperf/run.py --config /mnt/workload.yaml --endpoint "
        "http://$SRT_FRONTEND_HOST:$SRT_FRONTEND_PORT --model <served name> --concurrencies 4,8 "
        "--output-dir agentperf'",
    ),
    Unsupported(
        "observability.tachometer.process_exporter.container_image",
        _process_exporter_image,
        "the process exporter runs on the bare host, never in a container (the image would be "
        "ignored); set container_image: '' and binary: to the process-exporter path on the nodes",
    ),
)


def _cluster_set(
    getter: Callable[[ClusterConfig], object], path: str
) -> Callable[[ClusterConfig], Iterator[str]]:
    def effective(config: ClusterConfig) -> Iterator[str]:
        if getter(config):
            yield path

    return effective


#: srtslurm.yaml keys refused when set to a value with an effect (checked by ``cluster_issues``).
CLUSTER_UNSUPPORTED: tuple[Unsupported[ClusterConfig], ...] = (
    Unsupported(
        "telemetry",
        _cluster_set(lambda c: c.telemetry, "$.telemetry"),
        "cluster-level telemetry settings are not read by srt; remove telemetry from "
        "srtslurm.yaml and configure GPU scraping with default_gpu_exporter",
    ),
    Unsupported(
        "git_http_version",
        _cluster_set(lambda c: c.git_http_version, "$.git_http_version"),
        "srt does not pass an HTTP version to git yet; remove git_http_version and set it in "
        "git's own configuration (git config --global http.version HTTP/1.1)",
    ),
    Unsupported(
        "network_interface",
        _cluster_set(lambda c: c.network_interface, "$.network_interface"),
        "srt reaches each node at the address of its hostname and does not select an "
        "interface yet; remove network_interface",
    ),
    Unsupported(
        "default_gpu_exporter.power_profile",
        _cluster_set(
            lambda c: (
                c.default_gpu_exporter is not None
                and c.default_gpu_exporter.power_profile != "dcgm"
            ),
            "$.default_gpu_exporter.power_profile",
        ),
        "only the dcgm power profile is supported; remove power_profile (power telemetry is not "
        "planned by srt yet)",
    ),
)


def unsupported(ctx: Context) -> Iterator[Issue]:
    for row in RECIPE_UNSUPPORTED:
        for path in row.effective(ctx.recipe):
            yield ctx.issue(path, row.message)


def cluster_issues(config: ClusterConfig, *, file: str) -> list[Issue]:
    """Every refused srtslurm.yaml key that ``config`` sets to a value with an effect."""
    return [
        Issue(file=file, path=path, message=row.message)
        for row in CLUSTER_UNSUPPORTED
        for path in row.effective(config)
    ]


RULES = (unsupported,)
