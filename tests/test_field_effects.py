"""Each field below changes what a job runs: the rendered plan of a small recipe differs with it.

For every row a base recipe (the quickstart, or the quickstart on another engine) is planned on
the simulated allocation the golden test uses, with and without the row's fragment; the
rendered ``plan.json`` (every process, its argv, env, files and the bench / telemetry configs)
must differ. A field the planner ignored would leave the plan unchanged and fail its row.
``docs/schema-ledger.md`` cites this test for fields that no golden input sets.
"""

# ruff: noqa: E501 - the ROWS table reads best as one row per line
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from srt_planner import plan_allocation, plan_job
from srt_schema.cluster import ClusterConfig
from srt_schema.load import load_recipe_document
from srt_schema.overrides import deep_merge

REPO = Path(__file__).resolve().parents[1]
CLUSTER = ClusterConfig(default_account="acct", default_partition="batch")
QUICKSTART: dict[str, Any] = yaml.safe_load((REPO / "examples" / "quickstart.yaml").read_text())


def _on(engine: str, **extra: Any) -> dict[str, Any]:
    doc = deep_merge(
        copy.deepcopy(QUICKSTART),
        {"model": {"path": "/models/m", "container": "img:1"}, "resources": {"gpus_per_node": 4}},
    )
    doc["engine"] = {"type": engine}
    doc["roles"] = {"agg": {"nodes": 1, "workers": 1, "gpus": 4}}
    return deep_merge(doc, extra)


def _disagg(engine: str) -> dict[str, Any]:
    doc = _on(engine)
    doc["roles"] = {
        "prefill": {"nodes": 1, "workers": 1, "gpus": 4},
        "decode": {"nodes": 1, "workers": 1, "gpus": 4},
    }
    return doc


def _with(doc: dict[str, Any], extra: str) -> dict[str, Any]:
    return deep_merge(copy.deepcopy(doc), yaml.safe_load(extra))


BASES: dict[str, dict[str, Any]] = {
    "mocker": QUICKSTART,
    "sglang": _on("sglang"),
    "vllm": _on("vllm"),
    "trtllm": _on("trtllm"),
    "sglang-disagg": _disagg("sglang"),
    "vllm-disagg": _disagg("vllm"),
    "atom-disagg": _disagg("atom"),
    "trtllm-disagg": _disagg("trtllm"),
    "mocker-disagg": _disagg("mocker"),
    "vllm-direct": _on("vllm", frontend={"type": "vllm"}),
    "trtllm-sidecar": _with(_on("trtllm"), "{dynamo: {sidecar: true}}"),
    "trtllm-serve": _with(
        _disagg("trtllm"), "{frontend: {type: trtllm_serve, enable_multiple_frontends: false}}"
    ),
    # Torch profiling of every prefill / decode worker; then of a selected worker, and of a
    # selected rank of a two-node worker (the profiling selection fields act only there).
    "sglang-disagg-profiled": _with(
        _disagg("sglang"),
        "{resources: {gpus_per_node: 8}, roles: {prefill: {workers: 2}, decode: {workers: 2}},"
        " profiling: {type: torch, prefill: {}, decode: {}}}",
    ),
    "sglang-disagg-selected": _with(
        _disagg("sglang"),
        "{resources: {gpus_per_node: 8}, roles: {prefill: {workers: 2}, decode: {workers: 2}},"
        " profiling: {type: torch, prefill: {capture_scope: selected},"
        " decode: {capture_scope: selected}}}",
    ),
    "sglang-disagg-2node-selected": _with(
        _disagg("sglang"),
        "{roles: {prefill: {nodes: 2, gpus: 8}, decode: {nodes: 2, gpus: 8}},"
        " profiling: {type: torch, prefill: {capture_scope: selected},"
        " decode: {capture_scope: selected}}}",
    ),
    "sglang-2node-selected": _with(
        _on("sglang"),
        "{roles: {agg: {nodes: 2, gpus: 8}},"
        " profiling: {type: torch, aggregated: {capture_scope: selected}}}",
    ),
    "sglang-dynamo-git": _with(
        _on("sglang"),
        "{dynamo: {source: {git: 'https://github.com/ai-dynamo/dynamo', rev: v1.0.0}}}",
    ),
    # Three frontends behind nginx (two nodes besides the head: one shares), sticky sessions on
    # (the nginx_* fields act only here).
    "nginx": _with(
        QUICKSTART,
        "{roles: {agg: {nodes: 3, workers: 3}}, frontend: {enable_multiple_frontends: true,"
        " num_additional_frontends: 2, nginx_session_affinity: true}}",
    ),
    # Power telemetry: the GPU leg, then with each CPU leg on.
    "power": _with(
        _on("sglang"),
        "{telemetry: {enabled: true, dcgm_exporter: {container_image: dcgm, port: 9401}}}",
    ),
    "power-cpu": _with(
        _on("sglang"),
        "{telemetry: {enabled: true, dcgm_exporter: {container_image: dcgm, port: 9401},"
        " cpu_power: {enabled: true}, cpu_power_exporter: {port: 9405}}}",
    ),
}

