"""The sa-bench runner: sanity request, then per concurrency a warmup, a test prompt and the
formal phase; one result JSON (and measurement window) per formal phase; the failure gate.
The concurrencies are the settings' list, or chosen one at a time by a capacity search
(`choose`, which may also pick each phase's request rate), then the extra traffic
of a timed profile (`srt_bench.profile_traffic`). About 480 lines: the phase steps
share one `_Phases` state, kept together."""

from __future__ import annotations

import asyncio
import datetime as dt
import math
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from srt_bench.client import PreparedRequest, StreamClient, build_request_body
from srt_bench.client_load import LoopMonitor
from srt_bench.config import WARMUP_REQUEST_RATE, BenchRunConfig
from srt_bench.errors import BenchDatasetError, BenchGateError, BenchRequestError
from srt_bench.loadgen import PhaseRun, run_phase
from srt_bench.profile_control import mark
from srt_bench.profile_traffic import keep_traffic
from srt_bench.prompts import (
    Prompt,
    build_synthetic_prompts,
    read_custom_dataset,
    sample_dataset_prompts,
)
from srt_bench.records import RequestRecord
from srt_bench.results import (
    MAX_FAILURE_RATE,
    build_outcome,
    build_result,
    encode_result,
    result_stem,
)
from srt_bench.sa_bench_settings import SaBenchSettings, result_dir_name
from srt_bench.slow_down import SlowDownControl, slow_down_headers
from srt_bench.stats import PhaseMetrics, build_phase_metrics
from srt_bench.tokenizer import BenchTokenizer, load_bench_tokenizer
from srt_bench.windows import build_window, write_window
from srt_bench.workloads.session import (
    WorkloadPhase,
    WorkloadSession,
    build_workload_summary,
)
from srt_schema.bench_result import BenchOutcome, WorkloadSummary
from srt_schema.capacity_axis import format_rate

__all__ = [
    "Chooser",
    "PhaseLoad",
    "PhaseSummary",
    "count_missing_tokens",
    "prepare_requests",
    "run_sa_bench",
]

#: Kept under its old name for callers of this module (it lives in `slow_down`).
_slow_down_headers = slow_down_headers

Log = Callable[[str], None]


class PhaseLoad(msgspec.Struct, frozen=True, kw_only=True):
    """The load of one phase: at most `concurrency` requests in flight. With `request_rate`
    (requests/s, a point of a request-rate capacity search) the arrivals come at that rate and
    the phase measures `requests` requests, its warmup `num_warmup_mult x ceil(rate)` at the same
    rate and cap; else the settings' `request_rate` and `concurrency x num_prompts_mult`."""

    concurrency: int
    request_rate: float | None = None
    requests: int | None = None

    def name(self) -> str:
        """`concurrency 8` or `request rate 2.5 req/s`, as the log says it."""
        if self.request_rate is None:
            return f"concurrency {self.concurrency}"
        return f"request rate {format_rate(self.request_rate)} req/s"


class PhaseSummary(msgspec.Struct, frozen=True, kw_only=True):
    concurrency: int
    result_path: Path
    metrics: PhaseMetrics
    outcome: BenchOutcome
    #: The rate the phase's load chose (None: the settings' `request_rate`).
    request_rate: float | None = None


#: Adaptive phases (a capacity search): given every phase run so far, the next phase's load, or
#: None to stop. A phase that fails the request gate then ends nothing: the chooser sees it.
Chooser = Callable[[Sequence[PhaseSummary]], PhaseLoad | None]


def prepare_requests(
    prompts: Sequence[Prompt], *, settings: SaBenchSettings, model: str
) -> list[PreparedRequest]:
    return [
        PreparedRequest(
            body=build_request_body(
                api=settings.api,
                model=model,
                prompt=p.text,
                max_tokens=p.output_tokens,
                ignore_eos=p.output_tokens is not None,
            ),
            prompt_tokens=p.tokens,
        )
        for p in prompts
    ]


def count_missing_tokens(
    records: Sequence[RequestRecord], tokenizer: BenchTokenizer | None
) -> list[RequestRecord]:
    """Count output tokens by re-tokenizing the text of completed requests the server gave no
    usage for (only when a tokenizer is available)."""
    out: list[RequestRecord] = []
    for r in records:
        if r.success and r.token_source == "none" and tokenizer is not None:
            n = len(tokenizer.encode(r.text, add_special_tokens=False).ids) if r.text else 0
            out.append(msgspec.structs.replace(r, output_tokens=n, token_source="tokenizer"))
        else:
            out.append(r)
    return out


