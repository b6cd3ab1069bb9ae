"""Client capacity and timing accuracy: our sa-bench client vs aiperf, GuideLLM and inference-perf.

Every client gets the same local server (`python -m srt_bench.testing`, its own process), runs as
its own child process, and is measured at 64, 256 and 1,024 concurrent streams, twice:
- throughput: the server answers every request at once with --tokens one-token chunks plus usage
  (it is never the limit); requests/s, output tokens/s and the client's CPU time (user + system,
  including the processes it spawns, from the kernel's accounting of reaped children);
- timing: the server sends each token on a known schedule (--ttft-ms, --itl-ms, seeded
  --jitter, keyed by the prompt: `srt_bench.testing.schedule`), so the truth of every request is
  known. Each client's reported p50/p99 TTFT and ITL minus the truth's is its timing error
  (ITL compared in the client's own definition: pooled gaps, or each request's mean gap);
  ours also per request ("paired": |measured - scheduled|, p50/p99). The server's own lateness
  against the schedule is printed beside it (an error the client cannot remove), and so is
  ours against the server's actual writes ("vs writes": each token's stamp minus its write,
  |stamped gap - written gap|; the server keeps its write times by request `user` on
  CLOCK_MONOTONIC, which our stamps share): the client's own error, without the server's.
  Ours stamps chunks with the kernel's receive time (`srt_bench.http1_stamped`);
  `--loop-stamps` times the event loop's reads instead, for an A/B.

    uv run --frozen python benchmarks/client_capacity.py            # about 10 minutes
    uv run --frozen python benchmarks/client_capacity.py --quick    # about 4 minutes
    uv run --frozen python benchmarks/client_capacity.py --clients ours,aiperf --httpx

Peers run from PyPI in their own environments via uvx, pinned (`PEERS` below; a peer that
cannot run prints one line saying why). `--quick` sends fewer requests and runs GuideLLM and
inference-perf (each run costs 15-60 s of start-up) at 1,024 streams only. Timing passes start
with a warmup wave of one request per stream, excluded from the numbers (ours: the first wave
of one continuous phase; aiperf `--warmup-request-count`; GuideLLM `warmup`; inference-perf a
warmup stage). Timing on a shared 2-core machine is only as good as its quiet: each level's
line shows the load average. The last lines are `ratio ours/best-peer: <y>` and
`ratio ours/aiperf: <x>`: output tokens/s at the highest concurrency (throughput pass).
This file is over 400 lines: one adapter per peer, kept beside the runs they are compared in.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import msgspec

from srt_bench.client import PreparedRequest, StreamClient, build_request_body
from srt_bench.loadgen import run_phase
from srt_bench.prompts import build_synthetic_prompts, read_tokenizer
from srt_bench.records import RequestRecord
from srt_bench.sse import DONE, SseDecoder, decode_chunk
from srt_bench.stats import build_phase_metrics
from srt_bench.testing import TokenSchedule, write_tiny_model
from srt_bench.testing.timing import (
    ItlKind,
    ScheduleTruth,
    build_delivery_error,
    build_distribution_error,
    build_paired_error,
    build_truth,
)

CONCURRENCIES = (64, 256, 1024)
AIPERF = os.environ.get("AIPERF", "uvx --from aiperf==0.13.0 aiperf")
GUIDELLM = "uvx --from guidellm==0.8.1 guidellm"
INFERENCE_PERF_VERSION = "0.7.0"  # needs Python >= 3.12
PEERS = ("aiperf", "guidellm", "inference-perf")
#: Peers that `--quick` runs at the highest concurrency only.
SLOW_PEERS = ("guidellm", "inference-perf")
Result = dict[str, Any]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _timed(cmd: list[str], **kw: Any) -> tuple[subprocess.CompletedProcess[str], float, float]:
    before, t0 = _children_cpu(), time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True, check=False, **kw)
    return out, _children_cpu() - before, time.monotonic() - t0


def _tail(out: subprocess.CompletedProcess[str]) -> str:
    lines = [ln for ln in (out.stdout + out.stderr).splitlines() if ln.strip()]
    return lines[-1][:200] if lines else f"exit {out.returncode}"


class PeerError(RuntimeError):
    """A peer could not run here; the message is the one line printed instead of numbers."""


@contextmanager
def serve(args: argparse.Namespace, *, timed: bool) -> Iterator[str]:
    port = _free_port()
    cmd = [sys.executable, "-m", "srt_bench.testing", "--port", str(port), "--tokens",
           str(args.tokens)]  # fmt: skip
    if timed:
        cmd += ["--ttft-ms", str(args.ttft_ms), "--itl-ms", str(args.itl_ms),
                "--jitter", str(args.jitter), "--seed", str(args.seed)]  # fmt: skip
    server = subprocess.Popen(cmd)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


def server_lateness(url: str) -> Result:
    """How late the timed server's writes were since the last call (and reset it)."""
    with urllib.request.urlopen(f"{url}/schedule_stats", timeout=10) as resp:
        stats: Result = json.loads(resp.read())
    return stats


