"""Status reporter against a real collector on 127.0.0.1 (and closed / silent ports)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
import typing
from pathlib import Path

import msgspec
import pytest
from rep_collector import closed_port_url, running_collector, silent_server

from srt_planner import plan_job
from srt_runtime.clock import SystemClock
from srt_runtime.reporting._common import merge_endpoints
from srt_runtime.reporting.errors import ReportingConfigError
from srt_runtime.reporting.status import (
    JobCreate,
    JobUpdate,
    StatusReporter,
    announce_job,
    check_status_config,
    send_job_create,
)
from srt_runtime.reporting.status_sink import (
    STAGE_MAP,
    RemoteStatusSink,
    build_job_update,
    build_started_metadata,
)
from srt_runtime.status import FileStatusSink, Stage
from srt_schema.cluster import ClusterConfig
from srt_schema.recipe import Recipe, ReportingStatusConfig


class Logs:
    def __init__(self) -> None:
        self.lines: list[tuple[int, str]] = []

    def __call__(self, level: int, message: str) -> None:
        self.lines.append((level, message))

    def at(self, level: int) -> list[str]:
        return [m for lvl, m in self.lines if lvl == level]


def _update(message: str = "Running benchmark") -> JobUpdate:
    return JobUpdate(
        status="benchmark", stage="benchmark", message=message, updated_at="2026-01-01T00:00:00Z"
    )


def test_endpoints_are_merged_stripped_and_deduplicated() -> None:
    assert merge_endpoints("http://a/", ["http://b", "http://a", " http://c// ", ""]) == (
        "http://a",
        "http://b",
        "http://c",
    )
    assert merge_endpoints(None, None) == ()


def test_no_endpoint_disables_reporting_without_network() -> None:
    reporter = StatusReporter.from_config(ReportingStatusConfig(), "4242", {})
    assert not reporter.enabled
    assert reporter.send(_update()) is False
    assert reporter.close(1.0).events == 0


def test_every_event_reaches_every_endpoint_with_the_bearer_token() -> None:
    with running_collector() as (url_a, state_a), running_collector() as (url_b, state_b):
        config = ReportingStatusConfig(
            endpoint=url_a + "/", endpoints=(url_b, url_a), token_env="MY_TOK"
        )
        reporter = StatusReporter.from_config(config, "4242", {"MY_TOK": "s3cr3t"}, cluster="lab")
        assert reporter.endpoints == (url_a, url_b)
        for i in range(3):
            assert reporter.send(_update(f"event {i}"))
        summary = reporter.close(5.0)
    assert summary.delivered == {url_a: 3, url_b: 3}
    assert summary.lost == {url_a: 0, url_b: 0}
    for state in (state_a, state_b):
        puts = state.of("PUT", "/api/jobs/4242")
        assert [json.loads(r.body)["message"] for r in puts] == ["event 0", "event 1", "event 2"]
        assert all(r.headers["Authorization"] == "Bearer s3cr3t" for r in puts)
        assert json.loads(puts[0].body)["metadata"] == {"cluster": "lab"}
        assert "started_at" not in json.loads(puts[0].body)  # nulls are left out


def test_unset_token_sends_no_authorization_header() -> None:
    with running_collector() as (url, state):
        reporter = StatusReporter.from_config(ReportingStatusConfig(endpoint=url), "4242", {})
        reporter.send(_update())
        reporter.close(5.0)
    (put,) = state.of("PUT", "/api/jobs/4242")
    assert "Authorization" not in put.headers


def test_redirect_is_not_followed_and_warned_once() -> None:
    logs = Logs()
    with running_collector() as (url, state):
        state.status_code = 302
        reporter = StatusReporter((url,), "4242", token="t", log=logs)
        reporter.send(_update())
        reporter.send(_update())
        summary = reporter.close(5.0)
    assert len(state.of("PUT", "/api/jobs/4242")) == 2  # one per event: no retry, no follow
    assert summary.lost == {url: 2}
    (warning,) = logs.at(logging.WARNING)
    assert warning == (
        f"status update to {url}/api/jobs/4242 got HTTP 302 (a redirect, not followed): the "
        "collector is behind a login page or proxy; point reporting.status at the collector itself"
    )


def test_rejected_token_is_not_retried_and_names_the_variable() -> None:
    logs = Logs()
    with running_collector() as (url, state):
        state.status_code = 401
        reporter = StatusReporter((url,), "4242", token="bad", token_env="MY_TOK", log=logs)
        reporter.send(_update())
        reporter.close(5.0)
    assert len(state.of("PUT", "/api/jobs/4242")) == 1
    assert logs.at(logging.WARNING) == [
        f"status update to {url}/api/jobs/4242 got HTTP 401: check the bearer token in $MY_TOK"
    ]


def test_unreachable_collector_costs_the_job_nothing_and_is_reported_once() -> None:
    logs = Logs()
    down = closed_port_url()
    reporter = StatusReporter((down,), "4242", token="t", timeout=0.5, log=logs)
    for _ in range(5):
        assert reporter.send(_update())  # send only queues: test_hung_collector_is_bounded_by_close
    summary = reporter.close(5.0)
    assert summary.lost == {down: 5}
    (warning,) = logs.at(logging.WARNING)
    assert warning.startswith(
        f"status update to {down}/api/jobs/4242 lost after 2 attempts: Connect"
    )


def test_hung_collector_is_bounded_by_close() -> None:
    logs = Logs()
    with silent_server() as hung:
        reporter = StatusReporter((hung,), "4242", token="t", timeout=30.0, log=logs)
        started = time.monotonic()
        for _ in range(10):
            assert reporter.send(_update())  # queued: a send that waited would take 60 s
        queued = time.monotonic() - started
        summary = reporter.close(1.0)
        elapsed = time.monotonic() - started
    # 10 events x 2 attempts x 30 s would be 600 s; close gives up at its 1 s budget, with the
    # first event still waiting on the silent collector and the others never sent.
    assert queued < 20.0  # hang guard: one send that waited for the collector would take 60 s
    assert elapsed < 20.0  # hang guard: 20 x close's 1 s budget, a 30th of one 2-attempt send
    assert summary.events == 10
    assert sum(summary.delivered.values()) == 0 and summary.dropped >= 9
    assert any("gave up waiting after 1s" in m for m in logs.at(logging.WARNING))


def test_job_create_posts_to_every_endpoint() -> None:
    payload = JobCreate(job_id="4242", job_name="demo", submitted_at="2026-01-01T00:00:00Z")
    logs = Logs()
    with running_collector() as (url, state):
        assert send_job_create((url, closed_port_url()), payload, token="t", log=logs, timeout=1)
    (post,) = state.of("POST", "/api/jobs")
    assert json.loads(post.body) == {
        "job_id": "4242",
        "job_name": "demo",
        "submitted_at": "2026-01-01T00:00:00Z",
    }
    assert len(logs.at(logging.WARNING)) == 1


def test_every_supervisor_stage_has_an_api_mapping() -> None:
    assert set(typing.get_args(Stage)) == set(STAGE_MAP)


def test_final_events_carry_exit_code_and_logs_url() -> None:
    ok = build_job_update("cleanup", "completed", "", 0, now=0.0, logs_url="s3://b/p/")
    assert (ok.status, ok.stage, ok.message, ok.exit_code, ok.completed_at, ok.logs_url) == (
        "completed",
        "cleanup",
        "Benchmark completed successfully",
        0,
        "1970-01-01T00:00:00Z",
        "s3://b/p/",
    )
    bad = build_job_update("cleanup", "failed", "worker died", 3, now=0.0)
    assert (bad.status, bad.message, bad.exit_code) == (
        "failed",
        "Job failed with exit code 3: worker died",
        3,
    )
    first = build_job_update("starting", "running", "", None, now=0.0, started_metadata={"k": 1})
    assert (first.status, first.stage, first.started_at, first.metadata) == (
        "starting",
        "starting",
        "1970-01-01T00:00:00Z",
        {"k": 1},
    )
    assert build_job_update("workers", "running", "", None, now=0.0).message == "Starting workers"
    failed = build_job_update("health", "failed", "Workers failed health check", None, now=0.0)
    assert (failed.status, failed.stage) == ("failed", "frontend")
    cleaning = build_job_update("cleanup", "running", "", None, now=0.0, current="failed")
    assert (cleaning.status, cleaning.stage) == ("failed", "cleanup")


def test_remote_sink_keeps_the_local_record_and_reports(job_dir: Path) -> None:
    with running_collector() as (url, state):
        reporter = StatusReporter((url,), "4242", token=None)
        clock = SystemClock()
        sink = RemoteStatusSink(FileStatusSink(job_dir, "4242", clock), reporter, wall=clock.wall)
        sink.emit("starting", "running")
        sink.emit("benchmark", "running")
        sink.report_artifacts("s3://bucket/srtslurm/2026-01-01/4242/")
        sink.emit("cleanup", "completed", "", 0)
        reporter.close(5.0)
    sent = [json.loads(r.body) for r in state.of("PUT", "/api/jobs/4242")]
    assert [(d["status"], d["stage"], d["message"]) for d in sent] == [
        ("starting", "starting", "Job started"),
        ("benchmark", "benchmark", "Running benchmark"),
        ("benchmark", "cleanup", "Artifacts uploaded"),
        ("completed", "cleanup", "Benchmark completed successfully"),
    ]
    assert sent[-1]["logs_url"] == "s3://bucket/srtslurm/2026-01-01/4242/"
    local = (job_dir / "status_events.jsonl").read_text().splitlines()
    assert len(local) == 3


def test_config_check_names_the_bad_field() -> None:
    good = ReportingStatusConfig(endpoint="https://c.example/", endpoints=("http://10.0.0.1:8080",))
    assert check_status_config(good) == ("https://c.example", "http://10.0.0.1:8080")
    cases = [
        (
            ReportingStatusConfig(endpoint="collector:8080"),
            "$.reporting.status: endpoint 'collector:8080' is not an http:// or https:// URL; "
            "give the collector's base URL, e.g. http://collector.example:8080",
        ),
        (
            ReportingStatusConfig(endpoints=("http://",)),
            "$.reporting.status: endpoint 'http:' is not an http:// or https:// URL; give the "
            "collector's base URL, e.g. http://collector.example:8080",
        ),
        (
            ReportingStatusConfig(token_env="Bearer abc123"),
            "$.reporting.status.token_env: the value is not an environment variable name (not "
            "shown: it may be the token itself); name the variable that holds the token, e.g. "
            "SRTCTL_STATUS_TOKEN",
        ),
        (
            ReportingStatusConfig(logging_stream_interval=0.0),
            "$.reporting.status.logging-stream-interval: 0.0 must be a finite number of seconds "
            "> 0; omit it to disable streaming",
        ),
    ]
    for config, message in cases:
        with pytest.raises(ReportingConfigError) as err:
            check_status_config(config)
        assert str(err.value) == message


def test_malformed_endpoint_is_skipped_at_run_time_with_one_warning() -> None:
    logs = Logs()
    with running_collector() as (url, state):
        config = ReportingStatusConfig(endpoints=("ftp://x", url))
        reporter = StatusReporter.from_config(config, "4242", {}, log=logs)
        reporter.send(_update())
        summary = reporter.close(5.0)
    assert summary.delivered == {url: 1}
    assert logs.at(logging.WARNING) == [
        "reporting.status endpoint 'ftp://x' is not an http:// or https:// URL; it is ignored"
    ]
    assert len(state.of("PUT", "/api/jobs/4242")) == 1


def test_status_and_streaming_do_not_load_boto3() -> None:
    lean = (
        "import sys, srt_runtime.reporting.status, srt_runtime.reporting.stream, "
        "srt_runtime.reporting.status_sink; sys.exit(3 if 'boto3' in sys.modules else 0)"
    )
    assert subprocess.run([sys.executable, "-c", lean], check=False, timeout=60).returncode == 0


def test_announce_job_posts_the_record_with_the_named_token() -> None:
    payload = JobCreate(job_id="4242", job_name="j", submitted_at="2026-12-01T00:00:00Z")
    with running_collector() as (url, state):
        config = ReportingStatusConfig(endpoints=(url + "/", url), token_env="MY_TOKEN")
        assert announce_job(config, payload, {"MY_TOKEN": "s3cret"}, timeout=2) is True
    (post,) = state.of("POST", "/api/jobs")
    assert post.headers["Authorization"] == "Bearer s3cret"
    assert json.loads(post.body)["job_id"] == "4242"
    # Nothing configured: nothing sent, and the caller can tell.
    assert announce_job(None, payload, {}) is None
    assert announce_job(ReportingStatusConfig(), payload, {}) is None
    logs = Logs()
    closed = ReportingStatusConfig(endpoint=closed_port_url())
    assert announce_job(closed, payload, {}, log=logs, timeout=1) is False
    (warning,) = logs.at(logging.WARNING)
    assert warning.endswith(
        "failed after 2 attempts: ConnectError: [Errno 111] Connection "
        "refused; the run will still appear when it starts"
    )


def test_started_metadata_describes_the_run() -> None:
    recipe = msgspec.convert(
        {
            "schema": 2,
            "name": "dis",
            "model": {"path": "/m/qwen", "container": "c.sqsh", "precision": "fp8"},
            "resources": {"gpu_type": "h100", "gpus_per_node": 8},
            "engine": "vllm",
            "frontend": {"type": "dynamo"},
            "benchmark": {"type": "sa-bench", "isl": 8, "osl": 8, "concurrencies": [1]},
            "roles": {"prefill": {"nodes": 1, "workers": 2}, "decode": {"nodes": 1, "workers": 1}},
        },
        Recipe,
    )
    plan = plan_job(recipe, ClusterConfig(cluster="eos"), "n[0-1]", "7")
    doc = build_started_metadata(plan, log_dir="/out/7/logs", affinity_cpus=16, cpu_warning=None)
    assert doc == {
        "model": {"path": "/m/qwen", "precision": "fp8"},
        "resources": {
            "gpu_type": "h100",
            "gpus_per_node": 8,
            "decode_workers": 1,
            "prefill_workers": 2,
            "cpu_allocation": 16,
            "cpu_check": "ok",
        },
        "benchmark": {"type": "sa-bench"},
        "backend_type": "vllm",
        "frontend_type": "dynamo",
        "head_node": "n0",
        "log_dir": "/out/7/logs",
        "job_name": "dis",
        "cluster": "eos",
    }
    unnamed = plan_job(recipe, ClusterConfig(), "n[0-1]", "7")
    bare = build_started_metadata(unnamed, log_dir="/l")
    assert "cluster" not in bare and "cpu_check" not in bare["resources"]
    warned = build_started_metadata(unnamed, log_dir="/l", affinity_cpus=2, cpu_warning="low")
    assert warned["resources"]["cpu_check"] == "warning"
