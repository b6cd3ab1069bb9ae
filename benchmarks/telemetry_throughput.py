"""srt-telemetry throughput: our Prometheus text parser + Parquet writer vs prometheus-client's
parser on the same ~50 MB of exporter text, the scraper's CPU use at 100 ms over 3 endpoints, and
`power collect`'s CPU use at 1 s over 4 replaying DCGM exporters x 8 GPUs.

Run from the repository root:  uv run --frozen python benchmarks/telemetry_throughput.py
(`--mb 50 --scrape-seconds 20 --power-seconds 20`, `--only power` for one part; corpus from
$SRT_CORPUS, default ../shared/corpus). Prints numbers; asserts nothing. Targets: >= 5x
prometheus-client's parse rate, < 5 % of one core for the scraper (issue 8); < 2 % of one core
for the power collector (issue 17).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl
from prometheus_client.parser import text_string_to_metric_families

from srt_telemetry import promtext
from srt_telemetry.config import ScrapeConfig, ScrapeEndpoint
from srt_telemetry.promtext import parse_text
from srt_telemetry.rows import build_batch, extra_columns
from srt_telemetry.segments import SegmentWriter

ROOT = Path(__file__).resolve().parents[1]
CPU_TEXT = (ROOT / "packages/srt-telemetry/tests/data/cpu-power-exporter.txt").read_text()


def corpus() -> tuple[str, str]:
    root = Path(os.environ.get("SRT_CORPUS", str(ROOT.parent / "shared" / "corpus")))
    return (
        (root / "metrics" / "dcgm-gb200.txt").read_text(),
        (root / "metrics" / "node-exporter-gb200.txt").read_text(),
    )


def clear_caches() -> None:
    promtext._label_cache.clear()
    promtext._label_cache[""] = ()
    promtext._name_ok.clear()
    promtext._head_cache.clear()


def bench_parse(dcgm: str, node: str, mb: float) -> None:
    unit = dcgm + node
    reps = max(1, int(mb * 1e6 / len(unit)))
    big = unit * reps
    size = len(big.encode())
    print(
        f"input: {size / 1e6:.1f} MB = {reps} x (DCGM {len(dcgm)} B + node exporter {len(node)} B)"
    )

    # best of several runs: this machine is shared, so the minimum is the least disturbed one
    t_ours = math.inf
    for _ in range(3):
        clear_caches()
        t0 = time.perf_counter()
        ours = parse_text(big)
        t_ours = min(t_ours, time.perf_counter() - t0)
        n = len(ours)
        del ours

    t_cold = math.inf
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps):  # every document parsed with empty memo tables (worst case)
            clear_caches()
            parse_text(unit)
        t_cold = min(t_cold, time.perf_counter() - t0)

    t_prom = math.inf
    for _ in range(2):
        t0 = time.perf_counter()
        n_prom = sum(len(f.samples) for f in text_string_to_metric_families(big))
        t_prom = min(t_prom, time.perf_counter() - t0)

    def line(name: str, secs: float, count: int) -> None:
        print(
            f"  {name:<46} {count / secs:>12,.0f} samples/s "
            f"{size / secs / 1e6:>7.1f} MB/s  ({secs:.2f} s)"
        )

    print("parse (best of 3 runs; prometheus-client best of 2):")
    line("srt_telemetry.promtext.parse_text", t_ours, n)
    line("srt_telemetry, label memo cleared per document", t_cold, n)
    line("prometheus_client text_string_to_metric_families", t_prom, n_prom)
    print(
        f"  speed-up: {t_prom / t_ours:.1f}x (memo warm), "
        f"{t_prom / t_cold:.1f}x (memo cold per document)"
    )


def bench_write(dcgm: str, node: str, mb: float) -> None:
    eps = [
        ScrapeEndpoint(name="dcgm_n1", url="x", filter="dcgm", node_metadata={"hostname": "n1"}),
        ScrapeEndpoint(
            name="node_n1", url="x", filter="node_exporter", node_metadata={"hostname": "n1"}
        ),
    ]
    extras = extra_columns(eps)
    reps = max(1, int(mb * 1e6 / len(dcgm + node)))
    size = 0
    with tempfile.TemporaryDirectory() as d:
        writer = SegmentWriter(Path(d), extras, rows_per_parquet=1_000_000)
        samples = 0
        t0 = time.perf_counter()
        for i in range(reps):
            for ep, text in zip(eps, (dcgm, node), strict=True):
                parsed = parse_text(text)
                samples += len(parsed)
                size += len(text)
                writer.append(
                    build_batch(parsed, ep, extras, timestamp_ns=i, time_since_start=i * 0.1)
                )
        writer.seal()
        secs = time.perf_counter() - t0
        files = sorted(Path(d).glob("out-*.parquet"))
        rows = sum(pl.scan_parquet(f).select(pl.len()).collect().item() for f in files)
        disk = sum(f.stat().st_size for f in files)
    print("parse + rows + Parquet (ZSTD) write, one scrape at a time:")
    print(
        f"  {samples / secs:,.0f} parsed samples/s, {rows / secs:,.0f} rows written/s, "
        f"{size / secs / 1e6:.1f} MB/s of exporter text; {rows:,} rows in {len(files)} segment(s), "
        f"{disk / 1e3:,.0f} kB on disk ({secs:.2f} s)"
    )


SERVER = r"""
import sys, http.server, json
bodies = json.loads(sys.stdin.read())
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        b = bodies[self.path].encode()
        self.send_response(200); self.send_header("Content-Length", str(len(b))); self.end_headers()
        self.wfile.write(b)
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"""


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_scrape(dcgm: str, node: str, seconds: float) -> None:
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(json.dumps({"/dcgm": dcgm, "/node": node, "/cpu": CPU_TEXT}))
    server.stdin.close()
    port = int(server.stdout.readline())
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as d:
        cfg = ScrapeConfig(
            storage=f"{d}/raw/scrape",
            local_dir=f"{d}/local",
            endpoints=(
                ScrapeEndpoint(
                    name="dcgm_n1", url=f"{base}/dcgm", filter="dcgm", collect_interval_ms=100
                ),
                ScrapeEndpoint(
                    name="node_n1",
                    url=f"{base}/node",
                    filter="node_exporter",
                    collect_interval_ms=100,
                ),
                ScrapeEndpoint(name="cpu_n1", url=f"{base}/cpu", collect_interval_ms=100),
            ),
            save_interval_secs=5.0,
            sync_interval_secs=60.0,
        )
        path = Path(d) / "scrape.json"
        import msgspec

        path.write_bytes(msgspec.json.encode(cfg))
        proc = subprocess.Popen(
            [sys.executable, "-m", "srt_telemetry", "scrape", "--config", str(path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        time.sleep(2.0)  # interpreter start-up and imports are not the steady state
        c0, w0 = _cpu_seconds(proc.pid), time.monotonic()
        time.sleep(seconds)
        c1, w1 = _cpu_seconds(proc.pid), time.monotonic()
        proc.terminate()
        out, _ = proc.communicate(timeout=120)
        server.terminate()
        server.wait()
    stats = json.loads(out)
    pct = 100 * (c1 - c0) / (w1 - w0)
    print(
        "scraper at 100 ms over 3 endpoints (DCGM, node exporter, CPU power), "
        f"{seconds:.0f} s steady state:"
    )
    print(
        f"  CPU {pct:.1f} % of one core; scrapes {stats['scrapes']}, errors {stats['errors']}, "
        f"final rows {stats['final_rows']:,}, shutdown {stats['shutdown_seconds']} s"
    )


REPLAY = (sys.executable, "-m", "srt_telemetry.testing", "replay-dcgm")


def _start_replays(capture: Path, nodes: int, gpus: int) -> list[tuple[subprocess.Popen[str], str]]:
    """`nodes` replaying DCGM exporters (real processes) of `capture`, `gpus` GPUs each."""
    out = []
    for k in range(nodes):
        args = ["--capture", str(capture), "--gpus", str(gpus), "--hostname", f"node-{k:02d}"]
        proc = subprocess.Popen(
            [*REPLAY, *args, "--curve", "linear:200:0.5", "--gpu-offset-w", "5"],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        out.append((proc, json.loads(proc.stdout.readline())["url"]))
    return out


def bench_power(seconds: float, nodes: int = 4, gpus: int = 8) -> None:
    import msgspec

    from srt_telemetry.config import ExpectedDevice, PowerConfig, PowerEndpoint

    root = Path(os.environ.get("SRT_CORPUS", str(ROOT.parent / "shared" / "corpus")))
    capture = root / "metrics" / "dcgm-gb200.txt"
    if not capture.is_file():  # the package's own excerpt of the same exporter
        capture = ROOT / "packages/srt-telemetry/tests/data/replay/dcgm-gb200-4gpu.txt"
    replays = _start_replays(capture, nodes, gpus)
    with tempfile.TemporaryDirectory() as d:
        hosts = [f"node-{k:02d}" for k in range(nodes)]
        cfg = PowerConfig(
            power_dir=f"{d}/power",
            result_root=d,
            endpoints=tuple(
                PowerEndpoint(hostname=h, url=url)
                for h, (_, url) in zip(hosts, replays, strict=True)
            ),
            expected_devices=tuple(
                ExpectedDevice(hostname=h, gpu_index=g) for h in hosts for g in range(gpus)
            ),
            expected_windows=(),
            collect_interval_ms=1000,
        )
        path = Path(d) / "power.json"
        path.write_bytes(msgspec.json.encode(cfg))
        proc = subprocess.Popen(
            [sys.executable, "-m", "srt_telemetry", "power", "collect", "--config", str(path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        ready = subprocess.run(
            [sys.executable, "-m", "srt_telemetry", "power", "wait-ready", "--config", str(path)],
            capture_output=True,
            text=True,
            check=False,
        )
        time.sleep(2.0)  # interpreter start-up and imports are not the steady state
        c0, w0 = _cpu_seconds(proc.pid), time.monotonic()
        e0 = sum(_cpu_seconds(p.pid) for p, _ in replays)
        time.sleep(seconds)
        c1, w1 = _cpu_seconds(proc.pid), time.monotonic()
        e1 = sum(_cpu_seconds(p.pid) for p, _ in replays)
        proc.terminate()
        out, _ = proc.communicate(timeout=60)
        state = json.loads((Path(d) / "power" / "collector.json").read_text())
        for p, _ in replays:
            p.terminate()
            p.wait(timeout=10)
    stats = json.loads(out)
    pct = 100 * (c1 - c0) / (w1 - w0)
    complete = stats["sample_row_count"] == stats["scrape_count"] * nodes * gpus
    print(
        f"power collect at 1 s over {nodes} replaying DCGM exporters x {gpus} GPUs "
        f"({capture.name}), {seconds:.0f} s steady state:"
    )
    print(
        f"  CPU {pct:.2f} % of one core; ready {ready.returncode == 0}, scrapes "
        f"{stats['scrape_count']}, rows {stats['sample_row_count']:,}, reasons "
        f"{stats['reason_codes']}, slowest scrape {1e3 * state['max_scrape_duration_seconds']:.1f} "
        f"ms; the {nodes} exporters together {100 * (e1 - e0) / (w1 - w0):.2f} %; every cycle "
        f"had all {nodes * gpus} GPUs: {complete}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mb", type=float, default=50.0)
    ap.add_argument("--scrape-seconds", type=float, default=20.0)
    ap.add_argument("--power-seconds", type=float, default=20.0)
    ap.add_argument("--only", choices=("parse", "write", "scrape", "power"))
    args = ap.parse_args()
    if args.only == "power":  # needs no corpus
        bench_power(args.power_seconds)
        return
    dcgm, node = corpus()
    if args.only in (None, "parse"):
        bench_parse(dcgm, node, args.mb)
    if args.only in (None, "write"):
        bench_write(dcgm, node, args.mb)
    if args.only in (None, "scrape"):
        bench_scrape(dcgm, node, args.scrape_seconds)
    if args.only in (None, "power"):
        bench_power(args.power_seconds)


if __name__ == "__main__":
    main()
