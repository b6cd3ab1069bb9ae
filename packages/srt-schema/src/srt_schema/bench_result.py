"""The sa-bench result file (`sa-bench_*/results_concurrency_<c>_gpus_<n>[...].json`): the one
definition srt-bench writes and srt-bench, srt-cli and srt-runtime decode
(docs/telemetry-and-bench.md#sa-bench-results), plus the one definition of each metric and the one
percentile function every reader uses (docs/telemetry-and-bench.md#metric-definitions).

It lives here, next to the rollup (`srt_schema.rollup`), because every reader may import
srt-schema. srt-telemetry (installed alone) keeps its own minimal view
(`srt_telemetry.dashboard_results.ResultView`); `tests/test_contract_dashboard.py` holds it equal.

Key names and units follow the reference so tools that read srt-slurm results keep working:
latencies in milliseconds, per-request arrays in seconds, a metric that could not be measured is
null with its reason under `unmeasured_metrics`. The reference's `p<P>_<metric>_ms` keys are
written for every configured percentile; this struct declares p50, p90 and p99 (the readers'
figures) and `encode_bench_result` adds any other configured one. Every field has a default so a
result written by an older srt-bench, or a partial one, still decodes (readers ignore unknown
keys); `decode_bench_result` is the one decoder.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import msgspec

from srt_schema.rollup import ClientLoad

__all__ = [
    "METRICS",
    "BenchOutcome",
    "BenchResult",
    "ItlDefinition",
    "Metric",
    "WorkloadSummary",
    "decode_bench_result",
    "encode_bench_result",
    "percentile",
    "request_tpot",
]

Metric = Literal["ttft", "tpot", "itl", "e2el"]
METRICS: tuple[Metric, ...] = ("ttft", "tpot", "itl", "e2el")
#: How an ITL figure was computed (docs/telemetry-and-bench.md#metric-definitions).
ItlDefinition = Literal["per-chunk"]


def percentile(values: Sequence[float], p: float) -> float:
    """The `p`-th percentile (0-100) by linear interpolation between closest ranks (numpy's
    default method). The one percentile of every reader of benchmark results."""
    if not values:
        raise ValueError("percentile of an empty sequence")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * p / 100.0
    lo = math.floor(rank)
    hi = math.ceil(rank)
    if lo == hi:
        return ordered[lo]
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (rank - lo)


def request_tpot(ttft: float | None, e2el: float | None, output_tokens: int) -> float | None:
    """Time per output token of one request: (E2EL - TTFT) / (output tokens - 1), defined only
    with a measured TTFT, an end-to-end latency and more than one output token (seconds in,
    seconds out)."""
    if ttft is None or e2el is None or output_tokens < 2:
        return None
    return (e2el - ttft) / (output_tokens - 1)


class BenchOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """`benchmark_outcome`: failed when the failure rate exceeds `max_failure_rate` or no token
    came back."""

    status: Literal["passed", "failed"]
    requested: int
    completed: int
    failed: int
    max_failure_rate: float
    reasons: tuple[str, ...] = ()


class WorkloadSummary(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """`workload`: the KV-cache-relevant numbers of a workload's window (multi-turn,
    shared-prefix, trace-replay); the settings of its kind are the optional fields, written only
    for that kind."""

    kind: str
    prefix_hit_potential: float | None
    prefix_hit_tokens: int
    prefix_prompt_tokens: int
    requests_with_prefix_hit: int
    client_prompt_tokens: int
    server_prompt_tokens: int | None
    prompt_token_mismatches: int
    # shared-prefix
    groups: int | None = None
    prefix_tokens: int | None = None
    suffix_tokens: int | None = None
    prefix_ratio: float | None = None
    # multi-turn
    conversations: int | None = None
    turns: int | None = None
    think_time_s: float | None = None
    think_time_jitter: float | None = None
    # trace-replay
    trace_file: str | None = None
    trace_rows: int | None = None
    speedup: float | None = None
    trace_span_s: float | None = None
    start_lag_p50_ms: float | None = None
    start_lag_p99_ms: float | None = None
    kv_block_tokens: int | None = None


class BenchResult(msgspec.Struct, frozen=True, kw_only=True):
    """One sa-bench phase (one concurrency / request rate). Per-request arrays are in request
    order and seconds: `ttfts` null without a text chunk, `e2els` send to end of stream, `tpots`
    `request_tpot` (null where undefined), `itls` one list of per-chunk gaps per request,
    `chunk_tokens` the tokens each text chunk carried, `errors` `""` for a success."""

    # header
    date: str | None = None
    backend: str | None = None
    model_id: str | None = None
    tokenizer_id: str | None = None
    best_of: int = 1
    #: requests/s, "inf" for as fast as the concurrency allows.
    request_rate: float | str | None = None
    burstiness: float = 1.0
    max_concurrency: int | None = None
    isl: int | None = None
    osl: int | None = None
    random_range_ratio: float | None = None
    dataset_name: str | None = None
    total_gpus: int | None = None
    # totals
    num_prompts: int | None = None
    requested_num_prompts: int | None = None
    duration: float | None = None
    benchmark_start_time_unix: float | None = None
    benchmark_end_time_unix: float | None = None
    completed: int | None = None
    failed: int | None = None
    total_input_tokens: int | None = None
    total_output_tokens: int | None = None
    output_token_sources: dict[str, int] = {}
    request_throughput: float | None = None
    request_goodput: float | None = None
    output_throughput: float | None = None
    peak_output_tokens_per_s: float | None = None
    total_token_throughput: float | None = None
    output_throughput_per_gpu: float | None = None
    total_token_throughput_per_gpu: float | None = None
    # per request
    input_lens: list[int] = []
    output_lens: list[int] = []
    ttfts: list[float | None] = []
    e2els: list[float] | None = None
    tpots: list[float | None] | None = None
    itls: list[list[float]] = []
    chunk_tokens: list[list[int]] | None = None
    generated_texts: list[str] = []
    errors: list[str] = []
    # summaries (ms)
    mean_ttft_ms: float | None = None
    median_ttft_ms: float | None = None
    std_ttft_ms: float | None = None
    p50_ttft_ms: float | None = None
    p90_ttft_ms: float | None = None
    p99_ttft_ms: float | None = None
    mean_tpot_ms: float | None = None
    median_tpot_ms: float | None = None
    std_tpot_ms: float | None = None
    p50_tpot_ms: float | None = None
    p90_tpot_ms: float | None = None
    p99_tpot_ms: float | None = None
    mean_itl_ms: float | None = None
    median_itl_ms: float | None = None
    std_itl_ms: float | None = None
    p50_itl_ms: float | None = None
    p90_itl_ms: float | None = None
    p99_itl_ms: float | None = None
    mean_e2el_ms: float | None = None
    median_e2el_ms: float | None = None
    std_e2el_ms: float | None = None
    p50_e2el_ms: float | None = None
    p90_e2el_ms: float | None = None
    p99_e2el_ms: float | None = None
    #: Which definition the `*_itl_ms` figures use (None: a file older than the field).
    itl_definition: ItlDefinition | None = None
    unmeasured_metrics: dict[str, str] = {}
    percentiles: list[str] = []
    reuse_http_connections: bool | None = None
    benchmark_outcome: BenchOutcome | None = None
    client_load: ClientLoad | None = None
    workload: WorkloadSummary | None = None

    @property
    def requested(self) -> int | None:
        """Requests the phase meant to send (the reference's files have only `num_prompts`)."""
        return (
            self.requested_num_prompts
            if self.requested_num_prompts is not None
            else self.num_prompts
        )

    def succeeded(self) -> list[int]:
        """Indices of the successful requests (an `errors` entry that is empty)."""
        n = len(self.output_lens)
        errors = self.errors if len(self.errors) == n else [""] * n
        return [i for i in range(n) if not errors[i]]

    def request_tpots(self) -> list[float | None] | None:
        """Per-request TPOT (s): the file's `tpots`, or `request_tpot` of its arrays; None
        without per-request end-to-end latencies."""
        n = len(self.output_lens)
        if self.tpots is not None and len(self.tpots) == n:
            return self.tpots
        if self.e2els is None or len(self.e2els) != n:
            return None
        ttfts = self.ttfts if len(self.ttfts) == n else [None] * n
        return [request_tpot(ttfts[i], self.e2els[i], self.output_lens[i]) for i in range(n)]


_DECODER = msgspec.json.Decoder(BenchResult)


def decode_bench_result(data: bytes) -> BenchResult:
    """The one decoder of a result file (raises msgspec.DecodeError / ValidationError)."""
    return _DECODER.decode(data)


def _percentile_key(p: float) -> str:
    return str(int(p)) if float(p).is_integer() else str(p)


def encode_bench_result(
    result: BenchResult, *, extra_percentiles_ms: Mapping[Metric, Mapping[float, float | None]] = {}
) -> bytes:
    """The file's bytes (indented JSON): the struct, plus the reference's `p<P>_<metric>_ms` of
    every configured percentile beyond p50/p90/p99 (`extra_percentiles_ms`: metric -> p -> ms),
    placed before `itl_definition`; absent optional blocks are omitted."""
    doc: dict[str, Any] = msgspec.to_builtins(result)
    for key in ("client_load", "workload", "tpots", "chunk_tokens"):
        if doc.get(key) is None:
            doc.pop(key, None)
    extra: dict[str, Any] = {}
    for metric, values in extra_percentiles_ms.items():
        for p, value in values.items():
            key = f"p{_percentile_key(p)}_{metric}_ms"
            if key not in doc:
                extra[key] = value
    if extra:
        ordered: dict[str, Any] = {}
        for key, value in doc.items():
            if key == "itl_definition":
                ordered.update(extra)
            ordered[key] = value
        doc = ordered
    return msgspec.json.format(msgspec.json.encode(doc), indent=2) + b"\n"
