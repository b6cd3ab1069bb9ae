"""Habits users bring from kubectl and SkyPilot: ``srtctl`` alone is help, ``list``/``get``,
``logs -f``, one machine-output option (``--json``) that never clashes with ``-o``, and messages
that name every allowed engine type and the sweep a placeholder is missing from."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from cli_testkit import DATA, Invoke

from srt_cli.main import COMMANDS, cli
from srt_planner import plan_job
from srt_runtime import FileStatusSink, SystemClock, write_plan
from srt_runtime.status import Stage, StatusValue
from srt_schema import ClusterConfig, load_recipe_text

SRTCTL = [sys.executable, "-c", "from srt_cli.main import main; main()"]


class StepClock(SystemClock):
    """Wall time 2026-11-29 15:00:00 UTC plus one second per call."""

    def __init__(self, start: float = 1_795_964_400.0) -> None:
        self.now = start

    def wall(self) -> float:
        self.now += 1.0
        return self.now


def make_job(
    base: Path, job_id: str, events: list[tuple[Stage, StatusValue, int | None]], start: float
) -> Path:
    """A job folder as the runtime writes it: plan.json and the status files (FileStatusSink)."""
    job_dir = base / job_id
    (job_dir / "logs").mkdir(parents=True)
    (job,) = load_recipe_text((DATA / "mocker-agg.yaml").read_text(), file="mocker-agg.yaml")
    plan = plan_job(job.recipe, ClusterConfig(), "node-01", job_id, log_dir=str(job_dir / "logs"))
    write_plan(plan, job_dir / "plan.json")
    sink = FileStatusSink(job_dir, job_id, StepClock(start))
    for stage, status, code in events:
        sink.emit(stage, status, "", code)
    return job_dir


DONE: list[tuple[Stage, StatusValue, int | None]] = [
    ("starting", "running", None),
    ("benchmark", "running", None),
    ("cleanup", "completed", 0),
]
FAILED: list[tuple[Stage, StatusValue, int | None]] = [
    ("starting", "running", None),
    ("workers", "running", None),
    ("cleanup", "failed", 3),
]


# -- srtctl alone -----------------------------------------------------------------------------


def test_srtctl_alone_prints_help_and_exits_0() -> None:
    done = subprocess.run(SRTCTL, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Usage: srtctl [OPTIONS] [COMMAND] [ARGS]...")
    assert "  list " in done.stdout
    assert done.stderr == ""


# -- list / get -------------------------------------------------------------------------------


def test_list_shows_every_job_of_the_output_folder(invoke: Invoke, tmp_path: Path) -> None:
    out = tmp_path / "out"
    make_job(out, "4242", FAILED, start=1_795_964_500.0)
    make_job(out, "local-20261129T150000Z", DONE, start=1_795_964_400.0)
    (out / "not-a-job").mkdir()

    result = invoke("list", "-o", str(out))

    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "JOB ID                  NAME        STATUS     STAGE    STARTED"
        "                        EXIT",
        "----------------------  ----------  ---------  -------  -----------------------------"
        "  ----",
        "local-20261129T150000Z  mocker-agg  completed  cleanup  2026-11-29T15:00:01.000+00:00  0",
        "4242                    mocker-agg  failed     cleanup  2026-11-29T15:01:41.000+00:00  3",
    ]
    assert invoke("get", "-o", str(out)).stdout == result.stdout


def test_list_json_is_one_document(invoke: Invoke, tmp_path: Path) -> None:
    out = tmp_path / "out"
    job_dir = make_job(out, "4242", FAILED, start=1_795_964_500.0)

    doc = json.loads(invoke("list", "-o", str(out), "--json").stdout)

    assert doc == {
        "output": str(out),
        "jobs": [
            {
                "job_id": "4242",
                "kind": "slurm",
                "job_name": "mocker-agg",
                "status": "failed",
                "stage": "cleanup",
                "started_at": "2026-11-29T15:01:41.000+00:00",
                "updated_at": "2026-11-29T15:01:43.000+00:00",
                "exit_code": 3,
                "job_dir": str(job_dir),
            }
        ],
    }


def test_list_of_an_empty_output_folder(invoke: Invoke, tmp_path: Path) -> None:
    result = invoke("list", "-o", str(tmp_path / "none"))
    assert result.exit_code == 0
    assert result.stdout == f"no jobs under {tmp_path / 'none'}\n"
    assert json.loads(invoke("get", "-o", str(tmp_path / "none"), "--json").stdout)["jobs"] == []


# -- logs -f ----------------------------------------------------------------------------------


def test_logs_dash_f_follows_until_the_job_has_ended(invoke: Invoke, tmp_path: Path) -> None:
    out = tmp_path / "out"
    job_dir = make_job(out, "local-20261129T150000Z", DONE, start=1_795_964_400.0)
    (job_dir / "logs" / "benchmark.out").write_text("one\ntwo\n")

    result = invoke("logs", "local-20261129T150000Z", "-o", str(out), "-p", "benchmark", "-f")

    assert result.exit_code == 0, result.output
    assert result.stdout == "one\ntwo\n"
    follow = invoke("logs", "local-20261129T150000Z", "-o", str(out), "-f")
    assert follow.exit_code == 2
    assert "--follow needs --process NAME" in follow.stderr


# -- one machine-output convention --------------------------------------------------------------


def _commands() -> dict[str, click.Command]:
    """Every name of the command table (an alias too) and the command it runs."""
    found = {}
    for name in sorted(COMMANDS):
        command = cli.get_command(click.Context(cli), name)
        assert command is not None, name
        found[name] = command
    return found


def test_no_command_uses_dash_o_for_an_output_format() -> None:
    for command in _commands().values():
        for param in command.params:
            if "-o" in param.opts:
                assert param.name == "output", command.name
                assert isinstance(param.type, click.Path), command.name
            assert "--format" not in param.opts and "--output-format" not in param.opts


def test_machine_output_is_json_on_every_reporting_command() -> None:
    with_json = {n for n, c in _commands().items() if any(p.opts == ["--json"] for p in c.params)}
    want = {
        "apply",
        "cancel",
        "compare",
        "dry-run",
        "get",
        "list",
        "logs",
        "monitor",
        "status",
        "validate",
        "wait",
    }
    assert with_json == want
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    assert "Machine output" in readme


# -- messages ------------------------------------------------------------------------------------


@pytest.fixture
def recipe(tmp_path: Path) -> Path:
    return tmp_path / "r.yaml"


def _validate(invoke: Invoke, recipe: Path, old: str, new: str) -> str:
    recipe.write_text((DATA / "mocker-agg.yaml").read_text().replace(old, new))
    result = invoke("validate", "-f", str(recipe))
    assert result.exit_code == 2, result.output
    return result.stderr


ENGINES = "'atom', 'sglang', 'tilert', 'trtllm', 'vllm', 'mocker'"


def test_a_misspelt_engine_type_lists_every_engine_type(invoke: Invoke, recipe: Path) -> None:
    said = _validate(invoke, recipe, "  type: mocker\n", "  type: sglng\n")
    assert said == (
        f"error: {recipe}: $.engine.type: 'sglng' is not allowed; expected one of {ENGINES}; "
        "did you mean 'sglang'?\n"
    )


def test_an_engine_given_as_a_word_lists_every_engine_type(invoke: Invoke, recipe: Path) -> None:
    said = _validate(invoke, recipe, "engine:\n  type: mocker\n", "engine: sglng\n")
    assert said == (
        f"error: {recipe}: $.engine: expected one of {ENGINES} or a mapping or null, got 'sglng'\n"
    )


def test_an_undefined_sweep_placeholder_says_it_is_not_in_sweep(
    invoke: Invoke, recipe: Path
) -> None:
    said = _validate(
        invoke, recipe, "  concurrencies: [1, 2]\n", '  concurrencies: "{conc}"\nsweep: {c: [1]}\n'
    )
    assert said == (
        f"error: {recipe}: $.benchmark.concurrencies: placeholder '{{conc}}': 'conc' is not in "
        "sweep: (it has c)\n"
    )