def _prompts(
    config: BenchRunConfig,
    settings: SaBenchSettings,
    tokenizer: BenchTokenizer | None,
    count: int,
    seed: int,
) -> list[Prompt]:
    if settings.dataset == "custom":
        assert settings.dataset_path is not None
        rows = read_custom_dataset(Path(settings.dataset_path))
        return sample_dataset_prompts(rows, tokenizer, count=count, osl=settings.osl, seed=seed)
    if tokenizer is None:
        raise BenchDatasetError(
            "sa-bench synthetic prompts need the model's tokenizer: set tokenizer_path in the run "
            "config to the model folder"
        )
    assert settings.isl is not None and settings.osl is not None
    return build_synthetic_prompts(
        tokenizer,
        count=count,
        isl=settings.isl,
        osl=settings.osl,
        range_ratio=settings.range_ratio,
        seed=seed,
    )


def _header(
    config: BenchRunConfig,
    settings: SaBenchSettings,
    concurrency: int,
    rate: float,
    now: dt.datetime,
) -> dict[str, Any]:
    return {
        "date": now.strftime("%Y%m%d-%H%M%S"),
        "backend": "openai-chat" if settings.api == "chat" else "openai",
        "model_id": config.model_name,
        "tokenizer_id": settings.tokenizer_path,
        "best_of": 1,
        "request_rate": rate,
        "burstiness": 1.0,
        "max_concurrency": concurrency,
        "isl": settings.isl,
        "osl": settings.osl,
        "random_range_ratio": settings.range_ratio,
        "dataset_name": settings.dataset,
        "total_gpus": config.total_gpus,
    }


async def _sanity(client: StreamClient, config: BenchRunConfig, settings: SaBenchSettings) -> None:
    body = build_request_body(
        api=settings.api, model=config.model_name, prompt="Hello", max_tokens=10, ignore_eos=False
    )
    record = await client.send(PreparedRequest(body=body, prompt_tokens=1), origin=0.0)
    if not record.success:
        raise BenchRequestError(
            f"the sanity request to {config.endpoint} failed: {record.error}; check that the "
            f"frontend is up and serves model {config.model_name!r}"
        )


