"""TileRT decode server command (docs/planner.md#atom-and-tilert)."""

from __future__ import annotations

from srt_planner.engines._flags import flags_from_args
from srt_planner.engines.base import EngineCommand, WorkerRequest, role_args
from srt_planner.errors import PlanningError
from srt_schema.recipe import TileRTBackend

__all__ = ["build_tilert"]

_FORBIDDEN = ("engine", "http-port", "ctrl-port")


def build_tilert(engine: TileRTBackend, request: WorkerRequest) -> EngineCommand:
    del engine  # its served_model_name is read through ctx.served_model_name
    ctx, proc, role = request.ctx, request.process, request.role
    if role.name != "decode" or len(request.siblings) > 1:
        raise PlanningError(
            f"$.roles.{role.name}.engine: TileRT runs single-node decode workers only"
        )
    args = role_args(role)
    for key in args:
        if key.replace("_", "-") in _FORBIDDEN:
            raise PlanningError(f"$.roles.decode.args.{key}: srt sets this TileRT flag; remove it")
    argv = [ctx.python, "-m", "tilert.pd_vllm.decode_server", "--engine", "tilert"]
    argv += ["--http-port", str(proc.ports["http"]), "--ctrl-port", str(proc.ports["nixl"])]
    # Always named: the server's own default would be the path it loads (``/model`` in a
    # container), not the name clients ask for.
    argv += ["--served-model-name", ctx.served_model_name]
    argv += flags_from_args(args, skip=("served-model-name",), sort=False, repeat_lists=True)
    return EngineCommand(argv=tuple(argv))
