"""vLLM shadow-engine failover (``engine.failover``): the per-worker directory, engine env, GMS.

Every worker gets a directory ``<shared_dir>/srtctl-<job_id>/<role>_<index>`` on its node that
the ``gms`` service (GPU Memory Service, one instance per worker) and all engines of the worker
see: the GMS sockets and the election lock ``failover.lock`` live there. Engine 0 and the shadow
engines run the same command with their own ports on the same GPUs (docs/planner.md#ports,
docs/planner.md#worker-environment, #vllm).
"""

from __future__ import annotations

from srt_schema.recipe import VLLMFailoverConfig

__all__ = [
    "GMS_READY_MARKER",
    "failover_env",
    "gms_command",
    "lock_path",
    "worker_dir",
]

#: The gms service's readiness line: printed once every socket of every GPU exists.
GMS_READY_MARKER = "GMS ready:"


def worker_dir(failover: VLLMFailoverConfig, job_id: str, role: str, index: int) -> str:
    return f"{failover.shared_dir.rstrip('/')}/srtctl-{job_id}/{role}_{index}"


def lock_path(directory: str) -> str:
    return f"{directory}/failover.lock"


def failover_env(directory: str, engine: int) -> dict[str, str]:
    """What an engine of a failover worker needs (the names Dynamo's operator injects)."""
    return {
        "ENGINE_ID": str(engine),
        "GMS_SOCKET_DIR": directory,
        "FAILOVER_LOCK_PATH": lock_path(directory),
        "DYN_VLLM_GMS_SHADOW_MODE": "true",
        "DYN_SYSTEM_STARTING_HEALTH_STATUS": "notready",
    }


def gms_command(python: str) -> tuple[str, ...]:
    """``bash -c`` script: one ``gpu_memory_service`` server per GPU of the worker.

    The servers bind a ``weights`` and a ``kv_cache`` socket each under ``$GMS_SOCKET_DIR``; the
    script prints the readiness line once all of them exist, then polls (1 s): when one server exits
    the others are stopped and the step fails. On SIGTERM (cleanup, after the engines) it stops
    the servers and removes the worker directory. ``{worker_gpu_count}`` is a service
    placeholder, filled in per instance (devices ``0..n-1`` as the worker's mask shows them).
    """
    script = "\n".join(
        [
            'dir="$GMS_SOCKET_DIR"',
            'mkdir -p "$dir" && rm -f "$dir"/gms_*.sock',
            "pids=''",
            "stop() {",
            "  kill -TERM $pids 2>/dev/null; wait",
            "}",
            # Cleanup stops the engines first, then this service: the directory goes last.
            "trap 'stop; rm -rf \"$dir\"; exit 143' TERM INT",
            "count={worker_gpu_count}",
            "for device in $(seq 0 $((count - 1))); do",
            f'  {python} -m gpu_memory_service --device "$device" &',
            '  pids="$pids $!"',
            "done",
            "exited() {",
            '  for pid in $pids; do kill -0 "$pid" 2>/dev/null || { echo "$pid"; return; }; done',
            "}",
            "expected=$((2 * count))",
            "sockets() { find \"$dir\" -maxdepth 1 -name 'gms_*.sock' | wc -l; }",
            'until [ "$(sockets)" -ge "$expected" ]; do',
            '  if [ -n "$(exited)" ]; then',
            "    echo 'srt: a gpu_memory_service server exited before its sockets existed' >&2",
            "    stop; exit 1",
            "  fi",
            "  sleep 1",
            "done",
            f'echo "{GMS_READY_MARKER} $expected sockets in $dir"',
            # Poll rather than ``wait -n``: it misses a child that exited before it was called.
            'while [ -z "$(exited)" ]; do sleep 1; done',
            'wait "$(exited)"; status=$?',
            'echo "srt: a gpu_memory_service server exited (status $status)" >&2',
            "stop",
            "exit $((status == 0 ? 1 : status))",
        ]
    )
    return ("bash", "-c", script)
