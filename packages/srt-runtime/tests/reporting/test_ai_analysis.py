"""AI analysis against a local OpenRouter-compatible server (and a hanging one)."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from rep_ai import running_ai
from rep_collector import silent_server

from srt_runtime.reporting.ai_analysis import (
    DEFAULT_PROMPT,
    build_prompt,
    read_log_excerpts,
    run_ai_analysis,
    should_analyse,
)
from srt_schema.recipe import AIAnalysisConfig

KEY = "canary-openrouter-key-55aa"
ON = AIAnalysisConfig(enabled=True)


class Logs:
    def __init__(self) -> None:
        self.lines: list[tuple[int, str]] = []

    def __call__(self, level: int, message: str) -> None:
        self.lines.append((level, message))


def _logs(job_dir: Path) -> Path:
    log_dir = job_dir / "logs"
    (log_dir / "benchmark.out").write_text("benchmark started\n")
    (log_dir / "sweep_4242.log").write_text("x" * 100 + "\nERROR decode worker died\n")
    (log_dir / "node-01_decode_w0.out").write_text("CUDA out of memory\n")
    (log_dir / "plan.json").write_text("{}")
    return log_dir


def test_only_failed_runs_with_analysis_enabled_are_analysed() -> None:
    assert should_analyse(ON, 1)
    assert not should_analyse(ON, 0)
    assert not should_analyse(AIAnalysisConfig(), 1)
    assert not should_analyse(None, 1)


def test_prompt_placeholders() -> None:
    config = AIAnalysisConfig(
        prompt="look in {log_dir} at {repos} for {pr_days}d {other}", pr_search_days=3
    )
    assert build_prompt(config, "/logs") == (
        "look in /logs at sgl-project/sglang, ai-dynamo/dynamo for 3d {other}"
    )
    custom = AIAnalysisConfig(repos_to_search=("a/b",))
    assert "in a/b that" in build_prompt(custom, "/l")
    assert "{" not in build_prompt(AIAnalysisConfig(), "/l")
    assert DEFAULT_PROMPT.count("{") == 3


def test_excerpts_put_the_orchestrator_log_first_and_respect_the_budget(job_dir: Path) -> None:
    log_dir = _logs(job_dir)
    excerpts = read_log_excerpts(log_dir, per_file=30, total=50)
    assert excerpts == [
        ("benchmark.out", "benchmark started\n"),
        ("sweep_4242.log", "x" * 4 + "\nERROR decode worker died\n"),  # its last 30 bytes
        ("node-01_decode_w0.out", "y\n"),  # the 2 bytes left of the 50
    ]


def test_analysis_is_written_from_the_api_answer(job_dir: Path) -> None:
    log_dir = _logs(job_dir)
    with running_ai() as (base, state):
        result = run_ai_analysis(
            ON,
            exit_code=1,
            log_dir=log_dir,
            environ={"OPENROUTER_API_KEY": KEY},
            base_url=base,
            model="test/model",
        )
    assert (result.ran, result.ok, result.report) == (True, True, str(log_dir / "ai_analysis.md"))
    assert (log_dir / "ai_analysis.md").read_text() == state.answer
    (body,) = state.bodies
    assert body["model"] == "test/model"
    assert body["messages"][0]["content"] == build_prompt(ON, str(log_dir))
    assert "CUDA out of memory" in body["messages"][1]["content"]
    assert state.headers[0]["Authorization"] == f"Bearer {KEY}"
    journal = (log_dir / "ai_analysis.log").read_text()
    assert "wrote ai_analysis.md" in journal
    assert KEY not in journal


def test_missing_key_skips_with_an_error(job_dir: Path) -> None:
    logs = Logs()
    result = run_ai_analysis(ON, exit_code=2, log_dir=_logs(job_dir), environ={}, log=logs)
    assert (result.ran, result.ok) == (False, False)
    assert logs.lines == [
        (
            logging.ERROR,
            "AI analysis skipped: no API key (set OPENROUTER_API_KEY in the submitting shell or "
            "reporting.ai_analysis.openrouter_api_key in srtslurm.yaml)",
        )
    ]


def test_api_error_is_reported_once_and_writes_no_report(job_dir: Path) -> None:
    log_dir = _logs(job_dir)
    logs = Logs()
    with running_ai() as (base, state):
        state.status = 429
        result = run_ai_analysis(
            AIAnalysisConfig(enabled=True, openrouter_api_key=KEY),
            exit_code=1,
            log_dir=log_dir,
            environ={},
            base_url=base,
            log=logs,
        )
    assert (result.ran, result.ok) == (True, False)
    assert result.reason.startswith(f"AI analysis at {base}/chat/completions got HTTP 429: ")
    assert [m for level, m in logs.lines if level == logging.WARNING] == [
        f"{result.reason}; ai_analysis.md was not written"
    ]
    assert not (log_dir / "ai_analysis.md").exists()


def test_hanging_api_is_cut_at_the_timeout(job_dir: Path) -> None:
    log_dir = _logs(job_dir)
    with silent_server() as hung:
        started = time.monotonic()
        result = run_ai_analysis(
            ON,
            exit_code=1,
            log_dir=log_dir,
            environ={"OPENROUTER_API_KEY": KEY},
            base_url=hung,
            timeout=0.5,
        )
        elapsed = time.monotonic() - started
    assert result.reason == f"AI analysis at {hung}/chat/completions timed out after 0.5s"
    assert elapsed < 20.0  # hang guard: 40 x the 0.5 s timeout (the silent server never answers)
