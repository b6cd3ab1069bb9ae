"""Settings of the accuracy evaluators (gsm8k, mmlu, gpqa, longbenchv2) with defaults (pure).
The dataset is found or fetched when the eval runs (`srt_bench.evals.sources`)."""

from __future__ import annotations

import msgspec

from srt_bench.config import BenchRunConfig, check_in_range
from srt_bench.plans import EvalName, EvalPlan

__all__ = ["EVAL_DEFAULTS", "build_eval"]


class _Defaults(msgspec.Struct, frozen=True, kw_only=True):
    num_examples: int | None
    max_tokens: int
    num_threads: int
    repeat: int
    num_shots: int = 0


#: Reference defaults (docs/telemetry-and-bench.md#benchmark-types); None = every example of the
#: file.
EVAL_DEFAULTS: dict[EvalName, _Defaults] = {
    "gsm8k": _Defaults(num_examples=1319, max_tokens=256, num_threads=512, repeat=1, num_shots=5),
    "mmlu": _Defaults(num_examples=200, max_tokens=2048, num_threads=512, repeat=8),
    "gpqa": _Defaults(num_examples=198, max_tokens=32768, num_threads=128, repeat=8),
    "longbenchv2": _Defaults(num_examples=None, max_tokens=16384, num_threads=16, repeat=1),
}


LONGBENCH_MAX_CONTEXT = 128000


def build_eval(config: BenchRunConfig, name: EvalName) -> EvalPlan:
    b = config.benchmark
    d = EVAL_DEFAULTS[name]
    check_in_range("num_examples", b.num_examples)
    check_in_range("max_tokens", b.max_tokens)
    check_in_range("num_threads", b.num_threads)
    check_in_range("repeat", b.repeat)
    check_in_range("max_context_length", b.max_context_length)
    check_in_range("num_shots", b.num_shots)
    return EvalPlan(
        name=name,
        dataset_file=b.dataset_path or None,
        num_examples=b.num_examples if b.num_examples is not None else d.num_examples,
        num_shots=b.num_shots if b.num_shots is not None else d.num_shots,
        max_tokens=b.max_tokens or d.max_tokens,
        num_threads=b.num_threads or d.num_threads,
        repeat=b.repeat or d.repeat,
        temperature=b.temperature if b.temperature is not None else 0.0,
        top_p=b.top_p,
        top_k=b.top_k,
        categories=b.categories if name == "longbenchv2" else None,
        max_context_length=(b.max_context_length or LONGBENCH_MAX_CONTEXT)
        if name == "longbenchv2"
        else None,
    )
