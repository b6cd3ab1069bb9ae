"""The validity vocabulary: every reason a benchmark window or run is `invalid`, with its bound
(docs/telemetry-and-bench.md#validity).

`VALIDITY_REASONS` is the one table: `srt-bench validity` takes its codes and bounds from here,
docs/telemetry-and-bench.md's table is `render_validity_table()` (a test keeps them equal), and
`srtctl compare` / `report` read the codes from `benchmark-rollup.json`
(`srt_schema.rollup.Validity`). Pure data.

`HealthGateRecord` is `logs/health_gate.json`, the health gate's facts the runtime writes when the
gate passes (planned and seen worker counts, when, where the job's status events are) and
`srt-bench validity` reads for `workers_not_ready`.
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = [
    "CLIENT_SATURATED",
    "CLOCK_SKEW",
    "HEALTH_GATE_FILE",
    "MAX_CLIENT_CPU_SHARE",
    "MAX_FAILURE_RATE",
    "MAX_LOOP_LAG_P99_MS",
    "MIN_WINDOW_E2E_LATENCIES",
    "NO_OUTPUT_TOKENS",
    "POWER_INVALID",
    "REQUEST_FAILURE_RATE",
    "VALIDITY_REASONS",
    "WINDOW_MISSING",
    "WINDOW_TOO_SHORT",
    "WORKERS_NOT_READY",
    "WORKER_RESTARTED",
    "HealthGateRecord",
    "ReasonInfo",
    "render_validity_table",
]

#: The request gate of sa-bench (`srt_bench.results.MAX_FAILURE_RATE`, the same value; a test
#: keeps them equal): a window with more failed requests than this share is invalid.
MAX_FAILURE_RATE = 0.05
#: The client's event loop woke this much later than asked, at the 99th percentile of a window's
#: 10 ms probes: its timestamps (TTFT, ITL) are that late, the client is the bottleneck. 50 ms,
#: not 25: on a 2-core machine that also runs the frontend, two mockers, etcd and NATS, healthy
#: quickstart windows reached 37 ms of scheduling delay (CI), while a client that cannot keep up
#: lags by far more (the SIGSTOP fault test: about 80 ms) or shows in the CPU share.
MAX_LOOP_LAG_P99_MS = 50.0
#: The client process used this share of one core over the window (process CPU / wall time).
MAX_CLIENT_CPU_SHARE = 0.90
#: A window shorter than this many median end-to-end latencies is ramp-up and drain more than
#: steady state (each concurrency slot ran fewer than 3 requests one after the other). Relative,
#: not in seconds: a mocker's 0.2 s window of 50 ms requests is as steady as a GPU's 60 s window
#: of 5 s requests, and an absolute floor would flag every fast healthy run.
MIN_WINDOW_E2E_LATENCIES = 3.0

NO_OUTPUT_TOKENS = "no_output_tokens"
REQUEST_FAILURE_RATE = "request_failure_rate"
CLIENT_SATURATED = "client_saturated"
WORKERS_NOT_READY = "workers_not_ready"
WORKER_RESTARTED = "worker_restarted"
WINDOW_TOO_SHORT = "window_too_short"
WINDOW_MISSING = "window_missing"
POWER_INVALID = "power_invalid"
CLOCK_SKEW = "clock_skew"

Scope = Literal["window", "run", "window and run"]


class ReasonInfo(msgspec.Struct, frozen=True, kw_only=True):
    """One row of the vocabulary."""

    code: str
    scope: Scope
    meaning: str
    bound: str
    action: str


def _pct(value: float) -> str:
    return f"{value:.0%}"


VALIDITY_REASONS: dict[str, ReasonInfo] = {
    r.code: r
    for r in (
        ReasonInfo(
            code=NO_OUTPUT_TOKENS,
            scope="window",
            meaning="the window's requests returned no output token",
            bound="total output tokens = 0",
            action="check the engine generates (max_tokens, stop settings, the worker log)",
        ),
        ReasonInfo(
            code=REQUEST_FAILURE_RATE,
            scope="window",
            meaning="more requests failed than sa-bench's request gate allows",
            bound=f"failed / requested > {_pct(MAX_FAILURE_RATE)}",
            action="read the result JSON's `errors` and the workers' logs",
        ),
        ReasonInfo(
            code=CLIENT_SATURATED,
            scope="window",
            meaning="the benchmark client, not the deployment, limited the numbers",
            bound=(
                f"p99 event-loop lag > {MAX_LOOP_LAG_P99_MS:g} ms or client CPU share > "
                f"{_pct(MAX_CLIENT_CPU_SHARE)} of a core"
            ),
            action="give the client its own node (`benchmark` placement) or lower the "
            "concurrency per client",
        ),
        ReasonInfo(
            code=WORKERS_NOT_READY,
            scope="window and run",
            meaning="fewer workers served than planned: the health gate saw fewer, or a worker "
            "exited before or during the window and was not back",
            bound="ready workers < planned at any time in the window",
            action="read the worker's log and the sweep log; make the role `critical` to fail "
            "the job instead",
        ),
        ReasonInfo(
            code=WORKER_RESTARTED,
            scope="window",
            meaning="a worker crashed and was relaunched inside the window",
            bound="a restart's exit, relaunch or ready time inside the window",
            action="read `worker_restarts.json` and the crash log, then re-run",
        ),
        ReasonInfo(
            code=WINDOW_TOO_SHORT,
            scope="window",
            meaning="the window is mostly ramp-up and drain, not steady state",
            bound=f"duration < {MIN_WINDOW_E2E_LATENCIES:g} x the median end-to-end latency",
            action="raise `benchmark.num_prompts_mult` (more requests per concurrency)",
        ),
        ReasonInfo(
            code=WINDOW_MISSING,
            scope="run",
            meaning="a planned concurrency has no result (the benchmark stopped before it)",
            bound="a planned concurrency without a run",
            action="read `benchmark.out`: the first failed gate stops the benchmark",
        ),
        ReasonInfo(
            code=POWER_INVALID,
            scope="window and run",
            meaning="power telemetry was asked for and is not publishable",
            bound="`power.publication_valid` false (run), `energy.power_coverage_valid` false "
            "or no energy (window)",
            action="the rollup's `power.reason_codes`; srt-telemetry's README (GPU power)",
        ),
        ReasonInfo(
            code=CLOCK_SKEW,
            scope="window and run",
            meaning="a node's clock is off the head node's: windows, samples and events of "
            "different nodes cannot be lined up",
            bound="the power clock check's offset > `clock_tolerance_seconds` "
            "(max(0.5 s, collect interval))",
            action="fix time sync (chrony/NTP) on the node named",
        ),
    )
}


HEALTH_GATE_FILE = "health_gate.json"


class HealthGateRecord(msgspec.Struct, frozen=True, kw_only=True):
    """`logs/health_gate.json`: the gate passed at `passed_unix` (the head node's clock) after
    `seconds`. `expected_*` are the plan's worker counts the gate waited for, `seen_*` what the
    frontend reported then (null when the family does not count workers: `direct`,
    `trtllm_serve`). `events_file` is the job's `status_events.jsonl` (process exits and
    relaunches, with times), null when the run keeps none."""

    family: str
    url: str
    expected_prefill: int
    expected_decode: int
    seen_prefill: int | None = None
    seen_decode: int | None = None
    passed_unix: float
    seconds: float
    events_file: str | None = None


def render_validity_table() -> str:
    """The Markdown table of `VALIDITY_REASONS` (docs/telemetry-and-bench.md#validity)."""
    lines = ["| code | applies to | meaning | invalid when | what to do |", "|---|---|---|---|---|"]
    for r in VALIDITY_REASONS.values():
        lines.append(f"| `{r.code}` | {r.scope} | {r.meaning} | {r.bound} | {r.action} |")
    return "\n".join(lines) + "\n"