#: (field, base, fragment): setting the fragment on the base must change the plan.
ROWS: list[tuple[str, str, dict[str, Any]]] = [
    (
        "telemetry.enabled",
        "sglang",
        yaml.safe_load(
            "{telemetry: {enabled: true, dcgm_exporter: {container_image: dcgm, port: 9401}}}"
        ),
    ),
    (
        "telemetry.dcgm_exporter.container_image",
        "power",
        yaml.safe_load("{telemetry: {dcgm_exporter: {container_image: other-dcgm}}}"),
    ),
    (
        "telemetry.dcgm_exporter.port",
        "power",
        yaml.safe_load("{telemetry: {dcgm_exporter: {port: 9499}}}"),
    ),
    (
        "telemetry.dcgm_exporter.command",
        "power",
        yaml.safe_load(
            "{telemetry: {dcgm_exporter: {command: 'dcgm-exporter -f /etc/counters.csv --address :{port}'}}}"
        ),
    ),
    (
        "telemetry.dcgm_exporter.binary",
        "power",
        yaml.safe_load("{telemetry: {dcgm_exporter: {binary: /opt/dcgm-exporter}}}"),
    ),
    (
        "telemetry.collect_interval_ms",
        "power",
        yaml.safe_load("{telemetry: {collect_interval_ms: 500}}"),
    ),
    (
        "telemetry.collector_join_timeout_seconds",
        "power",
        yaml.safe_load("{telemetry: {collector_join_timeout_seconds: 60}}"),
    ),
    (
        "telemetry.request_timeout_seconds",
        "power",
        yaml.safe_load("{telemetry: {request_timeout_seconds: 5}}"),
    ),
    (
        "telemetry.required",
        "power",
        yaml.safe_load("{telemetry: {required: true}}"),
    ),
    (
        "telemetry.startup_timeout_seconds",
        "power",
        yaml.safe_load("{telemetry: {startup_timeout_seconds: 5}}"),
    ),
    (
        "telemetry.storage_subdir",
        "power",
        yaml.safe_load("{telemetry: {storage_subdir: watts}}"),
    ),
    (
        "telemetry.cpu_power_exporter.port",
        "power",
        yaml.safe_load("{telemetry: {cpu_power_exporter: {port: 9500}}}"),
    ),
    (
        "telemetry.cpu_power_exporter.source",
        "power-cpu",
        yaml.safe_load("{telemetry: {cpu_power_exporter: {source: acpi}}}"),
    ),
    (
        "telemetry.cpu_power.enabled",
        "power",
        yaml.safe_load("{telemetry: {cpu_power: {enabled: true}}}"),
    ),
    (
        "telemetry.cpu_power.required",
        "power-cpu",
        yaml.safe_load("{telemetry: {cpu_power: {required: true}}}"),
    ),
    (
        "telemetry.cpu_power.sample_interval_seconds",
        "power-cpu",
        yaml.safe_load("{telemetry: {cpu_power: {sample_interval_seconds: 0.5}}}"),
    ),
    (
        "telemetry.cpu_power.source",
        "power-cpu",
        yaml.safe_load("{telemetry: {cpu_power: {source: acpi}}}"),
    ),
    (
        "telemetry.cpu_power.startup_timeout_seconds",
        "power-cpu",
        yaml.safe_load("{telemetry: {cpu_power: {startup_timeout_seconds: 5}}}"),
    ),
    (
        "telemetry.cpu_power.storage_subdir",
        "power-cpu",
        yaml.safe_load("{telemetry: {cpu_power: {storage_subdir: cpu}}}"),
    ),
    ("benchmark.req_rate", "mocker", yaml.safe_load("{benchmark: {req_rate: 4}}")),
    (
        "benchmark.random_range_ratio",
        "mocker",
        yaml.safe_load("{benchmark: {random_range_ratio: 0.5}}"),
    ),
    ("benchmark.num_prompts_mult", "mocker", yaml.safe_load("{benchmark: {num_prompts_mult: 3}}")),
    ("benchmark.num_warmup_mult", "mocker", yaml.safe_load("{benchmark: {num_warmup_mult: 3}}")),
    (
        "benchmark.use_chat_template",
        "mocker",
        yaml.safe_load("{benchmark: {use_chat_template: false}}"),
    ),
    (
        "benchmark.reuse_http_connections",
        "mocker",
        yaml.safe_load("{benchmark: {reuse_http_connections: true}}"),
    ),
    (
        "benchmark.placement.node",
        "sglang-disagg",
        yaml.safe_load("{benchmark: {placement: {node: last_decode}}}"),
    ),
    (
        "benchmark.colocate_with_frontend",
        "sglang",
        yaml.safe_load("{benchmark: {colocate_with_frontend: false}}"),
    ),
    ("container_mounts", "sglang", yaml.safe_load("{container_mounts: {/data: /data}}")),
    ("srun_options", "sglang", yaml.safe_load("{srun_options: {cpu-bind: none}}")),
    ("setup_script", "sglang", yaml.safe_load("{setup_script: setup.sh}")),
    (
        "resources.spread_workers",
        "sglang",
        yaml.safe_load(
            "{resources: {gpus_per_node: 8, spread_workers: true}, roles: {agg: {nodes: 2, workers: 2, gpus: 4}}}"
        ),
    ),
    ("engine.block_size", "mocker", yaml.safe_load("{engine: {block_size: 32}}")),
    ("engine.data_parallel_size", "mocker", yaml.safe_load("{engine: {data_parallel_size: 2}}")),
    (
        "engine.decode_speedup_ratio",
        "mocker",
        yaml.safe_load("{engine: {decode_speedup_ratio: 2.0}}"),
    ),
    (
        "engine.enable_chunked_prefill",
        "mocker",
        yaml.safe_load("{engine: {enable_chunked_prefill: false}}"),
    ),
    (
        "engine.enable_prefix_caching",
        "mocker",
        yaml.safe_load("{engine: {enable_prefix_caching: false}}"),
    ),
    ("engine.engine_type", "mocker", yaml.safe_load("{engine: {engine_type: sglang}}")),
    ("engine.kv_cache_dtype", "mocker", yaml.safe_load("{engine: {kv_cache_dtype: fp8}}")),
    (
        "engine.kv_transfer_bandwidth",
        "mocker",
        yaml.safe_load("{engine: {kv_transfer_bandwidth: 10.0}}"),
    ),
    (
        "engine.max_num_batched_tokens",
        "mocker",
        yaml.safe_load("{engine: {max_num_batched_tokens: 4096}}"),
    ),
    ("engine.max_num_seqs", "mocker", yaml.safe_load("{engine: {max_num_seqs: 64}}")),
    (
        "engine.num_gpu_blocks_override",
        "mocker",
        yaml.safe_load("{engine: {num_gpu_blocks_override: 1024}}"),
    ),
    ("engine.num_workers", "mocker", yaml.safe_load("{engine: {num_workers: 2}}")),
    ("engine.preemption_mode", "mocker", yaml.safe_load("{engine: {preemption_mode: swap}}")),
    ("engine.startup_time", "mocker", yaml.safe_load("{engine: {startup_time: 2.0}}")),
    ("engine.publish_metrics", "trtllm", yaml.safe_load("{engine: {publish_metrics: false}}")),
    (
        "engine.publish_events_and_metrics",
        "trtllm",
        yaml.safe_load("{engine: {publish_events_and_metrics: true}}"),
    ),
    (
        "engine.allow_prefill_decode_colocation",
        "vllm-disagg",
        yaml.safe_load(
            "{engine: {allow_prefill_decode_colocation: true}, roles: {prefill: {gpus: 2}, decode: {gpus: 2, nodes: colocate}}}"
        ),
    ),
    (
        "engine.allow_prefill_decode_colocation_across_nodes",
        "vllm-disagg",
        yaml.safe_load(
            "{engine: {allow_prefill_decode_colocation: true, allow_prefill_decode_colocation_across_nodes: true}, roles: {prefill: {gpus: 2}, decode: {gpus: 2, nodes: colocate}}}"
        ),
    ),
    (
        "engine.dp_launch_mode",
        "vllm",
        yaml.safe_load(
            "{engine: {dp_launch_mode: per_gpu}, roles: {agg: {args: {data-parallel-size: 4}}}}"
        ),
    ),
    ("roles.*.critical", "sglang", yaml.safe_load("{roles: {agg: {critical: false}}}")),
    (
        "profiling.prefill.capture_scope",
        "sglang-disagg-profiled",
        yaml.safe_load("{profiling: {prefill: {capture_scope: selected}}}"),
    ),
    (
        "profiling.prefill.worker_index",
        "sglang-disagg-selected",
        yaml.safe_load("{profiling: {prefill: {worker_index: 1}}}"),
    ),
    (
        "profiling.prefill.worker_rank",
        "sglang-disagg-2node-selected",
        yaml.safe_load("{profiling: {prefill: {worker_rank: 1}}}"),
    ),
    (
        "profiling.decode.capture_scope",
        "sglang-disagg-profiled",
        yaml.safe_load("{profiling: {decode: {capture_scope: selected}}}"),
    ),
    (
        "profiling.decode.worker_index",
        "sglang-disagg-selected",
        yaml.safe_load("{profiling: {decode: {worker_index: 1}}}"),
    ),
    (
        "profiling.decode.worker_rank",
        "sglang-disagg-2node-selected",
        yaml.safe_load("{profiling: {decode: {worker_rank: 1}}}"),
    ),
    (
        "profiling.aggregated.worker_rank",
        "sglang-2node-selected",
        yaml.safe_load("{profiling: {aggregated: {worker_rank: 1}}}"),
    ),
    (
        "dynamo.source.sha",
        "sglang-dynamo-git",
        yaml.safe_load("{dynamo: {source: {sha: 0123456789abcdef0123456789abcdef01234567}}}"),
    ),
    ("roles.*.extra_args", "trtllm", yaml.safe_load("{roles: {agg: {extra_args: [--foo]}}}")),
    ("resources.gpu_type", "trtllm-disagg", yaml.safe_load("{resources: {gpu_type: gb200}}")),
    (
        "observability.tachometer.dcgm_exporter.binary",
        "sglang",
        yaml.safe_load(
            "{observability: {tachometer: {dcgm_exporter: {container_image: '', binary: /opt/dcgm-exporter, port: 9400}}}}"
        ),
    ),
    (
        "observability.tachometer.node_exporter.binary",
        "sglang",
        yaml.safe_load(
            "{observability: {tachometer: {node_exporter: {container_image: '', binary: /opt/node_exporter, port: 9100}}}}"
        ),
    ),
    (
        "observability.tachometer.process_exporter.binary",
        "sglang",
        yaml.safe_load(
            "{observability: {tachometer: {process_exporter: {container_image: '', binary: /opt/process-exporter, port: 9256}}}}"
        ),
    ),
    (
        "observability.tachometer.default_gpu_exporter.binary",
        "sglang",
        yaml.safe_load(
            "{observability: {tachometer: {default_gpu_exporter: {container_image: '', binary: /opt/gpu-exporter, port: 9400}}}}"
        ),
    ),
    (
        "engine.vllm_serve_binary",
        "vllm-direct",
        yaml.safe_load("{engine: {vllm_serve_binary: vllm-rs}}"),
    ),
    (
        "engine.mooncake_protocol",
        "atom-disagg",
        yaml.safe_load("{engine: {mooncake_protocol: tcp}}"),
    ),
    (
        "frontend.gen_router",
        "trtllm-serve",
        yaml.safe_load("{frontend: {gen_router: {type: load_balancing}}}"),
    ),
    (
        "frontend.server_config_extra",
        "trtllm-serve",
        yaml.safe_load("{frontend: {server_config_extra: {backend: pytorch}}}"),
    ),
    (
        "frontend.worker_selection",
        "mocker",
        yaml.safe_load("{frontend: {worker_selection: {policy: kv}}}"),
    ),
    ("frontend.nginx_container", "nginx", yaml.safe_load("{frontend: {nginx_container: nginx:2}}")),
    (
        "frontend.nginx_keepalive_timeout",
        "nginx",
        yaml.safe_load("{frontend: {nginx_keepalive_timeout: 30s}}"),
    ),
    (
        "frontend.nginx_raise_ulimit",
        "nginx",
        yaml.safe_load("{frontend: {nginx_raise_ulimit: true}}"),
    ),
    (
        "frontend.nginx_session_affinity_header",
        "nginx",
        yaml.safe_load("{frontend: {nginx_session_affinity_header: X-Session}}"),
    ),
    (
        "health_check.fatal_log_markers",
        "trtllm",
        yaml.safe_load("{health_check: {fatal_log_markers: false}}"),
    ),
    (
        "host_setup.nodes",
        "sglang-disagg",
        yaml.safe_load(
            "{benchmark: {placement: {node: dedicated}}, host_setup: {commands: [nvidia-smi], nodes: workers}}"
        ),
    ),
    (
        "services[].enabled",
        "sglang",
        yaml.safe_load("{services: [{name: etcd, type: etcd, enabled: false}]}"),
    ),
    (
        "services[].external",
        "sglang",
        yaml.safe_load(
            "{services: [{name: etcd, type: etcd, external: 'http://etcd.example:2379'}]}"
        ),
    ),
    ("frontend.env", "mocker", yaml.safe_load("{frontend: {env: {FOO: bar}}}")),
    ("frontend.numa_bind", "sglang", yaml.safe_load("{frontend: {numa_bind: true}}")),
    (
        "health_check.extra_fatal_log_patterns",
        "mocker",
        yaml.safe_load("{health_check: {extra_fatal_log_patterns: [BOOM]}}"),
    ),
    ("dynamo.sidecar", "sglang", yaml.safe_load("{dynamo: {sidecar: true}}")),
    ("dynamo.sidecar", "vllm", yaml.safe_load("{dynamo: {sidecar: true}}")),
    ("dynamo.sidecar", "trtllm", yaml.safe_load("{dynamo: {sidecar: true}}")),
    (
        "dynamo.sidecar_context_length",
        "trtllm-sidecar",
        yaml.safe_load("{dynamo: {sidecar_context_length: 8192}}"),
    ),
    (
        "dynamo.sidecar_args",
        "sglang",
        yaml.safe_load("{dynamo: {sidecar: true, sidecar_args: [--x]}}"),
    ),
    (
        "dynamo.sidecar_binary",
        "sglang",
        yaml.safe_load("{dynamo: {sidecar: true, sidecar_binary: /opt/sc}}"),
    ),
    (
        "dynamo.sidecar_port",
        "sglang",
        yaml.safe_load("{dynamo: {sidecar: true, sidecar_port: 9999}}"),
    ),
    (
        "dynamo.sidecar_startup_timeout",
        "sglang",
        yaml.safe_load("{dynamo: {sidecar: true, sidecar_startup_timeout: 60}}"),
    ),
    (
        "dynamo.source.wheel",
        "sglang",
        yaml.safe_load("{dynamo: {source: {wheel: /w/ai_dynamo-1.0-py3-none-any.whl}}}"),
    ),
    (
        "observability.enable_otel",
        "sglang",
        yaml.safe_load(
            "{observability: {enabled: true, enable_otel: true, otel_endpoint: http://h:4317}}"
        ),
    ),
    (
        "observability.otel_endpoint",
        "sglang",
        yaml.safe_load(
            "{observability: {enabled: true, enable_otel: true, otel_endpoint: http://other:4317}}"
        ),
    ),
    (
        "observability.nsys.enabled",
        "sglang",
        yaml.safe_load("{observability: {enabled: true, nsys: {enabled: true}}}"),
    ),
    (
        "observability.nsys.capture_window",
        "sglang",
        yaml.safe_load(
            "{observability: {enabled: true, nsys: {enabled: true, capture_window: including_startup}}}"
        ),
    ),
    (
        "observability.nsys.cpu_sampling",
        "sglang",
        yaml.safe_load(
            "{observability: {enabled: true, nsys: {enabled: true, cpu_sampling: none}}}"
        ),
    ),
    (
        "observability.nsys.nvtx_injection_path",
        "sglang",
        yaml.safe_load(
            "{observability: {enabled: true, nsys: {enabled: true, nvtx_injection_path: /opt/nvtx.so}}}"
        ),
    ),
    (
        "observability.tachometer.enabled",
        "mocker",
        yaml.safe_load("{observability: {tachometer: {enabled: false}}}"),
    ),
    (
        "observability.tachometer.collect_interval_ms",
        "mocker",
        yaml.safe_load("{observability: {tachometer: {collect_interval_ms: 500}}}"),
    ),
    (
        "observability.tachometer.compaction_threads",
        "mocker",
        yaml.safe_load("{observability: {tachometer: {compaction_threads: 3}}}"),
    ),
    (
        "observability.tachometer.shutdown_grace_secs",
        "mocker",
        yaml.safe_load("{observability: {tachometer: {shutdown_grace_secs: 7}}}"),
    ),
    (
        "observability.tachometer.storage_subdir",
        "mocker",
        yaml.safe_load("{observability: {tachometer: {storage_subdir: scrapes}}}"),
    ),
    (
        "observability.tachometer.sync_interval_secs",
        "mocker",
        yaml.safe_load("{observability: {tachometer: {sync_interval_secs: 9}}}"),
    ),
    (
        "observability.tachometer.default_exporters",
        "sglang",
        yaml.safe_load("{observability: {tachometer: {default_exporters: false}}}"),
    ),
    (
        "observability.tachometer.dcgm_exporter.container_image",
        "sglang",
        yaml.safe_load(
            "{observability: {tachometer: {dcgm_exporter: {container_image: dcgm:2, port: 9400}}}}"
        ),
    ),
    (
        "observability.tachometer.dcgm_exporter.port",
        "sglang",
        yaml.safe_load(
            "{observability: {tachometer: {dcgm_exporter: {container_image: dcgm:2, port: 9499}}}}"
        ),
    ),
    (
        "observability.tachometer.dcgm_exporter.command",
        "sglang",
        yaml.safe_load(
            "{observability: {tachometer: {dcgm_exporter: {container_image: dcgm:2, port: 9400, command: run-dcgm}}}}"
        ),
    ),
    (
        "observability.tachometer.node_exporter.container_image",
        "sglang",
        yaml.safe_load(
            "{observability: {tachometer: {node_exporter: {container_image: ne:2, port: 9100}}}}"
        ),
    ),
    (
        "observability.tachometer.node_exporter.port",
        "sglang",
        yaml.safe_load(
            "{observability: {tachometer: {node_exporter: {container_image: ne:2, port: 9199}}}}"
        ),
    ),
    (
        "observability.tachometer.node_exporter.command",
        "sglang",
        yaml.safe_load(
            "{observability: {tachometer: {node_exporter: {container_image: ne:2, port: 9100, command: run-ne}}}}"
        ),
    ),
    (
        "observability.tachometer.process_exporter.port",
        "sglang",
        yaml.safe_load(
            "{observability: {tachometer: {process_exporter: {container_image: '', binary: process-exporter, port: 9299}}}}"
        ),
    ),
    (
        "observability.tachometer.process_exporter.command",
        "sglang",
        yaml.safe_load(
            "{observability: {tachometer: {process_exporter: {container_image: '', binary: process-exporter, port: 9256, command: run-pe}}}}"
        ),
    ),
    (
        "observability.tachometer.default_gpu_exporter.container_image",
        "sglang",
        yaml.safe_load(
            "{observability: {tachometer: {default_gpu_exporter: {container_image: g:2, port: 9400}}}}"
        ),
    ),
    (
        "observability.tachometer.default_gpu_exporter.port",
        "sglang",
        yaml.safe_load(
            "{observability: {tachometer: {default_gpu_exporter: {container_image: g:2, port: 9498}}}}"
        ),
    ),
    (
        "observability.tachometer.default_gpu_exporter.command",
        "sglang",
        yaml.safe_load(
            "{observability: {tachometer: {default_gpu_exporter: {container_image: g:2, port: 9400, command: run-g}}}}"
        ),
    ),
    ("profiling.type", "sglang", yaml.safe_load("{profiling: {type: torch, aggregated: {}}}")),
    (
        "profiling.aggregated.capture_scope",
        "sglang",
        yaml.safe_load("{profiling: {type: torch, aggregated: {capture_scope: selected}}}"),
    ),
    (
        "profiling.aggregated.worker_index",
        "sglang",
        yaml.safe_load(
            "{resources: {gpus_per_node: 8}, roles: {agg: {workers: 2}}, profiling: {type: torch, aggregated: {capture_scope: selected, worker_index: 1}}}"
        ),
    ),
    (
        "profiling.nsys_trace",
        "sglang",
        yaml.safe_load("{profiling: {type: nsys, nsys_trace: cuda, aggregated: {}}}"),
    ),
    (
        "profiling.capture_range_end",
        "sglang",
        yaml.safe_load("{profiling: {type: nsys, capture_range_end: repeat, aggregated: {}}}"),
    ),
    (
        "profiling.extra_nsys_args",
        "sglang",
        yaml.safe_load("{profiling: {type: nsys, extra_nsys_args: [--x], aggregated: {}}}"),
    ),
    (
        "profiling.nsys_library_paths",
        "sglang",
        yaml.safe_load("{profiling: {type: nsys, nsys_library_paths: [/opt/lib], aggregated: {}}}"),
    ),
    (
        "profiling.trace_fork_before_exec",
        "sglang",
        yaml.safe_load("{profiling: {type: nsys, trace_fork_before_exec: true, aggregated: {}}}"),
    ),
    (
        "profiling.delay_secs",
        "sglang",
        yaml.safe_load(
            "{profiling: {type: nsys-time, delay_secs: 5, duration_secs: 10, aggregated: {}}}"
        ),
    ),
    (
        "profiling.duration_secs",
        "sglang",
        yaml.safe_load(
            "{profiling: {type: nsys-time, delay_secs: 5, duration_secs: 20, aggregated: {}}}"
        ),
    ),
    (
        "profiling.benchmark_duration_secs",
        "sglang",
        yaml.safe_load(
            "{profiling: {type: nsys-time, delay_secs: 5, duration_secs: 10, benchmark_duration_secs: 30}}"
        ),
    ),
    (
        "identity.container.image",
        "mocker",
        yaml.safe_load("{identity: {container: {image: img:1}}}"),
    ),
    ("identity.frameworks", "mocker", yaml.safe_load("{identity: {frameworks: {dynamo: 1.0.0}}}")),
    ("identity.model.repo", "mocker", yaml.safe_load("{identity: {model: {repo: Org/m}}}")),
    (
        "identity.model.revision",
        "mocker",
        yaml.safe_load("{identity: {model: {repo: Org/m, revision: abc}}}"),
    ),
    (
        "services[].cpu_bind",
        "sglang",
        yaml.safe_load("{services: [{name: s, command: [sleep, '1'], cpu_bind: none}]}"),
    ),
    (
        "services[].cpus_per_task",
        "sglang",
        yaml.safe_load("{services: [{name: s, command: [sleep, '1'], cpus_per_task: 4}]}"),
    ),
    (
        "services[].srun_options",
        "sglang",
        yaml.safe_load(
            "{services: [{name: s, command: [sleep, '1'], srun_options: {exclusive: ''}}]}"
        ),
    ),
    (
        "services[].inherit_discovery_env",
        "mocker",
        yaml.safe_load(
            "{services: [{name: s, command: [sleep, '1'], inherit_discovery_env: false}]}"
        ),
    ),
    (
        "services[].metrics.port",
        "mocker",
        yaml.safe_load("{services: [{name: s, command: [sleep, '1'], metrics: {port: 9999}}]}"),
    ),
    (
        "services[].metrics.path",
        "mocker",
        yaml.safe_load(
            "{services: [{name: s, command: [sleep, '1'], metrics: {port: 9999, path: /m}}]}"
        ),
    ),
    (
        "services[].metrics.name",
        "mocker",
        yaml.safe_load(
            "{services: [{name: s, command: [sleep, '1'], metrics: {port: 9999, name: mm}}]}"
        ),
    ),
    (
        "services[].metrics.nodes",
        "mocker",
        yaml.safe_load(
            "{services: [{name: s, command: [sleep, '1'], metrics: {port: 9999, nodes: all}}]}"
        ),
    ),
    (
        "services[].metrics[].port",
        "mocker",
        yaml.safe_load("{services: [{name: s, command: [sleep, '1'], metrics: [{port: 9999}]}]}"),
    ),
    (
        "services[].metrics[].path",
        "mocker",
        yaml.safe_load(
            "{services: [{name: s, command: [sleep, '1'], metrics: [{port: 9999, path: /m}]}]}"
        ),
    ),
    (
        "services[].metrics[].name",
        "mocker",
        yaml.safe_load(
            "{services: [{name: s, command: [sleep, '1'], metrics: [{port: 9999, name: mm}]}]}"
        ),
    ),
    (
        "services[].metrics[].nodes",
        "mocker",
        yaml.safe_load(
            "{services: [{name: s, command: [sleep, '1'], metrics: [{port: 9999, nodes: all}]}]}"
        ),
    ),
    (
        "services[].readiness.port",
        "mocker",
        yaml.safe_load("{services: [{name: s, command: [sleep, '1'], readiness: {port: 9999}}]}"),
    ),
    (
        "services[].readiness.tcp.port",
        "mocker",
        yaml.safe_load(
            "{services: [{name: s, command: [sleep, '1'], readiness: {tcp: {port: 9999}}}]}"
        ),
    ),
    (
        "services[].readiness.http.path",
        "mocker",
        yaml.safe_load(
            "{services: [{name: s, command: [sleep, '1'], readiness: {http: {port: 9999, path: /ready}}}]}"
        ),
    ),
    (
        "services[].readiness.http.status",
        "mocker",
        yaml.safe_load(
            "{services: [{name: s, command: [sleep, '1'], readiness: {http: {port: 9999, status: 204}}}]}"
        ),
    ),
    (
        "services[].readiness.interval_seconds",
        "mocker",
        yaml.safe_load(
            "{services: [{name: s, command: [sleep, '1'], readiness: {tcp: {port: 9999}, interval_seconds: 3}}]}"
        ),
    ),
]


