"""Render the sbatch script of an ``AllocationRequest`` (docs/planner.md#sbatch-script).

Deterministic: directives in a fixed order then the merged ``sbatch_directives`` sorted by key,
every value shell-quoted, no timestamps, nothing read from the environment (the job name override
``RUNNER_NAME`` reaches ``plan_allocation`` as a parameter).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence

from srt_planner.plan import AllocationRequest

__all__ = ["render_sbatch"]


def _directive(key: str, value: str | int | None = None) -> str:
    if value is None or value == "":
        return f"#SBATCH --{key}"
    return f"#SBATCH --{key}={shlex.quote(str(value))}"


def _component(request: AllocationRequest, nodes: int, segment: int | None) -> list[str]:
    per_node = request.ntasks_per_node
    lines = [
        _directive("nodes", nodes),
        _directive("ntasks", nodes * per_node),
        _directive("ntasks-per-node", per_node),
    ]
    if request.gpus_per_node is not None:
        lines.append(_directive("gpus-per-node", request.gpus_per_node))
    if segment is not None:
        lines.append(_directive("segment", segment))
    if request.exclusive:
        lines.append(_directive("exclusive"))
    if request.account:
        lines.append(_directive("account", request.account))
    lines.append(_directive("time", request.time_limit))
    if request.partition:
        lines.append(_directive("partition", request.partition))
    lines.extend(_directive(key, request.directives[key]) for key in sorted(request.directives))
    return lines


def render_sbatch(
    request: AllocationRequest,
    *,
    output_base: str,
    command: Sequence[str],
    environment: Mapping[str, str] | None = None,
) -> str:
    """The batch script text: directives, job directories, exported environment, ``command``.

    ``command`` is the in-allocation supervisor's argv; it runs on the first node's bare host and
    its exit code is the job's.
    """
    base = output_base.rstrip("/") or "/"
    lines = [
        "#!/bin/bash",
        _directive("job-name", request.job_name),
        _directive("output", f"{base}/%j/logs/sweep_%j.log"),
    ]
    if request.het:
        for position, component in enumerate(request.het):
            if position:
                lines.append("#SBATCH hetjob")
            segment = component.segment if request.segment is not None else None
            lines.extend(_component(request, component.nodes, segment))
    else:
        lines.extend(_component(request, request.nodes, request.segment))
    lines += [
        "",
        "set -e",
        'JOB_ID="${SLURM_JOB_ID:-${SRTCTL_JOB_ID}}"',
        f'OUTPUT_DIR={shlex.quote(base)}/"${{JOB_ID}}"',
        'LOG_DIR="${OUTPUT_DIR}/logs"',
        'mkdir -p "${LOG_DIR}"',
        'export SRTCTL_OUTPUT_DIR="${OUTPUT_DIR}"',
        "exec 2>&1",
        'echo "srt job ${JOB_ID} on ${SLURM_JOB_NUM_NODES:-?} node(s): ${SLURM_JOB_NODELIST:-?}"',
    ]
    env = environment or {}
    lines.extend(f"export {key}={shlex.quote(env[key])}" for key in sorted(env))
    lines += [
        "set +e",
        f"{shlex.join(command)} &",
        'SRT_PID="$!"',
        "# scancel and the time limit signal every process of the job, the supervisor included:",
        "# it cleans up, and this script (so the job) stays alive until the supervisor is done.",
        "trap ':' TERM INT",
        'wait "${SRT_PID}"',
        "EXIT_CODE=$?",
        'while kill -0 "${SRT_PID}" 2>/dev/null; do wait "${SRT_PID}"; EXIT_CODE=$?; done',
        'echo "srt job ${JOB_ID} finished with exit code ${EXIT_CODE}"',
        'exit "${EXIT_CODE}"',
        "",
    ]
    return "\n".join(lines)
