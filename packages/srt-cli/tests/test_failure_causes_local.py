"""Failures provoked here, each in a real local job (``srtctl apply --local``, the real runtime):
the diagnosis names the failure catalog's cause, ``srtctl status`` and ``srtctl wait`` report it
with its fix. The provoking programs are real (the Dynamo mocker, Python, bash), not fakes. (The
hub's refusals, gated and missing repositories, are provoked in tests/test_hub_model_local.py.)"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from cli_testkit import Invoke

TINY = Path(__file__).resolve().parents[3] / "examples" / "models" / "tiny-word"
#: The Dynamo mocker on a real (tiny) model folder, its etcd / NATS at a port nothing listens on,
#: giving up after two seconds (the runtime's own startup timeouts, shortened).
MOCKER = shlex.join(["exec", sys.executable, "-m", "dynamo.mocker", "--model-path", str(TINY)])
UNREACHABLE_ETCD = "ETCD_ENDPOINTS=http://127.0.0.1:9 ETCD_STARTUP_CONNECT_TIMEOUT_SECONDS=2"
UNREACHABLE_NATS = "NATS_SERVER=nats://127.0.0.1:9 NATS_STARTUP_CONNECT_TIMEOUT_SECONDS=2"
NATS_PLANES = "--discovery-backend mem --request-plane nats --event-plane nats"

#: (cause the catalog must name, the terminal service's command)
PROVOKED = [
    ("unknown_engine_flag", [sys.executable, "-m", "dynamo.mocker", "--no-such-flag", "1"]),
    ("etcd_unreachable", ["bash", "-c", f"{UNREACHABLE_ETCD} {MOCKER}"]),
    ("nats_unreachable", ["bash", "-c", f"{UNREACHABLE_NATS} {MOCKER} {NATS_PLANES}"]),
    ("disk_full", [sys.executable, "-c", "open('/dev/full', 'w').write('x' * 100000)"]),
    (
        "port_in_use",
        [
            sys.executable,
            "-c",
            "import socket, http.server\n"
            "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
            "http.server.HTTPServer(('127.0.0.1', s.getsockname()[1]), "
            "http.server.BaseHTTPRequestHandler)",
        ],
    ),
    ("command_not_found", ["bash", "-c", "no-such-program-srt --port 1"]),
    ("missing_module", [sys.executable, "-m", "no_such_module_srt"]),
    ("killed", ["bash", "-c", "echo loading weights; kill -9 $$"]),
]


def _recipe(data: Path, command: list[str]) -> Path:
    text = (data / "hello-service.yaml").read_text()
    path = data / "provoked.yaml"
    path.write_text(text.replace('["bash", "-c", "echo hello from srt"]', json.dumps(command)))
    return path


@pytest.mark.parametrize(("cause", "command"), PROVOKED, ids=[c for c, _ in PROVOKED])
def test_a_provoked_failure_is_diagnosed_with_its_cause(
    invoke: Invoke, data: Path, no_slurm_path: dict[str, str], cause: str, command: list[str]
) -> None:
    applied = invoke("apply", "-f", str(_recipe(data, command)), "--local", "--json",
                     env=no_slurm_path)  # fmt: skip
    assert applied.exit_code == 4, applied.output
    record = json.loads(applied.stdout)
    job_dir = Path(record["output_dir"])
    assert f"  cause:  {cause}: " in applied.stderr  # the runtime's diagnosis block (--json)
    diagnosis = json.loads((job_dir / "logs" / "diagnosis.json").read_text())
    assert diagnosis["cause"] == cause, diagnosis
    assert diagnosis["fix"]
    status = json.loads(invoke("status", job_dir.name, "--json").stdout)
    assert status["cause"]["cause"] == cause
    assert f"  cause:      {cause}: " in invoke("status", job_dir.name).stdout
    waited = invoke("wait", job_dir.name, "--json")
    assert waited.exit_code == 12
    doc = json.loads(waited.stdout)
    assert (doc["outcome"], doc["cause"]) == ("failed", cause)
    assert doc["fix"] == diagnosis["fix"]