def _plan(doc: dict[str, Any]) -> str:
    (job,) = load_recipe_document(copy.deepcopy(doc), file="r.yaml", cluster=CLUSTER)
    request = plan_allocation(job.recipe, CLUSTER, runner_name=None)
    nodes = [f"node-{i:02d}" for i in range(1, request.nodes + 1)]
    addresses = {node: f"10.0.0.{i}" for i, node in enumerate(nodes, start=1)}
    plan = plan_job(job.recipe, CLUSTER, nodes, "1234", addresses=addresses)
    return msgspec.json.encode(plan).decode()


@pytest.mark.parametrize(("field", "base", "fragment"), ROWS, ids=[f"{f}@{b}" for f, b, _ in ROWS])
def test_the_field_changes_the_plan(field: str, base: str, fragment: dict[str, Any]) -> None:
    without = _plan(BASES[base])
    with_field = _plan(deep_merge(copy.deepcopy(BASES[base]), fragment))
    assert with_field != without, f"{field} on the {base} recipe left the plan unchanged"


#: Role-specific engines do not run under the Dynamo frontend (validate refuses it): a base that
#: uses it gets the engine's own router instead. A role-specific mocker has none (it needs the
#: Dynamo frontend), so its fields are refused (``unsupported_rules``), not listed here.
ROLE_FRONTEND: dict[str, dict[str, Any]] = {
    "sglang": {"type": "sglang-router"},
    "vllm": {"type": "vllm-router"},
    "atom": {"type": "atomesh"},
    "trtllm": {"type": "trtllm_serve", "enable_multiple_frontends": False},
}