# -- ours (and the same client on httpx) -----------------------------------------------------------
class HttpxSender:
    """The same request/stream handling on httpx, to show why sa-bench does not use it."""

    def __init__(self, url: str, concurrency: int) -> None:
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        self._client = httpx.AsyncClient(limits=limits, timeout=600, trust_env=False)
        self._url = url + "/v1/completions"

    async def aclose(self) -> None:
        await self._client.aclose()

    async def send(self, request: PreparedRequest, *, origin: float) -> RequestRecord:
        start = time.perf_counter()
        decoder, tokens, error = SseDecoder(), 0, ""
        try:
            headers = {"content-type": "application/json"}
            async with self._client.stream(
                "POST", self._url, content=request.body, headers=headers
            ) as response:
                async for data in response.aiter_raw():
                    for payload in decoder.feed(data):
                        if payload != DONE:
                            usage = decode_chunk(payload).usage
                            if usage is not None and usage.completion_tokens is not None:
                                tokens = usage.completion_tokens
        except httpx.HTTPError as exc:
            error = str(exc) or type(exc).__name__
        end = time.perf_counter()
        return RequestRecord(
            success=not error,
            error=error,
            prompt_tokens=request.prompt_tokens,
            output_tokens=tokens,
            token_source="usage",
            latency=end - start,
            send_time=start - origin,
        )


def _schedule(args: argparse.Namespace) -> TokenSchedule:
    return TokenSchedule(
        ttft_s=args.ttft_ms / 1000.0, itl_s=args.itl_ms / 1000.0, jitter=args.jitter, seed=args.seed
    )


