"""The benchmark half of the oracle comparison (used by test_oracle.py).

The reference records its benchmark as the argv of a ``bench.sh`` script (positional arguments,
one table per script below) plus a few environment variables of the benchmark step; srt writes
``bench.json`` (srt-bench's ``BenchRunConfig``) into the plan. Both sides are turned into one
flat record (endpoint, tokenizer, and each parameter the reference passes) and compared key by
key. ``bench.json`` is read the way srt-bench reads it (``decode_run_config``, then the sa-bench
defaults and parsing of ``build_sa_bench_settings``), so the comparison is about what the client
will do, not about how the planner spells it.

The served model name is checked separately (``served_names``): the name every worker's argv
serves, the name bench.json asks for, and the name the reference's benchmark asks for.
"""

from __future__ import annotations

import math
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from srt_bench.config import (
    DEFAULT_NUM_PROMPTS_MULT,
    DEFAULT_NUM_WARMUP_MULT,
    DEFAULT_RANDOM_RANGE_RATIO,
    BenchRunConfig,
    decode_run_config,
    parse_concurrencies,
    parse_request_rate,
)
from srt_bench.errors import BenchError
from srt_bench.sa_bench_settings import build_sa_bench_settings
from srt_planner.plan import JobPlan

__all__ = [
    "REFERENCE_SCRIPTS",
    "bench_records",
    "compare_benchmark",
    "reference_bench_model",
    "served_name",
    "served_names",
]

#: The reference's benchmark scripts and the meaning of their positional arguments.
REFERENCE_SCRIPTS: dict[str, tuple[str, ...]] = {
    "/srtctl-benchmarks/sa-bench/bench.sh": (
        "endpoint",
        "isl",
        "osl",
        "concurrencies",
        "req_rate",
        "tokenizer",
        "model_name",
        "is_disaggregated",
        "total_gpus",
        "prefill_gpus",
        "decode_gpus",
        "random_range_ratio",
        "num_prompts_mult",
        "num_warmup_mult",
        "custom_tokenizer",
        "use_chat_template",
        "dataset_name",
        "dataset_path",
        "reuse_http_connections",
    ),
    "/srtctl-benchmarks/mooncake-router/bench.sh": (
        "endpoint",
        "model_name",
        "mooncake_workload",
        "ttft_threshold_ms",
        "itl_threshold_ms",
        "tokenizer",
    ),
    "/srtctl-benchmarks/trace-replay/bench.sh": (
        "endpoint",
        "model_name",
        "trace_file",
        "concurrencies",
        "ttft_threshold_ms",
        "itl_threshold_ms",
        "tokenizer",
    ),
    "/srtctl-benchmarks/gsm8k/sglang-bench.sh": (
        "endpoint",
        "num_examples",
        "max_tokens",
        "num_threads",
        "num_shots",
        "temperature",
        "top_p",
        "top_k",
    ),
    "/srtctl-benchmarks/gpqa/bench.sh": (
        "endpoint",
        "num_examples",
        "max_tokens",
        "repeat",
        "num_threads",
    ),
}

#: The reference's sa-bench always posts to /v1/completions (its bench.sh ``API_ENDPOINT``).
_REFERENCE_SA_BENCH_API = "completions"

_INTS = frozenset(
    {
        "isl",
        "osl",
        "total_gpus",
        "prefill_gpus",
        "decode_gpus",
        "num_prompts_mult",
        "num_warmup_mult",
        "num_examples",
        "max_tokens",
        "num_threads",
        "num_shots",
        "repeat",
        "top_k",
    }
)
_FLOATS = frozenset(
    {"random_range_ratio", "ttft_threshold_ms", "itl_threshold_ms", "temperature", "top_p"}
)
_BOOLS = frozenset({"is_disaggregated", "use_chat_template", "reuse_http_connections"})


def _value(key: str, text: str) -> Any:
    """One reference positional argument as a comparable value ('' = not given)."""
    if text == "":
        return None
    if key in _INTS:
        return int(text)
    if key in _FLOATS:
        return float(text)
    if key in _BOOLS:
        return text == "true"
    if key == "req_rate":
        return parse_request_rate(text)
    if key == "concurrencies":
        return tuple(int(c) for c in text.replace(",", "x").split("x"))
    return text


def _endpoint(url: str, localhost: str) -> str:
    """``scheme://host:port/path`` with the client node's own address for ``localhost``."""
    parts = urlsplit(url)
    host = localhost if parts.hostname in ("localhost", "127.0.0.1") else parts.hostname
    return f"{parts.scheme}://{host}:{parts.port}{parts.path.rstrip('/')}"


