"""The human-readable dry-run: the batch script, then the whole JobPlan on simulated nodes.

Sections: nodes (processes, GPUs, ports per node), services (placement, start phase, critical,
``implied by:``), mounts by source, environment by scope, every argv, generated files, the
health gate, and how the job ends (it serves until cancelled; its benchmark output is mirrored).
Pure: plan in, text out.
"""

from __future__ import annotations

import shlex
from collections import defaultdict
from typing import TYPE_CHECKING

from srt_cli.tables import render_table
from srt_schema.secrets import redact_env_value

if TYPE_CHECKING:
    from srt_cli.planning import PlannedJob
    from srt_planner.plan import JobPlan, ProcessSpec

__all__ = ["describe_job"]


def _ports(spec: ProcessSpec) -> str:
    return " ".join(f"{name}={port}" for name, port in sorted(spec.ports.items())) or "-"


def _gpus(spec: ProcessSpec, node: str) -> str:
    gpus = spec.node_gpus.get(node, spec.gpus)
    return ",".join(str(g) for g in gpus) or "-"


def _node_parts(plan: JobPlan) -> dict[str, list[str]]:
    roles = plan.node_roles
    parts: dict[str, list[str]] = defaultdict(list)
    parts[roles.head].append("head")
    parts[roles.infra].append("infra")
    parts[roles.bench].append("bench")
    for node in roles.workers:
        parts[node].append("workers")
    for pool, nodes in roles.pools.items():
        for node in nodes:
            parts[node].append(f"pool {pool}")
    return {node: list(dict.fromkeys(p)) for node, p in parts.items()}


def _nodes_section(plan: JobPlan) -> str:
    parts = _node_parts(plan)
    rows: list[list[str]] = []
    for node in plan.nodes:
        here = [p for p in plan.processes if node in p.nodes]
        label = f"{node} ({', '.join(parts.get(node, [])) or 'idle'})"
        if not here:
            rows.append([label, "(nothing)", "", "", ""])
        for i, spec in enumerate(here):
            rows.append(
                [label if i == 0 else "", spec.name, spec.kind, _gpus(spec, node), _ports(spec)]
            )
    return render_table(["NODE", "PROCESS", "KIND", "GPUS", "PORTS"], rows)


def _services_section(plan: JobPlan) -> str:
    rows = []
    for spec in plan.processes:
        if spec.kind not in ("service", "telemetry", "proxy"):
            continue
        rows.append(
            [
                spec.name,
                spec.role,
                ",".join(spec.nodes),
                spec.phase,
                "yes" if spec.critical else "no",
                spec.implied_by or ("declared in services" if spec.kind == "service" else "-"),
            ]
        )
    if not rows:
        return "  (none)"
    return render_table(["SERVICE", "ROLE", "PLACEMENT", "START", "CRITICAL", "IMPLIED BY"], rows)


def _mounts_section(plan: JobPlan) -> str:
    if plan.container_runtime == "none":
        return "  (container runtime none: processes run natively, nothing is mounted)"
    seen: dict[tuple[str, str], tuple[str, bool]] = {}
    for spec in plan.processes:
        if spec.container is None:
            continue
        for mount in spec.container.mounts:
            seen[(mount.host, mount.container)] = (mount.source, mount.readonly)
    if not seen:
        return "  (none)"
    order = {"built-in": 0, "cluster": 1, "recipe": 2}
    rows = sorted(
        ([src, host, cont, "ro" if ro else "rw"] for (host, cont), (src, ro) in seen.items()),
        key=lambda r: (order.get(r[0], 9), r[2]),
    )
    return render_table(["SOURCE", "HOST", "CONTAINER", "MODE"], rows)


def _env_section(plan: JobPlan, global_env: dict[str, str]) -> str:
    rows: list[list[str]] = [["global", k, global_env[k]] for k in sorted(global_env)]
    scopes: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for spec in plan.processes:
        scope = f"{spec.kind}:{spec.role}"
        for key, value in spec.env.items():
            if global_env.get(key) != value:
                scopes[scope][key].add(value)
    for scope in sorted(scopes):
        for key in sorted(scopes[scope]):
            values = sorted(scopes[scope][key])
            rows.append([scope, key, values[0] if len(values) == 1 else "(differs per process)"])
    if not rows:
        return "  (no environment variables)"
    return render_table(["SCOPE", "VARIABLE", "VALUE"], rows)


def _argv_section(plan: JobPlan) -> str:
    out: list[str] = []
    for spec in (*plan.processes, *plan.teardown):
        out.append(f"  [{spec.phase}] {spec.name} on {','.join(spec.nodes)}")
        for line in spec.preamble:
            out.append(f"      preamble: {line}")
        out.append(f"      $ {shlex.join(spec.argv)}")
        if spec.stand_in_for:
            out.append(f"      stands in for: {shlex.join(spec.stand_in_for)}")
        if spec.srun_argv:
            out.append(f"      srun: {shlex.join(spec.srun_argv)}")
    return "\n".join(out)