def worker_ours(args: argparse.Namespace) -> None:
    texts = [json.loads(line)["text"] for line in Path(args.prompts).read_text().splitlines()]
    keys = [texts[i % len(texts)] for i in range(args.requests)]
    requests = [
        PreparedRequest(
            body=build_request_body(
                api="completions",
                model="tiny",
                prompt=k,
                max_tokens=args.tokens,
                ignore_eos=True,
                extra={"user": f"r{i}"},
            ),
            prompt_tokens=args.isl,
        )
        for i, k in enumerate(keys)
    ]
    origins: list[float] = []

    async def main() -> Result:
        client: StreamClient | HttpxSender
        if args.worker_ours == "httpx":
            client = HttpxSender(args.url, args.concurrency)
        else:
            client = StreamClient(
                endpoint=args.url, api="completions", reuse_connections=True,
                timeout_seconds=600, kernel_stamps=args.worker_ours == "http1",
            )  # fmt: skip
        sender = _OriginKept(client, origins)
        try:
            run = await run_phase(
                sender, requests, concurrency=args.concurrency, rate=float("inf"), seed=0
            )
        finally:
            await client.aclose()
        # timing pass: the first wave (every stream's first request, started at once, each on a
        # new connection) is the warmup; the measured requests start as earlier ones finish
        records = run.records[args.warmup :]
        m = build_phase_metrics(
            records, duration=run.duration, total_gpus=1, percentiles=(50.0, 99.0)
        )
        out: Result = {
            "completed": m.completed,
            "failed": m.failed,
            "req_s": m.request_throughput,
            "out_tok_s": m.output_throughput,
        }
        if args.warmup and m.latencies["ttft"].count:
            ttft = dict(m.latencies["ttft"].percentiles_ms)
            itl = dict(m.latencies["itl"].percentiles_ms)
            out.update(ttft_p50=ttft[50.0], ttft_p99=ttft[99.0], itl_p50=itl[50.0],
                       itl_p99=itl[99.0], itl_kind="pooled")  # fmt: skip
            paired = build_paired_error(_schedule(args), keys[args.warmup :], records, args.tokens)
            out["paired"] = None if paired is None else msgspec.structs.asdict(paired)
            with urllib.request.urlopen(f"{args.url}/sent_times", timeout=60) as resp:
                sent: dict[str, list[float]] = json.loads(resp.read())
            origin = origins[0]
            streams = [
                (tuple(origin + t for t in r.chunk_times), sent.get(f"r{i}", []))
                for i, r in enumerate(run.records)
                if i >= args.warmup and r.success
            ]
            delivery = build_delivery_error(streams)
            out["delivery"] = None if delivery is None else msgspec.structs.asdict(delivery)
        if isinstance(client, StreamClient):
            out["stamps"] = client.stamps
        return out

    print(json.dumps(asyncio.run(main())))


class _OriginKept:
    """Passes requests on, keeping the phase's `origin` (records are relative to it)."""

    def __init__(self, client: StreamClient | HttpxSender, origins: list[float]) -> None:
        self._client, self._origins = client, origins

    async def send(self, request: PreparedRequest, *, origin: float) -> RequestRecord:
        if not self._origins:
            self._origins.append(origin)
        return await self._client.send(request, origin=origin)


def run_ours(
    ctx: Ctx, url: str, c: int, n: int, *, timed: bool, transport: str = "http1"
) -> Result:
    a = ctx.args
    total = n + c if timed else n
    cmd = [sys.executable, __file__, "--worker-ours", transport, "--url", url,
           "--prompts", str(ctx.prompts), "--concurrency", str(c), "--requests", str(total),
           "--tokens", str(a.tokens), "--isl", str(a.isl), "--seed", str(a.seed)]  # fmt: skip
    if timed:
        cmd += ["--ttft-ms", str(a.ttft_ms), "--itl-ms", str(a.itl_ms), "--jitter", str(a.jitter),
                "--warmup", str(c)]  # fmt: skip
    out, cpu, wall = _timed(cmd)
    if out.returncode != 0:
        raise SystemExit(f"our client failed:\n{out.stderr}")
    result: Result = json.loads(out.stdout.strip().splitlines()[-1])
    result.update(cpu_s=cpu, wall_s=wall)
    return result


# -- peers --------------------------------------------------------------------------------------
class Ctx:
    def __init__(self, args: argparse.Namespace, work: Path, model: Path, prompts: Path) -> None:
        self.args, self.work, self.model, self.prompts = args, work, model, prompts
        self.runs = 0

    def folder(self, name: str) -> Path:
        self.runs += 1
        path = self.work / f"{name}_{self.runs}"
        path.mkdir()
        return path


