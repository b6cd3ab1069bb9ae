"""Client capacity: our sa-bench client vs aiperf 0.13 against a server that is never the limit.

Both clients send the same prompts (synthetic, exactly --isl tokens of a tiny local tokenizer) at
the same concurrencies to the same local server, which answers every request at once with a
fixed stream of --tokens one-token chunks plus a usage chunk (`python -m srt_bench.testing`,
its own process). Each client runs as its own child process; its CPU time (user + system,
including the processes it spawns) is read from the kernel's accounting of reaped children.

    uv run --frozen python benchmarks/client_capacity.py
    AIPERF="aiperf" uv run --frozen python benchmarks/client_capacity.py   # a local aiperf
    uv run --frozen python benchmarks/client_capacity.py --httpx   # + the client on httpx

aiperf defaults to `uvx --from aiperf==0.13.0 aiperf` (installed from PyPI into uv's cache).
The last line is `ratio ours/aiperf: <x.xx>`: output tokens/s at the highest concurrency.
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
from pathlib import Path
from typing import Any

import httpx

from srt_bench.client import PreparedRequest, StreamClient, build_request_body
from srt_bench.loadgen import run_phase
from srt_bench.prompts import build_synthetic_prompts, read_tokenizer
from srt_bench.records import RequestRecord
from srt_bench.sse import DONE, SseDecoder, decode_chunk
from srt_bench.stats import build_phase_metrics
from srt_bench.testing import write_tiny_model

CONCURRENCIES = (64, 256, 1024)
AIPERF_DEFAULT = "uvx --from aiperf==0.13.0 aiperf"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_listening(port: int, deadline: float) -> None:
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise SystemExit(f"the fixed-stream server did not listen on 127.0.0.1:{port}")


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _requests_for(c: int, per_level: int) -> int:
    return max(per_level, 4 * c)


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


# -- sa-bench's client (and the httpx variant) in a child process --------------------------------
def worker_ours(args: argparse.Namespace) -> None:
    texts = [json.loads(line)["text"] for line in Path(args.prompts).read_text().splitlines()]
    requests = [
        PreparedRequest(
            body=build_request_body(
                api="completions",
                model="tiny",
                prompt=texts[i % len(texts)],
                max_tokens=args.tokens,
                ignore_eos=True,
            ),
            prompt_tokens=args.isl,
        )
        for i in range(args.requests)
    ]

    async def main() -> dict[str, Any]:
        client: StreamClient | HttpxSender
        if args.worker_ours == "httpx":
            client = HttpxSender(args.url, args.concurrency)
        else:
            client = StreamClient(
                endpoint=args.url, api="completions", reuse_connections=True, timeout_seconds=600
            )
        try:
            run = await run_phase(
                client, requests, concurrency=args.concurrency, rate=float("inf"), seed=0
            )
        finally:
            await client.aclose()
        m = build_phase_metrics(
            run.records, duration=run.duration, total_gpus=1, percentiles=(99.0,)
        )
        return {
            "completed": m.completed,
            "failed": m.failed,
            "duration": m.duration,
            "req_s": m.request_throughput,
            "out_tok_s": m.output_throughput,
            "output_tokens": m.total_output_tokens,
        }

    print(json.dumps(asyncio.run(main())))


def run_ours(
    url: str, prompts: Path, c: int, n: int, args: argparse.Namespace, *, transport: str = "http1"
) -> dict[str, Any]:
    cmd = [
        sys.executable, __file__, "--worker-ours", transport, "--url", url,
        "--prompts", str(prompts),
        "--concurrency", str(c), "--requests", str(n), "--tokens", str(args.tokens),
        "--isl", str(args.isl),
    ]  # fmt: skip
    before, t0 = _children_cpu(), time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall, cpu = time.monotonic() - t0, _children_cpu() - before
    if out.returncode != 0:
        raise SystemExit(f"our client failed:\n{out.stderr}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    result.update(cpu_s=cpu, wall_s=wall)
    return result


# -- aiperf ---------------------------------------------------------------------------------
def run_aiperf(
    aiperf: list[str], url: str, prompts: Path, model_dir: Path, c: int,
    *, n: int, args: argparse.Namespace, work: Path,
) -> dict[str, Any]:  # fmt: skip
    artifacts = work / f"aiperf_c{c}"
    cmd = [
        *aiperf,
        "profile", "--model", "tiny", "--url", url, "--endpoint-type", "completions",
        "--streaming", "--concurrency", str(c), "--request-count", str(n),
        "--input-file", str(prompts), "--custom-dataset-type", "single_turn",
        "--tokenizer", str(model_dir), "--use-server-token-count",
        "--extra-inputs", f"max_tokens:{args.tokens}", "--extra-inputs", "ignore_eos:true",
        "--ui-type", "none", "--artifact-dir", str(artifacts),
    ]  # fmt: skip
    before, t0 = _children_cpu(), time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=work)
    wall, cpu = time.monotonic() - t0, _children_cpu() - before
    export = artifacts / "profile_export_aiperf.json"
    if out.returncode != 0 or not export.is_file():
        tail = "\n".join((out.stdout + out.stderr).splitlines()[-15:])
        raise RuntimeError(f"aiperf exited {out.returncode}:\n{tail}")
    doc = json.loads(export.read_text())

    def avg(name: str) -> float:
        return float(doc[name]["avg"])

    completed = int(doc.get("request_count", {}).get("avg", 0))
    return {
        "completed": completed,
        "failed": n - completed,
        "duration": avg("benchmark_duration") if "benchmark_duration" in doc else float("nan"),
        "req_s": avg("request_throughput"),
        "out_tok_s": avg("output_token_throughput"),
        "output_tokens": int(doc.get("total_output_tokens", {}).get("avg", 0)),
        "cpu_s": cpu,
        "wall_s": wall,
    }


def _row(name: str, c: int, r: dict[str, Any]) -> str:
    return (
        f"{name:<7} c={c:<5} {r['completed']:>6} ok {r['failed']:>4} failed  "
        f"{r['req_s']:>9.1f} req/s  {r['out_tok_s']:>11.1f} out tok/s  "
        f"client CPU {r['cpu_s']:>6.1f} s over {r['wall_s']:>5.1f} s wall"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=64, help="output tokens per response")
    parser.add_argument("--isl", type=int, default=128, help="prompt tokens")
    parser.add_argument("--per-level", type=int, default=2000, help="min requests per level")
    parser.add_argument(
        "--httpx", action="store_true", help="also run the same client on httpx (slow: minutes)"
    )
    parser.add_argument("--worker-ours", choices=["http1", "httpx"], help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--prompts", help=argparse.SUPPRESS)
    parser.add_argument("--concurrency", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--requests", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker_ours:
        worker_ours(args)
        return

    work = Path(tempfile.mkdtemp(prefix="client-capacity-"))
    model_dir = write_tiny_model(work / "model")
    prompts = build_synthetic_prompts(
        read_tokenizer(model_dir), count=256, isl=args.isl, osl=args.tokens, range_ratio=1.0, seed=0
    )
    prompts_file = work / "prompts.jsonl"
    prompts_file.write_text("".join(json.dumps({"text": p.text}) + "\n" for p in prompts))
    aiperf = shlex.split(os.environ.get("AIPERF", AIPERF_DEFAULT))
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "srt_bench.testing", "--port", str(port),
         "--tokens", str(args.tokens)],
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    print(
        f"machine: {os.cpu_count()} cores; server: fixed stream of {args.tokens} one-token chunks "
        f"+ usage; prompts: {args.isl} tokens; aiperf: {' '.join(aiperf)}"
    )
    ours: dict[int, dict[str, Any]] = {}
    theirs: dict[int, dict[str, Any]] = {}
    aiperf_error: str | None = None
    if shutil.which(aiperf[0]) is None:
        aiperf_error = f"{aiperf[0]!r} not found on PATH"
    try:
        _wait_listening(port, time.monotonic() + 20)
        for c in CONCURRENCIES:
            n = _requests_for(c, args.per_level)
            ours[c] = run_ours(url, prompts_file, c, n, args)
            print(_row("ours", c, ours[c]), flush=True)
            if args.httpx:
                print(
                    _row("httpx", c, run_ours(url, prompts_file, c, n, args, transport="httpx")),
                    flush=True,
                )
            if aiperf_error is None:
                try:
                    theirs[c] = run_aiperf(
                        aiperf, url, prompts_file, model_dir, c, n=n, args=args, work=work
                    )
                    print(_row("aiperf", c, theirs[c]), flush=True)
                except RuntimeError as exc:
                    aiperf_error = str(exc)
            if aiperf_error is not None:
                print(f"aiperf  c={c:<5} unavailable: {aiperf_error.splitlines()[0]}", flush=True)
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)
    top = CONCURRENCIES[-1]
    if top in theirs and theirs[top]["out_tok_s"] > 0:
        print(f"ratio ours/aiperf: {ours[top]['out_tok_s'] / theirs[top]['out_tok_s']:.2f}")
    else:
        print(f"ratio ours/aiperf: n/a (aiperf unavailable: {aiperf_error})")


if __name__ == "__main__":
    main()
