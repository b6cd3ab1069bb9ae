"""TRT-LLM endpoint command (docs/planner.md#trt-llm, #mpi-endpoints, #numa-binding).

One MPI srun per endpoint; the role ``args`` become the engine YAML file
``trtllm_config_<role>.yaml``, a generated file of the plan. In Dynamo sidecar mode (aggregated
only; validate refuses disaggregated sidecars) the engine is TRT-LLM's native gRPC server and
MPI rank 0 also runs the Dynamo sidecar (engines/sidecar.py).
"""

from __future__ import annotations

from typing import Any

from srt_planner._yaml import dump_yaml
from srt_planner.engines.base import EngineCommand, WorkerRequest, role_args
from srt_planner.engines.sidecar import rank_zero_launch, sidecar_argv, sidecar_mode
from srt_planner.numa import NUMA_SCRIPT, numa_script
from srt_planner.plan import GeneratedFile
from srt_schema.recipe import TRTLLMBackend

__all__ = ["FATAL_PATTERNS", "build_trtllm", "config_file_name", "memory_bind"]

FATAL_PATTERNS = (r"^Rank\d+ Task exit code: (?!0$)\d+$", "Failed to initialize executor")
_NUMA_GPU_TYPES = ("gb200", "gb300", "vrnvl72")


def config_file_name(role: str) -> str:
    return f"trtllm_config_{role}.yaml"


def memory_bind(engine: TRTLLMBackend, gpu_type: str | None, role: str) -> bool:
    """Whether to prefix ``numactl -m 0,1`` (``local`` is the CPU wrapper's job)."""
    match engine.numa_memory_bind:
        case None:
            return gpu_type in _NUMA_GPU_TYPES and role in ("prefill", "decode")
        case True:
            return True
        case False | "local":
            return False


def _config(request: WorkerRequest) -> dict[str, Any]:
    config = role_args(request.role)
    config.setdefault("enable_iter_perf_stats", False)
    if request.ctx.frontend == "trtllm_serve":
        config.setdefault("return_perf_metrics", True)
    return config


def build_trtllm(engine: TRTLLMBackend, request: WorkerRequest) -> EngineCommand:
    """The command of the endpoint's MPI step (ranks on every node of the endpoint)."""
    ctx, role, proc = request.ctx, request.role, request.process
    config_path = f"{ctx.in_log_dir}/{config_file_name(role.name)}"
    served = ctx.served_model_name
    sidecar = ctx.dynamo_workers and sidecar_mode(ctx.recipe)
    prefix: list[str] = []
    if memory_bind(engine, ctx.recipe.resources.gpu_type, role.name):
        prefix += ["numactl", "-m", "0,1"]
    prefix.append("trtllm-llmapi-launch")
    if ctx.frontend == "trtllm_serve":
        port = proc.ports["public"] if role.name == "agg" else proc.ports["http"]
        program = ["trtllm-serve", ctx.model_arg, "--host", "0.0.0.0", "--port", str(port)]
        args = role_args(role)
        for key in ("tensor_parallel_size", "moe_expert_parallel_size", "pipeline_parallel_size"):
            if key in args:
                program += [f"--{key}", str(args[key])]
        program += ["--config", config_path]
        # Always named: trtllm-serve would otherwise serve the path it loads (``/model`` in a
        # container), not the name the benchmark asks for (docs/deviations.md).
        program += ["--served_model_name", served]
        program += list(role.config.extra_args)
    elif sidecar:
        # The native gRPC server the Dynamo TRT-LLM sidecar speaks, on loopback
        # (ai-dynamo/dynamo lib/sidecar/trtllm/launch/agg.sh; docs/planner.md#trt-llm). Named
        # like trtllm_serve's (same CLI), so it never serves the path it loads.
        program = [ctx.python, "-m", "tensorrt_llm.commands.serve", ctx.model_arg, "--grpc"]
        program += ["--host", "127.0.0.1", "--port", str(proc.ports["sidecar_grpc"])]
        program += ["--extra_llm_api_options", config_path, "--served_model_name", served]
        program += list(role.config.extra_args)
    else:
        program = [ctx.python, "-m", "dynamo.trtllm", "--model-path", ctx.model_arg]
        program += ["--served-model-name", served]
        if request.disaggregated:
            program += ["--disaggregation-mode", role.name]
        program += ["--extra-engine-args", config_path]
        program += ["--request-plane", ctx.recipe.dynamo.request_plane]
        if engine.publish_events_and_metrics:
            program.append("--publish-events-and-metrics")
        elif engine.publish_metrics:
            program.append("--publish-metrics")
        program += list(role.config.extra_args)
    argv = prefix + program
    env = {
        "TRTLLM_EPLB_SHM_NAME": f"moe_shared_{ctx.job_id}_{role.name}_{proc.endpoint.index}",
        "MASTER_ADDR": ctx.address(request.leader.node),
        "MASTER_PORT": str(request.leader.ports["trtllm_dist_init"]),
    }
    if engine.numa_cpu_bind:
        env["TLLM_NUMA_AWARE_WORKER_AFFINITY"] = "0"
        wrapper = ["bash", f"{ctx.in_log_dir}/{NUMA_SCRIPT}"]
        if engine.numa_memory_bind == "local":
            wrapper.append("--bind-memory")
        argv = wrapper + argv
    if sidecar:
        argv = list(_sidecar_pair(request, argv))
    files = [GeneratedFile(path=config_file_name(role.name), content=dump_yaml(_config(request)))]
    if engine.numa_cpu_bind:
        files.append(numa_script())
    return EngineCommand(
        argv=tuple(argv), env=env, files=tuple(files), fatal_log_patterns=FATAL_PATTERNS
    )


def _sidecar_pair(request: WorkerRequest, engine: list[str]) -> tuple[str, ...]:
    """Rank 0 of the endpoint's MPI step: engine + ``python3 -m dynamo.trtllm.sidecar
    --grpc-endpoint 127.0.0.1:<grpc> --model-path <model> [--context-length N]``; every other
    rank runs the engine alone (an MPI worker of ``trtllm-llmapi-launch``)."""
    ctx = request.ctx
    port = request.process.ports["sidecar_grpc"]
    extra = ["--model-path", ctx.model_arg]
    context_length = ctx.recipe.dynamo.sidecar_context_length
    if context_length is not None:
        extra += ["--context-length", str(context_length)]
    return rank_zero_launch(
        engine,
        sidecar_argv(ctx.recipe, ctx.python, "trtllm", port, extra),
        grpc_port=port,
        startup_timeout=ctx.recipe.dynamo.sidecar_startup_timeout,
    )