def run_aiperf(ctx: Ctx, url: str, c: int, n: int, *, timed: bool) -> Result:
    folder = ctx.folder("aiperf")
    cmd = [
        *shlex.split(AIPERF),
        "profile", "--model", "tiny", "--url", url, "--endpoint-type", "completions",
        "--streaming", "--concurrency", str(c), "--request-count", str(n),
        "--input-file", str(ctx.prompts), "--custom-dataset-type", "single_turn",
        "--tokenizer", str(ctx.model), "--use-server-token-count",
        "--extra-inputs", f"max_tokens:{ctx.args.tokens}", "--extra-inputs", "ignore_eos:true",
        "--ui-type", "none", "--artifact-dir", str(folder),
    ]  # fmt: skip
    if timed:
        cmd += ["--warmup-request-count", str(c)]
    out, cpu, wall = _timed(cmd, cwd=folder)
    export = folder / "profile_export_aiperf.json"
    if out.returncode != 0 or not export.is_file():
        raise PeerError(f"aiperf exited {out.returncode}: {_tail(out)}")
    d = json.loads(export.read_text())
    completed = int(d.get("request_count", {}).get("avg", 0))
    result: Result = {
        "completed": completed,
        "failed": n - completed,
        "req_s": float(d["request_throughput"]["avg"]),
        "out_tok_s": float(d["output_token_throughput"]["avg"]),
        "cpu_s": cpu,
        "wall_s": wall,
    }
    if timed:  # inter_chunk_latency: every gap between chunks (one token each here)
        ttft, icl = d["time_to_first_token"], d["inter_chunk_latency"]
        result.update(ttft_p50=ttft["p50"], ttft_p99=ttft["p99"], itl_p50=icl["p50"],
                      itl_p99=icl["p99"], itl_kind="pooled")  # fmt: skip
    return result


def run_guidellm(ctx: Ctx, url: str, c: int, n: int, *, timed: bool) -> Result:
    folder = ctx.folder("guidellm")
    a = ctx.args
    cmd = [
        *shlex.split(GUIDELLM), "run",
        # chat: guidellm 0.8.1's synthetic data cannot build a /v1/completions prompt
        "--backend", f"kind=openai_http,target={url},model=tiny",
        "--profile", f"kind=concurrent,streams={c}" + (f",warmup={c}" if timed else ""),
        "--data", f"kind=synthetic_text,prompt_tokens={a.isl},output_tokens={a.tokens}",
        "--tokenizer", f"kind=hf_auto,model={ctx.model}",
        "--constraint", f"kind=max_requests,count={n + c if timed else n}",
        "--output", f"kind=json,path={folder / 'out.json'}",
        "--disable-console",
    ]  # fmt: skip
    out, cpu, wall = _timed(cmd, cwd=folder)
    export = folder / "out.json"
    if out.returncode != 0 or not export.is_file():
        raise PeerError(f"guidellm exited {out.returncode}: {_tail(out)}")
    bench = json.loads(export.read_text())["benchmarks"][0]
    m = bench["metrics"]
    ok = int(m["request_totals"]["successful"])
    duration = float(bench["duration"])
    tokens = float(m["output_token_count"]["successful"]["total_sum"])
    result: Result = {
        "completed": ok,
        "failed": n - ok,
        "req_s": ok / duration,
        "out_tok_s": tokens / duration,
        "cpu_s": cpu,
        "wall_s": wall,
    }
    if timed:  # its ITL: each request's (last token - first token) / (tokens - 1)
        ttft = m["time_to_first_token_ms"]["successful"]["percentiles"]
        itl = m["inter_token_latency_ms"]["successful"]["percentiles"]
        result.update(ttft_p50=ttft["p50"], ttft_p99=ttft["p99"], itl_p50=itl["p50"],
                      itl_p99=itl["p99"], itl_kind="per-request")  # fmt: skip
    return result


def _python312() -> str:
    """A local Python 3.12 for uv (uv would otherwise download one, which fails offline); a
    pyenv shim of a version that is not selected does not run, so each candidate is tried."""
    pyenv = sorted((Path.home() / ".pyenv" / "versions").glob("3.12*/bin/python3.12"))
    for candidate in [str(p) for p in reversed(pyenv)] + [shutil.which("python3.12") or ""]:
        if not candidate:
            continue
        if subprocess.run([candidate, "-V"], capture_output=True, check=False).returncode == 0:
            return candidate
    return "3.12"


