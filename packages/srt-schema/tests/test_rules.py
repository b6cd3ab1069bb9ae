"""One test per rule of the validation catalogue, by exact message
(docs/recipes.md#validation-catalogue)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from srt_schema import RecipeError, load_recipe_document

Doc = dict[str, Any]


def _base() -> Doc:
    return {
        "schema": 2,
        "name": "unit",
        "model": {"path": "/m", "container": "img:1", "precision": "bf16"},
        "resources": {"gpus_per_node": 4},
        "engine": "sglang",
        "roles": {"agg": {"nodes": 1, "workers": 1}},
        "frontend": {"type": "dynamo"},
        "benchmark": {"type": "sa-bench", "isl": 8, "osl": 8, "concurrencies": [1]},
    }


def _disagg(doc: Doc) -> None:
    doc["roles"] = {
        "prefill": {"nodes": 1, "workers": 1, "gpus": 2},
        "decode": {"nodes": 1, "workers": 1, "gpus": 2},
    }


def _all(*_: object) -> None:
    """Lets a table lambda run several edits (their return values are ignored)."""


def _issues(doc: Doc) -> list[tuple[str, str]]:
    try:
        load_recipe_document(doc, file="r.yaml")
    except RecipeError as exc:
        return [(i.path, i.message) for i in exc.issues]
    return []


def _edit(*steps: Callable[[Doc], None]) -> Doc:
    doc = _base()
    for step in steps:
        step(doc)
    return doc


def test_the_base_recipe_is_valid() -> None:
    assert _issues(_base()) == []


CASES: list[tuple[str, Callable[[Doc], None], str, str]] = [
    (
        "unknown role",
        lambda d: d["roles"].update(mixed={"nodes": 1}),
        "$.roles.mixed",
        "unknown role 'mixed'; valid roles are prefill, decode, agg",
    ),
    (
        "agg and disagg together",
        lambda d: d["roles"].update(prefill={"nodes": 1, "workers": 1}),
        "$.roles",
        "a recipe is aggregated (agg) or disaggregated (prefill + decode), never both; "
        "drop roles.agg or the prefill/decode roles",
    ),
    (
        "colocate on a role other than decode",
        lambda d: d["roles"]["agg"].update(nodes="colocate"),
        "$.roles.agg.nodes",
        "only the decode role can colocate (on the prefill nodes)",
    ),
    (
        "nodes below one",
        lambda d: d["roles"]["agg"].update(nodes=-1),
        "$.roles.agg.nodes",
        "-1 is out of range; nodes must be an integer in [0, 4096]",
    ),
    (
        "disagg role with workers but no nodes",
        lambda d: _all(_disagg(d), d["roles"]["prefill"].pop("nodes")),
        "$.roles.prefill.nodes",
        "roles.prefill has workers but no nodes; set `nodes:` (decode may also be `colocate`)",
    ),
    (
        "blank role container",
        lambda d: d["roles"]["agg"].update(container=" "),
        "$.roles.agg.container",
        "container must be a non-empty string",
    ),
    (
        "colocate without gpus",
        lambda d: _all(_disagg(d), d["roles"]["decode"].update(nodes="colocate", gpus=None)),
        "$.roles.decode.nodes",
        "colocated decode (`nodes: colocate`) requires an explicit `gpus:` on both prefill and "
        "decode (missing on decode)",
    ),
    (
        "colocate capacity",
        lambda d: _all(_disagg(d), d["roles"]["decode"].update(nodes="colocate", workers=2)),
        "$.roles.decode.nodes",
        "colocated decode workers do not fit on the prefill nodes: 1 prefill x 2 GPU(s) + 2 "
        "decode x 2 GPU(s) = 6 GPU(s) on 1 node(s) x 4 GPU(s) = 4 GPU(s); lower the workers "
        "or GPUs",
    ),
    (
        "top-level and role engine",
        lambda d: d["roles"]["agg"].update(engine="vllm"),
        "$.roles.agg.engine",
        "roles.agg.engine cannot be combined with a top-level engine; drop one of them",
    ),
    (
        "extra_args outside trtllm",
        lambda d: d["roles"]["agg"].update(extra_args=["--x"]),
        "$.roles.agg.extra_args",
        "roles.agg.extra_args is only supported by the trtllm engine (this role runs sglang); "
        "put flags in roles.agg.args",
    ),
    (
        "kv_events on trtllm",
        lambda d: (d.update(engine="trtllm"), d["roles"]["agg"].update(kv_events=True)),
        "$.roles.agg.kv_events",
        "roles.agg.kv_events is not supported by the trtllm engine",
    ),
    (
        "sidecars disagree",
        lambda d: _all(
            _disagg(d),
            d["roles"]["prefill"].update(sidecar=True),
            d["roles"]["decode"].update(sidecar=False),
        ),
        "$.roles",
        "roles.*.sidecar must agree across roles (the Dynamo sidecar mode is job-wide); got "
        "decode=false, prefill=true",
    ),
    (
        "sidecar without the dynamo frontend",
        lambda d: _all(
            d["roles"]["agg"].update(sidecar=True, workers=2),
            d["frontend"].update(type="sglang-router"),
        ),
        "$.dynamo.sidecar",
        "the Dynamo sidecar mode needs frontend.type: dynamo (got 'sglang-router')",
    ),
    (
        "unknown frontend",
        lambda d: d["frontend"].update(type="nginx"),
        "$.frontend.type",
        "unknown frontend.type 'nginx'; available: atomesh, dynamo, none, sgl-router, sglang, "
        "sglang-router, smg, tilert-router, trtllm_serve, vllm, vllm-router",
    ),
    (
        "frontend engine pairing",
        lambda d: d["frontend"].update(type="vllm-router"),
        "$.frontend.type",
        "frontend.type: vllm-router requires engine vllm; got agg=sglang",
    ),
    (
        "worker_selection outside dynamo",
        lambda d: d["frontend"].update(type="sglang-router", worker_selection={"a": 1}),
        "$.frontend.worker_selection",
        "frontend.worker_selection is only supported with frontend.type: dynamo",
    ),
    (
        "direct frontend with multiple frontends",
        lambda d: d["frontend"].update(type="sglang"),
        "$.frontend.enable_multiple_frontends",
        "frontend.type: sglang serves from the worker itself; set enable_multiple_frontends: false",
    ),
    (
        "direct frontend with two workers",
        lambda d: _all(
            d["frontend"].update(type="sglang", enable_multiple_frontends=False),
            d["roles"]["agg"].update(workers=2),
        ),
        "$.frontend.type",
        "frontend.type: sglang (direct: the worker serves the API itself) supports exactly one "
        "aggregate worker, got 2; for several workers write frontend.type: sglang-router or "
        "dynamo",
    ),
    (
        "direct frontend with disagg",
        lambda d: _all(
            _disagg(d), d["frontend"].update(type="sglang", enable_multiple_frontends=False)
        ),
        "$.roles",
        "frontend.type: sglang runs one aggregate worker; it has no prefill/decode layout (use a "
        "router or dynamo frontend)",
    ),
    (
        "frontend none with workers",
        lambda d: d["frontend"].update(type="none"),
        "$.frontend.type",
        "frontend.type: none is only supported without engine roles (no prefill/decode/agg "
        "workers); pick a frontend for the workers or drop them",
    ),
    (
        "moriio without vllm-router",
        lambda d: d.update(engine={"type": "vllm", "connector": "moriio"}),
        "$.engine.connector",
        "a discovery connector (engine.connector: moriio) registers workers with the vLLM "
        "Router; it requires frontend.type: vllm-router (got 'dynamo')",
    ),
    (
        "bad frontend placement",
        lambda d: d["frontend"].update(placement={"node": "last_decode"}),
        "$.frontend.placement.node",
        "'last_decode' is not a frontend placement; use one of head, first_decode, dedicated",
    ),
    (
        "last_decode without decode workers",
        lambda d: d["benchmark"].update(placement={"node": "last_decode"}),
        "$.benchmark.placement.node",
        "benchmark.placement.node is last_decode, but no decode workers were found",
    ),
    (
        "het jobs on agg",
        lambda d: d["resources"].update(het_jobs=True),
        "$.resources.het_jobs",
        "het_jobs=true requires a disaggregated layout (declare roles.prefill and roles.decode)",
    ),
    (
        "het jobs on vllm",
        lambda d: _all(_disagg(d), d.update(engine="vllm"), d["resources"].update(het_jobs=True)),
        "$.resources.het_jobs",
        "het_jobs=true is only supported on the sglang engine; got prefill=vllm",
    ),
    (
        "het jobs with a dedicated client",
        lambda d: _all(
            _disagg(d),
            d["resources"].update(het_jobs=True),
            d["benchmark"].update(placement={"node": "dedicated"}),
        ),
        "$.resources.het_jobs",
        "benchmark.placement.node: dedicated is not supported together with het_jobs=true",
    ),
    (
        "top_of_tree with a source",
        lambda d: d.update(dynamo={"top_of_tree": True, "source": {"pypi": "1.0.0"}}),
        "$.dynamo.top_of_tree",
        "dynamo.top_of_tree cannot be combined with dynamo.source; pin a commit in source.rev "
        "or drop top_of_tree",
    ),
    (
        "two dynamo sources",
        lambda d: d.update(dynamo={"source": {"pypi": "1.0.0", "wheel": "/w.whl"}}),
        "$.dynamo.source",
        "dynamo.source needs exactly one of git (with rev), pypi, or wheel; got pypi, wheel",
    ),
    (
        "moving dynamo rev",
        lambda d: d.update(dynamo={"source": {"rev": "main"}}),
        "$.dynamo.source.rev",
        "dynamo.source.rev must be an immutable ref (commit SHA, tag, or refs/pull/<n>/head), "
        "not a moving branch name: 'main'",
    ),
    (
        "bad sha",
        lambda d: d.update(dynamo={"source": {"rev": "v1", "sha": "XYZ"}}),
        "$.dynamo.source.sha",
        "'XYZ' is not a commit SHA (4-40 lowercase hex digits)",
    ),
    (
        "sha on a pypi source",
        lambda d: d.update(dynamo={"source": {"pypi": "1.0", "sha": "abcd"}}),
        "$.dynamo.source.sha",
        "source.sha only applies to a git source",
    ),
    (
        "sidecar port",
        lambda d: d.update(dynamo={"sidecar_port": 70000}),
        "$.dynamo.sidecar_port",
        "70000 is out of range; sidecar_port must be an integer in [1, 65535]",
    ),
    (
        "failover outside dynamo",
        lambda d: _all(
            d.update(engine={"type": "vllm", "failover": {}}),
            d["frontend"].update(type="vllm-router"),
        ),
        "$.engine.failover",
        "engine.failover needs frontend.type: dynamo",
    ),
    (
        "unknown profiler",
        lambda d: d.update(profiling={"type": "perf"}),
        "$.profiling.type",
        "'perf' is not a profiler; use one of none, nsys, nsys-time, torch",
    ),
    (
        "torch profiling on trtllm",
        lambda d: d.update(engine="trtllm", profiling={"type": "torch", "aggregated": {}}),
        "$.profiling.type",
        "torch profiling is not supported with trtllm",
    ),
    (
        "nsys-time without a window",
        lambda d: d.update(profiling={"type": "nsys-time", "aggregated": {}}),
        "$.profiling",
        "profiling.type nsys-time needs both delay_secs and duration_secs",
    ),
    (
        "agg profiling without the aggregated phase",
        lambda d: d.update(profiling={"type": "torch"}),
        "$.profiling.aggregated",
        "a aggregated recipe profiles with profiling.aggregated",
    ),
    (
        "profiling phase that does not apply",
        lambda d: d.update(profiling={"type": "torch", "aggregated": {}, "prefill": {}}),
        "$.profiling.prefill",
        "profiling.prefill does not apply to a aggregated recipe",
    ),
    (
        "selected worker out of range",
        lambda d: d.update(
            profiling={
                "type": "torch",
                "aggregated": {"capture_scope": "selected", "worker_index": 3},
            }
        ),
        "$.profiling.aggregated.worker_index",
        "worker_index 3 is out of range; the phase has 1 worker(s)",
    ),
    (
        "profiling a mocker",
        lambda d: d.update(engine="mocker", profiling={"type": "torch", "aggregated": {}}),
        "$.profiling.type",
        "the Dynamo mocker runs no GPU kernels and serves no profiler endpoint, so nothing "
        "would be profiled; remove profiling (or set profiling.type: none)",
    ),
    (
        "profiling window that ends before it starts",
        lambda d: d.update(
            profiling={"type": "torch", "aggregated": {"start_step": 5, "stop_step": 5}}
        ),
        "$.profiling.aggregated.stop_step",
        "stop_step 5 must be greater than start_step 5 (the window profiles steps "
        "start_step .. stop_step - 1)",
    ),
    (
        "step window under nsys-time",
        lambda d: d.update(
            profiling={
                "type": "nsys-time",
                "delay_secs": 5,
                "duration_secs": 10,
                "aggregated": {"start_step": 1, "stop_step": 5},
            }
        ),
        "$.profiling.aggregated.start_step",
        "profiling.type nsys-time is bounded by delay_secs and duration_secs; remove "
        "start_step and stop_step, or use profiling.type nsys for a step window",
    ),
    (
        "step window on an engine without profile requests",
        lambda d: d.update(
            engine="atom",
            frontend={"type": "dynamo"},
            profiling={"type": "nsys", "aggregated": {"start_step": 1, "stop_step": 5}},
        ),
        "$.profiling.aggregated.start_step",
        "the atom engine takes no start/stop-profile requests, so a step window would not "
        "bound the capture; remove start_step and stop_step and bound it with profiling.type "
        "nsys-time (delay_secs, duration_secs)",
    ),
    (
        "additional frontends without multiple frontends",
        lambda d: d.update(
            frontend={
                "type": "dynamo",
                "enable_multiple_frontends": False,
                "num_additional_frontends": 2,
            }
        ),
        "$.frontend.num_additional_frontends",
        "num_additional_frontends (2) counts the frontends behind nginx, and "
        "frontend.enable_multiple_frontends is false (one frontend, no nginx); remove it, or "
        "set enable_multiple_frontends: true",
    ),
    (
        "a time limit Slurm would not take",
        lambda d: d.update(slurm={"time_limit": "2h"}),
        "$.slurm.time_limit",
        "'2h' is not a Slurm time limit; write MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS "
        "(or UNLIMITED)",
    ),
    (
        "an Nsight knob with torch profiling",
        lambda d: d.update(profiling={"type": "torch", "aggregated": {}, "nsys_trace": "cuda"}),
        "$.profiling.nsys_trace",
        "profiling.nsys_trace ('cuda') configures the Nsight wrapper, and profiling.type torch "
        "runs none; remove it, or set profiling.type nsys (or nsys-time)",
    ),
    (
        "extra nsys args with torch profiling",
        lambda d: d.update(
            profiling={"type": "torch", "aggregated": {}, "extra_nsys_args": ["--x"]}
        ),
        "$.profiling.extra_nsys_args",
        "profiling.extra_nsys_args (['--x']) configures the Nsight wrapper, and profiling.type "
        "torch runs none; remove it, or set profiling.type nsys (or nsys-time)",
    ),
    (
        "trace_fork_before_exec with torch profiling",
        lambda d: d.update(
            profiling={"type": "torch", "aggregated": {}, "trace_fork_before_exec": False}
        ),
        "$.profiling.trace_fork_before_exec",
        "profiling.trace_fork_before_exec (False) configures the Nsight wrapper, and "
        "profiling.type torch runs none; remove it, or set profiling.type nsys (or nsys-time)",
    ),
    (
        "a time window with step profiling",
        lambda d: d.update(profiling={"type": "nsys", "aggregated": {}, "delay_secs": 5}),
        "$.profiling.delay_secs",
        "profiling.delay_secs (5) belongs to the time window of profiling.type nsys-time, and "
        "profiling.type nsys does not use it; remove it, or set profiling.type: nsys-time",
    ),
    (
        "a capture duration with torch profiling",
        lambda d: d.update(profiling={"type": "torch", "aggregated": {}, "duration_secs": 5}),
        "$.profiling.duration_secs",
        "profiling.duration_secs (5) belongs to the time window of profiling.type nsys-time, "
        "and profiling.type torch does not use it; remove it, or set profiling.type: nsys-time",
    ),
    (
        "a traffic duration with torch profiling",
        lambda d: d.update(
            profiling={"type": "torch", "aggregated": {}, "benchmark_duration_secs": 60}
        ),
        "$.profiling.benchmark_duration_secs",
        "profiling.benchmark_duration_secs (60) belongs to the time window of profiling.type "
        "nsys-time, and profiling.type torch does not use it; remove it, or set "
        "profiling.type: nsys-time",
    ),
    (
        "capture_range_end under nsys-time",
        lambda d: d.update(
            profiling={
                "type": "nsys-time",
                "delay_secs": 5,
                "duration_secs": 10,
                "capture_range_end": "repeat",
            }
        ),
        "$.profiling.capture_range_end",
        "profiling.capture_range_end ('repeat') ends a cudaProfilerApi range (profiling.type "
        "nsys), and nsys-time ends its capture after duration_secs; remove it, or set "
        "profiling.type: nsys",
    ),
    (
        "nsys_trace on trtllm",
        lambda d: d.update(
            engine="trtllm", profiling={"type": "nsys", "aggregated": {}, "nsys_trace": "cuda"}
        ),
        "$.profiling.nsys_trace",
        "the trtllm engine is always traced with -t cuda,nvtx,ucx, so profiling.nsys_trace "
        "('cuda') would be ignored; remove it (or add other trace options with extra_nsys_args)",
    ),
    (
        "a timed capture longer than the benchmark traffic",
        lambda d: d.update(
            profiling={"type": "nsys-time", "delay_secs": 200, "duration_secs": 150}
        ),
        "$.profiling.benchmark_duration_secs",
        "benchmark_duration_secs 300 does not cover the capture window (delay_secs 200 + "
        "duration_secs 150 = 350); set it to at least 350",
    ),
    (
        "a traffic duration for a benchmark srt does not drive",
        lambda d: _all(
            d.update(benchmark={"type": "custom", "command": "run-it"}),
            d.update(
                profiling={
                    "type": "nsys-time",
                    "delay_secs": 5,
                    "duration_secs": 10,
                    "benchmark_duration_secs": 60,
                }
            ),
        ),
        "$.profiling.benchmark_duration_secs",
        "profiling.benchmark_duration_secs (60) lengthens sa-bench's traffic; benchmark.type "
        "custom sends its own, which srt cannot lengthen; remove it and size the benchmark to "
        "last at least delay_secs + duration_secs (15 s)",
    ),
    (
        "nsys capture window",
        lambda d: d.update(observability={"nsys": {"capture_window": "forever"}}),
        "$.observability.nsys.capture_window",
        "'forever' is not allowed; expected one of 'measured_workload', 'including_startup'",
    ),
    (
        "tachometer subdir equals telemetry subdir",
        lambda d: d.update(observability={"tachometer": {"storage_subdir": "power"}}),
        "$.observability.tachometer.storage_subdir",
        "must differ from telemetry.storage_subdir; each writes its own files",
    ),
    (
        "unsafe tachometer subdir",
        lambda d: d.update(observability={"tachometer": {"storage_subdir": "../x"}}),
        "$.observability.tachometer.storage_subdir",
        "must not contain '..' or empty parts",
    ),
    (
        "cpu power without telemetry",
        lambda d: d.update(telemetry={"cpu_power": {"enabled": True}}),
        "$.telemetry.cpu_power.enabled",
        "telemetry.cpu_power.enabled requires telemetry.enabled",
    ),
    (
        "cpu power required without the collector",
        lambda d: d.update(telemetry={"cpu_power": {"required": True}}),
        "$.telemetry.cpu_power.required",
        "telemetry.cpu_power.required has no effect unless telemetry.cpu_power.enabled",
    ),
    (
        "telemetry with nothing to collect",
        lambda d: d.update(telemetry={"enabled": True}),
        "$.telemetry",
        "telemetry.enabled requires telemetry.dcgm_exporter, telemetry.cpu_power_exporter, or "
        "telemetry.cpu_power.enabled; otherwise there is nothing to collect",
    ),
    (
        "telemetry with an unsupported benchmark",
        lambda d: d.update(
            telemetry={"enabled": True, "dcgm_exporter": {"container_image": "d", "port": 9401}},
            benchmark={"type": "gsm8k"},
        ),
        "$.telemetry.enabled",
        "GPU power telemetry supports benchmark types sa-bench, agentic, agentx, custom, "
        "manual; got 'gsm8k'",
    ),
    (
        "cpu power subdir equals telemetry subdir",
        lambda d: d.update(
            telemetry={"enabled": True, "cpu_power": {"enabled": True, "storage_subdir": "power"}}
        ),
        "$.telemetry.cpu_power.storage_subdir",
        "telemetry.cpu_power.storage_subdir must differ from telemetry.storage_subdir; the two "
        "legs write their own samples and manifest",
    ),
    (
        "collector join budget",
        lambda d: d.update(
            telemetry={
                "enabled": True,
                "cpu_power": {"enabled": True},
                "collector_join_timeout_seconds": 5,
            }
        ),
        "$.telemetry.collector_join_timeout_seconds",
        "must be greater than 10 (2 x (2 x request_timeout_seconds + 1))",
    ),
    (
        "stream interval",
        lambda d: d.update(reporting={"status": {"logging-stream-interval": 0}}),
        "$.reporting.status.logging-stream-interval",
        "0 is out of range; logging-stream-interval must be a number in (0, 86400]",
    ),
    (
        "duplicate service names",
        lambda d: d.update(
            services=[{"name": "a", "command": ["x"]}, {"name": "a", "command": ["y"]}]
        ),
        "$.services[1].name",
        "services[].name must be unique; duplicate: 'a'",
    ),
    (
        "unknown service type",
        lambda d: d.update(services=[{"name": "a", "type": "redis"}]),
        "$.services[0].type",
        "unknown service type 'redis'; available: dcgm-exporter, etcd, generic, gms, "
        "lmcache-server, mooncake-master, mooncake-store, nats, node-exporter, "
        "process-exporter, ray",
    ),
    (
        "generic service without a command",
        lambda d: d.update(services=[{"name": "a"}]),
        "$.services[0].command",
        "a generic service needs `command:` (the argv to run)",
    ),
    (
        "empty command entry",
        lambda d: d.update(services=[{"name": "a", "command": ["x", " "]}]),
        "$.services[0].command",
        "services[0].command has an empty entry",
    ),
    (
        "unknown start phase",
        lambda d: d.update(services=[{"name": "a", "command": ["x"], "start": "later"}]),
        "$.services[0].start",
        "'later' is not a start phase; use one of infra, before_workers, with_workers, "
        "after_frontend",
    ),
    (
        "dedicated generic service",
        lambda d: d.update(
            services=[{"name": "a", "command": ["x"], "placement": {"node": "dedicated"}}]
        ),
        "$.services[0].placement.node",
        "dedicated placement is for etcd, nats and mooncake-master, not generic",
    ),
    (
        "per worker on head",
        lambda d: d.update(
            services=[{"name": "a", "command": ["x"], "placement": {"per": "worker"}}]
        ),
        "$.services[0].placement.per",
        "per: worker needs placement.node prefill, decode, agg or workers",
    ),
    (
        "unknown service option",
        lambda d: d.update(services=[{"name": "n", "type": "nats", "options": {"size": 1}}]),
        "$.services[0].options",
        "unknown option(s) size for a nats service; allowed: max_payload_mb",
    ),
    (
        "moving service rev",
        lambda d: d.update(
            services=[
                {"name": "a", "command": ["x"], "source": {"git": "https://g", "rev": "master"}}
            ]
        ),
        "$.services[0].source.rev",
        "source.rev must be an immutable ref, not a moving branch name: 'master'",
    ),
    (
        "etcd and nats disagree on dedicated",
        lambda d: d.update(
            services=[
                {"name": "etcd", "type": "etcd", "placement": {"node": "dedicated"}},
                {"name": "nats", "type": "nats"},
            ]
        ),
        "$.services",
        "services etcd and nats must agree on placement.node: dedicated (they share the infra "
        "node)",
    ),
    (
        "pool that nobody owns",
        lambda d: d.update(
            services=[{"name": "a", "command": ["x"], "placement": {"pool": "train"}}]
        ),
        "$.services[0].placement.pool",
        "'train' names no service that declares nodes (pools: none)",
    ),
    (
        "mooncake store without master",
        lambda d: d.update(services=[{"name": "s", "type": "mooncake-store"}]),
        "$.services",
        "a mooncake-store service needs a mooncake-master service",
    ),
    (
        "terminal service with a benchmark",
        lambda d: d.update(services=[{"name": "a", "command": ["x"], "terminal": True}]),
        "$.services[0].terminal",
        "a terminal service ends the job itself; it cannot be combined with benchmark.type "
        "'sa-bench' (use manual)",
    ),
    (
        "unknown benchmark type",
        lambda d: d.update(benchmark={"type": "speedtest"}),
        "$.benchmark.type",
        "unknown benchmark.type 'speedtest'; available: agentperf, custom, gpqa, gsm8k, "
        "lm-eval, longbenchv2, manual, mmlu, mooncake-router, router, sa-bench, sglang-bench, "
        "trace-replay",
    ),
    (
        "field the benchmark type does not read",
        lambda d: d["benchmark"].update(num_shots=5),
        "$.benchmark.num_shots",
        "benchmark.type 'sa-bench' does not use num_shots; fields it accepts: "
        "capacity, colocate_with_frontend, concurrencies, custom_tokenizer, "
        "dataset_name, dataset_path, isl, num_prompts_mult, num_warmup_mult, osl, placement, "
        "random_range_ratio, req_rate, reuse_http_connections, slow_down_sleep_time, "
        "slow_down_wait_time, stream_output, sweep, type, use_chat_template, workload",
    ),
    (
        "aiperf flags on a type that does not run aiperf",
        lambda d: d["benchmark"].update(aiperf_args={"warmup-request-count": 3}),
        "$.benchmark.aiperf_args",
        "benchmark.type 'sa-bench' does not use aiperf_args; fields it accepts: "
        "capacity, colocate_with_frontend, concurrencies, custom_tokenizer, "
        "dataset_name, dataset_path, isl, num_prompts_mult, num_warmup_mult, osl, placement, "
        "random_range_ratio, req_rate, reuse_http_connections, slow_down_sleep_time, "
        "slow_down_wait_time, stream_output, sweep, type, use_chat_template, workload",
    ),
    (
        "malformed concurrency string",
        lambda d: d["benchmark"].update(concurrencies="4,8"),
        "$.benchmark.concurrencies",
        "'4,8' is not a concurrency list; write [4, 8] or \"4x8\"",
    ),
    (
        "non-positive concurrency",
        lambda d: d["benchmark"].update(concurrencies=[4, 0]),
        "$.benchmark.concurrencies",
        "[4, 0] is not allowed; concurrencies must be a non-empty list of positive integers",
    ),
    (
        "repeated concurrencies with power telemetry",
        lambda d: _all(
            d["benchmark"].update(concurrencies="2x2"),
            d.update(
                telemetry={
                    "enabled": True,
                    "dcgm_exporter": {"container_image": "dcgm:1", "port": 9400},
                }
            ),
        ),
        "$.benchmark.concurrencies",
        "[2, 2] repeats 2; with telemetry.enabled each power window is keyed by its concurrency, "
        "so every level must be unique: drop the repeat or set telemetry.enabled: false",
    ),
    (
        "custom benchmark without a command",
        lambda d: d.update(benchmark={"type": "custom"}),
        "$.benchmark.command",
        "a custom benchmark needs `command:`",
    ),
    (
        "sa-bench without sizes",
        lambda d: d.update(benchmark={"type": "sa-bench"}),
        "$.benchmark.isl",
        "benchmark.type 'sa-bench' needs isl, osl, concurrencies; e.g. isl: 1024, osl: 1024, "
        "concurrencies: [4, 8]",
    ),
    (
        "bad request rate",
        lambda d: d["benchmark"].update(req_rate="fast"),
        "$.benchmark.req_rate",
        "'fast' is not a rate; use a number or inf",
    ),
    (
        "request rate not positive",
        lambda d: d["benchmark"].update(req_rate=0),
        "$.benchmark.req_rate",
        "0 is out of range; req_rate must be a number > 0 or inf",
    ),
    (
        "negative output length",
        lambda d: d["benchmark"].update(osl=-5),
        "$.benchmark.osl",
        "-5 is out of range; osl must be an integer in [1, 10000000]",
    ),
    (
        "zero input length",
        lambda d: d["benchmark"].update(isl=0),
        "$.benchmark.isl",
        "0 is out of range; isl must be an integer in [1, 10000000]",
    ),
    (
        "prompt multiplier below one",
        lambda d: d["benchmark"].update(num_prompts_mult=0),
        "$.benchmark.num_prompts_mult",
        "0 is out of range; num_prompts_mult must be an integer in [1, 10000]",
    ),
    (
        "negative warmup multiplier",
        lambda d: d["benchmark"].update(num_warmup_mult=-1),
        "$.benchmark.num_warmup_mult",
        "-1 is out of range; num_warmup_mult must be an integer in [0, 10000]",
    ),
    (
        "range ratio above one",
        lambda d: d["benchmark"].update(random_range_ratio=1.5),
        "$.benchmark.random_range_ratio",
        "1.5 is out of range; random_range_ratio must be a number in [0, 1]",
    ),
    (
        "negative max_tokens",
        lambda d: d.update(
            benchmark={"type": "gsm8k", "dataset_path": "/d/gsm8k.jsonl", "max_tokens": -1}
        ),
        "$.benchmark.max_tokens",
        "-1 is out of range; max_tokens must be an integer in [1, 10000000]",
    ),
    (
        "zero router requests",
        lambda d: _all(
            d.update(frontend={"type": "sglang-router"}),
            d.update(benchmark={"type": "router", "num_requests": 0}),
        ),
        "$.benchmark.num_requests",
        "0 is out of range; num_requests must be an integer in [1, 10000000]",
    ),
    (
        "negative shots",
        lambda d: d.update(
            benchmark={"type": "gsm8k", "dataset_path": "/d/gsm8k.jsonl", "num_shots": -2}
        ),
        "$.benchmark.num_shots",
        "-2 is out of range; num_shots must be an integer in [0, 1000]",
    ),
    (
        "unsupported sa-bench dataset",
        lambda d: d["benchmark"].update(dataset_name="sharegpt"),
        "$.benchmark.dataset_name",
        "'sharegpt' is not a dataset sa-bench reads; use 'random' (synthetic prompts of isl/osl "
        "tokens) or 'custom' (a JSON Lines file of prompts in dataset_path)",
    ),
    (
        "custom dataset without a path",
        lambda d: d["benchmark"].update(dataset_name="custom"),
        "$.benchmark.dataset_path",
        "benchmark.type 'sa-bench' needs dataset_path; e.g. dataset_path: /data/prompts.jsonl, "
        "concurrencies: [4, 8]",
    ),
    (
        "custom tokenizer that is neither a path nor a class",
        lambda d: d["benchmark"].update(custom_tokenizer="glm_moe_dsa"),
        "$.benchmark.custom_tokenizer",
        "'glm_moe_dsa' is neither a local tokenizer nor a tokenizer class: set an absolute path "
        "to a folder holding tokenizer.json (or to the file), or a class path 'module.ClassName' "
        "importable in the benchmark's environment (srt-bench calls its from_pretrained(<model "
        "folder>)), or unset custom_tokenizer to use the model's own",
    ),
    (
        "hub model with a revision",
        lambda d: d["model"].update(path="hf:Qwen/Qwen3-0.6B@v1"),
        "$.model.path",
        "'hf:Qwen/Qwen3-0.6B@v1': the engines are given the repository id only, so a revision "
        "after '@' would hold for the benchmark's tokenizer and not for the weights; use "
        "hf:Qwen/Qwen3-0.6B (the job pins the commit it resolved in recipe.lock.yaml as "
        "lock.hf_model.commit), or download that revision and set model.path to the folder",
    ),
    (
        "hub model id that is not a repository id",
        lambda d: d["model"].update(path="hf:Qwen/Qwen3 0.6B"),
        "$.model.path",
        "'hf:Qwen/Qwen3 0.6B' is not hf:<org>/<name>[@revision] (e.g. hf:Qwen/Qwen3-0.6B)",
    ),
    (
        "offline accuracy eval that names no dataset",
        lambda d: d.update(benchmark={"type": "mmlu"}, environment={"HF_DATASETS_OFFLINE": "1"}),
        "$.benchmark.dataset_path",
        "benchmark.type 'mmlu' cannot find its dataset: environment HF_DATASETS_OFFLINE=1 "
        "forbids the download, benchmark.dataset_path is unset and the environment names no "
        "folder to look in (SRT_DATASETS_DIR, HF_DATASETS_CACHE, HF_HOME; the default cache "
        "~/.cache/huggingface/datasets is the node's, not known here); set "
        "benchmark.dataset_path to the mmlu file inside the container, set "
        "environment.SRT_DATASETS_DIR to a mounted folder holding mmlu.jsonl, or drop "
        "HF_DATASETS_OFFLINE",
    ),
    (
        "a URL where the type reads a file",
        lambda d: d.update(
            benchmark={
                "type": "sa-bench",
                "dataset_name": "custom",
                "dataset_path": "https://h/p.jsonl",
                "concurrencies": [4],
            }
        ),
        "$.benchmark.dataset_path",
        "'https://h/p.jsonl' is a URL, and benchmark.type 'sa-bench' reads dataset_path as a "
        "file (only mooncake-router downloads it); download the file and set dataset_path to "
        "its path inside the container",
    ),
    (
        "a trace URL whose pin is not a sha256",
        lambda d: d.update(
            benchmark={"type": "mooncake-router", "dataset_path": "https://h/t.jsonl#sha256=abc"}
        ),
        "$.benchmark.dataset_path",
        "'https://h/t.jsonl#sha256=abc': #sha256=abc is not a sha256 checksum (64 hex digits); "
        "write #sha256=<the sha256 of the file> (the lock's lock.datasets[].pinned_url) or drop "
        "the fragment",
    ),
    (
        "unknown mooncake workload",
        lambda d: d.update(
            benchmark={
                "type": "mooncake-router",
                "dataset_path": "/d/t.jsonl",
                "mooncake_workload": "chat",
            }
        ),
        "$.benchmark.mooncake_workload",
        "'chat' is not a Mooncake workload; use one of mooncake, conversation, synthetic, "
        "toolagent",
    ),
    (
        "router benchmark behind another frontend",
        lambda d: d.update(benchmark={"type": "router"}),
        "$.benchmark.type",
        "benchmark.type 'router' measures the SGLang router's prefix caching and needs "
        "frontend.type 'sglang-router', got 'dynamo'; set frontend.type: sglang-router or pick "
        "another benchmark.type",
    ),
    (
        "router benchmark with a prefix ratio of 1",
        lambda d: d.update(benchmark={"type": "router", "prefix_ratios": "0.5 1"}),
        "$.benchmark.prefix_ratios",
        "1 is outside [0, 1); a ratio is the share of each prompt that is a shared prefix, so "
        "use a number from 0 up to (not including) 1",
    ),
    (
        "router benchmark with a word for a ratio",
        lambda d: d.update(benchmark={"type": "router", "prefix_ratios": "0.1 half"}),
        "$.benchmark.prefix_ratios",
        "'half' is not a number; write ratios as numbers in [0, 1), e.g. '0.1 0.5 0.9'",
    ),
    (
        "sglang-bench without sizes",
        lambda d: d.update(benchmark={"type": "sglang-bench", "concurrencies": [4]}),
        "$.benchmark.isl",
        "benchmark.type 'sglang-bench' needs isl, osl; e.g. isl: 1024, osl: 1024, "
        "concurrencies: [4, 8]",
    ),
    (
        "trace-replay without a trace",
        lambda d: d.update(benchmark={"type": "trace-replay"}),
        "$.benchmark.trace_file",
        "benchmark.type 'trace-replay' needs trace_file, concurrencies; e.g. trace_file: "
        "/data/trace.jsonl, concurrencies: [4, 8]",
    ),
    (
        "slow_down with one time only",
        lambda d: d["benchmark"].update(slow_down_sleep_time=0.5),
        "$.benchmark.slow_down_wait_time",
        "slow_down_wait_time is unset; SGLang /slow_down needs both slow_down_sleep_time and "
        "slow_down_wait_time > 0 (seconds): set both or drop both",
    ),
    (
        "slow_down without the SGLang router",
        lambda d: d["benchmark"].update(slow_down_sleep_time=0.5, slow_down_wait_time=60),
        "$.benchmark.slow_down_sleep_time",
        "SGLang /slow_down is sent to the decode workers behind frontend.type 'sglang-router' (a "
        "prefill/decode recipe); this recipe has frontend.type 'dynamo' and no decode role: drop "
        "slow_down_sleep_time and slow_down_wait_time",
    ),
    (
        "agentperf without its client",
        lambda d: d.update(benchmark={"type": "agentperf", "concurrency": 4}),
        "$.benchmark.agentperf_client_dir",
        "benchmark.type 'agentperf' needs agentperf_client_dir, agentperf_config; e.g. "
        "agentperf_client_dir: /mnt/agentperf-client, agentperf_config: /mnt/workload.yaml, "
        "concurrencies: [4, 8] (or concurrency: 4)",
    ),
    (
        "empty host_setup command",
        lambda d: d.update(host_setup={"commands": [""]}),
        "$.host_setup.commands[0]",
        "host_setup.commands[0] is empty",
    ),
    (
        "post_eval passthrough name",
        lambda d: d.update(post_eval={"passthrough_env": ["1BAD"]}),
        "$.post_eval.passthrough_env[0]",
        "'1BAD' is not an environment variable name",
    ),
    (
        "bad fatal pattern",
        lambda d: d.update(health_check={"extra_fatal_log_patterns": ["("]}),
        "$.health_check.extra_fatal_log_patterns[0]",
        "'(' is not a valid regular expression: missing ), unterminated subpattern at position 0",
    ),
    (
        "engine mapping with per-role keys",
        lambda d: d.update(engine={"type": "sglang", "sglang_config": {}}),
        "$.engine.sglang_config",
        "an engine mapping carries engine-wide knobs only; per-role settings (sglang_config) "
        "live under roles.<role> (env, args, extra_args, kv_events)",
    ),
]


@pytest.mark.parametrize(
    ("edit", "path", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_rule(edit: Callable[[Doc], None], path: str, message: str) -> None:
    issues = _issues(_edit(edit))
    assert (path, message) in issues, issues


def test_every_issue_of_a_file_is_reported_at_once() -> None:
    doc = _base()
    doc["roles"]["agg"]["wokers"] = 2
    doc["resources"]["gpus_per_node"] = "8"
    doc["benchmark"]["isl"] = "long"
    paths = [p for p, _ in _issues(doc)]
    assert paths == ["$.resources.gpus_per_node", "$.roles.agg.wokers", "$.benchmark.isl"]


def test_a_timed_capture_needs_no_phase_blocks() -> None:
    """nsys-time's window applies to every worker: neither layout needs a phase block."""
    for layout in ((), (_disagg,)):
        doc = _edit(
            *layout,
            lambda d: d.update(
                profiling={"type": "nsys-time", "delay_secs": 5, "duration_secs": 9}
            ),
        )
        assert _issues(doc) == []


