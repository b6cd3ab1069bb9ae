"""Dynamo mocker worker command (docs/planner.md#mocker; flags of ai-dynamo 1.6.1).

Every ``MockerBackend`` field maps to one ``python -m dynamo.mocker`` flag; optional fields are
passed only when set (or, for ``decode_speedup_ratio`` / ``num_workers``, when not the default).
"""

from __future__ import annotations

from srt_planner.engines._flags import flag_value, flags_from_args
from srt_planner.engines.base import EngineCommand, WorkerRequest, role_args
from srt_schema.recipe import MockerBackend

__all__ = ["build_mocker"]

#: Flags srt sets itself; a role's copies are dropped.
_OWNED = ("model-name",)


def build_mocker(engine: MockerBackend, request: WorkerRequest) -> EngineCommand:
    ctx, proc, role = request.ctx, request.process, request.role
    argv = [ctx.python, "-m", "dynamo.mocker", "--model-path", ctx.model_arg]
    args = role_args(role)
    # Without it the mocker registers the model under its path, and requests for the served
    # name (what the benchmark asks for) get 404 "Model not found". A role's own ``model-name``
    # is that name (srt_schema.served), so the flag is srt's.
    argv += ["--model-name", ctx.served_model_name]
    if request.disaggregated:
        argv += ["--disaggregation-mode", role.name]
    if "bootstrap" in proc.ports:
        argv += ["--bootstrap-ports", str(proc.ports["bootstrap"])]
    argv += ["--engine-type", engine.engine_type]
    argv += ["--speedup-ratio", flag_value(engine.speedup_ratio)]
    argv += ["--data-parallel-size", str(engine.data_parallel_size)]
    argv += ["--num-gpu-blocks-override", str(engine.num_gpu_blocks_override)]
    argv += ["--max-num-seqs", str(engine.max_num_seqs)]
    argv += ["--max-num-batched-tokens", str(engine.max_num_batched_tokens)]
    if engine.decode_speedup_ratio != 1.0:
        argv += ["--decode-speedup-ratio", flag_value(engine.decode_speedup_ratio)]
    if engine.block_size is not None:
        argv += ["--block-size", str(engine.block_size)]
    if engine.num_workers > 1:
        argv += ["--num-workers", str(engine.num_workers)]
    if engine.startup_time is not None:
        argv += ["--startup-time", flag_value(engine.startup_time)]
    if engine.kv_transfer_bandwidth is not None:
        argv += ["--kv-transfer-bandwidth", flag_value(engine.kv_transfer_bandwidth)]
    if engine.kv_cache_dtype is not None:
        argv += ["--kv-cache-dtype", engine.kv_cache_dtype]
    if not engine.enable_prefix_caching:
        argv.append("--no-enable-prefix-caching")
    if not engine.enable_chunked_prefill:
        argv.append("--no-enable-chunked-prefill")
    if engine.preemption_mode is not None:
        argv += ["--preemption-mode", engine.preemption_mode]
    argv += flags_from_args(args, skip=_OWNED)
    return EngineCommand(argv=tuple(argv), wants_mask=False)