def run_inference_perf(ctx: Ctx, url: str, c: int, n: int, *, timed: bool) -> Result:
    folder = ctx.folder("inference-perf")
    a = ctx.args
    workers = os.cpu_count() or 1
    config = {
        "load": {
            "type": "concurrent",
            "stages": [{"num_requests": c, "concurrency_level": c}] * timed
            + [{"num_requests": n, "concurrency_level": c}],
            "num_workers": workers,
            "worker_max_concurrency": c,
        },
        "api": {"type": "completion", "streaming": True},
        "server": {"type": "vllm", "model_name": "tiny", "base_url": url, "ignore_eos": True},
        "tokenizer": {"pretrained_model_name_or_path": str(ctx.model)},
        "data": {
            "type": "random",
            "input_distribution": {"type": "fixed", "mean": a.isl, "min": a.isl, "max": a.isl},
            "output_distribution": {
                "type": "fixed",
                "mean": a.tokens,
                "min": a.tokens,
                "max": a.tokens,
            },
        },
        "report": {"request_lifecycle": {"summary": True, "per_stage": True}},
        "storage": {"local_storage": {"path": str(folder / "report")}},
    }
    (folder / "config.yml").write_text(json.dumps(config))  # JSON is YAML
    cmd = ["uvx", "--python", _python312(), "--from", f"inference-perf=={INFERENCE_PERF_VERSION}",
           "inference-perf", "-c", str(folder / "config.yml")]  # fmt: skip
    out, cpu, wall = _timed(cmd, cwd=folder)
    export = folder / "report" / f"stage_{int(timed)}_lifecycle_metrics.json"
    if out.returncode != 0 or not export.is_file():
        raise PeerError(f"inference-perf exited {out.returncode}: {_tail(out)}")
    d = json.loads(export.read_text())
    s = d["successes"]
    ok = int(s["count"])
    duration = float(d["benchmark_time_seconds"])
    result: Result = {
        "completed": ok,
        "failed": n - ok,
        "req_s": ok / duration,
        "out_tok_s": float(s["throughput"]["output_tokens_per_sec"]),
        "cpu_s": cpu,
        "wall_s": wall,
    }
    if timed:  # seconds; inter_token_latency pools every gap
        ttft, itl = s["latency"]["time_to_first_token"], s["latency"]["inter_token_latency"]
        result.update(ttft_p50=ttft["median"] * 1e3, ttft_p99=ttft["p99"] * 1e3,
                      itl_p50=itl["median"] * 1e3, itl_p99=itl["p99"] * 1e3,
                      itl_kind="pooled")  # fmt: skip
    return result


Runner = Callable[..., Result]
RUNNERS: dict[str, Runner] = {
    "ours": run_ours,
    "aiperf": run_aiperf,
    "guidellm": run_guidellm,
    "inference-perf": run_inference_perf,
}


# -- report ---------------------------------------------------------------------------------------
def _row(name: str, c: int, r: Result) -> str:
    return (
        f"{name:<14} c={c:<5} {r['completed']:>6} ok {r['failed']:>4} failed  "
        f"{r['req_s']:>9.1f} req/s  {r['out_tok_s']:>11.1f} out tok/s  "
        f"client CPU {r['cpu_s']:>6.1f} s over {r['wall_s']:>5.1f} s wall"
    )