def _reference_record(oracle: dict[str, Any]) -> dict[str, Any] | None:
    steps = [p for p in oracle["processes"] if p["kind"] == "benchmark"]
    if not steps:
        return None
    step = steps[0]
    argv = step["command_argv"]
    names = REFERENCE_SCRIPTS.get(argv[1]) if len(argv) > 1 else None
    record: dict[str, Any] = {"type": oracle["benchmark"]["type"], "node": step["node"]}
    if names is None:  # custom: a shell command; only the type and node compare
        return record
    values = dict(zip(names, argv[2:], strict=False))
    for key, text in values.items():
        record[key] = _value(key, text)
    record["endpoint"] = _endpoint(values["endpoint"], oracle["node_ips"][step["node"]])
    record.pop("model_name", None)  # compared by served_names
    if record["type"] == "sa-bench":
        record["api"] = _REFERENCE_SA_BENCH_API
        urls = step["env"].get("SA_BENCH_SLOW_DOWN_URLS")
        record["slow_down"] = (
            None
            if urls is None
            else (
                tuple(urls.split(",")),
                float(step["env"]["SA_BENCH_SLOW_DOWN_SLEEP_TIME"]),
                float(step["env"]["SA_BENCH_SLOW_DOWN_WAIT_TIME"]),
            )
        )
    return record


def _sa_bench(config: BenchRunConfig, record: dict[str, Any]) -> list[str]:
    """Our sa-bench values with srt-bench's defaults; srt-bench's refusal is a problem."""
    b = config.benchmark
    ratio = DEFAULT_RANDOM_RANGE_RATIO if b.random_range_ratio is None else b.random_range_ratio
    record |= {
        "isl": b.isl,
        "osl": b.osl,
        "concurrencies": parse_concurrencies(b.concurrencies),
        "req_rate": parse_request_rate(b.req_rate),
        "is_disaggregated": config.prefill_gpus is not None,
        "total_gpus": config.total_gpus,
        "prefill_gpus": config.prefill_gpus or 0,
        "decode_gpus": config.decode_gpus or 0,
        "random_range_ratio": ratio,
        "num_prompts_mult": (
            DEFAULT_NUM_PROMPTS_MULT if b.num_prompts_mult is None else b.num_prompts_mult
        ),
        "num_warmup_mult": (
            DEFAULT_NUM_WARMUP_MULT if b.num_warmup_mult is None else b.num_warmup_mult
        ),
        "custom_tokenizer": b.custom_tokenizer or None,
        "use_chat_template": b.use_chat_template,
        "dataset_name": b.dataset_name or "random",
        "dataset_path": b.dataset_path or None,
        "reuse_http_connections": b.reuse_http_connections,
    }
    try:
        settings = build_sa_bench_settings(config)
    except BenchError as exc:
        return [f"srt-bench refuses bench.json: {exc}"]
    record["api"] = settings.api
    slow = settings.slow_down
    record["slow_down"] = None if slow is None else (slow.urls, slow.sleep_time, slow.wait_time)
    return []


def _our_record(
    plan: JobPlan, addresses: dict[str, str]
) -> tuple[dict[str, Any] | None, list[str]]:
    steps = [s for s in plan.processes if s.kind == "benchmark"]
    if not steps:
        return None, []
    step = steps[0]
    record: dict[str, Any] = {"type": step.role, "node": step.nodes[0]}
    files = {f.path: f.content for f in plan.files}
    if "bench.json" not in files:
        return record, []
    config = decode_run_config(files["bench.json"].encode())
    b = config.benchmark
    record["endpoint"] = _endpoint(config.endpoint, addresses[step.nodes[0]])
    tokenizer = config.tokenizer_path
    # bench.json marks a hub id as hf:<repo> (srt_bench.hub fetches it); the reference's client
    # is given the bare id and tells ids from folders itself
    hub = tokenizer is not None and tokenizer.startswith("hf:")
    record["tokenizer"] = tokenizer[len("hf:") :] if hub and tokenizer else tokenizer
    problems: list[str] = []
    match b.type:
        case "sa-bench":
            problems = _sa_bench(config, record)
        case "mooncake-router":
            record["mooncake_workload"] = b.mooncake_workload
        case "trace-replay":
            record["trace_file"] = b.trace_file
            record["concurrencies"] = parse_concurrencies(b.concurrencies)
        case _:
            pass
    for key in ("ttft_threshold_ms", "itl_threshold_ms", "temperature", "top_p"):
        value = getattr(b, key, None)
        record[key] = None if value is None else float(value)
    for key in ("num_examples", "max_tokens", "num_threads", "num_shots", "repeat", "top_k"):
        record[key] = getattr(b, key, None)
    return record, problems


def bench_records(
    oracle: dict[str, Any], plan: JobPlan
) -> tuple[dict[str, Any] | None, dict[str, Any] | None, list[str]]:
    """(reference record, our record, problems srt-bench reports reading our bench.json)."""
    return (_reference_record(oracle), *_our_record(plan, oracle["node_ips"]))