def _engine_in_roles(doc: dict[str, Any]) -> dict[str, Any]:
    """The same recipe with no top-level engine: every role names the engine as its own."""
    out = copy.deepcopy(doc)
    engine = out.pop("engine")
    engine = {"type": engine} if isinstance(engine, str) else engine
    for role in out["roles"].values():
        role["engine"] = deep_merge(copy.deepcopy(engine), role.get("engine") or {})
    if out.get("frontend", {}).get("type", "dynamo") == "dynamo":
        out["frontend"] = copy.deepcopy(ROLE_FRONTEND[engine["type"]])
    return out


#: Every engine field above that a role-specific engine can carry, plus those the golden inputs
#: show at the top level only, set in the roles' own ``engine`` blocks instead.
ROLE_ENGINE_ROWS: list[tuple[str, str, dict[str, Any]]] = [
    (f"roles.*.{field}", base, fragment)
    for field, base, fragment in ROWS
    if field.startswith("engine.")
    and not base.startswith("mocker")
    and field not in ("engine.publish_metrics", "engine.publish_events_and_metrics")
] + [
    ("roles.*.engine.connector", "vllm-disagg", yaml.safe_load("{engine: {connector: lmcache}}")),
    (
        "roles.*.engine.set_visible_devices",
        "vllm",
        yaml.safe_load("{engine: {set_visible_devices: true}}"),
    ),
    ("roles.*.engine.type", "sglang", yaml.safe_load("{engine: {type: vllm}, frontend: null}")),
]


@pytest.mark.parametrize(
    ("field", "base", "fragment"),
    ROLE_ENGINE_ROWS,
    ids=[f"{f}@{b}" for f, b, _ in ROLE_ENGINE_ROWS],
)
def test_a_role_engine_field_changes_the_plan(
    field: str, base: str, fragment: dict[str, Any]
) -> None:
    without = _plan(_engine_in_roles(BASES[base]))
    with_field = _plan(_engine_in_roles(deep_merge(copy.deepcopy(BASES[base]), fragment)))
    assert with_field != without, f"{field} on the {base} recipe left the plan unchanged"