def _timing_row(name: str, c: int, r: Result, truth: ScheduleTruth, late: Result) -> str:
    if "ttft_p50" not in r:
        return f"{name:<14} c={c:<5} timing: no TTFT/ITL reported"
    kind: ItlKind = r["itl_kind"]
    e = build_distribution_error(
        truth, ttft_p50_ms=r["ttft_p50"], ttft_p99_ms=r["ttft_p99"], itl_p50_ms=r["itl_p50"],
        itl_p99_ms=r["itl_p99"], itl_kind=kind,
    )  # fmt: skip
    line = (
        f"{name:<14} c={c:<5} timing error vs schedule: TTFT p50 {e.ttft_p50_ms:+7.2f} "
        f"p99 {e.ttft_p99_ms:+7.2f} ms, ITL ({kind}) p50 {e.itl_p50_ms:+6.2f} "
        f"p99 {e.itl_p99_ms:+6.2f} ms"
    )
    paired = r.get("paired")
    if paired:
        line += (
            f"; per request |err| TTFT p50 {paired['ttft_p50_ms']:.2f} p99 "
            f"{paired['ttft_p99_ms']:.2f}, ITL p50 {paired['itl_p50_ms']:.2f} p99 "
            f"{paired['itl_p99_ms']:.2f} ms"
        )
    delivery = r.get("delivery")
    if delivery:
        line += (
            f"; vs writes ({r.get('stamps', '?')} stamps) first token p50 "
            f"{delivery['ttft_p50_ms']:.2f} p99 {delivery['ttft_p99_ms']:.2f}, ITL p50 "
            f"{delivery['itl_p50_ms']:.2f} p99 {delivery['itl_p99_ms']:.2f} ms"
        )
    if late.get("p99_ms") is not None:
        line += f" (server writes late p50 {late['p50_ms']:.2f} p99 {late['p99_ms']:.2f} ms)"
    return line


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer requests per level")
    p.add_argument("--clients", default="ours," + ",".join(PEERS), help="comma-separated")
    p.add_argument("--tokens", type=int, default=64, help="output tokens per response")
    p.add_argument("--isl", type=int, default=128, help="prompt tokens")
    p.add_argument("--per-level", type=int, help="min requests per level (throughput pass)")
    p.add_argument("--ttft-ms", type=float, default=100.0, help="timing pass: nominal TTFT")
    p.add_argument("--itl-ms", type=float, default=50.0, help="timing pass: gap between tokens")
    p.add_argument("--jitter", type=float, default=0.2, help="each time x 1 + U(-j, j)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--httpx", action="store_true", help="also ours on httpx (slow: minutes)")
    p.add_argument(
        "--loop-stamps", action="store_true", help="ours times the event loop's reads (A/B)"
    )
    p.add_argument(
        "--worker-ours", choices=["http1", "http1-loop", "httpx"], help=argparse.SUPPRESS
    )
    p.add_argument("--url", help=argparse.SUPPRESS)
    p.add_argument("--prompts", help=argparse.SUPPRESS)
    p.add_argument("--concurrency", type=int, help=argparse.SUPPRESS)
    p.add_argument("--requests", type=int, help=argparse.SUPPRESS)
    p.add_argument("--warmup", type=int, default=0, help=argparse.SUPPRESS)  # timing pass
    return p


def _measure(ctx: Ctx, name: str, url: str, c: int, n: int, *, timed: bool) -> Result | str:
    try:
        return RUNNERS[name](ctx, url, c, n, timed=timed)
    except PeerError as exc:
        return str(exc)


