"""`benchmark-rollup.json` and `benchmark-rollup.csv` (docs/telemetry-and-bench.md#rollup), field
names and units as in the reference so tools that read srt-slurm results keep working. The file's
structs are defined once, in `srt_schema.rollup` (every reader may import srt-schema).

`build_*` functions are pure; `write_rollup` and `read_*` do the file I/O.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from srt_bench.errors import BenchDatasetError
from srt_schema.bench_result import METRICS, BenchResult, decode_bench_result
from srt_schema.rollup import (
    ROLLUP_FILE,
    Rollup,
    RollupConfig,
    RollupRun,
    decode_rollup,
    encode_rollup,
)

__all__ = [
    "CSV_COLUMNS",
    "GpuCounts",
    "WorkloadRollupRun",
    "build_aiperf_runs",
    "build_rollup_csv",
    "build_sa_bench_rollup",
    "build_sa_bench_run",
    "format_csv_number",
    "nearest_rank",
    "read_running_requests",
    "read_sa_bench_results",
    "sglang_result_as_sa_bench",
    "write_rollup",
]

CSV_COLUMNS = (
    "Config",
    "Total GPU Count",
    "Decode GPU Count",
    "Total Working GPU Count",
    "Decode Working GPU Count",
    "Prefill Working GPU Count",
    "Concurrency",
    "Total Token Throughput",
    "Output Token Throughput",
    "Median TTFT",
    "Median TPOT",
    "Median ITL",
    "P90 Decode Running Requests",
    "Output Token Throughput per User",
    "Total Token Throughput per GPU",
)


class GpuCounts(msgspec.Struct, frozen=True, kw_only=True):
    """GPU counts of the deployment. Aggregated: prefill None, decode None (all serve decode)."""

    total: int
    prefill: int | None = None
    decode: int | None = None

    @property
    def decode_count(self) -> int:
        return self.decode if self.decode is not None else self.total

    @property
    def working_total(self) -> int:
        if self.prefill is not None and self.decode is not None:
            return self.prefill + self.decode
        return self.total

    @property
    def disaggregated(self) -> bool:
        return bool(self.prefill) and bool(self.decode)


class WorkloadRollupRun(RollupRun, frozen=True, kw_only=True):
    """A run of a workload (multi-turn, shared-prefix, trace-replay): the reference's fields plus
    the KV-cache-relevant numbers of its window (readers that do not know them ignore them)."""

    workload: str
    #: Prompt tokens a perfect prefix cache could reuse / all prompt tokens of the window.
    prefix_hit_potential: float | None
    #: The client's prompt-token count and the server's (`usage`; None when it gave none).
    client_prompt_tokens: int
    server_prompt_tokens: int | None
    #: Completed requests whose two counts differ.
    prompt_token_mismatches: int


def build_sa_bench_run(result: BenchResult) -> RollupRun:
    """One rollup run from one sa-bench result."""
    run = _reference_run(result)
    w = result.workload
    if w is None:
        return run
    return WorkloadRollupRun(
        **msgspec.structs.asdict(run),
        workload=w.kind,
        prefix_hit_potential=w.prefix_hit_potential,
        client_prompt_tokens=w.client_prompt_tokens,
        server_prompt_tokens=w.server_prompt_tokens,
        prompt_token_mismatches=w.prompt_token_mismatches,
    )


def _reference_run(r: BenchResult) -> RollupRun:
    return RollupRun(
        concurrency=r.max_concurrency,
        throughput_toks=r.output_throughput,
        request_throughput=r.request_throughput,
        ttft_mean_ms=r.mean_ttft_ms,
        ttft_p99_ms=r.p99_ttft_ms,
        tpot_mean_ms=r.mean_tpot_ms,
        tpot_p99_ms=r.p99_tpot_ms,
        itl_mean_ms=r.mean_itl_ms,
        itl_p99_ms=r.p99_itl_ms,
        e2el_mean_ms=r.mean_e2el_ms,
        completed_requests=r.completed,
        total_input_tokens=r.total_input_tokens,
        total_output_tokens=r.total_output_tokens,
        # Ours, beyond the reference's fields: the CSV needs them, readers ignore extra keys.
        total_token_throughput=r.total_token_throughput,
        ttft_median_ms=r.median_ttft_ms,
        tpot_median_ms=r.median_tpot_ms,
        itl_median_ms=r.median_itl_ms,
        itl_definition=r.itl_definition,
    )


#: `sglang.bench_serving` result keys that differ from sa-bench's (same meaning and unit).
SGLANG_RESULT_KEYS = {
    "mean_e2e_latency_ms": "mean_e2el_ms",
    "median_e2e_latency_ms": "median_e2el_ms",
    "p99_e2e_latency_ms": "p99_e2el_ms",
    "total_throughput": "total_token_throughput",
    "total_input": "total_input_tokens",
    "total_output": "total_output_tokens",
}
#: The sa-bench fields an `sglang.bench_serving` result line carries (the rest is theirs).
_SGLANG_FIELDS = frozenset(
    {
        "max_concurrency",
        "output_throughput",
        "request_throughput",
        "completed",
        "total_input_tokens",
        "total_output_tokens",
        "total_token_throughput",
        "duration",
    }
    | {f"{s}_{m}_ms" for s in ("mean", "median", "std", "p50", "p90", "p99") for m in METRICS}
)


def sglang_result_as_sa_bench(doc: Mapping[str, Any], *, model: str | None) -> BenchResult:
    """An `sglang.bench_serving` result line (not our file: another client's output, read here
    and nowhere else) as a `BenchResult`; its line does not name the model, so the served name
    asked for is `model`. A value of the wrong type is refused naming its key."""
    out: dict[str, Any] = {"model_id": model}
    for key, value in doc.items():
        ours = SGLANG_RESULT_KEYS.get(key, key)
        if ours in _SGLANG_FIELDS:
            out[ours] = value
    try:
        return msgspec.convert(out, BenchResult)
    except msgspec.ValidationError as exc:
        raise BenchDatasetError(f"an sglang.bench_serving result line: {exc}") from exc


def build_sa_bench_rollup(
    results: Sequence[BenchResult],
    *,
    isl: int | None,
    osl: int | None,
    timestamp: str,
    benchmark_type: str = "sa-bench",
) -> Rollup:
    runs = sorted((build_sa_bench_run(r) for r in results), key=lambda r: r.concurrency or 0)
    model = results[0].model_id if results else None
    return Rollup(
        benchmark_type=benchmark_type,
        timestamp=timestamp,
        config=RollupConfig(model=model, isl=isl, osl=osl),
        runs=tuple(runs),
    )


def _aiperf_metric(doc: Mapping[str, Any], name: str, stat: str) -> Any:
    value = doc.get(name)
    if isinstance(value, Mapping):
        return value.get(stat)
    return None


def build_aiperf_runs(exports: Mapping[int, Mapping[str, Any]]) -> tuple[RollupRun, ...]:
    """Rollup runs (same schema as sa-bench) from aiperf's `profile_export_aiperf.json` per
    concurrency. TPOT is aiperf's inter-token latency, as in the reference."""
    runs: list[RollupRun] = []
    for c in sorted(exports):
        d = exports[c]
        runs.append(
            RollupRun(
                concurrency=c,
                throughput_toks=_aiperf_metric(d, "output_token_throughput", "avg"),
                request_throughput=_aiperf_metric(d, "request_throughput", "avg"),
                ttft_mean_ms=_aiperf_metric(d, "time_to_first_token", "avg"),
                ttft_p99_ms=_aiperf_metric(d, "time_to_first_token", "p99"),
                tpot_mean_ms=_aiperf_metric(d, "inter_token_latency", "avg"),
                tpot_p99_ms=_aiperf_metric(d, "inter_token_latency", "p99"),
                itl_mean_ms=_aiperf_metric(d, "inter_token_latency", "avg"),
                itl_p99_ms=_aiperf_metric(d, "inter_token_latency", "p99"),
                e2el_mean_ms=_aiperf_metric(d, "request_latency", "avg"),
                completed_requests=_aiperf_metric(d, "good_request_count", "avg")
                or _aiperf_metric(d, "request_count", "avg"),
                total_input_tokens=_aiperf_metric(d, "total_isl", "avg")
                or _aiperf_metric(d, "total_usage_prompt_tokens", "avg"),
                total_output_tokens=_aiperf_metric(d, "total_osl", "avg")
                or _aiperf_metric(d, "total_output_tokens", "avg"),
                total_token_throughput=_aiperf_metric(d, "total_token_throughput", "avg"),
                ttft_median_ms=_aiperf_metric(d, "time_to_first_token", "p50"),
                tpot_median_ms=_aiperf_metric(d, "inter_token_latency", "p50"),
                itl_median_ms=_aiperf_metric(d, "inter_token_latency", "p50"),
            )
        )
    return tuple(runs)


