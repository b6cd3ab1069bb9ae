"""``reporting.ai_analysis.gh_token``: the GitHub token authorises the search for related pull
requests, whose list reaches the model; the token itself is never written anywhere."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from rep_ai import running_ai

from srt_runtime.reporting.ai_analysis import run_ai_analysis
from srt_runtime.reporting.related_prs import build_search_query
from srt_schema.recipe import AIAnalysisConfig

GH = "canary-gh-token-77bb"
KEY = "canary-openrouter-key-66cc"


def _log_dir(job_dir: Path) -> Path:
    log_dir = job_dir / "logs"
    (log_dir / "sweep_1.log").write_text("ERROR decode worker died\n")
    return log_dir


def test_gh_token_reaches_the_analysis_never_a_file(job_dir: Path) -> None:
    log_dir = _log_dir(job_dir)
    config = AIAnalysisConfig(enabled=True, repos_to_search=("sgl-project/sglang",))
    with running_ai() as (base, state):
        api = base.removesuffix("/api/v1")
        environ = {"OPENROUTER_API_KEY": KEY, "GH_TOKEN": GH, "SRTCTL_GITHUB_API_URL": api}
        result = run_ai_analysis(
            config, exit_code=1, log_dir=log_dir, environ=environ, base_url=base, model="m"
        )
    assert result.ok
    ((path, headers),) = state.searches
    assert headers["Authorization"] == f"Bearer {GH}"
    query = parse_qs(urlsplit(path).query)["q"][0]
    assert query == build_search_query("sgl-project/sglang", 14, dt.datetime.now(dt.UTC).date())
    (body,) = state.bodies
    assert (
        "sgl-project/sglang#4242 Fix decode OOM with large batches"
        in (body["messages"][1]["content"])
    )
    for path_ in log_dir.rglob("*"):
        if path_.is_file():
            assert GH not in path_.read_text(errors="replace"), path_


def test_the_recipes_token_wins_and_without_one_no_search_is_made(job_dir: Path) -> None:
    log_dir = _log_dir(job_dir)
    with running_ai() as (base, state):
        api = base.removesuffix("/api/v1")
        environ = {"OPENROUTER_API_KEY": KEY, "GH_TOKEN": "env", "SRTCTL_GITHUB_API_URL": api}
        own = AIAnalysisConfig(enabled=True, gh_token=GH, repos_to_search=("a/b",))
        run_ai_analysis(own, exit_code=1, log_dir=log_dir, environ=environ, base_url=base)
        assert [h["Authorization"] for _, h in state.searches] == [f"Bearer {GH}"]
        state.searches.clear()
        del environ["GH_TOKEN"]
        run_ai_analysis(
            AIAnalysisConfig(enabled=True),
            exit_code=1,
            log_dir=log_dir,
            environ=environ,
            base_url=base,
        )
    assert state.searches == []
    journal = (log_dir / "ai_analysis.log").read_text()
    assert "no GitHub token (GH_TOKEN): related pull requests not searched" in journal
    assert GH not in journal