def _finalize_lines(plan: JobPlan) -> list[str]:
    """The steps the supervisor runs after the benchmark (also on failure or cancel)."""
    if not plan.finalize:
        return []
    out = [
        f"--- finalize (after the benchmark, also on failure or cancel; on "
        f"{plan.node_roles.head}, in order) ---"
    ]
    for step in plan.finalize:
        out.append(f"  {step.name}: $ {shlex.join(step.argv)}")
        if step.stop_first:
            out.append(f"      first stops: {', '.join(step.stop_first)}")
        added = [
            (step.interrupted_args, "if the run was aborted"),
            (step.reap_forced_args, "if the benchmark had to be stopped"),
        ]
        if step.exited_watch:
            added.insert(0, (step.exited_args, f"if {', '.join(step.exited_watch)} exited"))
        for args, when in added:
            if args:
                out.append(f"      adds {shlex.join(args)} {when}")
        if step.fails_job:
            out.append("      a non-zero exit fails the job")
    return [*out, ""]


def _files_section(plan: JobPlan) -> str:
    if not plan.files:
        return "  (none)"
    return "\n".join(f"  {f.path} ({len(f.content)} bytes)" for f in plan.files)


def describe_job(planned: PlannedJob, *, header: str) -> str:
    """The complete dry-run text of one job."""
    from srt_planner.hostlist import compress_hostlist

    plan = planned.plan
    job = planned.job
    request = planned.request
    nodes = compress_hostlist(plan.nodes)
    lines = [
        f"=== {header} ===",
        f"job: {job.name}   nodes: {request.nodes}   gpus/node: "
        f"{job.recipe.resources.gpus_per_node}   launcher: {plan.launcher}   "
        f"container runtime: {plan.container_runtime}",
    ]
    if job.sweep_params:
        params = ", ".join(f"{k}={v}" for k, v in job.sweep_params.items())
        lines.append(f"sweep point: {params}")
    lines += [
        "",
        "--- sbatch script ---",
        planned.script.rstrip("\n"),
        "",
        f"--- plan on {nodes} (simulated; {len(plan.processes)} processes) ---",
        _nodes_section(plan),
        "",
        "--- services ---",
        _services_section(plan),
        "",
        "--- mounts ---",
        _mounts_section(plan),
        "",
        "--- environment ---",
        _env_section(plan, {k: redact_env_value(k, v) for k, v in job.recipe.environment.items()}),
        "",
        *_stand_in_lines(plan),
        "--- commands ---",
        _argv_section(plan),
        "",
        *_finalize_lines(plan),
        "--- generated files ---",
        _files_section(plan),
        "",
        f"health gate: {plan.health.family} {plan.health.url} "
        f"({plan.health.max_attempts} x {plan.health.interval_seconds:g}s)",
        f"frontend: {plan.frontend_url}   model: {plan.served_model_name}",
        *_identity_lines(plan),
        *_run_lines(plan),
        "",
    ]
    return "\n".join(lines)


def _stand_in_lines(plan: JobPlan) -> list[str]:
    """Stand-in engine mode: which processes were replaced, and by what (before the commands)."""
    if plan.stand_in is None:
        return []
    replaced = [spec for spec in plan.processes if spec.stand_in_for]
    rows = [[spec.name, _program(spec.stand_in_for), _program(spec.argv)] for spec in replaced]
    lines = [
        f"--- stand-in engines ({len(replaced)} of "
        f"{sum(s.kind == 'worker' for s in plan.processes)} worker processes replaced; "
        f"stand-in model {plan.stand_in.model}) ---",
        render_table(["PROCESS", "ENGINE", "STAND-IN"], rows) if rows else "  (none)",
        "  everything else runs as the recipe says",
        "",
    ]
    return lines


def _program(argv: tuple[str, ...]) -> str:
    """``python -m dynamo.sglang`` -> ``dynamo.sglang``; a bash script -> its first command."""
    words = list(argv)
    if len(words) >= 3 and words[0] == "bash" and words[1] == "-c":
        words = words[2].split()
    if "-m" in words[:3]:
        at = words.index("-m")
        return words[at + 1] if at + 1 < len(words) else words[0]
    return words[0].rsplit("/", 1)[-1] if words else ""


def _identity_lines(plan: JobPlan) -> list[str]:
    """What the run checks after the health gate (the recipe's ``identity``), if anything."""
    declared = plan.identity
    if declared is None:
        return []
    named = {
        "model.repo": declared.model.repo,
        "model.revision": declared.model.revision,
        "container.image": declared.container.image,
        **{f"frameworks.{k}": v for k, v in sorted(declared.frameworks.items())},
    }
    parts = [f"{field}={value}" for field, value in named.items() if value]
    return [f"identity check after the health gate: {', '.join(parts)}"]


def _run_lines(plan: JobPlan) -> list[str]:
    """How the job ends: it serves until cancelled, or its benchmark (mirrored or not) runs."""
    if plan.serve_only:
        line = "serves until cancelled (srtctl cancel <job_id>) or the time limit"
        if any(spec.terminal for spec in plan.processes):
            line += ", or until every terminal service has exited"
        return [f"{line}: no benchmark; every worker and frontend stays up and supervised"]
    if plan.stream_benchmark_output:
        return ["benchmark output: every line of benchmark.out is mirrored to the sweep log"]
    return []
