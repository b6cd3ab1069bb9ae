"""Issue 32 item 3: bounded input to the real ``srtctl``.

Stdin (``-f -``) is held to the same document size as a file, and so are a FIFO and a character
device (``-f /dev/zero`` is "more than N bytes", not "no such file"); a ``--set`` path is bounded
(a clear message, not a RecursionError); ``render --to ''`` is refused; error output is bounded
and lists the allowed keys once.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

from cli_testkit import DATA

SRTCTL = shutil.which("srtctl", path=str(Path(sys.executable).parent)) or "srtctl"
RECIPE = (DATA / "mocker-agg.yaml").read_text()
LIMIT = 4 * 1024 * 1024
TOO_BIG = f"more than {LIMIT} bytes (limit document_size = {LIMIT}); a recipe is a few kB"


def _run(
    args: tuple[str, ...], cwd: Path, stdin: object = subprocess.DEVNULL
) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": os.environ.get("HOME", "/root"),
    }
    return subprocess.run(
        [SRTCTL, *args],
        cwd=cwd,
        env=env,
        stdin=stdin,  # type: ignore[arg-type]
        capture_output=True,
        text=True,
        check=False,
        timeout=120,  # hang guard: each case answers in about a second
    )


def test_endless_stdin_is_refused_at_the_document_limit(tmp_path: Path) -> None:
    with Path("/dev/zero").open("rb") as zero:
        done = _run(("validate", "-f", "-"), tmp_path, stdin=zero)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"error: <stdin>: {TOO_BIG}"), done.stderr


def test_a_character_device_is_read_to_the_same_bound(tmp_path: Path) -> None:
    done = _run(("validate", "-f", "/dev/zero"), tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"error: -f /dev/zero: {TOO_BIG}"), done.stderr


def test_a_fifo_is_read_like_a_file(tmp_path: Path) -> None:
    fifo = tmp_path / "recipe.yaml"
    os.mkfifo(fifo)

    def feed() -> None:
        with fifo.open("w") as out:
            out.write(RECIPE)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    done = _run(("validate", "-f", str(fifo)), tmp_path)
    writer.join(timeout=60)  # hang guard
    assert done.returncode == 0, done.stderr
    assert "no such file" not in done.stderr


def test_a_socket_is_named_as_what_it_is(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        done = _run(("validate", "-f", str(path)), tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == (
        f"error: -f {path}: is a socket, not a recipe file; name a YAML file or use - for stdin"
    )


def test_a_deep_set_path_is_a_usage_error_not_a_recursion_error(tmp_path: Path) -> None:
    (tmp_path / "r.yaml").write_text(RECIPE)
    for segments, detail in (
        (900, "a path of 1799 characters is too long; recipe paths are at most 1024 characters"),
        (400, "a path of 400 segments is deeper than any recipe (at most 64 levels)"),
    ):
        path = ".".join(["a"] * segments)
        done = _run(("validate", "-f", "r.yaml", "--set", f"{path}=1"), tmp_path)
        assert done.returncode == 2, done.stderr
        assert "RecursionError" not in done.stderr
        assert detail in done.stderr, done.stderr


def test_render_to_an_empty_folder_name_is_refused(tmp_path: Path) -> None:
    (tmp_path / "r.yaml").write_text(RECIPE)
    done = _run(("render", "-f", "r.yaml", "--to", ""), tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[0].startswith("error: --to '': empty folder name")
    assert not list(tmp_path.rglob("sbatch_script.sh"))


def test_error_output_is_bounded_and_lists_allowed_keys_once(tmp_path: Path) -> None:
    bogus = "".join(f"  bogus{i}: 1\n" for i in range(100))
    text = RECIPE.replace("benchmark:\n", "benchmark:\n" + bogus, 1)
    assert text != RECIPE
    (tmp_path / "r.yaml").write_text(text)
    done = _run(("validate", "-f", "r.yaml"), tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("allowed here: type,") == 1, done.stderr
    assert len(done.stderr) < 8192, len(done.stderr)