def main() -> None:
    args = _parser().parse_args()
    if args.worker_ours:
        worker_ours(args)
        return
    clients = [c.strip() for c in args.clients.split(",") if c.strip()]
    unknown = sorted(set(clients) - set(RUNNERS))
    if unknown:
        raise SystemExit(f"unknown clients {unknown}; choose from {sorted(RUNNERS)}")
    per_level = args.per_level or (500 if args.quick else 2000)
    work = Path(tempfile.mkdtemp(prefix="client-capacity-"))
    model = write_tiny_model(work / "model")
    prompts = build_synthetic_prompts(
        read_tokenizer(model), count=256, isl=args.isl, osl=args.tokens, range_ratio=1.0, seed=0
    )
    prompts_file = work / "prompts.jsonl"
    prompts_file.write_text("".join(json.dumps({"text": p.text}) + "\n" for p in prompts))
    ctx = Ctx(args, work, model, prompts_file)
    schedule = _schedule(args)
    truth = build_truth(schedule, [p.text for p in prompts], args.tokens)
    print(
        f"machine: {os.cpu_count()} cores; prompts: {args.isl} tokens; {args.tokens} one-token "
        f"chunks + usage; throughput server: at once; timing server: TTFT {args.ttft_ms:g} ms, "
        f"gaps {args.itl_ms:g} ms, jitter +-{args.jitter:.0%}; truth TTFT p50 "
        f"{truth.ttft_p50_ms:.2f} p99 {truth.ttft_p99_ms:.2f} ms, ITL pooled p50 "
        f"{truth.itl_p50_ms['pooled']:.2f} p99 {truth.itl_p99_ms['pooled']:.2f} ms, per-request "
        f"p50 {truth.itl_p50_ms['per-request']:.2f} p99 {truth.itl_p99_ms['per-request']:.2f} ms"
    )
    print(f"peers: aiperf `{AIPERF}`, guidellm `{GUIDELLM}`, inference-perf "
          f"{INFERENCE_PERF_VERSION} (uvx, Python {_python312()})", flush=True)  # fmt: skip
    best: dict[str, float] = {}
    broken: dict[str, str] = {}
    ours_top = 0.0
    try:
        for c in CONCURRENCIES:
            n = max(per_level, (2 if args.quick else 4) * c)
            timing_n = max(128, (1 if args.quick else 2) * c)
            load = " ".join(f"{x:.2f}" for x in os.getloadavg())
            print(f"-- {c} streams (load average {load})", flush=True)
            for name in clients:
                if args.quick and name in SLOW_PEERS and c != CONCURRENCIES[-1]:
                    continue
                if name in broken:
                    print(f"{name:<14} c={c:<5} unavailable: {broken[name]}", flush=True)
                    continue
                with serve(args, timed=False) as url:
                    got = _measure(ctx, name, url, c, n, timed=False)
                if isinstance(got, str):
                    broken[name] = got
                    print(f"{name:<14} c={c:<5} unavailable: {got}", flush=True)
                    continue
                print(_row(name, c, got), flush=True)
                if c == CONCURRENCIES[-1]:
                    if name == "ours":
                        ours_top = got["out_tok_s"]
                    else:
                        best[name] = got["out_tok_s"]
                if name == "ours" and args.httpx:
                    with serve(args, timed=False) as url:
                        on_httpx = run_ours(ctx, url, c, n, timed=False, transport="httpx")
                    print(_row("ours-httpx", c, on_httpx), flush=True)
                with serve(args, timed=True) as url:
                    if name == "ours" and args.loop_stamps:
                        timed: Result | str = run_ours(
                            ctx, url, c, timing_n, timed=True, transport="http1-loop"
                        )
                    else:
                        timed = _measure(ctx, name, url, c, timing_n, timed=True)
                    late = server_lateness(url)
                if isinstance(timed, str):
                    print(f"{name:<14} c={c:<5} timing unavailable: {timed}", flush=True)
                else:
                    print(_timing_row(name, c, timed, truth, late), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if best and ours_top:
        peer = max(best, key=lambda k: best[k])
        print(f"ratio ours/best-peer: {ours_top / best[peer]:.2f} (best peer: {peer})")
    else:
        print(f"ratio ours/best-peer: n/a (no peer ran: {broken or 'none selected'})")
    if "aiperf" in best and best["aiperf"] > 0 and ours_top:
        print(f"ratio ours/aiperf: {ours_top / best['aiperf']:.2f}")
    else:
        print(f"ratio ours/aiperf: n/a (aiperf unavailable: {broken.get('aiperf', 'not run')})")


if __name__ == "__main__":
    main()
