"""post_eval dispatch: mode, argv placeholders, forwarded environment."""

from __future__ import annotations

import pytest

from srt_runtime.reporting.errors import PostEvalConfigError
from srt_runtime.reporting.post_eval import build_eval_argv, build_eval_env, read_eval_mode
from srt_schema.recipe import PostEvalConfig


@pytest.mark.parametrize(
    ("environ", "mode"),
    [
        ({}, "none"),
        ({"RUN_EVAL": "true"}, "run_eval"),
        ({"RUN_EVAL": "TRUE", "EVAL_ONLY": "false"}, "run_eval"),
        ({"RUN_EVAL": "true", "EVAL_ONLY": "1"}, "eval_only"),
        ({"RUN_EVAL": "no"}, "none"),
    ],
)
def test_mode_from_the_environment(environ: dict[str, str], mode: str) -> None:
    assert read_eval_mode(environ) == mode


def test_builtin_runner_by_default() -> None:
    assert build_eval_argv(None, frontend_port=8000) == (
        "bash",
        "/srtctl-benchmarks/lm-eval/bench.sh",
        "http://localhost:8000",
        "/infmax-workspace",
    )


def test_placeholders_in_every_element_and_nothing_else() -> None:
    config = PostEvalConfig(
        command=("python", "-m", "ev", "--url={endpoint}/v1", "{infmax_workspace}", "{other}")
    )
    assert build_eval_argv(config, frontend_port=30000, infmax_workspace="/ws") == (
        "python",
        "-m",
        "ev",
        "--url=http://localhost:30000/v1",
        "/ws",
        "{other}",
    )


def test_empty_command_is_refused() -> None:
    with pytest.raises(PostEvalConfigError) as err:
        build_eval_argv(PostEvalConfig(command=()), frontend_port=1)
    assert str(err.value) == (
        "$.post_eval.command: the argv is empty; give a program and its arguments, or omit the "
        "key to use the built-in lm-eval runner"
    )


def test_environment_passthrough_order_and_always_set_values() -> None:
    config = PostEvalConfig(passthrough_env=("HF_HOME", "MODEL", "UNSET_ONE", "EMPTY_ONE"))
    environ = {
        "HF_HOME": "/hf",
        "MODEL": "qwen",
        "EMPTY_ONE": "",
        "ISL": "1024",
        "RUN_EVAL": "true",
        "SECRET_NOT_LISTED": "x",
    }
    env = build_eval_env(
        config, environ, served_model_name="Qwen/Qwen3-0.6B", concurrencies=(4, 64, 16)
    )
    assert env == {
        "HF_HOME": "/hf",
        "MODEL": "qwen",
        "RUN_EVAL": "true",
        "ISL": "1024",
        "MODEL_NAME": "Qwen/Qwen3-0.6B",
        "EVAL_CONC": "64",
    }
    assert list(env)[:2] == ["HF_HOME", "MODEL"]
    assert build_eval_env(None, {"EVAL_CONC": "8"}, served_model_name="m", concurrencies=(4,)) == {
        "MODEL_NAME": "m",
        "EVAL_CONC": "8",
    }
    assert build_eval_env(None, {}, served_model_name="m") == {"MODEL_NAME": "m"}


def test_passthrough_names_must_be_identifiers() -> None:
    with pytest.raises(PostEvalConfigError) as err:
        build_eval_env(
            PostEvalConfig(passthrough_env=("OK", "BAD-NAME")), {}, served_model_name="m"
        )
    assert str(err.value) == (
        "$.post_eval.passthrough_env[1]: 'BAD-NAME' is not an environment variable name; use "
        "letters, digits and underscores, not starting with a digit"
    )
