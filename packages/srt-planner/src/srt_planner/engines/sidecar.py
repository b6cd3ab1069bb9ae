"""Dynamo sidecar mode: a native engine and its Dynamo sidecar in one step (docs/planner.md#sglang,
#vllm, #trt-llm, #ports).

The engine serves native gRPC on the loopback port ``sidecar_grpc`` (``dynamo.sidecar_port``
and up, one per sidecar process); the sidecar (``python3 -m dynamo.<framework>.sidecar`` or
``dynamo.sidecar_binary``) connects to it and registers the worker with Dynamo. Both run in one
step with a coupled lifecycle: the sidecar starts once the engine's gRPC port accepts
connections, and when either program exits the other is stopped and the step fails.

SGLang and vLLM run the pair on an endpoint's leader (followers are engine-only ranks). TRT-LLM
is one MPI step per endpoint: every task runs the same command, so :func:`rank_zero_launch` runs
the pair on MPI rank 0 and the bare engine (an MPI worker rank) on every other task.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from srt_planner._recipe import resolve_roles
from srt_schema.recipe import Recipe

__all__ = ["coupled_launch", "rank_zero_launch", "sidecar_argv", "sidecar_mode"]


def sidecar_mode(recipe: Recipe) -> bool:
    """The job-wide sidecar switch: ``dynamo.sidecar`` or ``sidecar: true`` on the roles."""
    return recipe.dynamo.sidecar or any(role.config.sidecar for role in resolve_roles(recipe))


def sidecar_argv(
    recipe: Recipe,
    python: str,
    framework: str,
    grpc_port: int,
    extra: Sequence[str] = (),
) -> tuple[str, ...]:
    """The sidecar command: ``--grpc-endpoint 127.0.0.1:<port>``, the engine's own sidecar flags
    (``extra``), then ``dynamo.sidecar_args`` (last, so a recipe can add to what srt passes)."""
    dynamo = recipe.dynamo
    program = (
        (dynamo.sidecar_binary,)
        if dynamo.sidecar_binary
        else (python, "-m", f"dynamo.{framework}.sidecar")
    )
    endpoint = ("--grpc-endpoint", f"127.0.0.1:{grpc_port}")
    return (*program, *endpoint, *extra, *dynamo.sidecar_args)


def coupled_launch(
    engine: Sequence[str], sidecar: Sequence[str], *, grpc_port: int, startup_timeout: int
) -> tuple[str, ...]:
    """``bash -c <script>`` running ``engine`` and ``sidecar`` with a shared lifecycle.

    The script starts the engine, waits up to ``startup_timeout`` seconds for its gRPC port
    (failing early when the engine exits first), starts the sidecar, then polls (1 s) until
    one of the two exits, stops the other and exits non-zero (a sidecar pair never ends cleanly
    on its own). SIGTERM stops both.
    """
    script = "\n".join(
        [
            "engine_pid=''; sidecar_pid=''",
            "stop_both() {",
            '  for pid in $sidecar_pid $engine_pid; do kill -TERM "$pid" 2>/dev/null; done',
            "  wait",
            "}",
            "trap 'stop_both; exit 143' TERM INT",
            f"{shlex.join(engine)} &",
            "engine_pid=$!",
            f"deadline=$((SECONDS + {int(startup_timeout)}))",
            f"until (exec 3<>/dev/tcp/127.0.0.1/{grpc_port}) 2>/dev/null; do",
            '  if ! kill -0 "$engine_pid" 2>/dev/null; then',
            f"    echo 'srt: engine exited before its gRPC port {grpc_port} opened' >&2",
            '    wait "$engine_pid"; status=$?; exit $((status == 0 ? 1 : status))',
            "  fi",
            '  if [ "$SECONDS" -ge "$deadline" ]; then',
            f"    echo 'srt: engine gRPC port {grpc_port} not open after {int(startup_timeout)}s "
            "(dynamo.sidecar_startup_timeout)' >&2",
            "    stop_both; exit 1",
            "  fi",
            "  sleep 1",
            "done",
            f"{shlex.join(sidecar)} &",
            "sidecar_pid=$!",
            # Poll rather than ``wait -n``: bash's ``wait -n`` misses a child that exited
            # before it was called.
            'while kill -0 "$engine_pid" 2>/dev/null && kill -0 "$sidecar_pid" 2>/dev/null; do',
            "  sleep 1",
            "done",
            "for pid in $engine_pid $sidecar_pid; do",
            '  if ! kill -0 "$pid" 2>/dev/null; then wait "$pid"; status=$?; break; fi',
            "done",
            'echo "srt: engine or sidecar exited (status $status); stopping the other" >&2',
            "stop_both",
            "exit $((status == 0 ? 1 : status))",
        ]
    )
    return ("bash", "-c", script)


def rank_zero_launch(
    engine: Sequence[str], sidecar: Sequence[str], *, grpc_port: int, startup_timeout: int
) -> tuple[str, ...]:
    """``bash -c``: MPI rank 0 runs the :func:`coupled_launch` pair, every other rank ``exec``s
    the bare ``engine`` (``SLURM_PROCID`` is the task's rank in an srun step; a process
    started outside srun counts as rank 0)."""
    pair = coupled_launch(engine, sidecar, grpc_port=grpc_port, startup_timeout=startup_timeout)
    guard = f'if [ "${{SLURM_PROCID:-0}}" != 0 ]; then exec {shlex.join(engine)}; fi'
    return ("bash", "-c", f"{guard}\n{pair[2]}")
