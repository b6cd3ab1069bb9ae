"""``post_eval`` dispatch as data (telemetry-bench-reporting.md §3.5): which mode the job is in,
the eval argv with its placeholders filled, and the environment forwarded to it. Pure functions:
the caller reads ``os.environ`` once and starts the process (log ``<log_dir>/eval.out``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

from srt_runtime.reporting.errors import PostEvalConfigError
from srt_schema.recipe import PostEvalConfig

__all__ = [
    "BUILTIN_PASSTHROUGH",
    "DEFAULT_INFMAX_WORKSPACE",
    "EvalMode",
    "build_eval_argv",
    "build_eval_env",
    "read_eval_mode",
]

EvalMode = Literal["none", "run_eval", "eval_only"]
DEFAULT_INFMAX_WORKSPACE = "/infmax-workspace"
LM_EVAL_SCRIPT = "/srtctl-benchmarks/lm-eval/bench.sh"
#: Forwarded when set and non-empty, after the recipe's ``post_eval.passthrough_env``.
BUILTIN_PASSTHROUGH = (
    "RUN_EVAL",
    "EVAL_ONLY",
    "IS_MULTINODE",
    "FRAMEWORK",
    "PRECISION",
    "MODEL_PREFIX",
    "RUNNER_TYPE",
    "RESULT_FILENAME",
    "SPEC_DECODING",
    "ISL",
    "OSL",
    "MODEL",
    "MODEL_PATH",
    "MAX_MODEL_LEN",
    "EVAL_MAX_MODEL_LEN",
    "PREFILL_TP",
    "PREFILL_EP",
    "PREFILL_DP_ATTN",
    "PREFILL_NUM_WORKERS",
    "DECODE_TP",
    "DECODE_EP",
    "DECODE_DP_ATTN",
    "DECODE_NUM_WORKERS",
)


def _flag(environ: Mapping[str, str], name: str) -> bool:
    return environ.get(name, "").strip().lower() in ("true", "1")


def read_eval_mode(environ: Mapping[str, str]) -> EvalMode:
    """``eval_only`` (EVAL_ONLY=true: the eval replaces the benchmark and is the job's result),
    ``run_eval`` (RUN_EVAL=true: after a benchmark that exited 0, non-fatal) or ``none``."""
    if _flag(environ, "EVAL_ONLY"):
        return "eval_only"
    if _flag(environ, "RUN_EVAL"):
        return "run_eval"
    return "none"


def build_eval_argv(
    config: PostEvalConfig | None,
    *,
    frontend_port: int,
    infmax_workspace: str = DEFAULT_INFMAX_WORKSPACE,
) -> tuple[str, ...]:
    """``post_eval.command`` with ``{endpoint}`` / ``{infmax_workspace}`` replaced in every
    element, or the built-in lm-eval runner. Not shell-interpreted."""
    endpoint = f"http://localhost:{frontend_port}"
    if config is None or config.command is None:
        return ("bash", LM_EVAL_SCRIPT, endpoint, infmax_workspace)
    if not config.command:
        raise PostEvalConfigError(
            "$.post_eval.command: the argv is empty; give a program and its arguments, or omit "
            "the key to use the built-in lm-eval runner"
        )
    return tuple(
        arg.replace("{endpoint}", endpoint).replace("{infmax_workspace}", infmax_workspace)
        for arg in config.command
    )


def _check_names(names: Iterable[str]) -> tuple[str, ...]:
    checked = tuple(names)
    for index, name in enumerate(checked):
        if not name.isidentifier():
            raise PostEvalConfigError(
                f"$.post_eval.passthrough_env[{index}]: {name!r} is not an environment variable "
                "name; use letters, digits and underscores, not starting with a digit"
            )
    return checked


def build_eval_env(
    config: PostEvalConfig | None,
    environ: Mapping[str, str],
    *,
    served_model_name: str,
    concurrencies: Iterable[int] = (),
) -> dict[str, str]:
    """The variables the eval process gets on top of the job's own environment.

    Passthrough names (the recipe's first, then :data:`BUILTIN_PASSTHROUGH`) are copied when set
    and non-empty; ``MODEL_NAME`` is the served model; ``EVAL_CONC`` comes from the environment,
    else the largest benchmark concurrency (left out when there is none).
    """
    names = _check_names(config.passthrough_env if config is not None else ())
    env: dict[str, str] = {}
    for name in (*names, *BUILTIN_PASSTHROUGH):
        value = environ.get(name, "")
        if value and name not in env:
            env[name] = value
    env["MODEL_NAME"] = served_model_name
    conc = environ.get("EVAL_CONC") or (str(max(concurrencies)) if concurrencies else "")
    if conc:
        env["EVAL_CONC"] = conc
    return env