class _Phases:
    """What every phase of one run shares."""

    def __init__(
        self,
        *,
        config: BenchRunConfig,
        settings: SaBenchSettings,
        tokenizer: BenchTokenizer | None,
        out_dir: Path,
        window_dir: Path | None,
        log: Log,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.monotonic = monotonic
        self.settings = settings
        self.tokenizer = tokenizer
        self.out_dir = out_dir
        self.window_dir = window_dir
        self.log = log
        self.result_dir = out_dir / result_dir_name(settings)
        self.client = StreamClient(
            endpoint=config.endpoint,
            api=settings.api,
            reuse_connections=settings.reuse_connections,
            timeout_seconds=config.request_timeout_seconds,
            api_key=os.environ.get("OPENAI_API_KEY") or os.environ.get("API_KEY"),
        )
        self.session: WorkloadSession | None = None
        #: Automatic Nsight capture's start marker was written (first measured request).
        self.marked = False
        if settings.workload is not None:
            if tokenizer is None:
                raise BenchDatasetError("a workload needs the model's tokenizer (tokenizer_path)")
            self.session = WorkloadSession(
                settings.workload,
                tokenizer,
                api=settings.api,
                model=config.model_name,
                isl=settings.isl,
                osl=settings.osl,
                range_ratio=settings.range_ratio,
                prompts_mult=settings.num_prompts_mult,
                run_seed=config.seed,
            )

    def requests(self, count: int, seed: int) -> list[PreparedRequest]:
        if self.session is not None:
            return self.session.single_requests(count, seed)
        prompts = _prompts(self.config, self.settings, self.tokenizer, count, seed)
        return prepare_requests(prompts, settings=self.settings, model=self.config.model_name)

    async def run(self, choose: Chooser | None = None) -> list[PhaseSummary]:
        summaries: list[PhaseSummary] = []
        self.result_dir.mkdir(parents=True, exist_ok=True)
        origin = self.monotonic()
        try:
            await _sanity(self.client, self.config, self.settings)
            if choose is not None:
                while (load := choose(summaries)) is not None:
                    seed = self.config.seed + 1000 * len(summaries)
                    await self.warmup(load, seed, gate=False)
                    summaries.append(await self.formal(load, seed))
                await self.keep_traffic(summaries, origin)
                return summaries
            for index, c in enumerate(self.settings.concurrencies):
                seed = self.config.seed + 1000 * index
                await self.warmup(PhaseLoad(concurrency=c), seed)
                summary = await self.formal(PhaseLoad(concurrency=c), seed)
                summaries.append(summary)
                if summary.outcome.status != "passed":
                    raise BenchGateError(
                        f"concurrency {c} failed the request gate: "
                        + "; ".join(summary.outcome.reasons)
                        + f" (results in {summary.result_path})"
                    )
            await self.keep_traffic(summaries, origin)
        finally:
            if self.marked:
                mark(self.config.profiling, "stop", self.log)
            await self.client.aclose()
        return summaries

    async def keep_traffic(self, summaries: Sequence[PhaseSummary], origin: float) -> None:
        """``profiling.benchmark_duration_secs``: more (unmeasured) rounds at the last phase's
        load until the traffic lasted that long (`srt_bench.profile_traffic`)."""
        last = summaries[-1] if summaries else None
        c = last.concurrency if last is not None else 1
        rate = self.settings.request_rate
        if last is not None and last.request_rate is not None:
            rate = last.request_rate
        await keep_traffic(
            self.config.profiling,
            self.client,
            self.requests,
            concurrency=c,
            per_round=max(1, c * self.settings.num_prompts_mult),
            rate=rate,
            origin=origin,
            seed=self.config.seed + 1_000_000,
            log=self.log,
            monotonic=self.monotonic,
        )

    async def warmup(self, load: PhaseLoad, seed: int, *, gate: bool = True) -> None:
        if self.settings.num_warmup_mult == 0:
            return
        c, mult = load.concurrency, self.settings.num_warmup_mult
        if load.request_rate is None:
            count, rate = c * mult, WARMUP_REQUEST_RATE
        else:
            count, rate = max(1, math.ceil(load.request_rate)) * mult, load.request_rate
        warm = self.requests(count, seed + 1)
        self.log(f"{load.name()}: warmup with {len(warm)} requests")
        run = await run_phase(self.client, warm, concurrency=c, rate=rate, seed=seed + 2)
        failed = [r for r in run.records if not r.success]
        if gate and len(failed) / len(warm) > MAX_FAILURE_RATE:
            raise BenchGateError(
                f"SA-Bench warmup failed at concurrency {c}: {len(failed)}/{len(warm)} "
                f"requests failed (first error: {failed[0].error})"
            )

    def window(self, stem: str, **fields: Any) -> None:
        if self.window_dir is not None:
            write_window(self.window_dir, stem, build_window(benchmark_type="sa-bench", **fields))

    async def formal(self, load: PhaseLoad, seed: int) -> PhaseSummary:
        config, settings = self.config, self.settings
        c, name = load.concurrency, load.name()
        rate = settings.request_rate if load.request_rate is None else load.request_rate
        if self.session is not None:
            test, measured = self.requests(1, seed + 7)[0], []
            planned = self.session.planned_requests(c)
        else:
            count = c * settings.num_prompts_mult if load.requests is None else load.requests
            requests = self.requests(count + 1, seed)
            test, measured = requests[0], requests[1:]
            planned = len(measured)
        test_record = await self.client.send(test, origin=0.0)
        if not test_record.success:
            raise BenchRequestError(f"the test prompt before {name} failed: {test_record.error}")
        stem = result_stem(
            c,
            config.total_gpus,
            config.prefill_gpus,
            config.decode_gpus,
            request_rate=load.request_rate,
        )
        result_path = self.result_dir / f"{stem}.json"
        rel = result_path.relative_to(self.out_dir).as_posix()
        slow = (
            SlowDownControl(settings.slow_down, slow_down_headers(os.environ), self.log)
            if settings.slow_down
            else None
        )
        if slow is not None:
            await slow.start()
        if not self.marked:
            mark(self.config.profiling, "start", self.log)
            self.marked = True
        self.window(
            stem,
            result_path=rel,
            concurrency=c,
            start_unix=dt.datetime.now(dt.UTC).timestamp(),
            end_unix=None,
            duration=None,
            status="running",
            reason=None,
        )
        cap = "" if load.request_rate is None else f", at most {c} in flight"
        self.log(f"{name}: {planned} measured requests, rate {rate}{cap}")
        phase: WorkloadPhase | None = None
        # The client's own event-loop lag and CPU share over the window (`client_saturated`).
        monitor = LoopMonitor()
        try:
            async with monitor:
                if self.session is not None:
                    phase = await self.session.formal(
                        self.client, concurrency=c, rate=rate, seed=seed + 3
                    )
                    run: PhaseRun = phase.run
                else:
                    run = await run_phase(
                        self.client,
                        measured,
                        concurrency=c,
                        rate=rate,
                        seed=seed + 3,
                    )
        finally:
            if slow is not None:
                await slow.stop()
        records = count_missing_tokens(run.records, self.tokenizer)
        metrics = build_phase_metrics(
            records,
            duration=run.duration,
            total_gpus=config.total_gpus,
            percentiles=config.percentiles,
            goodput=settings.goodput,
        )
        doc = build_result(
            header=_header(config, settings, c, rate, dt.datetime.now(dt.UTC)),
            metrics=metrics,
            records=records,
            percentiles=config.percentiles,
            start_unix=run.start_unix,
            end_unix=run.end_unix,
            reuse_http_connections=settings.reuse_connections,
            requested_num_prompts=planned,
        )
        if monitor.load is not None:
            doc = msgspec.structs.replace(doc, client_load=monitor.load)
        if phase is not None and settings.workload is not None:
            workload = build_workload_summary(settings.workload, phase, records)
            doc = msgspec.structs.replace(doc, workload=workload)
            self.log(_workload_line(c, workload))
        result_path.write_bytes(encode_result(doc, metrics))
        outcome = build_outcome(metrics)
        failed = outcome.status != "passed"
        self.window(
            stem,
            result_path=rel,
            concurrency=c,
            start_unix=run.start_unix,
            end_unix=run.end_unix,
            duration=run.duration,
            status="failed" if failed else "completed",
            reason="request_gate_failed" if failed else None,
        )
        self.log(_summary_line(name, metrics))
        return PhaseSummary(
            concurrency=c,
            request_rate=load.request_rate,
            result_path=result_path,
            metrics=metrics,
            outcome=outcome,
        )


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _summary_line(phase: str, m: PhaseMetrics) -> str:
    lat = m.latencies
    line = (
        f"{phase}: {m.completed}/{m.requested} ok in {m.duration:.2f} s, "
        f"{m.request_throughput:.2f} req/s, {m.output_throughput:.1f} out tok/s "
        f"({m.output_throughput_per_gpu:.1f}/GPU), TTFT p50 {_ms(lat['ttft'].median_ms)} ms, "
        f"TPOT p50 {_ms(lat['tpot'].median_ms)} ms, ITL p50 {_ms(lat['itl'].median_ms)} ms, "
        f"E2EL p50 {_ms(lat['e2el'].median_ms)} ms"
    )
    for name, summary in lat.items():
        if summary.unmeasured is not None:
            line += f"; {name} n/a: {summary.unmeasured}"
    return line


def _workload_line(c: int, w: WorkloadSummary) -> str:
    potential = w.prefix_hit_potential
    line = (
        f"concurrency {c}: {w.kind}: prefix hit potential "
        + ("n/a" if potential is None else f"{potential:.3f}")
        + f" ({w.prefix_hit_tokens}/{w.prefix_prompt_tokens} prompt tokens), "
        f"client prompt tokens {w.client_prompt_tokens}, server {w.server_prompt_tokens}"
    )
    if w.prompt_token_mismatches:
        line += f"; {w.prompt_token_mismatches} requests where they differ"
    return line


def run_sa_bench(
    config: BenchRunConfig,
    settings: SaBenchSettings,
    out_dir: Path,
    *,
    window_dir: Path | None = None,
    log: Log = lambda _line: None,
    choose: Chooser | None = None,
    monotonic: Callable[[], float] = time.monotonic,
) -> list[PhaseSummary]:
    """Run every phase; raises `BenchGateError` after writing the failing phase's result. With
    `choose`, run the phases it picks instead of `settings.concurrencies` (no gate raises)."""
    loaded = load_bench_tokenizer(settings.tokenizer_path, settings.tokenizer_class)
    tokenizer = None if loaded is None else loaded.tokenizer
    if loaded is not None and loaded.hub is not None:
        hub = loaded.hub
        log(f"tokenizer of {hub.model}: {hub.repo}@{hub.commit} in {hub.folder}")
    if settings.slow_down_ignored:
        log(settings.slow_down_ignored)
    phases = _Phases(
        config=config,
        settings=settings,
        tokenizer=tokenizer,
        out_dir=out_dir,
        window_dir=window_dir,
        log=log,
        monotonic=monotonic,
    )
    return asyncio.run(phases.run(choose))
