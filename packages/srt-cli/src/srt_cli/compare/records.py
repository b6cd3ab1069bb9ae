"""The per-request records of one benchmark window, from an sa-bench result JSON
(`logs/sa-bench_*/results_concurrency_<c>_gpus_<n>[...].json`, srt_bench.results).

Decoded with the file's one definition, `srt_schema.bench_result.BenchResult`. Times are
converted to milliseconds. A request succeeded when its `errors` entry is empty. TPOT
(`request_tpot`) and E2EL need the per-request latency (`e2els`, written since srt-bench added
it); without it they are left to the rollup's numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from srt_schema.bench_result import BenchResult, decode_bench_result

__all__ = ["RESULT_NAME", "Window", "build_window", "decode_result", "find_result_files"]

RESULT_NAME = re.compile(r"results_concurrency_(\d+)_gpus_(\d+)(?:_ctx_\d+_gen_\d+)?\.json")


@dataclass(frozen=True)
class Window:
    """One concurrency's requests. Per-request tuples hold successful requests only, except
    `output_lens` (every request; a failed one counts 0 tokens)."""

    concurrency: int
    gpus: int | None
    duration: float
    requests: int
    output_lens: tuple[int, ...]
    ttft_ms: tuple[float, ...]
    #: Sorted gaps per successful request (pooled for the ITL percentiles).
    itl_ms: tuple[tuple[float, ...], ...]
    tpot_ms: tuple[float, ...] | None
    e2el_ms: tuple[float, ...] | None


def decode_result(data: bytes) -> BenchResult:
    """The result file's one decoder (`srt_schema.bench_result`)."""
    return decode_bench_result(data)


def build_window(doc: BenchResult, *, concurrency: int, gpus: int | None) -> Window:
    """The window's samples (pure), with the metric definitions of `srt_schema.bench_result`."""
    n = len(doc.output_lens)
    ok = doc.succeeded()
    good = set(ok)
    ttfts = doc.ttfts if len(doc.ttfts) == n else [None] * n
    itls = doc.itls if len(doc.itls) == n else [[] for _ in range(n)]
    tpots = doc.request_tpots()
    e2els = doc.e2els if doc.e2els is not None and len(doc.e2els) == n else None
    tpot: tuple[float, ...] | None = None
    e2el: tuple[float, ...] | None = None
    if e2els is not None and tpots is not None:
        e2el = tuple(e2els[i] * 1000.0 for i in ok)
        tpot = tuple(t * 1000.0 for i in ok if (t := tpots[i]) is not None)
    return Window(
        concurrency=concurrency,
        gpus=doc.total_gpus if doc.total_gpus is not None else gpus,
        duration=doc.duration or 0.0,
        requests=n,
        output_lens=tuple(doc.output_lens[i] if i in good else 0 for i in range(n)),
        ttft_ms=tuple(t * 1000.0 for i in ok if (t := ttfts[i]) is not None),
        itl_ms=tuple(tuple(sorted(g * 1000.0 for g in itls[i])) for i in ok),
        tpot_ms=tpot,
        e2el_ms=e2el,
    )


def find_result_files(log_dir: Path) -> dict[int, tuple[Path, int]]:
    """concurrency -> (result file, GPU count from its name); the last file by name wins."""
    found: dict[int, tuple[Path, int]] = {}
    for path in sorted(log_dir.glob("*/results_concurrency_*.json")):
        m = RESULT_NAME.fullmatch(path.name)
        if m:
            found[int(m.group(1))] = (path, int(m.group(2)))
    return found
