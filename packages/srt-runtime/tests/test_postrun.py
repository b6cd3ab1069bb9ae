"""Post-run steps: the dashboard is built by srt-telemetry as a process, best effort."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

from srt_runtime.postrun import build_dashboard

ROLLUP = {
    "benchmark_type": "sa-bench",
    "timestamp": "2026-11-29T15:34:50Z",
    "config": {"model": "tiny", "isl": 128, "osl": 64},
    "runs": [
        {
            "concurrency": 4,
            "throughput_toks": 5481.7,
            "request_throughput": 93.6,
            "ttft_mean_ms": 6.9,
            "ttft_p99_ms": 11.0,
            "tpot_mean_ms": 0.61,
            "tpot_p99_ms": 0.72,
            "itl_mean_ms": 0.60,
            "itl_p99_ms": 2.9,
            "e2el_mean_ms": 42.0,
            "completed_requests": 40,
            "total_input_tokens": 4615,
            "total_output_tokens": 2342,
        }
    ],
}


def test_dashboard_is_built_from_the_run_folder(tmp_path: Path) -> None:
    (tmp_path / "benchmark-rollup.json").write_text(json.dumps(ROLLUP))
    assert build_dashboard(tmp_path, python=sys.executable, log=logging.getLogger("t"))
    html = (tmp_path / "perf_dashboard.html").read_text()
    assert "<svg" in html and "http://" not in html.replace("http://www.w3.org", "")


def test_a_dashboard_failure_is_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    missing = tmp_path / "no-such-run"
    with caplog.at_level(logging.WARNING):
        assert not build_dashboard(missing, python=sys.executable, log=logging.getLogger("t"))
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and warnings[0].startswith("Dashboard not built")


def test_the_outcome_is_recorded_in_the_lockfile(tmp_path: Path) -> None:
    import yaml

    from srt_runtime.postrun import record_results
    from srt_runtime.reporting.lock_sections import build_integrity

    logs = tmp_path / "logs"
    logs.mkdir()
    (tmp_path / "config.yaml").write_text("schema: 2\nname: t\n")
    (logs / "benchmark-rollup.json").write_text(json.dumps(ROLLUP))
    (logs / "fingerprint_agg_w0.json").write_text(json.dumps({"python": "3.11.7"}))
    record_results(tmp_path, logs, log=logging.getLogger("t"))
    doc = yaml.safe_load((tmp_path / "recipe.lock.yaml").read_text())
    assert doc["name"] == "t"
    lock = doc["lock"]
    assert lock["results"] == ROLLUP
    assert lock["fingerprints"] == {"agg_w0": {"python": "3.11.7"}}
    assert list(lock)[-1] == "integrity"
    assert lock["integrity"] == build_integrity(lock)