def test_every_slurm_time_limit_form_loads() -> None:
    for value in ("30", "00:05", "04:00:00", "2-00", "1-12:30", "1-00:00:30", "UNLIMITED"):
        assert _issues(_edit(lambda d, v=value: d.update(slurm={"time_limit": v}))) == [], value


def test_decode_nodes_zero_means_colocate() -> None:
    doc = _base()
    _disagg(doc)
    doc["roles"]["decode"]["nodes"] = 0
    assert _issues(copy.deepcopy(doc)) == []


def test_repeated_concurrencies_load_without_power_telemetry() -> None:
    doc = _edit(lambda d: d["benchmark"].update(concurrencies="2x2"))
    (job,) = load_recipe_document(doc, file="r.yaml")
    assert job.recipe.benchmark.concurrencies == "2x2"


def test_a_local_custom_tokenizer_is_accepted_also_for_a_hub_model() -> None:
    doc = _edit(
        lambda d: d["model"].update(path="hf:Qwen/Qwen3-0.6B"),
        lambda d: d["benchmark"].update(custom_tokenizer="/tokenizers/qwen3"),
    )
    assert _issues(doc) == []


def test_a_custom_dataset_needs_no_synthetic_lengths() -> None:
    doc = _edit(
        lambda d: d.update(
            benchmark={
                "type": "sa-bench",
                "dataset_name": "custom",
                "dataset_path": "/data/prompts.jsonl",
                "concurrencies": [4],
            }
        )
    )
    assert _issues(doc) == []


