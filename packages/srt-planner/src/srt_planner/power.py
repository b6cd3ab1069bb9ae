"""Power telemetry's legs as plan processes (docs/design.md#power-telemetry-in-a-job).

From ``telemetry:`` (when ``enabled``), in the ``telemetry`` phase, after the frontend and the
``after_frontend`` services (the DCGM exporter is one of those: ``srt_planner.exporters``):

- order 0: leg B, ``srt-telemetry cpu-power exporter`` on every worker node
  (``cpu_power_exporter``);
  leg A's ``cpu-power wait-ready --init`` (the ``starting`` manifest).
- order 1: ``srt-telemetry power collect`` on the head node (GPU power from every node's DCGM
  exporter, and leg B's scrape); leg A's ``cpu-power collect`` on every worker node.
- order 2: the readiness gates, ``power wait-ready`` and ``cpu-power wait-ready``, one-shots that
  fail the job when their leg is ``required`` and only warn otherwise.

The benchmark gets ``SRT_MEASUREMENT_WINDOW_DIR`` (``srt_planner.benchmark``). After it stops,
also on failure or cancel, the supervisor runs the plan's ``finalize`` steps: ``power finalize``
(the manifest, ``energy.json``, the verdict), ``cpu-power finalize``, then ``srt-bench energy``
(the energy per concurrency into ``benchmark-rollup.json``).

The config files match srt-telemetry's ``PowerConfig`` and ``CpuPowerConfig``
(``tests/test_contract.py``). Every srt-telemetry process runs on the bare host (srt-telemetry is
installed on compute nodes). On the local launcher every simulated node is this one host: one
exporter and one collector stand for them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from srt_planner.context import PlanContext
from srt_planner.plan import FinalizeStep, GeneratedFile, ProcessSpec
from srt_planner.srun import SrunStep, render_srun
from srt_schema.validate.benchmark_rules import parse_concurrencies

__all__ = [
    "CPU_POWER_CONFIG",
    "POWER_CONFIG",
    "PowerLegs",
    "build_power",
    "gpu_assignments",
    "window_dir",
]

POWER_CONFIG = "power.json"
CPU_POWER_CONFIG = "cpu_power.json"
_EXPORTER_ROLE = "dcgm-exporter"
#: Extra seconds a gate's one-shot gets beyond the leg's own start-up deadline.
_GATE_SLACK = 15.0


class PowerLegs(msgspec.Struct, frozen=True, kw_only=True):
    processes: tuple[ProcessSpec, ...] = ()
    files: tuple[GeneratedFile, ...] = ()
    finalize: tuple[FinalizeStep, ...] = ()


def window_dir(ctx: PlanContext) -> str | None:
    """Where the benchmark writes its measurement windows (as the benchmark sees the log dir)."""
    tel = ctx.recipe.telemetry
    if not tel.enabled:
        return None
    return f"{ctx.in_log_dir}/{tel.storage_subdir}/windows"


def _machines(ctx: PlanContext, nodes: Sequence[str]) -> dict[str, str]:
    """node -> the node that stands for its machine: itself, except on the local launcher, where
    every simulated node is this one host (the first node stands for it)."""
    if ctx.local and nodes:
        return {node: nodes[0] for node in nodes}
    return {node: node for node in nodes}


def gpu_assignments(
    processes: Sequence[ProcessSpec],
) -> dict[tuple[str, int], list[dict[str, str | int]]]:
    """(node, GPU number) -> the serving worker processes using it (role, index, process rank:
    the process's position among its worker's nodes and processes), in plan order."""
    out: dict[tuple[str, int], list[dict[str, str | int]]] = {}
    rank: dict[tuple[str, int], int] = {}
    for spec in processes:
        if spec.kind != "worker" or spec.engine != 0:
            continue
        for node in spec.nodes:
            key = (spec.role, spec.index)
            process = rank.get(key, 0)
            rank[key] = process + 1
            for gpu in spec.node_gpus.get(node, spec.gpus):
                assignment: dict[str, str | int] = {
                    "worker_role": spec.role,
                    "worker_index": spec.index,
                    "worker_process": process,
                }
                slot = out.setdefault((node, gpu), [])
                if assignment not in slot:
                    slot.append(assignment)
    return out


def _expected_devices(
    ctx: PlanContext, processes: Sequence[ProcessSpec], machine: dict[str, str]
) -> list[dict[str, Any]]:
    """Every GPU of a serving engine process, with the worker process(es) it belongs to."""
    devices: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for (node, gpu), assignments in gpu_assignments(processes).items():
        slot = devices.setdefault((machine.get(node, node), gpu), [])
        for assignment in assignments:
            full = {**assignment, "het_group": ctx.het_group(node)}
            if full not in slot:
                slot.append(full)
    return [
        {"hostname": host, "gpu_index": gpu, "assignments": devices[(host, gpu)]}
        for host, gpu in sorted(devices)
    ]


def _spec(
    ctx: PlanContext,
    name: str,
    node: str,
    argv: tuple[str, ...],
    *,
    order: int,
    oneshot: bool = False,
    critical: bool = False,
    ports: dict[str, int] | None = None,
    timeout: float | None = None,
    grace: float = 10.0,
) -> ProcessSpec:
    log = f"{name}.out"
    step = SrunStep(
        step_name=name,
        nodes=(node,),
        log_path=ctx.log_path(log),
        options=dict(ctx.recipe.srun_options),
        het_group=ctx.het_group(node),
    )
    return ProcessSpec(
        name=name,
        kind="telemetry",
        role=name.split("_", 1)[0],
        nodes=(node,),
        ports=ports or {},
        argv=argv,
        srun_argv=() if ctx.local else render_srun(step, argv, job_id=ctx.job_id),
        log_file=log,
        phase="telemetry",
        order=order,
        critical=critical,
        oneshot=oneshot,
        timeout_seconds=timeout,
        stop_grace_seconds=grace,
        stop_tier=0,
        het_group=step.het_group,
    )


def _join_budget(request_timeout: float, join: float | None) -> float:
    """The collector's shutdown budget, as srt-telemetry derives it (``PowerConfig.join_timeout``,
    which the planner cannot import): the collector's stop grace and the finalize deadline."""
    return join if join is not None else 2 * (2 * request_timeout + 1) + 2


