"""Engine args that collide with what srt sets itself (docs/recipes.md#engine-args-rules).

- vLLM ``headless``: srt decides which processes run without an API server (the followers of a
  multi-node worker) and owns the flag on the command line, so a recipe's copy was dropped
  without a word. Under per-node data parallelism every node runs its own API server
  (``--data-parallel-hybrid-lb``); a headless leader would leave the worker with no endpoint.
- vLLM ``profiler-config*`` with ``profiling.type: nsys``: the capture window is the profiling
  block's ``start_step`` / ``stop_step``, sent to the engine as start/stop-profile requests;
  a hand-written profiler config competes with it (the reference refuses it too).
"""

from __future__ import annotations

from collections.abc import Iterator

from srt_schema.errors import Issue
from srt_schema.roles import dp_launch_mode_of
from srt_schema.structural import join_path
from srt_schema.validate.context import Context

__all__ = ["RULES"]


def _arg(args: dict[str, object], name: str) -> tuple[str, object] | None:
    for key in (name, name.replace("-", "_")):
        if key in args:
            return key, args[key]
    return None


def _data_parallel(args: dict[str, object]) -> int:
    found = _arg(args, "data-parallel-size")
    value = found[1] if found is not None else 1
    if isinstance(value, bool):
        return 1
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdecimal():
        return int(value.strip())
    return 1


def vllm_headless(ctx: Context) -> Iterator[Issue]:
    for name, config in ctx.recipe.roles.items():
        if ctx.engine_type(name) != "vllm":
            continue
        args = dict(config.args)
        found = _arg(args, "headless")
        if found is None or found[1] in (None, False):
            continue
        key, value = found
        per_node = _data_parallel(args) > 1 and dp_launch_mode_of(ctx.engine(name)) == "per_node"
        why = (
            "under per-node data parallelism every node of the worker serves its own API "
            "(srt passes --data-parallel-hybrid-lb), so no process may be headless"
            if per_node
            else "srt passes --headless itself, to the follower nodes of a multi-node worker"
        )
        yield ctx.issue(
            join_path(f"$.roles.{name}.args", key),
            f"{key}: {value!r} is set by hand, but {why}; remove roles.{name}.args.{key}",
        )


def vllm_profiler_config(ctx: Context) -> Iterator[Issue]:
    if ctx.recipe.profiling.type != "nsys":
        return
    for name, config in ctx.recipe.roles.items():
        if ctx.engine_type(name) != "vllm":
            continue
        for key in config.args:
            if not key.replace("_", "-").startswith("profiler-config"):
                continue
            yield ctx.issue(
                join_path(f"$.roles.{name}.args", key),
                f"{key} is set by hand, but profiling.type nsys drives vLLM's profiler itself "
                "(the window is the profiling block's start_step and stop_step); remove "
                f"roles.{name}.args.{key}, or drop profiling and profile by hand",
            )


RULES = (vllm_headless, vllm_profiler_config)
