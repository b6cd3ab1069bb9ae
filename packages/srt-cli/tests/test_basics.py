"""--version, --help on every command, schema, shell completion, lazy imports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_testkit import Invoke

from srt_cli.main import COMMANDS
from srt_cli.version import RECIPE_SCHEMA_VERSIONS
from srt_schema.migrate._version import CURRENT_VERSION
from srt_schema.schemas import schema_text


def test_version_line(invoke: Invoke) -> None:
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.stdout == "srtctl 0.1.0; recipe schema 2; lockfile v2\n"


def test_version_names_the_schema_srt_schema_loads() -> None:
    assert RECIPE_SCHEMA_VERSIONS == (CURRENT_VERSION,)


def test_group_help_lists_every_command_with_examples(invoke: Invoke) -> None:
    result = invoke("--help")
    assert result.exit_code == 0
    for name in COMMANDS:
        assert f"  {name} " in result.stdout
    assert "Examples:" in result.stdout
    assert "Exit codes: 0 ok, 2 usage error or invalid recipe" in result.stdout


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_help_with_examples(invoke: Invoke, name: str) -> None:
    result = invoke(name, "--help")
    assert result.exit_code == 0, result.output
    assert "Examples:" in result.stdout
    assert f"srtctl {name}" in result.stdout.split("Examples:")[1]


def test_unknown_command_is_a_usage_error(invoke: Invoke) -> None:
    result = invoke("submit")
    assert result.exit_code == 2
    assert "No such command 'submit'" in result.stderr


def test_schema_prints_the_recipe_schema(invoke: Invoke) -> None:
    result = invoke("schema")
    assert result.exit_code == 0
    assert result.stdout == schema_text("recipe").rstrip("\n") + "\n"
    assert json.loads(result.stdout)["$defs"]["Recipe"]


def test_schema_cluster_to_file(invoke: Invoke, tmp_path: Path) -> None:
    target = tmp_path / "deep" / "cluster.json"
    result = invoke("schema", "--cluster", "--output", str(target))
    assert result.exit_code == 0
    assert json.loads(target.read_text()) == json.loads(schema_text("cluster"))
    assert result.stdout == ""


def _complete(env: dict[str, str]) -> str:
    out = subprocess.run(
        [sys.executable, "-c", "from srt_cli.main import main; main()"],
        env={**env, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout


def test_bash_completion_script() -> None:
    assert "_srtctl_completion()" in _complete({"_SRTCTL_COMPLETE": "bash_source"})


def test_completion_of_command_names() -> None:
    env = {"_SRTCTL_COMPLETE": "bash_complete", "COMP_WORDS": "srtctl dr", "COMP_CWORD": "1"}
    assert _complete(env).strip() == "plain,dry-run"


def test_help_imports_no_planner_or_schema() -> None:
    code = (
        "import sys\n"
        "from srt_cli.main import cli\n"
        "try:\n"
        "    cli.main(['--help'], prog_name='srtctl')\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('srt_schema', 'srt_planner', 'srt_runtime', 'msgspec', 'yaml'))\n"
        "print(heavy, file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr.strip() == "[]"
