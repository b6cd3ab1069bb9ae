"""Parts of the oracle comparison (used by test_oracle.py): srun shapes, argv repeats, generated
files and ports."""

from __future__ import annotations

import re
from typing import Any

import yaml

from srt_planner.plan import JobPlan, ProcessSpec

__all__ = ["compare_files", "compare_ports", "once", "reference_srun", "srun_shape"]

_SRUN_VALUES = ("--mpi", "--nodes", "--ntasks", "--nodelist", "--cpus-per-task")
_SRUN_PREFIXES = ("--cpu-bind", "--distribution", "--ntasks-per-node", "--oversubscribe")


def srun_shape(argv: list[str]) -> list[str]:
    """The placement-relevant srun flags, in order (up to the task command)."""
    end = argv.index("bash") if "bash" in argv else len(argv)
    out: list[str] = []
    i = 0
    while i < end:
        if argv[i] in _SRUN_VALUES:
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
            continue
        if argv[i].startswith(_SRUN_PREFIXES):
            out.append(argv[i])
        i += 1
    return out


def reference_srun(
    reference: dict[str, Any], options: dict[str, str], rules: frozenset[str]
) -> list[str]:
    """The reference's srun shape with our listed srun rules applied to it."""
    shape = srun_shape(reference["srun_argv"])
    ranks = reference.get("ranks") or []
    if "mpi-arbitrary-distribution" in rules and len(ranks) > 1:
        hosts = ",".join(r["node"] for r in ranks for _ in r["gpus"])
        per_node = max(len(r["gpus"]) for r in ranks)
        shape = [f for f in shape if not f.startswith(("--nodes=", "--nodelist="))]
        at = next(i for i, f in enumerate(shape) if f.startswith("--ntasks=")) + 1
        shape[at:at] = [f"--nodelist={hosts}", "--distribution=arbitrary"]
        shape.append(f"--ntasks-per-node={per_node}")
    if "mpi-srun-options" in rules and ranks:
        shape += [
            f"--{k}={v}" if v else f"--{k}"
            for k, v in sorted(options.items())
            if f"--{k}".startswith(_SRUN_PREFIXES)
        ]
    return shape


def once(argv: list[str], flags: frozenset[str]) -> list[str]:
    """``argv`` with a later ``<flag> <value>`` dropped when it repeats an earlier one."""
    out: list[str] = []
    seen: set[tuple[str, str]] = set()
    i = 0
    while i < len(argv):
        if argv[i] in flags and i + 1 < len(argv):
            pair = (argv[i], argv[i + 1])
            if pair not in seen:
                out += pair
            seen.add(pair)
            i += 2
            continue
        out.append(argv[i])
        i += 1
    return out


def compare_files(
    oracle: dict[str, Any], plan: JobPlan, engine_config: frozenset[str]
) -> list[str]:
    """nginx upstreams and the TRT-LLM engine YAML files."""
    ours = {f.path: f.content for f in plan.files}
    problems = []
    for path, content in oracle["generated_files"].items():
        name = path.rsplit("/", 1)[-1]
        if name == "nginx.conf":
            want = re.findall(r"server (\S+);", content)
            got = re.findall(r"server (\S+);", ours.get(name, ""))
            if got != want:
                problems.append(f"nginx upstreams {got} vs {want}")
        elif name.startswith("trtllm_config_"):
            want_cfg = yaml.safe_load(content)
            got_cfg = yaml.safe_load(ours.get(name, "{}"))
            for key in engine_config:
                want_cfg.pop(key, None)
                got_cfg.pop(key, None)
            if got_cfg != want_cfg:
                keys = sorted(
                    k for k in set(got_cfg) | set(want_cfg) if got_cfg.get(k) != want_cfg.get(k)
                )
                problems.append(f"{name} differs in {keys}")
    return problems


_PORT_NAMES = {
    "sys_port": "sys",
    "http_port": "http",
    "bootstrap_port": "bootstrap",
    "kv_events_port": "kv_events",
    "nixl_port": "nixl",
    "dp_rpc_port": "dp_rpc",
}


def compare_ports(topology: list[dict[str, Any]], processes: tuple[ProcessSpec, ...]) -> list[str]:
    """Per-process ports of the reference's worker_topology (MPI endpoints: the leader's)."""
    ours = {s.name: s for s in processes if s.kind == "worker"}
    problems = []
    for row in topology:
        spec = ours.get(f"{row['mode']}_{row['index']}_{row['node']}")
        if spec is None:
            continue  # follower of an MPI endpoint: one step on the leader
        for key, value in row["ports"].items():
            name = _PORT_NAMES[key]
            got = spec.ports.get(name, 0)
            if row["node_rank"] > 0 and name in ("http", "bootstrap", "dp_rpc"):
                continue  # followers bind none of the endpoint's shared ports
            if got != value:
                problems.append(f"{spec.name}: port {name} {got} vs {value}")
    return problems