def compare_benchmark(
    oracle: dict[str, Any],
    plan: JobPlan,
    ignored: frozenset[str],
    expected: dict[str, Any] | None = None,
) -> list[str]:
    """Differences of the benchmark step: type, node, endpoint, tokenizer and parameters.

    Only keys the reference records are compared; ``ignored`` are the ``bench`` deviation rows
    (a key, or the ``$.benchmark.<key>`` path of an srt-bench refusal). ``expected`` holds keys
    whose value a ``recipe-patch`` row replaced: ours must be the patched value instead.
    """
    expected = expected or {}
    theirs, ours, refusals = bench_records(oracle, plan)
    if theirs is None or ours is None:
        if (theirs is None) != (ours is None):
            return [f"benchmark step: ours {ours} vs reference {theirs}"]
        return []
    problems = [p for p in refusals if not any(f"$.benchmark.{key}:" in p for key in ignored)]
    for key in sorted(theirs):
        if key in ignored or (key in ("api", "slow_down") and key not in ours):
            continue  # api / slow_down: unknown when srt-bench refused the config
        mine, want = ours.get(key), expected.get(key, theirs[key])
        same = (
            math.isclose(mine, want)
            if isinstance(mine, float) and isinstance(want, float) and math.isfinite(want)
            else mine == want
        )
        if not same:
            problems.append(f"benchmark {key}: ours {mine!r} vs reference {want!r}")
    return problems


def served_name(argv: list[str] | tuple[str, ...]) -> str:
    """The model name a worker argv serves, by the engine's own rules.

    An explicit ``--served-model-name`` / ``--served_model_name`` (SGLang, vLLM, Dynamo
    workers, trtllm-serve) or the mocker's ``--model-name``; else the engine default:
    trtllm-serve advertises the model directory's name, the others the model argument.
    """
    argv = list(argv)
    for flag in ("--served-model-name", "--served_model_name", "--model-name"):
        if flag in argv:
            return argv[argv.index(flag) + 1]
    if "trtllm-serve" in argv:
        model = argv[argv.index("trtllm-serve") + 1]
        return PurePosixPath(model).name if model.startswith("/") else model
    for flag in ("--model-path", "--model"):
        if flag in argv:
            return argv[argv.index(flag) + 1]
    raise AssertionError(f"no served model name in worker argv {argv}")


def reference_bench_model(oracle: dict[str, Any]) -> str | None:
    """The model name the reference's benchmark asks for (None: no benchmark step).

    The name its bench.sh receives, else (accuracy scripts that find the model themselves,
    custom commands) the reference's one served-name decision, ``runtime.served_model_name``.
    """
    steps = [p for p in oracle["processes"] if p["kind"] == "benchmark"]
    if not steps:
        return None
    argv = steps[0]["command_argv"]
    names = REFERENCE_SCRIPTS.get(argv[1]) if len(argv) > 1 else None
    if names is not None and "model_name" in names:
        return str(argv[2 + names.index("model_name")])
    return str(oracle["runtime"]["served_model_name"])


def _program(argv: list[str]) -> str:
    for token in ("dynamo.mocker", "trtllm-serve"):
        if token in argv:
            return token
    return ""


def served_names(oracle: dict[str, Any], plan: JobPlan, exempt: frozenset[str]) -> list[str]:
    """Every worker serves the name bench.json asks for, which is the reference's benchmark's.

    Also checks the reference against itself (its workers serve what its benchmark asks for),
    except for worker programs listed in ``exempt`` (the ``served-name`` deviation rows).
    """
    problems: list[str] = []
    want = reference_bench_model(oracle)
    files = {f.path: f.content for f in plan.files}
    asked = (
        decode_run_config(files["bench.json"].encode()).model_name
        if "bench.json" in files
        else plan.served_model_name
    )
    if want is not None and asked != want:
        problems.append(f"benchmark model: ours {asked!r} vs reference {want!r}")
    if asked != plan.served_model_name:
        problems.append(f"plan.served_model_name {plan.served_model_name!r} vs bench {asked!r}")
    for spec in plan.processes:
        if spec.kind == "worker" and spec.engine == 0 and served_name(spec.argv) != asked:
            problems.append(
                f"{spec.name}: serves {served_name(spec.argv)!r} but the benchmark asks "
                f"for {asked!r}"
            )
    reference = want or str(oracle["runtime"]["served_model_name"])
    for process in oracle["processes"]:
        argv = process["command_argv"]
        if process["kind"] != "worker" or _program(argv) in exempt:
            continue
        if served_name(argv) != reference:
            problems.append(
                f"reference {process['name']}: serves {served_name(argv)!r} but its benchmark "
                f"asks for {reference!r}"
            )
    return problems
