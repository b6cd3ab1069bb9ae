"""Hostile input to the real ``srtctl``: every case is one message and exit 2/3/4, no traceback.

Each row of ``CASES`` builds its inputs in a scratch folder, runs the installed ``srtctl`` console
script in a subprocess (``fakes/sbatch`` on PATH where a case submits) and checks the exit code,
that nothing printed a traceback, that the output names one error, and the message itself.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import click
import pytest
from cli_testkit import DATA, FAKES
from click.testing import CliRunner

from srt_cli.environment import Edge
from srt_cli.errors import InternalError
from srt_cli.main import LazyGroup

SRTCTL = shutil.which("srtctl", path=str(Path(sys.executable).parent)) or "srtctl"
RECIPE = (DATA / "mocker-agg.yaml").read_text()
OVERRIDES = (DATA / "overrides.yaml").read_text()
ALLOWED = (
    "use letters, digits, '.', '_' and '-' (not starting with '.' or '-'), at most 128 characters"
)
NAME_REFUSED = (
    "$.name: '../x' has characters that are not safe in a file name; it becomes part of the "
    f"job's folder and Slurm job name: {ALLOWED}"
)
TYPO = "unknown key 'schmea'; did you mean `schema`? Write `schema: 2` (the key is lower case)"
NOT_UTF8 = (
    "not UTF-8 text: byte 0xff at offset 16 (line 2) invalid start byte; save the file as UTF-8"
)
BAD_ID = (
    "job_id must be a Slurm job id (digits) or a local job id (local-YYYYmmddTHHMMSSZ), got '../x'"
)


def _recipe(**replace: str) -> str:
    text = RECIPE
    for old, new in replace.items():
        assert old in text
        text = text.replace(old, new)
    return text


#: Files a case writes into its scratch folder: name -> text or bytes (a name ending in / is a
#: folder).
Files = dict[str, str | bytes]


@dataclass(frozen=True)
class Case:
    id: str
    args: tuple[str, ...]
    code: int
    #: The first line of stderr exactly, or (when ``stdout``) of stdout; ``{d}`` is the folder.
    message: str
    files: Files = field(default_factory=dict)
    stdin: bytes = b""
    env: dict[str, str] = field(default_factory=dict)
    stdout: bool = False
    #: A further line the output must hold.
    contains: str = ""
    #: Extra check on the scratch folder after the run.
    after: Callable[[Path], None] | None = None


def _nothing_outside(d: Path) -> None:
    outside = d.parent / "x"
    assert not outside.exists()
    assert not list(d.rglob("sbatch_script.sh")), "a batch script was written"


CASES: tuple[Case, ...] = (
    Case(
        "base-5-without-schema",
        ("validate", "-f", "o.yaml"),
        2,
        "error: o.yaml: $.base: must be a mapping (the recipe), got 5",
        files={"o.yaml": "base: 5\n"},
    ),
    Case(
        "top-level-list",
        ("validate", "-f", "l.yaml"),
        2,
        "error: l.yaml: the top level must be a mapping (a recipe), got a list",
        files={"l.yaml": "- a\n- b\n"},
    ),
    Case(
        "top-level-scalar",
        ("dry-run", "-f", "s.yaml"),
        2,
        "error: s.yaml: the top level must be a mapping (a recipe), got a str",
        files={"s.yaml": "hello\n"},
    ),
    Case(
        "empty-file",
        ("validate", "-f", "e.yaml"),
        2,
        "error: e.yaml: the file is empty; a recipe is a YAML mapping",
        files={"e.yaml": ""},
    ),
    Case(
        "missing-file",
        ("validate", "-f", "nope.yaml"),
        2,
        "error: -f nope.yaml: no such file or directory",
    ),
    Case(
        "folder-without-recipes",
        ("validate", "-f", "dir.yaml"),
        2,
        "error: -f dir.yaml: no *.yaml or *.yml files in this directory",
        files={"dir.yaml/": ""},
    ),
    Case(
        "not-utf8-file",
        ("validate", "-f", "b.yaml"),
        2,
        f"error: b.yaml: {NOT_UTF8}",
        files={"b.yaml": b"schema: 2\nname: \xff\xfe\n"},
    ),
    Case(
        "folder-with-a-not-utf8-file-checks-the-others",
        ("validate", "-f", "dir"),
        2,
        f"error: dir/b.yaml: {NOT_UTF8}",
        files={"dir/a.yaml": RECIPE, "dir/b.yaml": b"schema: 2\nname: \xff\xfe\n"},
        contains="1 of 2 file(s) failed",
    ),
    Case(
        "empty-file-argument",
        ("validate", "-f", ""),
        2,
        "error: -f '': empty path; name a recipe file, a folder or - for stdin",
    ),
    Case(
        "selector-longer-than-a-file-name",
        ("dry-run", "-f", "o.yaml:override_" + "a" * 5000),
        2,
        "error: o.yaml: override 'override_" + "a" * 190 + "... (5011 characters) not found; "
        "available: override_two, zip_override_isl[i]",
        files={"o.yaml": OVERRIDES},
    ),
    Case(
        "not-utf8-stdin",
        ("validate", "-f", "-"),
        2,
        f"error: <stdin>: {NOT_UTF8}",
        stdin=b"schema: 2\nname: \xff\xfe\n",
    ),
    Case(
        "not-utf8-migrate",
        ("migrate", "-f", "b.yaml"),
        2,
        f"✗ b.yaml: not migrated: {NOT_UTF8.replace('16', '18')} (fix the recipe, then re-run)",
        files={"b.yaml": b"backend: {}\nname: \xff\xfe\n"},
        stdout=True,
    ),
    Case(
        "not-utf8-migrate-stdin",
        ("migrate", "-f", "-"),
        2,
        f"✗ <stdin>: not migrated: {NOT_UTF8.replace('16', '18')} (fix the recipe, then re-run)",
        stdin=b"backend: {}\nname: \xff\xfe\n",
        stdout=True,
    ),
    Case(
        "schema-key-typo",
        ("validate", "-f", "t.yaml"),
        2,
        f"error: t.yaml: $.schmea: {TYPO}",
        files={"t.yaml": _recipe(**{"schema: 2": "schmea: 2"})},
    ),
    Case(
        "name-parent-folder-validate",
        ("validate", "-f", "n.yaml"),
        2,
        f"error: n.yaml: {NAME_REFUSED}",
        files={"n.yaml": _recipe(**{"name: mocker-agg": 'name: "../x"'})},
    ),
    Case(
        "name-parent-folder-apply",
        ("apply", "-f", "n.yaml", "--no-preflight", "-o", "out"),
        2,
        f"error: n.yaml: {NAME_REFUSED}",
        files={"n.yaml": _recipe(**{"name: mocker-agg": 'name: "../x"'})},
        after=_nothing_outside,
    ),
    Case(
        "yaml-date-name",
        ("validate", "-f", "d.yaml"),
        2,
        'error: d.yaml: $.name: YAML reads 2024-01-01 as a date (line 3); quote it: "2024-01-01"',
        files={"d.yaml": _recipe(**{"name: mocker-agg": "name: 2024-01-01"})},
    ),
    Case(
        "non-integer-tensor-parallel-size",
        ("dry-run", "-f", "tp.yaml"),
        2,
        "error: tp.yaml: $.roles.agg.args.tensor-parallel-size: 'abc' is not a whole number; "
        "tensor-parallel-size must be an integer in [1, 262144] (a GPU count)",
        files={
            "tp.yaml": _recipe(
                **{
                    "  type: mocker": "  type: vllm",
                    "    workers: 1": "    workers: 1\n    args:\n      tensor-parallel-size: abc",
                }
            )
        },
    ),
    Case(
        "set-without-equals",
        ("validate", "-f", "r.yaml", "--set", "name"),
        2,
        "error: bad --set/--unset: --set expects KEY=VALUE, got 'name'",
        files={"r.yaml": RECIPE},
    ),
    Case(
        "set-empty-segment",
        ("validate", "-f", "r.yaml", "--set", "a..b=1"),
        2,
        "error: bad --set/--unset: 'a..b': empty segment",
        files={"r.yaml": RECIPE},
    ),
    Case(
        "set-index-into-mapping",
        ("validate", "-f", "r.yaml", "--set", "roles[0]=x"),
        2,
        "error: bad --set/--unset: roles[0]: cannot index a non-list with [0]",
        files={"r.yaml": RECIPE},
    ),
    Case(
        "set-binary-tag",
        ("dry-run", "-f", "r.yaml", "--set", "name=!!binary aGk="),
        2,
        "error: bad --set/--unset: --set $.name: the tag !!binary at line 1 makes binary data, "
        "which a recipe cannot hold; remove the tag (quote the value for text, write a list for a "
        "set)",
        files={"r.yaml": RECIPE},
    ),
    Case(
        "set-name-parent-folder",
        ("validate", "-f", "r.yaml", "--set", "name=../x"),
        2,
        f"error: r.yaml: {NAME_REFUSED}",
        files={"r.yaml": RECIPE},
    ),
    Case(
        "override-base-error-once",
        ("validate", "-f", "o.yaml"),
        2,
        "error: o.yaml: $.base.resources.gpus_per_node: expected an integer, got 'four'",
        files={"o.yaml": OVERRIDES.replace("gpus_per_node: 4", "gpus_per_node: four")},
    ),
    Case(
        "output-under-a-file-apply-local",
        ("apply", "-f", "r.yaml", "--local", "--no-preflight", "-o", "r.yaml/out"),
        4,
        "error: cannot write the job folder {d}/r.yaml/out/local-",
        files={"r.yaml": RECIPE},
    ),
    Case(
        "output-under-a-file-apply-slurm",
        ("apply", "-f", "r.yaml", "--slurm", "--no-preflight", "-o", "r.yaml/out"),
        4,
        "error: cannot write the staging folder {d}/r.yaml/out/.staging/mocker-agg-",
        files={"r.yaml": RECIPE},
    ),
    Case(
        "render-under-a-file",
        ("render", "-f", "r.yaml", "--no-preflight", "--to", "r.yaml/job"),
        4,
        "error: cannot write the render folder {d}/r.yaml/job (Not a directory: {d}/r.yaml/job); "
        "choose a folder you can write with --to",
        files={"r.yaml": RECIPE},
    ),
    Case(
        "migrate-output-under-a-file",
        ("migrate", "-f", "v1.yaml", "-o", "v1.yaml/new.yaml"),
        4,
        "error: cannot write the migrated recipe v1.yaml/new.yaml (File exists: v1.yaml); "
        "choose a file you can write with -o/--output",
        files={"v1.yaml": (DATA / "v1-agg.yaml").read_text()},
    ),
    Case(
        "schema-output-under-a-file",
        ("schema", "--output", "f/s.json"),
        4,
        "error: cannot write the schema file f/s.json (File exists: f); choose a file you "
        "can write with --output",
        files={"f": "a file"},
    ),
    Case(
        "resolve-override-variant-escapes",
        ("resolve-override", "-f", "sub/o.yaml", "-o", "sub"),
        2,
        "error: the file of variant override_x/../../esc sub/o_x/../../esc.yaml resolves to "
        "{d}/esc.yaml, outside {d}/sub; nothing was written: name the variant "
        "override_<letters, digits, '.', '_', '-'> or use --stdout",
        files={"sub/o.yaml": "schema: 2\nbase: {name: a}\noverride_x/../../esc: {}\n"},
        after=lambda d: None if not (d / "esc.yaml").exists() else pytest.fail("escaped"),
    ),
    Case("status-bad-id", ("status", "../x"), 2, f"error: {BAD_ID}"),
    Case("logs-bad-id", ("logs", "../x"), 2, f"error: {BAD_ID}"),
    Case("cancel-bad-id", ("cancel", "../x"), 2, f"error: {BAD_ID}"),
    Case(
        "status-missing-local-job",
        ("status", "local-20260101T000000Z"),
        2,
        "error: job local-20260101T000000Z: no job folder {d}/outputs/local-20260101T000000Z; "
        "pass -o <output base> if the job was written elsewhere",
    ),
    *(
        Case(
            f"{command}-status-file-is-a-folder",
            (command, "local-20260101T000000Z"),
            4,
            "error: {d}/outputs/local-20260101T000000Z/status.json: cannot be read: Is a directory",
            files={
                "outputs/local-20260101T000000Z/logs/": "",
                "outputs/local-20260101T000000Z/status.json/": "",
            },
        )
        for command in ("status", "cancel")
    ),
    Case(
        "cluster-config-not-utf8",
        ("validate", "-f", "r.yaml"),
        2,
        f"error: {{d}}/c.yaml: {NOT_UTF8}",
        files={"r.yaml": RECIPE, "c.yaml": b"output_dir: abc\n\xff\n"},
        env={"SRTSLURM_CONFIG": "{d}/c.yaml"},
    ),
    Case(
        "cluster-config-is-a-folder",
        ("validate", "-f", "r.yaml"),
        2,
        "error: {d}/c: SRTSLURM_CONFIG points at a folder, not a file; fix or unset it",
        files={"r.yaml": RECIPE, "c/": ""},
        env={"SRTSLURM_CONFIG": "{d}/c"},
    ),
)


def _write(folder: Path, files: Files) -> None:
    for name, content in files.items():
        path = folder / name
        if name.endswith("/"):
            path.mkdir(parents=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def _run(
    args: tuple[str, ...], cwd: Path, *, stdin: bytes = b"", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    base = {
        "PATH": f"{FAKES}:{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": os.environ.get("HOME", "/root"),
        "FAKE_SBATCH_DIR": str(cwd / ".sbatch"),
    }
    done = subprocess.run(
        [SRTCTL, *args],
        cwd=cwd,
        env={**base, **(env or {})},
        input=stdin,
        capture_output=True,
        check=False,
        timeout=120,
    )
    return subprocess.CompletedProcess(
        done.args,
        done.returncode,
        done.stdout.decode(errors="replace"),
        done.stderr.decode(errors="replace"),
    )


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_input_is_one_message_and_its_exit_code(case: Case, tmp_path: Path) -> None:
    d = tmp_path / "case"
    d.mkdir()
    _write(d, case.files)
    env = {k: v.replace("{d}", str(d)) for k, v in case.env.items()}
    done = _run(case.args, d, stdin=case.stdin, env=env)
    output = done.stdout + done.stderr
    assert "Traceback" not in output, output
    assert done.returncode == case.code, output
    lines = (done.stdout if case.stdout else done.stderr).splitlines()
    expected = case.message.replace("{d}", str(d))
    assert lines, output
    if expected.endswith(("local-", "mocker-agg-")):
        assert lines[0].startswith(expected), output
    else:
        assert lines[0] == expected, output
    assert sum(line.startswith(("error:", "✗")) for line in lines) == 1, output
    if case.contains:
        assert case.contains in lines, output
    if case.after is not None:
        case.after(d)


def test_a_one_megabyte_value_gives_a_short_message(tmp_path: Path) -> None:
    (tmp_path / "big.yaml").write_text(_recipe(**{"name: mocker-agg": "name: " + "x" * 1_000_000}))
    done = _run(("validate", "-f", "big.yaml"), tmp_path)
    assert done.returncode == 2
    assert len(done.stderr) < 2048, len(done.stderr)
    assert done.stderr.startswith("error: big.yaml: $.name: '" + "x" * 199 + "... (1000002 char")


def test_a_read_only_output_folder_is_exit_4(tmp_path: Path) -> None:
    """Without write permission (a user) or on a read-only mount (root, who may write anywhere
    else: the mount lives in a private mount namespace and vanishes with the command)."""
    (tmp_path / "r.yaml").write_text(RECIPE)
    out = tmp_path / "ro"
    out.mkdir()
    args = ("apply", "-f", "r.yaml", "--local", "--no-preflight", "-o", "ro")
    if os.geteuid() == 0:
        assert shutil.which("unshare"), "util-linux unshare is needed to test a read-only folder"
        script = (
            f"mount --bind {out} {out} && mount -o remount,bind,ro {out} && "
            f"exec {shlex.join([SRTCTL, *args])}"
        )
        done = subprocess.run(
            ["unshare", "-m", "sh", "-c", script],
            cwd=tmp_path,
            env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin:/usr/sbin:/sbin"},
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        reason = "(Read-only file system"
    else:
        out.chmod(0o555)
        try:
            done = _run(args, tmp_path)
        finally:
            out.chmod(0o755)
        reason = "(Permission denied"
    assert "Traceback" not in done.stderr
    assert done.returncode == 4, done.stderr
    assert done.stderr.startswith(f"error: cannot write the job folder {out}/local-")
    assert reason in done.stderr, done.stderr


# ------------------------------------------------------------------ the last line of defence


class _Broken(LazyGroup):
    """A group whose one command fails the way a bug would (a fake, no product code patched)."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        @click.command(cmd_name)
        def boom() -> None:
            raise RuntimeError("no such thing\nsecond line")

        return boom


def test_an_unexpected_exception_is_one_line_naming_the_command() -> None:
    result = CliRunner().invoke(_Broken(), ["validate"])
    assert result.exit_code == 1
    assert result.stderr == (
        "error: srtctl validate stopped on an internal error (RuntimeError: no such thing); this "
        "is a bug in srtctl: please report it with the command and its input (SRTCTL_DEBUG=1 "
        "shows the traceback)\n"
    )


def test_srtctl_debug_shows_the_traceback() -> None:
    edge = Edge(cwd=Path.cwd(), environ={"SRTCTL_DEBUG": "1"})
    result = CliRunner().invoke(_Broken(), ["validate"], obj=edge)
    assert result.exit_code == 1
    assert isinstance(result.exception, RuntimeError)


def test_internal_error_names_the_exception_type_when_it_has_no_text() -> None:
    error = InternalError.from_exception("apply", RuntimeError())
    assert error.exit_code == 1
    assert error.format_message().startswith(
        "srtctl apply stopped on an internal error (RuntimeError); this is a bug"
    )
