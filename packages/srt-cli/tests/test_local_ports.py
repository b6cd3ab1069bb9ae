"""Issue 32 item 7: ``srtctl apply --local`` checks the plan's ports before it creates anything.

A port of the quickstart's plan held by this test (its worker is in a private network namespace,
conftest.py) makes apply stop at once with exit 4, naming the port, the process it belongs to in
the plan and the holder, and leaving no job folder, sweep record or stand-in model behind.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from cli_testkit import Invoke


def test_a_busy_port_stops_apply_before_anything_is_created(
    invoke: Invoke, manual_recipe: Path, tmp_path: Path, no_slurm_path: dict[str, str]
) -> None:
    out = tmp_path / "out"
    with socket.socket() as held:
        held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        held.bind(("127.0.0.1", 7500))
        held.listen(1)
        result = invoke(
            "apply", "--local", "-f", str(manual_recipe), "-o", str(out), env=no_slurm_path
        )
    assert result.exit_code == 4, result.output
    first = result.stderr.splitlines()[0]
    assert first.startswith(
        f"error: {manual_recipe}: port 7500 (agg_0_node-01 sys) is held by pid {os.getpid()} (`"
    ), first
    assert "the plan's ports must be free on this host before a local job starts" in first
    assert "srtctl cancel <job_id>" in first
    assert not out.exists() or not any(out.iterdir()), sorted(out.rglob("*"))
