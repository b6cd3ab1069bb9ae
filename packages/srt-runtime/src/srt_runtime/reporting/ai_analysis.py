"""AI failure analysis (docs/telemetry-and-bench.md#ai-analysis): after a failed run, send the
prompt and the tails of the run's logs to an OpenRouter-compatible chat-completions API and write
the answer to ``<log_dir>/ai_analysis.md``; ``ai_analysis.log`` records the steps.

The reference runs a coding agent in a container; this build makes one bounded HTTP request
instead (no container, no tool installs), so it works wherever the head node can reach the API.
The API key comes from ``reporting.ai_analysis.openrouter_api_key`` or ``OPENROUTER_API_KEY`` and
is only ever put in the request header. With a GitHub token (``ai_analysis.gh_token`` or
``GH_TOKEN``) the pull requests of ``repos_to_search`` updated in the last ``pr_search_days``
are searched first and listed for the model (``related_prs.py``). The request is bounded by
``timeout`` (900 s by default) and never changes the job's exit code.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
import msgspec

from srt_runtime.reporting._common import LogFn, null_log, run_bounded
from srt_runtime.reporting.related_prs import DEFAULT_GITHUB_API, PullRequest, read_related_prs
from srt_schema.recipe import AIAnalysisConfig
from srt_schema.timestamps import iso_seconds_z

__all__ = [
    "ANALYSIS_TIMEOUT",
    "DEFAULT_BASE_URL",
    "DEFAULT_MODEL",
    "DEFAULT_PROMPT",
    "DEFAULT_REPOS",
    "AnalysisResult",
    "build_prompt",
    "build_request",
    "read_log_excerpts",
    "run_ai_analysis",
    "should_analyse",
]

ANALYSIS_TIMEOUT = 900.0
DEFAULT_BASE_URL = "https://openrouter.ai/api/v1"
#: Overridable per call or with ``SRTCTL_AI_MODEL`` / ``SRTCTL_AI_BASE_URL``.
DEFAULT_MODEL = "anthropic/claude-sonnet-4"
DEFAULT_REPOS = ("sgl-project/sglang", "ai-dynamo/dynamo")
DEFAULT_PROMPT = (
    "An LLM serving benchmark job failed. Its logs are in {log_dir}; excerpts follow. "
    "Work out the root cause. Answer in Markdown with these sections: Root cause (one "
    "paragraph, naming the process, node and log file), Key errors (the decisive log lines, "
    "quoted), Related changes (issues or pull requests from the last {pr_days} days in {repos} "
    "that look related, if you know any), Next steps (what to change in the recipe or the "
    "cluster, most likely fix first)."
)
REPORT_FILE = "ai_analysis.md"
LOG_FILE = "ai_analysis.log"
_SUFFIXES = (".out", ".err", ".log")
#: Bytes taken from the end of each log file, and in total.
PER_FILE_BYTES = 16 * 1024
TOTAL_BYTES = 192 * 1024


class AnalysisResult(msgspec.Struct, frozen=True, kw_only=True):
    """``ran`` is False when analysis was not needed or not possible (``reason`` says why)."""

    ran: bool
    ok: bool
    reason: str
    report: str | None = None


class _Message(msgspec.Struct):
    content: str


class _Choice(msgspec.Struct):
    message: _Message


class _Completion(msgspec.Struct):
    choices: list[_Choice]


def should_analyse(config: AIAnalysisConfig | None, exit_code: int) -> bool:
    """Analysis runs only for a failed job with ``reporting.ai_analysis.enabled``."""
    return config is not None and config.enabled and exit_code != 0


def build_prompt(config: AIAnalysisConfig, log_dir: str) -> str:
    """The prompt with ``{log_dir}``, ``{repos}`` (comma-joined) and ``{pr_days}`` filled in.

    Only those three placeholders are replaced; other braces in a custom prompt stay as written.
    """
    repos = ", ".join(config.repos_to_search or DEFAULT_REPOS)
    text = config.prompt or DEFAULT_PROMPT
    for name, value in (
        ("log_dir", log_dir),
        ("repos", repos),
        ("pr_days", str(config.pr_search_days)),
    ):
        text = text.replace("{" + name + "}", value)
    return text


def read_log_excerpts(
    log_dir: Path, *, per_file: int = PER_FILE_BYTES, total: int = TOTAL_BYTES
) -> list[tuple[str, str]]:
    """``(relative path, tail text)`` of the run's logs: the orchestrator log and
    ``benchmark.out`` first, then the other ``.out/.err/.log`` files by path, within ``total``."""
    files = [
        p
        for p in log_dir.rglob("*")
        if p.suffix in _SUFFIXES and p.is_file() and p.name != LOG_FILE
    ]

    def _rank(path: Path) -> tuple[int, str]:
        rel = path.relative_to(log_dir).as_posix()
        first = rel.startswith("sweep_") or rel == "benchmark.out"
        return (0 if first else 1, rel)

    excerpts = []
    budget = total
    for path in sorted(files, key=_rank):
        if budget <= 0:
            break
        size = path.stat().st_size
        take = min(per_file, budget, size)
        if take <= 0:
            continue
        with path.open("rb") as handle:
            handle.seek(size - take)
            data = handle.read(take)
        budget -= len(data)
        excerpts.append((path.relative_to(log_dir).as_posix(), data.decode(errors="replace")))
    return excerpts


def build_request(
    prompt: str,
    excerpts: list[tuple[str, str]],
    model: str,
    prs: list[PullRequest] | None = None,
) -> dict[str, Any]:
    """The chat-completions body (pure)."""
    parts = [f"### {rel} (last {len(text)} characters)\n```\n{text}\n```" for rel, text in excerpts]
    if prs:
        listed = [f"- {p.repo}#{p.number} {p.title} ({p.url}, updated {p.updated_at})" for p in prs]
        parts.append("### Recently updated pull requests\n" + "\n".join(listed))
    return {
        "model": model,
        "messages": [
            {"role": "system", "content": prompt},
            {"role": "user", "content": "\n\n".join(parts) or "(no log files were found)"},
        ],
    }


def _post(
    url: str, body: dict[str, Any], key: str, timeout: float, transport: httpx.BaseTransport | None
) -> tuple[int, bytes]:
    with httpx.Client(
        timeout=httpx.Timeout(timeout), follow_redirects=False, transport=transport
    ) as client:
        response = client.post(url, json=body, headers={"Authorization": f"Bearer {key}"})
        return response.status_code, response.content


def _related_prs(
    config: AIAnalysisConfig,
    environ: Mapping[str, str],
    note: LogFn,
    transport: httpx.BaseTransport | None,
) -> list[PullRequest]:
    token = config.gh_token or environ.get("GH_TOKEN") or None
    if token is None:
        # Not a failure: the analysis runs on the logs alone.
        note(logging.INFO, "no GitHub token (GH_TOKEN): related pull requests not searched")
        return []
    repos = config.repos_to_search or DEFAULT_REPOS
    api = environ.get("SRTCTL_GITHUB_API_URL") or DEFAULT_GITHUB_API
    today = dt.datetime.now(dt.UTC).date()
    prs, problems = read_related_prs(
        token, repos, config.pr_search_days, api_url=api, today=today, transport=transport
    )
    for problem in problems:
        note(logging.WARNING, f"pull request search failed for {problem}")
    note(
        logging.INFO,
        f"found {len(prs)} pull requests updated in the last "
        f"{config.pr_search_days} days in {', '.join(repos)}",
    )
    return prs


def run_ai_analysis(
    config: AIAnalysisConfig | None,
    *,
    exit_code: int,
    log_dir: Path,
    environ: Mapping[str, str],
    log: LogFn = null_log,
    base_url: str | None = None,
    model: str | None = None,
    timeout: float = ANALYSIS_TIMEOUT,
    transport: httpx.BaseTransport | None = None,
) -> AnalysisResult:
    """Analyse a failed run; returns what happened and never raises for API trouble."""
    if config is None or not should_analyse(config, exit_code):
        return AnalysisResult(ran=False, ok=False, reason="not needed")
    key = config.openrouter_api_key or environ.get("OPENROUTER_API_KEY") or None
    if key is None:
        reason = (
            "AI analysis skipped: no API key (set OPENROUTER_API_KEY in the submitting shell or "
            "reporting.ai_analysis.openrouter_api_key in srtslurm.yaml)"
        )
        log(logging.ERROR, reason)
        return AnalysisResult(ran=False, ok=False, reason=reason)
    url = (base_url or environ.get("SRTCTL_AI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    url += "/chat/completions"
    chosen = model or environ.get("SRTCTL_AI_MODEL") or DEFAULT_MODEL
    journal = log_dir / LOG_FILE

    def _note(level: int, message: str) -> None:
        stamp = iso_seconds_z(dt.datetime.now(dt.UTC))
        with journal.open("a") as handle:
            handle.write(f"{stamp} {logging.getLevelName(level)} {message}\n")
        log(level, message)

    prs = _related_prs(config, environ, _note, transport)
    body = build_request(
        build_prompt(config, str(log_dir)), read_log_excerpts(log_dir), chosen, prs
    )
    _note(logging.INFO, f"asking {chosen} at {url} to analyse exit code {exit_code}")
    started = time.monotonic()
    finished, answer, error = run_bounded(
        lambda: _post(url, body, key, timeout, transport), timeout, name="srt-ai-analysis"
    )
    elapsed = time.monotonic() - started
    if not finished:
        reason = f"AI analysis at {url} timed out after {timeout:g}s"
    elif error is not None:
        reason = f"AI analysis at {url} failed: {type(error).__name__}: {error}"
    else:
        assert answer is not None
        status, content = answer
        if status != 200:
            reason = f"AI analysis at {url} got HTTP {status}: {content[:200]!r}"
        else:
            try:
                completion = msgspec.json.decode(content, type=_Completion)
                text = completion.choices[0].message.content
            except (msgspec.DecodeError, IndexError) as exc:
                reason = f"AI analysis at {url} returned an unexpected body: {exc}"
            else:
                (log_dir / REPORT_FILE).write_text(text.rstrip("\n") + "\n")
                _note(logging.INFO, f"wrote {REPORT_FILE} in {elapsed:.1f}s")
                return AnalysisResult(
                    ran=True, ok=True, reason="written", report=str(log_dir / REPORT_FILE)
                )
    _note(logging.WARNING, f"{reason}; {REPORT_FILE} was not written")
    return AnalysisResult(ran=True, ok=False, reason=reason)
