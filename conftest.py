"""Options, markers and the corpus tier shared by every package's tests (pytest's root conftest).

The corpus tier: tests marked ``corpus`` read the public recipe corpus (``$SRT_CORPUS``, default
``<repo>/../shared/corpus``) or the reference plans (``$SRT_ORACLE``, default
``<repo>/../shared/oracle``), which live outside the repository. Without them those tests are
skipped with one line saying so; with ``SRT_REQUIRE_CORPUS=1`` (CI) a missing corpus fails the run.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent
CORPUS = Path(os.environ.get("SRT_CORPUS") or REPO.parent / "shared" / "corpus")
ORACLE = Path(os.environ.get("SRT_ORACLE") or REPO.parent / "shared" / "oracle")


def _missing() -> list[str]:
    missing = []
    if not (CORPUS / "INDEX.md").is_file():
        missing.append(f"no recipe corpus at {CORPUS} (set SRT_CORPUS)")
    if not (ORACLE / "plans").is_dir():
        missing.append(f"no reference plans at {ORACLE} (set SRT_ORACLE)")
    return missing


MISSING = _missing()
SKIP_LINE = (
    "corpus tier skipped: "
    + "; ".join(MISSING)
    + "; to run it put the corpus there (or export SRT_CORPUS=<folder with INDEX.md>) and run"
    " `make test` or `pytest -m corpus`"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite golden files instead of comparing them (review the diff before committing)",
    )


def _private_network(worker: str) -> None:
    """Move this pytest-xdist worker into a network namespace of its own, with only loopback.

    Local jobs bind the ports their plan names (frontend 8000, etcd 2379, NATS 4222, ...), so two
    of them on one network collide. In its own namespace every worker has its own 127.0.0.1 and
    the whole port range, and nothing it starts can reach beyond this machine. Children inherit
    the namespace; the worker talks to the controlling pytest over pipes, which are unaffected.
    Needs root (CAP_SYS_ADMIN) and iproute2's `ip`; without them a parallel run is refused.
    """
    import ctypes
    import shutil
    import subprocess

    ip = shutil.which("ip") or "/usr/sbin/ip"
    if os.geteuid() != 0 or not Path(ip).exists():
        raise pytest.UsageError(
            f"parallel tests (xdist worker {worker}) need root and iproute2's `ip` to give each "
            "worker a private network namespace; run serially with `-n 0`"
        )
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise pytest.UsageError(f"xdist worker {worker}: unshare(CLONE_NEWNET): {os.strerror(err)}")
    subprocess.run([ip, "link", "set", "lo", "up"], check=True)


#: unshare(2)'s flag for a new network namespace (linux/sched.h).
CLONE_NEWNET = 0x40000000


def pytest_configure(config: pytest.Config) -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        _private_network(worker)
    # Tests never reach the internet: uv and uvx (the aiperf runners) use only what the install
    # steps put in uv's cache instead of revalidating it against the package index.
    os.environ.setdefault("UV_OFFLINE", "1")
    # Lines tests add to the end of the terminal summary (the corpus-run tier's per-case lines).
    config.srt_summary_lines = []  # type: ignore[attr-defined]
    if MISSING and os.environ.get("SRT_REQUIRE_CORPUS") == "1":
        raise pytest.UsageError(
            "SRT_REQUIRE_CORPUS=1 but the corpus tier cannot run: " + "; ".join(MISSING)
        )


def pytest_report_header(config: pytest.Config) -> str:
    return SKIP_LINE if MISSING else f"corpus tier: {CORPUS} and {ORACLE}"


def pytest_runtest_setup(item: pytest.Item) -> None:
    # Raised here (not as a skip mark) so that pytest folds every skip into one summary line.
    if MISSING and item.get_closest_marker("corpus") is not None:
        pytest.skip(SKIP_LINE)


@pytest.hookimpl(trylast=True)  # after the conftests that add lines (tests/e2e/conftest.py)
def pytest_sessionfinish(session: pytest.Session) -> None:
    # An xdist worker hands its summary lines (corpus-run cases, screenshots, the e2e tier's
    # line) to the controlling pytest, which prints them (pytest_testnodedown below).
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["srt_summary_lines"] = list(getattr(session.config, "srt_summary_lines", []))


@pytest.hookimpl(optionalhook=True)  # an xdist hook: absent where pytest-xdist is not installed
def pytest_testnodedown(node: Any, error: object) -> None:
    lines = node.workeroutput.get("srt_summary_lines", []) if hasattr(node, "workeroutput") else []
    node.config.srt_summary_lines.extend(lines)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for line in getattr(terminalreporter.config, "srt_summary_lines", []):
        terminalreporter.write_line(line)
    if MISSING:
        terminalreporter.write_line(SKIP_LINE)