@pytest.mark.parametrize(
    "benchmark",
    [
        {"type": "mooncake-router"},  # the job downloads the published trace
        {"type": "mooncake-router", "mooncake_workload": "toolagent"},
        {"type": "mooncake-router", "dataset_path": "/d/trace.jsonl"},
        {"type": "mooncake-router", "dataset_path": "https://h/t.jsonl#sha256=" + "a" * 64},
        {"type": "trace-replay", "trace_file": "http://h/t.jsonl", "concurrencies": [2]},
    ],
)
def test_a_trace_is_a_file_or_a_url_the_job_downloads(benchmark: dict[str, object]) -> None:
    assert _issues(_edit(lambda d: d.update(benchmark=benchmark))) == []


@pytest.mark.parametrize("kind", ["gsm8k", "mmlu", "gpqa", "longbenchv2"])
def test_an_accuracy_eval_with_a_dataset_file_loads(kind: str) -> None:
    doc = _edit(lambda d: d.update(benchmark={"type": kind, "dataset_path": f"/d/{kind}.jsonl"}))
    assert _issues(doc) == []


@pytest.mark.parametrize(
    "environment",
    [
        {},  # fetched in the job
        {"HF_HUB_OFFLINE": "1", "SRT_DATASETS_DIR": "/datasets"},
        {"HF_DATASETS_OFFLINE": "true", "HF_DATASETS_CACHE": "/cache/datasets"},
        {"HF_DATASETS_OFFLINE": "0"},
    ],
)
@pytest.mark.parametrize("kind", ["gsm8k", "longbenchv2"])
def test_an_accuracy_eval_without_a_dataset_file_loads_unless_offline_with_no_folder(
    kind: str, environment: dict[str, str]
) -> None:
    doc = _edit(lambda d: d.update(benchmark={"type": kind}, environment=environment))
    assert _issues(doc) == []


def test_slow_down_behind_the_sglang_router_of_a_disaggregated_recipe_loads() -> None:
    doc = _edit(
        _disagg,
        lambda d: d.update(frontend={"type": "sglang-router"}),
        lambda d: d["benchmark"].update(slow_down_sleep_time=0.5, slow_down_wait_time=60),
    )
    assert _issues(doc) == []
