"""The benchmark's progress lines reach the supervisor's log, whole lines only."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from srt_runtime.progress import ProgressRelay


def test_complete_prefixed_lines_are_relayed_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log_file = tmp_path / "benchmark.out"
    relay = ProgressRelay(log_file, logging.getLogger("relay-test"))
    relay.poll()  # no file yet: nothing, no error
    with caplog.at_level(logging.INFO, logger="relay-test"):
        log_file.write_bytes(b"noise\n[srt-bench] concurrency 4: warmup\n[srt-bench] concur")
        relay.poll()
        with log_file.open("ab") as handle:
            handle.write(b"rency 4: 40/40 ok \xff\nother\n")
        relay.poll()
        relay.poll()
    assert [r.getMessage() for r in caplog.records] == [
        "[srt-bench] concurrency 4: warmup",
        "[srt-bench] concurrency 4: 40/40 ok \ufffd",
    ]
