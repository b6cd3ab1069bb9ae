"""Recent pull requests of ``reporting.ai_analysis.repos_to_search``, for the AI analysis.

The reference's agent runs the GitHub CLI with ``GH_TOKEN``; this build asks GitHub's search
API itself (one bounded request per repository, pull requests updated within
``pr_search_days``) and hands the list to the model with the logs. The token
(``ai_analysis.gh_token``, else ``GH_TOKEN``) is only ever put in the request header.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import httpx
import msgspec

__all__ = ["DEFAULT_GITHUB_API", "PullRequest", "build_search_query", "read_related_prs"]

DEFAULT_GITHUB_API = "https://api.github.com"
#: Per repository: the most recently updated pull requests listed.
PER_REPO = 10
REQUEST_TIMEOUT = 10.0


class PullRequest(msgspec.Struct, frozen=True, kw_only=True):
    repo: str
    number: int
    title: str
    url: str
    updated_at: str


class _Item(msgspec.Struct, frozen=True):
    number: int
    title: str
    html_url: str
    updated_at: str


class _Search(msgspec.Struct, frozen=True):
    items: list[_Item] = []


def build_search_query(repo: str, days: int, today: dt.date) -> str:
    """GitHub search syntax for ``repo``'s pull requests updated in the last ``days`` days."""
    since = today - dt.timedelta(days=days)
    return f"repo:{repo} is:pr updated:>={since.isoformat()}"


def read_related_prs(
    token: str,
    repos: Sequence[str],
    days: int,
    *,
    api_url: str,
    today: dt.date,
    transport: httpx.BaseTransport | None = None,
) -> tuple[list[PullRequest], list[str]]:
    """The pull requests found, and one line per repository whose search failed."""
    found: list[PullRequest] = []
    problems: list[str] = []
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json"}
    with httpx.Client(timeout=REQUEST_TIMEOUT, transport=transport) as client:
        for repo in repos:
            params = {
                "q": build_search_query(repo, days, today),
                "sort": "updated",
                "per_page": str(PER_REPO),
            }
            try:
                response = client.get(
                    f"{api_url.rstrip('/')}/search/issues", params=params, headers=headers
                )
            except httpx.HTTPError as exc:
                problems.append(f"{repo}: {type(exc).__name__}")
                continue
            if response.status_code != 200:
                problems.append(f"{repo}: HTTP {response.status_code}")
                continue
            try:
                items = msgspec.json.decode(response.content, type=_Search).items
            except msgspec.DecodeError as exc:
                problems.append(f"{repo}: unexpected body ({exc})")
                continue
            found += [
                PullRequest(
                    repo=repo,
                    number=i.number,
                    title=i.title,
                    url=i.html_url,
                    updated_at=i.updated_at,
                )
                for i in items
            ]
    return found, problems