def format_csv_number(value: Any) -> str:
    """At most 3 decimals, trailing zeros stripped; empty for None."""
    if value is None or isinstance(value, bool):
        return ""
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return ""
        text = f"{value:.3f}".rstrip("0").rstrip(".")
        return "0" if text == "-0" else text
    return str(value)


def nearest_rank(values: Sequence[float], p: float) -> float | None:
    """Nearest-rank percentile (the rollup's P90 of running requests)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100.0 * len(ordered)))
    return ordered[rank - 1]


_RUNNING = re.compile(r"#running-req:\s*(\d+)")


def read_running_requests(log_dir: Path) -> list[float]:
    """`#running-req: N` values from SGLang decode logs (`*decode*.out`)."""
    values: list[float] = []
    for path in sorted(log_dir.glob("*decode*.out")):
        text = path.read_text(errors="replace")
        values.extend(float(m.group(1)) for m in _RUNNING.finditer(text))
    return values


def build_rollup_csv(
    rollup: Rollup,
    *,
    config_name: str,
    gpus: GpuCounts,
    p90_running: float | None,
) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    working_total = gpus.working_total
    for run in rollup.sorted_runs():
        tpot = run.tpot_median_ms
        per_user = 1000.0 / tpot if tpot is not None and tpot > 0 else None
        total_tp = run.total_token_throughput
        per_gpu = total_tp / working_total if total_tp is not None and working_total > 0 else None
        writer.writerow(
            [
                config_name,
                gpus.total,
                gpus.decode_count,
                working_total,
                gpus.decode_count,
                gpus.prefill if gpus.prefill is not None else 0,
            ]
            + [
                format_csv_number(v)
                for v in (
                    run.concurrency,
                    total_tp,
                    run.throughput_toks,
                    run.ttft_median_ms,
                    tpot,
                    run.itl_median_ms,
                    p90_running if gpus.disaggregated else None,
                    per_user,
                    per_gpu,
                )
            ]
        )
    return out.getvalue()


def read_sa_bench_results(log_dir: Path) -> list[BenchResult]:
    """Every `<log_dir>/sa-bench_*/results_*.json`, sorted by path, decoded with the file's one
    decoder; one that does not decode is refused naming the file and the field."""
    docs = []
    for path in sorted(log_dir.glob("sa-bench_*/results_*.json")):
        try:
            docs.append(decode_bench_result(path.read_bytes()))
        except msgspec.ValidationError as exc:  # a DecodeError too: first
            raise BenchDatasetError(f"{path}: not an sa-bench result: {exc}") from exc
        except msgspec.DecodeError as exc:
            raise BenchDatasetError(f"{path}: not valid JSON: {exc}") from exc
    return docs


def write_rollup(log_dir: Path, rollup: Rollup, csv_text: str | None) -> Path:
    """Write the rollup (and its CSV); refuses one its readers could not decode (a client that
    reported a metric as text), naming the field."""
    path = log_dir / ROLLUP_FILE
    data = encode_rollup(rollup)
    try:
        decode_rollup(data)
    except msgspec.ValidationError as exc:
        raise BenchDatasetError(f"{path}: not written, the results do not fit it: {exc}") from exc
    path.write_bytes(data)
    if csv_text is not None:
        (log_dir / "benchmark-rollup.csv").write_text(csv_text)
    return path
