"""Log and capture streaming against a real collector on 127.0.0.1."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from rep_collector import closed_port_url, running_collector, silent_server

from srt_runtime.reporting.stream import LogStreamer, list_stream_files
from srt_schema.recipe import ReportingStatusConfig


class Logs:
    def __init__(self) -> None:
        self.lines: list[tuple[int, str]] = []

    def __call__(self, level: int, message: str) -> None:
        self.lines.append((level, message))

    def warnings(self) -> list[str]:
        return [m for level, m in self.lines if level == logging.WARNING]


def _logs(job_dir: Path) -> Path:
    log_dir = job_dir / "logs"
    (log_dir / "power").mkdir(parents=True, exist_ok=True)
    (log_dir / "sweep_4242.log").write_bytes(b"line one\nline two\n")
    (log_dir / "power" / "samples.csv").write_bytes(b"a,b\n1,2\n")
    (log_dir / "plan.json").write_bytes(b"{}")  # not a streamed suffix
    return log_dir


def test_files_are_listed_by_suffix_and_sorted(job_dir: Path) -> None:
    log_dir = _logs(job_dir)
    assert list_stream_files(log_dir) == [("power/samples.csv", 8), ("sweep_4242.log", 18)]


def test_from_config_needs_an_endpoint_and_an_interval(job_dir: Path) -> None:
    log_dir = job_dir / "logs"
    assert LogStreamer.from_config(None, "4242", log_dir, {}) is None
    only_url = ReportingStatusConfig(endpoint="http://127.0.0.1:9")
    assert LogStreamer.from_config(only_url, "4242", log_dir, {}) is None
    only_interval = ReportingStatusConfig(logging_stream_interval=1.0)
    assert LogStreamer.from_config(only_interval, "4242", log_dir, {}) is None
    both = ReportingStatusConfig(endpoint="http://127.0.0.1:9/", logging_stream_interval=2.0)
    streamer = LogStreamer.from_config(both, "4242", log_dir, {})
    assert streamer is not None
    assert (streamer.endpoints, streamer.interval) == (("http://127.0.0.1:9",), 2.0)


def test_offsets_advance_and_only_new_bytes_are_sent(job_dir: Path) -> None:
    log_dir = _logs(job_dir)
    with running_collector() as (url, state):
        streamer = LogStreamer((url,), "4242", log_dir, token="tok", interval=60, cluster="lab")
        assert streamer.flush()
        with (log_dir / "sweep_4242.log").open("ab") as handle:
            handle.write(b"line three\n")
        assert streamer.flush()
        assert streamer.stop()
    posts = state.of("POST", "/api/jobs/4242/logs")
    assert [(r.query["file"], r.query["offset"], r.query.get("final"), r.body) for r in posts] == [
        ("power/samples.csv", "0", None, b"a,b\n1,2\n"),
        ("sweep_4242.log", "0", None, b"line one\nline two\n"),
        ("sweep_4242.log", "18", None, b"line three\n"),
        ("power/samples.csv", "8", "1", b""),
        ("sweep_4242.log", "29", "1", b""),
    ]
    assert all(r.query["cluster"] == "lab" for r in posts)
    assert all(r.headers["Authorization"] == "Bearer tok" for r in posts)
    assert all(r.headers["Content-Type"] == "application/octet-stream" for r in posts)
    assert bytes(state.logs["sweep_4242.log"]) == b"line one\nline two\nline three\n"
    assert state.finals == {"sweep_4242.log", "power/samples.csv"}


def test_chunks_are_bounded_and_the_last_one_is_final(job_dir: Path) -> None:
    log_dir = job_dir / "logs"
    (log_dir / "benchmark.out").write_bytes(b"0123456789")
    with running_collector() as (url, state):
        streamer = LogStreamer((url,), "4242", log_dir, token=None, interval=60, chunk_size=4)
        assert streamer.stop()
    posts = state.of("POST", "/api/jobs/4242/logs")
    assert [(r.query["offset"], r.query.get("final"), r.body) for r in posts] == [
        ("0", None, b"0123"),
        ("4", None, b"4567"),
        ("8", "1", b"89"),
    ]


def test_a_refused_chunk_is_resent_and_the_endpoint_skipped_for_that_flush(job_dir: Path) -> None:
    log_dir = _logs(job_dir)
    logs = Logs()
    with running_collector() as (url, state):
        state.fail_log_posts = 1
        streamer = LogStreamer((url,), "4242", log_dir, token=None, interval=60, log=logs)
        assert not streamer.flush()
        assert len(state.of("POST", "/api/jobs/4242/logs")) == 1  # skipped after the failure
        assert streamer.acknowledged(url, "power/samples.csv") == 0
        assert streamer.flush()
        assert streamer.flush()  # nothing new: nothing sent
    assert bytes(state.logs["power/samples.csv"]) == b"a,b\n1,2\n"
    assert logs.warnings() == [
        f"log streaming to {url} failed: HTTP 500 from {url}/api/jobs/4242/logs; it is retried "
        "at the next flush (reported once)"
    ]


def test_an_ack_for_another_job_does_not_advance(job_dir: Path) -> None:
    log_dir = _logs(job_dir)
    logs = Logs()
    with running_collector() as (url, state):
        state.ack_job_id = "999"
        streamer = LogStreamer((url,), "4242", log_dir, token=None, interval=60, log=logs)
        assert not streamer.flush()
    assert streamer.acknowledged(url, "power/samples.csv") == 0
    assert logs.warnings() == [
        f"log streaming to {url} failed: log ack for power/samples.csv names job '999', stored=1;"
        " it is retried at the next flush (reported once)"
    ]


def test_segments_go_to_every_endpoint_in_order_then_are_deleted(job_dir: Path) -> None:
    log_dir = job_dir / "logs"
    outbox = job_dir / "tachometer-outbox"
    outbox.mkdir()
    (outbox / "out-10.parquet").write_bytes(b"B" * 7)
    (outbox / "out-2.parquet").write_bytes(b"A" * 3)
    (outbox / "current.arrow").write_bytes(b"open")  # not sealed
    with running_collector() as (url_a, state_a), running_collector() as (url_b, state_b):
        streamer = LogStreamer(
            (url_a, url_b), "4242", log_dir, token=None, interval=60, chunk_size=4
        )
        assert streamer.flush()
    for state in (state_a, state_b):
        posts = state.of("POST", "/api/jobs/4242/captures")
        assert [(r.query["file"], r.query["offset"], r.query["total"]) for r in posts] == [
            ("out-2.parquet", "0", "3"),
            ("out-10.parquet", "0", "7"),
            ("out-10.parquet", "4", "7"),
        ]
        assert bytes(state.captures["out-10.parquet"]) == b"B" * 7
    assert sorted(p.name for p in outbox.iterdir()) == ["current.arrow"]


def test_a_segment_stays_until_every_endpoint_has_it(job_dir: Path) -> None:
    log_dir = job_dir / "logs"
    outbox = job_dir / "tachometer-outbox"
    outbox.mkdir()
    (outbox / "out-1.parquet").write_bytes(b"data")
    logs = Logs()
    down = closed_port_url()
    with running_collector() as (url, state):
        streamer = LogStreamer((url, down), "4242", log_dir, token=None, interval=60, log=logs)
        assert not streamer.flush()
        assert not streamer.flush()
    assert (outbox / "out-1.parquet").exists()
    assert len(state.of("POST", "/api/jobs/4242/captures")) == 1  # not re-sent to the good one
    (warning,) = logs.warnings()
    assert warning.startswith(f"log streaming to {down} failed: ConnectError")


def test_the_thread_streams_periodically(job_dir: Path) -> None:
    log_dir = _logs(job_dir)
    with running_collector() as (url, state):
        streamer = LogStreamer((url,), "4242", log_dir, token=None, interval=0.05)
        streamer.start()
        deadline = time.monotonic() + 3.0
        while "sweep_4242.log" not in state.logs and time.monotonic() < deadline:
            time.sleep(0.02)
        assert streamer.stop()
    assert bytes(state.logs["sweep_4242.log"]) == b"line one\nline two\n"


def test_stop_is_bounded_when_the_collector_hangs(job_dir: Path) -> None:
    log_dir = _logs(job_dir)
    logs = Logs()
    with silent_server() as hung:
        streamer = LogStreamer(
            (hung,), "4242", log_dir, token=None, interval=0.05, timeout=60, log=logs
        )
        streamer.start()
        time.sleep(0.2)  # the periodic flush is now stuck on the silent collector
        started = time.monotonic()
        assert not streamer.stop(budget=1.0)
        elapsed = time.monotonic() - started
        # Read before the fake closes its connections: the abandoned flush then fails with a
        # reset and warns again, after the warning this test is about.
        warned = logs.warnings()
    assert elapsed < 20.0  # hang guard: 20 x the 1 s budget, below the 60 s request timeout
    assert warned[-1] == (
        f"log streaming: the final flush did not complete within 1s; local logs are retained in "
        f"{log_dir}"
    )
