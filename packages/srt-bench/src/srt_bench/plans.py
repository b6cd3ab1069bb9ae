"""What a runner does, as data: each benchmark type builds one `Plan` (pure), `execute.run_plan`
carries it out. Consumers `match` on the plan type; there is no string dispatch elsewhere."""

from __future__ import annotations

from typing import Literal

import msgspec

from srt_bench.capacity.readings import SearchSpec
from srt_bench.sa_bench_settings import SaBenchSettings
from srt_schema.registry import AccuracyEval
from srt_schema.rollup import RollupConfig

__all__ = [
    "CapacityPlan",
    "Command",
    "CommandPlan",
    "EvalName",
    "EvalPlan",
    "ManualPlan",
    "Plan",
    "RollupFold",
    "RouterSweep",
    "SaBenchPlan",
]

#: How a command runner's output is folded into `benchmark-rollup.json` afterwards.
RollupFold = Literal[
    "none",
    "aiperf-per-concurrency",
    "aiperf-embed",
    "sglang-per-concurrency",
    "router-prefix-ratios",
]
#: The accuracy evaluators, declared once in srt-schema's registry (srtctl validate reads it too).
EvalName = AccuracyEval


class Command(msgspec.Struct, frozen=True, kw_only=True):
    argv: tuple[str, ...]
    #: Added to (and winning over) the inherited environment.
    env: dict[str, str] = {}
    cwd: str | None = None
    #: Folders created before the command starts.
    mkdirs: tuple[str, ...] = ()


class SaBenchPlan(msgspec.Struct, frozen=True, kw_only=True, tag="sa-bench"):
    settings: SaBenchSettings


class CapacityPlan(msgspec.Struct, frozen=True, kw_only=True, tag="capacity"):
    """sa-bench with `benchmark.capacity`: the search picks the concurrencies
    (`srt_bench.capacity`)."""

    settings: SaBenchSettings
    spec: SearchSpec


class RouterSweep(msgspec.Struct, frozen=True, kw_only=True):
    """The `router` runner's settings, resolved (srt_bench.runners.router_bench)."""

    prefix_ratios: tuple[float, ...]
    isl: int
    osl: int
    requests: int
    concurrency: int
    initial_seed: int
    model: str
    tokenizer: str | None


class CommandPlan(msgspec.Struct, frozen=True, kw_only=True, tag="command"):
    benchmark_type: str
    #: Run in order; the first non-zero exit code stops the run and is the runner's exit code.
    commands: tuple[Command, ...]
    fold: RollupFold = "none"
    #: For folds: per concurrency (per prefix ratio's index for `router-prefix-ratios`), the
    #: artifact folder.
    artifacts: dict[int, str] = {}
    #: For `aiperf-embed` and `router-prefix-ratios`: the rollup's `config` block.
    rollup_config: RollupConfig | None = None
    #: For `router-prefix-ratios`: the sweep the summary describes.
    router: RouterSweep | None = None


class EvalPlan(msgspec.Struct, frozen=True, kw_only=True, tag="eval"):
    name: EvalName
    #: `benchmark.dataset_path`; None: found or fetched at run time (`srt_bench.evals.sources`).
    dataset_file: str | None
    num_examples: int | None
    num_shots: int
    max_tokens: int
    num_threads: int
    repeat: int
    temperature: float
    top_p: float | None
    top_k: int | None
    categories: tuple[str, ...] | None = None
    max_context_length: int | None = None


class ManualPlan(msgspec.Struct, frozen=True, kw_only=True, tag="manual"):
    """Serve until stopped: no client runs."""


Plan = SaBenchPlan | CapacityPlan | CommandPlan | EvalPlan | ManualPlan
