"""The import table of docs/design.md#packages-and-imports, enforced by an AST scan of every
package."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ROOT / "packages"

WORKSPACE = {"srt_schema", "srt_planner", "srt_runtime", "srt_telemetry", "srt_bench", "srt_cli"}

# package -> workspace packages it may import (itself is always allowed)
ALLOWED: dict[str, set[str]] = {
    "srt_schema": set(),
    "srt_planner": {"srt_schema"},
    "srt_runtime": {"srt_schema", "srt_planner"},
    "srt_telemetry": set(),
    "srt_bench": {"srt_schema"},
    "srt_cli": WORKSPACE - {"srt_cli"},
}

# third-party modules each package may import (beyond the standard library)
THIRD_PARTY: dict[str, set[str]] = {
    "srt_schema": {"msgspec", "yaml", "ruamel"},
    "srt_planner": {"msgspec"},
    "srt_runtime": {"msgspec", "httpx", "boto3", "botocore", "yaml"},
    "srt_telemetry": {"msgspec", "httpx", "polars"},
    "srt_bench": {"msgspec", "httpx", "tokenizers", "huggingface_hub"},
    "srt_cli": {"msgspec", "click", "yaml", "ruamel", "mcp"},  # mcp: `srtctl mcp` only, lazily
}

# modules whose use in the pure packages would mean I/O
PURE_FORBIDDEN = {"subprocess", "socket", "os", "time", "datetime", "urllib", "http", "shutil"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def _sources(pkg: str) -> list[Path]:
    dist = "srt-" + pkg.removeprefix("srt_")
    return sorted((PACKAGES / dist / "src" / pkg).rglob("*.py"))


@pytest.mark.parametrize("pkg", sorted(ALLOWED))
def test_import_table(pkg: str) -> None:
    stdlib = set(sys.stdlib_module_names)
    problems = []
    for src in _sources(pkg):
        for mod in sorted(_imports(src)):
            if mod == pkg or mod in stdlib or mod == "__future__":
                continue
            if mod in WORKSPACE and mod not in ALLOWED[pkg]:
                problems.append(f"{src.relative_to(ROOT)}: imports {mod}, not allowed for {pkg}")
            elif mod not in WORKSPACE and mod not in THIRD_PARTY[pkg]:
                problems.append(f"{src.relative_to(ROOT)}: imports third-party {mod!r}")
    assert problems == []


def test_sources_found() -> None:
    for pkg in ALLOWED:
        assert _sources(pkg), f"no sources found for {pkg}"


def test_planner_does_no_io() -> None:
    problems = []
    for src in _sources("srt_planner"):
        bad = _imports(src) & PURE_FORBIDDEN
        if bad:
            problems.append(f"{src.relative_to(ROOT)}: imports {sorted(bad)}")
    assert problems == []


@pytest.mark.parametrize("pkg", ["srt_telemetry", "srt_schema"])
def test_import_loads_no_other_workspace_module(pkg: str) -> None:
    code = (
        f"import sys, {pkg}\n"
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0].startswith('srt_'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    loaded = {m.split(".")[0] for m in out.split(",") if m}
    assert loaded == {pkg}