def build_power(ctx: PlanContext, processes: Sequence[ProcessSpec]) -> PowerLegs:
    tel = ctx.recipe.telemetry
    if not tel.enabled:
        return PowerLegs()
    carving = ctx.carving
    compute = tuple(
        dict.fromkeys(carving.workers + tuple(n for p in carving.pools.values() for n in p))
    )
    machine = _machines(ctx, compute)
    hosts = tuple(dict.fromkeys(machine.values()))
    head = carving.head
    power_dir = f"{ctx.log_dir}/{tel.storage_subdir}"
    specs: list[ProcessSpec] = []
    files: list[GeneratedFile] = []
    finalize: list[FinalizeStep] = []
    startup = tel.startup_timeout_seconds

    cpu_endpoints: list[dict[str, str]] = []
    exporter = tel.cpu_power_exporter
    if exporter is not None:
        for host in hosts:
            argv = (
                "srt-telemetry",
                "cpu-power",
                "exporter",
                "--port",
                str(exporter.port),
                "--source",
                exporter.source,
            )
            # Best effort (leg B never changes the outcome): no readiness probe, whose failure
            # would fail the job; the collector records the nodes it could not scrape.
            specs.append(
                _spec(
                    ctx,
                    f"cpu-power-exporter_{host}",
                    host,
                    argv,
                    order=0,
                    ports={"metrics": exporter.port},
                )
            )
            url = f"http://{ctx.address(host)}:{exporter.port}/metrics"
            cpu_endpoints.append({"hostname": host, "url": url})

    gpu = tel.dcgm_exporter
    if gpu is not None or cpu_endpoints:
        endpoints = []
        if gpu is not None:
            endpoints = [
                {"hostname": host, "url": f"http://{ctx.address(host)}:{gpu.port}/metrics"}
                for host in hosts
            ]
        concurrencies = parse_concurrencies(ctx.recipe.benchmark.concurrencies) or ()
        btype = ctx.recipe.benchmark.type
        command = (gpu.command or "").replace("{port}", str(gpu.port)) if gpu else ""
        config = {
            "power_dir": power_dir,
            "result_root": ctx.log_dir,
            "endpoints": endpoints,
            "expected_devices": _expected_devices(ctx, processes, machine) if gpu else [],
            "expected_windows": [
                {"benchmark_type": btype, "concurrency": c} for c in dict.fromkeys(concurrencies)
            ],
            "job_id": ctx.job_id,
            "run_name": f"{ctx.recipe.name}_{ctx.job_id}",
            "collect_interval_ms": tel.collect_interval_ms,
            "request_timeout_seconds": tel.request_timeout_seconds,
            "startup_timeout_seconds": startup,
            "collector_join_timeout_seconds": tel.collector_join_timeout_seconds,
            "required": tel.required,
            "container_image": gpu.container_image if gpu else "",
            "exporter_port": gpu.port if gpu else 0,
            "exporter_command": command,
            "cpu_exporter_endpoints": cpu_endpoints,
        }
        if ctx.recipe.benchmark.capacity is not None:
            # a capacity search picks its concurrencies as it runs: every window it stamps
            config["run_time_windows"] = btype
        files.append(_json_file(POWER_CONFIG, config))
        path = f"{ctx.log_dir}/{POWER_CONFIG}"
        grace = _join_budget(tel.request_timeout_seconds, tel.collector_join_timeout_seconds)
        collector = _spec(
            ctx,
            "power-collector",
            head,
            ("srt-telemetry", "power", "collect", "--config", path),
            order=1,
            grace=grace + 5.0,
        )
        specs.append(collector)
        if gpu is not None:
            gate = ("srt-telemetry", "power", "wait-ready", "--config", path)
            specs.append(
                _spec(
                    ctx,
                    "power-ready",
                    head,
                    (*gate, "--timeout", f"{startup:g}"),
                    order=2,
                    oneshot=True,
                    critical=tel.required,
                    timeout=startup + _GATE_SLACK,
                )
            )
            watched = tuple(
                s.name for s in processes if s.kind == "service" and s.role == _EXPORTER_ROLE
            )
            finalize.append(
                FinalizeStep(
                    name="power-finalize",
                    argv=("srt-telemetry", "power", "finalize", "--config", path),
                    log_file="power-finalize.out",
                    stop_first=(collector.name,),
                    exited_watch=watched,
                    exited_args=("--exporter-exited",),
                    interrupted_args=("--interrupted",),
                    reap_forced_args=("--benchmark-reap", "forced"),
                    fails_job=True,
                    timeout_seconds=grace + 60.0,
                )
            )

    cpu = tel.cpu_power
    cpu_dir = f"{ctx.log_dir}/{cpu.storage_subdir}"
    if cpu.enabled:
        config = {
            "output_dir": cpu_dir,
            "expected_nodes": list(hosts),
            "source": cpu.source,
            "sample_interval_seconds": cpu.sample_interval_seconds,
            "startup_timeout_seconds": cpu.startup_timeout_seconds,
            "required": cpu.required,
            "job_id": ctx.job_id,
            "run_name": f"{ctx.recipe.name}_{ctx.job_id}",
        }
        files.append(_json_file(CPU_POWER_CONFIG, config))
        path = f"{ctx.log_dir}/{CPU_POWER_CONFIG}"
        base = ("srt-telemetry", "cpu-power")
        specs.append(
            _spec(
                ctx,
                "cpu-power-init",
                head,
                (*base, "wait-ready", "--config", path, "--init"),
                order=0,
                oneshot=True,
                timeout=60.0,
            )
        )
        collectors = [
            _spec(
                ctx,
                f"cpu-power_{host}",
                host,
                (*base, "collect", "--config", path, "--hostname", host),
                order=1,
            )
            for host in hosts
        ]
        specs += collectors
        specs.append(
            _spec(
                ctx,
                "cpu-power-ready",
                head,
                (*base, "wait-ready", "--config", path),
                order=2,
                oneshot=True,
                critical=cpu.required,
                timeout=cpu.startup_timeout_seconds + _GATE_SLACK,
            )
        )
        names = tuple(c.name for c in collectors)
        finalize.append(
            FinalizeStep(
                name="cpu-power-finalize",
                argv=(*base, "finalize", "--config", path),
                log_file="cpu-power-finalize.out",
                stop_first=names,
                exited_watch=names,
                exited_args=("--failed-process", "{name}"),
                interrupted_args=("--interrupted",),
                fails_job=True,
            )
        )

    if finalize and ctx.recipe.benchmark.type != "manual":
        finalize.append(
            FinalizeStep(
                name="energy",
                argv=(
                    "srt-bench",
                    "energy",
                    "--log-dir",
                    ctx.log_dir,
                    "--power-dir",
                    power_dir,
                    "--cpu-power-dir",
                    cpu_dir,
                ),
                log_file="energy.out",
            )
        )
    return PowerLegs(processes=tuple(specs), files=tuple(files), finalize=tuple(finalize))


def _json_file(path: str, content: dict[str, Any]) -> GeneratedFile:
    return GeneratedFile(
        path=path,
        content=msgspec.json.format(msgspec.json.encode(content), indent=2).decode() + "\n",
    )
