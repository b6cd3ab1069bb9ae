"""The default metrics exporters Tachometer scrapes (docs/telemetry-and-bench.md#exporters).

While Tachometer is on (the default) and ``default_exporters`` is true, three services are implied:
``dcgm-exporter`` (GPU, 9401, distroless image: no bash wrapper), ``node-exporter`` (9101) and
``process-exporter`` (host-native, every node, 9256). A recipe block or a declared service of the
same name wins. With ``telemetry.enabled``, ``telemetry.dcgm_exporter`` is the DCGM exporter (also
when Tachometer is off): one exporter, scraped by the power collector and by Tachometer. ``{port}``
in an exporter's ``command`` is its port.
Images need a container runtime: with ``container_runtime: none`` only exporters configured with
a host ``binary`` are planned.
"""

from __future__ import annotations

import shlex

from srt_planner.context import PlanContext
from srt_planner.plan import GeneratedFile
from srt_schema.recipe import ServiceConfig, ServiceMetricsConfig, TelemetryExporterConfig

__all__ = [
    "DCGM_IMAGE",
    "HOST_NATIVE_KINDS",
    "NODE_EXPORTER_IMAGE",
    "NO_WRAPPER_KINDS",
    "PROCESS_EXPORTER_CONFIG",
    "implied_exporters",
    "process_exporter_config",
]

DCGM_IMAGE = "nvcr.io#nvidia/k8s/dcgm-exporter:3.3.9-3.6.1-ubuntu22.04"
NODE_EXPORTER_IMAGE = "quay.io#prometheus/node-exporter:v1.8.2"
PROCESS_EXPORTER_CONFIG = "process-exporter.yml"
#: Kinds that run on the bare host (no container image).
HOST_NATIVE_KINDS = frozenset({"process-exporter"})
#: Kinds whose image has no shell: the srun task is the argv itself.
NO_WRAPPER_KINDS = frozenset({"dcgm-exporter"})

_PROCESS_GROUPS = (
    ("frontend", "dynamo.frontend"),
    ("dynamo_worker", r"dynamo\.(sglang|vllm|trtllm|mocker)"),
    ("sglang", "sglang"),
    ("vllm", "vllm"),
    ("trtllm", "trtllm|tensorrt_llm"),
    ("nginx", "nginx"),
    ("infra", "etcd|nats-server"),
    ("client", "srt-bench|srt_bench"),
)


def process_exporter_config() -> str:
    lines = ["process_names:"]
    for name, pattern in _PROCESS_GROUPS:
        lines += [f"  - name: {name}", "    cmdline:", f"      - '{pattern}'"]
    lines += ["  - name: '{{.Comm}}'", "    cmdline:", "      - '.+'"]
    return "\n".join(lines) + "\n"


def _service(
    ctx: PlanContext,
    name: str,
    config: TelemetryExporterConfig | None,
    *,
    image: str | None,
    port: int,
    command: tuple[str, ...],
    node: str,
) -> ServiceConfig | None:
    if config is not None:
        image, port = config.container_image or None, config.port
        if config.command:
            command = tuple(shlex.split(config.command.replace("{port}", str(port))))
        if config.binary:
            image = None
            command = (config.binary, *command[1:])
    if image is None and node != "all" and not (config is not None and config.binary):
        return None
    if image is not None and not ctx.pyxis:
        return None
    return ServiceConfig(
        name=name,
        type=name,
        command=command,
        container=image,
        placement=None,
        critical=False,
        inherit_discovery_env=False,
        metrics=ServiceMetricsConfig(port=port),
    )


def _power_exporter(ctx: PlanContext) -> ServiceConfig | None:
    """``telemetry.dcgm_exporter``: the one DCGM exporter power telemetry and Tachometer share."""
    telemetry = ctx.recipe.telemetry
    config = telemetry.dcgm_exporter if telemetry.enabled else None
    if config is None:
        return None
    port = config.port
    return _service(
        ctx,
        "dcgm-exporter",
        config,
        image=DCGM_IMAGE,
        port=port,
        # 100 ms sampling inside the exporter: dense power curves for the windows.
        command=("dcgm-exporter", "--collect-interval=100", "--address", f":{port}"),
        node="workers",
    )


def implied_exporters(ctx: PlanContext) -> list[tuple[ServiceConfig, str]]:
    out: list[tuple[ServiceConfig, str]] = []
    power = _power_exporter(ctx)
    if power is not None:
        out.append((power, "telemetry.dcgm_exporter"))
    tachometer = ctx.recipe.observability.tachometer
    if tachometer.enabled is False or not tachometer.default_exporters:
        return out
    reason = "observability.tachometer default exporters"
    telemetry = ctx.recipe.telemetry
    if not (telemetry.enabled and telemetry.dcgm_exporter is not None):
        gpu = tachometer.dcgm_exporter or tachometer.default_gpu_exporter
        port = gpu.port if gpu is not None else 9401
        interval = tachometer.collect_interval_ms
        dcgm = _service(
            ctx,
            "dcgm-exporter",
            gpu,
            image=DCGM_IMAGE,
            port=port,
            command=("dcgm-exporter", f"--collect-interval={interval}", "--address", f":{port}"),
            node="workers",
        )
        if dcgm is not None:
            out.append((dcgm, reason))
    node_config = tachometer.node_exporter
    node_port = node_config.port if node_config is not None else 9101
    node = _service(
        ctx,
        "node-exporter",
        node_config,
        image=NODE_EXPORTER_IMAGE,
        port=node_port,
        command=(
            "/bin/node_exporter",
            f"--web.listen-address=:{node_port}",
            "--collector.disable-defaults",
            "--collector.cpu",
            "--collector.infiniband",
            "--collector.meminfo",
        ),
        node="workers",
    )
    if node is not None:
        out.append((node, reason))
    process_config = tachometer.process_exporter
    if process_config is not None or ctx.pyxis:
        process_port = process_config.port if process_config is not None else 9256
        process = _service(
            ctx,
            "process-exporter",
            process_config,
            image=None,
            port=process_port,
            command=(
                "process-exporter",
                "-threads=true",
                f"-config.path={ctx.log_dir}/{PROCESS_EXPORTER_CONFIG}",
                f"-web.listen-address=:{process_port}",
            ),
            node="all",
        )
        if process is not None:
            out.append((process, reason))
    return out


def exporter_files(services: list[ServiceConfig]) -> list[GeneratedFile]:
    if any(s.type == "process-exporter" for s in services):
        return [GeneratedFile(path=PROCESS_EXPORTER_CONFIG, content=process_exporter_config())]
    return []
