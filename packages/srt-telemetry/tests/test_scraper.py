from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import msgspec
import polars as pl
import pytest
from telemetry_fakes.replay import replay_server
from telemetry_testkit import DATA

from srt_telemetry.config import ScrapeConfig, ScrapeEndpoint
from srt_telemetry.errors import StorageError
from srt_telemetry.scraper import run_scraper


def _write_config(tmp_path: Path, endpoints: list[ScrapeEndpoint], **kw: object) -> Path:
    cfg = ScrapeConfig(
        storage=str(tmp_path / "tachometer" / "raw" / "scrape"),
        local_dir=str(tmp_path / "tachometer" / "local"),
        endpoints=tuple(endpoints),
        **kw,  # type: ignore[arg-type]
    )
    path = tmp_path / "scrape.json"
    path.write_bytes(msgspec.json.encode(cfg))
    return path


def _wait_for(pred, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, "condition not reached in time"  # hang guard: 20 s
        time.sleep(0.05)


def _replay_endpoints(url: object) -> list[ScrapeEndpoint]:
    return [
        ScrapeEndpoint(
            name="dcgm_n1",
            url=url("/dcgm"),  # type: ignore[operator]
            filter="dcgm",
            collect_interval_ms=100,
            node_metadata={"hostname": "n1"},
        ),
        ScrapeEndpoint(
            name="node_n1",
            url=url("/node"),  # type: ignore[operator]
            filter="node_exporter",
            collect_interval_ms=100,
        ),
        ScrapeEndpoint(
            name="cpu_power_n1",
            url=url("/cpu"),  # type: ignore[operator]
            collect_interval_ms=100,
            node_metadata={"hostname": "n1", "service": "cpu-power-exporter"},
        ),
    ]


def test_sigterm_compacts_into_final(
    tmp_path: Path, dcgm_text: str, node_text: str, spawn: Any
) -> None:
    bodies = {
        "/dcgm": dcgm_text,
        "/node": node_text,
        "/cpu": (DATA / "cpu-power-exporter.txt").read_text(),
    }
    with replay_server(bodies) as srv:
        cfg = _write_config(tmp_path, _replay_endpoints(srv.url), save_interval_secs=0.3)
        proc = spawn("scrape", "--config", str(cfg))
        local = tmp_path / "tachometer" / "local"
        _wait_for(lambda: local.is_dir() and len(list(local.glob("out-*.parquet"))) >= 2)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    summary = json.loads(out)
    final = tmp_path / "tachometer" / "raw" / "scrape" / "final.parquet"
    assert summary["final"] == str(final)
    df = pl.read_parquet(final)
    assert df.height == summary["final_rows"] == summary["rows_written"] > 0
    assert summary["errors"] == {}
    assert df.columns == [
        "scraper_endpoint",
        "metric_name",
        "metric_value",
        "histogram_bucket_lower",
        "histogram_bucket_upper",
        "histogram_sum",
        "histogram_count",
        "time_since_start",
        "timestamp_ns",
        "gpu",
        "hostname",
        "mode",
        "service",
        "metric_name_clean",
    ]
    assert df["metric_name"].is_sorted()
    assert set(df["scraper_endpoint"]) == {"dcgm_n1", "node_n1", "cpu_power_n1"}
    power = df.filter(pl.col("metric_name") == "gpu_power", pl.col("gpu") == "0")
    assert power.height == summary["scrapes"]["dcgm_n1"]
    assert set(power["metric_value"]) == {170.582}
    cpu = df.filter(pl.col("metric_name_clean") == "cpu_power_acpi_watts")
    assert cpu.height == 6 * summary["scrapes"]["cpu_power_n1"]
    assert set(cpu["service"]) == {"cpu-power-exporter"}
    # every scrape of an endpoint shares one timestamp; timestamps are epoch ns
    per_scrape = df.filter(pl.col("scraper_endpoint") == "dcgm_n1").group_by("timestamp_ns").len()
    assert per_scrape.height == summary["scrapes"]["dcgm_n1"]
    assert abs(df["timestamp_ns"].max() / 1e9 - time.time()) < 120  # type: ignore[operator]
    # intermediates are gone; nothing half-written remains
    assert sorted(p.name for p in local.iterdir()) == []


def test_sigkill_keeps_every_sealed_segment(
    tmp_path: Path, dcgm_text: str, node_text: str, spawn: Any
) -> None:
    bodies = {
        "/dcgm": dcgm_text,
        "/node": node_text,
        "/cpu": (DATA / "cpu-power-exporter.txt").read_text(),
    }
    with replay_server(bodies) as srv:
        cfg = _write_config(
            tmp_path, _replay_endpoints(srv.url), save_interval_secs=0.2, sync_interval_secs=0.7
        )
        proc = spawn("scrape", "--config", str(cfg))
        local = tmp_path / "tachometer" / "local"
        final = tmp_path / "tachometer" / "raw" / "scrape" / "final.parquet"
        _wait_for(lambda: final.exists() and len(list(local.glob("*.parquet"))) >= 2)
        sealed_before = {p.name: pl.read_parquet(p).height for p in local.glob("*.parquet")}
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    files = [*sorted(local.glob("*.parquet")), final]
    for p in files:  # every visible Parquet file is complete and readable
        pl.read_parquet(p)
    still = {p.name for p in local.glob("*.parquet")}
    # a sealed segment disappears only when a newer incomplete-N holds its rows
    for name in set(sealed_before) - still:
        assert any(s.startswith("incomplete-") for s in still), name
    # the leftovers compact into one file with every sealed row
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "srt_telemetry",
            "compact",
            str(local),
            "-o",
            str(tmp_path / "r.parquet"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    recovered = pl.read_parquet(tmp_path / "r.parquet")
    assert json.loads(out.stdout)["rows"] == recovered.height
    assert recovered.height >= pl.read_parquet(final).height > 0
    assert recovered.height >= max(sealed_before.values())


def test_real_node_exporter(tmp_path: Path, node_exporter: str) -> None:
    cfg = ScrapeConfig(
        storage=str(tmp_path / "s"),
        local_dir=str(tmp_path / "l"),
        endpoints=(
            ScrapeEndpoint(
                name="node_local",
                url=node_exporter,
                filter="node_exporter",
                collect_interval_ms=200,
                node_metadata={"hostname": "localhost"},
            ),
        ),
        save_interval_secs=0.5,
    )
    stop = threading.Event()
    result: list[object] = []
    t = threading.Thread(target=lambda: result.append(run_scraper(cfg, stop)))
    t.start()
    time.sleep(1.5)
    stop.set()
    t.join(timeout=60)
    stats = result[0]
    assert stats.errors == {}  # type: ignore[attr-defined]
    assert stats.scrapes["node_local"] >= 3  # type: ignore[attr-defined]
    df = pl.read_parquet(tmp_path / "s" / "final.parquet")
    names = set(df["metric_name_clean"])
    assert {"cpu_time_min", "cpu_time_max", "memory_MemTotal_bytes"} <= names
    assert "cpu_seconds_total" not in names
    modes = set(df.filter(pl.col("metric_name") == "cpu_time_max")["mode"])
    assert {"idle", "user", "system"} <= modes


def test_failing_endpoint_is_counted_and_others_continue(tmp_path: Path) -> None:
    body = (DATA / "dcgm-excerpt.txt").read_text()
    with replay_server({"/ok": body, "/bad": "x"}, status={"/bad": 500}) as srv:
        cfg = ScrapeConfig(
            storage=str(tmp_path / "s"),
            local_dir=str(tmp_path / "l"),
            endpoints=(
                ScrapeEndpoint(name="ok", url=srv.url("/ok"), collect_interval_ms=50),
                ScrapeEndpoint(name="bad", url=srv.url("/bad"), collect_interval_ms=50),
                ScrapeEndpoint(name="garbled", url=srv.url("/missing"), collect_interval_ms=50),
            ),
        )
        stop = threading.Event()
        timer = threading.Timer(0.6, stop.set)
        timer.start()
        stats = run_scraper(cfg, stop)
    assert stats.scrapes.get("bad", 0) == 0 and stats.errors["bad"] >= 3
    assert stats.errors["garbled"] >= 3
    assert stats.scrapes["ok"] >= 3 and "ok" not in stats.errors
    df = pl.read_parquet(tmp_path / "s" / "final.parquet")
    assert set(df["scraper_endpoint"]) == {"ok"}


def test_existing_storage_is_refused(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    cfg = ScrapeConfig(storage=str(tmp_path / "s"), local_dir=str(tmp_path / "l"), endpoints=())
    with pytest.raises(StorageError) as exc:
        run_scraper(cfg, threading.Event())
    assert str(exc.value) == (
        f"storage {tmp_path / 's'}: already exists; the scraper creates the storage leaf itself "
        "so one run never mixes with another; pass a fresh path"
    )


def test_no_rows_still_writes_an_empty_final(tmp_path: Path) -> None:
    cfg = ScrapeConfig(storage=str(tmp_path / "s"), local_dir=str(tmp_path / "l"), endpoints=())
    stop = threading.Event()
    stop.set()
    stats = run_scraper(cfg, stop)
    df = pl.read_parquet(tmp_path / "s" / "final.parquet")
    assert df.height == stats.final_rows == 0
    assert "metric_name_clean" in df.columns


def test_bad_url_is_a_config_error(tmp_path: Path) -> None:
    from srt_telemetry.errors import ConfigError

    cfg = ScrapeConfig(
        storage=str(tmp_path / "s"),
        local_dir=str(tmp_path / "l"),
        endpoints=(ScrapeEndpoint(name="x", url="ftp://host/metrics"),),
    )
    with pytest.raises(ConfigError) as exc:
        run_scraper(cfg, threading.Event())
    assert str(exc.value) == (
        "endpoint url 'ftp://host/metrics': not an http://, https:// or file:// URL; fix the "
        "endpoint in the scrape config"
    )
    assert not (tmp_path / "s").exists()


def test_file_url_endpoint(tmp_path: Path) -> None:
    cfg = ScrapeConfig(
        storage=str(tmp_path / "s"),
        local_dir=str(tmp_path / "l"),
        endpoints=(
            ScrapeEndpoint(
                name="f",
                url=f"file://{DATA / 'dcgm-excerpt.txt'}",
                filter="dcgm",
                collect_interval_ms=50,
            ),
        ),
    )
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    stats = run_scraper(cfg, stop)
    df = pl.read_parquet(tmp_path / "s" / "final.parquet")
    assert df.height == 12 * stats.scrapes["f"] > 0


def test_writer_removes_half_written_temp_files(tmp_path: Path) -> None:
    from srt_telemetry.rows import extra_columns
    from srt_telemetry.segments import SegmentWriter, list_segments

    (tmp_path / ".out-3.parquet.tmp-4242").write_bytes(b"PAR1 half")
    (tmp_path / "out-2.parquet").write_bytes(b"")  # a name only, to test numbering
    w = SegmentWriter(tmp_path, extra_columns([]), rows_per_parquet=10)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out-2.parquet"]
    assert list_segments(tmp_path) == [tmp_path / "out-2.parquet"]
    assert w.seal() is None  # nothing buffered, nothing written
