"""What `srtctl --help` loads: click and srt_cli's own small modules, nothing else of ours."""

from __future__ import annotations

import subprocess
import sys


def test_help_loads_neither_pathlib_nor_the_edge() -> None:
    code = (
        "import sys\n"
        "from srt_cli.main import cli\n"
        "try:\n"
        "    cli.main(['--help'], prog_name='srtctl')\n"
        "except SystemExit:\n"
        "    pass\n"
        "watched = ('pathlib', 'dataclasses', 'srt_cli.environment', 'srt_cli.commands',\n"
        "           'srt_cli.flagcheck', 'srt_planner.flagcheck', 'gzip', 'difflib')\n"
        "print(sorted(m for m in sys.modules if m in watched), file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr.strip() == "[]"
    assert "dry-run" in out.stdout
